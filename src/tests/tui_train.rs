//! Training TinyGPT from the TUI and tracing the trained attention: the form and its checks, a
//! real short run driven through the app state (its loss series and chart data against a
//! trainer run directly), pause/stop/snapshot answered while training, checkpoints saved and
//! reopened, the attention map, and the tracer on a layer equal, tensor for tensor, to
//! `attn-trace run` on the scenario exported with `e`. Snapshots: form, running, finished.

use crate::tests::support::tui::{chars, draw, key};
use crate::tui::app::{self, App, Msg, Popup, Screen};
use crate::tui::screens::attn_map::AttnMap;
use crate::tui::screens::prompt::Origin;
use crate::tui::screens::train::worker::{self, Report, Sample, Source, Spec, TaskLine};
use crate::tui::screens::train::{Field, Form, RunState, RunView, Train};
use crate::tui::{Theme, TracedScenario};
use assert_cmd::Command;
use attn_trace_core::engine;
use attn_trace_core::kernels::Variant;
use attn_trace_core::kernels::rope::Pairs;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::{Buf, Op};
use attn_trace_model::gpt::Attention;
use attn_trace_model::{Config, TinyGpt, Trainer};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

fn train(app: &App) -> &Train {
    app.train.as_deref().expect("the train screen has state")
}

/// Ticks the app (as the terminal loop does while training) until `done` holds.
fn tick_until(app: &mut App, what: &str, done: impl Fn(&App) -> bool) {
    let start = Instant::now();
    while !done(app) {
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
        app::update(app, Msg::Tick);
    }
}

/// Types `text` into form field `f` (replacing what was there), moving there with Tab.
fn set_field(app: &mut App, f: Field, text: &str) {
    for _ in 0..=Field::ALL.len() {
        if train(app).form.focus == f as usize {
            break;
        }
        key(app, KeyCode::Tab);
    }
    assert_eq!(train(app).form.focus, f as usize);
    key(app, KeyCode::Delete);
    chars(app, text);
    assert_eq!(train(app).form.value(f), text);
}

fn menu_to_train(w: u16, h: u16) -> App {
    let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
    key(&mut app, KeyCode::Char('5'));
    assert!(matches!(app.screen, Screen::Train), "menu entry 5 is Train TinyGPT");
    app
}

/// A tiny copy-task model that trains a few dozen steps in well under a second.
fn tiny_form(app: &mut App, steps: u64, save: &Path) {
    set_field(app, Field::Dataset, "copy");
    set_field(app, Field::Layers, "1");
    set_field(app, Field::DModel, "16");
    set_field(app, Field::Heads, "2");
    set_field(app, Field::Seq, "12");
    set_field(app, Field::Batch, "4");
    set_field(app, Field::Steps, &steps.to_string());
    set_field(app, Field::Lr, "3e-3");
    set_field(app, Field::Seed, "7");
    set_field(app, Field::Save, &save.display().to_string());
}

#[test]
fn the_form_snapshots_and_its_defaults_are_valid() {
    for (w, h) in [(80, 24), (120, 40)] {
        let app = menu_to_train(w, h);
        let checked = train(&app).form.check();
        let spec = checked.spec.expect("the defaults are valid");
        assert_eq!(spec.source, Source::Builtin("copy".into()));
        assert_eq!(
            (
                spec.config.n_layers,
                spec.config.d_model,
                spec.config.n_heads,
                spec.config.seq_len
            ),
            (1, 32, 4, 24)
        );
        assert_eq!((spec.batch, spec.steps, spec.lr, spec.seed), (16, 3000, 0.003, 42));
        let screen = draw(&app, w, h);
        assert!(screen.contains("Start training"), "{screen}");
        insta::assert_snapshot!(format!("train_form_{w}x{h}"), screen);
    }
}

#[test]
fn every_field_is_checked_inline_and_a_bad_form_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short.txt");
    std::fs::write(&short, b"too short").unwrap();
    let mut app = menu_to_train(120, 40);
    let cases: Vec<(Field, String, &str)> = vec![
        (Field::Heads, "5".into(), "C % H"),
        (Field::DModel, "0".into(), "must be 1..="),
        (Field::Layers, "two".into(), "not a whole number"),
        (Field::Lr, "fast".into(), "not a number"),
        (Field::Lr, "-1".into(), "must be in (0, 1]"),
        (Field::Steps, String::new(), "empty"),
        (Field::Seed, "-3".into(), "not a whole number"),
        (Field::Dataset, "no/such/file.txt".into(), "no such file"),
        (Field::Dataset, short.display().to_string(), "too short"),
        (Field::Dataset, dir.path().display().to_string(), "directory"),
        (Field::Save, "/no/such/dir/x.safetensors".into(), "does not exist"),
        (
            Field::KvHeads,
            "3".into(),
            "must divide the heads: 4 query heads cannot be shared out among 3 key/value heads",
        ),
        (Field::KvHeads, "0".into(), "must be 1..="),
        (Field::KvHeads, "a few".into(), "not a whole number"),
        (
            Field::Rope,
            "spiral".into(),
            "must be none, interleaved or half, got \"spiral\"",
        ),
    ];
    for (f, text, want) in cases {
        let before = train(&app).form.value(f).to_string();
        set_field(&mut app, f, &text);
        let checked = train(&app).form.check();
        let err = checked.errors[f as usize].clone().unwrap_or_default();
        assert!(err.contains(want), "{f:?} = {text:?}: got {err:?}");
        assert!(checked.spec.is_none());
        let screen = draw(&app, 120, 40);
        assert!(screen.contains(&format!("✗ {}", &err[..err.len().min(20)])), "{screen}");
        // Enter refuses to start and moves to the first bad field
        key(&mut app, KeyCode::Enter);
        assert!(train(&app).session.is_none(), "{f:?} = {text:?} must not start");
        assert_eq!(train(&app).form.focus, f as usize);
        assert!(train(&app).message.as_deref().is_some_and(|m| m.contains("✗")));
        set_field(&mut app, f, &before);
    }
    assert!(train(&app).form.check().spec.is_some(), "restored to valid");
    // the dataset field cycles the built-ins with ←/→
    set_field(&mut app, Field::Dataset, "copy");
    key(&mut app, KeyCode::Right);
    assert_eq!(train(&app).form.value(Field::Dataset), "reverse");
    key(&mut app, KeyCode::Left);
    key(&mut app, KeyCode::Left);
    assert_eq!(train(&app).form.value(Field::Dataset), "kernels");
    // key/value heads and the rotation reach the model's configuration; the rope field cycles
    // none → interleaved → half with →
    set_field(&mut app, Field::KvHeads, "2");
    set_field(&mut app, Field::Rope, "none");
    key(&mut app, KeyCode::Right);
    assert_eq!(train(&app).form.value(Field::Rope), "interleaved");
    key(&mut app, KeyCode::Right);
    assert_eq!(train(&app).form.value(Field::Rope), "half");
    let spec = train(&app).form.check().spec.unwrap();
    assert_eq!((spec.config.n_heads, spec.config.kv_heads()), (4, 2));
    assert_eq!(spec.config.rope, Some(Pairs::Half));
    let screen = draw(&app, 120, 40);
    assert!(screen.contains("4 heads of D = 8 · 2 of 4 k/v heads"), "{screen}");
    // rotating pairs needs an even D: 12 channels over 4 heads is D = 3
    set_field(&mut app, Field::DModel, "12");
    let err = train(&app).form.check().errors[Field::Rope as usize]
        .clone()
        .unwrap_or_default();
    assert!(err.contains("D = d_model / heads = 12 / 4 = 3"), "{err}");
    set_field(&mut app, Field::DModel, "32");
    // empty key/value heads: one per query head, multi-head attention
    set_field(&mut app, Field::KvHeads, "");
    let spec = train(&app).form.check().spec.unwrap();
    assert_eq!((spec.config.n_kv_heads, spec.config.kv_heads()), (None, 4));
    key(&mut app, KeyCode::Esc);
    assert!(matches!(app.screen, Screen::Menu(_)));
}

fn replay_spec() -> Spec {
    Spec {
        config: Config {
            seq_len: 24,
            d_model: 32,
            n_layers: 1,
            n_heads: 4,
            ..Config::default()
        },
        attention: Attention::Naive,
        source: Source::Builtin("copy".into()),
        batch: 16,
        steps: 3000,
        lr: 0.003,
        seed: 42,
        save: PathBuf::from("tinygpt.safetensors"),
    }
}

/// A recorded run: losses falling from 5.5 towards 1.4, 200 steps per second.
fn replayed(steps: u64, finished: bool) -> Vec<Report> {
    let mut r = vec![
        Report::Started {
            params: 45_000,
            train_bytes: 200_000,
            val_bytes: 20_000,
        },
        Report::Val { step: 0, loss: 5.55 },
    ];
    for s in 1..=steps {
        let loss = 1.4 + 4.1 * (-(s as f32) / 300.0).exp();
        r.push(Report::Step {
            step: s,
            loss,
            seconds: s as f64 * 0.005,
        });
        if s % 100 == 0 {
            r.push(Report::Val {
                step: s,
                loss: loss - 0.2,
            });
        }
    }
    let line = |i: &str, g: &str| TaskLine {
        input: i.into(),
        got: g.into(),
        want: i.into(),
    };
    r.push(Report::Sample {
        step: steps,
        sample: Sample::Task {
            lines: vec![line("qwert", "qwert"), line("zyxab", "zyxba")],
            correct: 27,
            of: 32,
        },
    });
    if finished {
        let model = TinyGpt::new(replay_spec().config, 42).unwrap();
        r.push(Report::Finished {
            step: steps,
            seconds: steps as f64 * 0.005,
            stopped: false,
            model: Box::new(model),
        });
    }
    r
}

fn app_with(train: Train, w: u16, h: u16) -> App {
    let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
    app.train = Some(Box::new(train));
    app.screen = Screen::Train;
    app
}

#[test]
fn running_and_finished_snapshots() {
    for (w, h) in [(80, 24), (120, 40)] {
        let running = Train::replay(Form::default(), replay_spec(), replayed(1200, false));
        let p = running.progress().unwrap();
        assert_eq!(p.state, RunState::Running);
        // 200 steps/s of 16·24 tokens; 1800 steps left take 9 s
        assert_eq!(p.tokens_per_s().map(f64::round), Some(76_800.0));
        assert_eq!(p.eta().map(f64::round), Some(9.0));
        let app = app_with(running, w, h);
        let screen = draw(&app, w, h);
        assert!(screen.contains("step 1200/3000"), "{screen}");
        assert!(screen.contains("76,800"), "{screen}");
        assert!(screen.contains("qwert|qwert  ✓"), "{screen}");
        assert!(screen.contains("exact answers: 27 of the first 32"), "{screen}");
        insta::assert_snapshot!(format!("train_running_{w}x{h}"), screen);

        let finished = Train::replay(Form::default(), replay_spec(), replayed(3000, true));
        assert_eq!(
            finished.progress().unwrap().state,
            RunState::Finished { stopped: false }
        );
        let app = app_with(finished, w, h);
        let screen = draw(&app, w, h);
        assert!(screen.contains("finished in 15 s"), "{screen}");
        assert!(screen.contains("n new run"), "{screen}");
        insta::assert_snapshot!(format!("train_finished_{w}x{h}"), screen);
    }
}

#[test]
fn the_log_scale_toggle_plots_the_logarithm() {
    let mut app = app_with(
        Train::replay(Form::default(), replay_spec(), replayed(300, false)),
        120,
        40,
    );
    let linear = train(&app).progress().unwrap().chart(false, 1000);
    key(&mut app, KeyCode::Char('l'));
    assert!(train(&app).log_scale);
    let log = train(&app).progress().unwrap().chart(true, 1000);
    assert_eq!(linear.train.len(), 300);
    for (a, b) in linear.train.iter().zip(&log.train) {
        assert_eq!(a.0, b.0);
        assert!((a.1.ln() - b.1).abs() < 1e-12);
    }
    assert!(draw(&app, 120, 40).contains("log scale · l linear"));
    // more steps than points: bucket means at the buckets' middle steps
    let chart = train(&app).progress().unwrap().chart(false, 100);
    assert_eq!(chart.train.len(), 100);
    let losses = &train(&app).progress().unwrap().losses;
    assert_eq!(chart.train[0].0, 2.0, "steps 1, 2, 3");
    let mean = (losses[0] + losses[1] + losses[2]) / 3.0;
    assert!((chart.train[0].1 - mean as f64).abs() < 1e-6);
}

/// A grouped, rotated model from the form: the header names its key/value heads and rotation,
/// and the losses shown are those of a trainer with the same configuration, bit for bit.
#[test]
fn a_grouped_rotated_run_from_the_form() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = menu_to_train(120, 40);
    tiny_form(&mut app, 12, &dir.path().join("g.safetensors"));
    set_field(&mut app, Field::KvHeads, "1");
    set_field(&mut app, Field::Rope, "interleaved");
    let spec = train(&app).form.check().spec.expect("valid");
    assert_eq!((spec.config.n_heads, spec.config.kv_heads()), (2, 1));
    key(&mut app, KeyCode::Enter);
    tick_until(&mut app, "the run to finish", |a| {
        train(a).progress().is_some_and(RunView::is_done)
    });
    let screen = draw(&app, 120, 40);
    assert!(
        screen.contains("· copy · L1 C16 H2 kv1 rope T12 B4 lr 0.003 ·"),
        "{screen}"
    );
    let mut direct: Trainer = worker::trainer(&spec).unwrap();
    let mut losses = Vec::new();
    direct.train(12, &AtomicBool::new(false), |_, s| losses.push(s.loss));
    assert_eq!(train(&app).progress().unwrap().losses, losses);
    assert_eq!(direct.model.config.rope, Some(Pairs::Interleaved));
}

/// A windowed model from the form: the header names the window and its sinks, the losses are
/// a trainer's with the same configuration bit for bit, and the form refuses sinks without a
/// window in the sinks field.
#[test]
fn a_windowed_run_from_the_form() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = menu_to_train(120, 40);
    tiny_form(&mut app, 12, &dir.path().join("w.safetensors"));
    set_field(&mut app, Field::Sinks, "1");
    let checked = train(&app).form.check();
    assert!(checked.spec.is_none());
    let sinks_error = checked.errors[Field::Sinks as usize].clone().unwrap_or_default();
    assert!(sinks_error.contains("give a window too"), "{sinks_error}");
    set_field(&mut app, Field::Window, "3");
    let spec = train(&app).form.check().spec.expect("valid");
    let sliding = spec.config.sliding.expect("a window");
    assert_eq!((sliding.w, sliding.sinks), (3, 1));
    key(&mut app, KeyCode::Enter);
    tick_until(&mut app, "the run to finish", |a| {
        train(a).progress().is_some_and(RunView::is_done)
    });
    let screen = draw(&app, 120, 40);
    assert!(screen.contains("· copy · L1 C16 H2 W3+1 T12 B4 lr 0.003 ·"), "{screen}");
    let mut direct: Trainer = worker::trainer(&spec).unwrap();
    let mut losses = Vec::new();
    direct.train(12, &AtomicBool::new(false), |_, s| losses.push(s.loss));
    assert_eq!(train(&app).progress().unwrap().losses, losses);
    // and the window acts: the same run over the whole context learns otherwise
    let mut causal = spec.clone();
    causal.config.sliding = None;
    let mut whole: Trainer = worker::trainer(&causal).unwrap();
    let mut causal_losses = Vec::new();
    whole.train(12, &AtomicBool::new(false), |_, s| causal_losses.push(s.loss));
    assert_ne!(causal_losses, losses);
}

#[test]
fn a_flash_run_from_the_form_trains_the_flash_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = menu_to_train(120, 40);
    tiny_form(&mut app, 12, &dir.path().join("f.safetensors"));
    // the attention field cycles naive → flash → naive with →, and back with ←
    set_field(&mut app, Field::Attention, "naive");
    key(&mut app, KeyCode::Right);
    assert_eq!(train(&app).form.value(Field::Attention), "flash");
    key(&mut app, KeyCode::Right);
    assert_eq!(train(&app).form.value(Field::Attention), "naive");
    key(&mut app, KeyCode::Left);
    assert_eq!(train(&app).form.value(Field::Attention), "flash");
    let spec = train(&app).form.check().spec.expect("valid");
    assert_eq!(spec.attention, Attention::FLASH);
    key(&mut app, KeyCode::Enter);
    tick_until(&mut app, "the run to finish", |a| {
        train(a).progress().is_some_and(RunView::is_done)
    });
    let screen = draw(&app, 120, 40);
    assert!(
        screen.contains("· copy · L1 C16 H2 flash T12 B4 lr 0.003 ·"),
        "{screen}"
    );
    let p = train(&app).progress().unwrap();
    assert_eq!(
        p.model.as_deref().map(|m| m.attention),
        Some(Attention::FLASH),
        "the run's model trained with the flash kernel"
    );
    // the same settings trained directly on the flash kernel: the same losses and weights, bit
    // for bit
    let bits = |l: &[f32]| l.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    let run_of = |attention: Attention| {
        let mut model = TinyGpt::new(spec.config, spec.seed).unwrap();
        model.attention = attention;
        let mut direct = Trainer::new(model, Source::Builtin("copy".into()).load(12).unwrap(), 4, 3e-3, 7).unwrap();
        let mut losses = Vec::new();
        direct.train(12, &AtomicBool::new(false), |_, s| losses.push(s.loss));
        (bits(&losses), bits(&direct.model.params))
    };
    let (flash_losses, flash_params) = run_of(Attention::FLASH);
    let trained = bits(&p.model.as_deref().expect("the run's model").params);
    assert_eq!(bits(&p.losses), flash_losses);
    assert_eq!(trained, flash_params);
    // and not the naive kernel's: the two round differently, which 12 steps carry into the
    // weights (the losses alone may agree to the last bit)
    assert_ne!(trained, run_of(Attention::Naive).1);

    // flash with grouped key/value heads: refused in the form with the validator's message
    let mut app = menu_to_train(120, 40);
    tiny_form(&mut app, 12, &dir.path().join("g.safetensors"));
    set_field(&mut app, Field::KvHeads, "1");
    set_field(&mut app, Field::Attention, "flash");
    let checked = train(&app).form.check();
    let want = "flash needs as many key/value heads as heads (H_kv = 1, H = 2): it runs on the MHA layout";
    assert_eq!(checked.errors[Field::Attention as usize].as_deref(), Some(want));
    assert!(checked.spec.is_none());
    let screen = draw(&app, 120, 40);
    assert!(screen.contains("✗ flash needs as many"), "{screen}");
    key(&mut app, KeyCode::Enter);
    assert!(train(&app).session.is_none(), "nothing starts");
    assert_eq!(train(&app).form.focus, Field::Attention as usize);
    // and Trainer, given such a model directly, refuses it with the same words
    let grouped = Spec {
        config: Config {
            n_kv_heads: Some(1),
            ..spec.config
        },
        ..spec.clone()
    };
    let err = worker::trainer(&grouped)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains(want), "{err}");
    // a kernel's name is all the field takes
    set_field(&mut app, Field::Attention, "tiled");
    let err = train(&app).form.check().errors[Field::Attention as usize].clone();
    assert_eq!(err.as_deref(), Some("must be naive or flash, got \"tiled\""));
}

/// The whole loop: train from the form, check what the screen shows against a trainer run
/// directly, save, trace, open the map, trace a probability, export, and compare the tracer
/// with `attn-trace run` on the exported file.
#[test]
fn a_short_run_through_the_app_traces_to_what_run_computes_on_the_export() {
    // saved into a folder the first save makes, as the form's default checkpoints/ is
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("checkpoints").join("tiny.safetensors");
    let mut app = menu_to_train(120, 40);
    tiny_form(&mut app, 30, &save);
    let spec = train(&app).form.check().spec.expect("valid");
    assert_eq!(
        train(&app).form.checked.new_dir.as_deref(),
        Some(dir.path().join("checkpoints").as_path())
    );
    let form = draw(&app, 120, 40);
    assert!(form.contains("checkpoints/ is made then"), "{form}");
    key(&mut app, KeyCode::Enter);
    assert!(app.wants_tick(), "a live run asks for ticks");
    tick_until(&mut app, "the run to finish", |a| {
        train(a).progress().is_some_and(RunView::is_done)
    });
    let p = train(&app).progress().unwrap();
    assert_eq!(p.state, RunState::Finished { stopped: false });
    assert!(!app.wants_tick(), "a finished run is idle");

    // the same run, directly: the app shows exactly its losses
    let mut direct: Trainer = worker::trainer(&spec).unwrap();
    let mut losses = Vec::new();
    let mut val = vec![(0, direct.val_loss().loss)];
    let stop = AtomicBool::new(false);
    direct.train(30, &stop, |t, s| {
        losses.push(s.loss);
        if s.step % 10 == 0 {
            val.push((s.step, t.val_loss().loss));
        }
    });
    assert_eq!(p.step, 30);
    assert_eq!(p.losses, losses, "the loss series shown is the trainer's, bit for bit");
    assert_eq!(p.val, val, "validation every 10 steps and at the end");
    assert!(
        losses[29] < losses[0] - 0.5,
        "it learns: {} → {}",
        losses[0],
        losses[29]
    );
    let chart = p.chart(false, 1000);
    let want: Vec<(f64, f64)> = losses
        .iter()
        .enumerate()
        .map(|(k, &l)| ((k + 1) as f64, l as f64))
        .collect();
    assert_eq!(chart.train, want);
    let want_val: Vec<(f64, f64)> = val.iter().map(|&(s, l)| (s as f64, l as f64)).collect();
    assert_eq!(chart.val, want_val);
    assert!(chart.y_range[0] < losses[29] as f64 && chart.y_range[1] > losses[0] as f64);
    assert!(
        matches!(p.sample, Some((30, Sample::Task { .. }))),
        "a last sample at the end"
    );
    let screen = draw(&app, 120, 40);
    assert!(screen.contains("step 30/30"), "{screen}");
    assert!(screen.contains("finished in"), "{screen}");

    // s saves atomically to the path shown; the checkpoint holds the final weights
    assert!(
        screen.contains(&save.display().to_string()),
        "the save path is on screen"
    );
    key(&mut app, KeyCode::Char('s'));
    tick_until(&mut app, "the save", |a| {
        train(a).message.as_deref().is_some_and(|m| m.starts_with("saved"))
    });
    let msg = train(&app).message.clone().unwrap_or_default();
    assert!(
        msg.contains(&save.display().to_string()),
        "the status says where: {msg}"
    );
    let loaded = attn_trace_model::checkpoint::load(&save).unwrap();
    assert_eq!(loaded.step, 30);
    assert_eq!(Some(&loaded.model), train(&app).progress().unwrap().model.as_deref());

    // t: the prompt screen on the final weights, with a validation line of the task
    key(&mut app, KeyCode::Char('t'));
    let Screen::Prompt(prompt) = &app.screen else {
        panic!("t opens the prompt screen")
    };
    assert_eq!(prompt.text.len(), 11, "a copy line `abcde|abcde`: {:?}", prompt.text);
    assert_eq!(prompt.text.as_bytes()[5], b'|');
    assert_eq!(
        prompt.origin.checkpoint.as_deref(),
        Some(save.as_path()),
        "saved at this very step"
    );
    key(&mut app, KeyCode::Enter);
    let Screen::AttnMap(map) = &app.screen else {
        panic!("Enter opens the attention map")
    };
    let (t, heads) = (map.t(), map.heads());
    assert_eq!((t, heads, map.variant()), (11, 2, Variant::Mha));
    for h in 0..heads {
        for i in 0..t {
            let row: f32 = (0..t).map(|j| map.prob(h, i, j)).sum();
            assert!((row - 1.0).abs() < 1e-5, "head {h} row {i} sums to {row}");
            assert!((i + 1..t).all(|j| map.prob(h, i, j) == 0.0), "masked keys get nothing");
        }
    }
    assert_eq!((map.i, map.layer), (10, 0), "opens on the last query");
    let screen = draw(&app, 120, 40);
    assert!(screen.contains("head 0") && screen.contains("head 1"), "{screen}");

    // select head 1, query 9, key 3 and trace it
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Up);
    for _ in 0..12 {
        key(&mut app, KeyCode::Left);
    }
    for _ in 0..3 {
        key(&mut app, KeyCode::Right);
    }
    let Screen::AttnMap(map) = &app.screen else { panic!() };
    assert_eq!((map.head, map.i, map.j), (1, 9, 3));
    let p_sel = map.prob(1, 9, 3);
    let off = map.offset(1, 9, 3);
    assert_eq!(off, (11 + 9) * 11 + 3);
    key(&mut app, KeyCode::Enter);
    let tracer = app.tracer().expect("Enter opens the tracer");
    let trace = tracer.traced.trace(Variant::Mha).unwrap();
    let ev = trace.events[tracer.cursor];
    assert_eq!((ev.op, ev.buf, ev.offset as usize), (Op::Write, Buf::Probs, off));
    assert_eq!(ev.value, p_sel, "the event wrote the probability the map shows");
    assert_eq!(
        trace.index.writes(Buf::Probs, off).last().map(|&n| n as usize),
        Some(tracer.cursor),
        "the final write: the normalisation"
    );
    let screen = draw(&app, 120, 40);
    assert!(
        screen.contains("TinyGPT layer 0"),
        "the tracer's title names the layer: {screen}"
    );

    // e exports the layer; the file runs to the tracer's tensors, every one
    key(&mut app, KeyCode::Char('e'));
    let msg = app.tracer().unwrap().message.clone().unwrap_or_default();
    let path = dir.path().join("checkpoints").join("tiny-step30-layer0.toml");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    let text = std::fs::read_to_string(&path).unwrap();
    let Some(prompt_text) = app.back.iter().find_map(|s| match s {
        Screen::Prompt(p) => Some(p.text.clone()),
        _ => None,
    }) else {
        panic!("the prompt screen is on the back stack");
    };
    for header in [
        format!("# checkpoint: {}", save.display()),
        "# step: 30".to_string(),
        "# layer: 0 of 1".to_string(),
        format!("# prompt: \"{prompt_text}\" (11 bytes)"),
    ] {
        assert!(
            text.contains(&header),
            "missing {header:?} in\n{}",
            &text[..400.min(text.len())]
        );
    }
    let scenario = Scenario::load(&path).unwrap();
    assert_eq!(
        (scenario.shape.b, scenario.shape.t, scenario.shape.c, scenario.shape.h),
        (1, 11, 16, 2)
    );
    for buf in [Buf::X, Buf::WQkv, Buf::BQkv, Buf::WProj, Buf::BProj, Buf::DOut] {
        assert!(scenario.values.contains_key(&buf), "{buf} is given explicitly");
    }
    let walk_run = app.tracer().unwrap().traced.run(Variant::Mha).unwrap();
    let rerun = engine::run(&scenario.inputs(), Variant::Mha, scenario.passes, false);
    let mut compared = 0;
    for &buf in Buf::ALL {
        assert_eq!(walk_run.tensors.get(buf), rerun.tensors.get(buf), "{buf}");
        compared += usize::from(!rerun.tensors.get(buf).is_empty());
    }
    assert!(compared >= 20, "forward and backward buffers: {compared}");

    // and the real binary: attn-trace run FILE --json gives the same tensors
    let out = Command::cargo_bin("attn-trace")
        .unwrap()
        .args(["run", &path.display().to_string(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["variant"], "mha");
    let tensors = runs[0]["tensors"].as_object().unwrap();
    for &buf in Buf::ALL {
        let ours = walk_run.tensors.get(buf);
        match tensors.get(buf.name()) {
            Some(t) => {
                let data: Vec<f32> = t["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap() as f32)
                    .collect();
                assert_eq!(data, ours, "{buf} from attn-trace run");
            }
            None => assert!(ours.is_empty(), "{buf} missing from attn-trace run"),
        }
    }

    // q walks back: tracer → map → prompt → train screen
    key(&mut app, KeyCode::Char('q'));
    assert!(matches!(app.screen, Screen::AttnMap(_)));
    key(&mut app, KeyCode::Char('q'));
    assert!(matches!(app.screen, Screen::Prompt(_)));
    key(&mut app, KeyCode::Esc);
    assert!(matches!(app.screen, Screen::Train));
    assert!(app.back.is_empty());

    // the saved checkpoint opens from the menu
    key(&mut app, KeyCode::Char('q'));
    assert!(matches!(app.screen, Screen::Menu(_)));
    app.checkpoints_dir = dir.path().join("checkpoints");
    key(&mut app, KeyCode::Char('6'));
    let Screen::Checkpoint(c) = &app.screen else {
        panic!("menu entry 6 is Open checkpoint…")
    };
    assert_eq!(c.entries.len(), 1, "the saved checkpoint is listed");
    key(&mut app, KeyCode::Enter);
    let Screen::Prompt(p) = &app.screen else {
        panic!("a good checkpoint opens the prompt screen")
    };
    assert_eq!(p.origin.step, 30);
    assert_eq!(*p.model, loaded.model);
}

#[test]
fn keys_are_answered_while_training_pause_snapshot_stop_and_quit() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = menu_to_train(80, 24);
    tiny_form(&mut app, 10_000_000, &dir.path().join("long.safetensors"));
    key(&mut app, KeyCode::Enter);
    tick_until(&mut app, "a few steps", |a| train(a).progress().unwrap().step >= 3);

    // space pauses between two steps: the step count stops moving
    key(&mut app, KeyCode::Char(' '));
    tick_until(&mut app, "the pause", |a| {
        train(a).progress().unwrap().state == RunState::Paused
    });
    let at = train(&app).progress().unwrap().step;
    std::thread::sleep(Duration::from_millis(100));
    app::update(&mut app, Msg::Tick);
    assert_eq!(train(&app).progress().unwrap().step, at, "paused means no steps");
    key(&mut app, KeyCode::Char(' '));
    tick_until(&mut app, "steps after resuming", |a| {
        train(a).progress().unwrap().step > at + 2
    });

    // t while training: a snapshot of the current weights opens the prompt screen
    key(&mut app, KeyCode::Char('t'));
    tick_until(&mut app, "the snapshot", |a| matches!(a.screen, Screen::Prompt(_)));
    let Screen::Prompt(p) = &app.screen else { panic!() };
    assert!(p.origin.step > at, "the weights of the current step");
    assert!(p.origin.label.contains("not saved"), "{}", p.origin.label);
    // training goes on while the weights are traced
    let step = train(&app).progress().unwrap().step;
    tick_until(&mut app, "more steps", |a| train(a).progress().unwrap().step > step + 2);
    key(&mut app, KeyCode::Esc);
    assert!(matches!(app.screen, Screen::Train));

    // x stops; the run is finished, marked stopped, with its weights
    key(&mut app, KeyCode::Char('x'));
    tick_until(&mut app, "the stop", |a| train(a).progress().unwrap().is_done());
    let p = train(&app).progress().unwrap();
    assert_eq!(p.state, RunState::Finished { stopped: true });
    assert!(p.model.is_some());
    let screen = draw(&app, 80, 24);
    assert!(screen.contains(&format!("stopped at step {}", p.step)));
    // the status line is done with "stopping after this step": it offers what a stopped run can do
    let status = screen.lines().last().unwrap_or_default();
    assert!(status.contains("n new run"), "status line: {status}");

    // a second run, then quitting mid-run: dropping the app joins the worker at once
    key(&mut app, KeyCode::Char('n'));
    assert!(train(&app).session.is_none(), "n returns to the form");
    key(&mut app, KeyCode::Enter);
    tick_until(&mut app, "the second run", |a| train(a).progress().unwrap().step >= 2);
    let t0 = Instant::now();
    app::update(
        &mut app,
        Msg::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
    );
    assert!(app.quit);
    drop(app);
    assert!(t0.elapsed() < Duration::from_secs(5), "quit waited {:?}", t0.elapsed());
}

#[test]
fn bad_checkpoints_and_prompts_explain_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.safetensors");
    std::fs::write(&bad, b"not a checkpoint at all").unwrap();
    let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    app.checkpoints_dir = dir.path().to_path_buf();
    key(&mut app, KeyCode::Char('6'));
    chars(&mut app, &bad.display().to_string());
    key(&mut app, KeyCode::Enter);
    match &app.popup {
        Some(Popup::Message { text, error, .. }) => {
            assert!(*error);
            assert!(text.contains("bad.safetensors"), "{text}");
            assert_eq!(text.lines().count(), 1, "one line: {text}");
        }
        other => panic!("expected an error popup, got {other:?}"),
    }
    assert!(matches!(app.screen, Screen::Checkpoint(_)), "the screen stays");
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Esc);
    assert!(matches!(app.screen, Screen::Menu(_)));

    // a model saved by the library opens; prompts too long or empty are refused with a reason
    let cfg = Config {
        seq_len: 8,
        d_model: 8,
        n_layers: 2,
        n_heads: 1,
        ..Config::default()
    };
    let good = dir.path().join("good.safetensors");
    attn_trace_model::checkpoint::save(&good, &TinyGpt::new(cfg, 3).unwrap(), 12, None).unwrap();
    key(&mut app, KeyCode::Char('6'));
    chars(&mut app, &good.display().to_string());
    key(&mut app, KeyCode::Enter);
    assert!(matches!(app.screen, Screen::Prompt(_)), "{:?}", app.popup);
    key(&mut app, KeyCode::Delete);
    chars(&mut app, "123456789");
    key(&mut app, KeyCode::Enter);
    let Screen::Prompt(p) = &app.screen else { panic!() };
    assert!(
        p.error.as_deref().is_some_and(|e| e.contains("at most 8")),
        "{:?}",
        p.error
    );
    key(&mut app, KeyCode::Delete);
    key(&mut app, KeyCode::Enter);
    let Screen::Prompt(p) = &app.screen else { panic!() };
    assert!(p.error.as_deref().is_some_and(|e| e.contains("empty")), "{:?}", p.error);
    // layer 1 of the baseline kernel (one head)
    chars(&mut app, "abcabc");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    let Screen::AttnMap(map) = &app.screen else {
        panic!("the map opens")
    };
    assert_eq!((map.layer, map.heads(), map.variant()), (1, 1, Variant::Baseline));
    for (w, h) in [(80, 24), (10, 3), (40, 12), (200, 60)] {
        app::update(&mut app, Msg::Resize(w, h));
        draw(&app, w, h);
    }
    key(&mut app, KeyCode::Char('t'));
    let t = app.tracer().expect("t opens the tracer on the layer");
    assert_eq!((t.cursor, t.variant), (0, Variant::Baseline));
    // every tracer key works on a trained layer as on a scenario
    for c in ['n', 'j', 'J', ']', 'f', 'w', 'r', 'b', 'c', 'C', 's', 'g'] {
        key(&mut app, KeyCode::Char(c));
    }
    chars(&mut app, "probs[5]");
    key(&mut app, KeyCode::Enter);
    let t = app.tracer().unwrap();
    let ev = t.traced.trace(Variant::Baseline).unwrap().events[t.cursor];
    assert_eq!((ev.buf, ev.offset), (Buf::Probs, 5), "goto works on the trained trace");
    draw(&app, 120, 40);
}

#[test]
fn attention_map_snapshots() {
    // a fixed-seed (untrained) model: the map's layout, labels and selection, deterministically
    let cfg = Config {
        seq_len: 16,
        d_model: 16,
        n_layers: 2,
        n_heads: 4,
        ..Config::default()
    };
    let model = Arc::new(TinyGpt::new(cfg, 5).unwrap());
    for (w, h) in [(80, 24), (120, 40)] {
        let origin = Origin {
            label: "map.safetensors (step 0)".into(),
            checkpoint: Some(PathBuf::from("map.safetensors")),
            step: 0,
            dataset: None,
            dir: PathBuf::from("."),
            stem: "map".into(),
            flash: false,
        };
        let map = AttnMap::new(Arc::clone(&model), origin, b"abc|cba ab", 0).unwrap();
        let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
        app.screen = Screen::AttnMap(Box::new(map));
        key(&mut app, KeyCode::Tab);
        let Screen::AttnMap(map) = &app.screen else {
            panic!("the map stays")
        };
        assert_eq!((map.head, map.i, map.t()), (1, 9, 10));
        let screen = draw(&app, w, h);
        // the prompt's bytes label both axes (space as ␣); at 80 columns every head is there,
        // one column per cell
        if w == 80 {
            assert!(screen.contains("abc|cba␣ab"), "{screen}");
            assert!(screen.contains("│b ▓░"), "query labels down the side: {screen}");
            assert!(screen.contains("head 3"), "all four heads: {screen}");
        } else {
            assert!(screen.contains("a b c | c b a ␣ a b"), "{screen}");
            assert!(screen.contains("│b ▓▓░░"), "query labels down the side: {screen}");
        }
        insta::assert_snapshot!(format!("attn_map_{w}x{h}"), screen);
    }
    // at 120×40 both layers show; a click on layer 1, head 2, cell (i=3, j=1) traces it:
    // that grid's box starts at column 2·24 = 48, row 1 + 13; its cells 3 columns and 2 rows in
    let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
    let origin = Origin {
        label: "map".into(),
        checkpoint: None,
        step: 0,
        dataset: None,
        dir: PathBuf::from("."),
        stem: "map".into(),
        flash: false,
    };
    app.screen = Screen::AttnMap(Box::new(AttnMap::new(model, origin, b"abc|cba ab", 0).unwrap()));
    let click = MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 48 + 3 + 2, // j = 1: one cell of two columns in
        row: 14 + 2 + 3,
        modifiers: KeyModifiers::NONE,
    };
    app::update(&mut app, Msg::Mouse(click));
    let t = app.tracer().expect("a click on a cell opens the tracer");
    let ev = t.traced.trace(Variant::Mha).unwrap().events[t.cursor];
    assert_eq!(
        (ev.op, ev.buf, ev.offset),
        (Op::Write, Buf::Probs, (2 * 10 + 3) * 10 + 1)
    );
    assert!(t.traced.title.starts_with("TinyGPT layer 1"), "{}", t.traced.title);
    key(&mut app, KeyCode::Char('q'));
    let Screen::AttnMap(map) = &app.screen else {
        panic!("q returns to the map")
    };
    assert_eq!(
        (map.layer, map.head, map.i, map.j),
        (1, 2, 3, 1),
        "the clicked cell stays selected"
    );
}

#[test]
fn checkpoints_go_in_a_folder_made_on_demand_and_are_not_committed() {
    // the form's default is checkpoints/, where "Open checkpoint…" looks
    let form = Form::default();
    let save = form.value(Field::Save);
    assert!(
        save.starts_with(&format!("{}/", crate::tui::screens::train::CHECKPOINTS)),
        "{save}"
    );
    // a folder that is missing is made by the save, one level in a folder that exists
    let dir = tempfile::tempdir().unwrap();
    let mut form = Form::default();
    form.set(
        Field::Save,
        &dir.path().join("runs/m.safetensors").display().to_string(),
    );
    assert_eq!(form.checked.errors[Field::Save as usize], None);
    assert_eq!(form.checked.new_dir.as_deref(), Some(dir.path().join("runs").as_path()));
    form.set(
        Field::Save,
        &dir.path().join("no/such/m.safetensors").display().to_string(),
    );
    assert!(
        form.checked.errors[Field::Save as usize]
            .as_deref()
            .is_some_and(|e| e.contains("does not exist")),
        "{:?}",
        form.checked.errors
    );
    // neither checkpoints nor the folder are committed by accident
    let ignore = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "*.safetensors"), "{ignore}");
    assert!(ignore.lines().any(|l| l == "/checkpoints/"), "{ignore}");
}

#[test]
fn heads_side_by_side_scroll_together_and_four_heads_of_t16_fit_at_120x40() {
    let cfg = Config {
        seq_len: 16,
        d_model: 16,
        n_layers: 1,
        n_heads: 4,
        ..Config::default()
    };
    let model = Arc::new(TinyGpt::new(cfg, 5).unwrap());
    let origin = Origin {
        label: "map".into(),
        checkpoint: None,
        step: 0,
        dataset: None,
        dir: PathBuf::from("."),
        stem: "map".into(),
        flash: false,
    };
    let prompt = b"abcdefg|ABCDEFG|";
    for (w, h) in [(120, 40), (80, 24)] {
        let map = AttnMap::new(Arc::clone(&model), origin.clone(), prompt, 0).unwrap();
        let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
        app.screen = Screen::AttnMap(Box::new(map));
        // the selection on the first query, then on the last
        for _ in 0..15 {
            key(&mut app, KeyCode::Up);
        }
        for target in [0usize, 15] {
            if target == 15 {
                for _ in 0..15 {
                    key(&mut app, KeyCode::Down);
                }
            }
            let screen = draw(&app, w, h);
            let lines: Vec<&str> = screen.lines().map(|l| l.trim_matches('"')).collect();
            // the row under each box's key labels: the first query row shown, one per head
            let boxes: Vec<usize> = lines[1].match_indices("┌").map(|(k, _)| k).collect();
            assert_eq!(boxes.len(), 4, "{w}×{h}: four heads side by side\n{screen}");
            for hh in 0..4 {
                assert!(lines[1].contains(&format!("head {hh}")), "{w}×{h}: head {hh}\n{screen}");
            }
            // the query label right after each box's left border
            let first_rows: Vec<char> = lines[3]
                .split("││")
                .filter_map(|s| s.trim_start_matches('│').chars().next())
                .collect();
            assert_eq!(first_rows.len(), 4, "{w}×{h}: {}", lines[3]);
            assert!(
                first_rows.iter().all(|&c| c == first_rows[0]),
                "{w}×{h}, i = {target}: every head starts at the same query row: {first_rows:?}\n{screen}"
            );
            if w == 120 {
                assert_eq!(first_rows[0], 'a', "all 16 rows fit at 120×40\n{screen}");
            }
        }
    }
}

mod random_input {
    use super::*;
    use proptest::prelude::*;

    const KEYS: &[KeyCode] = &[
        KeyCode::Char('a'),
        KeyCode::Char('|'),
        KeyCode::Char('e'),
        KeyCode::Char('t'),
        KeyCode::Char('q'),
        KeyCode::Char('?'),
        KeyCode::Char('['),
        KeyCode::Char(']'),
        KeyCode::Char(' '),
        KeyCode::Char('s'),
        KeyCode::Char('x'),
        KeyCode::Char('l'),
        KeyCode::Char('n'),
        KeyCode::Char('5'),
        KeyCode::Char('6'),
        KeyCode::Char('9'),
        KeyCode::Enter,
        KeyCode::Esc,
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::Backspace,
        KeyCode::Delete,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::Up,
        KeyCode::Down,
    ];

    #[derive(Clone, Debug)]
    enum Act {
        Key(usize),
        Click(u16, u16),
        Resize(u16, u16),
    }

    fn act() -> impl Strategy<Value = Act> {
        prop_oneof![
            8 => (0..KEYS.len()).prop_map(Act::Key),
            2 => (0u16..140, 0u16..45).prop_map(|(x, y)| Act::Click(x, y)),
            1 => prop_oneof![Just((10u16, 3u16)), Just((80, 24)), Just((120, 40)), (1u16..160, 1u16..50)]
                .prop_map(|(w, h)| Act::Resize(w, h)),
        ]
    }

    proptest! {
        #![proptest_config(crate::tests::support::proptest_config(24))]

        /// From the attention map of a 2-layer, 2-head model (the prompt screen behind it),
        /// random keys, clicks and resizes: the map, the prompt, the tracer on a trained layer,
        /// the menu, the train form and the checkpoint list never panic.
        #[test]
        fn the_trained_model_screens_never_panic(acts in prop::collection::vec(act(), 1..60)) {
            let dir = tempfile::tempdir().unwrap();
            let cfg = Config { seq_len: 8, d_model: 8, n_layers: 2, n_heads: 2, ..Config::default() };
            let model = TinyGpt::new(cfg, 11).unwrap();
            let origin = Origin {
                label: "random".into(),
                checkpoint: None,
                step: 0,
                dataset: None,
                dir: dir.path().to_path_buf(),
                stem: "random".into(),
                flash: false,
            };
            let map = AttnMap::new(Arc::new(model.clone()), origin.clone(), b"ab|ba", 0).unwrap();
            let mut app = App::with_menu(TracedScenario::builtin(), Theme::COLOR, 120, 40);
            app.checkpoints_dir = dir.path().to_path_buf();
            app.back.push(Screen::Prompt(Box::new(crate::tui::screens::prompt::Prompt::new(model, origin))));
            app.screen = Screen::AttnMap(Box::new(map));
            for a in &acts {
                let msg = match *a {
                    Act::Key(k) => Msg::Key(KeyEvent::new(KEYS[k], KeyModifiers::NONE)),
                    Act::Click(x, y) => Msg::Mouse(MouseEvent {
                        kind: MouseEventKind::Down(MouseButton::Left),
                        column: x,
                        row: y,
                        modifiers: KeyModifiers::NONE,
                    }),
                    Act::Resize(w, h) => Msg::Resize(w, h),
                };
                app::update(&mut app, msg);
                if app.quit {
                    break;
                }
                let (w, h) = (app.area.width.max(1), app.area.height.max(1));
                let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
                term.draw(|f| app::render(f, &app)).unwrap();
                if let Screen::AttnMap(m) = &app.screen {
                    prop_assert!(m.i < m.t() && m.j < m.t() && m.head < m.heads() && m.layer < 2);
                }
                if let Some(t) = app.tracer() {
                    prop_assert!(t.cursor < t.len());
                }
            }
        }
    }
}

#[test]
fn a_prompt_whose_trace_is_too_big_is_refused_with_the_length_that_fits() {
    use crate::tui::screens::attn_map::MAX_TRACE_EVENTS;
    let cfg = Config {
        seq_len: 64,
        d_model: 128,
        n_layers: 1,
        n_heads: 4,
        ..Config::default()
    };
    let model = Arc::new(TinyGpt::new(cfg, 1).unwrap());
    let origin = Origin {
        label: "big".into(),
        checkpoint: None,
        step: 0,
        dataset: None,
        dir: PathBuf::from("."),
        stem: "big".into(),
        flash: false,
    };
    let prompt = [b'a'; 64];
    let e = AttnMap::new(Arc::clone(&model), origin.clone(), &prompt, 0).unwrap_err();
    assert!(e.contains(&format!("over the TUI's {MAX_TRACE_EVENTS}")), "{e}");
    let fits: usize = e
        .split("prompts up to ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no length in {e}"));
    assert!((1..64).contains(&fits), "{e}");
    assert!(AttnMap::new(Arc::clone(&model), origin.clone(), &prompt[..fits], 0).is_ok());
    assert!(
        AttnMap::new(model, origin, &prompt[..fits + 1], 0).is_err(),
        "the longest that fits"
    );
}

#[test]
fn drawing_the_form_never_looks_at_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("text.txt");
    std::fs::write(&data, "abcdefghij".repeat(100)).unwrap();
    let mut app = menu_to_train(120, 40);
    set_field(&mut app, Field::Dataset, &data.display().to_string());
    assert_eq!(train(&app).form.checked.errors[Field::Dataset as usize], None);
    // the file goes away between two frames: the frames show the form as last checked
    std::fs::remove_file(&data).unwrap();
    let screen = draw(&app, 120, 40);
    assert!(!screen.contains("no such file"), "{screen}");
    // the next key checks again
    key(&mut app, KeyCode::End);
    let message = train(&app).form.checked.errors[Field::Dataset as usize].clone();
    assert!(message.is_some_and(|m| m.contains("no such file")));
    assert!(draw(&app, 120, 40).contains("no such file"));
}
