//! The `attn-trace` command line: parsing and dispatch only. Each subcommand lives in its own
//! file under `src/cli/` and exposes `Args` (its clap arguments) and `run(args)`.

mod cli;

use clap::{ColorChoice, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  attn-trace                                   (the TUI on the built-in MHA walkthrough)
  attn-trace tui scenarios/mha_walkthrough.toml
  attn-trace run scenarios/mha_walkthrough.toml
  attn-trace explain scenarios/mha_walkthrough.toml --variant mha --at b=0,h=1,i=2,j=1
  attn-trace trace scenarios/indexing_trace.toml --phase scores --format csv -o scores.csv
  attn-trace io scenarios/flash.toml
  attn-trace inputs scenarios/mha_walkthrough.toml -o inputs.txt
  attn-trace grade scenarios/mha_walkthrough.toml -- python3 examples/learner/attention.py
  attn-trace check scenarios/*.toml
  attn-trace train --dataset copy --steps 600 --heads 4 --dmodel 32 --seq 24 --batch 8 --lr 3e-3 --save copy.safetensors
  attn-trace sample --checkpoint copy.safetensors --prompt 'hello|' --gen 6 --temp 0
  attn-trace completions bash > ~/.local/share/bash-completion/completions/attn-trace

Exit codes: 0 success, 2 bad input (a file, an argument), 1 anything else (such as a full disk),
3 `grade` found your kernel wrong, 128 + n when ended by signal n (130: Ctrl-C, 143: SIGTERM).";

/// Step through transformer attention one memory access at a time.
#[derive(Parser, Debug)]
#[command(name = "attn-trace", version, about, after_help = EXAMPLES)]
pub struct Cli {
    /// Plain output without colours (the NO_COLOR environment variable does the same).
    #[arg(long, global = true)]
    no_color: bool,

    /// The language of what the TUI draws and the commands print: en or zh-CN (简体中文).
    /// Default: the locale (LC_ALL, LC_MESSAGES, LANG), else English.
    #[arg(long, global = true, value_name = "LANG", value_parser = cli::parse_lang)]
    lang: Option<attn_trace_i18n::Lang>,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    Check(cli::check::Args),
    Run(cli::run::Args),
    Trace(cli::trace::Args),
    Explain(cli::explain::Args),
    Io(cli::io::Args),
    Cache(cli::cache::Args),
    Inputs(cli::inputs::Args),
    Grade(cli::grade::Args),
    Completions(cli::completions::Args),
    Tui(cli::tui::Args),
    Train(cli::train::Args),
    Eval(cli::eval::Args),
    Sample(cli::sample::Args),
}

fn main() -> ExitCode {
    if let Err(e) = color_eyre::install() {
        let _ = writeln!(std::io::stderr(), "warning: could not install the error reporter: {e}");
    }
    // A panic is a bug, never the user's: one line saying so (exit 1). RUST_BACKTRACE=full keeps
    // the full report (=1 is set in many shells, so it does not).
    if std::env::var_os("RUST_BACKTRACE").is_none_or(|v| v != "full") {
        std::panic::set_hook(Box::new(|info| {
            let what = info
                .payload()
                .downcast_ref::<&str>()
                .map(ToString::to_string)
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let what = what.lines().next().unwrap_or_default();
            let _ = writeln!(
                std::io::stderr(),
                "attn-trace: internal error{at}: {what} (a bug: please report it with the command; RUST_BACKTRACE=full gives the details)"
            );
        }));
    }
    // Decide on colour before clap prints anything, so `--help --no-color` is plain too.
    let plain = std::env::args_os().any(|a| a == "--no-color") || cli::no_color_env();
    cli::set_color(!plain);
    // The language too, so that errors about the other arguments are in it.
    attn_trace_i18n::set(cli::lang_from_args(std::env::args_os()));
    let mut command = Cli::command();
    if plain {
        command = command.color(ColorChoice::Never);
    }
    let help_color = !plain && std::io::stdout().is_terminal();
    let args = match command
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches))
    {
        Ok(args) => args,
        Err(e) => return cli::clap_exit(e, help_color),
    };

    cli::handle_signals();
    let result = std::panic::catch_unwind(|| dispatch(args));
    // a signal's handler is ending the process: its exit code, not this result's
    cli::wait_if_ending();
    let Ok(result) = result else {
        return ExitCode::from(1);
    };
    cli::exit_code(result)
}

/// Runs the subcommand.
fn dispatch(args: Cli) -> Result<(), cli::CliError> {
    match args.command {
        None => cli::tui::run(cli::tui::Args::default()),
        Some(Command::Check(a)) => cli::check::run(a),
        Some(Command::Run(a)) => cli::run::run(a),
        Some(Command::Trace(a)) => cli::trace::run(a),
        Some(Command::Explain(a)) => cli::explain::run(a),
        Some(Command::Io(a)) => cli::io::run(a),
        Some(Command::Cache(a)) => cli::cache::run(a),
        Some(Command::Inputs(a)) => cli::inputs::run(a),
        Some(Command::Grade(a)) => cli::grade::run(a),
        Some(Command::Completions(a)) => cli::completions::run(a),
        Some(Command::Tui(a)) => cli::tui::run(a),
        Some(Command::Train(a)) => cli::train::run(a),
        Some(Command::Eval(a)) => cli::eval::run(a),
        Some(Command::Sample(a)) => cli::sample::run(a),
    }
}
