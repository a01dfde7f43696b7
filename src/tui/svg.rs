//! Renders a ratatui [`Buffer`] as an SVG picture of the terminal, so the README's screenshots
//! come from the app itself (`cargo run --example screenshots`), not from a screen grab.

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use std::fmt::Write;

/// Cell size in pixels and the font that fills it.
const CELL_W: f32 = 8.4;
const CELL_H: f32 = 17.0;
const FONT_SIZE: f32 = 14.0;
const FONT: &str = "'DejaVu Sans Mono', 'Cascadia Mono', Menlo, Consolas, monospace";
const DEFAULT_FG: &str = "#d8dee9";
const DEFAULT_BG: &str = "#1e222a";

/// The 16 ANSI colours, as one dark theme draws them.
const ANSI: [&str; 16] = [
    "#3b4252", "#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd", "#56b6c2", "#d8dee9", "#5c6370", "#ff7a85",
    "#b5e890", "#ffd68a", "#82c4ff", "#dd9cf0", "#7fd4de", "#ffffff",
];

fn hex(color: Color, default: &str) -> String {
    let ansi = |k: usize| ANSI[k].to_string();
    match color {
        Color::Reset => default.to_string(),
        Color::Black => ansi(0),
        Color::Red => ansi(1),
        Color::Green => ansi(2),
        Color::Yellow => ansi(3),
        Color::Blue => ansi(4),
        Color::Magenta => ansi(5),
        Color::Cyan => ansi(6),
        Color::Gray => ansi(7),
        Color::DarkGray => ansi(8),
        Color::LightRed => ansi(9),
        Color::LightGreen => ansi(10),
        Color::LightYellow => ansi(11),
        Color::LightBlue => ansi(12),
        Color::LightMagenta => ansi(13),
        Color::LightCyan => ansi(14),
        Color::White => ansi(15),
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(k) => indexed(k),
    }
}

/// The xterm 256-colour palette: 16 ANSI, a 6×6×6 cube, 24 greys.
fn indexed(k: u8) -> String {
    match k {
        0..=15 => ANSI[k as usize].to_string(),
        16..=231 => {
            let k = k - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            format!("#{:02x}{:02x}{:02x}", level(k / 36), level(k / 6 % 6), level(k % 6))
        }
        232..=255 => {
            let g = 8 + 10 * (k - 232);
            format!("#{g:02x}{g:02x}{g:02x}")
        }
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The resolved look of one cell.
#[derive(Clone, PartialEq)]
struct Look {
    fg: String,
    bg: String,
    bold: bool,
    italic: bool,
    underline: bool,
    dim: bool,
}

/// An SVG document showing `buf` as a terminal window.
pub(crate) fn render(buf: &Buffer) -> String {
    let area = buf.area;
    let (w, h) = (area.width as f32 * CELL_W, area.height as f32 * CELL_H);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.1} {h:.1}" font-family="{FONT}" font-size="{FONT_SIZE}">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="{DEFAULT_BG}"/>"#);
    for y in 0..area.height {
        // cells of one row grouped into runs of the same look
        let mut runs: Vec<(u16, u16, Look, String)> = Vec::new();
        // columns still covered by the last wide character (a CJK one takes two)
        let mut hidden = 0usize;
        for x in 0..area.width {
            let Some(cell) = buf.cell((area.x + x, area.y + y)) else {
                continue;
            };
            if hidden > 0 {
                // the second column of a wide character: its run grows, nothing is drawn there
                hidden -= 1;
                if let Some(run) = runs.last_mut() {
                    run.1 += 1;
                    continue;
                }
            }
            hidden = attn_trace_analysis::format::cols(cell.symbol()).saturating_sub(1);
            let m = cell.modifier;
            let (mut fg, mut bg) = (hex(cell.fg, DEFAULT_FG), hex(cell.bg, DEFAULT_BG));
            if m.contains(Modifier::REVERSED) {
                std::mem::swap(&mut fg, &mut bg);
            }
            let look = Look {
                fg,
                bg,
                bold: m.contains(Modifier::BOLD),
                italic: m.contains(Modifier::ITALIC),
                underline: m.contains(Modifier::UNDERLINED),
                dim: m.contains(Modifier::DIM),
            };
            let sym = cell.symbol();
            match runs.last_mut() {
                Some((_, len, l, text)) if *l == look => {
                    *len += 1;
                    text.push_str(sym);
                }
                _ => runs.push((x, 1, look, sym.to_string())),
            }
        }
        let ty = y as f32 * CELL_H;
        for (x0, len, look, text) in &runs {
            let (tx, tw) = (*x0 as f32 * CELL_W, *len as f32 * CELL_W);
            if look.bg != DEFAULT_BG {
                let _ = writeln!(
                    svg,
                    r#"<rect x="{tx:.1}" y="{ty:.1}" width="{tw:.1}" height="{CELL_H}" fill="{}"/>"#,
                    look.bg
                );
            }
            if text.trim().is_empty() {
                continue;
            }
            let mut attrs = format!(r#" fill="{}""#, look.fg);
            if look.bold {
                attrs.push_str(r#" font-weight="bold""#);
            }
            if look.italic {
                attrs.push_str(r#" font-style="italic""#);
            }
            if look.underline {
                attrs.push_str(r#" text-decoration="underline""#);
            }
            if look.dim {
                attrs.push_str(r#" opacity="0.6""#);
            }
            // textLength pins the run to its cells whatever font the viewer substitutes
            let _ = writeln!(
                svg,
                r#"<text x="{tx:.1}" y="{:.1}" textLength="{tw:.1}" lengthAdjust="spacingAndGlyphs" xml:space="preserve"{attrs}>{}</text>"#,
                ty + CELL_H * 0.78,
                escape(text)
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}
