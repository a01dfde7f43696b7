//! Opening a scenario: its variants are traced on a worker thread while this screen says how
//! many events are recorded so far, so a large scenario never freezes the terminal.

use crate::tui::job::{Event, Job, JobKind, Progress};
use crate::tui::theme::Theme;
use crate::tui::traced_scenario::{Element, TracedScenario};
use crate::tui::widgets::popup;
use attn_trace_core::engine::{Count, estimate_events};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_i18n::tr;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use std::time::Instant;

#[derive(Debug)]
pub(crate) struct Loading {
    pub title: String,
    /// Events the traces will record in all (the engine's closed-form count).
    pub total: u64,
    pub started: Instant,
    /// The variant to open on, instead of the scenario's `[focus]` one.
    pub variant: Option<Variant>,
    /// The lesson to walk once the scenario is traced (the menu's "Lessons…").
    pub lesson: Option<std::sync::Arc<attn_trace_core::scenario::lesson::Lesson>>,
    job: Job<TracedScenario>,
}

/// What the app should do after a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Stay,
    /// Stop waiting (the worker finishes its run under way and its result is dropped).
    Cancel,
}

impl Loading {
    /// Starts tracing `s` on a worker thread.
    pub(crate) fn start(s: Scenario, variant: Option<Variant>) -> Loading {
        let mistaken = s.mistaken_inputs().map(|i| i.plan());
        let total = s
            .variants
            .iter()
            .map(|&v| {
                s.estimated_events(v)
                    + mistaken
                        .as_ref()
                        .map_or(Count::ZERO, |p| estimate_events(p, v, s.passes))
            })
            .sum::<Count>()
            .get()
            .unwrap_or(u64::MAX);
        let title = tr!("Opening {title}", title = s.title);
        // a cancelled trace is nobody's any more: nothing to send then
        let job = Job::spawn(JobKind::Loading, Progress::default(), move |ctx| {
            if let Some(traced) = TracedScenario::traced(&s, &ctx.progress) {
                ctx.send(traced);
            }
        });
        Loading {
            title,
            total,
            started: Instant::now(),
            variant,
            lesson: None,
            job,
        }
    }

    /// How far the tracing has got: events recorded so far.
    pub(crate) fn progress(&self) -> &Progress {
        self.job.progress()
    }

    /// The traced scenario, once the job has finished (with the variant asked for in focus), or
    /// that there is none: why, unless the job's failure already says it in a popup.
    pub(crate) fn poll(&mut self) -> Option<Result<TracedScenario, Option<String>>> {
        match self.job.poll() {
            Some(Event::Msg(mut traced)) => {
                if let Some(v) = self.variant {
                    let (_, pass, e) = traced.focus.unwrap_or((None, None, Element { b: 0, h: 0, i: 0, j: 0 }));
                    traced.focus = Some((Some(v), pass, e));
                }
                Some(Ok(traced))
            }
            Some(Event::Failed(_)) => Some(Err(None)),
            None if self.job.ended() => Some(Err(Some(tr!("the tracing thread ended without a result").into()))),
            None => None,
        }
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => {
                self.job.cancel();
                Outcome::Cancel
            }
            _ => Outcome::Stay,
        }
    }
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &Loading, theme: Theme) {
    let done = st.progress().done().min(st.total);
    let pct = (done * 100).checked_div(st.total).unwrap_or(100);
    let lines = vec![
        Line::raw(tr!(
            "tracing… {done} of {total} events ({pct}%)",
            done,
            total = st.total,
            pct
        )),
        Line::raw(format!("{:.1} s", st.started.elapsed().as_secs_f32())),
        Line::styled(tr!("Esc cancels"), theme.dim()),
    ];
    popup::render(frame, area, &st.title, lines, theme.title(), theme);
}
