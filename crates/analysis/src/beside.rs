//! A learner's whole trace beside the reference pass, for stepping through both (`tui --mine`).
//!
//! The two cursors move together by cell, not by event number: the learner's k-th write of a
//! cell stands beside the reference's k-th write of the same cell (the reference's last one when
//! the learner writes it more often), and a read stands beside the reference's read of the same
//! cell **for the same write**: among the reads of the reference's write of the cell the
//! learner's read feeds (the next write it makes), the same cell, else the nearest one of the
//! same buffer. A read of `k[1]` for the score of key 2 thus stands beside the reference's read
//! of `k[2]`, and is marked as a cell the reference does not read there. A learner's loop order
//! is theirs, so event numbers mean nothing across the two; the cell does.

use super::grade::{self, Grade};
use crate::learner::bind::{Binder, Bindings, Target};
use crate::learner::import::{Access, Header, ImportError, Reader};
use crate::learner::reference::Reference;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::{Buf, Op};
use std::collections::HashMap;
use std::io::BufRead;

/// At most this many accesses of a learner's trace are loaded for stepping (the grade itself
/// streams any length).
pub const MAX_STEPPED: usize = 4_000_000;

/// A learner's trace, graded, beside the reference.
#[derive(Debug)]
pub struct Beside {
    pub header: Header,
    pub accesses: Vec<Access>,
    /// Per access, the reference cell it is (`None`: outside its buffer, or a local).
    pub cells: Vec<Option<(Buf, usize)>>,
    /// The learner's buffer names, indexed by [`Access::name`].
    pub names: Vec<String>,
    /// The source files the accesses name.
    pub files: Vec<String>,
    pub reference: Reference,
    pub grade: Grade,
    /// Per access, the reference event beside it ([`NO_MATCH`] when the reference never
    /// touches that cell so), in the numbering across layers.
    matched: Vec<u32>,
    /// Per read, whether the reference's writes of the cell it feeds never read such a cell
    /// (along a coordinate that follows the cell written).
    stray: Vec<bool>,
}

/// No reference event matches.
pub const NO_MATCH: u32 = u32::MAX;

impl Beside {
    /// Reads the trace three times over: to grade it, for the divergence's reads, and to keep
    /// its accesses. `open` reopens it; `bindings` replaces the header's (`--bind FILE`).
    pub fn load<R: BufRead>(
        scenario: &Scenario,
        reference: impl FnOnce(&Header) -> Result<Reference, String>,
        bindings: Option<&Bindings>,
        mut open: impl FnMut() -> Result<Reader<R>, ImportError>,
    ) -> Result<Beside, String> {
        let mut reader = open().map_err(|e| e.to_string())?;
        let header = reader.header().clone();
        let reference = reference(&header)?;
        let declared = bindings.or(header.bind.as_ref()).cloned().unwrap_or_default();
        let mut binder = Binder::new(&declared, &reference)?;
        let graded = grade::grade(&reference, &mut reader, &mut binder, scenario).map_err(|e| e.to_string())?;
        let grade = graded
            .with_mine_reads(&reference, open().map_err(|e| e.to_string())?, &mut binder)
            .map_err(|e| e.to_string())?;
        let mut reader = open().map_err(|e| e.to_string())?;
        let mut accesses = Vec::new();
        let mut cells = Vec::new();
        while let Some(a) = reader.next_access() {
            let a = a.map_err(|e| e.to_string())?;
            let name = reader.buffers().get(a.name as usize).cloned().unwrap_or_default();
            let cell = match binder.map(&reference, a.name, &name, a.offset, reader.index()) {
                Ok(Target::Cell { buf, off }) => Some((buf, off)),
                _ => None,
            };
            accesses.push(a);
            cells.push(cell);
            if accesses.len() > MAX_STEPPED {
                return Err(format!(
                    "the trace has more than {MAX_STEPPED} accesses: grade it with `attn-trace grade`, step through a smaller scenario"
                ));
            }
        }
        let files = reader.files().to_vec();
        let names = reader.buffers().to_vec();
        let (matched, stray) = pair(&reference, &accesses, &cells);
        Ok(Beside {
            header,
            accesses,
            cells,
            names,
            files,
            reference,
            grade,
            matched,
            stray,
        })
    }

    /// The reference event beside the learner's access `n`.
    pub fn matched(&self, n: usize) -> Option<usize> {
        self.matched.get(n).filter(|&&m| m != NO_MATCH).map(|&m| m as usize)
    }

    /// Is the learner's access `n` a read of a cell the reference's writes of the cell it feeds
    /// never read?
    pub fn is_stray(&self, n: usize) -> bool {
        self.stray.get(n).copied().unwrap_or(false)
    }

    /// The learner's buffer name of access `n`.
    pub fn name(&self, n: usize) -> &str {
        self.accesses
            .get(n)
            .and_then(|a| self.names.get(a.name as usize))
            .map_or("", String::as_str)
    }

    /// The cell the learner's access `n` feeds: the first write after it (a write feeds itself).
    pub fn feeds(&self, n: usize) -> Option<(Buf, usize)> {
        (n..self.accesses.len())
            .find(|&k| self.accesses[k].op == Op::Write && self.cells[k].is_some())
            .and_then(|k| self.cells[k])
    }

    /// The learner's access standing at the divergence: their last write of the divergent
    /// cell (else their first access after the reference's event, in cell order), and the
    /// reference's event (in its layer's numbering).
    pub fn divergence(&self) -> Option<(Option<usize>, usize)> {
        let d = self.grade.divergence.as_ref()?;
        let mine = d
            .mine_at
            .as_ref()
            .and_then(|s| self.accesses.iter().position(|a| a.at == s.trace_line));
        Some((mine, d.reference_event))
    }

    /// The learner's accesses that start an access error, in trace order.
    pub fn errors(&self) -> Vec<usize> {
        let lines: Vec<u64> = self
            .grade
            .findings
            .iter()
            .filter(|f| f.error && f.at.trace_line > 0)
            .map(|f| f.at.trace_line)
            .collect();
        let mut at: Vec<usize> = self
            .accesses
            .iter()
            .enumerate()
            .filter(|(_, a)| lines.contains(&a.at))
            .map(|(n, _)| n)
            .collect();
        at.sort_unstable();
        at
    }

    /// The reference cell of the learner's access `n`, described (`q[b0 i2 h1 d0]`, with the
    /// hidden pair or the fused column it is), or the bare offset outside its buffer.
    pub fn label(&self, n: usize) -> String {
        match (self.cells.get(n).copied().flatten(), self.accesses.get(n)) {
            (Some((buf, off)), _) => self.reference.describe(buf, off),
            (None, Some(a)) => {
                let name = self.name(n);
                match Buf::from_name(name).and_then(|b| self.reference.get(b)) {
                    Some(c) if a.offset >= 0 => format!("{} ≥ {}", a.offset, c.len()),
                    Some(_) => format!("{} < 0", a.offset),
                    None => tr_outside(name, a.offset),
                }
            }
            (None, None) => String::new(),
        }
    }
}

fn tr_outside(name: &str, offset: i64) -> String {
    attn_trace_i18n::tr!("{name}[{offset}] is in no view of its binding", name, offset).to_string()
}

/// Per learner access, the reference event beside it, and whether a read is stray.
fn pair(r: &Reference, accesses: &[Access], cells: &[Option<(Buf, usize)>]) -> (Vec<u32>, Vec<bool>) {
    // the reference's events of each (op, cell), in order
    let mut by_cell: HashMap<(Op, Buf, usize), Vec<u32>> = HashMap::new();
    for n in 0..r.events() {
        if let Some((op, buf, off, _)) = r.cell_event(n) {
            by_cell.entry((op, buf, off)).or_default().push(n as u32);
        }
    }
    let mut seen: HashMap<(Op, Buf, usize), usize> = HashMap::new();
    let mut matched: Vec<u32> = accesses
        .iter()
        .zip(cells)
        .map(|(a, cell)| {
            let Some((buf, off)) = *cell else { return NO_MATCH };
            let key = (a.op, buf, off);
            let k = seen.entry(key).or_default();
            let m = by_cell
                .get(&key)
                .and_then(|events| events.get(*k).or(events.last()))
                .copied()
                .unwrap_or(NO_MATCH);
            *k += 1;
            m
        })
        .collect();
    let mut stray = vec![false; accesses.len()];
    // the block of writes each read feeds: the writes right after the next write's start
    let mut next_block: Option<(usize, usize)> = None;
    for n in (0..accesses.len()).rev() {
        if accesses[n].op == Op::Write {
            // extend the block back over writes one after another
            next_block = match next_block {
                Some((start, end)) if start == n + 1 => Some((n, end)),
                _ => Some((n, n + 1)),
            };
            continue;
        }
        let (Some((y_buf, y_off)), Some((start, end))) = (cells[n], next_block) else {
            continue;
        };
        let writes: Vec<usize> = (start..end.min(start + 256)).filter(|&k| cells[k].is_some()).collect();
        // the reference's reads for each of the block's cells: the reads before its write
        let mut best: Option<(usize, u32)> = None;
        let mut related = false;
        let mut fits = false;
        for &w in &writes {
            let Some((x_buf, x_off)) = cells[w] else { continue };
            if let (Some(ties), Some(wc), Some(rc)) = (r.ties(x_buf, y_buf), r.get(x_buf), r.get(y_buf)) {
                related = true;
                let (x, y) = (wc.coords(x_off), rc.coords(y_off));
                if ties.iter().all(|t| {
                    t.map
                        .get(x[t.write_dim])
                        .copied()
                        .flatten()
                        .is_none_or(|v| v == y[t.read_dim])
                }) {
                    fits = true;
                }
            }
            let e = matched[w];
            if e == NO_MATCH {
                continue;
            }
            let mut k = e as usize;
            while k > 0 {
                k -= 1;
                let Some((op, buf, off, _)) = r.cell_event(k) else {
                    break;
                };
                if op != Op::Read {
                    break;
                }
                if buf != y_buf {
                    continue;
                }
                let score = if off == y_off {
                    usize::MAX
                } else {
                    match (r.get(buf), r.get(y_buf)) {
                        (Some(c), Some(_)) => {
                            let (a, b) = (c.coords(off), c.coords(y_off));
                            a.iter().zip(&b).filter(|(p, q)| p == q).count()
                        }
                        _ => 0,
                    }
                };
                if best.is_none_or(|(s, _)| score > s) {
                    best = Some((score, k as u32));
                }
            }
            if best.is_some_and(|(s, _)| s == usize::MAX) {
                break;
            }
        }
        if let Some((_, k)) = best {
            matched[n] = k;
        }
        stray[n] = related && !fits && !r.get(y_buf).is_some_and(|c| c.unneeded[y_off]);
        // a read of a cell the block writes is its accumulator: never stray
        if writes.iter().any(|&w| cells[w] == Some((y_buf, y_off))) {
            stray[n] = false;
        }
    }
    (matched, stray)
}
