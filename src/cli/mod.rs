//! The subcommands, one file each, and what they share: the error type that decides the exit
//! code, and whether output may be coloured.

pub(crate) mod cache;
pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod eval;
pub(crate) mod explain;
pub(crate) mod grade;
pub(crate) mod inputs;
pub(crate) mod io;
pub(crate) mod program;
pub(crate) mod run;
pub(crate) mod sample;
pub(crate) mod trace;
pub(crate) mod train;
pub(crate) mod tui;

use attn_trace_core::files::atomic::AtomicFile;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::{Scenario, ScenarioError};
use attn_trace_core::trace::{Buf, Pass, Phase};
use attn_trace_i18n::Lang;
use attn_trace_i18n::tr;
use std::io::IsTerminal;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Why a subcommand failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// Bad user input (a scenario file, an argument, an output path): one line, exit code 2.
    #[error("{0}")]
    Input(String),
    /// The messages were already printed (e.g. `check` reporting several files): exit code 2.
    #[error("{}", tr!("{n} of the inputs had errors", n = .0))]
    Reported(usize),
    /// Standard output could not be written (a full disk): one line, exit code 1. A reader that
    /// closed the pipe (`| head`) got what it wanted: no message, exit code 0.
    #[error("{}", tr!("cannot write to standard output: {e}", e = .0))]
    Write(std::io::Error),
    /// Something that is not the user's input failed and says so in one line (a file that could
    /// not be written, training that diverged): exit code 1.
    #[error("{0}")]
    Failed(String),
    /// `grade` found the learner's kernel wrong and has said why: exit code 3.
    #[error("")]
    Graded,
    /// Anything else: a bug or an environment failure, reported by color-eyre, exit code 1.
    #[error(transparent)]
    Other(#[from] color_eyre::Report),
}

impl From<std::io::Error> for CliError {
    /// The subcommands' `?` on an I/O error: a write to standard output.
    fn from(e: std::io::Error) -> Self {
        CliError::Write(e)
    }
}

impl From<ScenarioError> for CliError {
    fn from(e: ScenarioError) -> Self {
        CliError::Input(e.to_string())
    }
}

/// Loads and validates a scenario file; every problem is a user-input error.
pub(crate) fn load(path: &Path) -> Result<Scenario, CliError> {
    Ok(Scenario::load(path)?)
}

/// clap parser of a whole number ≥ 0 that calls a negative number one (clap alone would take
/// `--steps -1` for an unknown flag `-1`; the flags that use this allow negative numbers so
/// they reach it).
pub(crate) fn whole<T: TryFrom<u128>>(s: &str) -> Result<T, String> {
    let t = s.trim();
    match t.parse::<u128>() {
        Ok(v) => T::try_from(v).map_err(|_| tr!("is too large").to_string()),
        Err(_) if t.strip_prefix('-').is_some_and(|r| r.parse::<f64>().is_ok()) => {
            Err(tr!("is negative; expected a whole number ≥ 0").into())
        }
        Err(_) => Err(tr!("is not a whole number ≥ 0").into()),
    }
}

/// clap's errors as one line, like every other error of this tool: what is wrong with which
/// flag, and a suggestion if clap has one ([`clap_exit`] adds where the help is). clap's own
/// are 3–5 lines with the usage.
pub(crate) struct OneLine;

impl clap::error::ErrorFormatter for OneLine {
    fn format_error(error: &clap::error::Error<Self>) -> clap::builder::StyledStr {
        let mut out = clap::builder::StyledStr::new();
        out.push_str(&one_line(error));
        out
    }
}

/// The message of a clap error (without `error: `).
fn one_line(e: &clap::error::Error<OneLine>) -> String {
    use clap::error::{ContextKind as K, ContextValue as V, ErrorKind};
    let text = |k: K| -> Option<String> {
        match e.get(k)? {
            V::String(s) => Some(s.clone()),
            V::Strings(v) => Some(v.join(tr!(", "))),
            V::StyledStr(s) => Some(s.to_string()),
            V::StyledStrs(v) => Some(v.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")),
            V::Number(n) => Some(n.to_string()),
            V::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    };
    // "--steps <N>" → "--steps"; a positional "<SCENARIO>" stays as it is
    let flag_only = |a: String| match a.split_once(' ') {
        Some((flag, _)) if flag.starts_with('-') => flag.to_string(),
        _ => a,
    };
    let arg = text(K::InvalidArg).map(flag_only);
    let arg = arg.unwrap_or_else(|| tr!("an argument").into());
    let value = text(K::InvalidValue).unwrap_or_default();
    let source = std::error::Error::source(e).map(ToString::to_string);
    let mut msg = match e.kind() {
        ErrorKind::InvalidValue | ErrorKind::ValueValidation if value.is_empty() => {
            tr!("{arg} needs a value", arg)
        }
        ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
            let why = match (source, text(K::ValidValue)) {
                (Some(s), _) => s,
                (None, Some(valid)) => tr!("expected one of {valid}", valid),
                (None, None) => tr!("invalid value").into(),
            };
            format!("{arg} {value}: {why}")
        }
        ErrorKind::UnknownArgument => tr!("unexpected argument '{arg}'", arg),
        ErrorKind::InvalidSubcommand => {
            tr!(
                "unknown command '{name}'",
                name = text(K::InvalidSubcommand).unwrap_or_default()
            )
        }
        ErrorKind::MissingRequiredArgument => tr!("missing {arg}", arg),
        ErrorKind::MissingSubcommand => tr!("a command is required").into(),
        ErrorKind::ArgumentConflict => match text(K::PriorArg).map(flag_only) {
            Some(prior) if prior != arg => tr!("{arg} cannot be used with {prior}", arg, prior),
            _ => tr!("{arg} cannot be given more than once", arg),
        },
        ErrorKind::TooManyValues => tr!("unexpected value '{value}' for {arg}", value, arg),
        ErrorKind::NoEquals => tr!("{arg} needs its value after an equal sign", arg),
        kind => source
            .or_else(|| kind.as_str().map(str::to_string))
            .unwrap_or_else(|| tr!("invalid arguments").into()),
    };
    for k in [K::SuggestedArg, K::SuggestedSubcommand, K::SuggestedValue] {
        if let Some(s) = text(k) {
            msg.push_str(&tr!(" (did you mean '{s}'?)", s));
        }
    }
    msg
}

/// The subcommand the command line names (`attn-trace train`), or `attn-trace`: where to look
/// for help.
fn help_command() -> String {
    use clap::CommandFactory;
    let names: Vec<String> = crate::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    match std::env::args().skip(1).find(|a| names.contains(a)) {
        Some(sub) if sub != "help" => format!("attn-trace {sub}"),
        _ => "attn-trace".into(),
    }
}

/// Handles what clap stopped on: help and version go to standard output (a failed write is one
/// line, exit 1; a closed pipe is quiet); a mistake in the flags is one line and exit code 2.
pub(crate) fn clap_exit(e: clap::Error, help_color: bool) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let styled = e.render();
        let text = if help_color {
            styled.ansi().to_string()
        } else {
            styled.to_string()
        };
        let mut out = std::io::stdout().lock();
        return exit_code(quiet_pipe(out.write_all(text.as_bytes()).and_then(|()| out.flush())));
    }
    // an error of clap's own making (not one of our formatter) keeps only its first line
    let rendered = e.apply::<OneLine>().render().to_string();
    let line = rendered.lines().next().unwrap_or_default();
    let msg = line.strip_prefix("error: ").unwrap_or(line);
    error_line(&tr!("{msg}; see {command} --help", msg, command = help_command()));
    ExitCode::from(2)
}

/// A clap parser of one of `all` by its `name`: it knows the possible values, so `--help` lists
/// them, shell completions offer them and a mistake names them.
pub(crate) fn names_parser<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(all.iter().map(|&x| PossibleValue::new(name(x)))).try_map(move |s| {
        // clap has already checked that `s` is one of the names
        all.iter()
            .copied()
            .find(|&x| name(x) == s)
            .ok_or_else(|| tr!("invalid value").to_string())
    })
}

pub(crate) fn variant_arg() -> impl clap::builder::TypedValueParser<Value = Variant> {
    names_parser(&Variant::ALL, Variant::name)
}

pub(crate) fn pass_arg() -> impl clap::builder::TypedValueParser<Value = Pass> {
    names_parser(&Pass::ALL, Pass::name)
}

pub(crate) fn phase_arg() -> impl clap::builder::TypedValueParser<Value = Phase> {
    names_parser(Phase::ALL, Phase::name)
}

pub(crate) fn buffer_arg() -> impl clap::builder::TypedValueParser<Value = Buf> {
    names_parser(Buf::ALL, Buf::name)
}

/// Where a subcommand's output goes: stdout, or a file written atomically (see
/// [`attn_trace_core::files::atomic`]: a temporary file renamed over the target only once everything is
/// written; a FIFO or a character device is written in place).
pub(crate) enum Output {
    Stdout(std::io::BufWriter<std::io::StdoutLock<'static>>),
    File {
        file: std::io::BufWriter<AtomicFile>,
        target: std::path::PathBuf,
    },
}

impl Output {
    pub(crate) fn open(path: Option<&Path>) -> Result<Output, CliError> {
        let Some(target) = path else {
            return Ok(Output::Stdout(std::io::BufWriter::new(std::io::stdout().lock())));
        };
        if target.is_dir() {
            return Err(CliError::Input(tr!(
                "{path}: is a directory; give a file name to write to",
                path = target.display()
            )));
        }
        let file = AtomicFile::create(target).map_err(|e| match e.kind() {
            // a socket or a block device: what it is, and that it stays
            std::io::ErrorKind::InvalidInput => CliError::Input(format!("{}: {e}", target.display())),
            _ => CliError::Input(tr!("{path}: cannot write there: {e}", path = target.display(), e)),
        })?;
        Ok(Output::File {
            file: std::io::BufWriter::new(file),
            target: target.to_path_buf(),
        })
    }

    pub(crate) fn writer(&mut self) -> &mut dyn Write {
        match self {
            Output::Stdout(w) => w,
            Output::File { file, .. } => file,
        }
    }

    /// The file's writer, for a writer that must be `Send` (the Parquet export); `None` for
    /// standard output.
    pub(crate) fn file_writer(&mut self) -> Option<&mut (dyn Write + Send)> {
        match self {
            Output::Stdout(_) => None,
            Output::File { file, .. } => Some(file),
        }
    }

    /// The error for a failed write, naming the file (a closed pipe stays quiet).
    pub(crate) fn write_error(&self, e: std::io::Error) -> CliError {
        match self {
            Output::File { target, .. } => file_error(target, e),
            Output::Stdout(_) => CliError::Write(e),
        }
    }

    /// Flushes, and for a file moves it into place. Dropping an unfinished `Output` instead
    /// deletes the temporary file, so the target is never left half written.
    pub(crate) fn finish(self) -> Result<(), CliError> {
        match self {
            Output::Stdout(mut w) => quiet_pipe(w.flush()),
            Output::File { file, target } => {
                let file = file.into_inner().map_err(|e| file_error(&target, e.into_error()))?;
                file.commit()
                    .map_err(|e| CliError::Failed(tr!("{path}: cannot write: {e}", path = target.display(), e)))
            }
        }
    }
}

/// A failed write to `target`: one line naming it (a reader that closed a FIFO stays quiet).
fn file_error(target: &Path, e: std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CliError::Write(e)
    } else {
        CliError::Failed(format!("{}: {e}", target.display()))
    }
}

/// A reader that closed the pipe early (`| head`) is not an error.
pub(crate) fn quiet_pipe(r: std::io::Result<()>) -> Result<(), CliError> {
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Prints `error: MSG` on standard error, on one line (control characters escaped). A standard
/// error that cannot be written is no reason to panic: the exit code still tells.
pub(crate) fn error_line(msg: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "{}: {}",
        paint(tr!("error"), Style::Error),
        escape_controls(msg)
    );
}

/// `text` with its control characters escaped as Rust writes them (`\n`, `\u{1b}`), so text
/// from a file (a scenario's title) stays on its line and sends no codes to the terminal.
pub(crate) fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// Prints the error (if not already printed) and turns the result into the process exit code.
pub(crate) fn exit_code(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Input(msg)) => {
            error_line(&msg);
            ExitCode::from(2)
        }
        Err(CliError::Reported(_)) => ExitCode::from(2),
        Err(CliError::Graded) => ExitCode::from(grade::WRONG),
        Err(CliError::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e @ (CliError::Write(_) | CliError::Failed(_))) => {
            error_line(&e.to_string());
            ExitCode::FAILURE
        }
        Err(CliError::Other(report)) => {
            // a reader that closed the pipe early (`| head`) got everything it wanted
            if report
                .downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            let _ = writeln!(std::io::stderr(), "{report:?}");
            ExitCode::FAILURE
        }
    }
}

/// Set by a long run (`train`) that stops between two steps on the first signal.
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Makes the first Ctrl-C, SIGTERM or SIGHUP raise `flag` instead of ending the process; the
/// next one ends it as usual.
pub(crate) fn stop_on_signal(flag: Arc<AtomicBool>) {
    let _ = STOP.set(flag);
}

/// Set once a signal is ending the process (see [`handle_signals`]).
static ENDING: AtomicBool = AtomicBool::new(false);

/// Waits for ever when a signal is ending the process: called by the main thread before it
/// reports or exits, so that what the signal's clean-up did under it (a child reaped, a file
/// removed) is not reported as an error and the exit code is the signal's.
pub(crate) fn wait_if_ending() {
    if ENDING.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// What Ctrl-C, SIGTERM and SIGHUP do, for every subcommand: remove the temporary files being
/// written (the targets keep their previous contents), give the terminal back if the TUI has it,
/// and exit with 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM). A run registered
/// with [`stop_on_signal`] is asked to stop first.
pub(crate) fn handle_signals() {
    fn on_signal(number: i32) {
        if let Some(flag) = STOP.get()
            && !flag.swap(true, Ordering::SeqCst)
        {
            return;
        }
        // from here the process ends with 128 + number: the main thread, whose work the
        // clean-up below pulls away (its child reaped, its files removed), must not end it first
        ENDING.store(true, Ordering::SeqCst);
        attn_trace_core::files::atomic::remove_live_temps();
        grade::clean_up_after_signal();
        attn_trace::tui::restore_after_signal();
        std::process::exit(128 + number);
    }
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            Ok(mut signals) => {
                let spawned = std::thread::Builder::new()
                    .name("signals".into())
                    .spawn(move || signals.forever().for_each(on_signal));
                if let Err(e) = spawned {
                    let _ = writeln!(std::io::stderr(), "warning: signals will not clean up: {e}");
                }
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "warning: signals will not clean up: {e}");
            }
        }
    }
    #[cfg(not(unix))]
    if let Err(e) = ctrlc::set_handler(|| on_signal(2)) {
        let _ = writeln!(std::io::stderr(), "warning: Ctrl-C will not clean up: {e}");
    }
}

static COLOR: AtomicBool = AtomicBool::new(false);

/// True when NO_COLOR is set to anything non-empty (<https://no-color.org>).
/// `--lang`'s value parser.
pub(crate) fn parse_lang(s: &str) -> Result<Lang, String> {
    Lang::from_tag(s).ok_or_else(|| tr!("unknown language \"{s}\"; expected en or zh-CN", s))
}

/// The language asked for by `--lang X` or `--lang=X` among the raw arguments (read before
/// clap parses them, so that its errors are in that language too), else by the locale. A
/// value that names no language is left for clap to refuse.
pub(crate) fn lang_from_args(args: impl Iterator<Item = std::ffi::OsString>) -> Lang {
    let args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    let given = args
        .iter()
        .enumerate()
        .find_map(|(k, a)| match a.strip_prefix("--lang") {
            Some("") => args.get(k + 1).map(String::as_str),
            Some(v) => v.strip_prefix('='),
            None => None,
        });
    given.and_then(Lang::from_tag).unwrap_or_else(Lang::from_env)
}

pub(crate) fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Allows colour when `wanted` and both stdout and stderr are terminals.
pub(crate) fn set_color(wanted: bool) {
    let tty = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    COLOR.store(wanted && tty, Ordering::Relaxed);
}

pub(crate) fn color() -> bool {
    COLOR.load(Ordering::Relaxed)
}

/// The few kinds of emphasis the headless output uses.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Style {
    Error,
    Ok,
    Heading,
    Dim,
}

/// `text` wrapped in ANSI colour codes when colour is on, unchanged otherwise.
pub(crate) fn paint(text: &str, style: Style) -> String {
    if !color() {
        return text.to_string();
    }
    let code = match style {
        Style::Error => "1;31",
        Style::Ok => "32",
        Style::Heading => "1",
        Style::Dim => "2",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}
