//! Attention dropout. During training each probability is kept with chance `1 − p` and the
//! kept ones are scaled by `1/(1 − p)`, so the expected weighted sum is unchanged; in evaluation
//! nothing is dropped. The keep mask (1 = kept, 0 = dropped) is an input buffer of its own,
//! drawn from a seed, so a trace shows exactly which probabilities were zeroed.
//!
//! Layout: the mask, `probs` and `probs_drop` are `[B,H,S,T]` at `((bb*H + hh)*S + i)*T + j`
//! (`H = 1` for the baseline kernel).

use crate::tensor::Shape;
use crate::trace::{Buf, Phase, Recorder};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A keep mask of `n` entries: 1 with probability `1 − p`, else 0, drawn in offset order.
pub fn keep_mask(n: usize, p: f32, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| if rng.random::<f32>() < p { 0.0 } else { 1.0 })
        .collect()
}

/// `probs_drop[off] = probs[off] · keep[off] / (1 − p)`.
pub fn forward<R: Recorder>(rec: &mut R, sh: Shape, p: f32, keep: &[f32], probs: &[f32], probs_drop: &mut [f32]) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let rescale = 1.0 / (1.0 - p);
    // dropout: zero the dropped probabilities, rescale the kept ones by 1/(1 − p)
    rec.phase(Phase::Dropout);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let row = ((bb * H + hh) * S + i) * T;
                rec.enter(&["i", "row"], [i, row]);
                for j in 0..T {
                    rec.enter(&["j", "off"], [j, row + j]);
                    let kept = rec.read(Buf::DropMask, keep, row + j);
                    let p_ij = rec.read(Buf::Probs, probs, row + j);
                    rec.write(Buf::ProbsDrop, probs_drop, row + j, p_ij * kept * rescale);
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// `d_probs[off] = d_probs_drop[off] · keep[off] / (1 − p)`: a dropped probability gets no gradient.
pub fn backward<R: Recorder>(rec: &mut R, sh: Shape, p: f32, keep: &[f32], d_probs_drop: &[f32], d_probs: &mut [f32]) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let rescale = 1.0 / (1.0 - p);
    // dropout backward: the same mask and scale applied to the gradient
    rec.phase(Phase::DropoutBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let row = ((bb * H + hh) * S + i) * T;
                rec.enter(&["i", "row"], [i, row]);
                for j in 0..T {
                    rec.enter(&["j", "off"], [j, row + j]);
                    let kept = rec.read(Buf::DropMask, keep, row + j);
                    let g = rec.read(Buf::DProbsDrop, d_probs_drop, row + j);
                    rec.write(Buf::DProbs, d_probs, row + j, g * kept * rescale);
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}
