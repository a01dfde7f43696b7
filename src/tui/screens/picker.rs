//! What "Open scenario…" and "Open checkpoint…" share: a folder's files of one extension, each
//! with what its screen shows about it, the highlighted one, and a path that can be typed
//! instead. Each screen renders its own list lines and acts on the path picked.

use crate::tui::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Block, Paragraph};
use std::path::{Path, PathBuf};

/// One file of the folder and what was read about it.
#[derive(Debug)]
pub struct Entry<T> {
    pub path: PathBuf,
    pub info: T,
}

#[derive(Debug)]
pub struct FilePicker<T> {
    pub dir: PathBuf,
    /// The folder's files with the extension, sorted by path.
    pub entries: Vec<Entry<T>>,
    pub selected: usize,
    /// A path being typed; when not empty, Enter opens it instead of the highlighted entry.
    pub input: String,
}

/// What the user asked for.
#[derive(Debug, PartialEq)]
pub enum Choice {
    Path(PathBuf),
    Back,
}

/// Longest path the prompt accepts.
const MAX_INPUT: usize = 4096;

impl<T> FilePicker<T> {
    /// Lists `dir`'s `*.{ext}` files, sorted, each described by `info`. A folder that cannot be
    /// read lists nothing; a path can still be typed.
    pub fn new(dir: PathBuf, ext: &str, info: impl Fn(&Path) -> T) -> FilePicker<T> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == ext))
                    .collect()
            })
            .unwrap_or_default();
        paths.sort();
        let entries = paths
            .into_iter()
            .map(|path| Entry {
                info: info(&path),
                path,
            })
            .collect();
        FilePicker {
            dir,
            entries,
            selected: 0,
            input: String::new(),
        }
    }

    /// ↑/↓ move the highlight (wrapping), typing edits the path, Enter picks the typed path or
    /// else the highlighted entry, Esc clears the typed path and then goes back.
    pub fn key(&mut self, key: KeyEvent) -> Option<Choice> {
        let n = self.entries.len();
        match key.code {
            KeyCode::Esc if !self.input.is_empty() => self.input.clear(),
            KeyCode::Esc => return Some(Choice::Back),
            KeyCode::Up if n > 0 => self.selected = (self.selected + n - 1) % n,
            KeyCode::Down if n > 0 => self.selected = (self.selected + 1) % n,
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::Enter if !self.input.trim().is_empty() => {
                return Some(Choice::Path(PathBuf::from(self.input.trim())));
            }
            KeyCode::Enter => return self.entries.get(self.selected).map(|e| Choice::Path(e.path.clone())),
            KeyCode::Char(c) if self.input.len() < MAX_INPUT => self.input.push(c),
            _ => {}
        }
        None
    }

    /// The entries a bordered list of `height` lines shows, with their index, scrolled so the
    /// highlighted one is in view.
    pub fn visible(&self, height: u16) -> impl Iterator<Item = (usize, &Entry<T>)> {
        let rows = height.saturating_sub(2) as usize;
        let first = self.selected.saturating_sub(rows.saturating_sub(1));
        self.entries.iter().enumerate().skip(first).take(rows.max(1))
    }

    /// The title line (`Open {what} · dir`), the typed path's box and the key hint.
    pub fn render_frame(&self, frame: &mut Frame, [head, input, hint]: [Rect; 3], what: &str, t: Theme) {
        let title = format!(" Open {what} · {}", self.dir.display());
        frame.render_widget(Paragraph::new(Span::styled(title, t.title())), head);
        frame.render_widget(
            Paragraph::new(format!("{}▏", self.input)).block(Block::bordered().title(" or type a path ")),
            input,
        );
        frame.render_widget(
            Paragraph::new(Span::styled(" ↑/↓ choose · Enter open · Esc back", t.dim())),
            hint,
        );
    }
}

/// The file name of a listed path, for its line.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
