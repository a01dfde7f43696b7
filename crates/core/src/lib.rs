//! attn-trace's core: the buffers, the log, the kernels and the engine that runs them.
//!
//! The same attention loops either run untraced or record every read and write of their flat
//! row-major buffers into an event log. This crate holds everything below the questions asked
//! of that log (`attn-trace-analysis`) and the screens that show it (`attn-trace`); the
//! compiler keeps it that way, since it depends on neither. The modules, from the bottom up:
//!
//! **Buffers and the log**
//! - [`tensor`]: shapes, layouts (`off(b,h,i,j) = ((b*H + h)*T + i)*T + j`), roles and levels;
//!   the SIMD primitives of the fast paths.
//! - [`trace`]: the [`trace::Recorder`] the kernels call, the event log [`trace::Trace`], the
//!   buffer table ([`trace::Buf`], every buffer declared in one line) and the phase registry
//!   ([`trace::Phase`]).
//!
//! **The kernels**
//! - [`kernels`]: the reference loops the tracer shows, forward and backward, one file per
//!   lesson. The attention variants ([`kernels::Variant`]): the single-head **baseline**
//!   (`attention_1h.rs`), **multi-head** attention (`attention_mha.rs`), **grouped-query**
//!   attention with `H_kv` shared key/value heads, multi-query at `H_kv = 1`
//!   (`attention_gqa.rs`), **multi-head latent** attention (`attention_mla.rs`) and
//!   **FlashAttention**'s tiled loop with the online softmax (`attention_flash.rs`); around them
//!   rotary positions (`rope.rs`), **decoding** token by token from a key/value cache
//!   (`decode.rs`), dropout, the projections, and the gallery of seven mistaken kernels
//!   (`attention_mistakes.rs`).
//! - [`variant`]: each variant declared once, in its [`variant::Descriptor`]: its name, kernel
//!   file, heads, scale, the variant that stands in for it, its equations, menu texts and the
//!   scenario choices it refuses; [`source`]: the lesson files' text, embedded.
//! - [`untraced`]: the vectorised paths an untraced run takes instead, held to the reference
//!   loops by tests, and the one dispatcher that chooses.
//!
//! **Running them**
//! - [`engine`]: a run's plan, the buffer registry that evaluates the buffer table for it, the
//!   tensors, and the passes in order.
//! - [`scenario`]: TOML scenarios (shapes, values, mask, variants), checked line by line.
//! - [`files`]: writes that are atomic and reads that are bounded; [`limits`]: what memory this
//!   process may use; [`progress`]: how far long work has got, and its cancel flag.

pub mod engine;
pub mod files;
pub mod kernels;
pub mod limits;
pub mod progress;
pub mod scenario;
pub mod source;
pub mod tensor;
pub mod trace;
pub mod untraced;
pub mod variant;
