//! `attn-trace eval`: a checkpoint's mean next-byte loss over a file's non-overlapping windows.

use super::{CliError, quiet_pipe, whole};
use attn_trace_i18n::tr;
use attn_trace_model::eval_loss;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Mean next-token cross-entropy of a checkpoint on a file (or a built-in dataset's validation
/// split), over the non-overlapping windows of seq tokens starting at bytes 0, seq, 2·seq, …
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Each window's targets are the next seq bytes, so a file of N bytes gives (N − 1) / seq windows.
Prints {\"loss\": L, \"tokens\": N} with --json.

Examples:
  attn-trace eval --checkpoint notes.safetensors --data notes.txt
  attn-trace eval --checkpoint copy.safetensors --dataset copy --json")]
pub(crate) struct Args {
    /// Checkpoint written by `attn-trace train --save`.
    #[arg(long, value_name = "PATH")]
    pub checkpoint: PathBuf,
    /// File of bytes to evaluate on.
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "dataset",
        conflicts_with = "dataset"
    )]
    pub data: Option<PathBuf>,
    /// A built-in dataset (kernels, copy, reverse, sort): its held-out validation split.
    #[arg(long, value_name = "NAME")]
    pub dataset: Option<String>,
    /// Windows per batch.
    #[arg(long, default_value_t = 16, value_name = "B", allow_negative_numbers = true, value_parser = whole::<usize>)]
    pub batch: usize,
    /// Print {"loss", "tokens"} as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Line {
    loss: f32,
    tokens: usize,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    if !(1..=4096).contains(&args.batch) {
        return Err(CliError::Input(tr!(
            "--batch must be 1..=4096, got {n}",
            n = args.batch
        )));
    }
    let loaded = super::train::load_checkpoint("--checkpoint", &args.checkpoint)?;
    let model = loaded.model;
    let seq = model.config.seq_len;
    let (what, bytes) = match &args.data {
        Some(path) => {
            let bytes = attn_trace_model::data::read_file(path).map_err(|e| CliError::Input(format!("--data {e}")))?;
            (path.display().to_string(), bytes)
        }
        None => {
            let ds = super::train::dataset(None, args.dataset.as_deref(), seq)?;
            (tr!("{name} (validation split)", name = ds.name), ds.val)
        }
    };
    let r = eval_loss(&model, &bytes, args.batch).map_err(|e| CliError::Input(format!("{what}: {e}")))?;
    if !r.loss.is_finite() {
        // finite weights can still overflow f32 on the way to the logits: not a result
        return Err(CliError::Input(tr!(
            "--checkpoint {path}: its loss on {what} is {loss}, not a number: the weights overflow f32, so this checkpoint cannot be evaluated",
            path = args.checkpoint.display(),
            what,
            loss = r.loss
        )));
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let line = serde_json::to_string(&Line {
            loss: r.loss,
            tokens: r.tokens,
        })
        .map_err(|e| CliError::Other(e.into()))?;
        quiet_pipe(writeln!(out, "{line}"))
    } else {
        quiet_pipe(writeln!(
            out,
            "{}",
            tr!(
                "loss {loss} nats/byte (perplexity {perplexity}) over {tokens} tokens: {windows} windows of {seq} from {what}",
                loss = format!("{:.4}", r.loss),
                perplexity = format!("{:.2}", r.loss.exp()),
                tokens = r.tokens,
                windows = r.windows,
                seq,
                what
            )
        ))
    }
}
