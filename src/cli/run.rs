//! `attn-trace run SCENARIO [--json]`: runs every variant of a scenario, traced, and prints the
//! tensors (as JSON) or a short summary.

use super::{CliError, Style, escape_controls, paint, quiet_pipe};
use attn_trace_analysis::format::{pad, pad_left};
use attn_trace_analysis::mistakes::{self, Note, Report, RunDivergence};
use attn_trace_core::engine::{self, Run};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::tensor::{Shape, Tensor};
use attn_trace_core::trace::{Buf, Op, Phase};
use attn_trace_i18n::tr;
use serde::Serialize;
use serde::ser::SerializeMap;
use std::io::Write;
use std::path::PathBuf;

/// Run a scenario: every variant, every pass it asks for, recorded.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The JSON is one object: {\"title\", \"shape\": {\"B\",\"T\",\"C\",\"H\"}, \"runs\": [{\"variant\",
\"events\", \"tensors\": {NAME: {\"shape\", \"data\"}}}]}, tensors flat and row-major.
A scenario with [run].mistakes adds, after each variant's correct run, its mistaken run
with \"mistakes\": [NAMES], \"diverges_at\": the first event where its trace differs,
\"divergence\": {\"event\", \"correct\", \"mistaken\"} (what each run does there; with
\"values\": {\"correct_event\", \"mistaken_event\", \"correct\", \"mistaken\"} when the runs
part in what they do before they part in value, as mistake 7 does) and
\"symptoms\": [{\"heading\", \"text\"}] (each mistake's effect, in numbers).

Examples:
  attn-trace run scenarios/mha_walkthrough.toml
  attn-trace run scenarios/numeric_mha.toml --json
  attn-trace run scenarios/numeric_mha.toml --json | jq '.runs[0].tensors.probs'")]
pub(crate) struct Args {
    /// Scenario file (.toml).
    #[arg(value_name = "SCENARIO")]
    pub scenario: PathBuf,
    /// Print every tensor of every run as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The `run --json` document.
#[derive(Serialize)]
struct Document<'a> {
    title: &'a str,
    shape: Shape,
    runs: Vec<RunJson>,
}

#[derive(Serialize)]
struct RunJson {
    variant: Variant,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mistakes: Vec<&'static str>,
    /// For a mistaken run: the first event where its trace leaves the correct run's.
    #[serde(skip_serializing_if = "Option::is_none")]
    diverges_at: Option<usize>,
    /// For a mistaken run: what each run does at that event.
    #[serde(skip_serializing_if = "Option::is_none")]
    divergence: Option<RunDivergence>,
    /// For a mistaken run: each mistake's symptom, in numbers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    symptoms: Vec<Note>,
    events: usize,
    tensors: Named,
}

/// Each variant's correct run, followed by its mistaken twin (and the report on it) when the
/// scenario has mistakes.
fn runs_of(s: &Scenario, variant: Variant) -> Vec<(Run, Option<Report>)> {
    let good = s.run(variant, true);
    let bad = s.mistaken_inputs().map(|inputs| {
        let bad = engine::run(&inputs, variant, s.passes, true);
        let report = mistakes::report(&good, &bad, &s.mask);
        (bad, Some(report))
    });
    std::iter::once((good, None)).chain(bad).collect()
}

/// Tensors as a JSON object keyed by buffer name, in the engine's order.
struct Named(Vec<(Buf, Tensor)>);

impl Serialize for Named {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (buf, tensor) in &self.0 {
            map.serialize_entry(buf.name(), tensor)?;
        }
        map.end()
    }
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let scenario = super::load(&args.scenario)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        // machine-readable: the symptoms and the divergence in English whatever the language
        return attn_trace_i18n::with_lang(attn_trace_i18n::Lang::En, || json(&scenario, &mut out));
    }
    quiet_pipe(summary(&mut out, &scenario))?;
    quiet_pipe(out.flush())
}

/// `run --json`: the whole document, one variant traced at a time.
fn json(scenario: &Scenario, out: &mut std::io::BufWriter<std::io::StdoutLock<'_>>) -> Result<(), CliError> {
    {
        // one variant at a time: only its tensors outlive its trace
        let runs = scenario
            .variants
            .iter()
            .flat_map(|&v| runs_of(scenario, v))
            .map(|(run, report)| RunJson {
                variant: run.variant,
                mistakes: run.mistakes.list().iter().map(|m| m.name()).collect(),
                diverges_at: report.as_ref().and_then(|r| r.divergence.as_ref()).map(|d| d.event),
                divergence: report.as_ref().and_then(|r| r.divergence.clone()),
                symptoms: report.map(|r| r.symptoms).unwrap_or_default(),
                events: run.events(),
                tensors: Named(run.named_tensors()),
            })
            .collect();
        let doc = Document {
            title: &scenario.title,
            shape: scenario.shape,
            runs,
        };
        if let Err(e) = serde_json::to_writer(&mut *out, &doc) {
            return quiet_pipe(Err(e.into()));
        }
        quiet_pipe(writeln!(out))?;
    }
    quiet_pipe(out.flush())
}

/// The human summary: what runs, then per variant its events, phase counts and output.
fn summary(out: &mut dyn Write, s: &Scenario) -> std::io::Result<()> {
    let sh = s.shape;
    writeln!(out, "{}", paint(&escape_controls(&s.title), Style::Heading))?;
    let passes = match (s.passes.forward, s.passes.backward) {
        (true, true) => tr!("forward and backward"),
        (true, false) => tr!("forward"),
        _ => tr!("backward"),
    };
    let start = if s.from_x() && s.cross {
        tr!("cross-attention: queries from x, keys and values from memory (separate projections, output projection)")
    } else if s.from_x() && s.qkv == attn_trace_core::scenario::Qkv::Separate {
        tr!("starts at x (separate q, k, v projections, output projection)")
    } else if s.from_x() {
        tr!("starts at x (input projection, output projection)")
    } else if s.plan().proj {
        tr!("starts at q, k, v (output projection given)")
    } else {
        tr!("starts at q, k, v (no output projection: out is att)")
    };
    let queries = if s.cross { format!("S={} ", sh.s) } else { String::new() };
    writeln!(
        out,
        "{}",
        tr!(
            "B={b} {queries}T={t} C={c} H={h} (D={d}), {mask}, {passes}, {start}",
            b = sh.b,
            queries,
            t = sh.t,
            c = sh.c,
            h = sh.h,
            d = sh.d(),
            mask = attn_trace_analysis::format::mask_words(&s.mask),
            passes,
            start
        )
    )?;
    if let Some(d) = s.dropout {
        writeln!(
            out,
            "{}",
            tr!(
                "dropout p = {p} (seed {seed}), {mode} mode",
                p = d.p,
                seed = d.seed,
                mode = s.mode.name()
            )
        )?;
    }
    if s.variants.iter().any(|v| v.desc().tiled) {
        let t = s.plan().tiles.sizes();
        writeln!(
            out,
            "flash tiles: br = {} query rows, bc = {} key columns ([flash] br = {}, bc = {})",
            t.br, t.bc, s.tiles.br, s.tiles.bc
        )?;
    }
    for m in s.mistakes.list() {
        writeln!(
            out,
            "{}",
            tr!(
                "mistake {name}: {symptom}",
                name = m.name(),
                symptom = attn_trace_i18n::text(m.symptom())
            )
        )?;
    }
    for (run, report) in s.variants.iter().flat_map(|&v| runs_of(s, v)) {
        writeln!(out)?;
        let name = if run.mistakes.is_empty() {
            run.variant.name().to_string()
        } else {
            let names: Vec<&str> = run.mistakes.list().iter().map(|m| m.name()).collect();
            let passes = if run.mistakes.allow_backward() {
                tr!("forward and backward")
            } else {
                tr!("forward only")
            };
            tr!(
                "{variant} with {names} ({passes})",
                variant = run.variant.name(),
                names = names.join(tr!(", ")),
                passes
            )
        };
        writeln!(
            out,
            "{}",
            tr!(
                "{name}: {n} events",
                name = paint(&name, Style::Heading),
                n = run.events()
            )
        )?;
        if let Some(d) = report.as_ref().and_then(|r| r.divergence.as_ref()) {
            writeln!(
                out,
                "{}",
                tr!(
                    "  leaves the correct run at event #{n}: {what}",
                    n = d.event,
                    what = d.mistaken
                )
            )?;
            if let Some(v) = &d.values {
                writeln!(
                    out,
                    "  {}",
                    tr!(
                        "its values first differ at event #{event}: {mistaken} (correct run: {correct})",
                        event = v.mistaken_event,
                        mistaken = v.mistaken,
                        correct = v.correct
                    )
                )?;
            }
        }
        phase_table(out, &run)?;
        probs_check(out, &run)?;
        let result = if run.tensors.has(Buf::Out) { Buf::Out } else { Buf::Att };
        if let Some((_, t)) = run.named_tensors().into_iter().find(|(b, _)| *b == result) {
            print_tensor(out, result.name(), &t)?;
        }
    }
    Ok(())
}

/// Reads and writes of each recorded phase, counted from the trace.
fn phase_table(out: &mut dyn Write, run: &Run) -> std::io::Result<()> {
    let Some(trace) = &run.trace else { return Ok(()) };
    writeln!(
        out,
        "  {} {} {}",
        pad(tr!("phase"), 20),
        pad_left(tr!("reads"), 10),
        pad_left(tr!("writes"), 10)
    )?;
    let mut rows: Vec<(Phase, usize, usize)> = Vec::new();
    for k in 0..trace.phases.len() {
        let phase = trace.phases[k].1;
        let events = &trace.events[trace.span_range(k)];
        let reads = events.iter().filter(|e| e.op == Op::Read).count();
        match rows.iter_mut().find(|r| r.0 == phase) {
            Some(r) => (r.1, r.2) = (r.1 + reads, r.2 + events.len() - reads),
            None => rows.push((phase, reads, events.len() - reads)),
        }
    }
    for (phase, reads, writes) in rows {
        writeln!(out, "  {:<20} {reads:>10} {writes:>10}", phase.name())?;
    }
    Ok(())
}

/// Every softmax row should sum to 1: say how close they are.
fn probs_check(out: &mut dyn Write, run: &Run) -> std::io::Result<()> {
    let t = run.shape.t;
    let probs = &run.tensors[Buf::Probs];
    if probs.is_empty() || t == 0 {
        return Ok(());
    }
    // with sink logits (gpt-oss) a row sums to 1 − P_sink: its sink's share completes it
    let p_sink = &run.tensors[Buf::PSink];
    let sums: Vec<f32> = probs
        .chunks(t)
        .enumerate()
        .map(|(r, row)| row.iter().sum::<f32>() + p_sink.get(r).copied().unwrap_or(0.0))
        .collect();
    let lo = sums.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = sums.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let off = sums.iter().filter(|s| s.is_nan() || (*s - 1.0).abs() >= 1e-4).count();
    if off == 0 && !p_sink.is_empty() {
        writeln!(
            out,
            "{}",
            tr!(
                "  probs: {n} rows, each sums to 1 with its sink's share p_sink (min {lo}, max {hi})",
                n = sums.len(),
                lo = format!("{lo:.6}"),
                hi = format!("{hi:.6}")
            )
        )
    } else if off == 0 {
        writeln!(
            out,
            "{}",
            tr!(
                "  probs: {n} rows, each sums to 1 (min {lo}, max {hi})",
                n = sums.len(),
                lo = format!("{lo:.6}"),
                hi = format!("{hi:.6}")
            )
        )
    } else {
        // only non-finite scores (inputs near the f32 limit) can do this
        writeln!(
            out,
            "{}",
            tr!(
                "  probs: {n} rows, {off} of them do not sum to 1: their scores overflowed f32",
                n = sums.len(),
                off
            )
        )
    }
}

/// A small tensor row by row; a large one as its shape and range.
fn print_tensor(out: &mut dyn Write, name: &str, t: &Tensor) -> std::io::Result<()> {
    let dims: Vec<String> = t.shape.iter().map(usize::to_string).collect();
    let row = t.shape.last().copied().unwrap_or(1).max(1);
    if t.data.len() <= 64 && row <= 8 {
        writeln!(out, "  {name} [{}]:", dims.join(","))?;
        for chunk in t.data.chunks(row) {
            let cells: Vec<String> = chunk.iter().map(|x| format!("{x:>9.4}")).collect();
            writeln!(out, "    {}", cells.join(" "))?;
        }
    } else {
        let lo = t.data.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = t.data.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mean = t.data.iter().sum::<f32>() / t.data.len().max(1) as f32;
        writeln!(
            out,
            "{}",
            tr!(
                "  {name} [{dims}]: min {lo}, mean {mean}, max {hi}",
                name,
                dims = dims.join(","),
                lo = format!("{lo:.4}"),
                mean = format!("{mean:.4}"),
                hi = format!("{hi:.4}")
            )
        )?;
    }
    Ok(())
}
