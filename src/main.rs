//! The `attn-trace` command line: parsing and dispatch only. Each subcommand lives in its own
//! file under `src/cli/` and exposes `Args` (its clap arguments) and `run(args)`.

mod cli;

use clap::{ColorChoice, CommandFactory, FromArgMatches, Parser, Subcommand};
use cli::CliError;
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  attn-trace completions bash > ~/.local/share/bash-completion/completions/attn-trace";

/// Step through transformer attention one memory access at a time.
#[derive(Parser, Debug)]
#[command(name = "attn-trace", version, about, after_help = EXAMPLES)]
pub struct Cli {
    /// Plain output without colours (the NO_COLOR environment variable does the same).
    #[arg(long, global = true)]
    no_color: bool,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    Completions(cli::completions::Args),
}

fn main() -> ExitCode {
    if let Err(e) = color_eyre::install() {
        eprintln!("warning: could not install the error reporter: {e}");
    }
    // Decide on colour before clap prints anything, so `--help --no-color` is plain too.
    let plain = std::env::args_os().any(|a| a == "--no-color") || cli::no_color_env();
    cli::set_color(!plain);
    let mut command = Cli::command();
    if plain {
        command = command.color(ColorChoice::Never);
    }
    let matches = command.get_matches();
    let args = match Cli::from_arg_matches(&matches) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };

    let result = match args.command {
        None => Cli::command().print_help().map_err(CliError::from),
        Some(Command::Completions(a)) => cli::completions::run(a),
    };
    cli::exit_code(result)
}
