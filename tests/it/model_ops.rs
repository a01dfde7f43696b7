//! Every TinyGPT op's backward against central finite differences of its forward, and the sgemm
//! linear layer against the loop reference the tracer runs.
#![allow(non_snake_case)]

use attn_trace_core::kernels::linear as reference;
use attn_trace_core::trace::{Buf, NoRecord, Phase};
use attn_trace_model::ops;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn randn(rng: &mut ChaCha8Rng, n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|_| (rng.random::<f32>() * 2.0 - 1.0) * scale).collect()
}

/// `L(x) = Σ f(x) ⊙ r` in f64, the scalar whose gradient the backward passes compute when given
/// `dy = r`.
fn dot(y: &[f32], r: &[f32]) -> f64 {
    y.iter().zip(r).map(|(&a, &b)| a as f64 * b as f64).sum()
}

/// Central differences of `loss` at every element of `x` against `analytic`.
fn check(name: &str, x: &[f32], analytic: &[f32], eps: f32, tol: f64, loss: impl Fn(&[f32]) -> f64) {
    assert_eq!(x.len(), analytic.len());
    let mut xp = x.to_vec();
    for k in 0..x.len() {
        xp[k] = x[k] + eps;
        let up = loss(&xp);
        xp[k] = x[k] - eps;
        let down = loss(&xp);
        xp[k] = x[k];
        let fd = (up - down) / (2.0 * eps as f64);
        let an = analytic[k] as f64;
        assert!(
            (fd - an).abs() <= tol * (1.0 + an.abs()),
            "{name}[{k}]: finite difference {fd}, backward {an}"
        );
    }
}

#[test]
fn embedding_backward_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (B, T, C, V) = (2, 3, 4, 7);
    // token 5 appears twice: its row must receive both positions' gradients
    let tokens = [5u8, 1, 5, 0, 6, 2];
    let wte = randn(&mut rng, V * C, 1.0);
    let wpe = randn(&mut rng, 4 * C, 1.0);
    let r = randn(&mut rng, B * T * C, 1.0);
    let fwd = |wte: &[f32], wpe: &[f32]| {
        let mut x = vec![0.0; B * T * C];
        ops::embedding_forward([B, T], &tokens, wte, wpe, &mut x);
        dot(&x, &r)
    };
    let (mut d_wte, mut d_wpe) = (vec![0.0; V * C], vec![0.0; 4 * C]);
    ops::embedding_backward([B, T], &tokens, &r, &mut d_wte, &mut d_wpe);
    check("d_wte", &wte, &d_wte, 1e-2, 1e-4, |w| fwd(w, &wpe));
    check("d_wpe", &wpe, &d_wpe, 1e-2, 1e-4, |w| fwd(&wte, w));
    // rows of unused tokens and positions get nothing
    assert!(d_wte[3 * C..4 * C].iter().all(|&g| g == 0.0));
    assert!(d_wpe[3 * C..].iter().all(|&g| g == 0.0));
    assert_eq!(d_wte[5 * C], r[0] + r[2 * C]);
}

#[test]
fn layernorm_backward_matches_finite_differences_and_accumulates() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let (rows, C) = (3, 6);
    let x = randn(&mut rng, rows * C, 2.0);
    let r = randn(&mut rng, rows * C, 1.0);
    let fwd = |x: &[f32]| {
        let (mut y, mut m, mut s) = (vec![0.0; rows * C], vec![0.0; rows], vec![0.0; rows]);
        ops::layernorm_forward(C, x, &mut y, &mut m, &mut s);
        dot(&y, &r)
    };
    let (mut y, mut m, mut s) = (vec![0.0; rows * C], vec![0.0; rows], vec![0.0; rows]);
    ops::layernorm_forward(C, &x, &mut y, &mut m, &mut s);
    // dx starts at 1: the backward adds to what the residual stream already holds
    let mut dx = vec![1.0; rows * C];
    ops::layernorm_backward(C, &x, &m, &s, &r, &mut dx);
    let dx: Vec<f32> = dx.iter().map(|g| g - 1.0).collect();
    check("dx", &x, &dx, 1e-3, 2e-3, fwd);
    // a normalised row's gradient sums to zero (shifting x changes nothing)
    assert!(dx[..C].iter().sum::<f32>().abs() < 1e-5);
}

#[test]
fn gelu_backward_matches_finite_differences() {
    let x: Vec<f32> = (-12..=12).map(|k| k as f32 * 0.37).collect();
    let r: Vec<f32> = (0..x.len()).map(|k| 1.0 - 0.07 * k as f32).collect();
    let fwd = |x: &[f32]| {
        let (mut y, mut th) = (vec![0.0; x.len()], vec![0.0; x.len()]);
        ops::gelu_forward(x, &mut y, &mut th);
        dot(&y, &r)
    };
    let (mut y, mut th) = (vec![0.0; x.len()], vec![0.0; x.len()]);
    ops::gelu_forward(&x, &mut y, &mut th);
    let mut dx = vec![0.0; x.len()];
    ops::gelu_backward(&x, &th, &r, &mut dx);
    check("dx", &x, &dx, 1e-3, 2e-3, fwd);
}

#[test]
fn crossentropy_backward_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (rows, V) = (4, 9);
    let logits = randn(&mut rng, rows * V, 3.0);
    let targets = [0u8, 8, 3, 3];
    let fwd = |l: &[f32]| {
        let (mut p, mut loss) = (vec![0.0; rows * V], vec![0.0; rows]);
        ops::crossentropy_forward(V, l, &targets, &mut p, &mut loss);
        loss.iter().map(|&x| x as f64).sum::<f64>() / rows as f64
    };
    let (mut p, mut loss) = (vec![0.0; rows * V], vec![0.0; rows]);
    ops::crossentropy_forward(V, &logits, &targets, &mut p, &mut loss);
    let mut d = vec![0.0; rows * V];
    ops::crossentropy_backward(V, &p, &targets, 1.0 / rows as f32, &mut d);
    check("d_logits", &logits, &d, 1e-3, 1e-3, fwd);
    // the loss is −ln of the target's probability
    assert!((loss[1] + p[V + 8].ln()).abs() < 1e-5);
}

#[test]
fn residual_backward_passes_the_gradient_to_both_inputs() {
    let x = [1.0, -2.0, 0.5];
    let y = [0.25, 4.0, -1.0];
    let r = [0.3, -0.7, 1.1];
    let mut out = [0.0; 3];
    ops::residual_forward(&x, &y, &mut out);
    assert_eq!(out, [1.25, 2.0, -0.5]);
    let (mut dx, mut dy) = ([0.0; 3], [0.0; 3]);
    ops::residual_backward(&r, &mut dx, &mut dy);
    let fwd = |x: &[f32], y: &[f32]| {
        let mut o = [0.0; 3];
        ops::residual_forward(x, y, &mut o);
        dot(&o, &r)
    };
    check("dx", &x, &dx, 1e-2, 1e-4, |v| fwd(v, &y));
    check("dy", &y, &dy, 1e-2, 1e-4, |v| fwd(&x, v));
}

#[test]
fn linear_backward_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let (B, T, IC, OC) = (2, 3, 5, 4);
    let x = randn(&mut rng, B * T * IC, 1.0);
    let w = randn(&mut rng, IC * OC, 1.0);
    let b = randn(&mut rng, OC, 1.0);
    let r = randn(&mut rng, B * T * OC, 1.0);
    let fwd = |x: &[f32], w: &[f32], b: &[f32]| {
        let mut y = vec![0.0; B * T * OC];
        ops::linear_forward([B, T], x, w, b, &mut y);
        dot(&y, &r)
    };
    let (mut dx, mut dw, mut db) = (vec![0.0; x.len()], vec![9.0; w.len()], vec![9.0; OC]);
    ops::linear_backward([B, T], &x, &w, &r, &mut dx, &mut dw, &mut db);
    check("dx", &x, &dx, 1e-2, 1e-4, |v| fwd(v, &w, &b));
    check("dW", &w, &dw, 1e-2, 1e-4, |v| fwd(&x, v, &b));
    check("db", &b, &db, 1e-2, 1e-4, |v| fwd(&x, &w, v));
}

/// `max |a − b| / max |b|`: the error relative to the tensor's scale (an element near zero
/// cannot be matched to 1e-5 of itself when the two sum in different orders).
fn max_rel(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    let err = a.iter().zip(b).map(|(&x, &y)| (x - y).abs()).fold(0.0, f32::max);
    let scale = b.iter().map(|y| y.abs()).fold(0.0, f32::max);
    err / scale
}

#[test]
fn sgemm_linear_matches_the_loop_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    // sizes of TinyGPT's layers at C=64: qkv (64→192), fc (64→256), out (256→64), odd sizes too
    for (B, T, IC, OC) in [(2, 64, 64, 192), (2, 64, 256, 64), (3, 7, 13, 29)] {
        let x = randn(&mut rng, B * T * IC, 1.0);
        let w = randn(&mut rng, IC * OC, 0.2);
        let b = randn(&mut rng, OC, 0.5);
        let dy = randn(&mut rng, B * T * OC, 1.0);
        let (mut y_ref, mut y) = (vec![0.0; B * T * OC], vec![0.0; B * T * OC]);
        reference::forward(
            &mut NoRecord,
            Phase::QkvProj,
            [B, T],
            (Buf::X, &x),
            (Buf::WQkv, &w),
            Some((Buf::BQkv, &b)),
            (Buf::Qkv, &mut y_ref),
        );
        ops::linear_forward([B, T], &x, &w, &b, &mut y);
        assert!(
            max_rel(&y, &y_ref) <= 1e-5,
            "forward {B}x{T} {IC}→{OC}: {}",
            max_rel(&y, &y_ref)
        );

        let (mut dx_ref, mut dw_ref, mut db_ref) = (vec![0.0; x.len()], vec![0.0; w.len()], vec![0.0; OC]);
        reference::backward(
            &mut NoRecord,
            Phase::QkvProjBack,
            [B, T],
            (Buf::X, &x),
            (Buf::WQkv, &w),
            (Buf::DQkv, &dy),
            (Buf::DX, &mut dx_ref),
            (Buf::DWQkv, &mut dw_ref),
            Some((Buf::DBQkv, &mut db_ref)),
        );
        let (mut dx, mut dw, mut db) = (vec![0.0; x.len()], vec![0.0; w.len()], vec![0.0; OC]);
        ops::linear_backward([B, T], &x, &w, &dy, &mut dx, &mut dw, &mut db);
        for (name, fast, slow) in [("dx", &dx, &dx_ref), ("dW", &dw, &dw_ref), ("db", &db, &db_ref)] {
            let e = max_rel(fast, slow);
            assert!(e <= 1e-5, "{name} {B}x{T} {IC}→{OC}: relative error {e}");
        }
    }
}

#[test]
fn the_split_projection_is_the_whole_one_cut_in_column_blocks() {
    // q | k | v written into three buffers (k and v narrower, as with grouped heads) and their
    // gradients gathered back: the forward gives the whole product's blocks, the backward its
    // dx, dW and db within rounding (dx adds three products instead of one)
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    for (B, T, IC, [nq, nk]) in [(2, 64, 64, [64, 64]), (2, 12, 16, [16, 8]), (3, 7, 13, [9, 5])] {
        let OC = nq + 2 * nk;
        let x = randn(&mut rng, B * T * IC, 1.0);
        let w = randn(&mut rng, IC * OC, 0.2);
        let b = randn(&mut rng, OC, 0.5);
        let dy = randn(&mut rng, B * T * OC, 1.0);
        let rows = B * T;
        let mut y = vec![0.0; rows * OC];
        ops::linear_forward([B, T], &x, &w, &b, &mut y);
        let (mut q, mut k, mut v) = (vec![9.0; rows * nq], vec![9.0; rows * nk], vec![9.0; rows * nk]);
        ops::linear_forward_split([B, T], &x, &w, &b, [&mut q, &mut k, &mut v]);
        let block = |buf: &[f32], o: usize, n: usize| -> Vec<f32> {
            buf.chunks_exact(OC).flat_map(|row| row[o..o + n].to_vec()).collect()
        };
        assert_eq!(q, block(&y, 0, nq), "q");
        assert_eq!(k, block(&y, nq, nk), "k");
        assert_eq!(v, block(&y, nq + nk, nk), "v");

        let (mut dx, mut dw, mut db) = (vec![0.0; x.len()], vec![0.0; w.len()], vec![0.0; OC]);
        ops::linear_backward([B, T], &x, &w, &dy, &mut dx, &mut dw, &mut db);
        let parts = [block(&dy, 0, nq), block(&dy, nq, nk), block(&dy, nq + nk, nk)];
        let (mut dx_s, mut dw_s, mut db_s) = (vec![9.0; x.len()], vec![9.0; w.len()], vec![9.0; OC]);
        let dys = [&parts[0][..], &parts[1][..], &parts[2][..]];
        ops::linear_backward_split([B, T], &x, &w, dys, &mut dx_s, &mut dw_s, &mut db_s);
        for (name, split, whole) in [("dx", &dx_s, &dx), ("dW", &dw_s, &dw), ("db", &db_s, &db)] {
            let e = max_rel(split, whole);
            assert!(e <= 1e-6, "{name} {B}x{T} {IC}→{nq}+{nk}+{nk}: relative error {e}");
        }
    }
}
