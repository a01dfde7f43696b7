//! "Train TinyGPT": a form with the model's configuration, checked field by field as it is
//! typed; then the run itself, trained on a worker thread ([`worker`]) while this screen draws
//! the loss and validation loss, progress, speed and a generated sample; then the finished run,
//! whose weights `t` hands to the trained-model tracer.
//!
//! State changes only in [`Train::key`] and [`Train::poll`] (which applies the worker's reports);
//! [`render`] draws from the state and never mutates.
//!
//! This file holds the screen's state; its parts are `form` (the fields, their values and their
//! checks), `progress` (what a running or finished run shows), `keys` (what each key does) and
//! `render` (the drawing).

mod form;
mod keys;
mod progress;
mod render;
pub(crate) mod worker;

pub(crate) use form::{CHECKPOINTS, Field, Form, dir_of, make_dir_for};
pub(crate) use progress::{Applied, RunState, RunView};
pub(crate) use render::render;

use attn_trace_i18n::msg;
use attn_trace_model::{Origin, TinyGpt};
use progress::run_origin;
#[cfg(test)]
use worker::Spec;
use worker::{Report, Training};

/// A run: its progress and, while it lives, the thread training it.
#[derive(Debug)]
pub(crate) struct Session {
    pub progress: RunView,
    worker: Option<Training>,
}

/// The weights `t` hands to the tracer, and where they came from.
#[derive(Debug)]
pub(crate) struct Traced {
    pub model: TinyGpt,
    pub origin: Origin,
}

/// What the app should do after a key.
#[derive(Debug)]
pub(crate) enum Outcome {
    Stay,
    Back,
    Help,
    Trace(Box<Traced>),
}

#[derive(Debug, Default)]
pub(crate) struct Train {
    pub form: Form,
    /// The run, once started; `None` shows the form.
    pub session: Option<Session>,
    /// The chart's y axis is the logarithm of the loss.
    pub log_scale: bool,
    /// One line of feedback above the key hints.
    pub message: Option<String>,
    /// `t` was pressed while training: open the tracer when the snapshot arrives.
    pending_trace: bool,
    /// Saves and snapshots asked for and not answered yet.
    awaiting: usize,
}

/// The keys of the run, for its `?` popup (the form lists its own under it).
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("space", msg!("pause / resume training")),
    ("s", msg!("save the checkpoint (atomically) to the path shown")),
    ("x", msg!("stop training here")),
    (
        "t",
        msg!("trace: a prompt, then the attention map and the tracer, on the current weights"),
    ),
    ("l", msg!("loss chart: log ↔ linear scale")),
    ("n", msg!("new run (once this one has finished)")),
    (
        "q / Esc",
        msg!("back to the menu (training goes on; Train TinyGPT returns here)"),
    ),
];

/// Reports applied per poll at most, so one frame never drains an unbounded backlog.
const MAX_REPORTS_PER_POLL: usize = 10_000;

impl Train {
    /// A run drawn from the given reports, without a thread: what the screen shows for a
    /// recorded run (snapshot tests use it for a deterministic running screen).
    #[cfg(test)]
    pub(crate) fn replay(form: Form, spec: Spec, reports: Vec<Report>) -> Train {
        let mut progress = RunView::new(spec);
        for r in reports {
            progress.apply(r);
        }
        Train {
            form,
            session: Some(Session { progress, worker: None }),
            ..Train::default()
        }
    }

    pub(crate) fn progress(&self) -> Option<&RunView> {
        self.session.as_ref().map(|s| &s.progress)
    }

    /// Is a worker training (or about to)? The app then wakes up on a timer to poll.
    pub(crate) fn is_live(&self) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| s.worker.is_some() && (!s.progress.is_done() || self.awaiting > 0))
    }

    /// Applies every report that has arrived. Returns the weights to trace when a snapshot
    /// asked for by `t` came in.
    pub(crate) fn poll(&mut self) -> Option<Box<Traced>> {
        let session = self.session.as_mut()?;
        let worker = session.worker.as_mut()?;
        let (mut traced, was_done, mut said) = (None, session.progress.is_done(), false);
        for report in worker.reports(MAX_REPORTS_PER_POLL) {
            if matches!(report, Report::Saved { .. } | Report::Snapshot { .. }) {
                self.awaiting = self.awaiting.saturating_sub(1);
            }
            match session.progress.apply(report) {
                Applied::Nothing => {}
                Applied::Message(m) => {
                    self.message = Some(m);
                    said = true;
                }
                Applied::Snapshot(step, model) => {
                    if std::mem::take(&mut self.pending_trace) {
                        traced = Some(Box::new(Traced {
                            origin: run_origin(&session.progress, step),
                            model: *model,
                        }));
                    }
                }
            }
        }
        if matches!(session.progress.state, RunState::Failed(_)) {
            self.pending_trace = false;
            self.awaiting = 0;
        }
        // the run has ended: a note written before, such as "stopping after this step …", is
        // answered, and the status line goes back to the keys of an ended run
        if !was_done && session.progress.is_done() && !said {
            self.message = None;
        }
        traced
    }
}
