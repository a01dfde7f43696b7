//! `attn-trace grade SCENARIO TRACE.jsonl` and `attn-trace grade SCENARIO -- COMMAND ARGS…`:
//! a learner's own kernel graded access by access against the reference pass.

use super::program::{self, Program};
use super::{CliError, pass_arg, variant_arg};
use attn_trace_analysis::format::thousands;
use attn_trace_analysis::grade::{self, ATOL, Divergence, Finding, Grade, Kind, RTOL, Touch};
use attn_trace_analysis::learner::bind::{Binder, Bindings};
use attn_trace_analysis::learner::check::{self, Asked};
use attn_trace_analysis::learner::import::{self, ImportError, Reader};
use attn_trace_analysis::learner::reference::Reference;
use attn_trace_analysis::learner::{ENV_INPUTS, ENV_OUT, inputs};
use attn_trace_core::files::input::{ReadError, human_bytes};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use serde::Serialize;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{BufReader, Seek, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

/// What a signal must clean up while `grade -- COMMAND` runs: the program's process group while
/// it runs, and the temporary directory from its creation until it is removed.
struct Running {
    group: Option<u32>,
    dir: Option<PathBuf>,
}

static RUNNING: Mutex<Running> = Mutex::new(Running { group: None, dir: None });

fn running() -> std::sync::MutexGuard<'static, Running> {
    RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Kills the program being graded and everything it started, and removes the temporary
/// directory: called by the signal handler before the process exits, whatever `grade` was
/// doing (running the program, reading its trace, writing the next inputs).
pub(crate) fn clean_up_after_signal() {
    let (group, dir) = {
        let mut r = running();
        (r.group.take(), r.dir.take())
    };
    if let Some(pid) = group {
        program::kill_group(pid);
    }
    program::end_descendants();
    if let Some(dir) = dir {
        // the main thread may be removing it too: until it is gone
        for _ in 0..3 {
            if std::fs::remove_dir_all(&dir).is_ok() || !dir.exists() {
                break;
            }
        }
    }
}

/// Unregisters the temporary directory from [`RUNNING`] when dropped: declared before the
/// directory, so the directory is removed first and a signal in between still removes it.
struct Registered;

impl Drop for Registered {
    fn drop(&mut self) {
        running().dir = None;
    }
}

/// Where `$ATTN_TRACE_OUT` is, in messages: the temporary path is gone by the time they are
/// read.
const OUT: &str = "$ATTN_TRACE_OUT";

/// Runs the learner's program on input 0 and `--seeds` random ones, grading each trace.
fn run_program(scenario: &Scenario, args: &Args, bindings: Option<&Bindings>) -> Result<Vec<Outcome>, CliError> {
    let (variant, pass) = check::choose(scenario, &args.scenario, args.variant, args.pass).map_err(CliError::Input)?;
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| CliError::Input(tr!("grade: give a TRACE file or a command after --").into()))?;
    let timeout = args.timeout.unwrap_or(DEFAULT_TIMEOUT);
    program::become_subreaper();
    let registered = Registered;
    let dir = tempfile::Builder::new()
        .prefix("attn-trace-grade-")
        .tempdir()
        .map_err(|e| CliError::Failed(tr!("cannot create a temporary directory: {e}", e)))?;
    running().dir = Some(dir.path().to_path_buf());
    let mut outcomes = Vec::new();
    for k in 0..=args.seeds.unwrap_or(DEFAULT_SEEDS) {
        let reference = Reference::new(scenario, variant, pass, k)
            .map_err(|e| CliError::Input(format!("{}: {e}", args.scenario.display())))?;
        let inputs_path = dir.path().join(format!("inputs-{k}.txt"));
        let trace_path = dir.path().join(format!("trace-{k}.jsonl"));
        let write = std::fs::File::create(&inputs_path).and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            inputs::write(&mut w, &reference, scenario, &args.scenario.display().to_string())?;
            w.flush()
        });
        write.map_err(|e| CliError::Failed(tr!("cannot write the inputs file: {e}", e)))?;
        drop(reference);
        let mut cmd = Command::new(program);
        cmd.args(rest)
            .env(ENV_INPUTS, &inputs_path)
            .env(ENV_OUT, &trace_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        let deadline = Instant::now() + Duration::from_secs(timeout);
        let mut failure = run_once(&mut cmd, program, deadline, timeout)?;
        if failure.is_none() {
            let asked = Asked {
                variant: Some(variant),
                pass: Some(pass),
                input: Some(k),
            };
            match grade_file(
                scenario,
                &args.scenario,
                bindings,
                &trace_path,
                OUT,
                asked,
                Some(deadline),
            ) {
                Ok(grade) => outcomes.push(Outcome {
                    input: k,
                    program: None,
                    grade: Some(grade),
                }),
                Err(Refused::Other(e)) => return Err(e),
                Err(Refused::TimedOut) => {
                    failure = Some(
                        tr!(
                            "wrote a trace too long to read within {secs} s (--timeout)",
                            secs = timeout
                        )
                        .to_string(),
                    );
                }
                Err(Refused::Trace(why)) => failure = Some(trace_failure(&trace_path, why)),
            }
        }
        if let Some(why) = failure {
            // a full temporary folder is not the learner's doing
            if let Some(free) = nearly_full(dir.path()) {
                let folder = dir.path().parent().unwrap_or(dir.path());
                return Err(CliError::Failed(tr!(
                    "the temporary folder {folder} is full ({free} free), so your program could not run there; free some space or set TMPDIR to a folder with room",
                    folder = folder.display(),
                    free = human_bytes(free)
                )));
            }
            outcomes.push(Outcome {
                input: k,
                program: Some(why),
                grade: None,
            });
        }
        let _ = std::fs::remove_file(&trace_path);
        if !outcomes.last().is_some_and(Outcome::correct) {
            // the verdict is in: the input that exposed the kernel is shown
            break;
        }
    }
    // removed before it is unregistered (see `Registered`)
    let removed = dir.close();
    drop(registered);
    removed.map_err(|e| CliError::Failed(tr!("cannot remove the temporary directory: {e}", e)))?;
    Ok(outcomes)
}

/// What the program did wrong when its trace cannot be graded: `why` names the trace as
/// `$ATTN_TRACE_OUT`.
fn trace_failure(trace: &Path, why: String) -> String {
    match attn_trace_core::files::input::open_regular(trace) {
        Err(ReadError::NotFound) => tr!("finished without writing a trace to $ATTN_TRACE_OUT").into(),
        Err(e @ ReadError::NotRegular(_)) => tr!(
            "left something that is not a file at $ATTN_TRACE_OUT: it {what}",
            what = e.to_string()
        )
        .to_string(),
        _ => tr!("wrote a trace that cannot be read: {why}", why).to_string(),
    }
}

/// Free bytes of the filesystem `dir` is on, when they are too few for a trace (64 KiB).
fn nearly_full(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: statvfs reads a NUL-terminated path and writes one struct, which lives in
        // this frame; zeroed is a valid value of that plain C struct.
        #[allow(unsafe_code)]
        let (rc, st) = unsafe {
            let mut st: libc::statvfs = std::mem::zeroed();
            (libc::statvfs(c.as_ptr(), &raw mut st), st)
        };
        #[allow(clippy::unnecessary_cast, reason = "the fields are u64 on Linux, not on every unix")]
        let free = (st.f_bavail as u64).saturating_mul(st.f_frsize as u64);
        (rc == 0 && free < 64 << 10).then_some(free)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// Runs the program once, until `deadline`; `Some(why)` when it did not finish well.
fn run_once(
    cmd: &mut Command,
    program: &OsString,
    deadline: Instant,
    timeout: u64,
) -> Result<Option<String>, CliError> {
    let mut child = Program::spawn(cmd).map_err(|e| {
        CliError::Input(tr!(
            "cannot run {program}: {e}",
            program = Path::new(program).display(),
            e
        ))
    })?;
    running().group = Some(child.id());
    let status = child.wait(deadline);
    running().group = None;
    // a signal's clean-up may have killed and reaped the program under this wait
    super::wait_if_ending();
    let status = status.map_err(|e| CliError::Failed(tr!("cannot wait for the program: {e}", e)))?;
    let tail = |child: &mut Program| child.tail(5).iter().map(|l| format!("\n    {l}")).collect::<String>();
    let failure = match status {
        None => Some(
            tr!(
                "did not finish within {secs} s (--timeout) and was stopped",
                secs = timeout
            )
            .to_string(),
        ),
        Some(s) if !s.success() => Some(match s.code() {
            Some(code) => format!("{}{}", tr!("exited with status {code}", code), tail(&mut child)),
            None => format!("{}{}", tr!("was killed by a signal"), tail(&mut child)),
        }),
        Some(_) => None,
    };
    Ok(failure)
}

/// A value with six significant digits.
fn v(x: f32) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if (-4..6).contains(&mag) {
        let decimals = usize::try_from(5 - mag).unwrap_or(0);
        format!("{x:.decimals$}")
    } else {
        format!("{x:.5e}")
    }
}

/// An access as its side made it: `q[10]=0.25`; the learner's with the reference cell when
/// their buffer or offset differ from ours (`inp[37]=0.25 (q[b0 i2 h1 d0])`), the cell's notes,
/// and ✗ before a read the reference does not make there.
fn touch(t: &Touch) -> String {
    let mut s = format!(
        "{}{}[{}]={}",
        if t.stray { "✗" } else { "" },
        t.buffer,
        t.offset,
        v(t.value)
    );
    let ours = format!("{}[", t.buffer);
    let notes: Vec<String> = t
        .cell
        .iter()
        .filter(|c| !c.starts_with(&ours) || t.buffer.is_empty())
        .cloned()
        .chain(t.note.clone())
        .collect();
    if !notes.is_empty() {
        let _ = write!(s, " ({})", notes.join("; "));
    }
    s
}

fn touches(list: &[Touch], more: usize) -> String {
    let mut s = list.iter().map(touch).collect::<Vec<_>>().join(" ");
    if more > 0 {
        let _ = write!(s, " {}", tr!("and {n} more", n = more));
    }
    if s.is_empty() {
        s = tr!("no read since the write before it").into();
    }
    s
}

/// The plain-text report: every input's verdict, then the full grade of input `shown`.
fn describe(args: &Args, outcomes: &[Outcome], shown: usize, variant: Variant, pass: Pass) -> String {
    let mut s = String::new();
    let scenario = args.scenario.display();
    let source = args.trace.as_ref().map_or_else(
        || {
            args.command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        },
        |t| t.display().to_string(),
    );
    let _ = writeln!(
        s,
        "{}",
        tr!(
            "Grading {source} against the {variant} {pass} pass of {scenario}",
            source,
            variant = variant.name(),
            pass = pass.name(),
            scenario
        )
    );
    if args.trace.is_none() {
        for o in outcomes {
            let which = if o.input == 0 {
                tr!("input 0 (the scenario's own)").to_string()
            } else {
                tr!("input {k} (random)", k = o.input).to_string()
            };
            let verdict = match (&o.program, &o.grade) {
                (Some(why), _) => tr!("your program {why}", why).to_string(),
                (None, Some(g)) if g.correct() => tr!("right").into(),
                (None, _) => tr!("wrong").into(),
            };
            let _ = writeln!(s, "  {which}: {verdict}");
        }
    }
    let Some(o) = outcomes.get(shown) else { return s };
    if let Some(g) = &o.grade {
        if args.trace.is_none() {
            let _ = writeln!(s, "\n{}", tr!("Input {k} in detail:", k = o.input));
        }
        let _ = writeln!(s, "{}", tr!("{n} accesses recorded", n = thousands(g.events)));
        results(&mut s, g);
        accesses(&mut s, g);
        divergence(&mut s, g, args);
    }
    let verdict = if outcomes.iter().all(Outcome::correct) {
        tr!("Verdict: right. Results within tolerance and no access errors.").to_string()
    } else if outcomes.len() > 1 && outcomes.first().is_some_and(Outcome::correct) && o.program.is_none() {
        tr!(
            "Verdict: wrong. Right on the scenario's own input, wrong on random input {k}: right there only by luck.",
            k = o.input
        )
        .to_string()
    } else {
        tr!("Verdict: wrong.").to_string()
    };
    let _ = writeln!(s, "\n{verdict}");
    s
}

fn results(s: &mut String, g: &Grade) {
    let wrong = g.results.iter().filter(|r| r.wrong + r.missing + r.misread > 0).count();
    let _ = writeln!(
        s,
        "\n1. {}",
        if wrong == 0 {
            tr!(
                "Results: right (within {rtol}·|ref| + {atol}·max(1, max|ref|))",
                rtol = format!("{RTOL:e}"),
                atol = format!("{ATOL:e}")
            )
            .to_string()
        } else {
            tr!("Results: {wrong} of {n} buffers wrong", wrong, n = g.results.len()).to_string()
        }
    );
    for r in &g.results {
        let name = r.buffer.name();
        let line = match &r.first {
            None => tr!("✓ {name}: {n} cells right", name, n = r.cells).to_string(),
            Some(_) if r.missing == r.cells => {
                tr!("✗ {name}: never written ({n} cells expected)", name, n = r.cells).to_string()
            }
            Some(c) if r.wrong + r.missing == 0 => {
                let read = c.stray.as_ref().map(|st| touch(&st.read)).unwrap_or_default();
                tr!(
                    "✗ {name}: {bad} of {n} cells right only by luck, computed from cells the reference does not read for them; first {name}[{index}] from {read}",
                    name,
                    bad = r.misread,
                    n = r.cells,
                    index = c.index,
                    read
                )
                .to_string()
            }
            Some(c) => {
                let first = match c.mine {
                    // the value agrees: what is wrong is where it came from
                    Some(m) if c.right => tr!(
                        "first {name}[{index}] = {mine} as the reference's, but computed from {read}, which the reference does not read for it",
                        name,
                        index = c.index,
                        mine = v(m),
                        read = c.stray.as_ref().map(|st| touch(&st.read)).unwrap_or_default()
                    )
                    .to_string(),
                    Some(m) => tr!(
                        "first {name}[{index}] = {mine}, the reference has {reference}",
                        name,
                        index = c.index,
                        mine = v(m),
                        reference = v(c.reference)
                    )
                    .to_string(),
                    None => tr!(
                        "first {name}[{index}] never written, the reference has {reference}",
                        name,
                        index = c.index,
                        reference = v(c.reference)
                    )
                    .to_string(),
                };
                tr!(
                    "✗ {name}: {bad} of {n} cells wrong or missing; {first}",
                    name,
                    bad = r.wrong + r.missing + r.misread,
                    n = r.cells,
                    first
                )
                .to_string()
            }
        };
        let unneeded = if r.unneeded > 0 {
            tr!(
                " (not graded: {n} more at pairs the mask hides, which no result depends on)",
                n = r.unneeded
            )
            .to_string()
        } else {
            String::new()
        };
        let _ = writeln!(s, "   {line}{unneeded}");
    }
}

fn finding(f: &Finding) -> String {
    let name = f.buffer.as_str();
    let site = format!("{}:{}", f.at.file, f.at.line);
    // past the lines listed, one finding counts the others
    let at = if f.elsewhere {
        tr!("other lines (the first {site})", site).to_string()
    } else {
        site
    };
    let times = if f.count > 1 {
        tr!(" ({n} times)", n = thousands(f.count)).to_string()
    } else {
        String::new()
    };
    // the reference cell an offset of the learner's is, when their layout is not ours
    let cell = f.cell.as_ref().map(|c| format!(" ({c})")).unwrap_or_default();
    match f.kind {
        Kind::OutOfBounds => tr!(
            "✗ {op} of {name}[{offset}] outside the buffer ({size} cells) at {at}{times}",
            op = f.op,
            name,
            offset = f.offset,
            size = f.size.unwrap_or(0),
            at,
            times
        )
        .to_string(),
        Kind::Unmapped => tr!(
            "✗ {op} of {name}[{offset}] at {at}: no view of its binding is there ({name} holds {holds}){times}",
            op = f.op,
            name,
            offset = f.offset,
            holds = f.holds.as_deref().unwrap_or("?"),
            at,
            times
        )
        .to_string(),
        Kind::Uninitialised => tr!(
            "✗ read of {name}[{offset}]{cell} before anything wrote it (nobody gives {name}: it starts empty) at {at}{times}",
            name,
            offset = f.offset,
            cell,
            at,
            times
        )
        .to_string(),
        Kind::LostAccumulation => tr!(
            "✗ write of {name}[{offset}] at {at} lost: written again before any read, where the reference adds into the cell{times}",
            name,
            offset = f.offset,
            at,
            times
        )
        .to_string(),
        Kind::NeverRead => match &f.cell {
            None => tr!("✗ never reads {name}: your results cannot depend on it", name).to_string(),
            Some(first) => tr!(
                "✗ never reads {n} cells of {name} the results depend on (first {first}): your results cannot depend on them",
                n = thousands(f.count),
                name,
                first
            )
            .to_string(),
        },
        Kind::Overwritten => tr!(
            "· write of {name}[{offset}] at {at} overwritten before any read (harmless here: nothing accumulates){times}",
            name,
            offset = f.offset,
            at,
            times
        )
        .to_string(),
        Kind::Waste => tr!(
            "· {n} reads of {name} cells the reference never reads (waste, not an error), the first at {at}",
            n = thousands(f.count),
            name,
            at
        )
        .to_string(),
        Kind::MaskedWaste => tr!(
            "· {n} reads of {name} feed only masked scores, whose products the mask throws away (waste, not an error), the first at {at}",
            n = thousands(f.count),
            name,
            at
        )
        .to_string(),
        Kind::ExtraWrites => tr!(
            "· {n} writes of {name} cells the reference's pass does not write, the first at {at}",
            n = thousands(f.count),
            name,
            at
        )
        .to_string(),
    }
}

fn accesses(s: &mut String, g: &Grade) {
    let errors = g.errors();
    let _ = writeln!(
        s,
        "\n2. {}",
        if errors == 0 {
            tr!("Accesses: no errors").to_string()
        } else {
            tr!(
                "Accesses: {errors} {what}",
                errors,
                what = if errors == 1 { tr!("error") } else { tr!("errors") }
            )
            .to_string()
        }
    );
    for f in &g.findings {
        let _ = writeln!(s, "   {}", finding(f));
    }
    let _ = writeln!(s, "   {}", tr!("Global reads / writes per buffer:"));
    let flash = g.traffic.iter().any(|t| t.flash_reads.is_some());
    let mut head = format!("     {:<12} {:>16} {:>16}", "", tr!("yours"), tr!("reference"));
    if flash {
        let _ = write!(head, " {:>16}", tr!("flash"));
    }
    let _ = writeln!(s, "{}", head.trim_end());
    let pair = |r: u64, w: u64| format!("{} / {}", thousands(r), thousands(w));
    for t in &g.traffic {
        let mut line = format!(
            "     {:<12} {:>16} {:>16}",
            t.buffer.name(),
            pair(t.reads, t.writes),
            pair(t.reference_reads, t.reference_writes)
        );
        if flash {
            let cell = match (t.flash_reads, t.flash_writes) {
                (Some(r), Some(w)) => pair(r, w),
                // flash keeps no such buffer in global memory
                _ => "—".to_string(),
            };
            let _ = write!(line, " {cell:>16}");
        }
        let _ = writeln!(s, "{line}");
    }
}

fn divergence(s: &mut String, g: &Grade, args: &Args) {
    let Some(d) = &g.divergence else {
        let _ = writeln!(
            s,
            "\n3. {}",
            tr!("No divergence: every cell agrees with the reference.")
        );
        for h in &g.hints {
            let _ = writeln!(s, "   {}", tr!("Hint: {h}", h));
        }
        return;
    };
    let Divergence { cell, .. } = d;
    let name = cell.buffer.name();
    let event = if d.reference_layer > 0 {
        tr!("layer {l}'s event #{n}", l = d.reference_layer, n = d.reference_event).to_string()
    } else {
        tr!("event #{n}", n = d.reference_event).to_string()
    };
    let _ = writeln!(
        s,
        "\n3. {}",
        tr!(
            "First divergence: the reference's {event} ({file}:{line}) writes {name}[{index}] = {value}",
            event,
            file = d.reference_file,
            line = d.reference_line,
            name,
            index = cell.index,
            value = v(cell.reference)
        )
    );
    let _ = writeln!(
        s,
        "     {}",
        tr!("from {reads}", reads = touches(&d.reference_reads, d.reference_more))
    );
    match (&d.mine_at, cell.mine) {
        (Some(at), Some(m)) => {
            let wrote = d
                .mine_write
                .as_ref()
                .filter(|w| w.buffer != name || w.offset != cell.offset as i64)
                .map(|w| format!(" {}", tr!("as {name}[{offset}]", name = &w.buffer, offset = w.offset)))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "   {}",
                tr!(
                    "yours: {value}{wrote} at {file}:{line} (trace line {tl})",
                    value = v(m),
                    wrote,
                    file = at.file,
                    line = at.line,
                    tl = at.trace_line
                )
            );
            let _ = writeln!(
                s,
                "     {}",
                tr!("from {reads}", reads = touches(&d.mine_reads, d.mine_more))
            );
            if let Some(st) = cell.stray.as_ref().filter(|_| cell.right) {
                let _ = writeln!(
                    s,
                    "   {}",
                    tr!(
                        "Your value is right, but from {read}, a cell the reference does not read for {name}[{index}] ({expected}): right only by luck",
                        read = touch(&st.read),
                        name,
                        index = cell.index,
                        expected = st.expected
                    )
                );
            }
        }
        _ => {
            let _ = match &d.mine_elsewhere {
                Some(at) => writeln!(
                    s,
                    "   {}",
                    tr!(
                        "yours: never written (your other writes of {name} are at {file}:{line})",
                        name,
                        file = at.file,
                        line = at.line
                    )
                ),
                None => writeln!(s, "   {}", tr!("yours: never written")),
            };
        }
    }
    for h in &g.hints {
        let _ = writeln!(s, "   {}", tr!("Hint: {h}", h));
    }
    if let Some(m) = &g.mistake {
        let _ = writeln!(
            s,
            "   {}",
            tr!(
                "This is mistake {number} of the gallery, {name}: {symptom}",
                number = m.number,
                name = m.name,
                symptom = m.symptom
            )
        );
    }
    if let Some(trace) = &args.trace {
        let bind = args
            .bind
            .as_ref()
            .map(|b| format!(" --bind {}", b.display()))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "   {}",
            tr!(
                "Step through it: attn-trace tui {scenario} --mine {trace}{bind}",
                scenario = args.scenario.display(),
                trace = trace.display(),
                bind
            )
        );
    }
}
