//! The one check of a training run's settings, shared by `attn-trace train`, the TUI's train
//! form and [`Trainer`](super::Trainer): the same ranges and the same messages wherever a run is
//! configured, so the command line refuses exactly what the form refuses.

use super::gpt::{
    Attention, Config, MAX_DMODEL, MAX_LAYERS, MAX_SEQ, MEMORY_BUDGET_BYTES, SlidingWindow, training_bytes,
};
use attn_trace_core::kernels::rope::Pairs;
use attn_trace_i18n::tr;

/// Largest batch accepted.
pub const MAX_BATCH: usize = 4096;
/// Most optimizer steps one run takes.
pub const MAX_STEPS: u64 = 10_000_000;
/// Largest learning rate accepted: AdamW moves each weight by about `lr` per step, so more
/// than 1 only diverges.
pub const MAX_LR: f32 = 1.0;

/// A setting of a training run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    SeqLen,
    DModel,
    Layers,
    Heads,
    KvHeads,
    Rope,
    Window,
    Sinks,
    Attention,
    Batch,
    Steps,
    Lr,
}

impl Setting {
    /// The name in the model's configuration and in checkpoints (`seq_len`, `d_model`, …).
    pub fn name(self) -> &'static str {
        match self {
            Setting::SeqLen => "seq_len",
            Setting::DModel => "d_model",
            Setting::Layers => "n_layers",
            Setting::Heads => "n_heads",
            Setting::KvHeads => "n_kv_heads",
            Setting::Rope => "rope",
            Setting::Window => "window",
            Setting::Sinks => "sinks",
            Setting::Attention => "attention",
            Setting::Batch => "batch",
            Setting::Steps => "steps",
            Setting::Lr => "lr",
        }
    }
}

/// What is wrong with one setting; `msg` reads after the setting's name
/// (`--lr must be in (0, 1], got 2`, or in the form's lr field).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub setting: Setting,
    pub msg: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.setting.name(), self.msg)
    }
}

/// A training run's settings as a user gave them. A `None` is a setting not given or not
/// readable (the caller reports why); the checks that need it are skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TrainSpec {
    pub seq_len: Option<usize>,
    pub d_model: Option<usize>,
    pub n_layers: Option<usize>,
    pub n_heads: Option<usize>,
    /// Key/value heads (grouped-query attention); `None`: one per query head.
    pub n_kv_heads: Option<usize>,
    /// Rotary positions; `None`: none.
    pub rope: Option<Pairs>,
    /// Sliding-window attention over this many keys; `None`: the whole causal context.
    pub window: Option<usize>,
    /// Positions every query sees whatever the window (only with `window`); `None`: 0.
    pub sinks: Option<usize>,
    /// The attention kernel; flash needs one key/value head per query head.
    pub attention: Attention,
    pub batch: Option<usize>,
    pub steps: Option<u64>,
    pub lr: Option<f32>,
}

impl TrainSpec {
    /// The sizes of `config`, with no batch, steps or learning rate yet.
    pub fn of_config(config: &Config) -> TrainSpec {
        TrainSpec {
            seq_len: Some(config.seq_len),
            d_model: Some(config.d_model),
            n_layers: Some(config.n_layers),
            n_heads: Some(config.n_heads),
            n_kv_heads: config.n_kv_heads,
            rope: config.rope,
            window: config.sliding.map(|s| s.w),
            sinks: config.sliding.map(|s| s.sinks),
            ..TrainSpec::default()
        }
    }

    /// Every problem, at most one per setting, in the order of [`Setting`].
    pub fn problems(&self) -> Vec<SpecError> {
        let mut out: Vec<SpecError> = Vec::new();
        fn bad(out: &mut Vec<SpecError>, setting: Setting, msg: String) {
            if !out.iter().any(|e| e.setting == setting) {
                out.push(SpecError { setting, msg });
            }
        }
        let range = |v: usize, max: usize| (1..=max).contains(&v).then_some(v);
        let sized = [
            (Setting::SeqLen, self.seq_len, MAX_SEQ),
            (Setting::DModel, self.d_model, MAX_DMODEL),
            (Setting::Layers, self.n_layers, MAX_LAYERS),
            (Setting::Heads, self.n_heads, MAX_DMODEL),
            (Setting::KvHeads, self.n_kv_heads, MAX_DMODEL),
            (Setting::Batch, self.batch, MAX_BATCH),
        ];
        for (setting, v, max) in sized {
            if let Some(v) = v
                && range(v, max).is_none()
            {
                bad(&mut out, setting, tr!("must be 1..={max}, got {v}", max, v));
            }
        }
        if let Some(s) = self.steps
            && !(1..=MAX_STEPS).contains(&s)
        {
            bad(
                &mut out,
                Setting::Steps,
                tr!("must be 1..={max}, got {v}", max = MAX_STEPS, v = s),
            );
        }
        if let Some(lr) = self.lr
            && !(lr.is_finite() && lr > 0.0 && lr <= MAX_LR)
        {
            bad(
                &mut out,
                Setting::Lr,
                tr!("must be in (0, {max}], got {lr}", max = MAX_LR, lr = format!("{lr:?}")),
            );
        }
        if let (Some(c), Some(h)) = (self.d_model, self.n_heads)
            && h > 0
            && !c.is_multiple_of(h)
        {
            let divisors: Vec<String> = (1..=c)
                .filter(|&k| c.is_multiple_of(k))
                .take(8)
                .map(|k| k.to_string())
                .collect();
            bad(
                &mut out,
                Setting::Heads,
                tr!(
                    "must divide d_model: {c} is not a multiple of {h} (C % H ≠ 0; try {divisors})",
                    c,
                    h,
                    divisors = divisors.join(tr!(", "))
                ),
            );
        }
        if let (Some(h), Some(kv)) = (self.n_heads, self.n_kv_heads)
            && kv > 0
            && !h.is_multiple_of(kv)
        {
            let divisors: Vec<String> = (1..=h)
                .filter(|&k| h.is_multiple_of(k))
                .take(8)
                .map(|k| k.to_string())
                .collect();
            bad(
                &mut out,
                Setting::KvHeads,
                tr!(
                    "must divide the heads: {h} query heads cannot be shared out among {kv} key/value heads (H % H_kv ≠ 0; try {divisors})",
                    h,
                    kv,
                    divisors = divisors.join(tr!(", "))
                ),
            );
        }
        if let (Some(_), Some(c), Some(h)) = (self.rope, self.d_model, self.n_heads)
            && h > 0
            && c.is_multiple_of(h)
            && !(c / h).is_multiple_of(2)
        {
            bad(
                &mut out,
                Setting::Rope,
                tr!(
                    "turns pairs of channels, so a head needs an even number of them: D = d_model / heads = {c} / {h} = {d}",
                    c,
                    h,
                    d = c / h
                ),
            );
        }
        if let Some(w) = self.window
            && range(w, MAX_SEQ).is_none()
        {
            bad(
                &mut out,
                Setting::Window,
                tr!("must be 1..={max}, got {v}", max = MAX_SEQ, v = w),
            );
        }
        match (self.sinks, self.window, self.seq_len) {
            (Some(n), None, _) if n > 0 => bad(
                &mut out,
                Setting::Sinks,
                tr!("keep positions visible that a window would hide: give a window too").to_string(),
            ),
            (Some(n), Some(_), Some(seq)) if n > seq => {
                bad(
                    &mut out,
                    Setting::Sinks,
                    tr!("must be 0..={max}, got {v}", max = seq, v = n),
                );
            }
            _ => {}
        }
        // flash's loop reads one key/value head per query head (the MHA layout)
        if let (Attention::Flash(_), Some(h), Some(kv)) = (self.attention, self.n_heads, self.n_kv_heads)
            && kv != h
        {
            bad(
                &mut out,
                Setting::Attention,
                tr!(
                    "flash needs as many key/value heads as heads (H_kv = {kv}, H = {h}): it runs on the MHA layout",
                    kv,
                    h
                ),
            );
        }
        if out.is_empty()
            && let (Some(config), Some(b)) = (self.config(), self.batch)
        {
            let need = training_bytes(&config, self.attention, b, config.seq_len);
            // lower under an address-space limit: refused here, not aborted on an allocation
            let budget = attn_trace_core::limits::memory_budget(MEMORY_BUDGET_BYTES as u64);
            if need > budget as u128 {
                bad(
                    &mut out,
                    Setting::Batch,
                    tr!(
                        "is too large for memory: batch {b} of seq {seq} with d_model {c} and {l} layers needs \
                         about {gib} GiB; the limit is {max} GiB",
                        b,
                        seq = config.seq_len,
                        c = config.d_model,
                        l = config.n_layers,
                        gib = format!("{:.1}", need as f64 / (1u64 << 30) as f64),
                        max = attn_trace_core::limits::gib_text(budget)
                    ),
                );
            }
        }
        out
    }

    /// The first problem, if any.
    pub fn validate(&self) -> Result<(), SpecError> {
        match self.problems().into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The model's configuration, when all four sizes are given and valid.
    pub fn config(&self) -> Option<Config> {
        let config = Config {
            seq_len: self.seq_len?,
            d_model: self.d_model?,
            n_layers: self.n_layers?,
            n_heads: self.n_heads?,
            n_kv_heads: self.n_kv_heads,
            rope: self.rope,
            sliding: self.window.map(|w| SlidingWindow {
                w,
                sinks: self.sinks.unwrap_or(0),
            }),
            ..Config::default()
        }
        .normalized();
        config.validate().ok().map(|()| config)
    }
}

/// The name of no rotation, beside [`Pairs`]' names.
pub const NO_ROPE: &str = "none";

/// The name of a rotation, or of none, on the command line, in the train form and in checkpoints.
pub fn rope_name(rope: Option<Pairs>) -> &'static str {
    rope.map_or(NO_ROPE, Pairs::name)
}

/// Every rotation by name, none first: `none`, then [`Pairs::ALL`]'s.
pub fn rope_names() -> Vec<&'static str> {
    std::iter::once(None)
        .chain(Pairs::ALL.map(Some))
        .map(rope_name)
        .collect()
}

/// The rotation named on the command line or in the train form: `none`, `interleaved` (pairs
/// `(2m, 2m+1)`) or `half` (pairs `(m, m + D/2)`). The error reads after the setting's name.
pub fn parse_rope(text: &str) -> Result<Option<Pairs>, SpecError> {
    match text.trim() {
        NO_ROPE => Ok(None),
        name => Pairs::from_name(name).map(Some).ok_or_else(|| SpecError {
            setting: Setting::Rope,
            msg: tr!(
                "must be none, interleaved or half, got {name}",
                name = format!("{name:?}")
            ),
        }),
    }
}

/// The attention kernel named on the command line or in the train form: `naive` or `flash`
/// ([`Attention::FLASH`]'s tiles). The error reads after the setting's name.
pub fn parse_attention(text: &str) -> Result<Attention, SpecError> {
    let name = text.trim();
    Attention::from_name(name).ok_or_else(|| SpecError {
        setting: Setting::Attention,
        msg: tr!("must be naive or flash, got {name}", name = format!("{name:?}")),
    })
}
