//! The kernels' real source, embedded at build time, so the code panel shows exactly the lines
//! the engine ran, and the quiz reads the offset expression of the line that made an access.
//! Keyed by the path the trace records (`Kind.file`, e.g.
//! `crates/core/src/kernels/attention_mha.rs`).

/// The lesson files that are no variant's own, `(path as the compiler names it, text)`; each
/// variant's file is in its descriptor ([`Descriptor::source`](crate::variant::Descriptor::source)).
const SHARED: &[(&str, &str)] = &[
    (
        "crates/core/src/kernels/attention_mistakes.rs",
        include_str!("kernels/attention_mistakes.rs"),
    ),
    ("crates/core/src/kernels/decode.rs", include_str!("kernels/decode.rs")),
    ("crates/core/src/kernels/dropout.rs", include_str!("kernels/dropout.rs")),
    ("crates/core/src/kernels/linear.rs", include_str!("kernels/linear.rs")),
    ("crates/core/src/kernels/rope.rs", include_str!("kernels/rope.rs")),
    ("crates/core/src/kernels/softmax.rs", include_str!("kernels/softmax.rs")),
    ("crates/core/src/kernels/split.rs", include_str!("kernels/split.rs")),
];

/// The source of `file`, matched on the file name so that both `crates/core/src/kernels/x.rs` and an
/// absolute path (as some builds record) find it.
pub fn source(file: &str) -> Option<&'static str> {
    let name = short(file);
    let variants = crate::variant::DESCRIPTORS.iter().map(|d| (d.file, d.source));
    variants
        .chain(SHARED.iter().copied())
        .find(|(path, _)| short(path) == name)
        .map(|(_, text)| text)
}

/// The short name shown in panel titles: `attention_mha.rs`.
pub fn short(file: &str) -> &str {
    file.rsplit(['/', '\\']).next().unwrap_or(file)
}
