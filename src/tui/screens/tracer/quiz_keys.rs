//! Quiz mode's keys: typing an answer, Enter to check it against the log, `v` to reveal it,
//! `n` to skip, `l` for the level and `Q` to stop; each step that ends a phase gives its summary.

use super::{Outcome, Tracer};
use crate::tui::quiz::{self, Feedback, Quiz};
use crate::tui::widgets::equation;
use attn_trace_analysis::quiz::{Question, QuizLevel, Verdict};
use attn_trace_core::engine::kernel_shape;
use attn_trace_i18n::tr;
use crossterm::event::{KeyCode, KeyEvent};
use std::sync::Arc;

impl Tracer {
    /// Starts quiz mode at `level`.
    pub(crate) fn start_quiz(&mut self, level: QuizLevel) {
        let mut q = Quiz::new(level, self.cursor);
        q.feedback = Some(Feedback::Note(tr!(
            "predict {what}: type it, Enter checks, v reveals, n skips, l changes the level, Q stops",
            what = level.about()
        )));
        self.quiz = Some(q);
    }

    /// Quiz mode's own keys; `None` leaves the key to the tracer.
    pub(super) fn quiz_key(&mut self, key: KeyEvent) -> Option<Outcome> {
        let quiz = self.quiz.as_mut()?;
        match key.code {
            KeyCode::Char(c)
                // `=` for the ranges the hint offers (`10..=13`)
                if c.is_ascii_digit() || matches!(c, '.' | '=' | '-' | ',' | ' ') || (c == 'e' && !quiz.input.is_empty()) =>
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
        let traced = Arc::clone(&self.traced);
        let (Some(trace), Some(q)) = (traced.trace(self.variant), self.question()) else {
            if let Some(quiz) = self.quiz.as_mut() {
                quiz.feedback = Some(Feedback::Note(tr!("the log ends here: nothing left to predict").into()));
            }
            return Outcome::Stay;
        };
        let Some(quiz) = self.quiz.as_mut() else {
            return Outcome::Stay;
        };
        let shape = kernel_shape(traced.shape, self.variant);
        let math = equation::math(trace.phase_at(q.first()), self.variant)
            .first()
            .copied()
            .unwrap_or("");
        let after = quiz::access(trace, shape, q.target() + 1);
        let input = std::mem::take(&mut quiz.input);
        let span = trace.phase_span(q.first());
        match attn_trace_analysis::quiz::check(&q, quiz.level, &input, math, after.as_ref(), trace) {
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
                // the answer stays, to be edited rather than typed again
                quiz.input = input;
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
        let traced = Arc::clone(&self.traced);
        let (Some(trace), Some(q)) = (traced.trace(self.variant), self.question()) else {
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
        let traced = Arc::clone(&self.traced);
        let Some(trace) = traced.trace(self.variant) else {
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
        let traced = Arc::clone(&self.traced);
        let Some(trace) = traced.trace(self.variant) else {
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
}
