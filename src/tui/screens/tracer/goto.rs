//! The `g` prompt: typing its text, and where it goes (an event number, a score element, a
//! buffer cell or a phase).

use super::Tracer;
use crate::tr;
use crate::trace::{Buf, Phase};
use crate::tui::walk::Element;
use crossterm::event::{KeyCode, KeyEvent};
use std::sync::Arc;

impl Tracer {
    pub(super) fn prompt_key(&mut self, key: KeyEvent) {
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
        let trace = walk.trace(self.variant).ok_or(tr!("this variant has no trace"))?;
        let text = text.trim();
        let len = trace.len();
        if len == 0 {
            return Err(tr!("this variant recorded no events").into());
        }
        if let Ok(n) = text.trim_start_matches('#').parse::<usize>() {
            if n >= len {
                return Err(tr!(
                    "event {n} is past the end: the log has {len} events (0..{last})",
                    n,
                    len,
                    last = len - 1
                ));
            }
            self.cursor = n;
            return Ok(());
        }
        if let Some(phase) = Phase::from_name(text) {
            let k = trace.phases.iter().position(|&(s, p)| p == phase && (s as usize) < len);
            let k = k.ok_or_else(|| tr!("phase {phase} is not in this trace", phase))?;
            self.cursor = trace.phases[k].0 as usize;
            return Ok(());
        }
        if text.contains('=') {
            let e = Element::parse(text)?;
            let pass = trace.view(self.cursor).pass;
            let n = walk.element_event(self.variant, pass, e).ok_or_else(|| {
                let sh = walk.shape;
                tr!(
                    "no score element b={b} h={h} i={i} j={j} in {variant}: B={nb}, H={nh}, T={nt}",
                    b = e.b,
                    h = e.h,
                    i = e.i,
                    j = e.j,
                    variant = self.variant,
                    nb = sh.b,
                    nh = walk.heads(self.variant),
                    nt = sh.t
                )
            })?;
            self.cursor = n;
            return Ok(());
        }
        if let Some((name, rest)) = text.split_once('[') {
            let name = name.trim();
            let inside = rest
                .strip_suffix(']')
                .ok_or(tr!("a cell is written like q[10] or scores[0,1,2,1]"))?;
            let buf = Buf::from_name(name).ok_or_else(|| tr!("no buffer named {name}", name = format!("{name:?}")))?;
            let info = trace
                .buffer(buf)
                .ok_or_else(|| tr!("{name} is not part of this trace", name))?;
            let parts: Vec<&str> = inside.split(',').map(str::trim).collect();
            let nums: Vec<usize> = parts
                .iter()
                .map(|p| {
                    p.parse::<usize>()
                        .map_err(|_| tr!("{p} is not a whole number", p = format!("{p:?}")))
                })
                .collect::<Result<_, _>>()?;
            let layout = info.layout();
            let off = match nums.as_slice() {
                [off] => *off,
                idx => layout.offset(idx).ok_or_else(|| {
                    tr!(
                        "{name}[{idx}] is not in {name} {sizes} ({names})",
                        name,
                        idx = inside.trim(),
                        sizes = layout.sizes_text(),
                        names = layout.names().join(",")
                    )
                })?,
            };
            if off >= info.len() {
                return Err(tr!(
                    "{name}[{off}] is out of range: {name} has {n} elements",
                    name,
                    off,
                    n = info.len()
                ));
            }
            let n = trace
                .index
                .first_access(buf, off)
                .ok_or_else(|| tr!("{name}[{off}] is never accessed in this trace", name, off))?;
            self.cursor = n;
            self.pinned = Some((buf, off));
            return Ok(());
        }
        Err(tr!("goto: an event number (123), an element (b=0 h=1 i=2 j=1), a cell (scores[16]) or a phase").into())
    }
}
