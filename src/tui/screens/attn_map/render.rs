//! The attention map drawn: every head's grid of weights laid out across the screen, the
//! selected cell's detail and the header.

use super::AttnMap;
use crate::tui::theme::Theme;
use crate::tui::widgets::cols;
use crate::tui::widgets::heatgrid::{self, Grid};
use attn_trace_i18n::tr;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

pub(super) fn inner(r: Rect) -> Rect {
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
pub(super) fn grid_areas(area: Rect, st: &AttnMap) -> Vec<(usize, usize, Rect)> {
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
        hidden.push(tr!("heads {list} (Tab)", list = heads.join(tr!(", "))));
    }
    let layers: Vec<String> = (0..st.captures.len())
        .filter(|l| !shown.iter().any(|s| s.0 == *l))
        .map(|l| l.to_string())
        .collect();
    if !layers.is_empty() {
        hidden.push(tr!("layers {list} (]/[)", list = layers.join(tr!(", "))));
    }
    (!hidden.is_empty()).then(|| hidden.join(tr!(", ")))
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
