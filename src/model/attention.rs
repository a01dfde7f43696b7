//! Causal attention for training, through sgemm: the same math, buffers and layouts as
//! [`crate::kernels::attention_1h`] (one head) and [`crate::kernels::attention_mha`] (`H` heads),
//! but each head's products run as blocked matrix multiplies instead of one scalar dot product
//! per output. The kernels stay the reference the tracer shows; `tests/model_attention.rs` holds
//! the two together (≤ 1e-5 relative, every buffer).
//!
//! Layouts (as the kernels'): `q, att [B,S,C]` and `k, v [B,T,C]` are read as `[B,S,H,D]` /
//! `[B,T,H,D]` head views without copying, so head `hh` of row `i` starts at
//! `((bb*S + i)*H + hh)*D` and the next row of the same head is `C = H·D` further on;
//! `scores, probs [B,H,S,T]` at `((bb*H + hh)*S + i)*T + j`. With `H = 1` these are exactly the
//! baseline kernel's `[B,S,C]` and `[B,S,T]`, and `D = C`, so one function serves both.
//! The mask is causal: key `j` is hidden from query `i` when `j > i`.
#![allow(non_snake_case)]

use crate::tensor::Shape;
use crate::trace::MASKED;

/// A `rows × cols` matrix inside a flat buffer: element `(r, c)` at `off + r*rs + c*cs`.
#[derive(Clone, Copy, Debug)]
struct View {
    off: usize,
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
}

impl View {
    /// Row-major with row stride `rs`.
    const fn rows(off: usize, rows: usize, cols: usize, rs: usize) -> View {
        View {
            off,
            rows,
            cols,
            rs,
            cs: 1,
        }
    }

    /// The transpose: the same memory read with the strides swapped.
    const fn t(self) -> View {
        View {
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
            ..self
        }
    }

    /// Rows `r0..r1` and columns `c0..c1` of this view.
    const fn block(self, (r0, r1): (usize, usize), (c0, c1): (usize, usize)) -> View {
        View {
            off: self.off + r0 * self.rs + c0 * self.cs,
            rows: r1 - r0,
            cols: c1 - c0,
            ..self
        }
    }

    /// Rows `r0..r1`, every column.
    const fn row_range(self, r0: usize, r1: usize) -> View {
        self.block((r0, r1), (0, self.cols))
    }

    /// Does every element lie inside a buffer of `len` values?
    const fn fits(&self, len: usize) -> bool {
        self.rows == 0 || self.cols == 0 || self.off + (self.rows - 1) * self.rs + (self.cols - 1) * self.cs < len
    }
}

/// `out = alpha · a·b`, overwriting `out`.
fn gemm(alpha: f32, (a, av): (&[f32], View), (b, bv): (&[f32], View), (out, ov): (&mut [f32], View)) {
    assert!(
        av.cols == bv.rows && ov.rows == av.rows && ov.cols == bv.cols,
        "gemm: shapes do not chain"
    );
    assert!(
        av.fits(a.len()) && bv.fits(b.len()) && ov.fits(out.len()),
        "gemm: a view reaches outside its buffer"
    );
    // SAFETY: the asserts keep every element the strides reach inside its slice, and `out` is
    // borrowed mutably, so it aliases neither `a` nor `b`.
    unsafe {
        matrixmultiply::sgemm(
            av.rows,
            av.cols,
            bv.cols,
            alpha,
            a.as_ptr().add(av.off),
            av.rs as isize,
            av.cs as isize,
            b.as_ptr().add(bv.off),
            bv.rs as isize,
            bv.cs as isize,
            0.0,
            out.as_mut_ptr().add(ov.off),
            ov.rs as isize,
            ov.cs as isize,
        );
    }
}

/// The views of one (batch `bb`, head `hh`): the head's rows of a `[B,S,C]` query-side buffer,
/// of a `[B,T,C]` key-side buffer, and its `S × T` block of a `[B,H,S,T]` score-side buffer.
struct Head {
    q: View,
    k: View,
    st: View,
}

impl Head {
    fn new(sh: Shape, bb: usize, hh: usize) -> Head {
        let Shape {
            s: S, t: T, h: H, c: C, ..
        } = sh;
        let D = sh.d();
        Head {
            q: View::rows((bb * S * H + hh) * D, S, D, C),
            k: View::rows((bb * T * H + hh) * D, T, D, C),
            st: View::rows((bb * H + hh) * S * T, S, T, T),
        }
    }
}

/// Forward, per head: `S_h = Q_h·K_hᵀ/√D` with hidden pairs overwritten by −1e9,
/// `P_h = softmax(S_h)` row by row, `att_h = P_h·V_h` (written into head `hh`'s slot of `att`).
#[allow(clippy::too_many_arguments)]
pub fn forward(sh: Shape, q: &[f32], k: &[f32], v: &[f32], scores: &mut [f32], probs: &mut [f32], att: &mut [f32]) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let scale = 1.0 / (sh.d() as f32).sqrt();
    for bb in 0..B {
        for hh in 0..H {
            let hd = Head::new(sh, bb, hh);
            // a block of queries i0..i1 sees keys 0..i1 only: the scores right of that are all
            // masked and their probabilities 0, so neither product needs them
            for (i0, i1) in blocks(S) {
                let keys = i1.min(T);
                let st = hd.st.block((i0, i1), (0, keys));
                gemm(
                    scale,
                    (q, hd.q.row_range(i0, i1)),
                    (k, hd.k.row_range(0, keys).t()),
                    (scores, st),
                );
                for i in i0..i1 {
                    let row = hd.st.off + i * T;
                    // the hidden pairs inside the block were computed; the mask overwrites them,
                    // and fills the rest of the row, as the kernel does
                    let visible = (i + 1).min(T);
                    scores[row + visible..row + T].fill(MASKED);
                    softmax_row(&scores[row..row + visible], &mut probs[row..row + T]);
                }
                gemm(
                    1.0,
                    (probs, st),
                    (v, hd.k.row_range(0, keys)),
                    (att, hd.q.row_range(i0, i1)),
                );
            }
        }
    }
}

/// Query rows cut into blocks of [`BLOCK`], so causal products can skip what the mask hides.
fn blocks(S: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..S).step_by(BLOCK).map(move |i0| (i0, (i0 + BLOCK).min(S)))
}

/// Rows per block. At T = 64 two blocks skip a quarter of each causal product; blocks of 16
/// would skip more but cost more in sgemm's per-call packing than they save (measured slower).
const BLOCK: usize = 32;

/// One row of the softmax, in the order of `kernels::softmax::row_forward` (max, exp and sum,
/// normalise). Only the visible prefix is read: a hidden −1e9 never wins the max and its
/// exponential is exactly 0, so the hidden tail of `p` is written as 0 directly.
fn softmax_row(s: &[f32], p: &mut [f32]) {
    let maxval = s.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    let (p_vis, p_hidden) = p.split_at_mut(s.len());
    let mut sum = 0.0;
    for (pj, &sj) in p_vis.iter_mut().zip(s) {
        *pj = (sj - maxval).exp();
        sum += *pj;
    }
    let inv = 1.0 / sum;
    p_vis.iter_mut().for_each(|pj| *pj *= inv);
    p_hidden.fill(0.0);
}

/// Backward from `d_att`, per head: `dP_h = dAtt_h·V_hᵀ` (every pair, as the kernel writes it),
/// `dV_h = P_hᵀ·dAtt_h`, `dS = P ⊙ (dP − Σ_j dP·P)` row by row, `dQ_h = dS·K_h/√D`,
/// `dK_h = dSᵀ·Q_h/√D`. Hidden entries of `dS` are exactly 0 (their `P` is 0), so the full
/// products add nothing through them: no gradient flows through a masked score.
#[allow(clippy::too_many_arguments)]
pub fn backward(
    sh: Shape,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    probs: &[f32],
    d_att: &[f32],
    d_probs: &mut [f32],
    d_scores: &mut [f32],
    d_q: &mut [f32],
    d_k: &mut [f32],
    d_v: &mut [f32],
) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let scale = 1.0 / (sh.d() as f32).sqrt();
    for bb in 0..B {
        for hh in 0..H {
            let hd = Head::new(sh, bb, hh);
            // backward of att = P·V: dP for every pair (the kernel writes the hidden ones too);
            // dV of keys j0..j1 gathers queries j0..S, the only ones that see them
            gemm(1.0, (d_att, hd.q), (v, hd.k.t()), (d_probs, hd.st));
            for (j0, j1) in blocks(T) {
                let queries = (j0.min(S), S);
                let p = hd.st.block(queries, (j0, j1)).t();
                gemm(
                    1.0,
                    (probs, p),
                    (d_att, hd.q.row_range(queries.0, S)),
                    (d_v, hd.k.row_range(j0, j1)),
                );
            }
            // backward of the softmax
            for i in 0..S {
                let row = hd.st.off + i * T;
                let visible = (i + 1).min(T);
                softmax_row_back(
                    &probs[row..row + visible],
                    &d_probs[row..row + visible],
                    &mut d_scores[row..row + T],
                );
            }
            // backward of S = Q·Kᵀ/√D, over the visible blocks of dS as in forward
            for (i0, i1) in blocks(S) {
                let keys = i1.min(T);
                let ds = hd.st.block((i0, i1), (0, keys));
                gemm(
                    scale,
                    (d_scores, ds),
                    (k, hd.k.row_range(0, keys)),
                    (d_q, hd.q.row_range(i0, i1)),
                );
            }
            for (j0, j1) in blocks(T) {
                let queries = (j0.min(S), S);
                let ds = hd.st.block(queries, (j0, j1)).t();
                gemm(
                    scale,
                    (d_scores, ds),
                    (q, hd.q.row_range(queries.0, S)),
                    (d_k, hd.k.row_range(j0, j1)),
                );
            }
        }
    }
}

/// One row of the softmax's backward, in the order of `kernels::softmax::row_backward`, over the
/// visible prefix (a hidden `P` is 0, adding nothing to the sum); the hidden tail of `ds` is 0.
fn softmax_row_back(p: &[f32], dp: &[f32], ds: &mut [f32]) {
    let dot: f32 = p.iter().zip(dp).fold(0.0, |acc, (&pj, &dpj)| acc + dpj * pj);
    let (ds_vis, ds_hidden) = ds.split_at_mut(p.len());
    for ((dsj, &pj), &dpj) in ds_vis.iter_mut().zip(p).zip(dp) {
        *dsj = pj * (dpj - dot);
    }
    ds_hidden.fill(0.0);
}
