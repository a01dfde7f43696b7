//! Scenario files: the sizes, options and values of one attention problem, as a person writes
//! them in TOML. See `docs/scenarios.md` for the format.
//!
//! Parsing is strict (unknown keys, wrong types and impossible sizes are errors that name the
//! file, field, line and column), filling is deterministic (tensors the file does not give are
//! drawn from `[init]`, one random stream per tensor), and the size of the trace is checked
//! against a memory budget before anything is allocated.
//!
//! This file holds the types of a scenario and its entry points (`load`, `parse`, `plan`);
//! reading is `parse.rs` with `reader.rs`, `sections/` and `validate.rs`, the budget
//! `budget.rs`, the built-in scenarios `shipped.rs`, the engine's inputs and runs `inputs.rs`
//! (with `fill.rs`), and writing `write.rs` and `export.rs`.

mod budget;
mod error;
mod export;
mod fill;
mod inputs;
pub mod lesson;
mod parse;
mod reader;
mod sections;
mod shipped;
mod validate;
mod write;

pub(crate) use budget::budget_error;
pub use budget::{BUDGET_BYTES, BYTES_PER_EVENT, budget_bytes};
pub use error::{ScenarioError, line_column};
pub use parse::MAX_SIZE;
pub use sections::MAX_LAYERS;
pub use shipped::{MISTAKES, SHIPPED};

use crate::engine::{self, Dropout, Passes, Plan, StartKind};
use crate::files::input::ReadError;
use crate::kernels::attention_flash::Tiles;
use crate::kernels::attention_mistakes::Mistakes;
use crate::kernels::attention_mla::Latent;
use crate::kernels::decode::CacheSpec;
use crate::kernels::rope::Rope;
use crate::kernels::{Mask, Variant};
use crate::tensor::Shape;
use crate::trace::{Buf, Pass};
use attn_trace_i18n::tr;
use std::collections::BTreeMap;
use std::path::Path;

/// One attention problem: what to run, on which values, and where to look first.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The file path as given, or `<built-in NAME>`.
    pub source: String,
    pub title: String,
    pub about: Option<String>,
    /// Sizes; `shape.s` is the number of queries (`[shape].S`, equal to `T` unless `cross`).
    pub shape: Shape,
    /// Cross-attention: `[shape].S` was given; queries come from `x [B,S,C]`, keys and values
    /// from `memory [B,T,C]`.
    pub cross: bool,
    /// Which kernels run, in the file's order (default: both).
    pub variants: Vec<Variant>,
    /// Which passes are recorded (default: both).
    pub passes: Passes,
    pub mask: Mask,
    /// How q, k and v are projected from x (default: fused).
    pub qkv: Qkv,
    /// Attention dropout probability and seed (`[run].dropout`, `[run].dropout_seed`).
    pub dropout: Option<Dropout>,
    /// Train applies dropout, eval does not (default: train).
    pub mode: Mode,
    /// Mistakes switched on: each variant then also runs mistaken, forward only (both passes for a
    /// backward mistake).
    pub mistakes: Mistakes,
    /// Rotary position embeddings on q and k (`[run].rope`, `[run].rope_base`).
    pub rope: Option<Rope>,
    /// Generation token by token from a key/value cache (`[run].decode`), forward only.
    pub decode: bool,
    /// A decode run's paged cache (`[paged]`) and split steps (`[run].split_kv`).
    pub cache: CacheSpec,
    /// gpt-oss's learned sink logit per head in every softmax row (`[run].sink_logit`), its
    /// values `sink [H]` given in `[values]` or filled from `[init]`.
    pub sink_logit: bool,
    /// Multi-head latent attention's sizes (`[shape] kv_rank = R, rope_dim = DR`).
    pub latent: Option<Latent>,
    /// The flash variant's tile sizes (`[flash]`, default `br = 2, bc = 2`).
    pub tiles: Tiles,
    /// The linear layers add biases (`[run] bias`, default true; `false`: none at all, as in
    /// LLaMA-family models).
    pub bias: bool,
    /// Layers (`[shape] L`, default 1): `grade` and `inputs` run the attention as `L` layers
    /// of a model, each on its own values ([`Scenario::layer`]), so a kernel that keeps
    /// per-layer buffers side by side is graded on its layer offsets. The other commands show
    /// layer 0, the scenario's own values.
    pub layers: usize,
    pub init: Init,
    /// Only the tensors the file gives, by buffer (one of
    /// [`registry::GIVEN`](crate::engine::registry::GIVEN)), flat row-major, already checked
    /// against their shapes ([`registry::given_shape`](crate::engine::registry::given_shape)).
    pub values: BTreeMap<Buf, Vec<f32>>,
    /// The element the TUI opens on.
    pub focus: Option<Focus>,
}

/// How q, k and v are made from x.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Qkv {
    /// One fused projection `w_qkv [C,3C]`, then the split at channels 0, C, 2C.
    #[default]
    Fused,
    /// Three projections `w_q, w_k, w_v [C,C]` with biases, like three linear layers.
    Separate,
}

impl Qkv {
    pub const ALL: [Qkv; 2] = [Qkv::Fused, Qkv::Separate];

    pub const fn name(self) -> &'static str {
        match self {
            Qkv::Fused => "fused",
            Qkv::Separate => "separate",
        }
    }
}

/// Training or evaluation: dropout only acts in training.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Train,
    Eval,
}

impl Mode {
    pub const ALL: [Mode; 2] = [Mode::Train, Mode::Eval];

    pub const fn name(self) -> &'static str {
        match self {
            Mode::Train => "train",
            Mode::Eval => "eval",
        }
    }
}

/// How the tensors a scenario does not give are filled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Init {
    pub seed: u64,
    pub dist: Dist,
}

/// The standard deviation of filled values when a scenario does not say: the built-in
/// walkthrough's. With 1.0 a projection of `C` inputs gives `q` and `k` of spread about `√C`, and
/// `q·k/√D` is then large enough that softmax rows come out nearly one-hot from T ≈ 5 on
/// (`[0.0029, 0.9971, 0, 0, 0]`), which hides what attention does.
pub const DEFAULT_STD: f32 = 0.5;

impl Default for Init {
    fn default() -> Self {
        Init {
            seed: 0,
            dist: Dist::Normal { std: DEFAULT_STD },
        }
    }
}

/// The distribution of filled values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Normal with mean 0 and standard deviation `std`.
    Normal {
        std: f32,
    },
    /// Uniform on `[-scale, scale]`.
    Uniform {
        scale: f32,
    },
    Zeros,
    Ones,
    /// `0, 1, 2, …` times `scale`, in row-major order: every value tells you its own offset.
    Arange {
        scale: f32,
    },
}

impl Dist {
    pub const fn name(self) -> &'static str {
        match self {
            Dist::Normal { .. } => "normal",
            Dist::Uniform { .. } => "uniform",
            Dist::Zeros => "zeros",
            Dist::Ones => "ones",
            Dist::Arange { .. } => "arange",
        }
    }
}

/// The element of the scores a learner starts from: batch `b`, head `h`, query `i`, key `j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Focus {
    pub variant: Option<Variant>,
    pub pass: Option<Pass>,
    pub b: usize,
    pub h: usize,
    pub i: usize,
    pub j: usize,
}

/// The options of `[run]` that decide what the engine does, besides the variants and passes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Options {
    pub cross: bool,
    pub qkv: Qkv,
    pub dropout: Option<Dropout>,
    pub mode: Mode,
    pub mistakes: Mistakes,
    pub rope: Option<Rope>,
    pub decode: bool,
    pub cache: CacheSpec,
    pub sink_logit: bool,
    /// Multi-head latent attention's sizes (`[shape] kv_rank, rope_dim`).
    pub latent: Option<Latent>,
    pub tiles: Tiles,
    pub bias: bool,
}

/// What the engine will be asked to do for a scenario with these values (the correct run).
fn plan_of(shape: Shape, mask: Mask, values: &BTreeMap<Buf, Vec<f32>>, o: &Options) -> Plan {
    let from_x = !values.contains_key(&Buf::Q);
    Plan {
        shape,
        mask,
        start: match (from_x, o.qkv, o.latent) {
            (true, _, Some(latent)) => StartKind::Latent(latent),
            (false, _, _) => StartKind::Qkv,
            (true, Qkv::Fused, None) => StartKind::Fused,
            (true, Qkv::Separate, None) => StartKind::Separate { cross: o.cross },
        },
        dropout: o.dropout.is_some() && o.mode == Mode::Train,
        mistakes: Mistakes::NONE,
        // from x the projection is always there (filled if not given); from q, k, v only if given
        proj: from_x || values.contains_key(&Buf::WProj),
        rope: o.rope,
        decode: o.decode,
        cache: o.cache.clone(),
        tiles: o.tiles.fit(shape),
        sink: o.sink_logit,
        bias: o.bias,
    }
}

/// Largest scenario file read: about 100,000 numbers, more than any scenario within the trace
/// budget gives. What the parser can afford: measured with `/usr/bin/time -v`, the TOML parser
/// peaks at up to about 570 bytes of memory per byte of text (dotted keys inside inline tables,
/// each part a table; a flat list of numbers takes about 75), so a file at this cap costs at most
/// about 600 MB and 1.5 s before its first error. The cap was 64 MiB: some 35 GB.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

impl Scenario {
    /// Reads and validates a scenario file. Every failure (missing file, a directory, a FIFO or
    /// a device, larger than [`MAX_FILE_BYTES`], not UTF-8, empty, bad TOML, bad values) is a
    /// [`ScenarioError`] naming the file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let source = path.display().to_string();
        // a regular file of a sane size, opened without blocking: a FIFO or /dev/zero is refused
        let bytes =
            crate::files::input::read(path, MAX_FILE_BYTES, attn_trace_i18n::msg!("a scenario file")).map_err(|e| {
                ScenarioError::file(
                    &source,
                    match e {
                        ReadError::NotRegular("is a directory") => {
                            tr!("is a directory; expected a scenario file such as scenarios/mha_walkthrough.toml")
                                .to_string()
                        }
                        e => e.to_string(),
                    },
                )
            })?;
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let bytes = e.as_bytes();
                let good = String::from_utf8_lossy(&bytes[..valid]);
                let (line, column) = line_column(&good, good.len());
                return Err(ScenarioError {
                    line: Some(line),
                    column: Some(column),
                    ..ScenarioError::file(
                        &source,
                        tr!(
                            "not UTF-8 text: byte {byte} cannot start a character; save the file as UTF-8",
                            byte = format!("0x{:02x}", bytes[valid])
                        ),
                    )
                });
            }
        };
        Self::parse(&text, &source)
    }

    /// Parses and validates scenario text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
        // a byte-order mark is not part of the TOML; line and column stay those the user sees
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        parse::parse(text, source)
    }

    /// Starts at `x` (with the input projection), unless the file gives q, k and v.
    pub fn from_x(&self) -> bool {
        !self.values.contains_key(&Buf::Q)
    }

    pub(crate) fn options(&self) -> Options {
        Options {
            cross: self.cross,
            qkv: self.qkv,
            dropout: self.dropout,
            mode: self.mode,
            mistakes: self.mistakes,
            rope: self.rope,
            decode: self.decode,
            cache: self.cache.clone(),
            sink_logit: self.sink_logit,
            latent: self.latent,
            tiles: self.tiles,
            bias: self.bias,
        }
    }

    /// What the engine will run (the correct run), without the data.
    pub fn plan(&self) -> Plan {
        plan_of(self.shape, self.mask.clone(), &self.values, &self.options())
    }

    /// Events a traced run of `variant` will record.
    pub fn estimated_events(&self, variant: Variant) -> engine::Count {
        engine::estimate_events(&self.plan(), variant, self.passes)
    }

    /// TOML text that [`Scenario::parse`] reads back to an equal scenario (except `source`).
    pub fn to_toml(&self) -> String {
        write::to_toml(self)
    }
}
