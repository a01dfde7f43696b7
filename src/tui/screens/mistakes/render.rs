//! The side-by-side view drawn: the header, the two halves (code or memory), the downstream
//! panel and the status line.

use super::{CodeView, Panel, SideBySide, code_view};
use crate::tui::theme::Theme;
use crate::tui::widgets::{CellRef, Ctx, bar, code, cols, log, memory};
use attn_trace_analysis::format::phase_title_of;
use attn_trace_analysis::mistakes::{CORRECT, MISTAKEN, Place, missing_why, number, phases_of};
use attn_trace_core::trace::{Event, Phase, Trace};
use attn_trace_i18n::tr;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use std::collections::BTreeSet;

/// Where the side-by-side view draws: the header, the two halves, the downstream panel and the
/// status line. `both` says whether each half shows code and memory at once.
pub(crate) fn areas(area: Rect, st: &SideBySide) -> (Rect, [Rect; 2], Rect, Rect, bool) {
    let width = area.width.saturating_sub(2).max(1) as usize;
    let rows: usize = st.report.iter().map(|n| cols(&n.text).max(1).div_ceil(width)).sum();
    let cap = (area.height as usize * 2 / 5).max(6);
    let notes_h = (rows + 2).min(cap) as u16;
    let head_h = header_lines(st, area.width).len() as u16;
    let status_h = status_lines(st, area.width).len() as u16;
    let [header, body, notes, status] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Fill(1),
        Constraint::Length(notes_h),
        Constraint::Length(status_h),
    ])
    .areas(area);
    let [left, right] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body);
    let both = body.height >= 22;
    (header, [left, right], notes, status, both)
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &SideBySide, theme: Theme) {
    let t = theme;
    let Some(traces) = st.traces().filter(|_| !st.timeline.is_empty()) else {
        let text = tr!("{title}: no mistaken run to compare", title = st.traced.title);
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
        return;
    };
    let (header_area, halves, notes, status, both) = areas(area, st);
    let seg = &st.timeline.segments[st.timeline.segment_at(st.t)];
    let title_len = st.traced.title.len() + 1;
    let header: Vec<Line> = header_lines(st, area.width)
        .into_iter()
        .enumerate()
        .map(|(k, text)| {
            // the title bold, the rest dim and the mistake's name in the error colour
            let (head, rest) = if k == 0 {
                text.split_at(if text.is_char_boundary(title_len) { title_len } else { 0 })
            } else {
                ("", text.as_str())
            };
            let (rest, mistake) = rest.split_at(rest.find(here_runs()).unwrap_or(rest.len()));
            Line::from(vec![
                Span::styled(head.to_string(), t.title()),
                Span::styled(rest.to_string(), t.dim()),
                Span::styled(mistake.to_string(), t.error()),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(header), header_area);
    let places = st.places();
    for side in [CORRECT, MISTAKEN] {
        half(frame, halves[side], st, traces, places, side, seg.phase, both, t);
    }
    let lines: Vec<Line> = st
        .report
        .iter()
        .map(|n| {
            if n.heading {
                Line::styled(n.text.clone(), t.error())
            } else {
                Line::raw(n.text.clone())
            }
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::bordered()
                .title(tr!(" what it does downstream "))
                .border_style(t.border(true)),
        ),
        notes,
    );
    render_status(frame, status, st, t);
}

#[allow(clippy::too_many_arguments)]
fn half(
    frame: &mut Frame,
    area: Rect,
    st: &SideBySide,
    traces: [&Trace; 2],
    places: [Place; 2],
    side: usize,
    phase: Phase,
    both: bool,
    t: Theme,
) {
    let trace = traces[side];
    let place = places[side];
    let mistakes = st.mistakes();
    let name = if side == CORRECT {
        tr!("correct").to_string()
    } else {
        let names: Vec<&str> = mistakes.list().iter().map(|m| m.name()).collect();
        tr!("mistaken: {names}", names = names.join(", "))
    };
    let shown = if both {
        String::new()
    } else {
        match st.panel {
            Panel::Code => tr!(" · code (t: memory)").to_string(),
            Panel::Memory => tr!(" · memory (t: code)").to_string(),
        }
    };
    let inner = area;
    if inner.height < 2 || trace.is_empty() {
        return;
    }
    let title_style = if side == CORRECT { t.title() } else { t.error() };
    let n = place.event().min(trace.len() - 1);
    // the event line: what this run does at this step, or why it waits
    let event_line = match place {
        Place::At(_) => {
            let mut spans = vec![Span::styled(format!(" {}", log::line(trace, n)), t.base())];
            let other = places[1 - side];
            if let Place::At(m) = other
                && side == MISTAKEN
                && !same_event(&trace.events[n], traces[CORRECT].events.get(m))
            {
                spans.push(Span::styled(tr!("  ≠ correct"), t.error()));
            }
            Line::from(spans)
        }
        Place::Waiting(_) => Line::from(vec![
            Span::styled(tr!(" no {phase} here: ", phase = phase.name()), t.key()),
            Span::styled(missing_why(side, phase, mistakes), t.dim()),
        ]),
    };
    // both lines wrap rather than be cut in a narrow half, with the same height in both halves
    let title_line = Line::from(vec![
        Span::styled(format!(" {name}"), title_style),
        Span::styled(shown, t.dim()),
    ]);
    let rows = if inner.width < 64 { 2 } else { 1 };
    let [head, ev, rest] =
        Layout::vertical([Constraint::Length(rows), Constraint::Length(rows), Constraint::Fill(1)]).areas(inner);
    frame.render_widget(Paragraph::new(title_line).wrap(Wrap { trim: false }), head);
    frame.render_widget(Paragraph::new(event_line).wrap(Wrap { trim: false }), ev);
    let code = code_view(trace, place, side, phase, mistakes);
    let empty = BTreeSet::new();
    let selected: CellRef = (trace.events[n].buf, trace.events[n].offset as usize);
    let ctx = Ctx {
        traced: &st.traced,
        variant: st.variant(),
        trace,
        cursor: n,
        view: trace.view(n),
        theme: t,
        selected,
        pinned: false,
        breakpoints: &empty,
        quiz: false,
        asked: None,
        cache: None,
    };
    if both {
        let [c, m] = Layout::vertical([Constraint::Percentage(42), Constraint::Percentage(58)]).areas(rest);
        code_panel(frame, c, &code, t);
        memory::render(frame, m, &ctx, false);
    } else {
        match st.panel {
            Panel::Code => code_panel(frame, rest, &code, t),
            Panel::Memory => memory::render(frame, rest, &ctx, false),
        }
    }
}

fn same_event(a: &Event, b: Option<&Event>) -> bool {
    b.is_some_and(|b| (a.buf, a.offset, a.op, a.value.to_bits()) == (b.buf, b.offset, b.op, b.value.to_bits()))
}

/// The kernel source around the line that ran, with the mistake's lines marked `!`.
fn code_panel(frame: &mut Frame, area: Rect, cv: &CodeView, t: Theme) {
    let Some((inner, text)) = code::panel(frame, area, cv.file, cv.current, false, t) else {
        return;
    };
    let lines: Vec<&str> = text.lines().collect();
    let h = inner.height as usize;
    if h == 0 || lines.is_empty() {
        return;
    }
    // keep the line that ran and the mistake's lines in view where they fit together
    let focus: Vec<usize> = cv.current.iter().chain(&cv.marks).copied().filter(|&l| l > 0).collect();
    let lo = focus.iter().copied().min().unwrap_or(1);
    let hi = focus.iter().copied().max().unwrap_or(1);
    let anchor = if hi - lo < h { lo } else { cv.current.unwrap_or(lo) };
    let room = h.saturating_sub(hi.saturating_sub(anchor) + 1);
    let first = anchor
        .saturating_sub(1)
        .saturating_sub(room.min(h / 3))
        .min(lines.len().saturating_sub(h));
    let shift = code::least_indent(&lines[first..], h);
    let marks = code::Marks {
        current: cv.current,
        marked: &cv.marks,
        loops: &cv.loops,
    };
    code::draw_lines(frame.buffer_mut(), inner, &lines, first, shift, &marks, t);
}

/// ` · here runs MISTAKE`, before the mistake's number in the header (drawn in the error colour).
fn here_runs() -> &'static str {
    tr!(" · here runs MISTAKE")
}

/// The header: the title, the kernel, the pass, what the phase computes and the mistake whose
/// code runs in it, as much as fits (the mistake's name is kept over the rest).
fn header_lines(st: &SideBySide, width: u16) -> Vec<String> {
    let Some(seg) = st.timeline.segments.get(st.timeline.segment_at(st.t)) else {
        return vec![format!(" {}", st.traced.title)];
    };
    let here: String = st
        .mistakes()
        .list()
        .into_iter()
        .filter(|&m| phases_of(m).contains(&seg.phase))
        .map(|m| format!("{} {}", here_runs(), number(m)))
        .collect();
    let title = &st.traced.title;
    let what = phase_title_of(seg.phase, &st.traced.mask, st.variant());
    let (v, pass) = (st.variant(), seg.phase.pass().name());
    let choices = [
        format!(" {title} · {v} · {pass} · {what}{here}"),
        format!(" {title} · {what}{here}"),
        format!(" {title} · {}{here}", seg.phase.name()),
        format!(" {title}{here}"),
    ];
    bar::header(&choices, width)
}

/// The status line: the step, then the message (where the runs diverge, never cut: it goes on
/// the next line rather) or the keys.
fn status_lines(st: &SideBySide, width: u16) -> Vec<(String, String)> {
    let phase = st
        .timeline
        .segments
        .get(st.timeline.segment_at(st.t))
        .map_or("", |s| s.phase.name());
    let diverge = match st.diverges_at {
        Some(n) => tr!("diverge #{n}", n),
        None => tr!("never diverge").to_string(),
    };
    let (step, len) = (st.t + 1, st.timeline.len);
    let lefts = [
        tr!(
            " step {step}/{len} │ {variant} │ {phase} │ {diverge} ",
            step,
            len,
            variant = st.variant(),
            phase,
            diverge
        ),
        tr!(" step {step}/{len} │ {phase} ", step, len, phase),
        format!(" {step}/{len} "),
    ];
    if let Some(m) = &st.message {
        return bar::status(&lefts, &[format!(" {m}")], true, width);
    }
    let hints = [
        tr!(" n/p step · j/k iter · ]/[ phase · d divergence · Enter trace · t panel · ? keys · q back"),
        tr!(" n/p step · ]/[ phase · d divergence · Enter trace · ? keys"),
        tr!(" n/p · d divergence · ? keys"),
        tr!(" ? keys"),
    ]
    .map(String::from);
    bar::status(&lefts, &hints, false, width)
}

fn render_status(frame: &mut Frame, area: Rect, st: &SideBySide, t: Theme) {
    let lines = status_lines(st, area.width);
    let right = if st.message.is_some() {
        t.status().patch(t.key())
    } else {
        t.status()
    };
    bar::render_status(frame.buffer_mut(), area, &lines, t.status(), right);
}
