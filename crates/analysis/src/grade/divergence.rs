//! The first divergence, each side's reads: the reference's listed, the learner's read in a
//! second pass over their trace up to their write of the cell.

use super::Graded;
use super::read::Learner;
use super::report::{Divergence, Grade, Source, Touch};
use super::results::Results;
use crate::learner::bind::{Binder, Target};
use crate::learner::import::{ImportError, Reader};
use crate::learner::reference::Reference;
use attn_trace_core::trace::{Buf, Op};
use std::io::BufRead;

/// At most this many reads are listed on each side of a divergence.
pub const LISTED: usize = 8;

/// The first [`LISTED`] of `all`, and how many more.
pub(super) fn listed(all: Vec<Touch>) -> (Vec<Touch>, usize) {
    let more = all.len().saturating_sub(LISTED);
    (all.into_iter().take(LISTED).collect(), more)
}

/// The first divergence: of the cells not right, the one the reference finishes first, with
/// the reference's reads that fed it (as a set) and where the learner wrote it, or, when they
/// never did, where they first wrote its buffer. The learner's reads come in a second pass
/// ([`Graded::with_mine_reads`]).
pub(super) fn first_divergence(r: &Reference, results: &Results, l: &Learner, files: &[String]) -> Option<Divergence> {
    let cell = &results.wrong.first()?.cell;
    let e = r.event(results.wrong.first()?.done_at as usize)?;
    let mut seen: Vec<(Buf, usize)> = Vec::new();
    let reads: Vec<Touch> = r
        .reads_for(cell.buffer, cell.offset)
        .into_iter()
        .filter_map(|n| r.event(n))
        // as a set: a cell read twice (a softmax row's max, then its sum) is listed once
        .filter(|e| {
            let new = !seen.contains(&(e.buf, e.offset));
            seen.push((e.buf, e.offset));
            new
        })
        .map(|e| Touch {
            buffer: e.buf.name().to_string(),
            offset: (e.offset % r.get(e.buf).map_or(1, |c| c.per_layer().max(1))) as i64,
            value: e.value,
            cell: Some(r.cell_label(e.buf, e.offset)),
            note: r.notes(e.buf, e.offset),
            stray: false,
        })
        .collect();
    let (reference_reads, reference_more) = listed(reads);
    let m = l.mine(cell.buffer);
    let mine_at = (m.written_at[cell.offset] != 0).then(|| {
        let (file, line) = m.source[cell.offset];
        Source::of(files, file, line, m.written_at[cell.offset])
    });
    let mine_elsewhere = match (&mine_at, m.first_write) {
        (None, Some((file, line, at))) => Some(Source::of(files, file, line, at)),
        _ => None,
    };
    Some(Divergence {
        cell: cell.clone(),
        reference_event: e.local,
        reference_layer: e.layer,
        reference_line: e.line,
        reference_file: e.file,
        reference_reads,
        reference_more,
        mine_at,
        mine_write: None,
        mine_reads: Vec::new(),
        mine_more: 0,
        mine_elsewhere,
    })
}

impl Graded {
    /// Reads the trace again up to the learner's last write of the divergent cell, keeping that
    /// write and the reads since the write before it (the block of writes it ends): the reads
    /// that fed it, in a straightforward kernel.
    pub fn with_mine_reads<R: BufRead>(
        mut self,
        r: &Reference,
        mut reader: Reader<R>,
        binder: &mut Binder,
    ) -> Result<Grade, ImportError> {
        let Some(d) = &mut self.grade.divergence else {
            return Ok(self.grade);
        };
        let Some(at) = d.mine_at.as_ref().map(|s| s.trace_line) else {
            return Ok(self.grade);
        };
        let stray = d.cell.stray.as_ref().map(|s| (s.read.buffer.clone(), s.read.offset));
        // the first LISTED distinct reads since the last block of writes, how many more, and
        // the stray read if it is among those not listed: a trace of reads and no writes holds
        // no more than that
        let mut window: Vec<Touch> = Vec::with_capacity(LISTED);
        let mut more = 0usize;
        let mut stray_unlisted: Option<Touch> = None;
        let mut after_write = false;
        while let Some(a) = reader.next_access() {
            let a = a?;
            let name = reader.buffers().get(a.name as usize).cloned().unwrap_or_default();
            let target = binder.map(r, a.name, &name, a.offset, reader.index()).ok();
            let (cell, note) = match target {
                Some(Target::Cell { buf, off }) => (Some(r.cell_label(buf, off)), r.notes(buf, off)),
                _ => (None, None),
            };
            let touch = Touch {
                stray: stray.as_ref().is_some_and(|(n, o)| *n == name && *o == a.offset),
                buffer: name,
                offset: a.offset,
                value: a.value,
                cell,
                note,
            };
            if a.at >= at {
                d.mine_write = Some(touch);
                break;
            }
            match a.op {
                Op::Read => {
                    if after_write {
                        window.clear();
                        more = 0;
                        stray_unlisted = None;
                        after_write = false;
                    }
                    if window
                        .iter()
                        .any(|t| t.buffer == touch.buffer && t.offset == touch.offset)
                    {
                        continue;
                    }
                    if window.len() < LISTED {
                        window.push(touch);
                    } else {
                        more += 1;
                        if touch.stray && stray_unlisted.is_none() {
                            stray_unlisted = Some(touch);
                        }
                    }
                }
                Op::Write => after_write = true,
            }
        }
        // a stray read first: it is why the cell is wrong (listed in place of the last one)
        if let Some(stray) = stray_unlisted
            && !window.iter().any(|t| t.stray)
        {
            window.pop();
            window.push(stray);
        }
        window.sort_by_key(|t| !t.stray);
        d.mine_reads = window;
        d.mine_more = more;
        Ok(self.grade)
    }
}
