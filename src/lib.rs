//! attn-trace's terminal UI: the ratatui screens and widgets, which lay out and draw what the
//! analysis layer (`attn-trace-analysis`) finds in the log of a run of the core
//! (`attn-trace-core`); the command line (`src/cli/`) is in the binary.

pub mod tui;

#[cfg(test)]
mod tests;
// the helpers shared with the integration tests name the crate as they do
#[cfg(test)]
extern crate self as attn_trace;
