//! Gradients against central finite differences: the loss `L = Σ out ⊙ d_out`, each input
//! tensor addressed by buffer, and the check every gradient test makes.

use attn_trace_core::engine::{Inputs, Passes, Start, Tensors, run};
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::Buf;

/// L = Σ out ⊙ d_out, accumulated in f64 (out is att when there is no output projection).
pub(crate) fn loss(inputs: &Inputs, variant: Variant) -> f64 {
    let r = run(inputs, variant, Passes::FORWARD, false);
    r.tensors
        .output()
        .iter()
        .zip(&inputs.d_out)
        .map(|(&o, &g)| o as f64 * g as f64)
        .sum()
}

/// Every input tensor of a run, addressed by buffer, for perturbation.
pub(crate) fn input_mut(inputs: &mut Inputs, buf: Buf) -> &mut Vec<f32> {
    if buf == Buf::Sink {
        return inputs.sink.as_mut().expect("the run has sink logits");
    }
    match (buf, &mut inputs.start, &mut inputs.proj) {
        (Buf::X, Start::X { x, .. } | Start::Separate { x, .. } | Start::Latent { x, .. }, _) => x,
        (Buf::WQ, Start::Latent { w_q, .. }, _) => w_q,
        (Buf::WDkv, Start::Latent { w_dkv, .. }, _) => w_dkv,
        (Buf::WKr, Start::Latent { w_kr, .. }, _) => w_kr,
        (Buf::WUk, Start::Latent { w_uk, .. }, _) => w_uk,
        (Buf::WUv, Start::Latent { w_uv, .. }, _) => w_uv,
        (Buf::WQkv, Start::X { w_qkv, .. }, _) => w_qkv,
        (Buf::BQkv, Start::X { b_qkv, .. }, _) => b_qkv,
        (Buf::Memory, Start::Separate { memory: Some(m), .. }, _) => m,
        (Buf::WQ, Start::Separate { w_q, .. }, _) => w_q,
        (Buf::BQ, Start::Separate { b_q, .. }, _) => b_q,
        (Buf::WK, Start::Separate { w_k, .. }, _) => w_k,
        (Buf::BK, Start::Separate { b_k, .. }, _) => b_k,
        (Buf::WV, Start::Separate { w_v, .. }, _) => w_v,
        (Buf::BV, Start::Separate { b_v, .. }, _) => b_v,
        (Buf::Q, Start::Qkv { q, .. }, _) => q,
        (Buf::K, Start::Qkv { k, .. }, _) => k,
        (Buf::V, Start::Qkv { v, .. }, _) => v,
        (Buf::WProj, _, Some((w, _))) => w,
        (Buf::BProj, _, Some((_, b))) => b,
        _ => panic!("{buf} is not an input of this run"),
    }
}

/// The gradient buffer of an input.
pub(crate) fn gradient(t: &Tensors, buf: Buf) -> &[f32] {
    let grad = match buf {
        Buf::X => Buf::DX,
        Buf::Memory => Buf::DMemory,
        Buf::WQkv => Buf::DWQkv,
        Buf::BQkv => Buf::DBQkv,
        Buf::WQ => Buf::DWQ,
        Buf::BQ => Buf::DBQ,
        Buf::WK => Buf::DWK,
        Buf::BK => Buf::DBK,
        Buf::WV => Buf::DWV,
        Buf::BV => Buf::DBV,
        Buf::Q => Buf::DQ,
        Buf::K => Buf::DK,
        Buf::V => Buf::DV,
        Buf::WProj => Buf::DWProj,
        Buf::BProj => Buf::DBProj,
        Buf::Sink => Buf::DSink,
        Buf::WDkv => Buf::DWDkv,
        Buf::WKr => Buf::DWKr,
        Buf::WUk => Buf::DWUk,
        Buf::WUv => Buf::DWUv,
        _ => panic!("{buf} is not an input"),
    };
    t.get(grad)
}

/// The step of [`central_difference`].
pub(crate) const EPS: f32 = 1e-3;

/// `(L(x + ε) − L(x − ε)) / 2ε` for element `k` of input `buf`, ε = [`EPS`].
pub(crate) fn central_difference(inputs: &Inputs, variant: Variant, buf: Buf, k: usize) -> f64 {
    let (mut plus, mut minus) = (inputs.clone(), inputs.clone());
    input_mut(&mut plus, buf)[k] += EPS;
    input_mut(&mut minus, buf)[k] -= EPS;
    (loss(&plus, variant) - loss(&minus, variant)) / (2.0 * EPS as f64)
}

/// How [`check_gradients`] compares an analytic gradient with a finite difference: relative
/// to the larger of their sizes, or absolute below 1.
pub(crate) fn gradient_error(a: f64, numeric: f64) -> f64 {
    (a - numeric).abs() / (a.abs() + numeric.abs()).max(1.0)
}

/// Central differences (ε = 1e-3) for every element of every listed input, against the
/// analytic gradient: relative error below 5e-3.
pub(crate) fn check_gradients(inputs: &Inputs, variant: Variant, bufs: &[Buf]) {
    let analytic = run(inputs, variant, Passes::BOTH, false).tensors;
    for &buf in bufs {
        let grad = gradient(&analytic, buf);
        let n = input_mut(&mut inputs.clone(), buf).len();
        assert_eq!(grad.len(), n, "{buf}: gradient has the wrong length");
        for (k, &g) in grad.iter().enumerate() {
            let numeric = central_difference(inputs, variant, buf, k);
            let a = g as f64;
            let err = gradient_error(a, numeric);
            assert!(
                err < 5e-3,
                "{variant} d_{buf}[{k}]: analytic {a}, numeric {numeric} (shape {:?})",
                inputs.shape
            );
        }
    }
}
