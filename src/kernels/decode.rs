//! Generation from a key/value cache, one token at a time (forward only): how a trained model
//! writes text. At step `t` only token `t` is new: it is projected once, its key and value are
//! written into row `t` of `k_cache` and `v_cache`, and its query attends over the rows `0..=t`
//! the cache already holds. Nothing of tokens `0..t` is computed again, and no score of a later
//! token exists yet, so no mask is needed: the causal mask is the order of the steps.
//!
//! Layouts: `x, q, att, out [B,T,C]` share the row start `xi = (bb*T + t)*C`; the caches are
//! `[B,T,H_kv,D]` with row start `ci = (bb*T + t)*H_kv*D`, and query head `hh` reads cache head
//! `kv_h = hh / (H/H_kv)` of position `j` at `k_base = ((bb*T + j)*H_kv + kv_h)*D` (llama2.c's
//! `loff + pos*kv_dim + (h/kv_mul)*head_size`, with the batch in place of the layer). MHA is
//! `H_kv = H`, the baseline `H = H_kv = 1` and `D = C`. Scores and probs are `[B,H,T,T]`; step
//! `t` fills row `t` up to `j = t`.
//!
//! Every sum is taken in the order of the full-sequence kernels (`linear.rs`, the attention
//! files), so `out` is the causal run's `out` bit for bit.

use super::rope::{self, Pairs};
use super::softmax;
use crate::tensor::Shape;
use crate::trace::{Buf, Phase, Recorder};

/// What a decode run reads: the tokens `x`, the fused projection, the output projection, and
/// the rotation tables when it uses rotary positions.
pub struct Given<'a> {
    pub x: &'a [f32],
    pub w_qkv: &'a [f32],
    pub b_qkv: &'a [f32],
    pub w_proj: &'a [f32],
    pub b_proj: &'a [f32],
    pub rope: Option<(Pairs, &'a [f32], &'a [f32])>,
}

/// What a decode run writes: each token's query, the caches, the score rows and the outputs.
pub struct Written<'a> {
    pub q: &'a mut [f32],
    pub k_cache: &'a mut [f32],
    pub v_cache: &'a mut [f32],
    pub scores: &'a mut [f32],
    pub probs: &'a mut [f32],
    pub att: &'a mut [f32],
    pub out: &'a mut [f32],
}

/// Generates the `T` positions of each of the `B` sequences in turn.
pub fn generate<R: Recorder>(rec: &mut R, sh: Shape, g: &Given<'_>, w: Written<'_>) {
    let Shape {
        b: B,
        t: T,
        c: C,
        h: H,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();
    let scale = 1.0 / (D as f32).sqrt();
    let Written {
        q,
        k_cache,
        v_cache,
        scores,
        probs,
        att,
        out,
    } = w;
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for t in 0..T {
            let xi = (bb * T + t) * C;
            let ci = (bb * T + t) * H_kv * D;
            rec.enter(&["t", "xi", "ci"], [t, xi, ci]);

            // step 1: project token t once: qkv = x[t]·W_qkv + b_qkv, with q kept for this step
            // and k, v written straight into row t of the caches
            rec.phase(Phase::DecodeQkv);
            for o in 0..C + 2 * H_kv * D {
                rec.enter(&["o"], [o]);
                let mut s = rec.read(Buf::BQkv, g.b_qkv, o);
                for c in 0..C {
                    let w_off = c * (C + 2 * H_kv * D) + o;
                    rec.enter(&["c", "w_off"], [c, w_off]);
                    s += rec.read(Buf::X, g.x, xi + c) * rec.read(Buf::WQkv, g.w_qkv, w_off);
                    rec.exit();
                }
                if o < C {
                    rec.write(Buf::Q, q, xi + o, s);
                } else if o < C + H_kv * D {
                    rec.write(Buf::KCache, k_cache, ci + o - C, s);
                } else {
                    rec.write(Buf::VCache, v_cache, ci + o - C - H_kv * D, s);
                }
                rec.exit();
            }

            // step 2: rotary positions turn the new query and key by t·θ_m (the cached keys
            // were turned at their own steps)
            if let Some((pairs, cos, sin)) = g.rope {
                let rows = (bb..bb + 1, t..t + 1);
                rope::forward(rec, sh, pairs, rows, (cos, sin), q, (Buf::KCache, k_cache));
            }

            // step 3: scores of query t against the cached keys 0..=t, head by head
            rec.phase(Phase::DecodeScores);
            for hh in 0..H {
                let kv_h = hh / (H / H_kv);
                let q_base = xi + hh * D;
                rec.enter(&["hh", "kv_h", "q_base"], [hh, kv_h, q_base]);
                for j in 0..=t {
                    let k_base = ((bb * T + j) * H_kv + kv_h) * D;
                    let off = ((bb * H + hh) * T + t) * T + j;
                    rec.enter(&["j", "k_base", "off"], [j, k_base, off]);
                    let mut s = 0.0;
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        s += rec.read(Buf::Q, q, q_base + d) * rec.read(Buf::KCache, k_cache, k_base + d);
                        rec.exit();
                    }
                    rec.write(Buf::Scores, scores, off, s * scale);
                    rec.exit();
                }
                rec.exit();
            }

            // step 4: softmax over the t + 1 scores of each head's row
            rec.phase(Phase::DecodeSoftmax);
            for hh in 0..H {
                let row = ((bb * H + hh) * T + t) * T;
                rec.enter(&["hh", "row"], [hh, row]);
                softmax::row_forward(rec, t + 1, row, scores, probs, None);
                rec.exit();
            }

            // step 5: att[t] = Σ_j P[t,j] · v_cache[j], the values read from the cache
            rec.phase(Phase::DecodeSum);
            for hh in 0..H {
                let kv_h = hh / (H / H_kv);
                let a_base = xi + hh * D;
                rec.enter(&["hh", "kv_h", "a_base"], [hh, kv_h, a_base]);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    let mut s = 0.0;
                    for j in 0..=t {
                        let v_base = ((bb * T + j) * H_kv + kv_h) * D;
                        let off = ((bb * H + hh) * T + t) * T + j;
                        rec.enter(&["j", "v_base", "off"], [j, v_base, off]);
                        s += rec.read(Buf::Probs, probs, off) * rec.read(Buf::VCache, v_cache, v_base + d);
                        rec.exit();
                    }
                    rec.write(Buf::Att, att, a_base + d, s);
                    rec.exit();
                }
                rec.exit();
            }

            // step 6: out[t] = att[t]·W_proj + b_proj
            rec.phase(Phase::DecodeOut);
            for o in 0..C {
                rec.enter(&["o"], [o]);
                let mut s = rec.read(Buf::BProj, g.b_proj, o);
                for c in 0..C {
                    let wo_off = c * C + o;
                    rec.enter(&["c", "wo_off"], [c, wo_off]);
                    s += rec.read(Buf::Att, att, xi + c) * rec.read(Buf::WProj, g.w_proj, wo_off);
                    rec.exit();
                }
                rec.write(Buf::Out, out, xi + o, s);
                rec.exit();
            }

            rec.exit();
        }
        rec.exit();
    }
}
