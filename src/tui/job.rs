//! The TUI's background jobs. Work that takes time (tracing a scenario, the gradient check,
//! training, the cache simulation) runs on a thread of its own behind one type, [`Job`], so no
//! key waits for it, and every job gets the same three things:
//!
//! - **progress and cancellation**: a [`Progress`] shared with the work, whose counter the work
//!   moves and whose flag [`Job::cancel`] (or dropping the job) sets;
//! - **messages**: what the work sends ([`Ctx::send`]) arrives in order through [`Job::poll`];
//! - **failure shown**: a panic in the work is caught ([`guard`]), its message reaches the UI as
//!   an error popup ([`take_failure`], read by `app::update`) while the app goes on, and the job
//!   ends with [`Event::Failed`]; a thread that cannot start fails the same way. Without this a
//!   worker's panic printed its report over the screen, and the panic hook gave the terminal back
//!   while the app still ran: a screen that no longer answered keys.
//!
//! [`FAIL_ENV`] makes a job panic on purpose, so that a test can check all this on the real
//! binary (the tests run the release build, as [`super::PANIC_ENV`] does for the main thread).

pub(crate) use attn_trace_core::progress::Progress;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::thread::JoinHandle;

/// The environment variable naming a job that panics as soon as it starts:
/// `ATTN_TRACE_WORKER_PANIC=loading`, `gradient-check`, `training` or `cache-sweep`.
pub(crate) const FAIL_ENV: &str = "ATTN_TRACE_WORKER_PANIC";

/// The kinds of job the TUI runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JobKind {
    /// Tracing a scenario behind the progress box.
    Loading,
    /// The tracer's gradient check.
    GradientCheck,
    /// Training TinyGPT.
    Training,
    /// The memory traffic screen's cache simulation (its cache-misses view).
    CacheSweep,
}

impl JobKind {
    /// The name [`FAIL_ENV`] takes.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            JobKind::Loading => "loading",
            JobKind::GradientCheck => "gradient-check",
            JobKind::Training => "training",
            JobKind::CacheSweep => "cache-sweep",
        }
    }

    /// The popup's title when a job of this kind fails.
    pub(crate) fn failed_title(self) -> &'static str {
        match self {
            JobKind::Loading => attn_trace_i18n::tr!("Tracing failed"),
            JobKind::GradientCheck => attn_trace_i18n::tr!("The gradient check failed"),
            JobKind::Training => attn_trace_i18n::tr!("Training failed"),
            JobKind::CacheSweep => attn_trace_i18n::tr!("The cache simulation failed"),
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
pub(crate) fn take_kept() -> Option<String> {
    lock(&CAUGHT).take()
}

/// Failures the UI has not shown yet, oldest first.
static FAILURES: Mutex<Vec<(JobKind, String)>> = Mutex::new(Vec::new());

/// Runs `f` as a job of kind `worker`. A panic in it is caught: its message (and where it happened) is queued
/// for the UI ([`take_failure`]) and returned as the error.
pub(crate) fn guard<T>(worker: JobKind, f: impl FnOnce() -> T) -> Result<T, String> {
    // guards nest (a job's work guards each piece of its own): the outer one still holds after
    // an inner one returns
    let before = GUARDED.with(|g| g.replace(true));
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        if injected(worker) {
            fail_on_purpose(worker);
        }
        f()
    }));
    GUARDED.with(|g| g.set(before));
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

/// The oldest job failure the UI has not shown yet.
pub(crate) fn take_failure() -> Option<(JobKind, String)> {
    let mut failures = lock(&FAILURES);
    (!failures.is_empty()).then(|| failures.remove(0))
}

/// Whether [`FAIL_ENV`] names `worker`.
fn injected(worker: JobKind) -> bool {
    std::env::var_os(FAIL_ENV).is_some_and(|v| v == worker.name())
}

#[allow(
    clippy::panic,
    reason = "on purpose, for the test that a worker's panic reaches the UI"
)]
fn fail_on_purpose(worker: JobKind) -> ! {
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
pub(crate) fn install_hook() {
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

/// What a job sends the UI.
#[derive(Debug)]
pub(crate) enum Event<M> {
    /// A message of the work's, in the order it sent them.
    Msg(M),
    /// The work panicked or its thread could not start: the job sends nothing more. Its popup
    /// is queued already ([`take_failure`]).
    Failed(String),
}

/// The work's side of a job: where it sends its messages, and its progress.
#[derive(Debug)]
pub(crate) struct Ctx<M> {
    tx: Sender<Event<M>>,
    pub progress: Progress,
}

impl<M> Ctx<M> {
    /// Sends `m` to the UI; false when nobody waits for it any more (the job was dropped), so
    /// the work can stop.
    pub(crate) fn send(&self, m: M) -> bool {
        self.tx.send(Event::Msg(m)).is_ok()
    }

    /// Whether the UI cancelled the job (or dropped it).
    pub(crate) fn cancelled(&self) -> bool {
        self.progress.cancelled()
    }
}

/// A piece of work on a thread of its own, and the UI's handle on it.
#[derive(Debug)]
pub(crate) struct Job<M> {
    progress: Progress,
    rx: Receiver<Event<M>>,
    thread: Option<JoinHandle<()>>,
    /// Dropping the job waits for its thread (training: quitting never leaves it running).
    join: bool,
    /// The thread has ended and every message is taken.
    ended: bool,
}

impl<M: Send + 'static> Job<M> {
    /// Starts `work` on a thread named after `kind`, sharing `progress` with it; a panic in it is
    /// caught and reported ([`guard`]).
    pub(crate) fn spawn(kind: JobKind, progress: Progress, work: impl FnOnce(&Ctx<M>) + Send + 'static) -> Job<M> {
        let (tx, rx) = channel();
        let ctx = Ctx {
            tx: tx.clone(),
            progress: progress.clone(),
        };
        let spawned = std::thread::Builder::new().name(kind.name().into()).spawn(move || {
            if let Err(e) = guard(kind, || work(&ctx)) {
                let _ = ctx.tx.send(Event::Failed(e));
            }
        });
        let thread = match spawned {
            Ok(t) => Some(t),
            Err(e) => {
                let text = attn_trace_i18n::tr!("cannot start the {worker} thread: {e}", worker = kind.name(), e);
                lock(&FAILURES).push((kind, text.clone()));
                let _ = tx.send(Event::Failed(text));
                None
            }
        };
        Job {
            progress,
            rx,
            thread,
            join: false,
            ended: false,
        }
    }

    /// The same job, whose drop waits for its thread to end (after cancelling it).
    #[must_use]
    pub(crate) fn joined(mut self) -> Job<M> {
        self.join = true;
        self
    }
}

impl<M> Job<M> {
    /// The next message or failure the work has sent, if any; `None` when there is none yet, or
    /// when the job has ended ([`Job::ended`]).
    pub(crate) fn poll(&mut self) -> Option<Event<M>> {
        match self.rx.try_recv() {
            Ok(e) => Some(e),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                self.ended = true;
                None
            }
        }
    }

    /// Whether the work has ended and everything it sent has been taken.
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    pub(crate) fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Asks the work to stop at its next check; what it sends from now on is still taken.
    pub(crate) fn cancel(&self) {
        self.progress.cancel();
    }
}

impl<M> Drop for Job<M> {
    /// Cancels the work; waits for its thread when the job was [`Job::joined`].
    fn drop(&mut self) {
        self.progress.cancel();
        if self.join
            && let Some(t) = self.thread.take()
        {
            let _ = t.join();
        }
    }
}
