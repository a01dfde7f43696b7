//! The scenarios built into the binary: the shipped ones and the mistakes gallery, embedded
//! from `scenarios/`, and the built-in walkthrough.

use super::Scenario;

/// The shipped scenarios, embedded, by file stem.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "mha_walkthrough",
        include_str!("../../../../scenarios/mha_walkthrough.toml"),
    ),
    (
        "indexing_trace",
        include_str!("../../../../scenarios/indexing_trace.toml"),
    ),
    (
        "numeric_baseline",
        include_str!("../../../../scenarios/numeric_baseline.toml"),
    ),
    ("numeric_mha", include_str!("../../../../scenarios/numeric_mha.toml")),
    (
        "masked_element",
        include_str!("../../../../scenarios/masked_element.toml"),
    ),
    ("batch_b2", include_str!("../../../../scenarios/batch_b2.toml")),
    ("heads_h4", include_str!("../../../../scenarios/heads_h4.toml")),
    ("why_sqrt_d", include_str!("../../../../scenarios/why_sqrt_d.toml")),
    (
        "backward_simple",
        include_str!("../../../../scenarios/backward_simple.toml"),
    ),
    ("separate_qkv", include_str!("../../../../scenarios/separate_qkv.toml")),
    (
        "cross_attention",
        include_str!("../../../../scenarios/cross_attention.toml"),
    ),
    ("dropout", include_str!("../../../../scenarios/dropout.toml")),
    ("flash", include_str!("../../../../scenarios/flash.toml")),
    ("gqa", include_str!("../../../../scenarios/gqa.toml")),
    ("mqa", include_str!("../../../../scenarios/mqa.toml")),
    ("rope", include_str!("../../../../scenarios/rope.toml")),
    (
        "kv_cache_decode",
        include_str!("../../../../scenarios/kv_cache_decode.toml"),
    ),
    (
        "sliding_window",
        include_str!("../../../../scenarios/sliding_window.toml"),
    ),
    ("sinks", include_str!("../../../../scenarios/sinks.toml")),
    (
        "window_decode",
        include_str!("../../../../scenarios/window_decode.toml"),
    ),
    ("paged_decode", include_str!("../../../../scenarios/paged_decode.toml")),
    ("split_kv", include_str!("../../../../scenarios/split_kv.toml")),
    ("sink_logit", include_str!("../../../../scenarios/sink_logit.toml")),
    ("mla", include_str!("../../../../scenarios/mla.toml")),
    ("mla_decode", include_str!("../../../../scenarios/mla_decode.toml")),
];

/// The mistakes gallery: one scenario per classic mistake, by file stem under `scenarios/mistakes/`.
pub const MISTAKES: &[(&str, &str)] = &[
    (
        "no_input_projection",
        include_str!("../../../../scenarios/mistakes/no_input_projection.toml"),
    ),
    (
        "scale_by_seq_len",
        include_str!("../../../../scenarios/mistakes/scale_by_seq_len.toml"),
    ),
    (
        "mask_by_multiply",
        include_str!("../../../../scenarios/mistakes/mask_by_multiply.toml"),
    ),
    (
        "no_output_projection",
        include_str!("../../../../scenarios/mistakes/no_output_projection.toml"),
    ),
    (
        "dropout_not_applied",
        include_str!("../../../../scenarios/mistakes/dropout_not_applied.toml"),
    ),
    (
        "softmax_over_two_dims",
        include_str!("../../../../scenarios/mistakes/softmax_over_two_dims.toml"),
    ),
    (
        "overwrite_kv_grad",
        include_str!("../../../../scenarios/mistakes/overwrite_kv_grad.toml"),
    ),
];

impl Scenario {
    /// The MHA walkthrough (B=1, T=3, C=4, H=2), built into the binary.
    pub fn builtin() -> Scenario {
        #[allow(clippy::expect_used, reason = "embedded at build time and parsed by a unit test")]
        Self::shipped("mha_walkthrough").expect("the built-in scenario is valid (tested)")
    }

    /// A shipped scenario by file stem, e.g. `"numeric_mha"`.
    pub fn shipped(name: &str) -> Option<Scenario> {
        let (_, text) = SHIPPED.iter().find(|(n, _)| *n == name)?;
        Self::parse(text, &format!("<built-in {name}>")).ok()
    }

    /// A scenario of the mistakes gallery by file stem, e.g. `"mask_by_multiply"`.
    pub fn mistake(name: &str) -> Option<Scenario> {
        let (_, text) = MISTAKES.iter().find(|(n, _)| *n == name)?;
        Self::parse(text, &format!("<built-in mistakes/{name}>")).ok()
    }
}
