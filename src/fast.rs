//! The attention passes as they run untraced (training, `run` without a log; chosen by
//! `dispatch.rs`): the same sums, in
//! the same order, over the same buffers as the loops of `attention_1h.rs`, `attention_mha.rs`
//! and `attention_gqa.rs`, with the loops reordered so the CPU can do eight outputs per
//! instruction. Grouped-query attention adds each query head's `d_k`, `d_v` share in head order,
//! as its kernel does.
//!
//! Each output of a kernel is a dot product `s = 0; for k { s += a[k]·b[k] }` accumulated one
//! term at a time. Floating-point addition is not associative, so that chain cannot be split
//! into partial sums without changing the result; a single chain, though, runs at one add per
//! add-latency and cannot use SIMD. Here the loops are interchanged instead: one row of outputs
//! is accumulated together, term `k` added to every output of the row before term `k + 1`, so
//! each output still sees `0 + a₀b₀ + a₁b₁ + …` in the kernel's order — the same bits — while
//! the additions of neighbouring outputs sit side by side in vector registers. Where the kernel
//! reads a key or value row across channels, its head is first copied transposed so the row of
//! outputs reads contiguous memory.
//!
//! Work the kernel does whose result it then discards is skipped: dot products of masked pairs,
//! which the mask overwrites with −1e9. `tests/it/kernels_untraced.rs` and the engine tests hold every pass to the traced kernel
//! bit for bit.
#![allow(non_snake_case)]

use crate::kernels::Mask;
use crate::simd::{exp, with_simd};
use crate::tensor::Shape;
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
    const fn grouped(&self) -> bool {
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

    /// Start of the score row of query `i` in head `hh`.
    #[inline(always)]
    const fn row(&self, bb: usize, hh: usize, i: usize) -> usize {
        ((bb * self.H + hh) * self.S + i) * self.T
    }

    /// `1/√D`, computed as the kernels compute it.
    fn scale(&self) -> f32 {
        1.0 / (self.D as f32).sqrt()
    }

    /// Copies head `hh` of the `[B,T,H,D]` buffer `x` for batch `bb` into `xt [D,T]`, so that
    /// channel `d` of every key is one contiguous row.
    fn transpose_head(&self, x: &[f32], bb: usize, hh: usize, xt: &mut [f32]) {
        let (T, D) = (self.T, self.D);
        for j in 0..T {
            let k_base = self.k_base(bb, j, hh);
            for (d, &x) in x[k_base..k_base + D].iter().enumerate() {
                xt[d * T + j] = x;
            }
        }
    }
}

/// Continues `acc[r][l] += a(r, k)·b(k)[c0 + l]` for the terms `k` in the order `ks` yields
/// them: `R` rows of `W` neighbouring outputs, each its own running sum with one multiply and
/// one add per term, exactly as the kernels' innermost loops do. The `R·W` sums live in
/// registers; rows share each loaded `b(k)`, and their chains of additions overlap in time.
#[inline(always)]
fn tile<'a, const R: usize, const W: usize>(
    mut acc: [[f32; W]; R],
    c0: usize,
    ks: impl Iterator<Item = usize>,
    a: impl Fn(usize, usize) -> f32,
    b: impl Fn(usize) -> &'a [f32],
) -> [[f32; W]; R] {
    for k in ks {
        let bk = lanes::<W>(b(k), c0);
        for (r, acc) in acc.iter_mut().enumerate() {
            let ark = a(r, k);
            for l in 0..W {
                acc[l] += ark * bk[l];
            }
        }
    }
    acc
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
/// first column and `$W` a constant holding its width.
macro_rules! col_blocks {
    ($cols:expr, $c0:ident, $W:ident, $body:block) => {{
        let cols = $cols;
        let mut $c0 = 0;
        while $c0 + 16 <= cols {
            const $W: usize = 16;
            $body
            $c0 += 16;
        }
        while $c0 + 8 <= cols {
            const $W: usize = 8;
            $body
            $c0 += 8;
        }
        while $c0 < cols {
            const $W: usize = 1;
            $body
            $c0 += 1;
        }
    }};
}

/// `x[c0..c0 + W]` as an array, so the compiler sees its length.
#[inline(always)]
fn lanes<const W: usize>(x: &[f32], c0: usize) -> &[f32; W] {
    match x[c0..].first_chunk::<W>() {
        Some(lanes) => lanes,
        #[allow(clippy::panic, reason = "the tiles stay inside their rows by construction")]
        None => panic!("row of {} values has no {W} values at {c0}", x.len()),
    }
}

/// Stores one tile row at `out[at..at + W]`, times `scale`.
#[inline(always)]
fn store<const W: usize>(out: &mut [f32], at: usize, acc: &[f32; W], scale: f32) {
    for (o, &s) in out[at..at + W].iter_mut().zip(acc) {
        *o = s * scale;
    }
}

/// Adds one tile row, times `scale`, to `out[at..at + W]`: a query head's share of a `d_k` or
/// `d_v` its group's other heads add to as well (the kernel's `rec.add`).
#[inline(always)]
fn accumulate<const W: usize>(out: &mut [f32], at: usize, acc: &[f32; W], scale: f32) {
    for (o, &s) in out[at..at + W].iter_mut().zip(acc) {
        *o += s * scale;
    }
}

/// `d_k` or `d_v` gets one tile row: stored when each key/value head has one query head,
/// added (after the buffer was cleared) when a group shares it.
#[inline(always)]
fn store_kv<const W: usize>(hd: Heads, out: &mut [f32], at: usize, acc: &[f32; W], scale: f32) {
    if hd.grouped() {
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
    pub fn softmax_rows(hd: Heads, scores: &[f32], probs: &mut [f32]) => softmax_rows_impl;
    /// Backward of the softmax, row by row.
    pub fn softmax_rows_back(hd: Heads, probs: &[f32], d_probs: &[f32], d_scores: &mut [f32]) => softmax_rows_back_impl;
    /// Weighted-sum pass: `att = P·V` per head.
    pub fn weighted_sum(hd: Heads, p: &[f32], v: &[f32], att: &mut [f32]) => weighted_sum_impl;
    /// Backward of the weighted sum: `dP` for every pair, then `dV`.
    pub fn weighted_sum_back(hd: Heads, p: &[f32], v: &[f32], d_att: &[f32], d_p: &mut [f32], d_v: &mut [f32]) => weighted_sum_back_impl;
    /// Backward of the scores: `dQ` and `dK` over the visible pairs.
    pub fn scores_back(hd: Heads, mask: &Mask, q: &[f32], k: &[f32], d_scores: &[f32], d_q: &mut [f32], d_k: &mut [f32]) => scores_back_impl;
}

/// One past the last key query `i` may see (0 if it sees none): keys beyond are all masked.
fn extent(mask: &Mask, i: usize, T: usize) -> usize {
    match mask {
        Mask::Causal => (i + 1).min(T),
        Mask::None => T,
        Mask::Explicit { .. } => (0..T).rev().find(|&j| !mask.hides(i, j)).map_or(0, |j| j + 1),
    }
}

/// Scores pass: `S[b,h,i,j] = (Σ_d q[i,d]·k[j,d])·(1/√D)`, or −1e9 where the mask hides the pair.
#[inline(always)]
fn scores_impl(hd: Heads, mask: &Mask, q: &[f32], k: &[f32], scores: &mut [f32]) {
    let Heads { B, S, T, H, D, .. } = hd;
    let scale = hd.scale();
    let mut kt = vec![0.0; D * T];
    for bb in 0..B {
        for hh in 0..H {
            if !hd.shares_kv(hh) {
                hd.transpose_head(k, bb, hh, &mut kt);
            }
            row_tiles!(S, i0, R, {
                let q_base: [usize; R] = std::array::from_fn(|r| hd.q_base(bb, i0 + r, hh));
                let rows: [usize; R] = std::array::from_fn(|r| hd.row(bb, hh, i0 + r));
                // keys past the tile's last visible one are hidden from all its rows; a few
                // hidden pairs before that are summed too, and overwritten below as the kernel does
                let keys = (i0..i0 + R).map(|i| extent(mask, i, T)).fold(0, usize::max);
                col_blocks!(keys.next_multiple_of(8).min(T), j0, W, {
                    let kt_row = |d: usize| &kt[d * T..d * T + T];
                    let acc = tile::<R, W>([[0.0; W]; R], j0, 0..D, |r, d| q[q_base[r] + d], kt_row);
                    for (r, acc) in acc.iter().enumerate() {
                        store(scores, rows[r] + j0, acc, 1.0);
                    }
                });
                for (r, &row) in rows.iter().enumerate() {
                    for (j, s) in scores[row..row + T].iter_mut().enumerate() {
                        *s = if mask.hides(i0 + r, j) { MASKED } else { *s * scale };
                    }
                }
            });
        }
    }
}

/// Softmax pass, row by row: the row maximum, `e = exp(s − max)` for every entry, their sum left
/// to right, then `e · (1/sum)`. The maximum is the same whatever order it is taken in, so it
/// is taken eight entries at a time; the sums are not, so eight rows' sums run side by side.
#[inline(always)]
fn softmax_rows_impl(hd: Heads, scores: &[f32], probs: &mut [f32]) {
    let Heads { B, S, T, H, .. } = hd;
    let n = B * H * S * T;
    let rows = scores[..n].chunks(8 * T).zip(probs[..n].chunks_mut(8 * T));
    for (s8, p8) in rows {
        for (s, p) in s8.chunks_exact(T).zip(p8.chunks_exact_mut(T)) {
            let maxval = max(s);
            for (p, &s) in p.iter_mut().zip(s) {
                *p = exp(s - maxval);
            }
        }
        let sums = row_sums(p8, T, |_, e| e);
        for (p, sum) in p8.chunks_exact_mut(T).zip(sums) {
            let inv = 1.0 / sum;
            p.iter_mut().for_each(|p| *p *= inv);
        }
    }
}

/// Backward of the softmax, row by row: `dot = Σ_j dP[j]·P[j]` left to right (eight rows side
/// by side), then `dS[j] = P[j]·(dP[j] − dot)`.
#[inline(always)]
fn softmax_rows_back_impl(hd: Heads, probs: &[f32], d_probs: &[f32], d_scores: &mut [f32]) {
    let Heads { B, S, T, H, .. } = hd;
    let n = B * H * S * T;
    let rows = probs[..n].chunks(8 * T).zip(d_probs[..n].chunks(8 * T));
    for ((p8, dp8), ds8) in rows.zip(d_scores[..n].chunks_mut(8 * T)) {
        let dots = row_sums(p8, T, |k, p| dp8[k] * p);
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
fn max(x: &[f32]) -> f32 {
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

/// `Σ_j term(k, x[k])` with `k = r·T + j` for each of the (up to 8) rows `r` of length `T` in
/// `x`, each sum from 0 adding `j = 0, 1, …` in order; the rows' additions are independent, so
/// the CPU overlaps them. Entries past the last row are 0 (callers zip with the rows).
#[inline(always)]
fn row_sums(x: &[f32], T: usize, term: impl Fn(usize, f32) -> f32) -> [f32; 8] {
    let rows = x.len() / T;
    let mut sums = [0.0f32; 8];
    if rows == 8 {
        for j in 0..T {
            for (r, sum) in sums.iter_mut().enumerate() {
                let k = r * T + j;
                *sum += term(k, x[k]);
            }
        }
    } else {
        for (r, sum) in sums.iter_mut().enumerate().take(rows) {
            for j in 0..T {
                let k = r * T + j;
                *sum += term(k, x[k]);
            }
        }
    }
    sums
}

/// Weighted-sum pass: `att[b,i,h,d] = Σ_j P[b,h,i,j]·v[b,j,h,d]` over every key.
#[inline(always)]
fn weighted_sum_impl(hd: Heads, p: &[f32], v: &[f32], att: &mut [f32]) {
    let Heads { B, S, T, H, D, .. } = hd;
    for bb in 0..B {
        for hh in 0..H {
            let v_row = |j: usize| {
                let v_base = hd.k_base(bb, j, hh);
                &v[v_base..v_base + D]
            };
            row_tiles!(S, i0, R, {
                let rows: [usize; R] = std::array::from_fn(|r| hd.row(bb, hh, i0 + r));
                col_blocks!(D, d0, W, {
                    let acc = tile::<R, W>([[0.0; W]; R], d0, 0..T, |r, j| p[rows[r] + j], v_row);
                    for (r, acc) in acc.iter().enumerate() {
                        store(att, hd.q_base(bb, i0 + r, hh) + d0, acc, 1.0);
                    }
                });
            });
        }
    }
}

/// Backward of the weighted sum: `dP[b,h,i,j] = Σ_d dAtt[b,i,h,d]·v[b,j,h,d]` for every pair,
/// then `dV[b,j,h,d] = Σ_i P[b,h,i,j]·dAtt[b,i,h,d]`.
#[inline(always)]
fn weighted_sum_back_impl(hd: Heads, p: &[f32], v: &[f32], d_att: &[f32], d_p: &mut [f32], d_v: &mut [f32]) {
    let Heads { B, S, T, H, D, .. } = hd;
    let mut vt = vec![0.0; D * T];
    for bb in 0..B {
        for hh in 0..H {
            if !hd.shares_kv(hh) {
                hd.transpose_head(v, bb, hh, &mut vt);
            }
            row_tiles!(S, i0, R, {
                let a_base: [usize; R] = std::array::from_fn(|r| hd.q_base(bb, i0 + r, hh));
                col_blocks!(T, j0, W, {
                    let acc = tile::<R, W>(
                        [[0.0; W]; R],
                        j0,
                        0..D,
                        |r, d| d_att[a_base[r] + d],
                        |d| &vt[d * T..d * T + T],
                    );
                    for (r, acc) in acc.iter().enumerate() {
                        store(d_p, hd.row(bb, hh, i0 + r) + j0, acc, 1.0);
                    }
                });
            });
        }
    }
    // the query heads of a group add into the same d_v: it starts at 0
    if hd.grouped() {
        d_v[..B * T * hd.H_kv * D].fill(0.0);
    }
    for bb in 0..B {
        for hh in 0..H {
            let d_att_row = |i: usize| {
                let a_base = hd.q_base(bb, i, hh);
                &d_att[a_base..a_base + D]
            };
            row_tiles!(T, j0, R, {
                col_blocks!(D, d0, W, {
                    let p_ij = |r: usize, i: usize| p[hd.row(bb, hh, i) + j0 + r];
                    let acc = tile::<R, W>([[0.0; W]; R], d0, 0..S, p_ij, d_att_row);
                    for (r, acc) in acc.iter().enumerate() {
                        store_kv(hd, d_v, hd.k_base(bb, j0 + r, hh) + d0, acc, 1.0);
                    }
                });
            });
        }
    }
}

/// Backward of the scores: `dQ[b,i,h,d] = (Σ_j dS[b,h,i,j]·k[b,j,h,d])·(1/√D)` and
/// `dK[b,j,h,d] = (Σ_i dS[b,h,i,j]·q[b,i,h,d])·(1/√D)`, each over the visible pairs only, in
/// increasing order. Under the causal mask query `i` sees keys `0..=i`: the rows of a tile share
/// the keys of its first row and then each continues alone (dQ); key `j` is seen by queries
/// `j..S`: each row of a tile first takes its own queries, then all share the rest (dK). An
/// explicit mask is taken one row at a time.
#[inline(always)]
fn scores_back_impl(hd: Heads, mask: &Mask, q: &[f32], k: &[f32], d_scores: &[f32], d_q: &mut [f32], d_k: &mut [f32]) {
    let Heads { B, S, T, H, D, .. } = hd;
    let scale = hd.scale();
    let explicit = matches!(mask, Mask::Explicit { .. });
    // the query heads of a group add into the same d_k: it starts at 0
    if hd.grouped() {
        d_k[..B * T * hd.H_kv * D].fill(0.0);
    }
    for bb in 0..B {
        for hh in 0..H {
            let k_row = |j: usize| {
                let k_base = hd.k_base(bb, j, hh);
                &k[k_base..k_base + D]
            };
            let q_row = |i: usize| {
                let q_base = hd.q_base(bb, i, hh);
                &q[q_base..q_base + D]
            };
            if explicit {
                for i in 0..S {
                    let row = hd.row(bb, hh, i);
                    col_blocks!(D, d0, W, {
                        let keys = (0..T).filter(|&j| !mask.hides(i, j));
                        let acc = tile::<1, W>([[0.0; W]], d0, keys, |_, j| d_scores[row + j], k_row);
                        store(d_q, hd.q_base(bb, i, hh) + d0, &acc[0], scale);
                    });
                }
                for j in 0..T {
                    col_blocks!(D, d0, W, {
                        let queries = (0..S).filter(|&i| !mask.hides(i, j));
                        let ds_ij = |_, i: usize| d_scores[hd.row(bb, hh, i) + j];
                        let acc = tile::<1, W>([[0.0; W]], d0, queries, ds_ij, q_row);
                        store_kv(hd, d_k, hd.k_base(bb, j, hh) + d0, &acc[0], scale);
                    });
                }
                continue;
            }
            // causal or no mask: every row's terms are a range
            row_tiles!(S, i0, R, {
                let rows: [usize; R] = std::array::from_fn(|r| hd.row(bb, hh, i0 + r));
                let shared = extent(mask, i0, T);
                col_blocks!(D, d0, W, {
                    let ds_ij = |r: usize, j: usize| d_scores[rows[r] + j];
                    let mut acc = tile::<R, W>([[0.0; W]; R], d0, 0..shared, ds_ij, k_row);
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let own = shared..extent(mask, i0 + r, T);
                        *acc = tile::<1, W>([*acc], d0, own, |_, j| d_scores[rows[r] + j], k_row)[0];
                        store(d_q, hd.q_base(bb, i0 + r, hh) + d0, acc, scale);
                    }
                });
            });
            row_tiles!(T, j0, R, {
                let first = |j: usize| if matches!(mask, Mask::Causal) { j.min(S) } else { 0 };
                let shared = first(j0 + R - 1);
                col_blocks!(D, d0, W, {
                    let ds_ij = |r: usize, i: usize| d_scores[hd.row(bb, hh, i) + j0 + r];
                    let mut acc = [[0.0; W]; R];
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let own = first(j0 + r)..shared;
                        *acc = tile::<1, W>([*acc], d0, own, |_, i| ds_ij(r, i), q_row)[0];
                    }
                    let acc = tile::<R, W>(acc, d0, shared..S, ds_ij, q_row);
                    for (r, acc) in acc.iter().enumerate() {
                        store_kv(hd, d_k, hd.k_base(bb, j0 + r, hh) + d0, acc, scale);
                    }
                });
            });
        }
    }
}
