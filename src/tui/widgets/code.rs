//! The code panel: the kernel's real source, scrolled to the line that made the current access.

use super::{Ctx, put};
use crate::tui::theme::Theme;
use attn_trace_core::source;
use attn_trace_i18n::tr;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::widgets::{Block, Widget};

pub(crate) fn render(frame: &mut Frame, area: Rect, ctx: &Ctx, focused: bool) {
    let t = ctx.theme;
    let current = ctx.view.line as usize;
    let Some((inner, text)) = panel(frame, area, ctx.view.file, Some(current), focused, t) else {
        return;
    };
    // lines of the enclosing `rec.enter` calls: the loops this access is nested in
    let loops: Vec<usize> = attn_trace_analysis::scope::loops(ctx.trace, ctx.cursor)
        .iter()
        .map(|k| k.line as usize)
        .collect();
    let lines: Vec<&str> = text.lines().collect();
    let h = inner.height as usize;
    // keep the current line a third of the way down, so the loops above it stay in view
    let first = current
        .saturating_sub(1)
        .saturating_sub(h / 3)
        .min(lines.len().saturating_sub(h));
    // dedent by what every line in view shares, in every layout; the current line, however deep
    // and long, is then wrapped rather than cut (draw_lines)
    let shift = least_indent(&lines[first.min(lines.len())..], h);
    let marks = Marks {
        current: Some(current),
        marked: &[],
        loops: &loops,
    };
    draw_lines(frame.buffer_mut(), inner, &lines, first, shift, &marks, t);
}

/// Draws a code panel's bordered block, titled with the file and the line that ran, and returns
/// its inner area and the file's source; without a source it says so and returns `None`.
pub(crate) fn panel(
    frame: &mut Frame,
    area: Rect,
    file: &'static str,
    current: Option<usize>,
    focused: bool,
    t: Theme,
) -> Option<(Rect, &'static str)> {
    let title = match current {
        _ if file.is_empty() => tr!(" Code ").to_string(),
        Some(l) => tr!(" Code · {file}:{l} ", file = source::short(file), l),
        None => tr!(" Code · {file} ", file = source::short(file)),
    };
    let block = Block::bordered().title(title).border_style(t.border(focused));
    let inner = block.inner(area);
    block.render(area, frame.buffer_mut());
    let text = source::source(file);
    if text.is_none() {
        put(
            frame.buffer_mut(),
            inner,
            inner.x,
            inner.y,
            tr!("(no source for this event)"),
            t.dim(),
        );
    }
    Some(inner).zip(text)
}

/// Leading spaces of a line.
pub(crate) fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The least indentation among the first `h` of `lines` that are not blank.
pub(crate) fn least_indent(lines: &[&str], h: usize) -> usize {
    lines
        .iter()
        .take(h)
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0)
}

/// The source lines a panel draws apart from the rest (numbered from 1): the line that ran
/// (`▶`, highlighted), lines marked `!` (a mistake's, in the error colour) and the `rec.enter`
/// lines of the loops around the access (`›`, bold).
pub(crate) struct Marks<'a> {
    pub current: Option<usize>,
    pub marked: &'a [usize],
    pub loops: &'a [usize],
}

/// Draws `lines` from index `first` into `inner`, one per row, each behind a gutter with its
/// number and marker and shifted left by up to `shift` spaces. The current line is highlighted to
/// the panel's right edge and, when it is wider than the panel, continues on the rows below
/// (`↪`), so the access being stepped is always on screen whole.
pub(crate) fn draw_lines(
    buf: &mut Buffer,
    inner: Rect,
    lines: &[&str],
    first: usize,
    shift: usize,
    marks: &Marks,
    t: Theme,
) {
    let mut y = inner.y;
    let mut no = first;
    while no < lines.len() && y < inner.bottom() {
        let line_no = no + 1;
        let is_current = marks.current == Some(line_no);
        let marked = marks.marked.contains(&line_no);
        let is_loop = marks.loops.contains(&line_no);
        let marker = if is_current {
            "▶"
        } else if marked {
            "!"
        } else if is_loop {
            "›"
        } else {
            " "
        };
        let code = &lines[no][shift.min(indent(lines[no]))..];
        let style = if is_current {
            t.cursor()
        } else if marked {
            t.error()
        } else if code.trim_start().starts_with("//") {
            t.comment()
        } else if is_loop {
            t.base().add_modifier(Modifier::BOLD)
        } else {
            t.base()
        };
        let gutter_style = if is_current || marked { style } else { t.dim() };
        let room = (inner.width as usize).saturating_sub(GUTTER);
        let rows = if is_current {
            wrap(code, room)
        } else if attn_trace_analysis::format::cols(code) > room && room > 1 {
            // a line cut at the panel's edge says so
            vec![format!("{}…", attn_trace_analysis::format::cut(code, room - 1))]
        } else {
            vec![code.to_string()]
        };
        for (k, text) in rows.iter().enumerate() {
            if y >= inner.bottom() {
                break;
            }
            let gutter = if k == 0 {
                format!("{line_no:>4}{marker} ")
            } else {
                "    ↪ ".to_string()
            };
            let x = put(buf, inner, inner.x, y, &gutter, gutter_style);
            let end = put(buf, inner, x, y, text, style);
            if is_current && end < inner.right() {
                put(buf, inner, end, y, &" ".repeat((inner.right() - end) as usize), style);
            }
            y += 1;
        }
        no += 1;
    }
}

/// Columns of the gutter: the line number, the marker and a space.
const GUTTER: usize = 6;

/// `code` in rows of at most `room` characters, broken after a space where one is near (so a
/// `rec.read(…)` call stays whole when it can); the rows after the first keep the line's
/// indentation and two more spaces.
pub(crate) fn wrap(code: &str, room: usize) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    if room < 8 || chars.len() <= room {
        return vec![code.to_string()];
    }
    let lead = indent(code) + 2;
    let mut rows = Vec::new();
    let mut start = 0;
    let mut width = room;
    while start < chars.len() {
        let end = (start + width).min(chars.len());
        let cut = if end == chars.len() {
            end
        } else {
            // the last space in the second half of the row, else a hard break
            (start + width / 2..end)
                .rev()
                .find(|&k| chars[k] == ' ')
                .map_or(end, |k| k + 1)
        };
        let text: String = chars[start..cut].iter().collect();
        rows.push(if rows.is_empty() {
            text
        } else {
            format!("{}{}", " ".repeat(lead), text.trim_start())
        });
        start = cut;
        width = room.saturating_sub(lead).max(8);
    }
    rows
}
