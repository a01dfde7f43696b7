//! Panels of the tracer and helpers they share. Every panel is a pure function of the trace,
//! the cursor and the view options: it reads, it never mutates.

pub(crate) mod bar;
pub(crate) mod code;
pub(crate) mod dot;
pub(crate) mod equation;
pub(crate) mod flash_equation;
pub(crate) mod gradcheck;
pub(crate) mod heatgrid;
pub(crate) mod lesson;
pub(crate) mod log;
pub(crate) mod memory;
pub(crate) mod popup;
pub(crate) mod quiz;
pub(crate) mod timeline;
pub(crate) mod variables;

use attn_trace_core::kernels::Variant;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// One element of one buffer: what `w`, `r` and breakpoints are about.
pub(crate) use attn_trace_analysis::position::CellRef;

pub(crate) use attn_trace_analysis::format::{cols, cut, cut_start, pad, wrap};

/// Writes `text` at (`x`, `y`) clipped to `area`: never outside it, whatever the sizes.
pub(crate) fn put(buf: &mut Buffer, area: Rect, x: u16, y: u16, text: &str, style: Style) -> u16 {
    if y < area.top() || y >= area.bottom() || x < area.left() || x >= area.right() {
        return x;
    }
    let room = (area.right() - x) as usize;
    buf.set_stringn(x, y, text, room, style).0
}

/// Lays `lines` out word by word in rows of `width` columns, as [`draw_wrapped`] draws them:
/// a row breaks at a space (which is dropped), a word wider than a row is cut. Calls `emit(row,
/// column, text, style)` for every piece and returns the rows used (at least one per line).
fn wrap_words(lines: &[Line], width: u16, mut emit: impl FnMut(u16, u16, &str, Style)) -> u16 {
    let width = width.max(1);
    let mut row = 0u16;
    for line in lines {
        let mut x = 0u16;
        for span in &line.spans {
            let style = line.style.patch(span.style);
            let text = span.content.as_ref();
            let mut rest = text;
            while !rest.is_empty() {
                // a space, or a run of anything else
                let len = if rest.starts_with(' ') {
                    1
                } else {
                    rest.find(' ').unwrap_or(rest.len())
                };
                let (tok, tail) = rest.split_at(len);
                rest = tail;
                let w = Span::raw(tok).width() as u16;
                if tok == " " {
                    if x + 1 > width {
                        row += 1;
                        x = 0;
                    } else if x > 0 {
                        emit(row, x, tok, style);
                        x += 1;
                    }
                    continue;
                }
                if x > 0 && x + w > width {
                    row += 1;
                    x = 0;
                }
                if w <= width {
                    emit(row, x, tok, style);
                    x += w;
                    continue;
                }
                // wider than a whole row: cut it character by character
                for ch in tok.chars() {
                    let mut b = [0u8; 4];
                    let c: &str = ch.encode_utf8(&mut b);
                    let cw = Span::raw(c).width() as u16;
                    if x > 0 && x + cw > width {
                        row += 1;
                        x = 0;
                    }
                    emit(row, x, c, style);
                    x += cw;
                }
            }
        }
        row += 1;
    }
    row
}

/// Rows `lines` take word-wrapped at `width` columns (see [`draw_wrapped`]).
pub(crate) fn wrapped_rows(lines: &[Line], width: u16) -> u16 {
    wrap_words(lines, width, |_, _, _, _| {})
}

/// Draws `lines` word-wrapped into `area`: what a wrapping `Paragraph` does, at a fraction of its
/// cost, for the panels drawn on every step (the gradient check, the quiz).
pub(crate) fn draw_wrapped(buf: &mut Buffer, area: Rect, lines: &[Line]) {
    wrap_words(lines, area.width, |row, x, text, style| {
        if row < area.height {
            put(buf, area, area.x + x, area.y + row, text, style);
        }
    });
}

pub(crate) use attn_trace_analysis::format::num;

use super::theme::Theme;
use super::traced_scenario::TracedScenario;
use attn_trace_analysis::cache::EventCache;
use attn_trace_core::trace::{EventView, Trace};
use std::collections::BTreeSet;

/// What every tracer panel draws from: the trace, the cursor and the view options.
pub(crate) struct Ctx<'a> {
    pub traced: &'a TracedScenario,
    pub variant: Variant,
    pub trace: &'a Trace,
    pub cursor: usize,
    pub view: EventView,
    pub theme: Theme,
    /// The selected cell (pinned by the user), else the current event's cell.
    pub selected: CellRef,
    pub pinned: bool,
    pub breakpoints: &'a BTreeSet<CellRef>,
    /// Quiz mode, or a lesson's open question: nothing after the cursor may be drawn (the
    /// learner is predicting it).
    pub quiz: bool,
    /// The write whose value an open question asks (`--quiz=values`, a lesson's `ask =
    /// "value"`): no panel shows its value, nor a result computed from it or after it.
    pub asked: Option<usize>,
    /// The cache model, when it is shown (`m`): the log run through this machine's caches.
    pub cache: Option<&'a EventCache>,
}

impl Ctx<'_> {
    /// First event of the phase holding the cursor.
    pub(crate) fn phase_start(&self) -> usize {
        self.trace.span_range(self.trace.phase_span(self.cursor)).start
    }

    /// The current access under the cache model, when it is shown.
    pub(crate) fn cache_access(&self) -> Option<attn_trace_analysis::cache::AccessCache> {
        self.cache?.at(self.trace, self.cursor)
    }

    /// May a panel show the value of event `n`, or a result it computes? Not while an open
    /// question asks for it (or for an earlier write).
    pub(crate) fn shows(&self, n: usize) -> bool {
        self.asked.is_none_or(|a| n < a)
    }
}

/// Where a chart's legend goes: inside the chart (top left) when it takes at most 60% of the
/// chart's width and 80% of its height, else on the chart block's bottom border, one `━ name`
/// after another in each curve's style, so that a small terminal still says which curve is which.
/// Returns the block (with the border legend, when there) and whether the chart keeps its own.
pub(crate) fn chart_legend<'a>(
    block: ratatui::widgets::Block<'a>,
    series: &[(String, Style)],
    area: Rect,
) -> (ratatui::widgets::Block<'a>, bool) {
    let widest = series.iter().map(|(n, _)| cols(n)).max().unwrap_or(0);
    // the chart's legend: a bordered box of one line per curve, a sample and the name
    let (w, h) = (widest + 4, series.len() + 2);
    let inside = w * 10 <= usize::from(area.width.saturating_sub(2)) * 6
        && h * 10 <= usize::from(area.height.saturating_sub(2)) * 8;
    if inside || series.is_empty() {
        return (block, true);
    }
    let mut spans = vec![Span::raw(" ")];
    for (k, (name, style)) in series.iter().enumerate() {
        if k > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(format!("━ {name}"), *style));
    }
    spans.push(Span::raw(" "));
    (block.title_bottom(Line::from(spans)), false)
}

/// Text written over several lines (a scenario's `about`, a lesson's) as the prose it is: each
/// paragraph, blank lines apart, one [`Line`] whose line breaks read as spaces, for a
/// [`ratatui::widgets::Paragraph`] to wrap where the screen needs it.
pub(crate) fn prose_lines(text: &str) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    for line in text.lines().chain(std::iter::once("")) {
        let line = line.trim();
        if line.is_empty() {
            if !words.is_empty() {
                out.push(Line::raw(words.join(" ")));
                words.clear();
            }
        } else {
            words.push(line);
        }
    }
    out
}
