//! Bindings: how a learner's buffers lie over the reference's tensors, whatever their names and
//! layouts (docs/your_kernel.md, "Your names, your layout").
//!
//! A learner buffer is a set of strided **views** of reference tensors. A view of tensor `q`
//! with offset `O`, strides `S` and a slice `lo ≤ idx[dim] < hi` on some dimensions puts the
//! cell of logical index `idx` at the learner's offset `O + Σ (idx[dim] − lo[dim])·S[dim]`.
//! llm.c's `inp [B,T,3C]` is three views, of `q`, `k` and `v` at offsets `0`, `C` and `2C`
//! with strides `b = 3TC, i = 3C, h = D, d = 1`; llama2.c's `wk [L, kv_dim, dim]` is the slice
//! `o ∈ [C, C + kv_dim)` of our `w_qkv [c, o]`, transposed (`o` stride `dim`, `c` stride 1).
//! A stride of 0 on a dimension of several indices makes the buffer a scratch row reused along
//! it (llama2.c's `s->att`, one row of scores per step): which index it holds is what the
//! trace's last `{"op":"at","index":{…}}` line says.
//!
//! Bindings come from the trace's header (`"bind"`, JSON, what the Python recorder writes) or a
//! TOML file (`grade --bind FILE`); [`Binder`] checks them against the run's tensors (one line
//! naming the buffer for anything that does not fit) and maps each access to a reference cell.
//! A buffer without a binding that is named like one of ours keeps our layout. The format is
//! agreed with the recorders in `/work/scratch/bindings.md`'s terms and documented in
//! docs/your_kernel.md.

mod expr;
mod read;
mod views;

pub use expr::Expr;

use super::reference::{Cells, Reference};
use attn_trace_core::trace::Buf;
use attn_trace_i18n::tr;
use std::collections::HashMap;
use views::{Resolved, ours, resolve};

/// One view as declared: a reference tensor, the offset of its first cell, a stride per
/// dimension (none at all: the tensor's own layout), and slices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewDecl {
    pub tensor: String,
    pub offset: Expr,
    /// `None`: the reference's own layout (a rename, at `offset`).
    pub strides: Option<Vec<(String, Expr)>>,
    /// `dim: [lo, hi)`: the view holds those indices only.
    pub slice: Vec<(String, Expr, Expr)>,
}

/// One learner buffer's views, and where they were declared (for messages: `bind.toml:3`, or
/// the trace's header line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferDecl {
    pub name: String,
    pub views: Vec<ViewDecl>,
    pub origin: String,
}

/// Every learner buffer's declared views.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bindings {
    pub buffers: Vec<BufferDecl>,
}

/// Largest bindings file read: a few views per buffer take a few hundred bytes.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Where an access lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A cell of a reference tensor: the tensor and the cell's offset in it, layer-major when
    /// the scenario has several layers.
    Cell { buf: Buf, off: usize },
    /// An offset outside the buffer (no binding: our layout's size) or that no view covers.
    Outside,
    /// A buffer named like one of flash's on-chip tiles: the learner's own locals.
    Local,
}

/// What is wrong with an access the binder cannot place; the caller says where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unplaced {
    /// Neither bound nor named like a buffer of the run.
    Unknown(String),
    /// A scratch dimension no `at` line has given an index (or one out of its range).
    Index(String),
}

/// The run's sizes an expression may name: those of the inputs file.
pub fn sizes(r: &Reference) -> Vec<(&'static str, i64)> {
    super::dims(r.run.shape, r.layers)
        .into_iter()
        .map(|(name, n)| (name, i64::try_from(n).unwrap_or(i64::MAX)))
        .collect()
}

/// Maps a learner's accesses to reference cells through their buffers' bindings.
#[derive(Debug)]
pub struct Binder {
    /// Per declared learner buffer name, its resolution.
    declared: HashMap<String, Resolved>,
    /// Per learner buffer id (the reader's), its resolution, filled as names appear.
    by_id: Vec<Option<Resolved>>,
}

impl Binder {
    /// Checks every declared binding against the run `r`: one line, naming the buffer and
    /// where it was declared, for the first that does not fit.
    pub fn new(bindings: &Bindings, r: &Reference) -> Result<Binder, String> {
        let mut declared = HashMap::new();
        for decl in &bindings.buffers {
            if declared.contains_key(&decl.name) {
                return Err(format!(
                    "{}: {}",
                    decl.origin,
                    tr!("{name} is bound twice", name = &decl.name)
                ));
            }
            // a file may bind both passes' buffers (llm.c's datt in a forward pass): tensors this
            // pass has not are an error only if the trace touches the buffer
            let known: Vec<Option<Buf>> = decl.views.iter().map(|v| Buf::from_name(&v.tensor)).collect();
            if known.iter().all(|b| b.is_some_and(|b| r.get(b).is_none())) {
                let tensors: Vec<&str> = decl.views.iter().map(|v| v.tensor.as_str()).collect();
                declared.insert(
                    decl.name.clone(),
                    Resolved::Unknown(tr!(
                        "\"buffer\": {name} is bound to {tensors}, which the {variant} {pass} pass has not ({origin})",
                        name = &decl.name,
                        tensors = tensors.join(tr!(", ")),
                        variant = r.variant.name(),
                        pass = r.pass.name(),
                        origin = &decl.origin
                    )),
                );
                continue;
            }
            let views = resolve(decl, r).map_err(|e| format!("{}: {}: {e}", decl.origin, decl.name))?;
            declared.insert(decl.name.clone(), Resolved::Views(Box::new(views)));
        }
        Ok(Binder {
            declared,
            by_id: Vec::new(),
        })
    }

    /// Is learner buffer `name` declared in the bindings?
    pub fn is_bound(&self, name: &str) -> bool {
        self.declared.contains_key(name)
    }

    /// The tensors a bound buffer's views hold, `q, k, v`.
    pub fn holds(&self, name: &str) -> Option<String> {
        match self.declared.get(name) {
            Some(Resolved::Views(v)) => {
                let mut names: Vec<&str> = Vec::new();
                for view in &v.views {
                    if !names.contains(&view.buf.name()) {
                        names.push(view.buf.name());
                    }
                }
                Some(names.join(", "))
            }
            _ => None,
        }
    }

    /// Where learner buffer `name` (the reader's id `id`) at `offset` lands, with the scratch
    /// dimensions' indices `index` (the trace's `at` lines so far).
    pub fn map(
        &mut self,
        r: &Reference,
        id: u32,
        name: &str,
        offset: i64,
        index: &[(String, u64)],
    ) -> Result<Target, Unplaced> {
        let k = id as usize;
        if self.by_id.len() <= k {
            self.by_id.resize(k + 1, None);
        }
        if self.by_id[k].is_none() {
            let resolved = match self.declared.get(name) {
                Some(v) => v.clone(),
                None => ours(r, name),
            };
            self.by_id[k] = Some(resolved);
        }
        match &self.by_id[k] {
            Some(Resolved::Ours(buf)) => {
                let len = r.get(*buf).map_or(0, Cells::len);
                Ok(match usize::try_from(offset).ok().filter(|&o| o < len) {
                    Some(off) => Target::Cell { buf: *buf, off },
                    None => Target::Outside,
                })
            }
            Some(Resolved::Local) => Ok(Target::Local),
            Some(Resolved::Unknown(why)) => Err(Unplaced::Unknown(why.clone())),
            Some(Resolved::Views(v)) => {
                let Some(packed) = v.get(offset) else {
                    return Ok(Target::Outside);
                };
                let view = (packed >> 32) as usize - 1;
                let mut cell = (packed & 0xffff_ffff) as usize;
                let Some(info) = v.views.get(view) else {
                    return Ok(Target::Outside);
                };
                for s in &info.scratch {
                    let at = index.iter().find(|(n, _)| *n == s.name).map(|&(_, x)| x);
                    match at.and_then(|x| usize::try_from(x).ok()).filter(|&x| x < s.size) {
                        Some(x) => cell += x * s.stride,
                        None => {
                            return Err(Unplaced::Index(match at {
                                None => tr!(
                                    "\"{name}\" is reused along {dim} (a stride of 0 in its binding), but no \"at\" line has said which {dim} it holds: record {{\"op\":\"at\",\"index\":{{\"{dim}\":…}}}} before its accesses",
                                    name,
                                    dim = &s.name
                                ),
                                Some(x) => tr!(
                                    "\"{name}\": the last \"at\" line says {dim} = {x}, outside {dim}'s {size} indices",
                                    name,
                                    dim = &s.name,
                                    x,
                                    size = s.size
                                ),
                            }));
                        }
                    }
                }
                Ok(Target::Cell {
                    buf: info.buf,
                    off: cell,
                })
            }
            None => Ok(Target::Outside),
        }
    }
}
