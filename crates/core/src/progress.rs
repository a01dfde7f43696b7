//! How far a piece of long work has got, shared between the work and whoever waits for it: a
//! counter the work moves (events recorded, runs simulated, steps trained) and a flag the waiter
//! sets when it no longer wants the result. The engine's recorder, the cache simulation and the
//! TUI's background jobs all take this one type.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A counter and a cancel flag, shared: clones see the same two.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    done: Arc<AtomicU64>,
    cancel: Arc<AtomicBool>,
}

impl Progress {
    /// How far the work has got, in its own unit.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// The work has got `n` further.
    pub fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// The waiter no longer wants the result: the work stops at its next check.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The flag itself, for work that takes a bare `AtomicBool`.
    pub fn flag(&self) -> &AtomicBool {
        &self.cancel
    }
}
