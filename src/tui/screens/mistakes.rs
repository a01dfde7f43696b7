//! The mistakes gallery and the side-by-side view: the correct and the mistaken run of the same
//! input stepping together, the first event where they part, and what the mistake does
//! downstream, in numbers read from the two runs' tensors.
//!
//! The two traces have different phases (a mistaken run may lack the output projection or the
//! dropout pass, or replace the input projection by `q = k = v = x`), so they are laid on one
//! timeline of phases: the phases both runs make are matched in order (a longest common
//! subsequence of the two phase lists), and a phase only one run makes has the other run wait,
//! saying why. The timeline is built once per pair of traces; a step, a phase jump or the
//! divergence is then a binary search or a walk over the few phases, never over the events.

use super::menu;
use crate::tui::theme::Theme;
use crate::tui::traced_scenario::TracedScenario;
use crate::tui::widgets::{CellRef, Ctx, bar, code, cols, cut, log, memory, pad};
use attn_trace_analysis::format::phase_title;
use attn_trace_analysis::mistakes::{
    CORRECT, MISTAKEN, Note, Place, Timeline, divergence, downstream, missing_why, number, phases_of, removed_by,
    values_part,
};
use attn_trace_core::engine::first_divergence;
use attn_trace_core::kernels::Variant;
use attn_trace_core::kernels::attention_mistakes::{Mistake, Mistakes};
use attn_trace_core::scenario::{self, Scenario};
use attn_trace_core::source;
use attn_trace_core::trace::{Event, Phase, Trace};
use attn_trace_i18n::{msg, tr};
use crossterm::event::{KeyCode, KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The side-by-side view's keys, shown on `?`.
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("n →  /  p ←", msg!("both runs one step forward / back")),
    ("j ↓  /  k ↑", msg!("next / previous iteration of the innermost loop")),
    ("J  /  K", msg!("next / previous iteration of the enclosing loop")),
    ("]  /  [", msg!("next / previous phase")),
    ("Home / End", msg!("first / last step   (PgDn/PgUp: ±100)")),
    ("d", msg!("both runs to the first event where they diverge")),
    ("t", msg!("code ↔ memory in each half (small screens)")),
    ("Tab", msg!("baseline ↔ MHA, when the scenario runs both")),
    ("Enter", msg!("open the tracer on the correct run here")),
    ("wheel", msg!("one step forward / back")),
    ("?", msg!("these keys")),
    ("Esc  /  q", msg!("back to the gallery (or the menu)")),
];

/// The gallery's keys, shown on `?`.
pub(crate) const GALLERY_KEYS: &[(&str, &str)] = &[
    ("↑ k  /  ↓ j", msg!("previous / next mistake")),
    ("Home / End", msg!("first / last mistake")),
    ("Enter, Space", msg!("open the highlighted mistake side by side")),
    ("1-7", msg!("open mistake 1 to 7 directly")),
    ("click", msg!("open the mistake under the pointer")),
    ("?", msg!("these keys")),
    ("Esc  /  q", msg!("back to the menu")),
];

/// Which panel each half shows when the screen is too small for both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Panel {
    Code,
    Memory,
}

/// What the app should do after a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Stay,
    Back,
    Help,
    /// Open the tracer on the correct run of this variant at this event.
    Trace(Variant, usize),
    /// `Tab` asked for a kernel the scenario does not trace.
    NotTraced(Variant),
}

/// The side-by-side view of one variant's correct and mistaken runs.
#[derive(Debug)]
pub(crate) struct SideBySide {
    pub traced: Arc<TracedScenario>,
    /// Index of the variant in `traced.runs` and `traced.mistaken`.
    pub k: usize,
    pub timeline: Timeline,
    /// The current step; always `< timeline.len` when it has steps.
    pub t: usize,
    /// The first event where the two traces differ (`engine::first_divergence`).
    pub diverges_at: Option<usize>,
    /// The downstream panel, computed once from the two runs' tensors.
    pub report: Vec<Note>,
    pub message: Option<String>,
    pub panel: Panel,
}

impl SideBySide {
    /// The view on `traced`'s first variant (its focus's, else MHA, else the first), or `None`
    /// when the scenario has no mistakes.
    pub(crate) fn new(traced: Arc<TracedScenario>) -> Option<SideBySide> {
        let k = traced
            .first_variant()
            .and_then(|v| traced.runs.iter().position(|r| r.variant == v))
            .unwrap_or(0);
        let mut view = SideBySide {
            traced,
            k,
            timeline: Timeline::default(),
            t: 0,
            diverges_at: None,
            report: Vec::new(),
            message: None,
            panel: Panel::Code,
        };
        view.load(k).then_some(view)
    }

    /// Switches to variant `k`: its timeline, divergence and downstream report.
    fn load(&mut self, k: usize) -> bool {
        let traced = Arc::clone(&self.traced);
        let (Some(good), Some(bad)) = (traced.runs.get(k), traced.mistaken.get(k)) else {
            return false;
        };
        let (Some(a), Some(b)) = (&good.trace, &bad.trace) else {
            return false;
        };
        self.k = k;
        self.timeline = Timeline::new([a, b]);
        self.diverges_at = first_divergence(a, b);
        self.report = downstream(good, bad, &traced.mask);
        self.t = 0;
        true
    }

    pub(crate) fn variant(&self) -> Variant {
        self.traced.runs.get(self.k).map_or(Variant::Mha, |r| r.variant)
    }

    /// The two traces, correct first.
    pub(crate) fn traces(&self) -> Option<[&Trace; 2]> {
        let a = self.traced.runs.get(self.k)?.trace.as_ref()?;
        let b = self.traced.mistaken.get(self.k)?.trace.as_ref()?;
        Some([a, b])
    }

    pub(crate) fn mistakes(&self) -> Mistakes {
        self.traced.mistaken.get(self.k).map_or(Mistakes::NONE, |r| r.mistakes)
    }

    /// Where each run is at the current step.
    pub(crate) fn places(&self) -> [Place; 2] {
        [CORRECT, MISTAKEN].map(|side| self.timeline.place(self.t, side))
    }

    /// The step of the first divergence: where the correct run reaches that event (or the
    /// mistaken run, when the correct one ended first). When the runs first part in what they
    /// do but not in a value (mistake 7), the step where their values part.
    pub(crate) fn divergence_step(&self) -> Option<usize> {
        let n = self.diverges_at?;
        let [a, b] = self.traces()?;
        if let Some(v) = values_part(a, b, n) {
            return self.timeline.step_of(CORRECT, v.correct_event);
        }
        let side = if n < a.len() { CORRECT } else { MISTAKEN };
        self.timeline.step_of(side, n)
    }

    fn go(&mut self, to: Option<usize>, none: &str) {
        match to {
            Some(t) if t < self.timeline.len => self.t = t,
            _ => self.message = Some(none.to_string()),
        }
    }

    /// The run the loop keys follow: the correct one where it has the phase, else the mistaken.
    fn lead(&self) -> usize {
        match self.places() {
            [Place::At(_), _] => CORRECT,
            _ => MISTAKEN,
        }
    }

    /// `j`/`k`/`J`/`K`: the lead run's next or previous iteration of the loop `up` levels out.
    fn iteration(&mut self, forward: bool, up: usize) {
        let Some(traces) = self.traces() else { return };
        let side = self.lead();
        let trace = traces[side];
        let n = self.places()[side].event();
        let to = if forward {
            trace.next_iteration(n, up)
        } else {
            trace.prev_iteration(n, up)
        };
        let step = to.and_then(|e| self.timeline.step_of(side, e));
        let none = match (forward, up == 0) {
            (true, true) => tr!("no next iteration"),
            (true, false) => tr!("no next iteration of the enclosing loop"),
            (false, true) => tr!("no previous iteration"),
            (false, false) => tr!("no previous iteration of the enclosing loop"),
        };
        self.go(step, none);
    }

    fn phase_jump(&mut self, forward: bool) {
        let g = self.timeline.segment_at(self.t);
        let segs = &self.timeline.segments;
        let to = if forward {
            segs.get(g + 1).map(|s| s.t0)
        } else if self.t > segs.get(g).map_or(0, |s| s.t0) {
            segs.get(g).map(|s| s.t0)
        } else {
            g.checked_sub(1).map(|p| segs[p].t0)
        };
        let none = if forward {
            tr!("this is the last phase")
        } else {
            tr!("this is the first phase")
        };
        self.go(to, none);
    }

    /// `d`: both runs to the first event where they differ, described on the status line.
    fn jump_to_divergence(&mut self) {
        let Some([a, b]) = self.traces() else { return };
        let (Some(d), Some(step)) = (divergence(a, b), self.divergence_step()) else {
            self.message = Some(tr!("the two runs never diverge: every event is the same").into());
            return;
        };
        self.t = step;
        self.message = Some(d.to_string());
    }

    /// The scenario's next kernel; the kernel asked for when the scenario traces no other.
    fn toggle_variant(&mut self) -> Result<(), Variant> {
        let n = self.traced.runs.len().min(self.traced.mistaken.len());
        if n < 2 {
            return Err(self.variant().desc().beside);
        }
        let phase = self
            .timeline
            .segments
            .get(self.timeline.segment_at(self.t))
            .map(|s| s.phase);
        let k = (self.k + 1) % n;
        if self.load(k) {
            // the same phase in the other kernel, from its start
            self.t = self
                .timeline
                .segments
                .iter()
                .find(|s| Some(s.phase) == phase)
                .map_or(0, |s| s.t0);
        }
        Ok(())
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        if self.timeline.is_empty() {
            return match key.code {
                KeyCode::Char('?') => Outcome::Help,
                KeyCode::Esc | KeyCode::Char('q') => Outcome::Back,
                _ => Outcome::Stay,
            };
        }
        let (t, last) = (self.t, self.timeline.len - 1);
        match key.code {
            KeyCode::Char('n') | KeyCode::Right => self.go(Some(t + 1), "last step of both runs"),
            KeyCode::Char('p') | KeyCode::Left => self.go(t.checked_sub(1), "first step of both runs"),
            KeyCode::Char('j') | KeyCode::Down => self.iteration(true, 0),
            KeyCode::Char('k') | KeyCode::Up => self.iteration(false, 0),
            KeyCode::Char('J') => self.iteration(true, 1),
            KeyCode::Char('K') => self.iteration(false, 1),
            KeyCode::Char(']') => self.phase_jump(true),
            KeyCode::Char('[') => self.phase_jump(false),
            KeyCode::PageDown => self.t = (t + 100).min(last),
            KeyCode::PageUp => self.t = t.saturating_sub(100),
            KeyCode::Home => self.t = 0,
            KeyCode::End => self.t = last,
            KeyCode::Char('d') => self.jump_to_divergence(),
            KeyCode::Char('t') => {
                self.panel = match self.panel {
                    Panel::Code => Panel::Memory,
                    Panel::Memory => Panel::Code,
                }
            }
            KeyCode::Tab | KeyCode::BackTab => {
                if let Err(v) = self.toggle_variant() {
                    return Outcome::NotTraced(v);
                }
            }
            KeyCode::Enter => match self.places()[CORRECT] {
                Place::At(n) => return Outcome::Trace(self.variant(), n),
                Place::Waiting(_) => {
                    self.message = Some(tr!("the correct run has no such phase: step to one it makes").into());
                }
            },
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Back,
            _ => {}
        }
        Outcome::Stay
    }

    pub(crate) fn mouse(&mut self, m: MouseEvent) {
        match m.kind {
            MouseEventKind::ScrollDown => self.go(Some(self.t + 1), tr!("last step of both runs")),
            MouseEventKind::ScrollUp => self.go(self.t.checked_sub(1), tr!("first step of both runs")),
            _ => {}
        }
    }
}

/// The source file of `attention_mistakes.rs`, as the trace records it.
const MISTAKES_FILE: &str = "crates/core/src/kernels/attention_mistakes.rs";

/// 1-based lines of `attention_mistakes.rs` that show mistake `m`: its `MISTAKE n` comment (and
/// the comment lines continuing it), or for the passes the engine leaves out, the header line.
pub(crate) fn mistake_lines(m: Mistake) -> Vec<usize> {
    let Some(text) = source::source(MISTAKES_FILE) else {
        return Vec::new();
    };
    let tag = format!("MISTAKE {}", number(m));
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        if l.contains(&tag) {
            out.push(k + 1);
            // the comment goes on below without repeating the tag
            let more = lines[k + 1..]
                .iter()
                .take_while(|l| l.trim_start().starts_with("//") && !l.contains("MISTAKE"))
                .count();
            out.extend(k + 2..k + 2 + more);
        }
    }
    if out.is_empty() {
        let head = format!("//! {}. ", number(m));
        out.extend(lines.iter().position(|l| l.starts_with(&head)).map(|k| k + 1));
    }
    out
}

/// Of one mistake's marked lines in several runs of consecutive lines (mistake 7 is marked in two
/// loops, `d_v`'s and `d_k`'s), the run nearest above the line that ran: the one of its loop.
fn nearest_group(marks: Vec<usize>, current: Option<usize>) -> Vec<usize> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for l in marks {
        match groups.last_mut() {
            Some(g) if g.last().is_some_and(|&p| p + 1 == l) => g.push(l),
            _ => groups.push(vec![l]),
        }
    }
    if groups.len() < 2 {
        return groups.concat();
    }
    let Some(c) = current else {
        return groups.concat();
    };
    match groups.iter().rposition(|g| g[0] <= c) {
        Some(k) => groups.swap_remove(k),
        None => groups.concat(),
    }
}

/// What a code panel shows: a file, the line that ran (if one did), the loops around it, and the
/// lines to mark as the mistake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CodeView {
    pub file: &'static str,
    pub current: Option<usize>,
    pub loops: Vec<usize>,
    pub marks: Vec<usize>,
}

/// The code of one half at its place. The mistaken half shows `attention_mistakes.rs` whenever
/// the mistake's own code runs (also when it calls a shared helper, as mistake 6 calls the row
/// softmax), and its header line when it waits on a pass the mistake leaves out.
pub(crate) fn code_view(trace: &Trace, place: Place, side: usize, phase: Phase, mistakes: Mistakes) -> CodeView {
    if side == MISTAKEN
        && let Place::Waiting(_) = place
        && let Some(m) = removed_by(phase, mistakes)
    {
        return CodeView {
            file: MISTAKES_FILE,
            current: None,
            loops: Vec::new(),
            marks: mistake_lines(m),
        };
    }
    let n = place.event();
    let kinds = attn_trace_analysis::scope::loops(trace, n);
    let innermost = kinds.first().map_or("", |k| k.file);
    let line = trace.events.get(n).map_or(0, |e| e.line as usize);
    let in_mistakes = |file: &str| source::short(file) == source::short(MISTAKES_FILE);
    let own = side == MISTAKEN && !in_mistakes(innermost) && kinds.iter().any(|k| in_mistakes(k.file));
    let file = if own {
        kinds.iter().find(|k| in_mistakes(k.file)).map_or(innermost, |k| k.file)
    } else {
        innermost
    };
    let loops = kinds
        .iter()
        .filter(|k| k.file == file)
        .map(|k| k.line as usize)
        .collect();
    // a helper called from the mistake's loop: the loop line is where the mistaken file is
    let current = if own {
        kinds.iter().find(|k| k.file == file).map(|k| k.line as usize)
    } else {
        Some(line)
    };
    let marks = if side == MISTAKEN && in_mistakes(file) {
        mistakes
            .list()
            .into_iter()
            .filter(|&m| phases_of(m).contains(&phase))
            .flat_map(|m| nearest_group(mistake_lines(m), current))
            .collect()
    } else {
        Vec::new()
    };
    CodeView {
        file,
        current,
        loops,
        marks,
    }
}

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

/// Where the side-by-side view draws: the header, the two halves, the downstream panel and the
/// status line. `both` says whether each half shows code and memory at once.
pub(crate) fn areas(area: Rect, st: &SideBySide) -> (Rect, [Rect; 2], Rect, Rect, bool) {
    let width = area.width.saturating_sub(2).max(1) as usize;
    let rows: usize = st.report.iter().map(|n| cols(&n.text).max(1).div_ceil(width)).sum();
    let cap = (area.height as usize * 2 / 5).max(6);
    let notes_h = (rows + 2).min(cap) as u16;
    let head_h = header_lines(st, area.width).len() as u16;
    let status_h = status_lines(st, area.width).len() as u16;
    let [header, body, notes, status] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Fill(1),
        Constraint::Length(notes_h),
        Constraint::Length(status_h),
    ])
    .areas(area);
    let [left, right] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body);
    let both = body.height >= 22;
    (header, [left, right], notes, status, both)
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &SideBySide, theme: Theme) {
    let t = theme;
    let Some(traces) = st.traces().filter(|_| !st.timeline.is_empty()) else {
        let text = tr!("{title}: no mistaken run to compare", title = st.traced.title);
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
        return;
    };
    let (header_area, halves, notes, status, both) = areas(area, st);
    let seg = &st.timeline.segments[st.timeline.segment_at(st.t)];
    let title_len = st.traced.title.len() + 1;
    let header: Vec<Line> = header_lines(st, area.width)
        .into_iter()
        .enumerate()
        .map(|(k, text)| {
            // the title bold, the rest dim and the mistake's name in the error colour
            let (head, rest) = if k == 0 {
                text.split_at(if text.is_char_boundary(title_len) { title_len } else { 0 })
            } else {
                ("", text.as_str())
            };
            let (rest, mistake) = rest.split_at(rest.find(here_runs()).unwrap_or(rest.len()));
            Line::from(vec![
                Span::styled(head.to_string(), t.title()),
                Span::styled(rest.to_string(), t.dim()),
                Span::styled(mistake.to_string(), t.error()),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(header), header_area);
    let places = st.places();
    for side in [CORRECT, MISTAKEN] {
        half(frame, halves[side], st, traces, places, side, seg.phase, both, t);
    }
    let lines: Vec<Line> = st
        .report
        .iter()
        .map(|n| {
            if n.heading {
                Line::styled(n.text.clone(), t.error())
            } else {
                Line::raw(n.text.clone())
            }
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::bordered()
                .title(tr!(" what it does downstream "))
                .border_style(t.border(true)),
        ),
        notes,
    );
    render_status(frame, status, st, t);
}

#[allow(clippy::too_many_arguments)]
fn half(
    frame: &mut Frame,
    area: Rect,
    st: &SideBySide,
    traces: [&Trace; 2],
    places: [Place; 2],
    side: usize,
    phase: Phase,
    both: bool,
    t: Theme,
) {
    let trace = traces[side];
    let place = places[side];
    let mistakes = st.mistakes();
    let name = if side == CORRECT {
        tr!("correct").to_string()
    } else {
        let names: Vec<&str> = mistakes.list().iter().map(|m| m.name()).collect();
        tr!("mistaken: {names}", names = names.join(", "))
    };
    let shown = if both {
        String::new()
    } else {
        match st.panel {
            Panel::Code => tr!(" · code (t: memory)").to_string(),
            Panel::Memory => tr!(" · memory (t: code)").to_string(),
        }
    };
    let inner = area;
    if inner.height < 2 || trace.is_empty() {
        return;
    }
    let title_style = if side == CORRECT { t.title() } else { t.error() };
    let n = place.event().min(trace.len() - 1);
    // the event line: what this run does at this step, or why it waits
    let event_line = match place {
        Place::At(_) => {
            let mut spans = vec![Span::styled(format!(" {}", log::line(trace, n)), t.base())];
            let other = places[1 - side];
            if let Place::At(m) = other
                && side == MISTAKEN
                && !same_event(&trace.events[n], traces[CORRECT].events.get(m))
            {
                spans.push(Span::styled(tr!("  ≠ correct"), t.error()));
            }
            Line::from(spans)
        }
        Place::Waiting(_) => Line::from(vec![
            Span::styled(tr!(" no {phase} here: ", phase = phase.name()), t.key()),
            Span::styled(missing_why(side, phase, mistakes), t.dim()),
        ]),
    };
    // both lines wrap rather than be cut in a narrow half, with the same height in both halves
    let title_line = Line::from(vec![
        Span::styled(format!(" {name}"), title_style),
        Span::styled(shown, t.dim()),
    ]);
    let rows = if inner.width < 64 { 2 } else { 1 };
    let [head, ev, rest] =
        Layout::vertical([Constraint::Length(rows), Constraint::Length(rows), Constraint::Fill(1)]).areas(inner);
    frame.render_widget(Paragraph::new(title_line).wrap(Wrap { trim: false }), head);
    frame.render_widget(Paragraph::new(event_line).wrap(Wrap { trim: false }), ev);
    let code = code_view(trace, place, side, phase, mistakes);
    let empty = BTreeSet::new();
    let selected: CellRef = (trace.events[n].buf, trace.events[n].offset as usize);
    let ctx = Ctx {
        traced: &st.traced,
        variant: st.variant(),
        trace,
        cursor: n,
        view: trace.view(n),
        theme: t,
        selected,
        pinned: false,
        breakpoints: &empty,
        quiz: false,
        asked: None,
        cache: None,
    };
    if both {
        let [c, m] = Layout::vertical([Constraint::Percentage(42), Constraint::Percentage(58)]).areas(rest);
        code_panel(frame, c, &code, t);
        memory::render(frame, m, &ctx, false);
    } else {
        match st.panel {
            Panel::Code => code_panel(frame, rest, &code, t),
            Panel::Memory => memory::render(frame, rest, &ctx, false),
        }
    }
}

fn same_event(a: &Event, b: Option<&Event>) -> bool {
    b.is_some_and(|b| (a.buf, a.offset, a.op, a.value.to_bits()) == (b.buf, b.offset, b.op, b.value.to_bits()))
}

/// The kernel source around the line that ran, with the mistake's lines marked `!`.
fn code_panel(frame: &mut Frame, area: Rect, cv: &CodeView, t: Theme) {
    let Some((inner, text)) = code::panel(frame, area, cv.file, cv.current, false, t) else {
        return;
    };
    let lines: Vec<&str> = text.lines().collect();
    let h = inner.height as usize;
    if h == 0 || lines.is_empty() {
        return;
    }
    // keep the line that ran and the mistake's lines in view where they fit together
    let focus: Vec<usize> = cv.current.iter().chain(&cv.marks).copied().filter(|&l| l > 0).collect();
    let lo = focus.iter().copied().min().unwrap_or(1);
    let hi = focus.iter().copied().max().unwrap_or(1);
    let anchor = if hi - lo < h { lo } else { cv.current.unwrap_or(lo) };
    let room = h.saturating_sub(hi.saturating_sub(anchor) + 1);
    let first = anchor
        .saturating_sub(1)
        .saturating_sub(room.min(h / 3))
        .min(lines.len().saturating_sub(h));
    let shift = code::least_indent(&lines[first..], h);
    let marks = code::Marks {
        current: cv.current,
        marked: &cv.marks,
        loops: &cv.loops,
    };
    code::draw_lines(frame.buffer_mut(), inner, &lines, first, shift, &marks, t);
}

/// ` · here runs MISTAKE`, before the mistake's number in the header (drawn in the error colour).
fn here_runs() -> &'static str {
    tr!(" · here runs MISTAKE")
}

/// The header: the title, the kernel, the pass, what the phase computes and the mistake whose
/// code runs in it, as much as fits (the mistake's name is kept over the rest).
fn header_lines(st: &SideBySide, width: u16) -> Vec<String> {
    let Some(seg) = st.timeline.segments.get(st.timeline.segment_at(st.t)) else {
        return vec![format!(" {}", st.traced.title)];
    };
    let here: String = st
        .mistakes()
        .list()
        .into_iter()
        .filter(|&m| phases_of(m).contains(&seg.phase))
        .map(|m| format!("{} {}", here_runs(), number(m)))
        .collect();
    let title = &st.traced.title;
    let what = phase_title(seg.phase, &st.traced.mask);
    let (v, pass) = (st.variant(), seg.phase.pass().name());
    let choices = [
        format!(" {title} · {v} · {pass} · {what}{here}"),
        format!(" {title} · {what}{here}"),
        format!(" {title} · {}{here}", seg.phase.name()),
        format!(" {title}{here}"),
    ];
    bar::header(&choices, width)
}

/// The status line: the step, then the message (where the runs diverge, never cut: it goes on
/// the next line rather) or the keys.
fn status_lines(st: &SideBySide, width: u16) -> Vec<(String, String)> {
    let phase = st
        .timeline
        .segments
        .get(st.timeline.segment_at(st.t))
        .map_or("", |s| s.phase.name());
    let diverge = match st.diverges_at {
        Some(n) => tr!("diverge #{n}", n),
        None => tr!("never diverge").to_string(),
    };
    let (step, len) = (st.t + 1, st.timeline.len);
    let lefts = [
        tr!(
            " step {step}/{len} │ {variant} │ {phase} │ {diverge} ",
            step,
            len,
            variant = st.variant(),
            phase,
            diverge
        ),
        tr!(" step {step}/{len} │ {phase} ", step, len, phase),
        format!(" {step}/{len} "),
    ];
    if let Some(m) = &st.message {
        return bar::status(&lefts, &[format!(" {m}")], true, width);
    }
    let hints = [
        tr!(" n/p step · j/k iter · ]/[ phase · d divergence · Enter trace · t panel · ? keys · q back"),
        tr!(" n/p step · ]/[ phase · d divergence · Enter trace · ? keys"),
        tr!(" n/p · d divergence · ? keys"),
        tr!(" ? keys"),
    ]
    .map(String::from);
    bar::status(&lefts, &hints, false, width)
}

fn render_status(frame: &mut Frame, area: Rect, st: &SideBySide, t: Theme) {
    let lines = status_lines(st, area.width);
    let right = if st.message.is_some() {
        t.status().patch(t.key())
    } else {
        t.status()
    };
    bar::render_status(frame.buffer_mut(), area, &lines, t.status(), right);
}
