//! "Open scenario…": the shipped scenarios with their title and about, and a path prompt.

use super::picker::{FilePicker, file_name};
use crate::scenario::Scenario;
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use std::path::{Path, PathBuf};

/// A scenario file's title and about, or why it cannot be used.
pub type Summary = Result<(String, Option<String>), String>;

/// The scenarios folder's `*.toml` files, each parsed for its title.
pub type Open = FilePicker<Summary>;

/// The folder of shipped scenarios: `./scenarios`, else the one next to the crate's sources.
pub fn default_dir() -> PathBuf {
    let here = PathBuf::from("scenarios");
    if here.is_dir() {
        here
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
    }
}

/// Lists `dir`'s scenarios.
pub fn list(dir: PathBuf) -> Open {
    FilePicker::new(dir, "toml", |path| {
        Scenario::load(path)
            .map(|s| (s.title, s.about))
            .map_err(|e| e.to_string())
    })
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
    st.render_frame(frame, [head, input, hint], "scenario", t);
    let lines: Vec<Line> = st
        .visible(list.height)
        .map(|(k, e)| {
            let title = match &e.info {
                Ok((title, _)) => Span::raw(title.clone()),
                Err(_) => Span::styled("(invalid: see below)", t.error()),
            };
            let style = if k == st.selected { t.cursor() } else { t.base() };
            Line::from(vec![
                Span::styled(format!(" {:<24} ", file_name(&e.path)), style),
                title,
            ])
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
    let about_text = match st.entries.get(st.selected).map(|e| &e.info) {
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
}
