//! Scenario files: the sizes, options and values of one attention problem, as a person writes
//! them in TOML. See `docs/scenarios.md` for the format.
//!
//! Parsing is strict (unknown keys, wrong types and impossible sizes are errors that name the
//! file, field, line and column), filling is deterministic (tensors the file does not give are
//! drawn from `[init]`, one random stream per tensor), and the size of the trace is checked
//! against a memory budget before anything is allocated.

mod error;
mod export;
mod fill;
pub mod lesson;
mod parse;
mod reader;
mod sections;
mod validate;
mod write;

pub use error::{ScenarioError, line_column};
pub use parse::MAX_SIZE;
pub use sections::MAX_LAYERS;

use crate::engine::{self, Dropout, Inputs, Passes, Plan, Run, Start, StartKind, registry};
use crate::files::input::ReadError;
use crate::kernels::attention_flash::Tiles;
use crate::kernels::attention_mistakes::Mistakes;
use crate::kernels::attention_mla::Latent;
use crate::kernels::decode::CacheSpec;
use crate::kernels::rope::Rope;
use crate::kernels::{Mask, Variant};
use crate::tensor::{Shape, numel};
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
    /// Only the tensors the file gives, by buffer (one of [`registry::GIVEN`]), flat row-major,
    /// already checked against their shapes ([`registry::given_shape`]).
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

/// Most memory the traces of one scenario may take (see [`budget_bytes`]).
pub const BUDGET_BYTES: u64 = 4 << 30;

/// The memory the traces of one scenario may take in this process: [`BUDGET_BYTES`], or half
/// its address-space limit (`ulimit -v`) when that is lower, so that a trace the process could
/// not hold is refused in one line before it starts, not aborted half-way.
pub fn budget_bytes() -> u64 {
    crate::limits::memory_budget(BUDGET_BYTES)
}

/// What one recorded event costs with its share of loop frames and the cell index. Measured:
/// 35 bytes at B=2, T=16, C=16, H=4 and 39 on the tiny walkthrough, where the per-cell tables
/// weigh more (a test keeps this figure above the real one).
pub const BYTES_PER_EVENT: u64 = 40;

const GIB: f64 = (1u64 << 30) as f64;

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

/// Why the traces of `plan` would not fit in [`BUDGET_BYTES`], or `None` when they fit. With
/// `mistakes`, every variant also runs mistaken (forward only, but for a backward mistake). The
/// counts are exact and cannot wrap: sizes whose events do not fit in a `u64` are "more than"
/// it, and so is the byte size they print.
pub fn budget_error(plan: Plan, variants: &[Variant], passes: Passes, mistakes: Mistakes) -> Option<String> {
    let shrink = tr!("use a smaller T (events grow with T²·C), C (and C²·T) or B, or fewer variants or passes");
    let mistaken = Plan {
        mistakes,
        ..plan.clone()
    };
    let events: engine::Count = variants
        .iter()
        .map(|&v| {
            let wrong = if mistakes.is_empty() {
                engine::Count::ZERO
            } else {
                engine::estimate_events(&mistaken, v, passes)
            };
            engine::estimate_events(&plan, v, passes) + wrong
        })
        .sum();
    let bytes = events * BYTES_PER_EVENT;
    let budget = budget_bytes();
    if !bytes.exceeds(budget) {
        return None;
    }
    Some(match bytes.get() {
        Some(b) => tr!(
            "the trace would record {events} events (about {gib} GiB at {per_event} bytes per event), over the {budget} GiB budget; {shrink}",
            events,
            gib = format!("{:.1}", b as f64 / GIB),
            per_event = BYTES_PER_EVENT,
            budget = crate::limits::gib_text(budget),
            shrink
        ),
        None => tr!(
            "the trace would record {events} events, far beyond the {budget} GiB budget; {shrink}",
            events,
            budget = crate::limits::gib_text(budget),
            shrink
        ),
    })
}

/// The shipped scenarios, embedded, by file stem.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "mha_walkthrough",
        include_str!("../../../../scenarios/mha_walkthrough.toml"),
    ),
    (
        "indexing_trace",
        include_str!("../../../../scenarios/indexing_trace.toml"),
    ),
    (
        "numeric_baseline",
        include_str!("../../../../scenarios/numeric_baseline.toml"),
    ),
    ("numeric_mha", include_str!("../../../../scenarios/numeric_mha.toml")),
    (
        "masked_element",
        include_str!("../../../../scenarios/masked_element.toml"),
    ),
    ("batch_b2", include_str!("../../../../scenarios/batch_b2.toml")),
    ("heads_h4", include_str!("../../../../scenarios/heads_h4.toml")),
    ("why_sqrt_d", include_str!("../../../../scenarios/why_sqrt_d.toml")),
    (
        "backward_simple",
        include_str!("../../../../scenarios/backward_simple.toml"),
    ),
    ("separate_qkv", include_str!("../../../../scenarios/separate_qkv.toml")),
    (
        "cross_attention",
        include_str!("../../../../scenarios/cross_attention.toml"),
    ),
    ("dropout", include_str!("../../../../scenarios/dropout.toml")),
    ("flash", include_str!("../../../../scenarios/flash.toml")),
    ("gqa", include_str!("../../../../scenarios/gqa.toml")),
    ("mqa", include_str!("../../../../scenarios/mqa.toml")),
    ("rope", include_str!("../../../../scenarios/rope.toml")),
    (
        "kv_cache_decode",
        include_str!("../../../../scenarios/kv_cache_decode.toml"),
    ),
    (
        "sliding_window",
        include_str!("../../../../scenarios/sliding_window.toml"),
    ),
    ("sinks", include_str!("../../../../scenarios/sinks.toml")),
    (
        "window_decode",
        include_str!("../../../../scenarios/window_decode.toml"),
    ),
    ("paged_decode", include_str!("../../../../scenarios/paged_decode.toml")),
    ("split_kv", include_str!("../../../../scenarios/split_kv.toml")),
    ("sink_logit", include_str!("../../../../scenarios/sink_logit.toml")),
    ("mla", include_str!("../../../../scenarios/mla.toml")),
    ("mla_decode", include_str!("../../../../scenarios/mla_decode.toml")),
];

/// The mistakes gallery: one scenario per classic mistake, by file stem under `scenarios/mistakes/`.
pub const MISTAKES: &[(&str, &str)] = &[
    (
        "no_input_projection",
        include_str!("../../../../scenarios/mistakes/no_input_projection.toml"),
    ),
    (
        "scale_by_seq_len",
        include_str!("../../../../scenarios/mistakes/scale_by_seq_len.toml"),
    ),
    (
        "mask_by_multiply",
        include_str!("../../../../scenarios/mistakes/mask_by_multiply.toml"),
    ),
    (
        "no_output_projection",
        include_str!("../../../../scenarios/mistakes/no_output_projection.toml"),
    ),
    (
        "dropout_not_applied",
        include_str!("../../../../scenarios/mistakes/dropout_not_applied.toml"),
    ),
    (
        "softmax_over_two_dims",
        include_str!("../../../../scenarios/mistakes/softmax_over_two_dims.toml"),
    ),
    (
        "overwrite_kv_grad",
        include_str!("../../../../scenarios/mistakes/overwrite_kv_grad.toml"),
    ),
];

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

    /// The MHA walkthrough (B=1, T=3, C=4, H=2), built into the binary.
    pub fn builtin() -> Scenario {
        #[allow(clippy::expect_used, reason = "embedded at build time and parsed by a unit test")]
        Self::shipped("mha_walkthrough").expect("the built-in scenario is valid (tested)")
    }

    /// A shipped scenario by file stem, e.g. `"numeric_mha"`.
    pub fn shipped(name: &str) -> Option<Scenario> {
        let (_, text) = SHIPPED.iter().find(|(n, _)| *n == name)?;
        Self::parse(text, &format!("<built-in {name}>")).ok()
    }

    /// A scenario of the mistakes gallery by file stem, e.g. `"mask_by_multiply"`.
    pub fn mistake(name: &str) -> Option<Scenario> {
        let (_, text) = MISTAKES.iter().find(|(n, _)| *n == name)?;
        Self::parse(text, &format!("<built-in mistakes/{name}>")).ok()
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

    /// A given tensor, or its deterministic fill (nothing for a bias of a model without them).
    fn tensor(&self, buf: Buf) -> Vec<f32> {
        if !self.bias && matches!(buf, Buf::BQkv | Buf::BQ | Buf::BK | Buf::BV | Buf::BProj) {
            return Vec::new();
        }
        match self.values.get(&buf) {
            Some(data) => data.clone(),
            None => self
                .init
                .fill(buf, numel(&registry::given_shape(buf, self.shape, self.latent))),
        }
    }

    /// The engine's inputs for the correct run: the given tensors, and the rest filled from
    /// `[init]`. [`Scenario::mistaken_inputs`] gives the mistaken run's.
    pub fn inputs(&self) -> Inputs {
        let t = |buf: Buf| self.tensor(buf);
        let start = match (self.from_x(), self.qkv) {
            (true, _) if let Some(latent) = self.latent => Start::Latent {
                latent,
                x: t(Buf::X),
                w_q: t(Buf::WQ),
                w_dkv: t(Buf::WDkv),
                w_kr: t(Buf::WKr),
                w_uk: t(Buf::WUk),
                w_uv: t(Buf::WUv),
            },
            (false, _) => Start::Qkv {
                q: t(Buf::Q),
                k: t(Buf::K),
                v: t(Buf::V),
            },
            (true, Qkv::Fused) => Start::X {
                x: t(Buf::X),
                w_qkv: t(Buf::WQkv),
                b_qkv: t(Buf::BQkv),
            },
            (true, Qkv::Separate) => Start::Separate {
                x: t(Buf::X),
                memory: self.cross.then(|| t(Buf::Memory)),
                w_q: t(Buf::WQ),
                b_q: t(Buf::BQ),
                w_k: t(Buf::WK),
                b_k: t(Buf::BK),
                w_v: t(Buf::WV),
                b_v: t(Buf::BV),
            },
        };
        let plan = self.plan();
        let proj = plan.proj.then(|| (t(Buf::WProj), t(Buf::BProj)));
        Inputs {
            shape: self.shape,
            mask: self.mask.clone(),
            start,
            proj,
            d_out: t(Buf::DOut),
            dropout: self.dropout.filter(|_| self.mode == Mode::Train),
            mistakes: Mistakes::NONE,
            rope: self.rope,
            decode: self.decode,
            cache: self.cache.clone(),
            tiles: plan.tiles,
            sink: self.sink_logit.then(|| t(Buf::Sink)),
            bias: self.bias,
        }
    }

    /// The inputs of the mistaken run: the same values with `[run].mistakes` switched on.
    pub fn mistaken_inputs(&self) -> Option<Inputs> {
        (!self.mistakes.is_empty()).then(|| self.inputs().with_mistakes(self.mistakes))
    }

    /// The same scenario on other numbers: every tensor drawn afresh from a seed derived from
    /// `[init].seed` and `k`, the given ones too (so data chosen to make a wrong kernel look
    /// right is gone, while what is given still decides where the run starts), and a new
    /// dropout mask. Shapes, mask, variants and passes stay.
    /// `k = 0` is the scenario itself. `grade --seeds` runs the learner's kernel on these.
    ///
    /// Every structural choice of the scenario holds on these numbers: its sizes, mask and
    /// options, a model without biases (`[run] bias = false`), and a tensor it gives as all
    /// zeros, which stays zero (a bias the model does not have is structure, not data).
    #[must_use]
    pub fn reseeded(&self, k: u64) -> Scenario {
        if k == 0 {
            return self.clone();
        }
        // splitmix64's increment: seeds 1, 2, 3 land far apart from each other and from the
        // scenario's own
        self.redrawn(k.wrapping_mul(0x9e37_79b9_7f4a_7c15), k)
    }

    /// Layer `l` of the model the scenario stands for when it has `[shape] L` layers: layer 0
    /// is the scenario itself; a later layer is the same attention on numbers of its own, drawn
    /// as [`Scenario::reseeded`] draws them (every structural choice kept) from another seed.
    #[must_use]
    pub fn layer(&self, l: usize) -> Scenario {
        if l == 0 {
            return self.clone();
        }
        // another odd multiplier than reseeded's: layer 1 is not random input 1
        let l = l as u64;
        self.redrawn(l.wrapping_mul(0xd1b5_4a32_d192_ed03), l.wrapping_mul(0x100_0001))
    }

    /// Every tensor drawn afresh from `[init].seed ^ mix`, the dropout mask from its seed plus
    /// `dropout_step`; what is structure stays.
    fn redrawn(&self, mix: u64, dropout_step: u64) -> Scenario {
        let mut s = self.clone();
        let seed = self.init.seed ^ mix;
        let dist = match self.init.dist {
            d @ (Dist::Normal { .. } | Dist::Uniform { .. }) => d,
            // constant or counting fills would hide the very mistakes random inputs catch
            Dist::Zeros | Dist::Ones | Dist::Arange { .. } => Dist::Normal { std: DEFAULT_STD },
        };
        s.init = Init { seed, dist };
        // a given tensor stays given (it decides where the run starts), with drawn values; one
        // given as all zeros stays zero
        for (&buf, values) in &mut s.values {
            if values.iter().all(|&x| x == 0.0) {
                continue;
            }
            *values = s.init.fill(buf, values.len());
        }
        if let Some(d) = &mut s.dropout {
            d.seed = d.seed.wrapping_add(dropout_step);
        }
        s
    }

    /// Runs one variant with the scenario's passes (the correct run).
    pub fn run(&self, variant: Variant, traced: bool) -> Run {
        engine::run(&self.inputs(), variant, self.passes, traced)
    }

    /// Runs every variant of the scenario, in its order; with mistakes, each correct run is
    /// followed by its mistaken twin (forward only, but for a backward mistake).
    pub fn runs(&self, traced: bool) -> Vec<Run> {
        let inputs = self.inputs();
        let mistaken = self.mistaken_inputs();
        let mut runs = Vec::new();
        for &v in &self.variants {
            runs.push(engine::run(&inputs, v, self.passes, traced));
            if let Some(wrong) = &mistaken {
                runs.push(engine::run(wrong, v, self.passes, traced));
            }
        }
        runs
    }

    /// TOML text that [`Scenario::parse`] reads back to an equal scenario (except `source`).
    pub fn to_toml(&self) -> String {
        write::to_toml(self)
    }
}
