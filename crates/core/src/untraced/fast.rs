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
#![allow(non_snake_case)]

use crate::kernels::Mask;
use crate::tensor::Shape;
use crate::tensor::simd::{exp, with_simd};
use crate::trace::MASKED;

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

// ---------------------------------------------------------------------------------------------
// Packed operands. Every pass is a set of dot products `out[r][l] = Σ_k a[r][k]·b[k][l]` with the
// terms in the kernel's order. A tile of R rows × W columns of outputs reads, for each k, the R
// values a[·][k] and the W values b[k][·]; the b values are first copied next to each other
// ("packed", as a matrix library does), so the innermost loop loads them as whole vectors and
// keeps its R·W sums in registers, while the R values of a are read where they lie, R streams
// of single values (rows, or columns at a fixed stride) that the CPU reads as fast as one.
// Packing moves each b input once per head; the sums then read it D or T times. It also takes
// the rows of a head, which lie C = H·D values apart in the big buffers, out of the few L1
// cache sets such a stride falls into, where they would evict each other.

/// Copies `x`'s `n` rows of `m` values (row `k` is `row(k)[..m]`) into column blocks as
/// `col_blocks!` cuts `0..m`: the block of width `W` at column `c0` goes to
/// `out[c0·n..(c0 + W)·n]` as `[n][W]`, so a tile of those W columns reads row `k` at
/// `c0·n + k·W`.
#[inline(always)]
fn pack_panels<'a>(n: usize, m: usize, row: impl Fn(usize) -> &'a [f32], out: &mut Vec<f32>) {
    out.clear();
    out.resize(n * m, 0.0);
    pack_panels_into(false, n, m, row, out);
}

/// [`pack_panels`] into the first `n·m` values of `out`, in the blocks of
/// `col_blocks!(wide wide; …)`.
#[inline(always)]
pub(super) fn pack_panels_into<'a>(wide: bool, n: usize, m: usize, row: impl Fn(usize) -> &'a [f32], out: &mut [f32]) {
    for k in 0..n {
        let x = &row(k)[..m];
        col_blocks!(wide wide; m, c0, W, {
            out[c0 * n + k * W..c0 * n + k * W + W].copy_from_slice(&x[c0..c0 + W]);
        });
    }
}

/// [`pack_panels`] of the transpose: `x`'s `m` rows of `n` values read column by column, so
/// the block at column `c0` of the transpose is `[n][W]` with `[k][l] = row(c0 + l)[k]`.
#[inline(always)]
fn pack_panels_t<'a>(n: usize, m: usize, row: impl Fn(usize) -> &'a [f32], out: &mut Vec<f32>) {
    out.clear();
    out.resize(n * m, 0.0);
    pack_panels_t_into(false, n, m, row, out);
}

/// [`pack_panels_t`] into the first `n·m` values of `out`, in the blocks of
/// `col_blocks!(wide wide; …)`.
#[inline(always)]
pub(super) fn pack_panels_t_into<'a>(
    wide: bool,
    n: usize,
    m: usize,
    row: impl Fn(usize) -> &'a [f32],
    out: &mut [f32],
) {
    col_blocks!(wide wide; m, c0, W, {
        // the block's W rows, each cut to n values once, then written a whole `[k][..W]` at a
        // time: W loads and one contiguous store per k, no index to check per value
        let rows: [&[f32]; W] = each(|l| &row(c0 + l)[..n]);
        let block = out[c0 * n..(c0 + W) * n].as_chunks_mut::<W>().0;
        for (k, dst) in block.iter_mut().enumerate() {
            *dst = each(|l| rows[l][k]);
        }
    });
}

/// Where the products of a row of probabilities with a block of finite values stop mattering:
/// one past the last `p[j]` that is not zero (0 for a row of zeros). A zero times a finite value
/// is ±0, and adding ±0 to a sum that started at +0 leaves it exactly as it was (such a sum is
/// never −0), so a dot product may stop there with the same bits. Under a causal mask a row's
/// hidden keys have probability exactly 0, so this skips them.
#[inline(always)]
pub(super) fn nonzero_len(p: &[f32]) -> usize {
    // whole blocks of eight zeros from the end, eight at a time, then one by one
    let (blocks, tail) = p.as_chunks::<8>();
    if tail.iter().any(|&x| x != 0.0) {
        return p.len() - tail.iter().rev().position(|&x| x != 0.0).map_or(0, |n| n);
    }
    match blocks
        .iter()
        .rposition(|b| b.iter().fold(false, |nz, &x| nz | (x != 0.0)))
    {
        Some(n) => 8 * n + 8 - blocks[n].iter().rev().position(|&x| x != 0.0).map_or(0, |n| n),
        None => 0,
    }
}

/// Whether every value is finite: only then may terms whose probability is zero be skipped
/// (zero times an infinity or NaN is NaN, which the kernel would have added).
#[inline(always)]
pub(super) fn all_finite(x: &[f32]) -> bool {
    x.iter().fold(true, |ok, v| ok & v.is_finite())
}

/// Continues `acc[r][l] += a[k][r]·b[k][l]` for `k = 0, 1, …` with `a[k][r] = rows[r][k]`, the
/// terms of `R` output rows read where they lie (`R` streams, which the CPU reads as fast as
/// one), and `b` a packed panel, rows of `W` neighbouring outputs' terms (see [`pack_panels`]);
/// the shortest of them ends the sum. Each of the `R·W` sums has one multiply and one add per
/// term, in order, exactly as the kernels' innermost loops do. The sums live in registers; rows
/// share each loaded `b[k]`, and their chains of additions overlap in time.
#[inline(always)]
fn tile_rows<const R: usize, const W: usize>(mut acc: [[f32; W]; R], rows: [&[f32]; R], b: &[f32]) -> [[f32; W]; R] {
    let b = b.as_chunks::<W>().0;
    let n = rows.iter().fold(b.len(), |n, row| n.min(row.len()));
    let mut rows = rows;
    for row in &mut rows {
        *row = &row[..n];
    }
    for (k, bk) in b[..n].iter().enumerate() {
        for (acc, row) in acc.iter_mut().zip(&rows) {
            let ark = row[k];
            for l in 0..W {
                acc[l] += ark * bk[l];
            }
        }
    }
    acc
}

/// [`tile_rows`] down columns: `a[k][r] = block[k·n + c0 + r]`, the `R` columns `c0..c0 + R`
/// of the rows of `block` (rows of `n` values), read where they are (a strided stream the CPU
/// prefetches; gathering them into a copy first cost more than it saved). The same operations
/// in the same order.
#[inline(always)]
fn tile_cols<const R: usize, const W: usize>(
    mut acc: [[f32; W]; R],
    block: &[f32],
    n: usize,
    c0: usize,
    b: &[f32],
) -> [[f32; W]; R] {
    for (row, bk) in block.chunks_exact(n).zip(b.as_chunks::<W>().0) {
        for (acc, &ark) in acc.iter_mut().zip(lanes::<R>(row, c0)) {
            for l in 0..W {
                acc[l] += ark * bk[l];
            }
        }
    }
    acc
}

/// [`tile_rows`] for one row whose terms `k` come from `ks` (an explicit mask's visible pairs),
/// read through `a(k)` and `b(k)[c0..c0 + W]` in place.
#[inline(always)]
fn tile_at<'a, const W: usize>(
    mut acc: [f32; W],
    c0: usize,
    ks: impl Iterator<Item = usize>,
    a: impl Fn(usize) -> f32,
    b: impl Fn(usize) -> &'a [f32],
) -> [f32; W] {
    for k in ks {
        let (ak, bk) = (a(k), lanes::<W>(b(k), c0));
        for l in 0..W {
            acc[l] += ak * bk[l];
        }
    }
    acc
}

/// `[f(0), f(1), …, f(N − 1)]`, inlined where it is used. `std::array::from_fn` and
/// `<[T; N]>::map` may be left out of line: a call per tile into a copy compiled without the
/// caller's instruction set (1.5% of a long-context training step was spent there).
#[inline(always)]
pub(super) fn each<T: Copy + Default, const N: usize>(mut f: impl FnMut(usize) -> T) -> [T; N] {
    let mut out = [T::default(); N];
    for (i, x) in out.iter_mut().enumerate() {
        *x = f(i);
    }
    out
}

/// `x[c0..c0 + W]` as an array, so the compiler sees its length.
#[inline(always)]
pub(super) fn lanes<const W: usize>(x: &[f32], c0: usize) -> &[f32; W] {
    match x[c0..].first_chunk::<W>() {
        Some(lanes) => lanes,
        #[allow(clippy::panic, reason = "the tiles stay inside their rows by construction")]
        None => panic!("row of {} values has no {W} values at {c0}", x.len()),
    }
}

/// Stores one tile row at `out[at..at + W]`, times `scale`.
#[inline(always)]
pub(super) fn store<const W: usize>(out: &mut [f32], at: usize, acc: &[f32; W], scale: f32) {
    for (o, &s) in out[at..at + W].iter_mut().zip(acc) {
        *o = s * scale;
    }
}

/// Adds one tile row, times `scale`, to `out[at..at + W]`: a query head's share of a `d_k` or
/// `d_v` its group's other heads add to as well (the kernel's `rec.add`).
#[inline(always)]
pub(super) fn accumulate<const W: usize>(out: &mut [f32], at: usize, acc: &[f32; W], scale: f32) {
    for (o, &s) in out[at..at + W].iter_mut().zip(acc) {
        *o += s * scale;
    }
}

/// `d_k` or `d_v` gets one tile row: stored when each key/value head has one query head,
/// added (after the buffer was cleared) when a group shares it.
#[inline(always)]
fn store_kv<const W: usize>(hd: Heads, out: &mut [f32], at: usize, acc: &[f32; W], scale: f32) {
    if hd.shares_kv_heads() {
        accumulate(out, at, acc, scale);
    } else {
        store(out, at, acc, scale);
    }
}

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
/// group (see [`pack_panels`]).
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

/// Scores pass: `S[b,h,i,j] = (Σ_d q[i,d]·k[j,d])·(1/√D)`, or −1e9 where the mask hides the pair.
#[inline(always)]
fn scores_impl(hd: Heads, mask: &Mask, q: &[f32], k: &[f32], scores: &mut [f32]) {
    let mut pan = Panels::default();
    for (bb, hh, s) in head_blocks_mut(hd, scores) {
        scores_head(hd, mask, (bb, hh), q, k, s, &mut pan);
    }
}

/// The scores of head `hh` of batch `bb` into its `[S,T]` block `s`.
#[inline(always)]
fn scores_head(
    hd: Heads,
    mask: &Mask,
    (bb, hh): (usize, usize),
    q: &[f32],
    k: &[f32],
    s: &mut [f32],
    pan: &mut Panels,
) {
    let Heads { S, T, D, .. } = hd;
    let scale = hd.scale();
    // b[d][j] = k[j][d]: the keys' channels, in blocks of W keys (once per key/value head: the
    // query heads of a group read the same)
    if !hd.shares_kv(hh) {
        pack_panels_t(D, T, hd.key_rows(k, bb, hh), &mut pan.k_t);
    }
    let kp = &pan.k_t;
    let q_row = hd.query_rows(q, bb, hh);
    row_tiles!(S, i0, R, {
        let q_rows: [&[f32]; R] = each(|r| q_row(i0 + r));
        // blocks of keys past the tile's last visible one are hidden from all its rows; a few
        // hidden pairs before that are summed too, and overwritten below as the kernel does
        let keys = (i0..i0 + R).map(|i| extent(mask, i, T)).fold(0, usize::max);
        col_blocks!(T, j0, W, {
            if j0 < keys {
                let acc = tile_rows::<R, W>([[0.0; W]; R], q_rows, &kp[j0 * D..(j0 + W) * D]);
                for (r, acc) in acc.iter().enumerate() {
                    store(s, (i0 + r) * T + j0, acc, scale);
                }
            }
        });
        for i in i0..i0 + R {
            let s = &mut s[i * T..i * T + T];
            match mask {
                // the keys after the row's extent, summed or not, are hidden
                Mask::Causal => s[extent(mask, i, T)..].fill(MASKED),
                Mask::None => {}
                Mask::Explicit { .. } | Mask::Window { .. } => {
                    for (j, s) in s.iter_mut().enumerate() {
                        if mask.hides(i, j) {
                            *s = MASKED;
                        }
                    }
                }
            }
        }
    });
}

/// Softmax pass, row by row (see [`softmax_block`]).
#[inline(always)]
fn softmax_rows_impl(hd: Heads, scores: &[f32], probs: &mut [f32]) {
    let Heads { B, S, T, H, .. } = hd;
    let n = B * H * S * T;
    softmax_block(T, &scores[..n], &mut probs[..n]);
}

/// The softmax of each row of `T` values of `scores` into `probs`: the row maximum,
/// `e = exp(s − max)` for every entry, their sum left to right, then `e · (1/sum)`. The maximum
/// is the same whatever order it is taken in, so it is taken eight entries at a time; the sums
/// are not, so eight rows' sums run side by side, each stopping after its last nonzero `e`
/// (adding +0 to a positive sum changes nothing; the entries a causal mask hides are exactly 0).
#[inline(always)]
fn softmax_block(T: usize, scores: &[f32], probs: &mut [f32]) {
    for (s8, p8) in scores.chunks(8 * T).zip(probs.chunks_mut(8 * T)) {
        let mut lens = [0; 8];
        for ((s, p), len) in s8.chunks_exact(T).zip(p8.chunks_exact_mut(T)).zip(&mut lens) {
            let maxval = max(s);
            // the mask's −1e9 at the end of a row (a causal mask's hidden keys): when
            // −1e9 − max is below −87, exp gives exactly 0 there, so 0 is written without it
            // (past the block of eight where the visible keys end: within it exp's 0 is written)
            let end = if MASKED - maxval < -87.0 {
                (T - masked_tail(s)).next_multiple_of(8).min(T)
            } else {
                T
            };
            for (p, &s) in p[..end].iter_mut().zip(&s[..end]) {
                *p = exp(s - maxval);
            }
            p[end..].fill(0.0);
            *len = nonzero_len(&p[..end]);
        }
        let sums = row_sums(p8, T, lens, |_, e| e);
        for (p, sum) in p8.chunks_exact_mut(T).zip(sums) {
            let inv = 1.0 / sum;
            p.iter_mut().for_each(|p| *p *= inv);
        }
    }
}

/// How many entries at the end of `s` are the mask's −1e9, eight at a time while whole blocks
/// of eight are.
#[inline(always)]
fn masked_tail(s: &[f32]) -> usize {
    let (head, blocks) = s.as_rchunks::<8>();
    let mut n = 0;
    for block in blocks.iter().rev() {
        if block.iter().fold(true, |all, &x| all & (x == MASKED)) {
            n += 8;
        } else {
            return n + block.iter().rev().take_while(|&&x| x == MASKED).count();
        }
    }
    n + head.iter().rev().take_while(|&&x| x == MASKED).count()
}

/// Backward of the softmax, row by row (see [`softmax_back_block`]).
#[inline(always)]
fn softmax_rows_back_impl(hd: Heads, probs: &[f32], d_probs: &[f32], d_scores: &mut [f32]) {
    let Heads { B, S, T, H, .. } = hd;
    let n = B * H * S * T;
    softmax_back_block(T, &probs[..n], &d_probs[..n], &mut d_scores[..n]);
}

/// Backward of the softmax for each row of `T` values: `dot = Σ_j dP[j]·P[j]` left to right
/// (eight rows side by side, each stopping after its last nonzero `P[j]` when its `dP` is
/// finite: the rest add ±0 to a sum that is never −0), then `dS[j] = P[j]·(dP[j] − dot)`.
#[inline(always)]
fn softmax_back_block(T: usize, probs: &[f32], d_probs: &[f32], d_scores: &mut [f32]) {
    let rows = probs.chunks(8 * T).zip(d_probs.chunks(8 * T));
    for ((p8, dp8), ds8) in rows.zip(d_scores.chunks_mut(8 * T)) {
        let mut lens = [0; 8];
        for ((p, dp), len) in p8.chunks_exact(T).zip(dp8.chunks_exact(T)).zip(&mut lens) {
            *len = if all_finite(dp) { nonzero_len(p) } else { T };
        }
        let dots = row_sums(p8, T, lens, |k, p| dp8[k] * p);
        let rows = p8.chunks_exact(T).zip(dp8.chunks_exact(T)).zip(ds8.chunks_exact_mut(T));
        for (((p, dp), ds), dot) in rows.zip(dots) {
            for ((ds, &p), &dp) in ds.iter_mut().zip(p).zip(dp) {
                *ds = p * (dp - dot);
            }
        }
    }
}

/// The largest value of `x` (NaN ignored), as `f32::max` over it left to right gives: which
/// of two equal values wins never matters, so the order of comparisons does not either.
#[inline(always)]
pub(super) fn max(x: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for l in 0..8 {
            lanes[l] = lanes[l].max(c[l]);
        }
    }
    let tail = chunks.remainder().iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    lanes.iter().fold(tail, |m, &v| m.max(v))
}

/// `Σ_j term(k, x[k])` over `j < lens[r]` with `k = r·T + j` for each of the (up to 8) rows `r`
/// of length `T` in `x`, each sum from 0 adding `j = 0, 1, …` in order. While every row still
/// has terms, the rows' additions are independent and the CPU overlaps them; then each row
/// finishes alone. Entries past the last row are 0 (callers zip with the rows).
#[inline(always)]
fn row_sums(x: &[f32], T: usize, lens: [usize; 8], term: impl Fn(usize, f32) -> f32) -> [f32; 8] {
    let rows = x.len() / T;
    let mut sums = [0.0f32; 8];
    let together = if rows == 8 {
        lens.iter().copied().fold(T, usize::min)
    } else {
        0
    };
    for j in 0..together {
        for (r, sum) in sums.iter_mut().enumerate() {
            let k = r * T + j;
            *sum += term(k, x[k]);
        }
    }
    for (r, sum) in sums.iter_mut().enumerate().take(rows) {
        for j in together..lens[r] {
            let k = r * T + j;
            *sum += term(k, x[k]);
        }
    }
    sums
}

/// Weighted-sum pass: `att[b,i,h,d] = Σ_j P[b,h,i,j]·v[b,j,h,d]` over every key.
#[inline(always)]
fn weighted_sum_impl(hd: Heads, p: &[f32], v: &[f32], att: &mut [f32]) {
    let mut pan = Panels::default();
    for (bb, hh, p) in head_blocks(hd, p) {
        weighted_sum_head(hd, (bb, hh), p, v, att, &mut pan);
    }
}

/// The weighted sum of head `hh` of batch `bb`, from its `[S,T]` block of probabilities `p`.
#[inline(always)]
fn weighted_sum_head(hd: Heads, (bb, hh): (usize, usize), p: &[f32], v: &[f32], att: &mut [f32], pan: &mut Panels) {
    let Heads { S, T, D, .. } = hd;
    // b[j][d] = v[j][d], in blocks of W channels (once per key/value head)
    if !hd.shares_kv(hh) {
        pack_panels(T, D, hd.key_rows(v, bb, hh), &mut pan.v);
        pan.v_finite = all_finite(&pan.v);
    }
    let vp = &pan.v;
    row_tiles!(S, i0, R, {
        let p_rows: [&[f32]; R] = each(|r| &p[(i0 + r) * T..(i0 + r + 1) * T]);
        // the keys after the tile's last nonzero probability add ±0 (see nonzero_len)
        let keys = if pan.v_finite {
            p_rows.iter().map(|p| nonzero_len(p)).fold(0, usize::max)
        } else {
            T
        };
        let p_rows = p_rows.map(|p| &p[..keys]);
        col_blocks!(D, d0, W, {
            let acc = tile_rows::<R, W>([[0.0; W]; R], p_rows, &vp[d0 * T..(d0 + W) * T]);
            for (r, acc) in acc.iter().enumerate() {
                store(att, hd.q_base(bb, i0 + r, hh) + d0, acc, 1.0);
            }
        });
    });
}

/// Backward of the weighted sum: `dP[b,h,i,j] = Σ_d dAtt[b,i,h,d]·v[b,j,h,d]` for every pair,
/// then `dV[b,j,h,d] = Σ_i P[b,h,i,j]·dAtt[b,i,h,d]`.
#[inline(always)]
fn weighted_sum_back_impl(hd: Heads, p: &[f32], v: &[f32], d_att: &[f32], d_p: &mut [f32], d_v: &mut [f32]) {
    let mut pan = Panels::default();
    for (bb, hh, d_p) in head_blocks_mut(hd, d_p) {
        d_probs_head(hd, (bb, hh), (v, d_att), d_p, &mut pan, false);
    }
    // the query heads of a group add into the same d_v: it starts at 0
    if hd.shares_kv_heads() {
        d_v[..hd.B * hd.T * hd.H_kv * hd.D].fill(0.0);
    }
    for (bb, hh, p) in head_blocks(hd, p) {
        d_values_head(hd, (bb, hh), p, d_att, d_v, &mut pan);
    }
}

/// `dP` of head `hh` of batch `bb` into its `[S,T]` block `d_p`. With `hidden_zero` (a causal
/// mask, and a caller that reads a hidden pair's `dP` only to see whether it is finite), when
/// no sum can reach infinity (`D·max|dAtt|·max|v|` is far below `f32::MAX`, so every `dP` is
/// finite), the blocks of keys past a tile's last visible one are written as 0 instead of summed.
#[inline(always)]
fn d_probs_head(
    hd: Heads,
    (bb, hh): (usize, usize),
    (v, d_att): (&[f32], &[f32]),
    d_p: &mut [f32],
    pan: &mut Panels,
    hidden_zero: bool,
) {
    let Heads { S, T, D, .. } = hd;
    // b[d][j] = v[j][d], in blocks of W keys (once per key/value head)
    if !hd.shares_kv(hh) {
        pack_panels_t(D, T, hd.key_rows(v, bb, hh), &mut pan.v_t);
        pan.v_t_max = max_abs(&pan.v_t);
    }
    let vp = &pan.v_t;
    let d_att_row = hd.query_rows(d_att, bb, hh);
    let skip = hidden_zero && {
        let a_max = (0..S).map(|i| max_abs(d_att_row(i))).fold(0.0, f32::max);
        // a NaN bound fails the comparison too
        (D as f32) * a_max * pan.v_t_max < f32::MAX / 4.0
    };
    row_tiles!(S, i0, R, {
        let d_att_rows: [&[f32]; R] = each(|r| d_att_row(i0 + r));
        let keys = if skip { extent(&Mask::Causal, i0 + R - 1, T) } else { T };
        col_blocks!(T, j0, W, {
            let acc = if j0 < keys {
                tile_rows::<R, W>([[0.0; W]; R], d_att_rows, &vp[j0 * D..(j0 + W) * D])
            } else {
                [[0.0; W]; R]
            };
            for (r, acc) in acc.iter().enumerate() {
                store(d_p, (i0 + r) * T + j0, acc, 1.0);
            }
        });
    });
}

/// The largest `|x|`, or NaN if any value is not finite.
#[inline(always)]
pub(super) fn max_abs(x: &[f32]) -> f32 {
    let m = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if all_finite(x) { m } else { f32::NAN }
}

/// Head `hh`'s share of `dV` (stored, or added when grouped), from its `[S,T]` block `p`.
#[inline(always)]
fn d_values_head(hd: Heads, (bb, hh): (usize, usize), p: &[f32], d_att: &[f32], d_v: &mut [f32], pan: &mut Panels) {
    let Heads { S, T, D, .. } = hd;
    // b[i][d] = dAtt[i][d], in blocks of W channels
    pack_panels(S, D, hd.query_rows(d_att, bb, hh), &mut pan.d_att);
    let dap = &pan.d_att;
    let finite = all_finite(dap);
    pan.lens.clear();
    let lens = p
        .chunks_exact(T)
        .map(|p_row| if finite { nonzero_len(p_row) } else { T });
    pan.lens.extend(lens);
    let lens = &pan.lens;
    row_tiles!(T, j0, R, {
        // queries before the first with a nonzero probability at or after key j0 add ±0 to
        // every key of the tile, and a sum from +0 stays +0 (see nonzero_len)
        let first = lens.iter().position(|&len| len > j0).unwrap_or(S);
        let p_cols = &p[first * T..];
        col_blocks!(D, d0, W, {
            let dap_block = &dap[d0 * S + first * W..(d0 + W) * S];
            let acc = tile_cols::<R, W>([[0.0; W]; R], p_cols, T, j0, dap_block);
            for (r, acc) in acc.iter().enumerate() {
                store_kv(hd, d_v, hd.k_base(bb, j0 + r, hh) + d0, acc, 1.0);
            }
        });
    });
}

/// Backward of the scores: `dQ[b,i,h,d] = (Σ_j dS[b,h,i,j]·k[b,j,h,d])·(1/√D)` and
/// `dK[b,j,h,d] = (Σ_i dS[b,h,i,j]·q[b,i,h,d])·(1/√D)`, each over the visible pairs only, in
/// increasing order.
#[inline(always)]
fn scores_back_impl(hd: Heads, mask: &Mask, q: &[f32], k: &[f32], d_scores: &[f32], d_q: &mut [f32], d_k: &mut [f32]) {
    // the query heads of a group add into the same d_k: it starts at 0
    if hd.shares_kv_heads() {
        d_k[..hd.B * hd.T * hd.H_kv * hd.D].fill(0.0);
    }
    let mut pan = Panels::default();
    for (bb, hh, ds) in head_blocks(hd, d_scores) {
        scores_back_head(hd, mask, (bb, hh), (q, k), ds, d_q, d_k, &mut pan);
    }
}

/// [`scores_back_impl`] for head `hh` of batch `bb`, from its `[S,T]` block `ds_block`. Under
/// the causal mask query `i` sees keys `0..=i`: the rows of a tile share the keys of its first
/// row and then each continues alone (dQ); key `j` is seen by queries `j..S`: each row of a tile
/// first takes its own queries, then all share the rest (dK). An explicit mask is taken one row
/// at a time.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn scores_back_head(
    hd: Heads,
    mask: &Mask,
    (bb, hh): (usize, usize),
    (q, k): (&[f32], &[f32]),
    ds_block: &[f32],
    d_q: &mut [f32],
    d_k: &mut [f32],
    pan: &mut Panels,
) {
    let Heads { S, T, D, .. } = hd;
    let scale = hd.scale();
    let ds_row = |i: usize| &ds_block[i * T..i * T + T];
    if let Mask::Explicit { .. } | Mask::Window { .. } = mask {
        let (k_row, q_row) = (hd.key_rows(k, bb, hh), hd.query_rows(q, bb, hh));
        for i in 0..S {
            col_blocks!(D, d0, W, {
                let keys = (0..T).filter(|&j| !mask.hides(i, j));
                let acc = tile_at::<W>([0.0; W], d0, keys, |j| ds_row(i)[j], &k_row);
                store(d_q, hd.q_base(bb, i, hh) + d0, &acc, scale);
            });
        }
        for j in 0..T {
            col_blocks!(D, d0, W, {
                let queries = (0..S).filter(|&i| !mask.hides(i, j));
                let acc = tile_at::<W>([0.0; W], d0, queries, |i| ds_row(i)[j], &q_row);
                store_kv(hd, d_k, hd.k_base(bb, j, hh) + d0, &acc, scale);
            });
        }
        return;
    }
    // causal or no mask: every row's terms are a range. dQ: b[j][d] = k[j][d] (packed once per
    // key/value head); the rows of a tile share the keys of its first row, then each continues
    // alone
    if !hd.shares_kv(hh) {
        pack_panels(T, D, hd.key_rows(k, bb, hh), &mut pan.k);
    }
    let kp = &pan.k;
    row_tiles!(S, i0, R, {
        let shared = extent(mask, i0, T);
        let ds_rows: [&[f32]; R] = each(|r| &ds_row(i0 + r)[..shared]);
        col_blocks!(D, d0, W, {
            let k_block = &kp[d0 * T..(d0 + W) * T];
            let acc = tile_rows::<R, W>([[0.0; W]; R], ds_rows, k_block);
            for (r, acc) in acc.iter().enumerate() {
                // a row of one: its terms are the row itself
                let own = &ds_row(i0 + r)[shared..extent(mask, i0 + r, T)];
                let acc = tile_rows::<1, W>([*acc], [own], &k_block[shared * W..]);
                store(d_q, hd.q_base(bb, i0 + r, hh) + d0, &acc[0], scale);
            }
        });
    });
    // dK: b[i][d] = q[i][d]; key j is seen by queries first(j)..S: each row of a tile first
    // takes its own queries, then all share the rest
    pack_panels(S, D, hd.query_rows(q, bb, hh), &mut pan.q);
    let qp = &pan.q;
    let first = |j: usize| if matches!(mask, Mask::Causal) { j.min(S) } else { 0 };
    row_tiles!(T, j0, R, {
        let shared = first(j0 + R - 1);
        col_blocks!(D, d0, W, {
            let q_block = &qp[d0 * S..(d0 + W) * S];
            let mut acc = [[0.0; W]; R];
            for (r, acc) in acc.iter_mut().enumerate() {
                let own = &ds_block[first(j0 + r) * T..shared * T];
                *acc = tile_cols::<1, W>([*acc], own, T, j0 + r, &q_block[first(j0 + r) * W..])[0];
            }
            let acc = tile_cols::<R, W>(acc, &ds_block[shared * T..], T, j0, &q_block[shared * W..]);
            for (r, acc) in acc.iter().enumerate() {
                store_kv(hd, d_k, hd.k_base(bb, j0 + r, hh) + d0, acc, scale);
            }
        });
    });
}

// ---------------------------------------------------------------------------------------------
// Head by head. The passes above each sweep every head before the next pass starts, so the
// `[B,H,S,T]` buffers between them travel through main memory once training's shapes outgrow
// the caches (at B4 T128 H8 each is 2 MB a layer). Training keeps only `probs` for the
// backward: the scores, `dP` and `dS` of one head are made and used while they sit in one
// `[S,T]` block in the cache, then the next head reuses it. Each value is computed by the same
// per-head code as in the passes, so the bits are theirs.

/// Forward head by head: scores into a block, softmax from it into `probs`, then `att`.
#[inline(always)]
fn forward_impl(hd: Heads, mask: &Mask, q: &[f32], k: &[f32], v: &[f32], probs: &mut [f32], att: &mut [f32]) {
    let Heads { S, T, .. } = hd;
    let (mut pan, mut s) = (Panels::default(), vec![0.0; S * T]);
    for (bb, hh, p) in head_blocks_mut(hd, probs) {
        scores_head(hd, mask, (bb, hh), q, k, &mut s, &mut pan);
        softmax_block(T, &s, p);
        weighted_sum_head(hd, (bb, hh), p, v, att, &mut pan);
    }
}

/// Backward head by head: `dP` into a block, `dV`, `dS` into a second block, then `dQ`, `dK`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn backward_impl(
    hd: Heads,
    mask: &Mask,
    (q, k, v): (&[f32], &[f32], &[f32]),
    probs: &[f32],
    d_att: &[f32],
    d_q: &mut [f32],
    d_k: &mut [f32],
    d_v: &mut [f32],
) {
    let Heads { S, T, .. } = hd;
    // the query heads of a group add into the same d_k and d_v: they start at 0
    if hd.shares_kv_heads() {
        d_k[..hd.B * hd.T * hd.H_kv * hd.D].fill(0.0);
        d_v[..hd.B * hd.T * hd.H_kv * hd.D].fill(0.0);
    }
    let (mut pan, mut d_p, mut d_s) = (Panels::default(), vec![0.0; S * T], vec![0.0; S * T]);
    for (bb, hh, p) in head_blocks(hd, probs) {
        // dS of a hidden pair is read by no sum of scores_back_head: its dP matters only by
        // being finite (see softmax_back_block)
        let hidden_zero = mask.is_causal();
        d_probs_head(hd, (bb, hh), (v, d_att), &mut d_p, &mut pan, hidden_zero);
        d_values_head(hd, (bb, hh), p, d_att, d_v, &mut pan);
        softmax_back_block(T, p, &d_p, &mut d_s);
        scores_back_head(hd, mask, (bb, hh), (q, k), &d_s, d_q, d_k, &mut pan);
    }
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
