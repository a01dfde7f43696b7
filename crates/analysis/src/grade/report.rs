//! The grade as the learner reads it (and `--json` writes it): results per buffer, the
//! findings about accesses, traffic, the first divergence, the gallery mistake matched.

use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Buf, Pass};
use serde::Serialize;

/// Where in the learner's sources something happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Source {
    pub file: String,
    pub line: u32,
    /// The trace's line of the access.
    pub trace_line: u64,
}

impl Source {
    /// Line `line` of the learner's file `file` (an id into `files`), at trace line
    /// `trace_line`.
    pub(super) fn of(files: &[String], file: u32, line: u32, trace_line: u64) -> Source {
        Source {
            file: files.get(file as usize).cloned().unwrap_or_default(),
            line,
            trace_line,
        }
    }

    /// No place: a finding counted over a whole buffer.
    pub(super) fn nowhere() -> Source {
        Source {
            file: String::new(),
            line: 0,
            trace_line: 0,
        }
    }
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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

/// Accesses of one kind at one source line: the first, and how many. At most [`SITES`] lines
/// are listed per kind and buffer; the accesses at any other line are one more finding,
/// `elsewhere`, at the first of them.
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
    /// The accesses of this kind and buffer at lines beyond the [`SITES`] listed: `at` is the
    /// first of them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub elsewhere: bool,
}

/// The most source lines listed per kind of finding and buffer: a trace with an error at every
/// line is a few findings and a count, not a finding per access.
pub const SITES: usize = 8;

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
