//! Compare drawn: the phase tabs, the two kernels side by side on the element, each with its
//! buffer window and counts, and the notes under them.

use super::{Compare, flash, notes};
use crate::tui::theme::Theme;
use crate::tui::widgets::{bar, num, put};
use attn_trace_analysis::format::phase_title_pair;
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Buf, Phase};
use attn_trace_i18n::tr;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &Compare, theme: Theme) {
    let t = theme;
    let phases = st.phases();
    let (left_v, right_v) = st.pair();
    let Some(&(phase, buf)) = phases.get(st.phase.min(phases.len().saturating_sub(1))) else {
        let msg = tr!(
            "Compare needs a scenario that traces two kernels it can pair: baseline and mha, mha and gqa, or mha and flash."
        );
        frame.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
        return;
    };
    let flash = right_v.desc().tiled;
    let lines = notes(st, phase, buf);
    let inner_w = area.width.saturating_sub(2).max(1) as usize;
    // the notes wrapped here, so that they can scroll when the two sides need the room
    let wrapped: Vec<String> = lines
        .iter()
        .flat_map(|l| {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            let mut w = crate::tui::widgets::wrap(&text, inner_w);
            if w.is_empty() {
                w.push(String::new());
            }
            w
        })
        .collect();
    // the header as much of it as fits, never cut: the element is kept over the phase's formula
    let e = st.element;
    let element = format!("b={} h={} i={} j={}", e.b, e.h, e.i, e.j);
    let what = |with_mask| {
        if flash {
            flash::stage_title(phase)
        } else {
            phase_title_pair(phase, &st.traced.mask, (left_v, right_v), with_mask)
        }
    };
    let title = tr!(
        " Compare {left} and {right}",
        left = title_name(left_v),
        right = title_name(right_v)
    );
    let choices = [
        tr!(
            "{title} · {phase} · {what} · element {element}",
            title,
            phase = phase.name(),
            what = what(true),
            element
        ),
        format!("{title} · {} · {element}", what(true)),
        format!("{title} · {} · {element}", what(false)),
        format!("{title} · {} · {element}", phase.name()),
        tr!(" Compare · {phase} · {element}", phase = phase.name(), element),
    ];
    let header = bar::header(&choices, area.width);
    let right_name = title_name(right_v);
    let hints = [
        tr!(
            " ]/[ phase · ←→ j · ↑↓ i · h head · Enter trace {right_name} here · ? keys · Esc back",
            right_name
        ),
        tr!(" ]/[ phase · ←→ j · ↑↓ i · h head · Enter trace · ? keys").to_string(),
        tr!(" ]/[ · ←→ · ↑↓ · h · Enter · ? keys").to_string(),
    ];
    let hint_lines = bar::status(&[String::new()], &hints, false, area.width);
    // the sides keep at least eight lines (a header and a few rows each); the notes get the rest
    let room = area.height.saturating_sub(header.len() as u16 + 1 + 8).max(3) as usize;
    let notes_h = (wrapped.len() + 2).min(room);
    let shown = notes_h.saturating_sub(2);
    let first = st.scroll.min(wrapped.len().saturating_sub(shown));
    let [head, body, notes, hint] = Layout::vertical([
        Constraint::Length(header.len() as u16),
        Constraint::Fill(1),
        Constraint::Length(notes_h as u16),
        Constraint::Length(1),
    ])
    .areas(area);
    let bold_len = if header[0].starts_with(&title) { title.len() } else { 0 };
    let (bold, rest) = header[0].split_at(bold_len);
    let mut head_lines = vec![Line::from(vec![
        Span::styled(bold.to_string(), t.title()),
        Span::styled(rest.to_string(), t.dim()),
    ])];
    head_lines.extend(header[1..].iter().map(|l| Line::styled(l.clone(), t.dim())));
    frame.render_widget(Paragraph::new(head_lines), head);
    let [left, right] = Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(body);
    side(frame, left, st, left_v, phase, buf, t);
    if flash {
        flash::side(frame, right, st, phase, t);
    } else {
        side(frame, right, st, right_v, phase, buf, t);
    }
    let mut notes_title = if flash {
        tr!(" same element, two kernels ").to_string()
    } else {
        tr!(" same element, two layouts ").to_string()
    };
    if shown < wrapped.len() {
        notes_title.push_str(&tr!(
            "· PgDn/PgUp: lines {from}-{to} of {n} ",
            from = first + 1,
            to = first + shown,
            n = wrapped.len()
        ));
    }
    let visible: Vec<Line> = wrapped[first..(first + shown).min(wrapped.len())]
        .iter()
        .map(|l| Line::from(l.clone()))
        .collect();
    frame.render_widget(
        Paragraph::new(visible).block(Block::bordered().title(notes_title)),
        notes,
    );
    let text = hint_lines.first().map_or(String::new(), |l| l.1.clone());
    frame.render_widget(Paragraph::new(Span::styled(text, t.dim())), hint);
}

/// `baseline`, `MHA`, `GQA`, `flash`: a kernel as a title names it.
pub(super) fn title_name(v: Variant) -> String {
    v.desc().title.to_string()
}

/// One variant's buffer at the end of the phase, the element's cells highlighted.
fn side(frame: &mut Frame, area: Rect, st: &Compare, variant: Variant, phase: Phase, buf: Buf, t: Theme) {
    let traced = &st.traced;
    let sh = traced.shape;
    let (S, T, C) = (sh.s, sh.t, sh.c);
    let H = traced.heads(variant);
    let e = st.element;
    let block = Block::bordered()
        .title(format!(" {variant} · {buf} "))
        .border_style(t.border(variant == st.pair().1));
    let inner = block.inner(area);
    block.render(area, frame.buffer_mut());
    let Some(trace) = traced.trace(variant) else { return };
    let Some(k) = trace.phases.iter().position(|&(_, p)| p == phase) else {
        return;
    };
    let end = trace.span_range(k).end.saturating_sub(1);
    let value = |off: usize| trace.value_at(buf, off, end);
    let target = st.offset(variant, buf);
    let Some(layout) = traced.run(variant).and_then(|r| r.registry.layout(buf)) else {
        return;
    };
    let b = e.b.min(sh.b - 1);
    let out = frame.buffer_mut();
    let cw = 7u16;
    let mut y = inner.y;
    // only what fits is drawn, around the element (T and C may be large); what is left out is
    // said on the panel's last lines, which are kept for it
    let fit_cols = (inner.width.saturating_sub(5) / cw).max(1) as usize;
    let hidden: Vec<String>;
    if matches!(buf, Buf::Scores | Buf::Probs | Buf::DScores | Buf::DProbs) {
        // H matrices S×T side by side (one for the baseline), in bands of as many as fit across
        let js = window(T, fit_cols, e.j);
        let panel_w = 4 + js.len() as u16 * cw;
        let per_row = ((inner.width + 1) / (panel_w + 1)).max(1) as usize;
        let bands = H.div_ceil(per_row);
        // every band with all its rows; else every band with the rows that fit, the element's
        // row among them; else the element's band alone
        let fit = |height: usize| {
            if bands * (S + 2) - 1 <= height {
                (S, 0, bands)
            } else if bands > 1 && (height + 1) / bands >= 3 {
                ((height + 1) / bands - 2, 0, bands)
            } else {
                (height.saturating_sub(1).max(1), e.h.min(H - 1) / per_row, 1)
            }
        };
        // what is left out is said under the grid, on as many lines as that takes
        let said = |rows: usize, first_band: usize, shown_bands: usize| {
            let is = window(S, rows, e.i);
            let mut parts = Vec::new();
            if js.len() < T {
                parts.push(tr!(
                    "j{first}..={last} of {n}",
                    first = js.start,
                    last = js.end - 1,
                    n = T
                ));
            }
            if is.len() < S {
                parts.push(tr!(
                    "i{first}..={last} of {n}",
                    first = is.start,
                    last = is.end - 1,
                    n = S
                ));
            }
            if shown_bands < bands {
                let h0 = first_band * per_row;
                let h1 = (h0 + per_row).min(H) - 1;
                parts.push(tr!("h{first}..={last} of {n}", first = h0, last = h1, n = H));
            }
            parts
        };
        let mut reserve = 0;
        let (rows, first_band, shown_bands) = loop {
            let (r, f, n) = fit((inner.height as usize).saturating_sub(reserve));
            let lines = note_lines(&said(r, f, n), inner.width).len();
            if lines <= reserve || reserve >= inner.height as usize {
                break (r, f, n);
            }
            reserve = lines;
        };
        hidden = said(rows, first_band, shown_bands);
        let is = window(S, rows, e.i);
        let label = |h: usize| match (variant, buf) {
            (v, _) if v.has_heads() && !v.desc().tiled => format!("h{h}"),
            (_, Buf::Scores) => "S".to_string(),
            _ => "P".to_string(),
        };
        for band in first_band..first_band + shown_bands {
            let h0 = band * per_row;
            if y >= inner.bottom() {
                break;
            }
            for h in h0..(h0 + per_row).min(H) {
                let x0 = inner.x + ((h - h0) as u16) * (panel_w + 1);
                put(out, inner, x0, y, &label(h), t.title());
                for (k, j) in js.clone().enumerate() {
                    let x = x0 + 4 + k as u16 * cw;
                    put(out, inner, x, y, &format!("{:>6}", format!("j{j}")), t.dim());
                }
                for (row, i) in is.clone().enumerate() {
                    let yy = y.saturating_add(1 + row as u16);
                    put(out, inner, x0, yy, &format!("i{i}"), t.dim());
                    for (k, j) in js.clone().enumerate() {
                        let Some(off) = layout.offset_of(&[("b", b), ("h", h), ("i", i), ("j", j)]) else {
                            continue;
                        };
                        let style = if Some(off) == target {
                            t.write()
                        } else if traced.mask.hides(i, j) {
                            t.masked()
                        } else if i == e.i && (!variant.has_heads() || h == e.h) {
                            t.written()
                        } else {
                            t.base()
                        };
                        let x = x0 + 4 + k as u16 * cw;
                        put(out, inner, x, yy, &format!("{:>6}", num(value(off))), style);
                    }
                }
            }
            y = y.saturating_add(is.len() as u16 + 2);
        }
    } else {
        // [B,T,C] rows; MHA's (and GQA's) query heads are column groups of D
        let per_head = variant.has_heads();
        let D = if per_head { sh.d() } else { C };
        let h = if per_head { e.h } else { 0 };
        let cs = window(C, fit_cols.saturating_sub(C / D).max(1), h * D);
        // query rows: S of them (T in self-attention), lines kept for the note
        let said = |is: &std::ops::Range<usize>| {
            let mut parts = Vec::new();
            if cs.len() < C {
                parts.push(tr!(
                    "c{first}..={last} of {n}",
                    first = cs.start,
                    last = cs.end - 1,
                    n = C
                ));
            }
            if is.len() < S {
                parts.push(tr!(
                    "i{first}..={last} of {n}",
                    first = is.start,
                    last = is.end - 1,
                    n = S
                ));
            }
            parts
        };
        let mut reserve = 0;
        let is = loop {
            let is = window(S, (inner.height as usize).saturating_sub(1 + reserve).max(1), e.i);
            let lines = note_lines(&said(&is), inner.width).len();
            if lines <= reserve || reserve >= inner.height as usize {
                break is;
            }
            reserve = lines;
        };
        hidden = said(&is);
        let x_of = |k: usize, c: usize| inner.x + 4 + k as u16 * cw + (c / D - cs.start / D) as u16;
        for (k, c) in cs.clone().enumerate() {
            let name = if per_head {
                format!("h{}d{}", c / D, c % D)
            } else {
                format!("c{c}")
            };
            put(out, inner, x_of(k, c), y, &format!("{name:>6}"), t.dim());
        }
        for (row, i) in is.clone().enumerate() {
            let yy = y.saturating_add(1 + row as u16);
            put(out, inner, inner.x, yy, &format!("i{i}"), t.dim());
            for (k, c) in cs.clone().enumerate() {
                let coords = if per_head {
                    [("b", b), ("i", i), ("h", c / D), ("d", c % D)]
                } else {
                    [("b", b), ("i", i), ("c", c), ("h", 0)]
                };
                let Some(off) = layout.offset_of(&coords) else { continue };
                let mine = i == e.i && (!variant.has_heads() || c / D == e.h);
                let style = if mine { t.written() } else { t.base() };
                put(out, inner, x_of(k, c), yy, &format!("{:>6}", num(value(off))), style);
            }
        }
    }
    let lines = note_lines(&hidden, inner.width);
    for (k, line) in lines.iter().enumerate() {
        let Some(y) = (inner.bottom() as usize + k).checked_sub(lines.len()) else {
            continue;
        };
        let y = y as u16;
        if y >= inner.y {
            put(out, inner, inner.x, y, &" ".repeat(inner.width as usize), t.base());
            put(out, inner, inner.x, y, line, t.dim());
        }
    }
}

/// The note under a Compare grid that leaves rows, columns or heads out (`shown: j4..=6 of 7 ·
/// i6..=6 of 7`), in lines of at most `width` columns; none when nothing is left out.
pub(super) fn note_lines(parts: &[String], width: u16) -> Vec<String> {
    if parts.is_empty() {
        return Vec::new();
    }
    let text = tr!("shown: {parts}", parts = parts.join(" · "));
    attn_trace_analysis::format::wrap(&text, width.max(1) as usize)
}

/// `count` consecutive indices out of `len`, as close to centred on `at` as the ends allow.
pub(super) fn window(len: usize, count: usize, at: usize) -> std::ops::Range<usize> {
    let count = count.min(len);
    let start = at.saturating_sub(count / 2).min(len - count);
    start..start + count
}
