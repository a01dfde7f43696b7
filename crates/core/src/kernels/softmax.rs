//! Softmax over one row of scores, `P[j] = exp(S[j] − max) / Σ_k exp(S[k] − max)`, and its
//! backward. The attention kernels loop over rows (bb, hh, i) and call these for each.
//!
//! With gpt-oss's learned sink logit (`[run] sink_logit`), the head's `sink[hh]` is one more
//! logit in the row that carries no value: `m = max(sink, max_j S[j])` and
//! `P[j] = exp(S[j] − m) / (exp(sink − m) + Σ_k exp(S[k] − m))`, so the row sums to
//! `1 − P_sink`, the share the sink takes.

use crate::tensor::simd::exp;
use crate::trace::{Buf, Recorder};

/// A run's sink logits `sink [H]` and the sink's share of every row, `p_sink`, as the softmax
/// passes take them.
pub struct Sinks<'a> {
    pub sink: &'a [f32],
    pub p_sink: &'a mut [f32],
}

/// `probs[row + j]` for `j < T` from `scores[row + j]`, in three passes as in the reference.
/// With the row's sink logit `sink` (read by the caller), returns the sink's share
/// `P_sink = exp(sink − m) / denominator`; without one, 0.
pub fn row_forward<R: Recorder>(
    rec: &mut R,
    T: usize,
    row: usize,
    scores: &[f32],
    probs: &mut [f32],
    sink: Option<f32>,
) -> f32 {
    let names = &["j", "off"];
    cols_forward(rec, names, 0..T, row, (Buf::Scores, scores), (Buf::Probs, probs), sink).p_sink
}

/// What a softmax leaves besides its probabilities: the row's maximum and its sum of
/// exponentials, whose `max + ln(sum)` is the row's log-sum-exp, and the sink's share.
#[derive(Clone, Copy, Debug)]
pub struct RowStats {
    pub max: f32,
    pub sum: f32,
    /// `exp(sink − max) / sum`, or 0 without a sink logit.
    pub p_sink: f32,
}

/// The softmax of the columns `cols` of a row only, `y[row + j]` from `x[row + j]`: a decode
/// step over the keys its window keeps, one part of a split cache, or the merge of the parts'
/// log-sum-exps. `names` are the column loop's variable and offset; `sink` is the row's sink
/// logit, if it has one.
pub fn cols_forward<R: Recorder>(
    rec: &mut R,
    names: &'static [&'static str; 2],
    cols: impl Iterator<Item = usize> + Clone,
    row: usize,
    (xb, x): (Buf, &[f32]),
    (yb, y): (Buf, &mut [f32]),
    sink: Option<f32>,
) -> RowStats {
    // pass a: the row maximum, subtracted below so exp never overflows; a sink logit is one
    // of the logits, so it starts the maximum
    let mut maxval = sink.unwrap_or(f32::NEG_INFINITY);
    for j in cols.clone() {
        rec.enter(names, [j, row + j]);
        maxval = maxval.max(rec.read(xb, x, row + j));
        rec.exit();
    }
    // pass b: unnormalised exponentials and their sum (a masked −1e9 becomes exactly 0); `exp`
    // is computed from + and × (simd.rs), so the untraced path can vectorise it, same bits. A
    // sink logit's exponential starts the sum: it joins the denominator and carries no value
    let e_sink = sink.map_or(0.0, |x| exp(x - maxval));
    let mut sum = e_sink;
    for j in cols.clone() {
        rec.enter(names, [j, row + j]);
        let e = exp(rec.read(xb, x, row + j) - maxval);
        rec.write(yb, y, row + j, e);
        sum += e;
        rec.exit();
    }
    // pass c: normalise so the row sums to 1 (to 1 − P_sink with a sink, whose share is kept
    // for backward)
    let inv = 1.0 / sum;
    for j in cols {
        rec.enter(names, [j, row + j]);
        let e = rec.read(yb, y, row + j);
        rec.write(yb, y, row + j, e * inv);
        rec.exit();
    }
    RowStats {
        max: maxval,
        sum,
        p_sink: e_sink * inv,
    }
}

/// `dS[j] = P[j] · (dP[j] − Σ_k dP[k]·P[k])` for one row. Returns the shared sum
/// `Σ_k dP[k]·P[k]`, which a sink logit's gradient `P_sink · (0 − Σ_k dP[k]·P[k])` reads (the
/// sink carries no value).
pub fn row_backward<R: Recorder>(
    rec: &mut R,
    T: usize,
    row: usize,
    (probs, d_probs): (&[f32], &[f32]),
    d_scores: &mut [f32],
) -> f32 {
    // pass a: Σ_j dP[j]·P[j], the part of the gradient every entry of the row shares
    let mut dot = 0.0;
    for j in 0..T {
        rec.enter(&["j", "off"], [j, row + j]);
        dot += rec.read(Buf::DProbs, d_probs, row + j) * rec.read(Buf::Probs, probs, row + j);
        rec.exit();
    }
    // pass b: each entry's own term
    for j in 0..T {
        rec.enter(&["j", "off"], [j, row + j]);
        let p = rec.read(Buf::Probs, probs, row + j);
        let dp = rec.read(Buf::DProbs, d_probs, row + j);
        rec.write(Buf::DScores, d_scores, row + j, p * (dp - dot));
        rec.exit();
    }
    dot
}
