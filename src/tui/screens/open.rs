//! "Open scenario…": the shipped scenarios with their title and about, and a path prompt.

use crate::scenario::Scenario;
use crate::tui::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use std::path::{Path, PathBuf};

/// One file of the scenarios folder: its title and about, or why it cannot be used.
#[derive(Debug)]
pub struct Entry {
    pub path: PathBuf,
    pub summary: Result<(String, Option<String>), String>,
}

#[derive(Debug)]
pub struct Open {
    pub dir: PathBuf,
    pub entries: Vec<Entry>,
    pub selected: usize,
    /// A path being typed; when not empty, Enter opens it instead of the highlighted entry.
    pub input: String,
}

/// What the user asked for.
#[derive(Debug, PartialEq)]
pub enum Pick {
    Path(PathBuf),
    Back,
}

/// The folder of shipped scenarios: `./scenarios`, else the one next to the crate's sources.
pub fn default_dir() -> PathBuf {
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        here
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
    }
}

impl Open {
    /// Lists `dir`'s `*.toml` files, sorted, each parsed for its title.
    pub fn new(dir: PathBuf) -> Open {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                    .collect()
            })
            .unwrap_or_default();
        paths.sort();
        let entries = paths
            .into_iter()
            .map(|path| {
                let summary = Scenario::load(&path)
                    .map(|s| (s.title, s.about))
                    .map_err(|e| e.to_string());
                Entry { path, summary }
            })
            .collect();
        Open {
            dir,
            entries,
            selected: 0,
            input: String::new(),
        }
    }

    pub fn key(&mut self, key: KeyEvent) -> Option<Pick> {
        let n = self.entries.len();
        match key.code {
            KeyCode::Esc if !self.input.is_empty() => self.input.clear(),
            KeyCode::Esc => return Some(Pick::Back),
            KeyCode::Up if n > 0 => self.selected = (self.selected + n - 1) % n,
            KeyCode::Down if n > 0 => self.selected = (self.selected + 1) % n,
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::Enter if !self.input.trim().is_empty() => {
                return Some(Pick::Path(PathBuf::from(self.input.trim())));
            }
            KeyCode::Enter => return self.entries.get(self.selected).map(|e| Pick::Path(e.path.clone())),
            KeyCode::Char(c) if self.input.len() < 4096 => self.input.push(c),
            _ => {}
        }
        None
    }
}

pub fn render(frame: &mut Frame, area: Rect, st: &Open, theme: Theme) {
    let t = theme;
    let [head, list, about, input, hint] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(2),
        Constraint::Fill(1),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(Span::styled(
            format!(" Open scenario · {}", st.dir.display()),
            t.title(),
        )),
        head,
    );
    let rows = list.height.saturating_sub(2) as usize;
    let first = st.selected.saturating_sub(rows.saturating_sub(1));
    let lines: Vec<Line> = st
        .entries
        .iter()
        .enumerate()
        .skip(first)
        .take(rows.max(1))
        .map(|(k, e)| {
            let name = e
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let title = match &e.summary {
                Ok((title, _)) => Span::raw(title.clone()),
                Err(_) => Span::styled("(invalid: see below)", t.error()),
            };
            let style = if k == st.selected { t.cursor() } else { t.base() };
            Line::from(vec![Span::styled(format!(" {name:<24} "), style), title])
        })
        .collect();
    let empty = st.entries.is_empty();
    let body = if empty {
        vec![Line::from(Span::styled(
            "no *.toml files here: type a path below",
            t.dim(),
        ))]
    } else {
        lines
    };
    frame.render_widget(Paragraph::new(body).block(Block::bordered().title(" scenarios ")), list);
    let about_text = match st.entries.get(st.selected).map(|e| &e.summary) {
        Some(Ok((_, Some(about)))) => Paragraph::new(about.clone()),
        Some(Ok((_, None))) => Paragraph::new(Span::styled("(no about)", t.dim())),
        Some(Err(e)) => Paragraph::new(Span::styled(e.clone(), t.error())),
        None => Paragraph::new(""),
    };
    frame.render_widget(
        about_text
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(" about ")),
        about,
    );
    frame.render_widget(
        Paragraph::new(format!("{}▏", st.input)).block(Block::bordered().title(" or type a path ")),
        input,
    );
    frame.render_widget(
        Paragraph::new(Span::styled(" ↑/↓ choose · Enter open · Esc back", t.dim())),
        hint,
    );
}
