//! Backward against finite differences, MHA with one head against the baseline, and traced
//! against untraced runs.

use crate::support::gradients::check_gradients;
use crate::support::inputs::{from_qkv, from_x, values};
use attn_trace_core::engine::{Passes, run};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::Buf;

const FROM_X: &[Buf] = &[Buf::X, Buf::WQkv, Buf::BQkv, Buf::WProj, Buf::BProj];
const FROM_QKV: &[Buf] = &[Buf::Q, Buf::K, Buf::V];

#[test]
fn finite_differences_small_walkthrough_shape() {
    let inputs = from_x(Shape::new(1, 3, 4, 2), Mask::Causal, 11);
    check_gradients(&inputs, Variant::Baseline, FROM_X);
    check_gradients(&inputs, Variant::Mha, FROM_X);
}

#[test]
fn finite_differences_batch_of_two_and_longer_sequence() {
    let inputs = from_x(Shape::new(2, 5, 6, 3), Mask::Causal, 12);
    check_gradients(&inputs, Variant::Baseline, FROM_X);
    check_gradients(&inputs, Variant::Mha, FROM_X);
}

#[test]
fn finite_differences_without_mask_and_four_heads() {
    let inputs = from_x(Shape::new(2, 6, 8, 4), Mask::None, 13);
    check_gradients(&inputs, Variant::Baseline, FROM_X);
    check_gradients(&inputs, Variant::Mha, FROM_X);
}

#[test]
fn finite_differences_from_the_attention_core() {
    let sh = Shape::new(2, 5, 4, 2);
    let n = 2 * 5 * 4;
    let mut inputs = from_qkv(sh, Mask::Causal, values(n, 1), values(n, 2), values(n, 3));
    inputs.d_out = values(n, 4);
    check_gradients(&inputs, Variant::Baseline, FROM_QKV);
    check_gradients(&inputs, Variant::Mha, FROM_QKV);
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
        t[Buf::DK][2..].iter().all(|&g| g == 0.0),
        "keys 1..3 got gradient from query 0: {:?}",
        &t[Buf::DK]
    );
    assert!(
        t[Buf::DV][2..].iter().all(|&g| g == 0.0),
        "values 1..3 got gradient from query 0: {:?}",
        &t[Buf::DV]
    );
    assert!(t[Buf::DV][0] != 0.0);
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
        assert!(!base[Buf::DWQkv].is_empty() && !base[Buf::DX].is_empty());
    }
}

#[test]
fn traced_and_untraced_runs_give_identical_tensors() {
    for variant in Variant::STANDARD {
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
