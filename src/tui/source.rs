//! The kernels' real source, embedded at build time, so the code panel shows exactly the lines
//! the engine ran. Keyed by the path the trace records (`Kind.file`, e.g.
//! `src/kernels/attention_mha.rs`).

/// `(path as the compiler names it, text)`.
const FILES: &[(&str, &str)] = &[
    (
        "src/kernels/attention_1h.rs",
        include_str!("../kernels/attention_1h.rs"),
    ),
    (
        "src/kernels/attention_gqa.rs",
        include_str!("../kernels/attention_gqa.rs"),
    ),
    (
        "src/kernels/attention_mha.rs",
        include_str!("../kernels/attention_mha.rs"),
    ),
    (
        "src/kernels/attention_mla.rs",
        include_str!("../kernels/attention_mla.rs"),
    ),
    (
        "src/kernels/attention_flash.rs",
        include_str!("../kernels/attention_flash.rs"),
    ),
    (
        "src/kernels/attention_mistakes.rs",
        include_str!("../kernels/attention_mistakes.rs"),
    ),
    ("src/kernels/decode.rs", include_str!("../kernels/decode.rs")),
    ("src/kernels/dropout.rs", include_str!("../kernels/dropout.rs")),
    ("src/kernels/linear.rs", include_str!("../kernels/linear.rs")),
    ("src/kernels/rope.rs", include_str!("../kernels/rope.rs")),
    ("src/kernels/softmax.rs", include_str!("../kernels/softmax.rs")),
    ("src/kernels/split.rs", include_str!("../kernels/split.rs")),
];

/// The source of `file`, matched on the file name so that both `src/kernels/x.rs` and an
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
