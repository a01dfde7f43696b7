//! The tracer: a cursor over one variant's event log, and every panel in sync with it.
//!
//! State changes only in [`Tracer::key`] / [`Tracer::mouse`]; [`render`] draws from the state and
//! never mutates. Every key is answered with O(1) or O(log n) queries on the trace's indexes.
//!
//! This file holds the tracer's state and its entry points; its parts are `navigation` (the
//! key table and every move of the cursor or the selected cell, mouse included), `goto` (the
//! `g` prompt), `quiz_keys` (quiz mode's keys), `lesson_keys` (a lesson's stops and questions)
//! and `render` (the layout and the drawing).

mod goto;
mod lesson_keys;
mod navigation;
mod quiz_keys;
mod render;

#[cfg(test)]
pub(crate) use render::areas;
pub(crate) use render::render;

use crate::tui::gradcheck::{self, Checker, Request};
use crate::tui::lesson::LessonRun;
use crate::tui::quiz::{self, Quiz};
use crate::tui::theme::Theme;
use crate::tui::traced_scenario::TracedScenario;
use crate::tui::widgets::{CellRef, Ctx};
use attn_trace_analysis::cache::{self, EventCache};
use attn_trace_analysis::quiz::{Question, QuizLevel};
use attn_trace_core::engine::kernel_shape;
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Buf, Pass, Trace};
use attn_trace_i18n::tr;
use crossterm::event::{KeyEvent, MouseEvent};
use ratatui::layout::Rect;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The panel shown when the screen is too small for all of them at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tab {
    Memory,
    Code,
    Log,
    Vars,
}

impl Tab {
    const ALL: [Tab; 4] = [Tab::Memory, Tab::Code, Tab::Log, Tab::Vars];

    fn name(self) -> &'static str {
        match self {
            Tab::Memory => tr!("Memory"),
            Tab::Code => tr!("Code"),
            Tab::Log => tr!("Log"),
            Tab::Vars => tr!("Vars"),
        }
    }
}

/// What the app should do after a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Stay,
    Back,
    Help,
    /// A note in a popup: the quiz's summary when a phase ends.
    Note {
        title: String,
        text: String,
    },
    /// `Tab` asked for a kernel the scenario does not trace.
    NotTraced(Variant),
    /// `S`: save the screen as it is drawn now.
    Snapshot,
    /// `y`: this text (the command that reopens the position) to the terminal's clipboard.
    Copy(String),
}

#[derive(Debug)]
pub(crate) struct Tracer {
    pub traced: Arc<TracedScenario>,
    pub variant: Variant,
    /// The current event; always `< len` when the log has events.
    pub cursor: usize,
    /// Where the cursor was in each (variant, pass) last, for `Tab` and `f`.
    saved: HashMap<(Variant, Pass), usize>,
    /// A cell the user selected (click, arrows, goto); `None` follows the current event.
    pub pinned: Option<CellRef>,
    pub breakpoints: BTreeSet<CellRef>,
    /// The goto prompt's text while it is open.
    pub prompt: Option<String>,
    /// One line of feedback in the status bar (cleared by the next key).
    pub message: Option<String>,
    pub tab: Tab,
    /// Arrow keys move the selected cell instead of the cursor.
    pub select: bool,
    /// The terminal's width, which the timeline spans (set by the app before each key).
    pub width: u16,
    /// Quiz mode: the learner predicts each next access before stepping.
    pub quiz: Option<Quiz>,
    /// The backward pass's gradient checks, computed on a worker thread.
    pub checks: Checker,
    /// `tui --lesson`: the lesson being walked, its stops and answers.
    pub lesson: Option<LessonRun>,
    /// `m`: the cache model is shown (the memory panel's hits and misses, the timeline's
    /// misses).
    pub cache_on: bool,
    /// Each kernel's log run through this machine's caches, made when first shown.
    caches: HashMap<Variant, Arc<EventCache>>,
}

impl Tracer {
    /// Opens `variant` (or the scenario's first variant) at its focus.
    pub(crate) fn new(traced: Arc<TracedScenario>, variant: Option<Variant>) -> Tracer {
        let variant = variant
            .filter(|v| traced.run(*v).is_some())
            .or_else(|| traced.first_variant())
            .unwrap_or(Variant::Mha);
        let cursor = traced.start_cursor(variant);
        let mut t = Tracer {
            traced,
            variant,
            cursor,
            saved: HashMap::new(),
            pinned: None,
            breakpoints: BTreeSet::new(),
            prompt: None,
            message: None,
            tab: Tab::Memory,
            select: false,
            width: 120,
            quiz: None,
            checks: Checker::default(),
            lesson: None,
            cache_on: false,
            caches: HashMap::new(),
        };
        t.refresh_check();
        t
    }

    /// Is text being typed (the goto prompt, a quiz answer)? Then letters are the text's.
    pub(crate) fn typing(&self) -> bool {
        self.prompt.is_some()
            || self.quiz.as_ref().is_some_and(|q| !q.input.is_empty())
            || self.lesson.as_ref().is_some_and(|l| !l.input.is_empty())
    }

    /// The quiz's current question, in quiz mode.
    pub(crate) fn question(&self) -> Option<Question> {
        let quiz = self.quiz.as_ref()?;
        let trace = self.traced.trace(self.variant)?;
        quiz::question(
            trace,
            kernel_shape(self.traced.shape, self.variant),
            self.cursor,
            quiz.level,
        )
    }

    /// The write whose value an open question asks: quiz mode's next access at the values
    /// level, when it is a write; a lesson's open `ask = "value"`.
    fn asked(&self, trace: &Trace) -> Option<usize> {
        let next = self.cursor + 1;
        let quiz = self
            .quiz
            .as_ref()
            .filter(|q| q.level == QuizLevel::Values)
            .and_then(|_| {
                trace
                    .events
                    .get(next)
                    .is_some_and(|e| e.op == attn_trace_core::trace::Op::Write)
                    .then_some(next)
            });
        let lesson = self.lesson.as_ref().and_then(|l| {
            let value = matches!(l.stop().ask, Some(attn_trace_core::scenario::lesson::Ask::Value { .. }));
            (value && l.asking(self.variant, self.cursor))
                .then(|| l.here().target)
                .flatten()
        });
        quiz.or(lesson)
    }

    /// Takes in finished gradient checks (on the app's tick); true when one arrived.
    pub(crate) fn tick(&mut self) -> bool {
        self.checks.poll()
    }

    /// Asks the worker for the gradient check the panel shows at the cursor.
    fn refresh_check(&mut self) {
        if let Some(request) = self.check_request() {
            self.checks.want(request);
        }
    }

    /// The gradient check the panel shows at the cursor, unless it is known or under way.
    pub(crate) fn check_request(&self) -> Option<Request> {
        let run = self.traced.run(self.variant)?;
        let inputs = self.traced.inputs.as_ref()?;
        let trace = run.trace.as_ref()?;
        let (grad, off, _) = gradcheck::target(trace, self.cursor)?;
        let p = grad.primal()?;
        if self.checks.asked(&(self.variant, grad, off)) {
            return None;
        }
        let at = |b: Buf| run.tensors.get(b).get(off).copied().unwrap_or(0.0);
        Some(Request {
            key: (self.variant, grad, off),
            inputs: Arc::clone(inputs),
            value: at(p),
            analytic: at(grad),
            label: trace.label(p, off),
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.traced.trace(self.variant).map_or(0, Trace::len)
    }

    /// The selected cell: the pinned one, else the current event's.
    pub(crate) fn selected(&self) -> Option<CellRef> {
        let trace = self.traced.trace(self.variant)?;
        self.pinned
            .or_else(|| trace.events.get(self.cursor).map(|e| (e.buf, e.offset as usize)))
    }

    /// The panels' shared view of the state, `None` for an empty log.
    pub(crate) fn ctx(&self, theme: Theme) -> Option<Ctx<'_>> {
        let trace = self.traced.trace(self.variant)?;
        if self.cursor >= trace.len() {
            return None;
        }
        Some(Ctx {
            traced: &self.traced,
            variant: self.variant,
            trace,
            cursor: self.cursor,
            view: trace.view(self.cursor),
            theme,
            selected: self.selected()?,
            pinned: self.pinned.is_some(),
            breakpoints: &self.breakpoints,
            quiz: self.quiz.is_some()
                || self
                    .lesson
                    .as_ref()
                    .is_some_and(|l| l.asking(self.variant, self.cursor)),
            asked: self.asked(trace),
            cache: self
                .cache_on
                .then(|| self.caches.get(&self.variant))
                .flatten()
                .map(AsRef::as_ref),
        })
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        let out = self.key_here(key);
        self.moved();
        out
    }

    /// After the cursor was set from outside (`tui --at`, a lesson): as after a key.
    pub(crate) fn refresh(&mut self) {
        self.moved();
    }

    /// After the cursor moved: a new quiz question, and the gradient check of the new place.
    fn moved(&mut self) {
        if let Some(q) = self.quiz.as_mut()
            && q.asked_at != self.cursor
        {
            q.asked_at = self.cursor;
            q.input.clear();
            q.tries = 0;
            q.feedback = None;
        }
        self.refresh_check();
        self.refresh_cache();
    }

    /// Runs the current kernel's log through the caches, when they are shown and it has not been.
    fn refresh_cache(&mut self) {
        if !self.cache_on || self.caches.contains_key(&self.variant) {
            return;
        }
        if let Some(trace) = self.traced.trace(self.variant) {
            self.caches
                .insert(self.variant, Arc::new(EventCache::of_machine(trace)));
        }
    }

    /// `m`: shows or hides the cache model.
    pub(super) fn toggle_cache(&mut self) {
        self.cache_on = !self.cache_on;
        self.refresh_cache();
        self.message = Some(match self.caches.get(&self.variant).filter(|_| self.cache_on) {
            Some(c) => {
                let levels: Vec<String> = c.levels.iter().map(cache::LevelSpec::short).collect();
                let whose = if c.from_os {
                    tr!("this machine's")
                } else {
                    tr!("default")
                };
                tr!(
                    "caches ({whose}): {levels}; misses marked on the timeline (m hides)",
                    whose,
                    levels = levels.join(tr!(", "))
                )
            }
            None => tr!("caches hidden").to_string(),
        });
    }

    pub(crate) fn mouse(&mut self, m: MouseEvent, area: Rect, theme: Theme) {
        self.mouse_here(m, area, theme);
        self.moved();
    }
}
