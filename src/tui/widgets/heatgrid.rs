//! A T×T matrix of probabilities as a heat grid, the prompt's bytes along both axes: query `i`
//! down the side, key `j` across the top. Used by the attention map; [`plan`] places the cells
//! so that clicks can be mapped back to `(i, j)` with [`hit`].

use super::put;
use crate::tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};

/// One grid to draw.
pub(crate) struct Grid<'a> {
    /// `T·T` values in `[0, 1]`, row-major: `values[i*T + j]`.
    pub values: &'a [f32],
    pub t: usize,
    /// The prompt's bytes: the axis labels.
    pub labels: &'a [u8],
    pub selected: Option<(usize, usize)>,
    /// The cell kept in view when the grid is larger than its area: the same for every grid
    /// drawn side by side, so their rows and columns scroll together.
    pub focus: (usize, usize),
    /// Pairs with `j > i` are hidden by the causal mask.
    pub causal: bool,
}

/// Where the cells of a grid go inside `area`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeatPlan {
    /// Top-left corner of cell `(first_i, first_j)`.
    pub x: u16,
    pub y: u16,
    /// Columns per cell: 2 where the grid fits, else 1.
    pub cell_w: u16,
    pub first_i: usize,
    pub first_j: usize,
    pub rows: usize,
    pub cols: usize,
}

/// Width a grid of `t` columns wants: a label column and two columns per cell.
pub(crate) fn wanted_width(t: usize) -> u16 {
    (2 + 2 * t).min(u16::MAX as usize) as u16
}

/// Places a `t`×`t` grid in `area`, scrolled so the cell `focus` is visible.
pub(crate) fn plan(area: Rect, t: usize, focus: (usize, usize)) -> HeatPlan {
    let room_w = area.width.saturating_sub(2) as usize;
    let cell_w: u16 = if 2 * t <= room_w { 2 } else { 1 };
    let cols = (room_w / cell_w as usize).min(t);
    let rows = (area.height.saturating_sub(1) as usize).min(t);
    let (si, sj) = focus;
    let first = |sel: usize, shown: usize| if shown == 0 { 0 } else { sel.saturating_sub(shown - 1) };
    HeatPlan {
        x: area.x.saturating_add(2),
        y: area.y.saturating_add(1),
        cell_w,
        first_i: first(si, rows),
        first_j: first(sj, cols),
        rows,
        cols,
    }
}

/// The cell under a click, if any.
pub(crate) fn hit(p: &HeatPlan, column: u16, row: u16) -> Option<(usize, usize)> {
    let dx = column.checked_sub(p.x)? / p.cell_w.max(1);
    let dy = row.checked_sub(p.y)?;
    let (dx, dy) = (dx as usize, dy as usize);
    (dx < p.cols && dy < p.rows).then_some((p.first_i + dy, p.first_j + dx))
}

/// A byte as one character of an axis label.
pub(crate) fn label(b: u8) -> char {
    match b {
        b' ' => '␣',
        b'\n' => '⏎',
        b'\t' => '⇥',
        0x21..=0x7e => b as char,
        _ => '·',
    }
}

/// The style and glyph of a probability `p ∈ [0, 1]`: a sequential colour scale in colour,
/// shades by value in monochrome.
pub(crate) fn cell(theme: Theme, p: f32) -> (Style, &'static str) {
    let p = if p.is_finite() { p.clamp(0.0, 1.0) } else { 0.0 };
    if theme.color {
        let c = colorous::VIRIDIS.eval_continuous(p as f64);
        (Style::default().fg(Color::Rgb(c.r, c.g, c.b)), "██")
    } else {
        let glyph = match (p * 5.0) as u32 {
            0 => "  ",
            1 => "░░",
            2 => "▒▒",
            3 => "▓▓",
            _ => "██",
        };
        (Style::default(), glyph)
    }
}

pub(crate) fn render(buf: &mut Buffer, area: Rect, g: &Grid, theme: Theme) {
    let p = plan(area, g.t, g.focus);
    let w = p.cell_w as usize;
    // key labels across the top, query labels down the side; the selected pair's in the key colour
    let token = |k: usize, selected: bool| {
        let style = if selected { theme.key() } else { theme.dim() };
        (label(g.labels.get(k).copied().unwrap_or(b' ')).to_string(), style)
    };
    for dj in 0..p.cols {
        let j = p.first_j + dj;
        let x = p.x + (dj * w) as u16;
        let (text, style) = token(j, g.selected.is_some_and(|(_, sj)| sj == j));
        put(buf, area, x, area.y, &text, style);
    }
    for di in 0..p.rows {
        let i = p.first_i + di;
        let y = p.y + di as u16;
        let (text, style) = token(i, g.selected.is_some_and(|(si, _)| si == i));
        put(buf, area, area.x, y, &text, style);
        for dj in 0..p.cols {
            let j = p.first_j + dj;
            let x = p.x + (dj * w) as u16;
            let v = g.values.get(i * g.t + j).copied().unwrap_or(0.0);
            let (style, glyph) = if g.causal && j > i {
                (theme.masked(), "··")
            } else {
                cell(theme, v)
            };
            let (style, glyph) = if g.selected == Some((i, j)) {
                (theme.selected(), "◆◆")
            } else {
                (style, glyph)
            };
            put(
                buf,
                area,
                x,
                y,
                &glyph[..glyph.char_indices().nth(w).map_or(glyph.len(), |(k, _)| k)],
                style,
            );
        }
    }
}
