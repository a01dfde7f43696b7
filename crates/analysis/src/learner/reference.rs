//! One pass of the reference run, as a learner's kernel must reproduce it: which buffers the
//! pass reads before writing them (what the learner is given), which cells it writes and with
//! what final values (what the learner is graded on), and which cells it accumulates into.
//!
//! All of it is read from the reference's own event log and the registry, so it holds for
//! every variant and option without a table per variant: a buffer is an input of the pass when
//! some cell of it is read before the pass writes it (the backward pass's `probs`, and the
//! zero-initialised gradients it adds into), a result when the pass writes it and never reads
//! it after its last write (`out`, `d_x`, …).

use attn_trace_core::engine::{self, Registry, Run};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::tensor::{Level, Spec};
use attn_trace_core::trace::{Buf, Op, Pass, Trace};
use attn_trace_i18n::tr;

/// No event.
pub const NONE: u32 = u32::MAX;

/// What one pass does to one global buffer of the reference run.
#[derive(Clone, Debug)]
pub struct Cells {
    pub buf: Buf,
    pub spec: Spec,
    /// Contents when the pass starts.
    pub start: Vec<f32>,
    /// Contents when the pass ends.
    pub end: Vec<f32>,
    /// Some cell is read before the pass writes it: the learner is given this buffer.
    pub input: bool,
    /// Per cell, the pass's last write of it ([`NONE`] when the pass never writes it).
    pub last_write: Vec<u32>,
    /// Per cell, the pass reads it somewhere.
    pub read: Vec<bool>,
    /// Per cell, the pass writes it more than once with a read of it in between: an
    /// accumulation, whose earlier writes a learner must not lose.
    pub accumulated: Vec<bool>,
    /// Per cell, the pass writes it and loses a write before any read (a masked score written
    /// and then overwritten): such overwrites are the algorithm's, not a learner's mistake.
    pub overwritten: Vec<bool>,
    /// The pass writes the buffer and never reads it after its last write.
    pub result: bool,
}

impl Cells {
    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// The pass writes some cell of this buffer.
    pub fn written(&self) -> bool {
        self.last_write.iter().any(|&w| w != NONE)
    }
}

/// One pass of the reference run on one input.
#[derive(Debug)]
pub struct Reference {
    pub variant: Variant,
    pub pass: Pass,
    /// Which input: 0 the scenario's own values, `k > 0` [`Scenario::reseeded`]`(k)`.
    pub input: u64,
    /// The run, traced for this pass only.
    pub run: Run,
    /// Per [`Buf`], the pass's use of each global buffer of the run.
    pub cells: Vec<Option<Cells>>,
}

impl Reference {
    /// The reference `variant` on input `k` of `scenario`, tracing `pass` only (a backward
    /// pass's forward runs untraced, and its results are the trace's starting contents).
    pub fn new(scenario: &Scenario, variant: Variant, pass: Pass, input: u64) -> Result<Reference, String> {
        let recorded = match pass {
            Pass::Forward => scenario.passes.forward,
            Pass::Backward => scenario.passes.backward,
        };
        if !recorded {
            return Err(tr!(
                "the scenario does not run the {pass} pass; add \"{pass}\" to [run].passes",
                pass = pass.name()
            ));
        }
        if !scenario.variants.contains(&variant) {
            return Err(tr!(
                "the scenario does not run the {variant} variant ([run].variants)",
                variant = variant.name()
            ));
        }
        let inputs = scenario.reseeded(input).inputs();
        let run = engine::run_recording(&inputs, variant, pass);
        let Some(trace) = &run.trace else {
            return Err(tr!("the reference run recorded nothing").into());
        };
        let cells = summarise(trace, &run.registry, &run);
        Ok(Reference {
            variant,
            pass,
            input,
            cells,
            run,
        })
    }

    pub fn trace(&self) -> &Trace {
        #[allow(clippy::expect_used, reason = "Reference::new only keeps traced runs")]
        self.run.trace.as_ref().expect("a traced run")
    }

    pub fn registry(&self) -> &Registry {
        &self.run.registry
    }

    pub fn get(&self, buf: Buf) -> Option<&Cells> {
        self.cells.get(buf as usize).and_then(Option::as_ref)
    }

    /// The global buffers of the run, in [`Buf`] order.
    pub fn iter(&self) -> impl Iterator<Item = &Cells> {
        self.cells.iter().flatten()
    }

    /// The buffers the learner is given, in [`Buf`] order.
    pub fn inputs(&self) -> impl Iterator<Item = &Cells> {
        self.iter().filter(|c| c.input)
    }

    /// The buffers the pass ends with: what a learner's kernel must write.
    pub fn results(&self) -> impl Iterator<Item = &Cells> {
        self.iter().filter(|c| c.result)
    }
}

/// Per global buffer of the run, what the trace's pass does to each cell.
fn summarise(trace: &Trace, registry: &Registry, run: &Run) -> Vec<Option<Cells>> {
    let mut cells: Vec<Option<Cells>> = Buf::ALL
        .iter()
        .map(|&b| {
            let spec = registry.get(b).filter(|s| s.level == Level::Global)?;
            let start = trace
                .buffer(b)
                .map_or_else(|| vec![0.0; spec.len()], |i| i.initial.clone());
            let n = start.len();
            Some(Cells {
                buf: b,
                spec: spec.clone(),
                end: run.tensors.get(b).to_vec(),
                start,
                input: false,
                last_write: vec![NONE; n],
                read: vec![false; n],
                accumulated: vec![false; n],
                overwritten: vec![false; n],
                result: false,
            })
        })
        .collect();
    // per cell: read since its last write (for accumulations and lost writes)
    let mut read_since: Vec<Vec<bool>> = cells
        .iter()
        .map(|c| c.as_ref().map_or_else(Vec::new, |c| vec![false; c.len()]))
        .collect();
    // per buffer, the last event reading it
    let mut last_read = vec![NONE; Buf::ALL.len()];
    for (n, e) in trace.events.iter().enumerate() {
        let b = e.buf as usize;
        let Some(c) = cells[b].as_mut() else { continue };
        let off = e.offset as usize;
        match e.op {
            Op::Read => {
                if c.last_write[off] == NONE {
                    c.input = true;
                }
                c.read[off] = true;
                read_since[b][off] = true;
                last_read[b] = n as u32;
            }
            Op::Write => {
                if c.last_write[off] != NONE {
                    if read_since[b][off] {
                        c.accumulated[off] = true;
                    } else {
                        c.overwritten[off] = true;
                    }
                }
                c.last_write[off] = n as u32;
                read_since[b][off] = false;
            }
        }
    }
    for c in cells.iter_mut().flatten() {
        let last = c.last_write.iter().filter(|&&w| w != NONE).max().copied();
        c.result = last.is_some_and(|w| last_read[c.buf as usize] == NONE || last_read[c.buf as usize] < w);
    }
    cells
}
