//! The step-through TUI: a cursor over the event log, every panel in sync with it.
//!
//! Elm-shaped: [`app::App`] is the state, [`app::update`] the only place it changes and
//! [`app::render`] a pure function of it, so the whole app is driven headlessly in tests
//! (TestBackend) exactly as the terminal drives it here.
//!
//! Debug builds panic on purpose after the first frame when `ATTN_TRACE_TUI_PANIC` is set, to
//! test that the terminal is restored on a panic; release builds ignore the variable.

#![allow(non_snake_case)] // sizes keep the docs' capital letters: B, T, C, H, D

pub(crate) mod app;
pub(crate) mod cache_sweep;
pub(crate) mod gradcheck;
pub(crate) mod job;
pub(crate) mod lesson;
pub mod pictures;
pub(crate) mod position;
pub(crate) mod quiz;
pub(crate) mod report;
pub(crate) mod screens;
pub(crate) mod snapshot;
pub(crate) mod svg;
pub(crate) mod theme;
pub(crate) mod traced_scenario;
pub(crate) mod widgets;

use crossterm::cursor::Show;
use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event};
use crossterm::execute;
use std::io::{Write, stdout};
use std::sync::atomic::{AtomicBool, Ordering};

pub use app::{App, Msg, render, update};
pub use screens::mine::Mine;
pub use theme::Theme;
pub use traced_scenario::TracedScenario;

/// How often the screen refreshes while a model trains.
const TICK: std::time::Duration = std::time::Duration::from_millis(50);

/// The environment variable that makes the TUI panic after its first frame, so that a test can
/// check that the real binary restores the terminal on a panic (the tests run the release build).
pub const PANIC_ENV: &str = "ATTN_TRACE_TUI_PANIC";

/// Whether [`run`] has the terminal (raw mode, alternate screen, mouse capture).
static TERMINAL_TAKEN: AtomicBool = AtomicBool::new(false);

/// Gives the terminal back if the TUI has it: for a signal handler that is about to end the
/// process (SIGINT, SIGTERM, SIGHUP) from another thread.
pub fn restore_after_signal() {
    if TERMINAL_TAKEN.swap(false, Ordering::SeqCst) {
        give_back();
    }
}

/// Everything the TUI took: mouse capture, raw mode, the alternate screen, and the cursor it
/// hid while drawing (which only the `Terminal`'s drop would show again, and a signal handler
/// that ends the process never reaches it).
fn give_back() {
    let _ = execute!(stdout(), DisableMouseCapture);
    ratatui::restore();
    let _ = execute!(stdout(), Show);
}

/// With [`PANIC_ENV`] set: the panic that tests the terminal is restored.
#[allow(clippy::panic, reason = "on purpose, for the test that the terminal is restored")]
fn panic_to_test_the_restore() -> ! {
    panic!("{PANIC_ENV} is set: panicking on purpose to test that the terminal is restored");
}

/// Runs the TUI until the user quits, on the app `open` makes for the terminal's size (columns,
/// rows). The terminal is restored on return, on error, on panic and on SIGTERM (see
/// [`restore_after_signal`]).
pub fn run(open: impl FnOnce(u16, u16) -> App) -> color_eyre::Result<()> {
    let mut terminal = ratatui::try_init()?;
    TERMINAL_TAKEN.store(true, Ordering::SeqCst);
    // ratatui's hook leaves raw mode and the alternate screen; mouse capture and the cursor are
    // ours to undo
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if TERMINAL_TAKEN.swap(false, Ordering::SeqCst) {
            give_back();
        }
        hook(info);
    }));
    // a worker thread's panic is a popup, not a report over the screen (see `guard`)
    job::install_hook();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> color_eyre::Result<()> {
        execute!(stdout(), EnableMouseCapture)?;
        let size = terminal.size()?;
        let mut app = open(size.width, size.height);
        let panic_on_purpose = std::env::var_os(PANIC_ENV).is_some();
        while !app.quit {
            terminal.draw(|f| app::render(f, &app))?;
            if panic_on_purpose {
                panic_to_test_the_restore();
            }
            // while a model trains, wake up on a timer to show its progress; else wait for input
            if app.wants_tick() && !event::poll(TICK)? {
                app::update(&mut app, Msg::Tick);
                continue;
            }
            let msg = match event::read()? {
                Event::Key(k) => Msg::Key(k),
                Event::Mouse(m) => Msg::Mouse(m),
                Event::Resize(w, h) => Msg::Resize(w, h),
                _ => continue,
            };
            app::update(&mut app, msg);
            // `y` in the tracer: OSC 52 asks the terminal to put the text on the clipboard (one
            // that does not support it ignores the sequence)
            if let Some(text) = app.clipboard.take() {
                let _ = execute!(stdout(), crossterm::clipboard::CopyToClipboard::to_clipboard_from(text));
            }
        }
        Ok(())
    }));
    if TERMINAL_TAKEN.swap(false, Ordering::SeqCst) {
        give_back();
    }
    match result {
        Ok(result) => result,
        Err(panic) => {
            // a panic on one of rayon's threads that this thread called: kept by the hook
            if let Some(text) = job::take_kept() {
                let _ = writeln!(std::io::stderr(), "{text}");
            }
            std::panic::resume_unwind(panic)
        }
    }
}
