//! The phases of a run, each counted in closed form: the plain, grouped and flash variants'
//! projections, attention passes and output, forward and backward; latent attention's and a
//! decode run's phases are counted by their own files.

use super::decode::decode_counts;
use super::flash::flash_counts;
use super::latent::latent_counts;
use super::{Counted, Passes, Plan, StartKind, pc, rope_count};
use crate::engine::count::Count;
use crate::kernels::attention_mistakes::Mistake;
use crate::kernels::{Variant, kernel_shape};
use crate::tensor::Shape;
use crate::trace::Phase;

/// [`phase_counts`], with overflowed counts kept as [`Count::OVER`]. Memory and time do not grow
/// with the sizes: a handful of phases, each a closed form (flash's causal tile sums take one
/// step per query tile).
pub(super) fn counted(plan: &Plan, variant: Variant, passes: Passes) -> Vec<Counted> {
    let plan = &plan.for_variant(variant);
    let flash = variant.desc().tiled.then(|| flash_counts(plan));
    // the kernels that make mistakes have no sink logit (nor does decoding, counted apart)
    let sink = plan.sink && plan.mistakes.is_empty();
    let Shape { b, s, t, c, .. } = plan.shape;
    let backward = plan.possible(passes).backward;
    let visible = Count::from(plan.mask.visible_pairs(s, t)); // visible (i, j) pairs per (b, h)
    let ksh = kernel_shape(plan.shape, variant);
    // channels of a key/value row: H_kv·D (C unless grouped)
    let kv = Count::from(ksh.kv_c());
    let grouped = variant.shares_kv_heads();
    let (b, s, t, c) = (Count::from(b), Count::from(s), Count::from(t), Count::from(c));
    let h = Count::from(ksh.h);
    if let Some(lat) = plan.latent() {
        return latent_counts(plan, lat, passes);
    }
    if plan.decode {
        return if passes.forward {
            decode_counts(plan, ksh)
        } else {
            Vec::new()
        };
    }
    let m = plan.mistakes;
    let (q_rows, k_rows) = (b * s, b * t); // rows of the [B,S,·] and [B,T,·] activations
    let cells = b * h * s * t; // entries of scores, probs and their gradients
    let rows = b * h * s; // softmax rows, one sink probability (and D_i) each
    // a sink logit: read once per row and its share written; D_i kept in backward
    let (sink_reads, sink_writes) = if sink { (rows, rows) } else { (Count::ZERO, Count::ZERO) };
    // d_sink[h] = −Σ P_sink·D_i: a pair per row, one write per head
    let sink_back = pc(Phase::SinkBack, 2 * rows, h);
    // y = x·W + b: per output a bias read (when there are biases) and IC (x, W) pairs
    let bias = Count::from(plan.bias);
    let lin_fwd = |phase, rows: Count, ic: Count, oc: Count| pc(phase, rows * oc * (bias + 2 * ic), rows * oc);
    // dx (IC per row, OC pairs each; `+=` adds a read), dW (IC·OC, one pair per row), db
    let lin_bwd = |phase, rows: Count, ic: Count, oc: Count, acc: bool| {
        let dx_reads = rows * ic * (2 * oc + Count::from(acc));
        pc(
            phase,
            dx_reads + ic * oc * 2 * rows + bias * oc * rows,
            rows * ic + ic * oc + bias * oc,
        )
    };
    let project = !m.has(Mistake::NoInputProjection);
    let dropout = plan.dropout && !m.has(Mistake::DropoutNotApplied);
    let proj = plan.proj && !m.has(Mistake::NoOutputProjection);
    let mut out = Vec::new();
    if passes.forward {
        match plan.start {
            StartKind::Qkv | StartKind::Latent(_) => {}
            _ if !project => out.push(pc(Phase::NoProj, q_rows * c + k_rows * c, q_rows * c + 2 * k_rows * c)),
            StartKind::Fused => {
                out.push(lin_fwd(Phase::QkvProj, k_rows, c, c + 2 * kv));
                let copies = k_rows * (c + 2 * kv);
                out.push(pc(Phase::Split, copies, copies));
            }
            StartKind::Separate { .. } => {
                out.push(lin_fwd(Phase::QProj, q_rows, c, c));
                out.push(lin_fwd(Phase::KProj, k_rows, c, kv));
                out.push(lin_fwd(Phase::VProj, k_rows, c, kv));
            }
        }
        if plan.rope.is_some() {
            // per channel pair of q and k: cos, sin and the two channels read, both written
            out.push(rope_count(Phase::Rope, q_rows * c + k_rows * kv));
        }
        if let Some([fwd, _, _]) = flash {
            out.push(fwd);
        } else {
            out.push(pc(Phase::Scores, 2 * q_rows * t * c, cells));
            // per softmax row 3 reads (max, exp, normalise) and 2 writes per entry, whatever the row
            out.push(pc(Phase::Softmax, 3 * cells + sink_reads, 2 * cells + sink_writes));
            if dropout {
                out.push(pc(Phase::Dropout, 2 * cells, cells));
            }
            out.push(pc(Phase::WeightedSum, 2 * q_rows * c * t, q_rows * c));
        }
        if proj {
            out.push(lin_fwd(Phase::OutProj, q_rows, c, c));
        }
    }
    if backward {
        if proj {
            out.push(lin_bwd(Phase::OutProjBack, q_rows, c, c, false));
        }
        if let Some([_, delta, back]) = flash {
            out.extend([delta, back]);
            if sink {
                out.push(sink_back);
            }
        } else {
            // dP: 2·D reads per (b,h,i,j); dV: 2·S reads per (b,h,j,d), one element of v per
            // query head. GQA clears d_v first and adds each head's share (+=: one more read)
            let (clear, add) = if grouped {
                (k_rows * kv, k_rows * c)
            } else {
                (Count::ZERO, Count::ZERO)
            };
            // mistake 7 writes those shares with `=`: no read of the old value
            let add = if m.has(Mistake::OverwriteKvGrad) {
                Count::ZERO
            } else {
                add
            };
            out.push(pc(
                Phase::WeightedSumBack,
                2 * q_rows * t * c + 2 * k_rows * c * s + add,
                cells + k_rows * c + clear,
            ));
            if dropout {
                out.push(pc(Phase::DropoutBack, 2 * cells, cells));
            }
            out.push(pc(Phase::SoftmaxBack, 4 * cells, cells + sink_writes));
            if sink {
                out.push(sink_back);
            }
            // dQ and dK: one (dS, k) or (dS, q) pair per visible pair and channel
            out.push(pc(
                Phase::ScoresBack,
                2 * 2 * b * visible * c + add,
                q_rows * c + k_rows * c + clear,
            ));
        }
        if plan.rope.is_some() {
            out.push(rope_count(Phase::RopeBack, q_rows * c + k_rows * kv));
        }
        match plan.start {
            StartKind::Qkv | StartKind::Latent(_) => {}
            StartKind::Fused => {
                let copies = k_rows * (c + 2 * kv);
                out.push(pc(Phase::SplitBack, copies, copies));
                out.push(lin_bwd(Phase::QkvProjBack, k_rows, c, c + 2 * kv, false));
            }
            StartKind::Separate { cross } => {
                out.push(lin_bwd(Phase::VProjBack, k_rows, c, kv, false));
                out.push(lin_bwd(Phase::KProjBack, k_rows, c, kv, true));
                out.push(lin_bwd(Phase::QProjBack, q_rows, c, c, !cross));
            }
        }
    }
    out
}
