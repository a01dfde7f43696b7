//! Softmax over one row of scores, `P[j] = exp(S[j] − max) / Σ_k exp(S[k] − max)`, and its
//! backward. The attention kernels loop over rows (bb, hh, i) and call these for each.

use crate::tensor::simd::exp;
use crate::trace::{Buf, Recorder};

/// `probs[row + j]` for `j < T` from `scores[row + j]`, in three passes as in the reference.
pub fn row_forward<R: Recorder>(rec: &mut R, T: usize, row: usize, scores: &[f32], probs: &mut [f32]) {
    cols_forward(
        rec,
        &["j", "off"],
        0..T,
        row,
        (Buf::Scores, scores),
        (Buf::Probs, probs),
    );
}

/// The softmax of the columns `cols` of a row only, `y[row + j]` from `x[row + j]`: a decode
/// step over the keys its window keeps, one part of a split cache, or the merge of the parts'
/// log-sum-exps. `names` are the column loop's variable and offset. Returns the row's maximum
/// and its sum of exponentials, whose `max + ln(sum)` is the row's log-sum-exp.
pub fn cols_forward<R: Recorder>(
    rec: &mut R,
    names: &'static [&'static str; 2],
    cols: impl Iterator<Item = usize> + Clone,
    row: usize,
    (xb, x): (Buf, &[f32]),
    (yb, y): (Buf, &mut [f32]),
) -> (f32, f32) {
    // pass a: the row maximum, subtracted below so exp never overflows
    let mut maxval = f32::NEG_INFINITY;
    for j in cols.clone() {
        rec.enter(names, [j, row + j]);
        maxval = maxval.max(rec.read(xb, x, row + j));
        rec.exit();
    }
    // pass b: unnormalised exponentials and their sum (a masked −1e9 becomes exactly 0); `exp`
    // is computed from + and × (simd.rs), so the untraced path can vectorise it, same bits
    let mut sum = 0.0;
    for j in cols.clone() {
        rec.enter(names, [j, row + j]);
        let e = exp(rec.read(xb, x, row + j) - maxval);
        rec.write(yb, y, row + j, e);
        sum += e;
        rec.exit();
    }
    // pass c: normalise so the row sums to 1
    let inv = 1.0 / sum;
    for j in cols {
        rec.enter(names, [j, row + j]);
        let e = rec.read(yb, y, row + j);
        rec.write(yb, y, row + j, e * inv);
        rec.exit();
    }
    (maxval, sum)
}

/// `dS[j] = P[j] · (dP[j] − Σ_k dP[k]·P[k])` for one row.
pub fn row_backward<R: Recorder>(
    rec: &mut R,
    T: usize,
    row: usize,
    probs: &[f32],
    d_probs: &[f32],
    d_scores: &mut [f32],
) {
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
}
