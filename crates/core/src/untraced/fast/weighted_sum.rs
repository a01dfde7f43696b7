//! The weighted-sum pass and its backward: `att = P·V`, then `dP = dAtt·Vᵀ` and `dV = Pᵀ·dAtt`,
//! head by head over packed values and output gradients.

use super::tile::{all_finite, each, nonzero_len, pack_panels, pack_panels_t, store, store_kv, tile_cols, tile_rows};
use super::{Heads, Panels, extent, head_blocks, head_blocks_mut};
use crate::kernels::Mask;

/// Weighted-sum pass: `att[b,i,h,d] = Σ_j P[b,h,i,j]·v[b,j,h,d]` over every key.
#[inline(always)]
pub(super) fn weighted_sum_impl(hd: Heads, p: &[f32], v: &[f32], att: &mut [f32]) {
    let mut pan = Panels::default();
    for (bb, hh, p) in head_blocks(hd, p) {
        weighted_sum_head(hd, (bb, hh), p, v, att, &mut pan);
    }
}

/// The weighted sum of head `hh` of batch `bb`, from its `[S,T]` block of probabilities `p`.
#[inline(always)]
pub(super) fn weighted_sum_head(
    hd: Heads,
    (bb, hh): (usize, usize),
    p: &[f32],
    v: &[f32],
    att: &mut [f32],
    pan: &mut Panels,
) {
    let Heads { S, T, D, .. } = hd;
    // b[j][d] = v[j][d], in blocks of W channels (once per key/value head)
    if !hd.shares_kv(hh) {
        pack_panels(T, D, hd.key_rows(v, bb, hh), &mut pan.v);
        pan.v_finite = all_finite(&pan.v);
    }
    let vp = &pan.v;
    row_tiles!(S, i0, R, {
        let p_rows: [&[f32]; R] = each(|r| &p[(i0 + r) * T..(i0 + r + 1) * T]);
        // the keys after the tile's last nonzero probability add ±0 (see nonzero_len)
        let keys = if pan.v_finite {
            p_rows.iter().map(|p| nonzero_len(p)).fold(0, usize::max)
        } else {
            T
        };
        let p_rows = p_rows.map(|p| &p[..keys]);
        col_blocks!(D, d0, W, {
            let acc = tile_rows::<R, W>([[0.0; W]; R], p_rows, &vp[d0 * T..(d0 + W) * T]);
            for (r, acc) in acc.iter().enumerate() {
                store(att, hd.q_base(bb, i0 + r, hh) + d0, acc, 1.0);
            }
        });
    });
}

/// Backward of the weighted sum: `dP[b,h,i,j] = Σ_d dAtt[b,i,h,d]·v[b,j,h,d]` for every pair,
/// then `dV[b,j,h,d] = Σ_i P[b,h,i,j]·dAtt[b,i,h,d]`.
#[inline(always)]
pub(super) fn weighted_sum_back_impl(hd: Heads, p: &[f32], v: &[f32], d_att: &[f32], d_p: &mut [f32], d_v: &mut [f32]) {
    let mut pan = Panels::default();
    for (bb, hh, d_p) in head_blocks_mut(hd, d_p) {
        d_probs_head(hd, (bb, hh), (v, d_att), d_p, &mut pan, false);
    }
    // the query heads of a group add into the same d_v: it starts at 0
    if hd.shares_kv_heads() {
        d_v[..hd.B * hd.T * hd.H_kv * hd.D].fill(0.0);
    }
    for (bb, hh, p) in head_blocks(hd, p) {
        d_values_head(hd, (bb, hh), p, d_att, d_v, &mut pan);
    }
}

/// `dP` of head `hh` of batch `bb` into its `[S,T]` block `d_p`. With `hidden_zero` (a causal
/// mask, and a caller that reads a hidden pair's `dP` only to see whether it is finite), when
/// no sum can reach infinity (`D·max|dAtt|·max|v|` is far below `f32::MAX`, so every `dP` is
/// finite), the blocks of keys past a tile's last visible one are written as 0 instead of summed.
#[inline(always)]
pub(super) fn d_probs_head(
    hd: Heads,
    (bb, hh): (usize, usize),
    (v, d_att): (&[f32], &[f32]),
    d_p: &mut [f32],
    pan: &mut Panels,
    hidden_zero: bool,
) {
    let Heads { S, T, D, .. } = hd;
    // b[d][j] = v[j][d], in blocks of W keys (once per key/value head)
    if !hd.shares_kv(hh) {
        pack_panels_t(D, T, hd.key_rows(v, bb, hh), &mut pan.v_t);
        pan.v_t_max = max_abs(&pan.v_t);
    }
    let vp = &pan.v_t;
    let d_att_row = hd.query_rows(d_att, bb, hh);
    let skip = hidden_zero && {
        let a_max = (0..S).map(|i| max_abs(d_att_row(i))).fold(0.0, f32::max);
        // a NaN bound fails the comparison too
        (D as f32) * a_max * pan.v_t_max < f32::MAX / 4.0
    };
    row_tiles!(S, i0, R, {
        let d_att_rows: [&[f32]; R] = each(|r| d_att_row(i0 + r));
        let keys = if skip { extent(&Mask::Causal, i0 + R - 1, T) } else { T };
        col_blocks!(T, j0, W, {
            let acc = if j0 < keys {
                tile_rows::<R, W>([[0.0; W]; R], d_att_rows, &vp[j0 * D..(j0 + W) * D])
            } else {
                [[0.0; W]; R]
            };
            for (r, acc) in acc.iter().enumerate() {
                store(d_p, (i0 + r) * T + j0, acc, 1.0);
            }
        });
    });
}

/// The largest `|x|`, or NaN if any value is not finite.
#[inline(always)]
pub(in crate::untraced) fn max_abs(x: &[f32]) -> f32 {
    let m = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if all_finite(x) { m } else { f32::NAN }
}

/// Head `hh`'s share of `dV` (stored, or added when grouped), from its `[S,T]` block `p`.
#[inline(always)]
pub(super) fn d_values_head(
    hd: Heads,
    (bb, hh): (usize, usize),
    p: &[f32],
    d_att: &[f32],
    d_v: &mut [f32],
    pan: &mut Panels,
) {
    let Heads { S, T, D, .. } = hd;
    // b[i][d] = dAtt[i][d], in blocks of W channels
    pack_panels(S, D, hd.query_rows(d_att, bb, hh), &mut pan.d_att);
    let dap = &pan.d_att;
    let finite = all_finite(dap);
    pan.lens.clear();
    let lens = p
        .chunks_exact(T)
        .map(|p_row| if finite { nonzero_len(p_row) } else { T });
    pan.lens.extend(lens);
    let lens = &pan.lens;
    row_tiles!(T, j0, R, {
        // queries before the first with a nonzero probability at or after key j0 add ±0 to
        // every key of the tile, and a sum from +0 stays +0 (see nonzero_len)
        let first = lens.iter().position(|&len| len > j0).unwrap_or(S);
        let p_cols = &p[first * T..];
        col_blocks!(D, d0, W, {
            let dap_block = &dap[d0 * S + first * W..(d0 + W) * S];
            let acc = tile_cols::<R, W>([[0.0; W]; R], p_cols, T, j0, dap_block);
            for (r, acc) in acc.iter().enumerate() {
                store_kv(hd, d_v, hd.k_base(bb, j0 + r, hh) + d0, acc, 1.0);
            }
        });
    });
}
