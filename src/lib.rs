//! attn-trace: step through transformer attention one memory access at a time.
//!
//! The [`kernels`] run a tiny GPT's attention (baseline single-head, multi-head and
//! FlashAttention's tiled loop, forward and backward) over flat row-major buffers. Generic over a [`trace::Recorder`], the same loops
//! either run untraced or record every read and write into a [`trace::Trace`], which the TUI and
//! the CLI step through.

pub mod analysis;
pub mod engine;
pub mod files;
pub mod i18n;
pub mod kernels;
pub mod limits;
pub mod model;
pub mod scenario;
pub mod tensor;
pub mod trace;
pub mod tui;
pub mod untraced;
