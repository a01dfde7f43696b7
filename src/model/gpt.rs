//! The TinyGPT model: configuration, parameters in one flat buffer, and the forward and backward
//! passes over a batch. Attention goes through `dispatch.rs`, untraced: the tracer's kernels'
//! numbers, on their vectorised fast path.
#![allow(non_snake_case)]

use super::ModelError;
use super::ops;
use crate::kernels::attention_flash::{BackwardTiles, FittedTiles, ForwardTiles, Tiles};
use crate::kernels::rope::{self, Pairs, Rope};
use crate::kernels::{Mask, Variant};
use crate::tensor::Shape;
use crate::tr;
use crate::trace::{Buf, NoRecord};
use crate::untraced::dispatch;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;

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
    /// Rotary positions on q and k ([`crate::kernels::rope`], base [`rope::DEFAULT_BASE`]), on
    /// top of the learned position embedding `wpe`; `None`: no rotation.
    pub rope: Option<Pairs>,
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
        Ok(())
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

/// One named parameter tensor inside the flat parameter buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: String,
    pub shape: Vec<usize>,
    pub offset: usize,
    pub len: usize,
}

/// Where each parameter tensor lives in the flat buffer, in checkpoint order:
/// `wte, wpe, blocks.{l}.(w_qkv, b_qkv, w_proj, b_proj, w_fc, b_fc, w_out, b_out), w_lm, b_lm`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    pub specs: Vec<ParamSpec>,
    pub total: usize,
    /// Offsets of the fixed tensors and of each block's first tensor.
    wte: usize,
    wpe: usize,
    blocks: Vec<usize>,
    w_lm: usize,
    /// Width of the fused projection's output, `C + 2·H_kv·D`.
    qkv: usize,
}

/// Offsets of one block's tensors.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockOffsets {
    pub w_qkv: usize,
    pub b_qkv: usize,
    pub w_proj: usize,
    pub b_proj: usize,
    pub w_fc: usize,
    pub b_fc: usize,
    pub w_out: usize,
    pub b_out: usize,
}

impl ParamLayout {
    pub fn new(cfg: &Config) -> ParamLayout {
        let (V, T, C) = (cfg.vocab_size, cfg.seq_len, cfg.d_model);
        // q, k and v of a token: C + 2·H_kv·D channels (3C unless grouped)
        let QKV = C + 2 * cfg.kv_channels();
        let mut specs = Vec::new();
        let mut total = 0;
        let mut push = |name: String, shape: Vec<usize>| {
            let len = shape.iter().product();
            specs.push(ParamSpec {
                name,
                shape,
                offset: total,
                len,
            });
            total += len;
            total - len
        };
        let wte = push("wte".into(), vec![V, C]);
        let wpe = push("wpe".into(), vec![T, C]);
        let mut blocks = Vec::new();
        for l in 0..cfg.n_layers {
            let p = |s: &str| format!("blocks.{l}.{s}");
            blocks.push(push(p("w_qkv"), vec![C, QKV]));
            push(p("b_qkv"), vec![QKV]);
            push(p("w_proj"), vec![C, C]);
            push(p("b_proj"), vec![C]);
            push(p("w_fc"), vec![C, 4 * C]);
            push(p("b_fc"), vec![4 * C]);
            push(p("w_out"), vec![4 * C, C]);
            push(p("b_out"), vec![C]);
        }
        let w_lm = push("w_lm".into(), vec![C, V]);
        push("b_lm".into(), vec![V]);
        ParamLayout {
            specs,
            total,
            wte,
            wpe,
            blocks,
            w_lm,
            qkv: QKV,
        }
    }

    pub fn get(&self, name: &str) -> Option<&ParamSpec> {
        self.specs.iter().find(|s| s.name == name)
    }

    /// Width of the fused projection's output: `C + 2·H_kv·D`.
    pub fn qkv(&self) -> usize {
        self.qkv
    }

    pub(crate) fn wte(&self) -> usize {
        self.wte
    }

    pub(crate) fn wpe(&self) -> usize {
        self.wpe
    }

    pub(crate) fn w_lm(&self) -> usize {
        self.w_lm
    }

    pub(crate) fn block(&self, l: usize, C: usize) -> BlockOffsets {
        let w_qkv = self.blocks[l];
        let b_qkv = w_qkv + C * self.qkv;
        let w_proj = b_qkv + self.qkv;
        let b_proj = w_proj + C * C;
        let w_fc = b_proj + C;
        let b_fc = w_fc + C * 4 * C;
        let w_out = b_fc + 4 * C;
        let b_out = w_out + 4 * C * C;
        BlockOffsets {
            w_qkv,
            b_qkv,
            w_proj,
            b_proj,
            w_fc,
            b_fc,
            w_out,
            b_out,
        }
    }
}

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

/// Which attention kernel TinyGPT runs: the naive one (baseline for one head, MHA for more),
/// which stores the `[B,H,T,T]` probabilities for backward, or flash, which keeps one tile of
/// them at a time and saves only the row log-sum-exp `lse [B,H,T]` for backward.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Attention {
    #[default]
    Naive,
    Flash(Tiles),
}

impl Attention {
    /// Flash's tiles when training: 16 query rows by 16 key columns (fewer when T is shorter).
    pub const FLASH: Attention = Attention::Flash(Tiles { br: 16, bc: 16 });

    /// The kernels by name: naive, and flash with [`Attention::FLASH`]'s tiles.
    pub const ALL: [Attention; 2] = [Attention::Naive, Attention::FLASH];

    /// The name used on the command line and in the train form.
    pub const fn name(self) -> &'static str {
        match self {
            Attention::Naive => "naive",
            Attention::Flash(_) => "flash",
        }
    }

    pub fn from_name(name: &str) -> Option<Attention> {
        Attention::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Flash's tiles fitted to a batch of sizes `sh`, or `None` for the naive kernel.
    fn flash_tiles(self, sh: Shape) -> Option<FittedTiles> {
        match self {
            Attention::Naive => None,
            Attention::Flash(tiles) => Some(tiles.fit(sh)),
        }
    }
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

    /// A model with the given parameters (length checked against the layout).
    pub fn from_params(config: Config, params: Vec<f32>) -> Result<TinyGpt, ModelError> {
        config.validate()?;
        let layout = ParamLayout::new(&config);
        if params.len() != layout.total {
            return Err(ModelError::Config {
                field: "params",
                msg: tr!("expected {want} values, got {n}", want = layout.total, n = params.len()),
            });
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
    /// `work.shards[s].grads` (AdamW adds them up as it updates, [`crate::model::AdamW::update_sum`]).
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

/// How the linear layers of a forward pass are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linear {
    /// All rows at once through sgemm ([`ops::linear_forward`]): training and evaluation.
    Gemm,
    /// One row at a time in the reference loop's order ([`ops::linear_rows`], the sums of
    /// `kernels/linear.rs`), so a row's numbers do not depend on the rows computed with it:
    /// sampling, where a token decoded alone from the KV cache must get exactly the numbers
    /// it gets in a pass over the whole window.
    Rows,
}

impl Linear {
    /// `y = x·W + b` over the `[B,T]` rows of `x`.
    pub fn forward(self, bt: [usize; 2], x: &[f32], w: &[f32], b: &[f32], y: &mut [f32]) {
        match self {
            Linear::Gemm => ops::linear_forward(bt, x, w, b, y),
            Linear::Rows => ops::linear_rows(x, w, b, y),
        }
    }

    /// `y = x·W + b` split into the column blocks `ys` (the attention's `q | k | v`, `k` and `v`
    /// `H_kv·D` wide): with sgemm, each block a product of its own written in place
    /// ([`ops::linear_forward_split`]; `y` is not used); row by row, `y` and then copies of its
    /// blocks.
    pub fn forward_split(self, bt: [usize; 2], x: &[f32], w: &[f32], b: &[f32], y: &mut [f32], ys: [&mut [f32]; 3]) {
        match self {
            Linear::Gemm => ops::linear_forward_split(bt, x, w, b, ys),
            Linear::Rows => {
                ops::linear_rows(x, w, b, y);
                let rows = bt[0] * bt[1];
                let mut o = 0;
                for part in ys {
                    let n = part.len() / rows;
                    for (dst, src) in part.chunks_exact_mut(n).zip(y.chunks_exact(b.len())) {
                        dst.copy_from_slice(&src[o..o + n]);
                    }
                    o += n;
                }
            }
        }
    }

    /// `y = x·W + b`, then `g = gelu(y)` (`th`: the tanh GELU's backward reuses), over the
    /// `[B,T]` rows of `x`: with sgemm, in one pass that adds the bias as it takes GELU.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_gelu(
        self,
        bt: [usize; 2],
        x: &[f32],
        w: &[f32],
        b: &[f32],
        y: &mut [f32],
        g: &mut [f32],
        th: &mut [f32],
    ) {
        match self {
            Linear::Gemm => ops::linear_gelu_forward(bt, x, w, b, y, g, th),
            Linear::Rows => {
                ops::linear_rows(x, w, b, y);
                ops::gelu_forward(y, g, th);
            }
        }
    }
}

/// Rotary positions: q and k of every position turned in place (the reference loops of
/// `kernels/rope.rs`, untraced), when the model uses them.
pub(crate) fn rope_forward(cfg: &Config, sh: Shape, tables: Option<&RopeTables>, a: &mut LayerActs) {
    if let (Some(pairs), Some(t)) = (cfg.rope, tables) {
        let rows = (0..sh.b, 0..sh.t);
        rope::forward(
            &mut NoRecord,
            sh,
            pairs,
            rows,
            (&t.cos, &t.sin),
            &mut a.q,
            (Buf::K, &mut a.k),
        );
    }
}

fn rope_backward(cfg: &Config, sh: Shape, tables: Option<&RopeTables>, g: &mut Grads) {
    if let (Some(pairs), Some(t)) = (cfg.rope, tables) {
        rope::backward(&mut NoRecord, sh, pairs, (&t.cos, &t.sin), &mut g.d_q, &mut g.d_k);
    }
}

/// The cosines and sines of the rotation, `[T, D/2]` ([`rope::tables`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RopeTables {
    pub cos: Vec<f32>,
    pub sin: Vec<f32>,
}

impl RopeTables {
    /// The tables of `cfg`'s rotation for positions `0..t`, or `None` without one.
    pub fn of(cfg: &Config, t: usize) -> Option<RopeTables> {
        let (cos, sin) = rope::tables(cfg.rotation()?, t, cfg.d_model / cfg.n_heads);
        Some(RopeTables { cos, sin })
    }
}

/// The attention core of one layer, causal, untraced: through the same dispatcher as the
/// engine, so one head runs the baseline variant, grouped key/value heads the GQA variant and
/// several heads otherwise the MHA variant, on the fast path that `tests/it/kernels_untraced.rs`
/// holds to the traced kernels bit for bit.
fn attention_forward(cfg: &Config, attention: Attention, sh: Shape, a: &mut LayerActs) {
    if let Some(tiles) = attention.flash_tiles(sh) {
        flash_forward(tiles, sh, a);
        return;
    }
    let v = cfg.variant();
    dispatch::forward_untraced(v, sh, &Mask::Causal, &a.q, &a.k, &a.v, &mut a.probs, &mut a.att);
}

fn attention_backward(cfg: &Config, attention: Attention, sh: Shape, a: &LayerActs, g: &mut Grads) {
    if let Some(tiles) = attention.flash_tiles(sh) {
        flash_backward(tiles, sh, a, g);
        return;
    }
    let v = cfg.variant();
    let grads = (&mut g.d_q[..], &mut g.d_k[..], &mut g.d_v[..]);
    dispatch::backward_untraced(v, sh, &Mask::Causal, (&a.q, &a.k, &a.v, &a.probs), &g.d_att, grads);
}

/// Flash's forward: `att` and `lse` tile by tile, in the tile-local buffers of one call.
fn flash_forward(tiles: FittedTiles, sh: Shape, a: &mut LayerActs) {
    let Tiles { br, bc } = tiles.sizes();
    let d = sh.d();
    let z = |n: usize| vec![0.0f32; n];
    let (mut q_t, mut k_t, mut v_t, mut s_t) = (z(br * d), z(bc * d), z(bc * d), z(br * bc));
    let (mut m, mut l, mut acc) = (z(br), z(br), z(br * d));
    let work = ForwardTiles {
        q_t: &mut q_t,
        k_t: &mut k_t,
        v_t: &mut v_t,
        s_t: &mut s_t,
        m: &mut m,
        l: &mut l,
        acc: &mut acc,
    };
    let qkv = (&a.q[..], &a.k[..], &a.v[..]);
    dispatch::flash_forward(
        &mut NoRecord,
        sh,
        tiles,
        &Mask::Causal,
        qkv,
        &mut a.att,
        &mut a.lse,
        work,
    );
}

/// Flash's backward: `d_q`, `d_k`, `d_v`, every probability recomputed from `lse`.
fn flash_backward(tiles: FittedTiles, sh: Shape, a: &LayerActs, g: &mut Grads) {
    let Tiles { br, bc } = tiles.sizes();
    let d = sh.d();
    let z = |n: usize| vec![0.0f32; n];
    let (mut q_t, mut k_t, mut v_t, mut s_t) = (z(br * d), z(bc * d), z(bc * d), z(br * bc));
    let (mut do_t, mut ds_t, mut dk_t, mut dv_t) = (z(br * d), z(br * bc), z(bc * d), z(bc * d));
    let mut delta = z(a.lse.len());
    let work = BackwardTiles {
        q_t: &mut q_t,
        k_t: &mut k_t,
        v_t: &mut v_t,
        s_t: &mut s_t,
        do_t: &mut do_t,
        ds_t: &mut ds_t,
        dk_t: &mut dk_t,
        dv_t: &mut dv_t,
    };
    dispatch::flash_backward(
        &mut NoRecord,
        sh,
        tiles,
        &Mask::Causal,
        (&a.q, &a.k, &a.v),
        (&a.att, &a.lse),
        &g.d_att,
        &mut delta,
        (&mut g.d_q, &mut g.d_k, &mut g.d_v),
        work,
    );
}

/// One layer's forward activations, kept for the backward pass.
#[derive(Clone, Debug)]
pub struct LayerActs {
    pub ln1: Vec<f32>,
    pub ln1_mean: Vec<f32>,
    pub ln1_rstd: Vec<f32>,
    pub qkv: Vec<f32>,
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
    /// The attention probabilities `[B,H,T,T]` (the scores are not kept: see
    /// [`dispatch::forward_untraced`]).
    pub probs: Vec<f32>,
    /// Flash's row log-sum-exp `[B,H,T]` (the naive kernels leave it at zero).
    pub lse: Vec<f32>,
    pub att: Vec<f32>,
    /// `att·W_proj + b_proj`: what the attention block adds to the residual stream.
    pub attn_out: Vec<f32>,
    pub res_mid: Vec<f32>,
    pub ln2: Vec<f32>,
    pub ln2_mean: Vec<f32>,
    pub ln2_rstd: Vec<f32>,
    pub fc: Vec<f32>,
    pub gelu: Vec<f32>,
    pub gelu_tanh: Vec<f32>,
    pub mlp_out: Vec<f32>,
    pub res_out: Vec<f32>,
}

/// Scratch gradients of the activations (the parameter gradients go to a flat buffer).
#[derive(Clone, Debug)]
pub struct Grads {
    pub d_logits: Vec<f32>,
    /// Gradient at the residual stream between blocks.
    pub d_res: Vec<f32>,
    /// Gradient at a layernorm's output.
    pub d_ln: Vec<f32>,
    pub d_gelu: Vec<f32>,
    pub d_fc: Vec<f32>,
    pub d_att: Vec<f32>,
    pub d_q: Vec<f32>,
    pub d_k: Vec<f32>,
    pub d_v: Vec<f32>,
}

/// Every buffer one forward and backward of `B` sequences of `T` tokens needs.
#[derive(Clone, Debug)]
pub struct Activations {
    pub b: usize,
    pub t: usize,
    pub shape: Shape,
    pub x0: Vec<f32>,
    pub layers: Vec<LayerActs>,
    pub lnf: Vec<f32>,
    pub lnf_mean: Vec<f32>,
    pub lnf_rstd: Vec<f32>,
    pub logits: Vec<f32>,
    pub probs: Vec<f32>,
    pub losses: Vec<f32>,
    pub grad: Grads,
    /// The rotation's tables for positions `0..t`, when the model uses rotary positions.
    pub rope: Option<RopeTables>,
}

/// Memory a run may ask for (activations and gradients of every shard plus parameters and
/// AdamW moments) before it is refused with a message instead of failing to allocate.
pub const MEMORY_BUDGET_BYTES: u128 = 8 << 30;

/// Bytes training `B` sequences of `T` tokens needs: the buffers of [`Activations::new`] and
/// [`Workspace::new`] (each shard's gradients), the parameters twice (AdamW writes the next
/// step's into the second copy) and AdamW's two moments.
pub fn training_bytes(cfg: &Config, b: usize, t: usize) -> u128 {
    let (b, t) = (b as u128, t as u128);
    let (C, V, H, L) = (
        cfg.d_model as u128,
        cfg.vocab_size as u128,
        cfg.n_heads as u128,
        cfg.n_layers as u128,
    );
    let rows = b * t;
    let att = b * H * t * t;
    // channels of k (and of v): H_kv·D; of qkv: C + 2·H_kv·D
    let KV = cfg.kv_channels() as u128;
    let QKV = C + 2 * KV;
    // per layer: 8 [rows,C], k and v, qkv, fc/gelu/tanh, 4 row statistics, probs, flash's row
    // log-sum-exp
    let layer = rows * (C * (8 + 12) + 2 * KV + QKV) + 4 * rows + att + b * H * t;
    // embedding and final LN outputs, logits and probs, statistics and losses
    let top = 2 * rows * C + 2 * rows * V + 3 * rows;
    // activation gradients: logits, 4 [rows,C], d_k and d_v, 2 [rows,4C]
    let grad = rows * V + rows * (4 * C + 2 * KV) + 8 * rows * C;
    let params = ParamLayout::new(cfg).total as u128;
    let shards = SHARDS.min(b as usize).max(1) as u128;
    4 * (L * layer + top + grad + params * (4 + shards))
}

impl Activations {
    pub fn new(cfg: &Config, b: usize, t: usize) -> Activations {
        let (C, V, H) = (cfg.d_model, cfg.vocab_size, cfg.n_heads);
        let KV = cfg.kv_channels();
        let rows = b * t;
        // the forward's outputs are written before they are read: left to the allocator, the
        // pages of a buffer a variant never uses (flash's `probs`) stay unmapped
        let z = |n: usize| vec![0.0f32; n];
        let layer = || LayerActs {
            ln1: z(rows * C),
            ln1_mean: z(rows),
            ln1_rstd: z(rows),
            qkv: z(rows * (C + 2 * KV)),
            q: z(rows * C),
            k: z(rows * KV),
            v: z(rows * KV),
            probs: z(b * H * t * t),
            lse: z(b * H * t),
            att: z(rows * C),
            attn_out: z(rows * C),
            res_mid: z(rows * C),
            ln2: z(rows * C),
            ln2_mean: z(rows),
            ln2_rstd: z(rows),
            fc: z(rows * 4 * C),
            gelu: z(rows * 4 * C),
            gelu_tanh: z(rows * 4 * C),
            mlp_out: z(rows * C),
            res_out: z(rows * C),
        };
        Activations {
            b,
            t,
            shape: cfg.shape(b, t),
            x0: z(rows * C),
            layers: (0..cfg.n_layers).map(|_| layer()).collect(),
            lnf: z(rows * C),
            lnf_mean: z(rows),
            lnf_rstd: z(rows),
            logits: z(rows * V),
            probs: z(rows * V),
            losses: z(rows),
            // every variant's backward writes all of these, every step
            grad: Grads {
                d_logits: super::zeros(rows * V),
                d_res: super::zeros(rows * C),
                d_ln: super::zeros(rows * C),
                d_gelu: super::zeros(rows * 4 * C),
                d_fc: super::zeros(rows * 4 * C),
                d_att: super::zeros(rows * C),
                d_q: super::zeros(rows * C),
                d_k: super::zeros(rows * KV),
                d_v: super::zeros(rows * KV),
            },
            rope: RopeTables::of(cfg, t),
        }
    }

    /// Σ of the per-position losses, accumulated in f64.
    pub fn loss_sum(&self) -> f64 {
        self.losses.iter().map(|&l| l as f64).sum()
    }
}

/// One thread's slice of a batch: sequences `first..first + acts.b`.
#[derive(Clone, Debug)]
pub struct Shard {
    pub first: usize,
    pub acts: Activations,
    pub grads: Vec<f32>,
}

/// Reusable buffers for batches of `B` sequences of `T` tokens, split into shards.
#[derive(Clone, Debug)]
pub struct Workspace {
    pub b: usize,
    pub t: usize,
    pub shards: Vec<Shard>,
}

impl Workspace {
    pub fn new(model: &TinyGpt, b: usize, t: usize) -> Workspace {
        let n = SHARDS.min(b).max(1);
        let mut first = 0;
        let shards = (0..n)
            .map(|s| {
                // split B as evenly as possible, earlier shards taking the remainder
                let size = b / n + usize::from(s < b % n);
                let shard = Shard {
                    first,
                    acts: Activations::new(&model.config, size, t),
                    grads: super::zeros(model.num_params()),
                };
                first += size;
                shard
            })
            .collect();
        Workspace { b, t, shards }
    }
}
