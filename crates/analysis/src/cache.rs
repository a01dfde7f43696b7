//! Caches: where each access of a trace would be served in a memory hierarchy of set-associative
//! LRU caches, and what moves to and from memory.
//!
//! **Addresses.** Every buffer of a run is one allocation, placed in registry order ([`Buf`]
//! order) at the next multiple of 64 bytes after the one before; an access is 4 bytes at
//! `base + 4·offset`. Global buffers start at address 0. Tile-local buffers (flash's on-chip
//! working set) are a separate address space, placed the same way from [`TILE_SPACE`]; the model
//! sends them through the caches ([`Tiles::Include`], a CPU running the loop) or lets them bypass
//! the caches ([`Tiles::Bypass`], as a GPU's shared memory would).
//!
//! **The model.** Levels `L1, L2, …`, each `size` bytes of `line`-byte lines in sets of `ways`
//! lines; the set of an address is `(address / line) mod sets`. Every access (read or write)
//! looks up its line in L1. A hit makes the line the most recently used of its set (a write
//! marks it dirty). A miss brings the line in (write-allocate: a write miss too), evicting the
//! least recently used line of its set; the next level sees the miss as a read of the line, and
//! then, if the evicted line was dirty, a write of that line (its write-back). Below the last
//! level is memory: a last-level miss reads a line from memory, a last-level write-back writes
//! one. Lines still dirty at the end are not flushed. Every pass starts with empty caches.

use attn_trace_core::engine::{Inputs, Registry, Start, Tensors};
use attn_trace_core::kernels::attention_flash::Tiles as TileSizes;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::progress::Progress;
use attn_trace_core::tensor::{Level, Shape};
use attn_trace_core::trace::{Buf, Op, Pass, Phase, Recorder, Trace};
use attn_trace_i18n::tr;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};

/// Every buffer starts at a multiple of this many bytes.
pub const ALIGN: u64 = 64;
/// Bytes of one element (an `f32`).
pub const ELEMENT: u64 = 4;
/// Where the tile-local address space starts (`0x100_0000_0000`).
pub const TILE_SPACE: u64 = 1 << 40;

/// The base address of every buffer of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Addresses {
    /// `(base, bytes, level)` per [`Buf`], for the buffers the run has.
    bases: Vec<Option<(u64, u64, Level)>>,
}

impl Addresses {
    /// Places `buffers` (each with its level and length in elements) in the order given, which
    /// is registry order.
    pub fn new(buffers: impl IntoIterator<Item = (Buf, Level, usize)>) -> Addresses {
        let mut bases = vec![None; Buf::ALL.len()];
        let mut next = [0u64, TILE_SPACE];
        for (buf, level, len) in buffers {
            let space = usize::from(level == Level::Tile);
            let base = next[space];
            let bytes = len as u64 * ELEMENT;
            next[space] = (base + bytes).next_multiple_of(ALIGN);
            bases[buf as usize] = Some((base, bytes, level));
        }
        Addresses { bases }
    }

    /// The placement of a traced run's buffers.
    pub fn of_trace(trace: &Trace) -> Addresses {
        Addresses::new(
            Buf::ALL
                .iter()
                .filter_map(|&b| trace.buffer(b).map(|i| (b, i.spec.level, i.len()))),
        )
    }

    /// The placement of a run's buffers from its registry (the same as [`Addresses::of_trace`]
    /// of its trace).
    pub fn of_registry(registry: &Registry) -> Addresses {
        Addresses::new(registry.iter().map(|(b, s)| (b, s.level, s.len())))
    }

    /// Base address of `buf`, if the run has it.
    pub fn base(&self, buf: Buf) -> Option<u64> {
        self.bases[buf as usize].map(|(b, _, _)| b)
    }

    /// Bytes of `buf` (4 per element).
    pub fn bytes(&self, buf: Buf) -> u64 {
        self.bases[buf as usize].map_or(0, |(_, n, _)| n)
    }

    /// The address of `buf[offset]`: `base + 4·offset`.
    #[inline]
    pub fn address(&self, buf: Buf, offset: usize) -> u64 {
        self.bases[buf as usize].map_or(0, |(b, _, _)| b) + offset as u64 * ELEMENT
    }

    /// Is `buf` tile-local (in the tile address space)?
    #[inline]
    pub(crate) fn is_tile(&self, buf: Buf) -> bool {
        self.bases[buf as usize].is_some_and(|(_, _, l)| l == Level::Tile)
    }

    /// The buffers placed, in address order within each space (global first).
    pub fn placed(&self) -> impl Iterator<Item = (Buf, u64, u64, Level)> + '_ {
        Buf::ALL
            .iter()
            .filter_map(|&b| self.bases[b as usize].map(|(base, n, l)| (b, base, n, l)))
    }
}

/// One cache level's geometry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LevelSpec {
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// Bytes of one line.
    pub line: u64,
    pub ways: u64,
}

impl LevelSpec {
    pub fn sets(&self) -> u64 {
        self.size / (self.line * self.ways)
    }

    /// `L1=32K/64/8`, as `--levels` takes it.
    pub fn short(&self) -> String {
        let size = match self.size {
            n if n >= 1 << 20 && n.is_multiple_of(1 << 20) => format!("{}M", n >> 20),
            n if n >= 1 << 10 && n.is_multiple_of(1 << 10) => format!("{}K", n >> 10),
            n => n.to_string(),
        };
        format!("{}={size}/{}/{}", self.name, self.line, self.ways)
    }

    /// `L1 32 KiB, 64-byte lines, 8-way (64 sets)`.
    pub fn describe(&self) -> String {
        format!(
            "{} {}, {}-byte lines, {}-way ({} sets)",
            self.name,
            size_text(self.size),
            self.line,
            self.ways,
            self.sets()
        )
    }
}

/// `32 KiB`, `1 MiB`, or bytes.
pub fn size_text(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

/// The largest cache level accepted (bytes), so that a typo cannot ask for gigabytes of tags.
pub const MAX_SIZE: u64 = 1 << 30;
/// The most levels accepted.
pub const MAX_LEVELS: usize = 4;

/// Parses `L1=32K/64/8,L2=512K/64/8`: per level a name, its size (bytes, or with K or M), its
/// line size and its ways. The error names the part that is wrong.
pub fn parse_levels(s: &str) -> Result<Vec<LevelSpec>, String> {
    let mut out: Vec<LevelSpec> = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (name, geometry) = part
            .split_once('=')
            .ok_or_else(|| format!("'{part}': expected NAME=SIZE/LINE/WAYS, e.g. L1=32K/64/8"))?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(format!("'{part}': a level's name is letters and digits, e.g. L1"));
        }
        if out.iter().any(|l| l.name == name) {
            return Err(format!("'{part}': level {name} is given twice"));
        }
        let fields: Vec<&str> = geometry.split('/').map(str::trim).collect();
        let [size, line, ways] = fields[..] else {
            return Err(format!("'{part}': expected SIZE/LINE/WAYS, e.g. 32K/64/8"));
        };
        let size =
            bytes(size).ok_or_else(|| format!("'{part}': size '{size}' is not a number of bytes (e.g. 32K, 1M)"))?;
        let line: u64 = line
            .parse()
            .map_err(|_| format!("'{part}': line size '{line}' is not a whole number"))?;
        let ways: u64 = ways
            .parse()
            .map_err(|_| format!("'{part}': ways '{ways}' is not a whole number"))?;
        if !(ELEMENT..=4096).contains(&line) || !line.is_power_of_two() {
            return Err(format!(
                "'{part}': the line size must be a power of two from 4 to 4096 bytes"
            ));
        }
        if !(1..=64).contains(&ways) {
            return Err(format!("'{part}': ways must be from 1 to 64"));
        }
        if size == 0 || size > MAX_SIZE || !size.is_multiple_of(line * ways) {
            return Err(format!(
                "'{part}': the size must be a whole number of sets of {ways} lines of {line} bytes, at most 1G"
            ));
        }
        // a miss above fetches one line of the level above's size from here: a smaller line
        // here would bring in only part of it, and memory's traffic would be undercounted
        if let Some(above) = out.last()
            && line < above.line
        {
            return Err(format!(
                "'{part}': its lines ({line} bytes) are smaller than {name_above}'s ({above_line} bytes); a level's lines must be at least as large as the level above's",
                name_above = above.name,
                above_line = above.line
            ));
        }
        out.push(LevelSpec {
            name: name.to_string(),
            size,
            line,
            ways,
        });
    }
    if out.len() > MAX_LEVELS {
        return Err(format!("at most {MAX_LEVELS} levels"));
    }
    Ok(out)
}

/// `32K` → 32768, `1M` → 1048576, `4096` → 4096.
fn bytes(s: &str) -> Option<u64> {
    let (digits, scale) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

/// The levels used when the OS does not report this machine's: a common L1d and L2.
pub const DEFAULT_LEVELS: &str = "L1=32K/64/8,L2=512K/64/8";

/// Where the OS describes CPU 0's caches (Linux).
pub const SYS_CACHE: &str = "/sys/devices/system/cpu/cpu0/cache";

/// This machine's L1 data cache and L2 as the OS reports them (`/sys/devices/system/cpu/cpu0/
/// cache/index*/`), or `None` when it does not (another OS, a container hiding them).
pub fn os_levels() -> Option<Vec<LevelSpec>> {
    let read = |dir: &std::path::Path, f: &str| std::fs::read_to_string(dir.join(f)).ok().map(|s| s.trim().to_string());
    let mut found: Vec<(u64, LevelSpec)> = Vec::new();
    let entries = std::fs::read_dir(SYS_CACHE).ok()?;
    for entry in entries.flatten() {
        let dir = entry.path();
        if !entry.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let (Some(level), Some(kind)) = (read(&dir, "level"), read(&dir, "type")) else {
            continue;
        };
        let Ok(level) = level.parse::<u64>() else { continue };
        let wanted = matches!((level, kind.as_str()), (1, "Data") | (2, "Unified" | "Data"));
        if !wanted {
            continue;
        }
        let size = read(&dir, "size").and_then(|s| bytes(&s));
        let line = read(&dir, "coherency_line_size").and_then(|s| s.parse().ok());
        let ways = read(&dir, "ways_of_associativity").and_then(|s| s.parse().ok());
        if let (Some(size), Some(line), Some(ways)) = (size, line, ways) {
            let spec = LevelSpec {
                name: format!("L{level}"),
                size,
                line,
                ways,
            };
            // the same checks as --levels
            let text = format!("{}={}/{}/{}", spec.name, spec.size, spec.line, spec.ways);
            if parse_levels(&text).is_ok() && !found.iter().any(|(l, _)| *l == level) {
                found.push((level, spec));
            }
        }
    }
    found.sort_by_key(|(l, _)| *l);
    let levels: Vec<LevelSpec> = found.into_iter().map(|(_, s)| s).collect();
    // the two together, as --levels checks them (L2's lines at least L1's)
    let both: Vec<String> = levels
        .iter()
        .map(|l| format!("{}={}/{}/{}", l.name, l.size, l.line, l.ways))
        .collect();
    (levels.len() == 2 && parse_levels(&both.join(",")).is_ok()).then_some(levels)
}

/// The default levels and where they come from: this machine's (`true`), else
/// [`DEFAULT_LEVELS`].
pub fn default_levels() -> (Vec<LevelSpec>, bool) {
    match os_levels() {
        Some(l) => (l, true),
        None => (parse_levels(DEFAULT_LEVELS).unwrap_or_default(), false),
    }
}

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
struct Feed<'a> {
    cache: Cache,
    addrs: &'a Addresses,
    tiles: Tiles,
    cancel: &'a AtomicBool,
    /// Accesses until the next look at `cancel`.
    until_check: u32,
}

impl Feed<'_> {
    /// Accesses between two looks at `cancel`.
    const CHECK: u32 = 1 << 16;
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

/// The misses of one run of the sweep.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SweepCell {
    /// Misses per level.
    pub misses: Vec<u64>,
    /// Bytes read from plus written to memory.
    pub memory_bytes: u64,
}

/// One sequence length of the sweep.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SweepRow {
    pub t: usize,
    pub naive: SweepCell,
    /// Per tile size of [`CacheSweep::tiles`].
    pub flash: Vec<SweepCell>,
}

/// Misses of the plain MHA kernel against flash as `T` and the tile size grow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CacheSweep {
    pub d: usize,
    pub mask: Mask,
    pub levels: Vec<LevelSpec>,
    pub tile_mode: Tiles,
    pub tiles: Vec<usize>,
    /// Bytes of flash's tile-local working set in the forward pass, per tile size.
    pub tile_bytes: Vec<u64>,
    pub rows: Vec<SweepRow>,
}

/// The forward pass of one head (`B = H = 1`, head size `d`) of `variant` at `t` with square
/// tiles of `tile`, through caches of `levels`, starting at `q, k, v`; it stops simulating soon
/// after `cancel` is set (its counts are then those of the accesses before: not to be shown).
#[allow(clippy::too_many_arguments, reason = "the run's sizes and the flag")]
pub(crate) fn one_head_until(
    variant: Variant,
    t: usize,
    d: usize,
    tile: usize,
    mask: &Mask,
    levels: &[LevelSpec],
    tiles: Tiles,
    cancel: &AtomicBool,
) -> Cache {
    let shape = Shape::new(1, t, d, 1);
    let n = t * d;
    // the values do not change which addresses are touched
    let values = |k: usize| {
        (0..n)
            .map(|i| ((i * 7 + k) % 13) as f32 / 13.0 - 0.5)
            .collect::<Vec<f32>>()
    };
    let start = Start::Qkv {
        q: values(1),
        k: values(2),
        v: values(3),
    };
    let given = Inputs::new(shape, mask.clone(), start, vec![0.0; n]).tiled(TileSizes { br: tile, bc: tile });
    let inputs: &Inputs = &given.for_variant(variant);
    let plan = inputs.plan();
    let passes = attn_trace_core::engine::Passes::FORWARD;
    let registry = Registry::new(&plan, variant, passes);
    let addrs = Addresses::of_registry(&registry);
    let mut t = Tensors::new(inputs, &registry);
    let mut feed = Feed {
        cache: Cache::new(levels),
        addrs: &addrs,
        tiles,
        cancel,
        until_check: Feed::CHECK,
    };
    attn_trace_core::engine::forward(&mut feed, &mut t, variant, inputs);
    feed.cache
}

/// The sequence lengths and square tile sizes of the sweep (`attn-trace cache --sweep`, and the
/// cache-misses view of the memory traffic screen).
pub const SWEEP_LENGTHS: [usize; 5] = [64, 128, 256, 512, 1024];
pub const SWEEP_TILES: [usize; 4] = [16, 32, 64, 128];

/// Bytes of flash's tile-local working set in the forward pass with square tiles of `tile` and
/// head size `d`: `4·(br·D + 2·bc·D + br·bc + 2·br + br·D)`.
pub fn tile_bytes(tile: usize, d: usize) -> u64 {
    TileSizes { br: tile, bc: tile }.forward_floats(d) as u64 * ELEMENT
}

/// The smallest of `levels` that holds `bytes` (its index), if one does.
pub fn smallest_fit(bytes: u64, levels: &[LevelSpec]) -> Option<usize> {
    levels.iter().position(|l| bytes <= l.size)
}

impl CacheSweep {
    /// A sweep's table from its rows (`rows` per `T`, each with a cell per tile size of
    /// `tiles`); the tile bytes follow from `tiles` and `d`.
    pub fn new(
        d: usize,
        mask: &Mask,
        levels: &[LevelSpec],
        tile_mode: Tiles,
        tiles: &[usize],
        rows: Vec<SweepRow>,
    ) -> Self {
        CacheSweep {
            d,
            mask: mask.clone(),
            levels: levels.to_vec(),
            tile_mode,
            tiles: tiles.to_vec(),
            tile_bytes: tiles.iter().map(|&b| tile_bytes(b, d)).collect(),
            rows,
        }
    }

    /// Per tile size, the smallest level its working set fits in ([`smallest_fit`]).
    pub fn fits(&self) -> Vec<Option<usize>> {
        self.tile_bytes.iter().map(|&b| smallest_fit(b, &self.levels)).collect()
    }

    /// One sentence per level on flash's tiles: which tile sizes outgrow it (their tile-local
    /// accesses start to miss there; past the last level they go to memory), or that every tile
    /// fits. What `cache --sweep` prints under its tables and the TUI's view shows under its plot.
    pub fn fit_notes(&self) -> Vec<String> {
        let last = self.levels.len().saturating_sub(1);
        self.levels
            .iter()
            .enumerate()
            .map(|(k, l)| {
                let outgrow: Vec<String> = self
                    .tiles
                    .iter()
                    .zip(&self.tile_bytes)
                    .filter(|&(_, &b)| b > l.size)
                    .map(|(t, _)| t.to_string())
                    .collect();
                let (level, size) = (l.name.as_str(), size_text(l.size));
                let tiles = outgrow.join(", ");
                if outgrow.is_empty() {
                    tr!("every tile fits in {level} ({size})", level, size)
                } else if k == last {
                    tr!(
                        "flash {tiles}: the tile outgrows {level} ({size}), tile-local accesses start to go to memory",
                        tiles,
                        level,
                        size
                    )
                } else {
                    tr!(
                        "flash {tiles}: the tile outgrows {level} ({size}), tile-local accesses start to miss there",
                        tiles,
                        level,
                        size
                    )
                }
            })
            .collect()
    }
}

/// The sweep: for each `t` of `lengths`, the plain MHA kernel and flash with each square tile
/// of `tile_sizes`, one head of size `d`, forward, through caches of `levels`. Runs in parallel.
pub fn sweep(
    lengths: &[usize],
    tile_sizes: &[usize],
    d: usize,
    mask: &Mask,
    levels: &[LevelSpec],
    tiles: Tiles,
) -> CacheSweep {
    sweep_counted(lengths, tile_sizes, d, mask, levels, tiles, &Progress::default())
}

/// [`sweep`], counting the runs finished (one kernel at one `T`) in `progress`. Once it is
/// cancelled, runs not started are skipped (their cells are empty) and those under way stop
/// simulating: a cancelled sweep's numbers are not to be shown.
pub fn sweep_counted(
    lengths: &[usize],
    tile_sizes: &[usize],
    d: usize,
    mask: &Mask,
    levels: &[LevelSpec],
    tiles: Tiles,
    progress: &Progress,
) -> CacheSweep {
    use rayon::prelude::*;
    let empty = || SweepCell {
        misses: Vec::new(),
        memory_bytes: 0,
    };
    let cell = |c: &Cache| SweepCell {
        misses: (0..c.specs.len()).map(|k| c.level(k).misses).collect(),
        memory_bytes: c.memory_read + c.memory_written,
    };
    // every (t, kernel) pair on its own, the largest first so the cores finish together
    let mut jobs: Vec<(usize, Option<usize>)> = Vec::new();
    for &t in lengths {
        jobs.push((t, None));
        for &tile in tile_sizes {
            jobs.push((t, Some(tile)));
        }
    }
    jobs.sort_by_key(|&(t, _)| std::cmp::Reverse(t));
    let done: Vec<((usize, Option<usize>), SweepCell)> = jobs
        .par_iter()
        .map(|&(t, tile)| {
            if progress.cancelled() {
                return ((t, tile), empty());
            }
            let c = match tile {
                None => one_head_until(Variant::Mha, t, d, 1, mask, levels, tiles, progress.flag()),
                Some(b) => one_head_until(Variant::Flash, t, d, b, mask, levels, tiles, progress.flag()),
            };
            progress.add(1);
            ((t, tile), cell(&c))
        })
        .collect();
    let find = |key: (usize, Option<usize>)| {
        done.iter()
            .find(|(k, _)| *k == key)
            .map_or_else(empty, |(_, c)| c.clone())
    };
    let rows = lengths
        .iter()
        .map(|&t| SweepRow {
            t,
            naive: find((t, None)),
            flash: tile_sizes.iter().map(|&b| find((t, Some(b)))).collect(),
        })
        .collect();
    CacheSweep::new(d, mask, levels, tiles, tile_sizes, rows)
}

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
