//! Loading: the length and the header read and checked first (`header.rs`), then the tensors,
//! their checksum and their values.

use super::checks::{check_finite, check_state};
use super::checksum::checksum;
use super::header::{digits, plan};
use super::{CheckedHeader, Loaded, MAX_FILE_BYTES, MAX_HEADER_BYTES, TrainState};
use crate::gpt::{Attention, TinyGpt};
use crate::{AdamW, ModelError};
use attn_trace_core::files::input::{ReadError, human_bytes};
use attn_trace_i18n::tr;
use std::io::Read;
use std::path::Path;

/// Reads and checks a checkpoint: the length, then the header alone, and the tensors only once
/// the header describes exactly the tensors of the configuration it names.
pub fn load(path: &Path) -> Result<Loaded, ModelError> {
    let err = |msg: String| ModelError::Checkpoint {
        path: path.display().to_string(),
        msg,
    };
    let (mut file, size) = attn_trace_core::files::input::open_regular(path).map_err(|e| err(e.to_string()))?;
    if size > MAX_FILE_BYTES {
        return Err(err(tr!(
            "{size} bytes is larger than any checkpoint this tool writes ({max} at most)",
            size,
            max = human_bytes(MAX_FILE_BYTES)
        )));
    }
    let io = |e: std::io::Error| err(ReadError::Io(e).to_string());
    let mut len_bytes = [0u8; 8];
    if size < 8 {
        return Err(err(too_short(size)));
    }
    file.read_exact(&mut len_bytes).map_err(io)?;
    let header_len = header_length(len_bytes, size - 8).map_err(err)?;
    let mut header = vec![0u8; header_len as usize];
    file.read_exact(&mut header).map_err(io)?;
    let data_len = size - 8 - header_len;
    let plan = plan(&header, data_len).map_err(err)?;
    // only now, with a header that describes exactly this configuration's tensors, the tensors
    let mut data = Vec::with_capacity(data_len as usize);
    file.take(data_len).read_to_end(&mut data).map_err(io)?;
    if data.len() as u64 != data_len {
        return Err(err(tr!("the file shrank while it was read").into()));
    }
    decode(plan, &data).map_err(err)
}

fn too_short(size: u64) -> String {
    tr!(
        "not a safetensors checkpoint: {size} bytes is shorter than the 8-byte header length",
        size
    )
}

/// The header length, checked against the `rest` of the file after it and against the largest
/// header a checkpoint has.
fn header_length(len_bytes: [u8; 8], rest: u64) -> Result<u64, String> {
    let header_len = u64::from_le_bytes(len_bytes);
    if header_len > rest {
        return Err(tr!(
            "truncated or not a safetensors checkpoint: the header claims {header_len} bytes but the file has {rest} \
             after the length",
            header_len,
            rest
        ));
    }
    if header_len > MAX_HEADER_BYTES {
        return Err(tr!(
            "not a TinyGPT checkpoint: its header of {header_len} bytes is larger than any checkpoint's ({max} at most)",
            header_len,
            max = human_bytes(MAX_HEADER_BYTES)
        ));
    }
    Ok(header_len)
}

/// Parses checkpoint bytes; the error is the message without the path.
pub fn parse(bytes: &[u8]) -> Result<Loaded, String> {
    let Some(len_bytes) = bytes.get(..8) else {
        return Err(too_short(bytes.len() as u64));
    };
    let mut n = [0u8; 8];
    n.copy_from_slice(len_bytes);
    let header_len = header_length(n, bytes.len() as u64 - 8)? as usize;
    let (header, data) = bytes[8..].split_at(header_len);
    decode(plan(header, data.len() as u64)?, data)
}

/// Reads the tensors a checked header promised from its `data`, then checks the checksum and
/// the values.
fn decode(plan: CheckedHeader, data: &[u8]) -> Result<Loaded, String> {
    let CheckedHeader {
        config,
        layout,
        step,
        v1,
        meta,
        infos,
        has_state,
    } = plan;
    let bytes_of = |name: &str| -> &[u8] {
        let (s, e) = infos[name].data_offsets;
        &data[s..e]
    };
    // same order as `save`, so the checksum covers the same bytes
    let mut order: Vec<(String, &[usize])> = Vec::new();
    for spec in &layout.specs {
        order.push((spec.name.clone(), &spec.shape));
        if has_state {
            order.push((format!("adamw.m.{}", spec.name), &spec.shape));
            order.push((format!("adamw.v.{}", spec.name), &spec.shape));
        }
    }
    let want = &meta["checksum"];
    let have = checksum(v1, &meta, order.iter().map(|(n, s)| (n.as_str(), *s, bytes_of(n))));
    if *want != have {
        return Err(if v1 {
            tr!(
                "corrupted: the checksum of the tensor data is {have}, the metadata says {want}",
                have,
                want
            )
        } else {
            tr!(
                "corrupted: the checksum of the metadata and tensors is {have}, the metadata says {want}",
                have,
                want
            )
        });
    }
    let floats = |name: &str, out: &mut [f32]| {
        for (o, c) in out.iter_mut().zip(bytes_of(name).chunks_exact(4)) {
            *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
    };
    let mut params = vec![0.0; layout.total];
    let (mut m, mut v) = if has_state {
        (vec![0.0; layout.total], vec![0.0; layout.total])
    } else {
        (Vec::new(), Vec::new())
    };
    for spec in &layout.specs {
        let range = spec.offset..spec.offset + spec.len;
        floats(&spec.name, &mut params[range.clone()]);
        if has_state {
            floats(&format!("adamw.m.{}", spec.name), &mut m[range.clone()]);
            floats(&format!("adamw.v.{}", spec.name), &mut v[range]);
        }
    }
    check_finite(&layout, &params, "").map_err(|e| tr!("corrupted: {e}", e))?;
    let state = if has_state {
        let f = |key: &str| -> Result<f32, String> {
            let v = &meta[key];
            v.parse()
                .ok()
                .filter(|x: &f32| !x.is_nan())
                .ok_or_else(|| tr!("metadata '{key}' is '{v}', expected a number", key, v))
        };
        let int = |key: &str| -> Result<u128, String> {
            let v = &meta[key];
            digits(v).ok_or_else(|| tr!("metadata '{key}' is '{v}', expected a whole number", key, v))
        };
        let opt = AdamW {
            lr: f("lr")?,
            beta1: f("beta1")?,
            beta2: f("beta2")?,
            eps: f("eps")?,
            weight_decay: f("weight_decay")?,
            t: u64::try_from(int("adamw_t")?).map_err(|_| tr!("metadata 'adamw_t' is too large").to_string())?,
            m,
            v,
        };
        let st = TrainState {
            opt,
            data_seed: u64::try_from(int("data_seed")?)
                .map_err(|_| tr!("metadata 'data_seed' is too large").to_string())?,
            data_rng_pos: int("data_rng_pos")?,
            dataset: meta["dataset"].clone(),
        };
        check_state(&layout, &st, step)?;
        Some(st)
    } else {
        None
    };
    let model = TinyGpt {
        config,
        layout,
        params,
        attention: Attention::default(),
    };
    Ok(Loaded { model, step, state })
}
