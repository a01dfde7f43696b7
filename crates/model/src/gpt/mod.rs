//! The TinyGPT model, laid out as llm.c's `train_gpt2.c` is: first the layers, each one's
//! forward and backward side by side ([`crate::ops`]; here `linear.rs`, `rope.rs` and
//! `attention.rs`), then the model: its sizes (`config.rs`), its parameters in one flat buffer
//! (`layout.rs`), the buffers of a pass (`activations.rs`), and [`TinyGpt`]'s forward and
//! backward over a batch (this file). Attention goes through `dispatch.rs`, untraced: the
//! tracer's kernels' numbers, on their vectorised fast path.
#![allow(non_snake_case)]

mod activations;
mod attention;
mod config;
mod layout;
mod linear;
mod rope;

pub use activations::{Activations, Grads, LayerActs, MEMORY_BUDGET_BYTES, Shard, Workspace, training_bytes};
pub use attention::Attention;
pub use config::{Config, MAX_DMODEL, MAX_LAYERS, MAX_SEQ, SlidingWindow, VOCAB};
pub use layout::{ParamLayout, ParamSpec};
pub use linear::Linear;
pub use rope::RopeTables;

use super::ModelError;
use super::ops;
use attention::{attention_backward, attention_forward};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;
use rope::{rope_backward, rope_forward};

/// The model: its configuration and every parameter in one flat buffer (see [`ParamLayout`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TinyGpt {
    pub config: Config,
    pub layout: ParamLayout,
    pub params: Vec<f32>,
    /// The attention kernel its forward and backward passes run (not saved: a checkpoint
    /// loads with the naive kernels, and either kernel gives the same numbers within rounding).
    pub attention: Attention,
}

/// How many independent slices of a batch run on their own thread. Fixed (not the core count)
/// so a seed gives the same numbers on every machine; two match the 2-core target.
pub const SHARDS: usize = 2;

impl TinyGpt {
    /// Weights normal with std `1/√fan_in` (`fan_in` = the first dimension of the stored
    /// `[in, out]` matrix; for `wte` and `wpe`, the one-hot inputs `V` and `T`), biases zero,
    /// all drawn from one seeded generator in [`ParamLayout`] order.
    pub fn new(config: Config, seed: u64) -> Result<TinyGpt, ModelError> {
        config.validate()?;
        let layout = ParamLayout::new(&config);
        let mut params = vec![0.0; layout.total];
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for spec in &layout.specs {
            if spec.shape.len() == 2 {
                let std = 1.0 / (spec.shape[0] as f32).sqrt();
                let normal = Normal::new(0.0, std).map_err(|e| ModelError::Config {
                    field: "init",
                    msg: e.to_string(),
                })?;
                for p in &mut params[spec.offset..spec.offset + spec.len] {
                    *p = normal.sample(&mut rng);
                }
            }
        }
        Ok(TinyGpt {
            config,
            layout,
            params,
            attention: Attention::Naive,
        })
    }

    /// The named parameter tensor (e.g. `"blocks.0.w_qkv"`).
    pub fn param(&self, name: &str) -> Option<&[f32]> {
        self.layout.get(name).map(|s| &self.params[s.offset..s.offset + s.len])
    }

    pub fn num_params(&self) -> usize {
        self.layout.total
    }

    /// Forward pass over `tokens [B,T]` (`T ≤ seq_len`), filling `acts` (which must have been
    /// made for the same `B, T`). With `targets`, also the per-position losses.
    pub fn forward(&self, acts: &mut Activations, tokens: &[u8], targets: Option<&[u8]>) {
        self.forward_with(Linear::Gemm, acts, tokens, targets);
    }

    /// [`TinyGpt::forward`] with the linear layers computed as `lin` says.
    pub fn forward_with(&self, lin: Linear, acts: &mut Activations, tokens: &[u8], targets: Option<&[u8]>) {
        let cfg = &self.config;
        let (B, T, C, V) = (acts.b, acts.t, cfg.d_model, cfg.vocab_size);
        assert!(
            T <= cfg.seq_len && tokens.len() == B * T,
            "batch does not fit the model"
        );
        let bt = [B, T];
        let p = &self.params;
        let lo = &self.layout;
        let QKV = lo.qkv;
        ops::embedding_forward(
            bt,
            tokens,
            &p[lo.wte..lo.wte + V * C],
            &p[lo.wpe..lo.wpe + T * C],
            &mut acts.x0,
        );
        for l in 0..cfg.n_layers {
            let o = lo.block(l, C);
            let (done, rest) = acts.layers.split_at_mut(l);
            let a = &mut rest[0];
            let x = if l == 0 { &acts.x0 } else { &done[l - 1].res_out };
            // attention block: x_mid = x + proj(attention(rope(q | k | v = LN(x)·W_qkv + b_qkv)))
            ops::layernorm_forward(C, x, &mut a.ln1, &mut a.ln1_mean, &mut a.ln1_rstd);
            let (w_qkv, b_qkv) = (w(p, o.w_qkv, C * QKV), w(p, o.b_qkv, QKV));
            lin.forward_split(bt, &a.ln1, w_qkv, b_qkv, &mut a.qkv, [&mut a.q, &mut a.k, &mut a.v]);
            rope_forward(cfg, acts.shape, acts.rope.as_ref(), a);
            attention_forward(cfg, self.attention, acts.shape, a);
            lin.forward(bt, &a.att, w(p, o.w_proj, C * C), w(p, o.b_proj, C), &mut a.attn_out);
            ops::residual_forward(x, &a.attn_out, &mut a.res_mid);
            // MLP block: x_out = x_mid + W_out·gelu(W_fc·LN(x_mid) + b_fc) + b_out
            ops::layernorm_forward(C, &a.res_mid, &mut a.ln2, &mut a.ln2_mean, &mut a.ln2_rstd);
            let (w_fc, b_fc) = (w(p, o.w_fc, C * 4 * C), w(p, o.b_fc, 4 * C));
            lin.forward_gelu(bt, &a.ln2, w_fc, b_fc, &mut a.fc, &mut a.gelu, &mut a.gelu_tanh);
            lin.forward(bt, &a.gelu, w(p, o.w_out, 4 * C * C), w(p, o.b_out, C), &mut a.mlp_out);
            ops::residual_forward(&a.res_mid, &a.mlp_out, &mut a.res_out);
        }
        let x = acts.layers.last().map_or(&acts.x0, |a| &a.res_out);
        ops::layernorm_forward(C, x, &mut acts.lnf, &mut acts.lnf_mean, &mut acts.lnf_rstd);
        lin.forward(
            bt,
            &acts.lnf,
            w(p, lo.w_lm, C * V),
            w(p, lo.w_lm + C * V, V),
            &mut acts.logits,
        );
        if let Some(targets) = targets {
            ops::crossentropy_forward(V, &acts.logits, targets, &mut acts.probs, &mut acts.losses);
        }
    }

    /// Backward pass after [`TinyGpt::forward`] with targets: writes the gradient of
    /// `scale · Σ losses` into `grads` (a buffer of [`TinyGpt::num_params`] values; overwritten).
    pub fn backward(&self, acts: &mut Activations, tokens: &[u8], targets: &[u8], scale: f32, grads: &mut [f32]) {
        self.backward_rows(acts, tokens, targets, scale, acts.b * acts.t, grads, None);
    }

    /// [`TinyGpt::backward`] with the loss over the first `rows` of the `[B·T]` positions only,
    /// optionally copying one layer's attention gradients into `tap`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn backward_rows(
        &self,
        acts: &mut Activations,
        tokens: &[u8],
        targets: &[u8],
        scale: f32,
        rows: usize,
        grads: &mut [f32],
        mut tap: Option<&mut Tap>,
    ) {
        let cfg = &self.config;
        let (B, T, C, V) = (acts.b, acts.t, cfg.d_model, cfg.vocab_size);
        let bt = [B, T];
        let lo = &self.layout;
        let g = &mut acts.grad;
        grads[lo.wte..lo.wpe + cfg.seq_len * C].fill(0.0);

        // loss and LM head
        g.d_logits.fill(0.0);
        ops::crossentropy_backward(
            V,
            &acts.probs[..rows * V],
            &targets[..rows],
            scale,
            &mut g.d_logits[..rows * V],
        );
        let (d_wlm, d_blm) = grads[lo.w_lm..lo.w_lm + C * V + V].split_at_mut(C * V);
        ops::linear_backward(
            bt,
            &acts.lnf,
            w(&self.params, lo.w_lm, C * V),
            &g.d_logits,
            &mut g.d_ln,
            d_wlm,
            d_blm,
        );
        let x = acts.layers.last().map_or(&acts.x0, |a| &a.res_out);
        g.d_res.fill(0.0);
        ops::layernorm_backward(C, x, &acts.lnf_mean, &acts.lnf_rstd, &g.d_ln, &mut g.d_res);

        for l in (0..cfg.n_layers).rev() {
            let o = lo.block(l, C);
            let a = &acts.layers[l];
            let x = if l == 0 { &acts.x0 } else { &acts.layers[l - 1].res_out };
            // MLP block, from d_res (the gradient at x_out). A residual add hands its output's
            // gradient to both inputs unchanged (ops::residual_backward), so d_res serves as the
            // branch's gradient as it is, and the branch's layernorm then adds its share into
            // it: afterwards d_res is the gradient at x_mid, without a copy.
            let (d_wout, d_bout) = grads[o.w_out..o.b_out + C].split_at_mut(4 * C * C);
            ops::linear_backward(
                bt,
                &a.gelu,
                w(&self.params, o.w_out, 4 * C * C),
                &g.d_res,
                &mut g.d_gelu,
                d_wout,
                d_bout,
            );
            let (d_wfc, d_bfc) = grads[o.w_fc..o.b_fc + 4 * C].split_at_mut(C * 4 * C);
            let fc = (&a.fc[..], &a.gelu_tanh[..]);
            let (d_fc, d_ln) = (&mut g.d_fc, &mut g.d_ln);
            ops::gelu_linear_backward(
                bt,
                &a.ln2,
                w(&self.params, o.w_fc, C * 4 * C),
                fc,
                &g.d_gelu,
                d_fc,
                d_ln,
                d_wfc,
                d_bfc,
            );
            ops::layernorm_backward(C, &a.res_mid, &a.ln2_mean, &a.ln2_rstd, &g.d_ln, &mut g.d_res);
            // attention block, the same way: from d_res at x_mid to d_res at x
            if let Some(t) = tap.as_deref_mut().filter(|t| t.layer == l) {
                t.d_out = g.d_res.clone();
            }
            let (d_wproj, d_bproj) = grads[o.w_proj..o.b_proj + C].split_at_mut(C * C);
            ops::linear_backward(
                bt,
                &a.att,
                w(&self.params, o.w_proj, C * C),
                &g.d_res,
                &mut g.d_att,
                d_wproj,
                d_bproj,
            );
            attention_backward(cfg, self.attention, acts.shape, a, g);
            rope_backward(cfg, acts.shape, acts.rope.as_ref(), g);
            let QKV = lo.qkv;
            let (d_wqkv, d_bqkv) = grads[o.w_qkv..o.b_qkv + QKV].split_at_mut(C * QKV);
            ops::linear_backward_split(
                bt,
                &a.ln1,
                w(&self.params, o.w_qkv, C * QKV),
                [&g.d_q, &g.d_k, &g.d_v],
                &mut g.d_ln,
                d_wqkv,
                d_bqkv,
            );
            if let Some(t) = tap.as_deref_mut().filter(|t| t.layer == l) {
                t.d_x = g.d_ln.clone();
            }
            ops::layernorm_backward(C, x, &a.ln1_mean, &a.ln1_rstd, &g.d_ln, &mut g.d_res);
        }

        let (d_wte, d_wpe) = grads[lo.wte..lo.wpe + cfg.seq_len * C].split_at_mut(lo.wpe - lo.wte);
        ops::embedding_backward(bt, tokens, &g.d_res, d_wte, d_wpe);
    }

    /// Mean cross-entropy over `tokens → targets [B,T]` (B sequences of `T ≤ seq_len`), its
    /// gradient written into `grads`. The batch is cut into up to [`SHARDS`] slices of whole
    /// sequences that run on their own threads, each with its own activations and gradients
    /// from `work`; the slices' gradients are summed in a fixed order, so results do not depend
    /// on scheduling.
    pub fn loss_and_grad(&self, work: &mut Workspace, tokens: &[u8], targets: &[u8], grads: &mut [f32]) -> f32 {
        let loss = self.loss_and_shard_grads(work, tokens, targets);
        let parts: Vec<&[f32]> = work.shards.iter().map(|s| &s.grads[..]).collect();
        grads.par_chunks_mut(1 << 14).enumerate().for_each(|(n, g)| {
            let at = n << 14;
            let n = g.len();
            g.copy_from_slice(&parts[0][at..at + n]);
            for part in &parts[1..] {
                g.iter_mut().zip(&part[at..at + n]).for_each(|(g, &d)| *g += d);
            }
        });
        loss
    }

    /// [`TinyGpt::loss_and_grad`] without the sum: each shard's gradient is left in
    /// `work.shards[s].grads` (AdamW adds them up as it updates, [`crate::AdamW::update_sum`]).
    pub(crate) fn loss_and_shard_grads(&self, work: &mut Workspace, tokens: &[u8], targets: &[u8]) -> f32 {
        let (B, T) = (work.b, work.t);
        let scale = 1.0 / (B * T) as f32;
        work.shards.par_iter_mut().for_each(|s| {
            let rows = s.first * T..(s.first + s.acts.b) * T;
            let (tokens, targets) = (&tokens[rows.clone()], &targets[rows]);
            self.forward(&mut s.acts, tokens, Some(targets));
            let n = s.acts.b * T;
            self.backward_rows(&mut s.acts, tokens, targets, scale, n, &mut s.grads, None);
        });
        (work.shards.iter().map(|s| s.acts.loss_sum()).sum::<f64>() / (B * T) as f64) as f32
    }

    /// Sum of the per-position losses over `tokens → targets [B,T]`, forward only, sharded as
    /// in [`TinyGpt::loss_and_grad`].
    pub fn loss_sum(&self, work: &mut Workspace, tokens: &[u8], targets: &[u8]) -> f64 {
        let T = work.t;
        work.shards.par_iter_mut().for_each(|s| {
            let rows = s.first * T..(s.first + s.acts.b) * T;
            self.forward(&mut s.acts, &tokens[rows.clone()], Some(&targets[rows]));
        });
        work.shards.iter().map(|s| s.acts.loss_sum()).sum()
    }

    /// Logits `[T,V]` of one sequence of `1..=seq_len` tokens.
    pub fn logits(&self, tokens: &[u8]) -> Vec<f32> {
        let mut acts = Activations::new(&self.config, 1, tokens.len());
        self.forward(&mut acts, tokens, None);
        acts.logits
    }
}

/// Gradients copied out of one layer's attention block during a backward pass: at its output
/// (`d_out`, what the block adds to the residual stream) and at its input (`d_x`, the LN output).
#[derive(Clone, Debug, Default)]
pub(crate) struct Tap {
    pub layer: usize,
    pub d_out: Vec<f32>,
    pub d_x: Vec<f32>,
}

/// The slice `p[off..off + len]` of the parameter buffer.
fn w(p: &[f32], off: usize, len: usize) -> &[f32] {
    &p[off..off + len]
}
