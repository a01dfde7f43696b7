//! The buffers of a pass (llm.c's `ActivationTensors`): one layer's forward activations, the
//! activations' gradients, a batch's [`Activations`], the per-thread [`Workspace`], and the
//! memory all of it takes.

use super::{Attention, Config, ParamLayout, RopeTables, SHARDS, TinyGpt};
use crate::zeros;
use attn_trace_core::kernels::attention_flash::Tiles;
use attn_trace_core::tensor::Shape;

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
    /// [`attn_trace_core::untraced::dispatch::forward_untraced`]).
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

impl Activations {
    /// The buffers of the naive kernel, which keeps the `[B,H,T,T]` probabilities.
    pub fn new(cfg: &Config, b: usize, t: usize) -> Activations {
        Activations::for_attention(cfg, Attention::Naive, b, t)
    }

    /// The buffers of a run with `attention`: flash keeps no `[B,H,T,T]` probabilities (its
    /// `probs` are empty), only the row log-sum-exp `lse`.
    pub fn for_attention(cfg: &Config, attention: Attention, b: usize, t: usize) -> Activations {
        let (C, V, H) = (cfg.d_model, cfg.vocab_size, cfg.n_heads);
        let KV = cfg.kv_channels();
        let rows = b * t;
        let z = |n: usize| vec![0.0f32; n];
        let att = match attention {
            Attention::Naive => b * H * t * t,
            Attention::Flash(_) => 0,
        };
        let layer = || LayerActs {
            ln1: z(rows * C),
            ln1_mean: z(rows),
            ln1_rstd: z(rows),
            qkv: z(rows * (C + 2 * KV)),
            q: z(rows * C),
            k: z(rows * KV),
            v: z(rows * KV),
            probs: z(att),
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
                d_logits: zeros(rows * V),
                d_res: zeros(rows * C),
                d_ln: zeros(rows * C),
                d_gelu: zeros(rows * 4 * C),
                d_fc: zeros(rows * 4 * C),
                d_att: zeros(rows * C),
                d_q: zeros(rows * C),
                d_k: zeros(rows * KV),
                d_v: zeros(rows * KV),
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
                    acts: Activations::for_attention(&model.config, model.attention, size, t),
                    grads: zeros(model.num_params()),
                };
                first += size;
                shard
            })
            .collect();
        Workspace { b, t, shards }
    }
}

/// Memory a run may ask for (activations and gradients of every shard plus parameters and
/// AdamW moments) before it is refused with a message instead of failing to allocate.
pub const MEMORY_BUDGET_BYTES: u128 = 8 << 30;

/// Bytes training `B` sequences of `T` tokens with `attention` needs: the buffers of
/// [`Activations::for_attention`] and [`Workspace::new`] (each shard's gradients), the
/// parameters twice (AdamW writes the next step's into the second copy), AdamW's two moments,
/// and each shard's attention scratch while a layer's attention runs. The naive kernel's grow as
/// T² (the `[B,H,T,T]` probabilities, and one head's `dP` and `dS`); flash's only as T.
pub fn training_bytes(cfg: &Config, attention: Attention, b: usize, t: usize) -> u128 {
    let shape = cfg.shape(b, t);
    let (b, t) = (b as u128, t as u128);
    let (C, V, H, L) = (
        cfg.d_model as u128,
        cfg.vocab_size as u128,
        cfg.n_heads as u128,
        cfg.n_layers as u128,
    );
    let rows = b * t;
    let att = match attention {
        Attention::Naive => b * H * t * t,
        Attention::Flash(_) => 0,
    };
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
    // a shard's attention scratch: naive's backward keeps one head's dP and dS (its forward's
    // one block of scores is less); flash's backward one head's packed k, kᵀ, vᵀ, q and dO, its
    // tiles, and D_i of the shard's rows
    let scratch = match attention {
        Attention::Naive => 2 * t * t,
        Attention::Flash(tiles) => {
            let Tiles { br, bc } = tiles.fit(shape).sizes();
            let (br, bc, bcp) = (br as u128, bc as u128, bc.next_multiple_of(4) as u128);
            let D = C / H;
            5 * t * D + 2 * br * bcp + 2 * bc * D + b.div_ceil(shards) * H * t
        }
    };
    4 * (L * layer + top + grad + params * (4 + shards) + shards * scratch)
}
