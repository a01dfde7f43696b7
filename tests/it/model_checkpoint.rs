//! Checkpoints: round trip, exact resume, and every kind of bad file refused with a message.

use attn_trace_core::kernels::rope::Pairs;
use attn_trace_model::checkpoint::{self, parse};
use attn_trace_model::{Config, Dataset, TinyGpt, Trainer};
use std::collections::HashMap;

fn small() -> Config {
    Config {
        seq_len: 16,
        d_model: 16,
        n_layers: 2,
        n_heads: 2,
        ..Config::default()
    }
}

fn trainer(seed: u64) -> Trainer {
    let data = Dataset::builtin("sort", 16).unwrap();
    Trainer::new(TinyGpt::new(small(), seed).unwrap(), data, 4, 1e-3, seed).unwrap()
}

#[test]
fn round_trip_keeps_every_bit_and_the_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let mut t = trainer(5);
    for _ in 0..3 {
        t.step();
    }
    t.save(&path).unwrap();
    let loaded = checkpoint::load(&path).unwrap();
    assert_eq!(loaded.model, t.model);
    assert_eq!(loaded.step, 3);
    let state = loaded.state.unwrap();
    assert_eq!(state.opt, t.opt);
    assert_eq!(state.dataset, "sort");

    // the file is plain safetensors with the names, shapes and string metadata
    let bytes = std::fs::read(&path).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    assert_eq!(st.tensor("blocks.1.w_fc").unwrap().shape(), &[16, 64]);
    assert_eq!(st.tensor("w_lm").unwrap().shape(), &[16, 256]);
    assert_eq!(st.tensor("wpe").unwrap().shape(), &[16, 16]);
    let (_, header) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    let meta: &HashMap<String, String> = header.metadata().as_ref().unwrap();
    for (k, v) in [
        ("vocab_size", "256"),
        ("seq_len", "16"),
        ("d_model", "16"),
        ("n_layers", "2"),
        ("n_heads", "2"),
        ("step", "3"),
    ] {
        assert_eq!(meta[k], v, "{k}");
    }
    // no temporary file is left next to it
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn resuming_from_a_checkpoint_is_bit_exact() {
    let n = 4;
    let mut straight = trainer(9);
    let mut losses = Vec::new();
    for _ in 0..2 * n {
        losses.push(straight.step().loss);
    }

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("half.safetensors");
    let mut first = trainer(9);
    for _ in 0..n {
        first.step();
    }
    // evaluating in between must not disturb anything either
    first.val_loss();
    first.save(&path).unwrap();
    drop(first);
    let data = Dataset::builtin("sort", 16).unwrap();
    let mut resumed = Trainer::resume(checkpoint::load(&path).unwrap(), data, 4, None, 0).unwrap();
    assert_eq!(resumed.step, n as u64);
    for (k, want) in losses.iter().enumerate().skip(n) {
        let loss = resumed.step().loss;
        assert_eq!(loss.to_bits(), want.to_bits(), "step {}", k + 1);
    }
    assert_eq!(resumed.model.params, straight.model.params);
}

#[test]
fn saving_replaces_the_previous_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    let mut t = trainer(1);
    t.save(&path).unwrap();
    t.step();
    t.save(&path).unwrap();
    assert_eq!(checkpoint::load(&path).unwrap().step, 1);
    // a save that cannot happen (its directory does not exist) is an error, not a panic
    let bad = dir.path().join("missing").join("m.safetensors");
    let e = t.save(&bad).unwrap_err().to_string();
    assert!(e.contains("missing"), "{e}");
    assert_eq!(checkpoint::load(&path).unwrap().step, 1);
}

#[test]
fn checkpoints_are_ordinary_files_not_private_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    trainer(1).save(&path).unwrap();
    TinyGpt::new(small(), 1)
        .unwrap()
        .save(&dir.path().join("w.safetensors"), 0)
        .unwrap();
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "").unwrap();
    #[cfg(unix)]
    {
        // as open as any file this process creates directly (0666 less the umask), not the
        // temporary file's 0600
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), mode(&plain));
        assert_eq!(mode(&dir.path().join("w.safetensors")), mode(&plain));
    }
    // nothing else is left behind: the temporary files were renamed, not copied
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["m.safetensors", "plain", "w.safetensors"]);
}

fn saved_bytes() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    trainer(2).save(&path).unwrap();
    std::fs::read(path).unwrap()
}

#[test]
fn truncated_files_are_refused() {
    let bytes = saved_bytes();
    for cut in [0, 5, 8, 100, bytes.len() / 2, bytes.len() - 1] {
        let e = parse(&bytes[..cut]).unwrap_err();
        assert!(e.contains("truncated") || e.contains("shorter"), "cut {cut}: {e}");
    }
}

#[test]
fn a_lying_header_length_is_refused_before_allocating() {
    let mut bytes = saved_bytes();
    bytes[..8].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    let e = parse(&bytes).unwrap_err();
    assert!(e.contains("header claims"), "{e}");
}

#[test]
fn corrupted_data_is_caught_by_the_checksum() {
    let mut bytes = saved_bytes();
    let last = bytes.len() - 3;
    bytes[last] ^= 0x10;
    let e = parse(&bytes).unwrap_err();
    assert!(e.contains("corrupted") && e.contains("checksum"), "{e}");
}

#[test]
fn foreign_and_mismatched_files_are_refused() {
    // a safetensors file from somewhere else: no TinyGPT metadata
    let data = vec![0u8; 16];
    let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2, 2], &data).unwrap();
    let foreign = safetensors::serialize([("weight", view)], None).unwrap();
    let e = parse(&foreign).unwrap_err();
    assert!(e.contains("metadata has no 'vocab_size'"), "{e}");

    // our metadata (the checksum's value is checked only after the shapes), but a tensor of the
    // wrong shape
    let model = TinyGpt::new(small(), 1).unwrap();
    let mut named: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for spec in &model.layout.specs {
        let mut shape = spec.shape.clone();
        if spec.name == "blocks.0.w_qkv" {
            shape = vec![spec.shape[1], spec.shape[0]];
        }
        let bytes = model.params[spec.offset..spec.offset + spec.len]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        named.push((spec.name.clone(), shape, bytes));
    }
    let meta: HashMap<String, String> = [
        ("vocab_size", "256"),
        ("seq_len", "16"),
        ("d_model", "16"),
        ("n_layers", "2"),
        ("n_heads", "2"),
        ("step", "0"),
        ("format", checkpoint::FORMAT),
        ("checksum", "0"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let views: Vec<_> = named
        .iter()
        .map(|(n, s, b)| {
            (
                n.clone(),
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.clone(), b).unwrap(),
            )
        })
        .collect();
    let bytes = safetensors::serialize(views, Some(meta.clone())).unwrap();
    let e = parse(&bytes).unwrap_err();
    assert!(e.contains("blocks.0.w_qkv") && e.contains("[48, 16]"), "{e}");

    // metadata that contradicts itself: 3 heads cannot split 16 channels
    let mut bad = meta;
    bad.insert("n_heads".into(), "3".into());
    let views: Vec<_> = named
        .iter()
        .map(|(n, s, b)| {
            (
                n.clone(),
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.clone(), b).unwrap(),
            )
        })
        .collect();
    let bytes = safetensors::serialize(views, Some(bad)).unwrap();
    let e = parse(&bytes).unwrap_err();
    assert!(e.contains("n_heads"), "{e}");
}

#[test]
fn weights_only_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.safetensors");
    let model = TinyGpt::new(small(), 4).unwrap();
    model.save(&path, 17).unwrap();
    assert_eq!(TinyGpt::load(&path).unwrap(), model);
    let loaded = checkpoint::load(&path).unwrap();
    assert_eq!(loaded.step, 17);
    assert!(loaded.state.is_none());
    // a weights-only file resumes with fresh moments at the saved step
    let data = Dataset::builtin("sort", 16).unwrap();
    let mut t = Trainer::resume(loaded, data, 2, Some(1e-3), 5).unwrap();
    assert_eq!(t.opt.t, 0);
    assert_eq!(t.step().step, 18);
}

#[test]
fn what_loading_would_refuse_is_never_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.safetensors");
    trainer(1).save(&path).unwrap();
    let before = std::fs::read(&path).unwrap();
    // a run that diverged: a NaN weight
    let mut t = trainer(1);
    t.model.params[3] = f32::NAN;
    let e = t.save(&path).unwrap_err().to_string();
    assert!(
        e.contains("not saved") && e.contains("'wte'") && e.contains("NaN"),
        "{e}"
    );
    // a negative second moment, an impossible β1
    let mut t = trainer(1);
    t.opt.v[0] = -1.0;
    let e = t.save(&path).unwrap_err().to_string();
    assert!(e.contains("adamw.v.wte") && e.contains("negative"), "{e}");
    let mut t = trainer(1);
    t.opt.beta1 = 2.0;
    let e = t.save(&path).unwrap_err().to_string();
    assert!(e.contains("beta1"), "{e}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the good checkpoint is untouched"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// Every header entry of a saved file, and its tensors as (name, shape, bytes).
type Parts = (HashMap<String, String>, Vec<(String, Vec<usize>, Vec<u8>)>);

fn parts(bytes: &[u8]) -> Parts {
    let (_, header) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let meta = header.metadata().clone().unwrap();
    let st = safetensors::SafeTensors::deserialize(bytes).unwrap();
    let tensors = st
        .tensors()
        .into_iter()
        .map(|(n, v)| (n, v.shape().to_vec(), v.data().to_vec()))
        .collect();
    (meta, tensors)
}

fn rebuild((meta, tensors): &Parts) -> Vec<u8> {
    let views: Vec<_> = tensors
        .iter()
        .map(|(n, s, b)| {
            (
                n.clone(),
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.clone(), b).unwrap(),
            )
        })
        .collect();
    safetensors::serialize(views, Some(meta.clone())).unwrap()
}

/// A grouped model with rotary positions: the metadata names its key/value heads and rotation,
/// `w_qkv` is `[C, C + 2·H_kv·D]`, and loading gives back the same model, which resumes.
#[test]
fn grouped_rotated_checkpoints_record_kv_heads_and_rope() {
    let config = Config {
        n_heads: 4,
        n_kv_heads: Some(2),
        rope: Some(Pairs::Half),
        ..small()
    };
    let data = Dataset::builtin("sort", 16).unwrap();
    let mut t = Trainer::new(TinyGpt::new(config, 3).unwrap(), data, 4, 1e-3, 3).unwrap();
    t.step();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.safetensors");
    t.save(&path).unwrap();
    let (meta, tensors) = parts(&std::fs::read(&path).unwrap());
    assert_eq!(meta["n_heads"], "4");
    assert_eq!(meta["n_kv_heads"], "2");
    assert_eq!(meta["rope"], "half");
    // C=16, H=4 so D=4: q 16 columns, k and v 2·4 = 8 each
    let shape = |name: &str| tensors.iter().find(|(n, ..)| n == name).unwrap().1.clone();
    assert_eq!(shape("blocks.0.w_qkv"), vec![16, 32]);
    assert_eq!(shape("blocks.1.b_qkv"), vec![32]);
    assert_eq!(shape("adamw.m.blocks.0.w_qkv"), vec![16, 32]);
    let loaded = checkpoint::load(&path).unwrap();
    assert_eq!(loaded.model, t.model);
    assert_eq!(loaded.model.config.kv_heads(), 2);
    assert_eq!(loaded.model.config.rope, Some(Pairs::Half));
    // multi-head attention writes one key/value head per head and no rotation
    let mha = saved_bytes();
    let (meta, _) = parts(&mha);
    assert_eq!((meta["n_heads"].as_str(), meta["n_kv_heads"].as_str()), ("2", "2"));
    assert_eq!(meta["rope"], "none");
}

/// `tests/data/mha_pre_gqa.safetensors` was written by attn-trace before grouped heads and
/// rotary positions existed (`train --dataset copy --steps 2 --seq 4 --dmodel 8 --heads 2
/// --batch 2`): it has neither key, and loads as multi-head attention without rotation.
#[test]
fn checkpoints_from_before_grouped_heads_load_as_mha() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/mha_pre_gqa.safetensors"
    ))
    .unwrap();
    let (meta, _) = parts(&bytes);
    assert!(!meta.contains_key("n_kv_heads") && !meta.contains_key("rope"));
    let loaded = parse(&bytes).unwrap();
    let c = loaded.model.config;
    assert_eq!((c.seq_len, c.d_model, c.n_heads), (4, 8, 2));
    assert_eq!((c.n_kv_heads, c.kv_heads(), c.rope), (None, 2, None));
    assert_eq!(loaded.step, 2);
    assert_eq!(loaded.model.layout.get("blocks.0.w_qkv").unwrap().shape, vec![8, 24]);
    // and it trains on
    let data = Dataset::builtin("copy", 4).unwrap();
    let mut t = Trainer::resume(loaded, data, 2, None, 0).unwrap();
    assert!(t.step().loss.is_finite());
}

/// Key/value heads or a rotation the metadata cannot mean are refused, naming the key.
#[test]
fn bad_kv_heads_and_rope_metadata_are_refused() {
    let good = parts(&saved_bytes());
    for (key, value, needle) in [
        (
            "rope",
            "spiral",
            "metadata 'rope' is 'spiral', expected none, interleaved or half",
        ),
        ("n_kv_heads", "3", "n_kv_heads"),
        ("n_kv_heads", "0", "n_kv_heads"),
        ("n_kv_heads", "two", "metadata 'n_kv_heads' is 'two'"),
    ] {
        let mut bad = good.clone();
        bad.0.insert(key.into(), value.into());
        let e = parse(&rebuild(&bad)).unwrap_err();
        assert!(e.contains(needle), "{key}={value}: {e}");
    }
}
