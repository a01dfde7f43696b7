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
}

impl Tensors {
    /// The registry's buffers: the inputs' data where they give it, the keep mask drawn from
    /// the dropout seed, zeros for everything computed.
    pub fn new(inputs: &Inputs, registry: &Registry) -> Tensors {
        let mut t = Tensors {
            data: vec![Vec::new(); Buf::ALL.len()],
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
        let result = f(self, taken.each_mut().map(|v| v.as_mut_slice()));
        for (b, v) in outs.into_iter().zip(taken) {
            self.data[b as usize] = v;
        }
        result
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
