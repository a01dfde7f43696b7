//! Where the tracer's panels go at each terminal size, and how the screen is drawn: the header,
//! the panels, the tabs, the timeline and the status line. Draws from the state and never
//! mutates it.

use super::{Tab, Tracer};
use crate::tui::theme::Theme;
use crate::tui::widgets::{
    self, Ctx, code, equation, gradcheck as grad_panel, lesson as lesson_panel, log, memory, quiz as quiz_panel,
    timeline, variables,
};
use attn_trace_analysis::format::{pass_text, phase_title_of};
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

/// Where each panel goes. Panels that do not fit are `None` and reached through the tabs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Areas {
    pub header: Rect,
    pub code: Option<Rect>,
    pub vars: Option<Rect>,
    pub eq: Option<Rect>,
    pub memory: Option<Rect>,
    pub log: Option<Rect>,
    pub tabs: Option<Rect>,
    /// The gradient check, in the backward pass.
    pub grad: Option<Rect>,
    /// The quiz's question and feedback, in quiz mode.
    pub quiz: Option<Rect>,
    /// The timeline strip, one row above the status bar.
    pub timeline: Rect,
    pub status: Rect,
    /// The variables panel is itself a tab (very small screens).
    pub wide_vars: bool,
    /// The gradient check and the quiz are bordered panels (large screens), else bare rows.
    pub boxed: bool,
}

/// Rows a bordered paragraph of `lines` needs at `width` columns, wrapping included.
fn wrapped_height(lines: &[Line], width: u16) -> u16 {
    let w = width.saturating_sub(2).max(1) as usize;
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(w)).sum();
    rows as u16 + 2
}

pub(super) fn inner(r: Rect) -> Rect {
    ratatui::widgets::Block::bordered().inner(r)
}

pub(super) fn tab_labels(with_vars: bool) -> Vec<(Tab, String)> {
    Tab::ALL
        .iter()
        .enumerate()
        .filter(|&(_, &t)| with_vars || t != Tab::Vars)
        .map(|(k, &t)| (t, format!(" {} {} ", k + 1, t.name())))
        .collect()
}

/// Rows the lesson panel may take: in a border on large screens, bare below.
const LESSON_ROWS_BOXED: u16 = 9;
const LESSON_ROWS: u16 = 6;

/// The quiz panel's lines, in quiz mode; else the lesson panel's, in a lesson, fitted to the
/// screen `width` wide (`boxed`: in a border).
fn quiz_lines<'a>(st: &Tracer, t: Theme, width: u16, boxed: bool) -> Option<Vec<Line<'a>>> {
    if let Some(quiz) = st.quiz.as_ref() {
        return Some(quiz_panel::lines(quiz, st.question().as_ref(), t));
    }
    let run = st.lesson.as_ref()?;
    let (w, rows) = if boxed {
        (width.saturating_sub(2), LESSON_ROWS_BOXED - 2)
    } else {
        (width, LESSON_ROWS)
    };
    Some(lesson_panel::lines(run, &st.traced, st.variant, st.cursor, t, w, rows))
}

/// The gradient check's lines, in the backward pass of a traced scenario that can re-run its inputs.
fn grad_lines<'a>(st: &Tracer, ctx: &Ctx, wide: bool) -> Option<Vec<Line<'a>>> {
    (ctx.view.pass == Pass::Backward && st.traced.inputs.is_some()).then(|| grad_panel::lines(ctx, &st.checks, wide))
}

/// Large screens show every panel; from 80×24 the variables and equation stay in view and the
/// code, memory and log share the rest as tabs; below that everything is a tab. The gradient
/// check (backward) sits under the equation, the quiz above the timeline.
pub(crate) fn areas(area: Rect, st: &Tracer, ctx: &Ctx) -> Areas {
    let wide = area.width >= 110 && area.height >= 30;
    let quiz = quiz_lines(st, ctx.theme, area.width, wide);
    // a lesson's note gets a few more rows than a quiz question
    let (most_wide, most) = if st.quiz.is_none() && st.lesson.is_some() {
        (LESSON_ROWS_BOXED, LESSON_ROWS)
    } else {
        (7, 3)
    };
    let quiz_h = match &quiz {
        Some(l) if wide => (widgets::wrapped_rows(l, area.width.saturating_sub(2)) + 2).min(most_wide),
        Some(l) => widgets::wrapped_rows(l, area.width).min(most),
        None => 0,
    };
    let head_h = header_lines(st, ctx, area.width).len() as u16;
    let status_h = status_lines(st, ctx, area.width).len() as u16;
    let [header, body, quiz_area, timeline, status] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Fill(1),
        Constraint::Length(quiz_h),
        Constraint::Length(1),
        Constraint::Length(status_h),
    ])
    .areas(area);
    // the left column is wide enough for a whole `q_base = … = 10` line where possible
    let left_w = if wide {
        (area.width / 2).max(64).min(area.width - 40)
    } else {
        area.width
    };
    let vars_h = wrapped_height(&variables::lines(ctx), left_w);
    let eq_h = wrapped_height(&equation::lines(ctx), left_w);
    // below the large layout the quiz needs the rows more than the gradient check does
    let panel = st.quiz.is_some() || st.lesson.is_some();
    let grad = grad_lines(st, ctx, wide).filter(|_| wide || !panel);
    let grad_h = match &grad {
        // every line, the last (which reconciles the check with the write shown) above all,
        // within a third of the body
        Some(l) if wide => (widgets::wrapped_rows(l, left_w.saturating_sub(2)) + 2).min(9.max(body.height / 3)),
        Some(l) => widgets::wrapped_rows(l, left_w).min(2),
        None => 0,
    };
    let mut a = Areas {
        header,
        timeline,
        status,
        quiz: (quiz_h > 0).then_some(quiz_area),
        boxed: wide,
        ..Areas::default()
    };
    if wide {
        let [left, right] = Layout::horizontal([Constraint::Length(left_w), Constraint::Fill(1)]).areas(body);
        let [code, vars, eq, grad_area] = Layout::vertical([
            Constraint::Fill(1),
            Constraint::Length(vars_h),
            Constraint::Length(eq_h),
            Constraint::Length(grad_h),
        ])
        .areas(left);
        let [mem, log] = Layout::vertical([Constraint::Percentage(64), Constraint::Percentage(36)]).areas(right);
        a.code = Some(code);
        a.vars = Some(vars);
        a.eq = Some(eq);
        a.grad = (grad_h > 0).then_some(grad_area);
        a.memory = Some(mem);
        a.log = Some(log);
    } else if body.height >= vars_h.min(8) + 7 + if panel { 4 } else { 7 } && area.width >= 40 {
        // the variables tab (`4`) moves the variables from the top into the tab's room, where
        // they have every line they need
        let vars_tab = st.tab == Tab::Vars;
        let [vars, eq, grad_area, tabs, rest] = Layout::vertical([
            Constraint::Length(if vars_tab { 0 } else { vars_h.min(8) }),
            Constraint::Length(eq_h.min(6)),
            Constraint::Length(grad_h),
            Constraint::Length(1),
            Constraint::Fill(1),
        ])
        .areas(body);
        a.vars = Some(if vars_tab { rest } else { vars });
        a.eq = Some(eq);
        a.grad = (grad_h > 0).then_some(grad_area);
        a.tabs = Some(tabs);
        a.wide_vars = true;
        match st.tab {
            Tab::Code => a.code = Some(rest),
            Tab::Log => a.log = Some(rest),
            Tab::Memory => a.memory = Some(rest),
            Tab::Vars => {}
        }
    } else {
        let [tabs, rest] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(body);
        a.tabs = Some(tabs);
        a.wide_vars = true;
        match st.tab {
            Tab::Code => a.code = Some(rest),
            Tab::Log => a.log = Some(rest),
            Tab::Memory => a.memory = Some(rest),
            Tab::Vars => a.vars = Some(rest),
        }
    }
    a
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &Tracer, theme: Theme) {
    let Some(ctx) = st.ctx(theme) else {
        let text = tr!("{title}: this variant recorded no events", title = st.traced.title);
        frame.render_widget(Paragraph::new(text), area);
        return;
    };
    let a = areas(area, st, &ctx);
    let t = theme;
    // the title bold, the rest dim, over as many lines as it takes
    let title_len = st.traced.title.len() + 1;
    let header: Vec<Line> = header_lines(st, &ctx, area.width)
        .into_iter()
        .enumerate()
        .map(|(k, text)| {
            if k > 0 || text.len() < title_len || !text.is_char_boundary(title_len) {
                return Line::styled(text, t.dim());
            }
            let (head, rest) = text.split_at(title_len);
            Line::from(vec![
                Span::styled(head.to_string(), t.title()),
                Span::styled(rest.to_string(), t.dim()),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(header), a.header);
    if let Some(r) = a.code {
        code::render(frame, r, &ctx, false);
    }
    if let Some(r) = a.vars {
        variables::render(frame, r, &ctx, false);
    }
    if let Some(r) = a.eq {
        equation::render(frame, r, &ctx, false);
    }
    if let Some(r) = a.memory {
        memory::render(frame, r, &ctx, st.select);
    }
    if let Some(r) = a.log {
        // in quiz mode the log does not give the next access away
        let shown = ctx.quiz.then_some(ctx.cursor);
        log::render_until(frame, r, &ctx, false, shown);
    }
    if let (Some(r), Some(lines)) = (a.grad, grad_lines(st, &ctx, a.boxed)) {
        let title = tr!(" Gradient check · L = Σ out ⊙ d_out ");
        boxed_text(frame, r, a.boxed.then_some((title, t.border(false))), &lines);
    }
    if let (Some(r), Some(lines)) = (a.quiz, quiz_lines(st, t, area.width, a.boxed)) {
        let title = match &st.lesson {
            Some(run) if st.quiz.is_none() => {
                tr!(
                    " Lesson · {title} · N next stop · P previous · R back to the stop ",
                    title = run.lesson.title
                )
            }
            _ => tr!(" Quiz · Enter check · v reveal · n skip · l level · Q stop ").to_string(),
        };
        boxed_text(frame, r, a.boxed.then_some((&title, t.border(true))), &lines);
    }
    if let Some(r) = a.tabs {
        let mut spans = Vec::new();
        let shown = if !a.wide_vars && st.tab == Tab::Vars {
            Tab::Memory
        } else {
            st.tab
        };
        for (tab, label) in tab_labels(a.wide_vars) {
            spans.push(Span::styled(label, if tab == shown { t.cursor() } else { t.dim() }));
        }
        let used: usize = spans.iter().map(Span::width).sum();
        let more = tr!("  t: next tab");
        if used + widgets::cols(more) <= r.width as usize {
            spans.push(Span::styled(more, t.dim()));
        }
        frame.render_widget(Paragraph::new(Line::from(spans)), r);
    }
    let cols = timeline::strip(
        ctx.trace,
        a.timeline.width as usize,
        ctx.cursor,
        Some(ctx.selected),
        ctx.breakpoints,
        ctx.cache,
    );
    timeline::render(frame.buffer_mut(), a.timeline, ctx.trace, &cols, t);
    render_status(frame, a.status, st, &ctx);
}

/// `lines` word-wrapped into `area`, in a titled border when one is given.
fn boxed_text(frame: &mut Frame, area: Rect, border: Option<(&str, ratatui::style::Style)>, lines: &[Line]) {
    let inner = match border {
        Some((title, style)) => {
            let block = Block::bordered().title(title).border_style(style);
            let inner = block.inner(area);
            frame.render_widget(block, area);
            inner
        }
        None => area,
    };
    widgets::draw_wrapped(frame.buffer_mut(), inner, lines);
}

/// The header: the scenario's title, the kernel, the pass and what the phase computes, as much
/// of it as fits (the kernel and pass are in the status line too).
fn header_lines(st: &Tracer, ctx: &Ctx, width: u16) -> Vec<String> {
    let v = &ctx.view;
    let title = &st.traced.title;
    let what = phase_title_of(v.phase, &st.traced.mask, st.variant);
    let choices = [
        format!(" {title} · {} · {} · {what}", st.variant, pass_text(v.pass)),
        format!(" {title} · {what}"),
        format!(" {title} · {}", v.phase.name()),
        format!(" {title}"),
    ];
    widgets::bar::header(&choices, width)
}

/// The status line: where the cursor is, then the goto prompt, a message, or the keys, as much
/// of them as fits; a message goes on the next line rather than be cut.
fn status_lines(st: &Tracer, ctx: &Ctx, width: u16) -> Vec<(String, String)> {
    let (n, len) = (ctx.cursor, ctx.trace.len());
    let (variant, pass, phase) = (st.variant, pass_text(ctx.view.pass), ctx.view.phase.name());
    let lefts = [
        format!(" #{n}/{len} │ {variant} │ {pass} │ {phase} "),
        format!(" #{n}/{len} │ {phase} "),
        format!(" #{n} "),
    ];
    if let Some(p) = &st.prompt {
        let rights = [
            tr!(" goto: {p}▏ (123 · b=0 h=1 i=2 j=1 · scores[16] · Enter/Esc)", p),
            tr!(" goto: {p}▏ (123 · b=0 h=1 i=2 j=1 · scores[16])", p),
            tr!(" goto: {p}▏", p),
        ];
        return widgets::bar::status(&lefts, &rights, true, width);
    }
    if let Some(m) = &st.message {
        return widgets::bar::status(&lefts, &[format!(" {m}")], true, width);
    }
    if let Some(q) = &st.quiz {
        // the score of the phase the next access is in
        let next = (ctx.cursor + 1).min(ctx.trace.len().saturating_sub(1));
        let span = ctx.trace.phase_span(next);
        let phase = ctx.trace.phases.get(span).map_or("", |&(_, p)| p.name());
        let score = q
            .scores
            .get(&(st.variant, span))
            .map_or("0/0".into(), crate::tui::quiz::Score::short);
        let level = q.level.name();
        let rights = [
            tr!(
                " quiz {level} · {phase} {score} · v reveal · n skip · l level · Q stop",
                level,
                phase,
                score
            ),
            tr!(
                " quiz {level} · {phase} {score} · v reveal · n skip · Q stop",
                level,
                phase,
                score
            ),
            tr!(" quiz {phase} {score} · ? keys", phase, score),
        ];
        // the phase is in the score: below the widest, the position is the one to shorten
        let whole = widgets::cols(&lefts[0]) + widgets::cols(&rights[0]) <= width as usize;
        return widgets::bar::status(if whole { &lefts } else { &lefts[1..] }, &rights, true, width);
    }
    if st.lesson.is_some() {
        let hints = [
            tr!(
                " N/P next/previous stop · R back to the stop · n/p step · ]/[ phase · g goto · S save screen · ? keys"
            ),
            tr!(" N/P stop · R back · n/p step · g goto · ? keys"),
            tr!(" N/P stop · R back · ? keys"),
            tr!(" ? keys"),
        ]
        .map(String::from);
        return widgets::bar::status(&lefts, &hints, false, width);
    }
    let hints = [
        tr!(
            " n/p step · j/k iter · J/K outer · ]/[ phase · g goto · w/r who · b/c break · f pass · Tab kernel · ? keys"
        ),
        tr!(" n/p step · j/k iter · ]/[ phase · g goto · w/r · b/c · f · Tab · ? keys"),
        tr!(" n/p step · j/k iter · ]/[ phase · g goto · ? keys"),
        tr!(" n/p · j/k · ]/[ · g · ? keys"),
        tr!(" ? keys"),
    ]
    .map(String::from);
    widgets::bar::status(&lefts, &hints, false, width)
}

fn render_status(frame: &mut Frame, area: Rect, st: &Tracer, ctx: &Ctx) {
    let t = ctx.theme;
    let lines = status_lines(st, ctx, area.width);
    let right = if st.prompt.is_some() || st.message.is_some() || st.quiz.is_some() {
        t.status().patch(t.key())
    } else {
        t.status()
    };
    widgets::bar::render_status(frame.buffer_mut(), area, &lines, t.status(), right);
}
