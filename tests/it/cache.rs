//! The cache model (`analysis::cache`, `attn-trace cache`) against a plain reference model
//! written here on its own (its own placement of the buffers, its own LRU lists), on every
//! shipped scenario; small cases worked by hand; and the `din` export replayed through the
//! reference giving `cache`'s counts.

use crate::support::cli::{cmd, stdout_of};
use crate::support::root;
use attn_trace_analysis::cache::{self, Cache, Counts, LevelSpec, Tiles};
use attn_trace_core::scenario::Scenario;
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::{Buf, Op, Pass, Trace};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One level of the reference: per set, its lines least recently used first, with a dirty bit.
struct RefLevel {
    line: u64,
    sets: u64,
    ways: usize,
    lru: Vec<Vec<(u64, bool)>>,
    counts: [u64; 4],
}

/// The reference hierarchy: levels, and bytes read from and written to memory.
struct Reference {
    levels: Vec<RefLevel>,
    read: u64,
    written: u64,
}

impl Reference {
    fn new(specs: &[(u64, u64, u64)]) -> Reference {
        Reference {
            levels: specs
                .iter()
                .map(|&(size, line, ways)| {
                    let sets = size / line / ways;
                    RefLevel {
                        line,
                        sets,
                        ways: ways as usize,
                        lru: vec![Vec::new(); sets as usize],
                        counts: [0; 4],
                    }
                })
                .collect(),
            read: 0,
            written: 0,
        }
    }

    /// Returns the level that held the line (the number of levels for memory).
    fn access(&mut self, k: usize, addr: u64, write: bool) -> usize {
        let last = k + 1 == self.levels.len();
        let lv = &mut self.levels[k];
        let line_no = addr / lv.line;
        let set = &mut lv.lru[(line_no % lv.sets) as usize];
        lv.counts[0] += 1;
        if let Some(pos) = set.iter().position(|e| e.0 == line_no) {
            let (n, dirty) = set.remove(pos);
            set.push((n, dirty || write));
            lv.counts[1] += 1;
            return k;
        }
        lv.counts[2] += 1;
        let victim = if set.len() == lv.ways {
            Some(set.remove(0))
        } else {
            None
        };
        set.push((line_no, write));
        let line = lv.line;
        let served = if last {
            self.read += line;
            k + 1
        } else {
            self.access(k + 1, line_no * line, false)
        };
        if let Some((v, true)) = victim {
            self.levels[k].counts[3] += 1;
            if last {
                self.written += line;
            } else {
                self.access(k + 1, v * line, true);
            }
        }
        served
    }

    fn counts(&self) -> Vec<[u64; 4]> {
        self.levels.iter().map(|l| l.counts).collect()
    }
}

fn as_array(c: &Counts) -> [u64; 4] {
    [c.accesses, c.hits, c.misses, c.writebacks]
}

/// The reference's own placement: one allocation per buffer in registry order, each at the next
/// multiple of 64 bytes; tile-local buffers from 2^40.
fn placement(trace: &Trace) -> BTreeMap<Buf, (u64, bool)> {
    let mut next = [0u64, 1 << 40];
    let mut out = BTreeMap::new();
    for &b in Buf::ALL {
        if let Some(info) = trace.buffer(b) {
            let tile = info.spec.level == Level::Tile;
            let space = usize::from(tile);
            out.insert(b, (next[space], tile));
            next[space] = (next[space] + 4 * info.len() as u64).div_ceil(64) * 64;
        }
    }
    out
}

/// Every pass of `trace` through the reference: per pass, the counts per level and memory bytes.
fn reference_runs(trace: &Trace, specs: &[(u64, u64, u64)], tiles: Tiles) -> Vec<(Pass, Vec<[u64; 4]>, u64, u64)> {
    let places = placement(trace);
    let mut out = Vec::new();
    let mut current: Option<(Pass, Reference)> = None;
    for n in 0..trace.len() {
        let pass = trace.phase_at(n).pass();
        if current.as_ref().is_none_or(|(p, _)| *p != pass) {
            if let Some((p, r)) = current.take() {
                out.push((p, r.counts(), r.read, r.written));
            }
            current = Some((pass, Reference::new(specs)));
        }
        let e = &trace.events[n];
        let (base, tile) = places[&e.buf];
        if tile && tiles == Tiles::Bypass {
            continue;
        }
        let r = &mut current.as_mut().unwrap().1;
        r.access(0, base + 4 * u64::from(e.offset), e.op == Op::Write);
    }
    if let Some((p, r)) = current {
        out.push((p, r.counts(), r.read, r.written));
    }
    out
}

fn specs_of(levels: &[LevelSpec]) -> Vec<(u64, u64, u64)> {
    levels.iter().map(|l| (l.size, l.line, l.ways)).collect()
}

fn shipped() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn simulator_agrees_with_the_reference_on_every_shipped_scenario() {
    // small caches, so that every scenario evicts; sets a power of two and not (a division)
    let configs = ["L1=1K/64/2,L2=4K/64/4", "L1=960/32/3,L2=3K/64/6", "L1=256/16/1"];
    let mut checked = 0;
    for path in shipped() {
        let scenario = Scenario::load(&path).unwrap();
        for &variant in &scenario.variants {
            let run = scenario.run(variant, true);
            let trace = run.trace.as_ref().unwrap();
            for config in configs {
                let levels = cache::parse_levels(config).unwrap();
                for tiles in Tiles::ALL {
                    let ours = cache::simulate(trace, variant, &levels, tiles, |_, _| {});
                    let theirs = reference_runs(trace, &specs_of(&levels), tiles);
                    assert_eq!(ours.len(), theirs.len(), "{path:?} {variant:?}");
                    for (o, (pass, counts, read, written)) in ours.iter().zip(&theirs) {
                        let what = format!(
                            "{} {} {} {config} {tiles:?}",
                            path.display(),
                            variant.name(),
                            pass.name()
                        );
                        assert_eq!(o.pass, *pass, "{what}");
                        let mine: Vec<[u64; 4]> = o.levels.iter().map(|l| as_array(&l.counts)).collect();
                        assert_eq!(&mine, counts, "{what}");
                        assert_eq!(
                            (o.memory.read_bytes, o.memory.written_bytes),
                            (*read, *written),
                            "{what}"
                        );
                        // the buffers' and the phases' counts add up to the level's
                        for (k, l) in o.levels.iter().enumerate() {
                            let by_buf: u64 = o.buffers.iter().map(|b| b.levels[k].counts.accesses).sum();
                            let by_phase: u64 = o.phases.iter().map(|p| p.levels[k].counts.misses).sum();
                            assert_eq!(by_buf, l.counts.accesses, "{what}");
                            assert_eq!(by_phase, l.counts.misses, "{what}");
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} runs checked");
}

/// Ten accesses through one level of 2 sets of 2 lines of 16 bytes, worked by hand (the set of
/// an address is its line number mod 2):
///
/// | # | access | line, set | result | set after (most recent first) |
/// |---|---|---|---|---|
/// | 1 | read 0 | 0, 0 | miss | 0 |
/// | 2 | read 4 | 0, 0 | hit | 0 |
/// | 3 | write 16 | 1, 1 | miss | 1* |
/// | 4 | read 32 | 2, 0 | miss | 2 0 |
/// | 5 | read 64 | 4, 0 | miss, evicts 0 (clean) | 4 2 |
/// | 6 | read 0 | 0, 0 | miss, evicts 2 | 0 4 |
/// | 7 | write 48 | 3, 1 | miss | 3* 1* |
/// | 8 | read 80 | 5, 1 | miss, evicts 1*: write-back | 5 3* |
/// | 9 | write 20 | 1, 1 | miss, evicts 3*: write-back | 1* 5 |
/// | 10 | read 4 | 0, 0 | hit | 0 4 |
#[test]
fn one_level_by_hand() {
    let levels = cache::parse_levels("L1=64/16/2").unwrap();
    let mut c = Cache::new(&levels);
    let accesses = [
        (0, false),
        (4, false),
        (16, true),
        (32, false),
        (64, false),
        (0, false),
        (48, true),
        (80, false),
        (20, true),
        (4, false),
    ];
    let served: Vec<u8> = accesses.iter().map(|&(a, w)| c.access(a, w, Buf::Q)).collect();
    // 0: an L1 hit, 1: from memory
    assert_eq!(served, [1, 0, 1, 1, 1, 1, 1, 1, 1, 0]);
    assert_eq!(
        c.level(0),
        Counts {
            accesses: 10,
            hits: 2,
            misses: 8,
            writebacks: 2
        }
    );
    assert_eq!((c.memory_read, c.memory_written), (8 * 16, 2 * 16));
}

/// Two levels: L1 direct-mapped, 2 lines of 16 bytes; L2 4 sets of 2 lines of 16 bytes.
///
/// 1. write 0: L1 miss (line 0, set 0); L2 read of line 0 misses: memory.
/// 2. read 32: L1 miss (line 2 evicts dirty 0): L2 reads line 2 (miss, memory), then takes the
///    write-back of line 0 (a hit, now dirty in L2).
/// 3. read 0: L1 miss (evicts clean 2); L2 hit.
/// 4. read 128: L1 miss; L2 line 8, set 0 (with 0): miss, memory.
/// 5. read 256: L1 miss; L2 line 16, set 0 full: evicts dirty 0, written to memory.
#[test]
fn two_levels_by_hand() {
    let levels = cache::parse_levels("L1=32/16/1,L2=128/16/2").unwrap();
    let mut c = Cache::new(&levels);
    let served: Vec<u8> = [(0, true), (32, false), (0, false), (128, false), (256, false)]
        .iter()
        .map(|&(a, w)| c.access(a, w, Buf::K))
        .collect();
    assert_eq!(served, [2, 2, 1, 2, 2]);
    assert_eq!(
        c.level(0),
        Counts {
            accesses: 5,
            hits: 0,
            misses: 5,
            writebacks: 1
        }
    );
    assert_eq!(
        c.level(1),
        Counts {
            accesses: 6,
            hits: 2,
            misses: 4,
            writebacks: 1
        }
    );
    assert_eq!((c.memory_read, c.memory_written), (4 * 16, 16));
}

#[test]
fn buffers_are_placed_in_registry_order_64_byte_aligned() {
    let s = Scenario::load(&root().join("scenarios/flash.toml")).unwrap();
    let run = s.run(attn_trace_core::kernels::Variant::Flash, true);
    let trace = run.trace.as_ref().unwrap();
    let a = cache::Addresses::of_trace(trace);
    let places = placement(trace);
    for (&b, &(base, _)) in &places {
        assert_eq!(a.base(b), Some(base), "{}", b.name());
        assert_eq!(base % 64, 0);
        assert_eq!(a.address(b, 3), base + 12);
    }
    assert!(places.values().any(|&(_, tile)| tile));
    assert_eq!(cache::Addresses::of_registry(&run.registry), a);
}

#[derive(serde::Deserialize)]
struct Doc {
    levels: Vec<LevelSpec>,
    runs: Vec<RunDoc>,
}

#[derive(serde::Deserialize)]
struct RunDoc {
    variant: String,
    pass: String,
    levels: Vec<LevelDoc>,
    memory: MemoryDoc,
}

#[derive(serde::Deserialize)]
struct LevelDoc {
    name: String,
    accesses: u64,
    hits: u64,
    misses: u64,
    writebacks: u64,
}

#[derive(serde::Deserialize)]
struct MemoryDoc {
    read_bytes: u64,
    written_bytes: u64,
}

/// A `din` file through the reference, as a course's cache simulator would replay it.
fn replay_din(text: &str, specs: &[(u64, u64, u64)]) -> Reference {
    let mut r = Reference::new(specs);
    for line in text.lines() {
        let (op, addr) = line.split_once(' ').unwrap();
        let addr = u64::from_str_radix(addr, 16).unwrap();
        r.access(0, addr, op == "1");
    }
    r
}

#[test]
fn din_replayed_through_the_reference_gives_the_counts_of_cache() {
    let levels = "L1=2K/64/4,L2=8K/64/8";
    let specs = specs_of(&cache::parse_levels(levels).unwrap());
    for (scenario, tiles, level_filter) in [
        ("scenarios/flash.toml", "include", None),
        ("scenarios/flash.toml", "bypass", Some("global")),
        ("scenarios/mha_walkthrough.toml", "include", None),
    ] {
        let path = root().join(scenario);
        let path = path.to_str().unwrap();
        let doc: Doc = serde_json::from_str(&stdout_of(&[
            "cache", path, "--levels", levels, "--tiles", tiles, "--json",
        ]))
        .unwrap();
        assert_eq!(doc.levels.len(), 2);
        assert_eq!(
            (doc.levels[0].size, doc.levels[0].line, doc.levels[0].ways),
            (2048, 64, 4)
        );
        for run in &doc.runs {
            let mut args = vec![
                "trace",
                path,
                "--variant",
                &run.variant,
                "--pass",
                &run.pass,
                "--format",
                "din",
            ];
            if let Some(l) = level_filter {
                args.extend(["--level", l]);
            }
            let din = stdout_of(&args);
            let r = replay_din(&din, &specs);
            let what = format!("{scenario} {} {} {tiles}", run.variant, run.pass);
            for (k, l) in run.levels.iter().enumerate() {
                assert_eq!(l.name, format!("L{}", k + 1));
                assert_eq!(
                    [l.accesses, l.hits, l.misses, l.writebacks],
                    r.levels[k].counts,
                    "{what} {}",
                    l.name
                );
            }
            assert_eq!(
                (run.memory.read_bytes, run.memory.written_bytes),
                (r.read, r.written),
                "{what}"
            );
            // lackey: the same accesses at the same addresses
            let lackey = stdout_of(&[
                "trace",
                path,
                "--variant",
                &run.variant,
                "--pass",
                &run.pass,
                "--format",
                "lackey",
            ]);
            if level_filter.is_none() {
                let from_lackey: Vec<(bool, u64)> = lackey
                    .lines()
                    .map(|l| {
                        let (op, rest) = l.trim_start().split_once(' ').unwrap();
                        let (addr, size) = rest.split_once(',').unwrap();
                        assert_eq!(size, "4");
                        assert!(addr.len() >= 8);
                        (op == "S", u64::from_str_radix(addr, 16).unwrap())
                    })
                    .collect();
                let from_din: Vec<(bool, u64)> = din
                    .lines()
                    .map(|l| {
                        let (op, addr) = l.split_once(' ').unwrap();
                        (op == "1", u64::from_str_radix(addr, 16).unwrap())
                    })
                    .collect();
                assert_eq!(from_lackey, from_din, "{what}");
            }
        }
    }
}

#[test]
fn din_and_lackey_lines_look_as_documented() {
    let path = root().join("scenarios/mha_walkthrough.toml");
    let path = path.to_str().unwrap();
    let din = stdout_of(&[
        "trace",
        path,
        "--variant",
        "mha",
        "--phase",
        "scores",
        "--format",
        "din",
    ]);
    let lackey = stdout_of(&[
        "trace",
        path,
        "--variant",
        "mha",
        "--phase",
        "scores",
        "--format",
        "lackey",
    ]);
    let d: Vec<&str> = din.lines().take(3).collect();
    let l: Vec<&str> = lackey.lines().take(3).collect();
    // scores reads q and k (placed after x, w_qkv, b_qkv), then writes the score
    assert!(d.iter().all(|x| x.starts_with("0 ") || x.starts_with("1 ")), "{d:?}");
    assert!(l.iter().all(|x| x.starts_with(" L ") || x.starts_with(" S ")), "{l:?}");
    assert_eq!(din.lines().count(), lackey.lines().count());
}

#[test]
fn cache_text_names_the_levels_and_compares_the_variants() {
    let path = root().join("scenarios/flash.toml");
    let out = stdout_of(&[
        "cache",
        path.to_str().unwrap(),
        "--levels",
        "L1=1K/64/2,L2=8K/64/8",
        "--no-color",
    ]);
    assert!(
        out.contains(
            "caches: L1 1 KiB, 64-byte lines, 2-way (8 sets); L2 8 KiB, 64-byte lines, 8-way (16 sets) (--levels)"
        ),
        "{out}"
    );
    assert!(out.contains("memory bytes read + written, forward: "), "{out}");
    assert!(out.contains("write-backs"), "{out}");
}

#[test]
fn bad_levels_are_one_line_and_exit_2() {
    let path = root().join("scenarios/flash.toml");
    for (levels, says) in [
        ("L1=33000/64/8", "whole number of sets"),
        ("L1=32K/48/8", "power of two"),
        ("L1=32K/64", "SIZE/LINE/WAYS"),
        ("L1=32K/64/8,L1=64K/64/8", "given twice"),
        ("32K/64/8", "NAME=SIZE/LINE/WAYS"),
    ] {
        let out = cmd()
            .args(["cache", path.to_str().unwrap(), "--levels", levels])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{levels}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{levels}: {err}");
    }
}

/// Where the reference serves each event of `trace` (one pass after the other, each from empty
/// caches): the level that held the line, the number of levels for memory, `None` for a
/// tile-local access that bypassed the caches.
fn reference_served(trace: &Trace, specs: &[(u64, u64, u64)], tiles: Tiles) -> Vec<Option<usize>> {
    let places = placement(trace);
    let mut out = Vec::new();
    let mut current: Option<(Pass, Reference)> = None;
    for n in 0..trace.len() {
        let pass = trace.phase_at(n).pass();
        if current.as_ref().is_none_or(|(p, _)| *p != pass) {
            current = Some((pass, Reference::new(specs)));
        }
        let e = &trace.events[n];
        let (base, tile) = places[&e.buf];
        if tile && tiles == Tiles::Bypass {
            out.push(None);
            continue;
        }
        let r = &mut current.as_mut().unwrap().1;
        out.push(Some(r.access(0, base + 4 * u64::from(e.offset), e.op == Op::Write)));
    }
    out
}

/// The memory panel's top border, after its title: the cache note, without the corner.
fn cache_note(screen: &[String]) -> Option<String> {
    let row = screen
        .iter()
        .find(|r| r.contains("─ Memory ") || r.contains("┌ Memory "))?;
    let after = &row[row.find(" Memory ")? + " Memory ".len()..];
    let note = after.trim_start_matches('─').split('┐').next()?.trim_end_matches('─');
    Some(note.trim().to_string())
}

#[test]
fn the_tracer_shows_where_each_access_was_served_and_its_line() {
    use crate::support::tui::{goto, key, screen_lines};
    use attn_trace::tui::{App, Theme, TracedScenario};
    use crossterm::event::KeyCode;

    let (levels, _) = cache::default_levels();
    let specs = specs_of(&levels);
    let (w, h) = (120u16, 40u16);
    // the built-in walkthrough (MHA, both passes) and flash's tiles (a tile-local space of its own)
    let scenarios_traced = [
        TracedScenario::builtin(),
        TracedScenario::from_scenario(&Scenario::shipped("flash").unwrap()),
    ];
    let mut full_forms = 0;
    for traced in scenarios_traced {
        let traced = Arc::new(traced);
        let mut a = App::new(Arc::clone(&traced), Theme::MONO, w, h);
        key(&mut a, KeyCode::Char('m'));
        let shown = screen_lines(&a, w, h).join("\n");
        let named: Vec<String> = levels.iter().map(LevelSpec::short).collect();
        assert!(
            shown.contains(&named.join(", ")),
            "the status names the levels: {shown}"
        );
        // the tracer opens on the scenario's first variant
        let trace = traced.trace(traced.first_variant().unwrap()).unwrap();
        let served = reference_served(trace, &specs, Tiles::Include);
        let places = placement(trace);
        key(&mut a, KeyCode::Home);
        // every event of the walkthrough; flash's log is longer: every 37th
        let stride = if trace.len() > 3000 { 37 } else { 1 };
        let mut n = 0;
        while n < trace.len() {
            goto(&mut a, &format!("#{n}"));
            let e = &trace.events[n];
            let (base, _) = places[&e.buf];
            let addr = base + 4 * u64::from(e.offset);
            let line = addr / 64 * 64;
            let len = trace.buffer(e.buf).unwrap().len() as u64;
            let first = (line - base) / 4;
            let last = ((line + 64 - base) / 4).min(len) - 1;
            let name = e.buf.name();
            let cells = if last > first {
                format!("{name}[{first}..={last}]")
            } else {
                format!("{name}[{first}]")
            };
            let k = served[n].unwrap();
            let mut parts: Vec<String> = (0..k.min(levels.len()))
                .map(|j| format!("{} miss", levels[j].name))
                .collect();
            if k < levels.len() {
                parts.push(format!("{} hit", levels[k].name));
            } else {
                parts.push("from memory".into());
            }
            let served_text = parts.join(" · ");
            let forms = [
                format!("{served_text} · line {line:#x}–{:#x} = {cells}", line + 63),
                format!("{served_text} · {cells}"),
                served_text.clone(),
            ];
            let note = cache_note(&screen_lines(&a, w, h)).unwrap_or_default();
            assert!(
                forms.contains(&note),
                "event {n}: the panel says '{note}', the log gives {forms:?}"
            );
            full_forms += usize::from(note == forms[0]);
            n += stride;
        }
        // the timeline: each column's bar is as high as its share of L1 misses
        key(&mut a, KeyCode::Home);
        let cursor = 0;
        let selected = (trace.events[cursor].buf, trace.events[cursor].offset);
        let row = &screen_lines(&a, w, h)[h as usize - 2];
        let symbols: Vec<String> = row.chars().map(String::from).collect();
        let len = trace.len();
        let mut bars = 0;
        for (x, symbol) in symbols.iter().enumerate().take(w as usize) {
            let events: Vec<usize> = (0..len).filter(|&n| n * w as usize / len == x).collect();
            let ticked = events
                .iter()
                .any(|&n| n == cursor || (trace.events[n].buf, trace.events[n].offset) == selected);
            if events.is_empty() || ticked {
                continue;
            }
            let missed = events.iter().filter(|&&n| served[n].unwrap() > 0).count();
            let expected = if missed == 0 {
                None
            } else {
                Some(["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"][(missed * 8).div_ceil(events.len()) - 1])
            };
            let is_bar = "▁▂▃▄▅▆▇█".contains(symbol.as_str());
            match expected {
                Some(bar) => assert_eq!(symbol, bar, "column {x}: {missed} of {} missed", events.len()),
                None => assert!(!is_bar, "column {x} has no miss but shows {symbol}"),
            }
            bars += usize::from(expected.is_some());
        }
        assert!(bars > 0, "some column shows misses");
        // m again hides it all
        key(&mut a, KeyCode::Char('m'));
        assert_eq!(cache_note(&screen_lines(&a, w, h)).unwrap_or_default(), "");
    }
    assert!(
        full_forms > 100,
        "the line's addresses are shown where there is room ({full_forms})"
    );
}
