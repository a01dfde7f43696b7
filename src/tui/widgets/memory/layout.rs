//! Where every cell of the memory panel goes: the dot product strip first, then the buffers in
//! the order of [`super::buffers`], each windowed around the cell it centres on.

use super::super::{Ctx, dot};
use super::{HEAT_W, VALUE_W, buffers};
use crate::tui::widgets::{cols, cut};
use attn_trace_analysis::step::{loaded_from, step_buffers, tile_region};
use attn_trace_core::kernels::names;
use attn_trace_core::tensor::{Layout, Level};
use attn_trace_core::trace::Buf;
use attn_trace_i18n::tr;
use ratatui::layout::Rect;

/// A cell placed on screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spot {
    pub x: u16,
    pub y: u16,
    pub w: u16,
    pub off: usize,
    pub masked: bool,
}

/// One buffer laid out: its labels and its cells (grid cells, then the flat row).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Placed {
    pub buf: Buf,
    /// Cells too narrow for numbers: each is a colour (or a shade) of its value.
    pub heat: bool,
    /// The row of the heat legend, in heat mode.
    pub legend: Option<u16>,
    pub labels: Vec<(u16, u16, String, bool)>,
    pub cells: Vec<Spot>,
    /// What the grid leaves out (`… 2 more rows: i0..=1 · h0, h1 hidden`), at `(x, y)`.
    pub note: Option<(u16, u16, String)>,
    /// Rows of the buffer's matrices, shown or not.
    pub total_rows: usize,
    /// Matrices or columns that stay hidden however many rows are shown.
    pub hidden_beyond_rows: bool,
}

/// One matrix of a buffer's grid.
struct Panel {
    label: String,
    rows: usize,
    cols: usize,
    base: usize,
    stride: usize,
    /// Columns per head in a `[B,T,H,D]` view (a gap is drawn between heads), else 0.
    group: usize,
    rname: &'static str,
    /// The names of the column dimensions: `[j, ""]`, or `[h, d]` for heads of channels.
    cnames: [&'static str; 2],
    /// One value per (query i, key j): rows are `i`, columns `j`, and the mask applies.
    pairs: bool,
}

/// The matrices of a buffer for the batch holding `focus`, and which one holds `focus` at which
/// (row, col). All of it comes from the registry's layout: the row dimension and its name (`i`
/// for queries, `j` for keys), the columns after it (grouped per head when they are `h, d`), and
/// one matrix per value of the dimensions between the batch and the rows (the heads of the
/// scores).
fn panels(layout: &Layout, focus: usize) -> (Vec<Panel>, usize, usize, usize) {
    let idx = layout.index(focus);
    let dims = &layout.dims;
    let Some(r) = layout.row_dim() else {
        // a vector: one row of columns
        let (cname, cols) = dims.first().map_or((names::O, 0), |d| (d.name, d.size));
        let p = Panel {
            label: String::new(),
            rows: 1,
            cols,
            base: 0,
            stride: 0,
            group: 0,
            rname: "",
            cnames: [cname, ""],
            pairs: false,
        };
        return (vec![p], 0, 0, idx.first().copied().unwrap_or(0));
    };
    let after = &dims[r + 1..];
    let cols: usize = after.iter().map(|d| d.size).product();
    // columns of several dimensions are heads of channels: a gap between heads
    let group = if after.len() > 1 {
        after[after.len() - 1].size
    } else {
        0
    };
    let cnames = match after {
        [] => ["", ""],
        [c] => [c.name, ""],
        [.., h, d] => [h.name, d.name],
    };
    // the batch (dimension 0, when the rows are not it) is fixed; the others before the rows
    // each give one matrix
    let lead = usize::from(r > 0);
    let outer = &dims[lead..r];
    let count: usize = outer.iter().map(|d| d.size).product();
    let batch_base = if lead == 1 { idx[0] * layout.stride(0) } else { 0 };
    let stride = layout.stride(r);
    let ps = (0..count)
        .map(|k| {
            // the outer coordinates of matrix k, and their label (`h1`)
            let mut rest = k;
            let mut coords = vec![0; outer.len()];
            for (n, d) in outer.iter().enumerate().rev() {
                coords[n] = rest % d.size;
                rest /= d.size;
            }
            let base = batch_base
                + coords
                    .iter()
                    .enumerate()
                    .map(|(n, c)| c * layout.stride(lead + n))
                    .sum::<usize>();
            let label = outer
                .iter()
                .zip(&coords)
                .map(|(d, c)| format!("{}{c}", d.name))
                .collect::<Vec<_>>()
                .join(" ");
            Panel {
                label,
                rows: dims[r].size,
                cols,
                base,
                stride,
                group,
                rname: dims[r].name,
                cnames,
                pairs: layout.is_pairs(),
            }
        })
        .collect();
    // which matrix holds the focus, and where in it
    let fp = outer
        .iter()
        .enumerate()
        .fold(0, |acc, (n, d)| acc * d.size + idx[lead + n]);
    let fc = after
        .iter()
        .enumerate()
        .fold(0, |acc, (n, d)| acc * d.size + idx[r + 1 + n]);
    (ps, fp, idx[r], fc)
}

/// `count` consecutive items out of `len`, as close to centred on `at` as the ends allow.
fn window(len: usize, count: usize, at: usize) -> std::ops::Range<usize> {
    let count = count.min(len);
    let start = at.saturating_sub(count / 2).min(len - count);
    start..start + count
}

/// The cell each buffer centres on: the current event's, the selected one, or the last one the
/// current iteration touched.
fn focus_of(ctx: &Ctx, buf: Buf) -> usize {
    if ctx.view.buf == buf {
        return ctx.view.offset;
    }
    if ctx.selected.0 == buf {
        return ctx.selected.1;
    }
    let lo = ctx.cursor.saturating_sub(256);
    (lo..=ctx.cursor)
        .rev()
        .map(|k| ctx.trace.events[k])
        .find(|e| e.buf == buf)
        .map_or(0, |e| e.offset as usize)
}

/// What the memory panel draws: the dot product being stepped, as many buffers as fit, and the
/// buffers that did not fit (named on the last line).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MemoryPlan {
    pub dot: Option<dot::DotPlan>,
    pub grids: Vec<Placed>,
    /// In a tiled kernel's trace, where the line naming the tile-local buffers goes: above
    /// their first row, where they sit side by side.
    pub tile_header: Option<(u16, u16)>,
    /// Buffers of the phase left out for lack of room, and the line inside the panel that says
    /// so; `None` when the dot product fills the panel, and the panel's bottom border says it.
    pub unshown: Vec<Buf>,
    pub unshown_y: Option<u16>,
}

/// How a buffer's grid can shrink: lines it always takes, the rows it has, and whether some of
/// its matrices or columns stay hidden whatever the height.
#[derive(Clone, Copy)]
struct Need {
    fixed: u16,
    rows: usize,
    hidden: bool,
}

impl Need {
    /// Lines taken with `rows` grid rows, and the flat row or not. A note on what is hidden
    /// shares its line with the blank line before the flat row.
    fn height(&self, rows: usize, flat: bool) -> u16 {
        let note = rows < self.rows || self.hidden;
        self.fixed + rows as u16 + u16::from(note || flat) + if flat { 2 } else { 0 }
    }
}

/// One stretch of the panel's lines: a buffer across the whole width, or a row of tile-local
/// buffers side by side (each at its column offset, in its width), as tall as the tallest.
struct Item {
    bufs: Vec<(Buf, u16, u16)>,
    need: Need,
    band: bool,
    /// The line naming the tile-local buffers opens this item (the first row of tiles, when
    /// nothing is above it).
    lead: u16,
}

impl Item {
    /// Columns taken by the buffers side by side.
    fn used(&self) -> u16 {
        self.bufs.iter().map(|&(_, x, w)| x + w).max().unwrap_or(0)
    }
}

/// Columns a placed grid takes from its left edge: its labels and its cells with the space
/// after each.
fn width_of(p: &Placed, left: u16) -> u16 {
    let cells = p.cells.iter().map(|s| s.x + s.w + 1);
    let labels = p.labels.iter().map(|(x, _, text, _)| x + cols(text) as u16);
    cells.chain(labels).max().unwrap_or(left).saturating_sub(left)
}

/// Rows each buffer gets before any gets its flat row.
const FEW_ROWS: usize = 8;

/// Lays out the panel's inside `area`: the dot product first, then the buffers in the order of
/// [`buffers`], each given one row before any gets more, then up to `FEW_ROWS` rows, then flat
/// rows, then the remaining rows, while they fit; what is left out is said. In a tiled kernel's
/// trace the tile-local buffers (a few rows and columns each) sit side by side, as many to a
/// row as fit across, under one line that says they are on chip.
pub(crate) fn plan(area: Rect, ctx: &Ctx) -> MemoryPlan {
    let dot = dot::plan(area, ctx).filter(|d| d.height <= area.height);
    let top = dot.as_ref().map_or(area.y, |d| area.y + d.height + 1);
    let room = area.bottom().saturating_sub(top);
    let bufs = buffers(ctx, dot.as_ref().map(|d| &d.dot));
    let tiled = ctx.trace.buffers.iter().flatten().any(|b| b.spec.level == Level::Tile);
    let mut items: Vec<Item> = Vec::new();
    for &b in &bufs {
        let band = tiled && ctx.trace.level(b) == Level::Tile;
        let rows = if band { usize::MAX } else { 1 };
        let Some(p) = place(Rect { y: top, ..area }, ctx, b, rows, false, band) else {
            continue;
        };
        let need = Need {
            fixed: 2 + u16::from(p.heat),
            rows: p.total_rows,
            hidden: p.hidden_beyond_rows,
        };
        if !band {
            items.push(Item {
                bufs: vec![(b, 0, area.width)],
                need,
                band,
                lead: 0,
            });
            continue;
        }
        // a heat grid and its legend take the whole width
        let w = if p.heat {
            area.width
        } else {
            width_of(&p, area.x).min(area.width)
        };
        match items.iter_mut().find(|it| it.band && it.used() + w <= area.width) {
            Some(it) => {
                let x = it.used();
                it.bufs.push((b, x, w));
                it.need = Need {
                    fixed: it.need.fixed.max(need.fixed),
                    rows: it.need.rows.max(need.rows),
                    hidden: it.need.hidden || need.hidden,
                };
            }
            None => items.push(Item {
                bufs: vec![(b, 0, w)],
                need,
                band,
                lead: 0,
            }),
        }
    }
    // the first row of tiles says what they are on the blank line above it, or on a line of
    // its own when it opens the panel
    if let Some(first) = items.first_mut().filter(|it| it.band && dot.is_none()) {
        first.lead = 1;
        first.need.fixed += 1;
    }
    // lines taken by the first `k` items with these rows and flat rows, a blank line between
    let total = |shape: &[(usize, bool)]| -> u16 {
        shape
            .iter()
            .zip(&items)
            .map(|(&(r, f), it)| it.need.height(r, f))
            .sum::<u16>()
            + shape.len().saturating_sub(1) as u16
    };
    // the line that names what is left out, when something is
    let fits = |shape: &[(usize, bool)]| {
        let reserve = u16::from(shape.len() < items.len());
        let gap = u16::from(!shape.is_empty() && shape.len() < items.len());
        total(shape) + reserve + gap <= room
    };
    // flash's current step, and the global buffers its tiles were loaded from, are shown
    // whole where they can be: their last grid may take the lines of the note on what is left
    // out, which then goes on the panel's bottom border
    let step = step_buffers(ctx.trace, ctx.cursor);
    let sources: Vec<Buf> = step.iter().filter_map(|&b| loaded_from(b)).collect();
    let must = |it: &Item| it.bufs.iter().any(|(b, _, _)| step.contains(b) || sources.contains(b));
    let mut shape: Vec<(usize, bool)> = Vec::new();
    let mut squeezed = false;
    for it in &items {
        shape.push((1, false));
        let squeeze = !fits(&shape) && must(it) && total(&shape) <= room;
        if !(fits(&shape) || squeeze) {
            shape.pop();
            break;
        }
        squeezed |= squeeze;
    }
    // once the note is on the border, the grids may grow to the panel's last line
    let fits = |shape: &[(usize, bool)]| {
        if squeezed { total(shape) <= room } else { fits(shape) }
    };
    // rows up to a screenful each, then the flat rows, then the rest of the rows
    let grow = |shape: &mut Vec<(usize, bool)>, most: usize| {
        for k in 0..shape.len() {
            while shape[k].0 < items[k].need.rows.min(most) {
                shape[k].0 += 1;
                if !fits(shape) {
                    shape[k].0 -= 1;
                    break;
                }
            }
        }
    };
    // too short for a grid with its note and the line naming the rest: the first grid (or row
    // of tiles) alone, as many rows as fit, its note and the rest said on the panel's bottom
    // border
    let tight = shape.is_empty() && items.first().is_some_and(|it| it.need.fixed < room);
    if let (true, Some(it)) = (tight, items.first()) {
        shape.push((usize::from(room - it.need.fixed).min(it.need.rows), false));
    } else {
        grow(&mut shape, FEW_ROWS);
        for k in 0..shape.len() {
            // a row of tiles side by side has no room for flat rows
            shape[k].1 = !items[k].band;
            if !fits(&shape) {
                shape[k].1 = false;
            }
        }
        grow(&mut shape, usize::MAX);
    }
    let mut grids = Vec::new();
    let mut tile_header = None;
    let mut y = top;
    for (&(rows, flat), it) in shape.iter().zip(&items) {
        if it.band && tile_header.is_none() {
            tile_header = Some((area.x, if it.lead > 0 { y } else { y.saturating_sub(1) }));
        }
        for &(buf, x, width) in &it.bufs {
            let at = Rect {
                x: area.x + x,
                y: y + it.lead,
                width,
                ..area
            };
            grids.extend(place(at, ctx, buf, rows, flat, it.band));
        }
        y += it.need.height(rows, flat) + 1;
    }
    let unshown: Vec<Buf> = items[shape.len()..]
        .iter()
        .flat_map(|it| it.bufs.iter().map(|&(b, _, _)| b))
        .collect();
    // below the last grid, or without the blank line before it; never over the dot product
    let unshown_y = [y, y.saturating_sub(1)]
        .into_iter()
        .find(|&row| !tight && row < area.bottom() && dot.as_ref().is_none_or(|d| row >= area.y + d.height));
    MemoryPlan {
        dot,
        grids,
        tile_header,
        unshown,
        unshown_y,
    }
}

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
fn place(area: Rect, ctx: &Ctx, buf: Buf, max_rows: usize, flat: bool, compact: bool) -> Option<Placed> {
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
