//! The learner's own kernel, beside ours.
//!
//! A learner who has stepped through the reference kernels writes their own (in Python, C, C++
//! or Rust), runs it on the tensors `attn-trace inputs` writes, records every read and write of
//! our buffers with one of the recorders (`recorders/`, or [`jsonl::JsonlRecorder`] in Rust) and
//! hands the trace to `attn-trace grade`. This module holds the three things both sides agree on:
//!
//! - [`reference::Reference`]: one pass of the reference run, and per buffer what that pass reads
//!   before writing it (the inputs), what it writes last (the results) and which cells it
//!   accumulates into;
//! - [`inputs`]: the inputs file, plain text that Python's standard library and C's `strtof`
//!   read without a library;
//! - [`import`]: the trace format (JSON Lines, the `trace` command's, with a versioned header),
//!   read line by line in bounded memory, every problem one line naming the trace's line;
//! - [`bind`]: how the learner's buffers, named and laid out as they like, lie over the
//!   reference's tensors (views with offsets and strides, declared in the header or a TOML
//!   file);
//! - [`check`]: what a trace's header must agree with (the scenario, its sizes, the flags), one
//!   function for `grade` and `tui --mine`.
//!
//! The grade itself is analysis and lives in [`crate::grade`].

use attn_trace_core::kernels::Variant;
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::Pass;

pub mod bind;
pub mod check;
pub mod import;
pub mod inputs;
pub mod jsonl;
pub mod reference;

/// The first word of an inputs file, and its version.
pub const INPUTS_MAGIC: &str = "attn-trace-inputs";
pub const INPUTS_VERSION: u32 = 1;

/// The `format` of a trace's header line, and its version.
pub const TRACE_FORMAT: &str = "attn-trace-trace";
pub const TRACE_VERSION: u32 = 1;

/// The sizes a run is recorded with, in [`import::DIMS`]' order, for `layers` layers: the
/// `dim` lines of an inputs file, the `dims` of a trace's header, the sizes a binding's
/// strides may name.
pub fn dims(sh: Shape, layers: usize) -> [(&'static str, usize); 8] {
    [
        ("B", sh.b),
        ("T", sh.t),
        ("S", sh.s),
        ("C", sh.c),
        ("H", sh.h),
        ("D", sh.d()),
        ("H_kv", sh.h_kv),
        ("L", layers),
    ]
}

/// A trace's header line, without its newline (docs/your_kernel.md): the format and its
/// version, the scenario, variant and pass (`null` where the trace does not say), which input,
/// and the sizes.
pub fn trace_header<N: AsRef<str>>(
    scenario: Option<&str>,
    variant: Option<Variant>,
    pass: Option<Pass>,
    input: u64,
    dims: &[(N, usize)],
) -> String {
    let string = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "null".into());
    let said = |s: Option<&str>| s.map_or_else(|| "null".to_string(), string);
    let dims: Vec<String> = dims
        .iter()
        .map(|(n, v)| format!("{}:{v}", string(n.as_ref())))
        .collect();
    format!(
        "{{\"format\":\"{TRACE_FORMAT}\",\"version\":{TRACE_VERSION},\"scenario\":{},\"variant\":{},\"pass\":{},\"input\":{input},\"dims\":{{{}}}}}",
        said(scenario),
        said(variant.map(Variant::name)),
        said(pass.map(Pass::name)),
        dims.join(",")
    )
}

/// Where `grade -- COMMAND` tells the learner's program to read its inputs…
pub const ENV_INPUTS: &str = "ATTN_TRACE_INPUTS";
/// …and to write its trace.
pub const ENV_OUT: &str = "ATTN_TRACE_OUT";
