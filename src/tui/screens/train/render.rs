//! How "Train TinyGPT" is drawn: the form with each field's hint or error, or the run with its
//! loss chart, progress, gauge and sample. Draws from the state and never mutates it.

use super::Train;
use super::form::Field;
use super::progress::{RunState, RunView};
use super::worker::Sample;
use crate::tui::theme::Theme;
use crate::tui::widgets::{cols, cut_start, pad};
use attn_trace_analysis::format::thousands;
use attn_trace_i18n::tr;
use attn_trace_model::BUILTIN;
use attn_trace_model::gpt::Attention;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout as Split, Rect};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset as Series, Gauge, GraphType, Paragraph, Wrap};

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &Train, theme: Theme) {
    match &st.session {
        None => render_form(frame, area, st, theme),
        Some(s) => render_run(frame, area, st, &s.progress, theme),
    }
}

fn render_form(frame: &mut Frame, area: Rect, st: &Train, theme: Theme) {
    let t = theme;
    let form = &st.form;
    let checked = &form.checked;
    let inner_w = area.width.saturating_sub(2) as usize;
    // the labels' column, as wide as the widest label in the language in use (`键/值头数` is 9)
    let label_w = Field::ALL.iter().map(|f| cols(f.label())).max().unwrap_or(0).max(8);
    let value_w = form
        .values
        .iter()
        .map(|v| cols(v))
        .max()
        .unwrap_or(0)
        .clamp(12, inner_w.saturating_sub(3 + label_w + 1 + 2 + 24).clamp(12, 36));
    // a hint (or an error) too long for the room beside the values goes on under it, aligned
    let hint_x = 3 + label_w + 1 + value_w + 1 + 2;
    let hint_w = inner_w.saturating_sub(hint_x).max(12);
    let mut lines = Vec::new();
    for (k, f) in Field::ALL.iter().enumerate() {
        let focused = k == form.focus;
        let value = form.value(*f);
        let shown: String = if cols(value) > value_w {
            // the end of a long path is the part that tells files apart
            format!("…{}", cut_start(value, value_w - 1))
        } else {
            value.to_string()
        };
        let cursor = if focused { "▏" } else { " " };
        let mut spans = vec![
            Span::styled(if focused { " ▸ " } else { "   " }, t.key()),
            Span::styled(
                format!("{} ", pad(f.label(), label_w)),
                if focused { t.title() } else { t.base() },
            ),
            Span::styled(
                format!("{shown}{cursor}{}", " ".repeat(value_w.saturating_sub(cols(&shown)))),
                if focused { t.cursor() } else { t.number() },
            ),
            Span::raw("  "),
        ];
        let (hint, style) = match (&checked.errors[k], &checked.new_dir) {
            (Some(e), _) => (format!("✗ {e}"), t.error()),
            (None, Some(dir)) if *f == Field::Save => (
                tr!(
                    "s saves here, e exports layers beside it ({dir}/ is made then)",
                    dir = dir.display()
                ),
                t.dim(),
            ),
            (None, _) => (f.hint().to_string(), t.dim()),
        };
        for (n, part) in crate::tui::widgets::wrap(&hint, hint_w).into_iter().enumerate() {
            if n == 0 {
                spans.push(Span::styled(part, style));
                lines.push(Line::from(std::mem::take(&mut spans)));
            } else {
                lines.push(Line::from(vec![
                    Span::raw(" ".repeat(hint_x)),
                    Span::styled(part, style),
                ]));
            }
        }
        if !spans.is_empty() {
            lines.push(Line::from(spans));
        }
    }
    // a blank line above the Start button when the form leaves room for the two lines about
    // the data and the model under it: the fields, the blank, Start, 2 borders, the title, 2
    // lines about and the status (at 24 rows there is no room for it)
    if area.height as usize >= lines.len() + 8 {
        lines.push(Line::from(""));
    }
    let start_focused = form.focus == Field::ALL.len();
    let ready = checked.spec.is_some();
    lines.push(Line::from(vec![
        Span::raw("   "),
        Span::styled(
            tr!(" Start training "),
            if start_focused {
                t.cursor()
            } else if ready {
                t.key()
            } else {
                t.dim()
            },
        ),
        Span::styled(
            if ready {
                tr!("  Enter starts")
            } else {
                tr!("  fix the fields marked ✗")
            },
            t.dim(),
        ),
    ]));
    let rows = lines.len() as u16 + 2;
    let [head, body, about, status] = Split::vertical([
        Constraint::Length(1),
        Constraint::Length(rows),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(tr!(" Train TinyGPT "), t.title()),
            Span::styled(
                tr!("· a byte-level GPT whose attention runs on the traced kernels"),
                t.dim(),
            ),
        ])),
        head,
    );
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(tr!(" configuration "))
                .border_style(t.border(true)),
        ),
        body,
    );
    let mut info = Vec::new();
    if let Some((_, about)) = BUILTIN.iter().find(|(n, _)| *n == form.value(Field::Dataset).trim()) {
        info.push(Line::from(vec![
            Span::styled(tr!(" data: "), t.dim()),
            Span::raw(attn_trace_i18n::text(about)),
        ]));
    }
    if let Some(p) = checked.params {
        let mut text = tr!(" {n} parameters", n = thousands(p as u64));
        if let Some(spec) = &checked.spec {
            text.push_str(&tr!(
                " · {tokens} tokens per step · {heads} heads of D = {d}",
                tokens = spec.batch * spec.config.seq_len,
                heads = spec.config.n_heads,
                d = spec.config.d_model / spec.config.n_heads
            ));
            // grouped heads: how many key/value heads the query heads share
            let (h, kv) = (spec.config.n_heads, spec.config.kv_heads());
            if kv != h {
                text.push_str(&tr!(" · {kv} of {h} k/v heads", kv, h));
            }
        }
        info.push(Line::styled(text, t.dim()));
    }
    frame.render_widget(Paragraph::new(info).wrap(Wrap { trim: false }), about);
    let hints = tr!(" ↑/↓ field · type to edit · Delete clears · ←/→ choose · Enter start · Esc back");
    let line = match &st.message {
        Some(m) => Line::styled(format!(" {m}"), t.status().patch(t.key())),
        None => Line::styled(hints, t.status()),
    };
    frame.render_widget(Paragraph::new(line).style(t.status()), status);
}

fn render_run(frame: &mut Frame, area: Rect, st: &Train, p: &RunView, theme: Theme) {
    let t = theme;
    let spec = &p.spec;
    let c = &spec.config;
    let sample_h = if area.height >= 30 { 9 } else { 6 };
    let [head, top, gauge, sample, status] = Split::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Length(sample_h),
        Constraint::Length(1),
    ])
    .areas(area);
    let state = match &p.state {
        RunState::Starting => tr!("starting").to_string(),
        RunState::Running => tr!("running").to_string(),
        RunState::Paused => tr!("paused").to_string(),
        RunState::Finished { stopped: false } => tr!("finished in {time}", time = duration(p.seconds)),
        RunState::Finished { stopped: true } => tr!("stopped at step {step}", step = p.step),
        RunState::Failed(_) => tr!("failed").to_string(),
    };
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(tr!(" Train TinyGPT "), t.title()),
            Span::styled(
                format!(
                    "· {} · L{} C{} H{}{} T{} B{} lr {} · ",
                    spec.source.label(),
                    c.n_layers,
                    c.d_model,
                    c.n_heads,
                    attention_label(c, spec.attention),
                    c.seq_len,
                    spec.batch,
                    spec.lr
                ),
                t.dim(),
            ),
            Span::styled(state, t.key()),
        ])),
        head,
    );
    let stats_w = 28.min(top.width / 2);
    let [chart_area, stats_area] = Split::horizontal([Constraint::Fill(1), Constraint::Length(stats_w)]).areas(top);
    if let RunState::Failed(e) = &p.state {
        frame.render_widget(
            Paragraph::new(Line::styled(e.clone(), t.error()))
                .wrap(Wrap { trim: false })
                .block(Block::bordered().title(tr!(" training failed "))),
            chart_area,
        );
    } else {
        render_chart(frame, chart_area, st, p, t);
    }
    render_stats(frame, stats_area, p, t);
    let ratio = if spec.steps == 0 {
        0.0
    } else {
        (p.step as f64 / spec.steps as f64).clamp(0.0, 1.0)
    };
    frame.render_widget(
        Gauge::default()
            .ratio(ratio)
            .label(tr!(
                "step {step}/{steps} · {pct}%",
                step = p.step,
                steps = spec.steps,
                pct = format!("{:.0}", ratio * 100.0)
            ))
            .gauge_style(t.title())
            .use_unicode(true),
        gauge,
    );
    render_sample(frame, sample, p, t);
    let hints = match &p.state {
        RunState::Running | RunState::Starting => {
            tr!(
                " space pause · s save → {path} · x stop · t trace · l log · q back",
                path = spec.save.display()
            )
        }
        RunState::Paused => {
            tr!(
                " space resume · s save → {path} · x stop · t trace · l log · q back",
                path = spec.save.display()
            )
        }
        RunState::Finished { .. } => {
            tr!(
                " s save → {path} · t trace · l log · n new run · q back",
                path = spec.save.display()
            )
        }
        RunState::Failed(_) => tr!(" n new run · q back").to_string(),
    };
    let line = match &st.message {
        Some(m) => Line::styled(format!(" {m}"), t.status().patch(t.key())),
        None => Line::styled(hints, t.status()),
    };
    frame.render_widget(Paragraph::new(line).style(t.status()), status);
}

fn render_chart(frame: &mut Frame, area: Rect, st: &Train, p: &RunView, t: Theme) {
    // two braille dots per column: more points than that would not show
    let data = p.chart(st.log_scale, (area.width as usize).saturating_sub(8).max(1) * 2);
    let steps = p.spec.steps.max(1) as f64;
    let label = |y: f64| {
        let loss = if st.log_scale { y.exp() } else { y };
        format!("{loss:.2}")
    };
    let [lo, hi] = data.y_range;
    let y_labels = vec![label(lo), label((lo + hi) / 2.0), label(hi)];
    let x_labels = vec![
        "0".to_string(),
        format!("{}", p.spec.steps / 2),
        format!("{}", p.spec.steps),
    ];
    let series = vec![
        Series::default()
            .name(tr!("loss"))
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(t.name())
            .data(&data.train),
        Series::default()
            .name(tr!("val"))
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(t.number())
            .data(&data.val),
    ];
    let title = if st.log_scale {
        tr!(" loss (log scale · l linear) ")
    } else {
        tr!(" loss (l: log scale) ")
    };
    let chart = Chart::new(series)
        .block(Block::bordered().title(title).border_style(t.border(false)))
        .x_axis(Axis::default().bounds([0.0, steps]).labels(x_labels).style(t.dim()))
        .y_axis(Axis::default().bounds(data.y_range).labels(y_labels).style(t.dim()));
    frame.render_widget(chart, area);
}

fn render_stats(frame: &mut Frame, area: Rect, p: &RunView, t: Theme) {
    let num = |v: Option<f32>| v.map_or("–".to_string(), |v| format!("{v:.4}"));
    let row = |k: &str, v: String| Line::from(vec![Span::styled(pad(k, 9), t.dim()), Span::styled(v, t.number())]);
    let mut lines = vec![
        row(tr!("step"), format!("{}/{}", p.step, p.spec.steps)),
        row(tr!("loss"), num(p.recent_loss(20))),
        row(tr!("val loss"), num(p.val.last().map(|v| v.1))),
        row(
            tr!("tokens/s"),
            p.tokens_per_s().map_or("–".into(), |r| thousands(r.round() as u64)),
        ),
        row(
            tr!("ETA"),
            match p.state {
                RunState::Finished { .. } => tr!("done").into(),
                _ => p.eta().map_or("–".into(), duration),
            },
        ),
        row(tr!("time"), duration(p.seconds)),
    ];
    if let Some(n) = p.params {
        lines.push(row(tr!("params"), thousands(n as u64)));
    }
    if let Some((path, step)) = &p.saved {
        lines.push(Line::styled(tr!("saved step {step}:", step), t.dim()));
        lines.push(Line::raw(path.display().to_string()));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(tr!(" progress ")).border_style(t.border(false))),
        area,
    );
}

fn render_sample(frame: &mut Frame, area: Rect, p: &RunView, t: Theme) {
    let (title, lines) = match &p.sample {
        None => (
            tr!(" sample ").to_string(),
            vec![Line::styled(tr!("(the first sample comes after a few steps)"), t.dim())],
        ),
        Some((step, Sample::Task { lines, correct, of })) => {
            let mut out: Vec<Line> = lines
                .iter()
                .map(|l| {
                    let ok = l.got == l.want;
                    let mut spans = vec![
                        Span::raw(format!("{}|", l.input)),
                        Span::styled(l.got.clone(), if ok { t.number() } else { t.error() }),
                        Span::styled(if ok { "  ✓" } else { "  ✗" }, if ok { t.key() } else { t.error() }),
                    ];
                    if !ok {
                        spans.push(Span::styled(tr!("  (want {want})", want = l.want), t.dim()));
                    }
                    Line::from(spans)
                })
                .collect();
            out.push(Line::styled(
                tr!(
                    "exact answers: {correct} of the first {of} validation lines",
                    correct,
                    of
                ),
                t.title(),
            ));
            (tr!(" sample at step {step} (greedy) ", step), out)
        }
        Some((step, Sample::Text { prompt, text })) => {
            let mut out = vec![Line::styled(
                tr!("after {prompt}:", prompt = format!("{prompt:?}")),
                t.dim(),
            )];
            out.extend(text.split('\n').map(|l| Line::raw(l.to_string())));
            (tr!(" sample at step {step} (temperature 0.8) ", step), out)
        }
    };
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(title).border_style(t.border(false))),
        area,
    );
}

/// The header's note of grouped key/value heads, rotary positions and the flash kernel, when the
/// run has them: ` kv2 rope` or ` flash` (empty for plain multi-head attention on the naive
/// kernels), short enough that the run's state still fits at 80 columns.
fn attention_label(c: &attn_trace_model::Config, attention: Attention) -> String {
    let mut label = String::new();
    if c.kv_heads() != c.n_heads {
        label.push_str(&format!(" kv{}", c.kv_heads()));
    }
    if c.rope.is_some() {
        label.push_str(" rope");
    }
    // a sliding window of W, and its sinks: `W8+1`
    match c.sliding {
        Some(s) if s.sinks > 0 => label.push_str(&format!(" W{}+{}", s.w, s.sinks)),
        Some(s) => label.push_str(&format!(" W{}", s.w)),
        None => {}
    }
    if let Attention::Flash(_) = attention {
        label.push_str(" flash");
    }
    label
}

/// `1:05`, `12 s`.
fn duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 60 {
        format!("{}:{:02}", s / 60, s % 60)
    } else {
        tr!("{s} s", s)
    }
}
