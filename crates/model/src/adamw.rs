//! AdamW: Adam's moment estimates with weight decay applied to the parameters directly.

use rayon::prelude::*;

use attn_trace_core::tensor::simd::with_simd;

/// Optimizer state: hyper-parameters, step count and one first and second moment per parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct AdamW {
    pub lr: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    pub weight_decay: f32,
    /// Updates made so far (the `t` of the bias corrections).
    pub t: u64,
    pub m: Vec<f32>,
    pub v: Vec<f32>,
}

/// Parameters per parallel chunk: big enough that a chunk outweighs handing it to a thread.
const CHUNK: usize = 1 << 14;

impl AdamW {
    /// Defaults of the issue: β1 0.9, β2 0.999, ε 1e-8, weight decay 0.01.
    pub fn new(n_params: usize, lr: f32) -> AdamW {
        AdamW {
            lr,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.01,
            t: 0,
            m: super::zeros(n_params),
            v: super::zeros(n_params),
        }
    }

    /// One update: `m = β1·m + (1−β1)·g`, `v = β2·v + (1−β2)·g²`, then
    /// `p −= lr·(m̂/(√v̂ + ε) + wd·p)` with `m̂ = m/(1−β1ᵗ)`, `v̂ = v/(1−β2ᵗ)`.
    /// Element-wise, so splitting it across threads gives the same bits. In place, through a
    /// copy of `params`; training calls [`AdamW::update_sum`] with a buffer of its own.
    pub fn update(&mut self, params: &mut [f32], grads: &[f32]) {
        let from = params.to_vec();
        self.update_sum(&from, params, &[grads]);
    }

    /// [`AdamW::update`] from the parameters `from` into `to` (the same values `update` would
    /// leave in `from`), with the gradient `g = parts[0] + parts[1] + …`, added element by
    /// element in that order as the update goes (the gradients of a batch's shards, which are
    /// then never summed into a buffer of their own: one pass over memory less).
    ///
    /// Training writes into a second buffer and swaps the two: the buffer the shards have just
    /// read sits in both cores' caches, and writing it back in place makes each core wait on the
    /// other's copy of every line; the other buffer was last read a whole step ago.
    pub fn update_sum(&mut self, from: &[f32], to: &mut [f32], parts: &[&[f32]]) {
        assert!(
            from.len() == self.m.len() && to.len() == from.len() && parts.iter().all(|g| g.len() == from.len()),
            "optimizer state or gradients do not match the parameters"
        );
        self.t += 1;
        let h = Step {
            lr: self.lr,
            beta1: self.beta1,
            beta2: self.beta2,
            eps: self.eps,
            weight_decay: self.weight_decay,
            bc1: 1.0 - self.beta1.powf(self.t as f32),
            bc2: 1.0 - self.beta2.powf(self.t as f32),
        };
        to.par_chunks_mut(CHUNK)
            .zip(self.m.par_chunks_mut(CHUNK))
            .zip(self.v.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(n, ((to, m), v))| {
                let mut g = [0.0f32; SUM];
                for (s, ((to, m), v)) in to
                    .chunks_mut(SUM)
                    .zip(m.chunks_mut(SUM))
                    .zip(v.chunks_mut(SUM))
                    .enumerate()
                {
                    let at = n * CHUNK + s * SUM;
                    let g = &mut g[..to.len()];
                    sum_parts(parts, at, g);
                    update_chunk(h, &from[at..at + to.len()], to, g, m, v);
                }
            });
    }
}

/// Parameters whose gradient [`AdamW::update_sum`] adds up at a time, in a buffer that stays in
/// the L1 cache.
const SUM: usize = 512;

with_simd! {
    /// `g = parts[0][at..] + parts[1][at..] + …` over `g.len()` values, added in that order.
    fn sum_parts(parts: &[&[f32]], at: usize, g: &mut [f32]) => sum_parts_impl;
}

#[inline(always)]
fn sum_parts_impl(parts: &[&[f32]], at: usize, g: &mut [f32]) {
    let n = g.len();
    if let Some((first, rest)) = parts.split_first() {
        g.copy_from_slice(&first[at..at + n]);
        for part in rest {
            for (g, &x) in g.iter_mut().zip(&part[at..at + n]) {
                *g += x;
            }
        }
    }
}

/// The constants of one update, with the bias corrections `1−β1ᵗ` and `1−β2ᵗ`.
#[derive(Clone, Copy)]
struct Step {
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    weight_decay: f32,
    bc1: f32,
    bc2: f32,
}

with_simd! {
    fn update_chunk(h: Step, from: &[f32], to: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]) => update_chunk_impl;
}

#[inline(always)]
fn update_chunk_impl(h: Step, from: &[f32], to: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]) {
    let each = from
        .iter()
        .zip(to.iter_mut())
        .zip(g)
        .zip(m.iter_mut())
        .zip(v.iter_mut());
    for ((((&p, to), &g), m), v) in each {
        *m = h.beta1 * *m + (1.0 - h.beta1) * g;
        *v = h.beta2 * *v + (1.0 - h.beta2) * g * g;
        let m_hat = *m / h.bc1;
        let v_hat = *v / h.bc2;
        *to = p - h.lr * (m_hat / (v_hat.sqrt() + h.eps) + h.weight_decay * p);
    }
}
