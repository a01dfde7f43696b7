//! Packed operands. Every pass is a set of dot products `out[r][l] = Σ_k a[r][k]·b[k][l]` with the
//! terms in the kernel's order. A tile of R rows × W columns of outputs reads, for each k, the R
//! values a[·][k] and the W values b[k][·]; the b values are first copied next to each other
//! ("packed", as a matrix library does), so the innermost loop loads them as whole vectors and
//! keeps its R·W sums in registers, while the R values of a are read where they lie, R streams
//! of single values (rows, or columns at a fixed stride) that the CPU reads as fast as one.
//! Packing moves each b input once per head; the sums then read it D or T times. It also takes
//! the rows of a head, which lie C = H·D values apart in the big buffers, out of the few L1
//! cache sets such a stride falls into, where they would evict each other.

use super::Heads;

/// Copies `x`'s `n` rows of `m` values (row `k` is `row(k)[..m]`) into column blocks as
/// `col_blocks!` cuts `0..m`: the block of width `W` at column `c0` goes to
/// `out[c0·n..(c0 + W)·n]` as `[n][W]`, so a tile of those W columns reads row `k` at
/// `c0·n + k·W`.
#[inline(always)]
pub(super) fn pack_panels<'a>(n: usize, m: usize, row: impl Fn(usize) -> &'a [f32], out: &mut Vec<f32>) {
    out.clear();
    out.resize(n * m, 0.0);
    pack_panels_into(false, n, m, row, out);
}

/// [`pack_panels`] into the first `n·m` values of `out`, in the blocks of
/// `col_blocks!(wide wide; …)`.
#[inline(always)]
pub(in crate::untraced) fn pack_panels_into<'a>(
    wide: bool,
    n: usize,
    m: usize,
    row: impl Fn(usize) -> &'a [f32],
    out: &mut [f32],
) {
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
pub(super) fn pack_panels_t<'a>(n: usize, m: usize, row: impl Fn(usize) -> &'a [f32], out: &mut Vec<f32>) {
    out.clear();
    out.resize(n * m, 0.0);
    pack_panels_t_into(false, n, m, row, out);
}

/// [`pack_panels_t`] into the first `n·m` values of `out`, in the blocks of
/// `col_blocks!(wide wide; …)`.
#[inline(always)]
pub(in crate::untraced) fn pack_panels_t_into<'a>(
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
pub(in crate::untraced) fn nonzero_len(p: &[f32]) -> usize {
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
pub(in crate::untraced) fn all_finite(x: &[f32]) -> bool {
    x.iter().fold(true, |ok, v| ok & v.is_finite())
}

/// Continues `acc[r][l] += a[k][r]·b[k][l]` for `k = 0, 1, …` with `a[k][r] = rows[r][k]`, the
/// terms of `R` output rows read where they lie (`R` streams, which the CPU reads as fast as
/// one), and `b` a packed panel, rows of `W` neighbouring outputs' terms (see [`pack_panels`]);
/// the shortest of them ends the sum. Each of the `R·W` sums has one multiply and one add per
/// term, in order, exactly as the kernels' innermost loops do. The sums live in registers; rows
/// share each loaded `b[k]`, and their chains of additions overlap in time.
#[inline(always)]
pub(super) fn tile_rows<const R: usize, const W: usize>(
    mut acc: [[f32; W]; R],
    rows: [&[f32]; R],
    b: &[f32],
) -> [[f32; W]; R] {
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
pub(super) fn tile_cols<const R: usize, const W: usize>(
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
pub(super) fn tile_at<'a, const W: usize>(
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
pub(in crate::untraced) fn each<T: Copy + Default, const N: usize>(mut f: impl FnMut(usize) -> T) -> [T; N] {
    let mut out = [T::default(); N];
    for (i, x) in out.iter_mut().enumerate() {
        *x = f(i);
    }
    out
}

/// `x[c0..c0 + W]` as an array, so the compiler sees its length.
#[inline(always)]
pub(in crate::untraced) fn lanes<const W: usize>(x: &[f32], c0: usize) -> &[f32; W] {
    match x[c0..].first_chunk::<W>() {
        Some(lanes) => lanes,
        #[allow(clippy::panic, reason = "the tiles stay inside their rows by construction")]
        None => panic!("row of {} values has no {W} values at {c0}", x.len()),
    }
}

/// Stores one tile row at `out[at..at + W]`, times `scale`.
#[inline(always)]
pub(in crate::untraced) fn store<const W: usize>(out: &mut [f32], at: usize, acc: &[f32; W], scale: f32) {
    for (o, &s) in out[at..at + W].iter_mut().zip(acc) {
        *o = s * scale;
    }
}

/// Adds one tile row, times `scale`, to `out[at..at + W]`: a query head's share of a `d_k` or
/// `d_v` its group's other heads add to as well (the kernel's `rec.add`).
#[inline(always)]
pub(in crate::untraced) fn accumulate<const W: usize>(out: &mut [f32], at: usize, acc: &[f32; W], scale: f32) {
    for (o, &s) in out[at..at + W].iter_mut().zip(acc) {
        *o += s * scale;
    }
}

/// `d_k` or `d_v` gets one tile row: stored when each key/value head has one query head,
/// added (after the buffer was cleared) when a group shares it.
#[inline(always)]
pub(super) fn store_kv<const W: usize>(hd: Heads, out: &mut [f32], at: usize, acc: &[f32; W], scale: f32) {
    if hd.shares_kv_heads() {
        accumulate(out, at, acc, scale);
    } else {
        store(out, at, acc, scale);
    }
}
