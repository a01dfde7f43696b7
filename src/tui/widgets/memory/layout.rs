//! Where every cell of the memory panel goes: the dot product strip first, then the buffers in
//! the order of [`super::buffers`], each windowed around the cell it centres on.

mod buffer;

use buffer::place;

use super::super::{Ctx, dot};
use super::buffers;
use crate::tui::widgets::cols;
use attn_trace_analysis::step::{loaded_from, step_buffers};
use attn_trace_core::kernels::names;
use attn_trace_core::tensor::{Layout, Level};
use attn_trace_core::trace::Buf;
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
