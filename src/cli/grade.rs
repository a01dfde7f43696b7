//! `attn-trace grade SCENARIO TRACE.jsonl` and `attn-trace grade SCENARIO -- COMMAND ARGS…`:
//! a learner's own kernel graded access by access against the reference pass.

use super::{CliError, pass_arg, variant_arg};
use attn_trace_analysis::format::thousands;
use attn_trace_analysis::grade::{self, ATOL, Divergence, Finding, Grade, Kind, RTOL, Touch};
use attn_trace_analysis::learner::bind::{Binder, Bindings};
use attn_trace_analysis::learner::import::{ImportError, Reader};
use attn_trace_analysis::learner::reference::Reference;
use attn_trace_analysis::learner::{ENV_INPUTS, ENV_OUT, inputs};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use serde::Serialize;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The exit code of a grade that finds the kernel wrong (0: right, 2: bad input, 1: anything
/// else).
pub const WRONG: u8 = 3;

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
pub struct Args {
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
    /// With `--`: how many random inputs besides the scenario's own.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = super::whole::<u64>, allow_negative_numbers = true)]
    pub seeds: u64,
    /// With `--`: seconds each run of your program may take.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = super::whole::<u64>, allow_negative_numbers = true)]
    pub timeout: u64,
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

pub fn run(args: Args) -> Result<(), CliError> {
    let scenario = super::load(&args.scenario)?;
    let bindings = args
        .bind
        .as_deref()
        .map(Bindings::load)
        .transpose()
        .map_err(CliError::Input)?;
    let outcomes = match &args.trace {
        Some(trace) => vec![grade_file(&scenario, &args, bindings.as_ref(), trace, None)?],
        None => run_program(&scenario, &args, bindings.as_ref())?,
    };
    let (variant, pass) = outcomes
        .iter()
        .find_map(|o| o.grade.as_ref().map(|g| (g.variant, g.pass)))
        .map_or_else(
            || super::inputs::choose(&scenario, &args.scenario, args.variant, args.pass),
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

/// Grades one trace file. `input` is the input the program was given (the `--` form), which the
/// header must agree with.
fn grade_file(
    scenario: &Scenario,
    args: &Args,
    bindings: Option<&Bindings>,
    trace: &Path,
    input: Option<u64>,
) -> Result<Outcome, CliError> {
    let shown = trace.display().to_string();
    let open = || {
        std::fs::File::open(trace)
            .map(BufReader::new)
            .map_err(|e| CliError::Input(tr!("{file}: cannot read the trace: {e}", file = shown, e)))
    };
    let import = |e: ImportError| CliError::Input(e.to_string());
    let mut reader = Reader::new(open()?, &shown).map_err(import)?;
    let header = reader.header().clone();
    // the flags must agree with what the trace says it is
    let at_header = |what: String| CliError::Input(format!("{shown}:1: {what}"));
    if let (Some(flag), Some(h)) = (args.variant, header.variant)
        && flag != h
    {
        return Err(at_header(tr!(
            "\"variant\": the trace was recorded for {h}, not --variant {flag}",
            h = h.name(),
            flag = flag.name()
        )));
    }
    if let (Some(flag), Some(h)) = (args.pass, header.pass)
        && flag != h
    {
        return Err(at_header(tr!(
            "\"pass\": the trace was recorded for the {h} pass, not --pass {flag}",
            h = h.name(),
            flag = flag.name()
        )));
    }
    if let Some(name) = &header.scenario {
        let stem = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
        if stem(Path::new(name)) != stem(&args.scenario) {
            return Err(at_header(tr!(
                "\"scenario\": the trace was recorded on {name}, not on {file}",
                name,
                file = args.scenario.display()
            )));
        }
    }
    let sh = scenario.shape;
    for (name, value) in &header.dims {
        let ours = match name.as_str() {
            "B" => sh.b,
            "T" => sh.t,
            "S" => sh.s,
            "C" => sh.c,
            "H" => sh.h,
            "D" => sh.d(),
            "H_kv" => sh.h_kv,
            "L" => scenario.layers,
            _ => continue,
        };
        if *value != ours as u64 {
            return Err(at_header(tr!(
                "\"dims\": the trace was recorded with {name} = {value}, the scenario has {name} = {ours}",
                name,
                value,
                ours
            )));
        }
    }
    if let Some(k) = input
        && header.input != k
    {
        return Err(at_header(tr!(
            "\"input\": the program was given input {k} but its trace says input {found}",
            k,
            found = header.input
        )));
    }
    let (variant, pass) = super::inputs::choose(
        scenario,
        &args.scenario,
        args.variant.or(header.variant),
        args.pass.or(header.pass),
    )?;
    let reference = Reference::new(scenario, variant, pass, header.input)
        .map_err(|e| CliError::Input(format!("{}: {e}", args.scenario.display())))?;
    let declared = bindings.or(header.bind.as_ref()).cloned().unwrap_or_default();
    let mut binder = Binder::new(&declared, &reference).map_err(CliError::Input)?;
    let graded = grade::grade(&reference, &mut reader, &mut binder, scenario).map_err(|mut e| {
        e.path.clone_from(&shown);
        import(e)
    })?;
    let again = Reader::new(open()?, &shown).map_err(import)?;
    let grade = graded.with_mine_reads(&reference, again, &mut binder).map_err(import)?;
    Ok(Outcome {
        input: header.input,
        program: None,
        grade: Some(grade),
    })
}

/// The temporary directory and process group of the program being graded, for a signal
/// handler to clean up.
static RUNNING: Mutex<Option<(u32, PathBuf)>> = Mutex::new(None);

/// Kills the program being graded (its whole process group) and removes its temporary
/// directory: called by the signal handler before the process exits.
pub fn clean_up_after_signal() {
    let running = RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
    if let Some((pid, dir)) = running {
        kill_group(pid);
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Runs the learner's program on input 0 and `--seeds` random ones, grading each trace.
fn run_program(scenario: &Scenario, args: &Args, bindings: Option<&Bindings>) -> Result<Vec<Outcome>, CliError> {
    let (variant, pass) = super::inputs::choose(scenario, &args.scenario, args.variant, args.pass)?;
    let dir = tempfile::Builder::new()
        .prefix("attn-trace-grade-")
        .tempdir()
        .map_err(|e| CliError::Failed(tr!("cannot create a temporary directory: {e}", e)))?;
    let mut outcomes = Vec::new();
    for k in 0..=args.seeds {
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
        match run_once(args, dir.path(), &inputs_path, &trace_path)? {
            Some(failure) => outcomes.push(Outcome {
                input: k,
                program: Some(failure),
                grade: None,
            }),
            None => {
                let shown_args = Args {
                    variant: Some(variant),
                    pass: Some(pass),
                    command: Vec::new(),
                    trace: None,
                    scenario: args.scenario.clone(),
                    bind: None,
                    ..*args
                };
                outcomes.push(grade_file(scenario, &shown_args, bindings, &trace_path, Some(k))?);
            }
        }
        let _ = std::fs::remove_file(&trace_path);
        if !outcomes.last().is_some_and(Outcome::correct) {
            // the verdict is in: the input that exposed the kernel is shown
            break;
        }
    }
    Ok(outcomes)
}

/// Runs the program once; `Some(why)` when it did not finish well.
fn run_once(args: &Args, dir: &Path, inputs: &Path, trace: &Path) -> Result<Option<String>, CliError> {
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| CliError::Input(tr!("grade: give a TRACE file or a command after --").into()))?;
    let log_path = dir.join("stderr.txt");
    let log = std::fs::File::create(&log_path)
        .map_err(|e| CliError::Failed(tr!("cannot create a temporary file: {e}", e)))?;
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .env(ENV_INPUTS, inputs)
        .env(ENV_OUT, trace)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log));
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // its own process group, so that a timeout ends whatever it started too
        cmd.process_group(0);
    }
    let mut child = cmd.spawn().map_err(|e| {
        CliError::Input(tr!(
            "cannot run {program}: {e}",
            program = Path::new(program).display(),
            e
        ))
    })?;
    *RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some((child.id(), dir.to_path_buf()));
    let started = Instant::now();
    let limit = Duration::from_secs(args.timeout);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= limit => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(CliError::Failed(tr!("cannot wait for the program: {e}", e))),
        }
    };
    // whatever it left running in its group goes too
    kill_group(child.id());
    let _ = child.wait();
    *RUNNING.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    let tail = || {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().rev().take(5).collect();
        let tail: Vec<&str> = lines.into_iter().rev().collect();
        if tail.is_empty() {
            String::new()
        } else {
            format!(
                "\n{}",
                tail.iter().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
            )
        }
    };
    let failure = match status {
        None => Some(
            tr!(
                "did not finish within {secs} s (--timeout) and was stopped",
                secs = args.timeout
            )
            .to_string(),
        ),
        Some(s) if !s.success() => Some(match s.code() {
            Some(code) => format!("{}{}", tr!("exited with status {code}", code), tail()),
            None => format!("{}{}", tr!("was killed by a signal"), tail()),
        }),
        Some(_) if !trace.exists() => Some(tr!("finished without writing a trace to $ATTN_TRACE_OUT").into()),
        Some(_) => None,
    };
    Ok(failure)
}

/// Ends process group `pid` (the program and everything it started).
fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; a negative pid
        // names the process group the program leads (`process_group(0)` above).
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
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
    let at = format!("{}:{}", f.at.file, f.at.line);
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
            "· {n} reads of {name} cells the reference never reads (waste, not an error)",
            n = thousands(f.count),
            name
        )
        .to_string(),
        Kind::MaskedWaste => tr!(
            "· {n} reads of {name} feed only masked scores, whose products the mask throws away (waste, not an error)",
            n = thousands(f.count),
            name
        )
        .to_string(),
        Kind::ExtraWrites => tr!(
            "· {n} writes of {name} cells the reference's pass does not write",
            n = thousands(f.count),
            name
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
        } else if errors == 1 {
            tr!("Accesses: 1 error").to_string()
        } else {
            tr!("Accesses: {errors} errors", errors).to_string()
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
