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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_file_is_embedded_and_found_by_path() {
        let mha = source("src/kernels/attention_mha.rs").unwrap();
        assert!(mha.contains("let q_base = ((bb * S + i) * H + hh) * D;"));
        assert!(
            source("src/kernels/attention_mistakes.rs")
                .unwrap()
                .contains("MISTAKE 3")
        );
        assert!(source("src/kernels/dropout.rs").unwrap().contains("keep_mask"));
        assert!(
            source("src/kernels/attention_flash.rs")
                .unwrap()
                .contains("let alpha = exp(m_old - m_new);")
        );
        assert!(
            source("/abs/path/src/kernels/softmax.rs")
                .unwrap()
                .contains("row_forward")
        );
        assert!(
            source("src/kernels/attention_gqa.rs")
                .unwrap()
                .contains("let k_base = ((bb * T + j) * H_kv + kv_h) * D;")
        );
        assert!(source("src/kernels/rope.rs").unwrap().contains("x0 * c - x1 * s"));
        assert!(source("src/kernels/decode.rs").unwrap().contains("Buf::KCache"));
        assert_eq!(source("src/kernels/nope.rs"), None);
        // every lesson file is there, byte for byte: a new kernel the code panel cannot show
        // fails here, not in front of a learner
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/kernels");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name == "mod.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(source(&format!("src/kernels/{name}")), Some(text.as_str()), "{name}");
        }
        assert_eq!(short("src/kernels/linear.rs"), "linear.rs");
    }
}
