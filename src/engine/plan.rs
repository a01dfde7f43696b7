//! What a run will do, without its data: the sizes, mask, how q, k, v are made, which passes run,
//! and, in closed form, how many reads and writes each recorded phase makes.

use crate::kernels::Mask;
use crate::kernels::Variant;
use crate::kernels::attention_flash::{FittedTiles, Tiles};
use crate::kernels::attention_mistakes::{Mistake, Mistakes};
use crate::kernels::rope::Rope;
use crate::tensor::Shape;
use crate::trace::Phase;
use crate::untraced::dispatch::kernel_shape;
use serde::Serialize;

/// Which passes run (and, in a traced run, are recorded). Backward needs the forward
/// activations, so a backward-only run still computes the forward pass, unrecorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Passes {
    pub forward: bool,
    pub backward: bool,
}

impl Passes {
    pub const BOTH: Passes = Passes {
        forward: true,
        backward: true,
    };
    pub const FORWARD: Passes = Passes {
        forward: true,
        backward: false,
    };
}

/// How the queries, keys and values are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartKind {
    /// Fused `w_qkv` projection of `x`, then the split.
    Fused,
    /// Three projections; `cross` when keys and values come from `memory`.
    Separate { cross: bool },
    /// `q, k, v` given.
    Qkv,
}

/// Everything the engine needs to know to count events, without the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub shape: Shape,
    pub mask: Mask,
    pub start: StartKind,
    pub proj: bool,
    pub dropout: bool,
    pub mistakes: Mistakes,
    /// Rotary position embeddings applied to q and k.
    pub rope: Option<Rope>,
    /// Generation from a key/value cache, one token at a time (forward only).
    pub decode: bool,
    /// Flash's tile sizes, fitted to `shape` (unused by the other variants).
    pub tiles: FittedTiles,
}

impl Plan {
    /// The plan as `variant` runs it: flash has no dropout, none of the mistakes (both live in
    /// the plain kernels) and no decoding path (its causal run computes the same output).
    #[must_use]
    pub fn for_variant(&self, variant: Variant) -> Plan {
        match variant {
            Variant::Flash => Plan {
                dropout: false,
                mistakes: Mistakes::NONE,
                decode: false,
                ..self.clone()
            },
            _ => self.clone(),
        }
    }

    /// The passes a run of this plan can make: a decode run and a mistaken run are forward only
    /// (but a run whose mistakes are all backward ones, like mistake 7).
    pub fn possible(&self, passes: Passes) -> Passes {
        Passes {
            forward: passes.forward,
            backward: passes.backward && self.mistakes.allow_backward() && !self.decode,
        }
    }
}

/// Reads and writes one phase makes, in closed form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PhaseCount {
    pub phase: Phase,
    pub reads: u64,
    pub writes: u64,
}

/// The events each recorded phase will make, in order (a decode run's phases, which repeat at
/// every step, summed over the steps). `+=` counts as a read and a write.
pub fn phase_counts(plan: &Plan, variant: Variant, passes: Passes) -> Vec<PhaseCount> {
    let plan = &plan.for_variant(variant);
    let flash = (variant == Variant::Flash).then(|| flash_counts(plan));
    let Shape { b, s, t, c, .. } = plan.shape;
    let backward = plan.possible(passes).backward;
    let visible = plan.mask.visible_pairs(s, t) as u64; // visible (i, j) pairs per (b, h)
    let ksh = kernel_shape(plan.shape, variant);
    // channels of a key/value row: H_kv·D (C unless grouped)
    let kv = ksh.kv_c() as u64;
    let grouped = variant.shares_kv_heads();
    let (b, s, t, c) = (b as u64, s as u64, t as u64, c as u64);
    let h = ksh.h as u64;
    if plan.decode {
        return if passes.forward {
            decode_counts(plan, ksh)
        } else {
            Vec::new()
        };
    }
    let m = plan.mistakes;
    let (q_rows, k_rows) = (b * s, b * t); // rows of the [B,S,·] and [B,T,·] activations
    let cells = b * h * s * t; // entries of scores, probs and their gradients
    let pc = |phase, reads, writes| PhaseCount { phase, reads, writes };
    // y = x·W + b: per output one bias read and IC (x, W) pairs
    let lin_fwd = |phase, rows: u64, ic: u64, oc: u64| pc(phase, rows * oc * (1 + 2 * ic), rows * oc);
    // dx (IC per row, OC pairs each; `+=` adds a read), dW (IC·OC, one pair per row), db
    let lin_bwd = |phase, rows: u64, ic: u64, oc: u64, acc: bool| {
        let dx_reads = rows * ic * (2 * oc + acc as u64);
        pc(
            phase,
            dx_reads + ic * oc * 2 * rows + oc * rows,
            rows * ic + ic * oc + oc,
        )
    };
    let project = !m.has(Mistake::NoInputProjection);
    let dropout = plan.dropout && !m.has(Mistake::DropoutNotApplied);
    let proj = plan.proj && !m.has(Mistake::NoOutputProjection);
    let mut out = Vec::new();
    if passes.forward {
        match plan.start {
            StartKind::Qkv => {}
            _ if !project => out.push(pc(Phase::NoProj, q_rows * c + k_rows * c, q_rows * c + 2 * k_rows * c)),
            StartKind::Fused => {
                out.push(lin_fwd(Phase::QkvProj, k_rows, c, c + 2 * kv));
                let copies = k_rows * (c + 2 * kv);
                out.push(pc(Phase::Split, copies, copies));
            }
            StartKind::Separate { .. } => {
                out.push(lin_fwd(Phase::QProj, q_rows, c, c));
                out.push(lin_fwd(Phase::KProj, k_rows, c, kv));
                out.push(lin_fwd(Phase::VProj, k_rows, c, kv));
            }
        }
        if plan.rope.is_some() {
            // per channel pair of q and k: cos, sin and the two channels read, both written
            out.push(rope_count(Phase::Rope, q_rows * c + k_rows * kv));
        }
        if let Some([fwd, _, _]) = flash {
            out.push(fwd);
        } else {
            out.push(pc(Phase::Scores, 2 * q_rows * t * c, cells));
            // per softmax row 3 reads (max, exp, normalise) and 2 writes per entry, whatever the row
            out.push(pc(Phase::Softmax, 3 * cells, 2 * cells));
            if dropout {
                out.push(pc(Phase::Dropout, 2 * cells, cells));
            }
            out.push(pc(Phase::WeightedSum, 2 * q_rows * c * t, q_rows * c));
        }
        if proj {
            out.push(lin_fwd(Phase::OutProj, q_rows, c, c));
        }
    }
    if backward {
        if proj {
            out.push(lin_bwd(Phase::OutProjBack, q_rows, c, c, false));
        }
        if let Some([_, delta, back]) = flash {
            out.extend([delta, back]);
        } else {
            // dP: 2·D reads per (b,h,i,j); dV: 2·S reads per (b,h,j,d), one element of v per
            // query head. GQA clears d_v first and adds each head's share (+=: one more read)
            let (clear, add) = if grouped { (k_rows * kv, k_rows * c) } else { (0, 0) };
            // mistake 7 writes those shares with `=`: no read of the old value
            let add = if m.has(Mistake::OverwriteKvGrad) { 0 } else { add };
            out.push(pc(
                Phase::WeightedSumBack,
                2 * q_rows * t * c + 2 * k_rows * c * s + add,
                cells + k_rows * c + clear,
            ));
            if dropout {
                out.push(pc(Phase::DropoutBack, 2 * cells, cells));
            }
            out.push(pc(Phase::SoftmaxBack, 4 * cells, cells));
            // dQ and dK: one (dS, k) or (dS, q) pair per visible pair and channel
            out.push(pc(
                Phase::ScoresBack,
                2 * 2 * b * visible * c + add,
                q_rows * c + k_rows * c + clear,
            ));
        }
        if plan.rope.is_some() {
            out.push(rope_count(Phase::RopeBack, q_rows * c + k_rows * kv));
        }
        match plan.start {
            StartKind::Qkv => {}
            StartKind::Fused => {
                let copies = k_rows * (c + 2 * kv);
                out.push(pc(Phase::SplitBack, copies, copies));
                out.push(lin_bwd(Phase::QkvProjBack, k_rows, c, c + 2 * kv, false));
            }
            StartKind::Separate { cross } => {
                out.push(lin_bwd(Phase::VProjBack, k_rows, c, kv, false));
                out.push(lin_bwd(Phase::KProjBack, k_rows, c, kv, true));
                out.push(lin_bwd(Phase::QProjBack, q_rows, c, c, !cross));
            }
        }
    }
    out
}

/// A rotation of `channels` channels of q and k (or their gradients): per pair its cosine, its
/// sine and its two channels read, and the two channels written.
fn rope_count(phase: Phase, channels: u64) -> PhaseCount {
    PhaseCount {
        phase,
        reads: 2 * channels,
        writes: channels,
    }
}

/// A decode run's phases, each summed over the `B·T` steps. Step `t` reads `t + 1` cached
/// positions, so the attention phases grow with `Σ_t (t + 1) = T(T + 1)/2` per sequence.
fn decode_counts(plan: &Plan, ksh: Shape) -> Vec<PhaseCount> {
    let (b, t, c, h, kv) = (
        ksh.b as u64,
        ksh.t as u64,
        ksh.c as u64,
        ksh.h as u64,
        ksh.kv_c() as u64,
    );
    let steps = b * t;
    let seen = b * t * (t + 1) / 2; // (b, t, j ≤ t) triples
    let pc = |phase, reads, writes| PhaseCount { phase, reads, writes };
    let mut out = vec![pc(
        Phase::DecodeQkv,
        steps * (c + 2 * kv) * (1 + 2 * c),
        steps * (c + 2 * kv),
    )];
    if plan.rope.is_some() {
        out.push(rope_count(Phase::Rope, steps * (c + kv)));
    }
    out.extend([
        pc(Phase::DecodeScores, 2 * seen * c, seen * h),
        pc(Phase::DecodeSoftmax, 3 * seen * h, 2 * seen * h),
        pc(Phase::DecodeSum, 2 * seen * c, steps * c),
        pc(Phase::DecodeOut, steps * c * (1 + 2 * c), steps * c),
    ]);
    out
}

/// Total events a traced run will record.
pub fn estimate_events(plan: &Plan, variant: Variant, passes: Passes) -> u64 {
    phase_counts(plan, variant, passes)
        .iter()
        .map(|p| p.reads + p.writes)
        .sum()
}

/// The query tiles and key tiles of flash, as ranges of rows and of columns.
pub fn flash_tiles(shape: Shape, tiles: FittedTiles) -> (Vec<std::ops::Range<usize>>, Vec<std::ops::Range<usize>>) {
    let Tiles { br, bc } = tiles.sizes();
    let cut = |n: usize, w: usize| (0..n).step_by(w).map(|a| a..(a + w).min(n)).collect();
    (cut(shape.s, br), cut(shape.t, bc))
}

/// Flash's three phases (`flash`, `flash_delta`, `flash_back`), counted loop by loop of
/// `attention_flash.rs`: per `(b, h)` a sum over the query tiles (`nr` rows), the key tiles
/// (`nc` columns) and the tile pairs the mask does not hide entirely.
fn flash_counts(plan: &Plan) -> [PhaseCount; 3] {
    let sh = kernel_shape(plan.shape, Variant::Flash);
    let (q_tiles, k_tiles) = flash_tiles(sh, plan.tiles);
    let (s, t, d) = (sh.s as u64, sh.t as u64, sh.d() as u64);
    let heads = (sh.b * sh.h) as u64;
    let visited: Vec<(u64, u64)> = q_tiles
        .iter()
        .flat_map(|a| k_tiles.iter().map(move |c| (a, c)))
        .filter(|(a, c)| !plan.mask.hides_tile((*a).clone(), (*c).clone()))
        .map(|(a, c)| (a.len() as u64, c.len() as u64))
        .collect();
    let sum = |f: &dyn Fn(u64, u64) -> u64| visited.iter().map(|&(nr, nc)| f(nr, nc)).sum::<u64>();
    let pc = |phase, reads: u64, writes: u64| PhaseCount {
        phase,
        reads: heads * reads,
        writes: heads * writes,
    };
    // forward: load q (and start m, l, acc) per row; per visited tile load k and v, the score
    // tile (2D reads per score), the online softmax per row (m, max, exp, l, and acc per d
    // with its 2·nc products); write att and lse per row
    let fwd = pc(
        Phase::Flash,
        s * d + sum(&|nr, nc| 2 * nc * d + 2 * nr * nc * d + nr * (2 + 2 * nc + d + 2 * nc * d)) + s * (d + 2),
        s * (2 * d + 2) + sum(&|nr, nc| 2 * nc * d + nr * nc + nr * (nc + 2 + d)) + s * (d + 1),
    );
    // D_i: 2D reads per row; dQ = 0 and D_i written
    let delta = pc(Phase::FlashDelta, 2 * s * d, s * (d + 1));
    // per key tile: load k, v (and zero dK, dV), write dK, dV back; per visited tile: load q
    // and dO, recompute P (lse per row, 2D per score), dV, dS (D_i per row, 2D + 1 per entry),
    // dQ (2·nc products and a += per element), dK
    let back = pc(
        Phase::FlashBack,
        4 * t * d
            + sum(&|nr, nc| {
                2 * nr * d
                    + nr * (1 + 2 * nc * d)
                    + nc * d * (1 + 2 * nr)
                    + nr * (1 + nc * (2 * d + 1))
                    + nr * d * (2 * nc + 1)
                    + nc * d * (1 + 2 * nr)
            }),
        6 * t * d + sum(&|nr, nc| 2 * nr * d + nr * nc + nc * d + nr * nc + nr * d + nc * d),
    );
    [fwd, delta, back]
}
