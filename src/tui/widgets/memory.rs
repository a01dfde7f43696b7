//! The memory panel: each buffer the phase touches as its logical grid (`[B,T,C]`; `[B,H,T,T]`
//! as H small T×T matrices; `[B,T,H,D]` with the heads side by side) and as the flat row
//! `data[..]` with offsets. Only a window around the interesting cell is laid out, so drawing
//! costs the same on a 3×4 buffer as on a million-element one.
//!
//! [`plan`] places every cell; [`render`] draws the plan and [`hit`] answers mouse clicks from
//! the same plan, so what is clicked is what was drawn.

use super::{CellRef, Ctx, dot, frame_ids, num, put};
use crate::analysis::accum::Accumulation;
use crate::tensor::{Layout, Level};
use crate::tr;
use crate::trace::{Buf, Op, Phase, Trace};
use crate::tui::widgets::{cols, cut};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::Line;
use ratatui::widgets::{Block, Widget};
use std::collections::HashSet;

/// Width of one value cell (6 characters and a space) and of one heat cell.
const VALUE_W: u16 = 7;
const HEAT_W: u16 = 3;

/// Where flash's current tiles lie in the global buffers: the batch and head, the query tile's
/// rows `i0..i1` and the key tile's rows `j0..j1` (from the event's loop variables and the tile
/// sizes in the registry). `None` outside flash's loops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileRegion {
    pub bb: usize,
    pub hh: usize,
    pub rows_i: Option<std::ops::Range<usize>>,
    pub rows_j: Option<std::ops::Range<usize>>,
}

/// The tiles the current event works on, as regions of the global buffers.
pub fn tile_region(ctx: &Ctx) -> Option<TileRegion> {
    let v = &ctx.view;
    if !matches!(v.phase, Phase::Flash | Phase::FlashBack) {
        return None;
    }
    let var = |name: &str| v.vars.iter().rev().find(|(n, _)| *n == name).map(|&(_, x)| x);
    let size = |buf: Buf| {
        ctx.trace
            .buffer(buf)
            .and_then(|b| b.layout().dims.first().map(|d| d.size))
    };
    let sh = ctx.walk.shape;
    let rows_i = var("i0").zip(size(Buf::QTile)).map(|(i0, br)| i0..(i0 + br).min(sh.s));
    let rows_j = var("j0").zip(size(Buf::KTile)).map(|(j0, bc)| j0..(j0 + bc).min(sh.t));
    Some(TileRegion {
        bb: var("bb")?,
        hh: var("hh")?,
        rows_i,
        rows_j,
    })
}

/// Is `off` of global buffer `buf` inside the current query or key tile?
fn in_region(ctx: &Ctx, region: &TileRegion, buf: Buf, off: usize) -> bool {
    let Some(info) = ctx.trace.buffer(buf) else {
        return false;
    };
    let l = info.layout();
    if info.spec.level != crate::tensor::Level::Global
        || l.coord(off, "b") != region.bb
        || l.coord(off, "h") != region.hh
    {
        return false;
    }
    let within = |name: &str, rows: &Option<std::ops::Range<usize>>| {
        l.position(name).is_some() && rows.as_ref().is_some_and(|r| r.contains(&l.coord(off, name)))
    };
    within("i", &region.rows_i) || within("j", &region.rows_j)
}

/// A cell placed on screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spot {
    pub x: u16,
    pub y: u16,
    pub w: u16,
    pub off: usize,
    pub masked: bool,
}

/// One buffer laid out: its labels and its cells (grid cells, then the flat row).
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
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
        let (cname, cols) = dims.first().map_or(("o", 0), |d| (d.name, d.size));
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

/// The global buffer a flash tile is loaded from (the kernel's tile loads: `q → q_tile`,
/// `k → k_tile`, `v → v_tile`, `d_att → do_tile`).
pub fn loaded_from(tile: Buf) -> Option<Buf> {
    match tile {
        Buf::QTile => Some(Buf::Q),
        Buf::KTile => Some(Buf::K),
        Buf::VTile => Some(Buf::V),
        Buf::DOTile => Some(Buf::DAtt),
        _ => None,
    }
}

/// The buffers of flash's current step, from the log: the step is the iteration just inside
/// the innermost tile loop (`i0` or `j0`) that holds the current event (a tile load, the score
/// tile, a row of the online softmax, a gradient tile, the output tile); its buffers are those
/// its events read or write, in the order first touched. Empty outside flash's tile loops.
pub fn step_buffers(ctx: &Ctx) -> Vec<Buf> {
    let trace = ctx.trace;
    let ids = frame_ids(trace, ctx.cursor);
    let tile_loop = ids.iter().position(|&id| {
        trace
            .frame(id)
            .and_then(|f| trace.kinds.get(f.kind as usize))
            .is_some_and(|k| matches!(k.names.first(), Some(&"i0" | &"j0")))
    });
    let Some(step) = tile_loop
        .and_then(|k| k.checked_sub(1))
        .and_then(|k| ids.get(k))
        .and_then(|&id| trace.frame(id))
    else {
        return Vec::new();
    };
    let mut out: Vec<Buf> = Vec::new();
    for e in &trace.events[step.start as usize..(step.end as usize).min(trace.len())] {
        if !out.contains(&e.buf) {
            out.push(e.buf);
        }
    }
    out
}

/// Buffers to draw, most wanted first: in a dot product the buffer it writes and those of its
/// operands, else the current event's (in flash's tile loops the current event's first); then
/// the selected cell's; in flash's tile loops the
/// buffers of the current step and the global buffers its tiles were loaded from; then the
/// rest of the phase's.
pub fn buffers(ctx: &Ctx, dot: Option<&Accumulation>) -> Vec<Buf> {
    let mut out = Vec::new();
    let step = step_buffers(ctx);
    // in flash's steps the current event's buffer comes first: a read of `l` or `m` beside
    // the output tile's sum is not one of the sum's factors
    if !step.is_empty() {
        out.push(ctx.view.buf);
    }
    if let Some(d) = dot {
        out.push(ctx.trace.events[d.write].buf);
        if let Some(t) = d.terms.first() {
            out.extend(t.reads.iter().map(|&k| ctx.trace.events[k].buf));
        }
    }
    out.push(ctx.view.buf);
    if ctx.pinned {
        out.push(ctx.selected.0);
    }
    out.extend(&step);
    out.extend(step.iter().filter_map(|&b| loaded_from(b)));
    out.extend(ctx.view.phase.buffers());
    let mut seen = HashSet::new();
    out.retain(|b| seen.insert(*b) && ctx.trace.buffer(*b).is_some());
    out
}

/// What the memory panel draws: the dot product being stepped, as many buffers as fit, and the
/// buffers that did not fit (named on the last line).
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
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
pub fn plan(area: Rect, ctx: &Ctx) -> Plan {
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
    let step = step_buffers(ctx);
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
    Plan {
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
    if info.spec.shape != view {
        let stored: Vec<String> = info.spec.shape.iter().map(|d| d.to_string()).collect();
        title.push_str(&tr!(" view of [{dims}]", dims = stored.join(",")));
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
        if let Some(r) = tile_region(ctx) {
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
            title.extend(rows("i", &r.rows_i).or_else(|| rows("j", &r.rows_j)));
        }
    }
    if layout.row_dim().is_some_and(|r| r > 0) {
        title.push_str(&tr!("  batch {b}", b = layout.index(focus)[0]));
    }
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
    // heat cells are narrower than their labels: a label goes where it fits, whole, and the
    // columns between are unlabelled (never a number cut to its last digits)
    let mut next_free = area.x;
    let label_over = |labels: &mut Vec<(u16, u16, String, bool)>, next_free: &mut u16, x: u16, y: u16, name: String| {
        let width = cols(&name) as u16;
        let start = (x + cw).saturating_sub(1 + width);
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
                    let masked = p.pairs && ctx.walk.mask.hides(r, c);
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
        hidden.push((format!("{rows}: {what}"), rows));
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
        hidden.push((format!("{cols}: {what}"), cols));
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

/// The cell under a mouse click, if any: a grid cell, or an operand of the dot product.
pub fn hit(plan: &Plan, trace: &Trace, x: u16, y: u16) -> Option<CellRef> {
    let inside = |sx: u16, sy: u16, w: u16| sy == y && x >= sx && x < sx + w.max(1);
    let grid = plan
        .grids
        .iter()
        .find_map(|p| p.cells.iter().find(|s| inside(s.x, s.y, s.w)).map(|s| (p.buf, s.off)));
    grid.or_else(|| {
        let d = plan.dot.as_ref()?;
        let s = d.spots.iter().find(|s| inside(s.x, s.y, s.w))?;
        dot::spot_cell(trace, &d.dot, s)
    })
}

/// Cells the current loop iteration read or wrote before this event: the other operands.
fn touched(trace: &Trace, n: usize) -> HashSet<CellRef> {
    let ids = frame_ids(trace, n);
    let e = trace.events[n];
    let frame = if e.op == Op::Write {
        ids.first()
    } else {
        ids.get(1).or(ids.first())
    };
    let start = frame.and_then(|&id| trace.frame(id)).map_or(n, |f| f.start as usize);
    (start.max(n.saturating_sub(256))..n)
        .map(|k| (trace.events[k].buf, trace.events[k].offset as usize))
        .collect()
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

pub fn render(frame: &mut Frame, area: Rect, ctx: &Ctx, focused: bool) {
    let t = ctx.theme;
    let mut block = Block::bordered().title(tr!(" Memory ")).border_style(t.border(focused));
    let inner = block.inner(area);
    let plan = plan(inner, ctx);
    let left_out = left_out(&plan.unshown, inner.width.saturating_sub(2) as usize);
    // a grid's note below the panel's last line goes on its bottom border, with what is left out
    let low_note = plan
        .grids
        .iter()
        .filter_map(|p| p.note.as_ref())
        .find(|(_, y, _)| *y >= inner.bottom())
        .map(|(_, _, text)| text.clone());
    let border_out = (!plan.unshown.is_empty() && plan.unshown_y.is_none()).then_some(left_out.clone());
    let border: Vec<String> = low_note.into_iter().chain(border_out).collect();
    if !border.is_empty() {
        block = block.title_bottom(Line::styled(format!(" {} ", border.join(" · ")), t.dim()));
    }
    block.render(area, frame.buffer_mut());
    let touched = touched(ctx.trace, ctx.cursor);
    let region = tile_region(ctx);
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
        put(buf, inner, inner.x, y, &left_out, t.dim());
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
        if let Some(y) = p.legend {
            legend(buf, inner, y, scale, t);
        }
        for (s, &v) in p.cells.iter().zip(&values) {
            let cell = (p.buf, s.off);
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
            } else if region.as_ref().is_some_and(|r| in_region(ctx, r, p.buf, s.off)) && !p.heat {
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
                format!("{:>w$}", num(v), w = s.w as usize)
            } else if emphasised {
                "◀▶".to_string()
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

/// The heat legend: the colours (or shades) from −max to +max of the cells in view, and the
/// marks drawn on cells instead of numbers.
fn legend(buf: &mut ratatui::buffer::Buffer, area: Rect, y: u16, scale: f32, t: crate::tui::theme::Theme) {
    let mut x = put(buf, area, area.x, y, &tr!("heat −{max} ", max = num(scale)), t.dim());
    for k in 0..=4 {
        let heat = f64::from(k) / 4.0;
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
