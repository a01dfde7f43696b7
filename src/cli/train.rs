//! `attn-trace train`: trains TinyGPT on a file or a built-in dataset, with a progress bar on a
//! terminal or JSON lines with `--json`; Ctrl-C stops between steps (saving first with `--save`).

use super::{CliError, names_parser, quiet_pipe, whole};
use attn_trace_core::files::atomic::AtomicFile;
use attn_trace_core::kernels::rope::Pairs;
use attn_trace_i18n::tr;
use attn_trace_model::gpt::{Attention, SlidingWindow};
use attn_trace_model::spec::{parse_rope, rope_name};
use attn_trace_model::{
    BUILTIN, Config, Dataset, ModelError, Setting, SpecError, TinyGpt, TrainSpec, Trainer, checkpoint,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Train TinyGPT (byte-level, on the tracer's own attention kernels) and optionally save it.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Built-in datasets (--dataset): kernels (this project's kernel sources), copy, reverse, sort.
Without --data or --dataset, trains on kernels. Sizes default to B=4 T=64 C=64 L=1 H=1; when
resuming with --load they come from the checkpoint (as do --kv-heads, --rope, --window and
--sinks).

The text and --json say the same numbers. Each logged step's loss is the mean training loss
of the steps since the previous line (steps 251-300 with --log-every 50); val_loss is over the
first ~4096 tokens of the held-out part. The last line's loss is that of the last step's batch
alone, so it is noisier than the means before it.

With --json: one line per logged step {\"step\",\"loss\",\"val_loss\",\"tokens_per_s\"}, then
{\"done\": true, \"steps\", \"loss\", \"val_loss\", \"tokens_per_s\", \"seconds\", \"interrupted\"}.
tokens_per_s counts training steps only, not the validation passes.

Examples:
  attn-trace train --dataset copy --steps 600 --heads 4 --dmodel 32 --seq 24 --batch 8 --lr 3e-3 --save copy.safetensors
  attn-trace train --data notes.txt --steps 2000 --layers 2 --heads 4 --save notes.safetensors
  attn-trace train --dataset copy --steps 600 --heads 4 --kv-heads 2 --rope half --dmodel 32 --seq 24 --batch 8 --lr 3e-3
  attn-trace train --load notes.safetensors --data notes.txt --steps 1000 --save notes.safetensors
  attn-trace train --dataset sort --steps 300 --json | jq .loss")]
pub(crate) struct Args {
    /// Train on the bytes of this file (the last tenth is held out for validation).
    #[arg(long, value_name = "FILE", conflicts_with = "dataset")]
    pub data: Option<PathBuf>,
    /// Train on a built-in dataset: kernels, copy, reverse or sort.
    #[arg(long, value_name = "NAME")]
    pub dataset: Option<String>,
    /// Optimizer steps to run (this many more when resuming).
    #[arg(long, default_value_t = 1000, value_name = "N", allow_negative_numbers = true, value_parser = whole::<u64>)]
    pub steps: u64,
    /// Sequences per step.
    #[arg(long, default_value_t = 4, value_name = "B", allow_negative_numbers = true, value_parser = whole::<usize>)]
    pub batch: usize,
    /// Tokens per sequence (the model's context length) [default: 64].
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = whole::<usize>)]
    pub seq: Option<usize>,
    /// Channels [default: 64].
    #[arg(long, value_name = "C", allow_negative_numbers = true, value_parser = whole::<usize>)]
    pub dmodel: Option<usize>,
    /// Transformer blocks [default: 1].
    #[arg(long, value_name = "L", allow_negative_numbers = true, value_parser = whole::<usize>)]
    pub layers: Option<usize>,
    /// Attention heads; must divide --dmodel (1 is the baseline kernel's math, more the MHA kernel's) [default: 1].
    #[arg(long, value_name = "H", allow_negative_numbers = true, value_parser = whole::<usize>)]
    pub heads: Option<usize>,
    /// Key/value heads shared by the query heads (grouped-query attention, the GQA kernel's math); must divide --heads; 1 is multi-query attention [default: --heads].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = whole::<usize>)]
    pub kv_heads: Option<usize>,
    /// Rotary positions on q and k: none, interleaved (pairs 2m, 2m+1) or half (pairs m, m + D/2) [default: none].
    #[arg(long, value_name = "PAIRS")]
    pub rope: Option<String>,
    /// Sliding-window attention: each position attends over the W most recent ones (itself included) [default: the whole context].
    #[arg(long, value_name = "W", allow_negative_numbers = true, value_parser = whole::<usize>)]
    pub window: Option<usize>,
    /// Attention sinks: the first N positions stay visible to every position whatever --window [default: 0].
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = whole::<usize>)]
    pub sinks: Option<usize>,
    /// AdamW learning rate [default: 3e-4, or the checkpoint's].
    #[arg(long, value_name = "LR", allow_negative_numbers = true)]
    pub lr: Option<f32>,
    /// Seed of the initial weights and of the order of training windows (resuming continues the checkpoint's).
    #[arg(long, default_value_t = 42, value_name = "S", allow_negative_numbers = true, value_parser = whole::<u64>)]
    pub seed: u64,
    /// Save weights and optimizer state here at the end (or on Ctrl-C), atomically.
    #[arg(long, value_name = "PATH")]
    pub save: Option<PathBuf>,
    /// Resume from this checkpoint: weights, optimizer state, step and data position.
    #[arg(long, value_name = "PATH")]
    pub load: Option<PathBuf>,
    /// Log (and evaluate the validation loss) every N steps, and after the last.
    #[arg(long, default_value_t = 50, value_name = "N", allow_negative_numbers = true, value_parser = whole::<u64>)]
    pub log_every: u64,
    /// JSON lines on stdout instead of a progress bar.
    #[arg(long)]
    pub json: bool,
    /// The attention kernel: naive (stores the [B,H,T,T] probabilities) or flash (64×64 tiles,
    /// the online softmax; backward recomputes the probabilities). Same loss within rounding
    /// [default: the faster for the model's shape: flash from T = 512 when each query head has
    /// its own key/value head, naive otherwise; the first line says which].
    #[arg(long, value_name = "KERNEL", value_parser = names_parser(&Attention::ALL, Attention::name))]
    pub attention: Option<Attention>,
}

#[derive(Serialize)]
struct LogLine {
    step: u64,
    loss: f32,
    val_loss: f32,
    tokens_per_s: f64,
}

#[derive(Serialize)]
struct DoneLine {
    done: bool,
    steps: u64,
    loss: f32,
    val_loss: f32,
    tokens_per_s: f64,
    seconds: f64,
    interrupted: bool,
}

fn bad(msg: String) -> CliError {
    CliError::Input(msg)
}

/// The flag that sets `setting`.
fn flag(setting: Setting) -> &'static str {
    match setting {
        Setting::SeqLen => "--seq",
        Setting::DModel => "--dmodel",
        Setting::Layers => "--layers",
        Setting::Heads => "--heads",
        Setting::KvHeads => "--kv-heads",
        Setting::Rope => "--rope",
        Setting::Window => "--window",
        Setting::Sinks => "--sinks",
        Setting::Attention => "--attention",
        Setting::Batch => "--batch",
        Setting::Steps => "--steps",
        Setting::Lr => "--lr",
    }
}

/// A problem of the settings, as one line naming the flag.
fn flag_error(e: SpecError) -> CliError {
    bad(format!("{} {}", flag(e.setting), e.msg))
}

/// The model's configuration from the flags, or the checkpoint's when resuming (then a flag
/// that disagrees with it is an error), checked with the rest of the settings by the validator
/// the train form uses.
fn config(
    args: &Args,
    rope: Option<Option<Pairs>>,
    attention: Attention,
    loaded: Option<&Config>,
) -> Result<Config, CliError> {
    let flags = [
        ("--seq", "seq_len", args.seq),
        ("--dmodel", "d_model", args.dmodel),
        ("--layers", "n_layers", args.layers),
        ("--heads", "n_heads", args.heads),
        ("--kv-heads", "n_kv_heads", args.kv_heads),
    ];
    let cfg = match loaded {
        Some(cfg) => {
            let have = [cfg.seq_len, cfg.d_model, cfg.n_layers, cfg.n_heads, cfg.kv_heads()];
            for ((flag, field, v), have) in flags.into_iter().zip(have) {
                if let Some(v) = v.filter(|&v| v != have) {
                    return Err(bad(tr!(
                        "{flag} {v} does not match the checkpoint's {field} {have}; leave it out when resuming",
                        flag,
                        v,
                        field,
                        have
                    )));
                }
            }
            let have = [cfg.sliding.map(|s| s.w), cfg.sliding.map(|s| s.sinks)];
            for ((flag, field, given), have) in [("--window", "window", args.window), ("--sinks", "sinks", args.sinks)]
                .into_iter()
                .zip(have)
            {
                if let Some(v) = given.filter(|&v| Some(v) != have && !(v == 0 && have.is_none())) {
                    let have = have.map_or_else(|| tr!("none").to_string(), |h| h.to_string());
                    return Err(bad(tr!(
                        "{flag} {v} does not match the checkpoint's {field} {have}; leave it out when resuming",
                        flag,
                        v,
                        field,
                        have
                    )));
                }
            }
            if let Some(r) = rope.filter(|&r| r != cfg.rope) {
                return Err(bad(tr!(
                    "--rope {given} does not match the checkpoint's rope {have}; leave it out when resuming",
                    given = rope_name(r),
                    have = rope_name(cfg.rope)
                )));
            }
            *cfg
        }
        None => {
            let d = Config::default();
            Config {
                seq_len: args.seq.unwrap_or(d.seq_len),
                d_model: args.dmodel.unwrap_or(d.d_model),
                n_layers: args.layers.unwrap_or(d.n_layers),
                n_heads: args.heads.unwrap_or(d.n_heads),
                n_kv_heads: args.kv_heads,
                rope: rope.flatten(),
                sliding: args.window.map(|w| SlidingWindow {
                    w,
                    sinks: args.sinks.unwrap_or(0),
                }),
                ..d
            }
            .normalized()
        }
    };
    TrainSpec {
        attention,
        batch: Some(args.batch),
        steps: Some(args.steps),
        lr: args.lr,
        ..TrainSpec::of_config(&cfg)
    }
    .validate()
    .map_err(flag_error)?;
    Ok(cfg)
}

/// The data named by `--data` or `--dataset` (default: the built-in `kernels`).
pub(crate) fn dataset(data: Option<&Path>, name: Option<&str>, seq: usize) -> Result<Dataset, CliError> {
    match data {
        Some(path) => Dataset::from_file(path, seq).map_err(|e| bad(format!("--data {e}"))),
        None => Dataset::builtin(name.unwrap_or("kernels"), seq).map_err(|e| bad(format!("--dataset {e}"))),
    }
}

/// Loads the checkpoint given by `flag`; the message names the flag and the file.
pub(crate) fn load_checkpoint(flag: &str, path: &Path) -> Result<checkpoint::Loaded, CliError> {
    checkpoint::load(path).map_err(|e| match e {
        ModelError::Checkpoint { path, msg } => bad(format!("{flag} {path}: {msg}")),
        other => bad(format!("{flag} {}: {other}", path.display())),
    })
}

/// Opens the `--save` target before hours of training, refusing one that cannot be written.
fn check_save_target(path: &Path) -> Result<AtomicFile, CliError> {
    if path.is_dir() {
        return Err(bad(tr!(
            "--save {path}: is a directory; give a file name",
            path = path.display()
        )));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(bad(tr!(
            "--save {path}: the directory {dir} does not exist",
            path = path.display(),
            dir = dir.display()
        )));
    }
    // a socket or a block device
    attn_trace_core::files::atomic::check_destination(path)
        .map_err(|e| bad(format!("--save {}: {e}", path.display())))?;
    // and a destination that cannot be written: the file it will become (a temporary file beside
    // it, or a FIFO held open) is made now, not after the run
    AtomicFile::create(path).map_err(|e| bad(tr!("--save {path}: cannot write there: {e}", path = path.display(), e)))
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    if args.log_every == 0 {
        return Err(bad(tr!("--log-every must be at least 1").into()));
    }
    if let Some(name) = &args.dataset
        && !BUILTIN.iter().any(|(n, _)| n == name)
    {
        let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        return Err(bad(tr!(
            "--dataset {name}: unknown; the built-in datasets are {names}",
            name,
            names = names.join(tr!(", "))
        )));
    }
    // the settings alone first, so a bad flag is named before a checkpoint is read
    let rope = args.rope.as_deref().map(parse_rope).transpose().map_err(flag_error)?;
    // the kernel named, else the faster for the sizes given (for a checkpoint's, once read)
    let d = Config::default();
    let heads = args.heads.unwrap_or(d.n_heads);
    let chosen = |seq: usize, heads: usize, kv: usize| args.attention.unwrap_or(Attention::for_shape(seq, heads, kv));
    let attention = chosen(args.seq.unwrap_or(d.seq_len), heads, args.kv_heads.unwrap_or(heads));
    TrainSpec {
        seq_len: args.seq,
        d_model: args.dmodel,
        n_layers: args.layers,
        n_heads: args.heads,
        n_kv_heads: args.kv_heads,
        rope: rope.flatten(),
        window: args.window,
        sinks: args.sinks,
        attention,
        batch: Some(args.batch),
        steps: Some(args.steps),
        lr: args.lr,
    }
    .validate()
    .map_err(flag_error)?;
    let save = match &args.save {
        Some(path) => Some(check_save_target(path)?),
        None => None,
    };
    let loaded = match &args.load {
        Some(path) => Some(load_checkpoint("--load", path)?),
        None => None,
    };
    let attention = match loaded.as_ref().map(|l| &l.model.config) {
        Some(c) => chosen(c.seq_len, c.n_heads, c.kv_heads()),
        None => attention,
    };
    let cfg = config(&args, rope, attention, loaded.as_ref().map(|l| &l.model.config))?;
    // resuming at the checkpoint's learning rate: held to the same range as --lr
    if let (Some(path), Some(st), None) = (&args.load, loaded.as_ref().and_then(|l| l.state.as_ref()), args.lr) {
        let spec = TrainSpec {
            lr: Some(st.opt.lr),
            ..TrainSpec::default()
        };
        if let Err(e) = spec.validate() {
            return Err(bad(tr!(
                "--load {path}: its learning rate {msg}; give --lr to resume with another",
                path = path.display(),
                msg = e.msg
            )));
        }
    }
    let data = dataset(args.data.as_deref(), args.dataset.as_deref(), cfg.seq_len)?;
    let mut trainer = match loaded {
        Some(mut l) => {
            l.model.attention = attention;
            Trainer::resume(l, data, args.batch, args.lr, args.seed)
        }
        None => TinyGpt::new(cfg, args.seed).and_then(|mut m| {
            m.attention = attention;
            Trainer::new(m, data, args.batch, args.lr.unwrap_or(3e-4), args.seed)
        }),
    }
    .map_err(|e| bad(e.to_string()))?;

    // Ctrl-C, SIGTERM or SIGHUP stop training between two steps (and the run is saved); a
    // second one ends the process at once
    let stop = Arc::new(AtomicBool::new(false));
    super::stop_on_signal(Arc::clone(&stop));
    train(&args, &mut trainer, &stop, save)
}

/// The training loop and its output.
fn train(args: &Args, trainer: &mut Trainer, stop: &AtomicBool, save: Option<AtomicFile>) -> Result<(), CliError> {
    let started = Instant::now();
    let first_step = trainer.step;
    let tokens_per_step = trainer.tokens_per_step() as f64;
    let mut out = std::io::stdout().lock();
    let bar = (!args.json && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(args.steps);
        let style = ProgressStyle::with_template(tr!("{bar:30} {pos}/{len} steps  {msg}  ETA {eta}"))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });
    if !args.json {
        let c = &trainer.model.config;
        // grouped heads and rotary positions only when the model has them
        let mut attention = String::new();
        if c.kv_heads() != c.n_heads {
            attention.push_str(&format!(" H_kv={}", c.kv_heads()));
        }
        if let Some(SlidingWindow { w, sinks }) = c.sliding {
            attention.push_str(&format!(" window={w} sinks={sinks}"));
        }
        if let Some(r) = c.rope {
            attention.push_str(&format!(" rope={}", r.name()));
        }
        attention.push_str(&format!(" attention={}", trainer.model.attention.name()));
        if args.attention.is_none() {
            attention.push_str(tr!(" (auto)"));
        }
        let line = tr!(
            "training {params} parameters (T={t} C={c} L={l} H={h}{attention}, B={b}) on {data}: {train} train / {val} validation bytes",
            params = trainer.model.num_params(),
            t = c.seq_len,
            c = c.d_model,
            l = c.n_layers,
            h = c.n_heads,
            attention,
            b = trainer.batch,
            data = trainer.data.name,
            train = trainer.data.train.len(),
            val = trainer.data.val.len()
        );
        match &bar {
            Some(b) => b.println(line),
            None => quiet_pipe(writeln!(out, "{line}"))?,
        }
    }

    let (mut train_secs, mut window_secs) = (0.0, 0.0);
    let (mut loss_sum, mut loss_n, mut last_loss, mut val) = (0.0f64, 0u32, f32::NAN, f32::NAN);
    let mut done = 0;
    while done < args.steps && !stop.load(Ordering::Relaxed) {
        let t0 = Instant::now();
        let s = trainer.step();
        if !s.loss.is_finite() {
            if let Some(b) = &bar {
                b.finish_and_clear();
            }
            // the first step's loss is the loaded weights', before any update: the checkpoint's
            if let (0, Some(path)) = (done, &args.load) {
                return Err(bad(tr!(
                    "--load {path}: its loss is {loss}, not a number: the weights overflow f32, so training cannot start from them",
                    path = path.display(),
                    loss = s.loss
                )));
            }
            let kept = match &args.save {
                Some(path) => tr!("; {path} was not written", path = path.display()),
                None => String::new(),
            };
            return Err(CliError::Failed(tr!(
                "training diverged: the loss of step {step} is {loss}, not finite{kept}; try a smaller --lr",
                step = s.step,
                loss = s.loss,
                kept
            )));
        }
        let dt = t0.elapsed().as_secs_f64();
        (train_secs, window_secs) = (train_secs + dt, window_secs + dt);
        done += 1;
        last_loss = s.loss;
        loss_sum += s.loss as f64;
        loss_n += 1;
        if done % args.log_every == 0 || done == args.steps {
            val = trainer.val_loss().loss;
            // the steps the mean is over: those since the previous line
            let first = s.step + 1 - u64::from(loss_n);
            let line = LogLine {
                step: s.step,
                loss: (loss_sum / loss_n as f64) as f32,
                val_loss: val,
                tokens_per_s: loss_n as f64 * tokens_per_step / window_secs.max(1e-9),
            };
            (loss_sum, loss_n, window_secs) = (0.0, 0, 0.0);
            if args.json {
                quiet_pipe(writeln!(out, "{}", json(&line)?))?;
            } else if let Some(b) = &bar {
                b.set_message(tr!(
                    "loss {loss}  val {val}  {speed} tok/s",
                    loss = format!("{:.4}", line.loss),
                    val = format!("{:.4}", line.val_loss),
                    speed = format!("{:.0}", line.tokens_per_s)
                ));
            } else {
                quiet_pipe(writeln!(
                    out,
                    "{}",
                    tr!(
                        "step {step}  loss {loss} ({over})  val {val}  {speed} tok/s",
                        step = format!("{:>6}", line.step),
                        loss = format!("{:.4}", line.loss),
                        over = if first == line.step {
                            tr!("that step's batch").to_string()
                        } else {
                            tr!("mean of steps {first}-{last}", first, last = line.step)
                        },
                        val = format!("{:.4}", line.val_loss),
                        speed = format!("{:>8.0}", line.tokens_per_s)
                    )
                ))?;
            }
        }
        if let Some(b) = &bar {
            b.set_position(done);
        }
    }
    let interrupted = done < args.steps;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if interrupted || done == 0 {
        val = trainer.val_loss().loss;
    }
    if let (Some(path), Some(mut file)) = (&args.save, save) {
        let failed = |msg: String| CliError::Failed(format!("--save {}: {msg}", path.display()));
        let bytes = trainer.encode(path).map_err(|e| match e {
            ModelError::Checkpoint { msg, .. } => failed(msg),
            other => failed(other.to_string()),
        })?;
        file.write_all(&bytes)
            .and_then(|()| file.commit())
            .map_err(|e| failed(e.to_string()))?;
    }
    let end = DoneLine {
        done: true,
        steps: trainer.step,
        loss: last_loss,
        val_loss: val,
        tokens_per_s: (trainer.step - first_step) as f64 * tokens_per_step / train_secs.max(1e-9),
        seconds: started.elapsed().as_secs_f64(),
        interrupted,
    };
    if args.json {
        quiet_pipe(writeln!(out, "{}", json(&end)?))?;
    } else {
        let how = if interrupted {
            tr!("stopped (Ctrl-C)")
        } else {
            tr!("done")
        };
        quiet_pipe(writeln!(
            out,
            "{}",
            tr!(
                "{how} at step {step}: loss {loss} (the last step's batch), val loss {val}, {speed} tokens/s, {secs} s",
                how,
                step = end.steps,
                loss = format!("{:.4}", end.loss),
                val = format!("{:.4}", end.val_loss),
                speed = format!("{:.0}", end.tokens_per_s),
                secs = format!("{:.1}", end.seconds)
            )
        ))?;
        if let Some(path) = &args.save {
            quiet_pipe(writeln!(out, "{}", tr!("saved {path}", path = path.display())))?;
        }
    }
    quiet_pipe(out.flush())
}

/// One JSON line; NaN (no loss yet) becomes null.
fn json<T: Serialize>(v: &T) -> Result<String, CliError> {
    serde_json::to_string(v).map_err(|e| CliError::Other(e.into()))
}
