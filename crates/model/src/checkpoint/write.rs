//! Saving: a model (and its optimizer state) checked, encoded as safetensors with its metadata
//! and checksum, and written atomically.

use super::checks::{check_finite, check_state};
use super::checksum::checksum;
use super::{FORMAT, TrainState};
use crate::ModelError;
use crate::gpt::{SlidingWindow, TinyGpt};
use crate::spec::rope_name;
use attn_trace_i18n::tr;
use safetensors::Dtype;
use safetensors::tensor::TensorView;
use std::collections::HashMap;
use std::path::Path;

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Writes `model` (and `state`, for resuming) to `path` atomically. A model or a state that
/// [`load`](super::load) would refuse (a NaN weight after a diverged run, say) is refused here,
/// and the file at `path` is left as it was.
pub fn save(path: &Path, model: &TinyGpt, step: u64, state: Option<&TrainState>) -> Result<(), ModelError> {
    let bytes = encode(path, model, step, state)?;
    attn_trace_core::files::atomic::write(path, &bytes).map_err(|e| ModelError::Checkpoint {
        path: path.display().to_string(),
        msg: e.to_string(),
    })
}

/// The bytes [`save`] writes to `path` (which errors name), for a caller that opened the file
/// itself (`train --save` opens it before training, to refuse one it cannot write).
pub fn encode(path: &Path, model: &TinyGpt, step: u64, state: Option<&TrainState>) -> Result<Vec<u8>, ModelError> {
    let err = |msg: String| ModelError::Checkpoint {
        path: path.display().to_string(),
        msg,
    };
    let refuse = |msg: String| err(tr!("not saved: {msg}", msg));
    check_finite(&model.layout, &model.params, "").map_err(refuse)?;
    if let Some(st) = state {
        check_state(&model.layout, st, step).map_err(refuse)?;
    }
    let cfg = &model.config;
    let mut named: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for spec in &model.layout.specs {
        let range = spec.offset..spec.offset + spec.len;
        named.push((
            spec.name.clone(),
            spec.shape.clone(),
            f32_bytes(&model.params[range.clone()]),
        ));
        if let Some(st) = state {
            named.push((
                format!("adamw.m.{}", spec.name),
                spec.shape.clone(),
                f32_bytes(&st.opt.m[range.clone()]),
            ));
            named.push((
                format!("adamw.v.{}", spec.name),
                spec.shape.clone(),
                f32_bytes(&st.opt.v[range]),
            ));
        }
    }
    let mut meta: HashMap<String, String> = HashMap::new();
    let mut put = |k: &str, v: String| meta.insert(k.to_string(), v);
    put("format", FORMAT.to_string());
    put("vocab_size", cfg.vocab_size.to_string());
    put("seq_len", cfg.seq_len.to_string());
    put("d_model", cfg.d_model.to_string());
    put("n_layers", cfg.n_layers.to_string());
    put("n_heads", cfg.n_heads.to_string());
    put("n_kv_heads", cfg.kv_heads().to_string());
    put("rope", rope_name(cfg.rope).to_string());
    if let Some(SlidingWindow { w, sinks }) = cfg.sliding {
        put("window", w.to_string());
        put("sinks", sinks.to_string());
    }
    put("step", step.to_string());
    if let Some(st) = state {
        put("lr", st.opt.lr.to_string());
        put("beta1", st.opt.beta1.to_string());
        put("beta2", st.opt.beta2.to_string());
        put("eps", st.opt.eps.to_string());
        put("weight_decay", st.opt.weight_decay.to_string());
        put("adamw_t", st.opt.t.to_string());
        put("data_seed", st.data_seed.to_string());
        put("data_rng_pos", st.data_rng_pos.to_string());
        put("dataset", st.dataset.clone());
    }
    let sum = checksum(
        false,
        &meta,
        named.iter().map(|(n, s, b)| (n.as_str(), s.as_slice(), b.as_slice())),
    );
    meta.insert("checksum".into(), sum);
    let views = named
        .iter()
        .map(|(name, shape, bytes)| {
            TensorView::new(Dtype::F32, shape.clone(), bytes)
                .map(|v| (name.clone(), v))
                .map_err(|e| err(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::serialize(views, Some(meta)).map_err(|e| err(e.to_string()))
}
