//! `attn-trace cache SCENARIO`: every access of each pass through set-associative LRU caches
//! (this machine's L1d and L2 by default): hits, misses and write-backs per level, buffer and
//! phase, and the bytes moved to and from memory. `attn-trace cache --sweep`: misses of the plain
//! MHA kernel against flash as T and the tile size grow.

use super::{CliError, Style, escape_controls, paint, quiet_pipe};
use attn_trace_analysis::cache::{self, CacheSweep, Counts, LevelSpec, PassCache, SWEEP_LENGTHS, SWEEP_TILES, Tiles};
use attn_trace_analysis::format::thousands;
use attn_trace_core::kernels::Mask;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Run every access through a model of set-associative LRU caches: hits, misses, write-backs.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The model (docs/caches.md): buffers are placed one after another in registry order, each at a
multiple of 64 bytes (global from address 0, tile-local ones from 0x10000000000); an access is
4 bytes at base + 4·offset. Every access looks up its line in L1; a miss brings the line in
(write-allocate), evicting the least recently used line of its set, written back to the next
level if dirty; the next level sees each miss as a read of the line, then each write-back as a
write of it. Below the last level is memory. Every pass starts with empty caches; lines still
dirty at the end are not flushed.

Defaults: this machine's L1 data cache and L2 as /sys/devices/system/cpu/cpu0/cache reports
them, else L1=32K/64/8,L2=512K/64/8; the header says which.

The JSON is {\"levels\": [{\"name\", \"size\", \"line\", \"ways\"}], \"tiles\", \"runs\": [{\"variant\",
\"pass\", \"levels\": [{\"name\", \"accesses\", \"hits\", \"misses\", \"writebacks\"}], \"bypassed\",
\"memory\": {\"read_bytes\", \"written_bytes\"}, \"buffers\": [{\"name\", \"level\", \"address\",
\"bytes\", \"levels\": […]}], \"phases\": [{\"name\", \"levels\": […]}]}]}.

--sweep needs no scenario: one head of size --head-dim, the forward pass, T = 64 … 1024, the
plain MHA kernel against flash with square tiles of 16, 32, 64 and 128, run through the caches
(about half a minute on one core up to T = 1024; --max-t 512 takes a quarter of that).

Examples:
  attn-trace cache scenarios/flash.toml
  attn-trace cache scenarios/flash.toml --levels L1=4K/64/4,L2=64K/64/8 --tiles bypass
  attn-trace cache scenarios/flash.toml --json | jq '.runs[] | {variant, pass, memory}'
  attn-trace cache --sweep")]
pub(crate) struct Args {
    /// Scenario file (.toml).
    #[arg(value_name = "SCENARIO", required_unless_present = "sweep")]
    pub scenario: Option<PathBuf>,
    /// The cache levels, NAME=SIZE/LINE/WAYS separated by commas [default: this machine's L1d and L2].
    #[arg(long, value_name = "LEVELS", value_parser = levels_arg)]
    pub levels: Option<Levels>,
    /// Tile-local buffers (flash's working set) go through the caches (include, a CPU) or past
    /// them (bypass, as a GPU's shared memory).
    #[arg(long, value_name = "MODE", value_parser = tiles_arg(), default_value = "include")]
    pub tiles: Tiles,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Vary T and the tile size instead of reading a scenario.
    #[arg(long, conflicts_with = "scenario")]
    pub sweep: bool,
    /// With --sweep: the head size D [default: 64].
    #[arg(long, value_name = "D", value_parser = head_dim)]
    pub head_dim: Option<usize>,
    /// With --sweep: the mask, none or causal [default: none].
    #[arg(long, value_name = "MASK", value_parser = super::io::mask_name)]
    pub mask: Option<String>,
    /// With --sweep: the largest T, one of 64, 128, 256, 512, 1024 [default: 1024].
    #[arg(long, value_name = "T", value_parser = max_t)]
    pub max_t: Option<usize>,
}

fn max_t(s: &str) -> Result<usize, String> {
    let t: usize = super::whole(s)?;
    if SWEEP_LENGTHS.contains(&t) {
        Ok(t)
    } else {
        Err(tr!("expected one of 64, 128, 256, 512, 1024, found {t}", t))
    }
}

/// The levels of `--levels` (one value, not a list of values to clap).
#[derive(Clone, Debug)]
pub(crate) struct Levels(pub Vec<LevelSpec>);

fn levels_arg(s: &str) -> Result<Levels, String> {
    cache::parse_levels(s).map(Levels)
}

fn tiles_arg() -> impl clap::builder::TypedValueParser<Value = Tiles> {
    super::names_parser(&Tiles::ALL, Tiles::name)
}

fn head_dim(s: &str) -> Result<usize, String> {
    let d: usize = super::whole(s)?;
    if (1..=256).contains(&d) {
        Ok(d)
    } else {
        Err(tr!("expected a head size from 1 to 256, found {d}", d))
    }
}

#[derive(Serialize)]
struct Document<'a> {
    title: &'a str,
    levels: &'a [LevelSpec],
    tiles: Tiles,
    runs: &'a [PassCache],
}

/// The levels asked for, or the defaults and a line saying where they come from.
pub(crate) fn chosen_levels(given: Option<Levels>) -> (Vec<LevelSpec>, String) {
    match given {
        Some(Levels(l)) => (l, "--levels".to_string()),
        None => match cache::default_levels() {
            (l, true) => (l, format!("this machine's, from {}", cache::SYS_CACHE)),
            (l, false) => (
                l,
                format!("defaults ({}): the OS reports no caches", cache::DEFAULT_LEVELS),
            ),
        },
    }
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let (levels, source) = chosen_levels(args.levels.clone());
    if args.sweep {
        let mask = args.mask.as_deref().and_then(Mask::from_name).unwrap_or(Mask::None);
        let lengths: Vec<usize> = SWEEP_LENGTHS
            .into_iter()
            .filter(|&t| t <= args.max_t.unwrap_or(1024))
            .collect();
        let s = cache::sweep(
            &lengths,
            &SWEEP_TILES,
            args.head_dim.unwrap_or(64),
            &mask,
            &levels,
            args.tiles,
        );
        if args.json {
            if let Err(e) = serde_json::to_writer(&mut out, &s) {
                return quiet_pipe(Err(e.into()));
            }
            quiet_pipe(writeln!(out))?;
        } else {
            quiet_pipe(sweep_table(&mut out, &s, &source))?;
        }
        return quiet_pipe(out.flush());
    }
    let Some(path) = args.scenario else {
        return Err(CliError::Input(tr!("a SCENARIO (or --sweep) is required").to_string()));
    };
    if let Some(flag) = [
        ("--head-dim", args.head_dim.is_some()),
        ("--mask", args.mask.is_some()),
        ("--max-t", args.max_t.is_some()),
    ]
    .into_iter()
    .find_map(|(f, given)| given.then_some(f))
    {
        return Err(CliError::Input(tr!(
            "{flag} belongs to --sweep; a scenario sets its own sizes and mask",
            flag
        )));
    }
    let scenario = super::load(&path)?;
    // one variant at a time: only its counts outlive its trace
    let runs: Vec<PassCache> = scenario
        .variants
        .iter()
        .flat_map(|&v| {
            let run = scenario.run(v, true);
            run.trace
                .as_ref()
                .map(|t| cache::simulate(t, v, &levels, args.tiles, |_, _| {}))
                .unwrap_or_default()
        })
        .collect();
    if args.json {
        let doc = Document {
            title: &scenario.title,
            levels: &levels,
            tiles: args.tiles,
            runs: &runs,
        };
        if let Err(e) = serde_json::to_writer(&mut out, &doc) {
            return quiet_pipe(Err(e.into()));
        }
        quiet_pipe(writeln!(out))?;
    } else {
        quiet_pipe(tables(&mut out, &scenario, &levels, &source, args.tiles, &runs))?;
    }
    quiet_pipe(out.flush())
}

fn rate(c: &Counts) -> String {
    if c.accesses == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", 100.0 * c.hit_rate())
    }
}

/// Per variant and pass: the levels, the bytes to and from memory, the buffers and the phases;
/// then memory bytes of each variant side by side.
fn tables(
    out: &mut dyn Write,
    s: &Scenario,
    levels: &[LevelSpec],
    source: &str,
    tiles: Tiles,
    runs: &[PassCache],
) -> std::io::Result<()> {
    let sh = s.shape;
    writeln!(out, "{}", paint(&escape_controls(&s.title), Style::Heading))?;
    let queries = if s.cross { format!("S={} ", sh.s) } else { String::new() };
    writeln!(
        out,
        "B={} {queries}T={} C={} H={} (D={}), {} mask; every access of each pass, caches empty at its start",
        sh.b,
        sh.t,
        sh.c,
        sh.h,
        sh.d(),
        s.mask.name()
    )?;
    let geometry: Vec<String> = levels.iter().map(LevelSpec::describe).collect();
    writeln!(out, "caches: {} ({source})", geometry.join("; "))?;
    writeln!(
        out,
        "tile-local buffers: {}; addresses: one allocation per buffer in registry order, 64-byte aligned",
        match tiles {
            Tiles::Include => "through the caches (--tiles bypass: past them, as a GPU's shared memory)",
            Tiles::Bypass => "past the caches (as a GPU's shared memory)",
        }
    )?;
    for p in runs {
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            paint(&format!("{} · {}", p.variant, p.pass.name()), Style::Heading)
        )?;
        writeln!(
            out,
            "  {:<8} {:>13} {:>13} {:>13} {:>12} {:>8}",
            "level", "accesses", "hits", "misses", "write-backs", "hit rate"
        )?;
        for l in &p.levels {
            let c = &l.counts;
            writeln!(
                out,
                "  {:<8} {:>13} {:>13} {:>13} {:>12} {:>8}",
                l.name,
                thousands(c.accesses),
                thousands(c.hits),
                thousands(c.misses),
                thousands(c.writebacks),
                rate(c)
            )?;
        }
        let line = levels.last().map_or(0, |l| l.line);
        writeln!(
            out,
            "  memory: {} bytes read ({} lines of {line}), {} bytes written{}",
            thousands(p.memory.read_bytes),
            thousands(p.memory.read_bytes / line.max(1)),
            thousands(p.memory.written_bytes),
            if p.bypassed > 0 {
                format!("; {} tile-local accesses bypassed the caches", thousands(p.bypassed))
            } else {
                String::new()
            }
        )?;
        // per buffer: where it lies, and its misses at each level
        write!(
            out,
            "  {:<10} {:<7} {:>14} {:>10}",
            "buffer", "level", "address", "bytes"
        )?;
        for l in levels {
            write!(
                out,
                " {:>11} {:>11}",
                format!("{} misses", l.name),
                format!("{} wb", l.name)
            )?;
        }
        writeln!(out)?;
        for b in &p.buffers {
            write!(
                out,
                "  {:<10} {:<7} {:>14} {:>10}",
                b.buf.name(),
                b.level.name(),
                format!("{:#x}", b.address),
                thousands(b.bytes)
            )?;
            for l in &b.levels {
                write!(
                    out,
                    " {:>11} {:>11}",
                    thousands(l.counts.misses),
                    thousands(l.counts.writebacks)
                )?;
            }
            writeln!(out)?;
        }
        write!(out, "  {:<18} {:>14} {:>10}", "phase", "", "L1 acc")?;
        for l in levels {
            write!(
                out,
                " {:>11} {:>11}",
                format!("{} misses", l.name),
                format!("{} wb", l.name)
            )?;
        }
        writeln!(out)?;
        for ph in &p.phases {
            let acc = ph.levels.first().map_or(0, |l| l.counts.accesses);
            write!(out, "  {:<18} {:>14} {:>10}", ph.phase.name(), "", thousands(acc))?;
            for l in &ph.levels {
                write!(
                    out,
                    " {:>11} {:>11}",
                    thousands(l.counts.misses),
                    thousands(l.counts.writebacks)
                )?;
            }
            writeln!(out)?;
        }
    }
    for pass in [Pass::Forward, Pass::Backward] {
        let of: Vec<&PassCache> = runs.iter().filter(|p| p.pass == pass).collect();
        if of.len() < 2 {
            continue;
        }
        let first = of[0].memory_bytes().max(1) as f64;
        let parts: Vec<String> = of
            .iter()
            .map(|p| {
                let m = p.memory_bytes();
                format!("{} {} ({:.2}×)", p.variant, thousands(m), m as f64 / first)
            })
            .collect();
        writeln!(out)?;
        writeln!(
            out,
            "memory bytes read + written, {}: {}",
            pass.name(),
            parts.join(", ")
        )?;
    }
    Ok(())
}

/// The sweep as a table: per T, misses at the last level (and memory bytes) of naive and of
/// flash with each tile size.
fn sweep_table(out: &mut dyn Write, s: &CacheSweep, source: &str) -> std::io::Result<()> {
    let title = format!(
        "Cache misses per head, forward pass, D = {}, {}",
        s.d,
        match s.mask {
            Mask::Causal => "causal mask",
            _ => "no mask",
        }
    );
    writeln!(out, "{}", paint(&title, Style::Heading))?;
    let geometry: Vec<String> = s.levels.iter().map(LevelSpec::describe).collect();
    writeln!(
        out,
        "caches: {} ({source}); tile-local buffers: {}",
        geometry.join("; "),
        s.tile_mode.name()
    )?;
    for (k, l) in s.levels.iter().enumerate() {
        writeln!(out)?;
        writeln!(out, "{} misses", l.name)?;
        write!(out, "{:>6} {:>14}", "T", "naive")?;
        for t in &s.tiles {
            write!(out, " {:>13}", format!("flash {t}"))?;
        }
        writeln!(out)?;
        for r in &s.rows {
            write!(
                out,
                "{:>6} {:>14}",
                r.t,
                thousands(r.naive.misses.get(k).copied().unwrap_or(0))
            )?;
            for f in &r.flash {
                write!(out, " {:>13}", thousands(f.misses.get(k).copied().unwrap_or(0)))?;
            }
            writeln!(out)?;
        }
    }
    writeln!(out)?;
    write!(out, "{:>6} {:>14}", "tiles", "")?;
    for b in &s.tile_bytes {
        write!(out, " {:>13}", cache::size_text(*b))?;
    }
    writeln!(out)?;
    // where each tile size's working set stops fitting (the TUI's view says the same)
    let fits: Vec<String> = s
        .tiles
        .iter()
        .zip(s.fits())
        .map(|(t, k)| format!("{t}: {}", k.map_or("no level", |k| s.levels[k].name.as_str())))
        .collect();
    let note = format!(
        "tiles: bytes of flash's tile-local working set (4·(br·D + 2·bc·D + br·bc + 2·br + br·D)); the smallest level it fits in: {}; {}. \
Naive reads all of k and v again for every query row (T times) and writes and reads back the T×T scores and probabilities; \
flash reads k and v once per query tile (T/br times) and never stores a T×T matrix. Once k and v outgrow a level, naive \
misses on them at every query row.",
        fits.join(", "),
        s.fit_notes().join("; ")
    );
    writeln!(out, "{}", paint(&note, Style::Dim))
}
