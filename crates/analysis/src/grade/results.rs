//! The results: every cell the reference pass writes, the learner's final value beside the
//! reference's, and the cells whose writes read what the reference's never read for them.

use super::divergence::{expected, touch_mine};
use super::hints::{constant_ratio, scale_meaning};
use super::read::Learner;
use super::report::{BufferResult, Cell, Ratio, Stray};
use super::{agrees, tolerance};
use crate::learner::reference::{Cells, NONE, Reference};
use attn_trace_core::trace::{Buf, MASKED};

/// A cell that is not right, and when the reference finishes it.
pub(super) struct Wrong {
    /// The reference's last write of the cell (its event).
    pub(super) done_at: u32,
    pub(super) cell: Cell,
    /// Its value is wrong or missing (not only its reads).
    pub(super) value: bool,
}

/// The results of the pass, buffer by buffer.
pub(super) struct Results {
    pub(super) buffers: Vec<BufferResult>,
    /// Every cell not right, in the order the reference finishes them.
    pub(super) wrong: Vec<Wrong>,
    /// The score-like buffers whose missing cells all lie on the diagonal `j = i`.
    pub(super) diagonal: Vec<Buf>,
}

/// The results of every buffer the learner wrote and every result the pass must produce.
pub(super) fn results(r: &Reference, l: &Learner, names: &[String]) -> Results {
    let mut out = Results {
        buffers: Vec::new(),
        wrong: Vec::new(),
        diagonal: Vec::new(),
    };
    for c in r.iter() {
        if !c.written() || !(c.result || l.mine(c.buf).first_write.is_some()) {
            continue;
        }
        let (result, only_diagonal) = buffer(r, c, l, names, &mut out.wrong);
        if only_diagonal && result.missing > 0 {
            out.diagonal.push(c.buf);
        }
        out.buffers.push(result);
    }
    out.wrong.sort_by_key(|w| w.done_at);
    out
}

/// One buffer's result; its cells not right go on `wrong`. The second value says whether
/// every missing cell is on the diagonal.
fn buffer(r: &Reference, c: &Cells, l: &Learner, names: &[String], wrong: &mut Vec<Wrong>) -> (BufferResult, bool) {
    let m = l.mine(c.buf);
    // the tolerance's absolute part scales with the buffer's largest finished value
    let largest = c
        .end
        .iter()
        .zip(&c.last_write)
        .filter(|&(x, &w)| w != NONE && x.is_finite() && *x != MASKED)
        .fold(0.0f32, |a, (x, _)| a.max(x.abs()));
    let mut res = BufferResult {
        buffer: c.buf,
        cells: 0,
        wrong: 0,
        missing: 0,
        misread: 0,
        unneeded: 0,
        first: None,
        ratio: None,
    };
    let mut first: Option<(u32, Cell)> = None;
    let mut ratios: Vec<f32> = Vec::new();
    let pairs = c.spec.layout.is_pairs();
    let mut only_diagonal = pairs;
    for off in 0..c.len() {
        let w = c.last_write[off];
        if w == NONE {
            continue;
        }
        if c.unneeded[off] {
            res.unneeded += 1;
            continue;
        }
        res.cells += 1;
        let reference = c.end[off];
        let written = m.written_at[off] != 0;
        let stray = l.blocks.strays.get(&(c.buf, off)).copied();
        let right = if written {
            agrees(m.value[off], reference, largest)
        } else {
            // a masked score the learner left alone is as good as −1e9
            reference == MASKED
        };
        if right && stray.is_none() {
            continue;
        }
        if !written {
            res.missing += 1;
            if pairs {
                let idx = c.coords(off);
                only_diagonal &= idx[idx.len() - 1] == idx[idx.len() - 2];
            }
        } else if !right {
            res.wrong += 1;
            if reference.is_finite() && reference.abs() > tolerance(reference, largest) {
                ratios.push(m.value[off] / reference);
            }
        } else {
            res.misread += 1;
        }
        let cell = Cell {
            buffer: c.buf,
            offset: off,
            index: c.label(off),
            reference,
            mine: written.then_some(m.value[off]),
            tolerance: tolerance(reference, largest),
            right: written && right,
            stray: stray.map(|y| Stray {
                expected: expected(r, c.buf, off, &y),
                read: touch_mine(r, names, &y, true),
            }),
        };
        if first.as_ref().is_none_or(|(fw, _)| w < *fw) {
            first = Some((w, cell.clone()));
        }
        wrong.push(Wrong {
            done_at: w,
            cell,
            value: !right,
        });
    }
    res.ratio = constant_ratio(&ratios).map(|factor| Ratio {
        factor,
        meaning: scale_meaning(r, c.buf, factor),
    });
    res.first = first.map(|(_, c)| c);
    (res, only_diagonal)
}
