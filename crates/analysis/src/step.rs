//! What the loop iteration around one event works on, for the memory panel to highlight: the
//! cells it touched before the event (the other operands), and in flash's tile loops the
//! buffers of the current step, the global buffers its tiles were loaded from, and where the
//! current tiles lie in them.

use attn_trace_core::kernels::names;
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Phase, Trace};
use std::collections::HashSet;

/// Where flash's current tiles lie in the global buffers: the batch and head, the query tile's
/// rows `i0..i1` and the key tile's rows `j0..j1` (from the event's loop variables and the tile
/// sizes in the registry). `None` outside flash's loops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileRegion {
    pub bb: usize,
    pub hh: usize,
    pub rows_i: Option<std::ops::Range<usize>>,
    pub rows_j: Option<std::ops::Range<usize>>,
}

/// The tiles event `n` works on, as regions of the global buffers of a run of shape `sh`.
pub fn tile_region(trace: &Trace, n: usize, sh: Shape) -> Option<TileRegion> {
    let v = trace.view(n);
    if !matches!(v.phase, Phase::Flash | Phase::FlashBack) {
        return None;
    }
    let var = |name: &str| v.vars.iter().rev().find(|(n, _)| *n == name).map(|&(_, x)| x);
    let size = |buf: Buf| trace.buffer(buf).and_then(|b| b.layout().dims.first().map(|d| d.size));
    let rows_i = var(names::I0)
        .zip(size(Buf::QTile))
        .map(|(i0, br)| i0..(i0 + br).min(sh.s));
    let rows_j = var(names::J0)
        .zip(size(Buf::KTile))
        .map(|(j0, bc)| j0..(j0 + bc).min(sh.t));
    Some(TileRegion {
        bb: var(names::BB)?,
        hh: var(names::HH)?,
        rows_i,
        rows_j,
    })
}

impl TileRegion {
    /// Is `off` of global buffer `buf` inside the current query or key tile?
    pub fn contains(&self, trace: &Trace, buf: Buf, off: usize) -> bool {
        let region = self;
        let Some(info) = trace.buffer(buf) else {
            return false;
        };
        let l = info.layout();
        if info.spec.level != attn_trace_core::tensor::Level::Global
            || l.coord(off, names::B) != region.bb
            || l.coord(off, names::H) != region.hh
        {
            return false;
        }
        let within = |name: &str, rows: &Option<std::ops::Range<usize>>| {
            l.position(name).is_some() && rows.as_ref().is_some_and(|r| r.contains(&l.coord(off, name)))
        };
        within(names::I, &region.rows_i) || within(names::J, &region.rows_j)
    }
}

/// The global buffer a flash tile is loaded from (the kernel's tile loads: `q → q_tile`,
/// `k → k_tile`, `v → v_tile`, `d_att → do_tile`).
pub fn loaded_from(tile: Buf) -> Option<Buf> {
    match tile {
        Buf::QTile => Some(Buf::Q),
        Buf::KTile => Some(Buf::K),
        Buf::VTile => Some(Buf::V),
        Buf::DOTile => Some(Buf::DAtt),
        _ => None,
    }
}

/// The buffers of flash's current step, from the log: the step is the iteration just inside
/// the innermost tile loop (`i0` or `j0`) that holds the current event (a tile load, the score
/// tile, a row of the online softmax, a gradient tile, the output tile); its buffers are those
/// its events read or write, in the order first touched. Empty outside flash's tile loops.
pub fn step_buffers(trace: &Trace, n: usize) -> Vec<Buf> {
    let ids = trace.frame_ids(n);
    let tile_loop = ids.iter().position(|&id| {
        trace
            .frame(id)
            .and_then(|f| trace.kinds.get(f.kind as usize))
            .is_some_and(|k| matches!(k.names.first(), Some(&n) if n == names::I0 || n == names::J0))
    });
    let Some(step) = tile_loop
        .and_then(|k| k.checked_sub(1))
        .and_then(|k| ids.get(k))
        .and_then(|&id| trace.frame(id))
    else {
        return Vec::new();
    };
    let mut out: Vec<Buf> = Vec::new();
    for e in &trace.events[step.start as usize..(step.end as usize).min(trace.len())] {
        if !out.contains(&e.buf) {
            out.push(e.buf);
        }
    }
    out
}

/// Cells the loop iteration around event `n` read or wrote before it: the other operands.
pub fn touched(trace: &Trace, n: usize) -> HashSet<(Buf, usize)> {
    let ids = trace.frame_ids(n);
    let e = trace.events[n];
    let frame = if e.op == Op::Write {
        ids.first()
    } else {
        ids.get(1).or(ids.first())
    };
    let start = frame.and_then(|&id| trace.frame(id)).map_or(n, |f| f.start as usize);
    (start.max(n.saturating_sub(256))..n)
        .map(|k| (trace.events[k].buf, trace.events[k].offset as usize))
        .collect()
}

/// Has `buf[off]` not been written yet at event `n`, in a log that writes `buf`? Its value is
/// then the zero the buffer was allocated with, not a result (a split step's `lse_part` of the
/// parts still to come, `w_part` before the merge), and the memory panel draws it apart from a
/// real zero. A buffer the log never writes (`x`, a block table, `q` given by the scenario)
/// holds its values from the start.
pub fn unwritten(trace: &Trace, buf: Buf, off: usize, n: usize) -> bool {
    trace.index.buffer_written(buf) && trace.index.last_write_at_or_before(buf, off, n).is_none()
}
