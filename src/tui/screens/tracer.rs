//! The tracer: a cursor over one variant's event log, and every panel in sync with it.
//!
//! State changes only in [`Tracer::key`] / [`Tracer::mouse`]; [`render`] draws from the state and
//! never mutates. Every key is answered with O(1) or O(log n) queries on the trace's indexes.

use crate::analysis::format::phase_title;
use crate::engine::kernel_shape;
use crate::engine::registry::primal;
use crate::kernels::Variant;
use crate::tr;
use crate::trace::{Buf, Pass, Phase};
use crate::tui::gradcheck::{self, Checker, Request};
use crate::tui::quiz::{self, Feedback, Level, Question, Quiz, Verdict};
use crate::tui::theme::Theme;
use crate::tui::walk::{Element, Walk};
use crate::tui::widgets::{
    self, CellRef, Ctx, code, equation, gradcheck as grad_panel, log, memory, quiz as quiz_panel, timeline, variables,
};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The panel shown when the screen is too small for all of them at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
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
pub enum Outcome {
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
}

#[derive(Debug)]
pub struct Tracer {
    pub walk: Arc<Walk>,
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
}

impl Tracer {
    /// Opens `variant` (or the walk's first) at the walk's focus.
    pub fn new(walk: Arc<Walk>, variant: Option<Variant>) -> Tracer {
        let variant = variant
            .filter(|v| walk.run(*v).is_some())
            .or_else(|| walk.first_variant())
            .unwrap_or(Variant::Mha);
        let cursor = walk.start_cursor(variant);
        let mut t = Tracer {
            walk,
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
        };
        t.refresh_check();
        t
    }

    /// Starts quiz mode at `level`.
    pub fn start_quiz(&mut self, level: Level) {
        let mut q = Quiz::new(level, self.cursor);
        q.feedback = Some(Feedback::Note(tr!(
            "predict {what}: type it, Enter checks, v reveals, n skips, l changes the level, Q stops",
            what = level.about()
        )));
        self.quiz = Some(q);
    }

    /// Is text being typed (the goto prompt, a quiz answer)? Then letters are the text's.
    pub fn typing(&self) -> bool {
        self.prompt.is_some() || self.quiz.as_ref().is_some_and(|q| !q.input.is_empty())
    }

    /// The quiz's current question, in quiz mode.
    pub fn question(&self) -> Option<Question> {
        let quiz = self.quiz.as_ref()?;
        let trace = self.walk.trace(self.variant)?;
        quiz::question(
            trace,
            kernel_shape(self.walk.shape, self.variant),
            self.cursor,
            quiz.level,
        )
    }

    /// Takes in finished gradient checks (on the app's tick); true when one arrived.
    pub fn tick(&mut self) -> bool {
        self.checks.poll()
    }

    /// Asks the worker for the gradient check the panel shows at the cursor.
    fn refresh_check(&mut self) {
        let walk = Arc::clone(&self.walk);
        let (Some(run), Some(inputs)) = (walk.run(self.variant), walk.inputs.as_ref()) else {
            return;
        };
        let Some(trace) = run.trace.as_ref() else { return };
        let Some((grad, off, _)) = gradcheck::target(trace, self.cursor) else {
            return;
        };
        let Some(p) = primal(grad) else { return };
        if self.checks.asked(&(self.variant, grad, off)) {
            return;
        }
        let at = |b: Buf| run.tensors.get(b).get(off).copied().unwrap_or(0.0);
        self.checks.want(Request {
            key: (self.variant, grad, off),
            inputs: Arc::clone(inputs),
            value: at(p),
            analytic: at(grad),
            label: trace.label(p, off),
        });
    }

    pub fn len(&self) -> usize {
        self.walk.trace(self.variant).map_or(0, |t| t.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The selected cell: the pinned one, else the current event's.
    pub fn selected(&self) -> Option<CellRef> {
        let trace = self.walk.trace(self.variant)?;
        self.pinned
            .or_else(|| trace.events.get(self.cursor).map(|e| (e.buf, e.offset as usize)))
    }

    /// The panels' shared view of the state, `None` for an empty log.
    pub fn ctx(&self, theme: Theme) -> Option<Ctx<'_>> {
        let trace = self.walk.trace(self.variant)?;
        if self.cursor >= trace.len() {
            return None;
        }
        Some(Ctx {
            walk: &self.walk,
            variant: self.variant,
            trace,
            cursor: self.cursor,
            view: trace.view(self.cursor),
            theme,
            selected: self.selected()?,
            pinned: self.pinned.is_some(),
            breakpoints: &self.breakpoints,
            quiz: self.quiz.is_some(),
        })
    }

    fn go(&mut self, to: Option<usize>, none: &str) {
        match to {
            Some(n) if n < self.len() => self.cursor = n,
            _ => self.message = Some(none.to_string()),
        }
    }

    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        let out = self.key_here(key);
        self.moved();
        out
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
    }

    fn key_here(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        if self.prompt.is_some() {
            self.prompt_key(key);
            return Outcome::Stay;
        }
        if let Some(out) = self.quiz_key(key) {
            return out;
        }
        // the walk is shared: holding our own handle lets the trace outlive `&mut self` calls
        let walk = Arc::clone(&self.walk);
        let len = walk.trace(self.variant).map_or(0, |t| t.len());
        let Some(trace) = walk.trace(self.variant).filter(|_| len > 0) else {
            return match key.code {
                KeyCode::Char('q') | KeyCode::Esc => Outcome::Back,
                KeyCode::Char('?') => Outcome::Help,
                _ => Outcome::Stay,
            };
        };
        let n = self.cursor;
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let arrows_select = self.select || shift;
        match key.code {
            KeyCode::Left | KeyCode::Right | KeyCode::Up | KeyCode::Down if arrows_select => {
                self.move_selection(key.code)
            }
            KeyCode::Char('n') | KeyCode::Right => self.go(Some(n + 1), tr!("last event of the log")),
            KeyCode::Char('p') | KeyCode::Left => self.go(n.checked_sub(1), tr!("first event of the log")),
            KeyCode::Char('j') | KeyCode::Down => self.go(trace.next_iteration(n, 0), tr!("no next iteration")),
            KeyCode::Char('k') | KeyCode::Up => self.go(trace.prev_iteration(n, 0), tr!("no previous iteration")),
            KeyCode::Char('J') => self.go(
                trace.next_iteration(n, 1),
                tr!("no next iteration of the enclosing loop"),
            ),
            KeyCode::Char('K') => self.go(
                trace.prev_iteration(n, 1),
                tr!("no previous iteration of the enclosing loop"),
            ),
            KeyCode::Char(']') => self.go(trace.next_phase(n), tr!("this is the last phase")),
            KeyCode::Char('[') => self.go(trace.prev_phase(n), tr!("this is the first phase")),
            KeyCode::PageDown => self.cursor = (n + 100).min(len - 1),
            KeyCode::PageUp => self.cursor = n.saturating_sub(100),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = len - 1,
            KeyCode::Char('f') => self.toggle_pass(),
            KeyCode::Tab | KeyCode::BackTab => {
                let step = if key.code == KeyCode::Tab { 1 } else { -1 };
                if let Err(v) = self.toggle_variant(step) {
                    return Outcome::NotTraced(v);
                }
            }
            KeyCode::Char('g') => self.prompt = Some(String::new()),
            KeyCode::Char('w') => self.who_wrote(),
            KeyCode::Char('r') => self.who_reads(),
            KeyCode::Char('b') => self.toggle_breakpoint(),
            KeyCode::Char('c') => self.continue_to(true),
            KeyCode::Char('C') => self.continue_to(false),
            KeyCode::Char('s') => {
                self.select = !self.select;
                if self.select && self.pinned.is_none() {
                    self.pinned = self.selected();
                }
                self.message = Some(
                    if self.select {
                        tr!("arrows move the selected cell (s or Esc to step again)")
                    } else {
                        tr!("arrows step through events")
                    }
                    .into(),
                );
            }
            KeyCode::Char('t') => {
                let k = Tab::ALL.iter().position(|&t| t == self.tab).unwrap_or(0);
                self.tab = Tab::ALL[(k + 1) % Tab::ALL.len()];
            }
            KeyCode::Char('1') => self.tab = Tab::Memory,
            KeyCode::Char('2') => self.tab = Tab::Code,
            KeyCode::Char('3') => self.tab = Tab::Log,
            KeyCode::Char('4') => self.tab = Tab::Vars,
            KeyCode::Char('Q') => self.start_quiz(Level::default()),
            KeyCode::Char('>') => self.along_timeline(true),
            KeyCode::Char('<') => self.along_timeline(false),
            KeyCode::Char('}') => self.next_access(true),
            KeyCode::Char('{') => self.next_access(false),
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Esc if self.select || self.pinned.is_some() => {
                self.select = false;
                self.pinned = None;
            }
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Back,
            _ => {}
        }
        Outcome::Stay
    }

    /// Quiz mode's own keys; `None` leaves the key to the tracer.
    fn quiz_key(&mut self, key: KeyEvent) -> Option<Outcome> {
        let quiz = self.quiz.as_mut()?;
        match key.code {
            KeyCode::Char(c)
                if c.is_ascii_digit() || matches!(c, '.' | '-' | ',' | ' ') || (c == 'e' && !quiz.input.is_empty()) =>
            {
                if quiz.input.chars().count() < 160 {
                    quiz.input.push(c);
                }
            }
            KeyCode::Backspace => {
                quiz.input.pop();
            }
            KeyCode::Esc if !quiz.input.is_empty() => quiz.input.clear(),
            KeyCode::Enter => return Some(self.quiz_answer()),
            KeyCode::Char('v') => return Some(self.quiz_reveal()),
            KeyCode::Char('n') => return Some(self.quiz_skip()),
            KeyCode::Char('l') => {
                quiz.level = quiz.level.next();
                quiz.input.clear();
                quiz.tries = 0;
                quiz.feedback = Some(Feedback::Note(tr!(
                    "level {level}: predict {what}",
                    level = quiz.level.name(),
                    what = quiz.level.about()
                )));
            }
            KeyCode::Char('Q') => {
                self.quiz = None;
                self.message = Some(tr!("quiz off (Q starts it again)").into());
            }
            _ => return None,
        }
        Some(Outcome::Stay)
    }

    /// Enter in quiz mode: the typed answer against the log.
    fn quiz_answer(&mut self) -> Outcome {
        let walk = Arc::clone(&self.walk);
        let (Some(trace), Some(q)) = (walk.trace(self.variant), self.question()) else {
            if let Some(quiz) = self.quiz.as_mut() {
                quiz.feedback = Some(Feedback::Note(tr!("the log ends here: nothing left to predict").into()));
            }
            return Outcome::Stay;
        };
        let Some(quiz) = self.quiz.as_mut() else {
            return Outcome::Stay;
        };
        let shape = kernel_shape(walk.shape, self.variant);
        let math = equation::math(trace.phase_at(q.first()), self.variant)
            .first()
            .copied()
            .unwrap_or("");
        let after = quiz::access(trace, shape, q.target() + 1);
        let input = std::mem::take(&mut quiz.input);
        let span = trace.phase_span(q.first());
        match quiz::check(&q, quiz.level, &input, math, after.as_ref()) {
            Verdict::Right => {
                let first_try = quiz.tries == 0;
                let score = quiz.score(self.variant, span);
                if first_try {
                    score.right += 1;
                } else {
                    score.retried += 1;
                }
                quiz.feedback = Some(Feedback::Right(match &q {
                    Question::One(a) => tr!("correct: {working}", working = a.working()),
                    Question::Iteration { name, reads, .. } => {
                        tr!("correct: the {n} reads of iteration {name}", n = reads.len(), name)
                    }
                }));
                self.quiz_step(q.target())
            }
            Verdict::Wrong { text, missed } => {
                if quiz.tries == 0 {
                    *quiz.score(self.variant, span).missed.entry(missed).or_default() += 1;
                }
                quiz.tries += 1;
                quiz.feedback = Some(Feedback::Wrong(tr!("{text} · try again, or v reveals", text)));
                Outcome::Stay
            }
            Verdict::Incomplete(text) => {
                quiz.input = input;
                quiz.feedback = Some(Feedback::Note(text));
                Outcome::Stay
            }
        }
    }

    /// `v` in quiz mode: the answer with its working, then the step.
    fn quiz_reveal(&mut self) -> Outcome {
        let walk = Arc::clone(&self.walk);
        let (Some(trace), Some(q)) = (walk.trace(self.variant), self.question()) else {
            return Outcome::Stay;
        };
        let Some(quiz) = self.quiz.as_mut() else {
            return Outcome::Stay;
        };
        let untried = quiz.tries == 0;
        let score = quiz.score(self.variant, trace.phase_span(q.first()));
        score.revealed += 1;
        if untried {
            let missed = match &q {
                Question::One(a) => a.key(),
                Question::Iteration { name, .. } => tr!("iteration {name}", name),
            };
            *score.missed.entry(missed).or_default() += 1;
        }
        quiz.feedback = Some(Feedback::Revealed(tr!("answer: {answer}", answer = q.reveal())));
        self.quiz_step(q.target())
    }

    /// `n` in quiz mode: one step without an answer.
    fn quiz_skip(&mut self) -> Outcome {
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else {
            return Outcome::Stay;
        };
        if self.cursor + 1 >= trace.len() {
            self.message = Some(tr!("last event of the log").into());
            return Outcome::Stay;
        }
        if let Some(quiz) = self.quiz.as_mut() {
            quiz.score(self.variant, trace.phase_span(self.cursor + 1)).skipped += 1;
            quiz.feedback = None;
        }
        self.quiz_step(self.cursor + 1)
    }

    /// Moves the cursor to `to` for the quiz; when that ends a phase the learner was asked
    /// about (or the log), its summary.
    fn quiz_step(&mut self, to: usize) -> Outcome {
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else {
            return Outcome::Stay;
        };
        let from = self.cursor;
        self.cursor = to.min(trace.len().saturating_sub(1));
        let Some(quiz) = self.quiz.as_mut() else {
            return Outcome::Stay;
        };
        quiz.asked_at = self.cursor;
        quiz.tries = 0;
        quiz.input.clear();
        let (a, b) = (trace.phase_span(from), trace.phase_span(self.cursor));
        let ended = if a != b {
            Some(a)
        } else if self.cursor + 1 >= trace.len() {
            Some(b)
        } else {
            None
        };
        let Some(k) = ended else { return Outcome::Stay };
        match (quiz.scores.get(&(self.variant, k)), trace.phases.get(k)) {
            (Some(score), Some(&(_, phase))) if score.asked() > 0 => Outcome::Note {
                title: tr!(
                    "Quiz · {phase} ({pass}) done",
                    phase = phase.name(),
                    pass = phase.pass().name()
                ),
                text: score.summary(),
            },
            _ => Outcome::Stay,
        }
    }

    fn prompt_key(&mut self, key: KeyEvent) {
        let Some(text) = self.prompt.as_mut() else {
            return;
        };
        match key.code {
            KeyCode::Esc => self.prompt = None,
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Enter => {
                let text = self.prompt.take().unwrap_or_default();
                if let Err(e) = self.goto(&text) {
                    self.message = Some(e);
                }
            }
            KeyCode::Char(c) if text.len() < 64 => text.push(c),
            _ => {}
        }
    }

    /// `g`: an event number, an element `b=0 h=1 i=2 j=1`, a cell `scores[16]` / `q[0,2,1,0]`,
    /// or a phase name.
    pub fn goto(&mut self, text: &str) -> Result<(), String> {
        let walk = Arc::clone(&self.walk);
        let trace = walk.trace(self.variant).ok_or(tr!("this variant has no trace"))?;
        let text = text.trim();
        let len = trace.len();
        if len == 0 {
            return Err(tr!("this variant recorded no events").into());
        }
        if let Ok(n) = text.trim_start_matches('#').parse::<usize>() {
            if n >= len {
                return Err(tr!(
                    "event {n} is past the end: the log has {len} events (0..{last})",
                    n,
                    len,
                    last = len - 1
                ));
            }
            self.cursor = n;
            return Ok(());
        }
        if let Some(phase) = Phase::from_name(text) {
            let k = trace.phases.iter().position(|&(s, p)| p == phase && (s as usize) < len);
            let k = k.ok_or_else(|| tr!("phase {phase} is not in this trace", phase))?;
            self.cursor = trace.phases[k].0 as usize;
            return Ok(());
        }
        if text.contains('=') {
            let e = Element::parse(text)?;
            let pass = trace.view(self.cursor).pass;
            let n = walk.element_event(self.variant, pass, e).ok_or_else(|| {
                let sh = walk.shape;
                tr!(
                    "no score element b={b} h={h} i={i} j={j} in {variant}: B={nb}, H={nh}, T={nt}",
                    b = e.b,
                    h = e.h,
                    i = e.i,
                    j = e.j,
                    variant = self.variant,
                    nb = sh.b,
                    nh = walk.heads(self.variant),
                    nt = sh.t
                )
            })?;
            self.cursor = n;
            return Ok(());
        }
        if let Some((name, rest)) = text.split_once('[') {
            let name = name.trim();
            let inside = rest
                .strip_suffix(']')
                .ok_or(tr!("a cell is written like q[10] or scores[0,1,2,1]"))?;
            let buf = Buf::from_name(name).ok_or_else(|| tr!("no buffer named {name}", name = format!("{name:?}")))?;
            let info = trace
                .buffer(buf)
                .ok_or_else(|| tr!("{name} is not part of this trace", name))?;
            let parts: Vec<&str> = inside.split(',').map(str::trim).collect();
            let nums: Vec<usize> = parts
                .iter()
                .map(|p| {
                    p.parse::<usize>()
                        .map_err(|_| tr!("{p} is not a whole number", p = format!("{p:?}")))
                })
                .collect::<Result<_, _>>()?;
            let layout = info.layout();
            let off = match nums.as_slice() {
                [off] => *off,
                idx => layout.offset(idx).ok_or_else(|| {
                    tr!(
                        "{name}[{idx}] is not in {name} {sizes} ({names})",
                        name,
                        idx = inside.trim(),
                        sizes = layout.sizes_text(),
                        names = layout.names().join(",")
                    )
                })?,
            };
            if off >= info.len() {
                return Err(tr!(
                    "{name}[{off}] is out of range: {name} has {n} elements",
                    name,
                    off,
                    n = info.len()
                ));
            }
            let n = trace
                .index
                .first_access(buf, off)
                .ok_or_else(|| tr!("{name}[{off}] is never accessed in this trace", name, off))?;
            self.cursor = n;
            self.pinned = Some((buf, off));
            return Ok(());
        }
        Err(tr!("goto: an event number (123), an element (b=0 h=1 i=2 j=1), a cell (scores[16]) or a phase").into())
    }

    fn who_wrote(&mut self) {
        let Some((buf, off)) = self.selected() else { return };
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else { return };
        match trace.index.last_write_before(buf, off, self.cursor) {
            Some(w) => {
                self.cursor = w;
                self.message = Some(tr!("event {w} last wrote {buf}[{off}]", w, buf, off));
            }
            None => {
                let v = trace
                    .buffer(buf)
                    .and_then(|b| b.initial.get(off))
                    .copied()
                    .unwrap_or(0.0);
                self.message = Some(tr!(
                    "nothing wrote {buf}[{off}] before this event: it holds its initial value {v}",
                    buf,
                    off,
                    v = widgets::num(v)
                ));
            }
        }
        self.pinned = Some((buf, off));
    }

    fn who_reads(&mut self) {
        let Some((buf, off)) = self.selected() else { return };
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else { return };
        match trace.index.next_read_after(buf, off, self.cursor) {
            Some(r) => {
                self.cursor = r;
                self.message = Some(tr!("event {r} reads {buf}[{off}] next", r, buf, off));
            }
            None => self.message = Some(tr!("nothing reads {buf}[{off}] after this event", buf, off)),
        }
        self.pinned = Some((buf, off));
    }

    fn toggle_breakpoint(&mut self) {
        let Some(cell) = self.selected() else { return };
        if self.breakpoints.remove(&cell) {
            self.message = Some(tr!("breakpoint on {buf}[{off}] removed", buf = cell.0, off = cell.1));
        } else {
            self.breakpoints.insert(cell);
            self.message = Some(tr!(
                "breakpoint on {buf}[{off}]: c / C continue to its accesses",
                buf = cell.0,
                off = cell.1
            ));
        }
    }

    /// `c` / `C`: the nearest access of any breakpoint cell after / before the cursor.
    fn continue_to(&mut self, forward: bool) {
        if self.breakpoints.is_empty() {
            self.message = Some(tr!("no breakpoints: select a cell and press b").into());
            return;
        }
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else { return };
        let n = self.cursor;
        let hits = self.breakpoints.iter().filter_map(|&(buf, off)| {
            if forward {
                trace.index.next_access_after(buf, off, n)
            } else {
                trace.index.prev_access_before(buf, off, n)
            }
        });
        let to = if forward { hits.min() } else { hits.max() };
        self.go(
            to,
            if forward {
                tr!("no later breakpoint hit")
            } else {
                tr!("no earlier breakpoint hit")
            },
        );
    }

    /// `>` / `<`: the first event of the next / previous column of the timeline.
    fn along_timeline(&mut self, forward: bool) {
        let (len, w) = (self.len(), self.width.max(1) as usize);
        let here = timeline::column_of(self.cursor, len, w);
        let mut x = here;
        let to = loop {
            x = match (forward, x.checked_sub(1)) {
                (true, _) if x + 1 < w => x + 1,
                (false, Some(prev)) => prev,
                _ => break None,
            };
            let r = timeline::range(x, len, w);
            if !r.is_empty() {
                break Some(r.start);
            }
        };
        let none = if forward {
            tr!("the cursor is in the timeline's last column")
        } else {
            tr!("the cursor is in the timeline's first column")
        };
        self.go(to, none);
    }

    /// `}` / `{`: the next / previous access of the selected cell (the timeline's ticks).
    fn next_access(&mut self, forward: bool) {
        let Some((buf, off)) = self.selected() else { return };
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else { return };
        let to = if forward {
            trace.index.next_access_after(buf, off, self.cursor)
        } else {
            trace.index.prev_access_before(buf, off, self.cursor)
        };
        match to {
            Some(n) => self.cursor = n,
            None => {
                self.message = Some(if forward {
                    tr!("no access of {buf}[{off}] after this event", buf, off)
                } else {
                    tr!("no access of {buf}[{off}] before this event", buf, off)
                });
            }
        }
        self.pinned = Some((buf, off));
    }

    fn move_selection(&mut self, code: KeyCode) {
        let Some((buf, off)) = self.selected() else { return };
        let Some(info) = self.walk.trace(self.variant).and_then(|t| t.buffer(buf)) else {
            return;
        };
        // a row is what the memory panel draws as one: everything after the row dimension
        let layout = info.layout();
        let r = layout.row_dim().unwrap_or(0);
        let row_len = layout.stride(r).max(1);
        let rows = layout.dims.get(r).map_or(1, |d| d.size);
        let block = row_len * rows;
        let next = match code {
            KeyCode::Left => off.checked_sub(1).filter(|o| o / row_len == off / row_len),
            KeyCode::Right => Some(off + 1).filter(|o| o / row_len == off / row_len),
            KeyCode::Up => off.checked_sub(row_len).filter(|o| o / block == off / block),
            KeyCode::Down => Some(off + row_len).filter(|o| o / block == off / block),
            _ => None,
        };
        if let Some(o) = next.filter(|&o| o < info.len()) {
            self.pinned = Some((buf, o));
        }
    }

    fn toggle_pass(&mut self) {
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else { return };
        let here = trace.view(self.cursor).pass;
        let there = match here {
            Pass::Forward => Pass::Backward,
            Pass::Backward => Pass::Forward,
        };
        let first = trace
            .phases
            .iter()
            .find(|(s, p)| p.pass() == there && (*s as usize) < trace.len())
            .map(|&(s, _)| s as usize);
        let Some(first) = first else {
            self.message = Some(tr!("this trace has no {pass} pass", pass = there.name()));
            return;
        };
        self.saved.insert((self.variant, here), self.cursor);
        self.cursor = self.saved.get(&(self.variant, there)).copied().unwrap_or(first);
    }

    /// Moves to the scenario's next kernel (`step` 1) or previous one (−1), wrapping around;
    /// the kernel asked for when the scenario traces no other.
    fn toggle_variant(&mut self, step: isize) -> Result<(), Variant> {
        let walk = Arc::clone(&self.walk);
        let variants = walk.variants();
        let n = variants.len() as isize;
        let here_at = variants.iter().position(|&v| v == self.variant).unwrap_or(0) as isize;
        let other = variants[(here_at + step).rem_euclid(n.max(1)) as usize % variants.len().max(1)];
        let (Some(here), Some(there)) = (
            walk.trace(self.variant),
            walk.trace(other).filter(|_| other != self.variant),
        ) else {
            return Err(match self.variant {
                Variant::Baseline => Variant::Mha,
                Variant::Mha | Variant::Gqa => Variant::Baseline,
                Variant::Flash => Variant::Mha,
            });
        };
        let v = here.view(self.cursor);
        // the same score element in the other layout, else the same phase, else where we were
        let layout = here.buffer(v.buf).map(|b| b.layout()).filter(|l| l.is_pairs());
        let element = layout.map(|l| {
            let at = |name| l.coord(v.offset, name);
            let h = if other == Variant::Baseline { 0 } else { at("h") };
            Element {
                b: at("b"),
                h,
                i: at("i"),
                j: at("j"),
            }
        });
        // flash's score tiles hold the pair (i0 + ii, j0 + jj) of head hh
        let var = |name| v.vars.iter().rev().find(|(n, _)| *n == name).map(|&(_, x)| x);
        let tile_element = matches!(v.buf, Buf::STile | Buf::DSTile)
            .then(|| {
                Some(Element {
                    b: var("bb")?,
                    h: if other == Variant::Baseline { 0 } else { var("hh")? },
                    i: var("i0")? + var("ii")?,
                    j: var("j0")? + var("jj")?,
                })
            })
            .flatten();
        let element = element.or(tile_element);
        let same_element = element.and_then(|e| walk.element_event(other, v.pass, e));
        let same_phase = there
            .phases
            .iter()
            .find(|&&(s, p)| p == v.phase && (s as usize) < there.len())
            .map(|&(s, _)| s as usize);
        let saved = self.saved.get(&(other, v.pass)).copied();
        self.saved.insert((self.variant, v.pass), self.cursor);
        self.variant = other;
        self.cursor = same_element
            .or(same_phase)
            .or(saved)
            .unwrap_or(0)
            .min(there.len().saturating_sub(1));
        self.pinned = None;
        self.breakpoints.clear();
        Ok(())
    }

    pub fn mouse(&mut self, m: MouseEvent, area: Rect, theme: Theme) {
        self.mouse_here(m, area, theme);
        self.moved();
    }

    fn mouse_here(&mut self, m: MouseEvent, area: Rect, theme: Theme) {
        match m.kind {
            MouseEventKind::ScrollDown => self.go(Some(self.cursor + 1), tr!("last event of the log")),
            MouseEventKind::ScrollUp => self.go(self.cursor.checked_sub(1), tr!("first event of the log")),
            MouseEventKind::Down(MouseButton::Left) => {
                let Some(ctx) = self.ctx(theme) else { return };
                let areas = areas(area, self, &ctx);
                if m.row == areas.timeline.y && areas.timeline.height > 0 {
                    let x = m.column.saturating_sub(areas.timeline.x) as usize;
                    let cols = timeline::strip(
                        ctx.trace,
                        areas.timeline.width as usize,
                        ctx.cursor,
                        Some(ctx.selected),
                        &self.breakpoints,
                    );
                    if let Some(n) = timeline::target(&cols, x) {
                        self.cursor = n;
                    }
                    return;
                }
                if let Some(tabs) = areas.tabs
                    && m.row == tabs.y
                {
                    let mut x = tabs.x;
                    for (tab, label) in tab_labels(areas.wide_vars) {
                        let w = widgets::cols(&label) as u16;
                        if m.column >= x && m.column < x + w {
                            self.tab = tab;
                        }
                        x += w;
                    }
                    return;
                }
                if let Some(mem) = areas.memory {
                    let inner = inner(mem);
                    let hit = memory::hit(&memory::plan(inner, &ctx), ctx.trace, m.column, m.row);
                    if let Some(cell) = hit {
                        self.pinned = Some(cell);
                        self.message = Some(tr!(
                            "selected {buf}[{off}]: w, r, b act on it",
                            buf = cell.0,
                            off = cell.1
                        ));
                    }
                }
            }
            _ => {}
        }
    }
}

/// Parses `b=0 h=1 i=2 j=1` (commas or spaces; `b` and `h` default to 0).
/// Where each panel goes. Panels that do not fit are `None` and reached through the tabs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Areas {
    pub header: Rect,
    pub code: Option<Rect>,
    pub vars: Option<Rect>,
    pub eq: Option<Rect>,
    pub memory: Option<Rect>,
    pub log: Option<Rect>,
    pub tabs: Option<Rect>,
    /// The gradient check, in the backward pass.
    pub grad: Option<Rect>,
    /// The quiz's question and feedback, in quiz mode.
    pub quiz: Option<Rect>,
    /// The timeline strip, one row above the status bar.
    pub timeline: Rect,
    pub status: Rect,
    /// The variables panel is itself a tab (very small screens).
    pub wide_vars: bool,
    /// The gradient check and the quiz are bordered panels (large screens), else bare rows.
    pub boxed: bool,
}

/// Rows a bordered paragraph of `lines` needs at `width` columns, wrapping included.
fn wrapped_height(lines: &[Line], width: u16) -> u16 {
    let w = width.saturating_sub(2).max(1) as usize;
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(w)).sum();
    rows as u16 + 2
}

fn inner(r: Rect) -> Rect {
    ratatui::widgets::Block::bordered().inner(r)
}

fn tab_labels(with_vars: bool) -> Vec<(Tab, String)> {
    Tab::ALL
        .iter()
        .enumerate()
        .filter(|&(_, &t)| with_vars || t != Tab::Vars)
        .map(|(k, &t)| (t, format!(" {} {} ", k + 1, t.name())))
        .collect()
}

/// The quiz panel's lines, in quiz mode.
fn quiz_lines<'a>(st: &Tracer, t: Theme) -> Option<Vec<Line<'a>>> {
    let quiz = st.quiz.as_ref()?;
    Some(quiz_panel::lines(quiz, st.question().as_ref(), t))
}

/// The gradient check's lines, in the backward pass of a walk that can re-run its inputs.
fn grad_lines<'a>(st: &Tracer, ctx: &Ctx, wide: bool) -> Option<Vec<Line<'a>>> {
    (ctx.view.pass == Pass::Backward && st.walk.inputs.is_some()).then(|| grad_panel::lines(ctx, &st.checks, wide))
}

/// Large screens show every panel; from 80×24 the variables and equation stay in view and the
/// code, memory and log share the rest as tabs; below that everything is a tab. The gradient
/// check (backward) sits under the equation, the quiz above the timeline.
pub fn areas(area: Rect, st: &Tracer, ctx: &Ctx) -> Areas {
    let wide = area.width >= 110 && area.height >= 30;
    let quiz = quiz_lines(st, ctx.theme);
    let quiz_h = match &quiz {
        Some(l) if wide => (widgets::wrapped_rows(l, area.width.saturating_sub(2)) + 2).min(7),
        Some(l) => widgets::wrapped_rows(l, area.width).min(3),
        None => 0,
    };
    let head_h = header_lines(st, ctx, area.width).len() as u16;
    let status_h = status_lines(st, ctx, area.width).len() as u16;
    let [header, body, quiz_area, timeline, status] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Fill(1),
        Constraint::Length(quiz_h),
        Constraint::Length(1),
        Constraint::Length(status_h),
    ])
    .areas(area);
    // the left column is wide enough for a whole `q_base = … = 10` line where possible
    let left_w = if wide {
        (area.width / 2).max(64).min(area.width - 40)
    } else {
        area.width
    };
    let vars_h = wrapped_height(&variables::lines(ctx), left_w);
    let eq_h = wrapped_height(&equation::lines(ctx), left_w);
    // below the large layout the quiz needs the rows more than the gradient check does
    let grad = grad_lines(st, ctx, wide).filter(|_| wide || st.quiz.is_none());
    let grad_h = match &grad {
        Some(l) if wide => (widgets::wrapped_rows(l, left_w.saturating_sub(2)) + 2).min(9),
        Some(l) => widgets::wrapped_rows(l, left_w).min(2),
        None => 0,
    };
    let mut a = Areas {
        header,
        timeline,
        status,
        quiz: (quiz_h > 0).then_some(quiz_area),
        boxed: wide,
        ..Areas::default()
    };
    if wide {
        let [left, right] = Layout::horizontal([Constraint::Length(left_w), Constraint::Fill(1)]).areas(body);
        let [code, vars, eq, grad_area] = Layout::vertical([
            Constraint::Fill(1),
            Constraint::Length(vars_h),
            Constraint::Length(eq_h),
            Constraint::Length(grad_h),
        ])
        .areas(left);
        let [mem, log] = Layout::vertical([Constraint::Percentage(64), Constraint::Percentage(36)]).areas(right);
        a.code = Some(code);
        a.vars = Some(vars);
        a.eq = Some(eq);
        a.grad = (grad_h > 0).then_some(grad_area);
        a.memory = Some(mem);
        a.log = Some(log);
    } else if body.height >= vars_h.min(8) + 7 + if st.quiz.is_some() { 4 } else { 7 } && area.width >= 40 {
        let [vars, eq, grad_area, tabs, rest] = Layout::vertical([
            Constraint::Length(vars_h.min(8)),
            Constraint::Length(eq_h.min(6)),
            Constraint::Length(grad_h),
            Constraint::Length(1),
            Constraint::Fill(1),
        ])
        .areas(body);
        a.vars = Some(vars);
        a.eq = Some(eq);
        a.grad = (grad_h > 0).then_some(grad_area);
        a.tabs = Some(tabs);
        match st.tab {
            Tab::Code => a.code = Some(rest),
            Tab::Log => a.log = Some(rest),
            Tab::Memory | Tab::Vars => a.memory = Some(rest),
        }
    } else {
        let [tabs, rest] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(body);
        a.tabs = Some(tabs);
        a.wide_vars = true;
        match st.tab {
            Tab::Code => a.code = Some(rest),
            Tab::Log => a.log = Some(rest),
            Tab::Memory => a.memory = Some(rest),
            Tab::Vars => a.vars = Some(rest),
        }
    }
    a
}

pub fn render(frame: &mut Frame, area: Rect, st: &Tracer, theme: Theme) {
    let Some(ctx) = st.ctx(theme) else {
        let text = tr!("{title}: this variant recorded no events", title = st.walk.title);
        frame.render_widget(Paragraph::new(text), area);
        return;
    };
    let a = areas(area, st, &ctx);
    let t = theme;
    // the title bold, the rest dim, over as many lines as it takes
    let title_len = st.walk.title.len() + 1;
    let header: Vec<Line> = header_lines(st, &ctx, area.width)
        .into_iter()
        .enumerate()
        .map(|(k, text)| {
            if k > 0 || text.len() < title_len || !text.is_char_boundary(title_len) {
                return Line::styled(text, t.dim());
            }
            let (head, rest) = text.split_at(title_len);
            Line::from(vec![
                Span::styled(head.to_string(), t.title()),
                Span::styled(rest.to_string(), t.dim()),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(header), a.header);
    if let Some(r) = a.code {
        code::render(frame, r, &ctx, false);
    }
    if let Some(r) = a.vars {
        variables::render(frame, r, &ctx, false);
    }
    if let Some(r) = a.eq {
        equation::render(frame, r, &ctx, false);
    }
    if let Some(r) = a.memory {
        memory::render(frame, r, &ctx, st.select);
    }
    if let Some(r) = a.log {
        // in quiz mode the log does not give the next access away
        let shown = ctx.quiz.then_some(ctx.cursor);
        log::render_until(frame, r, &ctx, false, shown);
    }
    if let (Some(r), Some(lines)) = (a.grad, grad_lines(st, &ctx, a.boxed)) {
        let title = tr!(" Gradient check · L = Σ out ⊙ d_out ");
        boxed_text(frame, r, a.boxed.then_some((title, t.border(false))), &lines);
    }
    if let (Some(r), Some(lines)) = (a.quiz, quiz_lines(st, t)) {
        let title = tr!(" Quiz · Enter check · v reveal · n skip · l level · Q stop ");
        boxed_text(frame, r, a.boxed.then_some((title, t.border(true))), &lines);
    }
    if let Some(r) = a.tabs {
        let mut spans = Vec::new();
        let shown = if !a.wide_vars && st.tab == Tab::Vars {
            Tab::Memory
        } else {
            st.tab
        };
        for (tab, label) in tab_labels(a.wide_vars) {
            spans.push(Span::styled(label, if tab == shown { t.cursor() } else { t.dim() }));
        }
        let used: usize = spans.iter().map(|s| s.width()).sum();
        let more = tr!("  t: next tab");
        if used + widgets::cols(more) <= r.width as usize {
            spans.push(Span::styled(more, t.dim()));
        }
        frame.render_widget(Paragraph::new(Line::from(spans)), r);
    }
    let cols = timeline::strip(
        ctx.trace,
        a.timeline.width as usize,
        ctx.cursor,
        Some(ctx.selected),
        ctx.breakpoints,
    );
    timeline::render(frame.buffer_mut(), a.timeline, ctx.trace, &cols, t);
    render_status(frame, a.status, st, &ctx);
}

/// `lines` word-wrapped into `area`, in a titled border when one is given.
fn boxed_text(frame: &mut Frame, area: Rect, border: Option<(&str, ratatui::style::Style)>, lines: &[Line]) {
    let inner = match border {
        Some((title, style)) => {
            let block = Block::bordered().title(title).border_style(style);
            let inner = block.inner(area);
            frame.render_widget(block, area);
            inner
        }
        None => area,
    };
    widgets::draw_wrapped(frame.buffer_mut(), inner, lines);
}

/// The header: the scenario's title, the kernel, the pass and what the phase computes, as much
/// of it as fits (the kernel and pass are in the status line too).
fn header_lines(st: &Tracer, ctx: &Ctx, width: u16) -> Vec<String> {
    let v = &ctx.view;
    let title = &st.walk.title;
    let what = phase_title(v.phase, &st.walk.mask);
    let choices = [
        format!(" {title} · {} · {} · {what}", st.variant, v.pass.name()),
        format!(" {title} · {what}"),
        format!(" {title} · {}", v.phase.name()),
        format!(" {title}"),
    ];
    widgets::bar::header(&choices, width)
}

/// The status line: where the cursor is, then the goto prompt, a message, or the keys, as much
/// of them as fits; a message goes on the next line rather than be cut.
fn status_lines(st: &Tracer, ctx: &Ctx, width: u16) -> Vec<(String, String)> {
    let (n, len) = (ctx.cursor, ctx.trace.len());
    let (variant, pass, phase) = (st.variant, ctx.view.pass.name(), ctx.view.phase.name());
    let lefts = [
        format!(" #{n}/{len} │ {variant} │ {pass} │ {phase} "),
        format!(" #{n}/{len} │ {phase} "),
        format!(" #{n} "),
    ];
    if let Some(p) = &st.prompt {
        let rights = [
            tr!(" goto: {p}▏ (123 · b=0 h=1 i=2 j=1 · scores[16] · Enter/Esc)", p),
            tr!(" goto: {p}▏ (123 · b=0 h=1 i=2 j=1 · scores[16])", p),
            tr!(" goto: {p}▏", p),
        ];
        return widgets::bar::status(&lefts, &rights, true, width);
    }
    if let Some(m) = &st.message {
        return widgets::bar::status(&lefts, &[format!(" {m}")], true, width);
    }
    if let Some(q) = &st.quiz {
        // the score of the phase the next access is in
        let next = (ctx.cursor + 1).min(ctx.trace.len().saturating_sub(1));
        let span = ctx.trace.phase_span(next);
        let phase = ctx.trace.phases.get(span).map_or("", |&(_, p)| p.name());
        let score = q.scores.get(&(st.variant, span)).map_or("0/0".into(), |s| s.short());
        let level = q.level.name();
        let rights = [
            tr!(
                " quiz {level} · {phase} {score} · v reveal · n skip · l level · Q stop",
                level,
                phase,
                score
            ),
            tr!(
                " quiz {level} · {phase} {score} · v reveal · n skip · Q stop",
                level,
                phase,
                score
            ),
            tr!(" quiz {phase} {score} · ? keys", phase, score),
        ];
        // the phase is in the score: below the widest, the position is the one to shorten
        let whole = widgets::cols(&lefts[0]) + widgets::cols(&rights[0]) <= width as usize;
        return widgets::bar::status(if whole { &lefts } else { &lefts[1..] }, &rights, true, width);
    }
    let hints = [
        tr!(
            " n/p step · j/k iter · J/K outer · ]/[ phase · g goto · w/r who · b/c break · f pass · Tab kernel · ? keys"
        ),
        tr!(" n/p step · j/k iter · ]/[ phase · g goto · w/r · b/c · f · Tab · ? keys"),
        tr!(" n/p step · j/k iter · ]/[ phase · g goto · ? keys"),
        tr!(" n/p · j/k · ]/[ · g · ? keys"),
        tr!(" ? keys"),
    ]
    .map(String::from);
    widgets::bar::status(&lefts, &hints, false, width)
}

fn render_status(frame: &mut Frame, area: Rect, st: &Tracer, ctx: &Ctx) {
    let t = ctx.theme;
    let lines = status_lines(st, ctx, area.width);
    let right = if st.prompt.is_some() || st.message.is_some() || st.quiz.is_some() {
        t.status().patch(t.key())
    } else {
        t.status()
    };
    widgets::bar::render_status(frame.buffer_mut(), area, &lines, t.status(), right);
}

/// The logical coordinates of the selected cell, for tests and the status of the compare view.
pub fn selected_index(st: &Tracer) -> Option<Vec<usize>> {
    let (buf, off) = st.selected()?;
    let info = st.walk.trace(st.variant)?.buffer(buf)?;
    Some(info.layout().index(off))
}
