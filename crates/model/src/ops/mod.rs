//! TinyGPT's ops besides attention, each forward next to its backward, over flat row-major
//! buffers. Activations are `[B,T,C]` at `(bb*T + i)*C + c`; weights are stored `[IC, OC]`.
//!
//! Each op is compiled for the baseline CPU, AVX2 and AVX-512, picked at run time ([`attn_trace_core::tensor::simd`]).
//!
//! Conventions for gradients: a backward *writes* the gradient of an op's input unless its doc
//! says it *accumulates* (`+=`): layernorm and the embeddings add into buffers that several
//! paths feed (the residual stream, a token row used at many positions).
//!
//! One file per op: `embedding.rs`, `layernorm.rs`, `gelu.rs`, `linear.rs` (with the sgemm it
//! multiplies through in `sgemm.rs`), `residual.rs` and `crossentropy.rs`.
#![allow(non_snake_case)]

mod crossentropy;
mod embedding;
mod gelu;
mod layernorm;
mod linear;
mod residual;
mod sgemm;

pub use crossentropy::{crossentropy_backward, crossentropy_forward};
pub use embedding::{embedding_backward, embedding_forward};
pub use gelu::{gelu_backward, gelu_forward, tanh};
pub use layernorm::{LN_EPS, layernorm_backward, layernorm_forward};
pub use linear::{
    gelu_linear_backward, linear_backward, linear_backward_split, linear_forward, linear_forward_split,
    linear_gelu_forward, linear_rows,
};
pub use residual::{residual_backward, residual_forward};
pub use sgemm::{Sgemm, matmul, sgemm};
