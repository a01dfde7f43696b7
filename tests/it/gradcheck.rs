//! The gradient check (`crates/analysis/src/gradcheck.rs`, shown by the tracer and `explain --pass backward`)
//! against the tests' own finite differences (`common::central_difference`): on inputs and
//! weights directly, and on an activation (`q`, `k`, `v`) by starting a second run at the
//! attention core with the first run's `q`, `k`, `v` as its inputs.

use crate::support::gradients::{central_difference, gradient_error};
use crate::support::inputs::{from_qkv, from_x, values};
use attn_trace_analysis::gradcheck::{self, Check};
use attn_trace_core::engine::{Inputs, Passes, Start, run};
use attn_trace_core::kernels::rope::{Pairs, Rope};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::Buf;
use std::time::Instant;

/// The check of `grad[k]`, its analytic value and primal value taken from an untraced run.
fn checked(inputs: &Inputs, variant: Variant, grad: Buf, k: usize) -> Check {
    let r = run(inputs, variant, Passes::BOTH, false);
    let primal = grad.primal().unwrap();
    let (value, analytic) = (r.tensors.get(primal)[k], r.tensors.get(grad)[k]);
    gradcheck::check(inputs, variant, grad, k, value, analytic, String::new())
        .unwrap_or_else(|e| panic!("{variant} {grad}[{k}]: {e}"))
}

/// Every `step`-th cell of `grad`: the check agrees with the backward pass, and its finite
/// difference with the tests' own of the same input (to the tolerance `check_gradients` uses).
fn agrees_with_common(inputs: &Inputs, variant: Variant, input: Buf, grad: Buf, step: usize) {
    let n = run(inputs, variant, Passes::BOTH, false).tensors.get(grad).len();
    assert!(n > 0, "{grad} is part of the run");
    for k in (0..n).step_by(step) {
        let c = checked(inputs, variant, grad, k);
        let ours = central_difference(inputs, variant, input, k);
        assert!(
            gradient_error(c.numeric, ours) < 5e-3,
            "{variant} {grad}[{k}]: gradcheck {} but the tests' central difference {ours}",
            c.numeric
        );
        assert!(c.agrees(), "{variant} {grad}[{k}]: {}", c.line());
        assert_eq!(c.primal, input);
    }
}

#[test]
fn inputs_and_weights_match_the_tests_finite_differences() {
    let inputs = from_x(Shape::new(2, 4, 6, 3), Mask::Causal, 41);
    for v in Variant::STANDARD {
        for (input, grad) in [
            (Buf::X, Buf::DX),
            (Buf::WQkv, Buf::DWQkv),
            (Buf::BQkv, Buf::DBQkv),
            (Buf::WProj, Buf::DWProj),
            (Buf::BProj, Buf::DBProj),
        ] {
            agrees_with_common(&inputs, v, input, grad, 5);
        }
    }
}

#[test]
fn separate_projections_and_cross_attention_match_too() {
    let sh = Shape::cross(1, 3, 5, 4, 2);
    let (c, s, t) = (sh.c, sh.s, sh.t);
    let start = Start::Separate {
        x: values(s * c, 1),
        memory: Some(values(t * c, 2)),
        w_q: values(c * c, 3),
        b_q: values(c, 4),
        w_k: values(c * c, 5),
        b_k: values(c, 6),
        w_v: values(c * c, 7),
        b_v: values(c, 8),
    };
    let inputs = Inputs::new(sh, Mask::None, start, values(s * c, 9)).with_proj(values(c * c, 10), values(c, 11));
    for v in Variant::STANDARD {
        for (input, grad) in [
            (Buf::X, Buf::DX),
            (Buf::Memory, Buf::DMemory),
            (Buf::WK, Buf::DWK),
            (Buf::BV, Buf::DBV),
        ] {
            agrees_with_common(&inputs, v, input, grad, 3);
        }
    }
}

#[test]
fn an_activation_is_perturbed_where_it_is_computed() {
    // q, k, v of a run from x are activations; a second run starting at q, k, v with the same
    // values takes them as inputs, which the tests' finite differences can perturb directly
    let from = from_x(Shape::new(1, 4, 4, 2), Mask::Causal, 43);
    for v in Variant::STANDARD {
        let r = run(&from, v, Passes::BOTH, false);
        let mut core = from_qkv(
            from.shape,
            from.mask.clone(),
            r.tensors.get(Buf::Q).to_vec(),
            r.tensors.get(Buf::K).to_vec(),
            r.tensors.get(Buf::V).to_vec(),
        );
        core.proj = from.proj.clone();
        core.d_out = from.d_out.clone();
        for (act, grad) in [(Buf::Q, Buf::DQ), (Buf::K, Buf::DK), (Buf::V, Buf::DV)] {
            for k in 0..r.tensors.get(act).len() {
                let c = checked(&from, v, grad, k);
                let direct = central_difference(&core, v, act, k);
                assert!(
                    gradient_error(c.numeric, direct) < 5e-3,
                    "{v} {grad}[{k}]: nudged inside the run {} but perturbed as an input {direct}",
                    c.numeric
                );
                assert!(c.agrees(), "{}", c.line());
                assert!(
                    c.perturbed().contains("right after its kernel wrote it"),
                    "{}",
                    c.perturbed()
                );
            }
        }
        // the scores and probabilities are checked against the backward pass alone
        for grad in [Buf::DScores, Buf::DProbs, Buf::DAtt] {
            for k in 0..r.tensors.get(grad).len() {
                let c = checked(&from, v, grad, k);
                assert!(c.agrees(), "{}", c.line());
            }
        }
    }
}

#[test]
fn the_ungrouped_kernels_check_grouped_inputs_as_they_read_them() {
    // a grouped scenario (H = 4 over H_kv = 2, as gqa.toml) runs mha, flash and the baseline
    // on its key/value heads repeated per query head: their gradients are of that layout, and
    // the check perturbs the cell of that layout (it used to run them on the grouped weights,
    // and the projection's size check stopped it)
    let inputs = from_x(Shape::new(1, 3, 8, 4).with_kv_heads(2), Mask::Causal, 46);
    for v in Variant::STANDARD {
        for grad in [Buf::DWQkv, Buf::DX, Buf::DK] {
            let n = run(&inputs, v, Passes::BOTH, false).tensors.get(grad).len();
            for k in (0..n).step_by(7) {
                let c = checked(&inputs, v, grad, k);
                assert!(c.agrees(), "{v} {}", c.line());
            }
        }
    }
}

#[test]
fn q_and_k_are_perturbed_before_their_rotation() {
    // with rotary positions q and k are written twice, by their projection and turned in place
    // by rope; the final d_q and d_k are the gradients of the projection's q and k, so that is
    // where the cell is perturbed, once (it used to be changed after both writes). The tests'
    // own finite difference perturbs the same q, k as the inputs of a run that starts at them.
    for pairs in [Pairs::Interleaved, Pairs::Half] {
        let rope = Some(Rope { pairs, base: 100.0 });
        let from = Inputs {
            rope,
            ..from_x(Shape::new(1, 3, 4, 1), Mask::Causal, 47)
        };
        let projected = run(
            &Inputs {
                rope: None,
                ..from.clone()
            },
            Variant::Mha,
            Passes::FORWARD,
            false,
        );
        let mut core = from_qkv(
            from.shape,
            from.mask.clone(),
            projected.tensors.get(Buf::Q).to_vec(),
            projected.tensors.get(Buf::K).to_vec(),
            projected.tensors.get(Buf::V).to_vec(),
        );
        core.proj = from.proj.clone();
        core.d_out = from.d_out.clone();
        core.rope = rope;
        for v in Variant::STANDARD {
            for (act, grad) in [(Buf::Q, Buf::DQ), (Buf::K, Buf::DK)] {
                for k in 0..projected.tensors.get(act).len() {
                    let c = checked(&from, v, grad, k);
                    let direct = central_difference(&core, v, act, k);
                    assert!(
                        gradient_error(c.numeric, direct) < 5e-3,
                        "{v} {pairs:?} {grad}[{k}]: nudged inside the run {} but perturbed as an input {direct}",
                        c.numeric
                    );
                    assert!(c.agrees(), "{v} {pairs:?} {}", c.line());
                }
            }
        }
    }
}

#[test]
fn a_large_score_is_perturbed_by_the_same_small_step() {
    // cross-attention with a score of 9.18 (scores[30]): the softmax bends as sharply there as
    // anywhere, so a step of 0.1·|S| = 0.92 left a truncation error of 1.2e-3 after the
    // Richardson step, and the panel said DISAGREE on a right gradient; 0.1 leaves 1.3e-6 after
    // one Richardson step
    let text = "title = \"large score\"\n[shape]\nB = 2\nT = 4\nC = 4\nH = 2\nS = 2\n[run]\nqkv = \"separate\"\nmask = \"none\"\n\
                [init]\nseed = 297\ndist = \"normal\"\nstd = 0.7\n";
    let scenario = attn_trace_core::scenario::Scenario::parse(text, "<large score>").unwrap();
    let inputs = scenario.inputs();
    let r = run(&inputs, Variant::Mha, Passes::BOTH, false);
    assert!(r.tensors.get(Buf::Scores)[30] > 9.0, "the score is large");
    let c = checked(&inputs, Variant::Mha, Buf::DScores, 30);
    assert!(c.agrees(), "{}", c.line());
    assert!(c.rel_err() < 1e-4, "{}", c.line());
    assert_eq!(c.step, gradcheck::STEP);
}

#[test]
fn a_sharply_bent_cell_is_checked_to_the_h4_term() {
    // GQA with rope and dropout (H = 4 over H_kv = 2, T = 3, C = 8): the loss bends so sharply
    // along x[13] that one Richardson step at h = 0.1 left 1.6e-3 (DISAGREE on a right
    // gradient); the second step leaves 8e-5
    let text = "title = \"sharp\"\n[shape]\nB = 1\nT = 3\nC = 8\nH = 4\nH_kv = 2\n[run]\n\
                variants = [\"gqa\", \"mha\"]\nrope = \"interleaved\"\nmask = \"causal\"\n\
                dropout = 0.25\ndropout_seed = 3\n[init]\nseed = 47\ndist = \"normal\"\nstd = 0.7\n";
    let inputs = attn_trace_core::scenario::Scenario::parse(text, "<sharp>")
        .unwrap()
        .inputs();
    for v in [Variant::Gqa, Variant::Mha] {
        let c = checked(&inputs, v, Buf::DX, 13);
        assert!(c.agrees(), "{v} {}", c.line());
        assert!(c.rel_err() < 2e-4, "{v} {}", c.line());
    }
}

#[test]
fn rounding_inside_the_forward_pass_is_not_a_disagreement() {
    // two cells whose finite difference rounding moves by more than the rounding of L's last
    // sum: a d_k of 8.5e-5 (T = 3, C = 1, causal; mha and flash alike), off by 2.5e-3 of itself,
    // and a key bias whose gradient is exactly 0 (softmax ignores a shift of a whole row of
    // scores), at -3.9e-6; both were DISAGREE on a right gradient
    let small = "title = \"small\"\n[shape]\nB = 1\nT = 3\nC = 1\nH = 1\n[run]\n\
                 variants = [\"mha\", \"flash\"]\nmask = \"causal\"\n[init]\nseed = 670\n\
                 dist = \"normal\"\nstd = 0.7\n";
    let zero = "title = \"zero\"\n[shape]\nB = 1\nT = 3\nC = 3\nH = 3\nS = 1\n[run]\n\
                qkv = \"separate\"\nmask = [[1, 0, 1]]\n[init]\nseed = 685\ndist = \"normal\"\nstd = 0.7\n";
    for (text, v, grad, k) in [
        (small, Variant::Flash, Buf::DK, 0),
        (small, Variant::Mha, Buf::DK, 0),
        (zero, Variant::Baseline, Buf::DBK, 1),
    ] {
        let inputs = attn_trace_core::scenario::Scenario::parse(text, "<rounding>")
            .unwrap()
            .inputs();
        let c = checked(&inputs, v, grad, k);
        assert!(c.agrees(), "{v} {}", c.line());
    }
    // the margin is printed, and a gradient 1% off is still told apart from the same cells
    let inputs = attn_trace_core::scenario::Scenario::parse(small, "<rounding>")
        .unwrap()
        .inputs();
    let c = checked(&inputs, Variant::Flash, Buf::DK, 0);
    let off = Check {
        analytic: c.analytic * 1.01,
        ..c.clone()
    };
    assert!(!off.agrees(), "{}", off.line());
}

#[test]
fn a_wrong_gradient_is_reported_as_disagreeing() {
    let inputs = from_x(Shape::new(1, 3, 4, 2), Mask::Causal, 44);
    let r = run(&inputs, Variant::Mha, Passes::BOTH, false);
    let right = r.tensors.get(Buf::DX)[5];
    let wrong = gradcheck::check(
        &inputs,
        Variant::Mha,
        Buf::DX,
        5,
        r.tensors.get(Buf::X)[5],
        right * 1.01,
        String::new(),
    )
    .unwrap();
    assert!(!wrong.agrees(), "{}", wrong.line());
    assert!(wrong.line().contains("DISAGREE"), "{}", wrong.line());
    let ok = checked(&inputs, Variant::Mha, Buf::DX, 5);
    assert!(ok.line().starts_with("finite difference ∂L/∂x[5] = "), "{}", ok.line());
    assert!(ok.line().ends_with(", agree"), "{}", ok.line());
    // a buffer that is not a gradient, or not in the run, is refused with a reason
    assert!(gradcheck::check(&inputs, Variant::Mha, Buf::Q, 0, 0.0, 0.0, String::new()).is_err());
    assert!(gradcheck::check(&inputs, Variant::Mha, Buf::DMemory, 0, 0.0, 0.0, String::new()).is_err());
}

#[test]
fn a_check_on_the_tui_bench_scenario_takes_milliseconds() {
    // the shape of `cargo bench --bench tui` (ten million traced events): six untraced runs
    let inputs = from_x(Shape::new(1, 68, 64, 4), Mask::Causal, 45);
    let r = run(&inputs, Variant::Mha, Passes::BOTH, false);
    let start = Instant::now();
    let c = gradcheck::check(
        &inputs,
        Variant::Mha,
        Buf::DWQkv,
        100,
        r.tensors.get(Buf::WQkv)[100],
        r.tensors.get(Buf::DWQkv)[100],
        String::new(),
    )
    .unwrap();
    let took = start.elapsed();
    assert!(c.agrees(), "{}", c.line());
    // about 10 ms here in a release build; a generous bound for a loaded machine
    assert!(took.as_millis() < 500, "a gradient check took {took:?}");
}
