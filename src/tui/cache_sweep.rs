//! The memory traffic screen's cache misses ([`attn_trace_analysis::cache::sweep`]) simulated on a
//! worker thread, one sequence length at a time from the shortest, so the first rows show within
//! a second while the longest take their time (T = 512 is four times T = 256, and T = 1024 four
//! times that). The screen shows the rows done so far and "n of m runs" (a run is one kernel at
//! one T; the worker counts them as they finish). Every finished row is kept per head size and
//! mask, so going back to one shows it at once; asking for more lengths of the same ones queues
//! them behind the job under way, and asking for another head size or mask drops that job: its
//! runs not started are skipped, those running stop simulating and are thrown away. The app polls
//! on its tick while a job runs.

use crate::tui::job::{Event, Job, JobKind, Progress};
use attn_trace_analysis::cache::{self, CacheSweep, LevelSpec, MissRow, SWEEP_LENGTHS, SWEEP_TILES, Tiles};
use attn_trace_core::kernels::Mask;
use attn_trace_i18n::tr;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Where the levels simulated come from, as the view's header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LevelsFrom {
    /// This machine's L1d and L2, as the OS reports them ([`cache::os_levels`]).
    Os,
    /// [`cache::DEFAULT_LEVELS`]: the OS reports none.
    Defaults,
    /// Chosen by the caller (the README's picture, tests).
    Given,
}

impl LevelsFrom {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            LevelsFrom::Os => tr!("this machine's, as the OS reports them"),
            LevelsFrom::Defaults => tr!("defaults: the OS reports none"),
            LevelsFrom::Given => tr!("as given"),
        }
    }
}

/// A head size and a mask (causal or none): what one set of rows is for.
pub(crate) type Key = (usize, bool);

/// The lengths a worker has still to simulate; `closed` once it found none left and ended.
#[derive(Default)]
struct Queue {
    todo: VecDeque<usize>,
    closed: bool,
}

fn lock(q: &Mutex<Queue>) -> std::sync::MutexGuard<'_, Queue> {
    // the queue is whole after every change: a panic cannot leave it half written
    q.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The sweep under way: the rows of `lengths` for `key`, sent back one by one by its job
/// (dropping it cancels the job: the worker stops after the run under way).
struct Sweep {
    key: Key,
    /// Every length asked of the worker, in its order; the first `received` are done.
    lengths: Vec<usize>,
    received: usize,
    queue: Arc<Mutex<Queue>>,
    job: Job<MissRow>,
    started: Instant,
}

/// How far the sweep under way has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SweepStatus {
    /// Runs finished and runs in all (one kernel at one T each).
    pub done: usize,
    pub total: usize,
    /// The sequence length being simulated.
    pub t: usize,
    pub elapsed: Duration,
}

/// The simulated rows, and the worker computing more.
pub(crate) struct Simulation {
    pub levels: Vec<LevelSpec>,
    pub from: LevelsFrom,
    /// Every sequence length the view can show, ascending.
    pub lengths: Vec<usize>,
    /// The square tile sizes of flash.
    pub tiles: Vec<usize>,
    /// Finished rows per head size and mask, by ascending T.
    rows: HashMap<Key, Vec<MissRow>>,
    job: Option<Sweep>,
    /// Why the last job ended without all its rows, if it did.
    pub failed: Option<String>,
}

impl fmt::Debug for Simulation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Simulation")
            .field("levels", &self.levels)
            .field("lengths", &self.lengths)
            .field("kept", &self.rows.len())
            .field("busy", &self.busy())
            .finish_non_exhaustive()
    }
}

impl Default for Simulation {
    /// This machine's caches (else the defaults), T = 64 … 1024, tiles of 16 to 128: those of
    /// `attn-trace cache --sweep`.
    fn default() -> Self {
        let (levels, from_os) = cache::default_levels();
        let from = if from_os { LevelsFrom::Os } else { LevelsFrom::Defaults };
        Simulation::new(levels, from, &SWEEP_LENGTHS, &SWEEP_TILES)
    }
}

fn mask_of(causal: bool) -> Mask {
    if causal { Mask::Causal } else { Mask::None }
}

impl Simulation {
    pub(crate) fn new(levels: Vec<LevelSpec>, from: LevelsFrom, lengths: &[usize], tiles: &[usize]) -> Simulation {
        let mut lengths = lengths.to_vec();
        lengths.sort_unstable();
        lengths.dedup();
        Simulation {
            levels,
            from,
            lengths,
            tiles: tiles.to_vec(),
            rows: HashMap::new(),
            job: None,
            failed: None,
        }
    }

    /// The lengths up to `max_t`.
    fn wanted(&self, max_t: usize) -> impl Iterator<Item = usize> + '_ {
        self.lengths.iter().copied().filter(move |&t| t <= max_t)
    }

    /// The lengths up to `max_t` that `key` has no row for yet.
    pub(crate) fn missing(&self, key: Key, max_t: usize) -> Vec<usize> {
        let have = self.rows.get(&key);
        self.wanted(max_t)
            .filter(|&t| !have.is_some_and(|rows| rows.iter().any(|r| r.t == t)))
            .collect()
    }

    /// Makes sure the rows of `key` up to `max_t` are known or under way: lengths the job under
    /// way for `key` lacks are queued behind it; a job for another key is dropped and a new one
    /// starts.
    pub(crate) fn want(&mut self, key: Key, max_t: usize) {
        // rows sent before a worker closed its queue are taken in first
        self.tick();
        let missing = self.missing(key, max_t);
        if let Some(j) = self.job.as_mut().filter(|j| j.key == key) {
            let extra: Vec<usize> = missing
                .iter()
                .copied()
                .filter(|t| !j.lengths[j.received..].contains(t))
                .collect();
            let mut q = lock(&j.queue);
            if !q.closed {
                q.todo.extend(&extra);
                drop(q);
                j.lengths.extend(extra);
                return;
            }
        }
        // dropping the job under way cancels it
        self.job = None;
        if !missing.is_empty() {
            self.start(key, missing);
        }
    }

    fn start(&mut self, key: Key, lengths: Vec<usize>) {
        let (d, causal) = key;
        let queue = Arc::new(Mutex::new(Queue {
            todo: lengths.iter().copied().collect(),
            closed: false,
        }));
        let (todo, tiles, levels) = (Arc::clone(&queue), self.tiles.clone(), self.levels.clone());
        // a failed job's rows sent before the failure stay
        let job = Job::spawn(JobKind::CacheSweep, Progress::default(), move |ctx| {
            let mask = mask_of(causal);
            loop {
                let t = {
                    let mut q = lock(&todo);
                    match q.todo.pop_front() {
                        Some(t) => t,
                        None => {
                            q.closed = true;
                            return;
                        }
                    }
                };
                let s = cache::sweep_counted(&[t], &tiles, d, &mask, &levels, Tiles::Include, &ctx.progress);
                // a cancelled row has empty cells; nobody reads it any more anyway
                if ctx.cancelled() {
                    return;
                }
                let Some(row) = s.rows.into_iter().next() else { return };
                if !ctx.send(row) {
                    return;
                }
            }
        });
        self.failed = None;
        self.job = Some(Sweep {
            key,
            lengths,
            received: 0,
            queue,
            job,
            started: Instant::now(),
        });
    }

    /// Takes in the rows the worker finished; returns whether any came.
    pub(crate) fn tick(&mut self) -> bool {
        let Some(sweep) = self.job.as_mut() else { return false };
        let mut came = false;
        let ended = loop {
            match sweep.job.poll() {
                Some(Event::Msg(row)) => {
                    sweep.received += 1;
                    came = true;
                    let rows = self.rows.entry(sweep.key).or_default();
                    rows.retain(|r| r.t != row.t);
                    rows.push(row);
                    rows.sort_by_key(|r| r.t);
                }
                // its popup says why (queued already); the rows it sent before stay
                Some(Event::Failed(_)) => {
                    self.failed = Some(tr!("the simulation stopped before its last run").to_string());
                    break true;
                }
                None if sweep.job.ended() => {
                    if sweep.received < sweep.lengths.len() {
                        self.failed = Some(tr!("the simulation stopped before its last run").to_string());
                    }
                    break true;
                }
                None => break sweep.received == sweep.lengths.len(),
            }
        };
        if ended {
            self.job = None;
        }
        came
    }

    /// Whether a job is under way.
    pub(crate) fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// How far the job under way for `key` has got (`None` when none is).
    pub(crate) fn progress(&self, key: Key) -> Option<SweepStatus> {
        let j = self.job.as_ref().filter(|j| j.key == key)?;
        let runs = j.lengths.len() * (1 + self.tiles.len());
        Some(SweepStatus {
            done: usize::try_from(j.job.progress().done()).unwrap_or(usize::MAX).min(runs),
            total: runs,
            t: j.lengths.get(j.received).copied().unwrap_or(0),
            elapsed: j.started.elapsed(),
        })
    }

    /// Blocks until the job under way is done or `timeout` passes, taking in its rows (for tests
    /// and the README's picture; the app polls on its tick instead). Returns whether it is done.
    pub(crate) fn wait(&mut self, timeout: Duration) -> bool {
        let start = Instant::now();
        loop {
            self.tick();
            if !self.busy() {
                return true;
            }
            if start.elapsed() >= timeout {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The rows of `key` known up to `max_t`, as a sweep's table (the same as
    /// `cache::sweep` of those lengths).
    pub(crate) fn sweep(&self, key: Key, max_t: usize) -> CacheSweep {
        let (d, causal) = key;
        let rows = self
            .rows
            .get(&key)
            .map(|rows| rows.iter().filter(|r| r.t <= max_t).cloned().collect())
            .unwrap_or_default();
        CacheSweep::new(d, &mask_of(causal), &self.levels, Tiles::Include, &self.tiles, rows)
    }

    /// The lengths up to `max_t`, every one the view shows a row for.
    pub(crate) fn shown_lengths(&self, max_t: usize) -> Vec<usize> {
        self.wanted(max_t).collect()
    }
}
