//! Checkpoints as safetensors files, loadable from PyTorch (`safetensors.torch.load_file`).
//!
//! Tensors (f32, little-endian): the model's parameters under the names of [`Layout`], and, for
//! resuming training, AdamW's moments as `adamw.m.<name>` and `adamw.v.<name>`. Metadata (all
//! plain strings): `vocab_size, seq_len, d_model, n_layers, n_heads, step`, and `format`,
//! `checksum` (FNV-1a over every tensor's bytes), and when optimizer state is present `lr, beta1,
//! beta2, eps, weight_decay, data_seed, data_rng_pos, dataset`.
//!
//! Saving writes a temporary file in the target's directory and renames it over the target, so
//! an interrupted save leaves the previous checkpoint intact. Loading checks the header length
//! against the file size before parsing, then every tensor's name, dtype and shape against the
//! configuration in the metadata.

use super::gpt::{Config, Layout, TinyGpt};
use super::{AdamW, ModelError};
use safetensors::{Dtype, SafeTensors, tensor::TensorView};
use std::collections::HashMap;
use std::path::Path;

/// The `format` metadata value of our checkpoints.
pub const FORMAT: &str = "attn-trace-tinygpt";

/// Files larger than this are refused before being read (our largest configs are far smaller).
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// What resuming training needs besides the weights.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainState {
    pub opt: AdamW,
    /// Seed and position (in 32-bit words) of the generator that draws training windows.
    pub data_seed: u64,
    pub data_rng_pos: u128,
    /// Name of the data trained on (informational).
    pub dataset: String,
}

/// A loaded checkpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    pub model: TinyGpt,
    pub step: u64,
    /// Present when the file holds the optimizer state.
    pub state: Option<TrainState>,
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// FNV-1a, 64-bit, over bytes: detects a flipped bit anywhere in the tensor data.
fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Writes `model` (and `state`, for resuming) to `path` atomically.
pub fn save(path: &Path, model: &TinyGpt, step: u64, state: Option<&TrainState>) -> Result<(), ModelError> {
    let err = |msg: String| ModelError::Checkpoint {
        path: path.display().to_string(),
        msg,
    };
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
    let mut checksum = FNV_OFFSET;
    for (_, _, bytes) in &named {
        fnv1a(&mut checksum, bytes);
    }
    let mut meta: HashMap<String, String> = HashMap::new();
    let mut put = |k: &str, v: String| meta.insert(k.to_string(), v);
    put("format", FORMAT.to_string());
    put("vocab_size", cfg.vocab_size.to_string());
    put("seq_len", cfg.seq_len.to_string());
    put("d_model", cfg.d_model.to_string());
    put("n_layers", cfg.n_layers.to_string());
    put("n_heads", cfg.n_heads.to_string());
    put("step", step.to_string());
    put("checksum", format!("{checksum:016x}"));
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
    let views = named
        .iter()
        .map(|(name, shape, bytes)| {
            TensorView::new(Dtype::F32, shape.clone(), bytes)
                .map(|v| (name.clone(), v))
                .map_err(|e| err(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let bytes = safetensors::serialize(views, Some(meta)).map_err(|e| err(e.to_string()))?;
    crate::atomic::write(path, &bytes).map_err(|e| err(e.to_string()))
}

impl TinyGpt {
    /// Saves the weights alone (no optimizer state: enough for `eval`, `sample` and tracing),
    /// atomically, recording `step` in the metadata.
    pub fn save(&self, path: &Path, step: u64) -> Result<(), ModelError> {
        save(path, self, step, None)
    }

    /// The model of a checkpoint, ignoring any optimizer state in it.
    pub fn load(path: &Path) -> Result<TinyGpt, ModelError> {
        Ok(load(path)?.model)
    }
}

/// Reads and checks a checkpoint.
pub fn load(path: &Path) -> Result<Loaded, ModelError> {
    let err = |msg: String| ModelError::Checkpoint {
        path: path.display().to_string(),
        msg,
    };
    let size = std::fs::metadata(path).map_err(|e| err(e.to_string()))?.len();
    if size > MAX_FILE_BYTES {
        return Err(err(format!(
            "{size} bytes is larger than any checkpoint this tool writes ({MAX_FILE_BYTES} at most)"
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| err(e.to_string()))?;
    parse(&bytes).map_err(err)
}

/// Parses checkpoint bytes; the error is the message without the path.
pub fn parse(bytes: &[u8]) -> Result<Loaded, String> {
    // the first 8 bytes give the header length: check it against the size before trusting it
    let Some(len_bytes) = bytes.get(..8) else {
        return Err(format!(
            "not a safetensors checkpoint: {} bytes is shorter than the 8-byte header length",
            bytes.len()
        ));
    };
    let mut n = [0u8; 8];
    n.copy_from_slice(len_bytes);
    let header_len = u64::from_le_bytes(n);
    if header_len > (bytes.len() - 8) as u64 {
        return Err(format!(
            "truncated or not a safetensors checkpoint: the header claims {header_len} bytes but the file has {} after \
             the length",
            bytes.len() - 8
        ));
    }
    let st = SafeTensors::deserialize(bytes)
        .map_err(|e| format!("not a valid safetensors checkpoint (truncated or corrupted?): {e}"))?;
    let (_, header) =
        SafeTensors::read_metadata(bytes).map_err(|e| format!("not a valid safetensors checkpoint: {e}"))?;
    let meta = header.metadata().clone().unwrap_or_default();
    let get = |key: &str| {
        meta.get(key)
            .ok_or_else(|| format!("metadata has no '{key}': not a TinyGPT checkpoint"))
    };
    let num = |key: &str| -> Result<usize, String> {
        let v = get(key)?;
        v.parse()
            .map_err(|_| format!("metadata '{key}' is '{v}', expected a whole number"))
    };
    if let Some(f) = meta.get("format")
        && f != FORMAT
    {
        return Err(format!("metadata 'format' is '{f}', expected '{FORMAT}'"));
    }
    let config = Config {
        vocab_size: num("vocab_size")?,
        seq_len: num("seq_len")?,
        d_model: num("d_model")?,
        n_layers: num("n_layers")?,
        n_heads: num("n_heads")?,
    };
    config.validate().map_err(|e| format!("metadata: {e}"))?;
    let step: u64 = get("step")?
        .parse()
        .map_err(|_| "metadata 'step' is not a whole number".to_string())?;

    let layout = Layout::new(&config);
    let mut checksum = FNV_OFFSET;
    let mut read = |name: &str, shape: &[usize], out: &mut [f32]| -> Result<(), String> {
        let t = st
            .tensor(name)
            .map_err(|_| format!("tensor '{name}' is missing (the metadata says {config:?})"))?;
        if t.dtype() != Dtype::F32 {
            return Err(format!("tensor '{name}' is {:?}, expected F32", t.dtype()));
        }
        if t.shape() != shape {
            return Err(format!(
                "tensor '{name}' has shape {:?}, but the metadata's config needs {shape:?}",
                t.shape()
            ));
        }
        fnv1a(&mut checksum, t.data());
        for (o, c) in out.iter_mut().zip(t.data().chunks_exact(4)) {
            *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        Ok(())
    };
    let mut params = vec![0.0; layout.total];
    let has_state = st.names().iter().any(|n| n.starts_with("adamw."));
    let (mut m, mut v) = if has_state {
        (vec![0.0; layout.total], vec![0.0; layout.total])
    } else {
        (Vec::new(), Vec::new())
    };
    // same order as `save`, so the checksum covers the same bytes
    for spec in &layout.specs {
        let range = spec.offset..spec.offset + spec.len;
        read(&spec.name, &spec.shape, &mut params[range.clone()])?;
        if has_state {
            read(&format!("adamw.m.{}", spec.name), &spec.shape, &mut m[range.clone()])?;
            read(&format!("adamw.v.{}", spec.name), &spec.shape, &mut v[range])?;
        }
    }
    if let Some(want) = meta.get("checksum")
        && *want != format!("{checksum:016x}")
    {
        return Err(format!(
            "corrupted: the tensor data's checksum is {checksum:016x}, the metadata says {want}"
        ));
    }
    if let Some(spec) = layout
        .specs
        .iter()
        .find(|s| params[s.offset..s.offset + s.len].iter().any(|x| !x.is_finite()))
    {
        return Err(format!(
            "corrupted: tensor '{}' holds a NaN or infinite value",
            spec.name
        ));
    }
    let state = if has_state {
        let f = |key: &str| -> Result<f32, String> {
            let v = get(key)?;
            v.parse()
                .ok()
                .filter(|x: &f32| x.is_finite())
                .ok_or_else(|| format!("metadata '{key}' is '{v}', expected a number"))
        };
        let int = |key: &str| -> Result<u128, String> {
            let v = get(key)?;
            v.parse()
                .map_err(|_| format!("metadata '{key}' is '{v}', expected a whole number"))
        };
        let opt = AdamW {
            lr: f("lr")?,
            beta1: f("beta1")?,
            beta2: f("beta2")?,
            eps: f("eps")?,
            weight_decay: f("weight_decay")?,
            t: u64::try_from(int("adamw_t")?).map_err(|_| "metadata 'adamw_t' is too large".to_string())?,
            m,
            v,
        };
        Some(TrainState {
            opt,
            data_seed: u64::try_from(int("data_seed")?).map_err(|_| "metadata 'data_seed' is too large".to_string())?,
            data_rng_pos: int("data_rng_pos")?,
            dataset: meta.get("dataset").cloned().unwrap_or_default(),
        })
    } else {
        None
    };
    let model = TinyGpt { config, layout, params };
    Ok(Loaded { model, step, state })
}
