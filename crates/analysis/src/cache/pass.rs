//! One pass's accesses sent through the caches: counts per level, buffer and phase, and what
//! reaches memory.

use super::*;

/// One level's counts, named.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LevelCounts {
    pub name: String,
    #[serde(flatten)]
    pub counts: Counts,
}

/// One buffer's counts per level, with its placement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BufferCounts {
    #[serde(rename = "name", serialize_with = "buf_name")]
    pub buf: Buf,
    /// The memory level the registry gives it (global or tile).
    pub level: Level,
    pub address: u64,
    pub bytes: u64,
    pub levels: Vec<LevelCounts>,
}

fn buf_name<S: serde::Serializer>(b: &Buf, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(b.name())
}

fn phase_name<S: serde::Serializer>(p: &Phase, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.name())
}

/// One phase's counts per level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PhaseCounts {
    #[serde(rename = "name", serialize_with = "phase_name")]
    pub phase: Phase,
    pub levels: Vec<LevelCounts>,
}

/// Bytes moved between the last level and memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Memory {
    pub read_bytes: u64,
    pub written_bytes: u64,
}

/// The caches' counts for one pass of one variant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PassCache {
    pub variant: Variant,
    pub pass: Pass,
    pub levels: Vec<LevelCounts>,
    /// Accesses to tile-local buffers that bypassed the caches (0 with `--tiles include`).
    pub bypassed: u64,
    pub memory: Memory,
    /// Buffers touched, in registry order.
    pub buffers: Vec<BufferCounts>,
    /// Phases run, in order.
    pub phases: Vec<PhaseCounts>,
}

impl PassCache {
    fn of(cache: &Cache, variant: Variant, pass: Pass, addrs: &Addresses, phases: &[Phase]) -> PassCache {
        let n = cache.specs.len();
        let named = |k: usize, counts: Counts| LevelCounts {
            name: cache.specs[k].name.clone(),
            counts,
        };
        PassCache {
            variant,
            pass,
            levels: (0..n).map(|k| named(k, cache.level(k))).collect(),
            bypassed: cache.bypassed,
            memory: Memory {
                read_bytes: cache.memory_read,
                written_bytes: cache.memory_written,
            },
            buffers: addrs
                .placed()
                .filter(|&(b, ..)| (0..n).any(|k| cache.of_buffer(k, b) != Counts::default()))
                .map(|(buf, address, bytes, level)| BufferCounts {
                    buf,
                    level,
                    address,
                    bytes,
                    levels: (0..n).map(|k| named(k, cache.of_buffer(k, buf))).collect(),
                })
                .collect(),
            phases: phases
                .iter()
                .map(|&phase| PhaseCounts {
                    phase,
                    levels: (0..n).map(|k| named(k, cache.of_phase(k, phase))).collect(),
                })
                .collect(),
        }
    }

    /// Bytes read from plus written to memory.
    pub fn memory_bytes(&self) -> u64 {
        self.memory.read_bytes + self.memory.written_bytes
    }
}

/// Runs every event of `trace` through caches of `levels`, empty at the start of each pass;
/// calls `each(n, served)` for every event in order; returns the counts per pass.
pub fn simulate(
    trace: &Trace,
    variant: Variant,
    levels: &[LevelSpec],
    tiles: Tiles,
    mut each: impl FnMut(usize, Served),
) -> Vec<PassCache> {
    let addrs = Addresses::of_trace(trace);
    let mut out = Vec::new();
    let mut current: Option<(Pass, Cache, Vec<Phase>)> = None;
    for k in 0..trace.phases.len() {
        let phase = trace.phases[k].1;
        let pass = phase.pass();
        if current.as_ref().is_none_or(|(p, ..)| *p != pass) {
            if let Some((p, cache, phases)) = current.take() {
                out.push(PassCache::of(&cache, variant, p, &addrs, &phases));
            }
            current = Some((pass, Cache::new(levels), Vec::new()));
        }
        let Some((_, cache, phases)) = current.as_mut() else {
            continue;
        };
        cache.phase = phase;
        let range = trace.span_range(k);
        if !range.is_empty() && !phases.contains(&phase) {
            phases.push(phase);
        }
        for n in range {
            let e = &trace.events[n];
            let served = if tiles == Tiles::Bypass && addrs.is_tile(e.buf) {
                cache.bypassed += 1;
                BYPASSED
            } else {
                cache.access(addrs.address(e.buf, e.offset as usize), e.op == Op::Write, e.buf)
            };
            each(n, served);
        }
    }
    if let Some((p, cache, phases)) = current {
        out.push(PassCache::of(&cache, variant, p, &addrs, &phases));
    }
    out
}

/// Where every event of `trace` is served (see [`Served`]): what the tracer's memory panel and
/// timeline show.
pub fn served(trace: &Trace, levels: &[LevelSpec], tiles: Tiles) -> Vec<Served> {
    let mut out = vec![0; trace.len()];
    // the variant is only a label of the counts, which are dropped here
    simulate(trace, Variant::Mha, levels, tiles, |n, s| out[n] = s);
    out
}

/// A recorder that sends each access straight to the caches, keeping no log: the sweep runs
/// kernels of millions of accesses through it. Once `cancel` is set (looked at every
/// [`Feed::CHECK`] accesses) it stops simulating: the kernel runs on to its end, through caches of
/// no level, which cost nothing (the caches take most of the time).
pub(super) struct Feed<'a> {
    pub(super) cache: Cache,
    pub(super) addrs: &'a Addresses,
    pub(super) tiles: Tiles,
    pub(super) cancel: &'a AtomicBool,
    /// Accesses until the next look at `cancel`.
    pub(super) until_check: u32,
}

impl Feed<'_> {
    /// Accesses between two looks at `cancel`.
    pub(super) const CHECK: u32 = 1 << 16;
}

impl Recorder for Feed<'_> {
    const ENABLED: bool = true;

    #[inline]
    fn log(&mut self, op: Op, buf: Buf, offset: usize, _: f32, _: u32) {
        self.until_check -= 1;
        if self.until_check == 0 {
            self.until_check = Feed::CHECK;
            if self.cancel.load(Ordering::Relaxed) {
                self.cache = Cache::new(&[]);
            }
        }
        if self.tiles == Tiles::Bypass && self.addrs.is_tile(buf) {
            self.cache.bypassed += 1;
        } else {
            self.cache.access(self.addrs.address(buf, offset), op == Op::Write, buf);
        }
    }

    fn phase(&mut self, phase: Phase) {
        self.cache.phase = phase;
    }

    fn enter<const N: usize>(&mut self, _: &'static [&'static str; N], _: [usize; N]) {}

    fn exit(&mut self) {}
}
