//! Handing a trained layer's attention to the tracer: the inputs `engine::run` needs to replay
//! that layer's attention block, traced, on a prompt.

use super::ModelError;
use super::gpt::{Activations, Tap, TinyGpt};
use attn_trace_core::engine::{Inputs, Start};
use attn_trace_core::kernels::Variant;
use attn_trace_i18n::tr;

/// One layer's attention block on a prompt: everything the engine needs, plus what the model
/// itself computed there, for comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct AttentionCapture {
    pub layer: usize,
    pub prompt: Vec<u8>,
    /// `Baseline` for one head, `Gqa` when key/value heads are shared, `Mha` otherwise: the
    /// kernel training ran.
    pub variant: Variant,
    /// Shape `B=1, T=prompt length` (with the model's `H_kv`); starts at `x = LN(residual)
    /// [1,T,C]` with the layer's `w_qkv, b_qkv`; projection `w_proj, b_proj`; causal mask; the
    /// model's rotary positions; `d_out` as below.
    pub inputs: Inputs,
    /// The block's output `att·W_proj + b_proj [1,T,C]` as the model computed it.
    pub out: Vec<f32>,
    /// Gradient of the loss at the block's input `x` (the LN output), as the model computed it.
    pub d_x: Vec<f32>,
    /// Mean next-token loss over the prompt's `T−1` known targets (NaN for a 1-byte prompt).
    pub loss: f32,
}

impl TinyGpt {
    /// Runs the prompt (`1..=seq_len` bytes) through the model, with the loss of predicting each
    /// next byte of the prompt (the last position has no target, so its gradient is zero), and
    /// captures layer `layer`'s attention block: its input, weights, and `d_out`, the gradient
    /// of that loss at the block's output. `engine::run(&capture.inputs, capture.variant, ..)`
    /// then replays exactly what training computes there.
    pub fn layer_attention_inputs(&self, prompt: &[u8], layer: usize) -> Result<AttentionCapture, ModelError> {
        let cfg = &self.config;
        if prompt.is_empty() || prompt.len() > cfg.seq_len {
            return Err(ModelError::Input(tr!(
                "the prompt has {n} bytes; tracing a layer needs 1..={max} (the model's seq_len)",
                n = prompt.len(),
                max = cfg.seq_len
            )));
        }
        if layer >= cfg.n_layers {
            return Err(ModelError::Input(tr!(
                "layer {layer} does not exist: the model has {n} (0..={last})",
                layer,
                n = cfg.n_layers,
                last = cfg.n_layers - 1
            )));
        }
        let t = prompt.len();
        let rows = t - 1;
        let mut targets = prompt[1..].to_vec();
        targets.push(0); // the last position's target is unknown; its loss is left out below
        let mut acts = Activations::new(cfg, 1, t);
        self.forward(&mut acts, prompt, Some(&targets));
        let loss = (acts.losses[..rows].iter().map(|&l| l as f64).sum::<f64>() / rows as f64) as f32;
        let mut grads = vec![0.0; self.num_params()];
        let mut tap = Tap {
            layer,
            ..Tap::default()
        };
        let scale = 1.0 / rows.max(1) as f32;
        self.backward_rows(&mut acts, prompt, &targets, scale, rows, &mut grads, Some(&mut tap));

        let p = |name: &str| self.param(&format!("blocks.{layer}.{name}")).map(<[f32]>::to_vec);
        let missing = || ModelError::Input(tr!("layer {layer} has no parameters", layer));
        let a = &acts.layers[layer];
        // weights that overflow f32 on the way: a map of NaNs would teach nothing
        let finite = |v: &[f32]| v.iter().all(|x| x.is_finite());
        if !(finite(&a.ln1) && finite(&a.attn_out) && finite(&tap.d_out)) {
            return Err(ModelError::Input(tr!(
                "layer {layer}'s attention is not finite on this prompt: the model's weights overflow f32",
                layer
            )));
        }
        let shape = cfg.shape(1, t);
        let start = Start::X {
            x: a.ln1.clone(),
            w_qkv: p("w_qkv").ok_or_else(missing)?,
            b_qkv: p("b_qkv").ok_or_else(missing)?,
        };
        let inputs = Inputs::new(shape, cfg.mask(), start, tap.d_out)
            .with_proj(p("w_proj").ok_or_else(missing)?, p("b_proj").ok_or_else(missing)?)
            .with_rope(cfg.rotation());
        Ok(AttentionCapture {
            layer,
            prompt: prompt.to_vec(),
            variant: cfg.variant(),
            inputs,
            out: a.attn_out.clone(),
            d_x: tap.d_x,
            loss: if rows == 0 { f32::NAN } else { loss },
        })
    }
}
