//! The README's pictures (`assets/*.svg`): the real app driven headlessly, exactly as the
//! terminal drives it (`update` with key and tick messages), and drawn on a ratatui
//! `TestBackend` that `svg::render` turns into a picture. `cargo run --example
//! screenshots` writes them; a test holds the committed ones to [`screenshots`].
//!
//! The menu, tracer, quiz, gradient check, compare, help, mistakes, traffic and cache-misses
//! pictures are deterministic: they change only when the app does. The train screen and the
//! attention map ([`trained_screenshots`]) come from a real training run (a few seconds in a
//! release build), so their timings, and on other hardware their last digits, differ from run
//! to run: they are rewritten, never checked.

use super::app::{self, App, Msg, Screen};
use super::cache_sweep::{LevelsFrom, Simulation};
use super::screens::traffic::Traffic;
use super::screens::train::{Field, RunView};
use super::{Mine, Theme, TracedScenario};
use attn_trace_analysis::{cache, learner};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::Path;
use std::time::{Duration, Instant};

/// Terminal size of the tracer screenshots: wide enough for its full layout.
const W: u16 = 120;
const H: u16 = 40;

fn press(app: &mut App, code: KeyCode) {
    app::update(app, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// The app drawn once on a `w`×`h` terminal, as SVG.
fn svg(app: &App, w: u16, h: u16) -> Result<String, String> {
    let mut term = Terminal::new(TestBackend::new(w, h)).map_err(|e| e.to_string())?;
    term.draw(|f| app::render(f, app)).map_err(|e| e.to_string())?;
    Ok(super::svg::render(term.backend().buffer()))
}

/// `(file name, picture)` for every screenshot the README shows.
pub fn screenshots() -> Result<Vec<(&'static str, String)>, String> {
    let traced = || TracedScenario::builtin();
    let mut shots = Vec::new();

    // the menu and compare screens leave the bottom of a tall terminal empty: shorter pictures
    let menu = App::with_menu(traced(), Theme::COLOR, 100, 20);
    shots.push(("menu.svg", svg(&menu, 100, 20)?));

    // the built-in walkthrough opens the tracer on its focus: b=0, h=1, i=2, j=1 (scores[16])
    let tracer = App::new(traced(), Theme::COLOR, W, H);
    shots.push(("tracer.svg", svg(&tracer, W, H)?));
    // the same screen in 简体中文 (`--lang zh-CN`)
    let zh = attn_trace_i18n::with_lang(attn_trace_i18n::Lang::ZhCn, || svg(&tracer, W, H))?;
    shots.push(("tracer.zh-CN.svg", zh));

    let mut compare = App::with_menu(traced(), Theme::COLOR, W, 24);
    press(&mut compare, KeyCode::Char('3'));
    shots.push(("compare.svg", svg(&compare, W, 24)?));
    // MHA beside flash on flash.toml: P[0,1,3,2] stored by one, never by the other
    let flash = Scenario::shipped("flash").ok_or("flash.toml is shipped")?;
    let mut compare = App::with_menu(TracedScenario::from_scenario(&flash), Theme::COLOR, W, 34);
    press(&mut compare, KeyCode::Char('3'));
    shots.push(("compare_flash.svg", svg(&compare, W, 34)?));

    // quiz mode on the same element, after a wrong answer: the working with the numbers
    let mut quiz = App::new(traced(), Theme::COLOR, W, H);
    for code in [KeyCode::Char('Q'), KeyCode::Char('8'), KeyCode::Enter] {
        press(&mut quiz, code);
    }
    shots.push(("quiz.svg", svg(&quiz, W, H)?));

    // the backward pass at the write of d_q[10], its gradient check in (computed on the
    // tracer's worker: drawn once it is there, as a person sees it a moment later)
    let mut back = App::new(traced(), Theme::COLOR, W, H);
    press(&mut back, KeyCode::Char('g'));
    for c in "d_q[10]".chars() {
        press(&mut back, KeyCode::Char(c));
    }
    press(&mut back, KeyCode::Enter);
    if let Screen::Tracer(t) = &mut back.screen {
        t.checks.wait(Duration::from_secs(60));
    }
    app::update(&mut back, Msg::Tick);
    shots.push(("gradcheck.svg", svg(&back, W, H)?));

    let mut help = App::new(traced(), Theme::COLOR, W, H);
    press(&mut help, KeyCode::Char('?'));
    shots.push(("help.svg", svg(&help, W, H)?));

    // the mistakes gallery's mask-by-multiply side by side, at the event where the runs part (d)
    let scenario = Scenario::mistake("mask_by_multiply").ok_or("the gallery ships mask_by_multiply")?;
    let mut mistakes = App::new(TracedScenario::from_scenario(&scenario), Theme::COLOR, W, H);
    press(&mut mistakes, KeyCode::Char('d'));
    shots.push(("mistakes.svg", svg(&mistakes, W, H)?));

    // a learner's kernel beside the reference: the mask-by-multiply kernel's own trace, graded,
    // opened where it diverges (as `tui SCENARIO --mine TRACE` opens it)
    shots.push(("mine.svg", mine_shot()?));

    // memory traffic: naive against flash as T grows (menu entry 9)
    let mut traffic = App::with_menu(traced(), Theme::COLOR, W, 34);
    press(&mut traffic, KeyCode::Char('9'));
    shots.push(("traffic.svg", svg(&traffic, W, 34)?));

    // c there: the cache misses, simulated on the screen's worker (drawn once it is done). The
    // caches are fixed (the documented defaults, not this machine's) so that the picture is the
    // same everywhere, and T stops at 256 so that it takes a second or two
    let levels = cache::parse_levels(cache::DEFAULT_LEVELS)?;
    let sim = Simulation::new(levels, LevelsFrom::Given, &[64, 128, 256], &cache::SWEEP_TILES);
    let mut misses = App::with_menu(traced(), Theme::COLOR, W, 34);
    misses.screen = Screen::Traffic(Box::new(Traffic::with_simulation(64, false, sim)));
    press(&mut misses, KeyCode::Char('c'));
    if let Screen::Traffic(t) = &mut misses.screen
        && !t.sim.wait(Duration::from_secs(600))
    {
        return Err("the cache simulation did not finish in 10 minutes".into());
    }
    app::update(&mut misses, Msg::Tick);
    shots.push(("cache_sweep.svg", svg(&misses, W, 34)?));

    Ok(shots)
}

/// The `--mine` view on the mistaken forward pass of `scenarios/mistakes/mask_by_multiply.toml`,
/// written as a learner's recorder writes it (op, buffer, offset, value, file, line) from the
/// mistaken run's log.
fn mine_shot() -> Result<String, String> {
    use std::io::Write as _;
    let scenario = Scenario::mistake("mask_by_multiply").ok_or("the gallery ships mask_by_multiply")?;
    let inputs = scenario.mistaken_inputs().ok_or("a scenario with mistakes")?;
    let run = attn_trace_core::engine::run(&inputs, Variant::Mha, scenario.passes, true);
    let trace = run.trace.as_ref().ok_or("a traced run")?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("trace.jsonl");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&file).map_err(|e| e.to_string())?);
    let io = |e: std::io::Error| e.to_string();
    let dims = learner::dims(scenario.shape, 1);
    let header = learner::trace_header(None, Some(Variant::Mha), Some(Pass::Forward), 0, &dims);
    writeln!(w, "{header}").map_err(io)?;
    for (n, e) in trace.events.iter().enumerate() {
        writeln!(
            w,
            "{{\"op\":\"{}\",\"buffer\":\"{}\",\"offset\":{},\"value\":{:?},\"file\":\"{}\",\"line\":{}}}",
            e.op.name(),
            e.buf.name(),
            e.offset,
            e.value,
            trace.file_of(n),
            e.line
        )
        .map_err(io)?;
    }
    w.flush().map_err(io)?;
    drop(w);
    let mut view = Mine::load(
        &scenario,
        Path::new("scenarios/mistakes/mask_by_multiply.toml"),
        &file,
        None,
    )?;
    view.trace = "trace.jsonl".into();
    let app = App {
        screen: Screen::Mine(Box::new(view)),
        ..App::new(TracedScenario::builtin(), Theme::COLOR, W, H)
    };
    svg(&app, W, H)
}

/// Training steps of the run the train screen shows: enough for the copy task's diagonal.
const TRAIN_STEPS: &str = "600";

/// The train screen after a real run of the form's default model (the copy task), and the
/// attention map of the trained model on the prompt the screen suggests.
pub fn trained_screenshots() -> Result<Vec<(&'static str, String)>, String> {
    let mut app = App::with_menu(TracedScenario::builtin(), Theme::COLOR, W, H);
    press(&mut app, KeyCode::Char('5'));
    if !matches!(app.screen, Screen::Train) {
        return Err("menu entry 5 did not open the train screen".into());
    }
    let focus = |app: &App| app.train.as_ref().map(|t| t.form.focus);
    while focus(&app) != Some(Field::Steps as usize) {
        press(&mut app, KeyCode::Tab);
    }
    press(&mut app, KeyCode::Delete);
    for c in TRAIN_STEPS.chars() {
        press(&mut app, KeyCode::Char(c));
    }
    press(&mut app, KeyCode::Enter);
    // the worker trains on its own thread; ticks hand its reports to the screen
    let start = Instant::now();
    let done = |app: &App| {
        app.train
            .as_ref()
            .and_then(|t| t.progress())
            .is_some_and(RunView::is_done)
    };
    while !done(&app) {
        if start.elapsed() > Duration::from_secs(600) {
            return Err("the training run did not finish in 10 minutes".into());
        }
        std::thread::sleep(Duration::from_millis(20));
        app::update(&mut app, Msg::Tick);
    }
    let mut shots = vec![("train.svg", svg(&app, W, H)?)];

    // t: the trained weights on a prompt; Enter: every head's attention on it
    press(&mut app, KeyCode::Char('t'));
    press(&mut app, KeyCode::Enter);
    if !matches!(app.screen, Screen::AttnMap(_)) {
        return Err("t then Enter on the finished run did not open the attention map".into());
    }
    shots.push(("attention_map.svg", svg(&app, W, H)?));
    Ok(shots)
}
