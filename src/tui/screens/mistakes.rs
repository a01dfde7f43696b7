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

mod code_lines;
mod gallery;
mod render;

pub(crate) use code_lines::{CodeView, code_view};
pub(crate) use gallery::{Gallery, Pick, render_gallery};
pub(crate) use render::render;

use crate::tui::traced_scenario::TracedScenario;
use attn_trace_analysis::mistakes::{CORRECT, MISTAKEN, Note, Place, Timeline, divergence, downstream, values_part};
use attn_trace_core::engine::first_divergence;
use attn_trace_core::kernels::Variant;
use attn_trace_core::kernels::attention_mistakes::Mistakes;
use attn_trace_core::trace::Trace;
use attn_trace_i18n::{msg, tr};
use crossterm::event::{KeyCode, KeyEvent, MouseEvent, MouseEventKind};
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
