//! The tracer's key table and every move it makes: stepping by event, iteration and phase,
//! who wrote or reads a cell, breakpoints, the timeline, the selected cell, the pass and the
//! kernel; and the mouse (wheel, and clicks on the timeline, the tabs and the memory panel).

use super::render::{areas, inner, tab_labels};
use super::{Outcome, Tab, Tracer};
use crate::tui::position;
use crate::tui::theme::Theme;
use crate::tui::traced_scenario::Element;
use crate::tui::widgets::{self, memory, timeline};
use attn_trace_analysis::quiz::QuizLevel;
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Pass, Trace};
use attn_trace_i18n::tr;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use std::sync::Arc;

impl Tracer {
    fn go(&mut self, to: Option<usize>, none: &str) {
        match to {
            Some(n) if n < self.len() => self.cursor = n,
            _ => self.message = Some(none.to_string()),
        }
    }

    pub(super) fn key_here(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        if self.prompt.is_some() {
            self.prompt_key(key);
            return Outcome::Stay;
        }
        if let Some(out) = self.lesson_key(key) {
            return out;
        }
        if let Some(out) = self.quiz_key(key) {
            return out;
        }
        // the traced scenario is shared: holding our own handle lets the trace outlive `&mut self` calls
        let traced = Arc::clone(&self.traced);
        let len = traced.trace(self.variant).map_or(0, Trace::len);
        let Some(trace) = traced.trace(self.variant).filter(|_| len > 0) else {
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
                self.move_selection(key.code);
            }
            KeyCode::Char('n') | KeyCode::Right => self.go(Some(n + 1), tr!("last event of the log")),
            KeyCode::Char('p') | KeyCode::Left => self.go(n.checked_sub(1), tr!("first event of the log")),
            KeyCode::Char('j') | KeyCode::Down => self.go(trace.next_iteration(n, 0), tr!("no next iteration")),
            KeyCode::Char('k') | KeyCode::Up => self.go(trace.prev_iteration(n, 0), tr!("no previous iteration")),
            KeyCode::Char('J') => self.go(
                trace.next_iteration(n, 1),
                tr!("no next iteration of the enclosing loop"),
            ),
            KeyCode::Char('K') => self.go(
                trace.prev_iteration(n, 1),
                tr!("no previous iteration of the enclosing loop"),
            ),
            KeyCode::Char(']') => self.go(trace.next_phase(n), tr!("this is the last phase")),
            KeyCode::Char('[') => self.go(trace.prev_phase(n), tr!("this is the first phase")),
            KeyCode::PageDown => self.cursor = (n + 100).min(len - 1),
            KeyCode::PageUp => self.cursor = n.saturating_sub(100),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = len - 1,
            KeyCode::Char('f') => self.toggle_pass(),
            KeyCode::Tab | KeyCode::BackTab => {
                let step = if key.code == KeyCode::Tab { 1 } else { -1 };
                if let Err(v) = self.toggle_variant(step) {
                    return Outcome::NotTraced(v);
                }
            }
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
                        tr!("arrows move the selected cell (s or Esc to step again)")
                    } else {
                        tr!("arrows step through events")
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
            KeyCode::Char('Q') => self.start_quiz(QuizLevel::default()),
            KeyCode::Char('>') => self.along_timeline(true),
            KeyCode::Char('<') => self.along_timeline(false),
            KeyCode::Char('}') => self.next_access(true),
            KeyCode::Char('{') => self.next_access(false),
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Char('S') => return Outcome::Snapshot,
            KeyCode::Char('m') => self.toggle_cache(),
            KeyCode::Char('y') => {
                let cmd = position::command(&traced, self.variant, n);
                self.message = Some(tr!("{cmd}  (copied where the terminal allows OSC 52)", cmd));
                return Outcome::Copy(cmd);
            }
            KeyCode::Esc if self.select || self.pinned.is_some() => {
                self.select = false;
                self.pinned = None;
            }
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Back,
            _ => {}
        }
        Outcome::Stay
    }

    fn who_wrote(&mut self) {
        let Some((buf, off)) = self.selected() else { return };
        let traced = Arc::clone(&self.traced);
        let Some(trace) = traced.trace(self.variant) else {
            return;
        };
        match trace.index.last_write_before(buf, off, self.cursor) {
            Some(w) => {
                self.cursor = w;
                self.message = Some(tr!("event {w} last wrote {buf}[{off}]", w, buf, off));
            }
            None => {
                let v = trace
                    .buffer(buf)
                    .and_then(|b| b.initial.get(off))
                    .copied()
                    .unwrap_or(0.0);
                self.message = Some(tr!(
                    "nothing wrote {buf}[{off}] before this event: it holds its initial value {v}",
                    buf,
                    off,
                    v = widgets::num(v)
                ));
            }
        }
        self.pinned = Some((buf, off));
    }

    fn who_reads(&mut self) {
        let Some((buf, off)) = self.selected() else { return };
        let traced = Arc::clone(&self.traced);
        let Some(trace) = traced.trace(self.variant) else {
            return;
        };
        match trace.index.next_read_after(buf, off, self.cursor) {
            Some(r) => {
                self.cursor = r;
                self.message = Some(tr!("event {r} reads {buf}[{off}] next", r, buf, off));
            }
            None => self.message = Some(tr!("nothing reads {buf}[{off}] after this event", buf, off)),
        }
        self.pinned = Some((buf, off));
    }

    fn toggle_breakpoint(&mut self) {
        let Some(cell) = self.selected() else { return };
        if self.breakpoints.remove(&cell) {
            self.message = Some(tr!("breakpoint on {buf}[{off}] removed", buf = cell.0, off = cell.1));
        } else {
            self.breakpoints.insert(cell);
            self.message = Some(tr!(
                "breakpoint on {buf}[{off}]: c / C continue to its accesses",
                buf = cell.0,
                off = cell.1
            ));
        }
    }

    /// `c` / `C`: the nearest access of any breakpoint cell after / before the cursor.
    fn continue_to(&mut self, forward: bool) {
        if self.breakpoints.is_empty() {
            self.message = Some(tr!("no breakpoints: select a cell and press b").into());
            return;
        }
        let traced = Arc::clone(&self.traced);
        let Some(trace) = traced.trace(self.variant) else {
            return;
        };
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
                tr!("no later breakpoint hit")
            } else {
                tr!("no earlier breakpoint hit")
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
            tr!("the cursor is in the timeline's last column")
        } else {
            tr!("the cursor is in the timeline's first column")
        };
        self.go(to, none);
    }

    /// `}` / `{`: the next / previous access of the selected cell (the timeline's ticks).
    fn next_access(&mut self, forward: bool) {
        let Some((buf, off)) = self.selected() else { return };
        let traced = Arc::clone(&self.traced);
        let Some(trace) = traced.trace(self.variant) else {
            return;
        };
        let to = if forward {
            trace.index.next_access_after(buf, off, self.cursor)
        } else {
            trace.index.prev_access_before(buf, off, self.cursor)
        };
        match to {
            Some(n) => self.cursor = n,
            None => {
                self.message = Some(if forward {
                    tr!("no access of {buf}[{off}] after this event", buf, off)
                } else {
                    tr!("no access of {buf}[{off}] before this event", buf, off)
                });
            }
        }
        self.pinned = Some((buf, off));
    }

    fn move_selection(&mut self, code: KeyCode) {
        let Some((buf, off)) = self.selected() else { return };
        let Some(info) = self.traced.trace(self.variant).and_then(|t| t.buffer(buf)) else {
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
        let traced = Arc::clone(&self.traced);
        let Some(trace) = traced.trace(self.variant) else {
            return;
        };
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
            self.message = Some(tr!("this trace has no {pass} pass", pass = there.name()));
            return;
        };
        self.saved.insert((self.variant, here), self.cursor);
        self.cursor = self.saved.get(&(self.variant, there)).copied().unwrap_or(first);
    }

    /// Moves to the scenario's next kernel (`step` 1) or previous one (−1), wrapping around;
    /// the kernel asked for when the scenario traces no other.
    fn toggle_variant(&mut self, step: isize) -> Result<(), Variant> {
        let traced = Arc::clone(&self.traced);
        let variants = traced.variants();
        let n = variants.len() as isize;
        let here_at = variants.iter().position(|&v| v == self.variant).unwrap_or(0) as isize;
        let other = variants[(here_at + step).rem_euclid(n.max(1)) as usize % variants.len().max(1)];
        let (Some(here), Some(there)) = (
            traced.trace(self.variant),
            traced.trace(other).filter(|_| other != self.variant),
        ) else {
            return Err(self.variant.desc().beside);
        };
        let v = here.view(self.cursor);
        // the same score element in the other log, else the same phase, else where we were
        let same_element = Element::of_event(here, self.cursor).and_then(|e| traced.element_event(other, v.pass, e));
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
        Ok(())
    }

    pub(super) fn mouse_here(&mut self, m: MouseEvent, area: Rect, theme: Theme) {
        match m.kind {
            MouseEventKind::ScrollDown => self.go(Some(self.cursor + 1), tr!("last event of the log")),
            MouseEventKind::ScrollUp => self.go(self.cursor.checked_sub(1), tr!("first event of the log")),
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
                        ctx.cache,
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
                        let w = widgets::cols(&label) as u16;
                        if m.column >= x && m.column < x + w {
                            self.tab = tab;
                        }
                        x += w;
                    }
                    return;
                }
                if let Some(mem) = areas.memory {
                    let inner = inner(mem);
                    let hit = memory::hit(&memory::plan(inner, &ctx), ctx.trace, m.column, m.row);
                    if let Some(cell) = hit {
                        self.pinned = Some(cell);
                        self.message = Some(tr!(
                            "selected {buf}[{off}]: w, r, b act on it",
                            buf = cell.0,
                            off = cell.1
                        ));
                    }
                }
            }
            _ => {}
        }
    }
}
