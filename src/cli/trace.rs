//! `attn-trace trace SCENARIO`: exports the event log, one event per line, as JSON Lines or CSV.

use super::{CliError, Output, buffer_arg, pass_arg, phase_arg, variant_arg};
use attn_trace::analysis::export::{self, Filter};
use attn_trace::kernels::Variant;
use attn_trace::learner;
use attn_trace::scenario::Scenario;
use attn_trace::tensor::Level;
use attn_trace::tr;
use attn_trace::trace::{Buf, Pass, Phase};
use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
din and lackey are address traces for cache simulators (docs/caches.md): one access per line,
\"0 ADDR\" / \"1 ADDR\" (Dinero: read / write) or \" L ADDR,4\" / \" S ADDR,4\" (Valgrind lackey), ADDR
in hexadecimal: each buffer one allocation in registry order, 64-byte aligned, from address 0;
tile-local buffers from 0x10000000000 (--level global leaves them out).

Examples:
  attn-trace trace scenarios/indexing_trace.toml --phase scores
  attn-trace trace scenarios/mha_walkthrough.toml --variant mha --buffer scores --format csv -o scores.csv
  attn-trace trace scenarios/mha_walkthrough.toml -o t.jsonl
  attn-trace trace scenarios/flash.toml --variant flash --pass forward --format din -o flash.din
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
    /// Only accesses of this memory level: global, or tile (a tiled kernel's on-chip working set).
    #[arg(long, value_name = "LEVEL", value_parser = level_arg())]
    pub level: Option<Level>,
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
    /// Dinero's address trace: "0 ADDR" read, "1 ADDR" write (hexadecimal).
    Din,
    /// Valgrind lackey's: " L ADDR,4" load, " S ADDR,4" store.
    Lackey,
}

fn level_arg() -> impl clap::builder::TypedValueParser<Value = Level> {
    super::names_parser(&[Level::Global, Level::Tile], Level::name)
}

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
    let format = match args.format {
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
            export::Format::Jsonl
        }
        Format::Csv => {
            w.write_all(export::FIELDS.join(",").as_bytes())?;
            w.write_all(b"\n")?;
            export::Format::Csv
        }
        Format::Din => export::Format::Din,
        Format::Lackey => export::Format::Lackey,
    };
    let filter = Filter {
        pass: args.pass,
        phase: args.phase,
        buffer: args.buffer,
        level: args.level,
    };
    let mut written = 0;
    // a bar on standard error, when it is a terminal and the events do not go to it
    let bar_wanted = std::io::stderr().is_terminal() && (args.output.is_some() || !std::io::stdout().is_terminal());
    let mistaken = scenario.mistaken_inputs().filter(|_| args.mistaken);
    // only one variant's trace is alive at a time
    for &variant in variants {
        let inputs = match &mistaken {
            Some(inputs) => inputs.clone(),
            None => scenario.inputs(),
        };
        if matches!(format, export::Format::Din | export::Format::Lackey) {
            // no log: each access is written as the kernels make it
            let rec = attn_trace::engine::run_into(&inputs, variant, scenario.passes, |registry| {
                export::AddressWriter::new(registry, filter, format, &mut *w)
            });
            written += rec.finish()?;
            continue;
        }
        let run = attn_trace::engine::run_unindexed(&inputs, variant, scenario.passes);
        let Some(trace) = &run.trace else { continue };
        let mut bar = Bar::new(bar_wanted, trace, variant, &filter, format);
        let done = export::write_events(trace, variant, &filter, format, w, |events, bytes| {
            bar.update(events, bytes);
        });
        bar.finish();
        written += done?;
    }
    Ok(usize::try_from(written).unwrap_or(usize::MAX))
}

/// The progress of a long export: announced before it starts (events, and the size they will
/// take), then a bar with the events, the bytes written and the time left, once it has run a
/// second. Nothing for an export of fewer than two million events.
struct Bar {
    bar: Option<indicatif::ProgressBar>,
    start: Instant,
    shown: bool,
}

impl Bar {
    /// Events below which an export is quick enough to need no bar.
    const LONG: u64 = 2_000_000;

    fn new(
        wanted: bool,
        trace: &attn_trace::trace::Trace,
        variant: Variant,
        filter: &Filter,
        format: export::Format,
    ) -> Bar {
        let quiet = Bar {
            bar: None,
            start: Instant::now(),
            shown: false,
        };
        if !wanted || (trace.len() as u64) < Self::LONG {
            return quiet;
        }
        let (events, bytes) = export::estimate(trace, variant, filter, format);
        if events < Self::LONG {
            return quiet;
        }
        let _ = writeln!(
            std::io::stderr(),
            "{}",
            tr!(
                "{variant}: {events} events, about {size}",
                variant = variant.name(),
                events = attn_trace::analysis::format::thousands(events),
                size = indicatif::HumanBytes(bytes)
            )
        );
        let bar =
            indicatif::ProgressBar::with_draw_target(Some(trace.len() as u64), indicatif::ProgressDrawTarget::hidden());
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{bar:30} {human_pos}/{human_len} events · {msg} · {eta} left")
        {
            bar.set_style(style);
        }
        Bar {
            bar: Some(bar),
            ..quiet
        }
    }

    fn update(&mut self, events: u64, bytes: u64) {
        let Some(bar) = &self.bar else { return };
        if !self.shown && self.start.elapsed() > Duration::from_secs(1) {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            self.shown = true;
        }
        bar.set_position(events);
        bar.set_message(indicatif::HumanBytes(bytes).to_string());
    }

    fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
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

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    format!("[{}]", it.map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", "))
}
