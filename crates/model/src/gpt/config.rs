//! The model's sizes: [`Config`], its checks, and what follows from it (key/value heads, the
//! attention shape and variant, the rotation).

use crate::ModelError;
use attn_trace_core::kernels::rope::{self, Pairs, Rope};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_i18n::tr;

/// Byte-level tokens.
pub const VOCAB: usize = 256;

/// Largest sizes accepted from a user or a checkpoint, so a typo cannot ask for terabytes.
pub const MAX_SEQ: usize = 4096;
pub const MAX_DMODEL: usize = 4096;
pub const MAX_LAYERS: usize = 64;

/// The model's sizes. `vocab_size` is always 256 (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub vocab_size: usize,
    pub seq_len: usize,
    pub d_model: usize,
    pub n_layers: usize,
    pub n_heads: usize,
    /// Key/value heads shared by the query heads (grouped-query attention, `H_kv`): query head
    /// `h` reads key/value head `h / (n_heads / n_kv_heads)`. `None` is one per query head
    /// (multi-head attention); `Some(1)` is multi-query attention.
    pub n_kv_heads: Option<usize>,
    /// Rotary positions on q and k ([`attn_trace_core::kernels::rope`], base [`rope::DEFAULT_BASE`]), on
    /// top of the learned position embedding `wpe`; `None`: no rotation.
    pub rope: Option<Pairs>,
    /// Sliding-window attention ([`Mask::Window`]): each position attends over the `w` most
    /// recent ones and the first `sinks`; `None`: the whole causal context.
    pub sliding: Option<SlidingWindow>,
}

/// A sliding window of `w` keys with `sinks` positions kept visible whatever the window
/// (`train --window W --sinks N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingWindow {
    pub w: usize,
    pub sinks: usize,
}

impl Default for Config {
    /// The teaching codebase's default: T=64, C=64, one layer, one head.
    fn default() -> Self {
        Config {
            vocab_size: VOCAB,
            seq_len: 64,
            d_model: 64,
            n_layers: 1,
            n_heads: 1,
            n_kv_heads: None,
            rope: None,
            sliding: None,
        }
    }
}

impl Config {
    /// Checks the sizes; the error names the offending field.
    pub fn validate(&self) -> Result<(), ModelError> {
        let bad = |field: &'static str, msg: String| Err(ModelError::Config { field, msg });
        if self.vocab_size != VOCAB {
            return bad(
                "vocab_size",
                tr!(
                    "must be {vocab} (byte tokens), got {n}",
                    vocab = VOCAB,
                    n = self.vocab_size
                ),
            );
        }
        if !(1..=MAX_SEQ).contains(&self.seq_len) {
            return bad(
                "seq_len",
                tr!("must be 1..={max}, got {n}", max = MAX_SEQ, n = self.seq_len),
            );
        }
        if !(1..=MAX_DMODEL).contains(&self.d_model) {
            return bad(
                "d_model",
                tr!("must be 1..={max}, got {n}", max = MAX_DMODEL, n = self.d_model),
            );
        }
        if !(1..=MAX_LAYERS).contains(&self.n_layers) {
            return bad(
                "n_layers",
                tr!("must be 1..={max}, got {n}", max = MAX_LAYERS, n = self.n_layers),
            );
        }
        if self.d_model.checked_rem(self.n_heads) != Some(0) {
            return bad(
                "n_heads",
                tr!(
                    "must divide d_model: d_model {c} is not a multiple of n_heads {h}",
                    c = self.d_model,
                    h = self.n_heads
                ),
            );
        }
        if let Some(kv) = self.n_kv_heads
            && !(kv >= 1 && self.n_heads.is_multiple_of(kv))
        {
            return bad(
                "n_kv_heads",
                tr!(
                    "must divide n_heads: n_heads {h} is not a multiple of n_kv_heads {kv}",
                    h = self.n_heads,
                    kv
                ),
            );
        }
        if self.rope.is_some() && !(self.d_model / self.n_heads).is_multiple_of(2) {
            return bad(
                "rope",
                tr!(
                    "turns channel pairs, so a head needs an even number of channels: D = d_model/n_heads = {d}",
                    d = self.d_model / self.n_heads
                ),
            );
        }
        if let Some(SlidingWindow { w, sinks }) = self.sliding {
            if !(1..=MAX_SEQ).contains(&w) {
                return bad("window", tr!("must be 1..={max}, got {n}", max = MAX_SEQ, n = w));
            }
            if sinks > self.seq_len {
                return bad(
                    "sinks",
                    tr!("must be 0..={max}, got {n}", max = self.seq_len, n = sinks),
                );
            }
        }
        Ok(())
    }

    /// What each position may attend to: the causal mask, or the sliding window.
    pub fn mask(&self) -> Mask {
        match self.sliding {
            None => Mask::Causal,
            Some(SlidingWindow { w, sinks }) => Mask::Window { w, sinks },
        }
    }

    /// Key/value heads: `n_kv_heads`, or one per query head.
    pub fn kv_heads(&self) -> usize {
        self.n_kv_heads.unwrap_or(self.n_heads)
    }

    /// Channels of one token's keys (and of its values): `H_kv·D`, `C` unless grouped.
    pub fn kv_channels(&self) -> usize {
        self.kv_heads() * (self.d_model / self.n_heads)
    }

    /// The same configuration with `n_kv_heads = None` when it equals `n_heads`: the two
    /// spellings of multi-head attention compare equal.
    #[must_use]
    pub fn normalized(self) -> Config {
        Config {
            n_kv_heads: self.n_kv_heads.filter(|&kv| kv != self.n_heads),
            ..self
        }
    }

    /// The rotation the model applies, if any.
    pub fn rotation(&self) -> Option<Rope> {
        self.rope.map(|pairs| Rope {
            pairs,
            base: rope::DEFAULT_BASE,
        })
    }

    /// The attention shape of a batch of `b` sequences of `t ≤ seq_len` tokens.
    pub fn shape(&self, b: usize, t: usize) -> Shape {
        Shape::new(b, t, self.d_model, self.n_heads).with_kv_heads(self.kv_heads())
    }

    /// The attention kernel training runs, as the engine would choose it: the baseline for one
    /// head, grouped-query attention when key/value heads are shared, else MHA.
    pub fn variant(&self) -> Variant {
        if self.n_heads == 1 {
            Variant::Baseline
        } else if self.kv_heads() != self.n_heads {
            Variant::Gqa
        } else {
            Variant::Mha
        }
    }
}
