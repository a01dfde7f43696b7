//! A lesson being walked in the tracer: its stops found in the traced logs, which stop the
//! learner is at, their answers and the score. The file format is
//! [`attn_trace_core::scenario::lesson`]'s; the keys are the tracer's (`lesson_keys.rs`).

use super::position::{self, Place};
use super::quiz::Feedback;
use super::traced_scenario::TracedScenario;
use attn_trace_analysis::quiz::{self, Access, Question, QuizLevel, Verdict};
use attn_trace_core::engine::kernel_shape;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::ScenarioError;
use attn_trace_core::scenario::lesson::{Ask, Lesson, Stop};
use attn_trace_core::trace::Op;
use attn_trace_i18n::tr;
use std::sync::Arc;

/// A stop found in the logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub variant: Variant,
    pub place: Place,
    /// The event the question is about (`ask = "offset"`: the next access; `"value"`: the next
    /// write).
    pub target: Option<usize>,
}

/// How a stop's question went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Not answered yet (or a stop without a question).
    #[default]
    Open,
    /// Right; `tries` wrong answers came first.
    Right {
        tries: u32,
    },
    Revealed,
}

/// The lesson's state in a tracer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LessonRun {
    pub lesson: Arc<Lesson>,
    pub stops: Vec<Resolved>,
    /// The stop the learner is at (or last was at).
    pub at: usize,
    pub answers: Vec<Answer>,
    /// Wrong answers at each stop so far.
    pub tries: Vec<u32>,
    /// What has been typed for the current stop's question.
    pub input: String,
    pub feedback: Option<Feedback>,
}

/// Finds every stop of `lesson` in `traced`'s logs; the first that cannot be found is an error at
/// its `at` in the lesson file.
pub(crate) fn resolve(lesson: &Lesson, traced: &TracedScenario) -> Result<Vec<Resolved>, ScenarioError> {
    lesson
        .stops
        .iter()
        .map(|stop| resolve_stop(lesson, stop, traced))
        .collect()
}

fn resolve_stop(lesson: &Lesson, stop: &Stop, traced: &TracedScenario) -> Result<Resolved, ScenarioError> {
    let err = |m: String| stop.error(&lesson.source, m);
    let variant = match stop.variant {
        Some(v) if traced.trace(v).is_some() => v,
        Some(v) => return Err(err(traced.not_traced(v))),
        None => traced
            .first_variant()
            .ok_or_else(|| err(tr!("the scenario traces no kernel").into()))?,
    };
    // without a pass, an element, cell or phase is looked up in the forward pass (event 0's)
    let place = position::resolve(traced, variant, stop.pass, 0, &stop.at).map_err(err)?;
    let trace = traced.trace(variant).ok_or_else(|| err(traced.not_traced(variant)))?;
    let target = match &stop.ask {
        Some(Ask::Offset { .. }) => Some(Some(place.cursor + 1).filter(|&n| n < trace.len()).ok_or_else(|| {
            err(tr!("ask = \"offset\" asks the next access, but this stop is the last event").into())
        })?),
        Some(Ask::Value { .. }) => Some(
            (place.cursor + 1..trace.len())
                .find(|&n| trace.events[n].op == Op::Write)
                .ok_or_else(|| {
                    err(tr!("ask = \"value\" asks the next write, but no write follows this stop").into())
                })?,
        ),
        Some(Ask::Choice { .. }) | None => None,
    };
    Ok(Resolved { variant, place, target })
}

impl LessonRun {
    pub(crate) fn new(lesson: Arc<Lesson>, stops: Vec<Resolved>) -> LessonRun {
        let n = stops.len();
        LessonRun {
            lesson,
            stops,
            at: 0,
            answers: vec![Answer::Open; n],
            tries: vec![0; n],
            input: String::new(),
            feedback: None,
        }
    }

    pub(crate) fn stop(&self) -> &Stop {
        &self.lesson.stops[self.at]
    }

    pub(crate) fn here(&self) -> &Resolved {
        &self.stops[self.at]
    }

    /// Is the learner at the current stop (its kernel and event)?
    pub(crate) fn at_stop(&self, variant: Variant, cursor: usize) -> bool {
        let r = self.here();
        r.variant == variant && r.place.cursor == cursor
    }

    /// Does the current stop's question wait for an answer here?
    pub(crate) fn asking(&self, variant: Variant, cursor: usize) -> bool {
        self.stop().ask.is_some() && self.answers[self.at] == Answer::Open && self.at_stop(variant, cursor)
    }

    /// Questions in the lesson, and those answered right at the first try.
    pub(crate) fn score(&self) -> (usize, usize) {
        let asked = self.lesson.stops.iter().filter(|s| s.ask.is_some()).count();
        let right = self
            .answers
            .iter()
            .filter(|a| **a == Answer::Right { tries: 0 })
            .count();
        (right, asked)
    }

    /// Moves to stop `k` (clamped): a new question, nothing typed.
    pub(crate) fn go(&mut self, k: usize) {
        self.at = k.min(self.stops.len().saturating_sub(1));
        self.input.clear();
        self.feedback = None;
    }

    /// Event `n` of the current stop's kernel as a question ([`crate::tui::quiz::access`]).
    fn access_at(&self, traced: &TracedScenario, n: usize) -> Option<Access> {
        let v = self.here().variant;
        crate::tui::quiz::access(traced.trace(v)?, kernel_shape(traced.shape, v), n)
    }

    /// The access the current stop's question is about.
    fn target(&self, traced: &TracedScenario) -> Option<Access> {
        self.access_at(traced, self.here().target?)
    }

    /// The current stop's question as the panel asks it.
    pub(crate) fn question(&self, traced: &TracedScenario) -> Option<String> {
        let stop = self.stop();
        let access = || self.target(traced);
        Some(match stop.ask.as_ref()? {
            Ask::Offset { question } => match question {
                Some(q) => q.clone(),
                None => match access() {
                    Some(a) => tr!("which offset does the next access, {what}, use?", what = a.what()),
                    None => tr!("which offset does the next access use?").to_string(),
                },
            },
            Ask::Value { question } => match question {
                Some(q) => q.clone(),
                None => match access() {
                    Some(a) => tr!(
                        "which value does the next write, {buf}[{off}], store?",
                        buf = a.buf,
                        off = a.offset
                    ),
                    None => tr!("which value does the next write store?").to_string(),
                },
            },
            Ask::Choice { question, options, .. } => {
                let opts: Vec<String> = options
                    .iter()
                    .enumerate()
                    .map(|(k, o)| format!("{}) {o}", k + 1))
                    .collect();
                format!("{question}  {}", opts.join("  "))
            }
        })
    }

    /// Checks what was typed against the current stop's question. `Some(event)` when the answer
    /// is taken (right or revealed) and the tracer should step to that event to show it.
    pub(crate) fn answer(&mut self, traced: &TracedScenario) -> Option<usize> {
        let r = self.here().clone();
        let stop = self.stop().clone();
        let ask = stop.ask.as_ref()?;
        let input = self.input.trim().to_string();
        let trace = traced.trace(r.variant)?;
        let verdict = match ask {
            Ask::Offset { .. } => {
                let a = self.target(traced)?;
                let after = self.access_at(traced, r.target? + 1);
                quiz::check(&Question::One(a), QuizLevel::Offsets, &input, "", after.as_ref(), trace)
            }
            Ask::Value { .. } => {
                let a = self.target(traced)?;
                value_verdict(&a, &input)
            }
            Ask::Choice { options, answer, .. } => match input.parse::<usize>() {
                Ok(k) if (1..=options.len()).contains(&k) => {
                    if k - 1 == *answer {
                        Verdict::Right
                    } else {
                        Verdict::Wrong {
                            text: tr!("not quite: it is not {k}) {option}", k, option = options[k - 1]),
                            missed: String::new(),
                        }
                    }
                }
                _ => Verdict::Incomplete(tr!(
                    "type the number of an option, 1 to {n}, then Enter",
                    n = options.len()
                )),
            },
        };
        match verdict {
            Verdict::Right => {
                self.answers[self.at] = Answer::Right {
                    tries: self.tries[self.at],
                };
                self.feedback = Some(Feedback::Right(self.explanation(traced, true)));
                self.input.clear();
                r.target.or(Some(r.place.cursor))
            }
            Verdict::Wrong { text, .. } => {
                self.tries[self.at] += 1;
                self.feedback = Some(Feedback::Wrong(tr!("{text} · try again, or v reveals", text)));
                None
            }
            Verdict::Incomplete(text) => {
                self.feedback = Some(Feedback::Note(text));
                None
            }
        }
    }

    /// `v`: the answer, with its working.
    pub(crate) fn reveal(&mut self, traced: &TracedScenario) -> Option<usize> {
        let r = self.here().clone();
        self.stop().ask.as_ref()?;
        self.answers[self.at] = Answer::Revealed;
        self.feedback = Some(Feedback::Revealed(self.explanation(traced, false)));
        self.input.clear();
        r.target.or(Some(r.place.cursor))
    }

    /// The answer to the current stop's question, with how the log gives it.
    fn explanation(&self, traced: &TracedScenario, right: bool) -> String {
        let lead = if right { tr!("correct") } else { tr!("answer") };
        let access = || self.target(traced);
        let what = match self.stop().ask.as_ref() {
            Some(Ask::Offset { .. }) => access().map(|a| a.working()),
            Some(Ask::Value { .. }) => access().map(|a| {
                format!(
                    "{}[{}] ← {}",
                    a.buf,
                    a.offset,
                    attn_trace_analysis::format::num_of(a.buf, a.value)
                )
            }),
            Some(Ask::Choice { options, answer, .. }) => Some(format!("{}) {}", answer + 1, options[*answer])),
            None => None,
        };
        // the colon as the language writes it (a full-width one in Chinese)
        match what {
            Some(what) => tr!("{lead}: {what}", lead, what).to_string(),
            None => lead.to_string(),
        }
    }
}

/// A typed value against the value access `a` writes.
fn value_verdict(a: &Access, input: &str) -> Verdict {
    if input.is_empty() {
        return Verdict::Incomplete(tr!("type the value, then Enter (v reveals it)").into());
    }
    match input.parse::<f32>() {
        Ok(v) if quiz::value_matches(v, a.value) => Verdict::Right,
        Ok(v) => Verdict::Wrong {
            text: tr!(
                "not quite: {buf}[{off}] does not get {v}",
                buf = a.buf,
                off = a.offset,
                v
            ),
            missed: String::new(),
        },
        Err(_) => Verdict::Incomplete(tr!("type a number, e.g. -0.31 or 1e-3").into()),
    }
}
