//! One element of the attention matrix, `(b, h, i, j)`: what `explain --at` and the tracer's
//! goto name, parsed once here; the element an event is about, and the event that writes an
//! element, in any variant's log (flash keeps its scores in tiles).

use crate::flash_cell::TileSpot;
use attn_trace_core::kernels::{Variant, names};
use attn_trace_core::tensor::Layout;
use attn_trace_core::trace::{Buf, BufferInfo, Pass, Trace};
use attn_trace_i18n::tr;

/// The score element to explain: batch `b`, head `h` (0 for the baseline), query `i`, key `j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Element {
    pub b: usize,
    pub h: usize,
    pub i: usize,
    pub j: usize,
}

impl Element {
    /// `b=0,h=1,i=2,j=1` (or separated by spaces, as the tracer's goto takes it) → an element;
    /// `b` and `h` may be left out. The one parser of `explain --at` and the tracer's `g`.
    pub fn parse(text: &str) -> std::result::Result<Element, String> {
        let mut at = Element { b: 0, h: 0, i: 0, j: 0 };
        let mut seen: Vec<&str> = Vec::new();
        for part in text.split([',', ' ']).map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = part.split_once('=') else {
                return Err(tr!("\"{part}\" is not key=value; write e.g. b=0,h=1,i=2,j=1", part));
            };
            let (key, value) = (key.trim(), value.trim());
            let value: usize = value
                .parse()
                .map_err(|_| tr!("{key}={value}: expected a non-negative integer", key, value))?;
            if seen.contains(&key) {
                return Err(tr!("{key} is given twice", key));
            }
            match key {
                "b" => at.b = value,
                "h" => at.h = value,
                "i" => at.i = value,
                "j" => at.j = value,
                other => return Err(tr!("unknown index \"{other}\"; expected b, h, i and j", other)),
            }
            seen.push(key);
        }
        if !(seen.contains(&"i") && seen.contains(&"j")) {
            return Err(tr!("i and j are required, e.g. b=0,h=1,i=2,j=1").to_string());
        }
        Ok(at)
    }

    /// The same pair in `variant`'s heads: head 0 for a kernel with one head (the baseline's
    /// `(b, i, j)` is the pair an MHA element names in any of its heads).
    #[must_use]
    pub fn in_heads_of(self, variant: Variant) -> Element {
        if variant.has_heads() {
            self
        } else {
            Element { h: 0, ..self }
        }
    }

    /// The element's offset in a score-shaped layout (`[B,S,T]`, or `[B,H,S,T]` in MHA), or
    /// `None` when it lies outside.
    pub fn offset(&self, scores: &Layout) -> Option<usize> {
        scores.offset_of(&[("b", self.b), ("h", self.h), ("i", self.i), ("j", self.j)])
    }

    /// The score element event `n` of `trace` is about: the cell of a score-shaped buffer
    /// (`scores`, `probs`, `d_scores` …) it touches, or in flash the pair `(i0 + ii, j0 + jj)`
    /// of head `hh` that the score tile's cell holds while its tiles are loaded.
    pub fn of_event(trace: &Trace, n: usize) -> Option<Element> {
        let v = trace.view(n);
        if let Some(l) = trace.buffer(v.buf).map(BufferInfo::layout).filter(|l| l.is_pairs()) {
            let at = |name| l.coord(v.offset, name);
            return Some(Element {
                b: at(names::B),
                h: at(names::H),
                i: at(names::I),
                j: at(names::J),
            });
        }
        if !matches!(v.buf, Buf::STile | Buf::DSTile) {
            return None;
        }
        let var = |name| crate::scope::var(&v, name);
        Some(Element {
            b: var(names::BB)?,
            h: var(names::HH)?,
            i: var(names::I0)? + var(names::II)?,
            j: var(names::J0)? + var(names::JJ)?,
        })
    }

    /// The event of `trace` that writes this element: its score in the forward pass, its score
    /// gradient in the backward pass (falling back to whichever pass the trace holds). The
    /// baseline's scores have no head: give it `h = 0`.
    pub fn write_event(&self, trace: &Trace, pass: Pass) -> Option<usize> {
        let (fwd, bwd) = if trace.buffer(Buf::STile).is_some() {
            (self.tile_write(trace, Buf::STile), self.tile_write(trace, Buf::DSTile))
        } else {
            let off = self.offset(trace.buffer(Buf::Scores)?.layout())?;
            (
                trace.index.first_write(Buf::Scores, off),
                trace.index.first_write(Buf::DScores, off),
            )
        };
        match pass {
            Pass::Forward => fwd.or(bwd),
            Pass::Backward => bwd.or(fwd),
        }
    }

    /// Flash stores no scores: the element is the cell of the score tile (`s_tile` forward,
    /// `ds_tile` backward) that the pair `(i, j)` of head `h` occupies while its query and key
    /// tiles are loaded ([`TileSpot`]). Its event is the first write of that cell made with
    /// those loop variables (forward's score, before the online softmax turns it into `P`).
    fn tile_write(&self, trace: &Trace, tile: Buf) -> Option<usize> {
        TileSpot::of(trace, tile, *self)?.writes(trace, tile, *self).next()
    }
}
