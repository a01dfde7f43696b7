//! The training job. The UI sends it [`Cmd`]s over a channel and reads its [`Report`]s through
//! its [`Job`], so a key is never stuck behind a training step. Dropping the [`Training`]
//! cancels the job and waits for its thread.

use crate::tui::job::{Ctx, Event, Job, JobKind, Progress};
use attn_trace_i18n::tr;
pub(crate) use attn_trace_model::Source;
use attn_trace_model::gpt::Attention;
use attn_trace_model::{Config, ModelError, SampleOptions, TinyGpt, Trainer};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

/// A checked training configuration: what the form hands to the worker.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Spec {
    pub config: Config,
    /// The attention kernel the model trains with.
    pub attention: Attention,
    pub source: Source,
    pub batch: usize,
    pub steps: u64,
    pub lr: f32,
    pub seed: u64,
    /// Where `s` saves the checkpoint.
    pub save: PathBuf,
}

impl Spec {
    /// Steps between validation losses: about 30 points on the chart, each costing about as
    /// much as a few training steps.
    pub(crate) fn val_every(&self) -> u64 {
        (self.steps / 30).max(10)
    }
}

/// Steps between generated samples; a sample is also drawn after [`SAMPLE_SECONDS`], so short
/// runs of slow steps refresh too.
pub(crate) const SAMPLE_EVERY: u64 = 250;
pub(crate) const SAMPLE_SECONDS: f64 = 3.0;

/// What the UI asks of the worker.
#[derive(Debug)]
pub(crate) enum Cmd {
    Pause,
    Resume,
    /// Save weights and optimizer state (atomically) to this path.
    Save(PathBuf),
    /// Send a copy of the current weights.
    Snapshot,
    /// Stop training now and report the result (`x`).
    Finish,
}

/// What the model generates for the sample panel.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sample {
    /// A synthetic task: validation inputs, the model's greedy answers and the right ones, and
    /// how many of `of` checked lines it answers exactly.
    Task {
        lines: Vec<TaskLine>,
        correct: usize,
        of: usize,
    },
    /// Free text after a prompt from the validation data.
    Text { prompt: String, text: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TaskLine {
    pub input: String,
    pub got: String,
    pub want: String,
}

/// What the worker tells the UI.
#[derive(Debug)]
pub(crate) enum Report {
    /// The model and data are ready.
    Started {
        params: usize,
        train_bytes: usize,
        val_bytes: usize,
    },
    /// One step done; `seconds` is the time trained so far (pauses excluded).
    Step {
        step: u64,
        loss: f32,
        seconds: f64,
    },
    Val {
        step: u64,
        loss: f32,
    },
    Sample {
        step: u64,
        sample: Sample,
    },
    Paused(bool),
    Saved {
        step: u64,
        path: PathBuf,
        result: Result<(), String>,
    },
    Snapshot {
        step: u64,
        model: Box<TinyGpt>,
    },
    /// Training ended (all steps, or `x`); the worker stays to answer `Save` and `Snapshot`.
    Finished {
        step: u64,
        seconds: f64,
        stopped: bool,
        model: Box<TinyGpt>,
    },
    /// The model or data could not be built, or training diverged (a loss that is not finite);
    /// the worker has ended.
    Failed(String),
}

/// The UI's handle on the training job: commands in, reports out.
#[derive(Debug)]
pub(crate) struct Training {
    cmds: Sender<Cmd>,
    job: Job<Report>,
}

impl Training {
    /// Starts training `spec` as a job of its own.
    pub(crate) fn spawn(spec: Spec) -> Training {
        let (cmds, cmd_rx) = mpsc::channel();
        // a failure (a panic, or no thread to be had) ends the run as failed; dropping waits for
        // the thread, so quitting never leaves it running
        let job = Job::spawn(JobKind::Training, Progress::default(), move |ctx| {
            work(spec, &cmd_rx, ctx);
        })
        .joined();
        Training { cmds, job }
    }

    /// Sends a command; false when the job has ended.
    pub(crate) fn send(&self, cmd: Cmd) -> bool {
        self.cmds.send(cmd).is_ok()
    }

    /// The reports that have arrived, oldest first, at most `max`; a failure of the job is the
    /// last, as [`Report::Failed`].
    pub(crate) fn reports(&mut self, max: usize) -> Vec<Report> {
        let mut out = Vec::new();
        while out.len() < max {
            match self.job.poll() {
                Some(Event::Msg(r)) => out.push(r),
                Some(Event::Failed(e)) => out.push(Report::Failed(e)),
                None => break,
            }
        }
        out
    }
}

impl Drop for Training {
    /// Stops the job between two steps (its thread is joined when the job drops, next).
    fn drop(&mut self) {
        self.job.cancel();
        // wakes a paused or finished job blocked on its command channel
        let _ = self.cmds.send(Cmd::Finish);
    }
}

/// Builds the model and data exactly as `attn-trace train` does, so a seed gives the same run.
pub(crate) fn trainer(spec: &Spec) -> Result<Trainer, ModelError> {
    let data = spec.source.load(spec.config.seq_len)?;
    let mut model = TinyGpt::new(spec.config, spec.seed)?;
    model.attention = spec.attention;
    Trainer::new(model, data, spec.batch, spec.lr, spec.seed)
}

/// Training time: the sum of the running stretches, pauses left out.
struct Clock {
    done: Duration,
    since: Option<Instant>,
}

impl Clock {
    fn seconds(&self) -> f64 {
        (self.done + self.since.map_or(Duration::ZERO, |s| s.elapsed())).as_secs_f64()
    }

    fn stop(&mut self) {
        if let Some(s) = self.since.take() {
            self.done += s.elapsed();
        }
    }

    fn start(&mut self) {
        self.since.get_or_insert_with(Instant::now);
    }
}

fn work(spec: Spec, cmds: &Receiver<Cmd>, ctx: &Ctx<Report>) {
    let mut tr = match trainer(&spec) {
        Ok(t) => t,
        Err(e) => {
            ctx.send(Report::Failed(e.to_string()));
            return;
        }
    };
    let send = |r: Report| ctx.send(r);
    let started = Report::Started {
        params: tr.model.num_params(),
        train_bytes: tr.data.train.len(),
        val_bytes: tr.data.val.len(),
    };
    let val0 = tr.val_loss().loss;
    if !send(started) || !send(Report::Val { step: 0, loss: val0 }) {
        return;
    }
    let mut clock = Clock {
        done: Duration::ZERO,
        since: Some(Instant::now()),
    };
    let (mut paused, mut finished) = (false, false);
    let mut last_sample = Instant::now();
    loop {
        if ctx.cancelled() {
            return;
        }
        // between steps: every waiting command first; block when there is nothing to train
        let cmd = if paused || finished {
            match cmds.recv() {
                Ok(c) => Some(c),
                Err(_) => return,
            }
        } else {
            match cmds.try_recv() {
                Ok(c) => Some(c),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => return,
            }
        };
        if ctx.cancelled() {
            return;
        }
        if let Some(cmd) = cmd {
            let ok = match cmd {
                Cmd::Pause if !finished => {
                    paused = true;
                    clock.stop();
                    send(Report::Paused(true))
                }
                Cmd::Resume if !finished => {
                    paused = false;
                    clock.start();
                    send(Report::Paused(false))
                }
                Cmd::Pause | Cmd::Resume => true,
                Cmd::Save(path) => {
                    let result = super::make_dir_for(&path)
                        .map_err(|e| format!("{}: {e}", super::dir_of(&path).display()))
                        .and_then(|()| tr.save(&path).map_err(|e| e.to_string()));
                    send(Report::Saved {
                        step: tr.step,
                        path,
                        result,
                    })
                }
                Cmd::Snapshot => send(Report::Snapshot {
                    step: tr.step,
                    model: Box::new(tr.model.clone()),
                }),
                Cmd::Finish if !finished => {
                    finished = true;
                    finish(&mut tr, &spec, &mut clock, true, &send)
                }
                Cmd::Finish => true,
            };
            if !ok {
                return;
            }
            continue;
        }
        let s = tr.step();
        if !s.loss.is_finite() {
            // the weights are no longer worth anything: nothing is saved from here on
            let _ = send(Report::Failed(tr!(
                "training diverged: the loss of step {step} is {loss}, not finite; try a smaller learning rate",
                step = s.step,
                loss = s.loss
            )));
            return;
        }
        if !send(Report::Step {
            step: s.step,
            loss: s.loss,
            seconds: clock.seconds(),
        }) {
            return;
        }
        let last = s.step >= spec.steps;
        if last {
            finished = true;
            if !finish(&mut tr, &spec, &mut clock, false, &send) {
                return;
            }
            continue;
        }
        if s.step.is_multiple_of(spec.val_every())
            && !send(Report::Val {
                step: s.step,
                loss: tr.val_loss().loss,
            })
        {
            return;
        }
        if s.step.is_multiple_of(SAMPLE_EVERY) || last_sample.elapsed().as_secs_f64() >= SAMPLE_SECONDS {
            last_sample = Instant::now();
            if !send(Report::Sample {
                step: s.step,
                sample: sample(&tr, &spec.source, s.step),
            }) {
                return;
            }
        }
    }
}

/// The end of training: a last validation loss and sample, then the final weights.
fn finish(tr: &mut Trainer, spec: &Spec, clock: &mut Clock, stopped: bool, send: &impl Fn(Report) -> bool) -> bool {
    clock.stop();
    let step = tr.step;
    send(Report::Val {
        step,
        loss: tr.val_loss().loss,
    }) && send(Report::Sample {
        step,
        sample: sample(tr, &spec.source, step),
    }) && send(Report::Finished {
        step,
        seconds: clock.seconds(),
        stopped,
        model: Box::new(tr.model.clone()),
    })
}

/// Lines of a task's validation text that the sample checks.
const TASK_LINES: usize = 32;
/// Of those, the lines shown.
const TASK_SHOWN: usize = 4;
/// Bytes of free text generated.
const TEXT_BYTES: usize = 160;

/// Greedy answers to the first validation inputs of a task, or free text after a prompt.
pub(crate) fn sample(tr: &Trainer, source: &Source, step: u64) -> Sample {
    let model = &tr.model;
    if source.is_task() {
        let mut lines = Vec::new();
        let mut correct = 0;
        let mut of = 0;
        for line in tr.data.val.split(|&b| b == b'\n').take(TASK_LINES) {
            let Some(bar) = line.iter().position(|&b| b == b'|') else {
                continue;
            };
            let (input, want) = (&line[..=bar], &line[bar + 1..]);
            if input.len() + want.len() > model.config.seq_len {
                continue; // the answer would not fit in the context
            }
            let opts = SampleOptions {
                n_gen: want.len(),
                temp: 0.0,
                ..SampleOptions::default()
            };
            let got = model.sample(input, &opts).unwrap_or_default();
            of += 1;
            correct += usize::from(got == want);
            if lines.len() < TASK_SHOWN {
                lines.push(TaskLine {
                    input: printable(&input[..bar]),
                    got: printable(&got),
                    want: printable(want),
                });
            }
        }
        return Sample::Task { lines, correct, of };
    }
    let prompt_len = 16.min(model.config.seq_len).min(tr.data.val.len());
    let prompt = &tr.data.val[..prompt_len];
    let opts = SampleOptions {
        n_gen: TEXT_BYTES,
        temp: 0.8,
        topk: 0,
        seed: step,
    };
    Sample::Text {
        prompt: printable(prompt),
        text: model
            .sample(prompt, &opts)
            .map_or_else(|e| e.to_string(), |t| printable(&t)),
    }
}

/// Bytes as text for the screen: newlines kept, other control bytes and non-UTF-8 as `·`.
pub(crate) fn printable(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .map(|c| match c {
            '\n' => '\n',
            '\t' => ' ',
            c if c.is_control() || c == char::REPLACEMENT_CHARACTER => '·',
            c => c,
        })
        .collect()
}
