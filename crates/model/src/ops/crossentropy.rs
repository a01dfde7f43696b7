//! Cross-entropy with softmax: loss = −ln softmax(logits)[target] for each row of V

use attn_trace_core::tensor::simd::{self, with_simd};

with_simd! {
    /// `probs = softmax(logits)` per row of `V` (max subtracted first), `losses[r] = −ln probs[target]`.
    pub fn crossentropy_forward(V: usize, logits: &[f32], targets: &[u8], probs: &mut [f32], losses: &mut [f32]) => crossentropy_forward_impl;
}

#[inline(always)]
fn crossentropy_forward_impl(V: usize, logits: &[f32], targets: &[u8], probs: &mut [f32], losses: &mut [f32]) {
    // eight rows at a time: each row's sum runs left to right, one add after another, so the
    // eight rows' sums are interleaved to keep the adder busy
    let groups = logits.chunks(8 * V).zip(probs.chunks_mut(8 * V));
    for (g, (l8, p8)) in groups.enumerate() {
        let mut maxes = [0.0f32; 8];
        for ((lr, pr), maxval) in l8.chunks_exact(V).zip(p8.chunks_exact_mut(V)).zip(&mut maxes) {
            *maxval = max(lr);
            for (p, &l) in pr.iter_mut().zip(lr) {
                *p = simd::exp(l - *maxval);
            }
        }
        let sums = row_sums(p8, V);
        let rows = l8
            .chunks_exact(V)
            .zip(p8.chunks_exact_mut(V))
            .zip(sums.iter().zip(maxes));
        for (r, ((lr, pr), (&sum, maxval))) in rows.enumerate() {
            let inv = 1.0 / sum;
            for p in pr.iter_mut() {
                *p *= inv;
            }
            // −ln p computed from the logits keeps precision when p underflows
            let row = g * 8 + r;
            losses[row] = sum.ln() - (lr[targets[row] as usize] - maxval);
        }
    }
}

/// The largest value of `x` (NaN ignored), as `f32::max` over it left to right gives, taken
/// eight at a time: which of two equal values wins never matters to the callers (they subtract
/// it, and `x − (+0)` and `x − (−0)` differ only for `x = −0`, whose exponential is 1 either way).
#[inline(always)]
fn max(x: &[f32]) -> f32 {
    let (chunks, tail) = x.as_chunks::<8>();
    let mut lanes = [f32::NEG_INFINITY; 8];
    for c in chunks {
        for l in 0..8 {
            lanes[l] = lanes[l].max(c[l]);
        }
    }
    let tail = tail.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
    lanes.iter().fold(tail, |m, &v| m.max(v))
}

/// `Σ_j x[r·n + j]` for each of the (up to 8) rows `r` of `n` values in `x`, each from 0 adding
/// `j = 0, 1, …` in order (the order of `iter().sum()`); the eight rows' additions are
/// independent, so the CPU overlaps them. Entries past the last row are 0.
#[inline(always)]
fn row_sums(x: &[f32], n: usize) -> [f32; 8] {
    let mut sums = [0.0f32; 8];
    if x.len() == 8 * n {
        for j in 0..n {
            for (r, sum) in sums.iter_mut().enumerate() {
                *sum += x[r * n + j];
            }
        }
    } else {
        for (sum, row) in sums.iter_mut().zip(x.chunks_exact(n)) {
            *sum = row.iter().sum();
        }
    }
    sums
}

with_simd! {
    /// `d_logits = scale · (probs − onehot(target))`; `scale` is `1/N` for a mean over `N` rows.
    pub fn crossentropy_backward(V: usize, probs: &[f32], targets: &[u8], scale: f32, d_logits: &mut [f32]) => crossentropy_backward_impl;
}

#[inline(always)]
fn crossentropy_backward_impl(V: usize, probs: &[f32], targets: &[u8], scale: f32, d_logits: &mut [f32]) {
    for (r, (pr, dr)) in probs.chunks_exact(V).zip(d_logits.chunks_exact_mut(V)).enumerate() {
        for (d, &p) in dr.iter_mut().zip(pr) {
            *d = scale * p;
        }
        dr[targets[r] as usize] -= scale;
    }
}
