//! A learner's kernel graded access by access against the reference pass.
//!
//! The learner's trace is read once, line by line ([`crate::learner::import::Reader`]), into a
//! few arrays per buffer (what they last wrote in each cell, where, whether they read it
//! since), so a trace of any length is graded in memory proportional to the buffers. Three
//! answers, in the order a learner needs them:
//!
//! 1. **Results**: every cell the reference pass writes, in every buffer the learner wrote and
//!    every result the pass must produce, against the reference's final value within
//!    [`tolerance`]. No loop order is assumed: only final values count.
//! 2. **Accesses**: offsets outside a buffer (by the registry's sizes), reads of a cell nobody
//!    gave and the learner had not written yet, writes lost to a later write before any read
//!    (an error where the reference accumulates into the cell), reads of input cells the
//!    reference never reads (waste, not an error), and the global reads and writes per buffer
//!    beside the reference's and flash's.
//! 3. **The first divergence**: of the wrong cells, the one the reference finishes first, with
//!    the reads that fed it on each side, and the gallery mistake it matches, if one does (the
//!    learner's values equal the mistaken kernel's wherever they differ from the reference's).

use crate::learner::import::{Access, ImportError, Reader};
use crate::learner::reference::{NONE, Reference};
use crate::traffic;
use attn_trace_core::engine::{self, Passes, StartKind};
use attn_trace_core::kernels::attention_mistakes::{Mistake, Mistakes};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::{Buf, MASKED, Op, Pass};
use attn_trace_i18n::tr;
use serde::Serialize;
use std::collections::HashMap;
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

/// Where in the learner's sources something happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Source {
    pub file: String,
    pub line: u32,
    /// The trace's line of the access.
    pub trace_line: u64,
}

/// One buffer's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferResult {
    #[serde(serialize_with = "buf_name")]
    pub buffer: Buf,
    /// Cells compared (those the reference pass writes).
    pub cells: usize,
    /// Cells with a value outside the tolerance.
    pub wrong: usize,
    /// Cells the learner never wrote.
    pub missing: usize,
    /// The first cell wrong or missing, in the order the reference finishes them.
    pub first: Option<Cell>,
}

/// One cell, both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    #[serde(serialize_with = "buf_name")]
    pub buffer: Buf,
    pub offset: usize,
    /// Its logical index, `b0 h1 i2 j1`.
    pub index: String,
    #[serde(serialize_with = "number")]
    pub reference: f32,
    /// `None`: the learner never wrote it.
    #[serde(serialize_with = "maybe_number")]
    pub mine: Option<f32>,
    pub tolerance: f32,
}

/// What is wrong with an access, and how bad it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The offset lies outside the buffer.
    OutOfBounds,
    /// A read of a cell nobody gave and the learner had not written.
    Uninitialised,
    /// A write lost to a later write before any read, in a cell the reference accumulates into
    /// (a lost zero, the accumulator's initialisation, is not: it loses no term).
    LostAccumulation,
    /// A write lost to a later write before any read, where nothing accumulates (information).
    Overwritten,
    /// Reads of input cells the reference never reads (information: waste, not a mistake).
    Waste,
    /// Reads that feed only a masked score (the reads since the previous write, when that write
    /// is a masked −1e9 or −∞): the mask throws their product away (information).
    MaskedWaste,
    /// Writes of cells the reference's pass does not write (information).
    ExtraWrites,
}

impl Kind {
    pub(crate) const fn is_error(self) -> bool {
        matches!(self, Kind::OutOfBounds | Kind::Uninitialised | Kind::LostAccumulation)
    }
}

/// Accesses of one kind at one source line: the first, and how many. At most [`SITES`] lines
/// are listed per kind and buffer; the accesses at any other line are one more finding,
/// `elsewhere`, at the first of them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub kind: Kind,
    pub error: bool,
    #[serde(serialize_with = "buf_name")]
    pub buffer: Buf,
    pub op: &'static str,
    /// The first offending offset, and the buffer's size.
    pub offset: i64,
    pub size: usize,
    pub at: Source,
    pub count: u64,
    /// The accesses of this kind and buffer at lines beyond the [`SITES`] listed: `at` is the
    /// first of them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub elsewhere: bool,
}

/// The most source lines listed per kind of finding and buffer: a trace with an error at every
/// line is a few findings and a count, not a finding per access.
pub const SITES: usize = 8;

/// Where a finding is: its kind, its buffer, and its (file id, line), `None` for the accesses
/// `elsewhere`.
type Site = (Kind, Buf, Option<(u32, u32)>);

/// The findings as they are gathered: each site's finding found by a key, not by a search.
#[derive(Default)]
struct Findings {
    list: Vec<Finding>,
    /// Each site's index in `list`.
    index: HashMap<Site, usize>,
    /// Lines listed so far per (kind, buffer).
    sites: HashMap<(Kind, Buf), usize>,
}

/// Global reads and writes of one buffer, the learner's beside the reference's (and flash's,
/// for attention).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Traffic {
    #[serde(serialize_with = "buf_name")]
    pub buffer: Buf,
    pub reads: u64,
    pub writes: u64,
    pub reference_reads: u64,
    pub reference_writes: u64,
    pub flash_reads: Option<u64>,
    pub flash_writes: Option<u64>,
}

/// An access of one side, as `q[10] = 0.25`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Touch {
    #[serde(serialize_with = "buf_name")]
    pub buffer: Buf,
    pub offset: i64,
    #[serde(serialize_with = "number")]
    pub value: f32,
}

/// The first cell the learner gets wrong, in the reference's order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Divergence {
    pub cell: Cell,
    /// The reference's last write of the cell (its event number: `explain`, `tui` and `g #n`
    /// take it) and the source line.
    pub reference_event: usize,
    pub reference_line: u32,
    pub reference_file: &'static str,
    /// The reads between the reference's previous write and this one.
    pub reference_reads: Vec<Touch>,
    /// The learner's last write of the cell, and the reads since their previous write.
    pub mine_at: Option<Source>,
    pub mine_reads: Vec<Touch>,
    /// More reads than listed, on each side.
    pub reference_more: usize,
    pub mine_more: usize,
}

/// A gallery mistake the learner's values match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Named {
    pub number: usize,
    pub name: &'static str,
    pub symptom: &'static str,
}

/// The grade of one trace against one reference pass.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Grade {
    pub variant: Variant,
    pub pass: Pass,
    pub input: u64,
    pub events: u64,
    pub results: Vec<BufferResult>,
    pub findings: Vec<Finding>,
    pub traffic: Vec<Traffic>,
    pub divergence: Option<Divergence>,
    pub mistake: Option<Named>,
}

impl Grade {
    pub(crate) fn results_ok(&self) -> bool {
        self.results.iter().all(|r| r.wrong == 0 && r.missing == 0)
    }

    pub fn errors(&self) -> usize {
        self.findings.iter().filter(|f| f.error).count()
    }

    /// Right results and no access errors.
    pub fn correct(&self) -> bool {
        self.results_ok() && self.errors() == 0
    }
}

/// What the learner did to one buffer, cell by cell.
struct Mine {
    /// Last value written (NaN before any write).
    value: Vec<f32>,
    /// Trace line of the last write (0: never written).
    written_at: Vec<u64>,
    /// Source of the last write (file id, line).
    source: Vec<(u32, u32)>,
    read_since: Vec<bool>,
    reads: u64,
    writes: u64,
    wrote_any: bool,
}

/// Grades the trace `reader` reads against `r`. A malformed line is an [`ImportError`].
pub fn grade<R: BufRead>(r: &Reference, reader: &mut Reader<R>, scenario: &Scenario) -> Result<Graded, ImportError> {
    let mut mine: Vec<Option<Mine>> = r
        .cells
        .iter()
        .map(|c| {
            c.as_ref().map(|c| Mine {
                value: vec![f32::NAN; c.len()],
                written_at: vec![0; c.len()],
                source: vec![(0, 0); c.len()],
                read_since: vec![false; c.len()],
                reads: 0,
                writes: 0,
                wrote_any: false,
            })
        })
        .collect();
    let mut findings = Findings::default();
    let mut waste: Vec<u64> = vec![0; Buf::ALL.len()];
    let mut masked_waste: Vec<u64> = vec![0; Buf::ALL.len()];
    // reads per buffer since the learner's last write, any buffer's
    let mut window: Vec<u64> = vec![0; Buf::ALL.len()];
    let mut extra: Vec<u64> = vec![0; Buf::ALL.len()];
    // where each kind of waste was first seen, per buffer (the finding names it): the first
    // wasted read, the first read of the window a masked score threw away, the first extra write
    let mut first_waste: Vec<Option<Access>> = vec![None; Buf::ALL.len()];
    let mut first_masked: Vec<Option<Access>> = vec![None; Buf::ALL.len()];
    let mut window_first: Vec<Option<Access>> = vec![None; Buf::ALL.len()];
    let mut first_extra: Vec<Option<Access>> = vec![None; Buf::ALL.len()];
    let mut events = 0u64;
    while let Some(a) = reader.next_access() {
        let a = a?;
        events += 1;
        let b = a.buf as usize;
        let Some(cells) = &r.cells[b] else {
            if r.registry().get(a.buf).is_some() {
                // a tile-level buffer (flash's on-chip working set): the learner's own locals
                continue;
            }
            return Err(reader.error_at(
                a.at,
                tr!(
                    "\"buffer\": the {variant} {pass} pass of this scenario has no buffer \"{name}\"; its buffers are {names}",
                    variant = r.variant.name(),
                    pass = r.pass.name(),
                    name = a.buf.name(),
                    names = r.iter().map(|c| c.buf.name()).collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        #[allow(clippy::expect_used, reason = "mine has an entry wherever the reference has cells")]
        let m = mine[b].as_mut().expect("a buffer of the run");
        match a.op {
            Op::Read => {
                m.reads += 1;
                window[b] += 1;
                window_first[b].get_or_insert(a);
            }
            Op::Write => {
                m.writes += 1;
                if a.value <= MASKED {
                    for (w, n) in masked_waste.iter_mut().zip(&window) {
                        *w += n;
                    }
                    for (f, w) in first_masked.iter_mut().zip(&window_first) {
                        if f.is_none() {
                            *f = *w;
                        }
                    }
                }
                window.fill(0);
                window_first.fill(None);
            }
        }
        let Some(off) = usize::try_from(a.offset).ok().filter(|&o| o < cells.len()) else {
            note(&mut findings, Kind::OutOfBounds, &a, cells.len(), reader);
            continue;
        };
        match a.op {
            Op::Read => {
                if !cells.input && m.written_at[off] == 0 {
                    note(&mut findings, Kind::Uninitialised, &a, cells.len(), reader);
                }
                if cells.input && !cells.read[off] {
                    waste[b] += 1;
                    first_waste[b].get_or_insert(a);
                }
                m.read_since[off] = true;
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
                    note(&mut findings, kind, &lost, cells.len(), reader);
                }
                if cells.last_write[off] == NONE {
                    extra[b] += 1;
                    first_extra[b].get_or_insert(a);
                }
                m.value[off] = a.value;
                m.written_at[off] = a.at;
                m.source[off] = (a.file, a.line);
                m.read_since[off] = false;
                m.wrote_any = true;
            }
        }
    }
    for c in r.iter() {
        let b = c.buf as usize;
        // a count of accesses found at their first: its place in the learner's sources and trace
        let counted = |kind: Kind, first: Option<Access>, count: u64| {
            let a = first?;
            Some(Finding {
                kind,
                error: false,
                buffer: c.buf,
                op: a.op.name(),
                offset: a.offset,
                size: c.len(),
                at: Source {
                    file: reader.files().get(a.file as usize).cloned().unwrap_or_default(),
                    line: a.line,
                    trace_line: a.at,
                },
                count,
                elsewhere: false,
            })
        };
        if waste[b] > 0 {
            findings.list.extend(counted(Kind::Waste, first_waste[b], waste[b]));
        }
        if masked_waste[b] > 0 {
            findings
                .list
                .extend(counted(Kind::MaskedWaste, first_masked[b], masked_waste[b]));
        }
        if extra[b] > 0 {
            findings
                .list
                .extend(counted(Kind::ExtraWrites, first_extra[b], extra[b]));
        }
    }
    let files = reader.files();

    // 1. results
    let mut results = Vec::new();
    let mut wrong_cells: Vec<(u32, Cell)> = Vec::new();
    for c in r.iter() {
        #[allow(clippy::expect_used, reason = "mine has an entry wherever the reference has cells")]
        let m = mine[c.buf as usize].as_ref().expect("a buffer of the run");
        if !c.written() || !(c.result || m.wrote_any) {
            continue;
        }
        let largest = c
            .end
            .iter()
            .zip(&c.last_write)
            .filter(|&(x, &w)| w != NONE && x.is_finite() && *x != MASKED)
            .fold(0.0f32, |a, (x, _)| a.max(x.abs()));
        let layout = &c.spec.layout;
        let mut res = BufferResult {
            buffer: c.buf,
            cells: 0,
            wrong: 0,
            missing: 0,
            first: None,
        };
        let mut first: Option<(u32, Cell)> = None;
        for off in 0..c.len() {
            let w = c.last_write[off];
            if w == NONE {
                continue;
            }
            res.cells += 1;
            let reference = c.end[off];
            let written = m.written_at[off] != 0;
            let ok = if written {
                agrees(m.value[off], reference, largest)
            } else {
                // a masked score the learner left alone is as good as −1e9
                reference == MASKED
            };
            if ok {
                continue;
            }
            if written {
                res.wrong += 1;
            } else {
                res.missing += 1;
            }
            let cell = Cell {
                buffer: c.buf,
                offset: off,
                index: layout.label(off),
                reference,
                mine: written.then_some(m.value[off]),
                tolerance: tolerance(reference, largest),
            };
            if first.as_ref().is_none_or(|(fw, _)| w < *fw) {
                first = Some((w, cell.clone()));
            }
            wrong_cells.push((w, cell));
        }
        res.first = first.map(|(_, c)| c);
        results.push(res);
    }

    // 2. traffic, global buffers only
    let ref_counts = counts(r.trace());
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
    wrong_cells.sort_by_key(|(w, _)| *w);
    let divergence = wrong_cells.first().map(|(w, cell)| {
        let trace = r.trace();
        let n = *w as usize;
        let (reference_reads, reference_more) = reads_before(
            trace.events[..n]
                .iter()
                .rev()
                .take_while(|e| e.op == Op::Read)
                .map(|e| Touch {
                    buffer: e.buf,
                    offset: i64::from(e.offset),
                    value: e.value,
                })
                .collect::<Vec<_>>()
                .into_iter()
                .rev(),
        );
        #[allow(clippy::expect_used, reason = "mine has an entry wherever the reference has cells")]
        let m = mine[cell.buffer as usize].as_ref().expect("a buffer of the run");
        let mine_at = (m.written_at[cell.offset] != 0).then(|| {
            let (file, line) = m.source[cell.offset];
            Source {
                file: files.get(file as usize).cloned().unwrap_or_default(),
                line,
                trace_line: m.written_at[cell.offset],
            }
        });
        Divergence {
            cell: cell.clone(),
            reference_event: n,
            reference_line: u32::from(trace.events[n].line),
            reference_file: trace.file_of(n),
            reference_reads,
            reference_more,
            mine_at,
            mine_reads: Vec::new(),
            mine_more: 0,
        }
    });

    // the gallery mistake the learner's values match, if one does
    let mistake = if wrong_cells.is_empty() {
        None
    } else {
        matching_mistake(r, scenario, &mine, &wrong_cells)
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
            mistake,
        },
    })
}

/// A grade, before the learner's side of its divergence is read (a second pass over the trace,
/// [`Graded::with_mine_reads`]).
#[derive(Debug)]
pub struct Graded {
    pub grade: Grade,
}

impl Graded {
    /// Reads the trace again up to the learner's last write of the divergent cell, keeping the
    /// reads since their write before it: the reads that fed it, in a straightforward kernel.
    pub fn with_mine_reads<R: BufRead>(mut self, mut reader: Reader<R>) -> Result<Grade, ImportError> {
        let Some(d) = &mut self.grade.divergence else {
            return Ok(self.grade);
        };
        let Some(at) = d.mine_at.as_ref().map(|s| s.trace_line) else {
            return Ok(self.grade);
        };
        // the first LISTED reads since the last write, and how many more: a trace of reads
        // and no writes holds no more than that
        let mut window: Vec<Touch> = Vec::with_capacity(LISTED);
        let mut more = 0usize;
        while let Some(a) = reader.next_access() {
            let a = a?;
            if a.at >= at {
                break;
            }
            match a.op {
                Op::Read if window.len() < LISTED => window.push(Touch {
                    buffer: a.buf,
                    offset: a.offset,
                    value: a.value,
                }),
                Op::Read => more += 1,
                Op::Write => {
                    window.clear();
                    more = 0;
                }
            }
        }
        d.mine_reads = window;
        d.mine_more = more;
        Ok(self.grade)
    }
}

/// At most this many reads are listed on each side of a divergence.
pub const LISTED: usize = 8;

fn reads_before(reads: impl Iterator<Item = Touch>) -> (Vec<Touch>, usize) {
    let all: Vec<Touch> = reads.collect();
    let more = all.len().saturating_sub(LISTED);
    (all.into_iter().take(LISTED).collect(), more)
}

/// Adds one access to the findings of its kind at its source line, or, past the [`SITES`]
/// listed lines of its kind and buffer, to the finding of their other lines.
fn note<R: BufRead>(findings: &mut Findings, kind: Kind, a: &Access, size: usize, reader: &Reader<R>) {
    let site = (kind, a.buf, Some((a.file, a.line)));
    if let Some(&k) = findings.index.get(&site) {
        findings.list[k].count += 1;
        return;
    }
    let listed = findings.sites.entry((kind, a.buf)).or_insert(0);
    let key = if *listed < SITES {
        *listed += 1;
        site
    } else {
        (kind, a.buf, None)
    };
    if let Some(&k) = findings.index.get(&key) {
        findings.list[k].count += 1;
        return;
    }
    findings.index.insert(key, findings.list.len());
    findings.list.push(Finding {
        kind,
        error: kind.is_error(),
        buffer: a.buf,
        op: a.op.name(),
        offset: a.offset,
        size,
        at: Source {
            file: reader.files().get(a.file as usize).cloned().unwrap_or_default(),
            line: a.line,
            trace_line: a.at,
        },
        count: 1,
        elsewhere: key.2.is_none(),
    });
}

/// (reads, writes) per [`Buf`] of a trace.
fn counts(trace: &attn_trace_core::trace::Trace) -> Vec<(u64, u64)> {
    let mut c = vec![(0u64, 0u64); Buf::ALL.len()];
    for e in &trace.events {
        match e.op {
            Op::Read => c[e.buf as usize].0 += 1,
            Op::Write => c[e.buf as usize].1 += 1,
        }
    }
    c
}

/// Flash's global reads and writes per buffer for the same pass, for attention that flash
/// computes too (multi-head, no dropout, no decoding); `None` for a buffer flash has not. Only
/// the attention core differs between the two, so flash's counts are the reference's with the
/// core's closed-form counts (`traffic::closed_form`, held to counted traces by its tests)
/// swapped for flash's: no second run.
fn flash_traffic(r: &Reference, scenario: &Scenario, reference: &[(u64, u64)]) -> Option<Vec<Option<(u64, u64)>>> {
    // flash computes multi-head attention's core: a variant that runs MHA's plain passes
    let d = r.variant.desc();
    if d.plain != Variant::Mha || d.latent || scenario.decode || scenario.dropout.is_some() {
        return None;
    }
    let plan = scenario.plan();
    let core = |v: Variant| {
        let mut c = vec![(0u64, 0u64); Buf::ALL.len()];
        for b in traffic::closed_form(&plan, v, r.pass).buffers {
            c[b.buf as usize] = (b.reads, b.writes);
        }
        c
    };
    let (ours, flash) = (core(r.variant), core(Variant::Flash));
    let passes = match r.pass {
        Pass::Forward => Passes::FORWARD,
        Pass::Backward => Passes::BOTH,
    };
    let registry = attn_trace_core::engine::Registry::new(&plan, Variant::Flash, passes);
    Some(
        Buf::ALL
            .iter()
            .map(|&b| {
                let k = b as usize;
                registry
                    .get(b)
                    .filter(|spec| spec.level == attn_trace_core::tensor::Level::Global)
                    .map(|_| {
                        (
                            reference[k].0.saturating_sub(ours[k].0) + flash[k].0,
                            reference[k].1.saturating_sub(ours[k].1) + flash[k].1,
                        )
                    })
            })
            .collect(),
    )
}

/// Can mistake `m` be made on this scenario's `variant` and `pass`?
pub fn applies(m: Mistake, scenario: &Scenario, variant: Variant, pass: Pass) -> bool {
    let plan = scenario.plan();
    let plain = variant.desc().gallery && !scenario.decode;
    match m {
        Mistake::OverwriteKvGrad => {
            variant.shares_kv_heads() && pass == Pass::Backward && scenario.shape.h_kv < scenario.shape.h
        }
        _ if pass != Pass::Forward || !plain => false,
        Mistake::NoInputProjection => plan.start != StartKind::Qkv,
        Mistake::NoOutputProjection => plan.proj,
        Mistake::DropoutNotApplied => plan.dropout,
        Mistake::MaskByMultiply => !matches!(scenario.mask, Mask::None),
        Mistake::ScaleBySeqLen | Mistake::SoftmaxOverTwoDims => true,
    }
}

/// The gallery mistake whose kernel gives the learner's values wherever those differ from the
/// reference's, if one does.
fn matching_mistake(r: &Reference, scenario: &Scenario, mine: &[Option<Mine>], wrong: &[(u32, Cell)]) -> Option<Named> {
    let inputs = scenario.reseeded(r.input).inputs();
    Mistake::ALL
        .into_iter()
        .filter(|&m| applies(m, scenario, r.variant, r.pass))
        .find(|&m| {
            let passes = match r.pass {
                Pass::Forward => Passes::FORWARD,
                Pass::Backward => Passes::BOTH,
            };
            let run = engine::run(
                &inputs.clone().with_mistakes(Mistakes::of(&[m])),
                r.variant,
                passes,
                false,
            );
            wrong.iter().all(|(_, cell)| {
                let Some(Some(m)) = mine.get(cell.buffer as usize) else {
                    return false;
                };
                let written = m.written_at[cell.offset] != 0;
                if !run.registry.has(cell.buffer) {
                    // the mistaken kernel has no such buffer (no output projection: no `out`)
                    return !written;
                }
                let Some(&theirs) = run.tensors.get(cell.buffer).get(cell.offset) else {
                    return false;
                };
                written && agrees(m.value[cell.offset], theirs, theirs.abs())
            })
        })
        .map(|m| Named {
            number: crate::mistakes::number(m),
            name: m.name(),
            symptom: m.symptom(),
        })
}

fn buf_name<S: serde::Serializer>(b: &Buf, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(b.name())
}

/// JSON has no NaN or infinity: those are written as strings.
fn number<S: serde::Serializer>(x: &f32, s: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        s.serialize_f32(*x)
    } else if x.is_nan() {
        s.serialize_str("nan")
    } else if *x > 0.0 {
        s.serialize_str("inf")
    } else {
        s.serialize_str("-inf")
    }
}

fn maybe_number<S: serde::Serializer>(x: &Option<f32>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => number(x, s),
        None => s.serialize_none(),
    }
}
