//! The gallery mistakes a scenario allows, and the one whose kernel gives the learner's values.

use super::agrees;
use super::report::{Cell, Named};
use super::results::Wrong;
use super::state::Mine;
use crate::learner::reference::Reference;
use attn_trace_core::engine::{self, Passes, StartKind};
use attn_trace_core::kernels::attention_mistakes::{Mistake, Mistakes};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;

/// Can mistake `m` be made on this scenario's `variant` and `pass`?
pub fn applies(m: Mistake, scenario: &Scenario, variant: Variant, pass: Pass) -> bool {
    let plan = scenario.plan();
    let plain = variant.desc().gallery && !scenario.decode;
    match m {
        Mistake::OverwriteKvGrad => {
            variant.shares_kv_heads() && pass == Pass::Backward && scenario.shape.h_kv < scenario.shape.h
        }
        _ if pass != Pass::Forward || !plain => false,
        Mistake::NoInputProjection => plan.start != StartKind::Qkv,
        Mistake::NoOutputProjection => plan.proj,
        Mistake::DropoutNotApplied => plan.dropout,
        Mistake::MaskByMultiply => !matches!(scenario.mask, Mask::None),
        Mistake::ScaleBySeqLen | Mistake::SoftmaxOverTwoDims => true,
    }
}

/// The gallery mistake whose kernel gives the learner's values wherever those differ from the
/// reference's, if one does.
pub(super) fn matching_mistake(
    r: &Reference,
    scenario: &Scenario,
    mine: &[Option<Mine>],
    wrong: &[Wrong],
) -> Option<Named> {
    // the cells whose values are wrong say which mistake made them, not those only misread
    let wrong: Vec<&Cell> = wrong.iter().filter(|w| w.value).map(|w| &w.cell).collect();
    if wrong.is_empty() {
        return None;
    }
    let input = scenario.reseeded(r.input);
    let layers: Vec<usize> = {
        let mut l: Vec<usize> = wrong
            .iter()
            .map(|c| c.offset / r.get(c.buffer).map_or(1, |c| c.per_layer().max(1)))
            .collect();
        l.sort_unstable();
        l.dedup();
        l
    };
    Mistake::ALL
        .into_iter()
        .filter(|&m| applies(m, scenario, r.variant, r.pass))
        .find(|&m| {
            let passes = match r.pass {
                Pass::Forward => Passes::FORWARD,
                Pass::Backward => Passes::BOTH,
            };
            let runs: Vec<(usize, engine::Run)> = layers
                .iter()
                .map(|&l| {
                    let inputs = input.layer(l).inputs().with_mistakes(Mistakes::of(&[m]));
                    (l, engine::run(&inputs, r.variant, passes, false))
                })
                .collect();
            wrong.iter().all(|cell| {
                let Some(Some(m)) = mine.get(cell.buffer as usize) else {
                    return false;
                };
                let per = r.get(cell.buffer).map_or(1, |c| c.per_layer().max(1));
                let Some((_, run)) = runs.iter().find(|(l, _)| *l == cell.offset / per) else {
                    return false;
                };
                let written = m.written_at[cell.offset] != 0;
                if !run.registry.has(cell.buffer) {
                    // the mistaken kernel has no such buffer (no output projection: no `out`)
                    return !written;
                }
                let Some(&theirs) = run.tensors.get(cell.buffer).get(cell.offset % per) else {
                    return false;
                };
                written && agrees(m.value[cell.offset], theirs, theirs.abs())
            })
        })
        .map(|m| Named {
            number: crate::mistakes::number(m),
            name: m.name(),
            symptom: m.symptom(),
        })
}
