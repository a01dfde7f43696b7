//! A learner's whole trace beside the reference pass, for stepping through both (`tui --mine`).
//!
//! The two cursors move together by cell, not by event number: the learner's k-th read (or
//! write) of a cell stands beside the reference's k-th read (or write) of the same cell, the
//! reference's last one when the learner touches it more often. A learner's loop order is
//! theirs, so event numbers mean nothing across the two; the cell does.

use super::grade::{self, Grade};
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
    /// The source files the accesses name.
    pub files: Vec<String>,
    pub reference: Reference,
    pub grade: Grade,
    /// Per access, the reference event on the same cell the same way ([`NO_MATCH`] when the
    /// reference never touches that cell so).
    matched: Vec<u32>,
}

/// No reference event matches.
pub const NO_MATCH: u32 = u32::MAX;

impl Beside {
    /// Reads `src` (the trace at `path`) twice over: once to grade it, once to keep its
    /// accesses. `open` reopens it.
    pub fn load<R: BufRead>(
        scenario: &Scenario,
        reference: impl FnOnce(&Header) -> Result<Reference, String>,
        mut open: impl FnMut() -> Result<Reader<R>, ImportError>,
    ) -> Result<Beside, String> {
        let mut reader = open().map_err(|e| e.to_string())?;
        let header = reader.header().clone();
        let reference = reference(&header)?;
        let graded = grade::grade(&reference, &mut reader, scenario).map_err(|e| e.to_string())?;
        let grade = graded
            .with_mine_reads(open().map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        let mut reader = open().map_err(|e| e.to_string())?;
        let mut accesses = Vec::new();
        while let Some(a) = reader.next_access() {
            accesses.push(a.map_err(|e| e.to_string())?);
            if accesses.len() > MAX_STEPPED {
                return Err(format!(
                    "the trace has more than {MAX_STEPPED} accesses: grade it with `attn-trace grade`, step through a smaller scenario"
                ));
            }
        }
        let files = reader.files().to_vec();
        let matched = pair(&reference, &accesses);
        Ok(Beside {
            header,
            accesses,
            files,
            reference,
            grade,
            matched,
        })
    }

    /// The reference event beside the learner's access `n`.
    pub fn matched(&self, n: usize) -> Option<usize> {
        self.matched.get(n).filter(|&&m| m != NO_MATCH).map(|&m| m as usize)
    }

    /// The learner's access standing at the divergence: their last write of the divergent
    /// cell (else their first access after the reference's event, in cell order), and the
    /// reference's event.
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
        let lines: std::collections::HashSet<u64> = self
            .grade
            .findings
            .iter()
            .filter(|f| f.error)
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

    /// The logical index of a cell by the registry's layout, or the bare offset outside it.
    pub fn label(&self, buf: Buf, offset: i64) -> String {
        let inside = usize::try_from(offset).ok();
        match (self.reference.get(buf), inside) {
            (Some(c), Some(o)) if o < c.len() => c.spec.layout.label(o),
            (Some(c), Some(_)) => format!("{offset} ≥ {}", c.len()),
            (Some(_), None) => format!("{offset} < 0"),
            (None, _) => offset.to_string(),
        }
    }
}

/// Per learner access, the reference event of the same op on the same cell, by occurrence.
fn pair(r: &Reference, accesses: &[Access]) -> Vec<u32> {
    let trace = r.trace();
    let mut by_cell: HashMap<(Buf, i64, Op), Vec<u32>> = HashMap::new();
    for (n, e) in trace.events.iter().enumerate() {
        by_cell
            .entry((e.buf, i64::from(e.offset), e.op))
            .or_default()
            .push(n as u32);
    }
    let mut seen: HashMap<(Buf, i64, Op), usize> = HashMap::new();
    accesses
        .iter()
        .map(|a| {
            let key = (a.buf, a.offset, a.op);
            let k = seen.entry(key).or_default();
            let m = by_cell
                .get(&key)
                .and_then(|events| events.get(*k).or(events.last()))
                .copied()
                .unwrap_or(NO_MATCH);
            *k += 1;
            m
        })
        .collect()
}
