//! The event log: the events around the current one, one line each, e.g.
//! `#123 read  q[10] = 1.00  (b0 i2 h1 d0)`. Only the visible window is expanded. In a trace
//! with tile-local buffers (flash) each line also names the memory it touches, `global` or
//! `tile`; the plain kernels touch only global memory.

use super::{Ctx, put};
use attn_trace_core::trace::{Op, Trace};
use attn_trace_i18n::tr;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::{Block, Widget};

/// One log line for event `n` (without the marker column).
pub(crate) fn line(trace: &Trace, n: usize) -> String {
    let e = trace.events[n];
    let off = e.offset as usize;
    let op = match e.op {
        attn_trace_core::trace::Op::Read => tr!("read"),
        attn_trace_core::trace::Op::Write => tr!("write"),
    };
    // a tiled kernel's log names the memory level of each access
    let level = if trace.has_tiles() {
        format!("  {}", trace.level(e.buf).name())
    } else {
        String::new()
    };
    format!(
        "#{n} {} {}[{off}] = {}  ({}){level}",
        super::pad(op, super::cols(tr!("read")).max(super::cols(tr!("write")))),
        e.buf,
        attn_trace_analysis::format::num_of(e.buf, e.value),
        trace.label(e.buf, off)
    )
}

/// [`render`], showing no event after `last` (quiz mode hides what comes next): the row after
/// it says `?`, the rest stay empty.
pub(crate) fn render_until(frame: &mut Frame, area: Rect, ctx: &Ctx, focused: bool, last: Option<usize>) {
    let t = ctx.theme;
    let block = Block::bordered()
        .title(tr!(" Event log · {n} events ", n = ctx.trace.len()))
        .border_style(t.border(focused));
    let inner = block.inner(area);
    block.render(area, frame.buffer_mut());
    let h = inner.height as usize;
    if h == 0 || ctx.trace.is_empty() {
        return;
    }
    let len = ctx.trace.len();
    // the cursor sits in the middle of the window, except near either end of the log
    let first = ctx.cursor.saturating_sub(h / 2).min(len.saturating_sub(h));
    for (row, n) in (first..len).take(h).enumerate() {
        let y = inner.y + row as u16;
        if let Some(last) = last.filter(|&l| n > l) {
            if n == last + 1 {
                put(
                    frame.buffer_mut(),
                    inner,
                    inner.x,
                    y,
                    &tr!(" #{n} ?  (quiz: predict it)", n),
                    t.dim(),
                );
            }
            continue;
        }
        let e = ctx.trace.events[n];
        let bp = ctx.breakpoints.contains(&(e.buf, e.offset as usize));
        let marker = if n == ctx.cursor {
            "▶"
        } else if bp {
            "●"
        } else {
            " "
        };
        let style = if n == ctx.cursor {
            t.cursor()
        } else {
            match e.op {
                Op::Read => t.op_read(),
                Op::Write => t.op_write(),
            }
        };
        let marker_style = if bp && n != ctx.cursor { t.breakpoint() } else { style };
        let buf = frame.buffer_mut();
        let x = put(buf, inner, inner.x, y, marker, marker_style);
        let mut text = line(ctx.trace, n);
        // on a narrow panel the padding goes before the label is cut
        if super::cols(&text) + 1 > inner.width as usize {
            text = text.replace("read  ", "read ").replace("  (", " (");
        }
        let end = put(buf, inner, x, y, &text, style);
        if n == ctx.cursor && end < inner.right() {
            put(buf, inner, end, y, &" ".repeat((inner.right() - end) as usize), style);
        }
    }
}
