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
use crate::engine::{Run, first_divergence, kernel_shape};
use crate::kernels::Variant;
use crate::kernels::attention_mistakes::{Mistake, Mistakes};
use crate::scenario::{self, Scenario};
use crate::trace::{Event, Pass, Phase, Trace};
use crate::tui::source;
use crate::tui::theme::Theme;
use crate::tui::walk::Walk;
use crate::tui::widgets::{CellRef, Ctx, code, frame_ids, log, memory, num, put};
use crossterm::event::{KeyCode, KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::Arc;

/// The side-by-side view's keys, shown on `?`.
pub const KEYS: &[(&str, &str)] = &[
    ("n →  /  p ←", "both runs one step forward / back"),
    ("j ↓  /  k ↑", "next / previous iteration of the innermost loop"),
    ("J  /  K", "next / previous iteration of the enclosing loop"),
    ("]  /  [", "next / previous phase"),
    ("Home / End", "first / last step   (PgDn/PgUp: ±100)"),
    ("d", "both runs to the first event where they diverge"),
    ("t", "code ↔ memory in each half (small screens)"),
    ("Tab", "baseline ↔ MHA, when the scenario runs both"),
    ("Enter", "open the tracer on the correct run here"),
    ("wheel", "one step forward / back"),
    ("?", "these keys"),
    ("Esc  /  q", "back to the gallery (or the menu)"),
];

/// The gallery's keys, shown on `?`.
pub const GALLERY_KEYS: &[(&str, &str)] = &[
    ("↑ k  /  ↓ j", "previous / next mistake"),
    ("Home / End", "first / last mistake"),
    ("Enter, Space", "open the highlighted mistake side by side"),
    ("1-6", "open mistake 1 to 6 directly"),
    ("click", "open the mistake under the pointer"),
    ("?", "these keys"),
    ("Esc  /  q", "back to the menu"),
];

/// The two runs of the view, as indexes into [`Timeline`]'s per-run arrays.
pub const CORRECT: usize = 0;
pub const MISTAKEN: usize = 1;

/// Where one run is at a step of the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// At this event of its trace.
    At(usize),
    /// This run has no such phase: it waits at this event (its last before the phase, or its
    /// first after when the phase comes before everything it does).
    Waiting(usize),
}

impl Place {
    pub fn event(self) -> usize {
        match self {
            Place::At(n) | Place::Waiting(n) => n,
        }
    }
}

/// One phase on the shared timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub phase: Phase,
    /// The phase's events in each run, `None` where that run does not make it.
    pub spans: [Option<Range<usize>>; 2],
    /// First step of the segment on the timeline, and its number of steps (the longer span).
    pub t0: usize,
    pub len: usize,
    /// Where a run without this phase waits.
    hold: [usize; 2],
}

/// The phases of two traces matched in order, as one sequence of steps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    pub segments: Vec<Segment>,
    /// Steps in all.
    pub len: usize,
}

impl Timeline {
    pub fn new(traces: [&Trace; 2]) -> Timeline {
        // each trace's non-empty phase spans, in order
        let spans = traces.map(|t| {
            (0..t.phases.len())
                .map(|k| (t.phases[k].1, t.span_range(k)))
                .filter(|(_, r)| !r.is_empty())
                .collect::<Vec<_>>()
        });
        let (a, b) = (&spans[CORRECT], &spans[MISTAKEN]);
        // lcs[x][y]: phases a[x..] and b[y..] have in common, in order
        let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for x in (0..a.len()).rev() {
            for y in (0..b.len()).rev() {
                lcs[x][y] = if a[x].0 == b[y].0 {
                    lcs[x + 1][y + 1] + 1
                } else {
                    lcs[x + 1][y].max(lcs[x][y + 1])
                };
            }
        }
        let mut raw: Vec<(Phase, [Option<Range<usize>>; 2])> = Vec::new();
        let (mut x, mut y) = (0, 0);
        while x < a.len() || y < b.len() {
            if x < a.len() && y < b.len() && a[x].0 == b[y].0 {
                raw.push((a[x].0, [Some(a[x].1.clone()), Some(b[y].1.clone())]));
                (x, y) = (x + 1, y + 1);
            } else if x < a.len() && (y == b.len() || lcs[x + 1][y] >= lcs[x][y + 1]) {
                // the correct run's own phases come first: what the mistaken one replaced
                raw.push((a[x].0, [Some(a[x].1.clone()), None]));
                x += 1;
            } else {
                raw.push((b[y].0, [None, Some(b[y].1.clone())]));
                y += 1;
            }
        }
        let hold = |g: usize, side: usize| -> usize {
            let before = raw[..g]
                .iter()
                .rev()
                .find_map(|(_, s)| s[side].as_ref().map(|r| r.end - 1));
            let after = || raw[g..].iter().find_map(|(_, s)| s[side].as_ref().map(|r| r.start));
            before.or_else(after).unwrap_or(0)
        };
        let mut segments = Vec::with_capacity(raw.len());
        let mut t0 = 0;
        for (g, (phase, sp)) in raw.iter().enumerate() {
            let len = sp.iter().flatten().map(|r| r.len()).max().unwrap_or(0);
            segments.push(Segment {
                phase: *phase,
                spans: sp.clone(),
                t0,
                len,
                hold: [hold(g, CORRECT), hold(g, MISTAKEN)],
            });
            t0 += len;
        }
        Timeline { segments, len: t0 }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The segment holding step `t`.
    pub fn segment_at(&self, t: usize) -> usize {
        self.segments.partition_point(|s| s.t0 <= t).saturating_sub(1)
    }

    /// Where run `side` is at step `t`.
    pub fn place(&self, t: usize, side: usize) -> Place {
        let Some(seg) = self.segments.get(self.segment_at(t)) else {
            return Place::Waiting(0);
        };
        match &seg.spans[side] {
            // a shorter span stays on its last event while the longer one finishes
            Some(r) => Place::At(r.start + (t - seg.t0).min(r.len() - 1)),
            None => Place::Waiting(seg.hold[side]),
        }
    }

    /// The step at which run `side` is at event `n`.
    pub fn step_of(&self, side: usize, n: usize) -> Option<usize> {
        self.segments.iter().find_map(|s| {
            let r = s.spans[side].as_ref()?;
            r.contains(&n).then(|| s.t0 + (n - r.start))
        })
    }
}

/// One line of the downstream panel: a mistake's heading, or a finding under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    pub heading: bool,
    pub text: String,
}

fn heading(text: String) -> Note {
    Note { heading: true, text }
}

fn note(text: String) -> Note {
    Note { heading: false, text }
}

/// Which panel each half shows when the screen is too small for both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Panel {
    Code,
    Memory,
}

/// What the app should do after a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Stay,
    Back,
    Help,
    /// Open the tracer on the correct run of this variant at this event.
    Trace(Variant, usize),
}

/// The side-by-side view of one variant's correct and mistaken runs.
#[derive(Debug)]
pub struct SideBySide {
    pub walk: Arc<Walk>,
    /// Index of the variant in `walk.runs` and `walk.mistaken`.
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
    /// The gallery entry it was opened from: Esc goes back there, else to the menu.
    pub gallery: Option<usize>,
}

impl SideBySide {
    /// The view on `walk`'s first variant (its focus's, else MHA, else the first), or `None`
    /// when the scenario has no mistakes.
    pub fn new(walk: Arc<Walk>, gallery: Option<usize>) -> Option<SideBySide> {
        let k = walk
            .first_variant()
            .and_then(|v| walk.runs.iter().position(|r| r.variant == v))
            .unwrap_or(0);
        let mut view = SideBySide {
            walk,
            k,
            timeline: Timeline::default(),
            t: 0,
            diverges_at: None,
            report: Vec::new(),
            message: None,
            panel: Panel::Code,
            gallery,
        };
        view.load(k).then_some(view)
    }

    /// Switches to variant `k`: its timeline, divergence and downstream report.
    fn load(&mut self, k: usize) -> bool {
        let walk = Arc::clone(&self.walk);
        let (Some(good), Some(bad)) = (walk.runs.get(k), walk.mistaken.get(k)) else {
            return false;
        };
        let (Some(a), Some(b)) = (&good.trace, &bad.trace) else {
            return false;
        };
        self.k = k;
        self.timeline = Timeline::new([a, b]);
        self.diverges_at = first_divergence(a, b);
        self.report = downstream(&walk, good, bad);
        self.t = 0;
        true
    }

    pub fn variant(&self) -> Variant {
        self.walk.runs.get(self.k).map_or(Variant::Mha, |r| r.variant)
    }

    /// The two traces, correct first.
    pub fn traces(&self) -> Option<[&Trace; 2]> {
        let a = self.walk.runs.get(self.k)?.trace.as_ref()?;
        let b = self.walk.mistaken.get(self.k)?.trace.as_ref()?;
        Some([a, b])
    }

    pub fn mistakes(&self) -> Mistakes {
        self.walk.mistaken.get(self.k).map_or(Mistakes::NONE, |r| r.mistakes)
    }

    /// Where each run is at the current step.
    pub fn places(&self) -> [Place; 2] {
        [CORRECT, MISTAKEN].map(|side| self.timeline.place(self.t, side))
    }

    /// The step of the first divergence: where the correct run reaches that event (or the
    /// mistaken run, when the correct one ended first).
    pub fn divergence_step(&self) -> Option<usize> {
        let n = self.diverges_at?;
        let [a, _] = self.traces()?;
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
        let what = if up == 0 { "loop" } else { "enclosing loop" };
        let none = if forward {
            format!("no next iteration of the {what}")
        } else {
            format!("no previous iteration of the {what}")
        };
        self.go(step, &none);
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
            "this is the last phase"
        } else {
            "this is the first phase"
        };
        self.go(to, none);
    }

    /// `d`: both runs to the first event where they differ, described on the status line.
    fn jump_to_divergence(&mut self) {
        let Some(traces) = self.traces() else { return };
        let (Some(n), Some(step)) = (self.diverges_at, self.divergence_step()) else {
            self.message = Some("the two runs never diverge: every event is the same".into());
            return;
        };
        let say = |side: usize| -> String {
            let t = traces[side];
            if n < t.len() {
                format!("{} ({})", event_words(t, n), t.phase_at(n))
            } else {
                format!("has ended ({} events)", t.len())
            }
        };
        let message = format!("diverge at #{n}: correct {} · mistaken {}", say(CORRECT), say(MISTAKEN));
        self.t = step;
        self.message = Some(message);
    }

    fn toggle_variant(&mut self) {
        let n = self.walk.runs.len().min(self.walk.mistaken.len());
        if n < 2 {
            self.message = Some(format!("this scenario traces only {}", self.variant()));
            return;
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
    }

    pub fn key(&mut self, key: KeyEvent) -> Outcome {
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
            KeyCode::Tab | KeyCode::BackTab => self.toggle_variant(),
            KeyCode::Enter => match self.places()[CORRECT] {
                Place::At(n) => return Outcome::Trace(self.variant(), n),
                Place::Waiting(_) => {
                    self.message = Some("the correct run has no such phase: step to one it makes".into())
                }
            },
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Back,
            _ => {}
        }
        Outcome::Stay
    }

    pub fn mouse(&mut self, m: MouseEvent) {
        match m.kind {
            MouseEventKind::ScrollDown => self.go(Some(self.t + 1), "last step of both runs"),
            MouseEventKind::ScrollUp => self.go(self.t.checked_sub(1), "first step of both runs"),
            _ => {}
        }
    }
}

/// `write scores[2] = -1e9`: an event in words.
fn event_words(trace: &Trace, n: usize) -> String {
    let e = trace.events[n];
    format!("{} {}[{}] = {}", e.op.name(), e.buf, e.offset, num(e.value))
}

/// The mistake's number in the kernel file's comments (`MISTAKE 3`).
fn number(m: Mistake) -> usize {
    Mistake::ALL.iter().position(|&x| x == m).map_or(0, |k| k + 1)
}

/// The phase where a mistake's own code runs, for the ones `attention_mistakes.rs` implements.
fn phase_of(m: Mistake) -> Option<Phase> {
    match m {
        Mistake::NoInputProjection => Some(Phase::NoProj),
        Mistake::ScaleBySeqLen | Mistake::MaskByMultiply => Some(Phase::Scores),
        Mistake::SoftmaxOverTwoDims => Some(Phase::Softmax),
        Mistake::NoOutputProjection | Mistake::DropoutNotApplied => None,
    }
}

/// The mistake that leaves a phase of the correct run out of the mistaken one.
fn removed_by(phase: Phase, mistakes: Mistakes) -> Option<Mistake> {
    let m = match phase {
        Phase::QkvProj | Phase::Split | Phase::QProj | Phase::KProj | Phase::VProj => Mistake::NoInputProjection,
        Phase::Dropout => Mistake::DropoutNotApplied,
        Phase::OutProj => Mistake::NoOutputProjection,
        _ => return None,
    };
    mistakes.has(m).then_some(m)
}

/// Why a run has no such phase, in words.
fn missing_why(side: usize, phase: Phase, mistakes: Mistakes) -> String {
    if side == MISTAKEN {
        if phase.pass() == Pass::Backward {
            return "a mistaken run is forward only".into();
        }
        return match removed_by(phase, mistakes) {
            Some(Mistake::NoInputProjection) => "mistake 1 uses x itself as q, k and v".into(),
            Some(Mistake::DropoutNotApplied) => "mistake 5 never applies dropout".into(),
            Some(Mistake::NoOutputProjection) => "mistake 4 returns att as the output".into(),
            _ => "the mistaken module skips it".into(),
        };
    }
    match phase {
        Phase::NoProj => "it projects x with learned weights instead".into(),
        _ => "only the mistaken module makes it".into(),
    }
}

/// The source file of `attention_mistakes.rs`, as the trace records it.
const MISTAKES_FILE: &str = "src/kernels/attention_mistakes.rs";

/// 1-based lines of `attention_mistakes.rs` that show mistake `m`: its `MISTAKE n` comment (and
/// the comment lines continuing it), or for the passes the engine leaves out, the header line.
pub fn mistake_lines(m: Mistake) -> Vec<usize> {
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

/// What a code panel shows: a file, the line that ran (if one did), the loops around it, and the
/// lines to mark as the mistake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeView {
    pub file: &'static str,
    pub current: Option<usize>,
    pub loops: Vec<usize>,
    pub marks: Vec<usize>,
}

/// The code of one half at its place. The mistaken half shows `attention_mistakes.rs` whenever
/// the mistake's own code runs (also when it calls a shared helper, as mistake 6 calls the row
/// softmax), and its header line when it waits on a pass the mistake leaves out.
pub fn code_view(trace: &Trace, place: Place, side: usize, phase: Phase, mistakes: Mistakes) -> CodeView {
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
    let frames: Vec<_> = frame_ids(trace, n)
        .into_iter()
        .filter_map(|id| trace.frame(id))
        .collect();
    let kinds: Vec<_> = frames.iter().map(|f| trace.kinds[f.kind as usize]).collect();
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
            .filter(|&m| phase_of(m) == Some(phase))
            .flat_map(mistake_lines)
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

/// The gallery: the six shipped mistake scenarios.
#[derive(Debug)]
pub struct Gallery {
    pub selected: usize,
    pub entries: Vec<Entry>,
}

/// One gallery entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The scenario's file stem under `scenarios/mistakes/`, also the mistake's name.
    pub name: &'static str,
    pub mistake: Option<Mistake>,
    pub title: String,
    pub about: String,
}

/// What the gallery asks the app to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
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
    pub fn new(selected: usize) -> Gallery {
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
    pub fn scenario(&self, k: usize) -> Option<Scenario> {
        Scenario::mistake(self.entries.get(k)?.name)
    }

    pub fn key(&mut self, key: KeyEvent) -> Option<Pick> {
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
            KeyCode::Char(c @ '1'..='6') => {
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
    pub fn mouse(&mut self, m: MouseEvent, area: Rect) -> Option<Pick> {
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

pub fn render_gallery(frame: &mut Frame, area: Rect, st: &Gallery, theme: Theme) {
    let t = theme;
    let (head, list, details) = gallery_areas(area, st.entries.len());
    menu::render_heading(
        frame,
        head,
        "Mistakes gallery",
        "six classic multi-head attention mistakes, each traced beside the correct run",
        t,
    );
    let lines: Vec<Line> = st
        .entries
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let symptom = e.mistake.map_or("", |m| m.symptom());
            let width = list.width.saturating_sub(2) as usize;
            let mut text = format!(" {} {:<22} {symptom}", k + 1, e.name);
            // one line each: a symptom longer than the list ends in an ellipsis
            if text.chars().count() > width {
                text = text.chars().take(width.saturating_sub(1)).collect::<String>() + "…";
            }
            let text = format!("{text:<width$}");
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
            Span::styled("symptom: ", t.key()),
            Span::raw(m.symptom().to_string()),
        ]));
    }
    text.push(Line::from(vec![
        Span::styled("this scenario: ", t.key()),
        Span::raw(e.about.clone()),
    ]));
    text.push(Line::from(""));
    text.push(Line::from(Span::styled(
        "↑/↓ choose · Enter side by side · 1-6 open · ? keys · q back",
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
pub fn areas(area: Rect, st: &SideBySide) -> (Rect, [Rect; 2], Rect, Rect, bool) {
    let width = area.width.saturating_sub(2).max(1) as usize;
    let rows: usize = st
        .report
        .iter()
        .map(|n| n.text.chars().count().max(1).div_ceil(width))
        .sum();
    let cap = (area.height as usize * 2 / 5).max(6);
    let notes_h = (rows + 2).min(cap) as u16;
    let [header, body, notes, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(notes_h),
        Constraint::Length(1),
    ])
    .areas(area);
    let [left, right] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body);
    let both = body.height >= 22;
    (header, [left, right], notes, status, both)
}

pub fn render(frame: &mut Frame, area: Rect, st: &SideBySide, theme: Theme) {
    let t = theme;
    let Some(traces) = st.traces().filter(|_| !st.timeline.is_empty()) else {
        let text = format!("{}: no mistaken run to compare", st.walk.title);
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
        return;
    };
    let (header, halves, notes, status, both) = areas(area, st);
    let seg = &st.timeline.segments[st.timeline.segment_at(st.t)];
    // the phase's title is the correct run's; a mistake whose own code runs here is named
    let here: Vec<String> = st
        .mistakes()
        .list()
        .into_iter()
        .filter(|&m| phase_of(m) == Some(seg.phase))
        .map(|m| format!(" · here runs MISTAKE {}", number(m)))
        .collect();
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!(" {} ", st.walk.title), t.title()),
            Span::styled(
                format!(
                    "· {} · {} · {}",
                    st.variant(),
                    seg.phase.pass().name(),
                    seg.phase.title()
                ),
                t.dim(),
            ),
            Span::styled(here.concat(), t.error()),
        ])),
        header,
    );
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
                .title(" what it does downstream ")
                .border_style(t.border(true)),
        ),
        notes,
    );
    render_status(frame, status, st, seg.phase, t);
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
        "correct".to_string()
    } else {
        let names: Vec<&str> = mistakes.list().iter().map(|m| m.name()).collect();
        format!("mistaken: {}", names.join(", "))
    };
    let shown = if both {
        String::new()
    } else {
        match st.panel {
            Panel::Code => " · code (t: memory)".to_string(),
            Panel::Memory => " · memory (t: code)".to_string(),
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
            let mut spans = vec![Span::styled(
                format!(" {}", log::line(trace, st.variant(), n)),
                t.base(),
            )];
            let other = places[1 - side];
            if let Place::At(m) = other
                && side == MISTAKEN
                && !same_event(&trace.events[n], traces[CORRECT].events.get(m))
            {
                spans.push(Span::styled("  ≠ correct", t.error()));
            }
            Line::from(spans)
        }
        Place::Waiting(_) => Line::from(vec![
            Span::styled(format!(" no {} here: ", phase.name()), t.key()),
            Span::styled(missing_why(side, phase, mistakes), t.dim()),
        ]),
    };
    let [head, ev, rest] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!(" {name}"), title_style),
            Span::styled(shown, t.dim()),
        ])),
        head,
    );
    frame.render_widget(Paragraph::new(event_line), ev);
    let code = code_view(trace, place, side, phase, mistakes);
    let empty = BTreeSet::new();
    let selected: CellRef = (trace.events[n].buf, trace.events[n].offset as usize);
    let ctx = Ctx {
        walk: &st.walk,
        variant: st.variant(),
        trace,
        cursor: n,
        view: trace.view(n),
        theme: t,
        selected,
        pinned: false,
        breakpoints: &empty,
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

fn render_status(frame: &mut Frame, area: Rect, st: &SideBySide, phase: Phase, t: Theme) {
    let buf = frame.buffer_mut();
    buf.set_style(area.intersection(buf.area), t.status());
    let diverge = match st.diverges_at {
        Some(n) => format!("diverge #{n}"),
        None => "never diverge".to_string(),
    };
    let left = format!(
        " step {}/{} │ {} │ {} │ {diverge} ",
        st.t + 1,
        st.timeline.len,
        st.variant(),
        phase.name()
    );
    let x = put(buf, area, area.x, area.y, &left, t.status());
    match &st.message {
        Some(m) => put(buf, area, x, area.y, &format!(" {m}"), t.status().patch(t.key())),
        None => put(
            buf,
            area,
            x,
            area.y,
            " n/p step · j/k iter · ]/[ phase · d divergence · Enter trace · t panel · ? keys · q back",
            t.status(),
        ),
    };
}

/// `0.12 0.40 …`: values with two decimals.
fn list(values: impl IntoIterator<Item = f32>) -> String {
    values
        .into_iter()
        // + 0.0 turns the −0.0 of an empty sum into 0.0
        .map(|v| format!("{:.2}", v + 0.0))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The downstream panel: for every mistake of the run, its documented symptom in numbers, read
/// from the final tensors of the correct run `good` and the mistaken run `bad`.
#[allow(non_snake_case)]
pub fn downstream(walk: &Walk, good: &Run, bad: &Run) -> Vec<Note> {
    let sh = walk.shape;
    let ksh = kernel_shape(sh, good.variant);
    let (B, S, T, C, H, D) = (sh.b, sh.s, sh.t, sh.c, ksh.h, ksh.d());
    let mask = &walk.mask;
    let (g, w) = (&good.tensors, &bad.tensors);
    // [B,H,S,T] score-shaped buffers
    let at = |b: usize, h: usize, i: usize, j: usize| ((b * H + h) * S + i) * T + j;
    let mut out = Vec::new();
    for m in bad.mistakes.list() {
        out.push(heading(format!("MISTAKE {} {}: {}", number(m), m.name(), m.symptom())));
        match m {
            Mistake::NoInputProjection => {
                let weights = if g.w_qkv.is_empty() { "w_q, w_k, w_v" } else { "w_qkv" };
                let q_is_x = !w.q.is_empty() && w.q == w.x;
                out.push(note(format!(
                    "the mistaken run has no {weights}: its q {} x itself, so no weights decide what a token looks for",
                    if q_is_x { "is" } else { "comes from" }
                )));
                if S != T || !w.memory.is_empty() {
                    out.push(note(
                        "cross-attention: q = x and k = v = memory, straight from the inputs".into(),
                    ));
                    continue;
                }
                // |S[i,j] − S[j,i]| over the pairs visible both ways
                let asym = |s: &[f32]| -> (f32, usize) {
                    let mut worst = (0.0f32, 0);
                    for b in 0..B {
                        for h in 0..H {
                            for i in 0..S {
                                for j in i + 1..T {
                                    if !mask.hides(i, j) && !mask.hides(j, i) {
                                        let d = (s[at(b, h, i, j)] - s[at(b, h, j, i)]).abs();
                                        worst = (worst.0.max(d), worst.1 + 1);
                                    }
                                }
                            }
                        }
                    }
                    worst
                };
                let ((bad_d, pairs), (good_d, _)) = (asym(&w.scores), asym(&g.scores));
                if pairs == 0 {
                    out.push(note(
                        "this mask shows no pair (i, j) both ways, so the symmetry hides behind it".into(),
                    ));
                    continue;
                }
                out.push(note(format!(
                    "the mistaken scores are symmetric: max |S[i,j] − S[j,i]| = {bad_d:.4} over {pairs} pairs (correct run: {good_d:.4})"
                )));
                if let Some((i, j)) = (0..S)
                    .flat_map(|i| (i + 1..T).map(move |j| (i, j)))
                    .find(|&(i, j)| !mask.hides(i, j) && !mask.hides(j, i))
                {
                    let s = |t: &[f32], i, j| t[at(0, 0, i, j)];
                    out.push(note(format!(
                        "b0 h0: mistaken S[{i},{j}] = {:.3}, S[{j},{i}] = {:.3} · correct S[{i},{j}] = {:.3}, S[{j},{i}] = {:.3}",
                        s(&w.scores, i, j),
                        s(&w.scores, j, i),
                        s(&g.scores, i, j),
                        s(&g.scores, j, i)
                    )));
                }
            }
            Mistake::ScaleBySeqLen => {
                let ratio = (D as f32).sqrt() / (T as f32).sqrt();
                out.push(note(format!(
                    "scores × 1/√T = 1/√{T} = {:.3} instead of 1/√D = 1/√{D} = {:.3}: each is √D/√T = {ratio:.3} times the correct one",
                    1.0 / (T as f32).sqrt(),
                    1.0 / (D as f32).sqrt()
                )));
                // the ratio measured on the visible scores the correct run does not have near 0
                let ratios: Vec<f32> = (0..B * H * S * T)
                    .filter(|&o| !mask.hides(o / T % S, o % T) && g.scores[o].abs() > 1e-3)
                    .map(|o| w.scores[o] / g.scores[o])
                    .collect();
                if !ratios.is_empty() {
                    let mean = ratios.iter().sum::<f32>() / ratios.len() as f32;
                    out.push(note(format!(
                        "measured on the two runs' scores: mistaken / correct = {mean:.3} (over {} scores)",
                        ratios.len()
                    )));
                }
                let row_max =
                    |p: &[f32], b: usize, h: usize, i: usize| (0..T).map(|j| p[at(b, h, i, j)]).fold(0.0f32, f32::max);
                let rows = B * H * S;
                let mean = |p: &[f32]| {
                    let sum: f32 = (0..B * H * S).map(|r| row_max(p, r / (H * S), r / S % H, r % S)).sum();
                    sum / rows.max(1) as f32
                };
                let verdict = match T.cmp(&D) {
                    std::cmp::Ordering::Greater => format!("too flat (T = {T} > D = {D})"),
                    std::cmp::Ordering::Less => format!("too sharp (T = {T} < D = {D})"),
                    std::cmp::Ordering::Equal => format!("unchanged (T = D = {D})"),
                };
                out.push(note(format!(
                    "mean max probability over all {rows} rows: correct {:.3}, mistaken {:.3}: the softmax is {verdict}",
                    mean(&g.probs),
                    mean(&w.probs)
                )));
                out.push(note("max probability per row, b0 h0:".into()));
                out.push(note(format!(
                    "  correct  {}",
                    list((0..S).map(|i| row_max(&g.probs, 0, 0, i)))
                )));
                out.push(note(format!(
                    "  mistaken {}",
                    list((0..S).map(|i| row_max(&w.probs, 0, 0, i)))
                )));
            }
            Mistake::MaskByMultiply => {
                let hidden: Vec<usize> = (0..B * H * S * T).filter(|&o| mask.hides(o / T % S, o % T)).collect();
                if hidden.is_empty() {
                    out.push(note(
                        "this scenario hides no pair: multiplying by an all-ones mask changes nothing".into(),
                    ));
                    continue;
                }
                let leak = hidden.iter().filter(|&&o| w.probs[o] > 0.0).count();
                let (worst, o) = hidden
                    .iter()
                    .map(|&o| (w.probs[o], o))
                    .fold((0.0f32, 0), |a, b| if b.0 > a.0 { b } else { a });
                let good_max = hidden.iter().map(|&o| g.probs[o]).fold(0.0f32, f32::max);
                let (b, h, i, j) = (o / (H * S * T), o / (S * T) % H, o / T % S, o % T);
                out.push(note(format!(
                    "{leak} of {} masked probabilities are > 0 in the mistaken run, the largest {worst:.3} at b{b} h{h} i{i} j{j} (correct run: at most {good_max:.3})",
                    hidden.len()
                )));
                let future = |p: &[f32], i: usize| {
                    (0..T)
                        .filter(|&j| mask.hides(i, j))
                        .map(|j| p[at(0, 0, i, j)])
                        .sum::<f32>()
                };
                out.push(note(format!(
                    "weight on hidden keys per row, b0 h0: correct {} · mistaken {}",
                    list((0..S).map(|i| future(&g.probs, i))),
                    list((0..S).map(|i| future(&w.probs, i)))
                )));
                if let Some(i) = (0..S).find(|&i| (0..T).any(|j| mask.hides(i, j))) {
                    let row = |p: &[f32]| list((0..T).map(|j| p[at(0, 0, i, j)]));
                    out.push(note(format!(
                        "row i={i}, b0 h0: correct [{}] · mistaken [{}]",
                        row(&g.probs),
                        row(&w.probs)
                    )));
                }
            }
            Mistake::NoOutputProjection => {
                out.push(note(
                    "the mistaken run has no w_proj and no out_proj phase: its output is att itself".into(),
                ));
                if g.w_proj.is_empty() {
                    out.push(note(
                        "the correct run has no output projection either: nothing differs".into(),
                    ));
                    continue;
                }
                if H == 1 {
                    out.push(note(
                        "one head: nothing to mix, but out = att skips the learned W_proj".into(),
                    ));
                    continue;
                }
                // what head hh adds to out[b0, i, c]: Σ over its channels c' of att[c']·W[c', c]
                let i = S - 1;
                let row = i * C;
                let part = |hh: usize, c: usize| -> f32 {
                    (hh * D..(hh + 1) * D)
                        .map(|cp| g.att[row + cp] * g.w_proj[cp * C + c])
                        .sum()
                };
                let mine = |hh: usize, c: usize| if c / D == hh { w.att[row + c] } else { 0.0 };
                let heads = |f: &dyn Fn(usize, usize) -> f32| -> String {
                    (0..H)
                        .map(|hh| format!("h{hh} [{}]", list((0..C).map(|c| f(hh, c)))))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                out.push(note(format!("what each head adds to out[b0, i={i}, c], c = 0..{C}:")));
                out.push(note(format!("  correct  {}", heads(&part))));
                out.push(note(format!("  mistaken {}", heads(&mine))));
                let mixed = (0..C)
                    .filter(|&c| (0..H).filter(|&hh| part(hh, c) != 0.0).count() > 1)
                    .count();
                out.push(note(format!(
                    "correct: {mixed} of {C} output channels mix several heads · mistaken: none, channel c comes only from head c/D (D = {D})"
                )));
            }
            Mistake::DropoutNotApplied => {
                if g.drop_mask.is_empty() {
                    out.push(note(
                        "dropout is off in this scenario (eval mode, or no [run].dropout): both runs compute the same"
                            .into(),
                    ));
                    continue;
                }
                let dropped: Vec<usize> = (0..g.drop_mask.len()).filter(|&o| g.drop_mask[o] == 0.0).collect();
                let rescale = (0..g.probs.len())
                    .find(|&o| g.drop_mask[o] != 0.0 && g.probs[o] > 1e-6)
                    .map(|o| g.probs_drop[o] / g.probs[o]);
                let scale = rescale.map_or(String::new(), |r| {
                    format!(" and scales the kept ones by 1/(1 − p) = {r:.3}")
                });
                out.push(note(format!(
                    "the correct run drops {} of {} probabilities (drop_mask = 0){scale}",
                    dropped.len(),
                    g.drop_mask.len()
                )));
                let used = dropped.iter().filter(|&&o| w.probs[o] > 0.0).count();
                out.push(note(format!(
                    "the mistaken run still uses {used} of those {}: its weighted sum reads probs, never probs_drop",
                    dropped.len()
                )));
                // the largest weights the mistaken run keeps that the correct one dropped
                let mut kept: Vec<usize> = dropped.iter().copied().filter(|&o| w.probs[o] > 0.0).collect();
                kept.sort_by(|&a, &b| w.probs[b].total_cmp(&w.probs[a]).then(a.cmp(&b)));
                let examples: Vec<String> = kept
                    .iter()
                    .take(3)
                    .map(|&o| {
                        let (b, h, i, j) = (o / (H * S * T), o / (S * T) % H, o / T % S, o % T);
                        format!(
                            "b{b} h{h} i{i} j{j}: correct {:.2}, mistaken {:.2}",
                            g.probs_drop[o], w.probs[o]
                        )
                    })
                    .collect();
                if !examples.is_empty() {
                    out.push(note(format!("dropped weights: {}", examples.join(" · "))));
                }
                let diff = g
                    .att
                    .iter()
                    .zip(&w.att)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0f32, f32::max);
                out.push(note(format!("att differs between the runs by up to {diff:.3}")));
            }
            Mistake::SoftmaxOverTwoDims => {
                let sum_row = |p: &[f32], b: usize, h: usize, i: usize| (0..T).map(|j| p[at(b, h, i, j)]).sum::<f32>();
                for h in 0..H {
                    out.push(note(format!(
                        "row sums, mistaken b0 h{h}: {}",
                        list((0..S).map(|i| sum_row(&w.probs, 0, h, i)))
                    )));
                }
                let rows: Vec<(usize, usize, usize)> = (0..B)
                    .flat_map(|b| (0..H).flat_map(move |h| (0..S).map(move |i| (b, h, i))))
                    .collect();
                let off = rows
                    .iter()
                    .filter(|&&(b, h, i)| (sum_row(&w.probs, b, h, i) - 1.0).abs() > 1e-3)
                    .count();
                let sums: Vec<f32> = rows.iter().map(|&(b, h, i)| sum_row(&g.probs, b, h, i)).collect();
                let lo = sums.iter().copied().fold(f32::INFINITY, f32::min);
                let hi = sums.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                out.push(note(format!(
                    "{off} of {} mistaken rows are off 1 by more than 0.001 · correct rows sum to 1 (min {lo:.4}, max {hi:.4})",
                    rows.len()
                )));
                let whole = (0..H)
                    .map(|h| {
                        let sum: f32 = (0..S).map(|i| sum_row(&w.probs, 0, h, i)).sum();
                        format!("h{h} {sum:.3}")
                    })
                    .collect::<Vec<_>>()
                    .join(" · ");
                out.push(note(format!(
                    "each head's whole S×T matrix sums to 1 instead, b0: {whole}"
                )));
            }
        }
    }
    out
}
