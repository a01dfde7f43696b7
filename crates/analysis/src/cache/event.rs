//! Where each event of one trace is served, for the tracer's memory panel and timeline.

use super::*;

/// Where every event of one trace is served, with what the tracer shows of it: the memory
/// panel's hit or miss at each level and the cache line of the access, and the timeline's
/// misses per stretch of events (from prefix counts, so a column costs O(1) on any log).
#[derive(Clone, Debug)]
pub struct EventCache {
    pub levels: Vec<LevelSpec>,
    pub tiles: Tiles,
    /// The levels are this machine's, as the OS reports them (else the documented defaults).
    pub from_os: bool,
    addrs: Addresses,
    served: Vec<Served>,
    /// `l1_misses[n]`: events before `n` that missed L1 (bypassed ones are no miss).
    l1_misses: Vec<u32>,
    /// `from_memory[n]`: events before `n` whose line came from memory.
    from_memory: Vec<u32>,
}

/// One access as the caches saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessCache {
    /// `base + 4·offset`.
    pub address: u64,
    /// Where it was served.
    pub served: Served,
    /// The L1 line it falls in: its first byte.
    pub line: u64,
    /// Bytes of that line.
    pub line_bytes: u64,
    /// The elements of the access's buffer in that line (a line may hold the end of the buffer
    /// before it or the start of the next; those are not named here).
    pub cells: std::ops::Range<usize>,
}

impl AccessCache {
    /// Was it served at level `k` (0 is L1)? Levels above it missed; levels below it were not
    /// asked.
    pub fn hit_at(&self, k: usize) -> bool {
        self.served as usize == k
    }

    /// Did it reach level `k` and miss there?
    pub fn missed_at(&self, k: usize) -> bool {
        self.served != BYPASSED && (self.served as usize) > k
    }
}

impl EventCache {
    /// Runs `trace` through `levels` (see [`simulate`]).
    pub fn new(trace: &Trace, levels: &[LevelSpec], tiles: Tiles, from_os: bool) -> EventCache {
        let served = served(trace, levels, tiles);
        let memory = levels.len() as Served;
        let prefix = |missed: &dyn Fn(Served) -> bool| {
            let mut out = Vec::with_capacity(served.len() + 1);
            let mut k = 0u32;
            out.push(0);
            for &s in &served {
                k += u32::from(missed(s));
                out.push(k);
            }
            out
        };
        let l1_misses = prefix(&|s| s != BYPASSED && s > 0);
        let from_memory = prefix(&|s| s == memory && memory > 0);
        EventCache {
            levels: levels.to_vec(),
            tiles,
            from_os,
            addrs: Addresses::of_trace(trace),
            served,
            l1_misses,
            from_memory,
        }
    }

    /// The caches of this machine (see [`default_levels`]), tile-local buffers included, as
    /// `attn-trace cache` runs by default.
    pub fn of_machine(trace: &Trace) -> EventCache {
        let (levels, from_os) = default_levels();
        EventCache::new(trace, &levels, Tiles::Include, from_os)
    }

    /// Events covered.
    pub fn len(&self) -> usize {
        self.served.len()
    }

    pub fn is_empty(&self) -> bool {
        self.served.is_empty()
    }

    /// Event `n` of `trace` (the trace this was built from) as the caches saw it.
    pub fn at(&self, trace: &Trace, n: usize) -> Option<AccessCache> {
        let e = trace.events.get(n)?;
        let served = *self.served.get(n)?;
        let address = self.addrs.address(e.buf, e.offset as usize);
        let line_bytes = self.levels.first().map_or(ALIGN, |l| l.line);
        let line = address / line_bytes * line_bytes;
        let base = self.addrs.base(e.buf).unwrap_or(0);
        let len = (self.addrs.bytes(e.buf) / ELEMENT) as usize;
        let first = (line.saturating_sub(base) / ELEMENT) as usize;
        let end = ((line + line_bytes).saturating_sub(base) / ELEMENT) as usize;
        Some(AccessCache {
            address,
            served,
            line,
            line_bytes,
            cells: first..end.min(len),
        })
    }

    /// Events of `range` that missed L1, and those whose line came from memory.
    pub fn misses_in(&self, range: std::ops::Range<usize>) -> (u32, u32) {
        let end = range.end.min(self.served.len());
        let start = range.start.min(end);
        (
            self.l1_misses[end] - self.l1_misses[start],
            self.from_memory[end] - self.from_memory[start],
        )
    }
}
