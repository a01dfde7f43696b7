//! `attn-trace tui [SCENARIO]` (and `attn-trace` alone): the step-through TUI, opened on the
//! scenario's `[focus]`, or on the built-in MHA walkthrough.

use super::{CliError, load, names_parser, no_color_env, variant_arg};
use attn_trace::kernels::Variant;
use attn_trace::scenario::Scenario;
use attn_trace::tr;
use attn_trace::tui::app::App;
use attn_trace::tui::quiz::QuizLevel;
use attn_trace::tui::{self, Theme};
use std::path::PathBuf;

/// Step through a scenario in the terminal, one memory access at a time.
#[derive(clap::Args, Debug, Default)]
#[command(after_help = "\
Keys: n/p step, j/k next/previous iteration, ]/[ phase, g goto, w/r who wrote/reads the cell,
b breakpoint, c/C continue, f forward/backward, Tab baseline/MHA, </> along the timeline,
Q quiz, ? all keys, q menu/quit.

Examples:
  attn-trace
  attn-trace tui scenarios/mha_walkthrough.toml
  attn-trace tui scenarios/indexing_trace.toml --variant baseline
  attn-trace tui scenarios/mha_walkthrough.toml --quiz
  attn-trace tui scenarios/backward_simple.toml --quiz=values")]
pub struct Args {
    /// Scenario file (.toml); without it, the built-in MHA walkthrough (B=1, T=3, C=4, H=2).
    #[arg(value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,
    /// Which kernel to open first: baseline or mha (default: the scenario's [focus] variant).
    #[arg(long, value_parser = variant_arg())]
    pub variant: Option<Variant>,
    /// Open in quiz mode: predict each next access before stepping. --quiz=values also asks
    /// the value of each write, --quiz=iterations every read of the next loop iteration.
    #[arg(
        long,
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "offsets",
        value_parser = names_parser(&QuizLevel::ALL, QuizLevel::name)
    )]
    pub quiz: Option<QuizLevel>,
    /// Step through your own kernel's trace beside the reference (record it with a recorder
    /// from recorders/ on the tensors of `attn-trace inputs`; see `attn-trace grade`).
    #[arg(long, value_name = "TRACE", requires = "scenario", conflicts_with = "quiz")]
    pub mine: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    // a bad file is reported before the terminal is taken over: one line, exit code 2
    let scenario = match &args.scenario {
        Some(path) => load(path)?,
        None => Scenario::builtin(),
    };
    if let Some(v) = args.variant
        && !scenario.variants.contains(&v)
    {
        let file = args
            .scenario
            .as_ref()
            .map_or("<built-in>".into(), |p| p.display().to_string());
        return Err(CliError::Input(tr!(
            "{file}: [run].variants: this scenario does not run {v}",
            file,
            v
        )));
    }
    // the learner's trace is read and graded before the terminal is taken over: a bad one is
    // one line and exit code 2
    let mine = match (&args.mine, &args.scenario) {
        (Some(trace), Some(path)) => Some(tui::screens::mine::load(&scenario, path, trace).map_err(CliError::Input)?),
        _ => None,
    };
    // without a terminal there is nothing to draw on: say so plainly instead of drawing escape
    // codes into a file or failing with a report
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return Err(CliError::Input(
            tr!("the TUI needs a terminal on standard input and output; for scripts use attn-trace run, explain or trace (attn-trace --help)").into(),
        ));
    }
    let plain = no_color_env() || std::env::args_os().any(|a| a == "--no-color");
    let theme = if plain { Theme::MONO } else { Theme::COLOR };
    // the scenario is traced on a worker thread behind a progress screen: a large one never
    // leaves the terminal blank
    let (variant, quiz) = (args.variant, args.quiz);
    tui::run(|w, h| match mine {
        Some(view) => App::with_mine(scenario, view, theme, w, h),
        None => App {
            quiz,
            ..App::opening(scenario, variant, theme, w, h)
        },
    })
    .map_err(CliError::Other)
}
