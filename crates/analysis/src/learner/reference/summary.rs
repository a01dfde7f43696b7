//! Per buffer, what the pass does to each cell over every layer: what it reads before writing,
//! writes last and accumulates into, and which cells no result depends on.

use super::{Cells, NONE, Reference};
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::{Buf, MASKED, Op};

/// Per global buffer of the run, what the pass does to each cell over every layer.
pub(super) fn summarise(r: &Reference) -> Vec<Option<Cells>> {
    let registry = r.registry();
    let mut cells: Vec<Option<Cells>> = Buf::ALL
        .iter()
        .map(|&b| {
            let spec = registry.get(b).filter(|s| s.level == Level::Global)?;
            let mut start = Vec::with_capacity(spec.len() * r.layers);
            let mut end = Vec::with_capacity(spec.len() * r.layers);
            for l in 0..r.layers {
                let run = r.layer_run(l)?;
                let trace = run.trace.as_ref()?;
                match trace.buffer(b) {
                    Some(i) => start.extend_from_slice(&i.initial),
                    None => start.extend(std::iter::repeat_n(0.0, spec.len())),
                }
                end.extend_from_slice(run.tensors.get(b));
            }
            let n = start.len();
            let unneeded = (0..n)
                .map(|off| {
                    spec.layout.is_pairs() && {
                        let idx = spec.layout.index(off % spec.len().max(1));
                        r.mask.hides(idx[idx.len() - 2], idx[idx.len() - 1])
                    }
                })
                .collect();
            Some(Cells {
                buf: b,
                spec: spec.clone(),
                layers: r.layers,
                end,
                start,
                input: false,
                last_write: vec![NONE; n],
                read: vec![false; n],
                accumulated: vec![false; n],
                overwritten: vec![false; n],
                unneeded,
                needed: vec![false; n],
                result: false,
            })
        })
        .collect();
    // per cell: read since its last write (for accumulations and lost writes); its first write
    let mut read_since: Vec<Vec<bool>> = cells
        .iter()
        .map(|c| c.as_ref().map_or_else(Vec::new, |c| vec![false; c.len()]))
        .collect();
    let mut first_write: Vec<Vec<u32>> = cells
        .iter()
        .map(|c| c.as_ref().map_or_else(Vec::new, |c| vec![NONE; c.len()]))
        .collect();
    // per buffer, the last event reading it
    let mut last_read = vec![NONE; Buf::ALL.len()];
    for (n, e, off) in r.walk() {
        let b = e.buf as usize;
        let Some(c) = cells[b].as_mut() else { continue };
        if off >= c.len() {
            continue;
        }
        match e.op {
            Op::Read => {
                if c.last_write[off] == NONE {
                    c.input = true;
                    // what a learner is given is what the reference reads: a buffer filled
                    // before the pass without being recorded (d_att copied from d_out when there
                    // is no output projection) starts with the values read, not the snapshot's
                    if !c.read[off] {
                        c.start[off] = e.value;
                    }
                }
                c.read[off] = true;
                read_since[b][off] = true;
                last_read[b] = n as u32;
            }
            Op::Write => {
                if c.last_write[off] == NONE {
                    first_write[b][off] = n as u32;
                } else if read_since[b][off] {
                    c.accumulated[off] = true;
                } else {
                    c.overwritten[off] = true;
                }
                c.last_write[off] = n as u32;
                read_since[b][off] = false;
            }
        }
    }
    for c in cells.iter_mut().flatten() {
        let last = c.last_write.iter().filter(|&&w| w != NONE).max().copied();
        c.result = last.is_some_and(|w| last_read[c.buf as usize] == NONE || last_read[c.buf as usize] < w);
    }
    // which given cells the results depend on: backwards from the results' final values, a
    // needed write needs the reads since the write before it (what the reference's kernels
    // compute one value from), and a needed read needs the write it reads; a masked score and
    // the cells no result depends on pass nothing on
    let mut live: Vec<Vec<bool>> = cells
        .iter()
        .map(|c| {
            c.as_ref().map_or_else(Vec::new, |c| {
                (0..c.len())
                    .map(|off| c.result && c.last_write[off] != NONE && !c.unneeded[off])
                    .collect()
            })
        })
        .collect();
    let mut feeding = false;
    for (n, e, off) in r.walk().rev() {
        let b = e.buf as usize;
        let Some(c) = cells[b].as_mut() else { continue };
        if off >= c.len() {
            continue;
        }
        match e.op {
            Op::Write => {
                feeding = live[b][off] && !c.unneeded[off] && e.value > MASKED;
                live[b][off] = false;
            }
            Op::Read => {
                if feeding && !c.unneeded[off] {
                    live[b][off] = true;
                    if first_write[b][off] == NONE || (first_write[b][off] as usize) > n {
                        c.needed[off] = true;
                    }
                }
            }
        }
    }
    cells
}
