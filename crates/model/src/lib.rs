//! TinyGPT: a byte-level GPT small enough to train in seconds, whose attention computes what the
//! kernels the tracer shows compute.
//!
//! The model (the facts of the C++ teaching codebase this project follows): vocabulary 256
//! (bytes); learned `wte [V,C]` and `wpe [T,C]`; `L` pre-LN blocks `x += attention(LN(x))`,
//! `x += W_out·gelu(W_fc·LN(x))` with LayerNorm without scale or shift (ε 1e-5) and tanh-GELU;
//! final LN and an untied head `w_lm [C,V]`, `b_lm [V]`; mean cross-entropy over all positions.
//! Training, evaluation and sampling compute attention through [`attn_trace_core::untraced::dispatch`], as the
//! engine does: the baseline variant for one head, MHA for `H` heads, untraced, so on the
//! vectorised passes of [`attn_trace_core::untraced::fast`], which give the numbers of the traced loops of
//! [`attn_trace_core::kernels::attention_1h`] and [`attn_trace_core::kernels::attention_mha`] bit for bit
//! (`tests/it/kernels_untraced.rs`). [`TinyGpt::layer_attention_inputs`] replays a trained layer
//! on them traced. The linear layers run through sgemm ([`ops`], held to
//! [`attn_trace_core::kernels::linear`] by `tests/it/model_ops.rs`); a batch is split into [`gpt::SHARDS`]
//! slices that run on their own threads.
//!
//! # Using it from a UI
//!
//! ```no_run
//! use attn_trace_model::{Config, Dataset, SampleOptions, TinyGpt, Trainer};
//! use std::sync::atomic::AtomicBool;
//!
//! let config = Config { n_heads: 2, ..Config::default() };
//! let data = Dataset::builtin("reverse", config.seq_len)?;
//! let model = TinyGpt::new(config, 42)?;
//! let mut trainer = Trainer::new(model, data, 4, 3e-3, 42)?;
//! let stop = AtomicBool::new(false); // set it from another thread (Ctrl-C, a key) to stop
//! trainer.train(200, &stop, |t, stats| {
//!     // stats.step, stats.loss, stats.tokens_per_s; t.val_loss() now and then
//!     if stats.step % 50 == 0 {
//!         let _val = t.val_loss().loss;
//!     }
//! });
//! trainer.save("model.safetensors".as_ref())?; // atomic; Trainer::resume continues it exactly
//!
//! // text from the trained model
//! let out = trainer.model.sample(b"abc|", &SampleOptions { n_gen: 4, temp: 0.0, ..Default::default() })?;
//!
//! // replay layer 0's attention on a prompt, traced
//! let cap = trainer.model.layer_attention_inputs(b"hello|olleh", 0)?;
//! let run = attn_trace_core::engine::run(&cap.inputs, cap.variant, attn_trace_core::engine::Passes::BOTH, true);
//! # Ok::<(), attn_trace_model::ModelError>(())
//! ```
//!
//! - [`Trainer`] holds the model, AdamW state, the data and the step counter; [`Trainer::step`]
//!   returns [`StepStats`] `{ step, loss, tokens_per_s }`; [`Trainer::train`] checks an
//!   `AtomicBool` between steps; [`Trainer::val_loss`] evaluates the held-out split.
//! - [`eval_loss`] is the `eval` subcommand's measure: non-overlapping windows from byte 0.
//! - [`checkpoint::save`] / [`checkpoint::load`] (and [`TinyGpt::save`] / [`TinyGpt::load`] for
//!   weights alone) read and write safetensors (see there for the tensor names and metadata);
//!   [`Trainer::resume`] continues bit for bit.
//! - [`TinyGpt::layer_attention_inputs`] gives an [`engine::Inputs`](attn_trace_core::engine::Inputs) for
//!   one layer on a prompt, including `d_out`, the gradient of the prompt's next-byte loss at the
//!   block's output.

pub mod adamw;
pub mod checkpoint;
pub mod data;
pub mod decode;
pub mod gpt;
pub mod inspect;
pub mod ops;
pub mod origin;
pub mod sample;
pub mod spec;
pub mod trainer;

pub use adamw::AdamW;
pub use checkpoint::{Loaded, TrainState};
pub use data::{BUILTIN, Dataset};
pub use decode::KvCache;
pub use gpt::{Activations, Config, Linear, ParamLayout, TinyGpt, Workspace};
pub use inspect::AttentionCapture;
pub use origin::{Origin, Source};
pub use sample::SampleOptions;
pub use spec::{Setting, SpecError, TrainSpec};
pub use trainer::{EvalResult, StepStats, Trainer, eval_loss};

/// Why building, training, loading or sampling a model failed. Every variant is about input the
/// user gave (sizes, data, a checkpoint file, a prompt) and reads as one line.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A size or hyper-parameter out of range; `field` is the config field's name.
    #[error("{field}: {msg}")]
    Config { field: &'static str, msg: String },
    /// Training or evaluation data that cannot be used.
    #[error("{0}")]
    Data(String),
    /// A checkpoint that cannot be read or written.
    #[error("{}", attn_trace_i18n::tr!("checkpoint {path}: {msg}", path = .path, msg = .msg))]
    Checkpoint { path: String, msg: String },
    /// A prompt, a layer index or a sampling option out of range.
    #[error("{0}")]
    Input(String),
}

/// `n` zeros, written now. `vec![0.0; n]` asks the allocator for zeroed memory, which the kernel
/// hands out as untouched pages, mapped one fault at a time when first used. For a buffer read
/// before it is written (AdamW's moments) that is worse: the read maps a shared page of zeros,
/// and the first write then copies it and makes both cores drop the old mapping. Training's
/// buffers that every step uses whole are allocated with this, so the first step pays none of
/// it; buffers some variants never touch are left to the allocator.
pub(crate) fn zeros(n: usize) -> Vec<f32> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, 0.0);
    v
}
