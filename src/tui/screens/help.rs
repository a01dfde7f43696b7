//! The `?` overlay: every key, in one place.

use crate::tui::theme::Theme;
use crate::tui::widgets::popup;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// `(keys, what they do)`: the single list the overlay shows.
pub const KEYS: &[(&str, &str)] = &[
    ("n →  /  p ←", "next / previous event (reverse stepping)"),
    ("j ↓  /  k ↑", "next / previous iteration of the innermost loop"),
    ("J  /  K", "next / previous iteration of the enclosing loop"),
    ("]  /  [", "next / previous phase"),
    ("Home / End", "first / last event   (PgDn/PgUp: ±100)"),
    ("f", "forward ↔ backward"),
    ("Tab", "next / previous kernel the scenario traces (same element)"),
    ("g", "goto: 123 · b=0 h=1 i=2 j=1 · scores[16] · softmax"),
    ("w  /  r", "who last wrote / who reads next the selected cell"),
    ("b", "toggle a breakpoint on the selected cell"),
    ("c  /  C", "continue to the next / previous breakpoint hit"),
    ("<  /  >", "timeline: one column back / forward (or click it)"),
    ("{  /  }", "previous / next access of the selected cell (its ticks)"),
    ("s, Shift+arrows", "select a cell with the arrows (or click it)"),
    ("t  /  1-4", "switch panel tab on small screens"),
    ("e", "trained model: export this layer as scenario TOML"),
    ("d", "mistakes side by side: both runs to where they diverge"),
    ("?", "this help"),
    ("Esc", "close a popup, clear the selection, or go back"),
    ("q", "back to the menu; from the menu, quit"),
];

pub fn render(frame: &mut Frame, area: Rect, theme: Theme) {
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(k, what)| Line::from(vec![Span::styled(format!("{k:>16}  "), theme.key()), Span::raw(*what)]))
        .collect();
    popup::render(frame, area, "Keys · Esc closes", lines, theme.border(true), theme);
}
