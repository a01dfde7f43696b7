//! Baseline attention with one head over all `C` channels.
//!
//! Layouts (flat, row-major): `q, att [B,S,C]` at `(bb*S + i)*C + c`; `k, v [B,T,C]` at
//! `(bb*T + j)*C + c`; `scores, probs [B,S,T]` at `(bb*S + i)*T + j`. Scale `1/√C`.
//! In self-attention the query length `S` equals the key length `T`.
//!
//! Forward is three passes, `scores`, `softmax_rows`, `weighted_sum`; backward walks them back,
//! `weighted_sum_back`, `softmax_rows_back`, `scores_back`. These are the reference loops: a
//! traced run executes exactly them. Untraced runs take the SIMD loop order of `untraced/fast/`,
//! chosen in `dispatch.rs` and held to these loops bit for bit by tests.

// the sink logit's gradient is MHA's loop over heads, here over the single head's one logit
pub use super::attention_mha::sink_back;

use super::Mask;
use super::softmax::{self, Sinks};
use crate::tensor::Shape;
use crate::trace::{Buf, MASKED, Phase, Recorder};

/// Pass 1 of forward.
pub fn scores<R: Recorder>(rec: &mut R, sh: Shape, mask: &Mask, q: &[f32], k: &[f32], scores: &mut [f32]) {
    let Shape {
        b: B, s: S, t: T, c: C, ..
    } = sh;
    let scale = 1.0 / (C as f32).sqrt();

    // pass 1: S[b,i,j] = q_i · k_j / √C; the dot product is computed for every pair, then the
    // mask overwrites hidden pairs (j > i) with −1e9, as the reference does
    rec.phase(Phase::Scores);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..S {
            let qi = (bb * S + i) * C;
            rec.enter(&["i", "qi"], [i, qi]);
            for j in 0..T {
                let kj = (bb * T + j) * C;
                let off = (bb * S + i) * T + j;
                rec.enter(&["j", "kj", "off"], [j, kj, off]);
                let mut s = 0.0;
                for c in 0..C {
                    rec.enter(&["c"], [c]);
                    s += rec.read(Buf::Q, q, qi + c) * rec.read(Buf::K, k, kj + c);
                    rec.exit();
                }
                s *= scale;
                if mask.hides(i, j) {
                    s = MASKED;
                }
                rec.write(Buf::Scores, scores, off, s);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// Pass 2 of forward; `sink` holds the single head's sink logit `sink[0]` when there is one.
pub fn softmax_rows<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    scores: &[f32],
    probs: &mut [f32],
    mut sink: Option<Sinks<'_>>,
) {
    let Shape { b: B, s: S, t: T, .. } = sh;
    // pass 2: P = softmax(S) along j, one row (bb, i) at a time (a sink logit in each
    // denominator)
    rec.phase(Phase::Softmax);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..S {
            let row = (bb * S + i) * T;
            rec.enter(&["i", "row"], [i, row]);
            // the head's sink logit joins the row's denominator; its share of the row is kept
            match sink.as_mut() {
                Some(Sinks { sink, p_sink }) => {
                    let x = rec.read(Buf::Sink, sink, 0);
                    let share = softmax::row_forward(rec, T, row, scores, probs, Some(x));
                    rec.write(Buf::PSink, p_sink, bb * S + i, share);
                }
                None => {
                    softmax::row_forward(rec, T, row, scores, probs, None);
                }
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// Pass 3 of forward. `p` is `probs`, or the dropped-out probabilities when dropout is on.
pub fn weighted_sum<R: Recorder>(rec: &mut R, sh: Shape, (pb, p): (Buf, &[f32]), v: &[f32], att: &mut [f32]) {
    let Shape {
        b: B, s: S, t: T, c: C, ..
    } = sh;
    // pass 3: att[b,i,c] = Σ_j P[b,i,j] · v[b,j,c]
    rec.phase(Phase::WeightedSum);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..S {
            let ai = (bb * S + i) * C;
            let row = (bb * S + i) * T;
            rec.enter(&["i", "ai", "row"], [i, ai, row]);
            for c in 0..C {
                rec.enter(&["c"], [c]);
                let mut s = 0.0;
                for j in 0..T {
                    let vj = (bb * T + j) * C;
                    rec.enter(&["j", "vj"], [j, vj]);
                    s += rec.read(pb, p, row + j) * rec.read(Buf::V, v, vj + c);
                    rec.exit();
                }
                rec.write(Buf::Att, att, ai + c, s);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// Backward of pass 3: `d_p` is the gradient of whichever probabilities the weighted sum read.
#[allow(clippy::too_many_arguments)]
pub fn weighted_sum_back<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    (pb, p): (Buf, &[f32]),
    v: &[f32],
    d_att: &[f32],
    (dpb, d_p): (Buf, &mut [f32]),
    d_v: &mut [f32],
) {
    let Shape {
        b: B, s: S, t: T, c: C, ..
    } = sh;

    // pass 1: dP[b,i,j] = Σ_c dAtt[b,i,c] · v[b,j,c], for every (i, j), masked or not
    rec.phase(Phase::WeightedSumBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..S {
            let ai = (bb * S + i) * C;
            rec.enter(&["i", "ai"], [i, ai]);
            for j in 0..T {
                let vj = (bb * T + j) * C;
                let off = (bb * S + i) * T + j;
                rec.enter(&["j", "vj", "off"], [j, vj, off]);
                let mut s = 0.0;
                for c in 0..C {
                    rec.enter(&["c"], [c]);
                    s += rec.read(Buf::DAtt, d_att, ai + c) * rec.read(Buf::V, v, vj + c);
                    rec.exit();
                }
                rec.write(dpb, d_p, off, s);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }

    // pass 2: dV[b,j,c] = Σ_i P[b,i,j] · dAtt[b,i,c]
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for j in 0..T {
            let vj = (bb * T + j) * C;
            rec.enter(&["j", "vj"], [j, vj]);
            for c in 0..C {
                rec.enter(&["c"], [c]);
                let mut s = 0.0;
                for i in 0..S {
                    let ai = (bb * S + i) * C;
                    let off = (bb * S + i) * T + j;
                    rec.enter(&["i", "ai", "off"], [i, ai, off]);
                    s += rec.read(pb, p, off) * rec.read(Buf::DAtt, d_att, ai + c);
                    rec.exit();
                }
                rec.write(Buf::DV, d_v, vj + c, s);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// Backward of pass 2; with a sink logit each row's `Σ_j dP·P` is kept in `delta`.
pub fn softmax_rows_back<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    (probs, d_probs): (&[f32], &[f32]),
    d_scores: &mut [f32],
    mut delta: Option<&mut [f32]>,
) {
    let Shape { b: B, s: S, t: T, .. } = sh;
    // pass 3: dS = P ⊙ (dP − Σ_j dP·P), one row (bb, i) at a time
    rec.phase(Phase::SoftmaxBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..S {
            let row = (bb * S + i) * T;
            rec.enter(&["i", "row"], [i, row]);
            let dot = softmax::row_backward(rec, T, row, (probs, d_probs), d_scores);
            // with a sink logit, the row's Σ_j dP·P is kept for the sink's gradient
            if let Some(delta) = delta.as_deref_mut() {
                rec.write(Buf::Delta, delta, bb * S + i, dot);
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// Backward of pass 1.
#[allow(clippy::too_many_arguments)]
pub fn scores_back<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    mask: &Mask,
    q: &[f32],
    k: &[f32],
    d_scores: &[f32],
    d_q: &mut [f32],
    d_k: &mut [f32],
) {
    let Shape {
        b: B, s: S, t: T, c: C, ..
    } = sh;
    let scale = 1.0 / (C as f32).sqrt();

    // pass 4: dQ[b,i,c] = Σ_j dS[b,i,j] · k[b,j,c] / √C over visible pairs: a masked score was
    // overwritten by a constant, so no gradient flows through it
    rec.phase(Phase::ScoresBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..S {
            let qi = (bb * S + i) * C;
            rec.enter(&["i", "qi"], [i, qi]);
            for c in 0..C {
                rec.enter(&["c"], [c]);
                let mut s = 0.0;
                for j in 0..T {
                    if mask.hides(i, j) {
                        continue;
                    }
                    let kj = (bb * T + j) * C;
                    let off = (bb * S + i) * T + j;
                    rec.enter(&["j", "kj", "off"], [j, kj, off]);
                    s += rec.read(Buf::DScores, d_scores, off) * rec.read(Buf::K, k, kj + c);
                    rec.exit();
                }
                rec.write(Buf::DQ, d_q, qi + c, s * scale);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }

    // pass 5: dK[b,j,c] = Σ_i dS[b,i,j] · q[b,i,c] / √C over visible pairs
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for j in 0..T {
            let kj = (bb * T + j) * C;
            rec.enter(&["j", "kj"], [j, kj]);
            for c in 0..C {
                rec.enter(&["c"], [c]);
                let mut s = 0.0;
                for i in 0..S {
                    if mask.hides(i, j) {
                        continue;
                    }
                    let qi = (bb * S + i) * C;
                    let off = (bb * S + i) * T + j;
                    rec.enter(&["i", "qi", "off"], [i, qi, off]);
                    s += rec.read(Buf::DScores, d_scores, off) * rec.read(Buf::Q, q, qi + c);
                    rec.exit();
                }
                rec.write(Buf::DK, d_k, kj + c, s * scale);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}
