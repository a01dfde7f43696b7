//! A scenario's structure, issue 52: `[run] bias = false` (a model without biases, in every
//! variant), random inputs that keep every structural choice, and `[shape] L` layers, each on
//! its own values.

use crate::support::cli::cmd;
use crate::support::trace::{closed_form_counts, counted};
use attn_trace_analysis::learner::inputs::InputsFile;
use attn_trace_core::engine::{self, Passes};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Buf;

const BIASES: [Buf; 10] = [
    Buf::BQkv,
    Buf::BQ,
    Buf::BK,
    Buf::BV,
    Buf::BProj,
    Buf::DBQkv,
    Buf::DBQ,
    Buf::DBK,
    Buf::DBV,
    Buf::DBProj,
];

/// A scenario's text with `[run]` lines `run` and, when `bias` is false, `bias = false`.
fn text(shape: &str, run: &str, bias: bool) -> String {
    let bias = if bias { "" } else { "bias = false\n" };
    format!("title = \"t\"\n[shape]\n{shape}\n[run]\n{run}\n{bias}[init]\nseed = 7\n")
}

#[test]
fn a_model_without_biases_has_none_in_any_variant_and_computes_the_zero_bias_run() {
    // every way a run projects: fused from x, separate, cross-attention, decoding, latent
    // attention (training and decoding), each variant that runs it
    let cases = [
        ("B = 2\nT = 3\nC = 4\nH = 2", "variants = [\"baseline\", \"mha\", \"flash\"]"),
        ("B = 1\nT = 4\nC = 8\nH = 4\nH_kv = 2", "variants = [\"gqa\"]"),
        ("B = 1\nT = 3\nC = 4\nH = 2", "variants = [\"mha\"]\nqkv = \"separate\""),
        ("B = 1\nS = 2\nT = 3\nC = 4\nH = 2", "variants = [\"mha\"]\nqkv = \"separate\"\nmask = \"none\""),
        ("B = 1\nT = 4\nC = 8\nH = 4\nH_kv = 2", "variants = [\"gqa\"]\ndecode = true\nrope = \"interleaved\""),
        ("B = 1\nT = 3\nC = 4\nH = 2\nkv_rank = 2\nrope_dim = 2", "variants = [\"mla\"]"),
        ("B = 1\nT = 3\nC = 4\nH = 2\nkv_rank = 2\nrope_dim = 2", "variants = [\"mla\"]\ndecode = true"),
    ];
    for (shape, run) in cases {
        let plain = Scenario::parse(&text(shape, run, false), "t.toml").unwrap();
        assert!(!plain.bias);
        let biased = Scenario::parse(&text(shape, run, true), "t.toml").unwrap();
        for &variant in &plain.variants {
            let r = plain.run(variant, true);
            for b in BIASES {
                assert!(!r.registry.has(b), "{run}: {variant} has {b}");
            }
            let t = r.trace.as_ref().unwrap();
            assert!(t.events.iter().all(|e| !BIASES.contains(&e.buf)), "{run}: {variant} reads a bias");
            // the closed forms count no bias read or write
            assert_eq!(
                counted(t),
                closed_form_counts(&plain.plan(), variant, plain.passes),
                "{run}: {variant}"
            );
            // the same model with every bias zero computes the same numbers, bit for bit
            let mut zero = biased.clone();
            for b in [Buf::BQkv, Buf::BQ, Buf::BK, Buf::BV, Buf::BProj] {
                if let Some(spec) = biased.run(variant, false).registry.get(b) {
                    zero.values.insert(b, vec![0.0; spec.len()]);
                }
            }
            let with_zeros = zero.run(variant, false);
            for (b, _) in r.registry.iter() {
                assert_eq!(
                    r.tensors.get(b),
                    with_zeros.tensors.get(b),
                    "{run}: {variant} {b} differs from the zero-bias run's"
                );
            }
        }
    }
}

#[test]
fn a_bias_given_to_a_model_without_biases_is_refused() {
    let t = "title = \"t\"\n[shape]\nB = 1\nT = 2\nC = 2\n[run]\nbias = false\n[values]\nb_qkv = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]\n";
    let e = Scenario::parse(t, "t.toml").unwrap_err().to_string();
    assert!(e.contains("[values].b_qkv"), "{e}");
    assert!(e.contains("no biases ([run].bias = false)"), "{e}");
    // and the flag itself must be a boolean
    let e = Scenario::parse(
        "title = \"t\"\n[shape]\nB = 1\nT = 2\nC = 2\n[run]\nbias = 0\n",
        "t.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("[run].bias"), "{e}");
}

#[test]
fn the_inputs_of_a_model_without_biases_list_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llama.toml");
    std::fs::write(
        &path,
        text(
            "B = 1\nT = 4\nC = 8\nH = 4\nH_kv = 2",
            "variants = [\"gqa\"]\ndecode = true",
            false,
        ),
    )
    .unwrap();
    let out = cmd().arg("inputs").arg(&path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let f = InputsFile::parse(std::str::from_utf8(&out.stdout).unwrap()).unwrap();
    let names: Vec<&str> = f.tensors.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["x", "w_qkv", "w_proj"]);
}

#[test]
fn random_inputs_keep_the_scenarios_structure() {
    // a bias given as zeros is structure, not data: it stays zero on every random input, while
    // the other given tensors are drawn afresh
    let t = "title = \"t\"\n[shape]\nB = 1\nT = 2\nC = 2\n[run]\nvariants = [\"mha\"]\n[values]\n\
             x = [0.5, -0.5, 0.25, 1.0]\nb_qkv = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]\n";
    let s = Scenario::parse(t, "t.toml").unwrap();
    for k in 1..4 {
        let r = s.reseeded(k);
        assert_eq!(r.values[&Buf::BQkv], vec![0.0; 6], "input {k}");
        assert_ne!(r.values[&Buf::X], s.values[&Buf::X], "input {k}");
    }
    // a model without biases has none on random inputs either
    let plain = Scenario::parse(
        &text("B = 1\nT = 3\nC = 4\nH = 2", "variants = [\"mha\"]", false),
        "t.toml",
    )
    .unwrap();
    let run = engine::run(&plain.reseeded(2).inputs(), Variant::Mha, Passes::BOTH, false);
    assert!(BIASES.iter().all(|&b| !run.registry.has(b)));
}

#[test]
fn each_layer_runs_on_values_of_its_own_and_layer_0_is_the_scenario() {
    let s = Scenario::parse(
        &text("B = 1\nT = 3\nC = 4\nH = 2\nL = 3", "variants = [\"mha\"]", true),
        "t.toml",
    )
    .unwrap();
    assert_eq!(s.layers, 3);
    assert_eq!(s.layer(0), s);
    let x = |s: &Scenario| s.run(Variant::Mha, false).tensors.get(Buf::X).to_vec();
    let (x0, x1, x2) = (x(&s.layer(0)), x(&s.layer(1)), x(&s.layer(2)));
    assert!(x0 != x1 && x1 != x2 && x0 != x2);
    // a layer is not a random input
    assert_ne!(x1, x(&s.reseeded(1)));
    // and the count is bounded
    let e = Scenario::parse(
        &text("B = 1\nT = 3\nC = 4\nH = 2\nL = 0", "variants = [\"mha\"]", true),
        "t.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("[shape].L"), "{e}");
}
