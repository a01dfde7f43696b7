//! Your own kernel beside the reference (`tui SCENARIO --mine TRACE`, or the menu's "Grade your
//! own kernel…"): the learner's accesses stepped one by one, the reference standing on the same
//! cell (`analysis::beside`), each side's source with the line that ran, and the grade.

use super::picker::FilePicker;
use crate::tui::theme::Theme;
use crate::tui::widgets::code::{Marks, draw_lines, least_indent};
use crate::tui::widgets::{draw_wrapped, put, wrapped_rows};
use attn_trace_analysis::beside::Beside;
use attn_trace_analysis::format::thousands;
use attn_trace_analysis::learner::bind::Bindings;
use attn_trace_analysis::learner::check;
use attn_trace_analysis::learner::import::{self, Reader};
use attn_trace_analysis::learner::reference::Reference;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::source;
use attn_trace_i18n::{msg, tr};
use crossterm::event::{KeyCode, KeyEvent, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};
use std::io::{BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The view's keys, shown on `?`.
pub(crate) const KEYS: &[(&str, &str)] = &[
    (
        "n →  /  p ←",
        msg!("your next / previous access; the reference follows by cell"),
    ),
    ("PgDn / PgUp", msg!("100 accesses forward / back")),
    ("Home / End", msg!("your first / last access")),
    ("d", msg!("to the first divergence")),
    ("e  /  E", msg!("to your next / previous access error")),
    ("wheel", msg!("one access forward / back")),
    ("?", msg!("these keys")),
    ("Esc  /  q", msg!("back")),
];

/// What the app should do after a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Stay,
    Back,
    Help,
}

/// The learner's run beside the reference.
#[derive(Debug)]
pub struct Mine {
    pub(crate) beside: Beside,
    /// The scenario and trace as the user named them.
    pub(crate) scenario: String,
    pub(crate) trace: String,
    /// The learner's access under the cursor.
    pub(crate) n: usize,
    pub(crate) message: Option<String>,
    /// The learner's source files (by file id), read once; `None` when unreadable.
    sources: Vec<Option<String>>,
}

impl Mine {
    /// Reads `trace` and grades it against `scenario`'s reference pass (the variant and pass its
    /// header names, else the scenario's focus), its buffers placed by the bindings file `bind`
    /// (else the header's): everything `tui --mine` needs, or why not, in one line. The header is
    /// checked as `grade` checks it ([`check::header`]); the trace is opened once, without
    /// blocking, and must be a regular file.
    pub fn load(scenario: &Scenario, scenario_path: &Path, trace: &Path, bind: Option<&Path>) -> Result<Mine, String> {
        let bindings = bind.map(Bindings::load).transpose()?;
        let shown = trace.display().to_string();
        let file = import::open(trace, &shown).map_err(|e| e.to_string())?;
        // each of the three readings starts again from the top of the one file opened
        let open = || {
            let again = file
                .try_clone()
                .and_then(|mut f| f.seek(SeekFrom::Start(0)).map(|_| f))
                .map_err(|e| import::ImportError {
                    path: shown.clone(),
                    line: 0,
                    message: tr!("cannot read the trace: {e}", e).to_string(),
                })?;
            Reader::new(BufReader::new(again), &shown)
        };
        let beside = Beside::load(
            scenario,
            |h| {
                let (variant, pass) = check::header(h, &shown, scenario, scenario_path, check::Asked::default())?;
                Reference::new(scenario, variant, pass, h.input)
                    .map_err(|e| format!("{}: {e}", scenario_path.display()))
            },
            bindings.as_ref(),
            open,
        )?;
        let dir = trace.parent().map(Path::to_path_buf).unwrap_or_default();
        let sources = beside
            .files
            .iter()
            .map(|f| {
                [PathBuf::from(f), dir.join(f)]
                    .iter()
                    .find_map(|p| attn_trace_core::files::input::read(p, 4 << 20, "a source file").ok())
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
            })
            .collect();
        let n = beside.divergence().and_then(|(m, _)| m).unwrap_or(0);
        Ok(Mine {
            beside,
            scenario: scenario_path.display().to_string(),
            trace: shown,
            n,
            message: None,
            sources,
        })
    }
}

impl Mine {
    fn go(&mut self, to: Option<usize>, none: &str) {
        match to {
            Some(n) if n < self.beside.accesses.len() => self.n = n,
            _ => self.message = Some(none.to_string()),
        }
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        let len = self.beside.accesses.len();
        if len == 0 {
            return match key.code {
                KeyCode::Char('?') => Outcome::Help,
                KeyCode::Esc | KeyCode::Char('q') => Outcome::Back,
                _ => Outcome::Stay,
            };
        }
        let n = self.n;
        match key.code {
            KeyCode::Char('n') | KeyCode::Right => self.go(Some(n + 1), tr!("your last access")),
            KeyCode::Char('p') | KeyCode::Left => self.go(n.checked_sub(1), tr!("your first access")),
            KeyCode::PageDown => self.n = (n + 100).min(len - 1),
            KeyCode::PageUp => self.n = n.saturating_sub(100),
            KeyCode::Home => self.n = 0,
            KeyCode::End => self.n = len - 1,
            KeyCode::Char('d') => match self.beside.divergence() {
                Some((Some(m), _)) => self.n = m,
                Some((None, r)) => {
                    self.message = Some(
                        tr!(
                            "you never write the divergent cell; the reference writes it at its event #{r}",
                            r
                        )
                        .to_string(),
                    );
                }
                None => self.message = Some(tr!("no divergence: every cell agrees with the reference").into()),
            },
            KeyCode::Char('e') => {
                let next = self.beside.errors().into_iter().find(|&e| e > n);
                self.go(next, tr!("no access error after this one"));
            }
            KeyCode::Char('E') => {
                let prev = self.beside.errors().into_iter().rev().find(|&e| e < n);
                self.go(prev, tr!("no access error before this one"));
            }
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Back,
            _ => {}
        }
        Outcome::Stay
    }

    pub(crate) fn mouse(&mut self, m: MouseEvent) {
        match m.kind {
            MouseEventKind::ScrollDown => self.go(Some(self.n + 1), tr!("your last access")),
            MouseEventKind::ScrollUp => self.go(self.n.checked_sub(1), tr!("your first access")),
            _ => {}
        }
    }
}

/// A code panel over `text` with `line` marked, titled `title`.
fn code_panel(frame: &mut Frame, area: Rect, title: String, text: Option<&str>, line: Option<usize>, t: Theme) {
    let block = Block::bordered().title(title).border_style(t.border(false));
    let inner = block.inner(area);
    block.render(area, frame.buffer_mut());
    let Some(text) = text else {
        put(
            frame.buffer_mut(),
            inner,
            inner.x,
            inner.y,
            tr!("(the source file cannot be read from here)"),
            t.dim(),
        );
        return;
    };
    let lines: Vec<&str> = text.lines().collect();
    let h = inner.height as usize;
    let current = line.unwrap_or(1);
    let first = current
        .saturating_sub(1)
        .saturating_sub(h / 3)
        .min(lines.len().saturating_sub(h));
    // dedent by what every line in view shares, as the tracer's code panel does: each line
    // keeps its indentation relative to the others (Python's nesting is its meaning), and the
    // line that ran, however deep and long, is wrapped rather than cut (draw_lines)
    let shift = least_indent(&lines[first.min(lines.len())..], h);
    let marks = Marks {
        current: line,
        marked: &[],
        loops: &[],
    };
    draw_lines(frame.buffer_mut(), inner, &lines, first, shift, &marks, t);
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &Mine, theme: Theme) {
    let t = theme;
    let b = &st.beside;
    let g = &b.grade;
    // the grade in three lines
    let wrong: Vec<String> = g
        .results
        .iter()
        .filter(|r| r.wrong + r.missing + r.misread > 0)
        .map(|r| format!("{} {}/{}", r.buffer.name(), r.wrong + r.missing + r.misread, r.cells))
        .collect();
    let results = if wrong.is_empty() {
        tr!("1. results right").to_string()
    } else {
        tr!("1. wrong cells: {list}", list = wrong.join(tr!(", "))).to_string()
    };
    let errors = tr!(
        "2. {n} access errors in {events} accesses (e jumps)",
        n = g.errors(),
        events = thousands(g.events)
    );
    let divergence = match (&g.divergence, &g.mistake) {
        (None, _) => tr!("3. no divergence").to_string(),
        (Some(d), m) => {
            let mut s = tr!(
                "3. first divergence (d): {name}[{index}], reference {reference}, yours {mine}",
                name = d.cell.buffer.name(),
                index = d.cell.index,
                reference = value(d.cell.reference),
                mine = d.cell.mine.map_or_else(|| tr!("never written").to_string(), value)
            )
            .to_string();
            if let Some(m) = m {
                s.push_str(&tr!(" · mistake {number}: {name}", number = m.number, name = m.name));
            }
            if let Some(h) = g.hints.first() {
                s.push_str(" · ");
                s.push_str(h);
            }
            s
        }
    };
    let grade_lines = [
        Line::styled(results, if wrong.is_empty() { t.base() } else { t.error() }),
        Line::styled(errors, if g.errors() == 0 { t.base() } else { t.error() }),
        Line::styled(divergence, t.base()),
    ];
    // the grade's lines as they wrap, up to a third of the screen: the panels keep the rest
    let grade_rows = wrapped_rows(&grade_lines, area.width).clamp(3, (area.height / 3).max(3));
    let [head, panels, accesses, grade, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        // the two accesses, the reference's verdict wrapped once when it is long
        Constraint::Length(3),
        Constraint::Length(grade_rows),
        Constraint::Length(1),
    ])
    .areas(area);
    let verdict = if g.correct() {
        Span::styled(tr!(" right "), t.key())
    } else {
        Span::styled(tr!(" wrong "), t.error())
    };
    let title = tr!(
        "Yours beside the reference: {trace} · {variant} {pass} of {scenario} ",
        trace = st.trace,
        variant = g.variant.name(),
        pass = g.pass.name(),
        scenario = st.scenario
    );
    frame.render_widget(
        Paragraph::new(Line::from(vec![Span::styled(title, t.title()), verdict])),
        head,
    );

    let [left, right] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(panels);
    let a = b.accesses.get(st.n);
    let matched = b.matched(st.n);
    match a {
        Some(a) => {
            let file = b.files.get(a.file as usize).map_or("", String::as_str);
            let text = st.sources.get(a.file as usize).and_then(Option::as_deref);
            code_panel(
                frame,
                left,
                tr!(" Yours · {file}:{line} ", file = source::short(file), line = a.line),
                text,
                Some(a.line as usize),
                t,
            );
        }
        None => code_panel(frame, left, tr!(" Yours ").into(), Some(""), None, t),
    }
    let reference = &b.reference;
    match matched.and_then(|r| reference.event(r)) {
        Some(e) => {
            let (file, line) = (e.file, e.line as usize);
            code_panel(
                frame,
                right,
                tr!(" Reference · {file}:{line} ", file = source::short(file), line),
                source::source(file),
                Some(line),
                t,
            );
        }
        None => code_panel(frame, right, tr!(" Reference ").into(), Some(""), None, t),
    }

    // the two accesses, and how they compare: the same cell, or for a read the cell the
    // reference reads for the same write
    let mut lines = Vec::new();
    if let Some(a) = a {
        let name = b.name(st.n);
        lines.push(Line::from(vec![
            Span::styled(tr!("yours #{n} ", n = st.n), t.dim()),
            Span::styled(
                format!(
                    "{} {name}[{}] = {}  ({})",
                    a.op.name(),
                    a.offset,
                    value(a.value),
                    b.label(st.n)
                ),
                t.base(),
            ),
        ]));
        let here = b.cells.get(st.n).copied().flatten();
        let line = match matched.and_then(|r| reference.event(r)) {
            Some(e) => {
                let same_cell = here == Some((e.buf, e.offset));
                let verdict = if b.is_stray(st.n) {
                    let feeds = b
                        .feeds(st.n)
                        .map(|(fb, fo)| reference.cell_label(fb, fo))
                        .unwrap_or_default();
                    Span::styled(
                        tr!(
                            "  ✗ not this cell: for {feeds} the reference reads {cell}",
                            feeds,
                            cell = reference.cell_label(e.buf, e.offset)
                        ),
                        t.error(),
                    )
                } else if !same_cell {
                    Span::styled(
                        tr!("  another cell: {cell}", cell = reference.describe(e.buf, e.offset)),
                        t.dim(),
                    )
                } else if e.value.to_bits() == a.value.to_bits()
                    || attn_trace_analysis::grade::agrees(a.value, e.value, e.value.abs().max(1.0))
                {
                    Span::styled(tr!("  same value"), t.dim())
                } else {
                    Span::styled(tr!("  ✗ the values differ"), t.error())
                };
                let number = if e.layer > 0 {
                    tr!("reference #{n} (layer {l}) ", n = e.local, l = e.layer).to_string()
                } else {
                    tr!("reference #{n} ", n = e.local).to_string()
                };
                let per = reference.get(e.buf).map_or(1, |c| c.per_layer().max(1));
                Line::from(vec![
                    Span::styled(number, t.dim()),
                    Span::styled(
                        format!(
                            "{} {}[{}] = {}",
                            e.op.name(),
                            e.buf.name(),
                            e.offset % per,
                            value(e.value)
                        ),
                        t.base(),
                    ),
                    verdict,
                ])
            }
            None => Line::styled(
                tr!(
                    "the reference never {op}s {name}[{offset}]",
                    op = a.op.name(),
                    name,
                    offset = a.offset
                ),
                t.error(),
            ),
        };
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), accesses);

    draw_wrapped(frame.buffer_mut(), grade, &grade_lines);
    let status_line = match &st.message {
        Some(m) => Line::styled(m.clone(), t.error()),
        None => Line::styled(tr!("n/p step · d divergence · e/E errors · ? keys · q back"), t.dim()),
    };
    frame.render_widget(Paragraph::new(status_line), status);
}

fn value(x: f32) -> String {
    attn_trace_analysis::format::num(x)
}

/// What the trace picker says of a `*.jsonl` file: its header's scenario, variant and pass.
pub(crate) type TraceSummary = Result<(String, String), String>;

/// `*.jsonl` traces of `dir`, each described by its header.
pub(crate) type PickTrace = FilePicker<TraceSummary>;

pub(crate) fn list(dir: PathBuf) -> PickTrace {
    FilePicker::new(dir, "jsonl", summary)
}

/// The picker's line for a trace: its header's scenario, variant and pass, or what is wrong
/// with it without the path (the file's name begins the line).
fn summary(path: &Path) -> TraceSummary {
    header_of(path).map_err(|e| e.message)
}

/// What a trace's header says, read from a regular file only (opened without blocking: a FIFO
/// named `*.jsonl` is described, not waited on) and at most one line of it.
fn header_of(path: &Path) -> Result<(String, String), import::ImportError> {
    let shown = path.display().to_string();
    let file = import::open(path, &shown)?;
    let r = Reader::new(BufReader::new(file), &shown)?;
    let h = r.header();
    let scenario = h.scenario.clone().ok_or_else(|| import::ImportError {
        path: shown.clone(),
        line: 1,
        message: tr!("its header names no scenario").to_string(),
    })?;
    let what = format!(
        "{} {}",
        h.variant.map_or("?", attn_trace_core::kernels::Variant::name),
        h.pass.map_or("?", attn_trace_core::trace::Pass::name)
    );
    Ok((scenario, what))
}

/// Opens the trace picked: the scenario its header names, graded.
pub(crate) fn open_picked(path: &Path) -> Result<Mine, String> {
    let (scenario, _) = header_of(path).map_err(|e| e.to_string())?;
    let scenario_path = PathBuf::from(&scenario);
    let s = Scenario::load(&scenario_path).map_err(|e| e.to_string())?;
    Mine::load(&s, &scenario_path, path, None)
}

pub(crate) fn render_picker(frame: &mut Frame, area: Rect, st: &PickTrace, theme: Theme) {
    let t = theme;
    let [head, list, input, hint] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(area);
    st.render_frame(frame, [head, input, hint], msg!("trace"), t);
    let mut lines: Vec<Line> = st
        .visible(list.height)
        .map(|k| {
            let style = if k == st.selected { t.cursor() } else { t.base() };
            if let Some(folder) = st.folder_line(k) {
                return Line::from(Span::styled(format!(" {folder:<40} "), style));
            }
            let e = &st.entries[k];
            let about = match &e.info {
                Ok((scenario, what)) => Span::styled(format!("{what} · {}", import::echo(scenario)), t.dim()),
                Err(why) => Span::styled(why.clone(), t.error()),
            };
            Line::from(vec![
                Span::styled(format!(" {:<32} ", super::picker::file_name(&e.path)), style),
                about,
            ])
        })
        .collect();
    if st.entries.is_empty() {
        lines.insert(
            0,
            Line::styled(
                tr!("no *.jsonl traces here. Record one: attn-trace inputs SCENARIO -o inputs.txt, run your kernel with a recorder (recorders/), then open its trace here (docs/your_kernel.md)"),
                t.dim(),
            ),
        );
    }
    // one row a file, cut at the edge (Enter shows a refusal whole): a wrapped row would push
    // the files below it, and the highlighted one, off the list; only the hint of an empty
    // folder, above its subfolders, wraps
    let paragraph = Paragraph::new(lines);
    let paragraph = if st.entries.is_empty() {
        paragraph.wrap(Wrap { trim: false })
    } else {
        paragraph
    };
    frame.render_widget(paragraph, list);
}
