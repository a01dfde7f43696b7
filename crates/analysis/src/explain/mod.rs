//! The walkthrough of one attention score, the way a teacher would write it on a whiteboard:
//! the offsets with their numbers substituted, each product of the dot product, the scale, the
//! mask decision and the write; then the softmax of that row and the weighted sum; and, for the
//! backward pass, how the element's gradient reaches `d_q` and `d_k`.
//!
//! Every number comes from the recorded trace (the events, the cell index, the derived offsets
//! of each loop iteration): nothing here runs the math again. The only arithmetic is the kind a
//! reader does with the shown numbers, such as adding up the listed products.
//!
//! This file holds the entry points and the types they return; `plain.rs` walks through the
//! kernels that store their scores (baseline, mha, gqa, mla, decode, rope), its sections one file
//! each in `plain/` (the cache, the rotation, the score, the softmax, the weighted sum, each with
//! its backward; `plain/mla_decode.rs` the absorbed decode of mla from its latent cache),
//! `flash.rs` through flash's tiles, and `text.rs` holds the number and sentence helpers both use.
#![allow(non_snake_case)]

mod flash;
mod plain;
mod text;

pub use text::{elide, num, par};

use crate::Element;
use attn_trace_core::engine::{Inputs, Run, kernel_shape};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use std::fmt;

/// A titled list of text lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub title: String,
    pub lines: Vec<String>,
}

/// The whole explanation: a heading and its sections, in reading order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walkthrough {
    pub heading: String,
    pub sections: Vec<Section>,
}

impl fmt::Display for Walkthrough {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.heading)?;
        for s in &self.sections {
            writeln!(f)?;
            writeln!(f, "{}", s.title)?;
            for line in &s.lines {
                writeln!(f, "  {line}")?;
            }
        }
        Ok(())
    }
}

/// Why an element cannot be explained.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExplainError {
    NotTraced,
    PassNotRecorded(&'static str),
    OutOfRange {
        name: &'static str,
        value: usize,
        size: usize,
        dim: &'static str,
    },
    BaselineHead,
    Missing(String),
    NotYetDecoded {
        i: usize,
        j: usize,
    },
    /// A decode step under a sliding window never reads a key that slid out of it.
    SlidOut {
        i: usize,
        j: usize,
        w: usize,
    },
    /// A decode run generates token by token, forward only: it has no gradients to explain.
    DecodeForwardOnly,
}

impl fmt::Display for ExplainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&match self {
            ExplainError::NotTraced => tr!("the run was not traced; explain needs the event log").to_string(),
            ExplainError::PassNotRecorded(pass) => tr!(
                "the {pass} pass was not recorded; add \"{pass}\" to [run].passes in the scenario",
                pass
            ),
            ExplainError::OutOfRange { name, value, size, dim } => tr!(
                "{name}={value} is outside the shape: expected {name} in 0..{size} ({dim} = {size})",
                name,
                value,
                size,
                dim
            ),
            ExplainError::BaselineHead => tr!("the baseline has a single head: use h=0 (or leave h out)").to_string(),
            ExplainError::Missing(what) => tr!(
                "the trace has no {what}; it does not hold the events this explanation needs",
                what
            ),
            ExplainError::NotYetDecoded { i, j } => tr!(
                "a decode run has no score for j={j} > i={i}: at step {i} key {j} is not generated yet",
                i,
                j
            ),
            ExplainError::SlidOut { i, j, w } => tr!(
                "a decode step under a sliding window has no score for j={j} at i={i}: key {j} slid out of the window of {w} keys (j ≤ i − W = {lo}) and is not a sink, so step {i} never reads it, and its slot holds a later key",
                i,
                j,
                w,
                lo = i.saturating_sub(*w)
            ),
            ExplainError::DecodeForwardOnly => tr!(
                "a decode run is forward only and has no backward pass to explain; remove [run].decode to see the gradients of the full-sequence run"
            )
            .to_string(),
        })
    }
}

impl std::error::Error for ExplainError {}

type Result<T> = std::result::Result<T, ExplainError>;

/// Explains element `at` of `run` in `pass`. `mask` is the mask the run used.
pub fn explain(run: &Run, mask: Mask, at: Element, pass: Pass) -> Result<Walkthrough> {
    let trace = run.trace.as_ref().ok_or(ExplainError::NotTraced)?;
    let ksh = kernel_shape(run.shape, run.variant);
    check_range(run.variant, ksh, at)?;
    if run.variant.desc().tiled {
        return flash::explain(trace, run.shape, &mask, at, pass);
    }
    // validation refuses "backward" in a decode run's passes, so say why there is none
    if run.decode && pass == Pass::Backward {
        return Err(ExplainError::DecodeForwardOnly);
    }
    plain::explain(run, trace, ksh, mask, at, pass)
}

/// Backward 4: the element's gradients, `d_probs` and `d_scores` at its offset, checked by the
/// central finite difference of `L = Σ out ⊙ d_out` (see [`crate::gradcheck`]): two lines each,
/// the numbers and what was perturbed. Flash, which stores neither, has its `dS` of the pair
/// checked, `S` being perturbed in an MHA forward pass of the same inputs (and needs the trace).
/// `inputs` are the run's.
pub fn gradient_check(run: &Run, inputs: &Inputs, at: Element) -> Result<Section> {
    if run.variant.desc().tiled {
        return flash::gradient_check(run, inputs, at);
    }
    plain::gradient_check(run, inputs, at)
}

fn missing(what: &str) -> ExplainError {
    ExplainError::Missing(what.to_string())
}

fn check_range(variant: Variant, ksh: Shape, at: Element) -> Result<()> {
    let out = |name, value, size, dim| ExplainError::OutOfRange { name, value, size, dim };
    if at.b >= ksh.b {
        return Err(out("b", at.b, ksh.b, "B"));
    }
    if !variant.has_heads() && at.h != 0 {
        return Err(ExplainError::BaselineHead);
    }
    if at.h >= ksh.h {
        return Err(out("h", at.h, ksh.h, "H"));
    }
    // queries run over S (T in self-attention), keys over T
    if at.i >= ksh.s {
        return Err(out("i", at.i, ksh.s, if ksh.is_cross() { "S" } else { "T" }));
    }
    if at.j >= ksh.t {
        return Err(out("j", at.j, ksh.t, "T"));
    }
    Ok(())
}
