//! The two runs laid on one timeline of phases: the phases both make matched in order, a phase
//! only one makes with the other waiting.

use super::{CORRECT, MISTAKEN};
use attn_trace_core::trace::{Phase, Trace};
use std::ops::Range;

/// Where one run is at a step of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// At this event of its trace.
    At(usize),
    /// This run has no such phase: it waits at this event (its last before the phase, or its
    /// first after when the phase comes before everything it does).
    Waiting(usize),
}

impl Place {
    pub fn event(self) -> usize {
        match self {
            Place::At(n) | Place::Waiting(n) => n,
        }
    }
}

/// One phase on the shared timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub phase: Phase,
    /// The phase's events in each run, `None` where that run does not make it.
    pub spans: [Option<Range<usize>>; 2],
    /// First step of the segment on the timeline, and its number of steps (the longer span).
    pub t0: usize,
    pub len: usize,
    /// Where a run without this phase waits.
    hold: [usize; 2],
    /// When both runs make the phase with different numbers of events and the shorter span's
    /// events are the longer one's with some left out (mistake 7 writes `d_k` with `=` where
    /// the correct run reads and adds): for each event of the longer span, the event of the
    /// shorter one shown beside it, so the two stand on the same access.
    align: Option<(usize, Vec<usize>)>,
}

/// The phases of two traces matched in order, as one sequence of steps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    pub segments: Vec<Segment>,
    /// Steps in all.
    pub len: usize,
}

impl Timeline {
    pub fn new(traces: [&Trace; 2]) -> Timeline {
        let events = traces.map(|t| &t.events);
        // each trace's non-empty phase spans, in order
        let spans = traces.map(|t| {
            (0..t.phases.len())
                .map(|k| (t.phases[k].1, t.span_range(k)))
                .filter(|(_, r)| !r.is_empty())
                .collect::<Vec<_>>()
        });
        let (a, b) = (&spans[CORRECT], &spans[MISTAKEN]);
        // lcs[x][y]: phases a[x..] and b[y..] have in common, in order
        let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for x in (0..a.len()).rev() {
            for y in (0..b.len()).rev() {
                lcs[x][y] = if a[x].0 == b[y].0 {
                    lcs[x + 1][y + 1] + 1
                } else {
                    lcs[x + 1][y].max(lcs[x][y + 1])
                };
            }
        }
        let mut raw: Vec<(Phase, [Option<Range<usize>>; 2])> = Vec::new();
        let (mut x, mut y) = (0, 0);
        while x < a.len() || y < b.len() {
            if x < a.len() && y < b.len() && a[x].0 == b[y].0 {
                raw.push((a[x].0, [Some(a[x].1.clone()), Some(b[y].1.clone())]));
                (x, y) = (x + 1, y + 1);
            } else if x < a.len() && (y == b.len() || lcs[x + 1][y] >= lcs[x][y + 1]) {
                // the correct run's own phases come first: what the mistaken one replaced
                raw.push((a[x].0, [Some(a[x].1.clone()), None]));
                x += 1;
            } else {
                raw.push((b[y].0, [None, Some(b[y].1.clone())]));
                y += 1;
            }
        }
        let hold = |g: usize, side: usize| -> usize {
            let before = raw[..g]
                .iter()
                .rev()
                .find_map(|(_, s)| s[side].as_ref().map(|r| r.end - 1));
            let after = || raw[g..].iter().find_map(|(_, s)| s[side].as_ref().map(|r| r.start));
            before.or_else(after).unwrap_or(0)
        };
        let mut segments = Vec::with_capacity(raw.len());
        let mut t0 = 0;
        for (g, (phase, sp)) in raw.iter().enumerate() {
            let len = sp.iter().flatten().map(ExactSizeIterator::len).max().unwrap_or(0);
            let align = match sp {
                [Some(a), Some(b)] if a.len() != b.len() => {
                    let long = if a.len() > b.len() { CORRECT } else { MISTAKEN };
                    let (l, s) = if long == CORRECT { (a, b) } else { (b, a) };
                    subsequence(&events[long][l.clone()], &events[1 - long][s.clone()]).map(|m| (1 - long, m))
                }
                _ => None,
            };
            segments.push(Segment {
                phase: *phase,
                spans: sp.clone(),
                t0,
                len,
                hold: [hold(g, CORRECT), hold(g, MISTAKEN)],
                align,
            });
            t0 += len;
        }
        Timeline { segments, len: t0 }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The segment holding step `t`.
    pub fn segment_at(&self, t: usize) -> usize {
        self.segments.partition_point(|s| s.t0 <= t).saturating_sub(1)
    }

    /// Where run `side` is at step `t`.
    pub fn place(&self, t: usize, side: usize) -> Place {
        let Some(seg) = self.segments.get(self.segment_at(t)) else {
            return Place::Waiting(0);
        };
        match &seg.spans[side] {
            Some(r) => match &seg.align {
                Some((short, map)) if *short == side => Place::At(r.start + map[t - seg.t0]),
                // a shorter span stays on its last event while the longer one finishes
                _ => Place::At(r.start + (t - seg.t0).min(r.len() - 1)),
            },
            None => Place::Waiting(seg.hold[side]),
        }
    }

    /// The step at which run `side` is at event `n`.
    pub fn step_of(&self, side: usize, n: usize) -> Option<usize> {
        self.segments.iter().find_map(|s| {
            let r = s.spans[side].as_ref()?;
            if !r.contains(&n) {
                return None;
            }
            match &s.align {
                Some((short, map)) if *short == side => map.iter().position(|&k| k == n - r.start).map(|x| s.t0 + x),
                _ => Some(s.t0 + (n - r.start)),
            }
        })
    }
}

/// For each event of `long`, the event of `short` to show beside it, when `short` is `long`
/// with some events left out (the same buffer, offset and operation, in order; the values may
/// differ): a left-out event shows `short`'s previous one. `None` when it is not.
fn subsequence(long: &[attn_trace_core::trace::Event], short: &[attn_trace_core::trace::Event]) -> Option<Vec<usize>> {
    let mut map = Vec::with_capacity(long.len());
    let mut y = 0;
    for e in long {
        match short.get(y) {
            Some(f) if (f.buf, f.offset, f.op) == (e.buf, e.offset, e.op) => {
                map.push(y);
                y += 1;
            }
            _ => map.push(y.saturating_sub(1)),
        }
    }
    (y == short.len()).then_some(map)
}
