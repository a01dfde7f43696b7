//! The timeline: one row across the tracer standing for the whole log. Each column is a stretch
//! of events; the phases are coloured spans in the order they ran (forward, then backward), and
//! on them the cursor, the accesses of the selected cell (ticks) and of the breakpoint cells.
//!
//! Column `x` of a strip `w` wide over `len` events holds the events `n` with
//! `n·w / len = x` (rounded down), so every event is in exactly one column. Drawing asks the
//! phase spans and the cell index only, a binary search per column: it costs the same on ten
//! events as on ten million.

use super::CellRef;
use crate::tui::theme::Theme;
use attn_trace_analysis::cache::EventCache;
use attn_trace_analysis::position::first_access_in;
use attn_trace_core::trace::{Pass, Phase, Trace};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use std::collections::BTreeSet;
use std::ops::Range;

/// The column holding event `n` on a strip `w` wide over `len` events.
pub(crate) fn column_of(n: usize, len: usize, w: usize) -> usize {
    if len == 0 || w == 0 {
        return 0;
    }
    ((n as u64 * w as u64) / len as u64) as usize
}

/// The events column `x` holds: empty when the log is shorter than the strip and no event
/// falls there.
pub(crate) fn range(x: usize, len: usize, w: usize) -> Range<usize> {
    if w == 0 {
        return 0..0;
    }
    // the first n with n·w/len ≥ x is ⌈x·len / w⌉
    let start = |x: usize| (x as u64 * len as u64).div_ceil(w as u64) as usize;
    start(x).min(len)..start(x + 1).min(len)
}

/// What one column shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Col {
    /// The event the column stands for: its first, or for an empty column the event before it.
    pub event: usize,
    /// Index into the trace's phase spans of that event.
    pub span: usize,
    /// A phase starts in this column (its own, or the next part way through it).
    pub span_start: bool,
    /// The cursor is in this column.
    pub cursor: bool,
    /// The first access of the selected cell in this column, if any.
    pub tick: Option<usize>,
    /// The first access of any breakpoint cell in this column, if any.
    pub breakpoint: Option<usize>,
    /// Under the cache model: the column's events, those that missed L1 and those whose line
    /// came from memory.
    pub misses: Option<(usize, u32, u32)>,
}

/// The strip's columns, `w` wide.
pub(crate) fn strip(
    trace: &Trace,
    w: usize,
    cursor: usize,
    selected: Option<CellRef>,
    breakpoints: &BTreeSet<CellRef>,
    cache: Option<&EventCache>,
) -> Vec<Col> {
    let len = trace.len();
    if len == 0 {
        return Vec::new();
    }
    let at = column_of(cursor, len, w);
    (0..w)
        .map(|x| {
            let r = range(x, len, w);
            let event = if r.is_empty() {
                r.start.saturating_sub(1)
            } else {
                r.start
            };
            let event = event.min(len - 1);
            let span = trace.phase_span(event);
            // a phase starts here: this column's own, or the next one part way through it
            let starts = |k: usize| trace.phases.get(k).is_some_and(|&(s, _)| r.contains(&(s as usize)));
            Col {
                event,
                span,
                span_start: starts(span) || starts(span + 1),
                cursor: x == at,
                tick: selected.and_then(|c| first_access_in(trace, c, &r)),
                breakpoint: breakpoints.iter().filter_map(|&c| first_access_in(trace, c, &r)).min(),
                misses: cache.map(|c| {
                    let (l1, memory) = c.misses_in(r.clone());
                    (r.len(), l1, memory)
                }),
            }
        })
        .collect()
}

/// Where a click on column `x` goes: the selected cell's access there, else a breakpoint hit
/// there, else the column's event.
pub(crate) fn target(cols: &[Col], x: usize) -> Option<usize> {
    let c = cols.get(x)?;
    Some(c.tick.or(c.breakpoint).unwrap_or(c.event))
}

/// The bar for a column under the cache model: one of `▁▂▃▄▅▆▇█`, as high as the share of its
/// events that missed L1 (rounded up, so one miss shows); none without misses.
pub(crate) fn miss_bar((events, l1, _): (usize, u32, u32)) -> Option<&'static str> {
    const BARS: [&str; 8] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
    if l1 == 0 || events == 0 {
        return None;
    }
    let k = (l1 as usize * BARS.len()).div_ceil(events).clamp(1, BARS.len());
    Some(BARS[k - 1])
}

/// Draws the strip over `area` (its first row).
pub(crate) fn render(buf: &mut Buffer, area: Rect, trace: &Trace, cols: &[Col], t: Theme) {
    if area.height == 0 || cols.is_empty() {
        return;
    }
    let y = area.y;
    // each phase's name sits at the start of its span, cut short (…) when the span is narrow
    let mut label: Vec<Option<char>> = vec![None; cols.len()];
    let mut x = 0;
    // under the cache model the strip is the misses' bars, without the names (the status bar
    // names the phase)
    let cache_shown = cols.iter().any(|c| c.misses.is_some());
    while x < cols.len() && !cache_shown {
        let span = cols[x].span;
        let width = cols[x..].iter().take_while(|c| c.span == span).count();
        if let Some(&(_, phase)) = trace.phases.get(span) {
            let name: Vec<char> = phase.name().chars().collect();
            // after the separator when the span opens with one, and one column free at the end
            let skip = usize::from(cols[x].span_start && x > 0);
            let room = width.saturating_sub(skip + 1);
            let shown: Vec<char> = if name.len() <= room {
                name
            } else if room >= 3 {
                name[..room - 1].iter().copied().chain(['…']).collect()
            } else {
                Vec::new()
            };
            for (k, ch) in shown.into_iter().enumerate() {
                label[x + skip + k] = Some(ch);
            }
        }
        x += width;
    }
    for (x, c) in cols.iter().enumerate() {
        let phase = trace.phases.get(c.span).map(|&(_, p)| p);
        let pass = phase.map_or(Pass::Forward, Phase::pass);
        let base = t.phase_span(pass, c.span);
        let fill = if c.span_start && x > 0 {
            "▏"
        } else {
            match (t.color, pass) {
                (true, _) => " ",
                (false, Pass::Forward) => "-",
                (false, Pass::Backward) => "=",
            }
        };
        let own;
        let (text, style) = if c.cursor {
            ("▲", t.cursor())
        } else if c.breakpoint.is_some() {
            ("●", base.patch(t.breakpoint()))
        } else if let Some(bar) = c.misses.and_then(miss_bar) {
            // under the cache model, the share of the column's accesses that missed L1
            (bar, base.patch(t.miss(c.misses.is_some_and(|(_, _, m)| m > 0))))
        } else if let (Some(_), Some(ch)) = (c.tick, label[x]) {
            // a tick on a phase's name keeps the letter, in the tick's colour, underlined
            own = ch.to_string();
            (own.as_str(), base.patch(t.tick()).add_modifier(Modifier::UNDERLINED))
        } else if c.tick.is_some() {
            ("|", base.patch(t.tick()))
        } else if let Some(ch) = label[x] {
            own = ch.to_string();
            (own.as_str(), base)
        } else {
            (fill, base)
        };
        // one cell each: set directly, without measuring a string per column
        let col = area.x + x as u16;
        if col < area.right()
            && let Some(cell) = buf.cell_mut((col, y))
        {
            cell.set_symbol(text).set_style(style);
        }
    }
}
