//! Runs one attention variant on concrete inputs, traced or not, and says in advance how many
//! events that will record.
//!
//! - [`plan`]: what a run will do without its data, and its closed-form event counts;
//! - [`count`]: the arithmetic of those counts, which cannot wrap;
//! - [`registry`]: every buffer's role, shape and named layout, declared once;
//! - [`tensors`]: the run's buffers, stored keyed by [`Buf`];
//! - [`inputs`]: everything a run needs, and where it starts;
//! - [`passes`]: the forward and backward passes in order, each op's forward beside its backward;
//! - this file: [`run`] and its kinds (watched, into a recorder, one pass recorded).
#![allow(non_snake_case)]

pub mod count;
pub mod inputs;
pub mod passes;
pub mod plan;
pub mod registry;
pub mod tensors;

pub use crate::kernels::kernel_shape;
pub use count::Count;
pub use inputs::{Dropout, Inputs, Start};
pub use passes::{backward, forward};
pub use plan::{Passes, PhaseCount, Plan, StartKind, TileSums, estimate_events, phase_counts};
pub use registry::Registry;
pub use tensors::Tensors;

use crate::kernels::attention_flash::{BackwardTiles, FittedTiles, ForwardTiles, Tiles};
use crate::kernels::attention_mistakes::{self, Mistake, Mistakes};
use crate::kernels::attention_mla::{self, Latent};
use crate::kernels::decode::CacheSpec;
use crate::kernels::rope::{self, LatentKey, Rope};
use crate::kernels::softmax::Sinks;
use crate::kernels::{Choices, Mask, Refusal, Variant, attention_gqa, attention_mha, decode, dropout, linear};
use crate::tensor::{Shape, Tensor};
use crate::trace::{Buf, Logger, NoRecord, Pass, Phase, Progress, Recorder, Trace};
use crate::untraced::dispatch;
use std::borrow::Cow;

/// The result of running one variant.
#[derive(Debug)]
pub struct Run {
    pub variant: Variant,
    pub shape: Shape,
    /// The mistakes this run made (empty for the correct implementation).
    pub mistakes: Mistakes,
    /// Attention dropout, when the run applies it.
    pub dropout: Option<Dropout>,
    /// Rotary position embeddings, when the run applies them.
    pub rope: Option<Rope>,
    /// The run generated token by token from a key/value cache.
    pub decode: bool,
    /// The run's buffers: which exist, their shapes and layouts.
    pub registry: Registry,
    pub tensors: Tensors,
    /// The event log, for traced runs.
    pub trace: Option<Trace>,
}

impl Run {
    /// Number of recorded events (0 for an untraced run).
    pub fn events(&self) -> usize {
        self.trace.as_ref().map_or(0, Trace::len)
    }

    /// Every present buffer with its reported shape, in [`Buf`] order.
    pub fn named_tensors(&self) -> Vec<(Buf, Tensor)> {
        self.registry
            .iter()
            .map(|(b, spec)| (b, Tensor::new(spec.shape.clone(), self.tensors.get(b).to_vec())))
            .collect()
    }
}

/// Runs `variant` on `inputs`. A traced run records the requested passes; a mistaken run
/// makes (and records) the forward pass only.
pub fn run(inputs: &Inputs, variant: Variant, passes: Passes, traced: bool) -> Run {
    run_watched(inputs, variant, passes, traced, None)
}

/// [`run`], reporting a traced run's progress to `progress` as it records.
pub fn run_watched(inputs: &Inputs, variant: Variant, passes: Passes, traced: bool, progress: Option<Progress>) -> Run {
    let record = if traced {
        passes
    } else {
        Passes {
            forward: false,
            backward: false,
        }
    };
    run_with(inputs, variant, passes, record, progress, true)
}

/// Runs `variant` on `inputs`, making the passes of `passes` that the plan allows, with the
/// recorder `make(registry)` for each pass it makes and keeping no log: for a reader of the
/// accesses as they happen (`trace --format din`). Returns the recorder.
pub fn run_into<R: Recorder>(
    inputs: &Inputs,
    variant: Variant,
    passes: Passes,
    make: impl FnOnce(&Registry) -> R,
) -> R {
    let inputs = &*inputs.for_variant(variant);
    let plan = inputs.plan();
    let passes = plan.possible(passes);
    let registry = Registry::new(&plan, variant, passes);
    let mut t = Tensors::new(inputs, &registry);
    let mut rec = make(&registry);
    if passes.forward {
        forward(&mut rec, &mut t, variant, inputs);
    } else {
        forward(&mut NoRecord, &mut t, variant, inputs);
    }
    if passes.backward {
        backward(&mut rec, &mut t, variant, inputs);
    }
    rec
}

/// A traced [`run`] whose trace has no cell index (`Trace::index` is empty): for a reader of
/// the log in order, such as an export, which never asks who last wrote a cell.
pub fn run_unindexed(inputs: &Inputs, variant: Variant, passes: Passes) -> Run {
    run_with(inputs, variant, passes, passes, None, false)
}

/// Runs the forward pass of `variant` on `inputs` and, for [`Pass::Backward`], the backward
/// pass, recording `pass` only: the trace begins at that pass's first event, and its buffers'
/// starting contents are what the passes before it left (what `grade` gives a learner who
/// writes that pass alone). A mistaken run makes the passes it can.
pub fn run_recording(inputs: &Inputs, variant: Variant, pass: Pass) -> Run {
    let (make, record) = match pass {
        Pass::Forward => (Passes::FORWARD, Passes::FORWARD),
        Pass::Backward => (
            Passes::BOTH,
            Passes {
                forward: false,
                backward: true,
            },
        ),
    };
    run_with(inputs, variant, make, record, None, true)
}

/// Makes the passes of `make` that the plan allows, recording those of `record` (a trace
/// exactly when it records one).
fn run_with(
    inputs: &Inputs,
    variant: Variant,
    make: Passes,
    record: Passes,
    progress: Option<Progress>,
    index: bool,
) -> Run {
    let inputs = &*inputs.for_variant(variant);
    let plan = inputs.plan();
    let passes = plan.possible(make);
    let registry = Registry::new(&plan, variant, passes);
    let mut t = Tensors::new(inputs, &registry);
    let traced = (record.forward && passes.forward) || (record.backward && passes.backward);
    let trace = if traced {
        let recorded = Passes {
            forward: record.forward && passes.forward,
            backward: record.backward && passes.backward,
        };
        // the budget was checked on the scenario: an estimate beyond memory only grows as it goes
        let mut log = Logger::with_capacity(estimate_events(&plan, variant, recorded).to_usize().unwrap_or(0));
        if let Some(p) = progress {
            log = log.watched(p);
        }
        let mut initial = None;
        if recorded.forward {
            initial = Some(t.snapshot(&registry));
            forward(&mut log, &mut t, variant, inputs);
        } else {
            forward(&mut NoRecord, &mut t, variant, inputs);
        }
        if passes.backward {
            if recorded.backward {
                if initial.is_none() {
                    initial = Some(t.snapshot(&registry));
                }
                backward(&mut log, &mut t, variant, inputs);
            } else {
                backward(&mut NoRecord, &mut t, variant, inputs);
            }
        }
        Some(log.finish_indexed(initial.unwrap_or_default(), index))
    } else {
        forward(&mut NoRecord, &mut t, variant, inputs);
        if passes.backward {
            backward(&mut NoRecord, &mut t, variant, inputs);
        }
        None
    };
    Run {
        variant,
        shape: inputs.shape,
        mistakes: inputs.mistakes,
        dropout: inputs.dropout.filter(|_| registry.has(Buf::DropMask)),
        rope: inputs.rope,
        decode: inputs.decode,
        registry,
        tensors: t,
        trace,
    }
}

/// The first event at which two traces differ (in buffer, offset, op or value), or the shorter
/// one's length when one is a prefix of the other; `None` when they are identical.
pub fn first_divergence(a: &Trace, b: &Trace) -> Option<usize> {
    let same = |x: &crate::trace::Event, y: &crate::trace::Event| {
        (x.buf, x.offset, x.op, x.value.to_bits()) == (y.buf, y.offset, y.op, y.value.to_bits())
    };
    match a.events.iter().zip(&b.events).position(|(x, y)| !same(x, y)) {
        Some(n) => Some(n),
        None if a.len() != b.len() => Some(a.len().min(b.len())),
        None => None,
    }
}
