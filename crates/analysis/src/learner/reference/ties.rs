//! How the cells each write reads lie relative to the cell written: per (buffer written, buffer
//! read), the coordinates the reads follow.

use super::{Reference, Tie};
use attn_trace_core::trace::{Buf, Op};
use std::collections::HashMap;

/// The ties of every (buffer written, buffer read) pair, from the reference's windows.
pub(super) fn learn_ties(r: &Reference) -> HashMap<(Buf, Buf), Vec<Tie>> {
    // per pair: per (read dim, write dim) the map so far, `None` once broken
    type Maps = Vec<Vec<Option<Vec<Option<usize>>>>>;
    let mut seen: HashMap<(Buf, Buf), Maps> = HashMap::new();
    let mut window: Vec<(Buf, usize)> = Vec::new();
    // the writes of a block (writes one after another) share the reads before them
    let mut after_write = false;
    for (_, e, off) in r.walk() {
        if e.op == Op::Read {
            if after_write {
                window.clear();
                after_write = false;
            }
            window.push((e.buf, off));
            continue;
        }
        after_write = true;
        let Some(wc) = r.get(e.buf) else { continue };
        let x = wc.coords(off);
        let xdims = wc.dims();
        for &(rb, roff) in &window {
            if rb == e.buf && roff == off {
                continue;
            }
            let Some(rc) = r.get(rb) else { continue };
            if rc.unneeded.get(roff).copied().unwrap_or(false) {
                continue;
            }
            let y = rc.coords(roff);
            let ydims = rc.dims();
            let maps = seen.entry((e.buf, rb)).or_insert_with(|| {
                ydims
                    .iter()
                    .map(|_| xdims.iter().map(|&(_, size)| Some(vec![None; size])).collect())
                    .collect()
            });
            for (yd, per_x) in maps.iter_mut().enumerate() {
                for (xd, m) in per_x.iter_mut().enumerate() {
                    let Some(table) = m else { continue };
                    let Some(slot) = table.get_mut(x[xd]) else {
                        *m = None;
                        continue;
                    };
                    match slot {
                        None => *slot = Some(y[yd]),
                        Some(v) if *v == y[yd] => {}
                        Some(_) => *m = None,
                    }
                }
            }
        }
    }
    let mut out = HashMap::new();
    for ((wb, rb), maps) in seen {
        let (Some(wc), Some(rc)) = (r.get(wb), r.get(rb)) else {
            continue;
        };
        let (xdims, ydims) = (wc.dims(), rc.dims());
        let mut ties = Vec::new();
        for (yd, per_x) in maps.into_iter().enumerate() {
            if ydims[yd].1 < 2 {
                continue;
            }
            // the same name first (k's j follows the score's j), then any coordinate
            let order = (0..xdims.len())
                .filter(|&xd| xdims[xd].0 == ydims[yd].0)
                .chain((0..xdims.len()).filter(|&xd| xdims[xd].0 != ydims[yd].0));
            let mut per_x = per_x;
            for xd in order {
                let Some(table) = per_x[xd].take() else { continue };
                // a coordinate that took one value, or was read at one value, ties nothing
                let mut xs = table.iter().flatten();
                let first = xs.next().copied();
                let varies = table.iter().filter(|v| v.is_some()).count() >= 2
                    && table.iter().flatten().any(|&v| Some(v) != first);
                if xdims[xd].1 >= 2 && varies {
                    ties.push(Tie {
                        read_dim: yd,
                        write_dim: xd,
                        map: table,
                    });
                    break;
                }
            }
        }
        if !ties.is_empty() {
            out.insert((wb, rb), ties);
        }
    }
    out
}
