//! What "Open scenario…" and "Open checkpoint…" share: a folder's files of one extension, each
//! with what its screen shows about it, the highlighted one, and a path that can be typed
//! instead. Each screen renders its own list lines and acts on the path picked.

use crate::tui::theme::Theme;
use attn_trace_i18n::{msg, tr};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Span;
use ratatui::widgets::{Block, Paragraph};
use std::path::{Path, PathBuf};

/// One file of the folder and what was read about it.
#[derive(Debug)]
pub(crate) struct Entry<T> {
    pub path: PathBuf,
    pub info: T,
    /// Built into the binary (a shipped scenario or lesson, by file stem), not a file on disk:
    /// `path` is then its file name alone.
    pub builtin: Option<&'static str>,
}

/// Files built into the binary, `(file stem, text)`, and how to describe one from its text and
/// a name for errors.
pub(crate) struct Builtin<T> {
    pub files: &'static [(&'static str, &'static str)],
    pub describe: fn(&str, &str) -> T,
}

impl<T> std::fmt::Debug for Builtin<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Builtin({} files)", self.files.len())
    }
}

#[derive(Debug)]
pub(crate) struct FilePicker<T> {
    pub dir: PathBuf,
    /// The folder's files with the extension, sorted by path.
    pub entries: Vec<Entry<T>>,
    /// Its subfolders, sorted, then its parent (`..`): listed after the files.
    pub folders: Vec<PathBuf>,
    /// The highlighted line: a file (`< entries.len()`) or else a folder.
    pub selected: usize,
    /// A path being typed; when not empty, Enter opens it instead of the highlighted entry.
    pub input: String,
    ext: &'static str,
    describe: fn(&Path) -> T,
    /// The folder the picker opened on, where the built-in files are listed.
    root: PathBuf,
    builtin: Option<Builtin<T>>,
}

/// What the user asked for.
#[derive(Debug, PartialEq)]
pub(crate) enum Choice {
    Path(PathBuf),
    /// A file built into the binary, by file stem.
    Builtin(&'static str),
    Back,
    /// The keys overlay (`?` while no path is typed).
    Help,
}

/// The picker's keys, for its `?` overlay.
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("↑  /  ↓", msg!("highlight the previous / next line")),
    (
        "Enter",
        msg!("open the highlighted file, or enter the highlighted folder"),
    ),
    ("←", msg!("the parent folder")),
    ("any character", msg!("type a path instead (Enter opens it)")),
    ("Backspace", msg!("delete the last character of the typed path")),
    ("?", msg!("these keys (when no path is typed)")),
    ("Esc", msg!("clear the typed path, else go back")),
];

/// Longest path the prompt accepts.
const MAX_INPUT: usize = 4096;

/// The parent of `dir`: its last component removed, or `dir/..` resolved when it has none to
/// remove (`.`, `scenarios`).
fn parent(dir: &Path) -> PathBuf {
    match (dir.parent(), dir.file_name()) {
        (Some(p), Some(_)) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::fs::canonicalize(dir.join("..")).unwrap_or_else(|_| dir.join("..")),
    }
}

impl<T> FilePicker<T> {
    /// Lists `dir`'s `*.{ext}` files, sorted, each described by `describe`, and its folders. A
    /// folder that cannot be read lists nothing but its parent; a path can still be typed.
    pub(crate) fn new(dir: PathBuf, ext: &'static str, describe: fn(&Path) -> T) -> FilePicker<T> {
        let mut picker = FilePicker {
            root: dir.clone(),
            dir,
            entries: Vec::new(),
            folders: Vec::new(),
            selected: 0,
            input: String::new(),
            ext,
            describe,
            builtin: None,
        };
        picker.read();
        picker
    }

    /// The picker with `builtin`'s files listed after the files of the folder it opened on, each
    /// but those the folder has a file of the same name for (the file, which may have been
    /// edited, wins).
    #[must_use]
    pub(crate) fn with_builtin(mut self, builtin: Builtin<T>) -> FilePicker<T> {
        self.builtin = Some(builtin);
        self.read();
        self
    }

    /// The built-in files, after the folder's own, in the folder the picker opened on.
    fn add_builtin(&mut self) {
        let Some(b) = self.builtin.as_ref().filter(|_| self.dir == self.root) else {
            return;
        };
        let on_disk = |stem: &str| {
            self.entries
                .iter()
                .any(|e| e.path.file_stem().and_then(|s| s.to_str()) == Some(stem))
        };
        let shipped: Vec<Entry<T>> = b
            .files
            .iter()
            .filter(|(stem, _)| !on_disk(stem))
            .map(|&(stem, text)| Entry {
                path: PathBuf::from(format!("{stem}.{}", self.ext)),
                info: (b.describe)(text, stem),
                builtin: Some(stem),
            })
            .collect();
        self.entries.extend(shipped);
    }

    /// (Re)reads the folder.
    fn read(&mut self) {
        let listed: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        let mut files: Vec<PathBuf> = listed
            .iter()
            .filter(|p| !p.is_dir() && p.extension().is_some_and(|x| x == self.ext))
            .cloned()
            .collect();
        files.sort();
        let mut folders: Vec<PathBuf> = listed.into_iter().filter(|p| p.is_dir()).collect();
        folders.sort();
        folders.push(parent(&self.dir));
        self.entries = files
            .into_iter()
            .map(|path| Entry {
                info: (self.describe)(&path),
                path,
                builtin: None,
            })
            .collect();
        self.folders = folders;
        self.selected = 0;
        self.add_builtin();
    }

    /// Lines of the list: the files, then the folders.
    pub(crate) fn len(&self) -> usize {
        self.entries.len() + self.folders.len()
    }

    /// The highlighted folder, when the highlight is on one.
    pub(crate) fn selected_folder(&self) -> Option<&PathBuf> {
        self.selected
            .checked_sub(self.entries.len())
            .and_then(|k| self.folders.get(k))
    }

    /// Is folder `k` of [`FilePicker::folders`] the parent?
    pub(crate) fn is_parent(&self, k: usize) -> bool {
        k + 1 == self.folders.len()
    }

    /// Shows `dir` instead.
    fn enter(&mut self, dir: PathBuf) {
        self.dir = dir;
        self.read();
    }

    /// ↑/↓ move the highlight (wrapping), typing edits the path, Enter picks the typed path or
    /// else the highlighted file or folder, ← goes to the parent folder, `?` with nothing typed
    /// asks for the keys, Esc clears the typed path and then goes back.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Option<Choice> {
        let n = self.len();
        match key.code {
            KeyCode::Esc if !self.input.is_empty() => self.input.clear(),
            KeyCode::Esc => return Some(Choice::Back),
            KeyCode::Up if n > 0 => self.selected = (self.selected + n - 1) % n,
            KeyCode::Down if n > 0 => self.selected = (self.selected + 1) % n,
            KeyCode::Left => self.enter(parent(&self.dir)),
            KeyCode::Backspace => {
                self.input.pop();
            }
            KeyCode::Enter if !self.input.trim().is_empty() => {
                let path = PathBuf::from(self.input.trim());
                if path.is_dir() {
                    self.input.clear();
                    self.enter(path);
                    return None;
                }
                return Some(Choice::Path(path));
            }
            KeyCode::Enter => {
                if let Some(dir) = self.selected_folder().cloned() {
                    self.enter(dir);
                    return None;
                }
                return self.entries.get(self.selected).map(|e| match e.builtin {
                    Some(stem) => Choice::Builtin(stem),
                    None => Choice::Path(e.path.clone()),
                });
            }
            KeyCode::Char('?') if self.input.is_empty() => return Some(Choice::Help),
            KeyCode::Char(c) if self.input.len() < MAX_INPUT => self.input.push(c),
            _ => {}
        }
        None
    }

    /// The lines a bordered list of `height` lines shows, with their index (files first, then
    /// folders), scrolled so the highlighted one is in view.
    pub(crate) fn visible(&self, height: u16) -> std::ops::Range<usize> {
        let rows = (height.saturating_sub(2) as usize).max(1);
        let first = self.selected.saturating_sub(rows.saturating_sub(1));
        first..(first + rows).min(self.len())
    }

    /// Line `k` of the list when it is a folder: `mistakes/` or `../ (parent folder)`.
    pub(crate) fn folder_line(&self, k: usize) -> Option<String> {
        let f = k.checked_sub(self.entries.len())?;
        let path = self.folders.get(f)?;
        Some(if self.is_parent(f) {
            tr!("../  (parent folder)").to_string()
        } else {
            format!("{}/", file_name(path))
        })
    }

    /// The folder as the title names it: the one the program runs in by its path, not `.`.
    fn shown_dir(&self) -> PathBuf {
        if self.dir == Path::new(".") {
            std::env::current_dir().unwrap_or_else(|_| self.dir.clone())
        } else {
            self.dir.clone()
        }
    }

    /// The title line (`Open {what} · dir`), the typed path's box and the key hint.
    pub(crate) fn render_frame(&self, frame: &mut Frame, [head, input, hint]: [Rect; 3], what: &str, t: Theme) {
        let title = tr!(
            " Open {what} · {dir}",
            what = attn_trace_i18n::text_of(what),
            dir = self.shown_dir().display()
        );
        frame.render_widget(Paragraph::new(Span::styled(title, t.title())), head);
        frame.render_widget(
            Paragraph::new(format!("{}▏", self.input)).block(Block::bordered().title(tr!(" or type a path "))),
            input,
        );
        let keys = if hint.width >= 64 {
            tr!(" ↑/↓ choose · Enter open · ← parent folder · ? keys · Esc back")
        } else {
            tr!(" ↑↓ choose · Enter open · ← up · ? keys")
        };
        frame.render_widget(Paragraph::new(Span::styled(keys, t.dim())), hint);
    }
}

/// The file name of a listed path, for its line.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
