//! Driving the app as a person would, and reading its screen as text.

use attn_trace::tui::app::{self, App, Msg};
use attn_trace::tui::screens::tracer::{self, Tracer};
use attn_trace::tui::{Theme, TracedScenario};
use attn_trace_core::kernels::Variant;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;

/// One key press, without modifiers.
pub fn key(app: &mut App, c: KeyCode) {
    app::update(app, Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
}

/// Each character of `s` typed in turn.
pub fn chars(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// `g`, the event number `s`, Enter: the tracer's goto.
pub fn goto(app: &mut App, s: &str) {
    key(app, KeyCode::Char('g'));
    chars(app, s);
    key(app, KeyCode::Enter);
}

/// A tracer on `traced`'s run of `v`, at event `n`.
pub fn tracer_at(traced: &Arc<TracedScenario>, v: Variant, n: usize) -> Tracer {
    let mut t = Tracer::new(Arc::clone(traced), Some(v));
    t.cursor = n;
    t
}

/// The open tracer screen.
pub fn tracer(app: &App) -> &Tracer {
    app.tracer().expect("the tracer is open")
}

/// The app drawn on a `w`×`h` terminal, as the test backend prints it (each row in quotes).
pub fn draw(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app::render(f, app)).unwrap();
    term.backend().to_string()
}

/// The rows of the app drawn on a `w`×`h` terminal, as plain text.
pub fn screen_lines(app: &App, w: u16, h: u16) -> Vec<String> {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app::render(f, app)).unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect()
}

/// The app drawn on a `w`×`h` terminal, as plain text, one row a line.
pub fn screen(app: &App, w: u16, h: u16) -> String {
    screen_lines(app, w, h).join("\n")
}

/// The tracer screen `st` alone drawn on a `w`×`h` terminal (monochrome), as plain text.
pub fn tracer_screen(st: &Tracer, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| tracer::render(f, f.area(), st, Theme::MONO)).unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Lets a scenario being opened finish tracing on its worker thread (the app ticks meanwhile, as
/// the terminal loop does).
pub fn settle(app: &mut App) {
    use attn_trace::tui::app::Screen;
    let started = std::time::Instant::now();
    while matches!(app.screen, Screen::Loading(_)) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "tracing finishes"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
        app::update(app, Msg::Tick);
    }
}
