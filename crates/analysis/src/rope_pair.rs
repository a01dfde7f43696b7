//! One rotation of a channel pair as the log made it (`kernels/rope.rs`): the one answer to
//! "which pair is this event about, at which angle, and what did it turn into" for the
//! equation panel and `explain`.
//!
//! A pair is one iteration of the loop over `m` (with the pair's channels `d0, d1` or
//! `lo, hi`): it reads `cos` and `sin` from the tables, the two values `x[d0]`, `x[d1]`, and
//! writes both turned, `x'[d0] = x[d0]·cos − x[d1]·sin`, `x'[d1] = x[d0]·sin + x[d1]·cos`.
//! Backward turns the gradient back by the negative angle: `sin` is read as it is and
//! subtracted where forward adds it. The events are found by what they are, not by counting.

use crate::hand::{Calc, v};
use attn_trace_core::kernels::names;
use attn_trace_core::trace::{Buf, Op, Phase, Trace};

/// The events of one pair's rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RopePair {
    pub frame: u32,
    /// The pair's index `m`, and its channels in the head (`d0, d1` or `lo, hi`).
    pub m: usize,
    pub d0: usize,
    pub d1: usize,
    /// The reads of `cos(t·θ_m)` and `sin(t·θ_m)`.
    pub cos: usize,
    pub sin: usize,
    /// The reads of the pair's two values, and the writes of the two turned values.
    pub x0: usize,
    pub x1: usize,
    pub y0: usize,
    pub y1: usize,
    /// Backward: turned back by `−t·θ_m`.
    pub back: bool,
}

impl RopePair {
    /// The pair whose iteration holds event `n`.
    pub fn at(trace: &Trace, n: usize) -> Option<RopePair> {
        let phase = trace.phase_at(n);
        if !matches!(phase, Phase::Rope | Phase::RopeBack) {
            return None;
        }
        let frame = trace.events.get(n)?.frame;
        let f = trace.frame(frame)?;
        if trace.kinds.get(f.kind as usize)?.names.first() != Some(&names::M) {
            return None;
        }
        let span = f.start as usize..(f.end as usize).min(trace.len());
        let find = |op: Op, buf: Option<Buf>, nth: usize| {
            span.clone()
                .filter(|&k| {
                    let e = trace.events[k];
                    e.op == op
                        && match buf {
                            Some(b) => e.buf == b,
                            None => !matches!(e.buf, Buf::RopeCos | Buf::RopeSin),
                        }
                })
                .nth(nth)
        };
        Some(RopePair {
            frame,
            m: f.vals[0] as usize,
            d0: f.vals[1] as usize,
            d1: f.vals[2] as usize,
            cos: find(Op::Read, Some(Buf::RopeCos), 0)?,
            sin: find(Op::Read, Some(Buf::RopeSin), 0)?,
            x0: find(Op::Read, None, 0)?,
            x1: find(Op::Read, None, 1)?,
            y0: find(Op::Write, None, 0)?,
            y1: find(Op::Write, None, 1)?,
            back: phase == Phase::RopeBack,
        })
    }

    /// The pair that turned cell `off` of `buf` in `phase` (its first write there).
    pub fn of_write(trace: &Trace, buf: Buf, off: usize, phase: Phase) -> Option<RopePair> {
        let w = trace
            .index
            .writes(buf, off)
            .iter()
            .map(|&n| n as usize)
            .find(|&n| trace.phase_at(n) == phase)?;
        RopePair::at(trace, w)
    }

    /// The buffer being turned (`q`, `k`, `k_pe`, a cache, or their gradients).
    pub fn buf(&self, trace: &Trace) -> Buf {
        trace.events[self.x0].buf
    }

    /// The value event `n` read or wrote.
    pub fn value(trace: &Trace, n: usize) -> f32 {
        trace.events[n].value
    }

    /// `x'[d0]`: forward `x[d0]·cos − x[d1]·sin`, backward `x[d0]·cos + x[d1]·sin`; operands
    /// `[x[d0], cos, x[d1], sin]`.
    pub fn first_calc(&self, trace: &Trace) -> Calc {
        let vals = [self.x0, self.cos, self.x1, self.sin]
            .map(|n| trace.events[n].value)
            .to_vec();
        let form = if self.back {
            v(0) * v(1) + v(2) * v(3)
        } else {
            v(0) * v(1) - v(2) * v(3)
        };
        Calc::new(vals, form, trace.events[self.y0].value)
    }

    /// `x'[d1]`: forward `x[d0]·sin + x[d1]·cos`, backward `−x[d0]·sin + x[d1]·cos`; operands
    /// `[x[d0], sin, x[d1], cos]`.
    pub fn second_calc(&self, trace: &Trace) -> Calc {
        let vals = [self.x0, self.sin, self.x1, self.cos]
            .map(|n| trace.events[n].value)
            .to_vec();
        let form = if self.back {
            -(v(0) * v(1)) + v(2) * v(3)
        } else {
            v(0) * v(1) + v(2) * v(3)
        };
        Calc::new(vals, form, trace.events[self.y1].value)
    }
}
