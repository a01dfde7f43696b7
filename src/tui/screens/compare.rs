//! Two kernels side by side on the same input, phase by phase: baseline and MHA (where the same
//! (i, j) lives in each layout, the two scales, and how H probability rows replace one); for a
//! scenario that traces grouped-query attention, MHA and GQA (which key/value head each query
//! head reads, and the memory the shared heads save); for one that traces FlashAttention, MHA
//! and flash (the same `P[i,j]` stored by one and never stored by the other, and the global
//! traffic of each: see [`flash`]).

pub(crate) mod flash;

use crate::tui::theme::Theme;
use crate::tui::traced_scenario::{Element, TracedScenario};
use crate::tui::widgets::{bar, num, put};
use attn_trace_analysis::accum::Scale;
use attn_trace_analysis::format::phase_title;
use attn_trace_analysis::formula::{sizes, substitute};
use attn_trace_analysis::hand::{Calc, Digits};
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Buf, BufferInfo, Phase, Trace};
use attn_trace_i18n::{msg, tr};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};
use std::sync::Arc;

/// Compare's keys, for its `?` overlay.
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("]  n  /  [  p", msg!("next / previous phase")),
    ("←  /  →", msg!("key j − 1 / + 1")),
    ("↑  /  ↓", msg!("query i − 1 / + 1")),
    ("h, Tab", msg!("next head")),
    ("b", msg!("next batch item")),
    ("PgDn  /  PgUp", msg!("scroll the notes when they do not fit")),
    (
        "Enter",
        msg!("open the tracer (MHA) at the event that writes this element"),
    ),
    ("?", msg!("these keys")),
    ("Esc  /  q", msg!("back")),
];

/// The phases where the two kernels differ, with the buffer each shows.
const PHASES: [(Phase, Buf); 6] = [
    (Phase::Scores, Buf::Scores),
    (Phase::Softmax, Buf::Probs),
    (Phase::WeightedSum, Buf::Att),
    (Phase::WeightedSumBack, Buf::DProbs),
    (Phase::SoftmaxBack, Buf::DScores),
    (Phase::ScoresBack, Buf::DQ),
];

#[derive(Debug)]
pub(crate) struct Compare {
    pub traced: Arc<TracedScenario>,
    /// Index into the phases both traces have.
    pub phase: usize,
    pub element: Element,
    /// First line of the notes shown, when they are longer than their panel.
    pub scroll: usize,
    /// MHA beside flash: the element's events in flash's log and both runs' traffic, found
    /// once per element rather than on every frame.
    pub flash: Option<flash::Facts>,
}

/// What the app should do after a key.
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    Stay,
    Back,
    Help,
    /// Open the tracer on this variant at this event.
    Trace(Variant, usize),
}

impl Compare {
    pub(crate) fn new(traced: Arc<TracedScenario>) -> Compare {
        let element = match traced.focus {
            Some(f) => f.2,
            None => Element {
                b: 0,
                h: traced.shape.h.saturating_sub(1),
                i: traced.shape.s.saturating_sub(1),
                j: 0,
            },
        };
        let mut compare = Compare {
            traced,
            phase: 0,
            element,
            scroll: 0,
            flash: None,
        };
        compare.refresh();
        compare
    }

    /// The two kernels compared, left and right.
    pub(crate) fn pair(&self) -> (Variant, Variant) {
        pair_of(&self.traced)
    }

    /// Phases recorded by both variants. MHA beside flash has two: softmax (where MHA stores
    /// `P`, and flash's forward loop folds it into `m`, `l` and `acc`) and softmax backward
    /// (MHA's stored `dS`, flash's recomputed one).
    pub(crate) fn phases(&self) -> Vec<(Phase, Buf)> {
        let (left, right) = self.pair();
        let (Some(a), Some(b)) = (self.traced.trace(left), self.traced.trace(right)) else {
            return Vec::new();
        };
        let has = |t: &Trace, p: Phase| t.phases.iter().any(|&(s, q)| q == p && (s as usize) < t.len());
        if right.desc().tiled {
            return flash::PHASES
                .iter()
                .filter(|&&(p, _, f)| has(a, p) && has(b, f))
                .map(|&(p, buf, _)| (p, buf))
                .collect();
        }
        PHASES
            .iter()
            .copied()
            .filter(|&(p, _)| has(a, p) && has(b, p))
            .collect()
    }

    /// Puts the element at `e` (a pair of the scores' shape).
    #[cfg(test)]
    pub(crate) fn set_element(&mut self, e: Element) {
        self.element = e;
        self.refresh();
    }

    /// Finds again what depends on the element (flash's events of the pair).
    fn refresh(&mut self) {
        if self.pair().1.desc().tiled {
            let traffic = self.flash.take().map(|f| f.traffic);
            self.flash = flash::Facts::new(&self.traced, self.element, traffic);
        }
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        let sh = self.traced.shape;
        let n = self.phases().len();
        let before = self.element;
        let e = &mut self.element;
        match key.code {
            KeyCode::Char(']' | 'n') if n > 0 => {
                self.phase = (self.phase + 1) % n;
                self.scroll = 0;
            }
            KeyCode::Char('[' | 'p') if n > 0 => {
                self.phase = (self.phase + n - 1) % n;
                self.scroll = 0;
            }
            // render keeps the last page in view
            KeyCode::PageDown => self.scroll += 5,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(5),
            KeyCode::Left => e.j = e.j.saturating_sub(1),
            KeyCode::Right => e.j = (e.j + 1).min(sh.t - 1),
            KeyCode::Up => e.i = e.i.saturating_sub(1),
            KeyCode::Down => e.i = (e.i + 1).min(sh.s - 1),
            KeyCode::Char('h') | KeyCode::Tab => e.h = (e.h + 1) % sh.h.max(1),
            KeyCode::Char('b') => e.b = (e.b + 1) % sh.b.max(1),
            KeyCode::Enter => {
                let right = self.pair().1;
                if let Some((phase, _)) = self.phases().get(self.phase)
                    && let Some(n) = self.event_of(right, *phase)
                {
                    return Outcome::Trace(right, n);
                }
            }
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Back,
            _ => {}
        }
        // what flash's side shows depends on the element only, not on the phase
        if self.element != before {
            self.refresh();
        }
        Outcome::Stay
    }

    /// The event in `phase` of `variant` that writes the element's cell its final value there
    /// (the normalised probability, not softmax's intermediate exponential), or the phase's first.
    pub(crate) fn event_of(&self, variant: Variant, phase: Phase) -> Option<usize> {
        if variant.desc().tiled {
            return self.flash.as_ref()?.event_of(phase, self.traced.trace(variant)?);
        }
        let trace = self.traced.trace(variant)?;
        let k = trace.phases.iter().position(|&(_, p)| p == phase)?;
        let range = trace.span_range(k);
        let buf = PHASES.iter().find(|(p, _)| *p == phase)?.1;
        let off = self.offset(variant, buf)?;
        Some(
            trace
                .index
                .last_write_in(buf, off, range.clone())
                .unwrap_or(range.start),
        )
    }

    /// Flat offset of the element in `buf`, from the variant's registry layout: the score cell,
    /// or the first channel of query row i (of head h) for the `[B,S,C]` buffers.
    fn offset(&self, variant: Variant, buf: Buf) -> Option<usize> {
        let e = self.element;
        let layout = self.traced.run(variant)?.registry.layout(buf)?;
        if layout.is_pairs() {
            return self.traced.score_offset(variant, e);
        }
        let h = e.in_heads_of(variant).h;
        layout.offset_of(&[("b", e.b), ("i", e.i), ("h", h)])
    }
}

/// The two kernels a scenario's Compare puts side by side, left and right: MHA and GQA, or MHA
/// and flash, when both are traced; else the baseline and MHA.
pub(crate) fn pair_of(traced: &TracedScenario) -> (Variant, Variant) {
    let has_run = |v| traced.trace(v).is_some();
    // the newest kernel first: GQA beside MHA, then flash beside MHA, then MHA beside the baseline
    Variant::ALL
        .iter()
        .rev()
        .filter_map(|&right| right.desc().compare.map(|left| (left, right)))
        .find(|&(left, right)| has_run(left) && has_run(right))
        .unwrap_or((Variant::Baseline, Variant::Mha))
}

/// The menu's words for Compare on this scenario: `Compare baseline and MHA`.
pub(crate) fn menu_label(traced: &TracedScenario) -> String {
    let (left, right) = pair_of(traced);
    tr!(
        "Compare {left} and {right}",
        left = title_name(left),
        right = title_name(right)
    )
}

/// The notes under the two sides for `phase` (whose element is stored in `buf`): how each
/// kernel reaches the element, with the logs' numbers.
pub(crate) fn notes<'a>(st: &Compare, phase: Phase, buf: Buf) -> Vec<Line<'a>> {
    if st.pair().1.desc().tiled {
        flash::notes(st, phase)
    } else {
        explain(st, phase, buf)
    }
}

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
    let what = if flash {
        flash::stage_title(phase)
    } else {
        phase_title(phase, &st.traced.mask)
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
            what,
            element
        ),
        format!("{title} · {what} · {element}"),
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
fn title_name(v: Variant) -> String {
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
fn window(len: usize, count: usize, at: usize) -> std::ops::Range<usize> {
    let count = count.min(len);
    let start = at.saturating_sub(count / 2).min(len - count);
    start..start + count
}

/// MHA beside GQA: which key/value head each query head reads, the element's key offset in
/// both layouts, the memory of k and v, and whether the two `out` agree, all from the logs.
#[allow(non_snake_case)]
fn grouped_notes<'a>(st: &Compare, phase: Phase) -> Vec<Line<'a>> {
    let traced = &st.traced;
    let sh = traced.shape;
    let e = st.element;
    let (H, H_kv, D) = (sh.h, sh.h_kv, sh.d());
    let kv_h = e.h / (H / H_kv);
    let mut lines = vec![Line::from(tr!(
        "query head h={h}: mha reads k head {h}; gqa reads kv_h = h/(H/H_kv) = {h}/({H}/{H_kv}) = {kv_h}, shared by heads {first}..={last}",
        h = e.h,
        H,
        H_kv,
        kv_h,
        first = kv_h * (H / H_kv),
        last = kv_h * (H / H_kv) + H / H_kv - 1
    ))];
    let mut symbols = sizes(Variant::Mha.kv_shape(sh), phase);
    symbols.extend([("bb", e.b), ("hh", e.h), ("i", e.i), ("j", e.j)]);
    let mut grouped = sizes(sh, phase);
    grouped.extend([("bb", e.b), ("hh", e.h), ("i", e.i), ("j", e.j), ("kv_h", kv_h)]);
    if let (Some(m), Some(g)) = (
        substitute("attention_mha.rs", "k_base", &symbols),
        substitute("attention_gqa.rs", "k_base", &grouped),
    ) {
        for (name, s) in [("mha", m), ("gqa", g)] {
            lines.push(Line::from(tr!(
                "key j={j} in {name}: k[{first}..={last}], k_base = {formula} = {numbers}",
                j = e.j,
                name,
                first = s.value,
                last = s.value + D - 1,
                formula = s.formula,
                numbers = s.numbers
            )));
        }
    }
    let size = |v: Variant, buf: Buf| {
        traced
            .run(v)
            .and_then(|r| r.registry.get(buf))
            .map_or(0, attn_trace_core::tensor::Spec::len)
    };
    let (km, kg) = (size(Variant::Mha, Buf::K), size(Variant::Gqa, Buf::K));
    if let Some(pct) = (100 * kg).checked_div(km) {
        lines.push(Line::from(tr!(
            "k and v: mha 2 × {km} values, gqa 2 × {kg} (H_kv/H = {H_kv}/{H}): {pct}% of MHA's, what a KV cache keeps per layer",
            km,
            kg,
            H_kv,
            H,
            pct
        )));
    }
    let (wm, wg) = (size(Variant::Mha, Buf::WQkv), size(Variant::Gqa, Buf::WQkv));
    if wm > 0 {
        lines.push(Line::from(tr!(
            "w_qkv: mha [C, 3C] = {wm} weights, gqa [C, C + 2·H_kv·D] = {wg}",
            wm,
            wg
        )));
    }
    // the two outputs, as the logs leave them
    let out = |v: Variant| -> Option<Vec<u32>> {
        let t = traced.trace(v)?;
        let n = t.buffer(Buf::Out)?.len();
        let last = t.len().checked_sub(1)?;
        Some((0..n).map(|o| t.value_at(Buf::Out, o, last).to_bits()).collect())
    };
    if let (Some(a), Some(b)) = (out(Variant::Mha), out(Variant::Gqa)) {
        lines.push(Line::from(if a == b {
            tr!("out: identical, bit for bit: MHA here is GQA with the heads of each group tied").to_string()
        } else {
            tr!(
                "out: {n} of {total} values differ",
                n = a.iter().zip(&b).filter(|(x, y)| x != y).count(),
                total = a.len()
            )
        }));
    }
    lines
}

#[allow(non_snake_case)]
fn explain<'a>(st: &Compare, phase: Phase, buf: Buf) -> Vec<Line<'a>> {
    if st.pair() == (Variant::Mha, Variant::Gqa) {
        return grouped_notes(st, phase);
    }
    let traced = &st.traced;
    let sh = traced.shape;
    let e = st.element;
    let mut lines = Vec::new();
    let mut symbols = sizes(sh, phase);
    symbols.extend([("bb", e.b), ("hh", e.h), ("i", e.i), ("j", e.j)]);
    let mut base_symbols = sizes(sh.single_head(), phase);
    base_symbols.extend([("bb", e.b), ("hh", 0), ("i", e.i), ("j", e.j)]);
    if matches!(buf, Buf::Scores | Buf::Probs | Buf::DScores | Buf::DProbs) {
        if let Some(s) = substitute("attention_1h.rs", "off", &base_symbols) {
            lines.push(Line::from(tr!(
                "baseline {buf}[{b},{i},{j}] at data[{off}]: off = {formula} = {numbers}",
                buf,
                b = e.b,
                i = e.i,
                j = e.j,
                off = s.value,
                formula = s.formula,
                numbers = s.numbers
            )));
        }
        if let Some(s) = substitute("attention_mha.rs", "off", &symbols) {
            lines.push(Line::from(tr!(
                "mha head {h} {buf}[{b},{h},{i},{j}] at data[{off}]: off = {formula} = {numbers}",
                h = e.h,
                buf,
                b = e.b,
                i = e.i,
                j = e.j,
                off = s.value,
                formula = s.formula,
                numbers = s.numbers
            )));
        }
    } else {
        // the row's start as each kernel names it: qi / q_base for the queries (and d_q), ai /
        // a_base for the weighted sum's output
        let (base, head) = if phase == Phase::WeightedSum {
            ("ai", "a_base")
        } else {
            ("qi", "q_base")
        };
        if let (Some(a), Some(q)) = (
            substitute("attention_1h.rs", base, &base_symbols),
            substitute("attention_mha.rs", head, &symbols),
        ) {
            lines.push(Line::from(tr!(
                "baseline row i={i}: data[{first}..={last}] ({base} = {formula} = {numbers})",
                i = e.i,
                first = a.value,
                last = a.value + sh.c - 1,
                base,
                formula = a.formula,
                numbers = a.numbers
            )));
            lines.push(Line::from(tr!(
                "mha head {h} of row i={i}: data[{first}..={last}] ({head} = {formula} = {numbers})",
                h = e.h,
                i = e.i,
                first = q.value,
                last = q.value + sh.d() - 1,
                head,
                formula = q.formula,
                numbers = q.numbers
            )));
        }
    }
    let (base, mha) = (Scale::of(Variant::Baseline, sh, 0), Scale::of(Variant::Mha, sh, 0));
    let value = |s: Scale| Calc::new(Vec::new(), s.expr(), s.value).fit(Digits::Four).result;
    lines.push(Line::from(tr!(
        "scale: baseline 1/√C = 1/√{C} = {sc} · mha 1/√D = 1/√{D} = {sd}",
        C = base.width,
        sc = value(base),
        D = mha.width,
        sd = value(mha)
    )));
    if let (Some(bt), Some(mt)) = (traced.trace(Variant::Baseline), traced.trace(Variant::Mha)) {
        let row = |trace: &Trace, h: usize| -> String {
            let last = trace.len().saturating_sub(1);
            let Some(probs) = trace.buffer(Buf::Probs).map(BufferInfo::layout) else {
                return String::new();
            };
            let vals: Vec<String> = (0..sh.t)
                .filter_map(|j| probs.offset_of(&[("b", e.b), ("h", h), ("i", e.i), ("j", j)]))
                .map(|off| num(trace.value_at(Buf::Probs, off, last)))
                .collect();
            vals.join(" ")
        };
        lines.push(Line::from(tr!(
            "probability rows of query i={i}: baseline one row [{row}]",
            i = e.i,
            row = row(bt, 0)
        )));
        let heads: Vec<String> = (0..sh.h).map(|h| format!("h{h} [{}]", row(mt, h))).collect();
        lines.push(Line::from(tr!(
            "mha {n} rows, one per head, each summing to 1: {heads}",
            n = sh.h,
            heads = heads.join(" ")
        )));
    }
    lines
}
