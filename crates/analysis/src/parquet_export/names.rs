//! The loop columns gathered before the first row is written: from a recorded trace, or from
//! a run that keeps no log.

use super::super::export::Filter;
use super::LoopNames;
use attn_trace_core::kernels::names::RECORDED;
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::{Buf, NO_FRAME, Op, Phase, Recorder, Trace};

impl LoopNames {
    fn add_kind(&mut self, names: &[&'static str]) {
        for (k, &name) in names.iter().enumerate() {
            let list = if k == 0 { &mut self.vars } else { &mut self.derived };
            if !list.contains(&name) {
                list.push(name);
            }
        }
    }

    /// Adds the names in scope at the events of `trace` that pass `filter`.
    pub fn add_trace(&mut self, trace: &Trace, filter: &Filter) {
        let mut visited = vec![0u64; trace.frames.len().div_ceil(64)];
        let mut kinds = vec![false; trace.kinds.len()];
        let mut last = NO_FRAME;
        for_each_kept(trace, filter, 0, trace.len(), |n, _| {
            let frame = trace.events[n].frame;
            if frame == last {
                return true;
            }
            last = frame;
            // up the chain until a frame seen before: its ancestors were seen with it
            let mut id = frame;
            while let Some(f) = trace.frames.get(id as usize) {
                let (word, bit) = (id as usize / 64, 1u64 << (id % 64));
                if visited[word] & bit != 0 {
                    break;
                }
                visited[word] |= bit;
                if let Some(k) = kinds.get_mut(usize::from(f.kind)) {
                    *k = true;
                }
                id = f.parent;
            }
            true
        });
        for (kind, used) in trace.kinds.iter().zip(kinds) {
            if used {
                self.add_kind(kind.names);
            }
        }
    }

    /// Adds the names of `other`.
    pub fn merge(&mut self, other: &LoopNames) {
        for &name in &other.vars {
            if !self.vars.contains(&name) {
                self.vars.push(name);
            }
        }
        for &name in &other.derived {
            if !self.derived.contains(&name) {
                self.derived.push(name);
            }
        }
    }

    /// Every name once, the loop columns' order: as the kernels' list of names
    /// ([`RECORDED`]: `bb`, `hh`, `kv_h`, `i`, `j`, `d` ... then the derived offsets), any
    /// other name after them.
    pub fn columns(&self) -> Vec<&'static str> {
        let mut all: Vec<&'static str> = Vec::new();
        for &name in self.vars.iter().chain(&self.derived) {
            if !all.contains(&name) {
                all.push(name);
            }
        }
        // stable: names the list does not know keep the order they came in
        all.sort_by_key(|n| RECORDED.iter().position(|r| r == n).unwrap_or(RECORDED.len()));
        all
    }
}

/// Calls `f(event, phase)` for each event of `start..end` that passes `filter`, in order,
/// until it returns false; returns the event after the last one looked at.
pub(super) fn for_each_kept(
    trace: &Trace,
    filter: &Filter,
    start: usize,
    end: usize,
    mut f: impl FnMut(usize, Phase) -> bool,
) -> usize {
    if start >= end || trace.phases.is_empty() {
        return end.max(start);
    }
    let mut span = trace.phase_span(start);
    let mut n = start;
    while n < end {
        let stop = trace.span_range(span).end.min(end);
        let phase = trace.phases[span].1;
        if filter.keeps_phase(phase) {
            while n < stop {
                let e = &trace.events[n];
                n += 1;
                if filter.buffer.is_some_and(|b| b != e.buf) || filter.level.is_some_and(|l| l != trace.level(e.buf)) {
                    continue;
                }
                if !f(n - 1, phase) {
                    return n;
                }
            }
        }
        n = stop;
        span += 1;
        if span >= trace.phases.len() {
            break;
        }
    }
    end
}

/// A recorder that keeps no log, only the names of the loops around the accesses that pass a
/// filter: the loop columns of a variant that is not recorded yet ([`attn_trace_core::engine::run_into`]).
pub struct NameCollector {
    filter: Filter,
    levels: Vec<Level>,
    keep: bool,
    /// The open loop iterations' names, and whether they are in `names` yet.
    open: Vec<(&'static [&'static str], bool)>,
    /// Per depth, the names last added there (a loop enters the same names again and again).
    added: Vec<*const &'static str>,
    pub names: LoopNames,
}

impl NameCollector {
    /// A collector for a run of `registry`.
    pub fn new(registry: &attn_trace_core::engine::Registry, filter: Filter) -> Self {
        let mut levels = vec![Level::Global; Buf::ALL.len()];
        for (b, spec) in registry.iter() {
            levels[b as usize] = spec.level;
        }
        NameCollector {
            filter,
            levels,
            keep: filter.pass.is_none() && filter.phase.is_none(),
            open: Vec::new(),
            added: Vec::new(),
            names: LoopNames::default(),
        }
    }
}

impl Recorder for NameCollector {
    const ENABLED: bool = true;

    #[inline]
    fn log(&mut self, _: Op, buf: Buf, _: usize, _: f32, _: u32) {
        if !self.keep
            || self.filter.buffer.is_some_and(|b| b != buf)
            || self.filter.level.is_some_and(|l| l != self.levels[buf as usize])
        {
            return;
        }
        // the innermost iterations not added yet: those opened since the last kept access
        for depth in (0..self.open.len()).rev() {
            let (names, added) = &mut self.open[depth];
            if *added {
                break;
            }
            *added = true;
            if self.added.len() <= depth {
                self.added.resize(depth + 1, std::ptr::null());
            }
            if self.added[depth] != names.as_ptr() {
                self.added[depth] = names.as_ptr();
                self.names.add_kind(names);
            }
        }
    }

    fn phase(&mut self, phase: Phase) {
        self.keep = self.filter.keeps_phase(phase);
    }

    fn enter<const N: usize>(&mut self, names: &'static [&'static str; N], _: [usize; N]) {
        self.open.push((names, false));
    }

    fn exit(&mut self) {
        self.open.pop();
    }
}
