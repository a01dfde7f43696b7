//! The buffers of one run, stored keyed by [`Buf`]: the given data in place, zeros for
//! everything the passes compute, nothing for a buffer the run does not have.
#![allow(non_snake_case)]

use super::Inputs;
use super::registry::Registry;
use crate::kernels::{dropout, rope};
use crate::trace::{Buf, BufferInfo};
use std::ops::Index;

/// Every buffer of a run, flat row-major, indexed by [`Buf`]. An empty vector is a buffer this
/// run does not have.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tensors {
    data: Vec<Vec<f32>>,
    /// A change made to one cell of a buffer the moment a kernel has written it (see
    /// [`Tensors::nudge`]), and the change its value actually saw in f32 once applied.
    nudge: Option<Nudge>,
}

/// `buf[offset] += delta`, applied right after the first kernel call that writes `buf`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Nudge {
    buf: Option<Buf>,
    offset: usize,
    delta: f32,
    /// `new − old` as stored in f32 (0 until applied).
    applied: f32,
}

impl Tensors {
    /// The registry's buffers: the inputs' data where they give it, the keep mask drawn from
    /// the dropout seed, zeros for everything computed.
    pub fn new(inputs: &Inputs, registry: &Registry) -> Tensors {
        let mut t = Tensors {
            data: vec![Vec::new(); Buf::ALL.len()],
            nudge: None,
        };
        for (b, spec) in registry.iter() {
            t.data[b as usize] = vec![0.0; spec.len()];
        }
        let mut given = |b: Buf, data: &[f32]| {
            if registry.has(b) {
                debug_assert_eq!(t.data[b as usize].len(), data.len(), "{b} does not fit its shape");
                t.data[b as usize] = data.to_vec();
            }
        };
        for (b, data) in inputs.given() {
            given(b, data);
        }
        // the rotation tables, [T, D/2] in the kernel's head size
        if let Some(r) = inputs.rope
            && let Some(spec) = registry.get(Buf::RopeCos)
        {
            let (T, half) = (spec.layout.dims[0].size, spec.layout.dims[1].size);
            let (cos, sin) = rope::tables(r, T, 2 * half);
            t.data[Buf::RopeCos as usize] = cos;
            t.data[Buf::RopeSin as usize] = sin;
        }
        // a paged cache's block table, the block ids as the kernel reads them
        if let Some(p) = &inputs.cache.paged
            && registry.has(Buf::BlockTable)
        {
            t.data[Buf::BlockTable as usize] = p.table_f32();
        }
        if let Some(d) = inputs.dropout
            && registry.has(Buf::DropMask)
        {
            let n = t.data[Buf::DropMask as usize].len();
            t.data[Buf::DropMask as usize] = dropout::keep_mask(n, d.p, d.seed);
        }
        t
    }

    /// The contents of `buf` (empty when the run does not have it).
    pub fn get(&self, buf: Buf) -> &[f32] {
        &self.data[buf as usize]
    }

    /// `(buf, contents)`: how the kernels take a buffer, so they can record its name.
    pub fn arg(&self, buf: Buf) -> (Buf, &[f32]) {
        (buf, self.get(buf))
    }

    pub fn has(&self, buf: Buf) -> bool {
        !self.data[buf as usize].is_empty()
    }

    /// Runs `f` with the buffers `outs` writable and every other buffer readable: the shape of
    /// one kernel call, which reads some buffers and writes others.
    pub fn write<const N: usize, T>(&mut self, outs: [Buf; N], f: impl FnOnce(&Tensors, [&mut [f32]; N]) -> T) -> T {
        let mut taken = outs.map(|b| std::mem::take(&mut self.data[b as usize]));
        let result = f(self, taken.each_mut().map(Vec::as_mut_slice));
        for (b, v) in outs.into_iter().zip(taken) {
            self.data[b as usize] = v;
        }
        if let Some(n) = self.nudge.as_mut()
            && let Some(b) = n.buf.filter(|b| outs.contains(b))
            && let Some(x) = self.data[b as usize].get_mut(n.offset)
        {
            let old = *x;
            *x += n.delta;
            n.applied = *x - old;
            // once: a later kernel writing the buffer again (rope) works on the changed value
            n.buf = None;
        }
        result
    }

    /// Changes `buf[offset]` by `delta` as soon as a kernel call has written `buf`, so that
    /// everything computed from it afterwards sees the change: how a finite difference
    /// perturbs an activation (`q`, `scores`, …) and re-runs the rest of the forward pass. The
    /// change is made once, after the kernel that computes the buffer: rope's rotation of `q`
    /// and `k` in place then turns the changed value, as the backward pass's final `d_q`, the
    /// gradient of the projection's `q`, assumes. A
    /// buffer no kernel writes (an input, a weight, `written = false`) is changed in place at
    /// once. Returns whether the cell exists in this run.
    pub fn nudge(&mut self, buf: Buf, offset: usize, delta: f32, written: bool) -> bool {
        let Some(x) = self.data[buf as usize].get_mut(offset) else {
            return false;
        };
        if written {
            self.nudge = Some(Nudge {
                buf: Some(buf),
                offset,
                delta,
                applied: 0.0,
            });
        } else {
            let old = *x;
            *x += delta;
            self.nudge = Some(Nudge {
                buf: None,
                offset,
                delta,
                applied: *x - old,
            });
        }
        true
    }

    /// The change the nudged cell's value actually saw (f32 rounds `x + delta`); 0 when no
    /// kernel call wrote the nudged buffer.
    pub fn nudged_by(&self) -> f32 {
        self.nudge.map_or(0.0, |n| n.applied)
    }

    /// The output of the forward pass: `out`, or `att` when there is no output projection.
    pub fn output(&self) -> &[f32] {
        if self.has(Buf::Out) {
            self.get(Buf::Out)
        } else {
            self.get(Buf::Att)
        }
    }

    /// Specs and current contents of every present buffer, indexed by [`Buf`]: the trace's
    /// starting point.
    pub(super) fn snapshot(&self, registry: &Registry) -> Vec<Option<BufferInfo>> {
        Buf::ALL
            .iter()
            .map(|&b| {
                registry.get(b).map(|spec| BufferInfo {
                    spec: spec.clone(),
                    initial: self.get(b).to_vec(),
                })
            })
            .collect()
    }
}

impl Index<Buf> for Tensors {
    type Output = [f32];

    fn index(&self, buf: Buf) -> &[f32] {
        self.get(buf)
    }
}
