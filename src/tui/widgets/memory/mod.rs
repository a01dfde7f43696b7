//! The memory panel: each buffer the phase touches as its logical grid (`[B,T,C]`; `[B,H,T,T]`
//! as H small T×T matrices; `[B,T,H,D]` with the heads side by side) and as the flat row
//! `data[..]` with offsets. Only a window around the interesting cell is laid out, so drawing
//! costs the same on a 3×4 buffer as on a million-element one.
//!
//! [`plan`] (in `layout.rs`) places every cell; [`render`] (in `render.rs`) draws the plan and
//! [`hit`] answers mouse clicks from the same plan, so what is clicked is what was drawn. What
//! the current iteration touched, and flash's tiles, come from [`attn_trace_analysis::step`].

mod layout;
mod render;

#[cfg(test)]
pub(crate) use layout::MemoryPlan;
pub(crate) use layout::plan;
pub(crate) use render::{hit, render};

use super::Ctx;
use attn_trace_analysis::accum::Accumulation;
use attn_trace_analysis::step::{loaded_from, step_buffers};
use attn_trace_core::trace::Buf;
use std::collections::HashSet;

/// Width of one value cell (6 characters and a space) and of one heat cell.
const VALUE_W: u16 = 7;
const HEAT_W: u16 = 3;

/// Buffers to draw, most wanted first: in a dot product the buffer it writes, the tables its
/// offsets were read from (a paged cache's `block_table`) and the buffers of its operands, else
/// the current event's (then those tables) (in flash's tile loops the current event's first); then
/// the selected cell's; in flash's tile loops the
/// buffers of the current step and the global buffers its tiles were loaded from; then the
/// rest of the phase's.
pub(crate) fn buffers(ctx: &Ctx, dot: Option<&Accumulation>) -> Vec<Buf> {
    let mut out = Vec::new();
    let step = step_buffers(ctx.trace, ctx.cursor);
    // in flash's steps the current event's buffer comes first: a read of `l` or `m` beside
    // the output tile's sum is not one of the sum's factors
    if !step.is_empty() {
        out.push(ctx.view.buf);
    }
    // the table a paged cache's block id was read from, right after what the access writes:
    // the offsets on screen use it
    let tables = attn_trace_analysis::formula::offsets_read_from(&ctx.view);
    if let Some(d) = dot {
        out.push(ctx.trace.events[d.write].buf);
        out.extend(&tables);
        if let Some(t) = d.terms.first() {
            out.extend(t.reads.iter().map(|&k| ctx.trace.events[k].buf));
        }
    }
    out.push(ctx.view.buf);
    out.extend(tables);
    if ctx.pinned {
        out.push(ctx.selected.0);
    }
    out.extend(&step);
    out.extend(step.iter().filter_map(|&b| loaded_from(b)));
    out.extend(ctx.view.phase.buffers());
    let mut seen = HashSet::new();
    out.retain(|b| seen.insert(*b) && ctx.trace.buffer(*b).is_some());
    out
}
