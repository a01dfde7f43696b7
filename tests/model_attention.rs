//! The model's attention (sgemm per head, `model::attention`) against the tracer's kernels run
//! untraced: every buffer of forward and backward, within 1e-5 of the tensor's largest value.

use attn_trace::kernels::{Mask, attention_1h, attention_mha};
use attn_trace::model::attention;
use attn_trace::tensor::Shape;
use attn_trace::trace::{MASKED, NoRecord};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `got` against `want`: masked scores (−1e9) must match exactly, everything else within 1e-5 of
/// the largest |value| of `want` apart from them (NaN, an unwritten entry, fails).
fn assert_close(name: &str, sh: Shape, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{name}: length");
    let largest = want
        .iter()
        .filter(|&&x| x != MASKED)
        .fold(0.0f32, |m, &x| m.max(x.abs()));
    // (all zero, as dS, dQ and dK are when T = 1 and P = 1, leaves no tolerance at all)
    let tol = 1e-5 * largest;
    for (n, (&g, &w)) in got.iter().zip(want).enumerate() {
        if w == MASKED {
            assert_eq!(g, MASKED, "{name} {sh:?} [{n}]: a masked score");
        } else {
            assert!(
                (g - w).abs() <= tol,
                "{name} {sh:?} [{n}]: {g} vs kernel {w} (tol {tol})"
            );
        }
    }
}

fn random(rng: &mut ChaCha8Rng, n: usize, amp: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-amp..amp)).collect()
}

/// Forward and backward of both on the same random inputs, every buffer compared.
fn check(b: usize, t: usize, c: usize, h: usize, seed: u64) {
    check_shape(Shape::new(b, t, c, h), seed);
}

fn check_shape(sh: Shape, seed: u64) {
    let Shape { b, s, t, c, h } = sh;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // amplitude 2 makes some rows of the softmax peaked, others flat
    let q = random(&mut rng, b * s * c, 2.0);
    let k = random(&mut rng, b * t * c, 2.0);
    let v = random(&mut rng, b * t * c, 1.0);
    let d_att = random(&mut rng, b * s * c, 1.0);
    let (n_q, n_x, n_st) = (b * s * c, b * t * c, b * h * s * t);

    // the kernels: the baseline one for H = 1, the multi-head one otherwise
    let (mut ks, mut kp, mut ka) = (vec![0.0; n_st], vec![0.0; n_st], vec![0.0; n_q]);
    let (mut kdp, mut kds) = (vec![0.0; n_st], vec![0.0; n_st]);
    let (mut kdq, mut kdk, mut kdv) = (vec![0.0; n_q], vec![0.0; n_x], vec![0.0; n_x]);
    let mask = Mask::Causal;
    if h == 1 {
        attention_1h::forward(&mut NoRecord, sh, &mask, &q, &k, &v, &mut ks, &mut kp, &mut ka);
        attention_1h::backward(
            &mut NoRecord,
            sh,
            &mask,
            &q,
            &k,
            &v,
            &kp,
            &d_att,
            &mut kdp,
            &mut kds,
            &mut kdq,
            &mut kdk,
            &mut kdv,
        );
    } else {
        attention_mha::forward(&mut NoRecord, sh, &mask, &q, &k, &v, &mut ks, &mut kp, &mut ka);
        attention_mha::backward(
            &mut NoRecord,
            sh,
            &mask,
            &q,
            &k,
            &v,
            &kp,
            &d_att,
            &mut kdp,
            &mut kds,
            &mut kdq,
            &mut kdk,
            &mut kdv,
        );
    }

    // the fast path, into buffers full of NaN so anything it fails to write shows
    let nan = |n: usize| vec![f32::NAN; n];
    let (mut sc, mut p, mut a) = (nan(n_st), nan(n_st), nan(n_q));
    let (mut dp, mut ds) = (nan(n_st), nan(n_st));
    let (mut dq, mut dk, mut dv) = (nan(n_q), nan(n_x), nan(n_x));
    attention::forward(sh, &q, &k, &v, &mut sc, &mut p, &mut a);
    attention::backward(sh, &q, &k, &v, &p, &d_att, &mut dp, &mut ds, &mut dq, &mut dk, &mut dv);

    assert_close("scores", sh, &sc, &ks);
    assert_close("probs", sh, &p, &kp);
    assert_close("att", sh, &a, &ka);
    assert_close("d_probs", sh, &dp, &kdp);
    assert_close("d_scores", sh, &ds, &kds);
    assert_close("d_q", sh, &dq, &kdq);
    assert_close("d_k", sh, &dk, &kdk);
    assert_close("d_v", sh, &dv, &kdv);
    // hidden pairs: probability and score gradient exactly 0
    for (n, (&pn, &dsn)) in p.iter().zip(&ds).enumerate() {
        let (i, j) = ((n / t) % s, n % t);
        if j > i {
            assert!(
                pn == 0.0 && dsn == 0.0,
                "{sh:?} [{n}]: hidden pair ({i},{j}) got {pn}, {dsn}"
            );
        }
    }
}

#[test]
fn single_head_equals_the_baseline_kernel() {
    check(1, 1, 8, 1, 1); // T = 1: one visible pair
    check(2, 1, 8, 1, 2);
    check(3, 7, 12, 1, 3); // T not a multiple of 8
    check(2, 13, 16, 1, 4);
    check(4, 64, 64, 1, 5); // the bench's configuration (a)
}

#[test]
fn multi_head_equals_the_mha_kernel() {
    check(1, 1, 8, 2, 6);
    check(2, 1, 12, 3, 7);
    check(3, 7, 12, 3, 8);
    check(2, 13, 16, 4, 9);
    check(2, 17, 24, 2, 10);
    check(3, 64, 128, 4, 11); // the bench's configuration (b), a shard's worth
}

#[test]
fn more_or_fewer_queries_than_keys_equal_the_kernels() {
    // the causal rule j > i with S ≠ T: queries past the last key see every key, keys past the
    // last query are seen by none (their dK and dV are 0)
    check_shape(Shape::cross(2, 21, 9, 8, 1), 13);
    check_shape(Shape::cross(2, 9, 21, 8, 1), 14);
    check_shape(Shape::cross(2, 40, 19, 12, 3), 15);
    check_shape(Shape::cross(1, 19, 40, 12, 3), 16);
}

#[test]
fn heads_do_not_mix() {
    // changing head 1's keys changes head 1's outputs only
    let sh = Shape::new(1, 6, 8, 2);
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let q = random(&mut rng, 48, 1.0);
    let mut k = random(&mut rng, 48, 1.0);
    let v = random(&mut rng, 48, 1.0);
    let run = |k: &[f32]| {
        let (mut s, mut p, mut a) = (vec![0.0; 72], vec![0.0; 72], vec![0.0; 48]);
        attention::forward(sh, &q, k, &v, &mut s, &mut p, &mut a);
        a
    };
    let before = run(&k);
    for j in 0..6 {
        // head 1 is channels 4..8; a shift that differs per key (the same shift for every key
        // would leave the softmax as it was)
        k[j * 8 + 4] += 0.5 * j as f32;
    }
    let after = run(&k);
    for (n, (x, y)) in before.iter().zip(&after).enumerate() {
        if n % 8 < 4 {
            assert_eq!(x, y, "head 0 changed at {n}");
        }
    }
    // head 1 of the last query (which sees every key) did change
    assert!((40..48).any(|n| before[n] != after[n]));
}
