//! Generating from a key/value cache: how `sample` runs the model one new token at a time.
//!
//! Without a cache, every new byte runs the whole window through the model again, although
//! only the last position's logits are used and every other position's keys and values come
//! out exactly as they did the step before. With one, [`TinyGpt::prefill`] runs the prompt
//! once and keeps each layer's keys (already rotated, with rotary positions) and values in a
//! [`KvCache`], `[seq_len, H_kv·D]` per layer; then [`TinyGpt::decode_step`] takes one token at
//! position `t`: it embeds it, and in every layer projects only that token, writes its key and
//! value into row `t` of the cache, and lets its query attend over rows `0..=t` read from the
//! cache (`kernels/decode.rs` traces the same steps for one attention layer). Grouped heads
//! make the cache `H/H_kv` times smaller.
//!
//! A position's numbers are the same bits either way: the linear layers run row by row
//! ([`Linear::Rows`]), layernorm, GELU and the residual adds act on each row alone, and
//! attention goes through the same dispatcher, for the one query over the `t + 1` cached keys
//! (its sums in the same order; the causal pass adds only zeros for the keys after `t`).
//!
//! With sliding-window attention (`train --window W --sinks N`) a position sees only the `W`
//! most recent positions and the first `N`, so the cache keeps only those: `N + W` rows instead of
//! `seq_len`, position `p ≥ N` in row `N + (p − N) % W`, which the newest position overwrites
//! once `p − W` has slid out ([`KvCache::slot`]). A step gathers the visible rows in position
//! order and attends over them: the sums of the full window with the hidden terms (exact zeros)
//! left out, so the same bits.
//!
//! The learned position embedding `wpe` covers positions `0..seq_len`. When the text outgrows
//! the window, every position of the window moves, so its keys and values change: the window is
//! prefilled again, as sampling without a cache does at every step.
#![allow(non_snake_case)]

use super::gpt::{Activations, Linear, RopeTables, SlidingWindow, TinyGpt};
use super::ops;
use attn_trace_core::kernels::{Mask, rope};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, NoRecord};
use attn_trace_core::untraced::dispatch;

/// The keys and values of the positions `0..len` of one sequence, per layer, and the buffers
/// of one decoding step.
#[derive(Clone, Debug)]
pub struct KvCache {
    /// Positions held.
    pub len: usize,
    /// Per layer: keys `[rows, H_kv·D]` (rotated when the model uses rotary positions), `rows`
    /// being `seq_len`, or `sinks + W` under a sliding window when that is fewer.
    pub k: Vec<Vec<f32>>,
    /// Per layer: values `[rows, H_kv·D]`.
    pub v: Vec<Vec<f32>>,
    /// The model's sliding window, if any: which rows hold which positions.
    sliding: Option<SlidingWindow>,
    step: Step,
}

/// One token's activations, reused at every step.
#[derive(Clone, Debug)]
struct Step {
    x: Vec<f32>,
    ln: Vec<f32>,
    mean: Vec<f32>,
    rstd: Vec<f32>,
    qkv: Vec<f32>,
    /// Queries `[seq_len, C]`: the rotation turns row `t` in place, where the pass over the
    /// window turns it.
    q: Vec<f32>,
    /// The new key `[seq_len, H_kv·D]`: the rotation turns row `t`, then it is copied to its row
    /// of the cache.
    k_new: Vec<f32>,
    /// Under a sliding window: the keys and values the step's query sees, gathered from the
    /// cache's rows in position order.
    k_seen: Vec<f32>,
    v_seen: Vec<f32>,
    scores: Vec<f32>,
    probs: Vec<f32>,
    att: Vec<f32>,
    branch: Vec<f32>,
    mid: Vec<f32>,
    fc: Vec<f32>,
    gelu: Vec<f32>,
    tanh: Vec<f32>,
    logits: Vec<f32>,
    rope: Option<RopeTables>,
}

impl KvCache {
    /// An empty cache for `model`.
    pub fn new(model: &TinyGpt) -> KvCache {
        let cfg = &model.config;
        let (T, C, H, V) = (cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.vocab_size);
        let KV = cfg.kv_channels();
        let z = |n: usize| vec![0.0f32; n];
        let rows = cfg.sliding.map_or(T, |s| T.min(s.sinks.saturating_add(s.w)));
        KvCache {
            len: 0,
            k: (0..cfg.n_layers).map(|_| z(rows * KV)).collect(),
            v: (0..cfg.n_layers).map(|_| z(rows * KV)).collect(),
            sliding: cfg.sliding,
            step: Step {
                x: z(C),
                ln: z(C),
                mean: z(1),
                rstd: z(1),
                qkv: z(C + 2 * KV),
                q: z(T * C),
                k_new: z(T * KV),
                k_seen: z(if cfg.sliding.is_some() { rows * KV } else { 0 }),
                v_seen: z(if cfg.sliding.is_some() { rows * KV } else { 0 }),
                scores: z(H * T),
                probs: z(H * T),
                att: z(C),
                branch: z(C),
                mid: z(C),
                fc: z(4 * C),
                gelu: z(4 * C),
                tanh: z(4 * C),
                logits: z(V),
                rope: RopeTables::of(cfg, T),
            },
        }
    }

    /// Bytes the keys and values take: `2 · L · rows · H_kv·D · 4`.
    pub fn bytes(&self) -> usize {
        4 * (self.k.iter().chain(&self.v).map(Vec::len).sum::<usize>())
    }

    /// The row that holds position `p`: `p` itself, or under a sliding window of `W` with `N`
    /// sinks, `p` for a sink and `N + (p − N) % W` for the others (the positions a query sees
    /// past the sinks are at most `W` consecutive ones, so they never share a row).
    pub fn slot(&self, p: usize) -> usize {
        match self.sliding {
            Some(SlidingWindow { w, sinks }) if p >= sinks => sinks + (p - sinks) % w,
            _ => p,
        }
    }

    /// The positions query `t` sees, in order: the sinks, then the window's band (all of
    /// `0..=t` without a window).
    pub fn seen(&self, t: usize) -> impl Iterator<Item = usize> {
        let (sinks, band) = match self.sliding {
            None => (0, 0),
            Some(SlidingWindow { w, sinks }) => {
                let sinks = sinks.min(t + 1);
                (sinks, (t + 1).saturating_sub(w).max(sinks))
            }
        };
        (0..sinks).chain(band..=t)
    }
}

impl TinyGpt {
    /// Runs `tokens` (`1..=seq_len` of them, positions `0..`) through the model as one window,
    /// row by row ([`Linear::Rows`]), keeping every layer's keys and values in `cache` (which
    /// then holds `tokens.len()` positions). Returns the logits `[V]` of the last position.
    pub fn prefill(&self, tokens: &[u8], cache: &mut KvCache) -> Vec<f32> {
        let (n, V) = (tokens.len(), self.config.vocab_size);
        let mut acts = Activations::new(&self.config, 1, n);
        self.forward_with(Linear::Rows, &mut acts, tokens, None);
        let KV = self.config.kv_channels();
        for (l, a) in acts.layers.iter().enumerate() {
            // in position order, so a later position overwrites the row of one that slid out
            for p in 0..n {
                let row = cache.slot(p);
                cache.k[l][row * KV..(row + 1) * KV].copy_from_slice(&a.k[p * KV..(p + 1) * KV]);
                cache.v[l][row * KV..(row + 1) * KV].copy_from_slice(&a.v[p * KV..(p + 1) * KV]);
            }
        }
        cache.len = n;
        acts.logits[(n - 1) * V..n * V].to_vec()
    }

    /// Appends `token` at position `cache.len` (which must be below `seq_len`): only this token
    /// is projected, its key and value go into the cache and its query attends over the
    /// cached positions. Returns its logits `[V]`, the numbers [`TinyGpt::prefill`] of the
    /// whole window would give for its last position.
    pub fn decode_step<'c>(&self, token: u8, cache: &'c mut KvCache) -> &'c [f32] {
        let cfg = &self.config;
        let (T, C, H, V) = (cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.vocab_size);
        let (KV, QKV) = (cfg.kv_channels(), self.layout.qkv());
        let t = cache.len;
        assert!(t < T, "the cache is full: {t} of {T} positions");
        // the rows position t's query reads, in position order, and the one its key goes in
        let seen: Vec<usize> = cache.seen(t).map(|p| cache.slot(p)).collect();
        let (n, row, sliding) = (seen.len(), cache.slot(t), cache.sliding.is_some());
        let p = &self.params;
        let lo = &self.layout;
        let st = &mut cache.step;
        let one = [1, 1];
        // the token's embedding at position t
        let (wte, wpe) = (lo.wte(), lo.wpe());
        ops::embedding_forward(
            one,
            &[token],
            &p[wte..wte + V * C],
            &p[wpe + t * C..wpe + (t + 1) * C],
            &mut st.x,
        );
        // the query's view: one query over the cached keys it sees, nothing hidden (the causal
        // mask is the order of the steps, and a sliding window the choice of rows)
        let sh = Shape::cross(1, 1, n, C, H).with_kv_heads(cfg.kv_heads());
        let window = Shape::new(1, T, C, H).with_kv_heads(cfg.kv_heads());
        for l in 0..cfg.n_layers {
            let o = lo.block(l, C);
            let (k, v) = (&mut cache.k[l], &mut cache.v[l]);
            // attention block: project token t once, its k and v into row t of the cache
            ops::layernorm_forward(C, &st.x, &mut st.ln, &mut st.mean, &mut st.rstd);
            Linear::Rows.forward(
                one,
                &st.ln,
                &p[o.w_qkv..o.b_qkv],
                &p[o.b_qkv..o.b_qkv + QKV],
                &mut st.qkv,
            );
            st.q[t * C..(t + 1) * C].copy_from_slice(&st.qkv[..C]);
            st.k_new[t * KV..(t + 1) * KV].copy_from_slice(&st.qkv[C..C + KV]);
            // rotary positions turn the new query and key by t·θ_m; the cached keys were
            // turned at their own steps
            if let (Some(pairs), Some(tab)) = (cfg.rope, &st.rope) {
                let rows = (0..1, t..t + 1);
                rope::forward(
                    &mut NoRecord,
                    window,
                    pairs,
                    rows,
                    (&tab.cos, &tab.sin),
                    &mut st.q,
                    (Buf::K, &mut st.k_new),
                );
            }
            // position t's key and value into its row of the cache
            k[row * KV..(row + 1) * KV].copy_from_slice(&st.k_new[t * KV..(t + 1) * KV]);
            v[row * KV..(row + 1) * KV].copy_from_slice(&st.qkv[C + KV..]);
            let (keys, values): (&[f32], &[f32]) = if sliding {
                for (m, &r) in seen.iter().enumerate() {
                    st.k_seen[m * KV..(m + 1) * KV].copy_from_slice(&k[r * KV..(r + 1) * KV]);
                    st.v_seen[m * KV..(m + 1) * KV].copy_from_slice(&v[r * KV..(r + 1) * KV]);
                }
                (&st.k_seen[..n * KV], &st.v_seen[..n * KV])
            } else {
                (&k[..n * KV], &v[..n * KV])
            };
            dispatch::forward(
                &mut NoRecord,
                cfg.variant(),
                sh,
                &Mask::None,
                &st.q[t * C..(t + 1) * C],
                keys,
                values,
                &mut st.scores[..H * n],
                &mut st.probs[..H * n],
                &mut st.att,
            );
            Linear::Rows.forward(
                one,
                &st.att,
                &p[o.w_proj..o.b_proj],
                &p[o.b_proj..o.b_proj + C],
                &mut st.branch,
            );
            ops::residual_forward(&st.x, &st.branch, &mut st.mid);
            // MLP block
            ops::layernorm_forward(C, &st.mid, &mut st.ln, &mut st.mean, &mut st.rstd);
            Linear::Rows.forward(one, &st.ln, &p[o.w_fc..o.b_fc], &p[o.b_fc..o.b_fc + 4 * C], &mut st.fc);
            ops::gelu_forward(&st.fc, &mut st.gelu, &mut st.tanh);
            Linear::Rows.forward(
                one,
                &st.gelu,
                &p[o.w_out..o.b_out],
                &p[o.b_out..o.b_out + C],
                &mut st.branch,
            );
            ops::residual_forward(&st.mid, &st.branch, &mut st.x);
        }
        ops::layernorm_forward(C, &st.x, &mut st.ln, &mut st.mean, &mut st.rstd);
        let w_lm = lo.w_lm();
        Linear::Rows.forward(
            one,
            &st.ln,
            &p[w_lm..w_lm + C * V],
            &p[w_lm + C * V..w_lm + C * V + V],
            &mut st.logits,
        );
        cache.len = t + 1;
        &cache.step.logits
    }
}
