//! Inputs for engine tests, built directly (the scenario format has its own tests).
#![allow(dead_code)]

use attn_trace::engine::{Inputs, Start};
use attn_trace::kernels::Mask;
use attn_trace::kernels::attention_mistakes::Mistakes;
use attn_trace::tensor::Shape;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `n` values uniform in [-1, 1) from `seed`.
pub fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// A full run from `x`: random x, weights, biases and upstream gradient.
pub fn from_x(shape: Shape, mask: Mask, seed: u64) -> Inputs {
    let Shape { b, t, c, .. } = shape;
    Inputs {
        shape,
        mask,
        start: Start::X {
            x: values(b * t * c, seed),
            w_qkv: values(c * 3 * c, seed + 1),
            b_qkv: values(3 * c, seed + 2),
        },
        proj: Some((values(c * c, seed + 3), values(c, seed + 4))),
        d_out: values(b * t * c, seed + 5),
        dropout: None,
        mistakes: Mistakes::NONE,
    }
}

/// A run that starts at the attention core with the given q, k, v and no output projection.
pub fn from_qkv(shape: Shape, mask: Mask, q: Vec<f32>, k: Vec<f32>, v: Vec<f32>) -> Inputs {
    let n = shape.b * shape.t * shape.c;
    Inputs {
        shape,
        mask,
        start: Start::Qkv { q, k, v },
        proj: None,
        d_out: vec![1.0; n],
        dropout: None,
        mistakes: Mistakes::NONE,
    }
}

/// Rows of a `[T, C]` matrix written as `[[..], [..]]`, flattened.
pub fn rows<const C: usize>(rows: &[[f32; C]]) -> Vec<f32> {
    rows.iter().flatten().copied().collect()
}
