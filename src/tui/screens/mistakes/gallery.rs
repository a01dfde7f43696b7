//! The mistakes gallery: the seven shipped mistake scenarios, one entry each, and its screen.

use crate::tui::screens::menu;
use crate::tui::theme::Theme;
use crate::tui::widgets::{cols, cut, pad};
use attn_trace_core::kernels::attention_mistakes::Mistake;
use attn_trace_core::scenario::{self, Scenario};
use attn_trace_i18n::tr;
use crossterm::event::{KeyCode, KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// The gallery: the seven shipped mistake scenarios.
#[derive(Debug)]
pub(crate) struct Gallery {
    pub selected: usize,
    pub entries: Vec<Entry>,
}

/// One gallery entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The scenario's file stem under `scenarios/mistakes/`, also the mistake's name.
    pub name: &'static str,
    pub mistake: Option<Mistake>,
    pub title: String,
    pub about: String,
}

/// What the gallery asks the app to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    Open(usize),
    Back,
    Help,
}

impl Default for Gallery {
    fn default() -> Self {
        Gallery::new(0)
    }
}

impl Gallery {
    /// The gallery with entry `selected` highlighted.
    pub(crate) fn new(selected: usize) -> Gallery {
        let entries: Vec<Entry> = scenario::MISTAKES
            .iter()
            .map(|&(name, _)| {
                let s = Scenario::mistake(name);
                Entry {
                    name,
                    mistake: Mistake::from_name(name),
                    title: s.as_ref().map_or_else(|| name.to_string(), |s| s.title.clone()),
                    about: s.and_then(|s| s.about).unwrap_or_default(),
                }
            })
            .collect();
        Gallery {
            selected: selected.min(entries.len().saturating_sub(1)),
            entries,
        }
    }

    /// The scenario of entry `k`.
    pub(crate) fn scenario(&self, k: usize) -> Option<Scenario> {
        Scenario::mistake(self.entries.get(k)?.name)
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Option<Pick> {
        let n = self.entries.len();
        if n == 0 {
            return matches!(key.code, KeyCode::Esc | KeyCode::Char('q')).then_some(Pick::Back);
        }
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.selected = (self.selected + n - 1) % n,
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => self.selected = (self.selected + 1) % n,
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = n - 1,
            KeyCode::Enter | KeyCode::Char(' ') => return Some(Pick::Open(self.selected)),
            KeyCode::Char(c @ '1'..='7') => {
                let k = c as usize - '1' as usize;
                if k < n {
                    self.selected = k;
                    return Some(Pick::Open(k));
                }
            }
            KeyCode::Char('?') => return Some(Pick::Help),
            KeyCode::Esc | KeyCode::Char('q') => return Some(Pick::Back),
            _ => {}
        }
        None
    }

    /// A left click: the entry under it is highlighted and opened.
    pub(crate) fn mouse(&mut self, m: MouseEvent, area: Rect) -> Option<Pick> {
        if m.kind != MouseEventKind::Down(MouseButton::Left) {
            return None;
        }
        let list = gallery_areas(area, self.entries.len()).1;
        let row = m.row.checked_sub(list.y + 1)? as usize;
        let inside = m.row < list.bottom().saturating_sub(1) && m.column >= list.x && m.column < list.right();
        (inside && row < self.entries.len()).then(|| {
            self.selected = row;
            Pick::Open(row)
        })
    }
}

/// Head, list and details of the gallery.
fn gallery_areas(area: Rect, n: usize) -> (Rect, Rect, Rect) {
    let [head, list, details] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Length(n as u16 + 2),
        Constraint::Fill(1),
    ])
    .areas(area);
    let w = 116.min(list.width.saturating_sub(4)).max(list.width.min(40));
    let centre = |r: Rect| Rect {
        x: r.x + (r.width - w) / 2,
        width: w,
        ..r
    };
    (head, centre(list), centre(details))
}

pub(crate) fn render_gallery(frame: &mut Frame, area: Rect, st: &Gallery, theme: Theme) {
    let t = theme;
    let (head, list, details) = gallery_areas(area, st.entries.len());
    menu::render_heading(
        frame,
        head,
        tr!("Mistakes gallery"),
        tr!("seven classic attention mistakes, each traced beside the correct run"),
        t,
    );
    let lines: Vec<Line> = st
        .entries
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let symptom = e.mistake.map_or("", |m| attn_trace_i18n::text(m.symptom()));
            let width = list.width.saturating_sub(2) as usize;
            let mut text = format!(" {} {} {symptom}", k + 1, pad(e.name, 22));
            // one line each: a symptom longer than the list ends in an ellipsis
            if cols(&text) > width {
                text = cut(&text, width.saturating_sub(1)).to_string() + "…";
            }
            let text = pad(&text, width);
            Line::from(Span::styled(text, if k == st.selected { t.cursor() } else { t.base() }))
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().border_style(t.border(true))),
        list,
    );
    let Some(e) = st.entries.get(st.selected) else {
        return;
    };
    let mut text = vec![Line::styled(e.title.clone(), t.title())];
    if let Some(m) = e.mistake {
        text.push(Line::from(vec![
            Span::styled(tr!("symptom: "), t.key()),
            Span::raw(attn_trace_i18n::text(m.symptom()).to_string()),
        ]));
    }
    text.push(Line::from(vec![
        Span::styled(tr!("this scenario: "), t.key()),
        Span::raw(e.about.clone()),
    ]));
    text.push(Line::from(""));
    text.push(Line::from(Span::styled(
        tr!("↑/↓ choose · Enter side by side · 1-7 open · ? keys · q back"),
        t.dim(),
    )));
    frame.render_widget(
        Paragraph::new(text).wrap(Wrap { trim: true }),
        Rect {
            y: details.y + 1,
            height: details.height.saturating_sub(1),
            ..details
        },
    );
}
