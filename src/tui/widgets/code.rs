//! The code panel: the kernel's real source, scrolled to the line that made the current access.

use super::{Ctx, put};
use crate::tui::source;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::widgets::{Block, Widget};

pub fn render(frame: &mut Frame, area: Rect, ctx: &Ctx, focused: bool) {
    let t = ctx.theme;
    let file = ctx.view.file;
    let title = if file.is_empty() {
        " Code ".to_string()
    } else {
        format!(" Code · {}:{} ", source::short(file), ctx.view.line)
    };
    let block = Block::bordered().title(title).border_style(t.border(focused));
    let inner = block.inner(area);
    block.render(area, frame.buffer_mut());
    let buf = frame.buffer_mut();
    let Some(text) = source::source(file) else {
        put(buf, inner, inner.x, inner.y, "(no source for this event)", t.dim());
        return;
    };
    // lines of the enclosing `rec.enter` calls: the loops this access is nested in
    let loops: Vec<u32> = ctx
        .frame_ids()
        .iter()
        .filter_map(|&id| ctx.trace.frame(id))
        .map(|f| ctx.trace.kinds[f.kind as usize].line)
        .collect();
    let lines: Vec<&str> = text.lines().collect();
    let current = ctx.view.line as usize;
    let h = inner.height as usize;
    // keep the current line a third of the way down, so the loops above it stay in view
    let first = current
        .saturating_sub(1)
        .saturating_sub(h / 3)
        .min(lines.len().saturating_sub(h));
    // deep loops push the code right: shift every line left so the current one starts near
    // the gutter (lines indented less just lose their leading spaces)
    let indent = |l: &str| l.len() - l.trim_start().len();
    let least = lines
        .iter()
        .skip(first)
        .take(h)
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let shift = lines
        .get(current.saturating_sub(1))
        .map_or(0, |l| indent(l).saturating_sub(8))
        .min(least);
    for (row, no) in (first..lines.len()).take(h).enumerate() {
        let y = inner.y + row as u16;
        let line_no = no + 1;
        let is_current = line_no == current;
        let marker = if is_current {
            "▶"
        } else if loops.contains(&(line_no as u32)) {
            "›"
        } else {
            " "
        };
        let gutter = format!("{line_no:>4}{marker}");
        let gutter_style = if is_current { t.cursor() } else { t.dim() };
        let x = put(buf, inner, inner.x, y, &gutter, gutter_style);
        let code = &lines[no][shift.min(indent(lines[no]))..];
        let style = if is_current {
            t.cursor()
        } else if code.trim_start().starts_with("//") {
            t.comment()
        } else if loops.contains(&(line_no as u32)) {
            t.base().add_modifier(Modifier::BOLD)
        } else {
            t.base()
        };
        let x = put(buf, inner, x, y, " ", style);
        let end = put(buf, inner, x, y, code, style);
        if is_current && end < inner.right() {
            let pad = " ".repeat((inner.right() - end) as usize);
            put(buf, inner, end, y, &pad, style);
        }
    }
}
