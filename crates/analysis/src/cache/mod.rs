//! Caches: where each access of a trace would be served in a memory hierarchy of set-associative
//! LRU caches, and what moves to and from memory.
//!
//! **Addresses.** Every buffer of a run is one allocation, placed in registry order ([`Buf`]
//! order) at the next multiple of 64 bytes after the one before; an access is 4 bytes at
//! `base + 4·offset`. Global buffers start at address 0. Tile-local buffers (flash's on-chip
//! working set) are a separate address space, placed the same way from [`TILE_SPACE`]; the model
//! sends them through the caches ([`Tiles::Include`], a CPU running the loop) or lets them bypass
//! the caches ([`Tiles::Bypass`], as a GPU's shared memory would).
//!
//! **The model.** Levels `L1, L2, …`, each `size` bytes of `line`-byte lines in sets of `ways`
//! lines; the set of an address is `(address / line) mod sets`. Every access (read or write)
//! looks up its line in L1. A hit makes the line the most recently used of its set (a write
//! marks it dirty). A miss brings the line in (write-allocate: a write miss too), evicting the
//! least recently used line of its set; the next level sees the miss as a read of the line, and
//! then, if the evicted line was dirty, a write of that line (its write-back). Below the last
//! level is memory: a last-level miss reads a line from memory, a last-level write-back writes
//! one. Lines still dirty at the end are not flushed. Every pass starts with empty caches.

use attn_trace_core::engine::{Inputs, Registry, Start, Tensors};
use attn_trace_core::kernels::attention_flash::Tiles as TileSizes;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::progress::Progress;
use attn_trace_core::tensor::{Level, Shape};
use attn_trace_core::trace::{Buf, Op, Pass, Phase, Recorder, Trace};
use attn_trace_i18n::tr;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};

mod event;
mod levels;
mod model;
mod pass;
mod sweep;

pub use event::*;
pub use levels::*;
pub use model::*;
pub use pass::*;
pub use sweep::*;

/// Every buffer starts at a multiple of this many bytes.
pub const ALIGN: u64 = 64;
/// Bytes of one element (an `f32`).
pub const ELEMENT: u64 = 4;
/// Where the tile-local address space starts (`0x100_0000_0000`).
pub const TILE_SPACE: u64 = 1 << 40;

/// The base address of every buffer of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Addresses {
    /// `(base, bytes, level)` per [`Buf`], for the buffers the run has.
    bases: Vec<Option<(u64, u64, Level)>>,
}

impl Addresses {
    /// Places `buffers` (each with its level and length in elements) in the order given, which
    /// is registry order.
    pub fn new(buffers: impl IntoIterator<Item = (Buf, Level, usize)>) -> Addresses {
        let mut bases = vec![None; Buf::ALL.len()];
        let mut next = [0u64, TILE_SPACE];
        for (buf, level, len) in buffers {
            let space = usize::from(level == Level::Tile);
            let base = next[space];
            let bytes = len as u64 * ELEMENT;
            next[space] = (base + bytes).next_multiple_of(ALIGN);
            bases[buf as usize] = Some((base, bytes, level));
        }
        Addresses { bases }
    }

    /// The placement of a traced run's buffers.
    pub fn of_trace(trace: &Trace) -> Addresses {
        Addresses::new(
            Buf::ALL
                .iter()
                .filter_map(|&b| trace.buffer(b).map(|i| (b, i.spec.level, i.len()))),
        )
    }

    /// The placement of a run's buffers from its registry (the same as [`Addresses::of_trace`]
    /// of its trace).
    pub fn of_registry(registry: &Registry) -> Addresses {
        Addresses::new(registry.iter().map(|(b, s)| (b, s.level, s.len())))
    }

    /// Base address of `buf`, if the run has it.
    pub fn base(&self, buf: Buf) -> Option<u64> {
        self.bases[buf as usize].map(|(b, _, _)| b)
    }

    /// Bytes of `buf` (4 per element).
    pub fn bytes(&self, buf: Buf) -> u64 {
        self.bases[buf as usize].map_or(0, |(_, n, _)| n)
    }

    /// The address of `buf[offset]`: `base + 4·offset`.
    #[inline]
    pub fn address(&self, buf: Buf, offset: usize) -> u64 {
        self.bases[buf as usize].map_or(0, |(b, _, _)| b) + offset as u64 * ELEMENT
    }

    /// Is `buf` tile-local (in the tile address space)?
    #[inline]
    pub(crate) fn is_tile(&self, buf: Buf) -> bool {
        self.bases[buf as usize].is_some_and(|(_, _, l)| l == Level::Tile)
    }

    /// The buffers placed, in address order within each space (global first).
    pub fn placed(&self) -> impl Iterator<Item = (Buf, u64, u64, Level)> + '_ {
        Buf::ALL
            .iter()
            .filter_map(|&b| self.bases[b as usize].map(|(base, n, l)| (b, base, n, l)))
    }
}
