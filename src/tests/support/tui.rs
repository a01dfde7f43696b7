//! The app's screens looked into: a tracer at an event, the open tracer, one screen drawn alone,
//! a scenario's tracing waited for. Keys and the screen as text are the integration tests'
//! helpers (tests/it/support/tui.rs), through the public API.

#[allow(dead_code)] // shared with tests/it
#[path = "../../../tests/it/support/tui.rs"]
mod public;
pub(crate) use public::*;

use crate::tui::app::{self, App, Msg};
use crate::tui::screens::tracer::{self, Tracer};
use crate::tui::{Theme, TracedScenario};
use attn_trace_core::kernels::Variant;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;

/// A tracer on `traced`'s run of `v`, at event `n`.
pub(crate) fn tracer_at(traced: &Arc<TracedScenario>, v: Variant, n: usize) -> Tracer {
    let mut t = Tracer::new(Arc::clone(traced), Some(v));
    t.cursor = n;
    t
}

/// The open tracer screen.
pub(crate) fn tracer(app: &App) -> &Tracer {
    app.tracer().expect("the tracer is open")
}

/// The tracer screen `st` alone drawn on a `w`×`h` terminal (monochrome), as plain text.
pub(crate) fn tracer_screen(st: &Tracer, w: u16, h: u16) -> String {
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
pub(crate) fn settle(app: &mut App) {
    use crate::tui::app::Screen;
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
