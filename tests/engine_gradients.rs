//! Backward against finite differences, MHA with one head against the baseline, and traced
//! against untraced runs.

mod common;

use attn_trace::engine::{Inputs, Passes, Start, Tensors, run};
use attn_trace::kernels::{Mask, Variant};
use attn_trace::tensor::Shape;
use attn_trace::trace::Buf;
use common::{from_qkv, from_x, values};

/// L = Σ out ⊙ d_out, accumulated in f64 (out is att when there is no output projection).
fn loss(inputs: &Inputs, variant: Variant) -> f64 {
    let r = run(inputs, variant, Passes::FORWARD, false);
    let out = if inputs.proj.is_some() {
        &r.tensors.out
    } else {
        &r.tensors.att
    };
    out.iter().zip(&inputs.d_out).map(|(&o, &g)| o as f64 * g as f64).sum()
}

/// Every input tensor of a run, addressed by buffer, for perturbation.
fn input_mut(inputs: &mut Inputs, buf: Buf) -> &mut Vec<f32> {
    match (buf, &mut inputs.start, &mut inputs.proj) {
        (Buf::X, Start::X { x, .. }, _) => x,
        (Buf::WQkv, Start::X { w_qkv, .. }, _) => w_qkv,
        (Buf::BQkv, Start::X { b_qkv, .. }, _) => b_qkv,
        (Buf::Q, Start::Qkv { q, .. }, _) => q,
        (Buf::K, Start::Qkv { k, .. }, _) => k,
        (Buf::V, Start::Qkv { v, .. }, _) => v,
        (Buf::WProj, _, Some((w, _))) => w,
        (Buf::BProj, _, Some((_, b))) => b,
        _ => panic!("{buf} is not an input of this run"),
    }
}

fn gradient(t: &Tensors, buf: Buf) -> &[f32] {
    match buf {
        Buf::X => &t.d_x,
        Buf::WQkv => &t.d_w_qkv,
        Buf::BQkv => &t.d_b_qkv,
        Buf::Q => &t.d_q,
        Buf::K => &t.d_k,
        Buf::V => &t.d_v,
        Buf::WProj => &t.d_w_proj,
        Buf::BProj => &t.d_b_proj,
        _ => unreachable!(),
    }
}

/// Central differences for every element of every input, against the analytic gradient.
fn check(inputs: &Inputs, variant: Variant, bufs: &[Buf]) {
    let analytic = run(inputs, variant, Passes::BOTH, false).tensors;
    let eps = 1e-3f32;
    for &buf in bufs {
        let grad = gradient(&analytic, buf);
        let n = input_mut(&mut inputs.clone(), buf).len();
        assert_eq!(grad.len(), n, "{buf}: gradient has the wrong length");
        let mut worst = 0.0f64;
        for (k, &g) in grad.iter().enumerate() {
            let mut plus = inputs.clone();
            input_mut(&mut plus, buf)[k] += eps;
            let mut minus = inputs.clone();
            input_mut(&mut minus, buf)[k] -= eps;
            let numeric = (loss(&plus, variant) - loss(&minus, variant)) / (2.0 * eps as f64);
            let a = g as f64;
            let err = (a - numeric).abs() / (a.abs() + numeric.abs()).max(1.0);
            worst = worst.max(err);
            assert!(
                err < 5e-3,
                "{variant} d_{buf}[{k}]: analytic {a}, numeric {numeric} (shape {:?})",
                inputs.shape
            );
        }
        assert!(worst.is_finite());
    }
}

const FROM_X: &[Buf] = &[Buf::X, Buf::WQkv, Buf::BQkv, Buf::WProj, Buf::BProj];
const FROM_QKV: &[Buf] = &[Buf::Q, Buf::K, Buf::V];

#[test]
fn finite_differences_small_walkthrough_shape() {
    let inputs = from_x(Shape::new(1, 3, 4, 2), Mask::Causal, 11);
    check(&inputs, Variant::Baseline, FROM_X);
    check(&inputs, Variant::Mha, FROM_X);
}

#[test]
fn finite_differences_batch_of_two_and_longer_sequence() {
    let inputs = from_x(Shape::new(2, 5, 6, 3), Mask::Causal, 12);
    check(&inputs, Variant::Baseline, FROM_X);
    check(&inputs, Variant::Mha, FROM_X);
}

#[test]
fn finite_differences_without_mask_and_four_heads() {
    let inputs = from_x(Shape::new(2, 6, 8, 4), Mask::None, 13);
    check(&inputs, Variant::Baseline, FROM_X);
    check(&inputs, Variant::Mha, FROM_X);
}

#[test]
fn finite_differences_from_the_attention_core() {
    let sh = Shape::new(2, 5, 4, 2);
    let n = 2 * 5 * 4;
    let mut inputs = from_qkv(sh, Mask::Causal, values(n, 1), values(n, 2), values(n, 3));
    inputs.d_out = values(n, 4);
    check(&inputs, Variant::Baseline, FROM_QKV);
    check(&inputs, Variant::Mha, FROM_QKV);
}

#[test]
fn masked_pairs_pass_no_gradient_to_future_keys() {
    // with a causal mask, query 0 sees only key 0: perturbing k[T-1] cannot change row 0, and
    // the last key's gradient comes only from the last query
    let sh = Shape::new(1, 4, 2, 1);
    let n = 4 * 2;
    let mut inputs = from_qkv(sh, Mask::Causal, values(n, 5), values(n, 6), values(n, 7));
    inputs.d_out = vec![0.0; n];
    inputs.d_out[0] = 1.0; // only row 0 of att matters
    let t = run(&inputs, Variant::Baseline, Passes::BOTH, false).tensors;
    assert!(
        t.d_k[2..].iter().all(|&g| g == 0.0),
        "keys 1..3 got gradient from query 0: {:?}",
        t.d_k
    );
    assert!(
        t.d_v[2..].iter().all(|&g| g == 0.0),
        "values 1..3 got gradient from query 0: {:?}",
        t.d_v
    );
    assert!(t.d_v[0] != 0.0);
}

#[test]
fn mha_with_one_head_is_the_baseline_bit_for_bit() {
    for (seed, mask) in [(21, Mask::Causal), (22, Mask::None)] {
        let inputs = from_x(Shape::new(2, 5, 6, 1), mask.clone(), seed);
        let base = run(&inputs, Variant::Baseline, Passes::BOTH, false).tensors;
        let mha = run(&inputs, Variant::Mha, Passes::BOTH, false).tensors;
        for &buf in Buf::ALL {
            assert_eq!(base.get(buf), mha.get(buf), "{buf} differs ({mask:?})");
        }
        assert!(!base.d_w_qkv.is_empty() && !base.d_x.is_empty());
    }
}

#[test]
fn traced_and_untraced_runs_give_identical_tensors() {
    for variant in Variant::ALL {
        for mask in [Mask::Causal, Mask::None] {
            let inputs = from_x(Shape::new(2, 4, 6, 3), mask.clone(), 31);
            let plain = run(&inputs, variant, Passes::BOTH, false);
            let traced = run(&inputs, variant, Passes::BOTH, true);
            assert_eq!(plain.tensors, traced.tensors, "{variant} {mask:?}");
            assert!(plain.trace.is_none());
            assert!(traced.events() > 0);
        }
    }
}
