//! Where one probability `P[b,h,i,j]` shows up in a FlashAttention trace, which never stores it:
//! the events of the pair's score tile cell (forward and backward) and of its row's statistics,
//! found in the log. Compare shows these beside the naive kernel's stored `probs` cell, and
//! `explain --variant flash` walks through them; every number either prints is one of these
//! events' values, or the arithmetic a reader does with them.

use crate::Element;
use crate::accum::{Accumulation, Chain, Scale};
use crate::hand::{self, Calc, v};
use attn_trace_core::kernels::names;
use attn_trace_core::trace::{Buf, Op, Phase, Trace};

/// The tile coordinates of a pair: query tile `i0` (row `ii` in it), key tile `j0` (column
/// `jj`), and the pair's cell `off = ii*bc + jj` of the score tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileSpot {
    pub br: usize,
    pub bc: usize,
    pub i0: usize,
    pub j0: usize,
    pub ii: usize,
    pub jj: usize,
    pub off: usize,
}

/// The events of one pair in a flash trace (indices into `trace.events`). A field is `None`
/// when the pass is not recorded, or when the mask hides the pair's whole tile (then flash
/// skips it: no event at all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlashCell {
    pub spot: TileSpot,
    /// Forward: the score `S` written into `s_tile[off]`.
    pub score: Option<usize>,
    /// Forward: `e^(S − m)` written over it, `m` being the row's maximum so far.
    pub p_tilde: Option<usize>,
    /// Forward: the row's running maximum `m` after this key tile (the write of `m[ii]`).
    pub m_tile: Option<usize>,
    /// Forward: the row's final `l` and `m`, read when the output tile is written.
    pub l_final: Option<usize>,
    pub m_final: Option<usize>,
    /// Forward: the row's log-sum-exp `lse = m + ln l` written to global memory.
    pub lse: Option<usize>,
    /// Backward: `P = e^(S − lse)` recomputed into `s_tile[off]`.
    pub p_back: Option<usize>,
    /// Backward: the row's `D_i` read before `dS` is written.
    pub delta: Option<usize>,
    /// Backward: `dS = P·(dP − D_i)` written into `ds_tile[off]`.
    pub ds: Option<usize>,
}

impl TileSpot {
    /// Where pair `e` sits in `tile` (`s_tile` or `ds_tile`, laid out `[br, bc]`) of a flash
    /// trace: the one tile lookup of Compare, `explain` and the tracer's goto.
    pub fn of(trace: &Trace, tile: Buf, e: Element) -> Option<TileSpot> {
        let dims = &trace.buffer(tile)?.layout().dims;
        let (br, bc) = (dims.first()?.size, dims.get(1)?.size);
        let (ii, jj) = (e.i % br, e.j % bc);
        Some(TileSpot {
            br,
            bc,
            i0: e.i - ii,
            j0: e.j - jj,
            ii,
            jj,
            off: ii * bc + jj,
        })
    }

    /// The writes of the pair's cell of `tile`, in order, made while the pair's tiles are
    /// loaded (with its `bb, hh, i0, j0, ii, jj`): forward's `S` then `e^(S − m)` into
    /// `s_tile`, backward's `P`; `dS` into `ds_tile`.
    pub fn writes(&self, trace: &Trace, tile: Buf, e: Element) -> impl Iterator<Item = usize> {
        let want = [
            (names::BB, e.b),
            (names::HH, e.h),
            (names::I0, self.i0),
            (names::J0, self.j0),
            (names::II, self.ii),
            (names::JJ, self.jj),
        ];
        trace
            .index
            .writes(tile, self.off)
            .iter()
            .map(|&n| n as usize)
            .filter(move |&n| {
                want.iter()
                    .all(|&(name, v)| crate::scope::var_at(trace, n, name) == Some(v))
            })
    }
}

impl FlashCell {
    /// The row's running max before the pair's key tile, `m_old`: the value the tile's
    /// iteration starts from (the first event of the frame that writes the tile's `m`).
    pub fn m_old(&self, trace: &Trace) -> Option<f32> {
        let n = self.m_tile?;
        let start = trace.frames_of(n).last()?.start as usize;
        value_of(trace, Some(start))
    }

    /// The flash event that stands for the pair at `phase` (Compare's Enter opens the tracer
    /// there): its `e^(S − m)` forward, its `dS` backward; the start of flash's phase when the
    /// mask skipped the pair's tile.
    pub fn event_at(&self, phase: Phase, trace: &Trace) -> Option<usize> {
        let (mine, flash_phase) = match phase {
            Phase::SoftmaxBack => (self.ds, Phase::FlashBack),
            _ => (self.p_tilde, Phase::Flash),
        };
        mine.or_else(|| {
            let k = trace.phases.iter().position(|&(_, p)| p == flash_phase)?;
            Some(trace.span_range(k).start)
        })
    }

    /// The events of pair `e` in `trace` (a flash run's), or `None` when the trace has no score
    /// tile (not a flash run).
    pub fn find(trace: &Trace, e: Element) -> Option<FlashCell> {
        let spot = TileSpot::of(trace, Buf::STile, e)?;
        // the writes of the pair's cell, in order: forward's S then e^(S − m), backward's P
        let writes = |buf: Buf, phase: Phase| -> Vec<usize> {
            spot.writes(trace, buf, e)
                .filter(|&n| trace.phase_at(n) == phase)
                .collect()
        };
        let fwd = writes(Buf::STile, Phase::Flash);
        let after = |from: usize, buf: Buf, op: Op| {
            (from..trace.len()).find(|&n| trace.events[n].buf == buf && trace.events[n].op == op)
        };
        let before = |to: usize, buf: Buf, op: Op| {
            (0..to)
                .rev()
                .find(|&n| trace.events[n].buf == buf && trace.events[n].op == op)
        };
        let p_tilde = fwd.get(1).copied();
        // the online softmax writes l, then m, after the row's exponentials
        let m_tile = p_tilde.and_then(|n| after(n, Buf::RowMax, Op::Write));
        // the output loop reads l, writes att, reads m and writes lse, row by row
        let lse_off =
            trace
                .buffer(Buf::Lse)?
                .layout()
                .offset_of(&[(names::B, e.b), (names::H, e.h), (names::I, e.i)])?;
        let lse = trace
            .index
            .writes(Buf::Lse, lse_off)
            .first()
            .map(|&n| n as usize)
            .filter(|_| !fwd.is_empty());
        let m_final = lse.and_then(|n| before(n, Buf::RowMax, Op::Read));
        let l_final = lse.and_then(|n| {
            let f = trace.frames_of(n).last().copied()?;
            let start = f.start as usize;
            (trace.events[start].buf == Buf::RowSum).then_some(start)
        });
        let p_back = writes(Buf::STile, Phase::FlashBack).first().copied();
        let ds = writes(Buf::DSTile, Phase::FlashBack).first().copied();
        let delta = ds.and_then(|n| before(n, Buf::Delta, Op::Read));
        Some(FlashCell {
            spot,
            score: fwd.first().copied(),
            p_tilde,
            m_tile,
            l_final,
            m_final,
            lse,
            p_back,
            delta,
            ds,
        })
    }

    /// The pair's probability as forward leaves it implied: `e^(S − lse)`, or `None` when the
    /// forward pass did not reach the pair.
    pub fn probability(&self, trace: &Trace) -> Option<f32> {
        let s = trace.events[self.score?].value;
        let lse = trace.events[self.lse?].value;
        Some(attn_trace_core::tensor::simd::exp(s - lse))
    }

    /// `P = e^(S − lse)`: operands `[S, lse]`.
    pub fn p_calc(&self, trace: &Trace) -> Option<Calc> {
        let value = |n: Option<usize>| n.map(|n| trace.events[n].value);
        Some(Calc::new(
            vec![value(self.score)?, value(self.lse)?],
            hand::exp(v(0) - v(1)),
            self.probability(trace)?,
        ))
    }

    /// `e^(S − m)` written over the score, `m` the row's maximum after the pair's key tile:
    /// operands `[S, m]`.
    pub fn p_tilde_calc(&self, trace: &Trace) -> Option<Calc> {
        let value = |n: Option<usize>| n.map(|n| trace.events[n].value);
        Some(Calc::new(
            vec![value(self.score)?, value(self.m_tile)?],
            hand::exp(v(0) - v(1)),
            value(self.p_tilde)?,
        ))
    }

    /// The row's `lse = m + ln l`: operands `[m, l]`.
    pub fn lse_calc(&self, trace: &Trace) -> Option<Calc> {
        let value = |n: Option<usize>| n.map(|n| trace.events[n].value);
        Some(Calc::new(
            vec![value(self.m_final)?, value(self.l_final)?],
            v(0) + hand::ln(v(1)),
            value(self.lse)?,
        ))
    }

    /// `dP = Σ_d dO_tile[ii,d]·v_tile[jj,d]`: the sum the write of `dS` ends, as
    /// [`Accumulation`] reads it.
    pub fn d_p(&self, trace: &Trace) -> Option<f32> {
        Some(Accumulation::at(trace, self.ds?)?.sigma(trace))
    }

    /// The pair's `dS = P × (dP − D_i)` ([`Chain::calc`]'s operands `[P, dP, D_i]`).
    pub fn ds_chain(&self, trace: &Trace, scale: Scale) -> Option<Chain> {
        Accumulation::at(trace, self.ds?)?.will(trace, scale)
    }
}

/// The value event `n` holds, if it is one of the log's (a pair's event the mask skipped is
/// none).
pub fn value_of(trace: &Trace, n: Option<usize>) -> Option<f32> {
    n.and_then(|n| trace.events.get(n)).map(|e| e.value)
}
