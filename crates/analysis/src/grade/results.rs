//! The results: every cell the reference pass writes, the learner's final value beside the
//! reference's, the cells whose writes read what the reference's never read for them (and that
//! stray read), and a constant ratio between the two sides with the scale it is.

use super::read::Learner;
use super::report::{BufferResult, Cell, Ratio, Stray, Touch};
use super::state::BlockRead;
use super::{agrees, tolerance};
use crate::accum::Scale;
use crate::learner::reference::{Cells, NONE, Reference};
use attn_trace_core::trace::{Buf, MASKED};
use attn_trace_i18n::tr;

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

/// The learner's read `y`, as they made it.
fn touch_mine(r: &Reference, names: &[String], y: &BlockRead, stray: bool) -> Touch {
    Touch {
        buffer: names.get(y.name as usize).cloned().unwrap_or_default(),
        offset: y.offset,
        value: y.value,
        cell: Some(r.cell_label(y.buf, y.off)),
        note: r.notes(y.buf, y.off),
        stray,
    }
}

/// What the reference's reads of `y`'s buffer have, for the writes of cell `off` of `buf`,
/// along the first coordinate `y` gets wrong: `j = 2`.
fn expected(r: &Reference, buf: Buf, off: usize, y: &BlockRead) -> String {
    let (Some(ties), Some(wc), Some(rc)) = (r.ties(buf, y.buf), r.get(buf), r.get(y.buf)) else {
        return String::new();
    };
    let (x, yc, ydims) = (wc.coords(off), rc.coords(y.off), rc.dims());
    ties.iter()
        .find_map(|t| {
            let want = t.map.get(x[t.write_dim]).copied().flatten()?;
            (want != yc[t.read_dim]).then(|| format!("{} = {want}", ydims[t.read_dim].0))
        })
        .unwrap_or_default()
}

/// The learner's values over the reference's, when that is one number (to 1e-3) over at least
/// two cells, and not 1.
fn constant_ratio(ratios: &[f32]) -> Option<f32> {
    let (&first, rest) = ratios.split_first()?;
    if rest.is_empty() || !first.is_finite() || first == 0.0 {
        return None;
    }
    let same = rest.iter().all(|&x| ((x - first) / first).abs() < 1e-3);
    (same && (first - 1.0).abs() > 1e-3).then_some(first)
}

/// A ratio of scores that is a known wrong scale: `1/√C where 1/√D is meant`.
fn scale_meaning(r: &Reference, buf: Buf, factor: f32) -> Option<String> {
    // the scale multiplies the scores, and so the gradients of q and k
    if !matches!(buf, Buf::Scores | Buf::DQ | Buf::DK) {
        return None;
    }
    let sh = r.run.shape;
    let right = Scale::of(r.variant, sh, 0);
    let meant = format!("1/√{}", right.symbol);
    let inv_sqrt = |n: usize| 1.0 / (n.max(1) as f32).sqrt();
    // the scales a kernel is written with by mistake, in the order they are tried
    let candidates = [
        ("1/√C".to_string(), inv_sqrt(sh.c)),
        ("1/√D".to_string(), inv_sqrt(sh.d())),
        ("1/√T".to_string(), inv_sqrt(sh.t)),
        ("1/√H".to_string(), inv_sqrt(sh.h)),
        ("1/D".to_string(), 1.0 / sh.d().max(1) as f32),
        ("1/C".to_string(), 1.0 / sh.c.max(1) as f32),
        (tr!("no scale at all").to_string(), 1.0),
    ];
    let scale = factor * right.value;
    candidates
        .into_iter()
        .find(|(name, s)| *name != meant && ((scale - s) / s).abs() < 1e-3)
        .map(|(name, _)| tr!("{name} where {meant} is meant", name, meant).to_string())
}
