//! FlashAttention: multi-head attention computed tile by tile, so the `[B,H,S,T]` scores and
//! probabilities never exist in global memory.
//!
//! The global buffers are MHA's (`q, att [B,S,H,D]`, `k, v [B,T,H,D]`, head `hh` of query `i`
//! at `q_base = ((bb*S + i)*H + hh)*D`), plus one number per query row, the log-sum-exp
//! `lse [B,H,S]` at `(bb*H + hh)*S + i`. The rest is the tile-local working set, what a GPU keeps
//! in on-chip SRAM: a query tile of `br` rows (`q_tile [br,D]`, rows `ii`, query `i = i0 + ii`),
//! a key tile of `bc` columns (`k_tile, v_tile [bc,D]`, rows `jj`, key `j = j0 + jj`), the score
//! tile `s_tile [br,bc]` at `ii*bc + jj`, the running row maximum `m [br]`, the running row sum
//! `l [br]` and the output accumulator `acc [br,D]`.
//!
//! Forward follows FlashAttention-2 (Dao, 2023): for each query tile, the key tiles one after
//! another, each folded into `m`, `l` and `acc` by the online softmax; the output tile and its
//! `lse` are written once at the end. Backward recomputes every probability from `q`, `k` and
//! `lse` instead of storing them. A tile whose every pair the mask hides is skipped (causal:
//! the tiles above the diagonal); a diagonal tile computes all its scores and overwrites the
//! hidden ones with −1e9, as `attention_mha.rs` does.
//!
//! These are the reference loops, and the only ones: traced and untraced runs both execute them
//! (untraced with `NoRecord`, whose calls compile away), chosen in `dispatch.rs`.

use super::Mask;
use super::softmax::Sinks;
use crate::tensor::Shape;
use crate::tensor::simd::exp;
use crate::trace::{Buf, MASKED, Phase, Recorder};

/// The tile sizes: `br` query rows and `bc` key columns per tile (the scenario's `[flash]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tiles {
    pub br: usize,
    pub bc: usize,
}

impl Default for Tiles {
    fn default() -> Self {
        Tiles { br: 2, bc: 2 }
    }
}

impl Tiles {
    /// The tiles a run of `S` queries and `T` keys uses: a tile never has more rows than there
    /// are queries, nor more columns than keys (nor fewer than one).
    pub fn fit(self, sh: Shape) -> FittedTiles {
        FittedTiles(Tiles {
            br: self.br.clamp(1, sh.s.max(1)),
            bc: self.bc.clamp(1, sh.t.max(1)),
        })
    }

    /// Floats of the tile-local working set of forward (`q_tile, k_tile, v_tile, s_tile, m,
    /// l, acc`) for head size `D`: the on-chip memory `M` the traffic formulas speak of.
    pub fn forward_floats(self, d: usize) -> usize {
        let Tiles { br, bc } = self;
        br * d + 2 * bc * d + br * bc + 2 * br + br * d
    }
}

/// Tile sizes fitted to a run's sizes by [`Tiles::fit`], the only way to make them: what the
/// kernels, the buffer registry and the event counts all read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FittedTiles(Tiles);

impl FittedTiles {
    /// `br` query rows and `bc` key columns per tile.
    pub fn sizes(self) -> Tiles {
        self.0
    }
}

/// The tile-local buffers of forward.
pub struct ForwardTiles<'a> {
    pub q_t: &'a mut [f32],
    pub k_t: &'a mut [f32],
    pub v_t: &'a mut [f32],
    pub s_t: &'a mut [f32],
    pub m: &'a mut [f32],
    pub l: &'a mut [f32],
    pub acc: &'a mut [f32],
}

/// The tile-local buffers of backward (the q, k, v and score tiles are forward's).
pub struct BackwardTiles<'a> {
    pub q_t: &'a mut [f32],
    pub k_t: &'a mut [f32],
    pub v_t: &'a mut [f32],
    pub s_t: &'a mut [f32],
    pub do_t: &'a mut [f32],
    pub ds_t: &'a mut [f32],
    pub dk_t: &'a mut [f32],
    pub dv_t: &'a mut [f32],
}

/// Forward: `att` and `lse` from `q`, `k`, `v`, one query tile at a time; `sink` holds each
/// head's sink logit when there are some (gpt-oss).
#[allow(clippy::too_many_arguments)]
pub fn forward<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    tiles: FittedTiles,
    mask: &Mask,
    (q, k, v): (&[f32], &[f32], &[f32]),
    sink: Option<&[f32]>,
    att: &mut [f32],
    lse: &mut [f32],
    tile: ForwardTiles<'_>,
) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let D = sh.d();
    let Tiles { br, bc } = tiles.sizes();
    let scale = 1.0 / (D as f32).sqrt();
    let ForwardTiles {
        q_t,
        k_t,
        v_t,
        s_t,
        m,
        l,
        acc,
    } = tile;

    // the whole forward pass is one loop nest: per query tile, per key tile, the online softmax
    rec.phase(Phase::Flash);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i0 in (0..S).step_by(br) {
                let i1 = (i0 + br).min(S);
                rec.enter(&["i0"], [i0]);
                // load the query tile; start each row at m = −∞, l = 0, acc = 0, or with a sink
                // logit at m = sink, l = 1: its e^(sink − m) is the first term of the row's sum
                for ii in 0..i1 - i0 {
                    let q_base = ((bb * S + i0 + ii) * H + hh) * D;
                    rec.enter(&["ii", "q_base"], [ii, q_base]);
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        let x = rec.read(Buf::Q, q, q_base + d);
                        rec.write(Buf::QTile, q_t, ii * D + d, x);
                        rec.write(Buf::Acc, acc, ii * D + d, 0.0);
                        rec.exit();
                    }
                    let (m_start, l_start) = match sink {
                        Some(sink) => (rec.read(Buf::Sink, sink, hh), 1.0),
                        None => (f32::NEG_INFINITY, 0.0),
                    };
                    rec.write(Buf::RowMax, m, ii, m_start);
                    rec.write(Buf::RowSum, l, ii, l_start);
                    rec.exit();
                }
                for j0 in (0..T).step_by(bc) {
                    let j1 = (j0 + bc).min(T);
                    // a tile the mask hides entirely adds nothing: causal skips those above the diagonal
                    if mask.hides_tile(i0..i1, j0..j1) {
                        continue;
                    }
                    rec.enter(&["j0"], [j0]);
                    // load the key and value tiles
                    for jj in 0..j1 - j0 {
                        let k_base = ((bb * T + j0 + jj) * H + hh) * D;
                        rec.enter(&["jj", "k_base"], [jj, k_base]);
                        for d in 0..D {
                            rec.enter(&["d"], [d]);
                            let x = rec.read(Buf::K, k, k_base + d);
                            rec.write(Buf::KTile, k_t, jj * D + d, x);
                            let y = rec.read(Buf::V, v, k_base + d);
                            rec.write(Buf::VTile, v_t, jj * D + d, y);
                            rec.exit();
                        }
                        rec.exit();
                    }
                    // S_tile = Q_tile·K_tileᵀ/√D; a hidden pair is overwritten with −1e9
                    for ii in 0..i1 - i0 {
                        rec.enter(&["ii"], [ii]);
                        for jj in 0..j1 - j0 {
                            rec.enter(&["jj"], [jj]);
                            let mut s = 0.0;
                            for d in 0..D {
                                rec.enter(&["d"], [d]);
                                s += rec.read(Buf::QTile, q_t, ii * D + d) * rec.read(Buf::KTile, k_t, jj * D + d);
                                rec.exit();
                            }
                            s *= scale;
                            if mask.hides(i0 + ii, j0 + jj) {
                                s = MASKED;
                            }
                            rec.write(Buf::STile, s_t, ii * bc + jj, s);
                            rec.exit();
                        }
                        rec.exit();
                    }
                    // online softmax, row by row: m_new = max(m_old, rowmax(S_tile)),
                    // P_tile = e^(S_tile − m_new) (in place of S_tile),
                    // l_new = e^(m_old − m_new)·l_old + rowsum(P_tile),
                    // acc_new = e^(m_old − m_new)·acc_old + P_tile·V_tile
                    for ii in 0..i1 - i0 {
                        rec.enter(&["ii"], [ii]);
                        let m_old = rec.read(Buf::RowMax, m, ii);
                        let mut m_new = m_old;
                        for jj in 0..j1 - j0 {
                            rec.enter(&["jj"], [jj]);
                            m_new = m_new.max(rec.read(Buf::STile, s_t, ii * bc + jj));
                            rec.exit();
                        }
                        let mut rowsum = 0.0;
                        for jj in 0..j1 - j0 {
                            rec.enter(&["jj"], [jj]);
                            let p = exp(rec.read(Buf::STile, s_t, ii * bc + jj) - m_new);
                            rec.write(Buf::STile, s_t, ii * bc + jj, p);
                            rowsum += p;
                            rec.exit();
                        }
                        let alpha = exp(m_old - m_new);
                        let l_old = rec.read(Buf::RowSum, l, ii);
                        rec.write(Buf::RowSum, l, ii, alpha * l_old + rowsum);
                        rec.write(Buf::RowMax, m, ii, m_new);
                        for d in 0..D {
                            rec.enter(&["d"], [d]);
                            let mut a = alpha * rec.read(Buf::Acc, acc, ii * D + d);
                            for jj in 0..j1 - j0 {
                                rec.enter(&["jj"], [jj]);
                                a += rec.read(Buf::STile, s_t, ii * bc + jj) * rec.read(Buf::VTile, v_t, jj * D + d);
                                rec.exit();
                            }
                            rec.write(Buf::Acc, acc, ii * D + d, a);
                            rec.exit();
                        }
                        rec.exit();
                    }
                    rec.exit();
                }
                // write the output tile once: att = acc / l, and lse = m + ln l for backward
                for ii in 0..i1 - i0 {
                    let a_base = ((bb * S + i0 + ii) * H + hh) * D;
                    let off = (bb * H + hh) * S + i0 + ii;
                    rec.enter(&["ii", "a_base", "off"], [ii, a_base, off]);
                    let l_i = rec.read(Buf::RowSum, l, ii);
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        let a = rec.read(Buf::Acc, acc, ii * D + d);
                        rec.write(Buf::Att, att, a_base + d, a / l_i);
                        rec.exit();
                    }
                    let m_i = rec.read(Buf::RowMax, m, ii);
                    rec.write(Buf::Lse, lse, off, m_i + l_i.ln());
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// Backward: `d_q`, `d_k`, `d_v` from `d_att`, recomputing the probabilities tile by tile
/// (and, with sink logits, each row's sink probability `p_sink`, for their gradient).
#[allow(clippy::too_many_arguments)]
pub fn backward<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    tiles: FittedTiles,
    mask: &Mask,
    (q, k, v): (&[f32], &[f32], &[f32]),
    (att, lse): (&[f32], &[f32]),
    d_att: &[f32],
    delta: &mut [f32],
    mut sink: Option<Sinks<'_>>,
    (d_q, d_k, d_v): (&mut [f32], &mut [f32], &mut [f32]),
    tile: BackwardTiles<'_>,
) {
    let Shape {
        b: B, s: S, t: T, h: H, ..
    } = sh;
    let D = sh.d();
    let Tiles { br, bc } = tiles.sizes();
    let scale = 1.0 / (D as f32).sqrt();
    let BackwardTiles {
        q_t,
        k_t,
        v_t,
        s_t,
        do_t,
        ds_t,
        dk_t,
        dv_t,
    } = tile;

    // pass 1: D_i = Σ_d dO[b,i,h,d]·O[b,i,h,d] (= Σ_j dP·P of softmax backward), one number per
    // row; dQ starts at 0, since every key tile adds its part to it; a sink logit's share of the
    // row is recomputed from lse as the tiles' P are, P_sink = e^(sink − lse)
    rec.phase(Phase::FlashDelta);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for i in 0..S {
                let a_base = ((bb * S + i) * H + hh) * D;
                let off = (bb * H + hh) * S + i;
                rec.enter(&["i", "a_base", "off"], [i, a_base, off]);
                let mut s = 0.0;
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    s += rec.read(Buf::DAtt, d_att, a_base + d) * rec.read(Buf::Att, att, a_base + d);
                    rec.exit();
                }
                rec.write(Buf::Delta, delta, off, s);
                for d in 0..D {
                    rec.enter(&["d"], [d]);
                    rec.write(Buf::DQ, d_q, a_base + d, 0.0);
                    rec.exit();
                }
                if let Some(sk) = sink.as_mut() {
                    let p = exp(rec.read(Buf::Sink, sk.sink, hh) - rec.read(Buf::Lse, lse, off));
                    rec.write(Buf::PSink, sk.p_sink, off, p);
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }

    // pass 2: key tiles outside, query tiles inside (FlashAttention-2's backward): dK and dV
    // of a key tile build up on chip and are written once; dQ is added to in global memory
    rec.phase(Phase::FlashBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for hh in 0..H {
            rec.enter(&["hh"], [hh]);
            for j0 in (0..T).step_by(bc) {
                let j1 = (j0 + bc).min(T);
                rec.enter(&["j0"], [j0]);
                // load the key and value tiles; dK_tile = dV_tile = 0
                for jj in 0..j1 - j0 {
                    let k_base = ((bb * T + j0 + jj) * H + hh) * D;
                    rec.enter(&["jj", "k_base"], [jj, k_base]);
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        let x = rec.read(Buf::K, k, k_base + d);
                        rec.write(Buf::KTile, k_t, jj * D + d, x);
                        let y = rec.read(Buf::V, v, k_base + d);
                        rec.write(Buf::VTile, v_t, jj * D + d, y);
                        rec.write(Buf::DKTile, dk_t, jj * D + d, 0.0);
                        rec.write(Buf::DVTile, dv_t, jj * D + d, 0.0);
                        rec.exit();
                    }
                    rec.exit();
                }
                for i0 in (0..S).step_by(br) {
                    let i1 = (i0 + br).min(S);
                    if mask.hides_tile(i0..i1, j0..j1) {
                        continue;
                    }
                    rec.enter(&["i0"], [i0]);
                    // load the query tile and its upstream gradient dO_tile
                    for ii in 0..i1 - i0 {
                        let q_base = ((bb * S + i0 + ii) * H + hh) * D;
                        rec.enter(&["ii", "q_base"], [ii, q_base]);
                        for d in 0..D {
                            rec.enter(&["d"], [d]);
                            let x = rec.read(Buf::Q, q, q_base + d);
                            rec.write(Buf::QTile, q_t, ii * D + d, x);
                            let g = rec.read(Buf::DAtt, d_att, q_base + d);
                            rec.write(Buf::DOTile, do_t, ii * D + d, g);
                            rec.exit();
                        }
                        rec.exit();
                    }
                    // recompute P_tile = e^(Q_tile·K_tileᵀ/√D − lse); a hidden pair gives e^(−1e9 − lse) = 0
                    for ii in 0..i1 - i0 {
                        let off = (bb * H + hh) * S + i0 + ii;
                        rec.enter(&["ii", "off"], [ii, off]);
                        let lse_i = rec.read(Buf::Lse, lse, off);
                        for jj in 0..j1 - j0 {
                            rec.enter(&["jj"], [jj]);
                            let mut s = 0.0;
                            for d in 0..D {
                                rec.enter(&["d"], [d]);
                                s += rec.read(Buf::QTile, q_t, ii * D + d) * rec.read(Buf::KTile, k_t, jj * D + d);
                                rec.exit();
                            }
                            s *= scale;
                            if mask.hides(i0 + ii, j0 + jj) {
                                s = MASKED;
                            }
                            rec.write(Buf::STile, s_t, ii * bc + jj, exp(s - lse_i));
                            rec.exit();
                        }
                        rec.exit();
                    }
                    // dV_tile += P_tileᵀ·dO_tile
                    for jj in 0..j1 - j0 {
                        rec.enter(&["jj"], [jj]);
                        for d in 0..D {
                            rec.enter(&["d"], [d]);
                            let mut a = rec.read(Buf::DVTile, dv_t, jj * D + d);
                            for ii in 0..i1 - i0 {
                                rec.enter(&["ii"], [ii]);
                                a += rec.read(Buf::STile, s_t, ii * bc + jj) * rec.read(Buf::DOTile, do_t, ii * D + d);
                                rec.exit();
                            }
                            rec.write(Buf::DVTile, dv_t, jj * D + d, a);
                            rec.exit();
                        }
                        rec.exit();
                    }
                    // dS_tile = P_tile ⊙ (dP − D_i), where dP = dO_tile·V_tileᵀ
                    for ii in 0..i1 - i0 {
                        let off = (bb * H + hh) * S + i0 + ii;
                        rec.enter(&["ii", "off"], [ii, off]);
                        let d_i = rec.read(Buf::Delta, delta, off);
                        for jj in 0..j1 - j0 {
                            rec.enter(&["jj"], [jj]);
                            let mut dp = 0.0;
                            for d in 0..D {
                                rec.enter(&["d"], [d]);
                                dp += rec.read(Buf::DOTile, do_t, ii * D + d) * rec.read(Buf::VTile, v_t, jj * D + d);
                                rec.exit();
                            }
                            let p = rec.read(Buf::STile, s_t, ii * bc + jj);
                            rec.write(Buf::DSTile, ds_t, ii * bc + jj, p * (dp - d_i));
                            rec.exit();
                        }
                        rec.exit();
                    }
                    // dQ += dS_tile·K_tile/√D, added straight into global memory
                    for ii in 0..i1 - i0 {
                        let q_base = ((bb * S + i0 + ii) * H + hh) * D;
                        rec.enter(&["ii", "q_base"], [ii, q_base]);
                        for d in 0..D {
                            rec.enter(&["d"], [d]);
                            let mut s = 0.0;
                            for jj in 0..j1 - j0 {
                                rec.enter(&["jj"], [jj]);
                                s += rec.read(Buf::DSTile, ds_t, ii * bc + jj) * rec.read(Buf::KTile, k_t, jj * D + d);
                                rec.exit();
                            }
                            rec.add(Buf::DQ, d_q, q_base + d, s * scale);
                            rec.exit();
                        }
                        rec.exit();
                    }
                    // dK_tile += dS_tileᵀ·Q_tile/√D
                    for jj in 0..j1 - j0 {
                        rec.enter(&["jj"], [jj]);
                        for d in 0..D {
                            rec.enter(&["d"], [d]);
                            let a = rec.read(Buf::DKTile, dk_t, jj * D + d);
                            let mut s = 0.0;
                            for ii in 0..i1 - i0 {
                                rec.enter(&["ii"], [ii]);
                                s += rec.read(Buf::DSTile, ds_t, ii * bc + jj) * rec.read(Buf::QTile, q_t, ii * D + d);
                                rec.exit();
                            }
                            rec.write(Buf::DKTile, dk_t, jj * D + d, a + s * scale);
                            rec.exit();
                        }
                        rec.exit();
                    }
                    rec.exit();
                }
                // write the key tile's gradients once
                for jj in 0..j1 - j0 {
                    let k_base = ((bb * T + j0 + jj) * H + hh) * D;
                    rec.enter(&["jj", "k_base"], [jj, k_base]);
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        let gk = rec.read(Buf::DKTile, dk_t, jj * D + d);
                        rec.write(Buf::DK, d_k, k_base + d, gk);
                        let gv = rec.read(Buf::DVTile, dv_t, jj * D + d);
                        rec.write(Buf::DV, d_v, k_base + d, gv);
                        rec.exit();
                    }
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}
