//! A learner's kernel graded access by access against the reference pass.
//!
//! The learner's trace is read once, line by line ([`crate::learner::import::Reader`]), each
//! access placed on a cell of the reference's tensors through its buffer's binding
//! ([`crate::learner::bind::Binder`]: any names, any layout), into a few arrays per buffer
//! (what they last wrote in each cell, where, whether they read it since), so a trace of any
//! length is graded in memory proportional to the buffers. Three answers, in the order a
//! learner needs them:
//!
//! 1. **Results**: every cell the reference pass writes, in every buffer the learner wrote and
//!    every result the pass must produce, against the reference's final value within
//!    [`tolerance`]. No loop order is assumed: only final values count. Cells no result
//!    depends on (scores and their gradients at masked pairs) are listed, not graded. A cell
//!    whose writes read cells the reference's never read for it (`k[1]` for the score of key
//!    2) is wrong even when its value is right: right by luck.
//! 2. **Accesses**: offsets outside a buffer (by the registry's sizes) or that no view of its
//!    binding covers, reads of a cell nobody gave and the learner had not written yet, writes
//!    lost to a later write before any read (an error where the reference accumulates into
//!    the cell), given cells the results depend on that the learner never reads (their results
//!    cannot depend on them), reads of input cells the reference never reads (waste, not an
//!    error), and the global reads and writes per buffer beside the reference's and flash's.
//! 3. **The first divergence**: of the wrong cells, the one the reference finishes first, with
//!    the reads that fed it on each side, hints in plain words (a constant ratio to the
//!    reference, reads that ignore a loop variable), and the gallery mistake it matches, if one
//!    does (the learner's values equal the mistaken kernel's wherever they differ from the
//!    reference's).

mod counts;
mod divergence;
mod hints;
mod mistake;
mod report;
mod state;

pub use divergence::LISTED;
pub use mistake::applies;
pub use report::{
    BufferResult, Cell, Divergence, Finding, Grade, Kind, Named, Ratio, SITES, Source, Stray, Touch, Traffic,
};

use crate::learner::bind::{Binder, Target, Unplaced};
use crate::learner::import::{Access, ImportError, Reader};
use crate::learner::reference::{Cells, NONE, Reference};
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::{Buf, MASKED, Op};
use attn_trace_i18n::tr;
use counts::{counts, flash_traffic};
use divergence::{expected, listed, touch_mine};
use hints::{constant_ratio, fused_column_read, ignored_loop_variables, scale_meaning, unmasked_read};
use mistake::matching_mistake;
use state::{BlockRead, Blocks, Findings, Mine, Window, note};
use std::io::BufRead;

/// Relative part of the tolerance: a float32 kernel summing in another order, or a float64
/// one, lands well inside it; a wrong scale, mask or head does not.
pub const RTOL: f32 = 1e-4;
/// Absolute part, times the buffer's largest reference magnitude (at least 1).
pub const ATOL: f32 = 1e-5;

/// How far the learner's value may be from the reference's: `RTOL·|ref| + ATOL·max(1, max|ref|)`.
pub fn tolerance(reference: f32, largest: f32) -> f32 {
    RTOL * reference.abs() + ATOL * largest.max(1.0)
}

/// Do two values agree? NaN agrees with NaN and an infinity with itself; a masked score
/// (the reference's −1e9) with anything at or below it, `-inf` included.
pub fn agrees(mine: f32, reference: f32, largest: f32) -> bool {
    if reference.is_nan() || mine.is_nan() {
        return reference.is_nan() && mine.is_nan();
    }
    if reference == MASKED {
        return mine <= MASKED;
    }
    if reference.is_infinite() || mine.is_infinite() {
        return reference == mine;
    }
    (mine - reference).abs() <= tolerance(reference, largest)
}

/// A grade, before the learner's side of its divergence is read (a second pass over the trace,
/// [`Graded::with_mine_reads`]).
#[derive(Debug)]
pub struct Graded {
    pub grade: Grade,
}

/// Grades the trace `reader` reads against `r`, placing its accesses with `binder`. A
/// malformed line is an [`ImportError`].
pub fn grade<R: BufRead>(
    r: &Reference,
    reader: &mut Reader<R>,
    binder: &mut Binder,
    scenario: &Scenario,
) -> Result<Graded, ImportError> {
    let mut mine: Vec<Option<Mine>> = r
        .cells
        .iter()
        .map(|c| {
            c.as_ref().map(|c| Mine {
                value: vec![f32::NAN; c.len()],
                written_at: vec![0; c.len()],
                source: vec![(0, 0); c.len()],
                read_since: vec![false; c.len()],
                read_any: vec![false; c.len()],
                reads: 0,
                writes: 0,
                first_write: None,
            })
        })
        .collect();
    let mut findings = Findings::default();
    let mut waste: Vec<u64> = vec![0; Buf::ALL.len()];
    let mut window = Window::new();
    let mut extra: Vec<u64> = vec![0; Buf::ALL.len()];
    let mut blocks = Blocks::new();
    // where each kind of waste was first seen, per buffer (the finding names it): the first
    // wasted read and the first extra write
    let mut first_waste: Vec<Option<Access>> = vec![None; Buf::ALL.len()];
    let mut first_extra: Vec<Option<Access>> = vec![None; Buf::ALL.len()];
    let mut events = 0u64;
    while let Some(a) = reader.next_access() {
        let a = a?;
        events += 1;
        let name = reader.buffers().get(a.name as usize).cloned().unwrap_or_default();
        let target = binder
            .map(r, a.name, &name, a.offset, reader.index())
            .map_err(|u| match u {
                Unplaced::Unknown(why) | Unplaced::Index(why) => reader.error_at(a.at, why),
            })?;
        let (buf, off) = match target {
            Target::Local => {
                // the learner's own locals: they end a block of writes as the reference's do
                if a.op == Op::Read {
                    blocks.read(r, None);
                } else {
                    blocks.after_write = true;
                }
                continue;
            }
            Target::Outside => {
                let ours = Buf::from_name(&name).filter(|&b| r.get(b).is_some() && !binder.is_bound(&name));
                match ours {
                    Some(b) => {
                        // our layout: counted in the buffer's traffic, reported with its size
                        let Some(m) = mine[b as usize].as_mut() else { continue };
                        window.count(m, b, &a);
                        let size = r.get(b).map(Cells::len);
                        note(&mut findings, Kind::OutOfBounds, &a, &name, size, None, reader);
                    }
                    None => {
                        let holds = binder.holds(&name);
                        note(&mut findings, Kind::Unmapped, &a, &name, None, holds, reader);
                    }
                }
                if a.op == Op::Read {
                    blocks.read(r, None);
                } else {
                    blocks.after_write = true;
                }
                continue;
            }
            Target::Cell { buf, off } => (buf, off),
        };
        let b = buf as usize;
        let (Some(cells), Some(m)) = (r.get(buf), mine[b].as_mut()) else {
            continue;
        };
        window.count(m, buf, &a);
        let cell_text = || (name != buf.name() || a.offset != off as i64).then(|| r.describe(buf, off));
        match a.op {
            Op::Read => {
                if !cells.input && m.written_at[off] == 0 {
                    let cell = cell_text();
                    let k = note(&mut findings, Kind::Uninitialised, &a, &name, None, None, reader);
                    let f = &mut findings.list[k];
                    if f.cell.is_none() {
                        f.cell = cell;
                    }
                }
                if cells.input && !cells.read[off] {
                    waste[b] += 1;
                    first_waste[b].get_or_insert(a);
                }
                m.read_since[off] = true;
                m.read_any[off] = true;
                blocks.read(
                    r,
                    Some(BlockRead {
                        buf,
                        off,
                        name: a.name,
                        offset: a.offset,
                        value: a.value,
                    }),
                );
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
                        ..a
                    };
                    note(&mut findings, kind, &lost, &name, None, None, reader);
                }
                if cells.last_write[off] == NONE {
                    extra[b] += 1;
                    first_extra[b].get_or_insert(a);
                }
                m.value[off] = a.value;
                m.written_at[off] = a.at;
                m.source[off] = (a.file, a.line);
                m.read_since[off] = false;
                if m.first_write.is_none() {
                    m.first_write = Some((a.file, a.line, a.at));
                }
                blocks.write(buf, off);
            }
        }
    }
    blocks.check(r);
    let files = reader.files().to_vec();
    let names = reader.buffers().to_vec();
    let source_of = |file: u32, line: u32, trace_line: u64| Source {
        file: files.get(file as usize).cloned().unwrap_or_default(),
        line,
        trace_line,
    };
    let none = Source {
        file: String::new(),
        line: 0,
        trace_line: 0,
    };
    let info = |kind: Kind, buf: Buf, op: Op, count: u64, size: usize, cell: Option<String>| Finding {
        kind,
        error: kind.is_error(),
        buffer: buf.name().to_string(),
        op: op.name(),
        offset: 0,
        size: Some(size),
        cell,
        holds: None,
        at: none.clone(),
        count,
        elsewhere: false,
    };
    for c in r.iter() {
        let b = c.buf as usize;
        #[allow(clippy::expect_used, reason = "mine has an entry wherever the reference has cells")]
        let m = mine[b].as_ref().expect("a buffer of the run");
        // given cells the results depend on that the learner never reads
        if c.is_data() {
            let unread: Vec<usize> = (0..c.len()).filter(|&off| c.needed[off] && !m.read_any[off]).collect();
            if let Some(&first) = unread.first() {
                let all = unread.len() == c.needed.iter().filter(|&&n| n).count();
                findings.list.push(Finding {
                    // the whole buffer unread says so without a cell
                    cell: (!all).then(|| r.describe(c.buf, first)),
                    ..info(Kind::NeverRead, c.buf, Op::Read, unread.len() as u64, c.len(), None)
                });
            }
        }
        // a count of accesses found at their first: its place in the learner's sources and trace
        let counted = |kind: Kind, first: Option<Access>, count: u64| {
            let a = first?;
            Some(Finding {
                op: a.op.name(),
                offset: a.offset,
                at: source_of(a.file, a.line, a.at),
                ..info(kind, c.buf, a.op, count, c.len(), None)
            })
        };
        if waste[b] > 0 {
            findings.list.extend(counted(Kind::Waste, first_waste[b], waste[b]));
        }
        if window.masked[b] > 0 {
            findings
                .list
                .extend(counted(Kind::MaskedWaste, window.first_masked[b], window.masked[b]));
        }
        if extra[b] > 0 {
            findings
                .list
                .extend(counted(Kind::ExtraWrites, first_extra[b], extra[b]));
        }
    }

    // the errors first, each kind in the order it was found
    findings.list.sort_by_key(|f| !f.error);

    // 1. results
    let mut results = Vec::new();
    // (the reference's last write, the cell, its value is wrong)
    let mut wrong_cells: Vec<(u32, Cell, bool)> = Vec::new();
    // the score-like buffers whose missing cells are all on the diagonal j = i
    let mut diagonal: Vec<Buf> = Vec::new();
    for c in r.iter() {
        #[allow(clippy::expect_used, reason = "mine has an entry wherever the reference has cells")]
        let m = mine[c.buf as usize].as_ref().expect("a buffer of the run");
        if !c.written() || !(c.result || m.first_write.is_some()) {
            continue;
        }
        let largest = c
            .end
            .iter()
            .zip(&c.last_write)
            .filter(|&(x, &w)| w != NONE && x.is_finite() && *x != MASKED)
            .fold(0.0f32, |a, (x, _)| a.max(x.abs()));
        let mut res = BufferResult {
            buffer: c.buf,
            cells: 0,
            wrong: 0,
            missing: 0,
            misread: 0,
            unneeded: 0,
            first: None,
            ratio: None,
        };
        let mut first: Option<(u32, Cell)> = None;
        let mut ratios: Vec<f32> = Vec::new();
        let pairs = c.spec.layout.is_pairs();
        let mut only_diagonal = pairs;
        for off in 0..c.len() {
            let w = c.last_write[off];
            if w == NONE {
                continue;
            }
            if c.unneeded[off] {
                res.unneeded += 1;
                continue;
            }
            res.cells += 1;
            let reference = c.end[off];
            let written = m.written_at[off] != 0;
            let stray = blocks.strays.get(&(c.buf, off)).copied();
            let right = if written {
                agrees(m.value[off], reference, largest)
            } else {
                // a masked score the learner left alone is as good as −1e9
                reference == MASKED
            };
            if right && stray.is_none() {
                continue;
            }
            if !written {
                res.missing += 1;
                if pairs {
                    let idx = c.coords(off);
                    only_diagonal &= idx[idx.len() - 1] == idx[idx.len() - 2];
                }
            } else if !right {
                res.wrong += 1;
                if reference.is_finite() && reference.abs() > tolerance(reference, largest) {
                    ratios.push(m.value[off] / reference);
                }
            } else {
                res.misread += 1;
            }
            let cell = Cell {
                buffer: c.buf,
                offset: off,
                index: c.label(off),
                reference,
                mine: written.then_some(m.value[off]),
                tolerance: tolerance(reference, largest),
                right: written && right,
                stray: stray.map(|y| Stray {
                    expected: expected(r, c.buf, off, &y),
                    read: touch_mine(r, &names, &y, true),
                }),
            };
            if first.as_ref().is_none_or(|(fw, _)| w < *fw) {
                first = Some((w, cell.clone()));
            }
            wrong_cells.push((w, cell, !right));
        }
        res.ratio = constant_ratio(&ratios).map(|factor| Ratio {
            factor,
            meaning: scale_meaning(r, c.buf, factor),
        });
        if only_diagonal && res.missing > 0 {
            diagonal.push(c.buf);
        }
        res.first = first.map(|(_, c)| c);
        results.push(res);
    }

    // 2. traffic, global buffers only
    let ref_counts = counts(r);
    let flash = flash_traffic(r, scenario, &ref_counts);
    let traffic = r
        .iter()
        .filter_map(|c| {
            #[allow(clippy::expect_used, reason = "mine has an entry wherever the reference has cells")]
            let m = mine[c.buf as usize].as_ref().expect("a buffer of the run");
            let (rr, rw) = ref_counts[c.buf as usize];
            if m.reads + m.writes + rr + rw == 0 {
                return None;
            }
            let f = flash.as_ref().and_then(|f| f[c.buf as usize]);
            Some(Traffic {
                buffer: c.buf,
                reads: m.reads,
                writes: m.writes,
                reference_reads: rr,
                reference_writes: rw,
                flash_reads: f.map(|f| f.0),
                flash_writes: f.map(|f| f.1),
            })
        })
        .collect();

    // 3. the first divergence
    wrong_cells.sort_by_key(|(w, _, _)| *w);
    let divergence = wrong_cells.first().and_then(|(w, cell, _)| {
        let e = r.event(*w as usize)?;
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
        #[allow(clippy::expect_used, reason = "mine has an entry wherever the reference has cells")]
        let m = mine[cell.buffer as usize].as_ref().expect("a buffer of the run");
        let mine_at = (m.written_at[cell.offset] != 0).then(|| {
            let (file, line) = m.source[cell.offset];
            source_of(file, line, m.written_at[cell.offset])
        });
        let mine_elsewhere = match (&mine_at, m.first_write) {
            (None, Some((file, line, at))) => Some(source_of(file, line, at)),
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
    });

    // hints in plain words
    let mut hints = Vec::new();
    if let Some(d) = &divergence
        && let Some(res) = results.iter().find(|res| res.buffer == d.cell.buffer)
        && let Some(ratio) = &res.ratio
    {
        hints.push(match &ratio.meaning {
            Some(meaning) => tr!(
                "your {name} are {factor}× the reference's: {meaning}",
                name = res.buffer.name(),
                factor = format!("{:.4}", ratio.factor),
                meaning
            )
            .to_string(),
            None => tr!(
                "your {name} are {factor}× the reference's",
                name = res.buffer.name(),
                factor = format!("{:.4}", ratio.factor)
            )
            .to_string(),
        });
    }
    if let Some(d) = &divergence
        && d.cell.mine.is_none()
        && diagonal.contains(&d.cell.buffer)
    {
        hints.push(
            tr!(
                "the {name} you never write are those of a query with its own key (j = i): the loop over the keys stops one short",
                name = d.cell.buffer.name()
            )
            .to_string(),
        );
    }
    hints.extend(ignored_loop_variables(r, &blocks));
    if let Some(h) = divergence.as_ref().and_then(fused_column_read) {
        hints.push(h);
    }
    if let Some(d) = &divergence
        && let Some(h) = unmasked_read(r, &mine, d, &source_of)
    {
        hints.push(h);
    }

    // the gallery mistake the learner's values match, if one does
    let value_wrong: Vec<(u32, Cell)> = wrong_cells
        .iter()
        .filter(|(_, _, value)| *value)
        .map(|(w, c, _)| (*w, c.clone()))
        .collect();
    let mistake = if value_wrong.is_empty() {
        None
    } else {
        matching_mistake(r, scenario, &mine, &value_wrong)
    };

    Ok(Graded {
        grade: Grade {
            variant: r.variant,
            pass: r.pass,
            input: r.input,
            events,
            results,
            findings: findings.list,
            traffic,
            divergence,
            hints,
            mistake,
        },
    })
}
