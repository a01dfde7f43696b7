//! The memory traffic screen's cache-misses view (`c`): per head of the forward pass, the misses
//! at one cache level (`l`: L1, L2, then the bytes to and from memory) of the plain MHA kernel
//! and of flash with square tiles of 16 to 128, log–log against T; the numbers under the plot
//! (those of `attn-trace cache --sweep`), the size of each tile size's working set and the
//! smallest level it fits in, and a note on which tiles outgrow each level. The rows come from
//! the worker ([`crate::tui::cache_sweep`]) as they are simulated.

use super::Traffic;
use crate::tui::theme::Theme;
use crate::tui::widgets::{draw_wrapped, wrapped_rows};
use attn_trace_analysis::cache::{CacheSweep, LevelSpec, MissCell, smallest_fit};
use attn_trace_analysis::format::{mask_words, pad_left, thousands};
use attn_trace_core::kernels::Mask;
use attn_trace_i18n::tr;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset as Series, GraphType, LegendPosition, Paragraph};

/// One plotted series: its legend entry, its points `(log2 T, log10 n)` and its style.
type Plotted = (String, Vec<(f64, f64)>, Style);

/// Columns of the table: T, then each kernel's number.
const T_WIDTH: usize = 5;
const CELL: usize = 13;

/// The number plotted for `cell` at `level`: its misses there, or past the last level the bytes
/// read from and written to memory.
pub(super) fn value(cell: &MissCell, level: usize) -> u64 {
    cell.misses.get(level).copied().unwrap_or(cell.memory_bytes)
}

/// What is plotted at `level`: `L1 misses`, …, `bytes to and from memory`.
pub(super) fn quantity(levels: &[LevelSpec], level: usize) -> String {
    match levels.get(level) {
        Some(l) => tr!("{level} misses", level = l.name),
        None => tr!("bytes to and from memory").to_string(),
    }
}

/// A size in at most 8 columns: `17.1 KiB`, `193 KiB`, `1.5 MiB`.
pub(super) fn size_short(n: u64) -> String {
    let (v, unit) = match n {
        n if n >= 1 << 20 => (n as f64 / f64::from(1 << 20), "MiB"),
        n if n >= 1 << 10 => (n as f64 / f64::from(1 << 10), "KiB"),
        n => return format!("{n} B"),
    };
    if v >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.1} {unit}")
    }
}

/// `17.1 KiB ≤ L1`: the working set of a tile size and the smallest level that holds it, or
/// `> L2` past the last.
pub(super) fn tile_cell(bytes: u64, levels: &[LevelSpec]) -> String {
    match smallest_fit(bytes, levels) {
        Some(k) => format!("{} ≤ {}", size_short(bytes), levels[k].name),
        None => format!(
            "{} > {}",
            size_short(bytes),
            levels.last().map_or("", |l| l.name.as_str())
        ),
    }
}

/// The table under the plot: a head line, one line per T shown (`…` while it is simulated), the
/// tile sizes' working sets.
pub(super) fn table(st: &Traffic, s: &CacheSweep) -> Vec<String> {
    let mut head = format!("{:>T_WIDTH$} {}", "T", pad_left(tr!("naive"), CELL));
    for t in &s.tiles {
        head.push_str(&format!(" {:>CELL$}", format!("flash {t}")));
    }
    let mut lines = vec![head];
    for t in st.sim.shown_lengths(st.max_t) {
        let mut line = format!("{t:>T_WIDTH$}");
        match s.rows.iter().find(|r| r.t == t) {
            Some(r) => {
                line.push_str(&format!(" {:>CELL$}", thousands(value(&r.naive, st.level))));
                for f in &r.flash {
                    line.push_str(&format!(" {:>CELL$}", thousands(value(f, st.level))));
                }
            }
            None => {
                for _ in 0..=s.tiles.len() {
                    line.push_str(&format!(" {:>CELL$}", "…"));
                }
            }
        }
        lines.push(line);
    }
    let mut tiles = format!("{} {:>CELL$}", pad_left(tr!("tile"), T_WIDTH), "");
    for b in &s.tile_bytes {
        tiles.push_str(&format!(" {:>CELL$}", tile_cell(*b, &s.levels)));
    }
    lines.push(tiles);
    lines
}

/// The caches, as the header names them: `L1 32 KiB 8-way, L2 512 KiB 8-way, 64-byte lines`.
fn caches_text(levels: &[LevelSpec]) -> String {
    let each: Vec<String> = levels
        .iter()
        .map(|l| {
            tr!(
                "{name} {size} {ways}-way",
                name = l.name,
                size = attn_trace_analysis::cache::size_text(l.size),
                ways = l.ways
            )
        })
        .collect();
    match levels.first() {
        Some(first) if levels.iter().all(|l| l.line == first.line) => tr!(
            "{levels}, {line}-byte lines",
            levels = each.join(tr!(", ")),
            line = first.line
        ),
        _ => levels.iter().map(LevelSpec::describe).collect::<Vec<_>>().join("; "),
    }
}

/// The level a legend entry is marked against: the level shown, or the last for memory bytes.
fn marked_level(levels: &[LevelSpec], level: usize) -> Option<&LevelSpec> {
    levels.get(level).or(levels.last())
}

pub(super) fn render(frame: &mut Frame, area: Rect, st: &Traffic, theme: Theme) {
    let t = theme;
    let key = st.sim_key();
    let s = st.sim.sweep(key, st.max_t);
    let levels = &st.sim.levels;
    let rows = table(st, &s);
    let what = quantity(levels, st.level);

    let mask = mask_words(if st.causal { &Mask::Causal } else { &Mask::None });
    let title = Line::from(vec![
        Span::styled(tr!(" Cache misses: naive vs flash "), t.title()),
        Span::styled(
            tr!("· {what} per head, forward, D = {d}, {mask}", what, d = st.d, mask),
            t.dim(),
        ),
    ]);
    let caches = Line::styled(
        tr!(
            "caches: {caches} ({from})",
            caches = caches_text(levels),
            from = st.sim.from.describe()
        ),
        t.dim(),
    );
    let head_lines = [title, caches];

    // under the table: the progress, then which tiles outgrow each level
    let mut notes: Vec<Line> = Vec::new();
    if let Some(p) = st.sim.progress(key) {
        notes.push(Line::styled(
            tr!(
                "simulating… {done} of {total} runs (T = {t} under way, {secs} s)",
                done = p.done,
                total = p.total,
                t = p.t,
                secs = format!("{:.1}", p.elapsed.as_secs_f64())
            ),
            t.number(),
        ));
    } else if let Some(why) = &st.sim.failed {
        notes.push(Line::styled(why.clone(), t.error()));
    }
    let fits = s.fit_notes();
    let mut spans = Vec::new();
    for (k, note) in fits.iter().enumerate() {
        if k > 0 {
            spans.push(Span::styled(tr!("; "), t.dim()));
        }
        // the note of the level shown stands out
        let style = if k == st.level || (st.level >= fits.len() && k + 1 == fits.len()) {
            t.base()
        } else {
            t.dim()
        };
        spans.push(Span::styled(note.clone(), style));
    }
    notes.push(Line::from(spans));
    let foot = Line::styled(
        tr!("c: global traffic · l: level · t: T range · d: head size · m: mask · q: back"),
        t.dim(),
    );

    let head_h = wrapped_rows(&head_lines, area.width);
    let notes_h = wrapped_rows(&notes, area.width);
    let foot_h = wrapped_rows(std::slice::from_ref(&foot), area.width);
    let [head, plot, numbers, below, foot_area] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Fill(1),
        Constraint::Length(rows.len() as u16 + 2),
        Constraint::Length(notes_h),
        Constraint::Length(foot_h),
    ])
    .areas(area);
    draw_wrapped(frame.buffer_mut(), head, &head_lines);

    // the plot: one series per kernel, log2 T against log10 of the number
    let point = |t: usize, n: u64| ((t as f64).log2(), (n.max(1) as f64).log10());
    let mut series: Vec<Plotted> = vec![(
        tr!("naive").to_string(),
        s.rows.iter().map(|r| point(r.t, value(&r.naive, st.level))).collect(),
        t.error(),
    )];
    // the traffic view's colours for the same tile sizes
    let styles = [
        t.name(),
        t.number(),
        t.level(attn_trace_core::tensor::Level::Tile),
        t.base(),
    ];
    let marked = marked_level(levels, st.level);
    for (k, (tile, bytes)) in s.tiles.iter().zip(&s.tile_bytes).enumerate() {
        let name = match marked {
            Some(l) if *bytes > l.size => format!("flash {tile} > {}", l.name),
            _ => format!("flash {tile}"),
        };
        series.push((
            name,
            s.rows
                .iter()
                .map(|r| point(r.t, r.flash.get(k).map_or(0, |c| value(c, st.level))))
                .collect(),
            styles.get(k).copied().unwrap_or(Style::default()),
        ));
    }
    let (lo, hi) = series
        .iter()
        .flat_map(|(_, p, _)| p.iter().map(|&(_, y)| y))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
    let (lo, hi) = if lo.is_finite() {
        (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
    } else {
        (0.0, 1.0)
    };
    let shown = st.sim.shown_lengths(st.max_t);
    let first = shown.first().map_or(6.0, |&t| (t as f64).log2());
    let last = shown
        .last()
        .map_or(first + 1.0, |&t| (t as f64).log2())
        .max(first + 1.0);
    // the chart centres a middle label between the ends: one there only when a length sits there
    let ends = [shown.first(), shown.last()];
    let middle = (shown.len() % 2 == 1 && shown.len() > 2)
        .then(|| shown.get(shown.len() / 2))
        .flatten();
    let x_labels: Vec<String> = [ends[0], middle, ends[1]]
        .into_iter()
        .flatten()
        .map(|t| format!("T={t}"))
        .collect();
    let y_labels: Vec<String> = [lo, (lo + hi) / 2.0, hi].iter().map(|y| format!("1e{y:.0}")).collect();
    let block = Block::bordered()
        .title(tr!(" log–log: {what} per head as T grows ", what))
        .border_style(t.border(true));
    if s.rows.is_empty() {
        let waiting = Paragraph::new(Line::styled(tr!("simulating…"), t.dim())).block(block);
        frame.render_widget(waiting, plot);
    } else {
        let data: Vec<Series> = series
            .iter()
            .map(|(name, points, style)| {
                Series::default()
                    .name(name.clone())
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Line)
                    .style(*style)
                    .data(points)
            })
            .collect();
        let named: Vec<(String, Style)> = series.iter().map(|(name, _, style)| (name.clone(), *style)).collect();
        let (block, inside) = crate::tui::widgets::chart_legend(block, &named, plot);
        let chart = Chart::new(data)
            .block(block)
            .legend_position(inside.then_some(LegendPosition::TopLeft))
            .hidden_legend_constraints((Constraint::Percentage(100), Constraint::Percentage(100)))
            .x_axis(Axis::default().bounds([first, last]).labels(x_labels).style(t.dim()))
            .y_axis(Axis::default().bounds([lo, hi]).labels(y_labels).style(t.dim()));
        frame.render_widget(chart, plot);
    }

    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let style = if k == 0 || k + 1 == rows.len() {
                t.dim()
            } else {
                t.number()
            };
            Line::styled(l.clone(), style)
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(tr!(" {what} · tile: flash's working set, the level it fits in ", what))
                .border_style(t.border(false)),
        ),
        numbers,
    );
    draw_wrapped(frame.buffer_mut(), below, &notes);
    draw_wrapped(frame.buffer_mut(), foot_area, std::slice::from_ref(&foot));
}
