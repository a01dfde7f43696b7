//! Where a model and its training data come from: a built-in dataset or a file, a checkpoint
//! or a run in memory. The train screen, the checkpoint picker, the prompt and the attention
//! map all describe trained weights this way.

use super::{Dataset, ModelError};
use std::path::PathBuf;

/// Where the training bytes come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A built-in dataset by name (see [`crate::BUILTIN`]).
    Builtin(String),
    File(PathBuf),
}

impl Source {
    pub fn label(&self) -> String {
        match self {
            Source::Builtin(name) => name.clone(),
            Source::File(p) => p.display().to_string(),
        }
    }

    pub fn load(&self, seq: usize) -> Result<Dataset, ModelError> {
        match self {
            Source::Builtin(name) => Dataset::builtin(name, seq),
            Source::File(path) => Dataset::from_file(path, seq),
        }
    }

    /// The synthetic tasks, whose validation lines read `input|answer`.
    pub fn is_task(&self) -> bool {
        matches!(self, Source::Builtin(n) if n != "kernels")
    }
}

/// Where a model's weights came from: shown in titles, written into exported scenarios.
#[derive(Clone, Debug, PartialEq)]
pub struct Origin {
    /// One line for titles, e.g. `copy.safetensors (step 3000)`.
    pub label: String,
    /// The checkpoint file holding exactly these weights, when there is one.
    pub checkpoint: Option<PathBuf>,
    pub step: u64,
    /// The data it was trained on, when known (for a default prompt).
    pub dataset: Option<Source>,
    /// Exports are written into this directory …
    pub dir: PathBuf,
    /// … under names starting with this.
    pub stem: String,
    /// Trained with flash attention: its layers are traced with flash beside MHA.
    pub flash: bool,
}
