//! The subcommands, one file each, and what they share: the error type that decides the exit
//! code, and whether output may be coloured.

pub mod completions;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad user input (a scenario file, an argument, an output path): one line, exit code 2.
    #[error("{0}")]
    Input(String),
    /// The messages were already printed (e.g. `check` reporting several files): exit code 2.
    #[error("{0} of the inputs had errors")]
    Reported(usize),
    /// Anything else: a bug or an environment failure, reported by color-eyre, exit code 1.
    #[error(transparent)]
    Other(#[from] color_eyre::Report),
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Other(e.into())
    }
}

/// Prints the error (if not already printed) and turns the result into the process exit code.
pub fn exit_code(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Input(msg)) => {
            eprintln!("{}: {msg}", paint("error", Style::Error));
            ExitCode::from(2)
        }
        Err(CliError::Reported(_)) => ExitCode::from(2),
        Err(CliError::Other(report)) => {
            eprintln!("{report:?}");
            ExitCode::FAILURE
        }
    }
}

static COLOR: AtomicBool = AtomicBool::new(false);

/// True when NO_COLOR is set to anything non-empty (<https://no-color.org>).
pub fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Allows colour when `wanted` and both stdout and stderr are terminals.
pub fn set_color(wanted: bool) {
    let tty = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    COLOR.store(wanted && tty, Ordering::Relaxed);
}

pub fn color() -> bool {
    COLOR.load(Ordering::Relaxed)
}

/// The few kinds of emphasis the headless output uses.
#[derive(Clone, Copy, Debug)]
pub enum Style {
    Error,
    Ok,
    Heading,
    Dim,
}

/// `text` wrapped in ANSI colour codes when colour is on, unchanged otherwise.
pub fn paint(text: &str, style: Style) -> String {
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
