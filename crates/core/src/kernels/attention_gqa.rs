//! Grouped-query attention: `H` query heads share `H_kv` key/value heads, `G = H/H_kv` query
//! heads to each (Llama, Mistral, Qwen). `H_kv = H` is multi-head attention; `H_kv = 1` is
//! multi-query attention.
//!
//! Query head `hh` reads key/value head `kv_h = hh / (H/H_kv)` (llama2.c's `h / kv_mul`). The
//! queries stay `q [B,S,H,D]`; keys and values are `k, v [B,T,H_kv,D]`, so head `kv_h` of key
//! `j` starts at `k_base = ((bb*T + j)*H_kv + kv_h)*D`. Scores and probs are per query head,
//! `[B,H,S,T]` at `((bb*H + hh)*S + i)*T + j`, and softmax normalises each of their rows alone,
//! exactly as in MHA (`softmax_rows` below is MHA's). Scale `1/√D`.
//!
//! The fused projection `w_qkv [C, C + 2·H_kv·D]` gives one row `qkv [B,T,C + 2·H_kv·D]` per
//! token: q in channels `0..C`, k from `C`, v from `C + H_kv·D` (`split`).
//!
//! Backward: every query head of a group adds its share to the same `d_k` and `d_v` cells, so
//! both are cleared first and then accumulated (`+=`: a read of the old value, a write of the
//! new). Overwriting instead would keep only the group's last head.

pub use super::attention_mha::{sink_back, softmax_rows, softmax_rows_back};

use super::Mask;
use crate::tensor::Shape;
use crate::trace::{Buf, MASKED, Phase, Recorder};

/// Slices the fused projection: `q[qi + c] = qkv[ri + c]`, `k[ki + c] = qkv[ri + C + c]`,
/// `v[ki + c] = qkv[ri + C + H_kv·D + c]`.
pub fn split<R: Recorder>(rec: &mut R, sh: Shape, qkv: &[f32], q: &mut [f32], k: &mut [f32], v: &mut [f32]) {
    let Shape {
        b: B,
        t: T,
        c: C,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();
    // split: each row of qkv holds q (C channels), then k and v (H_kv·D channels each)
    rec.phase(Phase::Split);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..T {
            let ri = (bb * T + i) * (C + 2 * H_kv * D);
            let qi = (bb * T + i) * C;
            rec.enter(&["i", "ri", "qi"], [i, ri, qi]);
            for c in 0..C {
                rec.enter(&["c"], [c]);
                let x = rec.read(Buf::Qkv, qkv, ri + c);
                rec.write(Buf::Q, q, qi + c, x);
                rec.exit();
            }
            for c in 0..H_kv * D {
                let ki = (bb * T + i) * H_kv * D;
                rec.enter(&["c", "ki"], [c, ki]);
                let x = rec.read(Buf::Qkv, qkv, ri + C + c);
                rec.write(Buf::K, k, ki + c, x);
                let x = rec.read(Buf::Qkv, qkv, ri + C + H_kv * D + c);
                rec.write(Buf::V, v, ki + c, x);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// The reverse copy into `d_qkv`, block by block.
pub fn split_back<R: Recorder>(rec: &mut R, sh: Shape, d_q: &[f32], d_k: &[f32], d_v: &[f32], d_qkv: &mut [f32]) {
    let Shape {
        b: B,
        t: T,
        c: C,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();
    // split backward: d_q, d_k, d_v back into their column blocks of d_qkv
    rec.phase(Phase::SplitBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..T {
            let ri = (bb * T + i) * (C + 2 * H_kv * D);
            let qi = (bb * T + i) * C;
            rec.enter(&["i", "ri", "qi"], [i, ri, qi]);
            for c in 0..C {
                rec.enter(&["c"], [c]);
                let g = rec.read(Buf::DQ, d_q, qi + c);
                rec.write(Buf::DQkv, d_qkv, ri + c, g);
                rec.exit();
            }
            for c in 0..H_kv * D {
                let ki = (bb * T + i) * H_kv * D;
                rec.enter(&["c", "ki"], [c, ki]);
                let g = rec.read(Buf::DK, d_k, ki + c);
                rec.write(Buf::DQkv, d_qkv, ri + C + c, g);
                let g = rec.read(Buf::DV, d_v, ki + c);
                rec.write(Buf::DQkv, d_qkv, ri + C + H_kv * D + c, g);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// Pass 1 of forward.
pub fn scores<R: Recorder>(rec: &mut R, sh: Shape, mask: &Mask, q: &[f32], k: &[f32], scores: &mut [f32]) {
    let Shape {
        b: B,
        s: S,
        t: T,
        h: H,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();
    let scale = 1.0 / (D as f32).sqrt();

    // pass 1: S[b,h,i,j] = q_h,i · k_kv_h,j / √D with kv_h = h / (H/H_kv): the query heads of
    // one group read the same key head; hidden pairs (j > i) are then overwritten with −1e9
    rec.phase(Phase::Scores);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            let kv_h = hh / (H / H_kv);
            rec.enter(&["hh", "kv_h"], [hh, kv_h]);
            for i in 0..S {
                let q_base = ((bb * S + i) * H + hh) * D;
                rec.enter(&["i", "q_base"], [i, q_base]);
                for j in 0..T {
                    let k_base = ((bb * T + j) * H_kv + kv_h) * D;
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

/// Pass 3 of forward. `p` is `probs`, or the dropped-out probabilities when dropout is on.
pub fn weighted_sum<R: Recorder>(rec: &mut R, sh: Shape, (pb, p): (Buf, &[f32]), v: &[f32], att: &mut [f32]) {
    let Shape {
        b: B,
        s: S,
        t: T,
        h: H,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();
    // pass 3: att[b,i,h,d] = Σ_j P[b,h,i,j] · v[b,j,kv_h,d]: each query head weighs its
    // group's value head, and writes its own slot of the [B,S,C] row
    rec.phase(Phase::WeightedSum);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            let kv_h = hh / (H / H_kv);
            rec.enter(&["hh", "kv_h"], [hh, kv_h]);
            for i in 0..S {
                let a_base = ((bb * S + i) * H + hh) * D;
                let row = ((bb * H + hh) * S + i) * T;
                rec.enter(&["i", "a_base", "row"], [i, a_base, row]);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    let mut s = 0.0;
                    for j in 0..T {
                        let v_base = ((bb * T + j) * H_kv + kv_h) * D;
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
    d_probs(rec, sh, v, d_att, (dpb, d_p));
    d_values(rec, sh, (pb, p), d_att, d_v);
}

/// Pass 1 of [`weighted_sum_back`]: the gradient of the probabilities.
pub fn d_probs<R: Recorder>(rec: &mut R, sh: Shape, v: &[f32], d_att: &[f32], (dpb, d_p): (Buf, &mut [f32])) {
    let Shape {
        b: B,
        s: S,
        t: T,
        h: H,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();

    // pass 1: dP[b,h,i,j] = Σ_d dAtt[b,i,h,d] · v[b,j,kv_h,d], for every (i, j), masked or not
    rec.phase(Phase::WeightedSumBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            let kv_h = hh / (H / H_kv);
            rec.enter(&["hh", "kv_h"], [hh, kv_h]);
            for i in 0..S {
                let a_base = ((bb * S + i) * H + hh) * D;
                rec.enter(&["i", "a_base"], [i, a_base]);
                for j in 0..T {
                    let v_base = ((bb * T + j) * H_kv + kv_h) * D;
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
}

/// Pass 2 of [`weighted_sum_back`]: the gradient of the values, summed over each group's query heads.
pub fn d_values<R: Recorder>(rec: &mut R, sh: Shape, (pb, p): (Buf, &[f32]), d_att: &[f32], d_v: &mut [f32]) {
    let Shape {
        b: B,
        s: S,
        t: T,
        h: H,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();

    // pass 2: dV[b,j,kv_h,d] = Σ over the group's query heads h of Σ_i P[b,h,i,j] · dAtt[b,i,h,d]:
    // d_v starts at 0 and every query head adds its share (+=, never =)
    clear(rec, sh, (Buf::DV, d_v));
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            let kv_h = hh / (H / H_kv);
            rec.enter(&["hh", "kv_h"], [hh, kv_h]);
            for j in 0..T {
                let v_base = ((bb * T + j) * H_kv + kv_h) * D;
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
                    rec.add(Buf::DV, d_v, v_base + d, s);
                    rec.exit();
                }
                rec.exit();
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
    d_queries(rec, sh, mask, k, d_scores, d_q);
    d_keys(rec, sh, mask, q, d_scores, d_k);
}

/// Pass 4 of backward (the first of [`scores_back`]): the gradient of the queries.
pub fn d_queries<R: Recorder>(rec: &mut R, sh: Shape, mask: &Mask, k: &[f32], d_scores: &[f32], d_q: &mut [f32]) {
    let Shape {
        b: B,
        s: S,
        t: T,
        h: H,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();
    let scale = 1.0 / (D as f32).sqrt();

    // pass 4: dQ[b,i,h,d] = Σ_j dS[b,h,i,j] · k[b,j,kv_h,d] / √D over visible pairs
    rec.phase(Phase::ScoresBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            let kv_h = hh / (H / H_kv);
            rec.enter(&["hh", "kv_h"], [hh, kv_h]);
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
                        let k_base = ((bb * T + j) * H_kv + kv_h) * D;
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
}

/// Pass 5 of backward (the second of [`scores_back`]): the gradient of the keys, summed over
/// each group's query heads.
pub fn d_keys<R: Recorder>(rec: &mut R, sh: Shape, mask: &Mask, q: &[f32], d_scores: &[f32], d_k: &mut [f32]) {
    let Shape {
        b: B,
        s: S,
        t: T,
        h: H,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();
    let scale = 1.0 / (D as f32).sqrt();

    // pass 5: dK[b,j,kv_h,d] = Σ over the group's query heads h of Σ_i dS[b,h,i,j] · q[b,i,h,d] / √D:
    // d_k starts at 0 and every query head adds its share (+=, never =)
    clear(rec, sh, (Buf::DK, d_k));
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            let kv_h = hh / (H / H_kv);
            rec.enter(&["hh", "kv_h"], [hh, kv_h]);
            for j in 0..T {
                let k_base = ((bb * T + j) * H_kv + kv_h) * D;
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
                    rec.add(Buf::DK, d_k, k_base + d, s * scale);
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// `d_k` or `d_v` `[kv_base + d] = 0` for every key/value head of every key: the cells the query
/// heads of each group then add into.
pub fn clear<R: Recorder>(rec: &mut R, sh: Shape, (buf, d_kv): (Buf, &mut [f32])) {
    let Shape {
        b: B, t: T, h_kv: H_kv, ..
    } = sh;
    let D = sh.d();
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for j in 0..T {
            rec.enter(&["j"], [j]);
            for kv_h in 0..H_kv {
                let kv_base = ((bb * T + j) * H_kv + kv_h) * D;
                rec.enter(&["kv_h", "kv_base"], [kv_h, kv_base]);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    rec.write(buf, d_kv, kv_base + d, 0.0);
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}
