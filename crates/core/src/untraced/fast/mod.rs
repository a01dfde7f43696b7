//! The attention passes as they run untraced (training, `run` without a log; chosen by
//! `dispatch.rs`): the same sums, in the same order, over the same buffers as the loops of
//! `attention_1h.rs`, `attention_mha.rs` and `attention_gqa.rs`, with the loops reordered so
//! the CPU can do eight or sixteen outputs per instruction. Grouped-query attention adds each
//! query head's `d_k`, `d_v` share in head order, as its kernel does.
//!
//! Each output of a kernel is a dot product `s = 0; for k { s += a[k]·b[k] }` accumulated one
//! term at a time. Floating-point addition is not associative, so that chain cannot be split
//! into partial sums without changing the result; a single chain, though, runs at one add per
//! add-latency and cannot use SIMD. Here the loops are interchanged instead: a tile of outputs
//! (a few rows of neighbouring outputs) is accumulated together, term `k` added to every output
//! of the tile before term `k + 1`, so each output still sees `0 + a₀b₀ + a₁b₁ + …` in the
//! kernel's order — the same bits — while the additions of neighbouring outputs sit side by side
//! in vector registers. The operand read along the outputs is first copied into the order the
//! tile reads it ("packed", as a matrix library does); the other is read in place (see
//! `tile_rows`).
//!
//! Work whose result cannot matter is skipped. Dot products of masked pairs, which the mask
//! overwrites with −1e9. And products with a probability of exactly 0 (the pairs a causal mask
//! hides), at the end or the start of a sum, when the values they multiply are finite: such a
//! product is ±0, and adding ±0 to a sum that began at +0 leaves it as it was (see
//! `nonzero_len`). `tests/it/kernels_untraced.rs` and the engine tests hold every pass to the
//! traced kernel bit for bit, infinities included.
//!
//! Each pass has a file, its forward next to its backward: `scores.rs`, `softmax.rs`,
//! `weighted_sum.rs`; `head_by_head.rs` runs them a head at a time, as training does, and
//! `tile.rs` holds the packed operands and the tile sums they all share. This file holds the
//! geometry ([`Heads`]), the tile loops (`row_tiles!`, `col_blocks!`), the entry points, one
//! copy per instruction set, and the head split.
#![allow(non_snake_case)]

use crate::kernels::Mask;
use crate::tensor::Shape;
use crate::tensor::simd::with_simd;

/// The geometry the kernels share once written per head: `q, att [B,S,H,D]`, `k, v
/// [B,T,H_kv,D]` (query head `hh` reads key/value head `hh / (H/H_kv)`), `scores, probs
/// [B,H,S,T]`. MHA is the case `H_kv = H`; the baseline kernel is `H = H_kv = 1`, `D = C`, where
/// the offsets reduce to its own `qi = (bb*S + i)*C` and `(bb*S + i)*T + j`.
#[derive(Clone, Copy, Debug)]
pub struct Heads {
    B: usize,
    S: usize,
    T: usize,
    H: usize,
    D: usize,
    H_kv: usize,
}

impl Heads {
    /// The baseline kernel's view: one head over all `C` channels.
    pub const fn baseline(sh: Shape) -> Heads {
        Heads {
            B: sh.b,
            S: sh.s,
            T: sh.t,
            H: 1,
            D: sh.c,
            H_kv: 1,
        }
    }

    /// The MHA and GQA kernels' view: `H` query heads of `D = C/H` channels over `H_kv`
    /// key/value heads (`H_kv = H` in MHA).
    pub const fn mha(sh: Shape) -> Heads {
        Heads {
            B: sh.b,
            S: sh.s,
            T: sh.t,
            H: sh.h,
            D: sh.d(),
            H_kv: sh.h_kv,
        }
    }

    /// Do several query heads share a key/value head? Then their `d_k`, `d_v` add up.
    const fn shares_kv_heads(&self) -> bool {
        self.H_kv != self.H
    }

    /// Start of head `hh` of query `i`: the kernels' `q_base` (and `a_base`).
    #[inline(always)]
    const fn q_base(&self, bb: usize, i: usize, hh: usize) -> usize {
        ((bb * self.S + i) * self.H + hh) * self.D
    }

    /// Start of the key/value head query head `hh` reads, for key (or value) `j`: the kernels'
    /// `k_base` (and `v_base`).
    #[inline(always)]
    const fn k_base(&self, bb: usize, j: usize, hh: usize) -> usize {
        ((bb * self.T + j) * self.H_kv + hh / (self.H / self.H_kv)) * self.D
    }

    /// Does query head `hh` read the same key/value head as `hh − 1`?
    #[inline(always)]
    const fn shares_kv(&self, hh: usize) -> bool {
        !hh.is_multiple_of(self.H / self.H_kv)
    }

    /// `1/√D`, computed as the kernels compute it.
    fn scale(&self) -> f32 {
        1.0 / (self.D as f32).sqrt()
    }

    /// The rows of the key/value head query head `hh` reads, of batch `bb`, in a
    /// `[B,T,H_kv,D]` buffer (keys, values): row `j` is `x[k_base..k_base + D]`.
    fn key_rows<'a>(&self, x: &'a [f32], bb: usize, hh: usize) -> impl Fn(usize) -> &'a [f32] + use<'a> {
        let (hd, D) = (*self, self.D);
        move |j| &x[hd.k_base(bb, j, hh)..hd.k_base(bb, j, hh) + D]
    }

    /// The rows of head `hh` of batch `bb` in a `[B,S,H,D]` buffer (queries, `d_att`).
    fn query_rows<'a>(&self, x: &'a [f32], bb: usize, hh: usize) -> impl Fn(usize) -> &'a [f32] + use<'a> {
        let (hd, D) = (*self, self.D);
        move |i| &x[hd.q_base(bb, i, hh)..hd.q_base(bb, i, hh) + D]
    }
}

/// Runs `$body` for tiles of 4 rows of `0..$rows` (then single rows): `$r0` is the tile's first
/// row and `$R` a constant holding its height.
macro_rules! row_tiles {
    ($rows:expr, $r0:ident, $R:ident, $body:block) => {{
        let rows = $rows;
        let mut $r0 = 0;
        while $r0 + 4 <= rows {
            const $R: usize = 4;
            $body
            $r0 += 4;
        }
        while $r0 < rows {
            const $R: usize = 1;
            $body
            $r0 += 1;
        }
    }};
}

/// Runs `$body` for blocks of 16, 8 and 1 columns covering `0..$cols`: `$c0` is the block's
/// first column and `$W` a constant holding its width. `col_blocks!(wide $wide; …)` starts with
/// blocks of 32 when `$wide` holds: a tile row as wide as two AVX-512 registers (flash's tiles
/// use them there; as wide as four AVX2 registers, four rows of them would not fit in the
/// sixteen the CPU has). A tile's outputs do not depend on the widths: each is its own sum.
macro_rules! col_blocks {
    ($cols:expr, $c0:ident, $W:ident, $body:block) => {{
        let cols = $cols;
        let mut $c0 = 0;
        $crate::untraced::fast::col_blocks!(@from16 cols, $c0, $W, $body);
    }};
    (wide $wide:expr; $cols:expr, $c0:ident, $W:ident, $body:block) => {{
        let cols = $cols;
        let mut $c0 = 0;
        if $wide {
            while $c0 + 32 <= cols {
                const $W: usize = 32;
                $body
                $c0 += 32;
            }
        }
        $crate::untraced::fast::col_blocks!(@from16 cols, $c0, $W, $body);
    }};
    (@from16 $cols:ident, $c0:ident, $W:ident, $body:block) => {
        while $c0 + 16 <= $cols {
            const $W: usize = 16;
            $body
            $c0 += 16;
        }
        while $c0 + 8 <= $cols {
            const $W: usize = 8;
            $body
            $c0 += 8;
        }
        while $c0 < $cols {
            const $W: usize = 1;
            $body
            $c0 += 1;
        }
    };
}
pub(super) use col_blocks;

mod head_by_head;
mod scores;
mod softmax;
mod tile;
mod weighted_sum;

use head_by_head::{backward_impl, forward_impl};
use scores::{scores_back_impl, scores_impl};
use softmax::{softmax_rows_back_impl, softmax_rows_impl};
pub(super) use tile::{accumulate, all_finite, each, lanes, nonzero_len, pack_panels_into, pack_panels_t_into, store};
pub(super) use weighted_sum::max_abs;
use weighted_sum::{weighted_sum_back_impl, weighted_sum_impl};

// Each pass is compiled for the baseline CPU, AVX2 and AVX-512, picked at run time (same bits).
with_simd! {
    /// Scores pass: `S[b,h,i,j] = (Σ_d q[i,d]·k[j,d])·(1/√D)`, or −1e9 where the mask hides it.
    pub fn scores(hd: Heads, mask: &Mask, q: &[f32], k: &[f32], scores: &mut [f32]) => scores_impl;
    /// Softmax pass, row by row.
    pub(crate) fn softmax_rows(hd: Heads, scores: &[f32], probs: &mut [f32]) => softmax_rows_impl;
    /// Backward of the softmax, row by row.
    pub(crate) fn softmax_rows_back(hd: Heads, probs: &[f32], d_probs: &[f32], d_scores: &mut [f32]) => softmax_rows_back_impl;
    /// Weighted-sum pass: `att = P·V` per head.
    pub fn weighted_sum(hd: Heads, p: &[f32], v: &[f32], att: &mut [f32]) => weighted_sum_impl;
    /// Backward of the weighted sum: `dP` for every pair, then `dV`.
    pub fn weighted_sum_back(hd: Heads, p: &[f32], v: &[f32], d_att: &[f32], d_p: &mut [f32], d_v: &mut [f32]) => weighted_sum_back_impl;
    /// Backward of the scores: `dQ` and `dK` over the visible pairs.
    pub fn scores_back(hd: Heads, mask: &Mask, q: &[f32], k: &[f32], d_scores: &[f32], d_q: &mut [f32], d_k: &mut [f32]) => scores_back_impl;
    /// The three forward passes head by head, keeping only what the backward reads: `probs`
    /// and `att`. A head's scores live in a block the size of one head's `[S,T]`.
    pub fn forward(hd: Heads, mask: &Mask, q: &[f32], k: &[f32], v: &[f32], probs: &mut [f32], att: &mut [f32]) => forward_impl;
    /// The three backward passes head by head, from `d_att` and `probs` to `d_q`, `d_k`, `d_v`;
    /// a head's `dP` and `dS` live in blocks the size of one head's `[S,T]`.
    pub fn backward(hd: Heads, mask: &Mask, qkv: (&[f32], &[f32], &[f32]), probs: &[f32], d_att: &[f32], d_q: &mut [f32], d_k: &mut [f32], d_v: &mut [f32]) => backward_impl;
}

/// One past the last key query `i` may see (0 if it sees none): keys beyond are all masked.
fn extent(mask: &Mask, i: usize, T: usize) -> usize {
    match mask {
        // a window hides more, but no key after i
        Mask::Causal | Mask::Window { .. } => (i + 1).min(T),
        Mask::None => T,
        Mask::Explicit { .. } => (0..T).rev().find(|&j| !mask.hides(i, j)).map_or(0, |j| j + 1),
    }
}

/// The `[S,T]` blocks of a `[B,H,S,T]` buffer with the batch and head each belongs to.
fn head_blocks(hd: Heads, x: &[f32]) -> impl Iterator<Item = (usize, usize, &[f32])> {
    let Heads { B, S, T, H, .. } = hd;
    let blocks = x[..B * H * S * T].chunks_exact(S * T).enumerate();
    blocks.map(move |(n, block)| (n / H, n % H, block))
}

/// [`head_blocks`], writable.
fn head_blocks_mut(hd: Heads, x: &mut [f32]) -> impl Iterator<Item = (usize, usize, &mut [f32])> {
    let Heads { B, S, T, H, .. } = hd;
    let blocks = x[..B * H * S * T].chunks_exact_mut(S * T).enumerate();
    blocks.map(move |(n, block)| (n / H, n % H, block))
}

/// Packed operands, each made once per key/value head and read by every query head of its
/// group (see [`pack_panels`](tile::pack_panels)).
#[derive(Default)]
struct Panels {
    /// scores: `kᵀ`, blocks of keys
    k_t: Vec<f32>,
    /// weighted sum: `v`, blocks of channels, and whether all of it is finite
    v: Vec<f32>,
    v_finite: bool,
    /// `dP`: `vᵀ`, blocks of keys, and its largest magnitude (NaN if not all finite)
    v_t: Vec<f32>,
    v_t_max: f32,
    /// `dQ`: `k`, blocks of channels
    k: Vec<f32>,
    /// `dK`: `q`, blocks of channels (per query head)
    q: Vec<f32>,
    /// `dV`: `dAtt`, blocks of channels (per query head), and where each query's
    /// probabilities end (see [`nonzero_len`])
    d_att: Vec<f32>,
    lens: Vec<usize>,
}

/// The head split as it runs untraced (`kernels/split.rs`, `attention_gqa.rs`'s `split`
/// traced): `q [B,T,C]` and `k, v [B,T,C_kv]` out of `qkv [B,T,C + 2·C_kv]` (channel offsets 0,
/// C and C + C_kv; `C_kv = H_kv·D`, which is `C` unless grouped), three contiguous copies per
/// row instead of three values per channel.
pub fn split(sh: Shape, qkv: &[f32], q: &mut [f32], k: &mut [f32], v: &mut [f32]) {
    let (n, C, Ckv) = (sh.b * sh.t, sh.c, sh.kv_c());
    let rows = qkv[..n * (C + 2 * Ckv)].chunks_exact(C + 2 * Ckv);
    let outs = q[..n * C]
        .chunks_exact_mut(C)
        .zip(k[..n * Ckv].chunks_exact_mut(Ckv))
        .zip(v[..n * Ckv].chunks_exact_mut(Ckv));
    for (row, ((q, k), v)) in rows.zip(outs) {
        q.copy_from_slice(&row[..C]);
        k.copy_from_slice(&row[C..C + Ckv]);
        v.copy_from_slice(&row[C + Ckv..]);
    }
}

/// The split's backward untraced: `d_qkv [B,T,C + 2·C_kv]` gathered from `d_q [B,T,C]` and
/// `d_k, d_v [B,T,C_kv]`.
pub fn split_back(sh: Shape, d_q: &[f32], d_k: &[f32], d_v: &[f32], d_qkv: &mut [f32]) {
    let (n, C, Ckv) = (sh.b * sh.t, sh.c, sh.kv_c());
    let rows = d_qkv[..n * (C + 2 * Ckv)].chunks_exact_mut(C + 2 * Ckv);
    let ins = d_q[..n * C]
        .chunks_exact(C)
        .zip(d_k[..n * Ckv].chunks_exact(Ckv))
        .zip(d_v[..n * Ckv].chunks_exact(Ckv));
    for (row, ((d_q, d_k), d_v)) in rows.zip(ins) {
        row[..C].copy_from_slice(d_q);
        row[C..C + Ckv].copy_from_slice(d_k);
        row[C + Ckv..].copy_from_slice(d_v);
    }
}
