//! GELU, tanh approximation: y = ½·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³)

use attn_trace_core::tensor::simd::{self, with_simd};

/// `√(2/π)`, the constant of GELU's tanh approximation.
const GELU_SCALE: f32 = 0.797_884_6;
/// The cubic coefficient of GELU's tanh approximation.
const GELU_CUBIC: f32 = 0.044_715;

/// `tanh(u) = 1 − 2/(e^{2u} + 1)`: one `exp` (the vectorisable [`simd::exp`]), and exact ±1 at
/// the extremes instead of NaN.
#[inline(always)]
pub fn tanh(u: f32) -> f32 {
    1.0 - 2.0 / (simd::exp(2.0 * u) + 1.0)
}

with_simd! {
    /// Element-wise GELU. `th` keeps `tanh(u)` of every element so the backward pass need not
    /// recompute it.
    pub fn gelu_forward(x: &[f32], y: &mut [f32], th: &mut [f32]) => gelu_forward_impl;
}

#[inline(always)]
pub(super) fn gelu_forward_impl(x: &[f32], y: &mut [f32], th: &mut [f32]) {
    for ((&v, y), th) in x.iter().zip(y.iter_mut()).zip(th.iter_mut()) {
        // u = √(2/π)·x·(1 + 0.044715·x²): one multiply-add and two multiplies deep
        let t = tanh(v * (v * v).mul_add(GELU_SCALE * GELU_CUBIC, GELU_SCALE));
        *th = t;
        *y = 0.5 * v * (1.0 + t);
    }
}

with_simd! {
    /// `dx = dy · (½(1 + tanh u) + ½·x·(1 − tanh² u)·√(2/π)·(1 + 3·0.044715·x²))`.
    pub fn gelu_backward(x: &[f32], th: &[f32], dy: &[f32], dx: &mut [f32]) => gelu_backward_impl;
}

#[inline(always)]
pub(super) fn gelu_backward_impl(x: &[f32], th: &[f32], dy: &[f32], dx: &mut [f32]) {
    for (((&v, &t), &g), dx) in x.iter().zip(th).zip(dy).zip(dx.iter_mut()) {
        let du = (v * v).mul_add(3.0 * GELU_SCALE * GELU_CUBIC, GELU_SCALE);
        *dx = g * (0.5 * v * (-t).mul_add(t, 1.0)).mul_add(du, 0.5 * (1.0 + t));
    }
}
