//! Deterministic values for the tensors a scenario does not give.
//!
//! Each tensor draws from its own ChaCha8 stream, selected by a hash of its name, so giving one
//! tensor explicitly (or changing its size) never changes the values drawn for another.

use super::{Dist, Init};
use crate::trace::Buf;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

impl Init {
    /// `n` values for the buffer `buf` (its stream is chosen by its name).
    pub fn fill(&self, buf: Buf, n: usize) -> Vec<f32> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(stream_of(buf.name()));
        match self.dist {
            Dist::Normal { std } => (0..n)
                .map(|_| {
                    let z: f32 = rng.sample(StandardNormal);
                    z * std
                })
                .collect(),
            Dist::Uniform { scale } => (0..n).map(|_| rng.random_range(-1.0f32..=1.0) * scale).collect(),
            Dist::Zeros => vec![0.0; n],
            Dist::Ones => vec![1.0; n],
            Dist::Arange { scale } => (0..n).map(|k| k as f32 * scale).collect(),
        }
    }
}

/// FNV-1a of the name: a fixed, portable stream number per tensor.
fn stream_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
