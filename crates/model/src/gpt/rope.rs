//! Rotary positions on q and k, forward and backward side by side, and their tables.

use super::{Config, Grads, LayerActs};
use attn_trace_core::kernels::rope;
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, NoRecord};

/// Rotary positions: q and k of every position turned in place (the reference loops of
/// `kernels/rope.rs`, untraced), when the model uses them.
pub(super) fn rope_forward(cfg: &Config, sh: Shape, tables: Option<&RopeTables>, a: &mut LayerActs) {
    if let (Some(pairs), Some(t)) = (cfg.rope, tables) {
        let rows = (0..sh.b, 0..sh.t);
        rope::forward(
            &mut NoRecord,
            sh,
            pairs,
            rows,
            (&t.cos, &t.sin),
            &mut a.q,
            (Buf::K, &mut a.k),
        );
    }
}

pub(super) fn rope_backward(cfg: &Config, sh: Shape, tables: Option<&RopeTables>, g: &mut Grads) {
    if let (Some(pairs), Some(t)) = (cfg.rope, tables) {
        rope::backward(&mut NoRecord, sh, pairs, (&t.cos, &t.sin), &mut g.d_q, &mut g.d_k);
    }
}

/// The cosines and sines of the rotation, `[T, D/2]` ([`rope::tables`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RopeTables {
    pub cos: Vec<f32>,
    pub sin: Vec<f32>,
}

impl RopeTables {
    /// The tables of `cfg`'s rotation for positions `0..t`, or `None` without one.
    pub fn of(cfg: &Config, t: usize) -> Option<RopeTables> {
        let (cos, sin) = rope::tables(cfg.rotation()?, t, cfg.d_model / cfg.n_heads);
        Some(RopeTables { cos, sin })
    }
}
