//! Header and status lines that are never cut: each offers its text in a few lengths, most
//! complete first, and the longest that fits the width is drawn. A message (a goto's answer, the
//! point where two runs diverge) is never shortened: where it does not fit beside the position,
//! it goes on the lines below it.

use super::wrap;
use super::{cols, put};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

/// The first of `choices` (most complete first) that fits `width` on one line; when none does,
/// the last wrapped over the lines it needs.
pub(crate) fn header(choices: &[String], width: u16) -> Vec<String> {
    let w = width as usize;
    if let Some(c) = choices.iter().find(|c| cols(c) <= w) {
        return vec![c.clone()];
    }
    let last = choices.last().map_or("", String::as_str);
    wrap(last, w)
}

/// A status line: the position (`lefts`, most complete first) and beside it hints or a message
/// (`rights`, most complete first). The most complete position is kept over longer hints; the
/// first pair that fits is drawn. A message (`must`) that fits beside no position is drawn whole
/// on the lines under the most complete position; hints that do not fit are left out.
pub(crate) fn status(lefts: &[String], rights: &[String], must: bool, width: u16) -> Vec<(String, String)> {
    let w = width as usize;
    let len = |s: &String| cols(s);
    for l in lefts {
        for r in rights {
            if len(l) + len(r) <= w {
                return vec![(l.clone(), r.clone())];
            }
        }
    }
    let first = lefts.first().cloned().unwrap_or_default();
    if !must {
        let left = lefts.iter().find(|l| len(l) <= w).cloned().unwrap_or(first);
        return vec![(left, String::new())];
    }
    let message = rights.last().map_or("", String::as_str);
    let mut out = vec![(first, String::new())];
    out.extend(
        wrap(message.trim_start(), w.saturating_sub(1))
            .into_iter()
            .map(|l| (String::new(), format!(" {l}"))),
    );
    out
}

/// Draws status lines from the top of `area`: the position in `left`'s style, the rest in
/// `right`'s; every line of the area in the bar's colour.
pub(crate) fn render_status(buf: &mut Buffer, area: Rect, lines: &[(String, String)], left: Style, right: Style) {
    buf.set_style(area.intersection(buf.area), left);
    for (k, (l, r)) in lines.iter().enumerate() {
        let y = area.y + k as u16;
        let x = put(buf, area, area.x, y, l, left);
        put(buf, area, x, y, r, right);
    }
}
