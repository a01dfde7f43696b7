//! `attn-trace grade SCENARIO TRACE.jsonl` and `attn-trace grade SCENARIO -- COMMAND ARGS…`:
//! a learner's own kernel graded access by access against the reference pass.

mod report;
mod runs;

use report::describe;
pub(crate) use runs::clean_up_after_signal;
use runs::run_program;

use super::{CliError, pass_arg, variant_arg};
use attn_trace_analysis::grade::{self, ATOL, Grade, RTOL};
use attn_trace_analysis::learner::bind::{Binder, Bindings};
use attn_trace_analysis::learner::check::{self, Asked};
use attn_trace_analysis::learner::import::{self, ImportError, Reader};
use attn_trace_analysis::learner::reference::Reference;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use serde::Serialize;
use std::ffi::OsString;
use std::io::{BufReader, Seek, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The exit code of a grade that finds the kernel wrong (0: right, 2: bad input, 1: anything
/// else).
pub(crate) const WRONG: u8 = 3;

/// Random inputs besides the scenario's own, without `--seeds`.
const DEFAULT_SEEDS: u64 = 3;
/// Seconds a run of the program may take, without `--timeout`.
const DEFAULT_TIMEOUT: u64 = 60;

/// Grade your own kernel's trace against the reference, access by access.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Two forms:
  attn-trace grade SCENARIO TRACE.jsonl         grade a trace your recorder wrote
  attn-trace grade SCENARIO -- COMMAND ARGS…    run your program and grade what it records: it
      finds the inputs file in $ATTN_TRACE_INPUTS and writes its trace to $ATTN_TRACE_OUT, on
      the scenario's own input and on --seeds more random ones (a kernel right only by luck is
      caught there), each within --timeout seconds

Your buffers may have any names and layouts: --bind FILE (or \"bind\" in the trace's header)
says how they lie over ours, e.g. llm.c's preatt as our scores, and its inp [B,T,3C] as q, k
and v side by side:
  preatt = \"scores\"
  [inp]
  q = { offset = 0,     strides = { b = \"T*3*C\", i = \"3*C\", h = \"D\", d = 1 } }
  k = { offset = \"C\",   strides = { b = \"T*3*C\", j = \"3*C\", h = \"D\", d = 1 } }
  v = { offset = \"2*C\", strides = { b = \"T*3*C\", j = \"3*C\", h = \"D\", d = 1 } }
(docs/your_kernel.md, \"Your names, your layout\").

The answer, in order: 1. results (every cell the pass writes, within 1e-4·|ref| + 1e-5·max(1,
max|ref|); cells no result depends on, at masked pairs, are not graded; a cell whose writes
read cells the reference's never read for it is wrong, right only by luck); 2. accesses (out
of bounds, reads before any write, accumulations lost, given cells never read, waste) and the
global reads and writes per buffer beside the reference's and flash's; 3. the first
divergence, with the reads that fed it on each side, hints, and the gallery mistake it
matches. Your loop order is yours: only final values, the cells read and access errors decide.

Exit codes: 0 your kernel is right, 3 your kernel is wrong (or your program failed),
2 bad input (the scenario, the trace, the command line), 1 anything else.

Examples:
  attn-trace inputs scenarios/mha_walkthrough.toml -o inputs.txt
  python3 examples/learner/attention.py inputs.txt trace.jsonl
  attn-trace grade scenarios/mha_walkthrough.toml trace.jsonl
  attn-trace grade scenarios/mha_walkthrough.toml -- python3 examples/learner/attention.py")]
pub(crate) struct Args {
    /// Scenario file (.toml).
    #[arg(value_name = "SCENARIO")]
    pub scenario: PathBuf,
    /// The trace your recorder wrote (JSON Lines with the header line).
    #[arg(
        value_name = "TRACE",
        required_unless_present = "command",
        conflicts_with = "command"
    )]
    pub trace: Option<PathBuf>,
    /// After `--`: your program and its arguments.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
    /// The reference kernel (default: the trace's header, else the scenario's [focus] variant).
    #[arg(long, value_parser = variant_arg())]
    pub variant: Option<Variant>,
    /// The pass (default: the trace's header, else forward).
    #[arg(long, value_parser = pass_arg())]
    pub pass: Option<Pass>,
    /// With `--`: how many random inputs besides the scenario's own [default: 3].
    #[arg(long, value_name = "N", value_parser = super::whole::<u64>, allow_negative_numbers = true)]
    pub seeds: Option<u64>,
    /// With `--`: seconds each run of your program may take, reading its trace included
    /// [default: 60].
    #[arg(long, value_name = "SECONDS", value_parser = super::whole::<u64>, allow_negative_numbers = true)]
    pub timeout: Option<u64>,
    /// How your buffers lie over the reference's tensors (TOML; replaces the trace header's
    /// \"bind\").
    #[arg(long, value_name = "FILE")]
    pub bind: Option<PathBuf>,
    /// Print the grade as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One input's outcome.
#[derive(Debug, Serialize)]
struct Outcome {
    input: u64,
    /// What went wrong running the program (the `--` form), when something did.
    #[serde(skip_serializing_if = "Option::is_none")]
    program: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    grade: Option<Grade>,
}

impl Outcome {
    fn correct(&self) -> bool {
        self.program.is_none() && self.grade.as_ref().is_some_and(Grade::correct)
    }
}

#[derive(Serialize)]
struct Report<'a> {
    scenario: String,
    variant: &'static str,
    pass: &'static str,
    verdict: &'static str,
    /// The first input the kernel got wrong.
    exposed_by: Option<u64>,
    tolerance: String,
    runs: &'a [Outcome],
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    // flags that only mean something for a program are not ignored with a trace file
    if args.trace.is_some() {
        let given = [("--seeds", args.seeds.is_some()), ("--timeout", args.timeout.is_some())];
        if let Some((flag, _)) = given.into_iter().find(|(_, given)| *given) {
            return Err(CliError::Input(tr!(
                "{flag} applies to a program run by grade SCENARIO -- COMMAND; a trace file is graded once: remove {flag}",
                flag
            )));
        }
    }
    let scenario = super::load(&args.scenario)?;
    let bindings = args
        .bind
        .as_deref()
        .map(Bindings::load)
        .transpose()
        .map_err(CliError::Input)?;
    let outcomes =
        match &args.trace {
            Some(trace) => {
                let shown = trace.display().to_string();
                let asked = Asked {
                    variant: args.variant,
                    pass: args.pass,
                    input: None,
                };
                let grade = grade_file(&scenario, &args.scenario, bindings.as_ref(), trace, &shown, asked, None)
                    .map_err(|e| match e {
                        Refused::Trace(why) => CliError::Input(why),
                        Refused::Other(e) => e,
                        // no time limit on a trace file
                        Refused::TimedOut => CliError::Failed(tr!("the trace could not be read in time").into()),
                    })?;
                vec![Outcome {
                    input: grade.input,
                    program: None,
                    grade: Some(grade),
                }]
            }
            None => run_program(&scenario, &args, bindings.as_ref())?,
        };
    let (variant, pass) = outcomes
        .iter()
        .find_map(|o| o.grade.as_ref().map(|g| (g.variant, g.pass)))
        .map_or_else(
            || check::choose(&scenario, &args.scenario, args.variant, args.pass).map_err(CliError::Input),
            Ok,
        )?;
    let exposed_by = outcomes.iter().find(|o| !o.correct()).map(|o| o.input);
    let mut out = std::io::stdout().lock();
    if args.json {
        let report = Report {
            scenario: args.scenario.display().to_string(),
            variant: variant.name(),
            pass: pass.name(),
            verdict: if exposed_by.is_none() { "correct" } else { "wrong" },
            exposed_by,
            tolerance: format!("{RTOL:e}·|ref| + {ATOL:e}·max(1, max|ref|)"),
            runs: &outcomes,
        };
        let text = serde_json::to_string_pretty(&report).map_err(|e| CliError::Other(e.into()))?;
        writeln!(out, "{text}")?;
    } else {
        let shown = exposed_by.map_or(0, |k| outcomes.iter().position(|o| o.input == k).unwrap_or(0));
        let text = describe(&args, &outcomes, shown, variant, pass);
        out.write_all(text.as_bytes())?;
    }
    out.flush()?;
    match exposed_by {
        None => Ok(()),
        Some(_) => Err(CliError::Graded),
    }
}

/// Why a trace was not graded.
enum Refused {
    /// The trace is at fault (malformed, or not of this scenario, these sizes, these flags): one
    /// line naming its line and field.
    Trace(String),
    /// It could not be read before the deadline.
    TimedOut,
    /// Anything else (the scenario's reference cannot run).
    Other(CliError),
}

/// A reader that fails once `deadline` has passed: a program's trace is read within the same
/// time limit as the program ran, however long the trace.
struct Until<R> {
    inner: R,
    deadline: Option<Instant>,
}

impl<R: std::io::Read> std::io::Read for Until<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                tr!("out of time").to_string(),
            ));
        }
        self.inner.read(buf)
    }
}

/// Grades the trace at `path` (named `shown` in messages): opened once, without blocking (a
/// FIFO or a device is refused, not waited on), its header checked against the scenario and
/// what was `asked` ([`check::header`], as `tui --mine` checks it), read twice from its start,
/// and before `deadline` when there is one.
fn grade_file(
    scenario: &Scenario,
    scenario_path: &Path,
    bindings: Option<&Bindings>,
    path: &Path,
    shown: &str,
    asked: Asked,
    deadline: Option<Instant>,
) -> Result<Grade, Refused> {
    let file = import::open(path, shown).map_err(|e| Refused::Trace(e.to_string()))?;
    let timed_out = || deadline.is_some_and(|d| Instant::now() >= d);
    let import = |e: ImportError| {
        if timed_out() {
            Refused::TimedOut
        } else {
            Refused::Trace(e.to_string())
        }
    };
    // the second reading starts again from the top of the one file opened
    let from_start = || {
        file.try_clone()
            .and_then(|mut f| f.seek(SeekFrom::Start(0)).map(|_| f))
            .map(|f| BufReader::new(Until { inner: f, deadline }))
            .map_err(|e| Refused::Trace(tr!("{file}: cannot read the trace: {e}", file = shown, e).to_string()))
    };
    let mut reader = Reader::new(from_start()?, shown).map_err(import)?;
    let header = reader.header().clone();
    let (variant, pass) = check::header(&header, shown, scenario, scenario_path, asked).map_err(Refused::Trace)?;
    let reference = Reference::new(scenario, variant, pass, header.input)
        .map_err(|e| Refused::Other(CliError::Input(format!("{}: {e}", scenario_path.display()))))?;
    // the bindings are the user's input: a mapping that does not fit is refused as bad input
    let declared = bindings.or(header.bind.as_ref()).cloned().unwrap_or_default();
    let mut binder = Binder::new(&declared, &reference).map_err(|e| Refused::Other(CliError::Input(e)))?;
    let graded = grade::grade(&reference, &mut reader, &mut binder, scenario).map_err(|mut e| {
        e.path = shown.to_string();
        import(e)
    })?;
    let again = Reader::new(from_start()?, shown).map_err(import)?;
    graded.with_mine_reads(&reference, again, &mut binder).map_err(import)
}
