//! The `g` prompt: typing its text, and going where it says ([`position`]).

use super::Tracer;
use crate::tui::position;
use attn_trace_core::trace::Pass;
use crossterm::event::{KeyCode, KeyEvent};

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
    /// or a phase name ([`position::resolve`], in the pass the cursor is in).
    pub(crate) fn goto(&mut self, text: &str) -> Result<(), String> {
        self.go_to(None, text)
    }

    /// Moves to `text` looked up in `pass` (else the cursor's pass): `tui --at`, a lesson's stop.
    pub(crate) fn go_to(&mut self, pass: Option<Pass>, text: &str) -> Result<(), String> {
        let place = position::resolve(&self.traced, self.variant, pass, self.cursor, text)?;
        self.cursor = place.cursor;
        if place.pinned.is_some() {
            self.pinned = place.pinned;
        }
        Ok(())
    }
}
