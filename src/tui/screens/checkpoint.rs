//! "Open checkpoint…": the `*.safetensors` files of a directory and a path prompt. A file that
//! loads opens the trained-model tracer ([`super::prompt`]); one that does not shows its
//! one-line error in a popup.

use super::prompt::Origin;
use super::train::dir_of;
use super::train::worker::Source;
use crate::model::{BUILTIN, TinyGpt, checkpoint};
use crate::tui::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct OpenCheckpoint {
    pub dir: PathBuf,
    /// `*.safetensors` files of `dir`, sorted, with their sizes in bytes.
    pub files: Vec<(PathBuf, u64)>,
    pub selected: usize,
    /// A path being typed; when not empty, Enter opens it instead of the highlighted file.
    pub input: String,
}

/// What the user asked for.
#[derive(Debug)]
pub enum Pick {
    Stay,
    Back,
    /// The checkpoint loaded: its weights and where they came from.
    Loaded(Box<TinyGpt>, Origin),
    /// It did not: the file and the one-line reason.
    Failed(String),
}

impl OpenCheckpoint {
    pub fn new(dir: PathBuf) -> OpenCheckpoint {
        let mut files: Vec<(PathBuf, u64)> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
                    .map(|p| {
                        let len = std::fs::metadata(&p).map_or(0, |m| m.len());
                        (p, len)
                    })
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        OpenCheckpoint {
            dir,
            files,
            selected: 0,
            input: String::new(),
        }
    }

    pub fn key(&mut self, key: KeyEvent) -> Pick {
        let n = self.files.len();
        match key.code {
            KeyCode::Esc if !self.input.is_empty() => self.input.clear(),
            KeyCode::Esc => return Pick::Back,
            KeyCode::Up if n > 0 => self.selected = (self.selected + n - 1) % n,
            KeyCode::Down if n > 0 => self.selected = (self.selected + 1) % n,
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::Enter => {
                let path = if self.input.trim().is_empty() {
                    match self.files.get(self.selected) {
                        Some((p, _)) => p.clone(),
                        None => return Pick::Stay,
                    }
                } else {
                    PathBuf::from(self.input.trim())
                };
                return open(&path);
            }
            KeyCode::Char(c) if self.input.len() < 4096 => self.input.push(c),
            _ => {}
        }
        Pick::Stay
    }
}

/// Loads a checkpoint written by `attn-trace train --save` (or the train screen's `s`).
pub fn open(path: &Path) -> Pick {
    match checkpoint::load(path) {
        Ok(loaded) => {
            let dataset = loaded.state.as_ref().and_then(|s| {
                let name = s.dataset.as_str();
                if BUILTIN.iter().any(|(n, _)| *n == name) {
                    Some(Source::Builtin(name.to_string()))
                } else {
                    Some(PathBuf::from(name)).filter(|p| p.is_file()).map(Source::File)
                }
            });
            let stem = path
                .file_stem()
                .map_or_else(|| "tinygpt".to_string(), |s| s.to_string_lossy().into_owned());
            let origin = Origin {
                label: format!("{} (step {})", path.display(), loaded.step),
                checkpoint: Some(path.to_path_buf()),
                step: loaded.step,
                dataset,
                dir: dir_of(path),
                stem,
            };
            Pick::Loaded(Box::new(loaded.model), origin)
        }
        Err(e) => Pick::Failed(e.to_string()),
    }
}

pub fn render(frame: &mut Frame, area: Rect, st: &OpenCheckpoint, theme: Theme) {
    let t = theme;
    let [head, list, input, hint] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(Span::styled(
            format!(" Open checkpoint · {}", st.dir.display()),
            t.title(),
        )),
        head,
    );
    let rows = list.height.saturating_sub(2) as usize;
    let first = st.selected.saturating_sub(rows.saturating_sub(1));
    let lines: Vec<Line> = if st.files.is_empty() {
        vec![Line::styled(
            "no *.safetensors files here: train one (menu → Train TinyGPT, s saves) or type a path below",
            t.dim(),
        )]
    } else {
        st.files
            .iter()
            .enumerate()
            .skip(first)
            .take(rows.max(1))
            .map(|(k, (p, len))| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let style = if k == st.selected { t.cursor() } else { t.base() };
                Line::from(vec![
                    Span::styled(format!(" {name:<40} "), style),
                    Span::styled(format!("{len} bytes"), t.dim()),
                ])
            })
            .collect()
    };
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" checkpoints ")),
        list,
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
