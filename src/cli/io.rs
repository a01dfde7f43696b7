//! `attn-trace io SCENARIO [--json]`: the attention core's memory traffic, per variant and pass,
//! per buffer and memory level, counted from the traces. `attn-trace io --sweep`: how global
//! traffic grows with the sequence length and shrinks with flash's tile size (closed forms).

use super::{CliError, Style, escape_controls, paint, quiet_pipe};
use attn_trace_analysis::format::{cols, mask_words, pad, pad_left, pass_text, thousands};
use attn_trace_analysis::traffic::{self, LevelTraffic, PassTraffic, Sweep};
use attn_trace_core::engine::plan::TileSums;
use attn_trace_core::kernels::attention_mla::Latent;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::scenario::Scenario;
use attn_trace_core::tensor::{Level, Shape};
use attn_trace_core::trace::{Buf, Pass};
use attn_trace_i18n::tr;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Count the attention core's reads and writes per buffer and memory level (global, tile).
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Only the attention core counts: from q, k, v to att in the forward pass, from d_att to d_q,
d_k, d_v in the backward pass, each step's scores, softmax and sum over the cache when decoding
(the projections around it are the same for every variant).
Levels: global is main memory (a GPU's HBM), tile is a tiled kernel's on-chip working set
(its SRAM): flash's q_tile, k_tile, v_tile, s_tile, m, l, acc and their backward tiles.

The JSON is {\"title\", \"shape\", \"mask\": {\"name\", \"window\", \"sinks\"}, \"tiles\": {\"br\",
\"bc\", \"pairs\", \"visited\"} (with flash: its tile pairs per head, and those the mask leaves
to visit), \"runs\": [{\"variant\",
\"pass\", \"kv_floats\", \"buffers\": [{\"name\", \"level\", \"reads\", \"writes\"}], \"totals\":
[{\"level\", \"reads\", \"writes\"}]}], \"kv_cache_per_token\": [{\"design\", \"formula\",
\"numbers\", \"floats\"}]}; kv_floats is the size of k plus v (of the cache when decoding), the
keys and values a KV cache keeps (grouped heads keep H_kv heads of them, not H);
kv_cache_per_token is what MHA, GQA, MQA and MLA keep per token and layer for these sizes.
--sweep needs no scenario: one head of size --head-dim, the forward pass, T = 64 … 4096, the
plain MHA kernel against flash with square tiles of 16, 32, 64 and 128 (closed forms of the
kernels' loops, which tests hold to the traced counts).

Examples:
  attn-trace io scenarios/flash.toml
  attn-trace io scenarios/flash.toml --json | jq '.runs[] | {variant, pass, totals}'
  attn-trace io --sweep
  attn-trace io --sweep --head-dim 128 --mask causal --json")]
pub(crate) struct Args {
    /// Scenario file (.toml).
    #[arg(value_name = "SCENARIO", required_unless_present = "sweep")]
    pub scenario: Option<PathBuf>,
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
    #[arg(long, value_name = "MASK", value_parser = mask_name)]
    pub mask: Option<String>,
}

fn head_dim(s: &str) -> Result<usize, String> {
    let d: usize = super::whole(s)?;
    if (1..=1024).contains(&d) {
        Ok(d)
    } else {
        Err(tr!("expected a head size from 1 to 1024, found {d}", d))
    }
}

/// `--mask` of `io --sweep` and `cache --sweep`.
pub(super) fn mask_name(s: &str) -> Result<String, String> {
    match Mask::from_name(s) {
        Some(_) => Ok(s.to_string()),
        None => Err(tr!("expected none or causal").to_string()),
    }
}

/// The sequence lengths and square tile sizes of `--sweep`.
pub(crate) const SWEEP_LENGTHS: [usize; 7] = [64, 128, 256, 512, 1024, 2048, 4096];
pub(crate) const SWEEP_TILES: [usize; 4] = [16, 32, 64, 128];

#[derive(Serialize)]
struct Document<'a> {
    title: &'a str,
    shape: Shape,
    mask: MaskJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    tiles: Option<TilesJson>,
    runs: Vec<RunJson>,
    kv_cache_per_token: Vec<traffic::KvPerToken>,
}

#[derive(Serialize)]
struct TilesJson {
    br: usize,
    bc: usize,
    /// (query tile, key tile) pairs per head: all of them, and those the mask leaves flash to
    /// visit.
    pairs: u64,
    visited: u64,
}

/// The scenario's mask by name, with a window's width and sinks.
#[derive(Serialize)]
struct MaskJson {
    name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sinks: Option<usize>,
}

impl MaskJson {
    fn of(mask: &Mask) -> MaskJson {
        let (window, sinks) = match *mask {
            Mask::Window { w, sinks } => (Some(w), Some(sinks)),
            _ => (None, None),
        };
        MaskJson {
            name: mask.name(),
            window,
            sinks,
        }
    }
}

/// Flash's tile pairs per head for the scenario's sizes and mask: `(all, visited)`.
fn tile_pairs(s: &Scenario) -> (u64, u64) {
    let (sh, plan) = (s.shape, s.plan());
    let t = plan.tiles.sizes();
    let all = (sh.s.div_ceil(t.br.max(1)) as u64).saturating_mul(sh.t.div_ceil(t.bc.max(1)) as u64);
    let visited = TileSums::new(sh.s, sh.t, plan.tiles, &s.mask)
        .pairs
        .get()
        .unwrap_or(u64::MAX);
    (all, visited)
}

#[derive(Serialize)]
struct RunJson {
    #[serde(flatten)]
    traffic: PassTraffic,
    kv_floats: usize,
    totals: Vec<LevelTraffic>,
}

/// One variant's passes and the floats its `k` and `v` hold.
struct Counted {
    passes: Vec<PassTraffic>,
    kv_floats: usize,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.sweep {
        let mask = args.mask.as_deref().and_then(Mask::from_name).unwrap_or(Mask::None);
        let s = traffic::sweep(&SWEEP_LENGTHS, &SWEEP_TILES, args.head_dim.unwrap_or(64), mask);
        if args.json {
            if let Err(e) = serde_json::to_writer(&mut out, &s) {
                return quiet_pipe(Err(e.into()));
            }
            quiet_pipe(writeln!(out))?;
        } else {
            quiet_pipe(sweep_table(&mut out, &s))?;
        }
        return quiet_pipe(out.flush());
    }
    let Some(path) = args.scenario else {
        return Err(CliError::Input(tr!("a SCENARIO (or --sweep) is required").to_string()));
    };
    if let Some(flag) = [("--head-dim", args.head_dim.is_some()), ("--mask", args.mask.is_some())]
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
    let runs: Vec<Counted> = scenario
        .variants
        .iter()
        .map(|&v| {
            let run = scenario.run(v, true);
            let floats = |b: Buf| {
                run.trace
                    .as_ref()
                    .and_then(|t| t.buffer(b))
                    .map_or(0, |i| i.layout().len())
            };
            // a decode run keeps its keys and values in the cache
            let kv = if scenario.decode {
                (Buf::KCache, Buf::VCache)
            } else {
                (Buf::K, Buf::V)
            };
            Counted {
                passes: traffic::counted(&run),
                kv_floats: floats(kv.0) + floats(kv.1),
            }
        })
        .collect();
    let flash = scenario.variants.iter().any(|v| v.desc().tiled);
    if args.json {
        let tiles = scenario.plan().tiles.sizes();
        let (pairs, visited) = tile_pairs(&scenario);
        let doc = Document {
            title: &scenario.title,
            shape: scenario.shape,
            mask: MaskJson::of(&scenario.mask),
            tiles: flash.then_some(TilesJson {
                br: tiles.br,
                bc: tiles.bc,
                pairs,
                visited,
            }),
            runs: runs
                .into_iter()
                .flat_map(|c| {
                    c.passes.into_iter().map(move |p| RunJson {
                        totals: p.totals(),
                        traffic: p,
                        kv_floats: c.kv_floats,
                    })
                })
                .collect(),
            kv_cache_per_token: traffic::kv_cache_per_token(scenario.shape, scenario.latent),
        };
        if let Err(e) = serde_json::to_writer(&mut out, &doc) {
            return quiet_pipe(Err(e.into()));
        }
        quiet_pipe(writeln!(out))?;
    } else {
        quiet_pipe(tables(&mut out, &scenario, &runs))?;
    }
    quiet_pipe(out.flush())
}

/// Per variant and pass, one row per buffer and the totals per level; then the global traffic
/// of each variant side by side, and the floats each keeps in `k` and `v`.
fn tables(out: &mut dyn Write, s: &Scenario, counted: &[Counted]) -> std::io::Result<()> {
    let sh = s.shape;
    writeln!(out, "{}", paint(&escape_controls(&s.title), Style::Heading))?;
    let queries = if s.cross { format!("S={} ", sh.s) } else { String::new() };
    writeln!(
        out,
        "{}",
        tr!(
            "B={b} {queries}T={t} C={c} H={h} (D={d}), {mask}; the attention core only",
            b = sh.b,
            queries,
            t = sh.t,
            c = sh.c,
            h = sh.h,
            d = sh.d(),
            mask = mask_words(&s.mask)
        )
    )?;
    if s.decode {
        writeln!(out, "{}", decode_rows_sentence(&s.mask, sh.t))?;
    }
    if s.variants.iter().any(|v| v.desc().tiled) {
        let t = s.plan().tiles.sizes();
        writeln!(
            out,
            "{}",
            tr!(
                "flash tiles: br = {br}, bc = {bc}; its tile-local working set holds {floats} floats in forward",
                br = t.br,
                bc = t.bc,
                floats = t.forward_floats(sh.d())
            )
        )?;
        if s.mask != Mask::None {
            // the (query tile, key tile) pairs flash's loops skip without reading either tile
            let (all, visited) = tile_pairs(s);
            writeln!(
                out,
                "{}",
                tr!(
                    "flash visits {visited} of its {all} tile pairs per head: the {mask} hides the other {skipped} entirely, so they are skipped",
                    visited = thousands(visited),
                    all = thousands(all),
                    mask = mask_words(&s.mask),
                    skipped = thousands(all.saturating_sub(visited))
                )
            )?;
        }
    }
    let runs: Vec<&PassTraffic> = counted.iter().flat_map(|c| &c.passes).collect();
    // the buffer column as wide as its longest name (`block_table`, `kv_cache`), so the counts
    // stay in their columns
    let name_w = runs
        .iter()
        .flat_map(|p| &p.buffers)
        .map(|b| cols(b.buf.name()))
        .chain([cols(tr!("buffer")), cols(tr!("total"))])
        .max()
        .unwrap_or(10)
        .max(10);
    let row = |name: &str, level: &str, reads: &str, writes: &str| {
        format!(
            "  {} {} {} {}",
            pad(name, name_w),
            pad(level, 7),
            pad_left(reads, 12),
            pad_left(writes, 12)
        )
    };
    let level_text = |l: Level| match l {
        Level::Global => tr!("global"),
        Level::Tile => tr!("tile"),
    };
    for p in &runs {
        writeln!(out)?;
        let title = format!("{} · {}", p.variant, pass_text(p.pass));
        writeln!(out, "{}", paint(&title, Style::Heading))?;
        writeln!(out, "{}", row(tr!("buffer"), tr!("level"), tr!("reads"), tr!("writes")))?;
        for b in &p.buffers {
            let line = row(
                b.buf.name(),
                level_text(b.level),
                &thousands(b.reads),
                &thousands(b.writes),
            );
            writeln!(out, "{line}")?;
        }
        for t in p.totals() {
            let line = row(
                tr!("total"),
                level_text(t.level),
                &thousands(t.reads),
                &thousands(t.writes),
            );
            writeln!(out, "{}", paint(&line, Style::Dim))?;
        }
    }
    for pass in [Pass::Forward, Pass::Backward] {
        let of: Vec<&&PassTraffic> = runs.iter().filter(|p| p.pass == pass).collect();
        if of.len() < 2 {
            continue;
        }
        let first = of[0].accesses(Level::Global).max(1) as f64;
        let parts: Vec<String> = of
            .iter()
            .map(|p| {
                let g = p.accesses(Level::Global);
                format!("{} {} ({:.2}×)", p.variant, thousands(g), g as f64 / first)
            })
            .collect();
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            tr!(
                "global reads + writes, {pass}: {parts}",
                pass = pass_text(pass),
                parts = parts.join(tr!(", "))
            )
        )?;
    }
    // what grouping saves is memory, not traffic: every query head still reads its group's keys
    let grouped = sh.h_kv < sh.h;
    if grouped && counted.len() == 1 {
        // alone, beside the MHA of the same shape it stands for (k and v of H heads, not H_kv)
        let kv = counted[0].kv_floats;
        let mha = kv / sh.h_kv.max(1) * sh.h;
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            tr!(
                "floats held in k and v (what a KV cache keeps): {parts}",
                parts = tr!(
                    "{v} {kv}, where MHA of the same shape holds {mha}",
                    v = counted[0].passes.first().map_or(Variant::Gqa, |p| p.variant),
                    kv = thousands(kv as u64),
                    mha = thousands(mha as u64)
                )
            )
        )?;
    }
    if counted.len() >= 2 && counted.iter().any(|c| c.kv_floats != counted[0].kv_floats) {
        let first = counted[0].kv_floats.max(1) as f64;
        let parts: Vec<String> = counted
            .iter()
            .filter_map(|c| Some((c.passes.first()?.variant, c.kv_floats)))
            .map(|(v, n)| format!("{v} {} ({:.2}×)", thousands(n as u64), n as f64 / first))
            .collect();
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            tr!(
                "floats held in k and v (what a KV cache keeps): {parts}",
                parts = parts.join(tr!(", "))
            )
        )?;
    }
    if grouped {
        writeln!(
            out,
            "{}",
            paint(
                &tr!(
                    "H_kv = {kv} key/value heads serve H = {h} query heads: each key is stored once and read by {g} query heads, so the reads above stay those of MHA while the memory is {kv}/{h} of it",
                    kv = sh.h_kv,
                    h = sh.h,
                    g = sh.h / sh.h_kv.max(1)
                ),
                Style::Dim
            )
        )?;
    }
    kv_per_token(out, sh, s.latent)
}

/// How many cached rows each query head of a decode run reads, worked out so that every number
/// can be redone by hand: `T(T+1)/2` when every step reads all of `0..=t`; under a window that
/// slides, the ramp of the first `W + N` steps and then `W + N` rows a step.
fn decode_rows_sentence(mask: &Mask, len: usize) -> String {
    let triangle = |t: usize| format!("T(T+1)/2 = {t}·{t1}/2 = {n}", t1 = t + 1, n = t * (t + 1) / 2);
    match traffic::DecodeRows::of(mask, len) {
        traffic::DecodeRows::Full { t, .. } => match *mask {
            Mask::Window { w, sinks } => tr!(
                "decoding token by token through a window of W = {w} with sinks N = {sinks}, which holds every row up to T = {t}: step t reads the cached rows 0..=t, so each query head reads {sum} cached rows over the {t} steps",
                w,
                sinks,
                t,
                sum = triangle(t)
            )
            .to_string(),
            _ => tr!(
                "decoding token by token: step t reads the cached rows 0..=t, so each query head reads {sum} cached rows over the {t} steps",
                t,
                sum = triangle(t)
            )
            .to_string(),
        },
        traffic::DecodeRows::Window { t, w, sinks, m, ramp, n } => {
            // 1 + 2 + 3, or 1 + 2 + … + m: the rows of the steps before the window slides
            let steps = if m <= 3 {
                (1..=m).map(|k| k.to_string()).collect::<Vec<_>>().join(" + ")
            } else {
                format!("1 + 2 + … + {m}")
            };
            let ramp = if m == 1 {
                steps
            } else {
                format!("{steps} = {m}·{m1}/2 = {ramp}", m1 = m + 1)
            };
            let sum = format!("{first} + {rest}·{m} = {n}", first = m * (m + 1) / 2, rest = t - m);
            if sinks == 0 {
                tr!(
                    "decoding token by token through a window of W = {w}: step t reads the last min(t+1, W) cached rows, so each query head reads {ramp} rows in the first W = {m} steps and {m} in each of the other {rest}: {sum} cached rows over the {t} steps, where the whole cache would cost {full}",
                    w,
                    ramp,
                    m,
                    rest = t - m,
                    sum,
                    t,
                    full = triangle(t)
                )
                .to_string()
            } else {
                tr!(
                    "decoding token by token through a window of W = {w} with sinks N = {sinks}: step t reads min(t+1, W+N) cached rows (the sinks and the last W), so each query head reads {ramp} rows in the first W+N = {m} steps and {m} in each of the other {rest}: {sum} cached rows over the {t} steps, where the whole cache would cost {full}",
                    w,
                    sinks,
                    ramp,
                    m,
                    rest = t - m,
                    sum,
                    t,
                    full = triangle(t)
                )
                .to_string()
            }
        }
    }
}

/// What a KV cache keeps per token and layer for these sizes under MHA, GQA, MQA and MLA.
fn kv_per_token(out: &mut dyn Write, sh: Shape, latent: Option<Latent>) -> std::io::Result<()> {
    let rows = traffic::kv_cache_per_token(sh, latent);
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        paint(tr!("KV cache per token and layer (f32):"), Style::Heading)
    )?;
    let w = |f: fn(&traffic::KvPerToken) -> usize| rows.iter().map(f).max().unwrap_or(0);
    let (fw, nw) = (w(|r| r.formula.chars().count()), w(|r| r.numbers.chars().count()));
    let vw = w(|r| r.floats.to_string().len());
    for r in &rows {
        writeln!(
            out,
            "  {} {} = {} = {} {}",
            pad(r.design, 4),
            pad(r.formula, fw),
            pad(&r.numbers, nw),
            pad_left(&r.floats.to_string(), vw),
            tr!("floats, {bytes} bytes", bytes = 4 * r.floats)
        )?;
    }
    if let Some(l) = latent {
        let note = tr!(
            "MLA with this scenario's R = {r}, DR = {dr}: one latent row and one rotary key shared by every head, so its cache does not grow with H",
            r = l.r,
            dr = l.dr
        );
        return writeln!(out, "{}", paint(&note, Style::Dim));
    }
    let d = sh.d();
    // D/2 rounded up when the head size is odd, said as such
    let half = if d.is_multiple_of(2) { "D/2" } else { "⌈D/2⌉" };
    writeln!(
        out,
        "{}",
        paint(
            &tr!(
                "MLA with DeepSeek-V2's ratios R = 4·D = {r}, DR = {half} = {dr}: one latent row and one rotary key shared by every head, so its cache does not grow with H",
                r = traffic::MLA_RANK_PER_D * d,
                half,
                dr = d.div_ceil(2)
            ),
            Style::Dim
        )
    )
}

/// The sweep as a table, one row per T, and what its columns are.
fn sweep_table(out: &mut dyn Write, s: &Sweep) -> std::io::Result<()> {
    let title = tr!(
        "Global reads + writes per head, forward pass, D = {d}, {mask}",
        d = s.d,
        mask = mask_words(&s.mask)
    );
    writeln!(out, "{}", paint(&title, Style::Heading))?;
    writeln!(
        out,
        "{}",
        tr!(
            "naive: the plain MHA kernel (S,P: of it, the T×T scores and probabilities); flash BR: square tiles br = bc = BR (cut to T when larger)"
        )
    )?;
    write!(
        out,
        "{:>6} {} {}",
        "T",
        pad_left(tr!("naive"), 16),
        pad_left(tr!("of it S,P"), 16)
    )?;
    for t in &s.tiles {
        write!(out, " {:>14}", format!("flash {t}"))?;
    }
    writeln!(out)?;
    for r in &s.rows {
        write!(
            out,
            "{:>6} {:>16} {:>16}",
            r.t,
            thousands(r.naive),
            thousands(r.naive_scores_probs)
        )?;
        for f in &r.flash {
            write!(out, " {:>14}", thousands(*f))?;
        }
        writeln!(out)?;
    }
    write!(out, "{:>6} {:>16} {:>16}", "M", "", "")?;
    for m in &s.tile_floats {
        write!(out, " {:>14}", thousands(*m as u64))?;
    }
    writeln!(out)?;
    let note = tr!(
        "M: floats of flash's tile-local working set. Naive grows as (4D + 6)·T² + D·T: every product reads its operands from global memory, and S and P are written and read back. Flash grows as 2D·T²/br + 2D·T + T: k and v are read once per query tile (these two formulas without a mask; a causal one skips about half of each T² term), so its traffic is divided by the tile, that is by the on-chip memory M ≈ 4·br·D + br² (Θ(T²·D²/M), Dao et al. 2022)."
    );
    writeln!(out, "{}", paint(note, Style::Dim))
}
