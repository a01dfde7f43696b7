//! `attn-trace trace SCENARIO`: exports the event log, one event per line (JSON Lines, CSV) or row
//! (Parquet), or as an address trace (din, lackey).

use super::{CliError, Output, buffer_arg, pass_arg, phase_arg, variant_arg};
use attn_trace_analysis::export::{self, Filter};
use attn_trace_analysis::learner;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::{Buf, Pass, Phase};
use attn_trace_i18n::tr;
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
  variant  the kernel: one of --variant's values above      pass  forward | backward
  phase    one of --phase's values above (a backward phase ends in _back)
  op       read | write (a += is recorded as a read of the old value, then a write)
  buffer   one of --buffer's values above (a gradient's name starts with d_)
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
parquet (needs -o FILE) has the JSON Lines fields as typed columns, index a list, and instead of
vars and derived one nullable INT64 column per loop name (bb, hh, i, j, d, q_base ...; docs/exports.md).

Examples:
  attn-trace trace scenarios/indexing_trace.toml --phase scores
  attn-trace trace scenarios/mha_walkthrough.toml --variant mha --buffer scores --format csv -o scores.csv
  attn-trace trace scenarios/mha_walkthrough.toml -o t.jsonl
  attn-trace trace scenarios/flash.toml --variant flash --pass forward --format din -o flash.din
  attn-trace trace scenarios/mha_walkthrough.toml --format parquet -o trace.parquet
  duckdb -c \"SELECT buffer, count(*) FROM 'trace.parquet' WHERE op = 'read' GROUP BY buffer\"
  python -c \"import pandas as pd; print(pd.read_json('t.jsonl', lines=True).head())\"")]
pub(crate) struct Args {
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
pub(crate) enum Format {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
    /// Dinero's address trace: "0 ADDR" read, "1 ADDR" write (hexadecimal).
    Din,
    /// Valgrind lackey's: " L ADDR,4" load, " S ADDR,4" store.
    Lackey,
    /// Apache Parquet: the JSON Lines fields as typed columns, a column per loop name (needs -o).
    Parquet,
}

fn level_arg() -> impl clap::builder::TypedValueParser<Value = Level> {
    super::names_parser(&[Level::Global, Level::Tile], Level::name)
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    if args.format == Format::Parquet && args.output.is_none() {
        return Err(parquet_needs_file());
    }
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
    let result = if args.format == Format::Parquet {
        match output.file_writer() {
            Some(w) => export_parquet(&scenario, &variants, &args, w),
            None => Err(parquet_needs_file()),
        }
    } else {
        export(&scenario, &variants, &args, output.writer())
    };
    let written = match result {
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
        Format::Parquet => return Err(parquet_needs_file()),
    };
    let filter = filter(args);
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
            let rec = attn_trace_core::engine::run_into(&inputs, variant, scenario.passes, |registry| {
                export::AddressWriter::new(registry, filter, format, &mut *w)
            });
            written += rec.finish()?;
            continue;
        }
        let run = attn_trace_core::engine::run_unindexed(&inputs, variant, scenario.passes);
        let Some(trace) = &run.trace else { continue };
        let mut bar = Bar::new(bar_wanted, trace, variant, &filter, Some(format));
        let done = export::write_events(trace, variant, &filter, format, w, |events, bytes| {
            bar.update(events, bytes);
        });
        bar.finish();
        written += done?;
    }
    Ok(usize::try_from(written).unwrap_or(usize::MAX))
}

/// The filters of `args`.
fn filter(args: &Args) -> Filter {
    Filter {
        pass: args.pass,
        phase: args.phase,
        buffer: args.buffer,
        level: args.level,
    }
}

/// Parquet goes to a file only (checked before anything runs): bytes for no terminal, and a
/// reader seeks to the footer first.
fn parquet_needs_file() -> CliError {
    CliError::Input(tr!("--format parquet writes a binary file: name it with -o FILE").to_string())
}

/// Writes the events that pass the filters to `w` as Parquet; returns how many. The loop columns
/// are fixed before the first row: the first variant's trace gives its names, each further
/// variant a run that keeps no log; then the traces are recorded and written one at a time.
fn export_parquet(
    scenario: &Scenario,
    variants: &[Variant],
    args: &Args,
    w: &mut (dyn std::io::Write + Send),
) -> Result<usize, CliError> {
    use attn_trace_analysis::parquet_export::{LoopNames, NameCollector, ParquetWriter};
    let filter = filter(args);
    let bar_wanted = std::io::stderr().is_terminal();
    let mistaken = scenario.mistaken_inputs().filter(|_| args.mistaken);
    let inputs = || match &mistaken {
        Some(inputs) => inputs.clone(),
        None => scenario.inputs(),
    };
    let mut names = LoopNames::default();
    let mut first = None;
    for (k, &variant) in variants.iter().enumerate() {
        if k == 0 {
            let run = attn_trace_core::engine::run_unindexed(&inputs(), variant, scenario.passes);
            if let Some(trace) = &run.trace {
                names.add_trace(trace, &filter);
            }
            first = Some(run);
        } else {
            let collector = attn_trace_core::engine::run_into(&inputs(), variant, scenario.passes, |registry| {
                NameCollector::new(registry, filter)
            });
            names.merge(&collector.names);
        }
    }
    let header = header_line(
        scenario,
        &args.scenario,
        variants,
        args.pass.or(args.phase.map(Phase::pass)),
    );
    let metadata = vec![("attn-trace".to_string(), header.trim_end().to_string())];
    let mut writer = ParquetWriter::new(w, &names, metadata)?;
    let mut written = 0;
    for (k, &variant) in variants.iter().enumerate() {
        // only one variant's trace is alive at a time
        let run = match first.take() {
            Some(run) if k == 0 => run,
            _ => attn_trace_core::engine::run_unindexed(&inputs(), variant, scenario.passes),
        };
        let Some(trace) = &run.trace else { continue };
        let mut bar = Bar::new(bar_wanted, trace, variant, &filter, None);
        let done = writer.write_trace(trace, variant, &filter, |events, bytes| bar.update(events, bytes));
        bar.finish();
        written += done?;
    }
    if written > 0 {
        writer.finish()?;
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
        trace: &attn_trace_core::trace::Trace,
        variant: Variant,
        filter: &Filter,
        format: Option<export::Format>,
    ) -> Bar {
        let quiet = Bar {
            bar: None,
            start: Instant::now(),
            shown: false,
        };
        if !wanted || (trace.len() as u64) < Self::LONG {
            return quiet;
        }
        // Parquet's size is known only once its columns are encoded
        let (events, bytes) = match format {
            Some(format) => export::estimate(trace, variant, filter, format),
            None => (export::count(trace, filter), 0),
        };
        if events < Self::LONG {
            return quiet;
        }
        let thousands = attn_trace_analysis::format::thousands(events);
        let announce = match format {
            Some(_) => tr!(
                "{variant}: {events} events, about {size}",
                variant = variant.name(),
                events = thousands,
                size = indicatif::HumanBytes(bytes)
            ),
            None => tr!(
                "{variant}: {events} events",
                variant = variant.name(),
                events = thousands
            ),
        };
        let _ = writeln!(std::io::stderr(), "{announce}");
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
/// variant and pass when the export holds one of each, and the sizes (docs/your_kernel.md). It
/// holds one layer, the scenario's own values: `L` is 1.
fn header_line(scenario: &Scenario, path: &std::path::Path, variants: &[Variant], pass: Option<Pass>) -> String {
    let pass = pass.or(match (scenario.passes.forward, scenario.passes.backward) {
        (true, false) => Some(Pass::Forward),
        (false, true) => Some(Pass::Backward),
        _ => None,
    });
    let variant = match variants {
        [one] => Some(*one),
        _ => None,
    };
    let path = path.display().to_string();
    learner::trace_header(Some(&path), variant, pass, 0, &learner::dims(scenario.shape, 1)) + "\n"
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    format!("[{}]", it.map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", "))
}
