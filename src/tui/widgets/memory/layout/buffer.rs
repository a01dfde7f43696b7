//! One buffer placed in the panel: its grid windowed around the focus (what the window leaves
//! out named), its flat row, its title and note.

use super::{Placed, Spot, focus_of, panels, window};
use crate::tui::widgets::Ctx;
use crate::tui::widgets::memory::{HEAT_W, VALUE_W};
use crate::tui::widgets::{cols, cut};
use attn_trace_analysis::step::tile_region;
use attn_trace_core::kernels::names;
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::Buf;
use attn_trace_i18n::tr;
use ratatui::layout::Rect;

/// `i0..=1`, `i3`: a stretch of one dimension.
fn stretch(name: &str, r: std::ops::Range<usize>) -> String {
    if r.len() == 1 {
        format!("{name}{}", r.start)
    } else {
        format!("{name}{}..={}", r.start, r.end - 1)
    }
}

/// What a window leaves out of `0..len`: `i0..=1, i5` (empty when nothing).
fn outside(name: &str, len: usize, win: &std::ops::Range<usize>) -> String {
    [0..win.start, win.end..len]
        .into_iter()
        .filter(|r| !r.is_empty())
        .map(|r| stretch(name, r))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Places `buf` at the top of `area` with at most `max_rows` grid rows around the focus, and
/// its flat row when `flat`. A `compact` grid (a tile-local buffer beside others) has a title of
/// its name and shape alone, and its note cut to its width.
pub(super) fn place(area: Rect, ctx: &Ctx, buf: Buf, max_rows: usize, flat: bool, compact: bool) -> Option<Placed> {
    let info = ctx.trace.buffer(buf)?;
    let layout = info.layout();
    let len = info.len();
    if len == 0 || area.width < 8 {
        return None;
    }
    let focus = focus_of(ctx, buf).min(len - 1);
    let (ps, fp, fr, fc) = panels(layout, focus);
    let mut labels = Vec::new();
    let mut cells = Vec::new();
    let view = layout.sizes();
    let mut title = format!("{buf} {}", layout.sizes_text());
    let mut view_of = String::new();
    if info.spec.shape != view {
        let stored: Vec<String> = info.spec.shape.iter().map(ToString::to_string).collect();
        view_of = tr!(" view of [{dims}]", dims = stored.join(","));
        title.push_str(&view_of);
    }
    // flash's buffers say where they live: the tile-local working set, or global memory with
    // the rows of the current tiles
    let tiled = ctx.trace.buffers.iter().flatten().any(|b| b.spec.level == Level::Tile);
    if compact {
        // the line above the row of tiles says where they live
    } else if info.spec.level == Level::Tile {
        title.push_str(tr!("  tile-local (on chip)"));
    } else if tiled {
        title.push_str(tr!("  global"));
        if let Some(r) = tile_region(ctx.trace, ctx.cursor, ctx.traced.shape) {
            let rows = |name: &str, rows: &Option<std::ops::Range<usize>>| {
                rows.as_ref().filter(|_| layout.position(name).is_some()).map(|r| {
                    tr!(
                        " · tile rows {name} {first}..={last}",
                        name,
                        first = r.start,
                        last = r.end - 1
                    )
                })
            };
            title.extend(rows(names::I, &r.rows_i).or_else(|| rows(names::J, &r.rows_j)));
        }
    }
    // the fixed outer dimension: the batch, or the block of a paged cache's pool
    let batch = match layout.dims.first() {
        Some(d) if layout.row_dim().is_some_and(|r| r > 0) && d.name == names::PHYS => {
            tr!("  block phys {p}", p = layout.index(focus)[0])
        }
        _ if layout.row_dim().is_some_and(|r| r > 0) => tr!("  batch {b}", b = layout.index(focus)[0]),
        _ => String::new(),
    };
    // a title wider than the panel gives up the stored shape first, then the middle ends in
    // `…` (the batch stays: it tells which rows these are)
    let room = (area.width as usize).saturating_sub(cols(&batch));
    if cols(&title) > room && !view_of.is_empty() {
        title = title.replacen(&view_of, "", 1);
    }
    if cols(&title) > room {
        title = format!("{}…", attn_trace_analysis::format::cut(&title, room.saturating_sub(1)));
    }
    title.push_str(&batch);
    labels.push((area.x, area.y, title, true));

    let p0 = &ps[fp.min(ps.len() - 1)];
    let lw = (p0.rname.len() + p0.rows.saturating_sub(1).to_string().len() + 1) as u16;
    // widths in usize: a [B,T,3C] row of a large model is wider than u16 counts
    let gaps = p0.cols.checked_div(p0.group).unwrap_or(0);
    let full = |cw: u16| (lw as usize + p0.cols * cw as usize + gaps).min(u16::MAX as usize) as u16;
    // a value cell is wide enough for its number and for its column's name (`kv_h1d0`)
    let digits = |n: usize| n.to_string().len();
    let name_w = match p0.cols.checked_div(p0.group) {
        Some(heads) => {
            p0.cnames[0].len()
                + digits(heads.saturating_sub(1))
                + p0.cnames[1].len()
                + digits(p0.group.saturating_sub(1))
        }
        None => p0.cnames[0].len() + digits(p0.cols.saturating_sub(1)),
    };
    let value_w = VALUE_W.max(name_w as u16 + 1);
    let heat = full(value_w) > area.width;
    let cw = if heat { HEAT_W } else { value_w };
    let panel_w = full(cw).min(area.width) + 2;
    let fit_panels = ((area.width + 2) / panel_w).max(1) as usize;
    // rows: title, (heat legend,) column header, grid rows, a note or a blank, the flat row
    let legend = heat.then_some(area.y + 1);
    let row_win = window(p0.rows, max_rows.max(1), fr);
    let col_room = (area.width.saturating_sub(lw) / cw) as usize;
    let col_win = window(p0.cols, col_room.max(1), fc);
    let panel_win = window(ps.len(), fit_panels, fp);
    let mut x0 = area.x;
    let y_head = area.y + 1 + u16::from(heat);
    // heat cells are narrower than their labels: a label starts over the cell it names, where
    // it fits whole, and the columns between are unlabelled (never a number cut to its last
    // digits); a number's label is right-aligned over it
    let mut next_free = area.x;
    let label_over = |labels: &mut Vec<(u16, u16, String, bool)>, next_free: &mut u16, x: u16, y: u16, name: String| {
        let width = cols(&name) as u16;
        let start = if heat { x } else { (x + cw).saturating_sub(1 + width) };
        if !heat || start >= *next_free {
            *next_free = start + width + 1;
            labels.push((start, y, name, false));
        }
    };
    let mut drawn_panels = 0;
    for (k, p) in ps.iter().enumerate().skip(panel_win.start).take(panel_win.len()) {
        let mut x = x0 + lw;
        let label = if p.label.is_empty() {
            String::new()
        } else {
            format!("{}:", p.label)
        };
        labels.push((x0, y_head, label, k == fp));
        for c in col_win.clone() {
            if p.group > 0 && c > col_win.start && c % p.group == 0 {
                x += 1;
            }
            let name = match c.checked_div(p.group) {
                Some(h) => format!("{}{h}{}{}", p.cnames[0], p.cnames[1], c % p.group),
                None => format!("{}{c}", p.cnames[0]),
            };
            label_over(&mut labels, &mut next_free, x, y_head, name);
            for (row, r) in row_win.clone().enumerate() {
                let y = y_head + 1 + row as u16;
                let off = p.base + r * p.stride + c;
                if off < len {
                    let masked = p.pairs && ctx.traced.mask.hides(r, c);
                    cells.push(Spot {
                        x,
                        y,
                        w: cw - 1,
                        off,
                        masked,
                    });
                }
            }
            x += cw;
        }
        for (row, r) in row_win.clone().enumerate() {
            let name = if p.rname.is_empty() {
                String::new()
            } else {
                format!("{}{r}", p.rname)
            };
            labels.push((x0, y_head + 1 + row as u16, name, false));
        }
        drawn_panels += 1;
        x0 = x0.saturating_add(panel_w);
        if x0 >= area.right() {
            break;
        }
    }
    // what the window leaves out, said under the grid: `(with ranges, counts only)` each
    let mut hidden: Vec<(String, String)> = Vec::new();
    let shown_panels = panel_win.start..panel_win.start + drawn_panels;
    if row_win.len() < p0.rows {
        let n = p0.rows - row_win.len();
        let what = outside(p0.rname, p0.rows, &row_win);
        let rows = if n == 1 {
            tr!("… 1 more row").to_string()
        } else {
            tr!("… {n} more rows", n)
        };
        hidden.push((tr!("{lead}: {what}", lead = rows, what).to_string(), rows));
    }
    if shown_panels.len() < ps.len() {
        let names: Vec<&str> = ps
            .iter()
            .enumerate()
            .filter(|(k, _)| !shown_panels.contains(k))
            .map(|(_, p)| p.label.as_str())
            .collect();
        let list = if names.len() > 3 {
            tr!(
                "{first}, …, {last} hidden",
                first = names[0],
                last = names[names.len() - 1]
            )
        } else {
            tr!("{names} hidden", names = names.join(", "))
        };
        let count = tr!("{n} more matrices", n = names.len());
        hidden.push((list, count));
    }
    if col_win.len() < p0.cols {
        let what = outside(
            if p0.group > 0 { tr!("column ") } else { p0.cnames[0] },
            p0.cols,
            &col_win,
        );
        let cols = tr!("… {n} more columns", n = p0.cols - col_win.len());
        hidden.push((tr!("{lead}: {what}", lead = cols, what).to_string(), cols));
    }
    let hidden_beyond_rows = hidden.len() > usize::from(row_win.len() < p0.rows);
    // the whole note where it fits, else its parts without their ranges, one by one
    let width = area.width as usize;
    let mut parts: Vec<&str> = hidden.iter().map(|h| h.0.as_str()).collect();
    for k in 0..hidden.len() {
        if cols(&parts.join(" · ")) <= width {
            break;
        }
        parts[k] = &hidden[k].1;
    }
    let y_note = y_head + 1 + row_win.len() as u16;
    let note = (!parts.is_empty()).then(|| {
        let text = parts.join(" · ");
        let text = if compact { cut(&text, width).to_string() } else { text };
        (area.x, y_note, text)
    });
    if flat {
        let y = y_note + 1;
        let lw = 5;
        labels.push((area.x, y, tr!("off").into(), false));
        labels.push((area.x, y + 1, tr!("data").into(), false));
        let count = (area.width.saturating_sub(lw) / cw) as usize;
        next_free = area.x + lw;
        for (k, off) in window(len, count.max(1), focus).enumerate() {
            let x = area.x + lw + k as u16 * cw;
            label_over(&mut labels, &mut next_free, x, y, off.to_string());
            cells.push(Spot {
                x,
                y: y + 1,
                w: cw - 1,
                off,
                masked: false,
            });
        }
    }
    Some(Placed {
        buf,
        heat,
        legend,
        labels,
        cells,
        note,
        total_rows: p0.rows,
        hidden_beyond_rows,
    })
}
