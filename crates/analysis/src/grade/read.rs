//! The one pass over the learner's trace: each access placed on a cell of the reference's
//! tensors through its buffer's binding, and what it did there kept per cell and per buffer.

use super::report::{Finding, Kind, Source};
use super::state::{BlockRead, Blocks, Findings, Mine, Window, note};
use crate::learner::bind::{Binder, Target, Unplaced};
use crate::learner::import::{Access, ImportError, Reader};
use crate::learner::reference::{Cells, NONE, Reference};
use attn_trace_core::trace::{Buf, Op};
use std::io::BufRead;

/// What the learner did, gathered in one pass over the trace.
pub(super) struct Learner {
    /// Each reference buffer's cells as the learner left them.
    mine: Vec<Option<Mine>>,
    pub(super) findings: Findings,
    /// Reads per buffer since the last write, and what masked scores threw away.
    window: Window,
    /// The blocks of writes and the reads before them.
    pub(super) blocks: Blocks,
    /// Reads of input cells the reference never reads, per buffer, and the first of them.
    waste: Vec<u64>,
    first_waste: Vec<Option<Access>>,
    /// Writes of cells the reference pass never writes, per buffer, and the first of them.
    extra: Vec<u64>,
    first_extra: Vec<Option<Access>>,
    /// Accesses read.
    pub(super) events: u64,
}

impl Learner {
    /// Reads the trace `reader` reads to its end, placing each access with `binder` on `r`'s
    /// cells. A malformed line, or an access its binding cannot place, is an [`ImportError`].
    pub(super) fn read<R: BufRead>(
        r: &Reference,
        reader: &mut Reader<R>,
        binder: &mut Binder,
    ) -> Result<Learner, ImportError> {
        let per_buffer = Buf::ALL.len();
        let mut l = Learner {
            mine: r.cells.iter().map(|c| c.as_ref().map(|c| Mine::new(c.len()))).collect(),
            findings: Findings::default(),
            window: Window::new(),
            blocks: Blocks::new(),
            waste: vec![0; per_buffer],
            first_waste: vec![None; per_buffer],
            extra: vec![0; per_buffer],
            first_extra: vec![None; per_buffer],
            events: 0,
        };
        while let Some(a) = reader.next_access() {
            let a = a?;
            l.events += 1;
            let name = reader.buffers().get(a.name as usize).cloned().unwrap_or_default();
            let target = binder
                .map(r, a.name, &name, a.offset, reader.index())
                .map_err(|u| match u {
                    Unplaced::Unknown(why) | Unplaced::Index(why) => reader.error_at(a.at, why),
                })?;
            match target {
                // the learner's own locals: they end a block of writes as the reference's do
                Target::Local => l.outside_the_cells(r, a.op),
                Target::Outside => {
                    l.outside_every_view(r, binder, &a, &name, reader);
                    l.outside_the_cells(r, a.op);
                }
                Target::Cell { buf, off } => l.cell(r, buf, off, &a, &name, reader),
            }
        }
        l.blocks.check(r);
        Ok(l)
    }

    /// The learner's cells of `buf`, a buffer of the run.
    pub(super) fn mine(&self, buf: Buf) -> &Mine {
        #[allow(clippy::expect_used, reason = "mine has an entry wherever the reference has cells")]
        self.mine[buf as usize].as_ref().expect("a buffer of the run")
    }

    /// Every buffer's cells as the learner left them, by buffer.
    pub(super) fn all_mine(&self) -> &[Option<Mine>] {
        &self.mine
    }

    /// An access to no cell of ours ends a block of writes as a read or write of one does.
    fn outside_the_cells(&mut self, r: &Reference, op: Op) {
        match op {
            Op::Read => self.blocks.read(r, None),
            Op::Write => self.blocks.after_write = true,
        }
    }

    /// An offset no view of its binding covers: out of bounds in a buffer of ours (counted in
    /// its traffic, reported with its size), or a cell of no tensor.
    fn outside_every_view<R: BufRead>(
        &mut self,
        r: &Reference,
        binder: &Binder,
        a: &Access,
        name: &str,
        reader: &Reader<R>,
    ) {
        let ours = Buf::from_name(name).filter(|&b| r.get(b).is_some() && !binder.is_bound(name));
        match ours {
            Some(b) => {
                let Some(m) = self.mine[b as usize].as_mut() else {
                    return;
                };
                self.window.count(m, b, a);
                let size = r.get(b).map(Cells::len);
                note(&mut self.findings, Kind::OutOfBounds, a, name, size, None, reader);
            }
            None => {
                let holds = binder.holds(name);
                note(&mut self.findings, Kind::Unmapped, a, name, None, holds, reader);
            }
        }
    }

    /// An access to cell `off` of `buf`: a read before any write of a cell nobody gave, a read
    /// the reference never makes, a write lost before any read, a write the pass never makes.
    fn cell<R: BufRead>(&mut self, r: &Reference, buf: Buf, off: usize, a: &Access, name: &str, reader: &Reader<R>) {
        let b = buf as usize;
        let (Some(cells), Some(m)) = (r.get(buf), self.mine[b].as_mut()) else {
            return;
        };
        self.window.count(m, buf, a);
        let cell_text = || (name != buf.name() || a.offset != off as i64).then(|| r.describe(buf, off));
        match a.op {
            Op::Read => {
                if !cells.input && m.written_at[off] == 0 {
                    let cell = cell_text();
                    let k = note(&mut self.findings, Kind::Uninitialised, a, name, None, None, reader);
                    let f = &mut self.findings.list[k];
                    if f.cell.is_none() {
                        f.cell = cell;
                    }
                }
                if cells.input && !cells.read[off] {
                    self.waste[b] += 1;
                    self.first_waste[b].get_or_insert(*a);
                }
                m.read_since[off] = true;
                m.read_any[off] = true;
                let read = BlockRead {
                    buf,
                    off,
                    name: a.name,
                    offset: a.offset,
                    value: a.value,
                };
                self.blocks.read(r, Some(read));
            }
            Op::Write => {
                if m.written_at[off] != 0 && !m.read_since[off] {
                    // losing a zero (the accumulator's initialisation) loses no term
                    let kind = if cells.accumulated[off] && m.value[off] != 0.0 {
                        Kind::LostAccumulation
                    } else {
                        Kind::Overwritten
                    };
                    // reported at the write that was lost
                    let (file, line) = m.source[off];
                    let lost = Access {
                        file,
                        line,
                        at: m.written_at[off],
                        ..*a
                    };
                    note(&mut self.findings, kind, &lost, name, None, None, reader);
                }
                if cells.last_write[off] == NONE {
                    self.extra[b] += 1;
                    self.first_extra[b].get_or_insert(*a);
                }
                m.value[off] = a.value;
                m.written_at[off] = a.at;
                m.source[off] = (a.file, a.line);
                m.read_since[off] = false;
                if m.first_write.is_none() {
                    m.first_write = Some((a.file, a.line, a.at));
                }
                self.blocks.write(buf, off);
            }
        }
    }

    /// The findings counted over whole buffers, once the trace is read: given cells the
    /// results depend on that the learner never reads, wasted reads, reads only a masked score
    /// used, writes the pass never makes. Then the errors first, each kind in the order found.
    pub(super) fn count_findings(&mut self, r: &Reference, files: &[String]) {
        let info = |kind: Kind, buf: Buf, op: Op, count: u64, size: usize| Finding {
            kind,
            error: kind.is_error(),
            buffer: buf.name().to_string(),
            op: op.name(),
            offset: 0,
            size: Some(size),
            cell: None,
            holds: None,
            at: Source::nowhere(),
            count,
            elsewhere: false,
        };
        for c in r.iter() {
            let b = c.buf as usize;
            let m = self.mine(c.buf);
            if c.is_data() {
                let unread: Vec<usize> = (0..c.len()).filter(|&off| c.needed[off] && !m.read_any[off]).collect();
                if let Some(&first) = unread.first() {
                    let all = unread.len() == c.needed.iter().filter(|&&n| n).count();
                    self.findings.list.push(Finding {
                        // the whole buffer unread says so without a cell
                        cell: (!all).then(|| r.describe(c.buf, first)),
                        ..info(Kind::NeverRead, c.buf, Op::Read, unread.len() as u64, c.len())
                    });
                }
            }
            // a count of accesses found at their first: its place in the sources and trace
            let counted = |kind: Kind, first: Option<Access>, count: u64| {
                let a = first.filter(|_| count > 0)?;
                Some(Finding {
                    op: a.op.name(),
                    offset: a.offset,
                    at: Source::of(files, a.file, a.line, a.at),
                    ..info(kind, c.buf, a.op, count, c.len())
                })
            };
            let found = [
                counted(Kind::Waste, self.first_waste[b], self.waste[b]),
                counted(Kind::MaskedWaste, self.window.first_masked[b], self.window.masked[b]),
                counted(Kind::ExtraWrites, self.first_extra[b], self.extra[b]),
            ];
            self.findings.list.extend(found.into_iter().flatten());
        }
        self.findings.list.sort_by_key(|f| !f.error);
    }
}
