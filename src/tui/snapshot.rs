//! Pictures of the screen for slides and docs: a screen drawn off-screen
//! (by the app, `App::draw_offscreen`) written as SVG (the renderer the
//! README's pictures come from, [`super::svg`]) and as plain text. The tracer's `S` saves both
//! into `snapshots/`; `tui --snapshot OUT.svg --size 120x40` writes one headlessly.

use super::traced_scenario::TracedScenario;
use attn_trace_core::files::atomic;
use attn_trace_core::kernels::Variant;
use ratatui::buffer::Buffer;
use std::io;
use std::path::{Path, PathBuf};

/// Where the tracer's `S` saves its pictures, relative to the current directory.
pub(crate) const DIR: &str = "snapshots";

/// The screen as text, one row a line, trailing spaces cut (a wide character's second column
/// is not a space of its own).
pub(crate) fn text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        let mut hidden = 0usize;
        for x in area.left()..area.right() {
            if hidden > 0 {
                hidden -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            hidden = attn_trace_analysis::format::cols(sym).saturating_sub(1);
            row.push_str(sym);
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// `gqa-gqa-5337`: the scenario's file stem, the kernel and the event.
pub(crate) fn name(traced: &TracedScenario, variant: Variant, cursor: usize) -> String {
    let source = traced.source.trim_start_matches("<built-in ").trim_end_matches('>');
    let stem = Path::new(source)
        .file_stem()
        .map_or_else(|| "attn-trace".to_string(), |s| s.to_string_lossy().into_owned());
    let stem: String = stem
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{stem}-{}-{cursor}", variant.name())
}

/// What `path`'s extension asks for: plain text for `.txt`, else SVG.
pub(crate) fn render_for(path: &Path, buf: &Buffer) -> String {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("txt") => text(buf),
        _ => super::svg::render(buf),
    }
}

/// Saves `buf` as `DIR/NAME.svg` and `DIR/NAME.txt` (each written whole or not at all);
/// returns the SVG's path.
pub(crate) fn save(dir: &Path, name: &str, buf: &Buffer) -> io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let svg = dir.join(format!("{name}.svg"));
    atomic::write(&svg, super::svg::render(buf).as_bytes())?;
    atomic::write(&dir.join(format!("{name}.txt")), text(buf).as_bytes())?;
    Ok(svg)
}
