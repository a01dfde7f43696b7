//! `attn-trace check SCENARIO...`: validates scenario files without running them.

use super::{CliError, Style, error_line, escape_controls, paint};
use attn_trace_core::scenario::Scenario;
use attn_trace_i18n::tr;
use std::io::Write;
use std::path::PathBuf;

/// Validate scenario files: "OK" for each good one, the error for each bad one.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Exit code 0 when every file is valid, 2 when any is not.

Examples:
  attn-trace check scenarios/*.toml
  attn-trace check my_scenario.toml")]
pub(crate) struct Args {
    /// Scenario files (.toml).
    #[arg(required = true, value_name = "SCENARIO")]
    pub scenarios: Vec<PathBuf>,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    let mut bad = 0;
    for path in &args.scenarios {
        match Scenario::load(path) {
            Ok(s) => {
                let events: Vec<String> = s
                    .variants
                    .iter()
                    .map(|&v| tr!("{variant} {n} events", variant = v, n = s.estimated_events(v)))
                    .collect();
                writeln!(
                    out,
                    "{} {}: {} ({})",
                    paint("OK", Style::Ok),
                    path.display(),
                    escape_controls(&s.title),
                    events.join(tr!(", "))
                )?;
            }
            Err(e) => {
                bad += 1;
                error_line(&e.to_string());
            }
        }
    }
    out.flush()?;
    if bad > 0 { Err(CliError::Reported(bad)) } else { Ok(()) }
}
