//! Multi-head causal attention: `H` heads of `D = C/H` channels each.
//!
//! Nothing is copied to split the heads: `q, k, v [B,T,C]` are read as `[B,T,H,D]` views, so
//! head `hh` of position `i` starts at `q_base = ((bb*T + i)*H + hh)*D`. Scores and probs are
//! `[B,H,T,T]` at `((bb*H + hh)*T + i)*T + j`; `att [B,T,H,D]` is already `[B,T,C]` in memory,
//! which is the concatenation of the heads. Scale `1/√D`.

use super::{Mask, softmax};
use crate::tensor::Shape;
use crate::trace::{Buf, MASKED, Phase, Recorder};

/// Per head: `S_h = Q_h·K_hᵀ/√D + mask`, `P_h = softmax(S_h)`, `att_h = P_h·V_h`.
#[allow(clippy::too_many_arguments)]
pub fn forward<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    mask: Mask,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    scores: &mut [f32],
    probs: &mut [f32],
    att: &mut [f32],
) {
    let Shape { b: B, t: T, h: H, .. } = sh;
    let D = sh.d();
    let scale = 1.0 / (D as f32).sqrt();

    // pass 1: S[b,h,i,j] = q_h,i · k_h,j / √D; computed for every pair, then hidden pairs
    // (j > i) are overwritten with −1e9, as the reference does
    rec.phase(Phase::Scores);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..T {
                let q_base = ((bb * T + i) * H + hh) * D;
                rec.enter(&["i", "q_base"], [i, q_base]);
                for j in 0..T {
                    let k_base = ((bb * T + j) * H + hh) * D;
                    let off = ((bb * H + hh) * T + i) * T + j;
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

    // pass 2: P = softmax(S) along j, one row (bb, hh, i) at a time: each head normalises alone
    rec.phase(Phase::Softmax);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..T {
                let row = ((bb * H + hh) * T + i) * T;
                rec.enter(&["i", "row"], [i, row]);
                softmax::row_forward(rec, T, row, scores, probs);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }

    // pass 3: att[b,i,h,d] = Σ_j P[b,h,i,j] · v[b,j,h,d], written straight into head hh's
    // slot of the [B,T,C] row: the heads are concatenated by the layout itself
    rec.phase(Phase::WeightedSum);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..T {
                let a_base = ((bb * T + i) * H + hh) * D;
                let row = ((bb * H + hh) * T + i) * T;
                rec.enter(&["i", "a_base", "row"], [i, a_base, row]);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    let mut s = 0.0;
                    for j in 0..T {
                        let v_base = ((bb * T + j) * H + hh) * D;
                        rec.enter(&["j", "v_base"], [j, v_base]);
                        s += rec.read(Buf::Probs, probs, row + j) * rec.read(Buf::V, v, v_base + d);
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

/// From `d_att` to `d_probs`, `d_v`, `d_scores`, `d_q`, `d_k`, head by head (each written once).
#[allow(clippy::too_many_arguments)]
pub fn backward<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    mask: Mask,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    probs: &[f32],
    d_att: &[f32],
    d_probs: &mut [f32],
    d_scores: &mut [f32],
    d_q: &mut [f32],
    d_k: &mut [f32],
    d_v: &mut [f32],
) {
    let Shape { b: B, t: T, h: H, .. } = sh;
    let D = sh.d();
    let scale = 1.0 / (D as f32).sqrt();

    // pass 1: dP[b,h,i,j] = Σ_d dAtt[b,i,h,d] · v[b,j,h,d], for every (i, j), masked or not
    rec.phase(Phase::WeightedSumBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..T {
                let a_base = ((bb * T + i) * H + hh) * D;
                rec.enter(&["i", "a_base"], [i, a_base]);
                for j in 0..T {
                    let v_base = ((bb * T + j) * H + hh) * D;
                    let off = ((bb * H + hh) * T + i) * T + j;
                    rec.enter(&["j", "v_base", "off"], [j, v_base, off]);
                    let mut s = 0.0;
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        s += rec.read(Buf::DAtt, d_att, a_base + d) * rec.read(Buf::V, v, v_base + d);
                        rec.exit();
                    }
                    rec.write(Buf::DProbs, d_probs, off, s);
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
                    for i in 0..T {
                        let a_base = ((bb * T + i) * H + hh) * D;
                        let off = ((bb * H + hh) * T + i) * T + j;
                        rec.enter(&["i", "a_base", "off"], [i, a_base, off]);
                        s += rec.read(Buf::Probs, probs, off) * rec.read(Buf::DAtt, d_att, a_base + d);
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

    // pass 3: dS = P ⊙ (dP − Σ_j dP·P), one row (bb, hh, i) at a time
    rec.phase(Phase::SoftmaxBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..T {
                let row = ((bb * H + hh) * T + i) * T;
                rec.enter(&["i", "row"], [i, row]);
                softmax::row_backward(rec, T, row, probs, d_probs, d_scores);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }

    // pass 4: dQ[b,i,h,d] = Σ_j dS[b,h,i,j] · k[b,j,h,d] / √D over visible pairs: a masked score
    // was overwritten by a constant, so no gradient flows through it
    rec.phase(Phase::ScoresBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..T {
                let q_base = ((bb * T + i) * H + hh) * D;
                rec.enter(&["i", "q_base"], [i, q_base]);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    let mut s = 0.0;
                    for j in 0..T {
                        if mask.hides(i, j) {
                            continue;
                        }
                        let k_base = ((bb * T + j) * H + hh) * D;
                        let off = ((bb * H + hh) * T + i) * T + j;
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
                    for i in 0..T {
                        if mask.hides(i, j) {
                            continue;
                        }
                        let q_base = ((bb * T + i) * H + hh) * D;
                        let off = ((bb * H + hh) * T + i) * T + j;
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
