//! The memory budget a scenario's traces must fit: the estimate of their events and bytes,
//! checked before anything is allocated.

use super::Passes;
use crate::engine::{self, Plan};
use crate::kernels::Variant;
use crate::kernels::attention_mistakes::Mistakes;
use attn_trace_i18n::tr;

/// Most memory the traces of one scenario may take (see `budget_bytes`).
pub const BUDGET_BYTES: u64 = 4 << 30;

/// The memory the traces of one scenario may take in this process: [`BUDGET_BYTES`], or half
/// its address-space limit (`ulimit -v`) when that is lower, so that a trace the process could
/// not hold is refused in one line before it starts, not aborted half-way.
pub fn budget_bytes() -> u64 {
    crate::limits::memory_budget(BUDGET_BYTES)
}

/// What one recorded event costs with its share of loop frames and the cell index. Measured:
/// 35 bytes at B=2, T=16, C=16, H=4 and 39 on the tiny walkthrough, where the per-cell tables
/// weigh more (a test keeps this figure above the real one).
pub const BYTES_PER_EVENT: u64 = 40;

const GIB: f64 = (1u64 << 30) as f64;

/// Why the traces of `plan` would not fit in [`BUDGET_BYTES`], or `None` when they fit. With
/// `mistakes`, every variant also runs mistaken (forward only, but for a backward mistake). The
/// counts are exact and cannot wrap: sizes whose events do not fit in a `u64` are "more than"
/// it, and so is the byte size they print.
pub(crate) fn budget_error(plan: Plan, variants: &[Variant], passes: Passes, mistakes: Mistakes) -> Option<String> {
    let shrink = tr!("use a smaller T (events grow with T²·C), C (and C²·T) or B, or fewer variants or passes");
    let mistaken = Plan {
        mistakes,
        ..plan.clone()
    };
    let events: engine::Count = variants
        .iter()
        .map(|&v| {
            let wrong = if mistakes.is_empty() {
                engine::Count::ZERO
            } else {
                engine::estimate_events(&mistaken, v, passes)
            };
            engine::estimate_events(&plan, v, passes) + wrong
        })
        .sum();
    let bytes = events * BYTES_PER_EVENT;
    let budget = budget_bytes();
    if !bytes.exceeds(budget) {
        return None;
    }
    Some(match bytes.get() {
        Some(b) => tr!(
            "the trace would record {events} events (about {gib} GiB at {per_event} bytes per event), over the {budget} GiB budget; {shrink}",
            events,
            gib = format!("{:.1}", b as f64 / GIB),
            per_event = BYTES_PER_EVENT,
            budget = crate::limits::gib_text(budget),
            shrink
        ),
        None => tr!(
            "the trace would record {events} events, far beyond the {budget} GiB budget; {shrink}",
            events,
            budget = crate::limits::gib_text(budget),
            shrink
        ),
    })
}
