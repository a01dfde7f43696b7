//! A lesson's keys in the tracer: `N`/`P` to the next/previous stop, `R` back to the current
//! one, and at a stop with a question, typing the answer, Enter to check it, `v` to reveal it.
//! Every other key steps freely, as without a lesson.

use super::{Outcome, Tracer};
use crate::tui::lesson::Answer;
use crate::tui::quiz::Feedback;
use attn_trace_i18n::tr;
use crossterm::event::{KeyCode, KeyEvent};
use std::sync::Arc;

impl Tracer {
    /// A tracer walking `run` (its stops found in `traced`), at its first stop.
    pub(crate) fn at_lesson(
        traced: Arc<crate::tui::traced_scenario::TracedScenario>,
        run: crate::tui::lesson::LessonRun,
    ) -> Tracer {
        let mut t = Tracer::new(traced, run.stops.first().map(|r| r.variant));
        t.lesson = Some(run);
        t.go_to_stop(0);
        t.refresh();
        t
    }

    /// Goes to stop `k` of the lesson: its kernel, its event, its cell.
    pub(crate) fn go_to_stop(&mut self, k: usize) {
        let Some(run) = self.lesson.as_mut() else { return };
        run.go(k);
        let r = run.here().clone();
        self.variant = r.variant;
        self.cursor = r.place.cursor;
        self.pinned = r.place.pinned;
        self.select = false;
    }

    /// The lesson's own keys; `None` leaves the key to the tracer.
    pub(super) fn lesson_key(&mut self, key: KeyEvent) -> Option<Outcome> {
        let traced = Arc::clone(&self.traced);
        let (variant, cursor) = (self.variant, self.cursor);
        let run = self.lesson.as_mut()?;
        let asking = run.asking(variant, cursor);
        // a multiple-choice question takes one option's number: a new digit replaces the last
        let options = match &run.stop().ask {
            Some(attn_trace_core::scenario::lesson::Ask::Choice { options, .. }) => Some(options.len()),
            _ => None,
        };
        match key.code {
            KeyCode::Char(c) if asking && options.is_some() && (c.is_ascii_digit() || matches!(c, '.' | '-' | '+')) => {
                let n = c.to_digit(10).map_or(0, |d| d as usize);
                if (1..=options.unwrap_or(0)).contains(&n) {
                    run.input = c.to_string();
                }
            }
            KeyCode::Char(c)
                if asking
                    && (c.is_ascii_digit() || matches!(c, '.' | '-' | '+') || (c == 'e' && !run.input.is_empty())) =>
            {
                if run.input.chars().count() < 40 {
                    run.input.push(c);
                }
            }
            KeyCode::Backspace if asking => {
                run.input.pop();
            }
            KeyCode::Esc if asking && !run.input.is_empty() => run.input.clear(),
            KeyCode::Enter if asking => {
                if let Some(n) = run.answer(&traced) {
                    self.cursor = n;
                }
            }
            KeyCode::Char('v') if asking => {
                if let Some(n) = run.reveal(&traced) {
                    self.cursor = n;
                }
            }
            KeyCode::Char('N') => {
                if run.at + 1 < run.stops.len() {
                    let k = run.at + 1;
                    self.go_to_stop(k);
                } else {
                    return Some(self.lesson_done());
                }
            }
            KeyCode::Char('P') => {
                if run.at == 0 {
                    self.message = Some(tr!("this is the first stop").into());
                } else {
                    let k = run.at - 1;
                    self.go_to_stop(k);
                }
            }
            KeyCode::Char('R') => {
                let k = run.at;
                self.go_to_stop(k);
            }
            _ => return None,
        }
        Some(Outcome::Stay)
    }

    /// `N` at the last stop: how the lesson went.
    fn lesson_done(&mut self) -> Outcome {
        let Some(run) = self.lesson.as_mut() else {
            return Outcome::Stay;
        };
        let (right, asked) = run.score();
        let revealed = run.answers.iter().filter(|a| **a == Answer::Revealed).count();
        let open = run
            .lesson
            .stops
            .iter()
            .zip(&run.answers)
            .filter(|(s, a)| s.ask.is_some() && **a == Answer::Open)
            .count();
        let retried = asked - right - revealed - open;
        run.feedback = Some(Feedback::Note(tr!("the last stop: P goes back, q leaves").into()));
        Outcome::Note {
            title: tr!("Lesson done · {title}", title = run.lesson.title),
            text: tr!(
                "{n} stops. Questions: {right} of {asked} right at the first try, {retried} after another try, {revealed} revealed, {open} not answered.",
                n = run.stops.len(),
                right,
                asked,
                retried,
                revealed,
                open
            ),
        }
    }
}
