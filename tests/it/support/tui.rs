//! Driving the app through its public API as the terminal does (keys into `update`), and
//! reading its screen as text (`render` on a TestBackend). The app's own tests
//! (src/tests/support/tui.rs) use these too, with the helpers that look inside a screen.

use attn_trace::tui::{App, Msg, render, update};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// One key press, without modifiers.
pub(crate) fn key(app: &mut App, c: KeyCode) {
    update(app, Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
}

/// Each character of `s` typed in turn.
pub(crate) fn chars(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// `g`, the event number `s`, Enter: the tracer's goto.
pub(crate) fn goto(app: &mut App, s: &str) {
    key(app, KeyCode::Char('g'));
    chars(app, s);
    key(app, KeyCode::Enter);
}

/// The app drawn on a `w`×`h` terminal, as the test backend prints it (each row in quotes).
pub(crate) fn draw(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| render(f, app)).unwrap();
    term.backend().to_string()
}

/// The rows of the app drawn on a `w`×`h` terminal, as plain text.
pub(crate) fn screen_lines(app: &App, w: u16, h: u16) -> Vec<String> {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| render(f, app)).unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect()
}

/// The app drawn on a `w`×`h` terminal, as plain text, one row a line.
pub(crate) fn screen(app: &App, w: u16, h: u16) -> String {
    screen_lines(app, w, h).join("\n")
}
