//! Writes the README's screenshots to `assets/*.svg`: the real TUI, rendered headlessly
//! ([`attn_trace::tui::pictures`]).
//!
//! ```sh
//! cargo run --release --example screenshots            # (re)writes assets/
//! cargo run --release --example screenshots -- --check # exits 1 if a committed picture differs
//! ```
//!
//! `--check` (and `tests/it/screenshots.rs`) compares the deterministic pictures with the
//! committed files; the train screen and the attention map come from a real training run and
//! are rewritten, never checked.

use attn_trace::tui::pictures;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Writes `text` to `path` through a temporary file in the same folder, then a rename. The
/// picture gets ordinary permissions (0666 less the umask), not the temporary file's private ones.
/// An interrupted run never leaves half a picture.
fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    attn_trace_core::files::atomic::write(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}

fn run(check: bool) -> Result<bool, String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut shots = pictures::screenshots()?;
    if !check {
        shots.extend(pictures::trained_screenshots()?);
    }
    let mut same = true;
    for (name, picture) in shots {
        let path = dir.join(name);
        if check {
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            if committed != picture {
                eprintln!("{} differs from what the app draws now", path.display());
                same = false;
            }
        } else {
            write_atomically(&path, &picture)?;
            println!("wrote {}", path.display());
        }
    }
    Ok(same)
}

fn main() -> ExitCode {
    let check = std::env::args().skip(1).any(|a| a == "--check");
    match run(check) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("regenerate with `cargo run --example screenshots`");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
