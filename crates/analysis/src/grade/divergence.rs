//! The first divergence, each side's reads: the reference's listed, the learner's read in a
//! second pass over their trace up to their write of the cell.

use super::Graded;
use super::report::{Grade, Touch};
use super::state::BlockRead;
use crate::learner::bind::{Binder, Target};
use crate::learner::import::{ImportError, Reader};
use crate::learner::reference::Reference;
use attn_trace_core::trace::{Buf, Op};
use std::io::BufRead;

/// The learner's read `y`, as they made it.
pub(super) fn touch_mine(r: &Reference, names: &[String], y: &BlockRead, stray: bool) -> Touch {
    Touch {
        buffer: names.get(y.name as usize).cloned().unwrap_or_default(),
        offset: y.offset,
        value: y.value,
        cell: Some(r.cell_label(y.buf, y.off)),
        note: r.notes(y.buf, y.off),
        stray,
    }
}

/// What the reference's reads of `y`'s buffer have, for the writes of cell `off` of `buf`,
/// along the first coordinate `y` gets wrong: `j = 2`.
pub(super) fn expected(r: &Reference, buf: Buf, off: usize, y: &BlockRead) -> String {
    let (Some(ties), Some(wc), Some(rc)) = (r.ties(buf, y.buf), r.get(buf), r.get(y.buf)) else {
        return String::new();
    };
    let (x, yc, ydims) = (wc.coords(off), rc.coords(y.off), rc.dims());
    ties.iter()
        .find_map(|t| {
            let want = t.map.get(x[t.write_dim]).copied().flatten()?;
            (want != yc[t.read_dim]).then(|| format!("{} = {want}", ydims[t.read_dim].0))
        })
        .unwrap_or_default()
}

/// At most this many reads are listed on each side of a divergence.
pub const LISTED: usize = 8;

/// The first [`LISTED`] of `all`, and how many more.
pub(super) fn listed(all: Vec<Touch>) -> (Vec<Touch>, usize) {
    let more = all.len().saturating_sub(LISTED);
    (all.into_iter().take(LISTED).collect(), more)
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
