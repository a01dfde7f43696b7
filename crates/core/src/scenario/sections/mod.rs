//! The tables of a scenario, one function each: `[shape]`, `[run]` (with an explicit mask),
//! `[init]`, `[values]` and `[focus]`. Each checks its own keys, types and ranges.
//!
//! `mod.rs` holds the keys each table allows; each table has a file: `shape.rs`, `run.rs` (with
//! the mask), `flash.rs`, `paged.rs`, `init.rs`, `values.rs` and `focus.rs`.

mod flash;
mod focus;
mod init;
mod paged;
mod run;
mod shape;
mod values;

pub(super) use flash::parse_flash;
pub(super) use focus::parse_focus;
pub(super) use init::parse_init;
pub(super) use paged::parse_paged;
pub(super) use run::{RunTable, parse_run};
pub use shape::MAX_LAYERS;
pub(super) use shape::{parse_latent, parse_layers, parse_shape};
pub(super) use values::{field, parse_values};

/// Keys of each table, in the order the docs list them.
pub(super) const ROOT_KEYS: &[&str] = &[
    "title", "about", "shape", "run", "init", "values", "focus", "flash", "paged",
];
pub(super) const SHAPE_KEYS: &[&str] = &["B", "S", "T", "C", "H", "H_kv", "kv_rank", "rope_dim", "L"];
pub(super) const RUN_KEYS: &[&str] = &[
    "variants",
    "passes",
    "mask",
    "window",
    "sinks",
    "sink_logit",
    "qkv",
    "dropout",
    "dropout_seed",
    "mode",
    "mistakes",
    "rope",
    "rope_base",
    "decode",
    "split_kv",
    "bias",
];
pub(super) const INIT_KEYS: &[&str] = &["seed", "dist", "std", "scale"];
pub(super) const FOCUS_KEYS: &[&str] = &["variant", "pass", "b", "h", "i", "j"];
pub(super) const FLASH_KEYS: &[&str] = &["br", "bc"];
pub(super) const PAGED_KEYS: &[&str] = &["block_size", "num_blocks", "table", "seed"];

/// The choices of a field that names one of `all`, each by its name.
fn named<T: Clone>(all: &[T], name: impl Fn(&T) -> &'static str) -> Vec<(&'static str, T)> {
    all.iter().map(|x| (name(x), x.clone())).collect()
}

pub(super) const DISTS: &[&str] = &["normal", "uniform", "zeros", "ones", "arange"];
