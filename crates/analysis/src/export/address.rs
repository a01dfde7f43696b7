//! The address traces of cache simulators, Dinero's `din` and Valgrind lackey's, written as the
//! kernels run, keeping no log.

use super::super::cache::Addresses;
use super::numbers::push_hex;
use super::{Filter, Format};
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::{Buf, Op, Phase, Recorder};
use std::io::Write;

/// A recorder that writes each access as a line of an address trace (`din` or lackey) as the
/// kernels make it, keeping no log: the address traces need neither loop variables nor values,
/// so they skip recording (`engine::run_into`). The same accesses in the same order as the
/// trace's events, at the same addresses ([`Addresses::of_registry`]).
pub struct AddressWriter<'a> {
    addresses: Addresses,
    filter: Filter,
    din: bool,
    phase: Option<Phase>,
    keep: bool,
    out: Vec<u8>,
    w: &'a mut dyn Write,
    /// Accesses written.
    pub written: u64,
    /// The first write error; nothing more is written after it.
    pub error: Option<std::io::Error>,
}

impl<'a> AddressWriter<'a> {
    /// Bytes gathered before they go to the writer.
    const FLUSH: usize = 1 << 20;

    /// A writer of `format` (din or lackey; anything else writes din) for a run of `registry`.
    pub fn new(
        registry: &attn_trace_core::engine::Registry,
        filter: Filter,
        format: Format,
        w: &'a mut dyn Write,
    ) -> Self {
        AddressWriter {
            addresses: Addresses::of_registry(registry),
            filter,
            din: format != Format::Lackey,
            phase: None,
            keep: filter.pass.is_none() && filter.phase.is_none(),
            out: Vec::with_capacity(Self::FLUSH + 64),
            w,
            written: 0,
            error: None,
        }
    }

    /// Writes what is gathered; returns the first error met.
    pub fn finish(mut self) -> std::io::Result<u64> {
        self.flush();
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.written),
        }
    }

    fn flush(&mut self) {
        if self.error.is_none()
            && let Err(e) = self.w.write_all(&self.out)
        {
            self.error = Some(e);
        }
        self.out.clear();
    }
}

impl Recorder for AddressWriter<'_> {
    const ENABLED: bool = true;

    #[inline]
    fn log(&mut self, op: Op, buf: Buf, offset: usize, _: f32, _: u32) {
        if !self.keep
            || self.filter.buffer.is_some_and(|b| b != buf)
            || self
                .filter
                .level
                .is_some_and(|l| (l == Level::Tile) != self.addresses.is_tile(buf))
        {
            return;
        }
        let address = self.addresses.address(buf, offset);
        let write = op == Op::Write;
        if self.din {
            self.out.push(if write { b'1' } else { b'0' });
            self.out.push(b' ');
            push_hex(&mut self.out, address, 1);
            self.out.push(b'\n');
        } else {
            self.out.extend_from_slice(if write { b" S " } else { b" L " });
            push_hex(&mut self.out, address, 8);
            self.out.extend_from_slice(b",4\n");
        }
        self.written += 1;
        if self.out.len() >= Self::FLUSH {
            self.flush();
        }
    }

    fn phase(&mut self, phase: Phase) {
        self.phase = Some(phase);
        self.keep = self.filter.keeps_phase(phase);
    }

    fn enter<const N: usize>(&mut self, _: &'static [&'static str; N], _: [usize; N]) {}

    fn exit(&mut self) {}
}
