//! The kernels, each written once and generic over a [`Recorder`](crate::trace::Recorder).
//!
//! Buffers are flat row-major `&[f32]`; sizes use the docs' capital letters (`B, T, C, H, D`)
//! and loops the docs' names (`bb, hh, i, j, c, d`), so the code reads like the walkthroughs.
//! Every `rec.enter(&[names], [values])` opens one loop iteration: its loop variable first,
//! then the offsets derived in it. Those calls vanish in untraced builds.
#![allow(non_snake_case)]

pub mod attention_1h;
pub mod attention_mha;
pub mod linear;
pub mod softmax;
pub mod split;

use serde::Serialize;
use std::fmt;

/// Which attention kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// One head over all `C` channels (`attention_1h.rs`).
    Baseline,
    /// `H` heads of `D = C/H` channels each (`attention_mha.rs`).
    Mha,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Baseline, Variant::Mha];

    pub const fn name(self) -> &'static str {
        match self {
            Variant::Baseline => "baseline",
            Variant::Mha => "mha",
        }
    }

    pub fn from_name(name: &str) -> Option<Variant> {
        match name {
            "baseline" => Some(Variant::Baseline),
            "mha" => Some(Variant::Mha),
            _ => None,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which (query i, key j) pairs attention may not look at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mask {
    /// A query sees itself and the past: pairs with `j > i` are hidden.
    #[default]
    Causal,
    /// Every pair is visible.
    None,
}

impl Mask {
    pub const fn name(self) -> &'static str {
        match self {
            Mask::Causal => "causal",
            Mask::None => "none",
        }
    }

    pub fn from_name(name: &str) -> Option<Mask> {
        match name {
            "causal" => Some(Mask::Causal),
            "none" => Some(Mask::None),
            _ => None,
        }
    }

    /// Is the score of query `i` for key `j` masked out?
    #[inline(always)]
    pub const fn hides(self, i: usize, j: usize) -> bool {
        match self {
            Mask::Causal => j > i,
            Mask::None => false,
        }
    }

    /// How many keys query `i` may see among `T`.
    pub const fn visible(self, i: usize, T: usize) -> usize {
        match self {
            Mask::Causal => i + 1,
            Mask::None => T,
        }
    }
}
