//! Helpers the test modules share, kept apart from the tests themselves: a test file holds
//! tests (and at most a helper of its own that no other file needs).
//!
//! - [`inputs`]: engine inputs built directly (from `x`, separate projections, q, k, v);
//! - [`gradients`]: central finite differences against a run's gradients;
//! - [`trace`]: a log's per-phase counts and derived lines against the closed forms;
//! - [`tui`]: keys into the app and its screen as text, through the app's public API;
//! - [`cli`]: the program's binary as a command;
//! - [`chains`]: printed arithmetic chains checked to their digits;
//! - [`pty`]: the real binary in a pseudo-terminal (Unix).

pub(crate) mod chains;
pub(crate) mod cli;
pub(crate) mod gradients;
pub(crate) mod inputs;
// openpty and the descriptors it returns
#[cfg(unix)]
#[allow(unsafe_code)]
pub(crate) mod pty;
pub(crate) mod trace;
#[allow(dead_code)] // shared with the app's own tests (src/tests/support), which use the rest
pub(crate) mod tui;

use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};
use std::path::PathBuf;

/// Proptest's settings with `cases` cases (`PROPTEST_CASES` of them when it is set), failures
/// kept beside the test's source file (`tests/it/NAME.proptest-regressions`) and re-run first.
/// (Proptest's default looks for the nearest directory with a `main.rs`, which in this one test
/// binary is `tests/it/` itself, and would keep them in `tests/proptest-regressions/NAME.txt`
/// instead.)
pub(crate) fn proptest_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        // a soak asks for more: `PROPTEST_CASES=1000 cargo test --release`
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(cases),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    }
}

/// The repository's root (where `Cargo.toml`, `docs/` and `scenarios/` are).
pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The bit patterns of `x`, to compare floats exactly (NaN included).
pub(crate) fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}
