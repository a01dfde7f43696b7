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
mod read;
mod report;
mod results;
mod state;

pub use divergence::LISTED;
pub use mistake::applies;
pub use report::{
    BufferResult, Cell, Divergence, Finding, Grade, Kind, Named, Ratio, SITES, Source, Stray, Touch, Traffic,
};

use crate::learner::bind::Binder;
use crate::learner::import::{ImportError, Reader};
use crate::learner::reference::Reference;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::MASKED;
use counts::traffic;
use divergence::first_divergence;
use hints::hints;
use mistake::matching_mistake;
use read::Learner;
use results::results;
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
    let mut learner = Learner::read(r, reader, binder)?;
    let (files, names) = (reader.files(), reader.buffers());
    learner.count_findings(r, files);
    // 1. results
    let results = results(r, &learner, names);
    // 2. traffic, global buffers only
    let traffic = traffic(r, scenario, &learner);
    // 3. the first divergence, its hints, and the gallery mistake the learner's values match
    let divergence = first_divergence(r, &results, &learner, files);
    let hints = hints(r, &learner, &results, divergence.as_ref(), files);
    let mistake = matching_mistake(r, scenario, learner.all_mine(), &results.wrong);
    Ok(Graded {
        grade: Grade {
            variant: r.variant,
            pass: r.pass,
            input: r.input,
            events: learner.events,
            results: results.buffers,
            findings: learner.findings.list,
            traffic,
            divergence,
            hints,
            mistake,
        },
    })
}
