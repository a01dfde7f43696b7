//! Seven classic mistakes in a hand-written attention, each written as the code that makes it, to
//! be read beside the correct passes of `attention_mha.rs` (and, for 7, `attention_gqa.rs`):
//!
//! 1. no input projections: `q = k = v = x`;
//! 2. scores scaled by √(sequence length) instead of √(head size);
//! 3. the mask applied by multiplying scores by 0/1 instead of filling −∞;
//! 4. no output projection, so the heads' outputs are never mixed;
//! 5. attention dropout defined but never applied;
//! 6. softmax over two dimensions (2, 3), the whole `S×T` matrix, instead of the last;
//! 7. in grouped-query backward, each query head overwriting `d_k`/`d_v` instead of adding to them.
//!
//! Only the passes a mistake changes live here (1, 2, 3, 6 and 7); mistakes 4 and 5 are passes the
//! engine leaves out. Everything else runs the correct kernels. Mistaken runs are forward only,
//! except mistake 7, which is a backward mistake: its run makes both passes.

use super::{Mask, attention_gqa, softmax};
use crate::tensor::Shape;
use crate::trace::{Buf, MASKED, Phase, Recorder};
use std::fmt;

/// One of the seven mistakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mistake {
    NoInputProjection,
    ScaleBySeqLen,
    MaskByMultiply,
    NoOutputProjection,
    DropoutNotApplied,
    SoftmaxOverTwoDims,
    OverwriteKvGrad,
}

impl Mistake {
    pub const ALL: [Mistake; 7] = [
        Mistake::NoInputProjection,
        Mistake::ScaleBySeqLen,
        Mistake::MaskByMultiply,
        Mistake::NoOutputProjection,
        Mistake::DropoutNotApplied,
        Mistake::SoftmaxOverTwoDims,
        Mistake::OverwriteKvGrad,
    ];

    /// The name used in scenarios (`mistakes = ["scale_by_seq_len"]`).
    pub const fn name(self) -> &'static str {
        match self {
            Mistake::NoInputProjection => "no_input_projection",
            Mistake::ScaleBySeqLen => "scale_by_seq_len",
            Mistake::MaskByMultiply => "mask_by_multiply",
            Mistake::NoOutputProjection => "no_output_projection",
            Mistake::DropoutNotApplied => "dropout_not_applied",
            Mistake::SoftmaxOverTwoDims => "softmax_over_two_dims",
            Mistake::OverwriteKvGrad => "overwrite_kv_grad",
        }
    }

    pub fn from_name(name: &str) -> Option<Mistake> {
        Mistake::ALL.into_iter().find(|m| m.name() == name)
    }

    /// What goes wrong, in one sentence.
    pub const fn symptom(self) -> &'static str {
        match self {
            Mistake::NoInputProjection => {
                "queries, keys and values are all x itself: the scores are symmetric (S[i,j] = S[j,i]) and no weights learn what a token should look for"
            }
            Mistake::ScaleBySeqLen => {
                "scores are scaled by 1/√T instead of 1/√D, so softmax is too flat (T > D) or too sharp (T < D)"
            }
            Mistake::MaskByMultiply => {
                "masked scores become 0 instead of −∞, so future positions still get probability"
            }
            Mistake::NoOutputProjection => {
                "each head's output stays in its own channels: the heads are concatenated but never mixed"
            }
            Mistake::DropoutNotApplied => {
                "the dropout layer exists but is never called, so training runs without attention dropout"
            }
            Mistake::SoftmaxOverTwoDims => {
                "each head's whole matrix sums to 1 but its rows do not, so a query's weights are not a distribution"
            }
            Mistake::OverwriteKvGrad => {
                "the query heads of a group share one key/value head, but each overwrites d_k and d_v, so only the group's last head's gradient survives"
            }
        }
    }

    /// A mistake of the backward pass: its run makes both passes (the others are forward only).
    pub const fn backward(self) -> bool {
        matches!(self, Mistake::OverwriteKvGrad)
    }
}

impl fmt::Display for Mistake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of mistakes switched on for a run (empty: the correct implementation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mistakes(u8);

impl Mistakes {
    pub const NONE: Mistakes = Mistakes(0);

    pub fn of(list: &[Mistake]) -> Mistakes {
        Mistakes(list.iter().fold(0, |bits, &m| bits | 1 << m as u8))
    }

    pub const fn has(self, m: Mistake) -> bool {
        self.0 & (1 << m as u8) != 0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn list(self) -> Vec<Mistake> {
        Mistake::ALL.into_iter().filter(|&m| self.has(m)).collect()
    }

    /// A run with these mistakes can make the backward pass: none at all, or only backward ones.
    pub fn allow_backward(self) -> bool {
        self.list().into_iter().all(Mistake::backward)
    }
}

/// Mistake 1: `q = k = v = x` (or `k = v = memory` in cross-attention), with no learned projection.
pub fn no_input_projection<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    (xb, x): (Buf, &[f32]),
    (mb, memory): (Buf, &[f32]),
    q: &mut [f32],
    k: &mut [f32],
    v: &mut [f32],
) {
    let Shape {
        b: B, s: S, t: T, c: C, ..
    } = sh;
    // MISTAKE 1: the queries, keys and values are the inputs themselves
    rec.phase(Phase::NoProj);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..S {
            let qi = (bb * S + i) * C;
            rec.enter(&["i", "qi"], [i, qi]);
            for c in 0..C {
                rec.enter(&["c"], [c]);
                let x_ic = rec.read(xb, x, qi + c);
                rec.write(Buf::Q, q, qi + c, x_ic);
                rec.exit();
            }
            rec.exit();
        }
        for j in 0..T {
            let kj = (bb * T + j) * C;
            rec.enter(&["j", "kj"], [j, kj]);
            for c in 0..C {
                rec.enter(&["c"], [c]);
                let m_jc = rec.read(mb, memory, kj + c);
                rec.write(Buf::K, k, kj + c, m_jc);
                rec.write(Buf::V, v, kj + c, m_jc);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// Mistakes 2 and 3 in the scores pass (compare `attention_mha::scores`).
#[allow(clippy::too_many_arguments)]
pub fn scores<R: Recorder>(rec: &mut R, sh: Shape, mask: &Mask, m: Mistakes, q: &[f32], k: &[f32], scores: &mut [f32]) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let D = sh.d();
    let scale = if m.has(Mistake::ScaleBySeqLen) {
        1.0 / (T as f32).sqrt() // MISTAKE 2: √(sequence length), not √(head size D)
    } else {
        1.0 / (D as f32).sqrt()
    };

    // pass 1: S[b,h,i,j] = q_h,i · k_h,j · scale, then the mask
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
                    if m.has(Mistake::MaskByMultiply) {
                        // MISTAKE 3: scores * mask with a 0/1 mask: a hidden score becomes 0,
                        // not −∞, and softmax still gives it weight
                        let keep = if mask.hides(i, j) { 0.0 } else { 1.0 };
                        s *= keep;
                    } else if mask.hides(i, j) {
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

/// Mistake 6: softmax over dims (2, 3), one whole `S×T` matrix per head, instead of each row
/// (compare `attention_mha::softmax_rows`).
pub fn softmax_over_two_dims<R: Recorder>(rec: &mut R, sh: Shape, scores: &[f32], probs: &mut [f32]) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    // pass 2: MISTAKE 6: P = softmax over all S·T entries of head (bb, hh) at once
    rec.phase(Phase::Softmax);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            let base = (bb * H + hh) * S * T;
            rec.enter(&["hh", "row"], [hh, base]);
            softmax::row_forward(rec, S * T, base, scores, probs, None);
            rec.exit();
        }
        rec.exit();
    }
}

/// Mistake 7, the gradient of the values: `attention_gqa::d_values` with each query head
/// writing its share of `d_v` instead of adding it.
pub fn d_values_overwritten<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    (pb, p): (Buf, &[f32]),
    d_att: &[f32],
    d_v: &mut [f32],
) {
    let Shape {
        b: B,
        s: S,
        t: T,
        h: H,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();
    // pass 2: dV[b,j,kv_h,d] should be the sum over the group's query heads of Σ_i P · dAtt
    attention_gqa::clear(rec, sh, (Buf::DV, d_v));
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
                    // MISTAKE 7: d_v[v_base + d] = s, not += s: the next query head of the
                    // group overwrites this one's share, so only the last head's survives
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

/// Mistake 7, the gradient of the keys: `attention_gqa::d_keys` with each query head writing its
/// share of `d_k` instead of adding it.
pub fn d_keys_overwritten<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    mask: &Mask,
    q: &[f32],
    d_scores: &[f32],
    d_k: &mut [f32],
) {
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
    // pass 5: dK[b,j,kv_h,d] should be the sum over the group's query heads of Σ_i dS · q / √D
    attention_gqa::clear(rec, sh, (Buf::DK, d_k));
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
                    // MISTAKE 7: d_k[k_base + d] = s / √D, not +=: the group's last query head wins
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
