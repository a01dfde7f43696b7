//! Checkpoints as safetensors files, loadable from PyTorch (`safetensors.torch.load_file`).
//!
//! Tensors (f32, little-endian): the model's parameters under the names of [`ParamLayout`], and, for
//! resuming training, AdamW's moments as `adamw.m.<name>` and `adamw.v.<name>`. Metadata (all
//! plain strings): `format`, `vocab_size, seq_len, d_model, n_layers, n_heads, n_kv_heads, rope,
//! step`, `checksum`, and when optimizer state is present `lr, beta1, beta2, eps, weight_decay,
//! adamw_t, data_seed, data_rng_pos, dataset`. `n_kv_heads` (the key/value heads, `n_heads` for
//! multi-head attention) and `rope` (`none`, `interleaved` or `half`) are written by every save;
//! a checkpoint without them (written before grouped heads and rotary positions existed) loads
//! as multi-head attention without rotation. `window` and `sinks` are written by a model with
//! sliding-window attention only; without them a checkpoint attends over its whole context.
//!
//! What a checkpoint promises (docs/tinygpt.md says the same for users):
//! - **Integrity.** `checksum` is FNV-1a (64-bit) over every other metadata entry and every
//!   tensor's name, shape and bytes; it is required, so a flipped bit anywhere in the metadata
//!   or the tensors is caught. It guards against damage, not against someone who rewrites the
//!   file on purpose. Files of the first format version (`format = attn-trace-tinygpt`) are
//!   still read; their checksum covers the tensor bytes only.
//! - **Nothing unknown.** A metadata key or a tensor that a checkpoint of this configuration does
//!   not have is an error naming it.
//! - **Sane values.** Weights and moments are finite, second moments are not negative, and the
//!   optimizer's settings are in range (`0 ≤ β < 1`, `ε > 0`, a positive learning rate,
//!   `adamw_t ≤ step`). Saving refuses what loading would refuse, so a run that diverged never
//!   overwrites a good checkpoint. (Resuming also holds the learning rate to the range of
//!   [`TrainSpec`](super::TrainSpec), unless a new one is given.)
//!
//! Saving writes a temporary file in the target's directory and renames it over the target, so
//! an interrupted save leaves the previous checkpoint intact. Loading reads the 8-byte header
//! length, checks it against the file's size, reads only the header, and checks every tensor's
//! name, dtype and shape against the configuration in the metadata before reading the tensors:
//! the memory a checkpoint can make us use is bounded by its own size.
//!
//! Saving is `write.rs`, loading `read.rs` with the header's checks in `header.rs`; both check
//! the values with `checks.rs` and sum the file with `checksum.rs`. This file holds the format's
//! constants and keys and the types a load returns.

mod checks;
mod checksum;
mod header;
mod read;
mod write;

pub use read::{load, parse};
pub use write::{encode, save};

use crate::gpt::{Config, ParamLayout, TinyGpt};
use crate::{AdamW, ModelError};
use safetensors::tensor::TensorInfo;
use std::collections::HashMap;
use std::path::Path;

/// The `format` metadata value of the checkpoints this version writes.
pub const FORMAT: &str = "attn-trace-tinygpt/2";

/// The first format version, still read: its checksum covers the tensor bytes only.
pub const FORMAT_V1: &str = "attn-trace-tinygpt";

/// Files larger than this are refused before being read (our largest configs are far smaller).
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// Headers larger than this are refused before being read: the largest configuration's header
/// (64 layers with optimizer state) is under 200 KiB.
pub const MAX_HEADER_BYTES: u64 = 1 << 20;

/// The metadata keys of every checkpoint, and those of the optimizer state.
const MODEL_KEYS: [&str; 8] = [
    "format",
    "vocab_size",
    "seq_len",
    "d_model",
    "n_layers",
    "n_heads",
    "step",
    "checksum",
];
/// Keys every save writes but older checkpoints lack: their absence means multi-head attention
/// without rotary positions.
const ATTENTION_KEYS: [&str; 4] = ["n_kv_heads", "rope", "window", "sinks"];
const STATE_KEYS: [&str; 9] = [
    "lr",
    "beta1",
    "beta2",
    "eps",
    "weight_decay",
    "adamw_t",
    "data_seed",
    "data_rng_pos",
    "dataset",
];

/// What resuming training needs besides the weights.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainState {
    pub opt: AdamW,
    /// Seed and position (in 32-bit words) of the generator that draws training windows.
    pub data_seed: u64,
    pub data_rng_pos: u128,
    /// Name of the data trained on (informational).
    pub dataset: String,
}

/// A loaded checkpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    pub model: TinyGpt,
    pub step: u64,
    /// Present when the file holds the optimizer state.
    pub state: Option<TrainState>,
}

impl TinyGpt {
    /// Saves the weights alone (no optimizer state: enough for `eval`, `sample` and tracing),
    /// atomically, recording `step` in the metadata.
    pub fn save(&self, path: &Path, step: u64) -> Result<(), ModelError> {
        save(path, self, step, None)
    }

    /// The model of a checkpoint, ignoring any optimizer state in it.
    pub fn load(path: &Path) -> Result<TinyGpt, ModelError> {
        Ok(load(path)?.model)
    }
}

/// What the header promises, checked: the configuration, and where each expected tensor's bytes
/// are.
struct CheckedHeader {
    config: Config,
    layout: ParamLayout,
    step: u64,
    /// A file of the first format version.
    v1: bool,
    meta: HashMap<String, String>,
    /// Every tensor of the file, by name.
    infos: HashMap<String, TensorInfo>,
    has_state: bool,
}
