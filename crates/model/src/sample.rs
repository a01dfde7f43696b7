//! Generating text: repeatedly run the model on the last `seq_len` bytes and draw the next byte
//! from its temperature-scaled, optionally top-k-filtered distribution.
//!
//! [`TinyGpt::sample_each`] keeps the keys and values of the window in a [`KvCache`]
//! (`model/decode.rs`), so each new byte is one decoding step instead of a pass over the whole
//! window; [`TinyGpt::sample_each_without_cache`] runs the window through the model again for
//! every byte. Both draw exactly the same bytes: a decoding step computes the same bits as the
//! window's last position (a test holds them to it).

use super::ModelError;
use super::decode::KvCache;
use super::gpt::{Activations, Linear, TinyGpt};
use attn_trace_i18n::tr;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::ops::ControlFlow;

/// How to draw each byte.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleOptions {
    /// Bytes to generate.
    pub n_gen: usize,
    /// Logits are divided by this; 0 means always the most likely byte (greedy).
    pub temp: f32,
    /// Keep only the `topk` most likely bytes (0: all of them).
    pub topk: usize,
    pub seed: u64,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            n_gen: 200,
            temp: 1.0,
            topk: 0,
            seed: 0,
        }
    }
}

impl TinyGpt {
    /// The `n_gen` bytes generated after `prompt` (the prompt itself is not included).
    pub fn sample(&self, prompt: &[u8], opts: &SampleOptions) -> Result<Vec<u8>, ModelError> {
        let mut out = Vec::with_capacity(opts.n_gen.min(1 << 20));
        self.sample_each(prompt, opts, |b| {
            out.push(b);
            ControlFlow::Continue(())
        })?;
        Ok(out)
    }

    /// Generates as [`TinyGpt::sample`] does, handing each byte to `each` as soon as it is
    /// drawn (so a caller can print text as it comes); `each` may break to stop early. Only the
    /// last `seq_len` bytes are kept as context, so any `n_gen` runs in constant memory. Decodes
    /// from a KV cache while the window fills; once it is full, every step moves all positions,
    /// and the window is run again (prefilled).
    pub fn sample_each(
        &self,
        prompt: &[u8],
        opts: &SampleOptions,
        each: impl FnMut(u8) -> ControlFlow<()>,
    ) -> Result<(), ModelError> {
        let mut cache = KvCache::new(self);
        self.generate(prompt, opts, Some(&mut cache), each)
    }

    /// [`TinyGpt::sample_each`] without a cache: every byte runs the whole window through the
    /// model. The same bytes, more slowly; kept to hold the cache to it.
    pub fn sample_each_without_cache(
        &self,
        prompt: &[u8],
        opts: &SampleOptions,
        each: impl FnMut(u8) -> ControlFlow<()>,
    ) -> Result<(), ModelError> {
        self.generate(prompt, opts, None, each)
    }

    fn generate(
        &self,
        prompt: &[u8],
        opts: &SampleOptions,
        mut cache: Option<&mut KvCache>,
        mut each: impl FnMut(u8) -> ControlFlow<()>,
    ) -> Result<(), ModelError> {
        if prompt.is_empty() {
            return Err(ModelError::Input(
                tr!("the prompt is empty: give at least one byte").into(),
            ));
        }
        if !(opts.temp.is_finite() && opts.temp >= 0.0) {
            return Err(ModelError::Input(tr!(
                "temperature must be a number ≥ 0, got {temp}",
                temp = opts.temp
            )));
        }
        let v = self.config.vocab_size;
        let seq = self.config.seq_len;
        let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
        let mut text = prompt[prompt.len().saturating_sub(seq)..].to_vec();
        // the logits of the window's last position, from the cache when it holds the window
        // but its newest byte, else from a pass over the whole window
        for _ in 0..opts.n_gen {
            let ctx = &text[text.len().saturating_sub(seq)..];
            let n = ctx.len();
            let last: Vec<f32> = match cache.as_deref_mut() {
                Some(c) if c.len + 1 == n => self.decode_step(ctx[n - 1], c).to_vec(),
                Some(c) => self.prefill(ctx, c),
                None => {
                    let mut acts = Activations::new(&self.config, 1, n);
                    self.forward_with(Linear::Rows, &mut acts, ctx, None);
                    acts.logits[(n - 1) * v..n * v].to_vec()
                }
            };
            if let Some(x) = last.iter().find(|x| !x.is_finite()) {
                // weights that overflow f32: no byte drawn from them means anything
                return Err(ModelError::Input(tr!(
                    "the model's logits are not finite ({x}): its weights overflow f32, so nothing can be sampled from it",
                    x
                )));
            }
            let next = pick(&last, opts.temp, opts.topk, rng.random::<f64>());
            text.push(next);
            if text.len() >= 2 * seq {
                text.drain(..text.len() - seq);
            }
            if each(next).is_break() {
                break;
            }
        }
        Ok(())
    }
}

/// The byte drawn from `logits` for a uniform number `u ∈ [0, 1)`: the most likely one (the
/// smaller byte on a tie) at `temp` 0, else by inverse CDF over the `topk` most likely (all of
/// them for 0), weighted `exp((logit − max) / temp)`.
pub fn pick(logits: &[f32], temp: f32, topk: usize, u: f64) -> u8 {
    // candidates by descending logit, ties broken by the smaller byte
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]).then(a.cmp(&b)));
    if temp == 0.0 {
        return order[0] as u8;
    }
    if topk > 0 {
        order.truncate(topk);
    }
    let max = logits[order[0]] as f64;
    let weights: Vec<f64> = order
        .iter()
        .map(|&k| ((logits[k] as f64 - max) / temp as f64).exp())
        .collect();
    let mut target = u * weights.iter().sum::<f64>();
    for (&k, &w) in order.iter().zip(&weights) {
        if target < w {
            return k as u8;
        }
        target -= w;
    }
    order[order.len() - 1] as u8
}
