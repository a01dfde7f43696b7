//! Multi-head latent attention's phases, counted: the training form, forward and backward, and
//! the absorbed decode.

use super::{Counted, Passes, Plan, pc, rope_count};
use crate::engine::count::Count;
use crate::kernels::Mask;
use crate::kernels::attention_mla::Latent;
use crate::trace::Phase;

/// Multi-head latent attention's phases (`attention_mla.rs`): the training form forward and
/// backward, or the absorbed decode form summed over its `B·T` steps. Its projections have no
/// bias; the output projection (with one) is the other variants'.
pub(super) fn latent_counts(plan: &Plan, lat: Latent, passes: Passes) -> Vec<Counted> {
    let sh = plan.shape;
    let n = Count::from;
    let (b, s, t, c, h) = (n(sh.b), n(sh.s), n(sh.t), n(sh.c), n(sh.h));
    let (d, r, dr) = (n(sh.d()), n(lat.r), n(lat.dr));
    let qd = d + dr; // a query head's channels
    let (q_rows, k_rows) = (b * s, b * t);
    let cells = b * h * s * t;
    let visible = b * n(plan.mask.visible_pairs(sh.s, sh.t));
    // y = x·W (+ b): IC (x, W) pairs per output, and a bias read when there is one
    let lin_fwd = |phase, rows: Count, ic: Count, oc: Count, bias: bool| {
        pc(phase, rows * oc * (n(usize::from(bias)) + 2 * ic), rows * oc)
    };
    // dx (IC per row, OC pairs each; `+=` adds a read), dW (IC·OC, a pair per row), db
    let lin_bwd = |phase, rows: Count, ic: Count, oc: Count, acc: bool, bias: bool| {
        let (bias_reads, bias_writes) = if bias {
            (oc * rows, oc)
        } else {
            (Count::ZERO, Count::ZERO)
        };
        pc(
            phase,
            rows * ic * (2 * oc + n(usize::from(acc))) + ic * oc * 2 * rows + bias_reads,
            rows * ic + ic * oc + bias_writes,
        )
    };
    let mut out = Vec::new();
    if plan.decode {
        if !passes.forward {
            return out;
        }
        let steps = b * t;
        // (b, t, j): a cached row step t reads, j ≤ t
        let seen = b * n(Mask::Causal.visible_pairs(sh.t, sh.t));
        out.extend([
            lin_fwd(Phase::DecodeLatent, steps, c, r + dr, false),
            lin_fwd(Phase::DecodeQ, steps, c, h * qd, false),
        ]);
        // per step the new query's H rotary parts and the new cache row's one
        if plan.rope.is_some() {
            out.push(rope_count(Phase::Rope, steps * (h * dr + dr)));
        }
        out.extend([
            pc(Phase::DecodeAbsorb, steps * h * r * 2 * d, steps * h * r),
            pc(Phase::DecodeScores, 2 * seen * h * (r + dr), seen * h),
            pc(Phase::DecodeSoftmax, 3 * seen * h, 2 * seen * h),
            pc(Phase::DecodeLatentSum, 2 * seen * h * r, steps * h * r),
            pc(Phase::DecodeUp, steps * c * 2 * r, steps * c),
            lin_fwd(Phase::DecodeOut, steps, c, c, plan.bias),
        ]);
        return out;
    }
    if passes.forward {
        out.extend([
            lin_fwd(Phase::MlaQProj, q_rows, c, h * qd, false),
            lin_fwd(Phase::LatentProj, k_rows, c, r, false),
            lin_fwd(Phase::KPeProj, k_rows, c, dr, false),
            lin_fwd(Phase::KUp, k_rows, r, c, false),
            lin_fwd(Phase::VUp, k_rows, r, c, false),
        ]);
        // the DR rotary channels of each query head and of each token's one k_pe row
        if plan.rope.is_some() {
            out.push(rope_count(Phase::Rope, q_rows * h * dr + k_rows * dr));
        }
        out.extend([
            pc(Phase::Scores, 2 * cells * qd, cells),
            pc(Phase::Softmax, 3 * cells, 2 * cells),
            pc(Phase::WeightedSum, 2 * q_rows * c * t, q_rows * c),
        ]);
        if plan.proj {
            out.push(lin_fwd(Phase::OutProj, q_rows, c, c, plan.bias));
        }
    }
    if plan.possible(passes).backward {
        if plan.proj {
            out.push(lin_bwd(Phase::OutProjBack, q_rows, c, c, false, plan.bias));
        }
        out.extend([
            pc(
                Phase::WeightedSumBack,
                2 * q_rows * t * c + 2 * k_rows * c * s,
                cells + k_rows * c,
            ),
            pc(Phase::SoftmaxBack, 4 * cells, cells),
            // per visible pair: dQ over D + DR channels, dK_nope over D, dK_pe over DR
            pc(
                Phase::ScoresBack,
                2 * h * visible * (qd + d + dr),
                q_rows * h * qd + k_rows * c + k_rows * dr,
            ),
        ]);
        if plan.rope.is_some() {
            out.push(rope_count(Phase::RopeBack, q_rows * h * dr + k_rows * dr));
        }
        out.extend([
            lin_bwd(Phase::VUpBack, k_rows, r, c, false, false),
            lin_bwd(Phase::KUpBack, k_rows, r, c, true, false),
            lin_bwd(Phase::KPeProjBack, k_rows, c, dr, false, false),
            lin_bwd(Phase::LatentProjBack, k_rows, c, r, true, false),
            lin_bwd(Phase::MlaQProjBack, q_rows, c, h * qd, true, false),
        ]);
    }
    out
}
