//! Draws the memory panel's plan, and answers a click from the same plan.

use super::super::{CellRef, Ctx, dot, num, put};
use super::layout::{MemoryPlan, plan};
use crate::tui::widgets::cols;
use attn_trace_analysis::cache::{AccessCache, BYPASSED, LevelSpec};
use attn_trace_analysis::format::num_of;
use attn_trace_analysis::step::{tile_region, touched, unwritten};
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::{Buf, Op, Trace};
use attn_trace_i18n::tr;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Line;
use ratatui::widgets::{Block, Widget};

/// The cell under a mouse click, if any: a grid cell, or an operand of the dot product.
pub(crate) fn hit(plan: &MemoryPlan, trace: &Trace, x: u16, y: u16) -> Option<CellRef> {
    let inside = |sx: u16, sy: u16, w: u16| sy == y && x >= sx && x < sx + w.max(1);
    let grid = plan
        .grids
        .iter()
        .find_map(|p| p.cells.iter().find(|s| inside(s.x, s.y, s.w)).map(|s| (p.buf, s.off)));
    grid.or_else(|| {
        let d = plan.dot.as_ref()?;
        let s = d.spots.iter().find(|s| inside(s.x, s.y, s.w))?;
        d.dot.factor_cell(trace, s.term, s.factor?)
    })
}

/// The line that names the buffers left out, in at most `width` characters where it can.
fn left_out(bufs: &[Buf], width: usize) -> String {
    let names: Vec<&str> = bufs.iter().map(|b| b.name()).collect();
    let long = tr!(
        "no room for {names} (a taller terminal shows them)",
        names = names.join(", ")
    );
    let short = tr!("no room for {names}", names = names.join(", "));
    [long, short]
        .into_iter()
        .find(|t| cols(t) <= width)
        .unwrap_or_else(|| tr!("no room for {n} more buffers", n = names.len()))
}

pub(crate) fn render(frame: &mut Frame, area: Rect, ctx: &Ctx, focused: bool) {
    let t = ctx.theme;
    let mut block = Block::bordered().title(tr!(" Memory ")).border_style(t.border(focused));
    let inner = block.inner(area);
    let plan = plan(inner, ctx);
    // a grid's note below the panel's last line goes on its bottom border, with what is left out
    let low_note = plan
        .grids
        .iter()
        .filter_map(|p| p.note.as_ref())
        .find(|(_, y, _)| *y >= inner.bottom())
        .map(|(_, _, text)| text.clone());
    // what is left out, in the room the border has beside that note (never cut mid-word)
    let beside = low_note.as_ref().map_or(0, |n| cols(n) + 3);
    let left_out_line = left_out(&plan.unshown, inner.width.saturating_sub(2) as usize);
    let left_out = left_out(&plan.unshown, (inner.width as usize).saturating_sub(2 + beside));
    let border_out = (!plan.unshown.is_empty() && plan.unshown_y.is_none()).then_some(left_out);
    let border: Vec<String> = low_note.into_iter().chain(border_out).collect();
    let border_text = (!border.is_empty()).then(|| format!(" {} ", border.join(" · ")));
    // the legend of the cells' styles, right of that note where it fits
    let legend_room = (area.width as usize).saturating_sub(2 + border_text.as_deref().map_or(0, cols) + 1);
    let all_heat = !plan.grids.is_empty() && plan.grids.iter().all(|p| p.heat);
    if let Some(text) = border_text {
        block = block.title_bottom(Line::styled(text, t.dim()));
    }
    if let Some(line) = cell_legend(t, all_heat, legend_room) {
        block = block.title_bottom(line.right_aligned());
    }
    // the cache model (`m`): where this access was served, on the top border's right
    if let (Some(cache), Some(access)) = (ctx.cache, ctx.cache_access()) {
        let room = (area.width as usize).saturating_sub(cols(tr!(" Memory ")) + 4);
        if let Some(text) = cache_title(&access, &cache.levels, ctx.view.buf.name(), room) {
            let style = if access.missed_at(0) { t.write() } else { t.read() };
            block = block.title_top(Line::styled(text, style).right_aligned());
        }
    }
    block.render(area, frame.buffer_mut());
    let mut touched = touched(ctx.trace, ctx.cursor);
    // the cells the offsets on screen were read from (a paged cache's block ids), as read
    let ksh = attn_trace_core::engine::kernel_shape(ctx.traced.shape, ctx.variant);
    touched.extend(
        attn_trace_analysis::formula::derived_lines(&ctx.view, ksh)
            .into_iter()
            .filter_map(|s| s.read),
    );
    let region = tile_region(ctx.trace, ctx.cursor, ctx.traced.shape);
    let phase_start = ctx.phase_start();
    let cur = (ctx.view.buf, ctx.view.offset);
    let buf = frame.buffer_mut();
    if let Some(d) = &plan.dot {
        dot::render(buf, inner, ctx, d);
    }
    if let Some((x, y)) = plan.tile_header {
        put(
            buf,
            inner,
            x,
            y,
            tr!("tile-local buffers (on chip)"),
            t.level(Level::Tile),
        );
    }
    if let (false, Some(y)) = (plan.unshown.is_empty(), plan.unshown_y) {
        put(buf, inner, inner.x, y, &left_out_line, t.dim());
    }
    for p in &plan.grids {
        let level = ctx.trace.level(p.buf);
        for (k, (x, y, text, strong)) in p.labels.iter().enumerate() {
            // the title (the first label) in its level's colour in a tiled kernel's trace
            let style = match (k, level) {
                (0, Level::Tile) => t.level(Level::Tile).add_modifier(Modifier::BOLD),
                _ if *strong => t.title(),
                _ => t.dim(),
            };
            put(buf, inner, *x, *y, text, style);
        }
        if let Some((x, y, text)) = &p.note {
            put(buf, inner, *x, *y, text, t.dim());
        }
        let values: Vec<f32> = p
            .cells
            .iter()
            .map(|s| ctx.trace.value_at(p.buf, s.off, ctx.cursor))
            .collect();
        // heat is relative to the largest magnitude in view (the −1e9 of masked cells left out)
        let scale = p
            .cells
            .iter()
            .zip(&values)
            .filter(|(s, _)| !s.masked)
            .map(|(_, v)| v.abs())
            .fold(0.0f32, f32::max)
            .max(1e-6);
        // cells that are never negative (probabilities) use the scale's upper half, 0 … +max
        let nonneg = p.cells.iter().zip(&values).all(|(s, v)| s.masked || *v >= 0.0);
        if let Some(y) = p.legend {
            legend(buf, inner, y, scale, nonneg, t);
        }
        for (s, &v) in p.cells.iter().zip(&values) {
            let cell = (p.buf, s.off);
            // not written yet: the zero it holds is no result, so it is drawn apart
            let fresh = unwritten(ctx.trace, p.buf, s.off, ctx.cursor);
            let written = ctx
                .trace
                .index
                .last_write_at_or_before(p.buf, s.off, ctx.cursor)
                .is_some_and(|w| w >= phase_start);
            let heat_t = 0.5 + 0.5 * f64::from((v / scale).clamp(-1.0, 1.0));
            let emphasised = cell == cur || (ctx.pinned && cell == ctx.selected);
            let style = if cell == cur {
                match ctx.view.op {
                    Op::Read => t.read(),
                    Op::Write => t.write(),
                }
            } else if ctx.pinned && cell == ctx.selected {
                t.selected()
            } else if fresh {
                t.dim()
            } else if p.heat && (written || touched.contains(&cell)) && !s.masked {
                // keep the heat colour, and mark the state with an underline
                t.heat(heat_t).add_modifier(Modifier::UNDERLINED)
            } else if touched.contains(&cell) {
                t.touched()
            } else if s.masked {
                t.masked()
            } else if level == Level::Tile && !p.heat {
                // the on-chip working set, in its own colour
                t.level(Level::Tile)
            } else if region.as_ref().is_some_and(|r| r.contains(ctx.trace, p.buf, s.off)) && !p.heat {
                // the current tile, as a region of a global buffer
                t.level(Level::Tile).add_modifier(Modifier::UNDERLINED)
            } else if written {
                t.written()
            } else if p.heat {
                t.heat(heat_t)
            } else {
                t.base()
            };
            let mut text = if !p.heat {
                let v = if fresh && !emphasised {
                    UNWRITTEN.to_string()
                } else {
                    num_of(p.buf, v)
                };
                format!("{v:>w$}", w = s.w as usize)
            } else if emphasised {
                "◀▶".to_string()
            } else if fresh {
                UNWRITTEN.to_string()
            } else if s.masked {
                "··".to_string()
            } else if touched.contains(&cell) {
                "▪▪".to_string()
            } else {
                t.heat_glyph(heat_t).to_string()
            };
            if ctx.breakpoints.contains(&cell) {
                text = format!("●{}", text.chars().skip(1).collect::<String>());
            }
            put(buf, inner, s.x, s.y, &text, style);
        }
    }
}

/// How a cell not written yet is drawn, in place of its number or its heat.
const UNWRITTEN: &str = "--";

/// The legend of the cells' styles, one sample of each: not written yet, masked, written in this
/// phase, the current access (as a heat grid draws them when `heat`, else as numbers), in the
/// longest wording that fits `width` columns.
pub(super) fn cell_legend(t: crate::tui::theme::Theme, heat: bool, width: usize) -> Option<Line<'static>> {
    let samples = if heat {
        [UNWRITTEN, "··", "██", "◀▶"]
    } else {
        [UNWRITTEN, "1.0", "1.0", "1.0"]
    };
    let styles = [
        t.dim(),
        t.masked(),
        if heat {
            t.heat(1.0).add_modifier(Modifier::UNDERLINED)
        } else {
            t.written()
        },
        t.read(),
    ];
    let wordings = [
        [
            tr!("unwritten"),
            tr!("masked"),
            tr!("written this phase"),
            tr!("this access"),
        ],
        [tr!("unwritten"), tr!("masked"), tr!("written"), tr!("this access")],
        [tr!("unwritten"), tr!("masked"), tr!("written"), tr!("current")],
    ];
    wordings.into_iter().find_map(|words| {
        let mut spans = vec![ratatui::text::Span::raw(" ")];
        for (k, (word, (sample, style))) in words.iter().zip(samples.iter().zip(styles)).enumerate() {
            if k > 0 {
                spans.push(ratatui::text::Span::raw("  "));
            }
            spans.push(ratatui::text::Span::styled(*sample, style));
            spans.push(ratatui::text::Span::styled(format!(" {word}"), t.dim()));
        }
        spans.push(ratatui::text::Span::raw(" "));
        let line = Line::from(spans);
        (line.width() <= width).then_some(line)
    })
}

/// The top border's note on the current access under the cache model: where it was served at
/// each level it reached, then its L1 line (addresses, and the elements of `buf` it holds), as
/// much as fits in `width` columns.
pub(super) fn cache_title(a: &AccessCache, levels: &[LevelSpec], buf: &str, width: usize) -> Option<String> {
    let served = if a.served == BYPASSED {
        tr!("tile-local: past the caches").to_string()
    } else {
        let mut parts: Vec<String> = Vec::new();
        for (k, level) in levels.iter().enumerate() {
            if a.hit_at(k) {
                parts.push(tr!("{level} hit", level = level.name));
                break;
            }
            parts.push(tr!("{level} miss", level = level.name));
        }
        if a.served as usize >= levels.len() {
            parts.push(tr!("from memory").to_string());
        }
        parts.join(" · ")
    };
    let cells = match (a.cells.start, a.cells.end.saturating_sub(1)) {
        (first, last) if last > first => format!("{buf}[{first}..={last}]"),
        (first, _) => format!("{buf}[{first}]"),
    };
    let end = a.line + a.line_bytes - 1;
    let line = tr!(
        "line {start}–{end}",
        start = format!("{:#x}", a.line),
        end = format!("{end:#x}")
    );
    let forms = if a.served == BYPASSED {
        vec![format!(" {served} ")]
    } else {
        vec![
            format!(" {served} · {line} = {cells} "),
            format!(" {served} · {cells} "),
            format!(" {served} "),
        ]
    };
    forms.into_iter().find(|f| cols(f) <= width)
}

/// The heat legend: the colours (or shades) from −max to +max of the cells in view, or from 0
/// to +max when none of them is negative, and the marks drawn on cells instead of numbers.
fn legend(
    buf: &mut ratatui::buffer::Buffer,
    area: Rect,
    y: u16,
    scale: f32,
    nonneg: bool,
    t: crate::tui::theme::Theme,
) {
    let (low, steps) = if nonneg {
        ("0".to_string(), [0.5, 0.625, 0.75, 0.875, 1.0])
    } else {
        (format!("−{}", num(scale)), [0.0, 0.25, 0.5, 0.75, 1.0])
    };
    let mut x = put(buf, area, area.x, y, &tr!("heat {low} ", low), t.dim());
    for heat in steps {
        x = put(buf, area, x, y, t.heat_glyph(heat), t.heat(heat));
    }
    // the marks that fit, whole: the scale's end first
    let marks = [
        format!(" +{}", num(scale)),
        tr!("  ◀▶ this access").to_string(),
        tr!("  ▪▪ read this iteration").to_string(),
        tr!("  ·· masked").to_string(),
    ];
    for m in marks {
        if x + cols(&m) as u16 > area.right() {
            break;
        }
        x = put(buf, area, x, y, &m, t.dim());
    }
}
