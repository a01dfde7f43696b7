//! Writing a trace's events out, fast: JSON Lines and CSV (every field of every event), and the
//! address traces of cache simulators, Dinero's `din` and Valgrind lackey's. `attn-trace trace`
//! writes the header line and picks the output; this module writes the events.
//!
//! Speed: the events are cut into chunks that the cores format in parallel, each into a buffer of
//! its own, written out in order. Within a chunk nothing allocates per event: names are copied
//! from tables made once, numbers are written with `itoa` and `ryu`, and the loop variables of
//! consecutive events in the same loop iteration are rendered once. The bytes are exactly those
//! of the plain writer this replaced (`{:?}` for values, the `csv` crate's quoting), which a test
//! holds them to.

mod address;
mod events;
mod numbers;

pub use address::AddressWriter;
pub use numbers::push_debug_f32;

use events::Tables;

use attn_trace_core::kernels::Variant;
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::{Buf, Pass, Phase, Trace};
use std::io::Write;

/// The CSV columns, also the JSON keys, in order.
pub const FIELDS: [&str; 14] = [
    "seq", "variant", "pass", "phase", "op", "buffer", "level", "offset", "index", "value", "vars", "derived", "file",
    "line",
];

/// What an export writes per event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values ([`FIELDS`]).
    Csv,
    /// Dinero's format: `0 ADDR` for a read, `1 ADDR` for a write, hexadecimal.
    Din,
    /// Valgrind lackey's: ` L ADDR,4` for a load, ` S ADDR,4` for a store.
    Lackey,
}

/// Which events an export keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    pub pass: Option<Pass>,
    pub phase: Option<Phase>,
    pub buffer: Option<Buf>,
    pub level: Option<Level>,
}

impl Filter {
    /// Does the filter keep the events of `phase` (its pass and phase)?
    pub(crate) fn keeps_phase(&self, phase: Phase) -> bool {
        self.phase.is_none_or(|p| p == phase) && self.pass.is_none_or(|p| p == phase.pass())
    }
}

/// Events per chunk, and chunks formatted at once (by the cores in turn).
const CHUNK: usize = 1 << 14;
const BATCH: usize = 16;

/// Writes the events of `trace` (a run of `variant`) that pass `filter` to `w` in `format`;
/// calls `progress(events looked at, bytes written)` now and then; returns how many it wrote.
pub fn write_events(
    trace: &Trace,
    variant: Variant,
    filter: &Filter,
    format: Format,
    w: &mut dyn Write,
    mut progress: impl FnMut(u64, u64),
) -> std::io::Result<u64> {
    use rayon::prelude::*;
    if trace.phases.is_empty() {
        return Ok(0);
    }
    let tables = Tables::new(trace, variant, format);
    let mut written = 0u64;
    let mut bytes = 0u64;
    let len = trace.len();
    let mut start = 0;
    // the chunks' buffers, kept from batch to batch (fresh ones cost a page fault per 4 KiB)
    let mut buffers: Vec<(Vec<u8>, u64)> = (0..BATCH).map(|_| (Vec::new(), 0)).collect();
    while start < len {
        let end = (start + CHUNK * BATCH).min(len);
        buffers.par_iter_mut().enumerate().for_each(|(k, (out, n))| {
            out.clear();
            let s = (start + k * CHUNK).min(end);
            *n = tables.chunk(trace, filter, s, (s + CHUNK).min(end), out);
        });
        for (buf, n) in &buffers {
            w.write_all(buf)?;
            written += n;
            bytes += buf.len() as u64;
        }
        start = end;
        progress(start as u64, bytes);
    }
    Ok(written)
}

/// How many events of `trace` pass `filter` (counted), and about how many bytes they make in
/// `format` (from up to four chunks spread over the trace): what an export announces before it
/// starts.
pub fn estimate(trace: &Trace, variant: Variant, filter: &Filter, format: Format) -> (u64, u64) {
    if trace.phases.is_empty() {
        return (0, 0);
    }
    let count = count(trace, filter);
    let tables = Tables::new(trace, variant, format);
    let len = trace.len();
    let (mut n, mut bytes) = (0u64, 0u64);
    let mut out = Vec::new();
    for start in [0, len / 4, len / 2, 3 * len / 4] {
        out.clear();
        n += tables.chunk(trace, filter, start, (start + CHUNK).min(len), &mut out);
        bytes += out.len() as u64;
    }
    (count, (count * bytes).checked_div(n).unwrap_or(0))
}

/// How many events of `trace` pass `filter`.
pub fn count(trace: &Trace, filter: &Filter) -> u64 {
    let mut count = 0u64;
    for k in 0..trace.phases.len() {
        if !filter.keeps_phase(trace.phases[k].1) {
            continue;
        }
        count += trace.events[trace.span_range(k)]
            .iter()
            .filter(|e| {
                filter.buffer.is_none_or(|b| b == e.buf) && filter.level.is_none_or(|l| l == trace.level(e.buf))
            })
            .count() as u64;
    }
    count
}
