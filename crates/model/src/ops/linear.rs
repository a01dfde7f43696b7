//! Linear: y = x·W + b over the rows of a [B,T,IC] input, W stored [IC, OC]. The loop version in
//! `kernels::linear` is the reference; these run the same math through a blocked sgemm, the one
//! [`sgemm`](fn@super::sgemm) picks for the CPU: gemm-f32's AVX-512 kernel where the CPU has AVX-512, matrixmultiply's
//! AVX2 (FMA) kernel elsewhere. Both sum each output's terms in blocks of k with fused
//! multiply-adds, in different blocks, so the two agree with the reference (and each other) to
//! rounding, not bit for bit (tests/it/model_ops.rs holds them to 1e-5 of the tensor's scale).

use super::gelu::{gelu_backward_impl, gelu_forward_impl};
use super::sgemm::{matmul, matmul_ld};
use attn_trace_core::tensor::simd::with_simd;

/// `y = x·W + b`: the product writes `x·W`, then the bias is added to every row.
pub fn linear_forward([B, T]: [usize; 2], x: &[f32], w: &[f32], b: &[f32], y: &mut [f32]) {
    let rows = B * T;
    let (IC, OC) = (x.len() / rows, y.len() / rows);
    matmul(rows, IC, OC, x, false, w, false, y);
    add_to_rows(y, b);
}

/// Writes `dx = dy·Wᵀ`, `dW = xᵀ·dy` and `db = Σ_rows dy` (not accumulated). `Wᵀ` is `W` read
/// with its strides swapped, packed by the sgemm as it goes: a copy of every weight matrix
/// transposed once per step cost more than it saved in small models and nothing in large ones.
pub fn linear_backward(
    [B, T]: [usize; 2],
    x: &[f32],
    w: &[f32],
    dy: &[f32],
    dx: &mut [f32],
    dw: &mut [f32],
    db: &mut [f32],
) {
    let rows = B * T;
    let (IC, OC) = (x.len() / rows, dy.len() / rows);
    matmul(rows, OC, IC, dy, false, w, true, dx);
    matmul(IC, rows, OC, x, true, dy, false, dw);
    sum_rows(dy, db);
}

/// `y = x·W + b` written as column blocks into separate buffers: `ys[p]` gets columns
/// `[o_p, o_p + n_p)` of `y` (`n_p` its row length, `o_p` the lengths before it), each a product
/// reading its block of `W`'s columns in place. The attention's `q | k | v` projection: the
/// split into `q`, `k`, `v` costs no copy. Each output is the same dot product as in
/// [`linear_forward`].
pub fn linear_forward_split([B, T]: [usize; 2], x: &[f32], w: &[f32], b: &[f32], ys: [&mut [f32]; 3]) {
    let rows = B * T;
    let (IC, OC) = (x.len() / rows, b.len());
    let mut o = 0;
    for y in ys {
        let n = y.len() / rows;
        matmul_ld(rows, IC, n, (x, IC, false), (&w[o..], OC, false), (y, n), false);
        add_to_rows(y, &b[o..o + n]);
        o += n;
    }
}

/// The backward of [`linear_forward_split`], from the blocks' gradients `dys`: `dx = Σ_p
/// dy_p·W_pᵀ` (the blocks' products added in turn), and each block's columns of `dW = xᵀ·dy`
/// and `db = Σ_rows dy`, written in place.
pub fn linear_backward_split(
    [B, T]: [usize; 2],
    x: &[f32],
    w: &[f32],
    dys: [&[f32]; 3],
    dx: &mut [f32],
    dw: &mut [f32],
    db: &mut [f32],
) {
    let rows = B * T;
    let (IC, OC) = (x.len() / rows, db.len());
    let mut o = 0;
    for (p, dy) in dys.into_iter().enumerate() {
        let n = dy.len() / rows;
        matmul_ld(rows, n, IC, (dy, n, false), (&w[o..], OC, true), (&mut *dx, IC), p > 0);
        matmul_ld(IC, rows, n, (x, IC, true), (dy, n, false), (&mut dw[o..], OC), false);
        sum_rows(dy, &mut db[o..o + n]);
        o += n;
    }
}

/// `y = x·W + b`, then `g = gelu(y)` with `th = tanh u` kept as [`gelu_forward`](super::gelu_forward) keeps it: the
/// bias is added in the same pass over `y` that takes GELU, instead of a pass of its own (the
/// same operations on every element, so the same bits as [`linear_forward`] then
/// [`gelu_forward`](super::gelu_forward)).
#[allow(clippy::too_many_arguments)]
pub fn linear_gelu_forward(
    [B, T]: [usize; 2],
    x: &[f32],
    w: &[f32],
    b: &[f32],
    y: &mut [f32],
    g: &mut [f32],
    th: &mut [f32],
) {
    let rows = B * T;
    let (IC, OC) = (x.len() / rows, y.len() / rows);
    matmul(rows, IC, OC, x, false, w, false, y);
    bias_gelu(y, b, g, th);
}

/// The backward of [`linear_gelu_forward`]: `dy = gelu'(y) ⊙ dg` (as [`gelu_backward`](super::gelu_backward)) with the
/// bias gradient `db = Σ_rows dy` added up in the same pass, row after row as [`linear_backward`]
/// does; then `dx = dy·Wᵀ` and `dW = xᵀ·dy`, as [`linear_backward`] computes them.
#[allow(clippy::too_many_arguments)]
pub fn gelu_linear_backward(
    [B, T]: [usize; 2],
    x: &[f32],
    w: &[f32],
    (y, th): (&[f32], &[f32]),
    dg: &[f32],
    dy: &mut [f32],
    dx: &mut [f32],
    dw: &mut [f32],
    db: &mut [f32],
) {
    let rows = B * T;
    let (IC, OC) = (x.len() / rows, y.len() / rows);
    gelu_backward_sum(y, th, dg, dy, db);
    matmul(rows, OC, IC, dy, false, w, true, dx);
    matmul(IC, rows, OC, x, true, dy, false, dw);
}

with_simd! {
    /// `y[r, :] += b`, then GELU of `y` into `g` and `th`, row by row.
    fn bias_gelu(y: &mut [f32], b: &[f32], g: &mut [f32], th: &mut [f32]) => bias_gelu_impl;
    /// [`gelu_backward`](super::gelu_backward) into `dx`, and `db = Σ_r dx[r, :]` from the first row on.
    fn gelu_backward_sum(x: &[f32], th: &[f32], dy: &[f32], dx: &mut [f32], db: &mut [f32]) => gelu_backward_sum_impl;
}

#[inline(always)]
fn bias_gelu_impl(y: &mut [f32], b: &[f32], g: &mut [f32], th: &mut [f32]) {
    let n = b.len();
    let rows = y
        .chunks_exact_mut(n)
        .zip(g.chunks_exact_mut(n))
        .zip(th.chunks_exact_mut(n));
    for ((y, g), th) in rows {
        for (y, &b) in y.iter_mut().zip(b) {
            *y += b;
        }
        gelu_forward_impl(y, g, th);
    }
}

#[inline(always)]
fn gelu_backward_sum_impl(x: &[f32], th: &[f32], dy: &[f32], dx: &mut [f32], db: &mut [f32]) {
    let n = db.len();
    db.fill(0.0);
    let rows = x.chunks_exact(n).zip(th.chunks_exact(n)).zip(dy.chunks_exact(n));
    for (((x, th), dy), dx) in rows.zip(dx.chunks_exact_mut(n)) {
        gelu_backward_impl(x, th, dy, dx);
        for (db, &d) in db.iter_mut().zip(dx.iter()) {
            *db += d;
        }
    }
}

with_simd! {
    /// `y[r, :] += b` for every row `r` of `y` (rows of `b.len()` values).
    fn add_to_rows(y: &mut [f32], b: &[f32]) => add_to_rows_impl;
}

#[inline(always)]
fn add_to_rows_impl(y: &mut [f32], b: &[f32]) {
    for yr in y.chunks_exact_mut(b.len()) {
        for (y, &b) in yr.iter_mut().zip(b) {
            *y += b;
        }
    }
}

with_simd! {
    /// `out = Σ_r x[r, :]` over the rows of `x` (rows of `out.len()` values), from the first row.
    fn sum_rows(x: &[f32], out: &mut [f32]) => sum_rows_impl;
}

#[inline(always)]
fn sum_rows_impl(x: &[f32], out: &mut [f32]) {
    out.fill(0.0);
    for xr in x.chunks_exact(out.len()) {
        for (o, &v) in out.iter_mut().zip(xr) {
            *o += v;
        }
    }
}

with_simd! {
    /// `y = x·W + b` one row at a time, each output summed as the reference loop of
    /// `kernels/linear.rs` sums it, `b[o] + x[0]·W[0,o] + x[1]·W[1,o] + …` (the same bits): the
    /// row's outputs are accumulated together, term `c` added to all of them before term
    /// `c + 1`, so they vectorise without reordering any sum. A row's numbers do not depend on
    /// the other rows, as sgemm's blocking may make them do.
    pub fn linear_rows(x: &[f32], w: &[f32], b: &[f32], y: &mut [f32]) => linear_rows_impl;
}

#[inline(always)]
fn linear_rows_impl(x: &[f32], w: &[f32], b: &[f32], y: &mut [f32]) {
    let OC = b.len();
    let IC = w.len() / OC;
    for (xr, yr) in x.chunks_exact(IC).zip(y.chunks_exact_mut(OC)) {
        yr.copy_from_slice(b);
        for (c, &xc) in xr.iter().enumerate() {
            for (y, &w) in yr.iter_mut().zip(&w[c * OC..(c + 1) * OC]) {
                *y += xc * w;
            }
        }
    }
}
