//! One softmax row as the log made it (`kernels/softmax.rs`), forward and backward: the one
//! answer to "which row is this event in, and what are its maximum, exponentials, sum and
//! probabilities (or its `Σ dP·P` and `dS`)" for the equation panel and `explain`.
//!
//! Forward, a row is one iteration (`i, row`, a decode step's `hh, row`, a split part's
//! `p, lo, lse_off`, a merge's `hh, lse_row`) whose nested column iterations make three
//! passes over its columns: pass a reads each `x` (the maximum), pass b reads it again and
//! writes `e = exp(x − m)`, pass c reads `e` and writes `P = e / Σ e`. Reads and writes of the
//! row's own iteration are the sink logit (read before pass a), its share `p_sink` and a split
//! part's log-sum-exp (written after pass c). Backward, the column iterations make two passes:
//! `Σ_k dP·P`, then each `dS = P·(dP − Σ)`, and the row may keep its `Σ` in `delta`.
//!
//! The numbers the log does not hold (the row maximum `m`, `e_sink`, the sums) are the
//! reader's arithmetic on the numbers it does, in the kernel's order, so they are the kernel's
//! bits.

use crate::hand::{Calc, exp, ln, v};
use attn_trace_core::tensor::simd;
use attn_trace_core::trace::{Buf, Op, Phase, Trace};

/// The phases whose rows are forward softmaxes.
fn forward_phase(phase: Phase) -> bool {
    matches!(
        phase,
        Phase::Softmax | Phase::DecodeSoftmax | Phase::DecodePartSoftmax | Phase::DecodeMergeWeights
    )
}

/// One column of a forward row: key `j` (a merge's part `p`) at offset `off`, and its events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub j: usize,
    pub off: usize,
    /// Pass a's read of `x`, for the maximum.
    pub read: usize,
    /// Pass b's write of `e = exp(x − m)`.
    pub e: usize,
    /// Pass c's write of `P = e / Σ e`.
    pub p: usize,
}

/// Where in its row an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The read of the row's sink logit.
    Sink,
    /// Pass a, at column `k`: the maximum so far.
    Max(usize),
    /// Pass b, at column `k` (its read of `x`, or its write of `e`).
    Exp(usize),
    /// Pass c, at column `k` (its read of `e`, or its write of `P`).
    Norm(usize),
    /// The write of the sink's share.
    PSink,
    /// The write of a split part's log-sum-exp.
    Lse,
}

/// A forward softmax row.
#[derive(Clone, Debug, PartialEq)]
pub struct SoftmaxRow {
    /// The row's iteration.
    pub frame: u32,
    /// What it reads (`scores`, `lse_part`) and writes (`probs`, `p_part`, `w_part`).
    pub x: Buf,
    pub y: Buf,
    pub cols: Vec<Column>,
    /// The read of the row's sink logit (gpt-oss).
    pub sink: Option<usize>,
    /// The write of the sink's share `P_sink`.
    pub p_sink: Option<usize>,
    /// The write of a split part's log-sum-exp `m + ln Σ e`.
    pub lse: Option<usize>,
}

impl SoftmaxRow {
    /// The forward row whose iteration holds event `n`.
    pub fn at(trace: &Trace, n: usize) -> Option<SoftmaxRow> {
        if n >= trace.len() || !forward_phase(trace.phase_at(n)) {
            return None;
        }
        trace
            .frame_ids(n)
            .into_iter()
            .take(2)
            .find_map(|id| SoftmaxRow::of_frame(trace, id))
    }

    /// The forward row made in iteration `row`, if it is one.
    pub fn of_frame(trace: &Trace, row: u32) -> Option<SoftmaxRow> {
        let f = trace.frame(row)?;
        let span = f.start as usize..(f.end as usize).min(trace.len());
        let own = |op: Op, buf: Buf| {
            span.clone()
                .find(|&k| trace.events[k].frame == row && trace.events[k].op == op && trace.events[k].buf == buf)
        };
        let events: Vec<usize> = span.clone().filter(|&k| trace.events[k].frame != row).collect();
        let first_write = events.iter().position(|&k| trace.events[k].op == Op::Write)?;
        // pass a reads every column once; pass b starts with a read of its first column
        let t = first_write.checked_sub(1).filter(|&t| t > 0)?;
        if events.len() < 5 * t {
            return None;
        }
        let is = |k: usize, op: Op| trace.events[k].op == op;
        let x = trace.events[events[0]].buf;
        let y = trace.events[events[first_write]].buf;
        let mut cols = Vec::with_capacity(t);
        for k in 0..t {
            let (read, e, p) = (events[k], events[t + 2 * k + 1], events[3 * t + 2 * k + 1]);
            let ok = is(read, Op::Read)
                && is(events[t + 2 * k], Op::Read)
                && is(e, Op::Write)
                && is(events[3 * t + 2 * k], Op::Read)
                && is(p, Op::Write)
                && trace.events[e].buf == y
                && trace.events[p].buf == y;
            if !ok {
                return None;
            }
            let c = trace.frame(trace.events[read].frame)?;
            cols.push(Column {
                j: c.vals[0] as usize,
                off: c.vals[1] as usize,
                read,
                e,
                p,
            });
        }
        Some(SoftmaxRow {
            frame: row,
            x,
            y,
            cols,
            sink: own(Op::Read, Buf::Sink),
            p_sink: own(Op::Write, Buf::PSink),
            lse: own(Op::Write, Buf::LsePart),
        })
    }

    /// Where event `n` is in the row.
    pub fn step(&self, trace: &Trace, n: usize) -> Option<Step> {
        if Some(n) == self.sink {
            return Some(Step::Sink);
        }
        if Some(n) == self.p_sink {
            return Some(Step::PSink);
        }
        if Some(n) == self.lse {
            return Some(Step::Lse);
        }
        let col = trace.frame(trace.events.get(n)?.frame)?;
        let k = self.cols.iter().position(|c| c.off == col.vals[1] as usize)?;
        let c = self.cols[k];
        Some(if n == c.read {
            Step::Max(k)
        } else if n <= c.e {
            Step::Exp(k)
        } else {
            Step::Norm(k)
        })
    }

    /// Column `k`'s `x`, as pass a read it.
    pub fn x(&self, trace: &Trace, k: usize) -> f32 {
        trace.events[self.cols[k].read].value
    }

    /// The sink logit, if the row has one.
    pub fn sink_logit(&self, trace: &Trace) -> Option<f32> {
        self.sink.map(|n| trace.events[n].value)
    }

    /// The maximum of the sink logit and the first `upto` columns: pass a's `m` so far.
    pub fn max_of(&self, trace: &Trace, upto: usize) -> f32 {
        (0..upto.min(self.cols.len()))
            .map(|k| self.x(trace, k))
            .fold(self.sink_logit(trace).unwrap_or(f32::NEG_INFINITY), f32::max)
    }

    /// The row maximum `m`.
    pub fn max(&self, trace: &Trace) -> f32 {
        self.max_of(trace, self.cols.len())
    }

    /// Column `k`'s `e = exp(x − m)`, as pass b wrote it.
    pub fn e(&self, trace: &Trace, k: usize) -> f32 {
        trace.events[self.cols[k].e].value
    }

    /// The sink's exponential `exp(sink − m)`, the kernel's first term of `Σ e` (0 without a
    /// sink logit): the same `exp`, so the same bits.
    pub fn e_sink(&self, trace: &Trace) -> f32 {
        self.sink_logit(trace).map_or(0.0, |s| simd::exp(s - self.max(trace)))
    }

    /// `Σ e` of the sink and the first `upto` columns, added in the kernel's order.
    pub fn sum_of(&self, trace: &Trace, upto: usize) -> f32 {
        (0..upto.min(self.cols.len())).fold(self.e_sink(trace), |s, k| s + self.e(trace, k))
    }

    /// The row's `Σ e`.
    pub fn sum(&self, trace: &Trace) -> f32 {
        self.sum_of(trace, self.cols.len())
    }

    /// Column `k`'s probability, as pass c wrote it.
    pub fn p(&self, trace: &Trace, k: usize) -> f32 {
        trace.events[self.cols[k].p].value
    }

    /// `e_k = exp(x_k − m)`: operands `[x_k, m]`.
    pub fn exp_calc(&self, trace: &Trace, k: usize) -> Calc {
        Calc::new(
            vec![self.x(trace, k), self.max(trace)],
            exp(v(0) - v(1)),
            self.e(trace, k),
        )
    }

    /// `e_sink = exp(sink − m)`: operands `[sink, m]`.
    pub fn e_sink_calc(&self, trace: &Trace) -> Option<Calc> {
        let s = self.sink_logit(trace)?;
        Some(Calc::new(
            vec![s, self.max(trace)],
            exp(v(0) - v(1)),
            self.e_sink(trace),
        ))
    }

    /// `P_k = e_k / Σ e`: operands `[e_k, Σ e]`.
    pub fn norm_calc(&self, trace: &Trace, k: usize) -> Calc {
        Calc::new(vec![self.e(trace, k), self.sum(trace)], v(0) / v(1), self.p(trace, k))
    }

    /// `P_sink = e_sink / Σ e`: operands `[e_sink, Σ e]`.
    pub fn p_sink_calc(&self, trace: &Trace) -> Option<Calc> {
        let n = self.p_sink?;
        Some(Calc::new(
            vec![self.e_sink(trace), self.sum(trace)],
            v(0) / v(1),
            trace.events[n].value,
        ))
    }

    /// `Σ e = e_sink + Σ_j e_j`: operands `[e_sink, Σ_j e_j]`.
    pub fn sum_calc(&self, trace: &Trace) -> Calc {
        let rest = (0..self.cols.len()).fold(0.0f32, |s, k| s + self.e(trace, k));
        Calc::new(vec![self.e_sink(trace), rest], v(0) + v(1), self.sum(trace))
    }

    /// A split part's `lse = m + ln Σ e`: operands `[m, Σ e]`.
    pub fn lse_calc(&self, trace: &Trace) -> Option<Calc> {
        let n = self.lse?;
        Some(Calc::new(
            vec![self.max(trace), self.sum(trace)],
            v(0) + ln(v(1)),
            trace.events[n].value,
        ))
    }
}

/// One column of a backward row: key `j` at offset `off`, pass a's reads of its `dP` and `P`,
/// and pass b's reads of `P`, `dP` and write of `dS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackColumn {
    pub j: usize,
    pub off: usize,
    pub dot_dp: usize,
    pub dot_p: usize,
    pub p: usize,
    pub dp: usize,
    pub ds: usize,
}

/// Where in its backward row an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackStep {
    /// Pass a, at column `k`: `Σ_k dP·P` so far.
    Dot(usize),
    /// Pass b, at column `k`.
    Ds(usize),
    /// The write of the row's `Σ` to `delta`.
    Delta,
}

/// A backward softmax row: `dS = P·(dP − Σ_k dP·P)`.
#[derive(Clone, Debug, PartialEq)]
pub struct SoftmaxBackRow {
    pub frame: u32,
    pub cols: Vec<BackColumn>,
    /// The write of the row's `Σ_k dP·P` to `delta` (with sink logits).
    pub delta: Option<usize>,
}

impl SoftmaxBackRow {
    /// The backward row whose iteration holds event `n`.
    pub fn at(trace: &Trace, n: usize) -> Option<SoftmaxBackRow> {
        if n >= trace.len() || trace.phase_at(n) != Phase::SoftmaxBack {
            return None;
        }
        trace
            .frame_ids(n)
            .into_iter()
            .take(2)
            .find_map(|id| SoftmaxBackRow::of_frame(trace, id))
    }

    /// The backward row made in iteration `row`, if it is one.
    pub fn of_frame(trace: &Trace, row: u32) -> Option<SoftmaxBackRow> {
        let f = trace.frame(row)?;
        let span = f.start as usize..(f.end as usize).min(trace.len());
        let events: Vec<usize> = span.clone().filter(|&k| trace.events[k].frame != row).collect();
        let t = events.len() / 5;
        if t == 0 || events.len() != 5 * t {
            return None;
        }
        let is = |k: usize, op: Op, buf: Buf| trace.events[k].op == op && trace.events[k].buf == buf;
        let mut cols = Vec::with_capacity(t);
        for k in 0..t {
            let (dot_dp, dot_p) = (events[2 * k], events[2 * k + 1]);
            let (p, dp, ds) = (
                events[2 * t + 3 * k],
                events[2 * t + 3 * k + 1],
                events[2 * t + 3 * k + 2],
            );
            let ok = is(dot_dp, Op::Read, Buf::DProbs)
                && is(dot_p, Op::Read, Buf::Probs)
                && is(p, Op::Read, Buf::Probs)
                && is(dp, Op::Read, Buf::DProbs)
                && is(ds, Op::Write, Buf::DScores);
            if !ok {
                return None;
            }
            let c = trace.frame(trace.events[ds].frame)?;
            cols.push(BackColumn {
                j: c.vals[0] as usize,
                off: c.vals[1] as usize,
                dot_dp,
                dot_p,
                p,
                dp,
                ds,
            });
        }
        let delta = span.clone().find(|&k| {
            trace.events[k].frame == row && trace.events[k].op == Op::Write && trace.events[k].buf == Buf::Delta
        });
        Some(SoftmaxBackRow {
            frame: row,
            cols,
            delta,
        })
    }

    /// Where event `n` is in the row.
    pub fn step(&self, n: usize) -> Option<BackStep> {
        if Some(n) == self.delta {
            return Some(BackStep::Delta);
        }
        if let Some(k) = self.cols.iter().position(|c| n == c.dot_dp || n == c.dot_p) {
            return Some(BackStep::Dot(k));
        }
        self.cols
            .iter()
            .position(|c| (c.p..=c.ds).contains(&n))
            .map(BackStep::Ds)
    }

    /// Pass a's `Σ_k dP·P` over the first `upto` columns, in the kernel's order.
    pub fn dot_of(&self, trace: &Trace, upto: usize) -> f32 {
        self.cols[..upto.min(self.cols.len())].iter().fold(0.0, |s, c| {
            s + trace.events[c.dot_dp].value * trace.events[c.dot_p].value
        })
    }

    /// The row's `Σ_k dP·P`.
    pub fn dot(&self, trace: &Trace) -> f32 {
        self.dot_of(trace, self.cols.len())
    }

    /// `Σ_k dP·P` term by term: operands `[dP_0, P_0, dP_1, P_1, …]`.
    pub fn dot_calc(&self, trace: &Trace) -> Option<Calc> {
        let vals: Vec<f32> = self
            .cols
            .iter()
            .flat_map(|c| [trace.events[c.dot_dp].value, trace.events[c.dot_p].value])
            .collect();
        let form = crate::hand::sum_of_products(0, self.cols.len(), 2)?;
        Some(Calc::new(vals, form, self.dot(trace)))
    }

    /// Column `k`'s `dS = P·(dP − Σ)`: operands `[P, dP, Σ]`.
    pub fn ds_calc(&self, trace: &Trace, k: usize) -> Calc {
        let c = self.cols[k];
        Calc::new(
            vec![trace.events[c.p].value, trace.events[c.dp].value, self.dot(trace)],
            v(0) * (v(1) - v(2)),
            trace.events[c.ds].value,
        )
    }
}
