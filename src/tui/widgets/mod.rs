//! Panels of the tracer and helpers they share. Every panel is a pure function of the trace,
//! the cursor and the view options: it reads, it never mutates.

pub mod code;
pub mod equation;
pub mod flash_equation;
pub mod heatgrid;
pub mod log;
pub mod memory;
pub mod popup;
pub mod timeline;
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

pub use crate::format::num;

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
