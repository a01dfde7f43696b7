//! The tile work both of flash's passes share: the score tile (plain, and transposed for the
//! forward's online softmax), the products of four rows or columns with a packed panel, and
//! the exponentials and masks of a tile.

use crate::kernels::Mask;
use crate::tensor::simd::exp;
use crate::trace::MASKED;
use crate::untraced::fast::{col_blocks, each, lanes, store};

/// Is every pair of the tile visible, so that no score of it needs the mask's −1e9?
#[inline(always)]
pub(super) fn all_visible(mask: &Mask, rows: std::ops::Range<usize>, cols: std::ops::Range<usize>) -> bool {
    match mask {
        Mask::Causal => cols.end <= rows.start + 1,
        Mask::None => true,
        Mask::Explicit { .. } | Mask::Window { .. } => rows.clone().all(|i| cols.clone().all(|j| !mask.hides(i, j))),
    }
}

/// `acc[r][l] += a_r[k]·b[k][l]` for `k = 0, 1, …` in order, for four rows `a_0..a_3` read in
/// place and `b` a packed panel (rows of `W` neighbouring outputs' terms); the shortest ends
/// the sum. `fast/tile.rs`'s `tile_rows` for four rows, written out row by row so that the compiler
/// keeps the sixteen or sixty-four sums in vector registers whatever the code around it.
#[inline(always)]
pub(super) fn rows4<const W: usize>(acc: [[f32; W]; 4], a: [&[f32]; 4], b: &[f32]) -> [[f32; W]; 4] {
    let b = b.as_chunks::<W>().0;
    let n = a.iter().fold(b.len(), |n, row| n.min(row.len()));
    let [a0, a1, a2, a3] = a;
    let (a0, a1, a2, a3) = (&a0[..n], &a1[..n], &a2[..n], &a3[..n]);
    let [mut c0, mut c1, mut c2, mut c3] = acc;
    for ((((bk, &x0), &x1), &x2), &x3) in b[..n].iter().zip(a0).zip(a1).zip(a2).zip(a3) {
        for l in 0..W {
            c0[l] += x0 * bk[l];
        }
        for l in 0..W {
            c1[l] += x1 * bk[l];
        }
        for l in 0..W {
            c2[l] += x2 * bk[l];
        }
        for l in 0..W {
            c3[l] += x3 * bk[l];
        }
    }
    [c0, c1, c2, c3]
}

/// [`rows4`] down four columns: `a_r[k] = block[k·n + c0 + r]`, the columns `c0..c0 + 4` of
/// the rows of `block` (rows of `n` values), as `fast/tile.rs`'s `tile_cols`.
#[inline(always)]
pub(super) fn cols4<const W: usize>(
    acc: [[f32; W]; 4],
    block: &[f32],
    n: usize,
    c0: usize,
    b: &[f32],
) -> [[f32; W]; 4] {
    let [mut x0, mut x1, mut x2, mut x3] = acc;
    for (row, bk) in block.chunks_exact(n).zip(b.as_chunks::<W>().0) {
        let &[a0, a1, a2, a3] = lanes::<4>(row, c0);
        for l in 0..W {
            x0[l] += a0 * bk[l];
        }
        for l in 0..W {
            x1[l] += a1 * bk[l];
        }
        for l in 0..W {
            x2[l] += a2 * bk[l];
        }
        for l in 0..W {
            x3[l] += a3 * bk[l];
        }
    }
    [x0, x1, x2, x3]
}

/// Where the keys `j0..j0 + w` that query `i` cannot see begin, when they are the row's last
/// (a causal mask's); `w` otherwise.
#[inline(always)]
pub(super) fn hidden_from(mask: &Mask, i: usize, j0: usize, w: usize) -> usize {
    match mask {
        Mask::Causal => (i + 1).saturating_sub(j0).min(w),
        _ => w,
    }
}

/// `x = e^(x − shift)` over a row whose entries from `hidden` on are the mask's −1e9: when
/// −1e9 − shift is below −87, `exp` gives exactly 0 there, so 0 is written without it (past the
/// block of eight where `hidden` falls: within it exp's 0 is written, eight at a time).
#[inline(always)]
pub(super) fn exp_shifted(row: &mut [f32], shift: f32, hidden: usize) {
    let end = if MASKED - shift < -87.0 {
        hidden.next_multiple_of(8).min(row.len())
    } else {
        row.len()
    };
    let (seen, hidden) = row.split_at_mut(end);
    seen.iter_mut().for_each(|x| *x = exp(*x - shift));
    hidden.fill(0.0);
}

/// The first row of `block` (rows `n` apart) with a value other than zero in one of the
/// columns `c0..c0 + live`, or the number of rows if none has.
#[inline(always)]
pub(super) fn first_nonzero(block: &[f32], n: usize, (c0, live): (usize, usize)) -> usize {
    for (ii, row) in block.chunks_exact(n).enumerate() {
        let mut nonzero = false;
        for &x in &row[c0..c0 + live] {
            nonzero |= x != 0.0;
        }
        if nonzero {
            return ii;
        }
    }
    block.len() / n
}

/// The score tile `s_t [rows, bc]` (rows `bc` apart) of queries `i0..` against the packed key tile `kt` (`kᵀ`
/// panels of `w` keys): `s = (Σ_d q·k)·scale`, −1e9 where the mask hides the pair, each sum
/// from 0 over `d` in order, then `f(row, s)` applied in place to the row (forward leaves the
/// scores, backward turns them into probabilities).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn score_tile<'a>(
    wide: bool,
    mask: &Mask,
    (i0, rows): (usize, usize),
    (j0, w): (usize, usize),
    bc: usize,
    D: usize,
    scale: f32,
    q_row: impl Fn(usize) -> &'a [f32],
    kt: &[f32],
    s_t: &mut [f32],
) {
    let visible = all_visible(mask, i0..i0 + rows, j0..j0 + w);
    groups!(rows, r0, live, at, {
        let q_rows = each(|r| q_row(i0 + at(r)));
        // under a causal mask (or a window) the keys after the group's last query are hidden from
        // all its rows: their scores are −1e9 whatever the sum, so it is not taken
        let keys = if mask.is_causal() {
            (i0 + at(3) + 1).saturating_sub(j0).min(w)
        } else {
            w
        };
        col_blocks!(wide wide; w, c0, W, {
            if c0 < keys {
                let acc = rows4::<W>([[0.0; W]; 4], q_rows, &kt[c0 * D..(c0 + W) * D]);
                for (r, acc) in acc.iter().enumerate().take(live) {
                    store(s_t, (r0 + r) * bc + c0, acc, scale);
                }
            }
        });
    });
    if visible {
        return;
    }
    for ii in 0..rows {
        let row = &mut s_t[ii * bc..ii * bc + w];
        match mask {
            // query i sees keys j ≤ i: the row's keys from i + 1 on are hidden
            Mask::Causal => row[(i0 + ii + 1).saturating_sub(j0).min(w)..].fill(MASKED),
            _ => {
                for (jj, s) in row.iter_mut().enumerate() {
                    if mask.hides(i0 + ii, j0 + jj) {
                        *s = MASKED;
                    }
                }
            }
        }
    }
}

/// The transposed score tile `sᵀ [w, rows]` (rows `brp` apart) of keys `j0..` against the
/// packed query tile `qt` (`qᵀ` panels of `W` queries): `s = (Σ_d k·q)·scale` (the kernel's
/// `q·k`, the same products), −1e9 where the mask hides the pair, each sum from 0 over `d` in
/// order. Keys as rows and queries across, so that the softmax of a query runs down a column,
/// eight queries to a vector.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn score_tile_t<'a>(
    wide: bool,
    mask: &Mask,
    (i0, rows): (usize, usize),
    (j0, w): (usize, usize),
    brp: usize,
    D: usize,
    scale: f32,
    k_row: impl Fn(usize) -> &'a [f32],
    qt: &[f32],
    st: &mut [f32],
) {
    let visible = all_visible(mask, i0..i0 + rows, j0..j0 + w);
    groups!(w, r0, live, at, {
        let k_rows = each(|r| k_row(j0 + at(r)));
        // under a causal mask (or a window) the queries before the group's first key see none
        // of its keys: their scores are −1e9 whatever the sum, so it is not taken
        let seen_from = if mask.is_causal() {
            (j0 + r0).saturating_sub(i0).min(rows)
        } else {
            0
        };
        col_blocks!(wide wide; rows, c0, W, {
            if c0 + W > seen_from {
                let acc = rows4::<W>([[0.0; W]; 4], k_rows, &qt[c0 * D..(c0 + W) * D]);
                for (r, acc) in acc.iter().enumerate().take(live) {
                    store(st, (r0 + r) * brp + c0, acc, scale);
                }
            }
        });
    });
    if visible {
        return;
    }
    for jj in 0..w {
        let col = &mut st[jj * brp..jj * brp + rows];
        match mask {
            // key j is hidden from the queries i < j
            Mask::Causal => col[..(j0 + jj).saturating_sub(i0).min(rows)].fill(MASKED),
            _ => {
                for (ii, s) in col.iter_mut().enumerate() {
                    if mask.hides(i0 + ii, j0 + jj) {
                        *s = MASKED;
                    }
                }
            }
        }
    }
}
