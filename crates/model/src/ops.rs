//! TinyGPT's ops besides attention, each forward next to its backward, over flat row-major
//! buffers. Activations are `[B,T,C]` at `(bb*T + i)*C + c`; weights are stored `[IC, OC]`.
//!
//! Each op is compiled for the baseline CPU, AVX2 and AVX-512, picked at run time ([`attn_trace_core::tensor::simd`]).
//!
//! Conventions for gradients: a backward *writes* the gradient of an op's input unless its doc
//! says it *accumulates* (`+=`): layernorm and the embeddings add into buffers that several
//! paths feed (the residual stream, a token row used at many positions).
#![allow(non_snake_case)]

use attn_trace_core::tensor::simd::{self, with_simd};

/// LayerNorm's `ε`, as in the reference.
pub const LN_EPS: f32 = 1e-5;

/// `√(2/π)`, the constant of GELU's tanh approximation.
const GELU_SCALE: f32 = 0.797_884_6;
/// The cubic coefficient of GELU's tanh approximation.
const GELU_CUBIC: f32 = 0.044_715;

// ---------------------------------------------------------------------------------------------
// embedding: x[bb,i,:] = wte[token[bb,i], :] + wpe[i, :]

with_simd! {
    /// Token plus position embedding. `tokens [B,T]`, `wte [V,C]`, `wpe [T_max,C]` (rows `0..T`
    /// used), `x [B,T,C]`.
    pub fn embedding_forward(bt: [usize; 2], tokens: &[u8], wte: &[f32], wpe: &[f32], x: &mut [f32]) => embedding_forward_impl;
}

#[inline(always)]
fn embedding_forward_impl([B, T]: [usize; 2], tokens: &[u8], wte: &[f32], wpe: &[f32], x: &mut [f32]) {
    let C = x.len() / (B * T);
    for bb in 0..B {
        for i in 0..T {
            let xi = (bb * T + i) * C;
            let ti = tokens[bb * T + i] as usize * C;
            let pi = i * C;
            for c in 0..C {
                x[xi + c] = wte[ti + c] + wpe[pi + c];
            }
        }
    }
}

with_simd! {
    /// Accumulates `dx` into the rows it came from: `d_wte[token] += dx[bb,i]`, `d_wpe[i] += dx[bb,i]`
    /// (a token seen at several positions, or a position in several sequences, sums their gradients).
    pub fn embedding_backward(bt: [usize; 2], tokens: &[u8], dx: &[f32], d_wte: &mut [f32], d_wpe: &mut [f32]) => embedding_backward_impl;
}

#[inline(always)]
fn embedding_backward_impl([B, T]: [usize; 2], tokens: &[u8], dx: &[f32], d_wte: &mut [f32], d_wpe: &mut [f32]) {
    let C = dx.len() / (B * T);
    for bb in 0..B {
        for i in 0..T {
            let xi = (bb * T + i) * C;
            let ti = tokens[bb * T + i] as usize * C;
            let pi = i * C;
            for c in 0..C {
                d_wte[ti + c] += dx[xi + c];
                d_wpe[pi + c] += dx[xi + c];
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// layernorm without learnable scale or shift: y = (x − mean) / √(var + ε) over each row of C

/// `Σ_{c<n} f(c)` in eight interleaved partial sums, so the additions vectorise (a model op:
/// nothing here is compared bit for bit with a trace).
#[inline(always)]
fn sum8(n: usize, f: impl Fn(usize) -> f32) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut c = 0;
    while c + 8 <= n {
        for (l, lane) in lanes.iter_mut().enumerate() {
            *lane += f(c + l);
        }
        c += 8;
    }
    let tail: f32 = (c..n).map(&f).sum();
    lanes.iter().sum::<f32>() + tail
}

with_simd! {
    /// Normalises every row of `C` channels; keeps each row's `mean` and `rstd = 1/√(var + ε)` for
    /// the backward pass.
    pub fn layernorm_forward(C: usize, x: &[f32], y: &mut [f32], mean: &mut [f32], rstd: &mut [f32]) => layernorm_forward_impl;
}

#[inline(always)]
fn layernorm_forward_impl(C: usize, x: &[f32], y: &mut [f32], mean: &mut [f32], rstd: &mut [f32]) {
    for (r, (xr, yr)) in x.chunks_exact(C).zip(y.chunks_exact_mut(C)).enumerate() {
        let m = sum8(C, |c| xr[c]) / C as f32;
        let var = sum8(C, |c| (xr[c] - m) * (xr[c] - m)) / C as f32;
        let s = 1.0 / (var + LN_EPS).sqrt();
        for c in 0..C {
            yr[c] = (xr[c] - m) * s;
        }
        mean[r] = m;
        rstd[r] = s;
    }
}

with_simd! {
    /// Accumulates `dx += rstd · (dy − mean(dy) − ŷ · mean(dy ⊙ ŷ))` with `ŷ = (x − mean)·rstd`:
    /// the normalisation removes the components of `dy` along 1 and along `ŷ`.
    pub fn layernorm_backward(C: usize, x: &[f32], mean: &[f32], rstd: &[f32], dy: &[f32], dx: &mut [f32]) => layernorm_backward_impl;
}

#[inline(always)]
fn layernorm_backward_impl(C: usize, x: &[f32], mean: &[f32], rstd: &[f32], dy: &[f32], dx: &mut [f32]) {
    let rows = x.chunks_exact(C).zip(dy.chunks_exact(C)).zip(dx.chunks_exact_mut(C));
    for (r, ((xr, dyr), dxr)) in rows.enumerate() {
        let (m, s) = (mean[r], rstd[r]);
        let dy_mean = sum8(C, |c| dyr[c]) / C as f32;
        let dy_yhat_mean = sum8(C, |c| dyr[c] * (xr[c] - m) * s) / C as f32;
        for c in 0..C {
            let yhat = (xr[c] - m) * s;
            dxr[c] += s * (dyr[c] - dy_mean - yhat * dy_yhat_mean);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// GELU, tanh approximation: y = ½·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³)

/// `tanh(u) = 1 − 2/(e^{2u} + 1)`: one `exp` (the vectorisable [`simd::exp`]), and exact ±1 at
/// the extremes instead of NaN.
#[inline(always)]
pub fn tanh(u: f32) -> f32 {
    1.0 - 2.0 / (simd::exp(2.0 * u) + 1.0)
}

with_simd! {
    /// Element-wise GELU. `th` keeps `tanh(u)` of every element so the backward pass need not
    /// recompute it.
    pub fn gelu_forward(x: &[f32], y: &mut [f32], th: &mut [f32]) => gelu_forward_impl;
}

#[inline(always)]
fn gelu_forward_impl(x: &[f32], y: &mut [f32], th: &mut [f32]) {
    for ((&v, y), th) in x.iter().zip(y.iter_mut()).zip(th.iter_mut()) {
        // u = √(2/π)·x·(1 + 0.044715·x²): one multiply-add and two multiplies deep
        let t = tanh(v * (v * v).mul_add(GELU_SCALE * GELU_CUBIC, GELU_SCALE));
        *th = t;
        *y = 0.5 * v * (1.0 + t);
    }
}

with_simd! {
    /// `dx = dy · (½(1 + tanh u) + ½·x·(1 − tanh² u)·√(2/π)·(1 + 3·0.044715·x²))`.
    pub fn gelu_backward(x: &[f32], th: &[f32], dy: &[f32], dx: &mut [f32]) => gelu_backward_impl;
}

#[inline(always)]
fn gelu_backward_impl(x: &[f32], th: &[f32], dy: &[f32], dx: &mut [f32]) {
    for (((&v, &t), &g), dx) in x.iter().zip(th).zip(dy).zip(dx.iter_mut()) {
        let du = (v * v).mul_add(3.0 * GELU_SCALE * GELU_CUBIC, GELU_SCALE);
        *dx = g * (0.5 * v * (-t).mul_add(t, 1.0)).mul_add(du, 0.5 * (1.0 + t));
    }
}

// ---------------------------------------------------------------------------------------------
// linear: y = x·W + b over the rows of a [B,T,IC] input, W stored [IC, OC]. The loop version in
// `kernels::linear` is the reference; these run the same math through a blocked sgemm, the one
// [`sgemm`] picks for the CPU: gemm-f32's AVX-512 kernel where the CPU has AVX-512, matrixmultiply's
// AVX2 (FMA) kernel elsewhere. Both sum each output's terms in blocks of k with fused
// multiply-adds, in different blocks, so the two agree with the reference (and each other) to
// rounding, not bit for bit (tests/it/model_ops.rs holds them to 1e-5 of the tensor's scale).

/// The sgemm libraries the linear layers can multiply through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sgemm {
    /// `matrixmultiply`: both operands packed into blocks sized for the caches, an 8×8 FMA
    /// kernel, or 16×16 with AVX-512 (in a build with the feature `avx512`).
    Matrixmultiply,
    /// `gemm-f32` (in a build with the feature `avx512`): its AVX-512 kernel, or its FMA kernel
    /// on a CPU without AVX-512.
    Gemm,
}

impl Sgemm {
    /// The library's crate name, as `ATTN_TRACE_SGEMM` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            Sgemm::Matrixmultiply => "matrixmultiply",
            Sgemm::Gemm => "gemm",
        }
    }
}

/// The sgemm of this process, chosen once: gemm-f32 on a CPU with AVX-512 in a build with the
/// feature `avx512` (the default), matrixmultiply otherwise. Over the products of TinyGPT's
/// configs on a Zen 5 EPYC, single-threaded, gemm-f32's AVX-512 kernel took 14–21% less time than
/// matrixmultiply's; on the AVX2-only Zen 3 matrixmultiply trained faster (docs/performance.md).
///
/// `ATTN_TRACE_SGEMM=matrixmultiply` or `=gemm` (the latter only in a build with `avx512`)
/// overrides the choice, so that one binary can compare the two. Unlike `ATTN_TRACE_SIMD`, the
/// cap of the loops in [`attn_trace_core::tensor::simd`], the choice does not depend on that cap: every
/// level of the loops then multiplies through the same sgemm, and so trains to the same bits.
pub fn sgemm() -> Sgemm {
    static CHOICE: std::sync::OnceLock<Sgemm> = std::sync::OnceLock::new();
    *CHOICE.get_or_init(|| {
        let built = cfg!(feature = "avx512");
        match std::env::var("ATTN_TRACE_SGEMM").as_deref() {
            Ok("matrixmultiply") => Sgemm::Matrixmultiply,
            Ok("gemm") if built => Sgemm::Gemm,
            _ if built && has_avx512() => Sgemm::Gemm,
            _ => Sgemm::Matrixmultiply,
        }
    })
}

/// Does the CPU have AVX-512 (the foundation, all gemm-f32's kernel asks for)?
fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Writes `C[m,n] = Σ_k A[m,k]·B[k,n]` with `A` read transposed when `a_t` (then stored
/// `[k, m]`) and `B` read transposed when `b_t` (stored `[n, k]`); `C` is `[m, n]`, through
/// [`sgemm`]'s library.
#[allow(clippy::too_many_arguments)]
pub fn matmul(m: usize, k: usize, n: usize, a: &[f32], a_t: bool, b: &[f32], b_t: bool, c: &mut [f32]) {
    let (lda, ldb) = (if a_t { m } else { k }, if b_t { k } else { n });
    matmul_ld(m, k, n, (a, lda, a_t), (b, ldb, b_t), (c, n), false);
}

/// [`matmul`] over blocks of larger row-major matrices: each operand comes with its row length
/// in the buffer (`ld`, at least the block's), so a block of columns is read or written in
/// place; `C` gets the product added to it when `accumulate`.
fn matmul_ld(
    m: usize,
    k: usize,
    n: usize,
    (a, lda, a_t): (&[f32], usize, bool),
    (b, ldb, b_t): (&[f32], usize, bool),
    (c, ldc): (&mut [f32], usize),
    accumulate: bool,
) {
    // rows × columns of each operand as stored, and the room that takes in a buffer with rows
    // of `ld` values
    let room = |rows: usize, cols: usize, ld: usize| if rows == 0 { 0 } else { (rows - 1) * ld + cols };
    let (a_rows, a_cols) = if a_t { (k, m) } else { (m, k) };
    let (b_rows, b_cols) = if b_t { (n, k) } else { (k, n) };
    assert!(
        a_cols <= lda
            && b_cols <= ldb
            && n <= ldc
            && a.len() >= room(a_rows, a_cols, lda)
            && b.len() >= room(b_rows, b_cols, ldb)
            && c.len() >= room(m, n, ldc),
        "matmul operands too small"
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        // an empty sum: C is 0, or unchanged when accumulating (no library is asked about it)
        if !accumulate {
            c.chunks_mut(ldc).take(m).for_each(|row| row[..n].fill(0.0));
        }
        return;
    }
    // (row stride, column stride) of each operand as the product reads it: a transposed operand
    // is the stored one with its strides swapped, and the sgemm packs it as it goes
    let (rsa, csa) = if a_t { (1, lda as isize) } else { (lda as isize, 1) };
    let (rsb, csb) = if b_t { (1, ldb as isize) } else { (ldb as isize, 1) };
    #[cfg(feature = "avx512")]
    if sgemm() == Sgemm::Gemm {
        // gemm-f32's kernels write C a column of registers at a time (column-major), so it is
        // given the transposed problem, `Cᵀ[n,m] = Bᵀ·Aᵀ`, whose output columns are C's rows:
        // each operand is the stored one with its strides swapped, nothing is copied. Its
        // arguments: (m, n, k, dst, dst column stride, dst row stride, read dst, lhs, its
        // column and row strides, rhs, its column and row strides, α, β, three conjugations,
        // threads), and it writes `dst = α·dst + β·lhs·rhs`, reading dst only when told to.
        // SAFETY: the same operands and strides as matrixmultiply's call below, transposed:
        // the assert above keeps every (row, col) they reach inside its slice, and `c` is
        // borrowed mutably, so it does not alias `a` or `b`. `dst` is read only when
        // `accumulate`, and then it holds initialised values.
        #[allow(unsafe_code)]
        unsafe {
            gemm_f32::gemm::f32::get_gemm_fn()(
                n,
                m,
                k,
                c.as_mut_ptr(),
                ldc as isize,
                1,
                accumulate,
                b.as_ptr(),
                rsb,
                csb,
                a.as_ptr(),
                rsa,
                csa,
                1.0,
                1.0,
                false,
                false,
                false,
                gemm_common::Parallelism::None,
            );
        }
        return;
    }
    // SAFETY: the assert above keeps every (row, col) the strides reach inside its slice, and
    // `c` is borrowed mutably, so it does not alias `a` or `b`. With β = 0 the sgemm writes C
    // without reading it.
    #[allow(unsafe_code)]
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            rsa,
            csa,
            b.as_ptr(),
            rsb,
            csb,
            if accumulate { 1.0 } else { 0.0 },
            c.as_mut_ptr(),
            ldc as isize,
            1,
        );
    }
}

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

/// `y = x·W + b`, then `g = gelu(y)` with `th = tanh u` kept as [`gelu_forward`] keeps it: the
/// bias is added in the same pass over `y` that takes GELU, instead of a pass of its own (the
/// same operations on every element, so the same bits as [`linear_forward`] then
/// [`gelu_forward`]).
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

/// The backward of [`linear_gelu_forward`]: `dy = gelu'(y) ⊙ dg` (as [`gelu_backward`]) with the
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
    /// [`gelu_backward`] into `dx`, and `db = Σ_r dx[r, :]` from the first row on.
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

// ---------------------------------------------------------------------------------------------
// residual: out = x + y, the stream a block's branch is added back into

with_simd! {
    /// `out = x + y`.
    pub fn residual_forward(x: &[f32], y: &[f32], out: &mut [f32]) => residual_forward_impl;
}

#[inline(always)]
fn residual_forward_impl(x: &[f32], y: &[f32], out: &mut [f32]) {
    for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
        *o = a + b;
    }
}

/// Both inputs receive the output's gradient unchanged: writes `dx = dy_branch = d_out`.
/// (`TinyGpt` applies this without copying: the stream's gradient buffer is read as the branch's
/// gradient, then the branch's layernorm accumulates into it.)
pub fn residual_backward(d_out: &[f32], dx: &mut [f32], d_branch: &mut [f32]) {
    dx.copy_from_slice(d_out);
    d_branch.copy_from_slice(d_out);
}

// ---------------------------------------------------------------------------------------------
// cross-entropy with softmax: loss = −ln softmax(logits)[target] for each row of V

with_simd! {
    /// `probs = softmax(logits)` per row of `V` (max subtracted first), `losses[r] = −ln probs[target]`.
    pub fn crossentropy_forward(V: usize, logits: &[f32], targets: &[u8], probs: &mut [f32], losses: &mut [f32]) => crossentropy_forward_impl;
}

#[inline(always)]
fn crossentropy_forward_impl(V: usize, logits: &[f32], targets: &[u8], probs: &mut [f32], losses: &mut [f32]) {
    // eight rows at a time: each row's sum runs left to right, one add after another, so the
    // eight rows' sums are interleaved to keep the adder busy
    let groups = logits.chunks(8 * V).zip(probs.chunks_mut(8 * V));
    for (g, (l8, p8)) in groups.enumerate() {
        let mut maxes = [0.0f32; 8];
        for ((lr, pr), maxval) in l8.chunks_exact(V).zip(p8.chunks_exact_mut(V)).zip(&mut maxes) {
            *maxval = max(lr);
            for (p, &l) in pr.iter_mut().zip(lr) {
                *p = simd::exp(l - *maxval);
            }
        }
        let sums = row_sums(p8, V);
        let rows = l8
            .chunks_exact(V)
            .zip(p8.chunks_exact_mut(V))
            .zip(sums.iter().zip(maxes));
        for (r, ((lr, pr), (&sum, maxval))) in rows.enumerate() {
            let inv = 1.0 / sum;
            for p in pr.iter_mut() {
                *p *= inv;
            }
            // −ln p computed from the logits keeps precision when p underflows
            let row = g * 8 + r;
            losses[row] = sum.ln() - (lr[targets[row] as usize] - maxval);
        }
    }
}

/// The largest value of `x` (NaN ignored), as `f32::max` over it left to right gives, taken
/// eight at a time: which of two equal values wins never matters to the callers (they subtract
/// it, and `x − (+0)` and `x − (−0)` differ only for `x = −0`, whose exponential is 1 either way).
#[inline(always)]
fn max(x: &[f32]) -> f32 {
    let (chunks, tail) = x.as_chunks::<8>();
    let mut lanes = [f32::NEG_INFINITY; 8];
    for c in chunks {
        for l in 0..8 {
            lanes[l] = lanes[l].max(c[l]);
        }
    }
    let tail = tail.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    lanes.iter().fold(tail, |m, &v| m.max(v))
}

/// `Σ_j x[r·n + j]` for each of the (up to 8) rows `r` of `n` values in `x`, each from 0 adding
/// `j = 0, 1, …` in order (the order of `iter().sum()`); the eight rows' additions are
/// independent, so the CPU overlaps them. Entries past the last row are 0.
#[inline(always)]
fn row_sums(x: &[f32], n: usize) -> [f32; 8] {
    let mut sums = [0.0f32; 8];
    if x.len() == 8 * n {
        for j in 0..n {
            for (r, sum) in sums.iter_mut().enumerate() {
                *sum += x[r * n + j];
            }
        }
    } else {
        for (sum, row) in sums.iter_mut().zip(x.chunks_exact(n)) {
            *sum = row.iter().sum();
        }
    }
    sums
}

with_simd! {
    /// `d_logits = scale · (probs − onehot(target))`; `scale` is `1/N` for a mean over `N` rows.
    pub fn crossentropy_backward(V: usize, probs: &[f32], targets: &[u8], scale: f32, d_logits: &mut [f32]) => crossentropy_backward_impl;
}

#[inline(always)]
fn crossentropy_backward_impl(V: usize, probs: &[f32], targets: &[u8], scale: f32, d_logits: &mut [f32]) {
    for (r, (pr, dr)) in probs.chunks_exact(V).zip(d_logits.chunks_exact_mut(V)).enumerate() {
        for (d, &p) in dr.iter_mut().zip(pr) {
            *d = scale * p;
        }
        dr[targets[r] as usize] -= scale;
    }
}
