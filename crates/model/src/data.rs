//! Training data: any file of bytes, or a built-in dataset by name. Each is split into a training
//! part (random windows are drawn from it) and a held-out validation part.
#![allow(non_snake_case)]

use super::ModelError;
use attn_trace_i18n::tr;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;
use std::path::Path;

/// The built-in datasets: name and one-line description.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "kernels",
        "this project's own attention, linear, softmax and engine sources (text)",
    ),
    ("copy", "lines `abcde|abcde`: repeat the letters before `|`"),
    ("reverse", "lines `abcde|edcba`: write the letters before `|` backwards"),
    (
        "sort",
        "lines `31415|11345`: write the digits before `|` in ascending order",
    ),
];

/// The text corpus: the kernel and engine sources, embedded at build time.
const KERNELS_CORPUS: &[&str] = &[
    include_str!("../../core/src/kernels/mod.rs"),
    include_str!("../../core/src/kernels/attention_1h.rs"),
    include_str!("../../core/src/kernels/attention_mha.rs"),
    include_str!("../../core/src/kernels/softmax.rs"),
    include_str!("../../core/src/kernels/linear.rs"),
    include_str!("../../core/src/kernels/split.rs"),
    include_str!("../../core/src/engine/inputs.rs"),
    include_str!("../../core/src/engine/passes.rs"),
    include_str!("../../core/src/engine/mod.rs"),
];

/// Bytes of each synthetic task's training and validation text.
const TASK_TRAIN_BYTES: usize = 200_000;
const TASK_VAL_BYTES: usize = 20_000;
/// Length of a synthetic task's input string. Fixed, so the answer's byte `k` always sits a known
/// distance from its source (copy: 6 back; reverse: 2k + 2 back), which a single layer can learn
/// and the attention pattern shows as a clean diagonal.
const TASK_LEN: usize = 5;

/// A dataset split into training and held-out validation bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dataset {
    /// The built-in name or the file path it came from.
    pub name: String,
    pub train: Vec<u8>,
    pub val: Vec<u8>,
}

/// Largest file trained or evaluated on: it is held in memory whole.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// The bytes of a data file: a regular file of at most [`MAX_FILE_BYTES`] (a FIFO or a device
/// such as `/dev/urandom` is refused at once, not read until memory runs out).
pub fn read_file(path: &Path) -> Result<Vec<u8>, ModelError> {
    attn_trace_core::files::input::read(path, MAX_FILE_BYTES, attn_trace_i18n::msg!("a data file"))
        .map_err(|e| ModelError::Data(format!("{}: {e}", path.display())))
}

impl Dataset {
    /// Smallest input that gives both a training and a validation window of `seq + 1` bytes.
    pub const fn min_len(seq: usize) -> usize {
        2 * (seq + 1)
    }

    /// The built-in dataset `name` (see [`BUILTIN`]), split for windows of `seq` tokens.
    pub fn builtin(name: &str, seq: usize) -> Result<Dataset, ModelError> {
        let bad = || {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            ModelError::Data(tr!(
                "unknown dataset '{name}': the built-in datasets are {names}",
                name,
                names = names.join(tr!(", "))
            ))
        };
        let (train, val) = match name {
            "kernels" => return Dataset::from_bytes(name, KERNELS_CORPUS.concat().into_bytes(), seq),
            "copy" => task(name, <[u8]>::to_vec),
            "reverse" => task(name, |s| s.iter().rev().copied().collect()),
            "sort" => task(name, |s| {
                let mut v = s.to_vec();
                v.sort_unstable();
                v
            }),
            _ => return Err(bad()),
        };
        let ds = Dataset {
            name: name.to_string(),
            train,
            val,
        };
        ds.check(seq)?;
        Ok(ds)
    }

    /// Any bytes: the last tenth (at least one window of `seq + 1`) is held out for validation.
    pub fn from_bytes(name: &str, bytes: Vec<u8>, seq: usize) -> Result<Dataset, ModelError> {
        let need = Dataset::min_len(seq);
        if bytes.len() < need {
            return Err(ModelError::Data(tr!(
                "{name}: {len} bytes is too short: with seq {seq} the data needs at least {need} bytes \
                 (a training and a validation window of seq + 1 bytes each)",
                name,
                len = bytes.len(),
                seq,
                need
            )));
        }
        let n_val = (bytes.len() / 10).max(seq + 1);
        let mut train = bytes;
        let val = train.split_off(train.len() - n_val);
        Ok(Dataset {
            name: name.to_string(),
            train,
            val,
        })
    }

    /// The bytes of a file, split as in [`Dataset::from_bytes`].
    pub fn from_file(path: &Path, seq: usize) -> Result<Dataset, ModelError> {
        Dataset::from_bytes(&path.display().to_string(), read_file(path)?, seq)
    }

    fn check(&self, seq: usize) -> Result<(), ModelError> {
        if self.train.len() <= seq || self.val.len() <= seq {
            return Err(ModelError::Data(tr!(
                "{name}: its splits ({train} and {val} bytes) are too short for seq {seq}: each needs at least {need}",
                name = self.name,
                train = self.train.len(),
                val = self.val.len(),
                seq,
                need = seq + 1
            )));
        }
        Ok(())
    }

    /// Fills `tokens` and `targets [B,T]` with `B` random training windows: inputs
    /// `train[s..s+T]`, targets one byte later.
    pub fn batch(&self, rng: &mut ChaCha8Rng, [B, T]: [usize; 2], tokens: &mut Vec<u8>, targets: &mut Vec<u8>) {
        tokens.clear();
        targets.clear();
        let last_start = self.train.len() - T - 1;
        for _ in 0..B {
            let s = rng.random_range(0..=last_start);
            tokens.extend_from_slice(&self.train[s..s + T]);
            targets.extend_from_slice(&self.train[s + 1..s + T + 1]);
        }
    }
}

/// A synthetic task: lines `input|answer(input)\n` with random inputs, from fixed seeds so every
/// run sees the same data. Validation inputs never occur in the training text.
fn task(name: &str, answer: impl Fn(&[u8]) -> Vec<u8>) -> (Vec<u8>, Vec<u8>) {
    let alphabet: &[u8] = if name == "sort" {
        b"0123456789"
    } else {
        b"abcdefghijklmnopqrstuvwxyz"
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_0000 + name.len() as u64 * 7 + alphabet.len() as u64);
    let mut seen = HashSet::new();
    let example = |rng: &mut ChaCha8Rng| -> Vec<u8> {
        (0..TASK_LEN)
            .map(|_| alphabet[rng.random_range(0..alphabet.len())])
            .collect()
    };
    let mut train = Vec::with_capacity(TASK_TRAIN_BYTES + 32);
    while train.len() < TASK_TRAIN_BYTES {
        let s = example(&mut rng);
        push_line(&mut train, &s, &answer(&s));
        seen.insert(s);
    }
    let mut val = Vec::with_capacity(TASK_VAL_BYTES + 32);
    while val.len() < TASK_VAL_BYTES {
        let s = example(&mut rng);
        if !seen.contains(&s) {
            push_line(&mut val, &s, &answer(&s));
        }
    }
    (train, val)
}

fn push_line(out: &mut Vec<u8>, input: &[u8], answer: &[u8]) {
    out.extend_from_slice(input);
    out.push(b'|');
    out.extend_from_slice(answer);
    out.push(b'\n');
}

/// How many non-overlapping windows of `seq` tokens (each with its `seq` next-byte targets) the
/// bytes hold: windows start at 0, seq, 2·seq, … and need one byte past their end.
pub fn window_count(len: usize, seq: usize) -> usize {
    len.saturating_sub(1) / seq
}
