//! What a run will do, without its data: the sizes, mask, how q, k, v are made, which passes run,
//! and, in closed form, how many reads and writes each recorded phase makes.
//!
//! This file holds the plan's types and the entry points, [`phase_counts`] and
//! [`estimate_events`]; `phases.rs` counts the phases of the plain, grouped and flash variants,
//! with flash's tile loops in `flash.rs`, latent attention's in `latent.rs` and a decode run's in
//! `decode.rs`.

use super::count::Count;
use crate::kernels::Mask;
use crate::kernels::attention_flash::FittedTiles;
use crate::kernels::attention_mistakes::Mistakes;
use crate::kernels::attention_mla::Latent;
use crate::kernels::decode::CacheSpec;
use crate::kernels::rope::Rope;
use crate::kernels::{Refusal, Variant};
use crate::tensor::Shape;
use crate::trace::CacheDims;
use crate::trace::Phase;
use serde::Serialize;

mod decode;
mod flash;
mod latent;
mod phases;

pub use flash::TileSums;
use phases::counted;

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
    /// The plan as `variant` runs it, without the choices it refuses
    /// ([`Descriptor::refuses`](crate::kernels::Descriptor::refuses)): flash has no dropout,
    /// none of the mistakes (both live in the plain kernels) and no decoding path (its causal
    /// run computes the same output).
    #[must_use]
    pub fn for_variant(&self, variant: Variant) -> Plan {
        let decode = self.decode && !variant.refuses(Refusal::Decode);
        Plan {
            dropout: self.dropout && !variant.refuses(Refusal::Dropout),
            mistakes: if variant.refuses(Refusal::Mistakes) {
                Mistakes::NONE
            } else {
                self.mistakes
            },
            decode,
            cache: if decode {
                self.cache.clone()
            } else {
                CacheSpec::default()
            },
            ..self.clone()
        }
    }

    /// The outer dimensions of a decode run's cache: a pool of blocks when paged, the sinks and
    /// window slots under a sliding window, else a row per position.
    pub(crate) fn cache_dims(&self) -> CacheDims {
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

/// A rotation of `channels` channels of q and k (or their gradients): per pair its cosine, its
/// sine and its two channels read, and the two channels written.
fn rope_count(phase: Phase, channels: Count) -> Counted {
    pc(phase, 2 * channels, channels)
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

/// Total events a traced run will record (more than `u64::MAX` is [`Count::OVER`]). Computed in
/// closed form, in memory and time that do not grow with the sizes (but for one step per flash
/// query tile under a causal mask, and the cells of an explicit mask, which the file holds).
pub fn estimate_events(plan: &Plan, variant: Variant, passes: Passes) -> Count {
    counted(plan, variant, passes).iter().map(|p| p.reads + p.writes).sum()
}
