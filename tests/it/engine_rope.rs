//! Rotary position embeddings: worked rotations for both pairings, scores that depend only on
//! the distance between query and key, gradients against finite differences for every kernel,
//! and the closed-form counts and formulas of the rope phases.

use crate::support::gradients::check_gradients;
use crate::support::inputs::{from_qkv, from_x, values};
use crate::support::trace::{assert_derived_lines_match, closed_form_counts, counted};
use attn_trace_analysis::formula::derived_lines;
use attn_trace_core::engine::{Passes, kernel_shape, run};
use attn_trace_core::kernels::rope::{Pairs, Rope};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Phase};

const FROM_X: &[Buf] = &[Buf::X, Buf::WQkv, Buf::BQkv, Buf::WProj, Buf::BProj];
const FROM_QKV: &[Buf] = &[Buf::Q, Buf::K, Buf::V];

fn rope(pairs: Pairs, base: f32) -> Option<Rope> {
    Some(Rope { pairs, base })
}

#[test]
fn a_pair_turns_by_t_radians_when_theta_is_one() {
    // D = C = 2: one pair, θ_0 = base^0 = 1, so position t turns by t radians. q = k = [1, 0]
    // at every position becomes [cos t, sin t]
    let sh = Shape::new(1, 3, 2, 1);
    let q = vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0];
    let inputs = from_qkv(sh, Mask::Causal, q.clone(), q, values(6, 1)).with_rope(rope(Pairs::Interleaved, 10000.0));
    let r = run(&inputs, Variant::Baseline, Passes::FORWARD, true);
    let want = [
        1.0,
        0.0,
        1f64.cos() as f32,
        1f64.sin() as f32,
        2f64.cos() as f32,
        2f64.sin() as f32,
    ];
    assert_eq!(r.tensors[Buf::Q], want);
    assert_eq!(r.tensors[Buf::K], want);
    assert_eq!((want[4], want[5]), (-0.41614684, 0.9092974));
    // the score of query 2 with key 1 is cos(2 − 1)/√2: only the distance counts
    let s21 = r.tensors[Buf::Scores][2 * 3 + 1];
    assert!((s21 - 1f32.cos() / 2f32.sqrt()).abs() < 1e-6, "{s21}");
    // the log has the rotation: rope_cos and rope_sin read, q[4] and q[5] written
    let t = r.trace.as_ref().unwrap();
    let w = t.index.first_write(Buf::Q, 4).unwrap();
    assert_eq!(t.view(w).phase, Phase::Rope);
    assert_eq!(t.events[w].value, want[4]);
    let reads: Vec<(Buf, u32)> = (w - 4..w).map(|n| (t.events[n].buf, t.events[n].offset)).collect();
    assert_eq!(reads, [(Buf::RopeCos, 2), (Buf::RopeSin, 2), (Buf::Q, 4), (Buf::Q, 5)]);
}

#[test]
fn interleaved_and_half_pair_different_channels() {
    // D = 4, base 100: θ_0 = 1, θ_1 = 100^(−2/4) = 0.1. At t = 1 a unit vector on channel 1
    // turns with pair 0 (channels 0, 1) when interleaved, with pair 1 (channels 1, 3) when half
    let sh = Shape::new(1, 2, 4, 1);
    let q = vec![0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    let v = values(8, 2);
    let turned = |pairs| {
        let inputs = from_qkv(sh, Mask::Causal, q.clone(), q.clone(), v.clone()).with_rope(rope(pairs, 100.0));
        run(&inputs, Variant::Baseline, Passes::FORWARD, false).tensors[Buf::Q][4..].to_vec()
    };
    let (c1, s1) = (1f64.cos() as f32, 1f64.sin() as f32);
    let (c01, s01) = (0.1f64.cos() as f32, 0.1f64.sin() as f32);
    // interleaved pair 0 = (0, 1): x'[0] = 0·cos − 1·sin, x'[1] = 0·sin + 1·cos
    assert_eq!(turned(Pairs::Interleaved), [-s1, c1, 0.0, 0.0]);
    // half pair 1 = (1, 3): x'[1] = 1·cos(0.1) − 0·sin, x'[3] = 1·sin(0.1) + 0·cos
    assert_eq!(turned(Pairs::Half), [0.0, c01, 0.0, s01]);
}

#[test]
fn rotated_scores_depend_only_on_the_distance_between_query_and_key() {
    // the same q at every position and the same k at every key: without rope every score is
    // equal; with rope S[i,j] depends on i − j alone
    let (t, c) = (6, 8);
    let sh = Shape::new(1, t, c, 2);
    let q: Vec<f32> = values(c, 3).repeat(t);
    let k: Vec<f32> = values(c, 4).repeat(t);
    for pairs in Pairs::ALL {
        let inputs = from_qkv(sh, Mask::None, q.clone(), k.clone(), values(t * c, 5)).with_rope(rope(pairs, 10000.0));
        for variant in [Variant::Mha, Variant::Baseline] {
            let s = run(&inputs, variant, Passes::FORWARD, false).tensors[Buf::Scores].to_vec();
            let heads = kernel_shape(sh, variant).h;
            for hh in 0..heads {
                let at = |i: usize, j: usize| s[(hh * t + i) * t + j];
                for i in 0..t - 1 {
                    for j in 0..t - 1 {
                        assert!(
                            (at(i, j) - at(i + 1, j + 1)).abs() < 1e-5,
                            "{variant} {pairs:?} h{hh}: S[{i},{j}] = {} vs S[{},{}] = {}",
                            at(i, j),
                            i + 1,
                            j + 1,
                            at(i + 1, j + 1)
                        );
                    }
                }
                assert!((at(0, 1) - at(1, 0)).abs() > 1e-4, "not symmetric in i − j");
            }
        }
    }
}

#[test]
fn rope_gradients_match_finite_differences_for_every_kernel() {
    for pairs in Pairs::ALL {
        let r = rope(pairs, 10000.0);
        let inputs = from_x(Shape::new(2, 4, 8, 2), Mask::Causal, 21).with_rope(r);
        check_gradients(&inputs, Variant::Baseline, FROM_X);
        check_gradients(&inputs, Variant::Mha, FROM_X);
        let grouped = from_x(Shape::new(1, 5, 8, 4).with_kv_heads(2), Mask::None, 22).with_rope(r);
        check_gradients(&grouped, Variant::Gqa, FROM_X);
        // from q, k, v: their gradients are those of the vectors before the rotation
        let sh = Shape::new(2, 4, 4, 2).with_kv_heads(1);
        let mut core = from_qkv(sh, Mask::Causal, values(32, 23), values(16, 24), values(16, 25));
        core.d_out = values(32, 26);
        check_gradients(&core.with_rope(rope(pairs, 50.0)), Variant::Gqa, FROM_QKV);
    }
}

#[test]
fn rope_phases_match_their_closed_form_counts_and_formulas() {
    let cases = [
        from_x(Shape::new(2, 4, 8, 4), Mask::Causal, 1).with_rope(rope(Pairs::Interleaved, 10000.0)),
        from_x(Shape::new(1, 3, 8, 4).with_kv_heads(2), Mask::None, 2).with_rope(rope(Pairs::Half, 500.0)),
    ];
    for inputs in cases {
        for variant in Variant::STANDARD {
            let r = run(&inputs, variant, Passes::BOTH, true);
            let t = r.trace.as_ref().unwrap();
            let got = counted(t);
            let plan = inputs.for_variant(variant).plan();
            let want = closed_form_counts(&plan, variant, Passes::BOTH);
            assert!(want.contains_key(&Phase::Rope) && want.contains_key(&Phase::RopeBack));
            assert_eq!(got, want, "{variant} {:?}", inputs.shape);
            let ksh = kernel_shape(r.shape, variant);
            assert_derived_lines_match(t, ksh);
        }
    }
}

#[test]
fn rope_offsets_read_like_the_docs() {
    // half pairs, D = 4: pair m = 1 is (lo, hi) = (1, 3); query head 1 at t = 2, b = 0 starts at
    // q_base = ((0*3 + 2)*2 + 1)*4 = 20; its angle is read at cs + m = 2*(4/2) + 1 = 5
    let sh = Shape::new(1, 3, 8, 2);
    let inputs = from_x(sh, Mask::Causal, 4).with_rope(rope(Pairs::Half, 10000.0));
    let r = run(&inputs, Variant::Mha, Passes::BOTH, true);
    let t = r.trace.as_ref().unwrap();
    let w = (0..t.len())
        .find(|&n| {
            let e = t.events[n];
            e.buf == Buf::Q && e.op == Op::Write && e.offset == 23 && t.view(n).phase == Phase::Rope
        })
        .unwrap();
    let text: Vec<String> = derived_lines(&t.view(w), sh).iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "cs = t*(D/2) = 2*(4/2) = 4",
            "q_base = ((bb*T + t)*H + hh)*D = ((0*3 + 2)*2 + 1)*4 = 20",
            "lo = m = 1 = 1",
            "hi = m + D/2 = 1 + 4/2 = 3",
        ]
    );
    let cos = (w - 6..w).find(|&n| t.events[n].buf == Buf::RopeCos).unwrap();
    assert_eq!(t.events[cos].offset, 5);
    assert_eq!(t.label(Buf::RopeCos, 5), "t2 m1");
}
