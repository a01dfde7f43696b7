//! Flash's online softmax, one query row and one key tile at a time (`attention_flash.rs`): the
//! iteration of `ii` that reads `m_old`, the row of the score tile (its maximum), the row again
//! (each `e^(S − m_new)` written in place), `l_old`, then writes `l_new` and `m_new` and rescales
//! the accumulator. The equation panel and `explain` read a row's state from here.

use crate::hand::{self, Calc, v};
use attn_trace_core::kernels::names;
use attn_trace_core::tensor::simd::exp;
use attn_trace_core::trace::{Buf, Op, Trace};

/// One update of the online softmax of a query row, as the log holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowUpdate {
    /// The iteration's first event: the read of `m_old`.
    pub start: usize,
    /// One past its last event (the accumulator's rescale included).
    pub end: usize,
    /// The key tile's width: the scores the row folds in.
    pub nc: usize,
}

impl RowUpdate {
    /// The row update whose iteration holds event `n`.
    pub fn at(trace: &Trace, n: usize) -> Option<RowUpdate> {
        trace
            .frame_ids(n)
            .into_iter()
            .filter_map(|id| trace.frame(id))
            .filter(|f| trace.kinds[f.kind as usize].names == [names::II])
            .find_map(|f| RowUpdate::starting(trace, f.start as usize, f.end as usize))
    }

    /// Every update of row `i0 + ii` of head `hh` in batch `bb`, key tile by key tile.
    pub fn of_row(trace: &Trace, bb: usize, hh: usize, i0: usize, ii: usize) -> Vec<RowUpdate> {
        let var = |n: usize, name: &str| trace.view(n).vars.iter().find(|v| v.0 == name).map(|v| v.1);
        trace
            .index
            .reads(Buf::RowMax, ii)
            .iter()
            .map(|&n| n as usize)
            .filter(|&n| {
                var(n, names::BB) == Some(bb) && var(n, names::HH) == Some(hh) && var(n, names::I0) == Some(i0)
            })
            .filter_map(|n| RowUpdate::at(trace, n).filter(|u| u.start == n))
            .collect()
    }

    /// The update beginning at `start` (an iteration of `ii` ending at `end`), if its events
    /// are the online softmax's: `m_old`, `nc` score reads, `nc` read-and-write pairs, `l_old`,
    /// `l_new`, `m_new`.
    fn starting(trace: &Trace, start: usize, end: usize) -> Option<RowUpdate> {
        let is = |k: usize, op: Op, buf: Buf| trace.events.get(k).is_some_and(|e| e.op == op && e.buf == buf);
        if !is(start, Op::Read, Buf::RowMax) {
            return None;
        }
        // m_old, the row's nc scores (max), one more read: the first write is P's, nc + 2 in
        let first_write = (start..end).find(|&k| trace.events[k].op == Op::Write)?;
        let nc = first_write.checked_sub(start + 2)?;
        let u = RowUpdate { start, end, nc };
        let whole = is(u.l_old(), Op::Read, Buf::RowSum)
            && is(u.l_new(), Op::Write, Buf::RowSum)
            && is(u.m_new(), Op::Write, Buf::RowMax);
        whole.then_some(u)
    }

    /// The read of the row's `k`-th score, for its maximum.
    pub const fn score(&self, k: usize) -> usize {
        self.start + 1 + k
    }

    /// The write of `P = e^(S − m_new)` in place of the `k`-th score.
    pub const fn p(&self, k: usize) -> usize {
        self.start + self.nc + 2 + 2 * k
    }

    /// The read of `l_old`.
    pub const fn l_old(&self) -> usize {
        self.start + 3 * self.nc + 1
    }

    /// The write of `l_new = e^(m_old − m_new)·l_old + rowsum(P)`.
    pub const fn l_new(&self) -> usize {
        self.l_old() + 1
    }

    /// The write of `m_new`.
    pub const fn m_new(&self) -> usize {
        self.l_old() + 2
    }

    /// `m_old` and `m_new`, as read and written.
    pub fn maxima(&self, trace: &Trace) -> (f32, f32) {
        (trace.events[self.start].value, trace.events[self.m_new()].value)
    }
}

/// `e^(m_old − m_new)`, the rescale of what a row summed before this key tile.
pub fn alpha(m_old: f32, m_new: f32) -> f32 {
    exp(m_old - m_new)
}

impl RowUpdate {
    /// The row's scores this key tile folds in, as the maximum's reads got them.
    pub fn scores(&self, trace: &Trace) -> Vec<f32> {
        (0..self.nc).map(|k| trace.events[self.score(k)].value).collect()
    }

    /// `rowsum(P_tile)` of the first `upto` exponentials written, added in the kernel's order.
    pub fn rowsum_of(&self, trace: &Trace, upto: usize) -> f32 {
        (0..upto.min(self.nc)).fold(0.0, |s, k| s + trace.events[self.p(k)].value)
    }

    /// `e^(m_old − m_new)`, the rescale of this key tile: operands `[m_old, m_new]`.
    pub fn alpha_calc(&self, trace: &Trace) -> Calc {
        let (m_old, m_new) = self.maxima(trace);
        Calc::new(vec![m_old, m_new], hand::exp(v(0) - v(1)), alpha(m_old, m_new))
    }

    /// `P_tile[ii, k] = e^(S − m_new)`: operands `[S, m_new]`.
    pub fn p_calc(&self, trace: &Trace, k: usize) -> Calc {
        let m_new = self.maxima(trace).1;
        Calc::new(
            vec![trace.events[self.score(k)].value, m_new],
            hand::exp(v(0) - v(1)),
            trace.events[self.p(k)].value,
        )
    }

    /// `l_new = e^(m_old − m_new)·l_old + rowsum(P_tile)`, and the same with the rescale
    /// worked out: operands `[m_old, m_new, l_old, rowsum, e^(m_old − m_new)]`.
    pub fn l_calc(&self, trace: &Trace) -> Calc {
        let (m_old, m_new) = self.maxima(trace);
        let vals = vec![
            m_old,
            m_new,
            trace.events[self.l_old()].value,
            self.rowsum_of(trace, self.nc),
            alpha(m_old, m_new),
        ];
        Calc::new(
            vals,
            hand::exp(v(0) - v(1)) * v(2) + v(3),
            trace.events[self.l_new()].value,
        )
        .also(v(4) * v(2) + v(3))
    }
}

/// The output tile's write-back of one row (`ii, a_base, off`): `l` read, then for each
/// channel `acc` read and `att = acc / l` written, then `m` read and `lse = m + ln l` written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteBack {
    pub start: usize,
    pub end: usize,
    /// The read of the row's `l`.
    pub l: usize,
}

impl WriteBack {
    /// The write-back whose iteration holds event `n`.
    pub fn at(trace: &Trace, n: usize) -> Option<WriteBack> {
        let (_, f) = crate::scope::iteration(trace, n, names::II)?;
        let (start, end) = (f.start as usize, (f.end as usize).min(trace.len()));
        let is = |k: usize, op: Op, buf: Buf| trace.events.get(k).is_some_and(|e| e.op == op && e.buf == buf);
        if !is(start, Op::Read, Buf::RowSum) || !is(end.checked_sub(1)?, Op::Write, Buf::Lse) {
            return None;
        }
        Some(WriteBack { start, end, l: start })
    }

    /// `att = acc / l` of the write `n`: operands `[acc, l]`.
    pub fn att_calc(&self, trace: &Trace, n: usize) -> Option<Calc> {
        let acc = trace.events.get(n.checked_sub(1)?)?;
        (acc.buf == Buf::Acc && trace.events[n].buf == Buf::Att).then(|| {
            Calc::new(
                vec![acc.value, trace.events[self.l].value],
                v(0) / v(1),
                trace.events[n].value,
            )
        })
    }

    /// `lse = m + ln l`: operands `[m, l]`.
    pub fn lse_calc(&self, trace: &Trace) -> Calc {
        let lse = self.end - 1;
        Calc::new(
            vec![trace.events[lse - 1].value, trace.events[self.l].value],
            v(0) + hand::ln(v(1)),
            trace.events[lse].value,
        )
    }
}

/// A sink logit's share of a row, recomputed from `lse` (`P_sink = e^(sink − lse)`, flash's
/// `flash_delta`): the write `n` of `p_sink`, operands `[sink, lse]` as its iteration read them.
pub fn sink_share_calc(trace: &Trace, n: usize) -> Option<Calc> {
    let e = trace.events.get(n)?;
    if e.op != Op::Write || e.buf != Buf::PSink {
        return None;
    }
    let f = trace.frame(e.frame)?;
    let read = |buf: Buf| {
        (f.start as usize..n)
            .rev()
            .find(|&k| trace.events[k].frame == e.frame && trace.events[k].op == Op::Read && trace.events[k].buf == buf)
            .map(|k| trace.events[k].value)
    };
    Some(Calc::new(
        vec![read(Buf::Sink)?, read(Buf::Lse)?],
        hand::exp(v(0) - v(1)),
        e.value,
    ))
}
