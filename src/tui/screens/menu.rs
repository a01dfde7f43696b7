//! The main menu.

use crate::tui::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// The menu's entries, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    Baseline,
    Mha,
    Compare,
    Open,
    Train,
    OpenCheckpoint,
    Mistakes,
    Traffic,
    Help,
    Quit,
}

impl Item {
    pub const ALL: [Item; 10] = [
        Item::Baseline,
        Item::Mha,
        Item::Compare,
        Item::Open,
        Item::Train,
        Item::OpenCheckpoint,
        Item::Mistakes,
        Item::Traffic,
        Item::Help,
        Item::Quit,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Item::Baseline => "Step through baseline attention",
            Item::Mha => "Step through multi-head attention",
            Item::Compare => "Compare baseline and MHA",
            Item::Open => "Open scenario…",
            Item::Train => "Train TinyGPT",
            Item::OpenCheckpoint => "Open checkpoint…",
            Item::Mistakes => "Mistakes gallery",
            Item::Traffic => "Memory traffic: naive vs flash",
            Item::Help => "Help",
            Item::Quit => "Quit",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Item::Baseline => "One head over all C channels: scores [B,T,T], scale 1/√C.",
            Item::Mha => "H heads of D = C/H channels read from the same q, k, v rows: scores [B,H,T,T], scale 1/√D.",
            Item::Compare => {
                "The same input through both kernels, phase by phase: where each (i, j) lives, and the scales."
            }
            Item::Open => "Pick a shipped scenario from scenarios/ or type the path of your own.",
            Item::Train => "Train a tiny GPT, watch it learn, then trace its attention.",
            Item::OpenCheckpoint => {
                "Trace the attention of a model saved by the train screen or attn-trace train --save."
            }
            Item::Mistakes => {
                "Six classic multi-head attention mistakes, each traced beside the correct run: where they part, and what it does downstream."
            }
            Item::Traffic => {
                "How many global-memory reads and writes the plain kernel and FlashAttention make as T grows, per tile size."
            }
            Item::Help => "Every key of the tracer.",
            Item::Quit => "Leave attn-trace (q from the menu does the same).",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Menu {
    pub selected: usize,
}

impl Menu {
    /// Moves the highlight; returns the chosen entry on Enter, a digit or q.
    pub fn key(&mut self, key: KeyEvent) -> Option<Item> {
        let n = Item::ALL.len();
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.selected = (self.selected + n - 1) % n,
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => self.selected = (self.selected + 1) % n,
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = n - 1,
            KeyCode::Enter | KeyCode::Char(' ') => return Item::ALL.get(self.selected).copied(),
            KeyCode::Char('q') => return Some(Item::Quit),
            KeyCode::Char('?') => return Some(Item::Help),
            KeyCode::Char(c @ '1'..='9') => {
                self.selected = c as usize - '1' as usize;
                return Item::ALL.get(self.selected).copied();
            }
            // the tenth entry
            KeyCode::Char('0') if n >= 10 => {
                self.selected = 9;
                return Item::ALL.get(9).copied();
            }
            _ => {}
        }
        None
    }

    /// The entry under a click at row `y`, if any.
    pub fn item_at(&self, area: Rect, y: u16) -> Option<usize> {
        let list = list_area(area);
        let row = y.checked_sub(list.y + 1)? as usize;
        (row < Item::ALL.len() && y < list.bottom().saturating_sub(1)).then_some(row)
    }
}

fn list_area(area: Rect) -> Rect {
    let [_, list, _] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Length(Item::ALL.len() as u16 + 2),
        Constraint::Fill(1),
    ])
    .areas(area);
    let w = 46.min(list.width);
    Rect {
        x: list.x + (list.width - w) / 2,
        width: w,
        ..list
    }
}

/// A title and its subtitle, centred, a line below the top of `head`: the menu's heading, which
/// the mistakes gallery shares.
pub fn render_heading(frame: &mut Frame, head: Rect, title: &str, subtitle: &str, t: Theme) {
    let lines = vec![
        Line::from(Span::styled(title, t.title())).centered(),
        Line::from(Span::styled(subtitle, t.dim())).centered(),
    ];
    frame.render_widget(
        Paragraph::new(lines),
        Rect {
            y: head.y + 1,
            height: head.height.saturating_sub(1),
            ..head
        },
    );
}

pub fn render(frame: &mut Frame, area: Rect, st: &Menu, theme: Theme) {
    let t = theme;
    let [head, _, about] = Layout::vertical([
        Constraint::Length(4),
        Constraint::Length(Item::ALL.len() as u16 + 2),
        Constraint::Fill(1),
    ])
    .areas(area);
    render_heading(
        frame,
        head,
        "attn-trace",
        "step through transformer attention one memory access at a time",
        t,
    );
    let list = list_area(area);
    let lines: Vec<Line> = Item::ALL
        .iter()
        .enumerate()
        .map(|(k, item)| {
            let text = format!(" {} {:<40}", (k + 1) % 10, item.label());
            Line::from(Span::styled(text, if k == st.selected { t.cursor() } else { t.base() }))
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().border_style(t.border(true))),
        list,
    );
    let item = Item::ALL[st.selected.min(Item::ALL.len() - 1)];
    let help = vec![
        Line::from(Span::raw(item.about())).centered(),
        Line::from(""),
        Line::from(Span::styled("↑/↓ choose · Enter open · q quit · ? help", t.dim())).centered(),
    ];
    frame.render_widget(
        Paragraph::new(help).wrap(Wrap { trim: true }),
        Rect {
            y: about.y + 1,
            height: about.height.saturating_sub(1),
            ..about
        },
    );
}
