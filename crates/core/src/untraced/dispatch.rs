//! The one place that decides which code runs an attention pass.
//!
//! A traced run (a recording [`Recorder`]) runs the reference loops of the lesson files,
//! `kernels/attention_1h.rs` for the baseline, `kernels/attention_mha.rs` for MHA and
//! `kernels/attention_gqa.rs` for grouped-query attention, exactly as
//! the code panel shows them. An untraced run (the engine without a log, TinyGPT's training)
//! runs [`crate::untraced::fast`]: the same sums in the same order, in a loop order the CPU can vectorise,
//! held to the reference loops bit for bit by tests. The engine and TinyGPT both call these
//! functions, so a variant is chosen here and nowhere else.
//!
//! Flash (`kernels/attention_flash.rs`) runs its reference loops in the engine, traced or not
//! (with `NoRecord`, whose calls compile away, an untraced run leaves every tile-local buffer as
//! the traced one does). Training, which keeps only `att`, `lse` and the gradients, runs
//! [`crate::untraced::flash`]: the same tiles and sums vectorised, held to the reference loops
//! bit for bit by tests.

use crate::kernels::attention_flash::{self, BackwardTiles, FittedTiles, ForwardTiles};
use crate::kernels::softmax::Sinks;
use crate::kernels::{Mask, Variant, attention_1h, attention_gqa, attention_mha, kernel_shape, split};
use crate::tensor::Shape;
use crate::trace::{Buf, Recorder};
use crate::untraced::fast::{self, Heads};
use crate::untraced::flash;

/// The fast path's geometry for the variant.
const fn heads(sh: Shape, variant: Variant) -> Heads {
    if variant.has_heads() {
        Heads::mha(variant.kv_shape(sh))
    } else {
        Heads::baseline(sh)
    }
}

/// Traced: the variant's reference loop `$f`, on the kernel's shape. Untraced: `fast::$f`, or
/// the reference loop again (with `NoRecord`) for a variant without a fast path.
/// Flash's own kernel is one loop nest ([`flash_forward`]); asked for a single pass of the plain
/// kernels, it gets MHA's, whose buffers it shares.
macro_rules! pass {
    ($rec:ident, $variant:ident, $sh:ident, $f:ident($($arg:expr),* $(,)?), fast($($farg:expr),* $(,)?)) => {
        if R::ENABLED || !$variant.desc().fast {
            let ksh = kernel_shape($sh, $variant);
            // flash's untiled pieces and latent attention's softmax and weighted sum are MHA's
            // (`Descriptor::plain`)
            match $variant.desc().plain {
                Variant::Baseline => attention_1h::$f($rec, ksh, $($arg),*),
                Variant::Gqa => attention_gqa::$f($rec, ksh, $($arg),*),
                _ => attention_mha::$f($rec, ksh, $($arg),*),
            }
        } else {
            fast::$f(heads($sh, $variant), $($farg),*)
        }
    };
}

/// The head split `q | k | v = qkv`: traced, `kernels/split.rs` (or `attention_gqa.rs`'s own,
/// whose `k`, `v` are `H_kv·D` wide); untraced, row copies.
pub fn split<R: Recorder>(
    rec: &mut R,
    variant: Variant,
    sh: Shape,
    qkv: &[f32],
    q: &mut [f32],
    k: &mut [f32],
    v: &mut [f32],
) {
    let ksh = kernel_shape(sh, variant);
    if !R::ENABLED {
        fast::split(ksh, qkv, q, k, v);
    } else if variant.shares_kv_heads() {
        attention_gqa::split(rec, ksh, qkv, q, k, v);
    } else {
        split::forward(rec, sh, qkv, q, k, v);
    }
}

/// The split's backward: `d_qkv` gathered from `d_q, d_k, d_v`.
pub fn split_back<R: Recorder>(
    rec: &mut R,
    variant: Variant,
    sh: Shape,
    d_q: &[f32],
    d_k: &[f32],
    d_v: &[f32],
    d_qkv: &mut [f32],
) {
    let ksh = kernel_shape(sh, variant);
    if !R::ENABLED {
        fast::split_back(ksh, d_q, d_k, d_v, d_qkv);
    } else if variant.shares_kv_heads() {
        attention_gqa::split_back(rec, ksh, d_q, d_k, d_v, d_qkv);
    } else {
        split::backward(rec, sh, d_q, d_k, d_v, d_qkv);
    }
}

/// `S = Q·Kᵀ/√D + mask`.
pub fn scores<R: Recorder>(rec: &mut R, variant: Variant, sh: Shape, mask: &Mask, q: &[f32], k: &[f32], s: &mut [f32]) {
    pass!(rec, variant, sh, scores(mask, q, k, s), fast(mask, q, k, s));
}

/// `P = softmax(S)` along each row, with each head's sink logit in the denominator when `sink`
/// is given. The fast path has no sink logit: a run with one takes the reference loops, traced
/// or not (untraced with `NoRecord`, whose calls compile away).
pub(crate) fn softmax_rows<R: Recorder>(
    rec: &mut R,
    variant: Variant,
    sh: Shape,
    s: &[f32],
    p: &mut [f32],
    sink: Option<Sinks<'_>>,
) {
    let ksh = kernel_shape(sh, variant);
    match (sink, variant) {
        (None, _) => pass!(rec, variant, sh, softmax_rows(s, p, None), fast(s, p)),
        (Some(sink), v) if !v.has_heads() => attention_1h::softmax_rows(rec, ksh, s, p, Some(sink)),
        (Some(sink), _) => attention_mha::softmax_rows(rec, ksh, s, p, Some(sink)),
    }
}

/// `att = P·V`; `p` is `probs`, or the dropped-out probabilities when dropout is on.
pub fn weighted_sum<R: Recorder>(
    rec: &mut R,
    variant: Variant,
    sh: Shape,
    p: (Buf, &[f32]),
    v: &[f32],
    att: &mut [f32],
) {
    pass!(rec, variant, sh, weighted_sum(p, v, att), fast(p.1, v, att));
}

/// `dP = dAtt·Vᵀ` and `dV = Pᵀ·dAtt`; `d_p` is the gradient of whichever probabilities were read.
#[allow(clippy::too_many_arguments)]
pub fn weighted_sum_back<R: Recorder>(
    rec: &mut R,
    variant: Variant,
    sh: Shape,
    p: (Buf, &[f32]),
    v: &[f32],
    d_att: &[f32],
    d_p: (Buf, &mut [f32]),
    d_v: &mut [f32],
) {
    pass!(
        rec,
        variant,
        sh,
        weighted_sum_back(p, v, d_att, d_p, d_v),
        fast(p.1, v, d_att, d_p.1, d_v)
    );
}

/// `dS = P ⊙ (dP − Σ dP·P)` along each row; with sink logits each row's `Σ dP·P` is kept in
/// `delta`, which only the reference loops do (as [`softmax_rows`]).
pub(crate) fn softmax_rows_back<R: Recorder>(
    rec: &mut R,
    variant: Variant,
    sh: Shape,
    (p, d_p): (&[f32], &[f32]),
    d_s: &mut [f32],
    delta: Option<&mut [f32]>,
) {
    let ksh = kernel_shape(sh, variant);
    match (delta, variant) {
        (None, _) => pass!(
            rec,
            variant,
            sh,
            softmax_rows_back((p, d_p), d_s, None),
            fast(p, d_p, d_s)
        ),
        (Some(delta), v) if !v.has_heads() => attention_1h::softmax_rows_back(rec, ksh, (p, d_p), d_s, Some(delta)),
        (Some(delta), _) => attention_mha::softmax_rows_back(rec, ksh, (p, d_p), d_s, Some(delta)),
    }
}

/// The sink logits' gradient `d_sink[h] = −Σ_{b,i} P_sink·delta`, for every variant (flash's
/// `p_sink` and `delta` have MHA's layout): a loop over `B·H·S` numbers, the reference's
/// traced or not.
pub fn sink_back<R: Recorder>(
    rec: &mut R,
    variant: Variant,
    sh: Shape,
    (p_sink, delta): (&[f32], &[f32]),
    d_sink: &mut [f32],
) {
    attention_mha::sink_back(rec, kernel_shape(sh, variant), p_sink, delta, d_sink);
}

/// `dQ = dS·K/√D` and `dK = dSᵀ·Q/√D` over the visible pairs.
#[allow(clippy::too_many_arguments)]
pub fn scores_back<R: Recorder>(
    rec: &mut R,
    variant: Variant,
    sh: Shape,
    mask: &Mask,
    q: &[f32],
    k: &[f32],
    d_s: &[f32],
    d_q: &mut [f32],
    d_k: &mut [f32],
) {
    pass!(
        rec,
        variant,
        sh,
        scores_back(mask, q, k, d_s, d_q, d_k),
        fast(mask, q, k, d_s, d_q, d_k)
    );
}

/// The attention core forward as training runs it, untraced: `probs` and `att` only, head by
/// head ([`fast::forward`]); the scores stay in a block one head long. Its `probs` and `att`
/// are the bits of [`forward`]'s, traced or not.
#[allow(clippy::too_many_arguments)]
pub fn forward_untraced(
    variant: Variant,
    sh: Shape,
    mask: &Mask,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    p: &mut [f32],
    att: &mut [f32],
) {
    fast::forward(heads(sh, variant), mask, q, k, v, p, att);
}

/// The attention core backward as training runs it, untraced: from `d_att` and `probs` to
/// `d_q`, `d_k`, `d_v` head by head ([`fast::backward`]), `dP` and `dS` in blocks one head
/// long. Its gradients are the bits of [`backward`]'s, traced or not.
#[allow(clippy::too_many_arguments)]
pub fn backward_untraced(
    variant: Variant,
    sh: Shape,
    mask: &Mask,
    (q, k, v, p): (&[f32], &[f32], &[f32], &[f32]),
    d_att: &[f32],
    (d_q, d_k, d_v): (&mut [f32], &mut [f32], &mut [f32]),
) {
    fast::backward(heads(sh, variant), mask, (q, k, v), p, d_att, d_q, d_k, d_v);
}

/// Flash forward as training runs it, untraced: `att` and `lse` only ([`flash::forward`]),
/// the bits of [`flash_forward`]'s.
pub fn flash_forward_untraced(
    sh: Shape,
    tiles: FittedTiles,
    mask: &Mask,
    qkv: (&[f32], &[f32], &[f32]),
    att: &mut [f32],
    lse: &mut [f32],
) {
    flash::forward(sh, tiles, mask, qkv, att, lse);
}

/// Flash backward as training runs it, untraced: `d_q`, `d_k`, `d_v` (and `delta`) from
/// `d_att` ([`flash::backward`]), the bits of [`flash_backward`]'s.
#[allow(clippy::too_many_arguments)]
pub fn flash_backward_untraced(
    sh: Shape,
    tiles: FittedTiles,
    mask: &Mask,
    qkv: (&[f32], &[f32], &[f32]),
    saved: (&[f32], &[f32]),
    d_att: &[f32],
    delta: &mut [f32],
    grads: (&mut [f32], &mut [f32], &mut [f32]),
) {
    flash::backward(sh, tiles, mask, qkv, saved, d_att, delta, grads);
}

/// Flash forward: `att` and the row log-sum-exp `lse` from q, k, v, tile by tile.
#[allow(clippy::too_many_arguments)]
pub fn flash_forward<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    tiles: FittedTiles,
    mask: &Mask,
    qkv: (&[f32], &[f32], &[f32]),
    sink: Option<&[f32]>,
    att: &mut [f32],
    lse: &mut [f32],
    work: ForwardTiles<'_>,
) {
    attention_flash::forward(rec, sh, tiles, mask, qkv, sink, att, lse, work);
}

/// Flash backward: `d_q`, `d_k`, `d_v` from `d_att`, the probabilities recomputed from `lse`.
#[allow(clippy::too_many_arguments)]
pub fn flash_backward<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    tiles: FittedTiles,
    mask: &Mask,
    qkv: (&[f32], &[f32], &[f32]),
    saved: (&[f32], &[f32]),
    d_att: &[f32],
    (delta, sink): (&mut [f32], Option<Sinks<'_>>),
    grads: (&mut [f32], &mut [f32], &mut [f32]),
    work: BackwardTiles<'_>,
) {
    attention_flash::backward(rec, sh, tiles, mask, qkv, saved, d_att, delta, sink, grads, work);
}

/// The attention core forward: scores, softmax, weighted sum (no dropout).
#[allow(clippy::too_many_arguments)]
pub fn forward<R: Recorder>(
    rec: &mut R,
    variant: Variant,
    sh: Shape,
    mask: &Mask,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    s: &mut [f32],
    p: &mut [f32],
    att: &mut [f32],
) {
    scores(rec, variant, sh, mask, q, k, s);
    softmax_rows(rec, variant, sh, s, p, None);
    weighted_sum(rec, variant, sh, (Buf::Probs, p), v, att);
}

/// The attention core backward, from `d_att` to `d_q`, `d_k`, `d_v` (no dropout).
#[allow(clippy::too_many_arguments)]
pub fn backward<R: Recorder>(
    rec: &mut R,
    variant: Variant,
    sh: Shape,
    mask: &Mask,
    (q, k, v, p): (&[f32], &[f32], &[f32], &[f32]),
    d_att: &[f32],
    d_p: &mut [f32],
    d_s: &mut [f32],
    (d_q, d_k, d_v): (&mut [f32], &mut [f32], &mut [f32]),
) {
    weighted_sum_back(rec, variant, sh, (Buf::Probs, p), v, d_att, (Buf::DProbs, d_p), d_v);
    softmax_rows_back(rec, variant, sh, (p, d_p), d_s, None);
    scores_back(rec, variant, sh, mask, q, k, d_s, d_q, d_k);
}
