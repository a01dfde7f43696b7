//! The kernels, each written once and generic over a [`Recorder`](crate::trace::Recorder).
//!
//! Buffers are flat row-major `&[f32]`; sizes use the docs' capital letters (`B, T, C, H, D`)
//! and loops the docs' names (`bb, hh, i, j, c, d`), so the code reads like the walkthroughs.
//! Every `rec.enter(&[names], [values])` opens one loop iteration: its loop variable first,
//! then the offsets derived in it. Those calls vanish in untraced builds.
#![allow(non_snake_case)]

pub mod attention_1h;
pub mod attention_flash;
pub mod attention_gqa;
pub mod attention_mha;
pub mod attention_mistakes;
pub mod attention_mla;
pub mod decode;
pub mod dropout;
pub mod linear;
pub mod rope;
pub mod softmax;
pub mod split;

pub use crate::variant::{Choices, Descriptor, Heads, Refusal, Variant, Width, kernel_shape};

/// The names the kernels give their loop variables and the offsets derived in them
/// (`rec.enter(&["j", "k_base", "off"], …)`), as the docs name them; the registry's dimensions
/// take the same names (`b`/`bb` aside). Declared once: the analysis layer and the TUI refer to
/// them by constant, so a misspelling there does not compile, and a test holds every literal a
/// kernel records to this list, so a misspelling there fails it.
pub mod names {
    pub const BB: &str = "bb";
    pub const HH: &str = "hh";
    pub const KV_H: &str = "kv_h";
    pub const I: &str = "i";
    pub const J: &str = "j";
    pub const D: &str = "d";
    pub const C: &str = "c";
    pub const O: &str = "o";
    pub const T: &str = "t";
    pub const M: &str = "m";
    pub const D0: &str = "d0";
    pub const D1: &str = "d1";
    pub const LO: &str = "lo";
    pub const HI: &str = "hi";
    pub const II: &str = "ii";
    pub const JJ: &str = "jj";
    pub const I0: &str = "i0";
    pub const J0: &str = "j0";
    pub const ROW: &str = "row";
    pub const OFF: &str = "off";
    pub const QI: &str = "qi";
    pub const KJ: &str = "kj";
    pub const KI: &str = "ki";
    pub const VJ: &str = "vj";
    pub const AI: &str = "ai";
    pub const CI: &str = "ci";
    pub const RI: &str = "ri";
    pub const XI: &str = "xi";
    pub const YI: &str = "yi";
    pub const CS: &str = "cs";
    pub const Q_BASE: &str = "q_base";
    pub const K_BASE: &str = "k_base";
    pub const V_BASE: &str = "v_base";
    pub const A_BASE: &str = "a_base";
    pub const KV_BASE: &str = "kv_base";
    pub const W_OFF: &str = "w_off";
    pub const WO_OFF: &str = "wo_off";
    // a decode run's paged cache, and the parts of a split step
    pub const BLK: &str = "blk";
    pub const J_BLK: &str = "j_blk";
    pub const PHYS: &str = "phys";
    pub const J_PHYS: &str = "j_phys";
    pub const P: &str = "p";
    pub const LSE_OFF: &str = "lse_off";
    pub const LSE_ROW: &str = "lse_row";
    pub const O_BASE: &str = "o_base";
    // multi-head latent attention: a latent channel r, a rotary channel e, the rows of k_pe,
    // q_lat and o_lat
    pub const R: &str = "r";
    pub const E: &str = "e";
    pub const PE_BASE: &str = "pe_base";
    pub const L_BASE: &str = "l_base";
    // a decode run's own sizes (`rec.constants`): the window and sinks, the block size and
    // blocks per sequence, the parts and their length
    pub const W: &str = "W";
    pub const N: &str = "N";
    pub const BS: &str = "BS";
    pub const MB: &str = "MB";
    pub const PARTS: &str = "P";
    pub const L: &str = "L";
    pub const KV_RANK: &str = "R";
    pub const ROPE_DIM: &str = "DR";
    /// The batch and head dimensions of a layout (the loops are `bb` and `hh`).
    pub const B: &str = "b";
    pub const H: &str = "h";

    /// Every name a kernel records.
    pub const RECORDED: &[&str] = &[
        BB, HH, KV_H, I, J, D, C, O, T, M, II, JJ, I0, J0, ROW, OFF, QI, KJ, KI, VJ, AI, CI, RI, XI, YI, CS, Q_BASE,
        K_BASE, V_BASE, A_BASE, KV_BASE, W_OFF, WO_OFF, D0, D1, LO, HI, BLK, J_BLK, PHYS, J_PHYS, P, LSE_OFF, LSE_ROW,
        O_BASE, W, N, BS, MB, PARTS, L, R, E, PE_BASE, L_BASE, KV_RANK, ROPE_DIM,
    ];
}

use serde::Serialize;
use std::sync::Arc;

/// Which (query i, key j) pairs attention may not look at.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mask {
    /// A query sees itself and the past: pairs with `j > i` are hidden.
    #[default]
    Causal,
    /// Every pair is visible.
    None,
    /// An explicit `[S, T]` matrix: `keep[i*T + j]` says whether query `i` may see key `j`.
    Explicit { t: usize, keep: Arc<[bool]> },
    /// A sliding window of `w` keys (Mistral, gpt-oss): causal, and query `i` sees only keys
    /// `i − w < j ≤ i`, but for the first `sinks` positions, which every query sees whatever the
    /// window (StreamingLLM's attention sinks). `w ≥ 1`; `[run] window` and `[run] sinks`.
    Window { w: usize, sinks: usize },
}

impl Mask {
    /// The masks that have a name (an explicit one is given as a matrix, not by name).
    pub const NAMED: [Mask; 2] = [Mask::Causal, Mask::None];

    /// An explicit mask from `S` rows of `T` entries each (true = visible).
    pub fn explicit(rows: &[Vec<bool>]) -> Mask {
        let t = rows.first().map_or(0, Vec::len);
        Mask::Explicit {
            t,
            keep: rows.iter().flatten().copied().collect(),
        }
    }

    pub const fn name(&self) -> &'static str {
        match self {
            Mask::Causal => "causal",
            Mask::None => "none",
            Mask::Explicit { .. } => "explicit",
            Mask::Window { .. } => "window",
        }
    }

    /// One of the [`Mask::NAMED`] masks by name.
    pub fn from_name(name: &str) -> Option<Mask> {
        Mask::NAMED.into_iter().find(|m| m.name() == name)
    }

    /// Is the score of query `i` for key `j` masked out?
    #[inline(always)]
    pub fn hides(&self, i: usize, j: usize) -> bool {
        match self {
            Mask::Causal => j > i,
            Mask::None => false,
            // a pair outside the S×T matrix does not exist, so nothing there is visible
            Mask::Explicit { t, keep } => j >= *t || !keep.get(i * t + j).copied().unwrap_or(false),
            // j + w ≤ i is j ≤ i − w: the key has slid out of the window, unless it is a sink
            Mask::Window { w, sinks } => j > i || (j + w <= i && j >= *sinks),
        }
    }

    /// Is this the causal mask or one that hides more (a window)? Such a mask hides every key
    /// after its query, so a row's visible keys end at `i`.
    pub const fn is_causal(&self) -> bool {
        matches!(self, Mask::Causal | Mask::Window { .. })
    }

    /// Does the mask hide every pair of the tile `rows × cols`? (Causal: the tile lies wholly
    /// above the diagonal, its first key after its last query.)
    pub fn hides_tile(&self, rows: std::ops::Range<usize>, cols: std::ops::Range<usize>) -> bool {
        match self {
            Mask::Causal => rows.end == 0 || cols.start > rows.end - 1,
            Mask::None => rows.is_empty() || cols.is_empty(),
            Mask::Explicit { .. } => rows.clone().all(|i| cols.clone().all(|j| self.hides(i, j))),
            // the rows' bands together are r0 − w < j ≤ r1 − 1 (a key j there is seen by query
            // max(r0, j)); a sink column is seen by every row at or after it
            Mask::Window { w, sinks } => {
                let (r0, r1, c0, c1) = (rows.start, rows.end, cols.start, cols.end);
                r0 >= r1 || c0 >= c1 || c0 > r1 - 1 || (c0 >= *sinks && c1 - 1 + w <= r0)
            }
        }
    }

    /// How many (i, j) pairs of an `S × T` score matrix are visible: in closed form, but for a
    /// window (one closed-form row at a time) and an explicit mask (whose cells the scenario file
    /// holds). Saturates at `usize::MAX`, which no scenario's sizes reach (each is at most 2²⁰).
    pub fn visible_pairs(&self, S: usize, T: usize) -> usize {
        match self {
            // row i sees min(i + 1, T) keys: 1 + 2 + … + min(S, T), then T for each row after
            Mask::Causal => {
                let n = S.min(T);
                let triangle = if n.is_multiple_of(2) {
                    (n / 2).saturating_mul(n.saturating_add(1))
                } else {
                    n.saturating_mul(n.div_ceil(2))
                };
                triangle.saturating_add((S - n).saturating_mul(T))
            }
            Mask::None => S.saturating_mul(T),
            Mask::Explicit { keep, .. } => keep.iter().filter(|&&k| k).count(),
            Mask::Window { .. } => (0..S).fold(0usize, |n, i| n.saturating_add(self.visible_in_row(i, T))),
        }
    }

    /// How many keys of `0..T` query `i` sees.
    pub fn visible_in_row(&self, i: usize, T: usize) -> usize {
        match self {
            Mask::Causal => (i + 1).min(T),
            Mask::None => T,
            Mask::Explicit { .. } => (0..T).filter(|&j| !self.hides(i, j)).count(),
            // the band (i − w, i] and the sinks before it, within 0..T
            Mask::Window { w, sinks } => {
                let end = (i + 1).min(T);
                let band_start = (i + 1).saturating_sub(*w).min(end);
                (end - band_start) + (*sinks).min(band_start)
            }
        }
    }
}

impl Serialize for Mask {
    fn serialize<Z: serde::Serializer>(&self, ser: Z) -> Result<Z::Ok, Z::Error> {
        ser.serialize_str(self.name())
    }
}
