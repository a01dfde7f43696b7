//! The form of "Train TinyGPT": its fields, the values typed in them, and the check of each as it
//! is typed (what is wrong and what is accepted), which gives the run to start when all are
//! right; and the folder a checkpoint goes in.

use super::worker::{Source, Spec};
use attn_trace_core::files::input::{human_bytes, kind_of};
use attn_trace_i18n::tr;
use attn_trace_model::gpt::Attention;
use attn_trace_model::gpt::ParamLayout;
use attn_trace_model::spec::{parse_attention, parse_rope};
use attn_trace_model::{BUILTIN, Dataset, Setting, TrainSpec, data};
use std::path::{Path, PathBuf};

/// The form's fields, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Dataset,
    Layers,
    DModel,
    Heads,
    KvHeads,
    Rope,
    Window,
    Sinks,
    Attention,
    Seq,
    Batch,
    Steps,
    Lr,
    Seed,
    Save,
}

/// The form's fields, one slot each.
const FIELDS: usize = 15;

/// The attention kernels the attention field cycles through with ←/→ (the rope field cycles
/// through `model::spec::rope_names()`).
pub(super) const ATTENTIONS: [&str; 2] = [Attention::ALL[0].name(), Attention::ALL[1].name()];

impl Field {
    pub(crate) const ALL: [Field; FIELDS] = [
        Field::Dataset,
        Field::Layers,
        Field::DModel,
        Field::Heads,
        Field::KvHeads,
        Field::Rope,
        Field::Window,
        Field::Sinks,
        Field::Attention,
        Field::Seq,
        Field::Batch,
        Field::Steps,
        Field::Lr,
        Field::Seed,
        Field::Save,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Field::Dataset => tr!("dataset"),
            Field::Layers => tr!("layers"),
            Field::DModel => tr!("d_model"),
            Field::Heads => tr!("heads"),
            Field::KvHeads => tr!("kv heads"),
            Field::Rope => tr!("rope"),
            Field::Window => tr!("window"),
            Field::Sinks => tr!("sinks"),
            Field::Attention => tr!("attn"),
            Field::Seq => tr!("seq"),
            Field::Batch => tr!("batch"),
            Field::Steps => tr!("steps"),
            Field::Lr => tr!("lr"),
            Field::Seed => tr!("seed"),
            Field::Save => tr!("save to"),
        }
    }

    pub(crate) fn hint(self) -> &'static str {
        match self {
            Field::Dataset => tr!("←/→ built-ins, or a file path"),
            Field::Layers => tr!("L, transformer blocks"),
            Field::DModel => tr!("C, channels of every token"),
            Field::Heads => tr!("H, divides d_model (1: baseline)"),
            Field::KvHeads => tr!("H_kv: divides H (empty: H)"),
            Field::Rope => tr!("←/→ none · interleaved · half"),
            Field::Window => tr!("W: recent positions (empty: all)"),
            Field::Sinks => tr!("first N always seen (empty: 0)"),
            Field::Attention => tr!("←/→ naive · flash (tiled)"),
            Field::Seq => tr!("T, tokens of context"),
            Field::Batch => tr!("B, sequences per step"),
            Field::Steps => tr!("optimizer steps"),
            Field::Lr => tr!("AdamW learning rate"),
            Field::Seed => tr!("initial weights and data order"),
            Field::Save => tr!("s saves here, e exports layers beside it"),
        }
    }

    /// The defaults train the copy task to exact answers in well under a minute on two cores
    /// (about 20 s in a release build): after `|` one head learns to look 6 bytes back.
    fn default_value(self) -> &'static str {
        match self {
            Field::Dataset => "copy",
            Field::Layers => "1",
            Field::DModel => "32",
            Field::Heads => "4",
            Field::KvHeads => "",
            Field::Rope => attn_trace_model::spec::NO_ROPE,
            Field::Window | Field::Sinks => "",
            Field::Attention => Attention::Naive.name(),
            Field::Seq => "24",
            Field::Batch => "16",
            Field::Steps => "3000",
            Field::Lr => "0.003",
            Field::Seed => "42",
            Field::Save => "checkpoints/tinygpt.safetensors",
        }
    }
}

/// The folder the form saves checkpoints in by default (made on the first save), where "Open
/// checkpoint…" looks.
pub(crate) const CHECKPOINTS: &str = "checkpoints";

/// The form's field of a setting.
fn field_of(setting: Setting) -> Field {
    match setting {
        Setting::SeqLen => Field::Seq,
        Setting::DModel => Field::DModel,
        Setting::Layers => Field::Layers,
        Setting::Heads => Field::Heads,
        Setting::KvHeads => Field::KvHeads,
        Setting::Rope => Field::Rope,
        Setting::Window => Field::Window,
        Setting::Sinks => Field::Sinks,
        Setting::Attention => Field::Attention,
        Setting::Batch => Field::Batch,
        Setting::Steps => Field::Steps,
        Setting::Lr => Field::Lr,
    }
}

/// Largest model the TUI trains (the headless `train` has no such limit): more would take
/// minutes per step and gigabytes of memory.
pub(super) const MAX_PARAMS: usize = 50_000_000;
/// Largest `batch · seq`, which sizes the activations.
pub(super) const MAX_TOKENS_PER_STEP: usize = 1 << 16;
/// Longest text a field takes.
pub(super) const MAX_FIELD: usize = 1024;

/// The configuration being typed. `focus == Field::ALL.len()` is the Start button.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Form {
    pub values: [String; FIELDS],
    pub focus: usize,
    /// [`Form::check`] of the values as they are: recomputed when a value changes, so drawing
    /// the form never looks at the disk.
    pub checked: Checked,
}

impl Default for Form {
    fn default() -> Self {
        let mut form = Form {
            values: Field::ALL.map(|f| f.default_value().to_string()),
            focus: 0,
            checked: Checked::default(),
        };
        form.checked = form.check();
        form
    }
}

/// The form checked: an error per field, and the run to start when there is none.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Checked {
    pub errors: [Option<String>; FIELDS],
    pub spec: Option<Spec>,
    /// Parameters of the configured model, when its sizes are valid.
    pub params: Option<usize>,
    /// The save path's folder when it is still to be made (by the first save or export).
    pub new_dir: Option<PathBuf>,
}

impl Form {
    pub(crate) fn value(&self, f: Field) -> &str {
        &self.values[f as usize]
    }

    pub(crate) fn set(&mut self, f: Field, v: &str) {
        self.values[f as usize] = v.to_string();
        self.checked = self.check();
    }

    /// Checks every field; each message says what is wrong and what is accepted.
    pub(crate) fn check(&self) -> Checked {
        let mut errors: [Option<String>; FIELDS] = Default::default();
        let mut err = |f: Field, msg: String| {
            if errors[f as usize].is_none() {
                errors[f as usize] = Some(msg);
            }
        };
        // each number as typed; the ranges and the cross-checks are the shared validator's
        let whole = |f: Field, err: &mut dyn FnMut(Field, String)| -> Option<usize> {
            let text = self.value(f).trim();
            match text.parse::<usize>() {
                Ok(v) => Some(v),
                Err(_) if text.is_empty() => {
                    err(f, tr!("empty: give a whole number").into());
                    None
                }
                Err(_) => {
                    err(f, tr!("{text} is not a whole number ≥ 1", text = format!("{text:?}")));
                    None
                }
            }
        };
        let layers = whole(Field::Layers, &mut err);
        let d_model = whole(Field::DModel, &mut err);
        let heads = whole(Field::Heads, &mut err);
        // empty: one key/value head per query head
        let kv_text = self.value(Field::KvHeads).trim();
        let kv_heads = if kv_text.is_empty() {
            None
        } else {
            whole(Field::KvHeads, &mut err)
        };
        // empty: the whole context, and no sinks
        let optional = |f: Field, err: &mut dyn FnMut(Field, String)| {
            if self.value(f).trim().is_empty() {
                None
            } else {
                whole(f, err)
            }
        };
        let window = optional(Field::Window, &mut err);
        let sinks = optional(Field::Sinks, &mut err);
        let rope = match parse_rope(self.value(Field::Rope)) {
            Ok(r) => r,
            Err(e) => {
                err(Field::Rope, e.msg);
                None
            }
        };
        let attention = match parse_attention(self.value(Field::Attention)) {
            Ok(a) => a,
            Err(e) => {
                err(Field::Attention, e.msg);
                Attention::Naive
            }
        };
        let seq = whole(Field::Seq, &mut err);
        let batch = whole(Field::Batch, &mut err);
        let steps = whole(Field::Steps, &mut err).map(|s| s as u64);
        let lr_text = self.value(Field::Lr).trim();
        let lr = match lr_text.parse::<f32>() {
            Ok(v) => Some(v),
            Err(_) => {
                err(
                    Field::Lr,
                    tr!(
                        "{text} is not a number such as 0.003 or 3e-3",
                        text = format!("{lr_text:?}")
                    ),
                );
                None
            }
        };
        let spec = TrainSpec {
            seq_len: seq,
            d_model,
            n_layers: layers,
            n_heads: heads,
            n_kv_heads: kv_heads,
            rope,
            window,
            sinks,
            attention,
            batch,
            steps,
            lr,
        };
        for e in spec.problems() {
            err(field_of(e.setting), e.msg);
        }
        // the TUI's own limits, on top: a run here must stay quick
        if let (Some(b), Some(t)) = (batch, seq)
            && b.saturating_mul(t) > MAX_TOKENS_PER_STEP
        {
            err(
                Field::Batch,
                tr!(
                    "batch · seq = {n} is over {max} tokens per step",
                    n = b.saturating_mul(t),
                    max = MAX_TOKENS_PER_STEP
                ),
            );
        }
        let seed_text = self.value(Field::Seed).trim();
        let seed = seed_text
            .parse::<u64>()
            .map_err(|_| {
                err(
                    Field::Seed,
                    tr!("{text} is not a whole number ≥ 0", text = format!("{seed_text:?}")),
                );
            })
            .ok();
        let config = spec.config();
        let params = config.map(|c| ParamLayout::new(&c).total);
        if let Some(p) = params.filter(|&p| p > MAX_PARAMS) {
            err(
                Field::DModel,
                tr!(
                    "{p} parameters is over the TUI's {max}: use attn-trace train for models this big",
                    p,
                    max = MAX_PARAMS
                ),
            );
        }
        let source = check_source(self.value(Field::Dataset), seq, &mut err);
        let save = check_save(self.value(Field::Save), &mut err);
        let new_dir = save.as_deref().map(dir_of).filter(|d| !d.is_dir());
        let spec = match (config, source, batch, steps, lr, seed, save) {
            (Some(config), Some(source), Some(batch), Some(steps), Some(lr), Some(seed), Some(save))
                if errors.iter().all(Option::is_none) =>
            {
                Some(Spec {
                    config,
                    attention,
                    source,
                    batch,
                    steps,
                    lr,
                    seed,
                    save,
                })
            }
            _ => None,
        };
        Checked {
            errors,
            spec,
            params,
            new_dir,
        }
    }

    /// Field `f` set to the next (or previous) of `names` after its value; the first when its
    /// value is none of them.
    pub(super) fn cycle(&mut self, f: Field, names: &[&str], forward: bool) {
        let k = names.iter().position(|&name| name == self.value(f).trim());
        let next = match (k, forward) {
            (Some(k), true) => (k + 1) % names.len(),
            (Some(k), false) => (k + names.len() - 1) % names.len(),
            (None, _) => 0,
        };
        self.set(f, names[next]);
    }
}

/// A built-in name, or a file holding at least the bytes `seq` needs.
fn check_source(text: &str, seq: Option<usize>, err: &mut dyn FnMut(Field, String)) -> Option<Source> {
    let text = text.trim();
    if BUILTIN.iter().any(|(name, _)| *name == text) {
        return Some(Source::Builtin(text.to_string()));
    }
    if text.is_empty() {
        err(
            Field::Dataset,
            tr!("empty: a built-in name (←/→) or a file path").into(),
        );
        return None;
    }
    let path = PathBuf::from(text);
    match std::fs::metadata(&path) {
        Err(_) => {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            err(
                Field::Dataset,
                tr!(
                    "no such file, nor a built-in dataset ({names})",
                    names = names.join(tr!(", "))
                ),
            );
            None
        }
        Ok(m) if m.is_dir() => {
            err(Field::Dataset, tr!("is a directory: give a file of text").into());
            None
        }
        // a FIFO or a device would be waited on or read without end
        Ok(m) if !m.is_file() => {
            err(
                Field::Dataset,
                tr!(
                    "{kind}, not a regular file",
                    kind = attn_trace_i18n::text(kind_of(m.file_type()))
                ),
            );
            None
        }
        Ok(m) if m.len() > data::MAX_FILE_BYTES => {
            err(
                Field::Dataset,
                tr!(
                    "{n} bytes is larger than the {max} a data file may be",
                    n = m.len(),
                    max = human_bytes(data::MAX_FILE_BYTES)
                ),
            );
            None
        }
        Ok(m) => {
            if let Some(seq) = seq {
                let need = Dataset::min_len(seq);
                if m.len() < need as u64 {
                    err(
                        Field::Dataset,
                        tr!(
                            "{n} bytes is too short: seq {seq} needs at least {need}",
                            n = m.len(),
                            seq,
                            need
                        ),
                    );
                    return None;
                }
            }
            Some(Source::File(path))
        }
    }
}

/// A file name in a directory that exists.
fn check_save(text: &str, err: &mut dyn FnMut(Field, String)) -> Option<PathBuf> {
    let text = text.trim();
    if text.is_empty() {
        err(
            Field::Save,
            tr!("empty: a file name such as tinygpt.safetensors").into(),
        );
        return None;
    }
    let path = PathBuf::from(text);
    if path.is_dir() {
        err(Field::Save, tr!("is a directory: give a file name").into());
        return None;
    }
    if let Ok(m) = std::fs::metadata(&path)
        && !m.is_file()
    {
        err(
            Field::Save,
            tr!(
                "{kind}: give the name of a file",
                kind = attn_trace_i18n::text(kind_of(m.file_type()))
            ),
        );
        return None;
    }
    // a missing folder is made when the checkpoint is saved, if the folder it goes in exists
    let dir = dir_of(&path);
    if dir.exists() && !dir.is_dir() {
        err(Field::Save, tr!("{dir} is not a directory", dir = dir.display()));
        return None;
    }
    let up = dir_of(&dir);
    if !dir.is_dir() && !up.is_dir() {
        err(
            Field::Save,
            tr!("the directory {dir} does not exist", dir = up.display()),
        );
        return None;
    }
    Some(path)
}

/// Makes the folder a checkpoint or an exported layer goes in, when it is missing: one level,
/// in a folder that exists (the form checked that it does).
pub(crate) fn make_dir_for(path: &Path) -> std::io::Result<()> {
    let dir = dir_of(path);
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir(&dir)
}

/// The directory a file goes into (`.` for a bare name).
pub(crate) fn dir_of(path: &Path) -> PathBuf {
    attn_trace_core::files::atomic::dir_of(path).to_path_buf()
}
