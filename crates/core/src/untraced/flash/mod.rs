//! FlashAttention as training runs it, untraced (chosen by `dispatch.rs`): the sums of
//! `kernels/attention_flash.rs`, with the same tiles, in the same order, over the same values,
//! so every output has the reference loops' bits. Only the loop order changes, as in
//! [`crate::untraced::fast`]: each product of two tiles is computed as a tile of outputs whose
//! sums advance together term by term (`rows4`, `cols4`), so the CPU adds eight or
//! sixteen of them per instruction while each still sees `0 + a₀b₀ + a₁b₁ + …` in the kernel's
//! order. Forward holds its score tile transposed (keys down, queries across), so that the
//! online softmax of eight queries runs in one vector: each query's maximum, exponentials and
//! sum down its column, over its keys in the kernel's order. Backward's exponentials are taken
//! a row at a time (one vector operation per eight keys).
//!
//! The reference loads a key tile into `k_tile`, `v_tile` once per query tile; here each head's
//! value tiles are packed once for forward (`v`, read in place of `v_tile`; its keys are read
//! where they lie) and each query tile as `qᵀ`; for backward each head's key tiles are packed
//! once, in the orders the products read them (`kᵀ`, `k` and `vᵀ`), and each head's query tiles
//! once (`q` and `dO` for `dK` and `dV`). Every buffer is `O(T·D)`: nothing `T×T` exists, per head or
//! otherwise. `tests/it/flash_untraced.rs` holds both passes to the reference bit for bit.
//!
//! This file holds the entry points and the two passes, forward then backward; the tile work
//! they share (score tiles, products with packed panels, exponentials and masks) is in
//! `tiles.rs`.
#![allow(non_snake_case)]

use super::fast::{
    accumulate, all_finite, col_blocks, max_abs, nonzero_len, pack_panels_into, pack_panels_t_into, store,
};
use crate::kernels::Mask;
use crate::kernels::attention_flash::{FittedTiles, Tiles};
use crate::tensor::Shape;
use crate::tensor::simd::{exp, with_simd};
use crate::trace::MASKED;

with_simd! {
    /// Flash forward untraced: `att` and the row log-sum-exp `lse [B,H,S]` from `q`, `k`, `v`.
    pub fn forward(sh: Shape, tiles: FittedTiles, mask: &Mask, qkv: (&[f32], &[f32], &[f32]), att: &mut [f32], lse: &mut [f32]) => forward_impl::<LANES>;
    /// Flash backward untraced: `d_q`, `d_k`, `d_v` from `d_att`, the probabilities recomputed
    /// from `lse`; `delta [B,H,S]` receives `D_i = Σ_d dO·O` as the reference's pass 1 writes it.
    pub fn backward(sh: Shape, tiles: FittedTiles, mask: &Mask, qkv: (&[f32], &[f32], &[f32]), saved: (&[f32], &[f32]), d_att: &[f32], delta: &mut [f32], grads: (&mut [f32], &mut [f32], &mut [f32])) => backward_impl::<LANES>;
}

/// Offsets of the MHA layout the flash kernel reads: `q, att, d_att [B,S,H,D]`, `k, v [B,T,H,D]`.
#[derive(Clone, Copy)]
struct HeadOffsets {
    S: usize,
    T: usize,
    H: usize,
    D: usize,
}

impl HeadOffsets {
    /// `q_base` (and `a_base`): head `hh` of query `i` of batch `bb`.
    #[inline(always)]
    const fn q_base(self, bb: usize, i: usize, hh: usize) -> usize {
        ((bb * self.S + i) * self.H + hh) * self.D
    }

    /// `k_base`: head `hh` of key (or value) `j` of batch `bb`.
    #[inline(always)]
    const fn k_base(self, bb: usize, j: usize, hh: usize) -> usize {
        ((bb * self.T + j) * self.H + hh) * self.D
    }

    /// `off` of `lse` and `delta`: row `i` of head `hh` of batch `bb`.
    #[inline(always)]
    const fn off(self, bb: usize, hh: usize, i: usize) -> usize {
        (bb * self.H + hh) * self.S + i
    }
}

/// Whether the products' tiles start with blocks of 32 columns (`col_blocks!(wide …)`) in the
/// copy whose vector registers hold `lanes` floats: with AVX-512 (16), four rows of two registers
/// each keep eight independent sums in flight where one register a row kept four, which left
/// the adds waiting on each other; with AVX2 (8) four rows of 32 would need more than its
/// sixteen registers. Measured on a Zen 5 EPYC: flash's forward about 20% faster, forward and
/// backward about 10% (docs/performance.md); as AVX2 the blocks of 32 were a third slower.
#[inline(always)]
const fn wide_tiles(lanes: usize) -> bool {
    lanes >= 16
}

/// Runs `$body` for each group of four of `0..$n`: `$g0` is its first index and `$at(r)` the
/// index of its row `r`, the group's last real index standing in for the rows past `$n` (their
/// sums are computed and dropped: `$live` says how many are real).
macro_rules! groups {
    ($n:expr, $g0:ident, $live:ident, $at:ident, $body:block) => {{
        let n = $n;
        for $g0 in (0..n).step_by(4) {
            let $live = (n - $g0).min(4);
            #[allow(unused_variables)]
            let $at = |r: usize| $g0 + r.min($live - 1);
            $body
        }
    }};
}

mod tiles;

use tiles::{cols4, exp_shifted, first_nonzero, hidden_from, rows4, score_tile, score_tile_t};

/// Forward, head by head: per query tile, per visible key tile, the score tile, then the online
/// softmax of every query of the tile at once (`m_new = max(m_old, rowmax)`, `P = e^(S − m_new)`,
/// `l_new = α·l_old + rowsum(P)` with `α = e^(m_old − m_new)`), then `acc_new = α·acc_old +
/// P·V`; at the end `att = acc / l` and `lse = m + ln l`. The tile is held transposed (keys
/// down, queries across): a query's maximum, exponentials and sum then run down a column,
/// eight queries side by side in a vector, each still in the kernel's order over its keys.
#[inline(always)]
fn forward_impl<const LANES: usize>(
    sh: Shape,
    tiles: FittedTiles,
    mask: &Mask,
    (q, k, v): (&[f32], &[f32], &[f32]),
    att: &mut [f32],
    lse: &mut [f32],
) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let D = sh.d();
    let lay = HeadOffsets { S, T, H, D };
    let Tiles { br, bc } = tiles.sizes();
    let scale = 1.0 / (D as f32).sqrt();
    let wide = wide_tiles(LANES);
    // per head: the value tiles as panels (P·V), tile `j0` at `j0·D`; per query tile: qᵀ panels
    let (mut vp, mut qt) = (vec![0.0f32; T * D], vec![0.0f32; br * D]);
    // per tile pair: Sᵀ, then Pᵀ in its place, a key's row of queries `brp` apart (a multiple
    // of four, so that `cols4` may read four queries from any group's first)
    let brp = br.next_multiple_of(4);
    let (mut st, mut acc) = (vec![0.0f32; bc * brp], vec![0.0f32; br * D]);
    // per query: the running max and sum, the tile's new max, α and its sum of P
    let (mut m, mut l, mut m_new) = (vec![0.0f32; br], vec![0.0f32; br], vec![0.0f32; br]);
    let (mut alpha, mut rowsum) = (vec![0.0f32; br], vec![0.0f32; br]);
    // whether each value tile is all finite (only then is a zero probability's product ±0)
    let mut v_finite = vec![false; T.div_ceil(bc)];
    for bb in 0..B {
        for hh in 0..H {
            let key_row = |j: usize| &k[lay.k_base(bb, j, hh)..lay.k_base(bb, j, hh) + D];
            let value_row = |j: usize| &v[lay.k_base(bb, j, hh)..lay.k_base(bb, j, hh) + D];
            let q_row = |i: usize| &q[lay.q_base(bb, i, hh)..lay.q_base(bb, i, hh) + D];
            for j0 in (0..T).step_by(bc) {
                let w = (j0 + bc).min(T) - j0;
                pack_panels_into(wide, w, D, |jj| value_row(j0 + jj), &mut vp[j0 * D..]);
                v_finite[j0 / bc] = all_finite(&vp[j0 * D..(j0 + w) * D]);
            }
            for i0 in (0..S).step_by(br) {
                let rows = (i0 + br).min(S) - i0;
                pack_panels_t_into(wide, D, rows, |ii| q_row(i0 + ii), &mut qt);
                m[..rows].fill(f32::NEG_INFINITY);
                l[..rows].fill(0.0);
                acc[..rows * D].fill(0.0);
                // no tile added yet: acc is +0, whatever α
                let mut fresh = true;
                for j0 in (0..T).step_by(bc) {
                    let w = (j0 + bc).min(T) - j0;
                    // a tile the mask hides entirely adds nothing (causal: above the diagonal)
                    if mask.hides_tile(i0..i0 + rows, j0..j0 + w) {
                        continue;
                    }
                    let vp = &vp[j0 * D..(j0 + w) * D];
                    score_tile_t(wide, mask, (i0, rows), (j0, w), brp, D, scale, key_row, &qt, &mut st);
                    // the online softmax, every query at once, down its column of keys in order:
                    // m_new, then P in place of S with its sum, then α and l
                    let (m, l, m_new, alpha, rowsum) = (
                        &mut m[..rows],
                        &mut l[..rows],
                        &mut m_new[..rows],
                        &mut alpha[..rows],
                        &mut rowsum[..rows],
                    );
                    m_new.copy_from_slice(m);
                    for jj in 0..w {
                        for (mx, &s) in m_new.iter_mut().zip(&st[jj * brp..jj * brp + rows]) {
                            *mx = mx.max(s);
                        }
                    }
                    rowsum.fill(0.0);
                    for jj in 0..w {
                        let col = &mut st[jj * brp..jj * brp + rows];
                        for ((p, &mx), sum) in col.iter_mut().zip(&*m_new).zip(rowsum.iter_mut()) {
                            *p = exp(*p - mx);
                            *sum += *p;
                        }
                    }
                    for ii in 0..rows {
                        alpha[ii] = exp(m[ii] - m_new[ii]);
                        l[ii] = alpha[ii] * l[ii] + rowsum[ii];
                        m[ii] = m_new[ii];
                    }
                    // acc = α·acc + P·V, each channel's sum over the tile's keys in order. Under
                    // a causal mask the keys after a group's last query have P = e^(−1e9 − m) =
                    // 0 exactly (when −1e9 − m < −87); with finite values each adds ±0, which
                    // leaves a sum that is not −0 as it was, so the sum stops before them (α > 0
                    // keeps α·acc from being −0, and a fresh acc is +0)
                    let (st, alpha, m) = (&st, &*alpha, &*m);
                    groups!(rows, r0, live, at, {
                        let skip = v_finite[j0 / bc]
                            && mask.is_causal()
                            && (0..live).all(|r| MASKED - m[r0 + r] < -87.0 && (fresh || alpha[r0 + r] > 0.0));
                        let n = if skip {
                            (i0 + r0 + live).saturating_sub(j0).min(w)
                        } else {
                            w
                        };
                        col_blocks!(wide wide; D, d0, W, {
                            let mut init = [[0.0f32; W]; 4];
                            for (r, init) in init.iter_mut().enumerate() {
                                let a = &acc[at(r) * D + d0..at(r) * D + d0 + W];
                                for (x, &a) in init.iter_mut().zip(a) {
                                    *x = alpha[at(r)] * a;
                                }
                            }
                            let out = cols4::<W>(init, &st[..n * brp], brp, r0, &vp[d0 * w..d0 * w + n * W]);
                            for (r, out) in out.iter().enumerate().take(live) {
                                store(&mut acc, (r0 + r) * D + d0, out, 1.0);
                            }
                        });
                    });
                    fresh = false;
                }
                // the output tile, written once: att = acc / l, lse = m + ln l
                for ii in 0..rows {
                    let a_base = lay.q_base(bb, i0 + ii, hh);
                    let l_i = l[ii];
                    for (o, &a) in att[a_base..a_base + D].iter_mut().zip(&acc[ii * D..ii * D + D]) {
                        *o = a / l_i;
                    }
                    lse[lay.off(bb, hh, i0 + ii)] = m[ii] + l_i.ln();
                }
            }
        }
    }
}

/// Backward, head by head. Pass 1: `D_i = Σ_d dO·O` per row, and `dQ = 0`. Pass 2, key tiles
/// outside and query tiles inside: `P = e^(S − lse)`, `dV_tile += Pᵀ·dO`, `dS = P ⊙ (dO·Vᵀ −
/// D_i)`, `dQ += dS·K/√D` in place, `dK_tile += dSᵀ·Q/√D`; a key tile's `dK`, `dV` written once.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn backward_impl<const LANES: usize>(
    sh: Shape,
    tiles: FittedTiles,
    mask: &Mask,
    (q, k, v): (&[f32], &[f32], &[f32]),
    (att, lse): (&[f32], &[f32]),
    d_att: &[f32],
    delta: &mut [f32],
    (d_q, d_k, d_v): (&mut [f32], &mut [f32], &mut [f32]),
) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let D = sh.d();
    let lay = HeadOffsets { S, T, H, D };
    let Tiles { br, bc } = tiles.sizes();
    let scale = 1.0 / (D as f32).sqrt();
    let wide = wide_tiles(LANES);

    // pass 1: D_i, one number per row, each a sum over d in order; dQ starts at 0
    for bb in 0..B {
        for hh in 0..H {
            for i in 0..S {
                let a_base = lay.q_base(bb, i, hh);
                let (g, o) = (&d_att[a_base..a_base + D], &att[a_base..a_base + D]);
                delta[lay.off(bb, hh, i)] = g.iter().zip(o).fold(0.0f32, |s, (&g, &o)| s + g * o);
                d_q[a_base..a_base + D].fill(0.0);
            }
        }
    }

    // per head: key tiles as kᵀ panels (scores), k panels (dQ), vᵀ panels (dP); query tiles as
    // q panels (dK) and dO panels (dV), tile `i0` at `i0·D`
    let (mut kt, mut kp, mut vt) = (vec![0.0f32; T * D], vec![0.0f32; T * D], vec![0.0f32; T * D]);
    let (mut qp, mut dop) = (vec![0.0f32; S * D], vec![0.0f32; S * D]);
    // per tile pair: probabilities and dS; per key tile: dK and dV
    // (rows `bcp` apart, a multiple of four, so that `cols4` may read four columns from any
    // group's first)
    let bcp = bc.next_multiple_of(4);
    let (mut p_t, mut ds_t) = (vec![0.0f32; br * bcp], vec![0.0f32; br * bcp]);
    let (mut dk_t, mut dv_t) = (vec![0.0f32; bc * D], vec![0.0f32; bc * D]);
    // whether each tile's k, q and dO are all finite: only then is the product of a zero P or
    // dS with them ±0, a term that may be left out
    let (mut k_finite, mut q_finite) = (vec![false; T.div_ceil(bc)], vec![false; S.div_ceil(br)]);
    let mut do_finite = vec![false; S.div_ceil(br)];
    // the largest |dO| and |D_i| of each query tile and |v| of each key tile (NaN when one is not
    // finite), to bound dP − D_i
    let (mut do_max, mut delta_max) = (vec![0.0f32; S.div_ceil(br)], vec![0.0f32; S.div_ceil(br)]);
    let mut v_max = vec![0.0f32; T.div_ceil(bc)];
    for bb in 0..B {
        for hh in 0..H {
            let key_row = |j: usize| &k[lay.k_base(bb, j, hh)..lay.k_base(bb, j, hh) + D];
            let value_row = |j: usize| &v[lay.k_base(bb, j, hh)..lay.k_base(bb, j, hh) + D];
            let q_row = |i: usize| &q[lay.q_base(bb, i, hh)..lay.q_base(bb, i, hh) + D];
            let do_row = |i: usize| &d_att[lay.q_base(bb, i, hh)..lay.q_base(bb, i, hh) + D];
            for j0 in (0..T).step_by(bc) {
                let w = (j0 + bc).min(T) - j0;
                pack_panels_t_into(wide, D, w, |jj| key_row(j0 + jj), &mut kt[j0 * D..]);
                pack_panels_into(wide, w, D, |jj| key_row(j0 + jj), &mut kp[j0 * D..]);
                pack_panels_t_into(wide, D, w, |jj| value_row(j0 + jj), &mut vt[j0 * D..]);
                k_finite[j0 / bc] = all_finite(&kp[j0 * D..(j0 + w) * D]);
                v_max[j0 / bc] = max_abs(&vt[j0 * D..(j0 + w) * D]);
            }
            for i0 in (0..S).step_by(br) {
                let rows = (i0 + br).min(S) - i0;
                pack_panels_into(wide, rows, D, |ii| q_row(i0 + ii), &mut qp[i0 * D..]);
                pack_panels_into(wide, rows, D, |ii| do_row(i0 + ii), &mut dop[i0 * D..]);
                q_finite[i0 / br] = all_finite(&qp[i0 * D..(i0 + rows) * D]);
                // (the largest magnitude is NaN when a value is not finite)
                do_max[i0 / br] = max_abs(&dop[i0 * D..(i0 + rows) * D]);
                do_finite[i0 / br] = !do_max[i0 / br].is_nan();
                let off = lay.off(bb, hh, i0);
                delta_max[i0 / br] = max_abs(&delta[off..off + rows]);
            }
            for j0 in (0..T).step_by(bc) {
                let w = (j0 + bc).min(T) - j0;
                let (kt, kp, vt) = (
                    &kt[j0 * D..(j0 + w) * D],
                    &kp[j0 * D..(j0 + w) * D],
                    &vt[j0 * D..(j0 + w) * D],
                );
                dk_t[..w * D].fill(0.0);
                dv_t[..w * D].fill(0.0);
                for i0 in (0..S).step_by(br) {
                    let rows = (i0 + br).min(S) - i0;
                    if mask.hides_tile(i0..i0 + rows, j0..j0 + w) {
                        continue;
                    }
                    let (qp, dop) = (&qp[i0 * D..(i0 + rows) * D], &dop[i0 * D..(i0 + rows) * D]);
                    // P = e^(S − lse): a hidden pair gives e^(−1e9 − lse) = 0
                    score_tile(wide, mask, (i0, rows), (j0, w), bcp, D, scale, q_row, kt, &mut p_t);
                    for ii in 0..rows {
                        let lse_i = lse[lay.off(bb, hh, i0 + ii)];
                        exp_shifted(
                            &mut p_t[ii * bcp..ii * bcp + w],
                            lse_i,
                            hidden_from(mask, i0 + ii, j0, w),
                        );
                    }
                    let p_t = &p_t[..rows * bcp];
                    // dV_tile += Pᵀ·dO: key jj's channels, each a sum over the tile's queries in
                    // order, from the first query whose P is not zero when dO is finite
                    groups!(w, r0, live, at, {
                        let first = if do_finite[i0 / br] {
                            first_nonzero(p_t, bcp, (r0, live))
                        } else {
                            0
                        };
                        col_blocks!(wide wide; D, d0, W, {
                            let mut init = [[0.0f32; W]; 4];
                            for (r, init) in init.iter_mut().enumerate() {
                                init.copy_from_slice(&dv_t[at(r) * D + d0..at(r) * D + d0 + W]);
                            }
                            let dop = &dop[d0 * rows + first * W..(d0 + W) * rows];
                            let out = cols4::<W>(init, &p_t[first * bcp..], bcp, r0, dop);
                            for (r, out) in out.iter().enumerate().take(live) {
                                store(&mut dv_t, (r0 + r) * D + d0, out, 1.0);
                            }
                        });
                    });
                    // dS = P ⊙ (dP − D_i), dP = dO·Vᵀ each a sum over d in order. Where every
                    // row of a group has P = 0 (keys a causal mask hides from all of them) and no
                    // dP − D_i can overflow (D·max|dO|·max|v| + max|D_i| far below f32::MAX: each
                    // is then finite), dS is ±0 whatever dP is: 0 is written, and only the sums
                    // below read it, to which ±0 adds nothing (they leave it out, or add it to a
                    // value that is not −0)
                    let bounded = (D as f32) * do_max[i0 / br] * v_max[j0 / bc] + delta_max[i0 / br] < f32::MAX / 4.0;
                    groups!(rows, r0, live, at, {
                        let mut do_rows = [&d_att[..0]; 4];
                        for (r, row) in do_rows.iter_mut().enumerate() {
                            // (in place of do_row, which the compiler left out of line here)
                            let q_base = lay.q_base(bb, i0 + at(r), hh);
                            *row = &d_att[q_base..q_base + D];
                        }
                        let zero_from = if bounded && (0..4).all(|r| MASKED - lse[lay.off(bb, hh, i0 + at(r))] < -87.0)
                        {
                            hidden_from(mask, i0 + at(3), j0, w)
                        } else {
                            w
                        };
                        col_blocks!(wide wide; w, c0, W, {
                            let dp = if c0 >= zero_from {
                                [[f32::NAN; W]; 4]
                            } else {
                                rows4::<W>([[0.0; W]; 4], do_rows, &vt[c0 * D..(c0 + W) * D])
                            };
                            for (r, dp) in dp.iter().enumerate().take(live) {
                                let ii = r0 + r;
                                let d_i = delta[lay.off(bb, hh, i0 + ii)];
                                let at = ii * bcp + c0;
                                let (ds, p) = (&mut ds_t[at..at + W], &p_t[at..at + W]);
                                if c0 >= zero_from {
                                    ds.fill(0.0);
                                } else {
                                    for ((ds, &p), &dp) in ds.iter_mut().zip(p).zip(dp) {
                                        *ds = p * (dp - d_i);
                                    }
                                }
                            }
                        });
                    });
                    let ds_t = &ds_t[..rows * bcp];
                    // dQ += dS·K/√D, added into d_q as the kernel's rec.add does; each row's sum
                    // up to its group's last nonzero dS when k is finite
                    groups!(rows, r0, live, at, {
                        let n = if k_finite[j0 / bc] {
                            (0..4)
                                .map(|r| nonzero_len(&ds_t[at(r) * bcp..at(r) * bcp + w]))
                                .fold(0, usize::max)
                        } else {
                            w
                        };
                        let mut ds_rows = [&ds_t[..0]; 4];
                        for (r, row) in ds_rows.iter_mut().enumerate() {
                            *row = &ds_t[at(r) * bcp..at(r) * bcp + n];
                        }
                        col_blocks!(wide wide; D, d0, W, {
                            let s = rows4::<W>([[0.0; W]; 4], ds_rows, &kp[d0 * w..(d0 + W) * w]);
                            for (r, s) in s.iter().enumerate().take(live) {
                                accumulate(d_q, lay.q_base(bb, i0 + r0 + r, hh) + d0, s, scale);
                            }
                        });
                    });
                    // dK_tile = dK_tile + (dSᵀ·Q)/√D, the sum over the tile's queries from 0 (from
                    // the first whose dS is not zero when q is finite)
                    groups!(w, r0, live, at, {
                        let first = if q_finite[i0 / br] {
                            first_nonzero(ds_t, bcp, (r0, live))
                        } else {
                            0
                        };
                        col_blocks!(wide wide; D, d0, W, {
                            let qp = &qp[d0 * rows + first * W..(d0 + W) * rows];
                            let s = cols4::<W>([[0.0; W]; 4], &ds_t[first * bcp..], bcp, r0, qp);
                            for (r, s) in s.iter().enumerate().take(live) {
                                let at = (r0 + r) * D + d0;
                                for (dk, &s) in dk_t[at..at + W].iter_mut().zip(s) {
                                    *dk += s * scale;
                                }
                            }
                        });
                    });
                }
                // the key tile's gradients, written once
                for jj in 0..w {
                    let k_base = lay.k_base(bb, j0 + jj, hh);
                    d_k[k_base..k_base + D].copy_from_slice(&dk_t[jj * D..jj * D + D]);
                    d_v[k_base..k_base + D].copy_from_slice(&dv_t[jj * D..jj * D + D]);
                }
            }
        }
    }
}
