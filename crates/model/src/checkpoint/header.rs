//! A checkpoint's header checked before any tensor is read: the metadata and the configuration
//! it names, then every tensor's name, dtype and shape.

use super::{ATTENTION_KEYS, CheckedHeader, FORMAT, FORMAT_V1, MODEL_KEYS, STATE_KEYS};
use crate::gpt::{Config, ParamLayout, SlidingWindow};
use crate::spec::NO_ROPE;
use attn_trace_core::kernels::rope::Pairs;
use attn_trace_i18n::tr;
use safetensors::Dtype;
use safetensors::tensor::{Metadata, TensorInfo};
use std::collections::HashMap;

/// Checks a header against the `data_len` bytes that follow it, without reading them: the
/// metadata (every key known, the configuration valid, a checksum present), then the tensors
/// (exactly those of the configuration, as F32 of the right shapes, filling the data).
pub(super) fn plan(header: &[u8], data_len: u64) -> Result<CheckedHeader, String> {
    let metadata: Metadata = serde_json::from_slice(header)
        .map_err(|e| tr!("not a valid safetensors checkpoint (truncated or corrupted?): {e}", e))?;
    if metadata.data_len() as u64 != data_len {
        return Err(tr!(
            "truncated or corrupted: the header describes {n} bytes of tensors but the file holds {data_len}",
            n = metadata.data_len(),
            data_len
        ));
    }
    let meta = metadata.metadata().clone().unwrap_or_default();
    let get = |key: &str| {
        meta.get(key)
            .ok_or_else(|| tr!("metadata has no '{key}': not a TinyGPT checkpoint", key))
    };
    let num = |key: &str| -> Result<usize, String> {
        let v = get(key)?;
        digits(v).ok_or_else(|| tr!("metadata '{key}' is '{v}', expected a whole number", key, v))
    };
    let mut config = Config {
        vocab_size: num("vocab_size")?,
        seq_len: num("seq_len")?,
        d_model: num("d_model")?,
        n_layers: num("n_layers")?,
        n_heads: num("n_heads")?,
        ..Config::default()
    };
    // both absent in checkpoints older than grouped heads and rotary positions: one key/value
    // head per query head, no rotation
    if meta.contains_key("n_kv_heads") {
        config.n_kv_heads = Some(num("n_kv_heads")?);
    }
    config.rope = match meta.get("rope").map(String::as_str) {
        None | Some(NO_ROPE) => None,
        Some(name) => Some(
            Pairs::from_name(name)
                .ok_or_else(|| tr!("metadata 'rope' is '{name}', expected none, interleaved or half", name))?,
        ),
    };
    // a sliding window is saved as both of its numbers, or neither
    config.sliding = match (meta.contains_key("window"), meta.contains_key("sinks")) {
        (false, false) => None,
        (true, true) => Some(SlidingWindow {
            w: num("window")?,
            sinks: num("sinks")?,
        }),
        (true, false) => return Err(tr!("metadata has 'window' but no 'sinks'").to_string()),
        (false, true) => return Err(tr!("metadata has 'sinks' but no 'window'").to_string()),
    };
    let config = config.normalized();
    let v1 = match get("format")
        .map_err(|_| tr!("metadata has no 'format': not a TinyGPT checkpoint written by attn-trace").to_string())?
    {
        f if f == FORMAT => false,
        f if f == FORMAT_V1 => true,
        f => {
            return Err(tr!(
                "metadata 'format' is '{f}', expected '{format}'",
                f,
                format = FORMAT
            ));
        }
    };
    config.validate().map_err(|e| tr!("metadata: {e}", e))?;
    let step: u64 = digits(get("step")?).ok_or_else(|| tr!("metadata 'step' is not a whole number").to_string())?;
    let infos: HashMap<String, TensorInfo> = metadata.tensors().into_iter().map(|(k, v)| (k, v.clone())).collect();
    let has_state = infos.keys().any(|n| n.starts_with("adamw."));
    let mut unknown: Vec<&String> = meta
        .keys()
        .filter(|k| {
            let k = k.as_str();
            !(MODEL_KEYS.contains(&k) || ATTENTION_KEYS.contains(&k) || has_state && STATE_KEYS.contains(&k))
        })
        .collect();
    unknown.sort();
    if let Some(k) = unknown.first() {
        let why = if STATE_KEYS.contains(&k.as_str()) {
            tr!(
                "metadata key '{k}' is an optimizer setting, but the file holds no adamw.* tensors",
                k
            )
        } else {
            tr!("metadata key '{k}' is not a key of TinyGPT checkpoints", k)
        };
        return Err(why);
    }
    if has_state && let Some(k) = STATE_KEYS.iter().find(|k| !meta.contains_key(**k)) {
        return Err(tr!(
            "metadata has no '{k}', which the optimizer state in the file needs",
            k
        ));
    }
    if !meta.contains_key("checksum") {
        return Err(tr!(
            "metadata has no 'checksum': every checkpoint attn-trace writes has one, so this file was altered or \
             not written by attn-trace"
        )
        .into());
    }

    // the bytes the configuration needs, before any tensor is looked at: a small file that
    // claims a big model is refused here
    let layout = ParamLayout::new(&config);
    let copies: u128 = if has_state { 3 } else { 1 };
    let need = layout.total as u128 * 4 * copies;
    if (data_len as u128) < need {
        return Err(tr!(
            "the metadata's configuration (T={T} C={C} L={L} H={H} H_kv={H_kv}{state}) needs {need} bytes of tensors, but the file holds {data_len} bytes",
            T = config.seq_len,
            C = config.d_model,
            L = config.n_layers,
            H = config.n_heads,
            H_kv = config.kv_heads(),
            state = if has_state { tr!(", with optimizer state") } else { "" },
            need,
            data_len
        ));
    }
    let mut expected: Vec<(String, &[usize])> = Vec::new();
    for spec in &layout.specs {
        expected.push((spec.name.clone(), &spec.shape));
        if has_state {
            expected.push((format!("adamw.m.{}", spec.name), &spec.shape));
            expected.push((format!("adamw.v.{}", spec.name), &spec.shape));
        }
    }
    let mut extra: Vec<&String> = infos
        .keys()
        .filter(|n| !expected.iter().any(|(e, _)| e == *n))
        .collect();
    extra.sort();
    if !extra.is_empty() {
        let shown: Vec<String> = extra.iter().take(3).map(|n| format!("'{n}'")).collect();
        let more = if extra.len() > 3 {
            tr!(" and {n} more", n = extra.len() - 3)
        } else {
            String::new()
        };
        return Err(tr!(
            "tensor {names}{more} is not part of a TinyGPT checkpoint of this configuration ({config})",
            names = shown.join(tr!(", ")),
            more,
            config = format!("{config:?}")
        ));
    }
    for (name, shape) in &expected {
        let t = infos.get(name).ok_or_else(|| {
            tr!(
                "tensor '{name}' is missing (the metadata says {config})",
                name,
                config = format!("{config:?}")
            )
        })?;
        if t.dtype != Dtype::F32 {
            return Err(tr!(
                "tensor '{name}' is {dtype}, expected F32",
                name,
                dtype = format!("{:?}", t.dtype)
            ));
        }
        if t.shape != *shape {
            return Err(tr!(
                "tensor '{name}' has shape {have}, but the metadata's config needs {want}",
                name,
                have = format!("{:?}", t.shape),
                want = format!("{shape:?}")
            ));
        }
    }
    Ok(CheckedHeader {
        config,
        layout,
        step,
        v1,
        meta,
        infos,
        has_state,
    })
}

/// A whole number as a checkpoint writes it: decimal digits only. Rust's `parse` also takes a
/// leading `+`, which no checkpoint of ours holds (a file that has one was edited).
pub(super) fn digits<T: std::str::FromStr>(v: &str) -> Option<T> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}
