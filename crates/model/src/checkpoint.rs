//! Checkpoints as safetensors files, loadable from PyTorch (`safetensors.torch.load_file`).
//!
//! Tensors (f32, little-endian): the model's parameters under the names of [`ParamLayout`], and, for
//! resuming training, AdamW's moments as `adamw.m.<name>` and `adamw.v.<name>`. Metadata (all
//! plain strings): `format`, `vocab_size, seq_len, d_model, n_layers, n_heads, n_kv_heads, rope,
//! step`, `checksum`, and when optimizer state is present `lr, beta1, beta2, eps, weight_decay,
//! adamw_t, data_seed, data_rng_pos, dataset`. `n_kv_heads` (the key/value heads, `n_heads` for
//! multi-head attention) and `rope` (`none`, `interleaved` or `half`) are written by every save;
//! a checkpoint without them (written before grouped heads and rotary positions existed) loads
//! as multi-head attention without rotation. `window` and `sinks` are written by a model with
//! sliding-window attention only; without them a checkpoint attends over its whole context.
//!
//! What a checkpoint promises (docs/tinygpt.md says the same for users):
//! - **Integrity.** `checksum` is FNV-1a (64-bit) over every other metadata entry and every
//!   tensor's name, shape and bytes; it is required, so a flipped bit anywhere in the metadata
//!   or the tensors is caught. It guards against damage, not against someone who rewrites the
//!   file on purpose. Files of the first format version (`format = attn-trace-tinygpt`) are
//!   still read; their checksum covers the tensor bytes only.
//! - **Nothing unknown.** A metadata key or a tensor that a checkpoint of this configuration does
//!   not have is an error naming it.
//! - **Sane values.** Weights and moments are finite, second moments are not negative, and the
//!   optimizer's settings are in range (`0 ≤ β < 1`, `ε > 0`, a positive learning rate,
//!   `adamw_t ≤ step`). Saving refuses what loading would refuse, so a run that diverged never
//!   overwrites a good checkpoint. (Resuming also holds the learning rate to the range of
//!   [`TrainSpec`](super::TrainSpec), unless a new one is given.)
//!
//! Saving writes a temporary file in the target's directory and renames it over the target, so
//! an interrupted save leaves the previous checkpoint intact. Loading reads the 8-byte header
//! length, checks it against the file's size, reads only the header, and checks every tensor's
//! name, dtype and shape against the configuration in the metadata before reading the tensors:
//! the memory a checkpoint can make us use is bounded by its own size.

use super::gpt::{Attention, Config, ParamLayout, SlidingWindow, TinyGpt};
use super::spec::{NO_ROPE, rope_name};
use super::{AdamW, ModelError};
use attn_trace_core::files::input::{ReadError, human_bytes};
use attn_trace_core::kernels::rope::Pairs;
use attn_trace_i18n::tr;
use safetensors::Dtype;
use safetensors::tensor::{Metadata, TensorInfo, TensorView};
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// The `format` metadata value of the checkpoints this version writes.
pub const FORMAT: &str = "attn-trace-tinygpt/2";

/// The first format version, still read: its checksum covers the tensor bytes only.
pub const FORMAT_V1: &str = "attn-trace-tinygpt";

/// Files larger than this are refused before being read (our largest configs are far smaller).
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// Headers larger than this are refused before being read: the largest configuration's header
/// (64 layers with optimizer state) is under 200 KiB.
pub const MAX_HEADER_BYTES: u64 = 1 << 20;

/// The metadata keys of every checkpoint, and those of the optimizer state.
const MODEL_KEYS: [&str; 8] = [
    "format",
    "vocab_size",
    "seq_len",
    "d_model",
    "n_layers",
    "n_heads",
    "step",
    "checksum",
];
/// Keys every save writes but older checkpoints lack: their absence means multi-head attention
/// without rotary positions.
const ATTENTION_KEYS: [&str; 4] = ["n_kv_heads", "rope", "window", "sinks"];
const STATE_KEYS: [&str; 9] = [
    "lr",
    "beta1",
    "beta2",
    "eps",
    "weight_decay",
    "adamw_t",
    "data_seed",
    "data_rng_pos",
    "dataset",
];

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

/// FNV-1a, 64-bit, over bytes: detects a flipped bit anywhere in what it covers.
fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// A length-prefixed piece of the checksum, so that moving bytes from one piece to the next
/// changes the sum.
fn fnv1a_piece(h: &mut u64, bytes: &[u8]) {
    fnv1a(h, &(bytes.len() as u64).to_le_bytes());
    fnv1a(h, bytes);
}

/// The checksum of a checkpoint: in the current format, every metadata entry but `checksum`
/// (sorted by key) and every tensor's name, shape and bytes, in the order given; in the first
/// format, the tensors' bytes alone.
fn checksum<'a>(
    v1: bool,
    meta: &HashMap<String, String>,
    tensors: impl Iterator<Item = (&'a str, &'a [usize], &'a [u8])>,
) -> String {
    let mut h = FNV_OFFSET;
    if !v1 {
        let mut keys: Vec<&String> = meta.keys().filter(|k| *k != "checksum").collect();
        keys.sort();
        for k in keys {
            fnv1a_piece(&mut h, k.as_bytes());
            fnv1a_piece(&mut h, meta[k].as_bytes());
        }
    }
    for (name, shape, bytes) in tensors {
        if !v1 {
            fnv1a_piece(&mut h, name.as_bytes());
            let dims: Vec<u8> = shape.iter().flat_map(|&d| (d as u64).to_le_bytes()).collect();
            fnv1a_piece(&mut h, &dims);
        }
        fnv1a(&mut h, bytes);
    }
    format!("{h:016x}")
}

/// The first non-finite value of a parameter tensor, as an error naming it.
fn check_finite(layout: &ParamLayout, values: &[f32], prefix: &str) -> Result<(), String> {
    for spec in &layout.specs {
        let t = &values[spec.offset..spec.offset + spec.len];
        if let Some(k) = t.iter().position(|x| !x.is_finite()) {
            return Err(tr!(
                "tensor '{prefix}{name}' holds {value} at element {k}: a run that diverged",
                prefix,
                name = spec.name,
                value = t[k],
                k
            ));
        }
    }
    Ok(())
}

/// Checks what resuming would take from `state`: the optimizer's settings and moments.
fn check_state(layout: &ParamLayout, st: &TrainState, step: u64) -> Result<(), String> {
    let opt = &st.opt;
    // the range `train` accepts is checked when resuming, where --lr can replace it
    if !(opt.lr.is_finite() && opt.lr > 0.0) {
        return Err(tr!(
            "metadata 'lr' must be a positive number, got {lr}",
            lr = format!("{:?}", opt.lr)
        ));
    }
    for (key, v) in [("beta1", opt.beta1), ("beta2", opt.beta2)] {
        if !(0.0..1.0).contains(&v) {
            return Err(tr!(
                "metadata '{key}' must be in [0, 1), got {v}",
                key,
                v = format!("{v:?}")
            ));
        }
    }
    if !(opt.eps.is_finite() && opt.eps > 0.0) {
        return Err(tr!(
            "metadata 'eps' must be a positive number, got {eps}",
            eps = format!("{:?}", opt.eps)
        ));
    }
    if !(opt.weight_decay.is_finite() && opt.weight_decay >= 0.0) {
        return Err(tr!(
            "metadata 'weight_decay' must be a number ≥ 0, got {wd}",
            wd = format!("{:?}", opt.weight_decay)
        ));
    }
    if opt.t > step {
        return Err(tr!(
            "metadata 'adamw_t' is {t}, more updates than the {step} steps taken",
            t = opt.t,
            step
        ));
    }
    if opt.m.len() != layout.total || opt.v.len() != layout.total {
        return Err(tr!("the optimizer state does not match the parameters").into());
    }
    check_finite(layout, &opt.m, "adamw.m.")?;
    check_finite(layout, &opt.v, "adamw.v.")?;
    for spec in &layout.specs {
        let v = &opt.v[spec.offset..spec.offset + spec.len];
        if let Some(k) = v.iter().position(|&x| x < 0.0) {
            return Err(tr!(
                "tensor 'adamw.v.{name}' holds a negative second moment ({value}) at element {k}",
                name = spec.name,
                value = v[k],
                k
            ));
        }
    }
    Ok(())
}

/// Writes `model` (and `state`, for resuming) to `path` atomically. A model or a state that
/// [`load`] would refuse (a NaN weight after a diverged run, say) is refused here, and the file
/// at `path` is left as it was.
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

/// A whole number as a checkpoint writes it: decimal digits only. Rust's `parse` also takes a
/// leading `+`, which no checkpoint of ours holds (a file that has one was edited).
fn digits<T: std::str::FromStr>(v: &str) -> Option<T> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
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

/// What the header promises, checked: the configuration, and where each expected tensor's bytes
/// are.
struct CheckedHeader {
    config: Config,
    layout: ParamLayout,
    step: u64,
    /// A file of the first format version.
    v1: bool,
    meta: HashMap<String, String>,
    /// Every tensor of the file, by name.
    infos: HashMap<String, TensorInfo>,
    has_state: bool,
}

/// Checks a header against the `data_len` bytes that follow it, without reading them: the
/// metadata (every key known, the configuration valid, a checksum present), then the tensors
/// (exactly those of the configuration, as F32 of the right shapes, filling the data).
fn plan(header: &[u8], data_len: u64) -> Result<CheckedHeader, String> {
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
            names = shown.join(", "),
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
