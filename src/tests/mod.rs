//! The app's own tests: its screens, widgets and helpers, held to the event log, driven
//! headlessly (`update` with keys, `render` on a TestBackend) and read back as text. They are
//! unit tests of this crate because they look inside it (a screen's state, a widget's lines),
//! which is no API: the app crate makes public only what crosses a crate (the binary, the
//! benches, the example). The tests of the layers below and of the program as a user runs it
//! live in `tests/it/`, through the crates' public APIs and the binary.
//!
//! One module per subject; run one with `cargo test --release --lib tests::MODULE::`.

// tests state their expectations by panicking
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

mod display_oracle;
mod docs_keys;
// mkfifo for the pickers' folders
#[cfg(unix)]
#[allow(unsafe_code)]
mod reader_picker_props;
mod tui_agrees_with_log;
mod tui_app;
mod tui_compare_flash;
mod tui_gradcheck;
mod tui_lessons;
mod tui_mine;
mod tui_mistakes;
mod tui_props;
mod tui_quiz;
mod tui_readable;
mod tui_snapshots;
mod tui_timeline;
mod tui_traffic;
mod tui_train;
mod tui_wording;
mod unit_tui;
