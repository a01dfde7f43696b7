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

/// Where a rotation's channels sit in a buffer: each position's row holds `heads` heads of
/// `stride` numbers, and channels `at..at + width` of each head turn. MHA turns whole heads
/// (`at = 0`, `width = stride = D`); multi-head latent attention turns only the `DR` rotary
/// channels after a query head's `D` (`at = D`).
#[derive(Clone, Copy)]
struct Part {
    /// The frame of a head: its loop variable and offset (`hh, q_base`); or, where a row has
    /// one rotated part (MLA's `k_pe`), the position's frame with the row's offset
    /// (`t, cs, pe_base`).
    names: Names,
    heads: usize,
    stride: usize,
    at: usize,
    width: usize,
}

#[derive(Clone, Copy)]
enum Names {
    Head(&'static [&'static str; 2]),
    Row(&'static [&'static str; 3]),
    /// A decode cache row, whose offset `ci` the decode step has already named.
    CacheRow,
}

impl Part {
    /// A whole head of `D` channels, one of `heads`.
    const fn heads(names: &'static [&'static str; 2], heads: usize, D: usize) -> Part {
        Part {
            names: Names::Head(names),
            heads,
            stride: D,
            at: 0,
            width: D,
        }
    }
}

/// Forward: q and k of the rows `rows` rotated in place, each query head (`H`) and each key
/// head (`H_kv`) pair by pair. `k` is `Buf::K`, or the key cache when decoding.
pub fn forward<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    pairs: Pairs,
    rows: Rows,
    tables: (&[f32], &[f32]),
    q: &mut [f32],
    (kb, k): (Buf, &mut [f32]),
) {
    // rope: rotate every (d0, d1) pair of q and of k by t·θ_m
    rec.phase(Phase::Rope);
    let (T, D) = (sh.t, sh.d());
    let q_part = Part::heads(&["hh", "q_base"], sh.h, D);
    let k_part = Part::heads(&["kv_h", "k_base"], sh.h_kv, D);
    rotate(rec, T, pairs, rows.clone(), tables, false, q_part, (Buf::Q, q));
    rotate(rec, T, pairs, rows, tables, false, k_part, (kb, k));
}

/// Backward: `d_q` and `d_k` rotated back in place, by `−t·θ_m`, into the gradients of q and k
/// before the rotation.
pub fn backward<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    pairs: Pairs,
    tables: (&[f32], &[f32]),
    d_q: &mut [f32],
    d_k: &mut [f32],
) {
    // rope backward: rotate every pair of dQ and dK back by −t·θ_m
    rec.phase(Phase::RopeBack);
    let (rows, T, D) = ((0..sh.b, 0..sh.t), sh.t, sh.d());
    let q_part = Part::heads(&["hh", "q_base"], sh.h, D);
    let k_part = Part::heads(&["kv_h", "k_base"], sh.h_kv, D);
    rotate(rec, T, pairs, rows.clone(), tables, true, q_part, (Buf::DQ, d_q));
    rotate(rec, T, pairs, rows, tables, true, k_part, (Buf::DK, d_k));
}

/// Where multi-head latent attention's rotary key lives: `k_pe [B,T,DR]` in the training
/// form, or the last `DR` numbers of each `[c_kv | k_pe]` row of the decode cache
/// (`kv_cache [B,T,R + DR]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatentKey {
    KPe,
    Cache { r: usize },
}

impl LatentKey {
    fn part(self, DR: usize) -> Part {
        match self {
            LatentKey::KPe => Part {
                names: Names::Row(&["t", "cs", "pe_base"]),
                heads: 1,
                stride: DR,
                at: 0,
                width: DR,
            },
            LatentKey::Cache { r } => Part {
                names: Names::CacheRow,
                heads: 1,
                stride: r + DR,
                at: r,
                width: DR,
            },
        }
    }
}

/// Multi-head latent attention's forward rotation: only the `DR` rotary channels turn, `q_pe`
/// (channels `D..D + DR` of each query head of `q [B,T,H,D + DR]`) and the one `k_pe` row
/// every head shares (`k`: `Buf::KPe`, or `Buf::KvCache` when decoding). The tables are
/// `[T, DR/2]`, `θ_m = base^(−2m/DR)`.
#[allow(clippy::too_many_arguments)]
pub fn forward_latent<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    DR: usize,
    pairs: Pairs,
    rows: Rows,
    tables: (&[f32], &[f32]),
    q: &mut [f32],
    (key, k): (LatentKey, &mut [f32]),
) {
    // rope: rotate every pair of q_pe and of k_pe by t·θ_m; q_nope and c_kv keep no position
    rec.phase(Phase::Rope);
    let kb = match key {
        LatentKey::KPe => Buf::KPe,
        LatentKey::Cache { .. } => Buf::KvCache,
    };
    let q_part = latent_query(sh, DR);
    rotate(rec, sh.t, pairs, rows.clone(), tables, false, q_part, (Buf::Q, q));
    rotate(rec, sh.t, pairs, rows, tables, false, key.part(DR), (kb, k));
}

/// [`forward_latent`] backwards: `d_q`'s rotary channels and `d_k_pe` turned back by `−t·θ_m`.
pub fn backward_latent<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    DR: usize,
    pairs: Pairs,
    tables: (&[f32], &[f32]),
    d_q: &mut [f32],
    d_k_pe: &mut [f32],
) {
    // rope backward: rotate every pair of dQ_pe and dK_pe back by −t·θ_m
    rec.phase(Phase::RopeBack);
    let rows = (0..sh.b, 0..sh.t);
    let q_part = latent_query(sh, DR);
    let k_part = LatentKey::KPe.part(DR);
    rotate(rec, sh.t, pairs, rows.clone(), tables, true, q_part, (Buf::DQ, d_q));
    rotate(rec, sh.t, pairs, rows, tables, true, k_part, (Buf::DKPe, d_k_pe));
}

/// A latent-attention query head: `D + DR` channels, of which the last `DR` turn.
fn latent_query(sh: Shape, DR: usize) -> Part {
    Part {
        names: Names::Head(&["hh", "q_base"]),
        heads: sh.h,
        stride: sh.d() + DR,
        at: sh.d(),
        width: DR,
    }
}

/// Rotates the part `part` of `x` (q, k or their gradients) in the rows `rows`: by `+t·θ_m`,
/// or by `−t·θ_m` when `back`. `T` is the positions per sequence.
#[allow(clippy::too_many_arguments)]
fn rotate<R: Recorder>(
    rec: &mut R,
    T: usize,
    pairs: Pairs,
    (bs, ts): Rows,
    (cos, sin): (&[f32], &[f32]),
    back: bool,
    part: Part,
    (xb, x): (Buf, &mut [f32]),
) {
    let Part {
        names,
        heads,
        stride,
        at,
        width,
    } = part;
    let pair_names: &'static [&'static str; 3] = match pairs {
        Pairs::Interleaved => &["m", "d0", "d1"],
        Pairs::Half => &["m", "lo", "hi"],
    };
    for bb in bs {
        rec.enter(&["bb"], [bb]);
        for t in ts.clone() {
            let cs = t * (width / 2);
            match names {
                Names::Head(_) | Names::CacheRow => rec.enter(&["t", "cs"], [t, cs]),
                Names::Row(names) => rec.enter(names, [t, cs, (bb * T + t) * stride]),
            }
            for hh in 0..heads {
                let base = ((bb * T + t) * heads + hh) * stride;
                if let Names::Head(names) = names {
                    rec.enter(names, [hh, base]);
                }
                // the turned channels start `at` into the head: after q_nope in MLA
                let base = base + at;
                for m in 0..width / 2 {
                    let (d0, d1) = pairs.channels(m, width);
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
                if let Names::Head(_) = names {
                    rec.exit();
                }
            }
            rec.exit();
        }
        rec.exit();
    }
}
