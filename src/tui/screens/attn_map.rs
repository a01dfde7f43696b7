//! The attention map of a trained model on a prompt: for each layer and head, the T×T matrix of
//! attention probabilities as a heat grid with the prompt's bytes on both axes, so patterns
//! (previous byte, copy, induction) show at a glance. Selecting a cell opens the tracer on that
//! layer at the event that wrote the probability — the final write of `probs[off]`, the
//! normalisation — and `e` exports the layer's attention as a scenario file.

use super::tracer::Tracer;
use super::train::worker::printable;
use crate::tui::theme::Theme;
use crate::tui::traced_scenario::TracedScenario;
use crate::tui::widgets::cols;
use crate::tui::widgets::heatgrid::{self, Grid};
use attn_trace_core::engine::{self, Passes};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::{Focus, Scenario};
use attn_trace_core::trace::{Buf, Pass};
use attn_trace_i18n::{msg, tr};
use attn_trace_model::Origin;
use attn_trace_model::{AttentionCapture, TinyGpt};
use crossterm::event::{KeyCode, KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use std::path::PathBuf;
use std::sync::Arc;

/// Most events one traced layer may record (about 40 bytes each, the size of trace the TUI
/// bench measures): a longer prompt is refused with the length that fits, so opening the
/// tracer stays quick and its memory under half a gigabyte.
pub(crate) const MAX_TRACE_EVENTS: u64 = 10_000_000;

#[derive(Debug)]
pub(crate) struct AttnMap {
    pub model: Arc<TinyGpt>,
    pub origin: Origin,
    pub prompt: Vec<u8>,
    /// Every layer's attention inputs on the prompt.
    pub captures: Vec<AttentionCapture>,
    /// Every layer's probabilities `[heads, T, T]` (B = 1).
    pub probs: Vec<Vec<f32>>,
    pub layer: usize,
    pub head: usize,
    /// The selected cell: query `i`, key `j`.
    pub i: usize,
    pub j: usize,
    /// One line of feedback (export path, errors).
    pub message: Option<String>,
    /// The last layer traced, kept so that going back and forth does not trace it again.
    traced: Option<(usize, Arc<TracedScenario>)>,
    /// The layer of the tracer opened from here, for `e` in the tracer.
    pub traced_layer: Option<usize>,
}

/// What the app should do after a key or click.
#[derive(Debug)]
pub(crate) enum Outcome {
    Stay,
    Back,
    Help,
    Trace(Box<Tracer>),
}

/// The keys of this screen, for its `?` popup.
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("← → ↑ ↓", msg!("select a cell: query i (row), key j (column)")),
    ("Tab / Shift+Tab", msg!("next / previous head")),
    ("] / [", msg!("next / previous layer")),
    (
        "Enter, click",
        msg!("open the tracer at the event that wrote this probability"),
    ),
    ("t", msg!("open the tracer on this layer from its first event")),
    ("e", msg!("export this layer on this prompt as a scenario TOML")),
    ("Esc / q", msg!("back to the prompt")),
];

impl AttnMap {
    /// Runs `prompt` through the model and captures every layer's attention; opens on `layer`,
    /// at the last query and the key it attends to most.
    pub(crate) fn new(model: Arc<TinyGpt>, origin: Origin, prompt: &[u8], layer: usize) -> Result<AttnMap, String> {
        let cfg = model.config;
        if prompt.is_empty() {
            return Err(tr!("the prompt is empty: type at least one byte").into());
        }
        if prompt.len() > cfg.seq_len {
            return Err(tr!(
                "the prompt has {n} bytes but the model reads at most {max} (its seq_len): shorten it",
                n = prompt.len(),
                max = cfg.seq_len
            ));
        }
        let captures = (0..cfg.n_layers)
            .map(|l| model.layer_attention_inputs(prompt, l).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        // the trace budget: the same for every layer, so check it once
        let events = engine::estimate_events(&captures[0].inputs.plan(), captures[0].variant, Passes::BOTH);
        if events.exceeds(MAX_TRACE_EVENTS) {
            let fits = (1..prompt.len())
                .rev()
                .find(|&t| {
                    let plan = engine::Plan {
                        shape: cfg.shape(1, t),
                        ..captures[0].inputs.plan()
                    };
                    !engine::estimate_events(&plan, captures[0].variant, Passes::BOTH).exceeds(MAX_TRACE_EVENTS)
                })
                .unwrap_or(1);
            return Err(tr!(
                "tracing this prompt would record {events} events, over the TUI's {max}: \
                 with C = {c} prompts up to {fits} bytes fit",
                events,
                max = MAX_TRACE_EVENTS,
                c = cfg.d_model,
                fits
            ));
        }
        let probs: Vec<Vec<f32>> = captures
            .iter()
            .map(|cap| engine::run(&cap.inputs, cap.variant, Passes::FORWARD, false).tensors[Buf::Probs].to_vec())
            .collect();
        let mut map = AttnMap {
            model,
            origin,
            prompt: prompt.to_vec(),
            captures,
            probs,
            layer: layer.min(cfg.n_layers - 1),
            head: 0,
            i: prompt.len() - 1,
            j: 0,
            message: None,
            traced: None,
            traced_layer: None,
        };
        map.j = map.strongest_key(map.i);
        Ok(map)
    }

    pub(crate) fn t(&self) -> usize {
        self.prompt.len()
    }

    /// Heads the layer's kernel has: 1 for the baseline, H for MHA.
    pub(crate) fn heads(&self) -> usize {
        self.variant().heads(self.model.config.n_heads)
    }

    pub(crate) fn variant(&self) -> Variant {
        self.captures[self.layer].variant
    }

    /// Flat offset of `(head, i, j)` in the probabilities `[B=1, heads, T, T]` (the baseline's
    /// `[B, T, T]` is the same with one head).
    pub(crate) fn offset(&self, h: usize, i: usize, j: usize) -> usize {
        let t = self.t();
        (h * t + i) * t + j
    }

    /// The probability in the selected layer and head.
    pub(crate) fn prob(&self, h: usize, i: usize, j: usize) -> f32 {
        self.probs[self.layer].get(self.offset(h, i, j)).copied().unwrap_or(0.0)
    }

    fn strongest_key(&self, i: usize) -> usize {
        (0..=i.min(self.t() - 1))
            .max_by(|&a, &b| self.prob(self.head, i, a).total_cmp(&self.prob(self.head, i, b)))
            .unwrap_or(0)
    }

    /// The traced scenario of the selected layer: built from the scenario [`Self::scenario`] exports,
    /// so the tracer shows exactly what `attn-trace run` computes on the exported file.
    pub(crate) fn traced(&mut self) -> Result<Arc<TracedScenario>, String> {
        if let Some((l, w)) = &self.traced
            && *l == self.layer
        {
            return Ok(Arc::clone(w));
        }
        let scenario = self.scenario(None)?;
        let traced = Arc::new(TracedScenario::from_scenario(&scenario));
        self.traced = Some((self.layer, Arc::clone(&traced)));
        Ok(traced)
    }

    /// Where `e` writes the selected layer.
    pub(crate) fn export_path(&self) -> PathBuf {
        self.origin.dir.join(format!(
            "{}-step{}-layer{}.toml",
            self.origin.stem, self.origin.step, self.layer
        ))
    }

    fn prompt_text(&self) -> String {
        printable(&self.prompt).escape_debug().to_string()
    }

    /// The selected layer on the prompt as a scenario: explicit `x` (the layer's LayerNorm
    /// output), `w_qkv, b_qkv, w_proj, b_proj` and `d_out`; shape B=1, T = prompt length.
    pub(crate) fn scenario(&self, focus: Option<Focus>) -> Result<Scenario, String> {
        let cap = &self.captures[self.layer];
        let cfg = self.model.config;
        let title = tr!(
            "TinyGPT layer {layer} on \"{prompt}\"",
            layer = self.layer,
            prompt = self.prompt_text()
        );
        let about = format!(
            "The attention of layer {} of {} of a trained TinyGPT ({}, d_model {}, {} heads) on the prompt \"{}\" \
             ({} bytes). x is the layer's LayerNorm output; d_out is the gradient of the prompt's next-byte loss at \
             the block's output.",
            self.layer,
            cfg.n_layers,
            self.origin.label,
            cfg.d_model,
            cfg.n_heads,
            self.prompt_text(),
            self.t()
        );
        let source = self.export_path().display().to_string();
        let mut scenario = Scenario::from_inputs(&source, &title, Some(&about), &cap.inputs, cap.variant, focus)
            .map_err(|e| e.to_string())?;
        // a model trained with flash is traced with flash too, beside the MHA that stores the
        // probabilities the map shows (Tab goes from one to the other)
        if self.origin.flash && cap.variant == Variant::Mha {
            scenario.variants.push(Variant::Flash);
            scenario = Scenario::parse(&scenario.to_toml(), &source).map_err(|e| e.to_string())?;
        }
        Ok(scenario)
    }

    /// `e`: writes the selected layer as a scenario TOML, atomically, and returns its path.
    pub(crate) fn export(&self) -> Result<PathBuf, String> {
        let focus = Focus {
            variant: Some(self.variant()),
            pass: Some(Pass::Forward),
            b: 0,
            h: if self.variant().has_heads() { self.head } else { 0 },
            i: self.i,
            j: self.j,
        };
        let scenario = self.scenario(Some(focus))?;
        // never over the file of an earlier export (another prompt, cell or run): the first
        // free name of `…-layer0.toml`, `…-layer0-2.toml`, `…-layer0-3.toml`, …
        let path = free_path(self.export_path());
        super::train::make_dir_for(&path).map_err(|e| format!("{}: {e}", self.origin.dir.display()))?;
        let cfg = self.model.config;
        let mut text = String::new();
        text.push_str("# Exported by attn-trace from a trained TinyGPT (the TUI's attention map, key e).\n");
        match &self.origin.checkpoint {
            Some(path) => text.push_str(&format!("# checkpoint: {}\n", path.display())),
            None => text.push_str(&format!("# checkpoint: none ({})\n", self.origin.label)),
        }
        text.push_str(&format!("# step: {}\n", self.origin.step));
        text.push_str(&format!(
            "# layer: {} of {} (d_model {}, n_heads {}, {} kernel)\n",
            self.layer,
            cfg.n_layers,
            cfg.d_model,
            cfg.n_heads,
            self.variant()
        ));
        text.push_str(&format!("# prompt: \"{}\" ({} bytes)\n", self.prompt_text(), self.t()));
        text.push_str("# Reopen it with: attn-trace tui FILE   ·   run it with: attn-trace run FILE\n\n");
        text.push_str(&scenario.to_toml());
        attn_trace_core::files::atomic::write(&path, text.as_bytes())
            .map_err(|e| tr!("cannot write {path}: {e}", path = path.display(), e))?;
        Ok(path)
    }

    /// The tracer on the selected layer, at the final write of the selected probability.
    pub(crate) fn trace_cell(&mut self) -> Result<Box<Tracer>, String> {
        let traced = self.traced()?;
        let variant = self.variant();
        let h = if variant.has_heads() { self.head } else { 0 };
        let off = self.offset(h, self.i, self.j);
        let mut tracer = Tracer::new(Arc::clone(&traced), Some(variant));
        let trace = traced.trace(variant).ok_or(tr!("the layer recorded no trace"))?;
        let last = trace.index.writes(Buf::Probs, off).last().copied();
        let n = last.ok_or_else(|| tr!("nothing wrote probs[{off}]", off))? as usize;
        tracer.cursor = n;
        tracer.pinned = Some((Buf::Probs, off));
        tracer.message = Some(tr!(
            "event {n}: the final write of probs[{off}] (layer {layer}, head {h}, i={i}, j={j})",
            n,
            off,
            layer = self.layer,
            h,
            i = self.i,
            j = self.j
        ));
        self.traced_layer = Some(self.layer);
        Ok(Box::new(tracer))
    }

    /// The tracer on the selected layer from its first event.
    pub(crate) fn trace_layer(&mut self) -> Result<Box<Tracer>, String> {
        let traced = self.traced()?;
        let mut tracer = Tracer::new(traced, Some(self.variant()));
        tracer.cursor = 0;
        self.traced_layer = Some(self.layer);
        Ok(Box::new(tracer))
    }

    fn open(&mut self, tracer: Result<Box<Tracer>, String>) -> Outcome {
        match tracer {
            Ok(t) => Outcome::Trace(t),
            Err(e) => {
                self.message = Some(e);
                Outcome::Stay
            }
        }
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        let t = self.t();
        let (heads, layers) = (self.heads(), self.captures.len());
        match key.code {
            KeyCode::Left => self.j = self.j.saturating_sub(1),
            KeyCode::Right => self.j = (self.j + 1).min(t - 1),
            KeyCode::Up => self.i = self.i.saturating_sub(1),
            KeyCode::Down => self.i = (self.i + 1).min(t - 1),
            KeyCode::Tab => self.head = (self.head + 1) % heads,
            KeyCode::BackTab => self.head = (self.head + heads - 1) % heads,
            KeyCode::Char(']') => self.layer = (self.layer + 1) % layers,
            KeyCode::Char('[') => self.layer = (self.layer + layers - 1) % layers,
            KeyCode::Enter => {
                let tracer = self.trace_cell();
                return self.open(tracer);
            }
            KeyCode::Char('t') => {
                let tracer = self.trace_layer();
                return self.open(tracer);
            }
            KeyCode::Char('e') => self.message = Some(self.export_message()),
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Back,
            _ => {}
        }
        self.head = self.head.min(self.heads() - 1);
        Outcome::Stay
    }

    /// `e`'s one line: where the file went, or why it did not.
    pub(crate) fn export_message(&self) -> String {
        match self.export() {
            Ok(p) => tr!(
                "exported layer {layer} to {path} (attn-trace tui reopens it)",
                layer = self.layer,
                path = p.display()
            ),
            Err(e) => tr!("export failed: {e}", e),
        }
    }

    /// A click on a cell selects it and opens the tracer there.
    pub(crate) fn mouse(&mut self, m: MouseEvent, area: Rect) -> Outcome {
        if m.kind != MouseEventKind::Down(MouseButton::Left) {
            return Outcome::Stay;
        }
        for (l, h, rect) in grid_areas(area, self) {
            let plan = heatgrid::plan(inner(rect), self.t(), (self.i, self.j));
            if let Some((i, j)) = heatgrid::hit(&plan, m.column, m.row) {
                (self.layer, self.head, self.i, self.j) = (l, h, i, j);
                let tracer = self.trace_cell();
                return self.open(tracer);
            }
        }
        Outcome::Stay
    }

    fn selection_in(&self, l: usize, h: usize) -> Option<(usize, usize)> {
        (l == self.layer && h == self.head).then_some((self.i, self.j))
    }
}

fn inner(r: Rect) -> Rect {
    Block::bordered().inner(r)
}

/// Rows the selected cell's details keep under the grids.
const DETAIL_MIN: u16 = 6;

/// Rows of one layer's grids: border, key labels, T queries, border.
fn row_height(t: usize) -> u16 {
    t.saturating_add(3).min(u16::MAX as usize) as u16
}

/// The screen split: a title line, the grids (one row of heads per layer, as many layers as
/// fit), the selected cell's details, the status line.
fn split(area: Rect, st: &AttnMap) -> [Rect; 4] {
    // a message longer than the status line goes on over a second one
    let long = st.message.as_ref().is_some_and(|m| cols(m) + 1 > area.width as usize);
    let status_h = if long { 2 } else { 1 };
    // the details as tall as their lines (a line on what is hidden kept when some may be)
    let heads = st.heads();
    let may_hide = heads_across(area.width, st.t(), heads).0 < heads || st.captures.len() > 1;
    let probe = may_hide.then(|| {
        format!(
            "{}, {}",
            tr!("heads {list} (Tab)", list = "0, ".repeat(heads)),
            tr!("layers {list} (]/[)", list = 0)
        )
    });
    let detail_h = boxed_height(&detail(st, area.width, probe, Theme::MONO), area.width).max(DETAIL_MIN);
    let room = area.height.saturating_sub(1 + status_h + detail_h);
    let row_h = row_height(st.t());
    let layers = (room / row_h.max(1)).clamp(1, st.captures.len().max(1) as u16);
    let grid_h = (layers.saturating_mul(row_h)).min(room);
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(grid_h),
        Constraint::Fill(1),
        Constraint::Length(status_h),
    ])
    .areas(area)
}

/// How many heads go across `width`, and the width of each: every head when they fit with one
/// column per cell (two where there is room), else as many as fit with two.
fn heads_across(width: u16, t: usize, heads: usize) -> (usize, u16) {
    let wide = heatgrid::wanted_width(t).saturating_add(2).max(12);
    let narrow = (t as u16).saturating_add(4).max(12);
    let fit = if (width / narrow) as usize >= heads {
        heads
    } else {
        ((width / wide) as usize).clamp(1, heads)
    };
    let w = if fit == 1 {
        width
    } else {
        (width / fit as u16).min(wide)
    };
    (fit, w)
}

/// The grids on screen: `(layer, head, rectangle)`. Layers stack down, heads go across; the
/// selected layer and head are always among them.
fn grid_areas(area: Rect, st: &AttnMap) -> Vec<(usize, usize, Rect)> {
    let [_, grids, _, _] = split(area, st);
    let (heads, layers) = (st.heads(), st.captures.len());
    let (fit, w) = heads_across(grids.width, st.t(), heads);
    let first_h = st.head.saturating_sub(fit - 1);
    let row_h = row_height(st.t()).min(grids.height).max(1);
    let rows = ((grids.height / row_h) as usize).clamp(1, layers);
    let first_l = st.layer.saturating_sub(rows - 1);
    let mut out = Vec::new();
    for (r, l) in (first_l..(first_l + rows).min(layers)).enumerate() {
        let y = grids.y.saturating_add(r as u16 * row_h);
        for (k, h) in (first_h..(first_h + fit).min(heads)).enumerate() {
            let x = grids.x.saturating_add(k as u16 * w);
            let width = w.min(grids.right().saturating_sub(x));
            let height = row_h.min(grids.bottom().saturating_sub(y));
            out.push((l, h, Rect { x, y, width, height }));
        }
    }
    out
}

/// The header after ` Attention map `, and whether it has room for where the weights come from
/// (else the details below the grids say it).
fn header(st: &AttnMap, width: u16) -> (String, bool) {
    let cfg = st.model.config;
    let mut title = tr!(
        "· \"{prompt}\" (T={t}) · layer {layer} of {layers} · {variant}",
        prompt = st.prompt_text(),
        t = st.t(),
        layer = st.layer,
        layers = cfg.n_layers,
        variant = st.variant(),
    );
    let origin = format!(" · {}", st.origin.label);
    let fits = 15 + cols(&title) + cols(&origin) <= width as usize;
    if fits {
        title.push_str(&origin);
    }
    (title, fits)
}

/// The details of the selected cell, then (when the header has no room for it) where the weights
/// come from, and first what the grids leave out, if anything.
fn detail<'a>(st: &AttnMap, width: u16, hidden: Option<String>, t: Theme) -> Vec<Line<'a>> {
    let causal = st.captures[st.layer].inputs.mask.hides(0, 1);
    let lbl = |k: usize| heatgrid::label(st.prompt.get(k).copied().unwrap_or(b' '));
    let h = st.head.min(st.heads() - 1);
    let p = st.prob(h, st.i, st.j);
    let mut row: Vec<(usize, f32)> = (0..st.t()).map(|j| (j, st.prob(h, st.i, j))).collect();
    row.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top: Vec<String> = row
        .iter()
        .take(3)
        .map(|&(j, v)| format!("j={j} '{}' {v:.2}", lbl(j)))
        .collect();
    let masked = causal && st.j > st.i;
    let visible = if causal { st.i + 1 } else { st.t() };
    let whole_row: Vec<String> = (0..visible).map(|j| format!("{:.2}", st.prob(h, st.i, j))).collect();
    let mut lines = Vec::new();
    if let Some(hidden) = hidden {
        lines.push(Line::styled(
            tr!(" not shown for lack of room: {hidden}", hidden),
            t.key(),
        ));
    }
    lines.push(Line::from(vec![
        Span::styled(
            tr!(
                " layer {layer} head {h}: P[i={i} '{ci}', j={j} '{cj}'] = ",
                layer = st.layer,
                h,
                i = st.i,
                ci = lbl(st.i),
                j = st.j,
                cj = lbl(st.j)
            ),
            t.base(),
        ),
        Span::styled(format!("{p:.4}"), t.number()),
        Span::styled(
            tr!(
                "  at probs[{off}]{masked}",
                off = st.offset(h, st.i, st.j),
                masked = if masked { tr!(" (masked: j > i)") } else { "" }
            ),
            t.dim(),
        ),
    ]));
    lines.push(Line::styled(
        tr!(" query {i} attends most to {top}", i = st.i, top = top.join(" · ")),
        t.dim(),
    ));
    lines.push(Line::styled(
        format!(" P[i={}, j=0..={}] = {}", st.i, visible - 1, whole_row.join(" ")),
        t.dim(),
    ));
    lines.push(Line::styled(
        tr!(" e exports this layer to {path}", path = st.export_path().display()),
        t.dim(),
    ));
    if !header(st, width).1 {
        lines.push(Line::styled(tr!(" weights: {label}", label = st.origin.label), t.dim()));
    }
    lines
}

/// Rows `lines` take wrapped inside a bordered box `width` wide, borders included.
fn boxed_height(lines: &[Line], width: u16) -> u16 {
    let inner = width.saturating_sub(2).max(1) as usize;
    let rows: usize = lines
        .iter()
        .map(|l| {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            crate::tui::widgets::wrap(&text, inner).len().max(1)
        })
        .sum();
    rows as u16 + 2
}

/// What the grids leave out: `heads 2, 3 (Tab), layers 0 (]/[)`.
fn hidden_text(st: &AttnMap, shown: &[(usize, usize, Rect)]) -> Option<String> {
    let mut hidden = Vec::new();
    let heads: Vec<String> = (0..st.heads())
        .filter(|h| !shown.iter().any(|s| s.1 == *h))
        .map(|h| h.to_string())
        .collect();
    if !heads.is_empty() {
        hidden.push(tr!("heads {list} (Tab)", list = heads.join(", ")));
    }
    let layers: Vec<String> = (0..st.captures.len())
        .filter(|l| !shown.iter().any(|s| s.0 == *l))
        .map(|l| l.to_string())
        .collect();
    if !layers.is_empty() {
        hidden.push(tr!("layers {list} (]/[)", list = layers.join(", ")));
    }
    (!hidden.is_empty()).then(|| hidden.join(", "))
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &AttnMap, theme: Theme) {
    let t = theme;
    let [head, _, detail_area, status] = split(area, st);
    let (title, _) = header(st, area.width);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(tr!(" Attention map "), t.title()),
            Span::styled(title, t.dim()),
        ])),
        head,
    );
    let variant = st.variant();
    let causal = st.captures[st.layer].inputs.mask.hides(0, 1);
    let shown = grid_areas(area, st);
    for &(l, h, rect) in &shown {
        let tt = st.t();
        let start = h * tt * tt;
        let values = st.probs[l].get(start..start + tt * tt).unwrap_or(&[]);
        let title = if variant.has_heads() {
            tr!(" layer {l} · head {h} ", l, h)
        } else {
            tr!(" layer {l} · one head ", l)
        };
        let here = l == st.layer && h == st.head;
        let block = Block::bordered().title(title).border_style(t.border(here));
        let inner = block.inner(rect);
        frame.render_widget(block, rect);
        let grid = Grid {
            values,
            t: tt,
            labels: &st.prompt,
            selected: st.selection_in(l, h),
            focus: (st.i, st.j),
            causal,
        };
        heatgrid::render(frame.buffer_mut(), inner, &grid, t);
    }
    let lines = detail(st, area.width, hidden_text(st, &shown), t);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(tr!(" selected ")).border_style(t.border(false))),
        detail_area,
    );
    let line = match &st.message {
        Some(m) => Line::styled(format!(" {m}"), t.status().patch(t.key())),
        None => {
            let long = tr!(
                " arrows cell · Tab head · ]/[ layer · Enter/click trace this probability · t trace layer · e export · ? keys · q back"
            );
            let short = tr!(" arrows cell · Tab head · ]/[ layer · Enter trace · e export · ? keys · q back");
            let hint = if cols(long) <= status.width as usize {
                long
            } else {
                short
            };
            Line::styled(hint, t.status())
        }
    };
    frame.render_widget(
        Paragraph::new(line).style(t.status()).wrap(Wrap { trim: false }),
        status,
    );
}

/// `base` if no file is there, else the first of `STEM-2.EXT`, `STEM-3.EXT`, … that is free.
pub(crate) fn free_path(base: PathBuf) -> PathBuf {
    if !base.exists() {
        return base;
    }
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = base.extension().map(|e| e.to_string_lossy().into_owned());
    (2u32..)
        .map(|k| {
            let name = match &ext {
                Some(e) => format!("{stem}-{k}.{e}"),
                None => format!("{stem}-{k}"),
            };
            base.with_file_name(name)
        })
        .find(|p| !p.exists())
        .unwrap_or(base)
}
