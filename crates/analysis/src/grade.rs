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

use crate::accum::Scale;
use crate::learner::bind::{Binder, Target, Unplaced};
use crate::learner::import::{Access, ImportError, Reader};
use crate::learner::reference::{Cells, NONE, Reference};
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

/// A constant ratio between the learner's values and the reference's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ratio {
    /// mine / reference, the same over every wrong cell.
    pub factor: f32,
    /// What it is, when it is a known scale: `1/√C where 1/√D is meant`.
    pub meaning: Option<String>,
}

/// One buffer's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferResult {
    #[serde(serialize_with = "buf_name")]
    pub buffer: Buf,
    /// Cells compared (those the reference pass writes and some result depends on).
    pub cells: usize,
    /// Cells with a value outside the tolerance.
    pub wrong: usize,
    /// Cells the learner never wrote.
    pub missing: usize,
    /// Cells with a right value whose writes read cells the reference's never read for them.
    pub misread: usize,
    /// Cells the reference writes that no result depends on (at pairs the mask hides): not
    /// graded.
    pub unneeded: usize,
    /// The first cell wrong, missing or misread, in the order the reference finishes them.
    pub first: Option<Cell>,
    /// The learner's values are the reference's times one number, over every wrong cell.
    pub ratio: Option<Ratio>,
}

/// One cell, both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    #[serde(serialize_with = "buf_name")]
    pub buffer: Buf,
    /// Its offset in our layout (layer-major with several layers).
    pub offset: usize,
    /// Its logical index, `b0 h1 i2 j1`.
    pub index: String,
    #[serde(serialize_with = "number")]
    pub reference: f32,
    /// `None`: the learner never wrote it.
    #[serde(serialize_with = "maybe_number")]
    pub mine: Option<f32>,
    pub tolerance: f32,
    /// The learner's value is within the tolerance (the cell is wrong for its reads alone).
    pub right: bool,
    /// A read, by a write of this cell, of a cell the reference's writes never read for it.
    pub stray: Option<Stray>,
}

/// A read of a cell the reference does not read for the cell written: `k[b0 j1 h0 d0]` for the
/// score of key 2.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stray {
    pub read: Touch,
    /// What the reference's reads have there: `j = 2`.
    pub expected: String,
}

/// What is wrong with an access, and how bad it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The offset lies outside the buffer.
    OutOfBounds,
    /// The offset lies in no view of the buffer's binding.
    Unmapped,
    /// A read of a cell nobody gave and the learner had not written.
    Uninitialised,
    /// A write lost to a later write before any read, in a cell the reference accumulates into
    /// (a lost zero, the accumulator's initialisation, is not: it loses no term).
    LostAccumulation,
    /// Given cells the results depend on, never read: the results cannot depend on them.
    NeverRead,
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
    pub const fn is_error(self) -> bool {
        matches!(
            self,
            Kind::OutOfBounds | Kind::Unmapped | Kind::Uninitialised | Kind::LostAccumulation | Kind::NeverRead
        )
    }
}

/// Accesses of one kind at one source line: the first, and how many.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub kind: Kind,
    pub error: bool,
    /// The buffer as the learner named it (ours for the findings about our tensors).
    pub buffer: String,
    pub op: &'static str,
    /// The first offending offset, as the learner computed it.
    pub offset: i64,
    /// The buffer's size, when it has our layout.
    pub size: Option<usize>,
    /// The reference cell the offset is, when it is one: `q[b0 i2 h1 d0]`.
    pub cell: Option<String>,
    /// What the learner's binding holds there, for an offset no view covers: `q, k, v`.
    pub holds: Option<String>,
    pub at: Source,
    pub count: u64,
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

/// An access of one side: `q[10] = 0.25`, as that side named and addressed it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Touch {
    pub buffer: String,
    pub offset: i64,
    #[serde(serialize_with = "number")]
    pub value: f32,
    /// The reference cell by its logical index, `q[b0 i2 h1 d0]` (`None`: it is no cell).
    pub cell: Option<String>,
    /// What the cell is besides: the fused column (`k h1 d0`), the hidden pair (`hidden: j > i`).
    pub note: Option<String>,
    /// A read the reference's writes of the cell never make.
    pub stray: bool,
}

/// The first cell the learner gets wrong, in the reference's order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Divergence {
    pub cell: Cell,
    /// The reference's last write of the cell: its event number in its layer's log (what
    /// `explain`, `tui` and `g #n` take, on layer 0), the layer, and the source line.
    pub reference_event: usize,
    pub reference_layer: usize,
    pub reference_line: u32,
    pub reference_file: &'static str,
    /// The cells the reference's writes of the cell read, as a set.
    pub reference_reads: Vec<Touch>,
    /// The learner's last write of the cell, the buffer and offset it wrote, and the reads
    /// since their previous write, as a set.
    pub mine_at: Option<Source>,
    pub mine_write: Option<Touch>,
    pub mine_reads: Vec<Touch>,
    /// More reads than listed, on each side.
    pub reference_more: usize,
    pub mine_more: usize,
    /// The learner never wrote the cell: where they write the rest of its buffer.
    pub mine_elsewhere: Option<Source>,
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
    /// What the learner's mistakes look like, in plain words.
    pub hints: Vec<String>,
    pub mistake: Option<Named>,
}

impl Grade {
    pub fn results_ok(&self) -> bool {
        self.results
            .iter()
            .all(|r| r.wrong == 0 && r.missing == 0 && r.misread == 0)
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
    /// Ever read.
    read_any: Vec<bool>,
    reads: u64,
    writes: u64,
    /// Source and trace line of the first write of the buffer.
    first_write: Option<(u32, u32, u64)>,
}

/// A read of the current block: the cell, and how the learner made it.
#[derive(Clone, Copy)]
struct BlockRead {
    buf: Buf,
    off: usize,
    name: u32,
    offset: i64,
    value: f32,
}

/// For the hint "your k reads are the same for every h": per (buffer written, buffer read,
/// tie), the values of the written coordinate and of the read one over the learner's reads.
#[derive(Default)]
struct TieUse {
    x_values: Vec<usize>,
    y_values: Vec<usize>,
    violated: bool,
}

fn note_value(list: &mut Vec<usize>, v: usize) {
    if list.len() < 64 && !list.contains(&v) {
        list.push(v);
    }
}

/// The writes of a block (writes with no read between them) and the reads before them: what a
/// learner's kernel computed them from, whatever its loop order.
struct Blocks {
    reads: Vec<BlockRead>,
    writes: Vec<(Buf, usize)>,
    after_write: bool,
    /// The first stray read of each cell written.
    strays: HashMap<(Buf, usize), BlockRead>,
    ties: HashMap<(Buf, Buf, usize), TieUse>,
}

/// Blocks larger than this are a vectorised kernel's tiles, whose reads the check of each
/// cell's reads cannot place; their values are still graded.
const MAX_BLOCK_WRITES: usize = 256;
const MAX_BLOCK_READS: usize = 1 << 16;

impl Blocks {
    fn new() -> Blocks {
        Blocks {
            reads: Vec::new(),
            writes: Vec::new(),
            after_write: false,
            strays: HashMap::new(),
            ties: HashMap::new(),
        }
    }

    fn read(&mut self, r: &Reference, read: Option<BlockRead>) {
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

    fn write(&mut self, buf: Buf, off: usize) {
        self.after_write = true;
        if self.writes.len() <= MAX_BLOCK_WRITES {
            self.writes.push((buf, off));
        }
    }

    /// Each read of the block must lie where the reference's reads for some cell the block
    /// writes lie, along every coordinate that follows the cell written.
    fn check(&mut self, r: &Reference) {
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
    let mut findings: Vec<Finding> = Vec::new();
    let mut waste: Vec<u64> = vec![0; Buf::ALL.len()];
    let mut masked_waste: Vec<u64> = vec![0; Buf::ALL.len()];
    // reads per buffer since the learner's last write, any buffer's
    let mut window: Vec<u64> = vec![0; Buf::ALL.len()];
    let mut extra: Vec<u64> = vec![0; Buf::ALL.len()];
    let mut blocks = Blocks::new();
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
                        count(m, &mut window, &mut masked_waste, b, &a);
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
        count(m, &mut window, &mut masked_waste, buf, &a);
        let cell_text = || (name != buf.name() || a.offset != off as i64).then(|| r.describe(buf, off));
        match a.op {
            Op::Read => {
                if !cells.input && m.written_at[off] == 0 {
                    let cell = cell_text();
                    note(&mut findings, Kind::Uninitialised, &a, &name, None, None, reader);
                    if let Some(f) = findings.last_mut()
                        && f.cell.is_none()
                    {
                        f.cell = cell;
                    }
                }
                if cells.input && !cells.read[off] {
                    waste[b] += 1;
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
                findings.push(Finding {
                    // the whole buffer unread says so without a cell
                    cell: (!all).then(|| r.describe(c.buf, first)),
                    ..info(Kind::NeverRead, c.buf, Op::Read, unread.len() as u64, c.len(), None)
                });
            }
        }
        if waste[b] > 0 {
            findings.push(info(Kind::Waste, c.buf, Op::Read, waste[b], c.len(), None));
        }
        if masked_waste[b] > 0 {
            findings.push(info(Kind::MaskedWaste, c.buf, Op::Read, masked_waste[b], c.len(), None));
        }
        if extra[b] > 0 {
            findings.push(info(Kind::ExtraWrites, c.buf, Op::Write, extra[b], c.len(), None));
        }
    }

    // the errors first, each kind in the order it was found
    findings.sort_by_key(|f| !f.error);

    // 1. results
    let mut results = Vec::new();
    // (the reference's last write, the cell, its value is wrong)
    let mut wrong_cells: Vec<(u32, Cell, bool)> = Vec::new();
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
    hints.extend(ignored_loop_variables(r, &blocks));
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
            findings,
            traffic,
            divergence,
            hints,
            mistake,
        },
    })
}

/// Counts an access in its buffer's traffic and the masked-waste window.
fn count(m: &mut Mine, window: &mut [u64], masked_waste: &mut [u64], buf: Buf, a: &Access) {
    match a.op {
        Op::Read => {
            m.reads += 1;
            window[buf as usize] += 1;
        }
        Op::Write => {
            m.writes += 1;
            if a.value <= MASKED {
                for (w, n) in masked_waste.iter_mut().zip(window.iter()) {
                    *w += n;
                }
            }
            window.fill(0);
        }
    }
}

/// The learner's read `y`, as they made it.
fn touch_mine(r: &Reference, names: &[String], y: &BlockRead, stray: bool) -> Touch {
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
fn expected(r: &Reference, buf: Buf, off: usize, y: &BlockRead) -> String {
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
fn listed(all: Vec<Touch>) -> (Vec<Touch>, usize) {
    let more = all.len().saturating_sub(LISTED);
    (all.into_iter().take(LISTED).collect(), more)
}

/// The learner's values over the reference's, when that is one number (to 1e-3) over at least
/// two cells, and not 1.
fn constant_ratio(ratios: &[f32]) -> Option<f32> {
    let (&first, rest) = ratios.split_first()?;
    if rest.is_empty() || !first.is_finite() || first == 0.0 {
        return None;
    }
    let same = rest.iter().all(|&x| ((x - first) / first).abs() < 1e-3);
    (same && (first - 1.0).abs() > 1e-3).then_some(first)
}

/// A ratio of scores that is a known wrong scale: `1/√C where 1/√D is meant`.
fn scale_meaning(r: &Reference, buf: Buf, factor: f32) -> Option<String> {
    // the scale multiplies the scores, and so the gradients of q and k
    if !matches!(buf, Buf::Scores | Buf::DQ | Buf::DK) {
        return None;
    }
    let sh = r.run.shape;
    let right = Scale::of(r.variant, sh, 0);
    let meant = format!("1/√{}", right.symbol);
    let inv_sqrt = |n: usize| 1.0 / (n.max(1) as f32).sqrt();
    // the scales a kernel is written with by mistake, in the order they are tried
    let candidates = [
        ("1/√C".to_string(), inv_sqrt(sh.c)),
        ("1/√D".to_string(), inv_sqrt(sh.d())),
        ("1/√T".to_string(), inv_sqrt(sh.t)),
        ("1/√H".to_string(), inv_sqrt(sh.h)),
        ("1/D".to_string(), 1.0 / sh.d().max(1) as f32),
        ("1/C".to_string(), 1.0 / sh.c.max(1) as f32),
        (tr!("no scale at all").to_string(), 1.0),
    ];
    let scale = factor * right.value;
    candidates
        .into_iter()
        .find(|(name, s)| *name != meant && ((scale - s) / s).abs() < 1e-3)
        .map(|(name, _)| tr!("{name} where {meant} is meant", name, meant).to_string())
}

/// A hidden cell the divergent cell is computed from (a score at a masked pair) that the
/// learner left unmasked: `scores[b0 h0 i0 j1] is hidden (j > i), but yours is 0 (mine.py:30)`.
fn unmasked_read(
    r: &Reference,
    mine: &[Option<Mine>],
    d: &Divergence,
    source_of: &dyn Fn(u32, u32, u64) -> Source,
) -> Option<String> {
    r.reads_for(d.cell.buffer, d.cell.offset).into_iter().find_map(|n| {
        let (_, buf, off, value) = r.cell_event(n)?;
        let c = r.get(buf)?;
        let m = mine.get(buf as usize)?.as_ref()?;
        if !c.unneeded.get(off).copied().unwrap_or(false) || m.written_at[off] == 0 {
            return None;
        }
        // a masked score must stay at or below −1e9, a hidden probability at 0
        let masked = if value <= MASKED { m.value[off] <= MASKED } else { m.value[off] == value };
        if masked {
            return None;
        }
        let (file, line) = m.source[off];
        let at = source_of(file, line, m.written_at[off]);
        Some(
            tr!(
                "{cell} is read though it is {hidden}: yours is {mine}, written at {file}:{line}, where the reference's is {value}, which gives it no weight",
                cell = r.cell_label(buf, off),
                hidden = r.hidden(buf, off).unwrap_or_default(),
                mine = crate::format::num(m.value[off]),
                file = at.file,
                line = at.line,
                value = crate::format::num(value)
            )
            .to_string(),
        )
    })
}

/// "your k reads are the same for every h": a coordinate the reference's reads follow that the
/// learner's never change, while the cell written runs over it.
fn ignored_loop_variables(r: &Reference, blocks: &Blocks) -> Vec<String> {
    let mut keys: Vec<&(Buf, Buf, usize)> = blocks.ties.keys().collect();
    keys.sort();
    let mut out = Vec::new();
    for key in keys {
        let (wb, rb, t) = *key;
        let Some(u) = blocks.ties.get(key) else { continue };
        let (Some(ties), Some(wc), Some(rc)) = (r.ties(wb, rb), r.get(wb), r.get(rb)) else {
            continue;
        };
        let Some(tie) = ties.get(t) else { continue };
        if u.violated && u.x_values.len() >= 2 && u.y_values.len() == 1 {
            let x = wc.dims()[tie.write_dim].0;
            let y = rc.dims()[tie.read_dim].0;
            let text = tr!(
                "your {read} reads are the same for every {x} of {written} ({y} = {v} each time)",
                read = rb.name(),
                x,
                written = wb.name(),
                y,
                v = u.y_values[0]
            )
            .to_string();
            if !out.contains(&text) {
                out.push(text);
            }
        }
    }
    out
}

/// A grade, before the learner's side of its divergence is read (a second pass over the trace,
/// [`Graded::with_mine_reads`]).
#[derive(Debug)]
pub struct Graded {
    pub grade: Grade,
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
        let mut window: Vec<Touch> = Vec::new();
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
                        after_write = false;
                    }
                    if !window
                        .iter()
                        .any(|t| t.buffer == touch.buffer && t.offset == touch.offset)
                    {
                        window.push(touch);
                    }
                }
                Op::Write => after_write = true,
            }
        }
        // a stray read first: it is why the cell is wrong
        window.sort_by_key(|t| !t.stray);
        let (reads, more) = listed(window);
        d.mine_reads = reads;
        d.mine_more = more;
        Ok(self.grade)
    }
}

/// Adds one access to the findings of its kind at its source line.
fn note<R: BufRead>(
    findings: &mut Vec<Finding>,
    kind: Kind,
    a: &Access,
    name: &str,
    size: Option<usize>,
    holds: Option<String>,
    reader: &Reader<R>,
) {
    let file = reader.files().get(a.file as usize).cloned().unwrap_or_default();
    if let Some(f) = findings
        .iter_mut()
        .find(|f| f.kind == kind && f.buffer == name && f.at.line == a.line && f.at.file == file)
    {
        f.count += 1;
        return;
    }
    findings.push(Finding {
        kind,
        error: kind.is_error(),
        buffer: name.to_string(),
        op: a.op.name(),
        offset: a.offset,
        size,
        cell: None,
        holds,
        at: Source {
            file,
            line: a.line,
            trace_line: a.at,
        },
        count: 1,
    });
}

/// (reads, writes) per [`Buf`] of the reference, every layer.
fn counts(r: &Reference) -> Vec<(u64, u64)> {
    let mut c = vec![(0u64, 0u64); Buf::ALL.len()];
    for l in 0..r.layers {
        let Some(trace) = r.layer_run(l).and_then(|run| run.trace.as_ref()) else {
            continue;
        };
        for e in &trace.events {
            match e.op {
                Op::Read => c[e.buf as usize].0 += 1,
                Op::Write => c[e.buf as usize].1 += 1,
            }
        }
    }
    c
}

/// Flash's global reads and writes per buffer for the same pass, for attention that flash
/// computes too (multi-head, no dropout, no decoding); `None` for a buffer flash has not. Only
/// the attention core differs between the two, so flash's counts are the reference's with the
/// core's closed-form counts (`traffic::closed_form`, held to counted traces by its tests)
/// swapped for flash's: no second run. Every layer counts.
fn flash_traffic(r: &Reference, scenario: &Scenario, reference: &[(u64, u64)]) -> Option<Vec<Option<(u64, u64)>>> {
    if !matches!(r.variant, Variant::Mha | Variant::Flash) || scenario.decode || scenario.dropout.is_some() {
        return None;
    }
    let plan = scenario.plan();
    let layers = r.layers as u64;
    let core = |v: Variant| {
        let mut c = vec![(0u64, 0u64); Buf::ALL.len()];
        for b in traffic::closed_form(&plan, v, r.pass).buffers {
            c[b.buf as usize] = (b.reads * layers, b.writes * layers);
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
    let plain = matches!(variant, Variant::Baseline | Variant::Mha) && !scenario.decode;
    match m {
        Mistake::OverwriteKvGrad => {
            variant == Variant::Gqa && pass == Pass::Backward && scenario.shape.h_kv < scenario.shape.h
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
    let input = scenario.reseeded(r.input);
    let layers: Vec<usize> = {
        let mut l: Vec<usize> = wrong
            .iter()
            .map(|(_, c)| c.offset / r.get(c.buffer).map_or(1, |c| c.per_layer().max(1)))
            .collect();
        l.sort_unstable();
        l.dedup();
        l
    };
    Mistake::ALL
        .into_iter()
        .filter(|&m| applies(m, scenario, r.variant, r.pass))
        .find(|&m| {
            let passes = match r.pass {
                Pass::Forward => Passes::FORWARD,
                Pass::Backward => Passes::BOTH,
            };
            let runs: Vec<(usize, engine::Run)> = layers
                .iter()
                .map(|&l| {
                    let inputs = input.layer(l).inputs().with_mistakes(Mistakes::of(&[m]));
                    (l, engine::run(&inputs, r.variant, passes, false))
                })
                .collect();
            wrong.iter().all(|(_, cell)| {
                let Some(Some(m)) = mine.get(cell.buffer as usize) else {
                    return false;
                };
                let per = r.get(cell.buffer).map_or(1, |c| c.per_layer().max(1));
                let Some((_, run)) = runs.iter().find(|(l, _)| *l == cell.offset / per) else {
                    return false;
                };
                let written = m.written_at[cell.offset] != 0;
                if !run.registry.has(cell.buffer) {
                    // the mistaken kernel has no such buffer (no output projection: no `out`)
                    return !written;
                }
                let Some(&theirs) = run.tensors.get(cell.buffer).get(cell.offset % per) else {
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
