//! Renders the real TUI headlessly and writes the README's screenshots to `assets/*.svg`.
//!
//! ```sh
//! cargo run --example screenshots            # (re)writes assets/
//! cargo run --example screenshots -- --check # exits 1 if a committed picture differs
//! ```
//!
//! The app is driven exactly as the terminal drives it (`app::update` with key messages) and
//! drawn on a ratatui `TestBackend`; `attn_trace::svg::render` turns the buffer into a picture.
//! Every screen here is deterministic, so the pictures only change when the app does.

use attn_trace::tui::app::{self, App, Msg};
use attn_trace::tui::{Theme, Walk};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Terminal size of the tracer screenshots: wide enough for its full layout.
const W: u16 = 120;
const H: u16 = 40;

fn press(app: &mut App, code: KeyCode) {
    app::update(app, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// The app drawn once on a `w`×`h` terminal, as SVG.
fn svg(app: &App, w: u16, h: u16) -> Result<String, String> {
    let mut term = Terminal::new(TestBackend::new(w, h)).map_err(|e| e.to_string())?;
    term.draw(|f| app::render(f, app)).map_err(|e| e.to_string())?;
    Ok(attn_trace::svg::render(term.backend().buffer()))
}

/// `(file name, picture)` for every screenshot the README shows.
pub fn screenshots() -> Result<Vec<(&'static str, String)>, String> {
    let walk = || Walk::builtin();
    let mut shots = Vec::new();

    // the menu and compare screens leave the bottom of a tall terminal empty: shorter pictures
    let menu = App::with_menu(walk(), Theme::COLOR, 100, 20);
    shots.push(("menu.svg", svg(&menu, 100, 20)?));

    // the built-in walkthrough opens the tracer on its focus: b=0, h=1, i=2, j=1 (scores[16])
    let tracer = App::new(walk(), Theme::COLOR, W, H);
    shots.push(("tracer.svg", svg(&tracer, W, H)?));

    let mut compare = App::with_menu(walk(), Theme::COLOR, W, 24);
    press(&mut compare, KeyCode::Char('3'));
    shots.push(("compare.svg", svg(&compare, W, 24)?));

    let mut help = App::new(walk(), Theme::COLOR, W, H);
    press(&mut help, KeyCode::Char('?'));
    shots.push(("help.svg", svg(&help, W, H)?));

    Ok(shots)
}

/// Writes `text` to `path` through a temporary file in the same folder, then a rename. The
/// picture gets ordinary permissions (0666 less the umask), not the temporary file's private ones.
fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let dir = path
        .parent()
        .ok_or_else(|| format!("{}: no parent folder", path.display()))?;
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    tmp.write_all(text.as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    tmp.persist(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

fn run(check: bool) -> Result<bool, String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut same = true;
    for (name, picture) in screenshots()? {
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
