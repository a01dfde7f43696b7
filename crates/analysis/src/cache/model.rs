//! The cache model itself: set-associative LRU levels, write-allocate and write-back, fed one
//! access at a time.

use super::*;

/// What the caches do with tile-local buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tiles {
    /// Through the caches, like every other access (a CPU running the loop).
    Include,
    /// Past the caches (a GPU's shared memory): not counted at any level.
    Bypass,
}

impl Tiles {
    pub const ALL: [Tiles; 2] = [Tiles::Include, Tiles::Bypass];

    pub const fn name(self) -> &'static str {
        match self {
            Tiles::Include => "include",
            Tiles::Bypass => "bypass",
        }
    }
}

/// Accesses, hits, misses and write-backs (of dirty lines evicted) at one level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    pub writebacks: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.accesses += o.accesses;
        self.hits += o.hits;
        self.misses += o.misses;
        self.writebacks += o.writebacks;
    }

    /// Hits over accesses, 0 without accesses.
    pub fn hit_rate(&self) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            self.hits as f64 / self.accesses as f64
        }
    }
}

/// One way of a set: the line number it holds ([`EMPTY`] when none), dirty or not, and the
/// buffer whose access last wrote or brought it (for the write-back's account).
#[derive(Clone, Copy, Debug)]
struct Way {
    tag: u64,
    dirty: bool,
    buf: u8,
}

const EMPTY: u64 = u64::MAX;

#[derive(Clone, Debug)]
struct LevelSim {
    shift: u32,
    sets: u64,
    /// `sets - 1` when `sets` is a power of two: the set is a mask, not a division.
    mask: Option<u64>,
    ways: usize,
    /// Set `s` is `lines[s·ways .. (s+1)·ways]`, most recently used first.
    lines: Vec<Way>,
}

/// Where one access was served: `0` for an L1 hit, `k` for a hit at level `k + 1`, the number of
/// levels for memory; [`BYPASSED`] for a tile-local access that bypassed the caches.
pub type Served = u8;
pub const BYPASSED: Served = u8::MAX;

/// The caches of one pass, with their counts: total, per buffer and per phase.
#[derive(Clone, Debug)]
pub struct Cache {
    pub specs: Vec<LevelSpec>,
    sims: Vec<LevelSim>,
    /// `[level][buf]`.
    by_buf: Vec<Vec<Counts>>,
    /// `[level][phase]`.
    by_phase: Vec<Vec<Counts>>,
    /// Which phase the accesses belong to now.
    pub phase: Phase,
    /// Bytes read from and written to memory (below the last level).
    pub memory_read: u64,
    pub memory_written: u64,
    /// Tile-local accesses that bypassed the caches.
    pub bypassed: u64,
}

impl Cache {
    /// Empty caches of the given levels (checked by [`parse_levels`]).
    pub fn new(specs: &[LevelSpec]) -> Cache {
        let sims = specs
            .iter()
            .map(|s| {
                let sets = s.sets().max(1);
                LevelSim {
                    shift: s.line.trailing_zeros(),
                    sets,
                    mask: sets.is_power_of_two().then(|| sets - 1),
                    ways: s.ways as usize,
                    lines: vec![
                        Way {
                            tag: EMPTY,
                            dirty: false,
                            buf: 0,
                        };
                        (sets * s.ways) as usize
                    ],
                }
            })
            .collect();
        Cache {
            specs: specs.to_vec(),
            sims,
            by_buf: vec![vec![Counts::default(); Buf::ALL.len()]; specs.len()],
            by_phase: vec![vec![Counts::default(); Phase::ALL.len()]; specs.len()],
            phase: Phase::ALL[0],
            memory_read: 0,
            memory_written: 0,
            bypassed: 0,
        }
    }

    /// One access of 4 bytes at `address` by `buf`; returns where it was served.
    #[inline]
    pub fn access(&mut self, address: u64, write: bool, buf: Buf) -> Served {
        if self.sims.is_empty() {
            return 0;
        }
        self.at(0, address, write, buf as u8)
    }

    /// Access at level `k`: returns the level that held the line (the number of levels for
    /// memory).
    fn at(&mut self, k: usize, address: u64, write: bool, buf: u8) -> Served {
        let phase = self.phase as usize;
        let sim = &mut self.sims[k];
        let tag = address >> sim.shift;
        let set = match sim.mask {
            Some(m) => tag & m,
            None => tag % sim.sets,
        } as usize;
        let ways = &mut sim.lines[set * sim.ways..(set + 1) * sim.ways];
        let by_buf = &mut self.by_buf[k][buf as usize];
        let by_phase = &mut self.by_phase[k][phase];
        by_buf.accesses += 1;
        by_phase.accesses += 1;
        if let Some(p) = ways.iter().position(|w| w.tag == tag) {
            ways[..=p].rotate_right(1);
            if write {
                ways[0].dirty = true;
                ways[0].buf = buf;
            }
            by_buf.hits += 1;
            by_phase.hits += 1;
            return k as Served;
        }
        by_buf.misses += 1;
        by_phase.misses += 1;
        let victim = ways[ways.len() - 1];
        ways.rotate_right(1);
        ways[0] = Way { tag, dirty: write, buf };
        let line_bytes = 1u64 << sim.shift;
        let line_address = tag << sim.shift;
        let last = k + 1 == self.sims.len();
        let served = if last {
            self.memory_read += line_bytes;
            self.sims.len() as Served
        } else {
            self.at(k + 1, line_address, false, buf)
        };
        if victim.tag != EMPTY && victim.dirty {
            self.by_buf[k][victim.buf as usize].writebacks += 1;
            self.by_phase[k][phase].writebacks += 1;
            if last {
                self.memory_written += line_bytes;
            } else {
                self.at(k + 1, victim.tag << self.sims[k].shift, true, victim.buf);
            }
        }
        served
    }

    /// The counts of level `k` over every access.
    pub fn level(&self, k: usize) -> Counts {
        let mut c = Counts::default();
        for b in &self.by_buf[k] {
            c.add(b);
        }
        c
    }

    /// The counts of `buf` at level `k`.
    pub(crate) fn of_buffer(&self, k: usize, buf: Buf) -> Counts {
        self.by_buf[k][buf as usize]
    }

    /// The counts of `phase` at level `k`.
    pub(crate) fn of_phase(&self, k: usize, phase: Phase) -> Counts {
        self.by_phase[k][phase as usize]
    }

    /// Which line of level `k` an address falls in: its first byte and its set.
    pub fn line_of(spec: &LevelSpec, address: u64) -> (u64, u64) {
        let tag = address / spec.line;
        (tag * spec.line, tag % spec.sets().max(1))
    }
}
