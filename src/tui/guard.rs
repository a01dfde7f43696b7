//! The TUI's worker threads (tracing a scenario, the gradient check, training, the cache
//! simulation) run their work through [`guard`]: a panic there is caught, and its message
//! reaches the UI as an error popup ([`take_failure`], read by `app::update`) while the app goes
//! on. Without it a worker's panic printed its report over the screen, and the panic hook gave
//! the terminal back while the app still ran: a screen that no longer answered keys.
//!
//! [`FAIL_ENV`] makes a worker panic on purpose, so that a test can check all this on the real
//! binary (the tests run the release build, as [`super::PANIC_ENV`] does for the main thread).

use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;

/// The environment variable naming a worker that panics as soon as it starts:
/// `ATTN_TRACE_WORKER_PANIC=loading`, `gradient-check`, `training` or `cache-sweep`.
pub const FAIL_ENV: &str = "ATTN_TRACE_WORKER_PANIC";

/// A worker thread of the TUI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worker {
    /// Tracing a scenario behind the progress box.
    Loading,
    /// The tracer's gradient check.
    GradientCheck,
    /// Training TinyGPT.
    Training,
    /// The memory traffic screen's cache simulation (its cache-misses view).
    CacheSweep,
}

impl Worker {
    pub const ALL: [Worker; 4] = [
        Worker::Loading,
        Worker::GradientCheck,
        Worker::Training,
        Worker::CacheSweep,
    ];

    /// The name [`FAIL_ENV`] takes.
    pub const fn name(self) -> &'static str {
        match self {
            Worker::Loading => "loading",
            Worker::GradientCheck => "gradient-check",
            Worker::Training => "training",
            Worker::CacheSweep => "cache-sweep",
        }
    }

    /// The popup's title when this worker fails.
    pub fn failed_title(self) -> &'static str {
        match self {
            Worker::Loading => attn_trace_i18n::tr!("Tracing failed"),
            Worker::GradientCheck => attn_trace_i18n::tr!("The gradient check failed"),
            Worker::Training => attn_trace_i18n::tr!("Training failed"),
            Worker::CacheSweep => attn_trace_i18n::tr!("The cache simulation failed"),
        }
    }
}

thread_local! {
    /// Whether this thread is inside [`guard`]: its panic is caught, not reported.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// The message and place of the last panic the hook kept for [`guard`] (from a guarded thread,
/// or from one of rayon's threads, whose panic rayon hands on to the thread that called it).
static CAUGHT: Mutex<Option<String>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The message of the last panic the hook kept and no [`guard`] took (one of rayon's threads
/// called from an unguarded thread), for the report after the terminal is given back.
pub fn take_kept() -> Option<String> {
    lock(&CAUGHT).take()
}

/// Failures the UI has not shown yet, oldest first.
static FAILURES: Mutex<Vec<(Worker, String)>> = Mutex::new(Vec::new());

/// Runs `f` as `worker`. A panic in it is caught: its message (and where it happened) is queued
/// for the UI ([`take_failure`]) and returned as the error.
pub fn guard<T>(worker: Worker, f: impl FnOnce() -> T) -> Result<T, String> {
    GUARDED.with(|g| g.set(true));
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        if injected(worker) {
            fail_on_purpose(worker);
        }
        f()
    }));
    GUARDED.with(|g| g.set(false));
    result.map_err(|payload| {
        let message = take_kept().unwrap_or_else(|| payload_text(payload.as_ref()));
        let text = attn_trace_i18n::tr!(
            "the {worker} thread panicked: {message}",
            worker = worker.name(),
            message
        );
        lock(&FAILURES).push((worker, text.clone()));
        text
    })
}

/// The oldest worker failure the UI has not shown yet.
pub fn take_failure() -> Option<(Worker, String)> {
    let mut failures = lock(&FAILURES);
    (!failures.is_empty()).then(|| failures.remove(0))
}

/// Whether [`FAIL_ENV`] names `worker`.
fn injected(worker: Worker) -> bool {
    std::env::var_os(FAIL_ENV).is_some_and(|v| v == worker.name())
}

#[allow(
    clippy::panic,
    reason = "on purpose, for the test that a worker's panic reaches the UI"
)]
fn fail_on_purpose(worker: Worker) -> ! {
    panic!("{FAIL_ENV}={name} is set: failing on purpose", name = worker.name());
}

/// The text of a panic's payload (a `&str` or a `String`, as `panic!` makes them).
fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(std::string::ToString::to_string)
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_string())
}

/// Puts a panic hook in front of the current one: a panic inside [`guard`] (or on one of
/// rayon's threads, which rayon hands on to its caller) is only kept for it, message and place,
/// and the hooks behind it (which print a report and give the terminal back) run for every other
/// panic. The TUI installs it after its own hooks.
pub fn install_hook() {
    let next = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if GUARDED.with(Cell::get) || rayon::current_thread_index().is_some() {
            let place = info
                .location()
                .map(|l| format!(" ({}:{})", l.file(), l.line()))
                .unwrap_or_default();
            *lock(&CAUGHT) = Some(format!("{}{place}", payload_text(info.payload())));
        } else {
            next(info);
        }
    }));
}
