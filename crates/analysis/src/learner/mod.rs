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
//!   file).
//!
//! The grade itself is analysis and lives in [`crate::grade`].

pub mod bind;
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

/// Where `grade -- COMMAND` tells the learner's program to read its inputs…
pub const ENV_INPUTS: &str = "ATTN_TRACE_INPUTS";
/// …and to write its trace.
pub const ENV_OUT: &str = "ATTN_TRACE_OUT";
