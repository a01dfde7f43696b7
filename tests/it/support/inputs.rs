//! Inputs for engine tests, built directly (the scenario format has its own tests): seeded
//! values, the runs from `x`, from separate projections and from q, k, v, and a mask.

use attn_trace_core::engine::{Inputs, Start};
use attn_trace_core::kernels::Mask;
use attn_trace_core::tensor::Shape;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `n` values uniform in [-1, 1) from `seed`.
pub(crate) fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// A full run from `x`: random x, weights, biases and upstream gradient. The fused projection
/// is `[C, C + 2·H_kv·D]` (`[C, 3C]` unless the shape groups its key/value heads).
pub(crate) fn from_x(shape: Shape, mask: Mask, seed: u64) -> Inputs {
    let Shape { b, t, c, .. } = shape;
    let qkv = c + 2 * shape.kv_c();
    let start = Start::X {
        x: values(b * t * c, seed),
        w_qkv: values(c * qkv, seed + 1),
        b_qkv: values(qkv, seed + 2),
    };
    Inputs::new(shape, mask, start, values(b * t * c, seed + 5)).with_proj(values(c * c, seed + 3), values(c, seed + 4))
}

/// A run that starts at the attention core with the given q, k, v and no output projection.
pub(crate) fn from_qkv(shape: Shape, mask: Mask, q: Vec<f32>, k: Vec<f32>, v: Vec<f32>) -> Inputs {
    let n = shape.b * shape.t * shape.c;
    Inputs::new(shape, mask, Start::Qkv { q, k, v }, vec![1.0; n])
}

/// Separate projections with `w_k, w_v [C, H_kv·D]` (`[C, C]` unless the shape groups its
/// key/value heads); keys and values from `memory` when `cross`.
pub(crate) fn separate(sh: Shape, mask: Mask, cross: bool, seed: u64) -> Inputs {
    let Shape { b, s, t, c, .. } = sh;
    let kv = sh.kv_c();
    let start = Start::Separate {
        x: values(b * s * c, seed),
        memory: cross.then(|| values(b * t * c, seed + 1)),
        w_q: values(c * c, seed + 2),
        b_q: values(c, seed + 3),
        w_k: values(c * kv, seed + 4),
        b_k: values(kv, seed + 5),
        w_v: values(c * kv, seed + 6),
        b_v: values(kv, seed + 7),
    };
    Inputs::new(sh, mask, start, values(b * s * c, seed + 10)).with_proj(values(c * c, seed + 8), values(c, seed + 9))
}

/// Rows of a `[T, C]` matrix written as `[[..], [..]]`, flattened.
pub(crate) fn rows<const C: usize>(rows: &[[f32; C]]) -> Vec<f32> {
    rows.iter().flatten().copied().collect()
}

/// An explicit `[S, T]` mask that hides whole tiles of (2, 2) and leaves others partly visible;
/// every query sees at least one key.
pub(crate) fn explicit(s: usize, t: usize) -> Mask {
    let rows: Vec<Vec<bool>> = (0..s)
        .map(|i| (0..t).map(|j| (i + 2 * j) % 5 == 0 || j == (i * 3 + 1) % t).collect())
        .collect();
    Mask::explicit(&rows)
}

/// The attention core's inputs and upstream gradient, for the untraced-against-traced tests:
/// `q, d_att [B,S,C]`, `k, v [B,T,H_kv·D]`.
pub(crate) struct Core {
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
    pub d_att: Vec<f32>,
}

/// [`Core`] uniform from `seed`: `q` and `k` in `[-amp, amp)` (an amplitude of 2 or 3 makes
/// some softmax rows peaked and others flat), `v` and `d_att` in `[-1, 1)`.
pub(crate) fn core(sh: Shape, amp: f32, seed: u64) -> Core {
    let Shape { b, s, t, c, .. } = sh;
    let kv = sh.kv_c();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut random = |n: usize, amp: f32| -> Vec<f32> { (0..n).map(|_| rng.random_range(-amp..amp)).collect() };
    Core {
        q: random(b * s * c, amp),
        k: random(b * t * kv, amp),
        v: random(b * t * kv, 1.0),
        d_att: random(b * s * c, 1.0),
    }
}

/// An explicit `[S,T]` mask of about half the pairs from `seed`, its first row entirely hidden
/// (a softmax over nothing but −1e9, which is uniform).
pub(crate) fn half_mask(s: usize, t: usize, seed: u64) -> Mask {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let rows: Vec<Vec<bool>> = (0..s)
        .map(|i| (0..t).map(|_| i > 0 && rng.random_bool(0.5)).collect())
        .collect();
    Mask::explicit(&rows)
}
