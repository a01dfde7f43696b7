//! What the learner did, gathered as the trace is read: each buffer's cells, the blocks of
//! writes and the reads before them, the reads a masked score threw away, the findings by site.

use super::report::{Finding, Kind, SITES, Source};
use crate::learner::import::{Access, Reader};
use crate::learner::reference::Reference;
use attn_trace_core::trace::{Buf, MASKED, Op};
use std::collections::HashMap;
use std::io::BufRead;

/// Where a finding is: its kind, its buffer (the learner's name's id), and its (file id, line),
/// `None` for the accesses `elsewhere`.
type Site = (Kind, u32, Option<(u32, u32)>);

/// The findings as they are gathered: each site's finding found by a key, not by a search.
#[derive(Default)]
pub(super) struct Findings {
    pub(super) list: Vec<Finding>,
    /// Each site's index in `list`.
    index: HashMap<Site, usize>,
    /// Lines listed so far per (kind, buffer).
    sites: HashMap<(Kind, u32), usize>,
}

/// What the learner did to one buffer, cell by cell.
pub(super) struct Mine {
    /// Last value written (NaN before any write).
    pub(super) value: Vec<f32>,
    /// Trace line of the last write (0: never written).
    pub(super) written_at: Vec<u64>,
    /// Source of the last write (file id, line).
    pub(super) source: Vec<(u32, u32)>,
    pub(super) read_since: Vec<bool>,
    /// Ever read.
    pub(super) read_any: Vec<bool>,
    pub(super) reads: u64,
    pub(super) writes: u64,
    /// Source and trace line of the first write of the buffer.
    pub(super) first_write: Option<(u32, u32, u64)>,
}

impl Mine {
    /// A buffer of `len` cells the learner has not touched yet.
    pub(super) fn new(len: usize) -> Mine {
        Mine {
            value: vec![f32::NAN; len],
            written_at: vec![0; len],
            source: vec![(0, 0); len],
            read_since: vec![false; len],
            read_any: vec![false; len],
            reads: 0,
            writes: 0,
            first_write: None,
        }
    }
}

/// A read of the current block: the cell, and how the learner made it.
#[derive(Clone, Copy)]
pub(super) struct BlockRead {
    pub(super) buf: Buf,
    pub(super) off: usize,
    pub(super) name: u32,
    pub(super) offset: i64,
    pub(super) value: f32,
}

/// For the hint "your k reads are the same for every h": per (buffer written, buffer read,
/// tie), the values of the written coordinate and of the read one over the learner's reads.
#[derive(Default)]
pub(super) struct TieUse {
    pub(super) x_values: Vec<usize>,
    pub(super) y_values: Vec<usize>,
    pub(super) violated: bool,
}

fn note_value(list: &mut Vec<usize>, v: usize) {
    if list.len() < 64 && !list.contains(&v) {
        list.push(v);
    }
}

/// The writes of a block (writes with no read between them) and the reads before them: what a
/// learner's kernel computed them from, whatever its loop order.
pub(super) struct Blocks {
    reads: Vec<BlockRead>,
    writes: Vec<(Buf, usize)>,
    pub(super) after_write: bool,
    /// The first stray read of each cell written.
    pub(super) strays: HashMap<(Buf, usize), BlockRead>,
    pub(super) ties: HashMap<(Buf, Buf, usize), TieUse>,
}

/// Blocks larger than this are a vectorised kernel's tiles, whose reads the check of each
/// cell's reads cannot place; their values are still graded.
const MAX_BLOCK_WRITES: usize = 256;
const MAX_BLOCK_READS: usize = 1 << 16;

impl Blocks {
    pub(super) fn new() -> Blocks {
        Blocks {
            reads: Vec::new(),
            writes: Vec::new(),
            after_write: false,
            strays: HashMap::new(),
            ties: HashMap::new(),
        }
    }

    pub(super) fn read(&mut self, r: &Reference, read: Option<BlockRead>) {
        if self.after_write {
            self.check(r);
            self.reads.clear();
            self.writes.clear();
            self.after_write = false;
        }
        if let Some(read) = read
            && self.reads.len() < MAX_BLOCK_READS
        {
            self.reads.push(read);
        }
    }

    pub(super) fn write(&mut self, buf: Buf, off: usize) {
        self.after_write = true;
        if self.writes.len() <= MAX_BLOCK_WRITES {
            self.writes.push((buf, off));
        }
    }

    /// Each read of the block must lie where the reference's reads for some cell the block
    /// writes lie, along every coordinate that follows the cell written.
    pub(super) fn check(&mut self, r: &Reference) {
        // a cell no result needs (a hidden score) may be computed from anything
        self.writes
            .retain(|&(b, off)| !r.get(b).is_some_and(|c| c.unneeded.get(off).copied().unwrap_or(false)));
        if self.writes.is_empty() || self.writes.len() > MAX_BLOCK_WRITES || self.reads.len() >= MAX_BLOCK_READS {
            return;
        }
        for k in 0..self.reads.len() {
            let y = self.reads[k];
            if self.writes.contains(&(y.buf, y.off)) {
                // the block's own accumulators
                continue;
            }
            let Some(rc) = r.get(y.buf) else { continue };
            if rc.unneeded.get(y.off).copied().unwrap_or(false) {
                continue;
            }
            let ycoords = rc.coords(y.off);
            let mut related = false;
            let mut fits = false;
            for &(wb, woff) in &self.writes {
                let (Some(ties), Some(wc)) = (r.ties(wb, y.buf), r.get(wb)) else {
                    continue;
                };
                related = true;
                let xcoords = wc.coords(woff);
                let mut ok = true;
                for (t, tie) in ties.iter().enumerate() {
                    let x = xcoords[tie.write_dim];
                    let use_ = self.ties.entry((wb, y.buf, t)).or_default();
                    note_value(&mut use_.x_values, x);
                    note_value(&mut use_.y_values, ycoords[tie.read_dim]);
                    if tie
                        .map
                        .get(x)
                        .copied()
                        .flatten()
                        .is_some_and(|want| want != ycoords[tie.read_dim])
                    {
                        ok = false;
                        use_.violated = true;
                    }
                }
                if ok {
                    fits = true;
                }
            }
            if related && !fits {
                for &(wb, woff) in &self.writes {
                    if r.ties(wb, y.buf).is_some() {
                        self.strays.entry((wb, woff)).or_insert(y);
                    }
                }
            }
        }
    }
}

/// Reads per buffer since the learner's last write (any buffer's), and what masked scores threw
/// away: the reads that fed only a masked score, per buffer, and the first of them.
pub(super) struct Window {
    reads: Vec<u64>,
    /// The first read of each buffer since the last write.
    first: Vec<Option<Access>>,
    pub(super) masked: Vec<u64>,
    pub(super) first_masked: Vec<Option<Access>>,
}

impl Window {
    pub(super) fn new() -> Window {
        Window {
            reads: vec![0; Buf::ALL.len()],
            first: vec![None; Buf::ALL.len()],
            masked: vec![0; Buf::ALL.len()],
            first_masked: vec![None; Buf::ALL.len()],
        }
    }

    /// Counts an access in its buffer's traffic and the masked-waste window.
    pub(super) fn count(&mut self, m: &mut Mine, buf: Buf, a: &Access) {
        match a.op {
            Op::Read => {
                m.reads += 1;
                self.reads[buf as usize] += 1;
                self.first[buf as usize].get_or_insert(*a);
            }
            Op::Write => {
                m.writes += 1;
                if a.value <= MASKED {
                    for (w, n) in self.masked.iter_mut().zip(&self.reads) {
                        *w += n;
                    }
                    for (f, w) in self.first_masked.iter_mut().zip(&self.first) {
                        if f.is_none() {
                            *f = *w;
                        }
                    }
                }
                self.reads.fill(0);
                self.first.fill(None);
            }
        }
    }
}

/// Adds one access to the findings of its kind at its source line, or, past the [`SITES`]
/// listed lines of its kind and buffer, to the finding of their other lines. Returns the
/// finding's index.
pub(super) fn note<R: BufRead>(
    findings: &mut Findings,
    kind: Kind,
    a: &Access,
    name: &str,
    size: Option<usize>,
    holds: Option<String>,
    reader: &Reader<R>,
) -> usize {
    let site = (kind, a.name, Some((a.file, a.line)));
    if let Some(&k) = findings.index.get(&site) {
        findings.list[k].count += 1;
        return k;
    }
    let listed = findings.sites.entry((kind, a.name)).or_insert(0);
    let key = if *listed < SITES {
        *listed += 1;
        site
    } else {
        (kind, a.name, None)
    };
    if let Some(&k) = findings.index.get(&key) {
        findings.list[k].count += 1;
        return k;
    }
    findings.index.insert(key, findings.list.len());
    findings.list.push(Finding {
        kind,
        error: kind.is_error(),
        buffer: name.to_string(),
        op: a.op.name(),
        offset: a.offset,
        size,
        cell: None,
        holds,
        at: Source::of(reader.files(), a.file, a.line, a.at),
        count: 1,
        elsewhere: key.2.is_none(),
    });
    findings.list.len() - 1
}
