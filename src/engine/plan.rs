//! What a run will do, without its data: the sizes, mask, how q, k, v are made, which passes run,
//! and, in closed form, how many reads and writes each recorded phase makes.

use crate::dispatch::kernel_shape;
use crate::kernels::Mask;
use crate::kernels::Variant;
use crate::kernels::attention_flash::Tiles;
use crate::kernels::attention_mistakes::{Mistake, Mistakes};
use crate::tensor::Shape;
use crate::trace::Phase;
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
    /// Flash's tile sizes (unused by the other variants).
    pub tiles: Tiles,
}

impl Plan {
    /// The plan as `variant` runs it: flash has no dropout and none of the mistakes, which
    /// live in the plain kernels.
    pub fn for_variant(&self, variant: Variant) -> Plan {
        match variant {
            Variant::Flash => Plan {
                dropout: false,
                mistakes: Mistakes::NONE,
                ..self.clone()
            },
            _ => self.clone(),
        }
    }

    /// The passes a run of this plan can make: a mistaken run is forward only.
    pub fn possible(&self, passes: Passes) -> Passes {
        Passes {
            forward: passes.forward,
            backward: passes.backward && self.mistakes.is_empty(),
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

/// The events each recorded phase will make, in order. `+=` counts as a read and a write.
pub fn phase_counts(plan: &Plan, variant: Variant, passes: Passes) -> Vec<PhaseCount> {
    let plan = &plan.for_variant(variant);
    let flash = (variant == Variant::Flash).then(|| flash_counts(plan));
    let Shape { b, s, t, c, .. } = plan.shape;
    let backward = passes.backward && plan.mistakes.is_empty();
    let visible = plan.mask.visible_pairs(s, t) as u64; // visible (i, j) pairs per (b, h)
    let (b, s, t, c) = (b as u64, s as u64, t as u64, c as u64);
    let h = kernel_shape(plan.shape, variant).h as u64;
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
                out.push(lin_fwd(Phase::QkvProj, k_rows, c, 3 * c));
                out.push(pc(Phase::Split, 3 * k_rows * c, 3 * k_rows * c));
            }
            StartKind::Separate { .. } => {
                out.push(lin_fwd(Phase::QProj, q_rows, c, c));
                out.push(lin_fwd(Phase::KProj, k_rows, c, c));
                out.push(lin_fwd(Phase::VProj, k_rows, c, c));
            }
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
            // dP: 2·D reads per (b,h,i,j); dV: 2·S reads per element of v
            out.push(pc(
                Phase::WeightedSumBack,
                2 * q_rows * t * c + 2 * k_rows * c * s,
                cells + k_rows * c,
            ));
            if dropout {
                out.push(pc(Phase::DropoutBack, 2 * cells, cells));
            }
            out.push(pc(Phase::SoftmaxBack, 4 * cells, cells));
            // dQ and dK: one (dS, k) or (dS, q) pair per visible pair and channel
            out.push(pc(Phase::ScoresBack, 2 * 2 * b * visible * c, q_rows * c + k_rows * c));
        }
        match plan.start {
            StartKind::Qkv => {}
            StartKind::Fused => {
                out.push(pc(Phase::SplitBack, 3 * k_rows * c, 3 * k_rows * c));
                out.push(lin_bwd(Phase::QkvProjBack, k_rows, c, 3 * c, false));
            }
            StartKind::Separate { cross } => {
                out.push(lin_bwd(Phase::VProjBack, k_rows, c, c, false));
                out.push(lin_bwd(Phase::KProjBack, k_rows, c, c, true));
                out.push(lin_bwd(Phase::QProjBack, q_rows, c, c, !cross));
            }
        }
    }
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
pub fn flash_tiles(shape: Shape, tiles: Tiles) -> (Vec<std::ops::Range<usize>>, Vec<std::ops::Range<usize>>) {
    let Tiles { br, bc } = tiles.fit(shape);
    let cut = |n: usize, w: usize| (0..n).step_by(w).map(|a| a..(a + w).min(n)).collect();
    (cut(shape.s, br), cut(shape.t, bc))
}

/// Flash's three phases (`flash`, `flash_delta`, `flash_back`), counted loop by loop of
/// `attention_flash.rs`: per `(b, h)` a sum over the query tiles (`nr` rows), the key tiles
/// (`nc` columns) and the tile pairs the mask does not hide entirely.
fn flash_counts(plan: &Plan) -> [PhaseCount; 3] {
    let sh = plan.shape;
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
