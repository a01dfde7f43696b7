//! Embedding: x[bb,i,:] = wte[token[bb,i], :] + wpe[i, :]

use attn_trace_core::tensor::simd::with_simd;

with_simd! {
    /// Token plus position embedding. `tokens [B,T]`, `wte [V,C]`, `wpe [T_max,C]` (rows `0..T`
    /// used), `x [B,T,C]`.
    pub fn embedding_forward(bt: [usize; 2], tokens: &[u8], wte: &[f32], wpe: &[f32], x: &mut [f32]) => embedding_forward_impl;
}

#[inline(always)]
fn embedding_forward_impl([B, T]: [usize; 2], tokens: &[u8], wte: &[f32], wpe: &[f32], x: &mut [f32]) {
    let C = x.len() / (B * T);
    for bb in 0..B {
        for i in 0..T {
            let xi = (bb * T + i) * C;
            let ti = tokens[bb * T + i] as usize * C;
            let pi = i * C;
            for c in 0..C {
                x[xi + c] = wte[ti + c] + wpe[pi + c];
            }
        }
    }
}

with_simd! {
    /// Accumulates `dx` into the rows it came from: `d_wte[token] += dx[bb,i]`, `d_wpe[i] += dx[bb,i]`
    /// (a token seen at several positions, or a position in several sequences, sums their gradients).
    pub fn embedding_backward(bt: [usize; 2], tokens: &[u8], dx: &[f32], d_wte: &mut [f32], d_wpe: &mut [f32]) => embedding_backward_impl;
}

#[inline(always)]
fn embedding_backward_impl([B, T]: [usize; 2], tokens: &[u8], dx: &[f32], d_wte: &mut [f32], d_wpe: &mut [f32]) {
    let C = dx.len() / (B * T);
    for bb in 0..B {
        for i in 0..T {
            let xi = (bb * T + i) * C;
            let ti = tokens[bb * T + i] as usize * C;
            let pi = i * C;
            for c in 0..C {
                d_wte[ti + c] += dx[xi + c];
                d_wpe[pi + c] += dx[xi + c];
            }
        }
    }
}
