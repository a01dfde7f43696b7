//! AdamW: Adam's moment estimates with weight decay applied to the parameters directly.

use rayon::prelude::*;

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
            m: vec![0.0; n_params],
            v: vec![0.0; n_params],
        }
    }

    /// One update: `m = β1·m + (1−β1)·g`, `v = β2·v + (1−β2)·g²`, then
    /// `p −= lr·(m̂/(√v̂ + ε) + wd·p)` with `m̂ = m/(1−β1ᵗ)`, `v̂ = v/(1−β2ᵗ)`.
    /// Element-wise, so splitting it across threads gives the same bits.
    pub fn update(&mut self, params: &mut [f32], grads: &[f32]) {
        assert_eq!(
            params.len(),
            self.m.len(),
            "optimizer state does not match the parameters"
        );
        self.t += 1;
        let &mut AdamW {
            lr,
            beta1,
            beta2,
            eps,
            weight_decay,
            t,
            ..
        } = self;
        let bc1 = 1.0 - beta1.powf(t as f32);
        let bc2 = 1.0 - beta2.powf(t as f32);
        params
            .par_chunks_mut(CHUNK)
            .zip(grads.par_chunks(CHUNK))
            .zip(self.m.par_chunks_mut(CHUNK))
            .zip(self.v.par_chunks_mut(CHUNK))
            .for_each(|(((p, g), m), v)| {
                for k in 0..p.len() {
                    m[k] = beta1 * m[k] + (1.0 - beta1) * g[k];
                    v[k] = beta2 * v[k] + (1.0 - beta2) * g[k] * g[k];
                    let m_hat = m[k] / bc1;
                    let v_hat = v[k] / bc2;
                    p[k] -= lr * (m_hat / (v_hat.sqrt() + eps) + weight_decay * p[k]);
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_step_moves_each_parameter_by_about_lr_against_its_gradient() {
        // at t=1, m̂ = g and v̂ = g², so the step is lr·(g/(|g| + ε) + wd·p) ≈ lr·sign(g) + lr·wd·p
        let mut opt = AdamW::new(3, 0.1);
        let mut p = [1.0, -2.0, 0.0];
        opt.update(&mut p, &[0.5, -4.0, 0.0]);
        assert!((p[0] - (1.0 - 0.1 * (1.0 + 0.01))).abs() < 1e-6, "{p:?}");
        assert!((p[1] - (-2.0 + 0.1 * (1.0 + 0.02))).abs() < 1e-6, "{p:?}");
        assert_eq!(p[2], 0.0);
        assert_eq!(opt.t, 1);
    }
}
