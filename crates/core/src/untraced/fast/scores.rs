//! The scores pass and its backward: `S = Q·Kᵀ/√D` with the mask's −1e9, then `dQ`, `dK` from
//! `dS`, head by head over packed keys and queries.

use super::tile::{each, pack_panels, pack_panels_t, store, store_kv, tile_at, tile_cols, tile_rows};
use super::{Heads, Panels, extent, head_blocks, head_blocks_mut};
use crate::kernels::Mask;
use crate::trace::MASKED;

/// Scores pass: `S[b,h,i,j] = (Σ_d q[i,d]·k[j,d])·(1/√D)`, or −1e9 where the mask hides the pair.
#[inline(always)]
pub(super) fn scores_impl(hd: Heads, mask: &Mask, q: &[f32], k: &[f32], scores: &mut [f32]) {
    let mut pan = Panels::default();
    for (bb, hh, s) in head_blocks_mut(hd, scores) {
        scores_head(hd, mask, (bb, hh), q, k, s, &mut pan);
    }
}

/// The scores of head `hh` of batch `bb` into its `[S,T]` block `s`.
#[inline(always)]
pub(super) fn scores_head(
    hd: Heads,
    mask: &Mask,
    (bb, hh): (usize, usize),
    q: &[f32],
    k: &[f32],
    s: &mut [f32],
    pan: &mut Panels,
) {
    let Heads { S, T, D, .. } = hd;
    let scale = hd.scale();
    // b[d][j] = k[j][d]: the keys' channels, in blocks of W keys (once per key/value head: the
    // query heads of a group read the same)
    if !hd.shares_kv(hh) {
        pack_panels_t(D, T, hd.key_rows(k, bb, hh), &mut pan.k_t);
    }
    let kp = &pan.k_t;
    let q_row = hd.query_rows(q, bb, hh);
    row_tiles!(S, i0, R, {
        let q_rows: [&[f32]; R] = each(|r| q_row(i0 + r));
        // blocks of keys past the tile's last visible one are hidden from all its rows; a few
        // hidden pairs before that are summed too, and overwritten below as the kernel does
        let keys = (i0..i0 + R).map(|i| extent(mask, i, T)).fold(0, usize::max);
        col_blocks!(T, j0, W, {
            if j0 < keys {
                let acc = tile_rows::<R, W>([[0.0; W]; R], q_rows, &kp[j0 * D..(j0 + W) * D]);
                for (r, acc) in acc.iter().enumerate() {
                    store(s, (i0 + r) * T + j0, acc, scale);
                }
            }
        });
        for i in i0..i0 + R {
            let s = &mut s[i * T..i * T + T];
            match mask {
                // the keys after the row's extent, summed or not, are hidden
                Mask::Causal => s[extent(mask, i, T)..].fill(MASKED),
                Mask::None => {}
                Mask::Explicit { .. } | Mask::Window { .. } => {
                    for (j, s) in s.iter_mut().enumerate() {
                        if mask.hides(i, j) {
                            *s = MASKED;
                        }
                    }
                }
            }
        }
    });
}

/// Backward of the scores: `dQ[b,i,h,d] = (Σ_j dS[b,h,i,j]·k[b,j,h,d])·(1/√D)` and
/// `dK[b,j,h,d] = (Σ_i dS[b,h,i,j]·q[b,i,h,d])·(1/√D)`, each over the visible pairs only, in
/// increasing order.
#[inline(always)]
pub(super) fn scores_back_impl(
    hd: Heads,
    mask: &Mask,
    q: &[f32],
    k: &[f32],
    d_scores: &[f32],
    d_q: &mut [f32],
    d_k: &mut [f32],
) {
    // the query heads of a group add into the same d_k: it starts at 0
    if hd.shares_kv_heads() {
        d_k[..hd.B * hd.T * hd.H_kv * hd.D].fill(0.0);
    }
    let mut pan = Panels::default();
    for (bb, hh, ds) in head_blocks(hd, d_scores) {
        scores_back_head(hd, mask, (bb, hh), (q, k), ds, d_q, d_k, &mut pan);
    }
}

/// [`scores_back_impl`] for head `hh` of batch `bb`, from its `[S,T]` block `ds_block`. Under
/// the causal mask query `i` sees keys `0..=i`: the rows of a tile share the keys of its first
/// row and then each continues alone (dQ); key `j` is seen by queries `j..S`: each row of a tile
/// first takes its own queries, then all share the rest (dK). An explicit mask is taken one row
/// at a time.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn scores_back_head(
    hd: Heads,
    mask: &Mask,
    (bb, hh): (usize, usize),
    (q, k): (&[f32], &[f32]),
    ds_block: &[f32],
    d_q: &mut [f32],
    d_k: &mut [f32],
    pan: &mut Panels,
) {
    let Heads { S, T, D, .. } = hd;
    let scale = hd.scale();
    let ds_row = |i: usize| &ds_block[i * T..i * T + T];
    if let Mask::Explicit { .. } | Mask::Window { .. } = mask {
        let (k_row, q_row) = (hd.key_rows(k, bb, hh), hd.query_rows(q, bb, hh));
        for i in 0..S {
            col_blocks!(D, d0, W, {
                let keys = (0..T).filter(|&j| !mask.hides(i, j));
                let acc = tile_at::<W>([0.0; W], d0, keys, |j| ds_row(i)[j], &k_row);
                store(d_q, hd.q_base(bb, i, hh) + d0, &acc, scale);
            });
        }
        for j in 0..T {
            col_blocks!(D, d0, W, {
                let queries = (0..S).filter(|&i| !mask.hides(i, j));
                let acc = tile_at::<W>([0.0; W], d0, queries, |i| ds_row(i)[j], &q_row);
                store_kv(hd, d_k, hd.k_base(bb, j, hh) + d0, &acc, scale);
            });
        }
        return;
    }
    // causal or no mask: every row's terms are a range. dQ: b[j][d] = k[j][d] (packed once per
    // key/value head); the rows of a tile share the keys of its first row, then each continues
    // alone
    if !hd.shares_kv(hh) {
        pack_panels(T, D, hd.key_rows(k, bb, hh), &mut pan.k);
    }
    let kp = &pan.k;
    row_tiles!(S, i0, R, {
        let shared = extent(mask, i0, T);
        let ds_rows: [&[f32]; R] = each(|r| &ds_row(i0 + r)[..shared]);
        col_blocks!(D, d0, W, {
            let k_block = &kp[d0 * T..(d0 + W) * T];
            let acc = tile_rows::<R, W>([[0.0; W]; R], ds_rows, k_block);
            for (r, acc) in acc.iter().enumerate() {
                // a row of one: its terms are the row itself
                let own = &ds_row(i0 + r)[shared..extent(mask, i0 + r, T)];
                let acc = tile_rows::<1, W>([*acc], [own], &k_block[shared * W..]);
                store(d_q, hd.q_base(bb, i0 + r, hh) + d0, &acc[0], scale);
            }
        });
    });
    // dK: b[i][d] = q[i][d]; key j is seen by queries first(j)..S: each row of a tile first
    // takes its own queries, then all share the rest
    pack_panels(S, D, hd.query_rows(q, bb, hh), &mut pan.q);
    let qp = &pan.q;
    let first = |j: usize| if matches!(mask, Mask::Causal) { j.min(S) } else { 0 };
    row_tiles!(T, j0, R, {
        let shared = first(j0 + R - 1);
        col_blocks!(D, d0, W, {
            let q_block = &qp[d0 * S..(d0 + W) * S];
            let mut acc = [[0.0; W]; R];
            for (r, acc) in acc.iter_mut().enumerate() {
                let own = &ds_block[first(j0 + r) * T..shared * T];
                *acc = tile_cols::<1, W>([*acc], own, T, j0 + r, &q_block[first(j0 + r) * W..])[0];
            }
            let acc = tile_cols::<R, W>(acc, &ds_block[shared * T..], T, j0, &q_block[shared * W..]);
            for (r, acc) in acc.iter().enumerate() {
                store_kv(hd, d_k, hd.k_base(bb, j0 + r, hh) + d0, acc, scale);
            }
        });
    });
}
