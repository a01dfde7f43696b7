//! The tracer's gradient checks ([`attn_trace_analysis::gradcheck`]), computed on a worker thread so that no
//! key waits for the six forward passes a check takes (about 10 ms on the ten-million-event
//! bench scenario). The tracer asks for the cell at its cursor; the worker starts on the latest
//! request once no newer one has come for [`SETTLE`] (a key held down asks for a new cell every
//! few milliseconds: only where the cursor stops is checked), and every result is kept, so
//! coming back to a cell shows it at once. The app polls on its tick while a check runs.

use crate::tui::job::{Event, Job, JobKind, Progress, guard};
pub(crate) use attn_trace_analysis::gradcheck::target;
use attn_trace_analysis::gradcheck::{self, Check, Skip};
use attn_trace_core::engine::Inputs;
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::Buf;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a request must stay the latest before the worker starts on it.
pub(crate) const SETTLE: Duration = Duration::from_millis(25);

/// Which check: the variant, the gradient buffer and the cell.
pub(crate) type Key = (Variant, Buf, usize);

/// What a check needs; `Send`, for the worker.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub key: Key,
    pub inputs: Arc<Inputs>,
    /// The primal cell's forward value, the backward pass's final gradient there, its label.
    pub value: f32,
    pub analytic: f32,
    pub label: String,
}

/// The latest request, and when it was made.
#[derive(Default)]
struct Slot {
    request: Option<(Request, Instant)>,
}

#[derive(Default)]
struct Shared {
    slot: Mutex<Slot>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        // a check that panicked cannot leave the slot half written: take it as it is
        self.slot.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The checks asked for, the results, and the worker computing them.
#[derive(Default)]
pub(crate) struct Checker {
    cache: HashMap<Key, Result<Check, Skip>>,
    /// Asked for and not back yet.
    pending: Option<Key>,
    shared: Arc<Shared>,
    job: Option<Job<(Key, Result<Check, Skip>)>>,
}

impl fmt::Debug for Checker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checker")
            .field("cached", &self.cache.len())
            .field("pending", &self.pending)
            .finish()
    }
}

fn work(shared: &Shared, ctx: &crate::tui::job::Ctx<(Key, Result<Check, Skip>)>) {
    loop {
        let request = {
            let mut slot = shared.lock();
            loop {
                if ctx.cancelled() {
                    return;
                }
                match &slot.request {
                    // the cursor has rested on this cell long enough
                    Some((_, at)) if at.elapsed() >= SETTLE => {
                        if let Some((r, _)) = slot.request.take() {
                            break r;
                        }
                    }
                    Some((_, at)) => {
                        let rest = SETTLE.saturating_sub(at.elapsed());
                        slot = shared
                            .wake
                            .wait_timeout(slot, rest)
                            .map_or_else(|e| e.into_inner().0, |(s, _)| s);
                    }
                    None => slot = shared.wake.wait(slot).unwrap_or_else(PoisonError::into_inner),
                }
            }
        };
        if !ctx.send(request.run()) {
            return;
        }
    }
}

impl Request {
    /// The check asked for: six untraced forward passes. A panic is an error for the UI (see
    /// `guard`) and a failed check in the panel; the job goes on with the next request.
    fn run(self) -> (Key, Result<Check, Skip>) {
        let (variant, grad, off) = self.key;
        let result = guard(JobKind::GradientCheck, || {
            gradcheck::check(
                &self.inputs,
                variant,
                grad,
                off,
                self.value,
                self.analytic,
                self.label.clone(),
            )
        })
        .unwrap_or_else(|e| Err(Skip::Failed(e)));
        (self.key, result)
    }
}

impl Checker {
    /// The result for `key`, once computed.
    pub(crate) fn get(&self, key: &Key) -> Option<&Result<Check, Skip>> {
        self.cache.get(key)
    }

    /// Whether `key` is known or under way already (nothing to ask).
    pub(crate) fn asked(&self, key: &Key) -> bool {
        self.cache.contains_key(key) || self.pending.as_ref() == Some(key)
    }

    /// Whether a check is under way.
    pub(crate) fn busy(&self) -> bool {
        self.pending.is_some()
    }

    /// Asks for `request` unless it is known or already under way; it replaces an earlier
    /// request the worker has not started.
    pub(crate) fn want(&mut self, request: Request) {
        if self.asked(&request.key) {
            return;
        }
        self.pending = Some(request.key);
        // the worker sleeps until a request comes, and re-reads the slot every SETTLE while one
        // waits: only the first of a run of requests (a key held down) needs to wake it
        let was_idle = {
            let mut slot = self.shared.lock();
            let idle = slot.request.is_none();
            slot.request = Some((request, Instant::now()));
            idle
        };
        if self.job.is_none() {
            let shared = Arc::clone(&self.shared);
            self.job = Some(
                Job::spawn(JobKind::GradientCheck, Progress::default(), move |ctx| {
                    work(&shared, ctx);
                })
                .joined(),
            );
        }
        if was_idle {
            self.shared.wake.notify_one();
        }
    }

    /// Takes in what the worker finished; true when something arrived.
    pub(crate) fn poll(&mut self) -> bool {
        let Some(job) = self.job.as_mut() else { return false };
        let mut arrived = false;
        while let Some(event) = job.poll() {
            arrived = true;
            match event {
                Event::Msg((key, result)) => {
                    if self.pending == Some(key) {
                        self.pending = None;
                    }
                    self.cache.insert(key, result);
                }
                // no worker to be had (its popup says why): say so in the panel rather than
                // wait forever
                Event::Failed(_) => {
                    if let Some(key) = request_key(&self.shared).or(self.pending) {
                        self.cache.insert(key, Err(Skip::NoWorker));
                    }
                    self.pending = None;
                }
            }
        }
        if job.ended() {
            // the next request starts a new job
            self.job = None;
        }
        arrived
    }

    /// Waits (up to `limit`) for the check under way: for tests, pictures and `tui --snapshot`,
    /// which draw what a person would see a moment later.
    pub(crate) fn wait(&mut self, limit: Duration) {
        let start = Instant::now();
        while self.busy() && start.elapsed() < limit {
            if !self.poll() {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

/// The key of the request still in the slot (taking it out).
fn request_key(shared: &Shared) -> Option<Key> {
    shared.lock().request.take().map(|(r, _)| r.key)
}

impl Drop for Checker {
    /// Cancels the job and wakes it, so that dropping it (which waits for its thread) is quick.
    fn drop(&mut self) {
        if let Some(job) = &self.job {
            // under the slot's lock: the worker checks the flag holding it, then waits, which
            // lets go of it, so the wake below cannot fall between its check and its wait
            let _slot = self.shared.lock();
            job.cancel();
        }
        self.shared.wake.notify_all();
    }
}
