//! The kernels' real source, embedded at build time, so the code panel shows exactly the lines
//! the engine ran. Keyed by the path the trace records (`Kind.file`, e.g.
//! `crates/core/src/kernels/attention_mha.rs`).

/// `(path as the compiler names it, text)`.
const FILES: &[(&str, &str)] = &[
    (
        "crates/core/src/kernels/attention_1h.rs",
        include_str!("../../crates/core/src/kernels/attention_1h.rs"),
    ),
    (
        "crates/core/src/kernels/attention_gqa.rs",
        include_str!("../../crates/core/src/kernels/attention_gqa.rs"),
    ),
    (
        "crates/core/src/kernels/attention_mha.rs",
        include_str!("../../crates/core/src/kernels/attention_mha.rs"),
    ),
    (
        "crates/core/src/kernels/attention_mla.rs",
        include_str!("../../crates/core/src/kernels/attention_mla.rs"),
    ),
    (
        "crates/core/src/kernels/attention_flash.rs",
        include_str!("../../crates/core/src/kernels/attention_flash.rs"),
    ),
    (
        "crates/core/src/kernels/attention_mistakes.rs",
        include_str!("../../crates/core/src/kernels/attention_mistakes.rs"),
    ),
    (
        "crates/core/src/kernels/decode.rs",
        include_str!("../../crates/core/src/kernels/decode.rs"),
    ),
    (
        "crates/core/src/kernels/dropout.rs",
        include_str!("../../crates/core/src/kernels/dropout.rs"),
    ),
    (
        "crates/core/src/kernels/linear.rs",
        include_str!("../../crates/core/src/kernels/linear.rs"),
    ),
    (
        "crates/core/src/kernels/rope.rs",
        include_str!("../../crates/core/src/kernels/rope.rs"),
    ),
    (
        "crates/core/src/kernels/softmax.rs",
        include_str!("../../crates/core/src/kernels/softmax.rs"),
    ),
    (
        "crates/core/src/kernels/split.rs",
        include_str!("../../crates/core/src/kernels/split.rs"),
    ),
];

/// The source of `file`, matched on the file name so that both `crates/core/src/kernels/x.rs` and an
/// absolute path (as some builds record) find it.
pub fn source(file: &str) -> Option<&'static str> {
    let name = file.rsplit(['/', '\\']).next()?;
    FILES
        .iter()
        .find(|(path, _)| path.rsplit('/').next() == Some(name))
        .map(|&(_, text)| text)
}

/// The short name shown in panel titles: `attention_mha.rs`.
pub fn short(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}
