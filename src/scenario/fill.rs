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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tensor_has_its_own_reproducible_stream() {
        let init = Init {
            seed: 7,
            dist: Dist::Normal { std: 1.0 },
        };
        let x = init.fill(Buf::X, 8);
        assert_eq!(x, init.fill(Buf::X, 8), "same seed and name give the same values");
        assert_ne!(x, init.fill(Buf::WQkv, 8), "another tensor draws another stream");
        // a longer fill starts with the same values: sizes do not shift the stream
        assert_eq!(x[..], init.fill(Buf::X, 12)[..8]);
        let other_seed = Init { seed: 8, ..init };
        assert_ne!(x, other_seed.fill(Buf::X, 8));
    }

    #[test]
    fn distributions_have_their_documented_values() {
        let init = |dist| Init { seed: 0, dist };
        assert_eq!(
            init(Dist::Arange { scale: 0.5 }).fill(Buf::X, 4),
            vec![0.0, 0.5, 1.0, 1.5]
        );
        assert_eq!(init(Dist::Ones).fill(Buf::X, 2), vec![1.0, 1.0]);
        assert_eq!(init(Dist::Zeros).fill(Buf::X, 2), vec![0.0, 0.0]);
        let u = init(Dist::Uniform { scale: 0.1 }).fill(Buf::X, 1000);
        assert!(u.iter().all(|v| v.abs() <= 0.1));
        assert!(u.iter().any(|v| *v > 0.05) && u.iter().any(|v| *v < -0.05));
        let n = init(Dist::Normal { std: 2.0 }).fill(Buf::X, 4000);
        let mean = n.iter().sum::<f32>() / n.len() as f32;
        let var = n.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n.len() as f32;
        assert!(mean.abs() < 0.15, "mean {mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.1, "std {}", var.sqrt());
    }
}
