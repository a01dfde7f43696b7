//! The integration tests, as modules of one test binary: compiled and linked once instead of
//! once per file. Each file is what a `tests/*.rs` target used to be; run one of them with
//! `cargo test --release --test it MODULE::` (e.g. `cargo test --release --test it engine_gradients::`).
//! Snapshots live in `snapshots/` (named `it__MODULE__NAME.snap`); the helpers the files share
//! live in `support/`, apart from the tests.
//!
//! They use the crates' public APIs and the binary; the app (the TUI) only through keys in and
//! the screen out. The app's own tests, which look inside its screens and widgets, are unit
//! tests of the app crate (`src/tests/`).

// tests state their expectations by panicking
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

mod cache;
mod cli_explain;
// libc: FIFOs, device nodes and signals
#[cfg(unix)]
#[allow(unsafe_code)]
mod cli_hostile;
// the property test of issue 34: setrlimit in the child
#[cfg(unix)]
#[allow(unsafe_code)]
mod cli_hostile_props;
// libc: a FIFO, signals
#[cfg(unix)]
#[allow(unsafe_code)]
mod cli_hostile_budgets;
// issue 54: setrlimit, setuid, FIFOs and signals in the children
#[cfg(unix)]
#[allow(unsafe_code)]
mod cli_hostile_grader;
mod cli_invalid_scenarios;
// a pseudo-terminal for standard error
mod cli_io;
#[cfg(unix)]
mod cli_progress;
mod cli_run_trace;
mod cli_train;
mod docs;
mod engine_decode;
mod engine_decode_cache;
mod engine_flash;
mod engine_gqa;
mod engine_gradients;
mod engine_mla;
mod engine_rope;
mod engine_sink;
mod engine_standard;
mod engine_torch;
mod engine_trace;
mod engine_window;
mod engine_worked_examples;
mod exports;
mod flash_untraced;
mod gradcheck;
mod grade;
mod grade_bind;
mod i18n;
mod kernels_untraced;
mod model_checkpoint;
mod model_gpt;
mod model_ops;
mod recorders;
mod scenario_docs;
mod scenario_roundtrip;
mod scenario_structure;
mod screenshots;
mod simd_levels;
mod traffic;
#[cfg(unix)]
#[allow(unsafe_code)] // libc: a FIFO and a signal
mod tui_hostile;
// the real binary in a pseudo-terminal (openpty)
#[cfg(unix)]
mod tui_pty;

// What were the lower crates' unit tests (`#[cfg(test)] mod tests`), one module per source file,
// grouped by top-level module, through the crates' public APIs: here they build with the other
// tests instead of as a cfg(test) compile of each crate (`test = false` in crates/*/Cargo.toml).
mod unit_analysis;
mod unit_engine;
mod unit_files;
mod unit_i18n;
mod unit_kernels;
mod unit_model;
mod unit_scenario;
mod unit_tensor;
mod unit_trace;
