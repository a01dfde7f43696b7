//! The logging recorder and the finished, indexed trace.

use super::index::CellIndex;
use super::{Buf, Event, FRAME_VALUES, Frame, NO_FRAME, Op, Pass, Phase, Recorder};
use crate::progress::Progress;
use crate::tensor::{Layout, Level, Spec};
use std::panic::Location;

/// Which loop a frame is an iteration of: the names it records and the file it is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// `names[0]` is the loop variable, the rest are offsets derived in the iteration.
    pub names: &'static [&'static str],
    pub file: &'static str,
    pub line: u32,
}

/// A recorder that keeps every access. Turn it into a [`Trace`] with [`Logger::finish`].
#[derive(Debug, Default)]
pub struct Logger {
    events: Vec<Event>,
    frames: Vec<Frame>,
    open: Vec<u32>,
    kinds: Vec<Kind>,
    /// Per nesting depth, the kind entered there last: loops re-enter the same kind
    /// over and over, so this turns interning into two pointer and one line comparison.
    kind_cache: Vec<(*const &'static str, *const u8, u32, u16)>,
    phases: Vec<(u32, Phase)>,
    /// Where a watcher (the TUI's "tracing…" screen) reads how far the recording is.
    progress: Option<Progress>,
    /// The kernel's own sizes ([`Recorder::constants`]).
    consts: Vec<(&'static str, usize)>,
}

impl Logger {
    /// The progress counter moves once every this many events, so recording stays one store per
    /// 64k.
    pub const PROGRESS_STEP: usize = 1 << 16;

    pub fn new() -> Self {
        Self::default()
    }

    /// A logger with room for `events` events, so recording never reallocates.
    pub fn with_capacity(events: usize) -> Self {
        Logger {
            events: Vec::with_capacity(events),
            frames: Vec::with_capacity(events / 2 + 16),
            ..Self::default()
        }
    }

    /// Reports its progress to `p`: `p.done()` grows by the events recorded (from what it holds
    /// now, so several recordings can share one counter).
    #[must_use]
    pub(crate) fn watched(mut self, p: Progress) -> Self {
        self.progress = Some(p);
        self
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    fn intern_kind(&mut self, names: &'static [&'static str], loc: &'static Location<'static>) -> u16 {
        let depth = self.open.len();
        // A loop site is its names, file and line: every pass opens its own `bb` and `hh` loops,
        // with the same names in the same file, and each must report its own line.
        let key = (names.as_ptr(), loc.file().as_ptr(), loc.line());
        if let Some(&(n, f, l, id)) = self.kind_cache.get(depth)
            && (n, f, l) == key
        {
            return id;
        }
        let kind = Kind {
            names,
            file: loc.file(),
            line: loc.line(),
        };
        let id = match self
            .kinds
            .iter()
            .position(|k| k.names == kind.names && k.file == kind.file && k.line == kind.line)
        {
            Some(i) => i,
            None => {
                self.kinds.push(kind);
                self.kinds.len() - 1
            }
        };
        #[allow(clippy::expect_used, reason = "the kernels have a few dozen loop sites, not 65536")]
        let id = u16::try_from(id).expect("fewer than 65536 loop kinds");
        if self.kind_cache.len() <= depth {
            self.kind_cache
                .resize(depth + 1, (std::ptr::null(), std::ptr::null(), 0, 0));
        }
        self.kind_cache[depth] = (key.0, key.1, key.2, id);
        id
    }

    /// Closes the log. `buffers` gives the shape (and display view) and the starting contents
    /// of every buffer the kernels touched, indexed by [`Buf`].
    pub fn finish(self, buffers: Vec<Option<BufferInfo>>) -> Trace {
        self.finish_indexed(buffers, true)
    }

    /// [`Logger::finish`], with an empty cell index when `index` is false: for a reader of the
    /// log in order (an export), which never asks who wrote a cell.
    pub(crate) fn finish_indexed(self, buffers: Vec<Option<BufferInfo>>, index: bool) -> Trace {
        assert!(
            self.open.is_empty(),
            "a kernel left {} loop frames open",
            self.open.len()
        );
        let sizes: Vec<usize> = (0..Buf::ALL.len())
            .map(|b| buffers.get(b).and_then(|i| i.as_ref()).map_or(0, BufferInfo::len))
            .collect();
        let index = if index {
            CellIndex::build(&self.events, &sizes)
        } else {
            CellIndex::default()
        };
        Trace {
            events: self.events,
            frames: self.frames,
            kinds: self.kinds,
            phases: self.phases,
            consts: self.consts,
            buffers,
            index,
        }
    }
}

impl Recorder for Logger {
    const ENABLED: bool = true;

    #[inline]
    fn log(&mut self, op: Op, buf: Buf, offset: usize, value: f32, line: u32) {
        if self.events.len().is_multiple_of(Self::PROGRESS_STEP)
            && !self.events.is_empty()
            && let Some(p) = &self.progress
        {
            p.add(Self::PROGRESS_STEP as u64);
        }
        let frame = self.open.last().copied().unwrap_or(NO_FRAME);
        self.events.push(Event {
            offset: offset as u32,
            value,
            frame,
            line: line as u16,
            buf,
            op,
        });
    }

    fn phase(&mut self, phase: Phase) {
        self.phases.push((self.events.len() as u32, phase));
    }

    #[inline]
    #[track_caller]
    fn enter<const N: usize>(&mut self, names: &'static [&'static str; N], vals: [usize; N]) {
        const { assert!(N >= 1 && N <= FRAME_VALUES, "a frame records 1 to 3 values") };
        let kind = self.intern_kind(names, Location::caller());
        let mut packed = [0u32; FRAME_VALUES];
        for (p, v) in packed.iter_mut().zip(vals) {
            *p = v as u32;
        }
        let id = self.frames.len() as u32;
        self.frames.push(Frame {
            parent: self.open.last().copied().unwrap_or(NO_FRAME),
            start: self.events.len() as u32,
            end: self.events.len() as u32,
            kind,
            depth: self.open.len() as u16,
            vals: packed,
        });
        self.open.push(id);
    }

    #[inline]
    fn exit(&mut self) {
        #[allow(
            clippy::expect_used,
            reason = "a kernel that exits a loop it never entered is a bug of ours"
        )]
        let id = self.open.pop().expect("exit without enter");
        self.frames[id as usize].end = self.events.len() as u32;
    }

    fn constants(&mut self, names: &'static [&'static str], vals: &[usize]) {
        self.consts.extend(names.iter().copied().zip(vals.iter().copied()));
    }
}

/// What the registry says of one buffer of a traced run, and its starting contents.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferInfo {
    /// Role, level, reported shape and the layout the kernel indexes it with.
    pub spec: Spec,
    /// Contents before the first event: the inputs' values, zeros for everything computed.
    pub initial: Vec<f32>,
}

impl BufferInfo {
    pub fn len(&self) -> usize {
        self.initial.len()
    }

    pub fn is_empty(&self) -> bool {
        self.initial.is_empty()
    }

    /// The layout the kernel indexes this buffer with, dimensions named as its loops name them.
    pub fn layout(&self) -> &Layout {
        &self.spec.layout
    }
}

/// A finished event log with its indexes.
#[derive(Debug)]
pub struct Trace {
    pub events: Vec<Event>,
    pub frames: Vec<Frame>,
    pub kinds: Vec<Kind>,
    /// `(first event, phase)`, in order.
    pub phases: Vec<(u32, Phase)>,
    /// The kernel's own sizes its offset formulas use (a decode cache's `W`, `BS`, ...).
    pub consts: Vec<(&'static str, usize)>,
    pub buffers: Vec<Option<BufferInfo>>,
    pub index: CellIndex,
}

/// An offset a kernel derived from its loop variables (`qi`, `k_base`, `off`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Derived {
    pub name: &'static str,
    pub value: usize,
    /// The kernel file that computed it: `off` means different things in different kernels.
    pub file: &'static str,
}

/// One event expanded to everything a person wants to see about it.
#[derive(Clone, Debug, PartialEq)]
pub struct EventView {
    pub seq: usize,
    pub pass: Pass,
    pub phase: Phase,
    pub op: Op,
    pub buf: Buf,
    /// The memory the access touches: the buffer's level in the registry (global memory, or a
    /// tiled kernel's tile-local working set).
    pub level: Level,
    pub offset: usize,
    /// Logical coordinates of `offset` in the buffer's view shape.
    pub index: Vec<usize>,
    pub value: f32,
    /// Loop variables in scope, outermost first.
    pub vars: Vec<(&'static str, usize)>,
    /// Offsets derived in the enclosing iterations, outermost first.
    pub derived: Vec<Derived>,
    /// The kernel's own sizes its formulas use beside the shape's ([`Trace::consts`]).
    pub consts: Vec<(&'static str, usize)>,
    pub file: &'static str,
    pub line: u32,
}

impl Trace {
    /// The kernel's own size `name` as it recorded it ([`Trace::consts`]: a decode cache's `W`,
    /// `BS`, a split step's `L`, latent attention's `R`, `DR`), `None` when it recorded none.
    pub fn constant(&self, name: &str) -> Option<usize> {
        self.consts.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Does the log have tile-local buffers (is it a tiled kernel's, flash's)?
    pub fn has_tiles(&self) -> bool {
        self.buffers
            .iter()
            .flatten()
            .any(|b| b.spec.level == crate::tensor::Level::Tile)
    }

    /// Bytes the log itself occupies (events, frames, phase spans), without the cell index.
    pub fn log_bytes(&self) -> usize {
        self.events.len() * size_of::<Event>()
            + self.frames.len() * size_of::<Frame>()
            + self.phases.len() * size_of::<(u32, Phase)>()
    }

    pub fn buffer(&self, buf: Buf) -> Option<&BufferInfo> {
        self.buffers.get(buf as usize).and_then(|b| b.as_ref())
    }

    /// Index into `phases` of the span containing event `n`.
    pub fn phase_span(&self, n: usize) -> usize {
        self.phases
            .partition_point(|&(start, _)| start as usize <= n)
            .saturating_sub(1)
    }

    pub fn phase_at(&self, n: usize) -> Phase {
        self.phases[self.phase_span(n)].1
    }

    /// Events `start..end` of phase span `k`.
    pub fn span_range(&self, k: usize) -> std::ops::Range<usize> {
        let start = self.phases[k].0 as usize;
        let end = self.phases.get(k + 1).map_or(self.len(), |&(s, _)| s as usize);
        start..end
    }

    /// First event of the next phase after the one holding `n`.
    pub fn next_phase(&self, n: usize) -> Option<usize> {
        let k = self.phase_span(n);
        (k + 1..self.phases.len())
            .map(|k| self.phases[k].0 as usize)
            .find(|&s| s < self.len())
    }

    /// First event of the phase holding `n` if `n` is past it, else of the phase before.
    pub fn prev_phase(&self, n: usize) -> Option<usize> {
        let k = self.phase_span(n);
        let start = self.phases[k].0 as usize;
        if n > start {
            Some(start)
        } else {
            (0..k).rev().map(|k| self.phases[k].0 as usize).find(|&s| s < n)
        }
    }

    pub fn frame(&self, id: u32) -> Option<&Frame> {
        self.frames.get(id as usize)
    }

    /// The loop iteration `up` levels above the innermost one of event `n`.
    fn frame_above(&self, n: usize, up: usize) -> Option<&Frame> {
        let mut f = self.frame(self.events.get(n)?.frame)?;
        for _ in 0..up {
            f = self.frame(f.parent)?;
        }
        Some(f)
    }

    /// The events where a sibling of iteration `f` (the same loop, in the same iteration of the
    /// loops around it) may be: within its enclosing iteration, else within its phase.
    fn sibling_room(&self, f: &Frame) -> std::ops::Range<usize> {
        match self.frame(f.parent) {
            Some(p) => p.start as usize..p.end as usize,
            None => self.span_range(self.phase_span(f.start as usize)),
        }
    }

    /// The iteration at `f`'s depth that event `k` belongs to, if `k` is that deep.
    fn at_depth(&self, k: usize, f: &Frame) -> Option<&Frame> {
        let mut g = self.frame(self.events[k].frame)?;
        while g.depth > f.depth {
            g = self.frame(g.parent)?;
        }
        (g.depth == f.depth).then_some(g)
    }

    /// Is `g` another iteration of `f`'s loop, in the same iteration of the loops around it?
    fn sibling(f: &Frame, g: &Frame) -> bool {
        g.kind == f.kind && g.parent == f.parent && g.start != f.start
    }

    /// First event of the next iteration of the loop `up` levels above the innermost one
    /// (`up = 0`: the innermost loop). `None` after its last iteration: a move past the loop's
    /// end stays put rather than land in what follows (another loop, the next phase).
    pub fn next_iteration(&self, n: usize, up: usize) -> Option<usize> {
        let f = self.frame_above(n, up)?;
        let room = self.sibling_room(f);
        // events of the enclosing iteration between two iterations (a write after the inner
        // loop) are passed over; the first iteration at f's depth after it decides
        (f.end as usize..room.end)
            .find_map(|k| self.at_depth(k, f))
            .filter(|g| Self::sibling(f, g))
            .map(|g| g.start as usize)
    }

    /// First event of the current iteration of that loop when `n` is past its start, else of
    /// the previous iteration; `None` before its first.
    pub fn prev_iteration(&self, n: usize, up: usize) -> Option<usize> {
        let f = self.frame_above(n, up)?;
        let start = f.start as usize;
        if n > start {
            return Some(start);
        }
        let room = self.sibling_room(f);
        (room.start..start)
            .rev()
            .find_map(|k| self.at_depth(k, f))
            .filter(|g| Self::sibling(f, g))
            .map(|g| g.start as usize)
    }

    /// Frame ids of the loop iterations around event `n`, innermost first.
    pub fn frame_ids(&self, n: usize) -> Vec<u32> {
        let mut ids = Vec::new();
        let mut id = self.events.get(n).map_or(NO_FRAME, |e| e.frame);
        while let Some(f) = self.frame(id) {
            ids.push(id);
            id = f.parent;
        }
        ids
    }

    /// The chain of loop iterations around event `n`, outermost first.
    pub fn frames_of(&self, n: usize) -> Vec<&Frame> {
        let mut chain = Vec::new();
        let mut id = self.events.get(n).map_or(NO_FRAME, |e| e.frame);
        while let Some(f) = self.frame(id) {
            chain.push(f);
            id = f.parent;
        }
        chain.reverse();
        chain
    }

    /// Source file of event `n` (the file of its innermost loop).
    pub fn file_of(&self, n: usize) -> &'static str {
        self.frames_of(n)
            .last()
            .map_or("", |f| self.kinds[f.kind as usize].file)
    }

    /// Event `n` in its rich form. Panics if `n` is out of range.
    pub fn view(&self, n: usize) -> EventView {
        let e = self.events[n];
        let phase = self.phase_at(n);
        let mut vars = Vec::new();
        let mut derived = Vec::new();
        let chain = self.frames_of(n);
        for f in &chain {
            let kind = &self.kinds[f.kind as usize];
            vars.push((kind.names[0], f.vals[0] as usize));
            for (k, name) in kind.names.iter().enumerate().skip(1) {
                derived.push(Derived {
                    name,
                    value: f.vals[k] as usize,
                    file: kind.file,
                });
            }
        }
        let file = chain.last().map_or("", |f| self.kinds[f.kind as usize].file);
        let index = self
            .buffer(e.buf)
            .map_or_else(|| vec![e.offset as usize], |b| b.layout().index(e.offset as usize));
        EventView {
            seq: n,
            pass: phase.pass(),
            phase,
            op: e.op,
            buf: e.buf,
            level: self.level(e.buf),
            offset: e.offset as usize,
            index,
            value: e.value,
            vars,
            derived,
            consts: self.consts.clone(),
            file,
            line: e.line as u32,
        }
    }

    /// The memory level of `buf` in this run (global when the trace does not know it).
    pub fn level(&self, buf: Buf) -> Level {
        self.buffer(buf).map_or(Level::Global, |b| b.spec.level)
    }

    /// `b0 j1 h1 d0`: the logical index of `buf[offset]` with the kernel's names for its
    /// dimensions, from the registry's layout.
    pub fn label(&self, buf: Buf, offset: usize) -> String {
        self.buffer(buf)
            .map_or_else(|| offset.to_string(), |b| b.layout().label(offset))
    }

    /// Value of `buf[offset]` just after event `n` happened.
    pub fn value_at(&self, buf: Buf, offset: usize, n: usize) -> f32 {
        match self.index.last_write_at_or_before(buf, offset, n) {
            Some(w) => self.events[w].value,
            None => self
                .buffer(buf)
                .and_then(|b| b.initial.get(offset))
                .copied()
                .unwrap_or(0.0),
        }
    }
}
