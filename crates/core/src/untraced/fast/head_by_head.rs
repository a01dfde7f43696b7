//! Head by head. The passes of `scores.rs`, `softmax.rs` and `weighted_sum.rs` each sweep every
//! head before the next pass starts, so the `[B,H,S,T]` buffers between them travel through main memory once training's shapes outgrow
//! the caches (at B4 T128 H8 each is 2 MB a layer). Training keeps only `probs` for the
//! backward: the scores, `dP` and `dS` of one head are made and used while they sit in one
//! `[S,T]` block in the cache, then the next head reuses it. Each value is computed by the same
//! per-head code as in the passes, so the bits are theirs.

use super::scores::{scores_back_head, scores_head};
use super::softmax::{softmax_back_block, softmax_block};
use super::weighted_sum::{d_probs_head, d_values_head, weighted_sum_head};
use super::{Heads, Panels, head_blocks, head_blocks_mut};
use crate::kernels::Mask;

/// Forward head by head: scores into a block, softmax from it into `probs`, then `att`.
#[inline(always)]
pub(super) fn forward_impl(
    hd: Heads,
    mask: &Mask,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    probs: &mut [f32],
    att: &mut [f32],
) {
    let Heads { S, T, .. } = hd;
    let (mut pan, mut s) = (Panels::default(), vec![0.0; S * T]);
    for (bb, hh, p) in head_blocks_mut(hd, probs) {
        scores_head(hd, mask, (bb, hh), q, k, &mut s, &mut pan);
        softmax_block(T, &s, p);
        weighted_sum_head(hd, (bb, hh), p, v, att, &mut pan);
    }
}

/// Backward head by head: `dP` into a block, `dV`, `dS` into a second block, then `dQ`, `dK`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn backward_impl(
    hd: Heads,
    mask: &Mask,
    (q, k, v): (&[f32], &[f32], &[f32]),
    probs: &[f32],
    d_att: &[f32],
    d_q: &mut [f32],
    d_k: &mut [f32],
    d_v: &mut [f32],
) {
    let Heads { S, T, .. } = hd;
    // the query heads of a group add into the same d_k and d_v: they start at 0
    if hd.shares_kv_heads() {
        d_k[..hd.B * hd.T * hd.H_kv * hd.D].fill(0.0);
        d_v[..hd.B * hd.T * hd.H_kv * hd.D].fill(0.0);
    }
    let (mut pan, mut d_p, mut d_s) = (Panels::default(), vec![0.0; S * T], vec![0.0; S * T]);
    for (bb, hh, p) in head_blocks(hd, probs) {
        // dS of a hidden pair is read by no sum of scores_back_head: its dP matters only by
        // being finite (see softmax_back_block)
        let hidden_zero = mask.is_causal();
        d_probs_head(hd, (bb, hh), (v, d_att), &mut d_p, &mut pan, hidden_zero);
        d_values_head(hd, (bb, hh), p, d_att, d_v, &mut pan);
        softmax_back_block(T, p, &d_p, &mut d_s);
        scores_back_head(hd, mask, (bb, hh), (q, k), &d_s, d_q, d_k, &mut pan);
    }
}
