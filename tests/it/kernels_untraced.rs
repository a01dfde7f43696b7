//! The attention passes run untraced (the no-op recorder, for which `dispatch.rs` picks the
//! vectorised loops of `untraced/fast/`) against the same passes traced (the lesson files' loops the
//! tracer shows): every buffer of forward and backward must be identical bit for bit, for every
//! kernel (grouped-query attention with every divisor of H as H_kv), every mask, self- and
//! cross-attention, and sizes that exercise every block width (64, 32, 8, 1).

use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Logger, NoRecord, Recorder};
use attn_trace_core::untraced::dispatch;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::support::inputs::{Core, core, half_mask};

/// Every buffer one forward and backward writes.
#[derive(Debug)]
struct Out {
    scores: Vec<f32>,
    probs: Vec<f32>,
    att: Vec<f32>,
    d_probs: Vec<f32>,
    d_scores: Vec<f32>,
    d_q: Vec<f32>,
    d_k: Vec<f32>,
    d_v: Vec<f32>,
}

/// Forward and backward with recorder `R` into buffers full of NaN, so an entry left unwritten
/// shows (GQA's `d_k`, `d_v` hold NaN too: the kernel clears them before adding). `H` must be 1
/// for the baseline, and `H_kv = H` unless `v` is GQA.
fn run<R: Recorder>(rec: &mut R, sh: Shape, mask: &Mask, v: Variant, x: &Core) -> Out {
    let Shape { b, s, t, c, h, .. } = sh;
    let nan = |n: usize| vec![f32::NAN; n];
    let (n_q, n_x, n_st) = (b * s * c, b * t * sh.kv_c(), b * h * s * t);
    let mut o = Out {
        scores: nan(n_st),
        probs: nan(n_st),
        att: nan(n_q),
        d_probs: nan(n_st),
        d_scores: nan(n_st),
        d_q: nan(n_q),
        d_k: nan(n_x),
        d_v: nan(n_x),
    };
    // the one dispatcher: a recording `R` runs the lesson files' loops, `NoRecord` the fast path
    dispatch::forward(
        rec,
        v,
        sh,
        mask,
        &x.q,
        &x.k,
        &x.v,
        &mut o.scores,
        &mut o.probs,
        &mut o.att,
    );
    dispatch::backward(
        rec,
        v,
        sh,
        mask,
        (&x.q, &x.k, &x.v, &o.probs),
        &x.d_att,
        &mut o.d_probs,
        &mut o.d_scores,
        (&mut o.d_q, &mut o.d_k, &mut o.d_v),
    );
    o
}

/// Untraced against traced, every buffer bit for bit; returns the untraced buffers.
fn check(sh: Shape, mask: &Mask, v: Variant, seed: u64) -> Out {
    check_inputs(sh, mask, v, &core(sh, 2.0, seed))
}

/// [`check`] on given inputs.
fn check_inputs(sh: Shape, mask: &Mask, v: Variant, x: &Core) -> Out {
    let mut log = Logger::new();
    let traced = run(&mut log, sh, mask, v, x);
    assert!(!log.is_empty(), "the traced run recorded nothing");
    let fast = run(&mut NoRecord, sh, mask, v, x);
    let pairs = [
        ("scores", &fast.scores, &traced.scores),
        ("probs", &fast.probs, &traced.probs),
        ("att", &fast.att, &traced.att),
        ("d_probs", &fast.d_probs, &traced.d_probs),
        ("d_scores", &fast.d_scores, &traced.d_scores),
        ("d_q", &fast.d_q, &traced.d_q),
        ("d_k", &fast.d_k, &traced.d_k),
        ("d_v", &fast.d_v, &traced.d_v),
    ];
    same_bits(&pairs, sh, mask, v);
    // training's head-by-head path, which keeps only probs: the same bits again
    let fused = run_fused(sh, mask, v, x);
    let pairs = [
        ("probs (head by head)", &fused.probs, &traced.probs),
        ("att (head by head)", &fused.att, &traced.att),
        ("d_q (head by head)", &fused.d_q, &traced.d_q),
        ("d_k (head by head)", &fused.d_k, &traced.d_k),
        ("d_v (head by head)", &fused.d_v, &traced.d_v),
    ];
    same_bits(&pairs, sh, mask, v);
    fast
}

/// Every named pair of buffers identical bit for bit.
fn same_bits(pairs: &[(&str, &Vec<f32>, &Vec<f32>)], sh: Shape, mask: &Mask, v: Variant) {
    for &(name, got, want) in pairs {
        assert_eq!(got.len(), want.len());
        for (n, (g, w)) in got.iter().zip(want.iter()).enumerate() {
            assert!(
                g.to_bits() == w.to_bits(),
                "{name} [{n}] {sh:?} {mask:?} {v}: untraced {g:e} vs traced {w:e}"
            );
        }
    }
}

/// Forward and backward as training runs them (`dispatch::forward_untraced`,
/// `backward_untraced`: head by head, no scores, `dP` or `dS` kept), into buffers of NaN; the
/// buffers it does not write stay NaN.
fn run_fused(sh: Shape, mask: &Mask, v: Variant, x: &Core) -> Out {
    let Shape { b, s, t, c, h, .. } = sh;
    let nan = |n: usize| vec![f32::NAN; n];
    let (n_q, n_x, n_st) = (b * s * c, b * t * sh.kv_c(), b * h * s * t);
    let mut o = Out {
        scores: nan(n_st),
        probs: nan(n_st),
        att: nan(n_q),
        d_probs: nan(n_st),
        d_scores: nan(n_st),
        d_q: nan(n_q),
        d_k: nan(n_x),
        d_v: nan(n_x),
    };
    dispatch::forward_untraced(v, sh, mask, &x.q, &x.k, &x.v, &mut o.probs, &mut o.att);
    let grads = (&mut o.d_q[..], &mut o.d_k[..], &mut o.d_v[..]);
    dispatch::backward_untraced(v, sh, mask, (&x.q, &x.k, &x.v, &o.probs), &x.d_att, grads);
    o
}

/// Both kernels (the baseline with one head) under every kind of mask.
fn check_all_masks(sh: Shape, seed: u64) {
    // windows: narrow, with sinks, one key (itself) plus one sink
    let windows = [(3, 0), (5, 2), (1, 1)].map(|(w, sinks)| Mask::Window { w, sinks });
    for mask in [Mask::Causal, Mask::None, half_mask(sh.s, sh.t, seed)]
        .into_iter()
        .chain(windows)
    {
        check(sh, &mask, Variant::Mha, seed);
        if sh.h == 1 {
            check(sh, &mask, Variant::Baseline, seed);
        }
        // every grouping of the heads: H_kv = H (MHA's numbers) down to 1 (multi-query)
        for h_kv in (1..=sh.h).filter(|k| sh.h.is_multiple_of(*k)) {
            check(sh.with_kv_heads(h_kv), &mask, Variant::Gqa, seed);
        }
    }
}

#[test]
fn the_training_configurations_are_identical_traced_and_untraced() {
    // (a) one head, C = 64 (a 64-wide block); (b) four heads of 32 (32-wide blocks), a shard's
    // worth of batch
    let a = check(Shape::new(2, 64, 64, 1), &Mask::Causal, Variant::Baseline, 1);
    check(Shape::new(1, 64, 128, 4), &Mask::Causal, Variant::Mha, 2);
    check(
        Shape::new(1, 64, 128, 4).with_kv_heads(2),
        &Mask::Causal,
        Variant::Gqa,
        2,
    );
    // the causal mask's results, seen from the untraced side: −1e9, probability 0, no gradient
    let t = 64;
    for (n, &s) in a.scores.iter().enumerate() {
        let (i, j) = ((n / t) % t, n % t);
        if j > i {
            assert_eq!(s, -1e9);
            assert_eq!(a.probs[n], 0.0);
            assert_eq!(a.d_scores[n].abs(), 0.0);
        }
    }
}

#[test]
fn odd_sizes_take_every_block_width() {
    // T = 75 = 64 + 8 + 3 keys per score row; D = 44 = 32 + 8 + 4 channels; D = 3, 1
    check_all_masks(Shape::new(2, 75, 44, 1), 3);
    check_all_masks(Shape::new(1, 75, 88, 2), 4);
    check_all_masks(Shape::new(2, 9, 9, 3), 5);
    check_all_masks(Shape::new(1, 11, 4, 4), 6);
    check_all_masks(Shape::new(1, 1, 8, 2), 7);
}

#[test]
fn cross_attention_is_identical_traced_and_untraced() {
    // more queries than keys and fewer, where the causal rule leaves whole rows and columns
    check_all_masks(Shape::cross(2, 21, 9, 8, 1), 8);
    check_all_masks(Shape::cross(1, 9, 70, 16, 2), 9);
}

#[test]
fn untraced_kernels_write_every_output_once() {
    // NaN-filled buffers come back finite: nothing was left unwritten or read before written
    let out = check(Shape::new(3, 13, 24, 3), &Mask::Causal, Variant::Mha, 10);
    check(
        Shape::new(3, 13, 24, 6).with_kv_heads(2),
        &Mask::Causal,
        Variant::Gqa,
        10,
    );
    for buf in [
        &out.scores,
        &out.probs,
        &out.att,
        &out.d_probs,
        &out.d_scores,
        &out.d_q,
        &out.d_k,
        &out.d_v,
    ] {
        assert!(buf.iter().all(|x| x.is_finite()));
    }
}

#[test]
fn infinities_behind_zero_probabilities_give_nan_as_traced() {
    // The untraced passes skip products with a probability of exactly 0 (the keys a causal mask
    // hides) when the values they multiply are finite, since those add ±0. Zero times an
    // infinity is NaN, which the traced kernels add: with an infinity there, nothing is skipped.
    let shapes = [
        (Shape::new(1, 9, 8, 1), Variant::Baseline),
        (Shape::new(1, 9, 8, 2), Variant::Mha),
        (Shape::new(1, 9, 8, 4).with_kv_heads(2), Variant::Gqa),
    ];
    for (sh, v) in shapes {
        let (mut x, kv) = (core(sh, 2.0, 11), sh.kv_c());
        // the last key's value: query 0 sees it with probability 0, so att[0] = … + 0·∞ = NaN
        x.v[(sh.t - 1) * kv] = f32::INFINITY;
        // query 0's gradient: every later key's dV gets P[0, j]·dAtt[0] = 0·(−∞) = NaN
        x.d_att[1] = f32::NEG_INFINITY;
        let out = check_inputs(sh, &Mask::Causal, v, &x);
        assert!(out.att[0].is_nan(), "att[0] = {}", out.att[0]);
        assert!(out.d_v[kv + 1].is_nan(), "dV[1, 1] = {}", out.d_v[kv + 1]);
        assert!(out.d_scores[0].is_nan(), "dS[0, 0] = {}", out.d_scores[0]);
    }
}

#[test]
fn a_hidden_pair_whose_gradient_overflows_gives_nan_as_traced() {
    // Training's backward skips dP of the pairs a causal mask hides when no dP can reach
    // infinity. Here every input is finite, but query 0's dP against the last key overflows:
    // 0·∞ joins query 0's softmax sum in the traced kernel, so its dS, and then dQ[0] and
    // every dK, are NaN; nothing may be skipped.
    let shapes = [
        (Shape::new(1, 9, 8, 1), Variant::Baseline),
        (Shape::new(1, 9, 8, 2), Variant::Mha),
        (Shape::new(1, 9, 8, 4).with_kv_heads(2), Variant::Gqa),
    ];
    for (sh, v) in shapes {
        let (mut x, kv) = (core(sh, 2.0, 12), sh.kv_c());
        let d = sh.d();
        for c in 0..d {
            x.v[(sh.t - 1) * kv + c] = 3e38;
            x.d_att[c] = 3e38;
        }
        let out = check_inputs(sh, &Mask::Causal, v, &x);
        assert!(
            out.d_probs[sh.t - 1].is_infinite(),
            "dP[0, T-1] = {}",
            out.d_probs[sh.t - 1]
        );
        assert!(out.d_scores[0].is_nan(), "dS[0, 0] = {}", out.d_scores[0]);
        assert!(out.d_q[0].is_nan(), "dQ[0, 0] = {}", out.d_q[0]);
    }
}

/// The split forward and backward with recorder `R`, into NaN-filled buffers:
/// `(q, k, v, d_qkv)`.
fn split_run<R: Recorder>(rec: &mut R, variant: Variant, sh: Shape, qkv: &[f32], d: [&[f32]; 3]) -> [Vec<f32>; 4] {
    let (n, n_kv) = (sh.b * sh.t * sh.c, sh.b * sh.t * sh.kv_c());
    let [mut q, mut k, mut v, mut d_qkv] = [n, n_kv, n_kv, n + 2 * n_kv].map(|n| vec![f32::NAN; n]);
    dispatch::split(rec, variant, sh, qkv, &mut q, &mut k, &mut v);
    dispatch::split_back(rec, variant, sh, d[0], d[1], d[2], &mut d_qkv);
    [q, k, v, d_qkv]
}

#[test]
fn the_split_is_identical_traced_and_untraced() {
    // the fused projection's q | k | v slices, and their gradients gathered back
    // (grouped: k and v are H_kv·D wide, as attention_gqa.rs splits them)
    let shapes = [
        (Shape::new(2, 5, 12, 3), Variant::Mha),
        (Shape::new(1, 64, 64, 1), Variant::Baseline),
        (Shape::new(2, 5, 12, 6).with_kv_heads(2), Variant::Gqa),
    ];
    for (sh, variant) in shapes {
        let (n, n_kv, kv) = (sh.b * sh.t * sh.c, sh.b * sh.t * sh.kv_c(), sh.kv_c());
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let mut random = |n: usize| -> Vec<f32> { (0..n).map(|_| rng.random_range(-1.0..1.0)).collect() };
        let (qkv, d_q, d_k, d_v) = (random(n + 2 * n_kv), random(n), random(n_kv), random(n_kv));
        let mut log = Logger::new();
        let traced = split_run(&mut log, variant, sh, &qkv, [&d_q, &d_k, &d_v]);
        assert!(!log.is_empty(), "the traced split recorded nothing");
        let fast = split_run(&mut NoRecord, variant, sh, &qkv, [&d_q, &d_k, &d_v]);
        for (name, got, want) in ["q", "k", "v", "d_qkv"]
            .into_iter()
            .zip(&fast)
            .zip(&traced)
            .map(|((a, b), c)| (a, b, c))
        {
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(got), bits(want), "{name} of {sh:?}");
        }
        // k's row 1 is qkv's row 1 from channel C; d_qkv's row 1 ends with d_v's row 1
        let row = sh.c + 2 * kv;
        assert_eq!(fast[1][kv], qkv[row + sh.c]);
        assert_eq!(fast[3][2 * row - 1], d_v[2 * kv - 1]);
    }
}

proptest! {
    #![proptest_config(crate::support::proptest_config(24))]

    #[test]
    fn random_shapes_are_identical_traced_and_untraced(
        b in 1usize..3, s in 1usize..20, t in 1usize..20, d in 1usize..12, h in 1usize..4, seed: u64,
    ) {
        check_all_masks(Shape::cross(b, s, t, d * h, h), seed);
    }
}
