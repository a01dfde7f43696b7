//! A decode run's phases, counted over its steps: a contiguous, windowed or paged cache, and
//! split-KV steps.

use super::{Counted, Plan, pc, rope_count};
use crate::engine::count::Count;
use crate::tensor::Shape;
use crate::trace::Phase;

/// A decode run's phases, each summed over the `B·T` steps. Step `t` reads the cached positions
/// it sees: `t + 1` of them, fewer under a sliding window, so the attention phases grow with the
/// mask's visible pairs (`T(T + 1)/2` per sequence when causal). A paged cache adds a read of the
/// block table per new token, per (head, key) of the scores and per (head, channel, key) of the
/// weighted sums; a split step's parts and merge replace the softmax and the sum.
pub(super) fn decode_counts(plan: &Plan, ksh: Shape) -> Vec<Counted> {
    let (b, t, c, h, kv) = (
        Count::from(ksh.b),
        Count::from(ksh.t),
        Count::from(ksh.c),
        Count::from(ksh.h),
        Count::from(ksh.kv_c()),
    );
    let steps = b * t;
    // (b, t, j) triples of a key the step sees
    let seen = b * Count::from(plan.mask.visible_pairs(ksh.t, ksh.t));
    let paged = Count::from(plan.cache.paged.is_some());
    let bias = Count::from(plan.bias);
    let mut out = vec![pc(
        Phase::DecodeQkv,
        steps * (c + 2 * kv) * (bias + 2 * c) + paged * steps,
        steps * (c + 2 * kv),
    )];
    if plan.rope.is_some() {
        out.push(rope_count(Phase::Rope, steps * (c + kv)));
    }
    out.push(pc(Phase::DecodeScores, 2 * seen * c + paged * seen * h, seen * h));
    if let Some(P) = plan.cache.split {
        // step t has the parts 0..=t/L; summed over t: T + Σ_t ⌊t/L⌋, which is L·K(K−1)/2 + r·K
        // with K = ⌊T/L⌋ whole runs of L steps and r = T − K·L steps after them
        let T = ksh.t as u64;
        let L = T.div_ceil(P as u64);
        let (K, r) = (T / L, T % L);
        let parts = b * (t + Count::from(L) * Count::from(K * K.saturating_sub(1) / 2) + Count::from(r * K));
        out.extend([
            pc(Phase::DecodePartSoftmax, 3 * seen * h, 2 * seen * h + parts * h),
            pc(Phase::DecodePartSum, 2 * seen * c + paged * seen * c, parts * c),
            pc(Phase::DecodeMergeWeights, 3 * parts * h, 2 * parts * h),
            pc(Phase::DecodeMerge, 2 * parts * c, steps * c),
        ]);
    } else {
        out.extend([
            pc(Phase::DecodeSoftmax, 3 * seen * h, 2 * seen * h),
            pc(Phase::DecodeSum, 2 * seen * c + paged * seen * c, steps * c),
        ]);
    }
    out.push(pc(Phase::DecodeOut, steps * c * (bias + 2 * c), steps * c));
    out
}
