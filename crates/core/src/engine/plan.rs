//! What a run will do, without its data: the sizes, mask, how q, k, v are made, which passes run,
//! and, in closed form, how many reads and writes each recorded phase makes.

use super::count::Count;
use crate::kernels::Mask;
use crate::kernels::Variant;
use crate::kernels::attention_flash::{FittedTiles, Tiles};
use crate::kernels::attention_mistakes::{Mistake, Mistakes};
use crate::kernels::attention_mla::Latent;
use crate::kernels::decode::CacheSpec;
use crate::kernels::rope::Rope;
use crate::tensor::Shape;
use crate::trace::CacheDims;
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
    /// Multi-head latent attention's projections of `x`, with its latent sizes.
    Latent(Latent),
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
    /// A decode run's paged cache and split steps.
    pub cache: CacheSpec,
    /// Flash's tile sizes, fitted to `shape` (unused by the other variants).
    pub tiles: FittedTiles,
    /// gpt-oss's learned sink logit in every softmax row (`sink [H]`).
    pub sink: bool,
    /// The linear layers add a bias (`false`: `[run] bias = false`, as LLaMA-family models).
    pub bias: bool,
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
                cache: CacheSpec::default(),
                ..self.clone()
            },
            _ => self.clone(),
        }
    }

    /// The outer dimensions of a decode run's cache: a pool of blocks when paged, the sinks and
    /// window slots under a sliding window, else a row per position.
    pub fn cache_dims(&self) -> CacheDims {
        match (&self.cache.paged, &self.mask) {
            _ if !self.decode => CacheDims::Contiguous,
            (Some(p), _) => CacheDims::Paged {
                nb: p.num_blocks,
                bs: p.block_size,
                mb: p.per_row(self.shape.t),
            },
            (None, &Mask::Window { w, sinks }) => CacheDims::Rolling { rows: sinks + w },
            (None, _) => CacheDims::Contiguous,
        }
    }

    /// Multi-head latent attention's sizes, when the run starts from its projections.
    pub const fn latent(&self) -> Option<Latent> {
        match self.start {
            StartKind::Latent(l) => Some(l),
            _ => None,
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

/// A phase's reads and writes while they are counted: sizes from a file can make them overflow
/// `u64`, which [`Count`] keeps instead of wrapping.
#[derive(Clone, Copy, Debug)]
struct Counted {
    phase: Phase,
    reads: Count,
    writes: Count,
}

fn pc(phase: Phase, reads: Count, writes: Count) -> Counted {
    Counted { phase, reads, writes }
}

/// The events each recorded phase will make, in order (a decode run's phases, which repeat at
/// every step, summed over the steps). `+=` counts as a read and a write. `None` when a count
/// does not fit in a `u64` (sizes far beyond any budget).
pub fn phase_counts(plan: &Plan, variant: Variant, passes: Passes) -> Option<Vec<PhaseCount>> {
    counted(plan, variant, passes)
        .into_iter()
        .map(|c| {
            Some(PhaseCount {
                phase: c.phase,
                reads: c.reads.get()?,
                writes: c.writes.get()?,
            })
        })
        .collect()
}

/// [`phase_counts`], with overflowed counts kept as [`Count::OVER`]. Memory and time do not grow
/// with the sizes: a handful of phases, each a closed form (flash's causal tile sums take one
/// step per query tile).
fn counted(plan: &Plan, variant: Variant, passes: Passes) -> Vec<Counted> {
    let plan = &plan.for_variant(variant);
    let flash = (variant == Variant::Flash).then(|| flash_counts(plan));
    // the kernels that make mistakes have no sink logit (nor does decoding, counted apart)
    let sink = plan.sink && plan.mistakes.is_empty();
    let Shape { b, s, t, c, .. } = plan.shape;
    let backward = plan.possible(passes).backward;
    let visible = Count::from(plan.mask.visible_pairs(s, t)); // visible (i, j) pairs per (b, h)
    let ksh = kernel_shape(plan.shape, variant);
    // channels of a key/value row: H_kv·D (C unless grouped)
    let kv = Count::from(ksh.kv_c());
    let grouped = variant.shares_kv_heads();
    let (b, s, t, c) = (Count::from(b), Count::from(s), Count::from(t), Count::from(c));
    let h = Count::from(ksh.h);
    if let Some(lat) = plan.latent() {
        return latent_counts(plan, lat, passes);
    }
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
    let rows = b * h * s; // softmax rows, one sink probability (and D_i) each
    // a sink logit: read once per row and its share written; D_i kept in backward
    let (sink_reads, sink_writes) = if sink { (rows, rows) } else { (Count::ZERO, Count::ZERO) };
    // d_sink[h] = −Σ P_sink·D_i: a pair per row, one write per head
    let sink_back = pc(Phase::SinkBack, 2 * rows, h);
    // y = x·W + b: per output a bias read (when there are biases) and IC (x, W) pairs
    let bias = Count::from(plan.bias);
    let lin_fwd = |phase, rows: Count, ic: Count, oc: Count| pc(phase, rows * oc * (bias + 2 * ic), rows * oc);
    // dx (IC per row, OC pairs each; `+=` adds a read), dW (IC·OC, one pair per row), db
    let lin_bwd = |phase, rows: Count, ic: Count, oc: Count, acc: bool| {
        let dx_reads = rows * ic * (2 * oc + Count::from(acc));
        pc(
            phase,
            dx_reads + ic * oc * 2 * rows + bias * oc * rows,
            rows * ic + ic * oc + bias * oc,
        )
    };
    let project = !m.has(Mistake::NoInputProjection);
    let dropout = plan.dropout && !m.has(Mistake::DropoutNotApplied);
    let proj = plan.proj && !m.has(Mistake::NoOutputProjection);
    let mut out = Vec::new();
    if passes.forward {
        match plan.start {
            StartKind::Qkv | StartKind::Latent(_) => {}
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
            out.push(pc(Phase::Softmax, 3 * cells + sink_reads, 2 * cells + sink_writes));
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
            if sink {
                out.push(sink_back);
            }
        } else {
            // dP: 2·D reads per (b,h,i,j); dV: 2·S reads per (b,h,j,d), one element of v per
            // query head. GQA clears d_v first and adds each head's share (+=: one more read)
            let (clear, add) = if grouped {
                (k_rows * kv, k_rows * c)
            } else {
                (Count::ZERO, Count::ZERO)
            };
            // mistake 7 writes those shares with `=`: no read of the old value
            let add = if m.has(Mistake::OverwriteKvGrad) {
                Count::ZERO
            } else {
                add
            };
            out.push(pc(
                Phase::WeightedSumBack,
                2 * q_rows * t * c + 2 * k_rows * c * s + add,
                cells + k_rows * c + clear,
            ));
            if dropout {
                out.push(pc(Phase::DropoutBack, 2 * cells, cells));
            }
            out.push(pc(Phase::SoftmaxBack, 4 * cells, cells + sink_writes));
            if sink {
                out.push(sink_back);
            }
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
            StartKind::Qkv | StartKind::Latent(_) => {}
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

/// Multi-head latent attention's phases (`attention_mla.rs`): the training form forward and
/// backward, or the absorbed decode form summed over its `B·T` steps. Its projections have no
/// bias; the output projection (with one) is the other variants'.
fn latent_counts(plan: &Plan, lat: Latent, passes: Passes) -> Vec<Counted> {
    let sh = plan.shape;
    let n = Count::from;
    let (b, s, t, c, h) = (n(sh.b), n(sh.s), n(sh.t), n(sh.c), n(sh.h));
    let (d, r, dr) = (n(sh.d()), n(lat.r), n(lat.dr));
    let qd = d + dr; // a query head's channels
    let (q_rows, k_rows) = (b * s, b * t);
    let cells = b * h * s * t;
    let visible = b * n(plan.mask.visible_pairs(sh.s, sh.t));
    // y = x·W (+ b): IC (x, W) pairs per output, and a bias read when there is one
    let lin_fwd = |phase, rows: Count, ic: Count, oc: Count, bias: bool| {
        pc(phase, rows * oc * (n(usize::from(bias)) + 2 * ic), rows * oc)
    };
    // dx (IC per row, OC pairs each; `+=` adds a read), dW (IC·OC, a pair per row), db
    let lin_bwd = |phase, rows: Count, ic: Count, oc: Count, acc: bool, bias: bool| {
        let (bias_reads, bias_writes) = if bias {
            (oc * rows, oc)
        } else {
            (Count::ZERO, Count::ZERO)
        };
        pc(
            phase,
            rows * ic * (2 * oc + n(usize::from(acc))) + ic * oc * 2 * rows + bias_reads,
            rows * ic + ic * oc + bias_writes,
        )
    };
    let mut out = Vec::new();
    if plan.decode {
        if !passes.forward {
            return out;
        }
        let steps = b * t;
        // (b, t, j): a cached row step t reads, j ≤ t
        let seen = b * n(Mask::Causal.visible_pairs(sh.t, sh.t));
        out.extend([
            lin_fwd(Phase::DecodeLatent, steps, c, r + dr, false),
            lin_fwd(Phase::DecodeQ, steps, c, h * qd, false),
        ]);
        // per step the new query's H rotary parts and the new cache row's one
        if plan.rope.is_some() {
            out.push(rope_count(Phase::Rope, steps * (h * dr + dr)));
        }
        out.extend([
            pc(Phase::DecodeAbsorb, steps * h * r * 2 * d, steps * h * r),
            pc(Phase::DecodeScores, 2 * seen * h * (r + dr), seen * h),
            pc(Phase::DecodeSoftmax, 3 * seen * h, 2 * seen * h),
            pc(Phase::DecodeLatentSum, 2 * seen * h * r, steps * h * r),
            pc(Phase::DecodeUp, steps * c * 2 * r, steps * c),
            lin_fwd(Phase::DecodeOut, steps, c, c, plan.bias),
        ]);
        return out;
    }
    if passes.forward {
        out.extend([
            lin_fwd(Phase::MlaQProj, q_rows, c, h * qd, false),
            lin_fwd(Phase::LatentProj, k_rows, c, r, false),
            lin_fwd(Phase::KPeProj, k_rows, c, dr, false),
            lin_fwd(Phase::KUp, k_rows, r, c, false),
            lin_fwd(Phase::VUp, k_rows, r, c, false),
        ]);
        // the DR rotary channels of each query head and of each token's one k_pe row
        if plan.rope.is_some() {
            out.push(rope_count(Phase::Rope, q_rows * h * dr + k_rows * dr));
        }
        out.extend([
            pc(Phase::Scores, 2 * cells * qd, cells),
            pc(Phase::Softmax, 3 * cells, 2 * cells),
            pc(Phase::WeightedSum, 2 * q_rows * c * t, q_rows * c),
        ]);
        if plan.proj {
            out.push(lin_fwd(Phase::OutProj, q_rows, c, c, plan.bias));
        }
    }
    if plan.possible(passes).backward {
        if plan.proj {
            out.push(lin_bwd(Phase::OutProjBack, q_rows, c, c, false, plan.bias));
        }
        out.extend([
            pc(
                Phase::WeightedSumBack,
                2 * q_rows * t * c + 2 * k_rows * c * s,
                cells + k_rows * c,
            ),
            pc(Phase::SoftmaxBack, 4 * cells, cells),
            // per visible pair: dQ over D + DR channels, dK_nope over D, dK_pe over DR
            pc(
                Phase::ScoresBack,
                2 * h * visible * (qd + d + dr),
                q_rows * h * qd + k_rows * c + k_rows * dr,
            ),
        ]);
        if plan.rope.is_some() {
            out.push(rope_count(Phase::RopeBack, q_rows * h * dr + k_rows * dr));
        }
        out.extend([
            lin_bwd(Phase::VUpBack, k_rows, r, c, false, false),
            lin_bwd(Phase::KUpBack, k_rows, r, c, true, false),
            lin_bwd(Phase::KPeProjBack, k_rows, c, dr, false, false),
            lin_bwd(Phase::LatentProjBack, k_rows, c, r, true, false),
            lin_bwd(Phase::MlaQProjBack, q_rows, c, h * qd, true, false),
        ]);
    }
    out
}

/// A rotation of `channels` channels of q and k (or their gradients): per pair its cosine, its
/// sine and its two channels read, and the two channels written.
fn rope_count(phase: Phase, channels: Count) -> Counted {
    pc(phase, 2 * channels, channels)
}

/// A decode run's phases, each summed over the `B·T` steps. Step `t` reads the cached positions
/// it sees: `t + 1` of them, fewer under a sliding window, so the attention phases grow with the
/// mask's visible pairs (`T(T + 1)/2` per sequence when causal). A paged cache adds a read of the
/// block table per new token, per (head, key) of the scores and per (head, channel, key) of the
/// weighted sums; a split step's parts and merge replace the softmax and the sum.
fn decode_counts(plan: &Plan, ksh: Shape) -> Vec<Counted> {
    let (b, t, c, h, kv) = (
        Count::from(ksh.b),
        Count::from(ksh.t),
        Count::from(ksh.c),
        Count::from(ksh.h),
        Count::from(ksh.kv_c()),
    );
    let steps = b * t;
    // (b, t, j) triples of a key the step sees
    let seen = b * Count::from(plan.mask.visible_pairs(ksh.t, ksh.t));
    let paged = Count::from(plan.cache.paged.is_some());
    let bias = Count::from(plan.bias);
    let mut out = vec![pc(
        Phase::DecodeQkv,
        steps * (c + 2 * kv) * (bias + 2 * c) + paged * steps,
        steps * (c + 2 * kv),
    )];
    if plan.rope.is_some() {
        out.push(rope_count(Phase::Rope, steps * (c + kv)));
    }
    out.push(pc(Phase::DecodeScores, 2 * seen * c + paged * seen * h, seen * h));
    if let Some(P) = plan.cache.split {
        // step t has the parts 0..=t/L; summed over t: T + Σ_t ⌊t/L⌋, which is L·K(K−1)/2 + r·K
        // with K = ⌊T/L⌋ whole runs of L steps and r = T − K·L steps after them
        let T = ksh.t as u64;
        let L = T.div_ceil(P as u64);
        let (K, r) = (T / L, T % L);
        let parts = b * (t + Count::from(L) * Count::from(K * K.saturating_sub(1) / 2) + Count::from(r * K));
        out.extend([
            pc(Phase::DecodePartSoftmax, 3 * seen * h, 2 * seen * h + parts * h),
            pc(Phase::DecodePartSum, 2 * seen * c + paged * seen * c, parts * c),
            pc(Phase::DecodeMergeWeights, 3 * parts * h, 2 * parts * h),
            pc(Phase::DecodeMerge, 2 * parts * c, steps * c),
        ]);
    } else {
        out.extend([
            pc(Phase::DecodeSoftmax, 3 * seen * h, 2 * seen * h),
            pc(Phase::DecodeSum, 2 * seen * c + paged * seen * c, steps * c),
        ]);
    }
    out.push(pc(Phase::DecodeOut, steps * c * (bias + 2 * c), steps * c));
    out
}

/// Total events a traced run will record (more than `u64::MAX` is [`Count::OVER`]). Computed in
/// closed form, in memory and time that do not grow with the sizes (but for one step per flash
/// query tile under a causal mask, and the cells of an explicit mask, which the file holds).
pub fn estimate_events(plan: &Plan, variant: Variant, passes: Passes) -> Count {
    counted(plan, variant, passes).iter().map(|p| p.reads + p.writes).sum()
}

/// Sums over the (query tile, key tile) pairs flash visits, those the mask does not hide
/// entirely: how many (`pairs`), and the sums of their rows `nr`, their columns `nc` and their
/// cells `nr·nc`. Every count of flash's loops is, per visited pair, a polynomial of degree one
/// in `nr` and in `nc`, so these four sums give any of them ([`TileSums::sum`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileSums {
    pub pairs: Count,
    pub rows: Count,
    pub cols: Count,
    pub cells: Count,
}

impl TileSums {
    /// The sums for `S` queries and `T` keys cut into `tiles` under `mask`, without listing the
    /// pairs: in closed form without a mask, one step per query tile under the causal one, and
    /// one look at each cell of an explicit mask (which the scenario file holds).
    pub fn new(s: usize, t: usize, tiles: FittedTiles, mask: &Mask) -> TileSums {
        let Tiles { br, bc } = tiles.sizes();
        let (br, bc) = (br.max(1), bc.max(1));
        let (nq, nk) = (s.div_ceil(br), t.div_ceil(bc));
        let n = Count::from;
        match mask {
            Mask::None => TileSums {
                pairs: n(nq) * n(nk),
                rows: n(nk) * n(s),
                cols: n(nq) * n(t),
                cells: n(s) * n(t),
            },
            // the key tile starting at j0 is visited by the query tile ending at i1 when j0 < i1
            Mask::Causal => (0..nq).fold(TileSums::default(), |acc, q| {
                let (i0, i1) = (q * br, ((q + 1) * br).min(s));
                let nr = n(i1 - i0);
                let k = i1.div_ceil(bc).min(nk);
                let cols = n((k * bc).min(t));
                TileSums {
                    pairs: acc.pairs + n(k),
                    rows: acc.rows + nr * n(k),
                    cols: acc.cols + cols,
                    cells: acc.cells + nr * cols,
                }
            }),
            // the key tiles a query tile i0..i1 visits are those of the sinks and those from the
            // one holding i0 + 1 − w (the first key of its first row's band) to the one holding
            // i1 − 1: two ranges of tiles, so one step per query tile as under the causal mask
            Mask::Window { w, sinks } => (0..nq).fold(TileSums::default(), |acc, q| {
                let (i0, i1) = (q * br, ((q + 1) * br).min(s));
                let nr = n(i1 - i0);
                let end = i1.div_ceil(bc).min(nk);
                let band = ((i0 + 1).saturating_sub(*w) / bc).min(end);
                let sink_tiles = sinks.div_ceil(bc).min(band);
                // the keys of tiles a..b, the last tile holding fewer when T is not a multiple
                let width = |a: usize, b: usize| if a < b { (b * bc).min(t) - a * bc } else { 0 };
                let k = (end - band) + sink_tiles;
                let cols = n(width(band, end) + width(0, sink_tiles));
                TileSums {
                    pairs: acc.pairs + n(k),
                    rows: acc.rows + nr * n(k),
                    cols: acc.cols + cols,
                    cells: acc.cells + nr * cols,
                }
            }),
            Mask::Explicit { .. } => {
                let mut acc = TileSums::default();
                for q in 0..nq {
                    let rows = q * br..((q + 1) * br).min(s);
                    for k in 0..nk {
                        let cols = k * bc..((k + 1) * bc).min(t);
                        if !mask.hides_tile(rows.clone(), cols.clone()) {
                            let (nr, nc) = (n(rows.len()), n(cols.len()));
                            acc.pairs += n(1usize);
                            acc.rows += nr;
                            acc.cols += nc;
                            acc.cells += nr * nc;
                        }
                    }
                }
                acc
            }
        }
    }

    /// `Σ f(nr, nc)` over the visited pairs, for an `f` of degree one in each of `nr` and `nc`
    /// (`a + b·nr + c·nc + d·nr·nc`, its coefficients read off `f` at 0 and 1).
    pub fn sum(&self, f: impl Fn(u64, u64) -> u64) -> Count {
        let (f00, f10, f01, f11) = (f(0, 0) as i128, f(1, 0) as i128, f(0, 1) as i128, f(1, 1) as i128);
        let coef = |x: i128| Count::from(u64::try_from(x).unwrap_or(0));
        let (a, b, c, d) = (f00, f10 - f00, f01 - f00, f11 - f10 - f01 + f00);
        coef(a) * self.pairs + coef(b) * self.rows + coef(c) * self.cols + coef(d) * self.cells
    }
}

/// Flash's three phases (`flash`, `flash_delta`, `flash_back`), counted loop by loop of
/// `attention_flash.rs`: per `(b, h)` a sum over the query tiles (`nr` rows), the key tiles
/// (`nc` columns) and the tile pairs the mask does not hide entirely.
fn flash_counts(plan: &Plan) -> [Counted; 3] {
    let sh = kernel_shape(plan.shape, Variant::Flash);
    let visited = TileSums::new(sh.s, sh.t, plan.tiles, &plan.mask);
    let (s, t, d) = (Count::from(sh.s), Count::from(sh.t), sh.d() as u64);
    let heads = Count::from(sh.b) * Count::from(sh.h);
    let sum = |f: &dyn Fn(u64, u64) -> u64| visited.sum(f);
    let per_head = |phase, reads: Count, writes: Count| pc(phase, heads * reads, heads * writes);
    // a sink logit read where each row starts (m = sink); P_sink = e^(sink − lse) recomputed
    // per row in backward (2 reads, a write)
    let sink = u64::from(plan.sink);
    // forward: load q (and start m, l, acc) per row; per visited tile load k and v, the score
    // tile (2D reads per score), the online softmax per row (m, max, exp, l, and acc per d
    // with its 2·nc products); write att and lse per row
    let fwd = per_head(
        Phase::Flash,
        s * (d + sink) + sum(&|nr, nc| 2 * nc * d + 2 * nr * nc * d + nr * (2 + 2 * nc + d + 2 * nc * d)) + s * (d + 2),
        s * (2 * d + 2) + sum(&|nr, nc| 2 * nc * d + nr * nc + nr * (nc + 2 + d)) + s * (d + 1),
    );
    // D_i: 2D reads per row; dQ = 0 and D_i written
    let delta = per_head(Phase::FlashDelta, s * (2 * d + 2 * sink), s * (d + 1 + sink));
    // per key tile: load k, v (and zero dK, dV), write dK, dV back; per visited tile: load q
    // and dO, recompute P (lse per row, 2D per score), dV, dS (D_i per row, 2D + 1 per entry),
    // dQ (2·nc products and a += per element), dK
    let back = per_head(
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
