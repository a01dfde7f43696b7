//! The `?` overlay: the keys of the screen it is opened from, in a box that scrolls when the
//! terminal is too small for the whole list.

use crate::tui::theme::Theme;
use crate::tui::widgets::popup;
use attn_trace_i18n::text;
use attn_trace_i18n::{msg, tr};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

/// `(keys, what they do)`: the tracer's keys.
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("n →  /  p ←", msg!("next / previous event (reverse stepping)")),
    ("j ↓  /  k ↑", msg!("next / previous iteration of the innermost loop")),
    ("J  /  K", msg!("next / previous iteration of the enclosing loop")),
    ("]  /  [", msg!("next / previous phase")),
    ("Home / End", msg!("first / last event   (PgDn/PgUp: ±100)")),
    ("f", msg!("forward ↔ backward")),
    ("Tab", msg!("next / previous kernel the scenario traces (same element)")),
    ("g", msg!("goto: 123 · b=0 h=1 i=2 j=1 · scores[16] · softmax")),
    ("w  /  r", msg!("who last wrote / who reads next the selected cell")),
    ("b", msg!("toggle a breakpoint on the selected cell")),
    ("c  /  C", msg!("continue to the next / previous breakpoint hit")),
    ("<  /  >", msg!("timeline: one column back / forward (or click it)")),
    (
        "{  /  }",
        msg!("previous / next access of the selected cell (its ticks)"),
    ),
    ("Q", msg!("quiz: predict the next access (Enter · v reveal · l level)")),
    ("N  /  P", msg!("lesson: next / previous stop (tui --lesson)")),
    ("R", msg!("lesson: back to the current stop, to answer its question")),
    ("y", msg!("the command that reopens this position (copied via OSC 52)")),
    ("S", msg!("save the screen as SVG and text in snapshots/")),
    (
        "m",
        msg!("cache model: hit or miss and line of this access; misses on the timeline"),
    ),
    ("s, Shift+←→↑↓", msg!("select a cell with the arrows (or click it)")),
    ("t  /  1-4", msg!("switch panel tab on small screens")),
    ("e", msg!("trained model: export this layer as scenario TOML")),
    ("?", msg!("this help")),
    ("Esc", msg!("close a popup, clear the selection, or go back")),
    ("q", msg!("back to the menu; from the menu, quit")),
];

/// The overlay's own keys, listed under every screen's.
pub(crate) const OVERLAY_KEYS: &[(&str, &str)] = &[
    (
        "↓ j  /  ↑ k",
        msg!("scroll this list (PgDn / PgUp: a page, Home / End)"),
    ),
    ("Esc ? q Enter", msg!("close it")),
];

/// The memory panel's cell styles, listed under the keys of a screen that has the panel: the
/// sample drawn in the style, and what the style means.
pub(crate) const CELL_STYLES: &[(&str, &str)] = &[
    ("--", msg!("memory: a cell not written yet (its zero is no result)")),
    ("1.0", msg!("memory: a masked score, crossed out (·· in a heat grid)")),
    ("1.0", msg!("memory: written in this phase (underlined in a heat grid)")),
    (
        "1.0",
        msg!("memory: this access, a read; a write is drawn red (◀▶ in a heat grid)"),
    ),
];

/// The overlay open over a screen: whose keys, and how far the list is scrolled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Help {
    /// The screen it was opened from, for the title.
    pub screen: &'static str,
    pub keys: &'static [(&'static str, &'static str)],
    /// The screen has a memory panel: the cell styles are listed after the keys.
    pub cells: bool,
    /// First line of the list in view.
    pub scroll: usize,
}

impl Help {
    pub(crate) fn new(screen: &'static str, keys: &'static [(&'static str, &'static str)]) -> Help {
        Help {
            screen,
            keys,
            cells: false,
            scroll: 0,
        }
    }

    /// The overlay of a screen with a memory panel: its keys, then the [`CELL_STYLES`].
    pub(crate) fn with_cells(screen: &'static str, keys: &'static [(&'static str, &'static str)]) -> Help {
        Help {
            cells: true,
            ..Help::new(screen, keys)
        }
    }

    /// Scrolls the list drawn in `area`; `true` when the key closes the overlay.
    pub(crate) fn key(&mut self, key: KeyEvent, area: Rect) -> bool {
        let (_, _, page) = layout(self, area);
        let max = lines(self, inner_width(self, area)).len().saturating_sub(page);
        self.scroll = match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('?' | 'q') => return true,
            KeyCode::Down | KeyCode::Char('j') => self.scroll + 1,
            KeyCode::Up | KeyCode::Char('k') => self.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll + page.max(1),
            KeyCode::PageUp => self.scroll.saturating_sub(page.max(1)),
            KeyCode::Home => 0,
            KeyCode::End => max,
            _ => self.scroll,
        }
        .min(max);
        false
    }
}

/// Width of the key column.
const KEY_W: usize = 16;

/// The widest line the list wants: the key column and the longest description.
fn wanted_width(h: &Help) -> usize {
    h.keys
        .iter()
        .chain(OVERLAY_KEYS)
        .chain(if h.cells { CELL_STYLES } else { &[] })
        .map(|(_, what)| KEY_W + 2 + crate::tui::widgets::cols(text(what)))
        .max()
        .unwrap_or(0)
}

fn inner_width(h: &Help, area: Rect) -> usize {
    let w = (wanted_width(h) as u16 + 2).min(area.width.saturating_sub(2).max(1));
    w.saturating_sub(2).max(1) as usize
}

/// What a line's first column holds: keys, or the sample of the cell style [`CELL_STYLES`]`[k]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Keys,
    Cell(usize),
}

/// The list as lines of at most `width` characters: `(key column, description, what the
/// column holds)` each. Where the box is too narrow for both side by side, a key has its own
/// line and its description the lines below it.
fn lines(h: &Help, width: usize) -> Vec<(String, String, Column)> {
    let mut out = Vec::new();
    let styles: &[(&str, &str)] = if h.cells { CELL_STYLES } else { &[] };
    let blank = [&("", "")];
    let entries = h
        .keys
        .iter()
        .map(|e| (e, Column::Keys))
        .chain(blank.into_iter().filter(|_| h.cells).map(|e| (e, Column::Keys)))
        .chain(styles.iter().enumerate().map(|(k, e)| (e, Column::Cell(k))))
        .chain(blank.map(|e| (e, Column::Keys)))
        .chain(OVERLAY_KEYS.iter().map(|e| (e, Column::Keys)));
    for ((keys, what), column) in entries {
        let mut out_push = |k: String, w: String| out.push((k, w, column));
        if keys.is_empty() {
            out_push(String::new(), String::new());
        } else if width >= KEY_W + 2 + 16 {
            for (k, part) in attn_trace_analysis::format::wrap(text(what), width - KEY_W - 2)
                .into_iter()
                .enumerate()
            {
                let key = if k == 0 {
                    format!("{keys:>KEY_W$}  ")
                } else {
                    " ".repeat(KEY_W + 2)
                };
                out_push(key, part);
            }
        } else {
            out_push(keys.to_string(), String::new());
            for part in attn_trace_analysis::format::wrap(text(what), width.saturating_sub(2)) {
                out_push("  ".to_string(), part);
            }
        }
    }
    out
}

/// The box, its inside and the lines of the list it shows at once.
fn layout(h: &Help, area: Rect) -> (Rect, Rect, usize) {
    let width = inner_width(h, area);
    let count = lines(h, width).len();
    let rect = popup::centered(area, width as u16 + 2, (count as u16).saturating_add(2));
    let inner = Block::bordered().inner(rect);
    (rect, inner, inner.height as usize)
}

pub(crate) fn render(frame: &mut Frame, area: Rect, h: &Help, theme: Theme) {
    let (rect, inner, page) = layout(h, area);
    let all = lines(h, inner.width as usize);
    let scroll = h.scroll.min(all.len().saturating_sub(page));
    let shown: Vec<Line> = all
        .iter()
        .skip(scroll)
        .take(page)
        .map(|(k, what, column)| {
            let mut spans = match column {
                Column::Keys => vec![Span::styled(k.clone(), theme.key())],
                // the sample in its own style, the padding before it plain
                Column::Cell(n) => {
                    let sample = k.trim();
                    let style = [theme.dim(), theme.masked(), theme.written(), theme.read()]
                        .get(*n)
                        .copied()
                        .unwrap_or_default();
                    let lead = k.len() - k.trim_start().len();
                    vec![
                        Span::raw(k[..lead].to_string()),
                        Span::styled(sample.to_string(), style),
                        Span::raw(k[lead + sample.len()..].to_string()),
                    ]
                }
            };
            spans.push(Span::raw(what.clone()));
            Line::from(spans)
        })
        .collect();
    let mut block = Block::bordered()
        .title(tr!(" Keys · {screen} ", screen = text(h.screen)))
        .title_style(theme.title())
        .border_style(theme.border(true));
    if page < all.len() {
        let last = (scroll + page).min(all.len());
        let more = match (scroll > 0, last < all.len()) {
            (true, true) => "↑↓",
            (false, true) => "↓",
            _ => "↑",
        };
        block = block.title_bottom(tr!(
            " {more} {first}-{last} of {n} ",
            more,
            first = scroll + 1,
            last,
            n = all.len()
        ));
    }
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(shown).block(block), rect);
}
