//! `attn-trace trace SCENARIO`: exports the event log, one event per line, as JSON Lines or CSV.

use super::{CliError, Output, buffer_arg, pass_arg, phase_arg, variant_arg};
use attn_trace::kernels::Variant;
use attn_trace::learner;
use attn_trace::scenario::Scenario;
use attn_trace::tr;
use attn_trace::trace::{Buf, EventView, Pass, Phase, Trace};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

/// Export the event log: every read and write, with its loop variables and derived offsets.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
JSON Lines start with a header line naming the format and the run, e.g.
  {\"format\":\"attn-trace-trace\",\"version\":1,\"scenario\":\"s.toml\",\"variant\":\"mha\",\"pass\":\"forward\",\"input\":0,\"dims\":{…}}
(variant and pass are null when the export holds several); `grade` and the recorders share the format.
Fields (JSON Lines, one object per event after the header; CSV has the same columns):
  seq      event number within its variant's trace (what `explain` and the TUI call #n)
  variant  baseline | mha | flash  pass   forward | backward
  phase    qkv_proj, split, scores, softmax, weighted_sum, out_proj, and their *_back;
           flash, flash_delta, flash_back
  op       read | write (a += is recorded as a read of the old value, then a write)
  buffer   x, w_qkv, q, k, v, scores, probs, att, out, d_* ...; flash's lse, q_tile, s_tile, m, l, acc ...
  level    global (main memory) | tile (a tiled kernel's on-chip working set: flash's *_tile, m, l, acc)
  offset   flat offset in the buffer     index  logical coordinates of that offset
  value    the value read or written (\"nan\", \"inf\", \"-inf\" for the non-finite)
  vars     loop variables in scope, outermost first, e.g. {\"bb\":0,\"hh\":1,\"i\":2,\"j\":1,\"d\":0}
  derived  offsets computed in those loops, e.g. {\"q_base\":10,\"k_base\":6,\"off\":16}
  file     kernel source file        line  source line of the access
In CSV, index is written \"0;1;2;1\" and vars/derived as \"bb=0;hh=1;i=2\".

Examples:
  attn-trace trace scenarios/indexing_trace.toml --phase scores
  attn-trace trace scenarios/mha_walkthrough.toml --variant mha --buffer scores --format csv -o scores.csv
  attn-trace trace scenarios/mha_walkthrough.toml -o t.jsonl
  python -c \"import pandas as pd; print(pd.read_json('t.jsonl', lines=True).head())\"")]
pub struct Args {
    /// Scenario file (.toml).
    #[arg(value_name = "SCENARIO")]
    pub scenario: PathBuf,
    /// Only this variant (one of the scenario's `[run] variants`).
    #[arg(long, value_parser = variant_arg())]
    pub variant: Option<Variant>,
    /// Only this pass (forward or backward).
    #[arg(long, value_parser = pass_arg())]
    pub pass: Option<Pass>,
    /// Only this phase, e.g. scores or softmax_back.
    #[arg(long, value_parser = phase_arg())]
    pub phase: Option<Phase>,
    /// Only accesses of this buffer, e.g. q or d_scores.
    #[arg(long, value_name = "NAME", value_parser = buffer_arg())]
    pub buffer: Option<Buf>,
    /// Export the mistaken runs of a scenario with [run].mistakes instead of the correct ones.
    #[arg(long)]
    pub mistaken: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    pub format: Format,
    /// Write to FILE (atomically: complete or not at all) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
}

/// The CSV columns, also the JSON keys, in order.
pub const FIELDS: [&str; 14] = [
    "seq", "variant", "pass", "phase", "op", "buffer", "level", "offset", "index", "value", "vars", "derived", "file",
    "line",
];

pub fn run(args: Args) -> Result<(), CliError> {
    let scenario = super::load(&args.scenario)?;
    let variants: Vec<Variant> = match args.variant {
        Some(v) if !scenario.variants.contains(&v) => {
            return Err(CliError::Input(tr!(
                "{file}: --variant {v}: the scenario does not run it ([run].variants = {variants})",
                file = args.scenario.display(),
                v,
                variants = names(scenario.variants.iter().map(|v| v.name()))
            )));
        }
        Some(v) => vec![v],
        None => scenario.variants.clone(),
    };
    if args.mistaken && scenario.mistakes.is_empty() {
        return Err(CliError::Input(tr!(
            "{file}: --mistaken: the scenario has no [run].mistakes to trace",
            file = args.scenario.display()
        )));
    }
    let wanted_pass = args.pass.or(args.phase.map(Phase::pass));
    if let Some(p) = wanted_pass {
        let recorded = match p {
            Pass::Forward => scenario.passes.forward,
            Pass::Backward => scenario.passes.backward,
        };
        if !recorded {
            return Err(CliError::Input(tr!(
                "{file}: the scenario does not record the {pass} pass; add \"{pass}\" to [run].passes",
                file = args.scenario.display(),
                pass = p.name()
            )));
        }
    }
    if let (Some(p), Some(ph)) = (args.pass, args.phase)
        && ph.pass() != p
    {
        return Err(CliError::Input(tr!(
            "--phase {ph} belongs to the {pass} pass, not to --pass {p}",
            ph,
            pass = ph.pass().name(),
            p = p.name()
        )));
    }

    let mut output = Output::open(args.output.as_deref())?;
    let written = match export(&scenario, &variants, &args, output.writer()) {
        Ok(n) => n,
        Err(CliError::Write(e)) => return Err(output.write_error(e)),
        Err(e) => return Err(e),
    };
    if written == 0 {
        // dropping the output deletes the temporary file: nothing is left behind
        return Err(CliError::Input(tr!(
            "{file}: no event matches the filters (--variant, --pass, --phase, --buffer); check that the phase runs for this scenario and that it touches the buffer",
            file = args.scenario.display()
        )));
    }
    output.finish()?;
    if let Some(path) = &args.output {
        let _ = writeln!(
            std::io::stderr(),
            "{}",
            tr!("wrote {written} events to {path}", written, path = path.display())
        );
    }
    Ok(())
}

/// Writes the events that pass the filters to `w`, in the chosen format; returns how many.
fn export(
    scenario: &Scenario,
    variants: &[Variant],
    args: &Args,
    w: &mut dyn std::io::Write,
) -> Result<usize, CliError> {
    match args.format {
        Format::Csv => {
            let mut w = csv::Writer::from_writer(w);
            csv_io(w.write_record(FIELDS))?;
            let n = each_event(scenario, variants, args, |variant, view| {
                csv_io(w.write_record(csv_record(variant, view)))
            })?;
            csv_io(w.flush().map_err(csv::Error::from))?;
            Ok(n)
        }
        Format::Jsonl => {
            w.write_all(
                header_line(
                    scenario,
                    &args.scenario,
                    variants,
                    args.pass.or(args.phase.map(Phase::pass)),
                )
                .as_bytes(),
            )?;
            let mut line = String::new();
            each_event(scenario, variants, args, |variant, view| {
                line.clear();
                json_line(&mut line, variant, view);
                Ok(w.write_all(line.as_bytes())?)
            })
        }
    }
}

/// The header line of the JSON Lines export: the trace format and version, the scenario, the
/// variant and pass when the export holds one of each, and the sizes (docs/your_kernel.md).
fn header_line(scenario: &Scenario, path: &std::path::Path, variants: &[Variant], pass: Option<Pass>) -> String {
    let sh = scenario.shape;
    let single = |one: Option<&str>| one.map_or_else(|| "null".to_string(), |n| format!("\"{n}\""));
    let pass = pass.or(match (scenario.passes.forward, scenario.passes.backward) {
        (true, false) => Some(Pass::Forward),
        (false, true) => Some(Pass::Backward),
        _ => None,
    });
    format!(
        "{{\"format\":\"{}\",\"version\":{},\"scenario\":{},\"variant\":{},\"pass\":{},\"input\":0,\"dims\":{{\"B\":{},\"T\":{},\"S\":{},\"C\":{},\"H\":{},\"D\":{},\"H_kv\":{}}}}}\n",
        learner::TRACE_FORMAT,
        learner::TRACE_VERSION,
        serde_json::to_string(&path.display().to_string()).unwrap_or_else(|_| "null".into()),
        single((variants.len() == 1).then(|| variants[0].name())),
        single(pass.map(Pass::name)),
        sh.b,
        sh.t,
        sh.s,
        sh.c,
        sh.h,
        sh.d(),
        sh.h_kv
    )
}

fn csv_io(r: csv::Result<()>) -> Result<(), CliError> {
    r.map_err(|e| match e.into_kind() {
        csv::ErrorKind::Io(io) => CliError::from(io),
        other => CliError::Other(color_eyre::eyre::eyre!("csv: {other:?}")),
    })
}

/// Runs each variant traced and hands every event that passes the filters to `emit`; returns
/// how many there were. Only one variant's trace is alive at a time.
fn each_event(
    scenario: &Scenario,
    variants: &[Variant],
    args: &Args,
    mut emit: impl FnMut(Variant, &EventView) -> Result<(), CliError>,
) -> Result<usize, CliError> {
    let mut written = 0;
    let mistaken = scenario.mistaken_inputs().filter(|_| args.mistaken);
    for &variant in variants {
        let run = match &mistaken {
            Some(inputs) => attn_trace::engine::run(inputs, variant, scenario.passes, true),
            None => scenario.run(variant, true),
        };
        let Some(trace) = &run.trace else { continue };
        for n in (0..trace.len()).filter(|&n| matches(trace, n, args)) {
            emit(variant, &trace.view(n))?;
            written += 1;
        }
    }
    Ok(written)
}

/// Does event `n` pass the filters? The cheap tests first.
fn matches(trace: &Trace, n: usize, args: &Args) -> bool {
    let e = &trace.events[n];
    if args.buffer.is_some_and(|b| b != e.buf) {
        return false;
    }
    if args.phase.is_none() && args.pass.is_none() {
        return true;
    }
    let phase = trace.phase_at(n);
    args.phase.is_none_or(|p| p == phase) && args.pass.is_none_or(|p| p == phase.pass())
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    format!("[{}]", it.map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", "))
}

/// A JSON number for a value. JSON has no NaN or infinity: those are the strings `"nan"`,
/// `"inf"` and `"-inf"`, as the recorders write them and `grade` reads them.
fn json_number(x: f32) -> String {
    if x.is_finite() {
        format!("{x:?}")
    } else if x.is_nan() {
        "\"nan\"".to_string()
    } else if x > 0.0 {
        "\"inf\"".to_string()
    } else {
        "\"-inf\"".to_string()
    }
}

/// The names of nested loops with their values, outermost first, each name once: a kernel
/// called inside another's loop (rope inside a decode step) enters loops of the same names
/// (`bb`, `t`), and the inner one's value is the one in scope, as in the code. An object has
/// unique keys; a CSV cell, the same names.
fn in_scope<'a>(pairs: impl Iterator<Item = (&'a str, usize)>) -> Vec<(&'a str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for (name, value) in pairs {
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some(seen) => seen.1 = value,
            None => out.push((name, value)),
        }
    }
    out
}

/// `{"name":value,...}` keeping the given order, each name once (see [`in_scope`]).
fn json_object(out: &mut String, pairs: impl Iterator<Item = (&'static str, usize)>) {
    out.push('{');
    for (k, (name, value)) in in_scope(pairs).into_iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, "\"{name}\":{value}");
    }
    out.push('}');
}

/// One event as a JSON object on one line. Names are the kernels' identifiers; the file path
/// is escaped by serde_json.
fn json_line(out: &mut String, variant: Variant, v: &EventView) {
    let index: Vec<String> = v.index.iter().map(usize::to_string).collect();
    let file = serde_json::to_string(v.file).unwrap_or_else(|_| "\"\"".to_string());
    let _ = write!(
        out,
        "{{\"seq\":{},\"variant\":\"{}\",\"pass\":\"{}\",\"phase\":\"{}\",\"op\":\"{}\",\"buffer\":\"{}\",\"level\":\"{}\",\"offset\":{},\"index\":[{}],\"value\":{},\"vars\":",
        v.seq,
        variant.name(),
        v.pass.name(),
        v.phase.name(),
        v.op.name(),
        v.buf.name(),
        v.level.name(),
        v.offset,
        index.join(","),
        json_number(v.value)
    );
    json_object(out, v.vars.iter().copied());
    out.push_str(",\"derived\":");
    json_object(out, v.derived.iter().map(|d| (d.name, d.value)));
    let _ = writeln!(out, ",\"file\":{file},\"line\":{}}}", v.line);
}

/// One event as CSV fields, in [`FIELDS`] order.
fn csv_record(variant: Variant, v: &EventView) -> [String; 14] {
    let pairs = |it: &mut dyn Iterator<Item = (&str, usize)>| {
        in_scope(it)
            .into_iter()
            .map(|(n, x)| format!("{n}={x}"))
            .collect::<Vec<_>>()
            .join(";")
    };
    [
        v.seq.to_string(),
        variant.name().to_string(),
        v.pass.name().to_string(),
        v.phase.name().to_string(),
        v.op.name().to_string(),
        v.buf.name().to_string(),
        v.level.name().to_string(),
        v.offset.to_string(),
        v.index.iter().map(usize::to_string).collect::<Vec<_>>().join(";"),
        format!("{:?}", v.value),
        pairs(&mut v.vars.iter().copied()),
        pairs(&mut v.derived.iter().map(|d| (d.name, d.value))),
        v.file.to_string(),
        v.line.to_string(),
    ]
}
