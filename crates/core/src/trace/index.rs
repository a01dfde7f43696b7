//! Per-cell access lists, built once per trace, so that "who last wrote this cell" and "who
//! reads it next" are a binary search however long the log is.

use super::{Buf, Event, Op};

/// For every cell (buffer, offset): the sorted event numbers that read it and that wrote it,
/// stored compressed-row style (one flat list per op, with per-cell start positions).
#[derive(Debug, Default)]
pub struct CellIndex {
    /// First cell id of each buffer; a buffer's cells are `base[b]..base[b + 1]`.
    base: Vec<usize>,
    reads: Csr,
    writes: Csr,
}

#[derive(Debug, Default)]
struct Csr {
    start: Vec<u32>,
    events: Vec<u32>,
}

impl Csr {
    fn build(events: &[Event], base: &[usize], cells: usize, op: Op) -> Csr {
        let cell = |e: &Event| base[e.buf as usize] + e.offset as usize;
        let mut start = vec![0u32; cells + 1];
        for e in events.iter().filter(|e| e.op == op) {
            start[cell(e) + 1] += 1;
        }
        for k in 0..cells {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut list = vec![0u32; start[cells] as usize];
        for (n, e) in events.iter().enumerate().filter(|(_, e)| e.op == op) {
            let c = cell(e);
            list[fill[c] as usize] = n as u32;
            fill[c] += 1;
        }
        Csr { start, events: list }
    }

    fn of(&self, cell: usize) -> &[u32] {
        &self.events[self.start[cell] as usize..self.start[cell + 1] as usize]
    }
}

/// Last entry `< bound` of a sorted list.
fn last_below(list: &[u32], bound: usize) -> Option<usize> {
    let k = list.partition_point(|&e| (e as usize) < bound);
    k.checked_sub(1).map(|k| list[k] as usize)
}

/// First entry `> bound` of a sorted list.
fn first_above(list: &[u32], bound: usize) -> Option<usize> {
    let k = list.partition_point(|&e| e as usize <= bound);
    list.get(k).map(|&e| e as usize)
}

impl CellIndex {
    /// `sizes[b]` is the number of elements of buffer `b` (0 when absent).
    pub fn build(events: &[Event], sizes: &[usize]) -> CellIndex {
        let mut base = Vec::with_capacity(sizes.len() + 1);
        let mut total = 0;
        for &s in sizes {
            base.push(total);
            total += s;
        }
        base.push(total);
        CellIndex {
            reads: Csr::build(events, &base, total, Op::Read),
            writes: Csr::build(events, &base, total, Op::Write),
            base,
        }
    }

    fn cell(&self, buf: Buf, offset: usize) -> Option<usize> {
        let b = buf as usize;
        let c = self.base.get(b)? + offset;
        (c < *self.base.get(b + 1)?).then_some(c)
    }

    /// Sorted event numbers that read `buf[offset]`.
    pub fn reads(&self, buf: Buf, offset: usize) -> &[u32] {
        self.cell(buf, offset).map_or(&[], |c| self.reads.of(c))
    }

    /// Sorted event numbers that wrote `buf[offset]`.
    pub fn writes(&self, buf: Buf, offset: usize) -> &[u32] {
        self.cell(buf, offset).map_or(&[], |c| self.writes.of(c))
    }

    /// Does the log write any cell of `buf`? (A buffer the scenario gives, such as `x` or a
    /// block table, is only read.)
    pub fn buffer_written(&self, buf: Buf) -> bool {
        let b = buf as usize;
        match (self.base.get(b), self.base.get(b + 1)) {
            (Some(&first), Some(&end)) => self.writes.start.get(first) != self.writes.start.get(end),
            _ => false,
        }
    }

    /// Bytes the index occupies.
    pub fn bytes(&self) -> usize {
        (self.reads.start.len() + self.reads.events.len() + self.writes.start.len() + self.writes.events.len())
            * size_of::<u32>()
            + self.base.len() * size_of::<usize>()
    }

    /// The last write of the cell strictly before event `n`.
    pub fn last_write_before(&self, buf: Buf, offset: usize, n: usize) -> Option<usize> {
        last_below(self.writes(buf, offset), n)
    }

    /// The last write of the cell at or before event `n`.
    pub fn last_write_at_or_before(&self, buf: Buf, offset: usize, n: usize) -> Option<usize> {
        last_below(self.writes(buf, offset), n + 1)
    }

    /// The first read of the cell strictly after event `n`.
    pub fn next_read_after(&self, buf: Buf, offset: usize, n: usize) -> Option<usize> {
        first_above(self.reads(buf, offset), n)
    }

    /// The first access (read or write) of the cell strictly after event `n`.
    pub fn next_access_after(&self, buf: Buf, offset: usize, n: usize) -> Option<usize> {
        let r = first_above(self.reads(buf, offset), n);
        let w = first_above(self.writes(buf, offset), n);
        r.into_iter().chain(w).min()
    }

    /// The last access (read or write) of the cell strictly before event `n`.
    pub fn prev_access_before(&self, buf: Buf, offset: usize, n: usize) -> Option<usize> {
        let r = last_below(self.reads(buf, offset), n);
        let w = last_below(self.writes(buf, offset), n);
        r.into_iter().chain(w).max()
    }

    /// The first access of the cell in the whole log.
    pub fn first_access(&self, buf: Buf, offset: usize) -> Option<usize> {
        let r = self.reads(buf, offset).first();
        let w = self.writes(buf, offset).first();
        r.into_iter().chain(w).min().map(|&e| e as usize)
    }

    /// The first write of the cell in the whole log.
    pub fn first_write(&self, buf: Buf, offset: usize) -> Option<usize> {
        self.writes(buf, offset).first().map(|&e| e as usize)
    }

    /// The last event in `events` that wrote `buf[offset]`: the value the cell has when a phase
    /// spanning `events` ends.
    pub fn last_write_in(&self, buf: Buf, offset: usize, events: std::ops::Range<usize>) -> Option<usize> {
        let w = self.writes(buf, offset);
        let end = w.partition_point(|&x| (x as usize) < events.end);
        end.checked_sub(1)
            .map(|last| w[last] as usize)
            .filter(|x| events.contains(x))
    }
}
