//! The softmax pass and its backward, row by row: each row's maximum, exponentials and sum, and
//! `dS = P·(dP − Σ dP·P)`, eight rows' sums side by side.

use super::Heads;
use super::tile::{all_finite, nonzero_len};
use crate::tensor::simd::exp;
use crate::trace::MASKED;

/// Softmax pass, row by row (see [`softmax_block`]).
#[inline(always)]
pub(super) fn softmax_rows_impl(hd: Heads, scores: &[f32], probs: &mut [f32]) {
    let Heads { B, S, T, H, .. } = hd;
    let n = B * H * S * T;
    softmax_block(T, &scores[..n], &mut probs[..n]);
}

/// The softmax of each row of `T` values of `scores` into `probs`: the row maximum,
/// `e = exp(s − max)` for every entry, their sum left to right, then `e · (1/sum)`. The maximum
/// is the same whatever order it is taken in, so it is taken eight entries at a time; the sums
/// are not, so eight rows' sums run side by side, each stopping after its last nonzero `e`
/// (adding +0 to a positive sum changes nothing; the entries a causal mask hides are exactly 0).
#[inline(always)]
pub(super) fn softmax_block(T: usize, scores: &[f32], probs: &mut [f32]) {
    for (s8, p8) in scores.chunks(8 * T).zip(probs.chunks_mut(8 * T)) {
        let mut lens = [0; 8];
        for ((s, p), len) in s8.chunks_exact(T).zip(p8.chunks_exact_mut(T)).zip(&mut lens) {
            let maxval = max(s);
            // the mask's −1e9 at the end of a row (a causal mask's hidden keys): when
            // −1e9 − max is below −87, exp gives exactly 0 there, so 0 is written without it
            // (past the block of eight where the visible keys end: within it exp's 0 is written)
            let end = if MASKED - maxval < -87.0 {
                (T - masked_tail(s)).next_multiple_of(8).min(T)
            } else {
                T
            };
            for (p, &s) in p[..end].iter_mut().zip(&s[..end]) {
                *p = exp(s - maxval);
            }
            p[end..].fill(0.0);
            *len = nonzero_len(&p[..end]);
        }
        let sums = row_sums(p8, T, lens, |_, e| e);
        for (p, sum) in p8.chunks_exact_mut(T).zip(sums) {
            let inv = 1.0 / sum;
            p.iter_mut().for_each(|p| *p *= inv);
        }
    }
}

/// How many entries at the end of `s` are the mask's −1e9, eight at a time while whole blocks
/// of eight are.
#[inline(always)]
fn masked_tail(s: &[f32]) -> usize {
    let (head, blocks) = s.as_rchunks::<8>();
    let mut n = 0;
    for block in blocks.iter().rev() {
        if block.iter().fold(true, |all, &x| all & (x == MASKED)) {
            n += 8;
        } else {
            return n + block.iter().rev().take_while(|&&x| x == MASKED).count();
        }
    }
    n + head.iter().rev().take_while(|&&x| x == MASKED).count()
}

/// Backward of the softmax, row by row (see [`softmax_back_block`]).
#[inline(always)]
pub(super) fn softmax_rows_back_impl(hd: Heads, probs: &[f32], d_probs: &[f32], d_scores: &mut [f32]) {
    let Heads { B, S, T, H, .. } = hd;
    let n = B * H * S * T;
    softmax_back_block(T, &probs[..n], &d_probs[..n], &mut d_scores[..n]);
}

/// Backward of the softmax for each row of `T` values: `dot = Σ_j dP[j]·P[j]` left to right
/// (eight rows side by side, each stopping after its last nonzero `P[j]` when its `dP` is
/// finite: the rest add ±0 to a sum that is never −0), then `dS[j] = P[j]·(dP[j] − dot)`.
#[inline(always)]
pub(super) fn softmax_back_block(T: usize, probs: &[f32], d_probs: &[f32], d_scores: &mut [f32]) {
    let rows = probs.chunks(8 * T).zip(d_probs.chunks(8 * T));
    for ((p8, dp8), ds8) in rows.zip(d_scores.chunks_mut(8 * T)) {
        let mut lens = [0; 8];
        for ((p, dp), len) in p8.chunks_exact(T).zip(dp8.chunks_exact(T)).zip(&mut lens) {
            *len = if all_finite(dp) { nonzero_len(p) } else { T };
        }
        let dots = row_sums(p8, T, lens, |k, p| dp8[k] * p);
        let rows = p8.chunks_exact(T).zip(dp8.chunks_exact(T)).zip(ds8.chunks_exact_mut(T));
        for (((p, dp), ds), dot) in rows.zip(dots) {
            for ((ds, &p), &dp) in ds.iter_mut().zip(p).zip(dp) {
                *ds = p * (dp - dot);
            }
        }
    }
}

/// The largest value of `x` (NaN ignored), as `f32::max` over it left to right gives: which
/// of two equal values wins never matters, so the order of comparisons does not either.
#[inline(always)]
pub(super) fn max(x: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for l in 0..8 {
            lanes[l] = lanes[l].max(c[l]);
        }
    }
    let tail = chunks.remainder().iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    lanes.iter().fold(tail, |m, &v| m.max(v))
}

/// `Σ_j term(k, x[k])` over `j < lens[r]` with `k = r·T + j` for each of the (up to 8) rows `r`
/// of length `T` in `x`, each sum from 0 adding `j = 0, 1, …` in order. While every row still
/// has terms, the rows' additions are independent and the CPU overlaps them; then each row
/// finishes alone. Entries past the last row are 0 (callers zip with the rows).
#[inline(always)]
fn row_sums(x: &[f32], T: usize, lens: [usize; 8], term: impl Fn(usize, f32) -> f32) -> [f32; 8] {
    let rows = x.len() / T;
    let mut sums = [0.0f32; 8];
    let together = if rows == 8 {
        lens.iter().copied().fold(T, usize::min)
    } else {
        0
    };
    for j in 0..together {
        for (r, sum) in sums.iter_mut().enumerate() {
            let k = r * T + j;
            *sum += term(k, x[k]);
        }
    }
    for (r, sum) in sums.iter_mut().enumerate().take(rows) {
        for j in together..lens[r] {
            let k = r * T + j;
            *sum += term(k, x[k]);
        }
    }
    sums
}
