//! The event log: what a kernel read and wrote, in order, and where in its loops it was.
//!
//! Kernels are written once, generic over a [`Recorder`]. With [`NoRecord`] every call inlines to
//! nothing (the attention passes then take their fast path instead, `dispatch.rs`); with
//! [`Logger`] every element read or written becomes
//! one compact [`Event`], and every loop iteration one [`Frame`] holding its loop variable and the
//! offsets derived from it. [`Trace`] is the finished log with the indexes the TUI queries.
//!
//! How `+=` is recorded: `rec.add(buf, data, off, delta)` is a read of the old value followed by
//! a write of the new one, so "who last wrote this cell" always has an answer in the log.

mod buffers;
mod index;
mod log;
mod phases;

pub use crate::progress::Progress;
pub use buffers::{Buf, CacheDims, Facts, Sizes};
pub use index::CellIndex;
pub use log::{BufferInfo, Derived, EventView, Kind, Logger, Trace};
pub use phases::{Phase, Stage};

use serde::Serialize;
use std::fmt;
use std::panic::Location;

/// The value a masked score is overwritten with, as in the reference implementation.
pub const MASKED: f32 = -1e9;

/// Forward or backward.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pass {
    Forward,
    Backward,
}

impl Pass {
    pub const ALL: [Pass; 2] = [Pass::Forward, Pass::Backward];

    pub const fn name(self) -> &'static str {
        match self {
            Pass::Forward => "forward",
            Pass::Backward => "backward",
        }
    }

    pub fn from_name(name: &str) -> Option<Pass> {
        Pass::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum Op {
    Read,
    Write,
}

impl Op {
    pub const fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
        }
    }
}

/// One element read or written. 16 bytes: everything else (loop variables, derived offsets,
/// source file, phase) is reached through the frame and the phase spans.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    pub offset: u32,
    pub value: f32,
    /// Innermost loop iteration this access happened in ([`NO_FRAME`] outside every loop).
    pub frame: u32,
    /// Source line in the file of the frame's kind.
    pub line: u16,
    pub buf: Buf,
    pub op: Op,
}

/// Frame id of an event made outside every loop.
pub const NO_FRAME: u32 = u32::MAX;

/// Most values one loop iteration records: its loop variable and up to two derived offsets.
pub const FRAME_VALUES: usize = 3;

/// One iteration of one loop: which loop (`kind`), its variable and derived offsets (`vals`, in
/// the order of the kind's names), its enclosing iteration, and the events it contains.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    pub parent: u32,
    /// Events `start..end` happened inside this iteration (including nested loops).
    pub start: u32,
    pub end: u32,
    pub kind: u16,
    pub depth: u16,
    pub vals: [u32; FRAME_VALUES],
}

/// Where a kernel reports what it does. Kernels are generic over it: with [`NoRecord`] every
/// call below compiles away.
pub trait Recorder {
    /// `false` for the no-op recorder: lets the provided methods skip all bookkeeping.
    const ENABLED: bool;

    /// Called by the provided methods; only reached when `ENABLED`.
    fn log(&mut self, op: Op, buf: Buf, offset: usize, value: f32, line: u32);

    /// A kernel starts one of its passes.
    fn phase(&mut self, phase: Phase);

    /// A loop iteration starts. `names[0]` is the loop variable, the rest are offsets derived
    /// from it in this iteration; `vals` are their values. Must be matched by [`Recorder::exit`].
    #[track_caller]
    fn enter<const N: usize>(&mut self, names: &'static [&'static str; N], vals: [usize; N]);

    /// The innermost open loop iteration ends.
    fn exit(&mut self);

    /// The kernel's own sizes that offset formulas use beside the shape's (a decode cache's
    /// window `W` or block size `BS`), named as the formulas name them. Recorded once per run.
    fn constants(&mut self, _names: &'static [&'static str], _vals: &[usize]) {}

    /// Reads `data[offset]`, recording it.
    #[inline(always)]
    #[track_caller]
    fn read(&mut self, buf: Buf, data: &[f32], offset: usize) -> f32 {
        let value = data[offset];
        if Self::ENABLED {
            self.log(Op::Read, buf, offset, value, Location::caller().line());
        }
        value
    }

    /// Writes `data[offset] = value`, recording it.
    #[inline(always)]
    #[track_caller]
    fn write(&mut self, buf: Buf, data: &mut [f32], offset: usize, value: f32) {
        data[offset] = value;
        if Self::ENABLED {
            self.log(Op::Write, buf, offset, value, Location::caller().line());
        }
    }

    /// `data[offset] += delta`, recorded as a read of the old value and a write of the new.
    #[inline(always)]
    #[track_caller]
    fn add(&mut self, buf: Buf, data: &mut [f32], offset: usize, delta: f32) {
        let old = data[offset];
        let new = old + delta;
        data[offset] = new;
        if Self::ENABLED {
            let line = Location::caller().line();
            self.log(Op::Read, buf, offset, old, line);
            self.log(Op::Write, buf, offset, new, line);
        }
    }
}

/// The recorder of untraced runs: every method is empty and inlines away.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoRecord;

impl Recorder for NoRecord {
    const ENABLED: bool = false;

    #[inline(always)]
    fn log(&mut self, _: Op, _: Buf, _: usize, _: f32, _: u32) {}

    #[inline(always)]
    fn phase(&mut self, _: Phase) {}

    #[inline(always)]
    fn enter<const N: usize>(&mut self, _: &'static [&'static str; N], _: [usize; N]) {}

    #[inline(always)]
    fn exit(&mut self) {}
}
