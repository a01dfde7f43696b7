//! Memory traffic, naive against flash: global reads + writes per head of the forward pass as
//! the sequence grows (log–log), for the plain MHA kernel, its `T×T` part, and flash with
//! square tiles of 16 to 128; the numbers under the plot. The same closed forms as
//! `attn-trace io --sweep` (`traffic::sweep`), which tests hold to the traced counts.
//!
//! `c` switches to the cache misses of the same kernels (`misses.rs`): those of
//! `attn-trace cache --sweep`, simulated on a worker thread ([`crate::tui::cache_sweep`]).

mod misses;

use crate::tui::cache_sweep::Simulation;
use crate::tui::theme::Theme;
use attn_trace_analysis::format::{mask_words, pad_left};
use attn_trace_analysis::traffic::{Sweep, sweep};
use attn_trace_core::kernels::Mask;
use attn_trace_i18n::{msg, tr};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset as Series, GraphType, LegendPosition, Paragraph, Wrap};

/// The sequence lengths and square tile sizes plotted (those of `io --sweep`).
pub(crate) const LENGTHS: [usize; 7] = [64, 128, 256, 512, 1024, 2048, 4096];
pub(crate) const TILES: [usize; 4] = [16, 32, 64, 128];
/// The head sizes `d` steps through.
pub(crate) const HEAD_DIMS: [usize; 4] = [16, 32, 64, 128];

/// The screen's keys, for its `?` popup and the docs.
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("c", msg!("global traffic ↔ cache misses (simulated)")),
    ("l", msg!("cache misses: next level (L1, L2, memory bytes)")),
    ("t", msg!("cache misses: T up to 512 ↔ 1024")),
    ("d", msg!("next head size D (16, 32, 64, 128)")),
    ("m", msg!("no mask ↔ causal mask")),
    ("?", msg!("these keys")),
    ("q / Esc", msg!("back")),
];

/// What a key asks of the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Stay,
    Back,
    Help,
}

/// The largest T the cache-misses view simulates at first (`t` goes on to 1024): its rows come
/// within a few seconds.
pub(crate) const FIRST_MAX_T: usize = 512;

/// The largest of `lengths` up to [`FIRST_MAX_T`] (else the shortest).
fn first_max_t(lengths: &[usize]) -> usize {
    lengths
        .iter()
        .copied()
        .filter(|&t| t <= FIRST_MAX_T)
        .max()
        .or_else(|| lengths.first().copied())
        .unwrap_or(FIRST_MAX_T)
}

/// What the screen plots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum View {
    /// Global reads + writes, the closed forms of `io --sweep`.
    Traffic,
    /// Cache misses, simulated: those of `cache --sweep`.
    Misses,
}

#[derive(Debug)]
pub(crate) struct Traffic {
    pub d: usize,
    pub causal: bool,
    /// The plotted numbers, recomputed when `d` or the mask changes.
    pub sweep: Sweep,
    pub view: View,
    /// The cache-misses view's level: an index of the simulation's levels, or their number for
    /// the bytes to and from memory.
    pub level: usize,
    /// The cache-misses view's largest T.
    pub max_t: usize,
    /// The cache-misses view's rows and the worker simulating them.
    pub sim: Simulation,
}

impl Default for Traffic {
    fn default() -> Self {
        Traffic::new(64, false)
    }
}

impl Traffic {
    /// The traffic view at head size `d`, the misses (when `c` asks for them) of this machine's
    /// caches.
    pub(crate) fn new(d: usize, causal: bool) -> Traffic {
        Traffic::with_simulation(d, causal, Simulation::default())
    }

    /// The traffic view, the misses those of `sim` (its levels and lengths).
    pub(crate) fn with_simulation(d: usize, causal: bool, sim: Simulation) -> Traffic {
        let mask = if causal { Mask::Causal } else { Mask::None };
        let max_t = first_max_t(&sim.lengths);
        Traffic {
            d,
            causal,
            sweep: sweep(&LENGTHS, &TILES, d, mask),
            view: View::Traffic,
            level: 0,
            max_t,
            sim,
        }
    }

    /// The cache-misses view's key into the simulation: head size and mask.
    pub(crate) fn sim_key(&self) -> (usize, bool) {
        (self.d, self.causal)
    }

    /// Sets the head size and mask; the misses view asks for their rows.
    fn set(&mut self, d: usize, causal: bool) {
        let mask = if causal { Mask::Causal } else { Mask::None };
        self.d = d;
        self.causal = causal;
        self.sweep = sweep(&LENGTHS, &TILES, d, mask);
        self.simulate();
    }

    /// In the misses view: the rows shown, known or under way.
    fn simulate(&mut self) {
        if self.view == View::Misses {
            self.sim.want(self.sim_key(), self.max_t);
        }
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => return Outcome::Back,
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Char('d') => {
                let k = HEAD_DIMS.iter().position(|&d| d == self.d).map_or(0, |k| k + 1);
                self.set(HEAD_DIMS[k % HEAD_DIMS.len()], self.causal);
            }
            KeyCode::Char('m') => self.set(self.d, !self.causal),
            KeyCode::Char('c') => {
                self.view = match self.view {
                    View::Traffic => View::Misses,
                    View::Misses => View::Traffic,
                };
                self.simulate();
            }
            KeyCode::Char('l') if self.view == View::Misses => {
                self.level = (self.level + 1) % (self.sim.levels.len() + 1);
            }
            KeyCode::Char('t') if self.view == View::Misses => {
                let first = first_max_t(&self.sim.lengths);
                let last = self.sim.lengths.last().copied().unwrap_or(first);
                self.max_t = if self.max_t == first { last } else { first };
                self.simulate();
            }
            _ => {}
        }
        Outcome::Stay
    }

    /// Takes in the rows the cache simulation finished (the app calls it on every message).
    pub(crate) fn tick(&mut self) {
        self.sim.tick();
    }

    /// Whether the cache simulation is under way (the app ticks meanwhile).
    pub(crate) fn busy(&self) -> bool {
        self.sim.busy()
    }

    /// `(name, points)` of each plotted series, as `(log2 T, log10 accesses)`.
    pub(crate) fn series(&self) -> Vec<(String, Vec<(f64, f64)>)> {
        let point = |t: usize, n: u64| ((t as f64).log2(), (n.max(1) as f64).log10());
        let rows = &self.sweep.rows;
        let mut out = vec![
            (
                tr!("naive").to_string(),
                rows.iter().map(|r| point(r.t, r.naive)).collect(),
            ),
            (
                tr!("naive: S, P").to_string(),
                rows.iter().map(|r| point(r.t, r.naive_scores_probs)).collect(),
            ),
        ];
        for (k, tile) in self.sweep.tiles.iter().enumerate() {
            out.push((
                format!("flash {tile}"),
                rows.iter().map(|r| point(r.t, r.flash[k])).collect(),
            ));
        }
        out
    }
}

/// A count in at most 7 characters: as it is below 10,000, else 3 significant digits and k, M
/// or G (`41.0k`, `1.08M`, `4.40G`).
pub(crate) fn compact(n: u64) -> String {
    if n < 10_000 {
        return n.to_string();
    }
    let (v, unit) = match n {
        n if n >= 1_000_000_000 => (n as f64 / 1e9, "G"),
        n if n >= 1_000_000 => (n as f64 / 1e6, "M"),
        n => (n as f64 / 1e3, "k"),
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$}{unit}")
}

/// The table under the plot: one line per T, the same numbers the plot draws, then M.
pub(crate) fn table(st: &Traffic) -> Vec<String> {
    let s = &st.sweep;
    let mut head = format!("{:>5} {} {:>8}", "T", pad_left(tr!("naive"), 8), "S, P");
    for t in &s.tiles {
        head.push_str(&format!(" {:>9}", format!("flash {t}")));
    }
    let mut lines = vec![head];
    for r in &s.rows {
        let mut line = format!(
            "{:>5} {:>8} {:>8}",
            r.t,
            compact(r.naive),
            compact(r.naive_scores_probs)
        );
        for f in &r.flash {
            line.push_str(&format!(" {:>9}", compact(*f)));
        }
        lines.push(line);
    }
    let mut m = format!("{:>5} {:>8} {:>8}", "M", "", "");
    for f in &s.tile_floats {
        m.push_str(&format!(" {:>9}", compact(*f as u64)));
    }
    lines.push(m);
    lines
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &Traffic, theme: Theme) {
    if st.view == View::Misses {
        misses::render(frame, area, st, theme);
        return;
    }
    let t = theme;
    let rows = table(st);
    let note = Line::styled(
        tr!(
            "naive reads q, k, v and P from global memory for every product and writes S and P there; flash reads k and v once per query tile and writes only att and lse.   c: cache misses · d: head size · m: mask · q: back"
        ),
        t.dim(),
    );
    // the keys at its end stay in sight on a narrow terminal
    let note_rows = crate::tui::widgets::wrapped_rows(std::slice::from_ref(&note), area.width).max(2);
    let [head, plot, numbers, foot] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Fill(1),
        Constraint::Length(rows.len() as u16 + 2),
        Constraint::Length(note_rows),
    ])
    .areas(area);
    let mask = mask_words(if st.causal { &Mask::Causal } else { &Mask::None });
    let title = Line::from(vec![
        Span::styled(tr!(" Traffic: naive vs flash "), t.title()),
        Span::styled(
            tr!("· global accesses per head, forward, D = {d}, {mask}", d = st.d, mask),
            t.dim(),
        ),
    ]);
    frame.render_widget(Paragraph::new(title), head);

    let series = st.series();
    let styles = [
        t.error(),
        t.keyword(),
        t.name(),
        t.number(),
        t.level(attn_trace_core::tensor::Level::Tile),
        t.base(),
    ];
    let (lo, hi) = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|&(_, y)| y))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
    let (lo, hi) = (lo.floor(), hi.ceil().max(lo.floor() + 1.0));
    let data: Vec<Series> = series
        .iter()
        .enumerate()
        .map(|(k, (name, points))| {
            Series::default()
                .name(name.clone())
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(styles.get(k).copied().unwrap_or(Style::default()))
                .data(points)
        })
        .collect();
    let x_labels: Vec<String> = [LENGTHS[0], 512, LENGTHS[LENGTHS.len() - 1]]
        .iter()
        .map(|t| format!("T={t}"))
        .collect();
    let y_labels: Vec<String> = [lo, (lo + hi) / 2.0, hi].iter().map(|y| format!("1e{y:.0}")).collect();
    let first = (LENGTHS[0] as f64).log2();
    let last = (LENGTHS[LENGTHS.len() - 1] as f64).log2();
    let named: Vec<(String, Style)> = series
        .iter()
        .enumerate()
        .map(|(k, (name, _))| (name.clone(), styles.get(k).copied().unwrap_or_default()))
        .collect();
    let (block, inside) = crate::tui::widgets::chart_legend(
        Block::bordered()
            .title(tr!(" log–log: both grow with T², flash divided by its tile "))
            .border_style(t.border(true)),
        &named,
        plot,
    );
    let chart = Chart::new(data)
        .block(block)
        .legend_position(inside.then_some(LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Percentage(100), Constraint::Percentage(100)))
        .x_axis(Axis::default().bounds([first, last]).labels(x_labels).style(t.dim()))
        .y_axis(Axis::default().bounds([lo, hi]).labels(y_labels).style(t.dim()));
    frame.render_widget(chart, plot);

    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .map(|(k, l)| Line::styled(l.clone(), if k == 0 { t.dim() } else { t.number() }))
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(tr!(
                    " the plotted numbers · S, P: naive's T×T part · M: floats of flash's tiles "
                ))
                .border_style(t.border(false)),
        ),
        numbers,
    );
    frame.render_widget(Paragraph::new(note).wrap(Wrap { trim: true }), foot);
}
