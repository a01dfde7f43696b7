//! A learner buffer resolved: our layout, or its declared views checked against the run's
//! tensors and laid out as a map from the learner's offsets to reference cells.

use super::super::reference::{Cells, Reference};
use super::{BufferDecl, Expr, sizes};
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::Buf;
use attn_trace_i18n::tr;

/// One learner buffer, resolved.
#[derive(Clone, Debug)]
pub(super) enum Resolved {
    /// Our layout (layer-major with several layers).
    Ours(Buf),
    Views(Box<Views>),
    Local,
    Unknown(String),
}

/// A scratch dimension of a view: its name, size, and stride in the tensor's cell offsets.
#[derive(Clone, Debug)]
pub(super) struct Scratch {
    pub(super) name: String,
    pub(super) size: usize,
    pub(super) stride: usize,
}

#[derive(Clone, Debug)]
pub(super) struct ViewInfo {
    pub(super) buf: Buf,
    pub(super) scratch: Vec<Scratch>,
}

/// Learner offset → (view + 1) << 32 | cell, 0 where no view is.
#[derive(Clone, Debug)]
enum OffsetMap {
    Dense { base: i64, cells: Vec<u64> },
    Sparse(Vec<(i64, u64)>),
}

#[derive(Clone, Debug)]
pub(super) struct Views {
    pub(super) views: Vec<ViewInfo>,
    map: OffsetMap,
}

impl Views {
    pub(super) fn get(&self, offset: i64) -> Option<u64> {
        match &self.map {
            OffsetMap::Dense { base, cells } => {
                let k = usize::try_from(offset.checked_sub(*base)?).ok()?;
                cells.get(k).copied().filter(|&c| c != 0)
            }
            OffsetMap::Sparse(list) => list
                .binary_search_by_key(&offset, |&(o, _)| o)
                .ok()
                .and_then(|k| list.get(k).map(|&(_, c)| c)),
        }
    }
}

/// Most cells one learner buffer's views may hold all together: a binding is checked by
/// listing them, so a hostile one must not list more than the run's tensors have.
pub(super) fn max_cells(r: &Reference) -> usize {
    r.iter().map(Cells::len).sum::<usize>().max(1)
}

/// A learner buffer without a binding: ours when it has one of our names.
pub(super) fn ours(r: &Reference, name: &str) -> Resolved {
    let Some(buf) = Buf::from_name(name) else {
        return Resolved::Unknown(tr!(
            "\"buffer\": \"{name}\" is neither one of ours nor bound; bind it to the reference's tensors (grade --bind FILE, or \"bind\" in the header: docs/your_kernel.md), or name it as in the inputs file (x, q, k, v, scores, probs, att, out, d_q, …)",
            name
        ));
    };
    if r.get(buf).is_some() {
        return Resolved::Ours(buf);
    }
    if r.registry().get(buf).is_some_and(|s| s.level == Level::Tile) {
        // a tile-level buffer (flash's on-chip working set): the learner's own locals
        return Resolved::Local;
    }
    Resolved::Unknown(tr!(
        "\"buffer\": the {variant} {pass} pass of this scenario has no buffer \"{name}\"; its buffers are {names}",
        variant = r.variant.name(),
        pass = r.pass.name(),
        name,
        names = r.iter().map(|c| c.buf.name()).collect::<Vec<_>>().join(tr!(", "))
    ))
}

/// Checks a declared buffer's views and lists the offsets they cover.
pub(super) fn resolve(decl: &BufferDecl, r: &Reference) -> Result<Views, String> {
    let sizes = sizes(r);
    let eval = |e: &Expr, what: &str| -> Result<i64, String> {
        let v = e.eval(&sizes).map_err(|m| format!("{what}: {m}"))?;
        if v < 0 {
            return Err(tr!("{what} is {v}: offsets and strides are never negative", what, v));
        }
        Ok(v)
    };
    let limit = max_cells(r);
    let mut views = Vec::new();
    // (learner offset, packed view and cell)
    let mut cells: Vec<(i64, u64)> = Vec::new();
    for (vi, v) in decl.views.iter().enumerate() {
        let Some(buf) = Buf::from_name(&v.tensor).filter(|&b| r.get(b).is_some()) else {
            return Err(tr!(
                "no tensor \"{tensor}\" in the {variant} {pass} pass; its tensors are {names}",
                tensor = &v.tensor,
                variant = r.variant.name(),
                pass = r.pass.name(),
                names = r.iter().map(|c| c.buf.name()).collect::<Vec<_>>().join(tr!(", "))
            ));
        };
        let Some(c) = r.get(buf) else { continue };
        let name = buf.name();
        // the tensor's dimensions: the layer, then its layout's (with their strides in the
        // cell offsets)
        let per_layer = c.spec.layout.len();
        let mut dims: Vec<(&str, usize, usize)> = vec![("l", c.layers, per_layer)];
        for (k, d) in c.spec.layout.dims.iter().enumerate() {
            dims.push((d.name, d.size, c.spec.layout.stride(k)));
        }
        let dim_names = || dims.iter().map(|d| d.0).collect::<Vec<_>>().join(tr!(", "));
        // slices
        let mut lo = vec![0usize; dims.len()];
        let mut hi: Vec<usize> = dims.iter().map(|d| d.1).collect();
        for (dname, a, b) in &v.slice {
            let Some(k) = dims.iter().position(|d| d.0 == dname) else {
                return Err(tr!(
                    "{name} has no dimension \"{dname}\" to slice; its dimensions are {dims}",
                    name,
                    dname,
                    dims = dim_names()
                ));
            };
            let what = format!("{name}: slice of {dname}");
            let (a, b) = (eval(a, &what)?, eval(b, &what)?);
            let size = dims[k].1;
            let (a, b) = (
                usize::try_from(a).unwrap_or(usize::MAX),
                usize::try_from(b).unwrap_or(usize::MAX),
            );
            if a >= b || b > size {
                return Err(tr!(
                    "{name}: the slice {dname} ∈ [{a}, {b}) is not within its {size} indices",
                    name,
                    dname,
                    a,
                    b,
                    size
                ));
            }
            lo[k] = a;
            hi[k] = b;
        }
        // strides: given, or the tensor's own layout
        let mut strides = vec![0i64; dims.len()];
        match &v.strides {
            None => {
                // a rename keeps our layout over the slice, and the layers one after another
                let mut s = 1i64;
                for k in (0..dims.len()).rev() {
                    strides[k] = s;
                    s = s.saturating_mul(i64::try_from(hi[k] - lo[k]).unwrap_or(i64::MAX));
                }
            }
            Some(given) => {
                for (dname, e) in given {
                    let Some(k) = dims.iter().position(|d| d.0 == dname) else {
                        return Err(tr!(
                            "{name} has no dimension \"{dname}\"; its dimensions are {dims} (l: the layer)",
                            name,
                            dname,
                            dims = dim_names()
                        ));
                    };
                    strides[k] = eval(e, &format!("{name}: stride of {dname}"))?;
                }
                if let Some(k) =
                    (0..dims.len()).find(|&k| hi[k] - lo[k] > 1 && !given.iter().any(|(n, _)| n == dims[k].0))
                {
                    return Err(tr!(
                        "{name}: no stride for its dimension {dname} ({n} indices); give one (0 reuses the buffer along it, as a scratch row)",
                        name,
                        dname = dims[k].0,
                        n = hi[k] - lo[k]
                    ));
                }
            }
        }
        let offset = eval(&v.offset, &format!("{name}: offset"))?;
        // scratch dimensions (stride 0, several indices) are not in the offsets
        let scratch: Vec<Scratch> = (0..dims.len())
            .filter(|&k| strides[k] == 0 && hi[k] - lo[k] > 1)
            .map(|k| Scratch {
                name: dims[k].0.to_string(),
                size: dims[k].1,
                stride: dims[k].2,
            })
            .collect();
        let walked: Vec<usize> = (0..dims.len())
            .filter(|&k| !(strides[k] == 0 && hi[k] - lo[k] > 1))
            .collect();
        // the largest offset must be a number
        let mut largest = i128::from(offset);
        for &k in &walked {
            largest += i128::from(strides[k]) * (hi[k] - lo[k] - 1) as i128;
        }
        if largest > i128::from(i64::MAX / 2) {
            return Err(tr!(
                "{name}: the view's largest offset, {largest}, is beyond any buffer",
                name,
                largest
            ));
        }
        let count: usize = walked.iter().map(|&k| hi[k] - lo[k]).product();
        if cells.len().saturating_add(count) > limit {
            return Err(tr!(
                "{name}: the views hold more cells than the run's tensors have ({limit})",
                name,
                limit
            ));
        }
        // a scratch dimension's index is added to the cell of its first index: it is not sliced
        if let Some(s) = scratch.iter().find(|s| {
            dims.iter()
                .position(|d| d.0 == s.name)
                .is_some_and(|k| lo[k] != 0 || hi[k] != dims[k].1)
        }) {
            return Err(tr!(
                "{name}: {dim} is reused (stride 0) and sliced; reuse the whole dimension or give it a stride",
                name,
                dim = &s.name
            ));
        }
        // every cell of the view, the scratch dimensions at index 0
        let mut idx: Vec<usize> = walked.iter().map(|&k| lo[k]).collect();
        'cells: loop {
            let mut at = offset;
            let mut cell = 0usize;
            for (w, &k) in walked.iter().enumerate() {
                at += strides[k] * (idx[w] - lo[k]) as i64;
                cell += idx[w] * dims[k].2;
            }
            let view = (vi as u64 + 1) << 32;
            cells.push((at, view | cell as u64));
            // next index, the last dimension fastest
            let mut w = walked.len();
            loop {
                if w == 0 {
                    break 'cells;
                }
                w -= 1;
                let k = walked[w];
                idx[w] += 1;
                if idx[w] < hi[k] {
                    break;
                }
                idx[w] = lo[k];
            }
        }
        views.push(ViewInfo { buf, scratch });
    }
    // by offset, then view: a collision names the first view's cell first
    cells.sort_unstable();
    if let Some(w) = cells.windows(2).find(|w| w[0].0 == w[1].0) {
        let label = |packed: u64| {
            let view = (packed >> 32) as usize - 1;
            let cell = (packed & 0xffff_ffff) as usize;
            views.get(view).map_or_else(String::new, |v| {
                let text = r.get(v.buf).map_or_else(String::new, |c| c.label(cell));
                format!("{}[{text}]", v.buf.name())
            })
        };
        return Err(tr!(
            "{a} and {b} are both at offset {offset}: two cells of one buffer cannot share a place (reuse a buffer with a stride of 0)",
            a = label(w[0].1),
            b = label(w[1].1),
            offset = w[0].0
        ));
    }
    let map = match (cells.first(), cells.last()) {
        (Some(&(min, _)), Some(&(max, _))) if (max - min) as usize <= 4 * cells.len() + 64 => {
            let mut dense = vec![0u64; (max - min) as usize + 1];
            for &(o, c) in &cells {
                if let Some(slot) = dense.get_mut((o - min) as usize) {
                    *slot = c;
                }
            }
            OffsetMap::Dense {
                base: min,
                cells: dense,
            }
        }
        _ => OffsetMap::Sparse(cells),
    };
    Ok(Views { views, map })
}
