//! Global reads and writes per buffer: the reference's counted from its log, flash's for the
//! same pass in closed form.

use super::read::Learner;
use super::report::Traffic;
use crate::learner::reference::Reference;
use crate::traffic;
use attn_trace_core::engine::Passes;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::{Buf, Op, Pass};

/// (reads, writes) per [`Buf`] of the reference, every layer.
pub(super) fn counts(r: &Reference) -> Vec<(u64, u64)> {
    let mut c = vec![(0u64, 0u64); Buf::ALL.len()];
    for l in 0..r.layers {
        let Some(trace) = r.layer_run(l).and_then(|run| run.trace.as_ref()) else {
            continue;
        };
        for e in &trace.events {
            match e.op {
                Op::Read => c[e.buf as usize].0 += 1,
                Op::Write => c[e.buf as usize].1 += 1,
            }
        }
    }
    c
}

/// Flash's global reads and writes per buffer for the same pass, for attention that flash
/// computes too (multi-head, no dropout, no decoding); `None` for a buffer flash has not. Only
/// the attention core differs between the two, so flash's counts are the reference's with the
/// core's closed-form counts (`traffic::closed_form`, held to counted traces by its tests)
/// swapped for flash's: no second run. Every layer counts.
pub(super) fn flash_traffic(
    r: &Reference,
    scenario: &Scenario,
    reference: &[(u64, u64)],
) -> Option<Vec<Option<(u64, u64)>>> {
    // flash computes multi-head attention's core: a variant that runs MHA's plain passes
    let d = r.variant.desc();
    if d.plain != Variant::Mha || d.latent || scenario.decode || scenario.dropout.is_some() {
        return None;
    }
    let plan = scenario.plan();
    let layers = r.layers as u64;
    let core = |v: Variant| {
        let mut c = vec![(0u64, 0u64); Buf::ALL.len()];
        for b in traffic::closed_form(&plan, v, r.pass).buffers {
            c[b.buf as usize] = (b.reads * layers, b.writes * layers);
        }
        c
    };
    let (ours, flash) = (core(r.variant), core(Variant::Flash));
    let passes = match r.pass {
        Pass::Forward => Passes::FORWARD,
        Pass::Backward => Passes::BOTH,
    };
    let registry = attn_trace_core::engine::Registry::new(&plan, Variant::Flash, passes);
    Some(
        Buf::ALL
            .iter()
            .map(|&b| {
                let k = b as usize;
                registry
                    .get(b)
                    .filter(|spec| spec.level == attn_trace_core::tensor::Level::Global)
                    .map(|_| {
                        (
                            reference[k].0.saturating_sub(ours[k].0) + flash[k].0,
                            reference[k].1.saturating_sub(ours[k].1) + flash[k].1,
                        )
                    })
            })
            .collect(),
    )
}

/// The global reads and writes per buffer, the learner's beside the reference's and, where
/// the pass has a flash kernel, flash's: buffers nobody touches are left out.
pub(super) fn traffic(r: &Reference, scenario: &Scenario, l: &Learner) -> Vec<Traffic> {
    let reference = counts(r);
    let flash = flash_traffic(r, scenario, &reference);
    r.iter()
        .filter_map(|c| {
            let m = l.mine(c.buf);
            let (rr, rw) = reference[c.buf as usize];
            if m.reads + m.writes + rr + rw == 0 {
                return None;
            }
            let f = flash.as_ref().and_then(|f| f[c.buf as usize]);
            Some(Traffic {
                buffer: c.buf,
                reads: m.reads,
                writes: m.writes,
                reference_reads: rr,
                reference_writes: rw,
                flash_reads: f.map(|f| f.0),
                flash_writes: f.map(|f| f.1),
            })
        })
        .collect()
}
