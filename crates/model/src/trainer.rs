//! Training: the model, AdamW state, the data and the step counter in one value that a CLI loop
//! or a UI worker thread drives step by step; and evaluation over non-overlapping windows.

use super::checkpoint::{self, Loaded, TrainState};
use super::data::{Dataset, window_count};
use super::gpt::{TinyGpt, Workspace};
use super::{AdamW, ModelError, TrainSpec};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The validation loss during training covers at most this many tokens of the held-out split
/// (its first windows), so evaluating costs about as much as one or two training steps.
pub const VAL_TOKENS: usize = 4096;

/// The generator that draws training windows uses this stream of the seed (initialisation uses
/// stream 0), so the two never share numbers.
const DATA_STREAM: u64 = 1;

/// What one step reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepStats {
    /// Steps done so far, this one included.
    pub step: u64,
    /// Mean cross-entropy of this step's batch (before the update).
    pub loss: f32,
    /// Tokens of this step divided by its wall time.
    pub tokens_per_s: f64,
}

/// Mean next-token loss over some windows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EvalResult {
    pub loss: f32,
    pub tokens: usize,
    pub windows: usize,
}

/// Model + optimizer + data + step counter.
pub struct Trainer {
    pub model: TinyGpt,
    pub opt: AdamW,
    pub data: Dataset,
    pub batch: usize,
    pub step: u64,
    data_seed: u64,
    rng: ChaCha8Rng,
    work: Workspace,
    /// The parameters AdamW writes, swapped with the model's after each update
    /// ([`AdamW::update_sum`] says why).
    next: Vec<f32>,
    tokens: Vec<u8>,
    targets: Vec<u8>,
}

impl Trainer {
    /// A fresh run: windows of the model's `seq_len`, `batch` of them per step.
    pub fn new(model: TinyGpt, data: Dataset, batch: usize, lr: f32, seed: u64) -> Result<Trainer, ModelError> {
        let opt = AdamW::new(model.num_params(), lr);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(DATA_STREAM);
        Trainer::assemble(model, opt, data, batch, 0, seed, rng)
    }

    /// Continues from a checkpoint exactly where it stopped (weights, AdamW moments, step, and
    /// the position of the data generator). `lr` overrides the saved learning rate. A
    /// checkpoint without optimizer state starts fresh moments and draws from `seed`.
    pub fn resume(
        loaded: Loaded,
        data: Dataset,
        batch: usize,
        lr: Option<f32>,
        seed: u64,
    ) -> Result<Trainer, ModelError> {
        let Loaded { model, step, state } = loaded;
        let (mut opt, data_seed, pos) = match state {
            Some(st) => (st.opt, st.data_seed, st.data_rng_pos),
            None => (AdamW::new(model.num_params(), 3e-4), seed, 0),
        };
        if let Some(lr) = lr {
            opt.lr = lr;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(data_seed);
        rng.set_stream(DATA_STREAM);
        rng.set_word_pos(pos);
        Trainer::assemble(model, opt, data, batch, step, data_seed, rng)
    }

    fn assemble(
        model: TinyGpt,
        opt: AdamW,
        data: Dataset,
        batch: usize,
        step: u64,
        data_seed: u64,
        rng: ChaCha8Rng,
    ) -> Result<Trainer, ModelError> {
        let t = model.config.seq_len;
        check_spec(TrainSpec {
            batch: Some(batch),
            lr: Some(opt.lr),
            attention: model.attention,
            ..TrainSpec::of_config(&model.config)
        })?;
        if data.train.len() <= t || data.val.len() <= t {
            return Err(ModelError::Data(format!(
                "{}: too short for seq {t}: the training and validation parts need at least {} bytes each \
                 (the whole data at least {})",
                data.name,
                t + 1,
                Dataset::min_len(t)
            )));
        }
        let work = Workspace::new(&model, batch, t);
        let next = super::zeros(model.params.len());
        Ok(Trainer {
            model,
            opt,
            data,
            batch,
            step,
            data_seed,
            rng,
            work,
            next,
            tokens: Vec::new(),
            targets: Vec::new(),
        })
    }

    /// Tokens one step trains on: `batch · seq_len`.
    pub fn tokens_per_step(&self) -> usize {
        self.batch * self.model.config.seq_len
    }

    /// One step: draw a batch, forward, backward, AdamW update. It runs on a thread of rayon's
    /// pool (moved there when called from outside it), so the step's parallel parts, the
    /// shards' passes and then AdamW, are started and joined by a thread that works on them:
    /// from outside, the caller would sleep while the pool works and be woken after each part.
    pub fn step(&mut self) -> StepStats {
        if rayon::current_thread_index().is_none() {
            return rayon::scope(|_| self.step());
        }
        let start = Instant::now();
        let t = self.model.config.seq_len;
        self.data
            .batch(&mut self.rng, [self.batch, t], &mut self.tokens, &mut self.targets);
        let loss = self
            .model
            .loss_and_shard_grads(&mut self.work, &self.tokens, &self.targets);
        // the shards' gradients are summed as AdamW reads them
        let parts: Vec<&[f32]> = self.work.shards.iter().map(|s| &s.grads[..]).collect();
        self.opt.update_sum(&self.model.params, &mut self.next, &parts);
        std::mem::swap(&mut self.model.params, &mut self.next);
        self.step += 1;
        StepStats {
            step: self.step,
            loss,
            tokens_per_s: self.tokens_per_step() as f64 / start.elapsed().as_secs_f64().max(1e-9),
        }
    }

    /// Runs up to `steps` more steps, checking `stop` before each one, and calls `on_step`
    /// after each. Returns how many ran (fewer than `steps` when stopped).
    pub fn train(&mut self, steps: u64, stop: &AtomicBool, mut on_step: impl FnMut(&mut Trainer, &StepStats)) -> u64 {
        let mut done = 0;
        while done < steps && !stop.load(Ordering::Relaxed) {
            let stats = self.step();
            done += 1;
            on_step(self, &stats);
        }
        done
    }

    /// Mean loss over the first windows of the held-out split (about [`VAL_TOKENS`] tokens).
    pub fn val_loss(&mut self) -> EvalResult {
        let t = self.model.config.seq_len;
        let max = (VAL_TOKENS / t).max(1);
        eval_windows(&self.model, &mut self.work, &self.data.val, max)
    }

    /// The state [`checkpoint::save`] needs to resume this run exactly.
    pub(crate) fn train_state(&self) -> TrainState {
        TrainState {
            opt: self.opt.clone(),
            data_seed: self.data_seed,
            data_rng_pos: self.rng.get_word_pos(),
            dataset: self.data.name.clone(),
        }
    }

    /// Saves weights and optimizer state atomically (see [`checkpoint`]).
    pub fn save(&self, path: &Path) -> Result<(), ModelError> {
        checkpoint::save(path, &self.model, self.step, Some(&self.train_state()))
    }

    /// The bytes [`Trainer::save`] writes to `path` (which errors name).
    pub fn encode(&self, path: &Path) -> Result<Vec<u8>, ModelError> {
        checkpoint::encode(path, &self.model, self.step, Some(&self.train_state()))
    }
}

/// The settings' check shared with the CLI and the train form (see [`TrainSpec`]), as a
/// [`ModelError`] naming the setting.
fn check_spec(spec: TrainSpec) -> Result<(), ModelError> {
    spec.validate().map_err(|e| ModelError::Config {
        field: e.setting.name(),
        msg: e.msg,
    })
}

/// Mean next-token cross-entropy over the non-overlapping windows of `seq_len` tokens starting
/// at bytes 0, seq, 2·seq, … (each window's targets are the next `seq_len` bytes), at most
/// `max_windows` of them. Batches of the workspace's size run sharded across threads.
pub fn eval_windows(model: &TinyGpt, work: &mut Workspace, bytes: &[u8], max_windows: usize) -> EvalResult {
    let t = model.config.seq_len;
    let windows = window_count(bytes.len(), t).min(max_windows);
    let mut sum = 0.0f64;
    let mut w = 0;
    let (mut tokens, mut targets) = (Vec::new(), Vec::new());
    let mut tail: Option<Workspace> = None;
    while w < windows {
        let n = (windows - w).min(work.b);
        tokens.clear();
        targets.clear();
        for k in w..w + n {
            tokens.extend_from_slice(&bytes[k * t..(k + 1) * t]);
            targets.extend_from_slice(&bytes[k * t + 1..(k + 1) * t + 1]);
        }
        let ws = if n == work.b && work.t == t {
            &mut *work
        } else {
            tail.insert(Workspace::new(model, n, t))
        };
        sum += model.loss_sum(ws, &tokens, &targets);
        w += n;
    }
    let n_tokens = windows * t;
    EvalResult {
        loss: if n_tokens == 0 {
            f32::NAN
        } else {
            (sum / n_tokens as f64) as f32
        },
        tokens: n_tokens,
        windows,
    }
}

/// [`eval_windows`] over every window of `bytes`, in batches of `batch` sequences.
pub fn eval_loss(model: &TinyGpt, bytes: &[u8], batch: usize) -> Result<EvalResult, ModelError> {
    let t = model.config.seq_len;
    let windows = window_count(bytes.len(), t);
    if windows == 0 {
        return Err(ModelError::Data(format!(
            "{} bytes is too short: evaluating with seq_len {t} needs at least {} bytes (one window and its \
             next-byte targets)",
            bytes.len(),
            t + 1
        )));
    }
    let batch = batch.clamp(1, windows);
    check_spec(TrainSpec {
        batch: Some(batch),
        attention: model.attention,
        ..TrainSpec::of_config(&model.config)
    })?;
    let mut work = Workspace::new(model, batch, t);
    Ok(eval_windows(model, &mut work, bytes, windows))
}
