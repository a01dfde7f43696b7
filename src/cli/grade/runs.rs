//! The learner's program run on each input (`grade -- COMMAND`): its own session and time
//! limit, the temporary directory and the cleanup a signal needs, and why a run failed.

use super::{Args, DEFAULT_SEEDS, DEFAULT_TIMEOUT, Outcome, Refused, grade_file};
use crate::cli::CliError;
use crate::cli::program::{self, Program};
use attn_trace_analysis::learner::bind::Bindings;
use attn_trace_analysis::learner::check::{self, Asked};
use attn_trace_analysis::learner::reference::Reference;
use attn_trace_analysis::learner::{ENV_INPUTS, ENV_OUT, inputs};
use attn_trace_core::files::input::{ReadError, human_bytes};
use attn_trace_core::scenario::Scenario;
use attn_trace_i18n::tr;
use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
pub(super) fn run_program(
    scenario: &Scenario,
    args: &Args,
    bindings: Option<&Bindings>,
) -> Result<Vec<Outcome>, CliError> {
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
    crate::cli::wait_if_ending();
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
