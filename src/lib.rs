//! attn-trace's terminal UI: the ratatui screens and widgets, which lay out and draw what the
//! analysis layer (`attn-trace-analysis`) finds in the log of a run of the core
//! (`attn-trace-core`); the command line (`src/cli/`) is in the binary.

pub mod tui;
