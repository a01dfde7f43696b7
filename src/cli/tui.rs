//! `attn-trace tui [SCENARIO]` (and `attn-trace` alone): the step-through TUI, opened on the
//! scenario's `[focus]`, or on the built-in MHA walkthrough.

use super::{CliError, load, names_parser, no_color_env, pass_arg, variant_arg};
use attn_trace::tui::{self, App, Mine, Theme, TracedScenario};
use attn_trace_analysis::quiz::QuizLevel;
use attn_trace_core::files::atomic::AtomicFile;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::scenario::lesson::Lesson;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use std::path::PathBuf;
use std::sync::Arc;

/// Step through a scenario in the terminal, one memory access at a time.
#[derive(clap::Args, Debug, Default)]
#[command(after_help = "\
Keys: n/p step, j/k next/previous iteration, ]/[ phase, g goto, w/r who wrote/reads the cell,
b breakpoint, c/C continue, f forward/backward, Tab next kernel (baseline, MHA, GQA, flash:
those the scenario traces), </> along the timeline, y copy the position, S save the screen,
Q quiz, ? all keys, q menu/quit. In a lesson: N/P next/previous stop, R back to the stop.

Positions (--at, g, a lesson's at): an event (#516), a score element (b=0 h=1 i=2 j=1), a cell
(d_k[10], q[0,2,1,0]) or a phase (softmax); an element, a cell or a phase is looked up in
--pass (default: forward).

Examples:
  attn-trace
  attn-trace tui scenarios/mha_walkthrough.toml
  attn-trace tui scenarios/gqa.toml --variant gqa --pass backward --at 'd_k[10]'
  attn-trace tui scenarios/indexing_trace.toml --variant baseline
  attn-trace tui scenarios/mha_walkthrough.toml --quiz --quiz-report scores.json
  attn-trace tui --lesson lessons/mha_walkthrough.toml
  attn-trace tui scenarios/flash.toml --at '#120' --snapshot slide.svg --size 120x40")]
pub(crate) struct Args {
    /// Scenario file (.toml); without it, the built-in MHA walkthrough (B=1, T=3, C=4, H=2).
    #[arg(value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,
    /// Which kernel to open first: baseline, mha, gqa or flash, among those the scenario traces
    /// (default: the scenario's [focus] variant).
    #[arg(long, value_parser = variant_arg())]
    pub variant: Option<Variant>,
    /// Open at this position: #516, b=0 h=1 i=2 j=1, d_k[10] or a phase name (as g takes it).
    #[arg(long, value_name = "POS")]
    pub at: Option<String>,
    /// The pass --at looks in (an element, a cell or a phase), or opens at the start of.
    #[arg(long, value_parser = pass_arg())]
    pub pass: Option<Pass>,
    /// Walk a lesson: its scenario, stop by stop, with a note and a question at each
    /// (docs/lessons.md).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "mine", "at", "pass", "variant", "quiz"])]
    pub lesson: Option<PathBuf>,
    /// Write the screen at --at (or a lesson's first stop) to this file and exit, without a
    /// terminal: SVG, or plain text for a .txt name.
    #[arg(long, value_name = "OUT")]
    pub snapshot: Option<PathBuf>,
    /// The screen size of --snapshot, COLUMNSxROWS.
    #[arg(long, value_name = "WxH", default_value = "120x40", value_parser = parse_size, requires = "snapshot")]
    pub size: (u16, u16),
    /// Keep the quiz's (and a lesson's) scores in this JSON file, rewritten after each answer.
    #[arg(long, value_name = "FILE")]
    pub quiz_report: Option<PathBuf>,
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
    #[arg(long, value_name = "TRACE", requires = "scenario", conflicts_with_all = ["quiz", "at", "pass", "snapshot"])]
    pub mine: Option<PathBuf>,
    /// With --mine: how your buffers lie over the reference's tensors (TOML, as `grade --bind`).
    #[arg(long, value_name = "FILE", requires = "mine")]
    pub bind: Option<PathBuf>,
}

/// `COLUMNSxROWS`, each at least the smallest screen the TUI draws on.
fn parse_size(s: &str) -> Result<(u16, u16), String> {
    let bad = || tr!("expected COLUMNSxROWS, e.g. 120x40").to_string();
    let (w, h) = s.split_once(['x', 'X', '×']).ok_or_else(bad)?;
    let (w, h): (u16, u16) = (
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    );
    if !(24..=1000).contains(&w) || !(6..=500).contains(&h) {
        return Err(tr!(
            "expected 24 to 1000 columns and 6 to 500 rows, found {w}x{h}",
            w,
            h
        ));
    }
    Ok((w, h))
}

/// The scenario traced here, before the terminal is taken: a position or a lesson is checked
/// against its logs first, and a bad one is one line and exit code 2.
fn traced(scenario: &Scenario) -> Arc<TracedScenario> {
    Arc::new(TracedScenario::from_scenario(scenario))
}

/// The app a lesson opens on, its stops found in the traced scenario.
fn lesson_app(path: &std::path::Path, theme: Theme, w: u16, h: u16) -> Result<App, CliError> {
    let lesson = Lesson::load(path)?;
    let scenario =
        load(&lesson.scenario).map_err(|e| CliError::Input(tr!("{file}: scenario: {e}", file = lesson.source, e)))?;
    let traced = traced(&scenario);
    Ok(App::lesson(traced, lesson, theme, w, h)?)
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
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
    let plain = no_color_env() || std::env::args_os().any(|a| a == "--no-color");
    let theme = if plain { Theme::MONO } else { Theme::COLOR };
    let (w, h) = args.size;
    // a lesson, a position or a snapshot: traced and checked before anything is drawn
    let ready = if let Some(path) = &args.lesson {
        Some(lesson_app(path, theme, w, h)?)
    } else if args.at.is_some() || args.pass.is_some() || args.snapshot.is_some() {
        let file = args
            .scenario
            .as_ref()
            .map_or("<built-in>".into(), |p| p.display().to_string());
        let app = App::at(
            traced(&scenario),
            args.variant,
            args.pass,
            args.at.as_deref(),
            theme,
            w,
            h,
        )
        .map_err(|e| CliError::Input(tr!("{file}: --at: {e}", file, e)))?;
        Some(app)
    } else {
        None
    };
    let mut ready = ready.map(|app| app.with_quiz(args.quiz));
    if let Some(out) = &args.snapshot {
        let Some(app) = &mut ready else { return Ok(()) };
        let text = app
            .snapshot_for(out, w, h)
            .map_err(|e| CliError::Failed(e.to_string()))?;
        // the one exit-code rule: a destination that cannot be written is bad input (2), a
        // write that fails (a full disk) is a failure (1)
        let mut file = AtomicFile::create(out)
            .map_err(|e| CliError::Input(tr!("{path}: cannot write there: {e}", path = out.display(), e)))?;
        std::io::Write::write_all(&mut file, text.as_bytes())
            .and_then(|()| file.commit())
            .map_err(|e| CliError::Failed(tr!("{path}: cannot write: {e}", path = out.display(), e)))?;
        return Ok(());
    }
    // the learner's trace is read and graded before the terminal is taken over: a bad one is
    // one line and exit code 2
    let mine = match (&args.mine, &args.scenario) {
        (Some(trace), Some(path)) => {
            Some(Mine::load(&scenario, path, trace, args.bind.as_deref()).map_err(CliError::Input)?)
        }
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
    // the scenario is traced on a worker thread behind a progress screen: a large one never
    // leaves the terminal blank
    let (variant, quiz) = (args.variant, args.quiz);
    tui::run(|w, h| {
        let app = match (mine, ready) {
            (Some(view), _) => App::with_mine(scenario, view, theme, w, h),
            (None, Some(app)) => app.sized(w, h),
            (None, None) => App::opening(scenario, variant, theme, w, h).with_quiz(quiz),
        };
        app.with_quiz_report(args.quiz_report)
    })
    .map_err(CliError::Other)
}
