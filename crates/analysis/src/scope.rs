//! What is in scope at an event: the value of a loop variable, and the enclosing iteration of
//! a loop. The one answer for every panel and `explain`: the innermost loop of a name is the
//! one in scope (a decode step's `t` around rope's own `t` is shadowed by it).

use attn_trace_core::trace::{EventView, Frame, Kind, Op, Trace};

/// The value of loop variable `name` at the event `view` shows: the innermost loop of that
/// name (a derived offset is not a loop variable).
pub fn var(view: &EventView, name: &str) -> Option<usize> {
    view.vars.iter().rev().find(|(n, _)| *n == name).map(|&(_, x)| x)
}

/// [`var`] at event `n` of `trace`.
pub fn var_at(trace: &Trace, n: usize, name: &str) -> Option<usize> {
    if n >= trace.len() {
        return None;
    }
    let mut id = trace.events[n].frame;
    while let Some(f) = trace.frame(id) {
        let kind = trace.kinds.get(f.kind as usize)?;
        if kind.names.first() == Some(&name) {
            return Some(f.vals[0] as usize);
        }
        id = f.parent;
    }
    None
}

/// The innermost iteration around event `n` of the loop whose variable is `name` (the first
/// name its kernel records), with its frame id.
pub fn iteration<'a>(trace: &'a Trace, n: usize, name: &str) -> Option<(u32, &'a Frame)> {
    trace.frame_ids(n).into_iter().find_map(|id| {
        let f = trace.frame(id)?;
        (trace.kinds.get(f.kind as usize)?.names.first() == Some(&name)).then_some((id, f))
    })
}

/// The loops enclosing event `n`, innermost first: each loop site's variable, file and line
/// (the code panel marks those lines, the mistakes view picks the mistaken kernel's).
pub fn loops(trace: &Trace, n: usize) -> Vec<Kind> {
    trace
        .frame_ids(n)
        .into_iter()
        .filter_map(|id| trace.frame(id))
        .filter_map(|f| trace.kinds.get(f.kind as usize).copied())
        .collect()
}

/// The first read of `buf` the iteration `frame` made at or before event `upto`: a row's `lse`
/// or `D_i`, read once and used by every column after it.
pub fn read_in(trace: &Trace, frame: &Frame, upto: usize, buf: attn_trace_core::trace::Buf) -> Option<usize> {
    (frame.start as usize..=upto.min(trace.len().saturating_sub(1)))
        .find(|&k| trace.events[k].op == Op::Read && trace.events[k].buf == buf)
}
