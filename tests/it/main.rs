//! The integration tests, as modules of one test binary: compiled and linked once instead of
//! once per file. Each file is what a `tests/*.rs` target used to be; run one of them with
//! `cargo test --release --test it MODULE::` (e.g. `cargo test --release --test it engine_gradients::`).
//! Snapshots live in `snapshots/` (named `it__MODULE__NAME.snap`); the helpers the files share
//! live in `support/`, apart from the tests.

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
mod display_oracle;
mod docs;
mod docs_keys;
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
// mkfifo for the pickers' folders
#[cfg(unix)]
#[allow(unsafe_code)]
mod reader_picker_props;
mod recorders;
mod scenario_docs;
mod scenario_roundtrip;
mod scenario_structure;
mod screenshots;
mod simd_levels;
mod traffic;
mod tui_agrees_with_log;
mod tui_app;
mod tui_compare_flash;
mod tui_gradcheck;
#[cfg(unix)]
#[allow(unsafe_code)] // libc: a FIFO and a signal
mod tui_hostile;
mod tui_lessons;
mod tui_mine;
mod tui_mistakes;
mod tui_props;
mod tui_quiz;
mod tui_readable;
// the real binary in a pseudo-terminal (openpty)
#[cfg(unix)]
mod tui_pty;
mod tui_snapshots;
mod tui_timeline;
mod tui_traffic;
mod tui_train;
mod tui_wording;

// What were the library's unit tests (`#[cfg(test)] mod tests` in src/), one module per source
// file, grouped by the library's top-level module: here they build with the other tests instead
// of as a second, cfg(test) compile of the whole library (see `[lib] test = false` in Cargo.toml).
mod unit_analysis;
mod unit_engine;
mod unit_files;
mod unit_i18n;
mod unit_kernels;
mod unit_model;
mod unit_scenario;
mod unit_tensor;
mod unit_trace;
mod unit_tui;
