//! `attn-trace completions SHELL`: prints a shell completion script.

use super::CliError;
use clap::CommandFactory;
use clap_complete::Shell;
use std::io::Write;

/// Print a completion script for your shell.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  attn-trace completions bash > ~/.local/share/bash-completion/completions/attn-trace
  attn-trace completions zsh > ~/.zfunc/_attn-trace
  attn-trace completions fish > ~/.config/fish/completions/attn-trace.fish")]
pub(crate) struct Args {
    /// The shell to generate for.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let mut command = crate::Cli::command();
    // generated in memory first: clap_complete panics on a failed write
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "attn-trace", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    Ok(out.flush()?)
}
