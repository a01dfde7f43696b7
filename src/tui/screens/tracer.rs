//! The tracer: a cursor over one variant's event log, and every panel in sync with it.
//!
//! State changes only in [`Tracer::key`] / [`Tracer::mouse`]; [`render`] draws from the state and
//! never mutates. Every key is answered with O(1) or O(log n) queries on the trace's indexes.

use crate::format::phase_title;
use crate::kernels::Variant;
use crate::trace::{Buf, Pass, Phase};
use crate::tui::theme::Theme;
use crate::tui::walk::{Element, Walk};
use crate::tui::widgets::{self, CellRef, Ctx, code, equation, log, memory, put, timeline, variables};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// The panel shown when the screen is too small for all of them at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Memory,
    Code,
    Log,
    Vars,
}

impl Tab {
    const ALL: [Tab; 4] = [Tab::Memory, Tab::Code, Tab::Log, Tab::Vars];

    fn name(self) -> &'static str {
        match self {
            Tab::Memory => "Memory",
            Tab::Code => "Code",
            Tab::Log => "Log",
            Tab::Vars => "Vars",
        }
    }
}

/// What the app should do after a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Stay,
    Back,
    Help,
}

#[derive(Debug)]
pub struct Tracer {
    pub walk: Arc<Walk>,
    pub variant: Variant,
    /// The current event; always `< len` when the log has events.
    pub cursor: usize,
    /// Where the cursor was in each (variant, pass) last, for `Tab` and `f`.
    saved: HashMap<(Variant, Pass), usize>,
    /// A cell the user selected (click, arrows, goto); `None` follows the current event.
    pub pinned: Option<CellRef>,
    pub breakpoints: BTreeSet<CellRef>,
    /// The goto prompt's text while it is open.
    pub prompt: Option<String>,
    /// One line of feedback in the status bar (cleared by the next key).
    pub message: Option<String>,
    pub tab: Tab,
    /// Arrow keys move the selected cell instead of the cursor.
    pub select: bool,
    /// The terminal's width, which the timeline spans (set by the app before each key).
    pub width: u16,
}

impl Tracer {
    /// Opens `variant` (or the walk's first) at the walk's focus.
    pub fn new(walk: Arc<Walk>, variant: Option<Variant>) -> Tracer {
        let variant = variant
            .filter(|v| walk.run(*v).is_some())
            .or_else(|| walk.first_variant())
            .unwrap_or(Variant::Mha);
        let cursor = walk.start_cursor(variant);
        Tracer {
            walk,
            variant,
            cursor,
            saved: HashMap::new(),
            pinned: None,
            breakpoints: BTreeSet::new(),
            prompt: None,
            message: None,
            tab: Tab::Memory,
            select: false,
            width: 120,
        }
    }

    pub fn len(&self) -> usize {
        self.walk.trace(self.variant).map_or(0, |t| t.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The selected cell: the pinned one, else the current event's.
    pub fn selected(&self) -> Option<CellRef> {
        let trace = self.walk.trace(self.variant)?;
        self.pinned
            .or_else(|| trace.events.get(self.cursor).map(|e| (e.buf, e.offset as usize)))
    }

    /// The panels' shared view of the state, `None` for an empty log.
    pub fn ctx(&self, theme: Theme) -> Option<Ctx<'_>> {
        let trace = self.walk.trace(self.variant)?;
        if self.cursor >= trace.len() {
            return None;
        }
        Some(Ctx {
            walk: &self.walk,
            variant: self.variant,
            trace,
            cursor: self.cursor,
            view: trace.view(self.cursor),
            theme,
            selected: self.selected()?,
            pinned: self.pinned.is_some(),
            breakpoints: &self.breakpoints,
        })
    }

    fn go(&mut self, to: Option<usize>, none: &str) {
        match to {
            Some(n) if n < self.len() => self.cursor = n,
            _ => self.message = Some(none.to_string()),
        }
    }

    pub fn key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        if self.prompt.is_some() {
            self.prompt_key(key);
            return Outcome::Stay;
        }
        // the walk is shared: holding our own handle lets the trace outlive `&mut self` calls
        let walk = Arc::clone(&self.walk);
        let len = walk.trace(self.variant).map_or(0, |t| t.len());
        let Some(trace) = walk.trace(self.variant).filter(|_| len > 0) else {
            return match key.code {
                KeyCode::Char('q') | KeyCode::Esc => Outcome::Back,
                KeyCode::Char('?') => Outcome::Help,
                _ => Outcome::Stay,
            };
        };
        let n = self.cursor;
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let arrows_select = self.select || shift;
        match key.code {
            KeyCode::Left | KeyCode::Right | KeyCode::Up | KeyCode::Down if arrows_select => {
                self.move_selection(key.code)
            }
            KeyCode::Char('n') | KeyCode::Right => self.go(Some(n + 1), "last event of the log"),
            KeyCode::Char('p') | KeyCode::Left => self.go(n.checked_sub(1), "first event of the log"),
            KeyCode::Char('j') | KeyCode::Down => self.go(trace.next_iteration(n, 0), "no next iteration"),
            KeyCode::Char('k') | KeyCode::Up => self.go(trace.prev_iteration(n, 0), "no previous iteration"),
            KeyCode::Char('J') => self.go(trace.next_iteration(n, 1), "no next iteration of the enclosing loop"),
            KeyCode::Char('K') => self.go(
                trace.prev_iteration(n, 1),
                "no previous iteration of the enclosing loop",
            ),
            KeyCode::Char(']') => self.go(trace.next_phase(n), "this is the last phase"),
            KeyCode::Char('[') => self.go(trace.prev_phase(n), "this is the first phase"),
            KeyCode::PageDown => self.cursor = (n + 100).min(len - 1),
            KeyCode::PageUp => self.cursor = n.saturating_sub(100),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = len - 1,
            KeyCode::Char('f') => self.toggle_pass(),
            KeyCode::Tab => self.toggle_variant(1),
            KeyCode::BackTab => self.toggle_variant(-1),
            KeyCode::Char('g') => self.prompt = Some(String::new()),
            KeyCode::Char('w') => self.who_wrote(),
            KeyCode::Char('r') => self.who_reads(),
            KeyCode::Char('b') => self.toggle_breakpoint(),
            KeyCode::Char('c') => self.continue_to(true),
            KeyCode::Char('C') => self.continue_to(false),
            KeyCode::Char('s') => {
                self.select = !self.select;
                if self.select && self.pinned.is_none() {
                    self.pinned = self.selected();
                }
                self.message = Some(
                    if self.select {
                        "arrows move the selected cell (s or Esc to step again)"
                    } else {
                        "arrows step through events"
                    }
                    .into(),
                );
            }
            KeyCode::Char('t') => {
                let k = Tab::ALL.iter().position(|&t| t == self.tab).unwrap_or(0);
                self.tab = Tab::ALL[(k + 1) % Tab::ALL.len()];
            }
            KeyCode::Char('1') => self.tab = Tab::Memory,
            KeyCode::Char('2') => self.tab = Tab::Code,
            KeyCode::Char('3') => self.tab = Tab::Log,
            KeyCode::Char('4') => self.tab = Tab::Vars,
            KeyCode::Char('>') => self.along_timeline(true),
            KeyCode::Char('<') => self.along_timeline(false),
            KeyCode::Char('}') => self.tick(true),
            KeyCode::Char('{') => self.tick(false),
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Esc if self.select || self.pinned.is_some() => {
                self.select = false;
                self.pinned = None;
            }
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Back,
            _ => {}
        }
        Outcome::Stay
    }

    fn prompt_key(&mut self, key: KeyEvent) {
        let Some(text) = self.prompt.as_mut() else {
            return;
        };
        match key.code {
            KeyCode::Esc => self.prompt = None,
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Enter => {
                let text = self.prompt.take().unwrap_or_default();
                if let Err(e) = self.goto(&text) {
                    self.message = Some(e);
                }
            }
            KeyCode::Char(c) if text.len() < 64 => text.push(c),
            _ => {}
        }
    }

    /// `g`: an event number, an element `b=0 h=1 i=2 j=1`, a cell `scores[16]` / `q[0,2,1,0]`,
    /// or a phase name.
    pub fn goto(&mut self, text: &str) -> Result<(), String> {
        let walk = Arc::clone(&self.walk);
        let trace = walk.trace(self.variant).ok_or("this variant has no trace")?;
        let text = text.trim();
        let len = trace.len();
        if len == 0 {
            return Err("this variant recorded no events".into());
        }
        if let Ok(n) = text.trim_start_matches('#').parse::<usize>() {
            if n >= len {
                return Err(format!(
                    "event {n} is past the end: the log has {len} events (0..{})",
                    len - 1
                ));
            }
            self.cursor = n;
            return Ok(());
        }
        if let Some(phase) = Phase::from_name(text) {
            let k = trace.phases.iter().position(|&(s, p)| p == phase && (s as usize) < len);
            let k = k.ok_or_else(|| format!("phase {phase} is not in this trace"))?;
            self.cursor = trace.phases[k].0 as usize;
            return Ok(());
        }
        if text.contains('=') {
            let e = Element::parse(text)?;
            let pass = trace.view(self.cursor).pass;
            let n = walk.element_event(self.variant, pass, e).ok_or_else(|| {
                let sh = walk.shape;
                format!(
                    "no score element b={} h={} i={} j={} in {}: B={}, H={}, T={}",
                    e.b,
                    e.h,
                    e.i,
                    e.j,
                    self.variant,
                    sh.b,
                    walk.heads(self.variant),
                    sh.t
                )
            })?;
            self.cursor = n;
            return Ok(());
        }
        if let Some((name, rest)) = text.split_once('[') {
            let name = name.trim();
            let inside = rest
                .strip_suffix(']')
                .ok_or("a cell is written like q[10] or scores[0,1,2,1]")?;
            let buf = Buf::from_name(name).ok_or_else(|| format!("no buffer named {name:?}"))?;
            let info = trace
                .buffer(buf)
                .ok_or_else(|| format!("{name} is not part of this trace"))?;
            let parts: Vec<&str> = inside.split(',').map(str::trim).collect();
            let nums: Vec<usize> = parts
                .iter()
                .map(|p| p.parse::<usize>().map_err(|_| format!("{p:?} is not a whole number")))
                .collect::<Result<_, _>>()?;
            let layout = info.layout();
            let off = match nums.as_slice() {
                [off] => *off,
                idx => layout.offset(idx).ok_or_else(|| {
                    format!(
                        "{name}[{}] is not in {name} {} ({})",
                        inside.trim(),
                        layout.sizes_text(),
                        layout.names().join(",")
                    )
                })?,
            };
            if off >= info.len() {
                return Err(format!(
                    "{name}[{off}] is out of range: {name} has {} elements",
                    info.len()
                ));
            }
            let n = trace
                .index
                .first_access(buf, off)
                .ok_or_else(|| format!("{name}[{off}] is never accessed in this trace"))?;
            self.cursor = n;
            self.pinned = Some((buf, off));
            return Ok(());
        }
        Err("goto: an event number (123), an element (b=0 h=1 i=2 j=1), a cell (scores[16]) or a phase".into())
    }

    fn who_wrote(&mut self) {
        let Some((buf, off)) = self.selected() else { return };
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else { return };
        match trace.index.last_write_before(buf, off, self.cursor) {
            Some(w) => {
                self.cursor = w;
                self.message = Some(format!("event {w} last wrote {buf}[{off}]"));
            }
            None => {
                let v = trace
                    .buffer(buf)
                    .and_then(|b| b.initial.get(off))
                    .copied()
                    .unwrap_or(0.0);
                self.message = Some(format!(
                    "nothing wrote {buf}[{off}] before this event: it holds its initial value {}",
                    widgets::num(v)
                ));
            }
        }
        self.pinned = Some((buf, off));
    }

    fn who_reads(&mut self) {
        let Some((buf, off)) = self.selected() else { return };
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else { return };
        match trace.index.next_read_after(buf, off, self.cursor) {
            Some(r) => {
                self.cursor = r;
                self.message = Some(format!("event {r} reads {buf}[{off}] next"));
            }
            None => self.message = Some(format!("nothing reads {buf}[{off}] after this event")),
        }
        self.pinned = Some((buf, off));
    }

    fn toggle_breakpoint(&mut self) {
        let Some(cell) = self.selected() else { return };
        if self.breakpoints.remove(&cell) {
            self.message = Some(format!("breakpoint on {}[{}] removed", cell.0, cell.1));
        } else {
            self.breakpoints.insert(cell);
            self.message = Some(format!(
                "breakpoint on {}[{}]: c / C continue to its accesses",
                cell.0, cell.1
            ));
        }
    }

    /// `c` / `C`: the nearest access of any breakpoint cell after / before the cursor.
    fn continue_to(&mut self, forward: bool) {
        if self.breakpoints.is_empty() {
            self.message = Some("no breakpoints: select a cell and press b".into());
            return;
        }
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else { return };
        let n = self.cursor;
        let hits = self.breakpoints.iter().filter_map(|&(buf, off)| {
            if forward {
                trace.index.next_access_after(buf, off, n)
            } else {
                trace.index.prev_access_before(buf, off, n)
            }
        });
        let to = if forward { hits.min() } else { hits.max() };
        self.go(
            to,
            if forward {
                "no later breakpoint hit"
            } else {
                "no earlier breakpoint hit"
            },
        );
    }

    /// `>` / `<`: the first event of the next / previous column of the timeline.
    fn along_timeline(&mut self, forward: bool) {
        let (len, w) = (self.len(), self.width.max(1) as usize);
        let here = timeline::column_of(self.cursor, len, w);
        let mut x = here;
        let to = loop {
            x = match (forward, x.checked_sub(1)) {
                (true, _) if x + 1 < w => x + 1,
                (false, Some(prev)) => prev,
                _ => break None,
            };
            let r = timeline::range(x, len, w);
            if !r.is_empty() {
                break Some(r.start);
            }
        };
        let none = if forward {
            "the cursor is in the timeline's last column"
        } else {
            "the cursor is in the timeline's first column"
        };
        self.go(to, none);
    }

    /// `}` / `{`: the next / previous access of the selected cell (the timeline's ticks).
    fn tick(&mut self, forward: bool) {
        let Some((buf, off)) = self.selected() else { return };
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else { return };
        let to = if forward {
            trace.index.next_access_after(buf, off, self.cursor)
        } else {
            trace.index.prev_access_before(buf, off, self.cursor)
        };
        match to {
            Some(n) => self.cursor = n,
            None => {
                let which = if forward { "after" } else { "before" };
                self.message = Some(format!("no access of {buf}[{off}] {which} this event"));
            }
        }
        self.pinned = Some((buf, off));
    }

    fn move_selection(&mut self, code: KeyCode) {
        let Some((buf, off)) = self.selected() else { return };
        let Some(info) = self.walk.trace(self.variant).and_then(|t| t.buffer(buf)) else {
            return;
        };
        // a row is what the memory panel draws as one: everything after the row dimension
        let layout = info.layout();
        let r = layout.row_dim().unwrap_or(0);
        let row_len = layout.stride(r).max(1);
        let rows = layout.dims.get(r).map_or(1, |d| d.size);
        let block = row_len * rows;
        let next = match code {
            KeyCode::Left => off.checked_sub(1).filter(|o| o / row_len == off / row_len),
            KeyCode::Right => Some(off + 1).filter(|o| o / row_len == off / row_len),
            KeyCode::Up => off.checked_sub(row_len).filter(|o| o / block == off / block),
            KeyCode::Down => Some(off + row_len).filter(|o| o / block == off / block),
            _ => None,
        };
        if let Some(o) = next.filter(|&o| o < info.len()) {
            self.pinned = Some((buf, o));
        }
    }

    fn toggle_pass(&mut self) {
        let walk = Arc::clone(&self.walk);
        let Some(trace) = walk.trace(self.variant) else { return };
        let here = trace.view(self.cursor).pass;
        let there = match here {
            Pass::Forward => Pass::Backward,
            Pass::Backward => Pass::Forward,
        };
        let first = trace
            .phases
            .iter()
            .find(|(s, p)| p.pass() == there && (*s as usize) < trace.len())
            .map(|&(s, _)| s as usize);
        let Some(first) = first else {
            self.message = Some(format!("this trace has no {} pass", there.name()));
            return;
        };
        self.saved.insert((self.variant, here), self.cursor);
        self.cursor = self.saved.get(&(self.variant, there)).copied().unwrap_or(first);
    }

    /// Moves to the scenario's next kernel (`step` 1) or previous one (−1), wrapping around.
    fn toggle_variant(&mut self, step: isize) {
        let walk = Arc::clone(&self.walk);
        let variants = walk.variants();
        let n = variants.len() as isize;
        let here_at = variants.iter().position(|&v| v == self.variant).unwrap_or(0) as isize;
        let other = variants[(here_at + step).rem_euclid(n.max(1)) as usize % variants.len().max(1)];
        let (Some(here), Some(there)) = (
            walk.trace(self.variant),
            walk.trace(other).filter(|_| other != self.variant),
        ) else {
            self.message = Some(format!("this scenario traces only {}", self.variant));
            return;
        };
        let v = here.view(self.cursor);
        // the same score element in the other layout, else the same phase, else where we were
        let layout = here.buffer(v.buf).map(|b| b.layout()).filter(|l| l.is_pairs());
        let element = layout.map(|l| {
            let at = |name| l.coord(v.offset, name);
            let h = if other == Variant::Baseline { 0 } else { at("h") };
            Element {
                b: at("b"),
                h,
                i: at("i"),
                j: at("j"),
            }
        });
        // flash's score tiles hold the pair (i0 + ii, j0 + jj) of head hh
        let var = |name| v.vars.iter().rev().find(|(n, _)| *n == name).map(|&(_, x)| x);
        let tile_element = matches!(v.buf, Buf::STile | Buf::DSTile)
            .then(|| {
                Some(Element {
                    b: var("bb")?,
                    h: if other == Variant::Baseline { 0 } else { var("hh")? },
                    i: var("i0")? + var("ii")?,
                    j: var("j0")? + var("jj")?,
                })
            })
            .flatten();
        let element = element.or(tile_element);
        let same_element = element.and_then(|e| walk.element_event(other, v.pass, e));
        let same_phase = there
            .phases
            .iter()
            .find(|&&(s, p)| p == v.phase && (s as usize) < there.len())
            .map(|&(s, _)| s as usize);
        let saved = self.saved.get(&(other, v.pass)).copied();
        self.saved.insert((self.variant, v.pass), self.cursor);
        self.variant = other;
        self.cursor = same_element
            .or(same_phase)
            .or(saved)
            .unwrap_or(0)
            .min(there.len().saturating_sub(1));
        self.pinned = None;
        self.breakpoints.clear();
    }

    pub fn mouse(&mut self, m: MouseEvent, area: Rect, theme: Theme) {
        match m.kind {
            MouseEventKind::ScrollDown => self.go(Some(self.cursor + 1), "last event of the log"),
            MouseEventKind::ScrollUp => self.go(self.cursor.checked_sub(1), "first event of the log"),
            MouseEventKind::Down(MouseButton::Left) => {
                let Some(ctx) = self.ctx(theme) else { return };
                let areas = areas(area, self, &ctx);
                if m.row == areas.timeline.y && areas.timeline.height > 0 {
                    let x = m.column.saturating_sub(areas.timeline.x) as usize;
                    let cols = timeline::strip(
                        ctx.trace,
                        areas.timeline.width as usize,
                        ctx.cursor,
                        Some(ctx.selected),
                        &self.breakpoints,
                    );
                    if let Some(n) = timeline::target(&cols, x) {
                        self.cursor = n;
                    }
                    return;
                }
                if let Some(tabs) = areas.tabs
                    && m.row == tabs.y
                {
                    let mut x = tabs.x;
                    for (tab, label) in tab_labels(areas.wide_vars) {
                        let w = label.chars().count() as u16;
                        if m.column >= x && m.column < x + w {
                            self.tab = tab;
                        }
                        x += w;
                    }
                    return;
                }
                if let Some(mem) = areas.memory {
                    let inner = inner(mem);
                    let hit = memory::hit(&memory::plan(inner, &ctx), m.column, m.row);
                    if let Some(cell) = hit {
                        self.pinned = Some(cell);
                        self.message = Some(format!("selected {}[{}]: w, r, b act on it", cell.0, cell.1));
                    }
                }
            }
            _ => {}
        }
    }
}

/// Parses `b=0 h=1 i=2 j=1` (commas or spaces; `b` and `h` default to 0).
/// Where each panel goes. Panels that do not fit are `None` and reached through the tabs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Areas {
    pub header: Rect,
    pub code: Option<Rect>,
    pub vars: Option<Rect>,
    pub eq: Option<Rect>,
    pub memory: Option<Rect>,
    pub log: Option<Rect>,
    pub tabs: Option<Rect>,
    /// The timeline strip, one row above the status bar.
    pub timeline: Rect,
    pub status: Rect,
    /// The variables panel is itself a tab (very small screens).
    pub wide_vars: bool,
}

/// Rows a bordered paragraph of `lines` needs at `width` columns, wrapping included.
fn wrapped_height(lines: &[Line], width: u16) -> u16 {
    let w = width.saturating_sub(2).max(1) as usize;
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(w)).sum();
    rows as u16 + 2
}

fn inner(r: Rect) -> Rect {
    ratatui::widgets::Block::bordered().inner(r)
}

fn tab_labels(with_vars: bool) -> Vec<(Tab, String)> {
    Tab::ALL
        .iter()
        .enumerate()
        .filter(|&(_, &t)| with_vars || t != Tab::Vars)
        .map(|(k, &t)| (t, format!(" {} {} ", k + 1, t.name())))
        .collect()
}

/// Large screens show every panel; from 80×24 the variables and equation stay in view and the
/// code, memory and log share the rest as tabs; below that everything is a tab.
pub fn areas(area: Rect, st: &Tracer, ctx: &Ctx) -> Areas {
    let [header, body, timeline, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let wide = area.width >= 110 && area.height >= 30;
    // the left column is wide enough for a whole `q_base = … = 10` line where possible
    let left_w = if wide {
        (area.width / 2).max(64).min(area.width - 40)
    } else {
        area.width
    };
    let vars_h = wrapped_height(&variables::lines(ctx), left_w);
    let eq_h = wrapped_height(&equation::lines(ctx), left_w);
    let mut a = Areas {
        header,
        timeline,
        status,
        ..Areas::default()
    };
    if wide {
        let [left, right] = Layout::horizontal([Constraint::Length(left_w), Constraint::Fill(1)]).areas(body);
        let [code, vars, eq] = Layout::vertical([
            Constraint::Fill(1),
            Constraint::Length(vars_h),
            Constraint::Length(eq_h),
        ])
        .areas(left);
        let [mem, log] = Layout::vertical([Constraint::Percentage(64), Constraint::Percentage(36)]).areas(right);
        a.code = Some(code);
        a.vars = Some(vars);
        a.eq = Some(eq);
        a.memory = Some(mem);
        a.log = Some(log);
    } else if body.height >= 14 + vars_h.min(8) && area.width >= 40 {
        let [vars, eq, tabs, rest] = Layout::vertical([
            Constraint::Length(vars_h.min(8)),
            Constraint::Length(eq_h.min(6)),
            Constraint::Length(1),
            Constraint::Fill(1),
        ])
        .areas(body);
        a.vars = Some(vars);
        a.eq = Some(eq);
        a.tabs = Some(tabs);
        match st.tab {
            Tab::Code => a.code = Some(rest),
            Tab::Log => a.log = Some(rest),
            Tab::Memory | Tab::Vars => a.memory = Some(rest),
        }
    } else {
        let [tabs, rest] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(body);
        a.tabs = Some(tabs);
        a.wide_vars = true;
        match st.tab {
            Tab::Code => a.code = Some(rest),
            Tab::Log => a.log = Some(rest),
            Tab::Memory => a.memory = Some(rest),
            Tab::Vars => a.vars = Some(rest),
        }
    }
    a
}

pub fn render(frame: &mut Frame, area: Rect, st: &Tracer, theme: Theme) {
    let Some(ctx) = st.ctx(theme) else {
        let text = format!("{}: this variant recorded no events", st.walk.title);
        frame.render_widget(Paragraph::new(text), area);
        return;
    };
    let a = areas(area, st, &ctx);
    let t = theme;
    let v = &ctx.view;
    let header = Line::from(vec![
        Span::styled(format!(" {} ", st.walk.title), t.title()),
        Span::styled(
            format!(
                "· {} · {} · {}",
                st.variant,
                v.pass.name(),
                phase_title(v.phase, &st.walk.mask)
            ),
            t.dim(),
        ),
    ]);
    frame.render_widget(Paragraph::new(header), a.header);
    if let Some(r) = a.code {
        code::render(frame, r, &ctx, false);
    }
    if let Some(r) = a.vars {
        variables::render(frame, r, &ctx, false);
    }
    if let Some(r) = a.eq {
        equation::render(frame, r, &ctx, false);
    }
    if let Some(r) = a.memory {
        memory::render(frame, r, &ctx, st.select);
    }
    if let Some(r) = a.log {
        log::render(frame, r, &ctx, false);
    }
    if let Some(r) = a.tabs {
        let mut spans = Vec::new();
        let shown = if !a.wide_vars && st.tab == Tab::Vars {
            Tab::Memory
        } else {
            st.tab
        };
        for (tab, label) in tab_labels(a.wide_vars) {
            spans.push(Span::styled(label, if tab == shown { t.cursor() } else { t.dim() }));
        }
        spans.push(Span::styled("  t: next tab", t.dim()));
        frame.render_widget(Paragraph::new(Line::from(spans)), r);
    }
    let cols = timeline::strip(
        ctx.trace,
        a.timeline.width as usize,
        ctx.cursor,
        Some(ctx.selected),
        ctx.breakpoints,
    );
    timeline::render(frame.buffer_mut(), a.timeline, ctx.trace, &cols, t);
    render_status(frame, a.status, st, &ctx);
}

fn render_status(frame: &mut Frame, area: Rect, st: &Tracer, ctx: &Ctx) {
    let t = ctx.theme;
    let buf = frame.buffer_mut();
    buf.set_style(area.intersection(buf.area), t.status());
    let left = format!(
        " #{}/{} │ {} │ {} │ {} ",
        ctx.cursor,
        ctx.trace.len(),
        st.variant,
        ctx.view.pass.name(),
        ctx.view.phase.name()
    );
    let x = put(buf, area, area.x, area.y, &left, t.status());
    if let Some(p) = &st.prompt {
        let text = format!(" goto: {p}▏ (123 · b=0 h=1 i=2 j=1 · scores[16] · Enter/Esc)");
        put(buf, area, x, area.y, &text, t.status().patch(t.key()));
    } else if let Some(m) = &st.message {
        put(buf, area, x, area.y, &format!(" {m}"), t.status().patch(t.key()));
    } else {
        let hints = " n/p step · j/k iter · J/K outer · ]/[ phase · g goto · w/r · b/c · f · Tab · ? help";
        put(buf, area, x, area.y, hints, t.status());
    }
}

/// The logical coordinates of the selected cell, for tests and the status of the compare view.
pub fn selected_index(st: &Tracer) -> Option<Vec<usize>> {
    let (buf, off) = st.selected()?;
    let info = st.walk.trace(st.variant)?.buffer(buf)?;
    Some(info.layout().index(off))
}
