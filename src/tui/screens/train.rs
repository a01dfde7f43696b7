//! "Train TinyGPT": a form with the model's configuration, checked field by field as it is
//! typed; then the run itself, trained on a worker thread ([`worker`]) while this screen draws
//! the loss and validation loss, progress, speed and a generated sample; then the finished run,
//! whose weights `t` hands to the trained-model tracer.
//!
//! State changes only in [`Train::key`] and [`Train::poll`] (which applies the worker's reports);
//! [`render`] draws from the state and never mutates.

pub mod worker;

use crate::files::input::{human_bytes, kind_of};
use crate::model::Origin;
use crate::model::gpt::Attention;
use crate::model::gpt::Layout;
use crate::model::spec::{parse_attention, parse_rope};
use crate::model::{BUILTIN, Dataset, Setting, TinyGpt, TrainSpec, data};
use crate::tui::theme::Theme;
use crate::tui::widgets::{cols, cut_start, pad};
use crate::{msg, tr};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout as Split, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset as Series, Gauge, GraphType, Paragraph, Wrap};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use worker::{Cmd, Report, Sample, Source, Spec, Worker};

/// The form's fields, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Dataset,
    Layers,
    DModel,
    Heads,
    KvHeads,
    Rope,
    Attention,
    Seq,
    Batch,
    Steps,
    Lr,
    Seed,
    Save,
}

/// The form's fields, one slot each.
const FIELDS: usize = 13;

/// The rotations the rope field cycles through with ←/→.
const ROPES: [&str; 3] = ["none", "interleaved", "half"];

/// The attention kernels the attention field cycles through with ←/→.
const ATTENTIONS: [&str; 2] = ["naive", "flash"];

impl Field {
    pub const ALL: [Field; FIELDS] = [
        Field::Dataset,
        Field::Layers,
        Field::DModel,
        Field::Heads,
        Field::KvHeads,
        Field::Rope,
        Field::Attention,
        Field::Seq,
        Field::Batch,
        Field::Steps,
        Field::Lr,
        Field::Seed,
        Field::Save,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Field::Dataset => tr!("dataset"),
            Field::Layers => tr!("layers"),
            Field::DModel => tr!("d_model"),
            Field::Heads => tr!("heads"),
            Field::KvHeads => tr!("kv heads"),
            Field::Rope => tr!("rope"),
            Field::Attention => tr!("attn"),
            Field::Seq => tr!("seq"),
            Field::Batch => tr!("batch"),
            Field::Steps => tr!("steps"),
            Field::Lr => tr!("lr"),
            Field::Seed => tr!("seed"),
            Field::Save => tr!("save to"),
        }
    }

    pub fn hint(self) -> &'static str {
        match self {
            Field::Dataset => tr!("←/→ kernels · copy · reverse · sort, or type a file path"),
            Field::Layers => tr!("L, transformer blocks"),
            Field::DModel => tr!("C, channels of every token"),
            Field::Heads => tr!("H, divides d_model (1: baseline kernel's math, more: MHA)"),
            Field::KvHeads => tr!("H_kv: divides H (empty: H)"),
            Field::Rope => tr!("←/→ none · interleaved · half"),
            Field::Attention => tr!("←/→ naive · flash (tiled)"),
            Field::Seq => tr!("T, tokens of context"),
            Field::Batch => tr!("B, sequences per step"),
            Field::Steps => tr!("optimizer steps"),
            Field::Lr => tr!("AdamW learning rate"),
            Field::Seed => tr!("initial weights and data order"),
            Field::Save => tr!("s saves here, e exports layers beside it"),
        }
    }

    /// The defaults train the copy task to exact answers in well under a minute on two cores
    /// (about 20 s in a release build): after `|` one head learns to look 6 bytes back.
    fn default_value(self) -> &'static str {
        match self {
            Field::Dataset => "copy",
            Field::Layers => "1",
            Field::DModel => "32",
            Field::Heads => "4",
            Field::KvHeads => "",
            Field::Rope => "none",
            Field::Attention => "naive",
            Field::Seq => "24",
            Field::Batch => "16",
            Field::Steps => "3000",
            Field::Lr => "0.003",
            Field::Seed => "42",
            Field::Save => "checkpoints/tinygpt.safetensors",
        }
    }
}

/// The folder the form saves checkpoints in by default (made on the first save), where "Open
/// checkpoint…" looks.
pub const CHECKPOINTS: &str = "checkpoints";

/// The form's field of a setting.
fn field_of(setting: Setting) -> Field {
    match setting {
        Setting::SeqLen => Field::Seq,
        Setting::DModel => Field::DModel,
        Setting::Layers => Field::Layers,
        Setting::Heads => Field::Heads,
        Setting::KvHeads => Field::KvHeads,
        Setting::Rope => Field::Rope,
        Setting::Attention => Field::Attention,
        Setting::Batch => Field::Batch,
        Setting::Steps => Field::Steps,
        Setting::Lr => Field::Lr,
    }
}

/// Largest model the TUI trains (the headless `train` has no such limit): more would take
/// minutes per step and gigabytes of memory.
pub const MAX_PARAMS: usize = 50_000_000;
/// Largest `batch · seq`, which sizes the activations.
pub const MAX_TOKENS_PER_STEP: usize = 1 << 16;
/// Longest text a field takes.
const MAX_FIELD: usize = 1024;

/// The configuration being typed. `focus == Field::ALL.len()` is the Start button.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    pub values: [String; FIELDS],
    pub focus: usize,
    /// [`Form::check`] of the values as they are: recomputed when a value changes, so drawing
    /// the form never looks at the disk.
    pub checked: Checked,
}

impl Default for Form {
    fn default() -> Self {
        let mut form = Form {
            values: Field::ALL.map(|f| f.default_value().to_string()),
            focus: 0,
            checked: Checked::default(),
        };
        form.checked = form.check();
        form
    }
}

/// The form checked: an error per field, and the run to start when there is none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Checked {
    pub errors: [Option<String>; FIELDS],
    pub spec: Option<Spec>,
    /// Parameters of the configured model, when its sizes are valid.
    pub params: Option<usize>,
    /// The save path's folder when it is still to be made (by the first save or export).
    pub new_dir: Option<PathBuf>,
}

impl Form {
    pub fn value(&self, f: Field) -> &str {
        &self.values[f as usize]
    }

    pub fn set(&mut self, f: Field, v: &str) {
        self.values[f as usize] = v.to_string();
        self.checked = self.check();
    }

    /// Checks every field; each message says what is wrong and what is accepted.
    pub fn check(&self) -> Checked {
        let mut errors: [Option<String>; FIELDS] = Default::default();
        let mut err = |f: Field, msg: String| {
            if errors[f as usize].is_none() {
                errors[f as usize] = Some(msg);
            }
        };
        // each number as typed; the ranges and the cross-checks are the shared validator's
        let whole = |f: Field, err: &mut dyn FnMut(Field, String)| -> Option<usize> {
            let text = self.value(f).trim();
            match text.parse::<usize>() {
                Ok(v) => Some(v),
                Err(_) if text.is_empty() => {
                    err(f, tr!("empty: give a whole number").into());
                    None
                }
                Err(_) => {
                    err(f, tr!("{text} is not a whole number ≥ 1", text = format!("{text:?}")));
                    None
                }
            }
        };
        let layers = whole(Field::Layers, &mut err);
        let d_model = whole(Field::DModel, &mut err);
        let heads = whole(Field::Heads, &mut err);
        // empty: one key/value head per query head
        let kv_text = self.value(Field::KvHeads).trim();
        let kv_heads = if kv_text.is_empty() {
            None
        } else {
            whole(Field::KvHeads, &mut err)
        };
        let rope = match parse_rope(self.value(Field::Rope)) {
            Ok(r) => r,
            Err(e) => {
                err(Field::Rope, e.msg);
                None
            }
        };
        let attention = match parse_attention(self.value(Field::Attention)) {
            Ok(a) => a,
            Err(e) => {
                err(Field::Attention, e.msg);
                Attention::Naive
            }
        };
        let seq = whole(Field::Seq, &mut err);
        let batch = whole(Field::Batch, &mut err);
        let steps = whole(Field::Steps, &mut err).map(|s| s as u64);
        let lr_text = self.value(Field::Lr).trim();
        let lr = match lr_text.parse::<f32>() {
            Ok(v) => Some(v),
            Err(_) => {
                err(
                    Field::Lr,
                    tr!(
                        "{text} is not a number such as 0.003 or 3e-3",
                        text = format!("{lr_text:?}")
                    ),
                );
                None
            }
        };
        let spec = TrainSpec {
            seq_len: seq,
            d_model,
            n_layers: layers,
            n_heads: heads,
            n_kv_heads: kv_heads,
            rope,
            attention,
            batch,
            steps,
            lr,
        };
        for e in spec.problems() {
            err(field_of(e.setting), e.msg);
        }
        // the TUI's own limits, on top: a run here must stay quick
        if let (Some(b), Some(t)) = (batch, seq)
            && b.saturating_mul(t) > MAX_TOKENS_PER_STEP
        {
            err(
                Field::Batch,
                tr!(
                    "batch · seq = {n} is over {max} tokens per step",
                    n = b.saturating_mul(t),
                    max = MAX_TOKENS_PER_STEP
                ),
            );
        }
        let seed_text = self.value(Field::Seed).trim();
        let seed = seed_text
            .parse::<u64>()
            .map_err(|_| {
                err(
                    Field::Seed,
                    tr!("{text} is not a whole number ≥ 0", text = format!("{seed_text:?}")),
                )
            })
            .ok();
        let config = spec.config();
        let params = config.map(|c| Layout::new(&c).total);
        if let Some(p) = params.filter(|&p| p > MAX_PARAMS) {
            err(
                Field::DModel,
                tr!(
                    "{p} parameters is over the TUI's {max}: use attn-trace train for models this big",
                    p,
                    max = MAX_PARAMS
                ),
            );
        }
        let source = check_source(self.value(Field::Dataset), seq, &mut err);
        let save = check_save(self.value(Field::Save), &mut err);
        let new_dir = save.as_deref().map(dir_of).filter(|d| !d.is_dir());
        let spec = match (config, source, batch, steps, lr, seed, save) {
            (Some(config), Some(source), Some(batch), Some(steps), Some(lr), Some(seed), Some(save))
                if errors.iter().all(Option::is_none) =>
            {
                Some(Spec {
                    config,
                    attention,
                    source,
                    batch,
                    steps,
                    lr,
                    seed,
                    save,
                })
            }
            _ => None,
        };
        Checked {
            errors,
            spec,
            params,
            new_dir,
        }
    }

    /// Field `f` set to the next (or previous) of `names` after its value; the first when its
    /// value is none of them.
    fn cycle(&mut self, f: Field, names: &[&str], forward: bool) {
        let k = names.iter().position(|&name| name == self.value(f).trim());
        let next = match (k, forward) {
            (Some(k), true) => (k + 1) % names.len(),
            (Some(k), false) => (k + names.len() - 1) % names.len(),
            (None, _) => 0,
        };
        self.set(f, names[next]);
    }

    fn key(&mut self, key: KeyEvent) -> FormKey {
        let n = Field::ALL.len() + 1;
        let field = Field::ALL.get(self.focus).copied();
        match key.code {
            KeyCode::Esc => return FormKey::Back,
            KeyCode::Enter => return FormKey::Start,
            KeyCode::Up | KeyCode::BackTab => self.focus = (self.focus + n - 1) % n,
            KeyCode::Down | KeyCode::Tab => self.focus = (self.focus + 1) % n,
            KeyCode::Left | KeyCode::Right if field == Some(Field::Dataset) => {
                let names: Vec<&str> = BUILTIN.iter().map(|(name, _)| *name).collect();
                self.cycle(Field::Dataset, &names, key.code == KeyCode::Right);
            }
            KeyCode::Left | KeyCode::Right if field == Some(Field::Rope) => {
                self.cycle(Field::Rope, &ROPES, key.code == KeyCode::Right);
            }
            KeyCode::Left | KeyCode::Right if field == Some(Field::Attention) => {
                self.cycle(Field::Attention, &ATTENTIONS, key.code == KeyCode::Right);
            }
            KeyCode::Backspace => {
                if let Some(f) = field {
                    self.values[f as usize].pop();
                }
            }
            KeyCode::Delete => {
                if let Some(f) = field {
                    self.values[f as usize].clear();
                }
            }
            KeyCode::Char(c) => {
                if let Some(f) = field
                    && self.values[f as usize].len() < MAX_FIELD
                {
                    self.values[f as usize].push(c);
                }
            }
            _ => {}
        }
        FormKey::Stay
    }
}

enum FormKey {
    Stay,
    Back,
    Start,
}

/// A built-in name, or a file holding at least the bytes `seq` needs.
fn check_source(text: &str, seq: Option<usize>, err: &mut dyn FnMut(Field, String)) -> Option<Source> {
    let text = text.trim();
    if BUILTIN.iter().any(|(name, _)| *name == text) {
        return Some(Source::Builtin(text.to_string()));
    }
    if text.is_empty() {
        err(
            Field::Dataset,
            tr!("empty: a built-in name (←/→) or a file path").into(),
        );
        return None;
    }
    let path = PathBuf::from(text);
    match std::fs::metadata(&path) {
        Err(_) => {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            err(
                Field::Dataset,
                tr!(
                    "no such file, nor a built-in dataset ({names})",
                    names = names.join(", ")
                ),
            );
            None
        }
        Ok(m) if m.is_dir() => {
            err(Field::Dataset, tr!("is a directory: give a file of text").into());
            None
        }
        // a FIFO or a device would be waited on or read without end
        Ok(m) if !m.is_file() => {
            err(
                Field::Dataset,
                tr!(
                    "{kind}, not a regular file",
                    kind = crate::i18n::text(kind_of(m.file_type()))
                ),
            );
            None
        }
        Ok(m) if m.len() > data::MAX_FILE_BYTES => {
            err(
                Field::Dataset,
                tr!(
                    "{n} bytes is larger than the {max} a data file may be",
                    n = m.len(),
                    max = human_bytes(data::MAX_FILE_BYTES)
                ),
            );
            None
        }
        Ok(m) => {
            if let Some(seq) = seq {
                let need = Dataset::min_len(seq);
                if m.len() < need as u64 {
                    err(
                        Field::Dataset,
                        tr!(
                            "{n} bytes is too short: seq {seq} needs at least {need}",
                            n = m.len(),
                            seq,
                            need
                        ),
                    );
                    return None;
                }
            }
            Some(Source::File(path))
        }
    }
}

/// A file name in a directory that exists.
fn check_save(text: &str, err: &mut dyn FnMut(Field, String)) -> Option<PathBuf> {
    let text = text.trim();
    if text.is_empty() {
        err(
            Field::Save,
            tr!("empty: a file name such as tinygpt.safetensors").into(),
        );
        return None;
    }
    let path = PathBuf::from(text);
    if path.is_dir() {
        err(Field::Save, tr!("is a directory: give a file name").into());
        return None;
    }
    if let Ok(m) = std::fs::metadata(&path)
        && !m.is_file()
    {
        err(
            Field::Save,
            tr!(
                "{kind}: give the name of a file",
                kind = crate::i18n::text(kind_of(m.file_type()))
            ),
        );
        return None;
    }
    // a missing folder is made when the checkpoint is saved, if the folder it goes in exists
    let dir = dir_of(&path);
    if dir.exists() && !dir.is_dir() {
        err(Field::Save, tr!("{dir} is not a directory", dir = dir.display()));
        return None;
    }
    let up = dir_of(&dir);
    if !dir.is_dir() && !up.is_dir() {
        err(
            Field::Save,
            tr!("the directory {dir} does not exist", dir = up.display()),
        );
        return None;
    }
    Some(path)
}

/// Makes the folder a checkpoint or an exported layer goes in, when it is missing: one level,
/// in a folder that exists (the form checked that it does).
pub fn make_dir_for(path: &Path) -> std::io::Result<()> {
    let dir = dir_of(path);
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir(&dir)
}

/// The directory a file goes into (`.` for a bare name).
pub fn dir_of(path: &Path) -> PathBuf {
    crate::files::atomic::dir_of(path).to_path_buf()
}

/// Where a run is.
#[derive(Clone, Debug, PartialEq)]
pub enum RunState {
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
pub struct Progress {
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
pub enum Applied {
    Nothing,
    /// A line for the status bar.
    Message(String),
    Snapshot(u64, Box<TinyGpt>),
}

impl Progress {
    pub fn new(spec: Spec) -> Progress {
        Progress {
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

    pub fn tokens_per_step(&self) -> usize {
        self.spec.batch * self.spec.config.seq_len
    }

    pub fn apply(&mut self, report: Report) -> Applied {
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
    pub fn tokens_per_s(&self) -> Option<f64> {
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
    pub fn eta(&self) -> Option<f64> {
        let left = self.spec.steps.saturating_sub(self.step) as f64;
        self.tokens_per_s()
            .filter(|&r| r > 0.0)
            .map(|r| left * self.tokens_per_step() as f64 / r)
    }

    /// The mean training loss of the last `n` steps.
    pub fn recent_loss(&self, n: usize) -> Option<f32> {
        let tail = &self.losses[self.losses.len().saturating_sub(n)..];
        (!tail.is_empty()).then(|| tail.iter().sum::<f32>() / tail.len() as f32)
    }

    pub fn is_done(&self) -> bool {
        matches!(self.state, RunState::Finished { .. } | RunState::Failed(_))
    }

    /// The chart's series: training loss (bucket means when there are more than `max_points`
    /// steps) and validation loss, each as `(step, y)` with `y` the loss or, with `log`, its
    /// natural logarithm; and the y range covering both.
    pub fn chart(&self, log: bool, max_points: usize) -> ChartData {
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
pub struct ChartData {
    pub train: Vec<(f64, f64)>,
    pub val: Vec<(f64, f64)>,
    pub y_range: [f64; 2],
}

/// A run: its progress and, while it lives, the thread training it.
#[derive(Debug)]
pub struct Session {
    pub progress: Progress,
    worker: Option<Worker>,
}

/// The weights `t` hands to the tracer, and where they came from.
#[derive(Debug)]
pub struct Traced {
    pub model: TinyGpt,
    pub origin: Origin,
}

/// What the app should do after a key.
#[derive(Debug)]
pub enum Outcome {
    Stay,
    Back,
    Help,
    Trace(Box<Traced>),
}

#[derive(Debug, Default)]
pub struct Train {
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
pub const KEYS: &[(&str, &str)] = &[
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
    pub fn replay(form: Form, spec: Spec, reports: Vec<Report>) -> Train {
        let mut progress = Progress::new(spec);
        for r in reports {
            progress.apply(r);
        }
        Train {
            form,
            session: Some(Session { progress, worker: None }),
            ..Train::default()
        }
    }

    pub fn progress(&self) -> Option<&Progress> {
        self.session.as_ref().map(|s| &s.progress)
    }

    /// Is a worker training (or about to)? The app then wakes up on a timer to poll.
    pub fn is_live(&self) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| s.worker.is_some() && (!s.progress.is_done() || self.awaiting > 0))
    }

    /// Applies every report that has arrived. Returns the weights to trace when a snapshot
    /// asked for by `t` came in.
    pub fn poll(&mut self) -> Option<Box<Traced>> {
        let session = self.session.as_mut()?;
        let worker = session.worker.as_ref()?;
        let (mut traced, was_done, mut said) = (None, session.progress.is_done(), false);
        for report in worker.reports.try_iter().take(MAX_REPORTS_PER_POLL) {
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

    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        let Some(session) = &mut self.session else {
            let outcome = self.form.key(key);
            self.form.checked = self.form.check();
            return match outcome {
                FormKey::Stay => Outcome::Stay,
                FormKey::Back => Outcome::Back,
                FormKey::Start => {
                    self.start();
                    Outcome::Stay
                }
            };
        };
        let p = &session.progress;
        let send = |cmd: Cmd| session.worker.as_ref().is_some_and(|w| w.send(cmd));
        let running = matches!(p.state, RunState::Running | RunState::Starting);
        match key.code {
            KeyCode::Char(' ') => {
                let cmd = match p.state {
                    RunState::Running => Some(Cmd::Pause),
                    RunState::Paused => Some(Cmd::Resume),
                    _ => None,
                };
                if let Some(cmd) = cmd {
                    send(cmd);
                }
            }
            KeyCode::Char('s') => {
                let path = p.spec.save.clone();
                if matches!(p.state, RunState::Failed(_) | RunState::Starting) || !send(Cmd::Save(path.clone())) {
                    self.message = Some(tr!("nothing to save yet").into());
                } else {
                    self.awaiting += 1;
                    self.message = Some(tr!("saving to {path} …", path = path.display()));
                }
            }
            KeyCode::Char('x') if running || p.state == RunState::Paused => {
                send(Cmd::Finish);
                self.message = Some(tr!("stopping after this step …").into());
            }
            KeyCode::Char('t') => {
                if let (RunState::Finished { .. }, Some(model)) = (&p.state, &p.model) {
                    return Outcome::Trace(Box::new(Traced {
                        model: (**model).clone(),
                        origin: run_origin(p, p.step),
                    }));
                }
                if matches!(p.state, RunState::Running | RunState::Paused) && send(Cmd::Snapshot) {
                    self.pending_trace = true;
                    self.awaiting += 1;
                    self.message = Some(tr!("taking a snapshot of the weights …").into());
                } else {
                    self.message = Some(tr!("no weights to trace yet").into());
                }
            }
            KeyCode::Char('l') => self.log_scale = !self.log_scale,
            KeyCode::Char('n') => {
                if p.is_done() {
                    // dropping the session joins its (idle) thread
                    self.session = None;
                    self.pending_trace = false;
                    self.awaiting = 0;
                } else {
                    self.message = Some(tr!("still training: x stops it first").into());
                }
            }
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Char('q') | KeyCode::Esc => return Outcome::Back,
            _ => {}
        }
        Outcome::Stay
    }

    /// Starts the run the form describes, or points at what is wrong.
    fn start(&mut self) {
        let checked = self.form.check();
        match checked.spec {
            Some(spec) => {
                let worker = Worker::spawn(spec.clone());
                self.session = Some(Session {
                    progress: Progress::new(spec),
                    worker: Some(worker),
                });
            }
            None => {
                let bad = checked
                    .errors
                    .iter()
                    .position(Option::is_some)
                    .unwrap_or(self.form.focus);
                self.form.focus = bad;
                self.message = Some(tr!("fix the fields marked ✗ first").into());
            }
        }
    }
}

/// Where the weights of a run at `step` came from, for the tracer's titles and exports.
fn run_origin(p: &Progress, step: u64) -> Origin {
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
    }
}

/// `1:05`, `12 s`.
fn duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 60 {
        format!("{}:{:02}", s / 60, s % 60)
    } else {
        tr!("{s} s", s)
    }
}

/// `61,234`.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn render(frame: &mut Frame, area: Rect, st: &Train, theme: Theme) {
    match &st.session {
        None => render_form(frame, area, st, theme),
        Some(s) => render_run(frame, area, st, &s.progress, theme),
    }
}

fn render_form(frame: &mut Frame, area: Rect, st: &Train, theme: Theme) {
    let t = theme;
    let form = &st.form;
    let checked = &form.checked;
    let inner_w = area.width.saturating_sub(2) as usize;
    let value_w = form
        .values
        .iter()
        .map(|v| cols(v))
        .max()
        .unwrap_or(0)
        .clamp(12, inner_w.saturating_sub(3 + 9 + 2 + 24).clamp(12, 36));
    // a hint (or an error) too long for the room beside the values goes on under it, aligned
    let hint_x = 3 + 9 + value_w + 1 + 2;
    let hint_w = inner_w.saturating_sub(hint_x).max(12);
    let mut lines = Vec::new();
    for (k, f) in Field::ALL.iter().enumerate() {
        let focused = k == form.focus;
        let value = form.value(*f);
        let shown: String = if cols(value) > value_w {
            // the end of a long path is the part that tells files apart
            format!("…{}", cut_start(value, value_w - 1))
        } else {
            value.to_string()
        };
        let cursor = if focused { "▏" } else { " " };
        let mut spans = vec![
            Span::styled(if focused { " ▸ " } else { "   " }, t.key()),
            Span::styled(
                format!("{} ", pad(f.label(), 8)),
                if focused { t.title() } else { t.base() },
            ),
            Span::styled(
                format!("{shown}{cursor}{}", " ".repeat(value_w.saturating_sub(cols(&shown)))),
                if focused { t.cursor() } else { t.number() },
            ),
            Span::raw("  "),
        ];
        let (hint, style) = match (&checked.errors[k], &checked.new_dir) {
            (Some(e), _) => (format!("✗ {e}"), t.error()),
            (None, Some(dir)) if *f == Field::Save => (
                tr!(
                    "s saves here, e exports layers beside it ({dir}/ is made then)",
                    dir = dir.display()
                ),
                t.dim(),
            ),
            (None, _) => (f.hint().to_string(), t.dim()),
        };
        for (n, part) in crate::tui::widgets::wrap(&hint, hint_w).into_iter().enumerate() {
            if n == 0 {
                spans.push(Span::styled(part, style));
                lines.push(Line::from(std::mem::take(&mut spans)));
            } else {
                lines.push(Line::from(vec![
                    Span::raw(" ".repeat(hint_x)),
                    Span::styled(part, style),
                ]));
            }
        }
        if !spans.is_empty() {
            lines.push(Line::from(spans));
        }
    }
    // a blank line above the Start button when the form leaves room for the two lines about
    // the data and the model under it: the fields, the blank, Start, 2 borders, the title, 2
    // lines about and the status (at 24 rows there is no room for it)
    if area.height as usize >= lines.len() + 8 {
        lines.push(Line::from(""));
    }
    let start_focused = form.focus == Field::ALL.len();
    let ready = checked.spec.is_some();
    lines.push(Line::from(vec![
        Span::raw("   "),
        Span::styled(
            tr!(" Start training "),
            if start_focused {
                t.cursor()
            } else if ready {
                t.key()
            } else {
                t.dim()
            },
        ),
        Span::styled(
            if ready {
                tr!("  Enter starts")
            } else {
                tr!("  fix the fields marked ✗")
            },
            t.dim(),
        ),
    ]));
    let rows = lines.len() as u16 + 2;
    let [head, body, about, status] = Split::vertical([
        Constraint::Length(1),
        Constraint::Length(rows),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(tr!(" Train TinyGPT "), t.title()),
            Span::styled(
                tr!("· a byte-level GPT whose attention runs on the traced kernels"),
                t.dim(),
            ),
        ])),
        head,
    );
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(tr!(" configuration "))
                .border_style(t.border(true)),
        ),
        body,
    );
    let mut info = Vec::new();
    if let Some((_, about)) = BUILTIN.iter().find(|(n, _)| *n == form.value(Field::Dataset).trim()) {
        info.push(Line::from(vec![
            Span::styled(tr!(" data: "), t.dim()),
            Span::raw(crate::i18n::text(about)),
        ]));
    }
    if let Some(p) = checked.params {
        let mut text = tr!(" {n} parameters", n = grouped(p as u64));
        if let Some(spec) = &checked.spec {
            text.push_str(&tr!(
                " · {tokens} tokens per step · {heads} heads of D = {d}",
                tokens = spec.batch * spec.config.seq_len,
                heads = spec.config.n_heads,
                d = spec.config.d_model / spec.config.n_heads
            ));
            // grouped heads: how many key/value heads the query heads share
            let (h, kv) = (spec.config.n_heads, spec.config.kv_heads());
            if kv != h {
                text.push_str(&tr!(" · {kv} of {h} k/v heads", kv, h));
            }
        }
        info.push(Line::styled(text, t.dim()));
    }
    frame.render_widget(Paragraph::new(info).wrap(Wrap { trim: false }), about);
    let hints = tr!(" ↑/↓ field · type to edit · Delete clears · ←/→ choose · Enter start · Esc back");
    let line = match &st.message {
        Some(m) => Line::styled(format!(" {m}"), t.status().patch(t.key())),
        None => Line::styled(hints, t.status()),
    };
    frame.render_widget(Paragraph::new(line).style(t.status()), status);
}

fn render_run(frame: &mut Frame, area: Rect, st: &Train, p: &Progress, theme: Theme) {
    let t = theme;
    let spec = &p.spec;
    let c = &spec.config;
    let sample_h = if area.height >= 30 { 9 } else { 6 };
    let [head, top, gauge, sample, status] = Split::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Length(sample_h),
        Constraint::Length(1),
    ])
    .areas(area);
    let state = match &p.state {
        RunState::Starting => tr!("starting").to_string(),
        RunState::Running => tr!("running").to_string(),
        RunState::Paused => tr!("paused").to_string(),
        RunState::Finished { stopped: false } => tr!("finished in {time}", time = duration(p.seconds)),
        RunState::Finished { stopped: true } => tr!("stopped at step {step}", step = p.step),
        RunState::Failed(_) => tr!("failed").to_string(),
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(tr!(" Train TinyGPT "), t.title()),
            Span::styled(
                format!(
                    "· {} · L{} C{} H{}{} T{} B{} lr {} · ",
                    spec.source.label(),
                    c.n_layers,
                    c.d_model,
                    c.n_heads,
                    attention_label(c, spec.attention),
                    c.seq_len,
                    spec.batch,
                    spec.lr
                ),
                t.dim(),
            ),
            Span::styled(state, t.key()),
        ])),
        head,
    );
    let stats_w = 28.min(top.width / 2);
    let [chart_area, stats_area] = Split::horizontal([Constraint::Fill(1), Constraint::Length(stats_w)]).areas(top);
    if let RunState::Failed(e) = &p.state {
        frame.render_widget(
            Paragraph::new(Line::styled(e.clone(), t.error()))
                .wrap(Wrap { trim: false })
                .block(Block::bordered().title(tr!(" training failed "))),
            chart_area,
        );
    } else {
        render_chart(frame, chart_area, st, p, t);
    }
    render_stats(frame, stats_area, p, t);
    let ratio = if spec.steps == 0 {
        0.0
    } else {
        (p.step as f64 / spec.steps as f64).clamp(0.0, 1.0)
    };
    frame.render_widget(
        Gauge::default()
            .ratio(ratio)
            .label(tr!(
                "step {step}/{steps} · {pct}%",
                step = p.step,
                steps = spec.steps,
                pct = format!("{:.0}", ratio * 100.0)
            ))
            .gauge_style(t.title())
            .use_unicode(true),
        gauge,
    );
    render_sample(frame, sample, p, t);
    let hints = match &p.state {
        RunState::Running | RunState::Starting => {
            tr!(
                " space pause · s save → {path} · x stop · t trace · l log · q back",
                path = spec.save.display()
            )
        }
        RunState::Paused => {
            tr!(
                " space resume · s save → {path} · x stop · t trace · l log · q back",
                path = spec.save.display()
            )
        }
        RunState::Finished { .. } => {
            tr!(
                " s save → {path} · t trace · l log · n new run · q back",
                path = spec.save.display()
            )
        }
        RunState::Failed(_) => tr!(" n new run · q back").to_string(),
    };
    let line = match &st.message {
        Some(m) => Line::styled(format!(" {m}"), t.status().patch(t.key())),
        None => Line::styled(hints, t.status()),
    };
    frame.render_widget(Paragraph::new(line).style(t.status()), status);
}

fn render_chart(frame: &mut Frame, area: Rect, st: &Train, p: &Progress, t: Theme) {
    // two braille dots per column: more points than that would not show
    let data = p.chart(st.log_scale, (area.width as usize).saturating_sub(8).max(1) * 2);
    let steps = p.spec.steps.max(1) as f64;
    let label = |y: f64| {
        let loss = if st.log_scale { y.exp() } else { y };
        format!("{loss:.2}")
    };
    let [lo, hi] = data.y_range;
    let y_labels = vec![label(lo), label((lo + hi) / 2.0), label(hi)];
    let x_labels = vec![
        "0".to_string(),
        format!("{}", p.spec.steps / 2),
        format!("{}", p.spec.steps),
    ];
    let series = vec![
        Series::default()
            .name(tr!("loss"))
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(t.name())
            .data(&data.train),
        Series::default()
            .name(tr!("val"))
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(t.number())
            .data(&data.val),
    ];
    let title = if st.log_scale {
        tr!(" loss (log scale · l linear) ")
    } else {
        tr!(" loss (l: log scale) ")
    };
    let chart = Chart::new(series)
        .block(Block::bordered().title(title).border_style(t.border(false)))
        .x_axis(Axis::default().bounds([0.0, steps]).labels(x_labels).style(t.dim()))
        .y_axis(Axis::default().bounds(data.y_range).labels(y_labels).style(t.dim()));
    frame.render_widget(chart, area);
}

fn render_stats(frame: &mut Frame, area: Rect, p: &Progress, t: Theme) {
    let num = |v: Option<f32>| v.map_or("–".to_string(), |v| format!("{v:.4}"));
    let row = |k: &str, v: String| Line::from(vec![Span::styled(pad(k, 9), t.dim()), Span::styled(v, t.number())]);
    let mut lines = vec![
        row(tr!("step"), format!("{}/{}", p.step, p.spec.steps)),
        row(tr!("loss"), num(p.recent_loss(20))),
        row(tr!("val loss"), num(p.val.last().map(|v| v.1))),
        row(
            tr!("tokens/s"),
            p.tokens_per_s().map_or("–".into(), |r| grouped(r.round() as u64)),
        ),
        row(
            tr!("ETA"),
            match p.state {
                RunState::Finished { .. } => tr!("done").into(),
                _ => p.eta().map_or("–".into(), duration),
            },
        ),
        row(tr!("time"), duration(p.seconds)),
    ];
    if let Some(n) = p.params {
        lines.push(row(tr!("params"), grouped(n as u64)));
    }
    if let Some((path, step)) = &p.saved {
        lines.push(Line::styled(tr!("saved step {step}:", step), t.dim()));
        lines.push(Line::raw(path.display().to_string()));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(tr!(" progress ")).border_style(t.border(false))),
        area,
    );
}

fn render_sample(frame: &mut Frame, area: Rect, p: &Progress, t: Theme) {
    let (title, lines) = match &p.sample {
        None => (
            tr!(" sample ").to_string(),
            vec![Line::styled(tr!("(the first sample comes after a few steps)"), t.dim())],
        ),
        Some((step, Sample::Task { lines, correct, of })) => {
            let mut out: Vec<Line> = lines
                .iter()
                .map(|l| {
                    let ok = l.got == l.want;
                    let mut spans = vec![
                        Span::raw(format!("{}|", l.input)),
                        Span::styled(l.got.clone(), if ok { t.number() } else { t.error() }),
                        Span::styled(if ok { "  ✓" } else { "  ✗" }, if ok { t.key() } else { t.error() }),
                    ];
                    if !ok {
                        spans.push(Span::styled(tr!("  (want {want})", want = l.want), t.dim()));
                    }
                    Line::from(spans)
                })
                .collect();
            out.push(Line::styled(
                tr!(
                    "exact answers: {correct} of the first {of} validation lines",
                    correct,
                    of
                ),
                t.title(),
            ));
            (tr!(" sample at step {step} (greedy) ", step), out)
        }
        Some((step, Sample::Text { prompt, text })) => {
            let mut out = vec![Line::styled(
                tr!("after {prompt}:", prompt = format!("{prompt:?}")),
                t.dim(),
            )];
            out.extend(text.split('\n').map(|l| Line::raw(l.to_string())));
            (tr!(" sample at step {step} (temperature 0.8) ", step), out)
        }
    };
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(title).border_style(t.border(false))),
        area,
    );
}

/// The header's note of grouped key/value heads, rotary positions and the flash kernel, when the
/// run has them: ` kv2 rope` or ` flash` (empty for plain multi-head attention on the naive
/// kernels), short enough that the run's state still fits at 80 columns.
fn attention_label(c: &crate::model::Config, attention: Attention) -> String {
    let mut label = String::new();
    if c.kv_heads() != c.n_heads {
        label.push_str(&format!(" kv{}", c.kv_heads()));
    }
    if c.rope.is_some() {
        label.push_str(" rope");
    }
    if let Attention::Flash(_) = attention {
        label.push_str(" flash");
    }
    label
}
