//! Panels of the tracer and helpers they share. Every panel is a pure function of the trace,
//! the cursor and the view options: it reads, it never mutates.

pub mod code;
pub mod equation;
pub mod heatgrid;
pub mod log;
pub mod memory;
pub mod popup;
pub mod variables;

use crate::kernels::Variant;
use crate::trace::Buf;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// One element of one buffer: what `w`, `r` and breakpoints are about.
pub type CellRef = (Buf, usize);

/// Writes `text` at (`x`, `y`) clipped to `area`: never outside it, whatever the sizes.
pub fn put(buf: &mut Buffer, area: Rect, x: u16, y: u16, text: &str, style: Style) -> u16 {
    if y < area.top() || y >= area.bottom() || x < area.left() || x >= area.right() {
        return x;
    }
    let room = (area.right() - x) as usize;
    buf.set_stringn(x, y, text, room, style).0
}

/// A value in at most 6 characters: `1.00`, `-0.71`, `-1e9` for the mask constant.
pub fn num(v: f32) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v.abs() >= 999.5 {
        format!("{v:.0e}")
    } else {
        format!("{v:.2}")
    }
}

/// Names of the dimensions of a buffer's view, for `(b0 i2 h1 d0)` labels.
pub fn dim_names(buf: Buf, variant: Variant) -> &'static [&'static str] {
    let mha = variant == Variant::Mha;
    match buf {
        Buf::Q | Buf::K | Buf::V | Buf::DQ | Buf::DK | Buf::DV | Buf::Att | Buf::DAtt => {
            if mha {
                &["b", "i", "h", "d"]
            } else {
                &["b", "i", "c"]
            }
        }
        Buf::Scores | Buf::Probs | Buf::DScores | Buf::DProbs | Buf::DropMask | Buf::ProbsDrop | Buf::DProbsDrop => {
            if mha {
                &["b", "h", "i", "j"]
            } else {
                &["b", "i", "j"]
            }
        }
        Buf::X | Buf::Out | Buf::DOut | Buf::DX | Buf::Qkv | Buf::DQkv => &["b", "i", "c"],
        Buf::Memory | Buf::DMemory => &["b", "j", "c"],
        Buf::WQkv | Buf::DWQkv | Buf::WProj | Buf::DWProj => &["c", "o"],
        Buf::WQ | Buf::DWQ | Buf::WK | Buf::DWK | Buf::WV | Buf::DWV => &["c", "o"],
        Buf::BQkv | Buf::DBQkv | Buf::BProj | Buf::DBProj => &["o"],
        Buf::BQ | Buf::DBQ | Buf::BK | Buf::DBK | Buf::BV | Buf::DBV => &["o"],
    }
}

/// `b0 i2 h1 d0`: a logical index with its dimension names.
pub fn index_label(buf: Buf, variant: Variant, index: &[usize]) -> String {
    let names = dim_names(buf, variant);
    index
        .iter()
        .enumerate()
        .map(|(k, v)| format!("{}{v}", names.get(k).copied().unwrap_or("?")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Is this a `[.., T, T]` score-shaped buffer, where the causal mask applies?
pub fn is_score_like(buf: Buf) -> bool {
    matches!(
        buf,
        Buf::Scores | Buf::Probs | Buf::DScores | Buf::DProbs | Buf::DropMask | Buf::ProbsDrop | Buf::DProbsDrop
    )
}

use super::theme::Theme;
use super::walk::Walk;
use crate::trace::{EventView, NO_FRAME, Trace};
use std::collections::BTreeSet;

/// What every tracer panel draws from: the trace, the cursor and the view options.
pub struct Ctx<'a> {
    pub walk: &'a Walk,
    pub variant: Variant,
    pub trace: &'a Trace,
    pub cursor: usize,
    pub view: EventView,
    pub theme: Theme,
    /// The selected cell (pinned by the user), else the current event's cell.
    pub selected: CellRef,
    pub pinned: bool,
    pub breakpoints: &'a BTreeSet<CellRef>,
}

impl Ctx<'_> {
    /// First event of the phase holding the cursor.
    pub fn phase_start(&self) -> usize {
        self.trace.span_range(self.trace.phase_span(self.cursor)).start
    }

    /// Frame ids around the cursor, innermost first.
    pub fn frame_ids(&self) -> Vec<u32> {
        frame_ids(self.trace, self.cursor)
    }
}

/// Frame ids around event `n`, innermost first.
pub fn frame_ids(trace: &Trace, n: usize) -> Vec<u32> {
    let mut ids = Vec::new();
    let mut id = trace.events.get(n).map_or(NO_FRAME, |e| e.frame);
    while let Some(f) = trace.frame(id) {
        ids.push(id);
        id = f.parent;
    }
    ids
}
