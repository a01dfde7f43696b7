//! Layernorm without learnable scale or shift: y = (x − mean) / √(var + ε) over each row of C

use attn_trace_core::tensor::simd::with_simd;

/// LayerNorm's `ε`, as in the reference.
pub const LN_EPS: f32 = 1e-5;

/// `Σ_{c<n} f(c)` in eight interleaved partial sums, so the additions vectorise (a model op:
/// nothing here is compared bit for bit with a trace).
#[inline(always)]
fn sum8(n: usize, f: impl Fn(usize) -> f32) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut c = 0;
    while c + 8 <= n {
        for (l, lane) in lanes.iter_mut().enumerate() {
            *lane += f(c + l);
        }
        c += 8;
    }
    let tail: f32 = (c..n).map(&f).sum();
    lanes.iter().sum::<f32>() + tail
}

with_simd! {
    /// Normalises every row of `C` channels; keeps each row's `mean` and `rstd = 1/√(var + ε)` for
    /// the backward pass.
    pub fn layernorm_forward(C: usize, x: &[f32], y: &mut [f32], mean: &mut [f32], rstd: &mut [f32]) => layernorm_forward_impl;
}

#[inline(always)]
fn layernorm_forward_impl(C: usize, x: &[f32], y: &mut [f32], mean: &mut [f32], rstd: &mut [f32]) {
    for (r, (xr, yr)) in x.chunks_exact(C).zip(y.chunks_exact_mut(C)).enumerate() {
        let m = sum8(C, |c| xr[c]) / C as f32;
        let var = sum8(C, |c| (xr[c] - m) * (xr[c] - m)) / C as f32;
        let s = 1.0 / (var + LN_EPS).sqrt();
        for c in 0..C {
            yr[c] = (xr[c] - m) * s;
        }
        mean[r] = m;
        rstd[r] = s;
    }
}

with_simd! {
    /// Accumulates `dx += rstd · (dy − mean(dy) − ŷ · mean(dy ⊙ ŷ))` with `ŷ = (x − mean)·rstd`:
    /// the normalisation removes the components of `dy` along 1 and along `ŷ`.
    pub fn layernorm_backward(C: usize, x: &[f32], mean: &[f32], rstd: &[f32], dy: &[f32], dx: &mut [f32]) => layernorm_backward_impl;
}

#[inline(always)]
fn layernorm_backward_impl(C: usize, x: &[f32], mean: &[f32], rstd: &[f32], dy: &[f32], dx: &mut [f32]) {
    let rows = x.chunks_exact(C).zip(dy.chunks_exact(C)).zip(dx.chunks_exact_mut(C));
    for (r, ((xr, dyr), dxr)) in rows.enumerate() {
        let (m, s) = (mean[r], rstd[r]);
        let dy_mean = sum8(C, |c| dyr[c]) / C as f32;
        let dy_yhat_mean = sum8(C, |c| dyr[c] * (xr[c] - m) * s) / C as f32;
        for c in 0..C {
            let yhat = (xr[c] - m) * s;
            dxr[c] += s * (dyr[c] - dy_mean - yhat * dy_yhat_mean);
        }
    }
}
