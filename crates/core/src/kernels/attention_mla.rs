//! Multi-head latent attention (DeepSeek-V2): keys and values from one latent row per token.
//!
//! Every head's keys and values are projected up from a latent `c_kv = x·w_dkv` of `R`
//! channels (`[B,T,R]`): `k_nope = c_kv·w_uk` and `v = c_kv·w_uv` (`[B,T,H,D]`), so a decode
//! cache keeps `R` numbers per token for all heads. Position lives in a decoupled part of
//! `DR` channels: a query head is `[q_nope | q_pe]` (`q = x·w_q`, `[B,T,H,D + DR]`), and one
//! rotary key `k_pe = x·w_kr` (`[B,T,DR]`) is shared by every head. There is no norm on the
//! latent here.
//!
//! ```text
//! S[b,h,i,j] = (Σ_{d<D} q[b,i,h,d]·k_nope[b,j,h,d] + Σ_{d≥D} q[b,i,h,d]·k_pe[b,j,d−D]) / √(D + DR)
//! ```
//!
//! Head `hh` of query `i` starts at `q_base = ((bb*S + i)*H + hh)*(D + DR)`, its `q_pe` at
//! `q_base + D`; `k_nope`'s and `v`'s rows are MHA's, `k_base = ((bb*T + j)*H + hh)*D`; `k_pe`'s
//! row is `pe_base = (bb*T + j)*DR`. The loops walk a query head's channels with one `d`, over
//! `0..D` against `k_nope` and over `D..D + DR` against `k_pe`'s channel `e = d − D`. The softmax and the weighted sum
//! are MHA's (`attention_mha.rs`), and the projections `linear.rs`'s.
//!
//! The absorbed decode form ([`decode`]) never makes `k_nope` or `v`: `q_nope·k_nope =
//! (q_nope·w_ukᵀ)·c_kv`, so each step turns its query into the latent space once,
//! `q_lat = q_nope·w_ukᵀ`, scores it against the cached latent rows, sums `o_lat = Σ_j P·c_kv`
//! and projects that up by `w_uv`.

use super::Mask;
use super::rope::{self, LatentKey, Pairs};
use super::softmax;
use crate::tensor::Shape;
use crate::trace::{Buf, MASKED, Phase, Recorder};

/// The latent sizes: `R` channels of `c_kv` (`[shape] kv_rank`), `DR` rotary channels of
/// `q_pe` and `k_pe` (`[shape] rope_dim`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Latent {
    pub r: usize,
    pub dr: usize,
}

impl Latent {
    /// Channels of a query head, `D + DR`, for heads of `D` channels.
    pub const fn q_head(self, D: usize) -> usize {
        D + self.dr
    }

    /// The score scale `1/√(D + DR)`: a query head's width.
    pub fn scale(self, D: usize) -> f32 {
        1.0 / (self.q_head(D) as f32).sqrt()
    }

    /// Numbers a decode cache keeps per token, for every head: `R + DR`.
    pub const fn cache_row(self) -> usize {
        self.r + self.dr
    }
}

/// Pass 1 of forward: the scores from both parts of each query head.
#[allow(clippy::too_many_arguments)]
pub fn scores<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    lat: Latent,
    mask: &Mask,
    q: &[f32],
    (k_nope, k_pe): (&[f32], &[f32]),
    scores: &mut [f32],
) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let (D, DR) = (sh.d(), lat.dr);
    let QD = lat.q_head(D);
    let scale = lat.scale(D);

    // pass 1: S[b,h,i,j] = (q_nope·k_nope + q_pe·k_pe) / √(D + DR): channels d < D of the query
    // head against its own k_nope, the rotary channels d ≥ D against the k_pe every head shares;
    // hidden pairs overwritten with −1e9
    rec.phase(Phase::Scores);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let q_base = ((bb * S + i) * H + hh) * QD;
                rec.enter(&["i", "q_base"], [i, q_base]);
                for j in 0..T {
                    let k_base = ((bb * T + j) * H + hh) * D;
                    let pe_base = (bb * T + j) * DR;
                    let off = ((bb * H + hh) * S + i) * T + j;
                    rec.enter(&["j", "k_base", "off"], [j, k_base, off]);
                    let mut s = 0.0;
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        s += rec.read(Buf::Q, q, q_base + d) * rec.read(Buf::KNope, k_nope, k_base + d);
                        rec.exit();
                    }
                    for d in D..QD {
                        let e = d - D; // the rotary channel
                        rec.enter(&["d", "e", "pe_base"], [d, e, pe_base]);
                        s += rec.read(Buf::Q, q, q_base + d) * rec.read(Buf::KPe, k_pe, pe_base + e);
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

/// Backward of pass 1: `d_q` (both parts of each head), `d_k_nope` per head, and `d_k_pe`,
/// which every head adds to since they all read the one rotary key.
#[allow(clippy::too_many_arguments)]
pub fn scores_back<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    lat: Latent,
    mask: &Mask,
    q: &[f32],
    (k_nope, k_pe): (&[f32], &[f32]),
    d_scores: &[f32],
    (d_q, d_k_nope, d_k_pe): (&mut [f32], &mut [f32], &mut [f32]),
) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let (D, DR) = (sh.d(), lat.dr);
    let QD = lat.q_head(D);
    let scale = lat.scale(D);

    // pass 4: dQ[b,i,h,d] = Σ_j dS[b,h,i,j] · k[j,d] / √(D + DR) over visible pairs, where k is
    // k_nope for d < D and k_pe's channel e = d − D beyond: a masked score was a constant, so
    // nothing flows back
    rec.phase(Phase::ScoresBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let q_base = ((bb * S + i) * H + hh) * QD;
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
                        s += rec.read(Buf::DScores, d_scores, off) * rec.read(Buf::KNope, k_nope, k_base + d);
                        rec.exit();
                    }
                    rec.write(Buf::DQ, d_q, q_base + d, s * scale);
                    rec.exit();
                }
                for d in D..QD {
                    let e = d - D;
                    rec.enter(&["d", "e"], [d, e]);
                    let mut s = 0.0;
                    for j in 0..T {
                        if mask.hides(i, j) {
                            continue;
                        }
                        let pe_base = (bb * T + j) * DR;
                        let off = ((bb * H + hh) * S + i) * T + j;
                        rec.enter(&["j", "pe_base", "off"], [j, pe_base, off]);
                        s += rec.read(Buf::DScores, d_scores, off) * rec.read(Buf::KPe, k_pe, pe_base + e);
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

    // pass 5: dK_nope[b,j,h,d] = Σ_i dS[b,h,i,j] · q_nope[b,i,h,d] / √(D + DR), head by head
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
                        let q_base = ((bb * S + i) * H + hh) * QD;
                        let off = ((bb * H + hh) * S + i) * T + j;
                        rec.enter(&["i", "q_base", "off"], [i, q_base, off]);
                        s += rec.read(Buf::DScores, d_scores, off) * rec.read(Buf::Q, q, q_base + d);
                        rec.exit();
                    }
                    rec.write(Buf::DKNope, d_k_nope, k_base + d, s * scale);
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }

    // pass 6: dK_pe[b,j,d − D] = Σ_h Σ_i dS[b,h,i,j] · q[b,i,h,d] / √(D + DR) for the rotary
    // channels d ≥ D: one rotary key for all heads, so its gradient sums over the heads as well
    // as the queries
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for j in 0..T {
            let pe_base = (bb * T + j) * DR;
            rec.enter(&["j", "pe_base"], [j, pe_base]);
            for d in D..QD {
                let e = d - D;
                rec.enter(&["d", "e"], [d, e]);
                let mut s = 0.0;
                for hh in 0..H {
                    rec.enter(&["hh"], [hh]);
                    for i in 0..S {
                        if mask.hides(i, j) {
                            continue;
                        }
                        let q_base = ((bb * S + i) * H + hh) * QD;
                        let off = ((bb * H + hh) * S + i) * T + j;
                        rec.enter(&["i", "q_base", "off"], [i, q_base, off]);
                        s += rec.read(Buf::DScores, d_scores, off) * rec.read(Buf::Q, q, q_base + d);
                        rec.exit();
                    }
                    rec.exit();
                }
                rec.write(Buf::DKPe, d_k_pe, pe_base + e, s * scale);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// The weights a decode run reads: `w_q [C, H·(D + DR)]`, `w_dkv [C, R]`, `w_kr [C, DR]`,
/// `w_uk, w_uv [R, H·D]`, `w_proj [C, C]`, `b_proj [C]`, the tokens `x [B,T,C]`, and the
/// rotation if the run has one.
pub struct Weights<'a> {
    pub x: &'a [f32],
    pub w_q: &'a [f32],
    pub w_dkv: &'a [f32],
    pub w_kr: &'a [f32],
    pub w_uk: &'a [f32],
    pub w_uv: &'a [f32],
    pub w_proj: &'a [f32],
    /// `None` for a model without biases.
    pub b_proj: Option<&'a [f32]>,
    /// The rotation of `q_pe` and `k_pe` and its tables `rope_cos, rope_sin [T, DR/2]`.
    pub rope: Option<(Pairs, &'a [f32], &'a [f32])>,
}

/// What a decode run writes: the cache `kv_cache [B,T,R + DR]` (`[c_kv | k_pe]` per token),
/// each step's `q [B,T,H,D + DR]`, `q_lat` and `o_lat [B,T,H,R]`, the scores and probabilities
/// `[B,H,T,T]` of the keys each step sees, `att [B,T,C]` and `out [B,T,C]`.
pub struct Written<'a> {
    pub kv_cache: &'a mut [f32],
    pub q: &'a mut [f32],
    pub q_lat: &'a mut [f32],
    pub scores: &'a mut [f32],
    pub probs: &'a mut [f32],
    pub o_lat: &'a mut [f32],
    pub att: &'a mut [f32],
    pub out: &'a mut [f32],
}

/// The absorbed decode form: each sequence generated token by token from the latent cache.
/// Step `t` caches its own `[c_kv | k_pe]` row, projects its query, absorbs `w_uk` into it,
/// scores the `t + 1` cached rows, takes the softmax, sums the latent rows and projects up.
pub fn decode<R: Recorder>(rec: &mut R, sh: Shape, lat: Latent, w: &Weights, o: Written) {
    let Shape {
        b: B, t: T, c: C, h: H, ..
    } = sh;
    let (D, R_, DR) = (sh.d(), lat.r, lat.dr);
    let (QD, KV) = (lat.q_head(D), lat.cache_row());
    let scale = lat.scale(D);
    let Written {
        kv_cache,
        q,
        q_lat,
        scores,
        probs,
        o_lat,
        att,
        out,
    } = o;
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for t in 0..T {
            let xi = (bb * T + t) * C;
            let ci = (bb * T + t) * KV;
            rec.enter(&["t", "xi", "ci"], [t, xi, ci]);

            // step 1: the token's cache row, c_kv = x_t·w_dkv then k_pe = x_t·w_kr beside it:
            // R + DR numbers for all heads, where MHA caches 2·H·D
            rec.phase(Phase::DecodeLatent);
            for r in 0..KV {
                rec.enter(&["r"], [r]);
                let mut s = 0.0;
                for c in 0..C {
                    if r < R_ {
                        rec.enter(&["c", "w_off"], [c, c * R_ + r]);
                        s += rec.read(Buf::X, w.x, xi + c) * rec.read(Buf::WDkv, w.w_dkv, c * R_ + r);
                    } else {
                        rec.enter(&["c", "w_off"], [c, c * DR + r - R_]);
                        s += rec.read(Buf::X, w.x, xi + c) * rec.read(Buf::WKr, w.w_kr, c * DR + r - R_);
                    }
                    rec.exit();
                }
                rec.write(Buf::KvCache, kv_cache, ci + r, s);
                rec.exit();
            }

            // step 2: the query, q_t = x_t·w_q, every head's [q_nope | q_pe]
            rec.phase(Phase::DecodeQ);
            let qi = (bb * T + t) * H * QD;
            rec.enter(&["qi"], [qi]);
            for o in 0..H * QD {
                rec.enter(&["o"], [o]);
                let mut s = 0.0;
                for c in 0..C {
                    rec.enter(&["c", "w_off"], [c, c * H * QD + o]);
                    s += rec.read(Buf::X, w.x, xi + c) * rec.read(Buf::WQ, w.w_q, c * H * QD + o);
                    rec.exit();
                }
                rec.write(Buf::Q, q, qi + o, s);
                rec.exit();
            }
            rec.exit();

            // step 2b: rotary positions turn the new q_pe and the new row's k_pe by t·θ_m (the
            // cached rows were turned at their own steps)
            if let Some((pairs, cos, sin)) = w.rope {
                let (rows, key) = ((bb..bb + 1, t..t + 1), (LatentKey::Cache { r: R_ }, &mut *kv_cache));
                rope::forward_latent(rec, sh, DR, pairs, rows, (cos, sin), q, key);
            }

            // step 3: absorb w_uk into the query: q_lat[h,r] = Σ_d q_nope[h,d]·w_uk[r, h·D + d],
            // so that q_lat·c_kv[j] = q_nope·k_nope[j] without ever making k_nope
            rec.phase(Phase::DecodeAbsorb);
            for hh in 0..H {
                let q_base = ((bb * T + t) * H + hh) * QD;
                let l_base = ((bb * T + t) * H + hh) * R_;
                rec.enter(&["hh", "q_base", "l_base"], [hh, q_base, l_base]);
                for r in 0..R_ {
                    rec.enter(&["r"], [r]);
                    let mut s = 0.0;
                    for d in 0..D {
                        rec.enter(&["d", "w_off"], [d, r * H * D + hh * D + d]);
                        s += rec.read(Buf::Q, q, q_base + d) * rec.read(Buf::WUk, w.w_uk, r * H * D + hh * D + d);
                        rec.exit();
                    }
                    rec.write(Buf::QLat, q_lat, l_base + r, s);
                    rec.exit();
                }
                rec.exit();
            }

            // step 4: S[t,j] = (q_lat·c_kv[j] + q_pe·k_pe[j]) / √(D + DR), both read from the
            // cached row of each position j ≤ t: its R latent channels, then its DR rotary ones
            // against the query's channels d ≥ D
            rec.phase(Phase::DecodeScores);
            for hh in 0..H {
                let (q_base, l_base) = (((bb * T + t) * H + hh) * QD, ((bb * T + t) * H + hh) * R_);
                rec.enter(&["hh", "q_base", "l_base"], [hh, q_base, l_base]);
                for j in 0..=t {
                    let kv_base = (bb * T + j) * KV;
                    let off = ((bb * H + hh) * T + t) * T + j;
                    rec.enter(&["j", "kv_base", "off"], [j, kv_base, off]);
                    let mut s = 0.0;
                    for r in 0..R_ {
                        rec.enter(&["r"], [r]);
                        s += rec.read(Buf::QLat, q_lat, l_base + r) * rec.read(Buf::KvCache, kv_cache, kv_base + r);
                        rec.exit();
                    }
                    for d in D..QD {
                        // the rotary channel e = d − D is column r = R + e of the cache row
                        let (e, r) = (d - D, R_ + d - D);
                        rec.enter(&["d", "e", "r"], [d, e, r]);
                        s += rec.read(Buf::Q, q, q_base + d) * rec.read(Buf::KvCache, kv_cache, kv_base + r);
                        rec.exit();
                    }
                    rec.write(Buf::Scores, scores, off, s * scale);
                    rec.exit();
                }
                rec.exit();
            }

            // step 5: softmax over the t + 1 scores of each head's row
            rec.phase(Phase::DecodeSoftmax);
            for hh in 0..H {
                let row = ((bb * H + hh) * T + t) * T;
                rec.enter(&["hh", "row"], [hh, row]);
                softmax::row_forward(rec, t + 1, row, scores, probs, None);
                rec.exit();
            }

            // step 6: o_lat[h,r] = Σ_j P[t,j]·c_kv[j,r]: the weighted sum in the latent space
            rec.phase(Phase::DecodeLatentSum);
            for hh in 0..H {
                let l_base = ((bb * T + t) * H + hh) * R_;
                rec.enter(&["hh", "l_base"], [hh, l_base]);
                for r in 0..R_ {
                    rec.enter(&["r"], [r]);
                    let mut s = 0.0;
                    for j in 0..=t {
                        let kv_base = (bb * T + j) * KV;
                        let off = ((bb * H + hh) * T + t) * T + j;
                        rec.enter(&["j", "kv_base", "off"], [j, kv_base, off]);
                        s += rec.read(Buf::Probs, probs, off) * rec.read(Buf::KvCache, kv_cache, kv_base + r);
                        rec.exit();
                    }
                    rec.write(Buf::OLat, o_lat, l_base + r, s);
                    rec.exit();
                }
                rec.exit();
            }

            // step 7: up to each head's values, att[h,d] = Σ_r o_lat[h,r]·w_uv[r, h·D + d]
            rec.phase(Phase::DecodeUp);
            for hh in 0..H {
                let (l_base, a_base) = (((bb * T + t) * H + hh) * R_, xi + hh * D);
                rec.enter(&["hh", "l_base", "a_base"], [hh, l_base, a_base]);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    let mut s = 0.0;
                    for r in 0..R_ {
                        rec.enter(&["r", "w_off"], [r, r * H * D + hh * D + d]);
                        s +=
                            rec.read(Buf::OLat, o_lat, l_base + r) * rec.read(Buf::WUv, w.w_uv, r * H * D + hh * D + d);
                        rec.exit();
                    }
                    rec.write(Buf::Att, att, a_base + d, s);
                    rec.exit();
                }
                rec.exit();
            }

            // step 8: out_t = att_t·w_proj + b_proj
            rec.phase(Phase::DecodeOut);
            for o in 0..C {
                rec.enter(&["o"], [o]);
                let mut s = w.b_proj.map_or(0.0, |b| rec.read(Buf::BProj, b, o));
                for c in 0..C {
                    rec.enter(&["c", "w_off"], [c, c * C + o]);
                    s += rec.read(Buf::Att, att, xi + c) * rec.read(Buf::WProj, w.w_proj, c * C + o);
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
