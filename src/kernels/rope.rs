//! Rotary position embeddings (RoPE): before the scores, each head's channels of q and k are
//! taken in pairs, and pair `m` of position `t` is rotated by the angle `t·θ_m`, with
//! `θ_m = base^(−2m/D)` (base 10000 by default). The dot product of a rotated query at `i` and a
//! rotated key at `j` then depends on their distance `i − j`, not on where they are.
//!
//! Which channels pair up is a convention: `Interleaved` pairs neighbours `(2m, 2m+1)` (the
//! RoFormer paper, llama2.c); `Half` pairs `(m, m + D/2)` (GPT-NeoX, Hugging Face Llama).
//!
//! The angles' cosines and sines are tables `rope_cos, rope_sin [T, D/2]` at `cs + m` with
//! `cs = t*(D/2)`, filled before the run ([`tables`]), so every factor of a rotation is a read
//! in the log. q (`[B,T,H,D]`) and k (`[B,T,H_kv,D]`) are rotated in place:
//!
//! ```text
//! x'[d0] = x[d0]·cos − x[d1]·sin        x'[d1] = x[d0]·sin + x[d1]·cos
//! ```
//!
//! Backward rotates the gradients back, by `−t·θ_m` (the transpose of a rotation is its inverse).

use crate::tensor::Shape;
use crate::trace::{Buf, Phase, Recorder};
use std::ops::Range;

/// Which channels of a head form a rotated pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pairs {
    /// `(2m, 2m+1)`: neighbouring channels.
    Interleaved,
    /// `(m, m + D/2)`: the first half against the second.
    Half,
}

impl Pairs {
    pub const ALL: [Pairs; 2] = [Pairs::Interleaved, Pairs::Half];

    /// The name used in scenarios (`rope = "half"`) and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Pairs::Interleaved => "interleaved",
            Pairs::Half => "half",
        }
    }

    pub fn from_name(name: &str) -> Option<Pairs> {
        Pairs::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The two channels of pair `m` in a head of `D` channels.
    #[inline(always)]
    pub const fn channels(self, m: usize, D: usize) -> (usize, usize) {
        match self {
            Pairs::Interleaved => (2 * m, 2 * m + 1),
            Pairs::Half => (m, m + D / 2),
        }
    }
}

/// The rotation a run applies: its pairing and base.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rope {
    pub pairs: Pairs,
    /// `θ_m = base^(−2m/D)`; 10000 unless a scenario says otherwise.
    pub base: f32,
}

/// Scenarios check the base is a finite number above 1, so bitwise equality is equality.
impl Eq for Rope {}

/// The base of the original paper and of Llama 2.
pub const DEFAULT_BASE: f32 = 10000.0;

impl Rope {
    /// The angle of pair `m` at position `t` in a head of `D` channels: `t·base^(−2m/D)`,
    /// computed in f64 (the tables round its cosine and sine once, to f32).
    pub fn angle(self, t: usize, m: usize, D: usize) -> f64 {
        t as f64 * f64::from(self.base).powf(-2.0 * m as f64 / D as f64)
    }
}

/// `rope_cos` and `rope_sin [T, D/2]`: `cos(t·θ_m)` and `sin(t·θ_m)` at `t*(D/2) + m`.
pub fn tables(rope: Rope, T: usize, D: usize) -> (Vec<f32>, Vec<f32>) {
    let half = D / 2;
    let mut cos = Vec::with_capacity(T * half);
    let mut sin = Vec::with_capacity(T * half);
    for t in 0..T {
        for m in 0..half {
            let a = rope.angle(t, m, D);
            cos.push(a.cos() as f32);
            sin.push(a.sin() as f32);
        }
    }
    (cos, sin)
}

/// The sequences `bs` and positions `ts` a rotation covers: all of them in a full run, one
/// token when decoding.
pub type Rows = (Range<usize>, Range<usize>);

/// Forward: q and k of the rows `rows` rotated in place, each query head (`H`) and each key
/// head (`H_kv`) pair by pair. `k` is `Buf::K`, or the key cache when decoding.
pub fn forward<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    pairs: Pairs,
    rows: Rows,
    (cos, sin): (&[f32], &[f32]),
    q: &mut [f32],
    (kb, k): (Buf, &mut [f32]),
) {
    // rope: rotate every (d0, d1) pair of q and of k by t·θ_m
    rec.phase(Phase::Rope);
    let (H, H_kv) = (sh.h, sh.h_kv);
    rotate(
        rec,
        sh,
        pairs,
        rows.clone(),
        (cos, sin),
        false,
        (&["hh", "q_base"], H),
        (Buf::Q, q),
    );
    rotate(
        rec,
        sh,
        pairs,
        rows,
        (cos, sin),
        false,
        (&["kv_h", "k_base"], H_kv),
        (kb, k),
    );
}

/// Backward: `d_q` and `d_k` rotated back in place, by `−t·θ_m`, into the gradients of q and k
/// before the rotation.
pub fn backward<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    pairs: Pairs,
    (cos, sin): (&[f32], &[f32]),
    d_q: &mut [f32],
    d_k: &mut [f32],
) {
    // rope backward: rotate every pair of dQ and dK back by −t·θ_m
    rec.phase(Phase::RopeBack);
    let (rows, H, H_kv) = ((0..sh.b, 0..sh.t), sh.h, sh.h_kv);
    rotate(
        rec,
        sh,
        pairs,
        rows.clone(),
        (cos, sin),
        true,
        (&["hh", "q_base"], H),
        (Buf::DQ, d_q),
    );
    rotate(
        rec,
        sh,
        pairs,
        rows,
        (cos, sin),
        true,
        (&["kv_h", "k_base"], H_kv),
        (Buf::DK, d_k),
    );
}

/// Rotates the heads of `x` (q, k or their gradients) in the rows `rows`: by `+t·θ_m`, or by
/// `−t·θ_m` when `back`. `names` are the loop over the `heads` heads, its variable and offset:
/// `hh, q_base` over the `H` query heads, `kv_h, k_base` over the `H_kv` key heads.
#[allow(clippy::too_many_arguments)]
fn rotate<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    pairs: Pairs,
    (bs, ts): Rows,
    (cos, sin): (&[f32], &[f32]),
    back: bool,
    (names, heads): (&'static [&'static str; 2], usize),
    (xb, x): (Buf, &mut [f32]),
) {
    let T = sh.t;
    let D = sh.d();
    let pair_names: &'static [&'static str; 3] = match pairs {
        Pairs::Interleaved => &["m", "d0", "d1"],
        Pairs::Half => &["m", "lo", "hi"],
    };
    for bb in bs {
        rec.enter(&["bb"], [bb]);
        for t in ts.clone() {
            let cs = t * (D / 2);
            rec.enter(&["t", "cs"], [t, cs]);
            for hh in 0..heads {
                let base = ((bb * T + t) * heads + hh) * D;
                rec.enter(names, [hh, base]);
                for m in 0..D / 2 {
                    let (d0, d1) = pairs.channels(m, D);
                    rec.enter(pair_names, [m, d0, d1]);
                    let c = rec.read(Buf::RopeCos, cos, cs + m);
                    // backward turns the other way: sin(−a) = −sin(a)
                    let s = if back {
                        -rec.read(Buf::RopeSin, sin, cs + m)
                    } else {
                        rec.read(Buf::RopeSin, sin, cs + m)
                    };
                    let x0 = rec.read(xb, x, base + d0);
                    let x1 = rec.read(xb, x, base + d1);
                    rec.write(xb, x, base + d0, x0 * c - x1 * s);
                    rec.write(xb, x, base + d1, x0 * s + x1 * c);
                    rec.exit();
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}
