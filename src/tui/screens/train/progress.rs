//! What a run shows, built from the worker's reports alone: where it is, the training and
//! validation losses, the speed and time left, the latest sample and checkpoint, and the weights
//! once it has finished.

use super::form::dir_of;
use super::worker::{Report, Sample, Spec};
use attn_trace_i18n::tr;
use attn_trace_model::{Origin, TinyGpt};
use std::collections::VecDeque;
use std::path::PathBuf;

/// Where a run is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RunState {
    /// Building the model and data.
    Starting,
    Running,
    Paused,
    Finished {
        stopped: bool,
    },
    Failed(String),
}

/// Everything the run screen draws, built from the worker's reports alone.
#[derive(Debug)]
pub(crate) struct RunView {
    pub spec: Spec,
    pub state: RunState,
    pub params: Option<usize>,
    pub data_bytes: Option<(usize, usize)>,
    /// Steps done.
    pub step: u64,
    /// `losses[k]` is the training loss of step `k + 1`.
    pub losses: Vec<f32>,
    /// `(step, validation loss)`, from step 0.
    pub val: Vec<(u64, f32)>,
    /// Training time so far, pauses excluded.
    pub seconds: f64,
    /// `(step, seconds)` of the last few seconds, for the current speed.
    recent: VecDeque<(u64, f64)>,
    pub sample: Option<(u64, Sample)>,
    /// The final weights, once finished.
    pub model: Option<Box<TinyGpt>>,
    /// The last checkpoint written: its path and step.
    pub saved: Option<(PathBuf, u64)>,
}

/// The speed is measured over this much training time.
const SPEED_WINDOW: f64 = 3.0;

/// What a report means for the screen besides the progress it records.
#[derive(Debug)]
pub(crate) enum Applied {
    Nothing,
    /// A line for the status bar.
    Message(String),
    Snapshot(u64, Box<TinyGpt>),
}

impl RunView {
    pub(crate) fn new(spec: Spec) -> RunView {
        RunView {
            spec,
            state: RunState::Starting,
            params: None,
            data_bytes: None,
            step: 0,
            losses: Vec::new(),
            val: Vec::new(),
            seconds: 0.0,
            recent: VecDeque::new(),
            sample: None,
            model: None,
            saved: None,
        }
    }

    pub(crate) fn tokens_per_step(&self) -> usize {
        self.spec.batch * self.spec.config.seq_len
    }

    pub(crate) fn apply(&mut self, report: Report) -> Applied {
        match report {
            Report::Started {
                params,
                train_bytes,
                val_bytes,
            } => {
                self.params = Some(params);
                self.data_bytes = Some((train_bytes, val_bytes));
                self.state = RunState::Running;
            }
            Report::Step { step, loss, seconds } => {
                self.step = step;
                self.losses.push(loss);
                self.seconds = seconds;
                self.recent.push_back((step, seconds));
                while self.recent.len() > 2 && self.recent.front().is_some_and(|&(_, s)| seconds - s > SPEED_WINDOW) {
                    self.recent.pop_front();
                }
            }
            Report::Val { step, loss } => self.val.push((step, loss)),
            Report::Sample { step, sample } => self.sample = Some((step, sample)),
            Report::Paused(p) => {
                self.state = if p { RunState::Paused } else { RunState::Running };
                return Applied::Message(
                    if p {
                        tr!("paused: space resumes")
                    } else {
                        tr!("resumed")
                    }
                    .into(),
                );
            }
            Report::Saved { step, path, result } => {
                return Applied::Message(match result {
                    Ok(()) => {
                        let msg = tr!("saved step {step} to {path}", step, path = path.display());
                        self.saved = Some((path, step));
                        msg
                    }
                    Err(e) => tr!("not saved: {e}", e),
                });
            }
            Report::Snapshot { step, model } => return Applied::Snapshot(step, model),
            Report::Finished {
                step,
                seconds,
                stopped,
                model,
            } => {
                self.step = step;
                self.seconds = seconds;
                self.model = Some(model);
                self.state = RunState::Finished { stopped };
            }
            Report::Failed(e) => self.state = RunState::Failed(e),
        }
        Applied::Nothing
    }

    /// Tokens per second over the last few seconds of training.
    pub(crate) fn tokens_per_s(&self) -> Option<f64> {
        let (&(s0, t0), &(s1, t1)) = (self.recent.front()?, self.recent.back()?);
        let (steps, secs) = if s1 > s0 && t1 > t0 {
            ((s1 - s0) as f64, t1 - t0)
        } else if self.seconds > 0.0 && self.step > 0 {
            (self.step as f64, self.seconds)
        } else {
            return None;
        };
        Some(steps * self.tokens_per_step() as f64 / secs)
    }

    /// Seconds left at the current speed.
    pub(crate) fn eta(&self) -> Option<f64> {
        let left = self.spec.steps.saturating_sub(self.step) as f64;
        self.tokens_per_s()
            .filter(|&r| r > 0.0)
            .map(|r| left * self.tokens_per_step() as f64 / r)
    }

    /// The mean training loss of the last `n` steps.
    pub(crate) fn recent_loss(&self, n: usize) -> Option<f32> {
        let tail = &self.losses[self.losses.len().saturating_sub(n)..];
        (!tail.is_empty()).then(|| tail.iter().sum::<f32>() / tail.len() as f32)
    }

    pub(crate) fn is_done(&self) -> bool {
        matches!(self.state, RunState::Finished { .. } | RunState::Failed(_))
    }

    /// The chart's series: training loss (bucket means when there are more than `max_points`
    /// steps) and validation loss, each as `(step, y)` with `y` the loss or, with `log`, its
    /// natural logarithm; and the y range covering both.
    pub(crate) fn chart(&self, log: bool, max_points: usize) -> ChartData {
        let y = |l: f32| if log { (l as f64).ln() } else { l as f64 };
        let n = self.losses.len();
        let per = n.div_ceil(max_points.max(1)).max(1);
        let train: Vec<(f64, f64)> = self
            .losses
            .chunks(per)
            .enumerate()
            .filter_map(|(k, chunk)| {
                let finite: Vec<f32> = chunk.iter().copied().filter(|l| l.is_finite() && *l > 0.0).collect();
                if finite.is_empty() {
                    return None;
                }
                let mean = finite.iter().sum::<f32>() / finite.len() as f32;
                // steps k·per + 1 ..= k·per + len: their middle
                let first = (k * per + 1) as f64;
                Some((first + (chunk.len() - 1) as f64 / 2.0, y(mean)))
            })
            .collect();
        let val: Vec<(f64, f64)> = self
            .val
            .iter()
            .filter(|(_, l)| l.is_finite() && *l > 0.0)
            .map(|&(s, l)| (s as f64, y(l)))
            .collect();
        let ys = train.iter().chain(&val).map(|p| p.1);
        let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let y_range = if lo.is_finite() && hi > lo {
            let pad = (hi - lo) * 0.05;
            [lo - pad, hi + pad]
        } else if lo.is_finite() {
            [lo - 0.5, lo + 0.5]
        } else {
            [0.0, 1.0]
        };
        ChartData { train, val, y_range }
    }
}

/// What the loss chart draws.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ChartData {
    pub train: Vec<(f64, f64)>,
    pub val: Vec<(f64, f64)>,
    pub y_range: [f64; 2],
}

/// Where the weights of a run at `step` came from, for the tracer's titles and exports.
pub(super) fn run_origin(p: &RunView, step: u64) -> Origin {
    let saved = p
        .saved
        .as_ref()
        .filter(|(_, s)| *s == step)
        .map(|(path, _)| path.clone());
    let stem = p
        .spec
        .save
        .file_stem()
        .map_or_else(|| "tinygpt".to_string(), |s| s.to_string_lossy().into_owned());
    Origin {
        label: match &saved {
            Some(path) => tr!("{path} (step {step})", path = path.display(), step),
            None => tr!(
                "training run on {source} (step {step}, not saved)",
                source = p.spec.source.label(),
                step
            ),
        },
        checkpoint: saved,
        step,
        dataset: Some(p.spec.source.clone()),
        dir: dir_of(&p.spec.save),
        stem,
        flash: matches!(p.spec.attention, attn_trace_model::gpt::Attention::Flash(_)),
    }
}
