//! Residual: out = x + y, the stream a block's branch is added back into

use attn_trace_core::tensor::simd::with_simd;

with_simd! {
    /// `out = x + y`.
    pub fn residual_forward(x: &[f32], y: &[f32], out: &mut [f32]) => residual_forward_impl;
}

#[inline(always)]
fn residual_forward_impl(x: &[f32], y: &[f32], out: &mut [f32]) {
    for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
        *o = a + b;
    }
}

/// Both inputs receive the output's gradient unchanged: writes `dx = dy_branch = d_out`.
/// (`TinyGpt` applies this without copying: the stream's gradient buffer is read as the branch's
/// gradient, then the branch's layernorm accumulates into it.)
pub fn residual_backward(d_out: &[f32], dx: &mut [f32], d_branch: &mut [f32]) {
    dx.copy_from_slice(d_out);
    d_branch.copy_from_slice(d_out);
}
