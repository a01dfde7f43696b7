//! Multi-head attention: `H` heads of `D = C/H` channels each.
//!
//! Nothing is copied to split the heads: `q [B,S,C]` and `k, v [B,T,C]` are read as
//! `[B,S,H,D]` / `[B,T,H,D]` views, so head `hh` of query `i` starts at
//! `q_base = ((bb*S + i)*H + hh)*D`. Scores and probs are `[B,H,S,T]` at
//! `((bb*H + hh)*S + i)*T + j`; `att [B,S,H,D]` is already `[B,S,C]` in memory, which is the
//! concatenation of the heads. Scale `1/√D`. In self-attention `S = T`.
//!
//! Forward is three passes, `scores`, `softmax_rows`, `weighted_sum`; backward walks them back,
//! `weighted_sum_back`, `softmax_rows_back`, `scores_back`. These are the reference loops: a
//! traced run executes exactly them. Untraced runs take the SIMD loop order of `untraced/fast/`,
//! chosen in `dispatch.rs` and held to these loops bit for bit by tests.

use super::Mask;
use super::softmax::{self, Sinks};
use crate::tensor::Shape;
use crate::trace::{Buf, MASKED, Phase, Recorder};

/// Pass 1 of forward.
pub fn scores<R: Recorder>(rec: &mut R, sh: Shape, mask: &Mask, q: &[f32], k: &[f32], scores: &mut [f32]) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let D = sh.d();
    let scale = 1.0 / (D as f32).sqrt();

    // pass 1: S[b,h,i,j] = q_h,i · k_h,j / √D; computed for every pair, then hidden pairs
    // (j > i) are overwritten with −1e9, as the reference does
    rec.phase(Phase::Scores);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let q_base = ((bb * S + i) * H + hh) * D;
                rec.enter(&["i", "q_base"], [i, q_base]);
                for j in 0..T {
                    let k_base = ((bb * T + j) * H + hh) * D;
                    let off = ((bb * H + hh) * S + i) * T + j;
                    rec.enter(&["j", "k_base", "off"], [j, k_base, off]);
                    let mut s = 0.0;
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        s += rec.read(Buf::Q, q, q_base + d) * rec.read(Buf::K, k, k_base + d);
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
        rec.exit();
    }
}

/// Pass 2 of forward; `sink` holds each head's sink logit `sink[hh]` when there are some.
pub fn softmax_rows<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    scores: &[f32],
    probs: &mut [f32],
    mut sink: Option<Sinks<'_>>,
) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    // pass 2: P = softmax(S) along j, one row (bb, hh, i) at a time: each head normalises alone
    // (with its own sink logit in the denominator when there is one)
    rec.phase(Phase::Softmax);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let row = ((bb * H + hh) * S + i) * T;
                rec.enter(&["i", "row"], [i, row]);
                // the head's sink logit joins the row's denominator; its share of the row is kept
                match sink.as_mut() {
                    Some(Sinks { sink, p_sink }) => {
                        let x = rec.read(Buf::Sink, sink, hh);
                        let share = softmax::row_forward(rec, T, row, scores, probs, Some(x));
                        rec.write(Buf::PSink, p_sink, (bb * H + hh) * S + i, share);
                    }
                    None => {
                        softmax::row_forward(rec, T, row, scores, probs, None);
                    }
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// Pass 3 of forward. `p` is `probs`, or the dropped-out probabilities when dropout is on.
pub fn weighted_sum<R: Recorder>(rec: &mut R, sh: Shape, (pb, p): (Buf, &[f32]), v: &[f32], att: &mut [f32]) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let D = sh.d();
    // pass 3: att[b,i,h,d] = Σ_j P[b,h,i,j] · v[b,j,h,d], written straight into head hh's
    // slot of the [B,S,C] row: the heads are concatenated by the layout itself
    rec.phase(Phase::WeightedSum);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let a_base = ((bb * S + i) * H + hh) * D;
                let row = ((bb * H + hh) * S + i) * T;
                rec.enter(&["i", "a_base", "row"], [i, a_base, row]);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    let mut s = 0.0;
                    for j in 0..T {
                        let v_base = ((bb * T + j) * H + hh) * D;
                        rec.enter(&["j", "v_base"], [j, v_base]);
                        s += rec.read(pb, p, row + j) * rec.read(Buf::V, v, v_base + d);
                        rec.exit();
                    }
                    rec.write(Buf::Att, att, a_base + d, s);
                    rec.exit();
                }
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
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let D = sh.d();

    // pass 1: dP[b,h,i,j] = Σ_d dAtt[b,i,h,d] · v[b,j,h,d], for every (i, j), masked or not
    rec.phase(Phase::WeightedSumBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let a_base = ((bb * S + i) * H + hh) * D;
                rec.enter(&["i", "a_base"], [i, a_base]);
                for j in 0..T {
                    let v_base = ((bb * T + j) * H + hh) * D;
                    let off = ((bb * H + hh) * S + i) * T + j;
                    rec.enter(&["j", "v_base", "off"], [j, v_base, off]);
                    let mut s = 0.0;
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        s += rec.read(Buf::DAtt, d_att, a_base + d) * rec.read(Buf::V, v, v_base + d);
                        rec.exit();
                    }
                    rec.write(dpb, d_p, off, s);
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }

    // pass 2: dV[b,j,h,d] = Σ_i P[b,h,i,j] · dAtt[b,i,h,d]
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for j in 0..T {
                let v_base = ((bb * T + j) * H + hh) * D;
                rec.enter(&["j", "v_base"], [j, v_base]);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    let mut s = 0.0;
                    for i in 0..S {
                        let a_base = ((bb * S + i) * H + hh) * D;
                        let off = ((bb * H + hh) * S + i) * T + j;
                        rec.enter(&["i", "a_base", "off"], [i, a_base, off]);
                        s += rec.read(pb, p, off) * rec.read(Buf::DAtt, d_att, a_base + d);
                        rec.exit();
                    }
                    rec.write(Buf::DV, d_v, v_base + d, s);
                    rec.exit();
                }
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
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    // pass 3: dS = P ⊙ (dP − Σ_j dP·P), one row (bb, hh, i) at a time
    rec.phase(Phase::SoftmaxBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let row = ((bb * H + hh) * S + i) * T;
                rec.enter(&["i", "row"], [i, row]);
                let dot = softmax::row_backward(rec, T, row, (probs, d_probs), d_scores);
                // with a sink logit, the row's Σ_j dP·P is kept for the sink's gradient
                if let Some(delta) = delta.as_deref_mut() {
                    rec.write(Buf::Delta, delta, (bb * H + hh) * S + i, dot);
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// The sink logits' gradient (gpt-oss), after pass 3: a sink is a logit of every row of its
/// head with no value, so its softmax gradient is `P_sink · (0 − Σ_j dP·P)`, summed over them.
pub fn sink_back<R: Recorder>(rec: &mut R, sh: Shape, p_sink: &[f32], delta: &[f32], d_sink: &mut [f32]) {
    let Shape { b: B, s: S, h: H, .. } = sh;
    // pass 3b: d_sink[h] = −Σ_{b,i} P_sink[b,h,i] · delta[b,h,i]: one logit per head, so its
    // gradient sums over every row of every sequence
    rec.phase(Phase::SinkBack);
    for hh in 0..H {
        rec.enter(&["hh"], [hh]);
        let mut s = 0.0;
        for bb in 0..B {
            rec.enter(&["bb"], [bb]);
            for i in 0..S {
                let off = (bb * H + hh) * S + i;
                rec.enter(&["i", "off"], [i, off]);
                s += rec.read(Buf::PSink, p_sink, off) * rec.read(Buf::Delta, delta, off);
                rec.exit();
            }
            rec.exit();
        }
        rec.write(Buf::DSink, d_sink, hh, -s);
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
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let D = sh.d();
    let scale = 1.0 / (D as f32).sqrt();

    // pass 4: dQ[b,i,h,d] = Σ_j dS[b,h,i,j] · k[b,j,h,d] / √D over visible pairs: a masked score
    // was overwritten by a constant, so no gradient flows through it
    rec.phase(Phase::ScoresBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let q_base = ((bb * S + i) * H + hh) * D;
                rec.enter(&["i", "q_base"], [i, q_base]);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    let mut s = 0.0;
                    for j in 0..T {
                        if mask.hides(i, j) {
                            continue;
                        }
                        let k_base = ((bb * T + j) * H + hh) * D;
                        let off = ((bb * H + hh) * S + i) * T + j;
                        rec.enter(&["j", "k_base", "off"], [j, k_base, off]);
                        s += rec.read(Buf::DScores, d_scores, off) * rec.read(Buf::K, k, k_base + d);
                        rec.exit();
                    }
                    rec.write(Buf::DQ, d_q, q_base + d, s * scale);
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }

    // pass 5: dK[b,j,h,d] = Σ_i dS[b,h,i,j] · q[b,i,h,d] / √D over visible pairs
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for j in 0..T {
                let k_base = ((bb * T + j) * H + hh) * D;
                rec.enter(&["j", "k_base"], [j, k_base]);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    let mut s = 0.0;
                    for i in 0..S {
                        if mask.hides(i, j) {
                            continue;
                        }
                        let q_base = ((bb * S + i) * H + hh) * D;
                        let off = ((bb * H + hh) * S + i) * T + j;
                        rec.enter(&["i", "q_base", "off"], [i, q_base, off]);
                        s += rec.read(Buf::DScores, d_scores, off) * rec.read(Buf::Q, q, q_base + d);
                        rec.exit();
                    }
                    rec.write(Buf::DK, d_k, k_base + d, s * scale);
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}
