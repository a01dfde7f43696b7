//! Helpers the app's tests share: [`tui`] (keys into the app and its screen as text) is theirs;
//! the others are the integration tests' own helpers (`tests/it/support/`), compiled here too
//! rather than copied.

#[allow(dead_code)] // shared with tests/it, which uses the rest
#[path = "../../../tests/it/support/chains.rs"]
pub(super) mod chains;
// the program's binary, which `cargo test` builds for the integration tests (tests/it) before
// any test runs: a few tests here hold a screen to what a command prints or make their input
// with one
#[allow(dead_code)] // shared with tests/it, which uses the rest
#[path = "../../../tests/it/support/cli.rs"]
pub(super) mod cli;
#[allow(dead_code)] // shared with tests/it, which uses the rest
#[path = "../../../tests/it/support/gradients.rs"]
pub(super) mod gradients;
#[allow(dead_code)] // shared with tests/it, which uses the rest
#[path = "../../../tests/it/support/inputs.rs"]
pub(super) mod inputs;
pub(super) mod tui;

use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};
use std::path::PathBuf;

/// Proptest's settings with `cases` cases (`PROPTEST_CASES` of them when it is set), failures
/// kept beside the test's source file (`src/tests/proptest-regressions/NAME.txt`) and re-run
/// first.
pub(super) fn proptest_config(cases: u32) -> ProptestConfig {
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
pub(super) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
