//! Quiz mode's state in the tracer: the level, what the learner has typed, the feedback on the
//! last answer and the score of each phase. The questions and the check of an answer against
//! the log are the analysis layer's ([`attn_trace_analysis::quiz`]); [`access`] and [`question`]
//! here read the offset expressions from the kernels the TUI embeds ([`source`]).

pub(crate) use attn_trace_analysis::quiz::{Access, Question, QuizLevel};

use attn_trace_core::kernels::Variant;
use attn_trace_core::source;
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::Trace;
use attn_trace_i18n::tr;
use std::collections::BTreeMap;

/// Event `n` as a question: [`attn_trace_analysis::quiz::access`] on the embedded kernels.
pub(crate) fn access(trace: &Trace, shape: Shape, n: usize) -> Option<Access> {
    attn_trace_analysis::quiz::access(trace, shape, n, source::source)
}

/// The question at `cursor`: [`attn_trace_analysis::quiz::question`] on the embedded kernels.
pub(crate) fn question(trace: &Trace, shape: Shape, cursor: usize, level: QuizLevel) -> Option<Question> {
    attn_trace_analysis::quiz::question(trace, shape, cursor, level, source::source)
}

/// How one phase went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Score {
    /// Right at the first try.
    pub right: u32,
    /// Right after a wrong try.
    pub retried: u32,
    pub revealed: u32,
    /// Stepped past with `n` without an answer.
    pub skipped: u32,
    /// What was got wrong, and how often.
    pub missed: BTreeMap<String, u32>,
}

impl Score {
    /// Questions answered or revealed.
    pub(crate) fn asked(&self) -> u32 {
        self.right + self.retried + self.revealed
    }

    /// `7/9`: right at the first try, of those answered or revealed.
    pub(crate) fn short(&self) -> String {
        format!("{}/{}", self.right, self.asked())
    }

    /// The summary shown when the phase ends.
    pub(crate) fn summary(&self) -> String {
        let mut lines = vec![tr!(
            "{right} of {asked} right at the first try, {retried} after another try, {revealed} revealed, {skipped} skipped",
            right = self.right,
            asked = self.asked(),
            retried = self.retried,
            revealed = self.revealed,
            skipped = self.skipped
        )];
        let mut missed: Vec<(&String, &u32)> = self.missed.iter().collect();
        missed.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        if !missed.is_empty() {
            let top: Vec<String> = missed.iter().take(3).map(|(k, n)| format!("{k} ({n}×)")).collect();
            lines.push(tr!("missed most: {top}", top = top.join(tr!(", "))));
        }
        lines.join("\n")
    }
}

/// What the quiz panel says under the question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Feedback {
    Right(String),
    Wrong(String),
    Revealed(String),
    Note(String),
}

/// The quiz's state in a tracer.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Quiz {
    pub level: QuizLevel,
    /// What the learner has typed.
    pub input: String,
    pub feedback: Option<Feedback>,
    /// Wrong tries at the current question.
    pub tries: u32,
    /// The cursor the current question was asked at: moving elsewhere asks a new one.
    pub asked_at: usize,
    /// Per (variant, phase span): how it went.
    pub scores: BTreeMap<(Variant, usize), Score>,
}

impl Quiz {
    pub(crate) fn new(level: QuizLevel, cursor: usize) -> Quiz {
        Quiz {
            level,
            asked_at: cursor,
            ..Quiz::default()
        }
    }

    /// The score of phase span `span` of `variant`.
    pub(crate) fn score(&mut self, variant: Variant, span: usize) -> &mut Score {
        self.scores.entry((variant, span)).or_default()
    }
}
