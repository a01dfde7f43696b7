//! `tui --mine`: a learner's trace beside the reference, driven through `update` as the terminal
//! drives it. The gallery's mistaken kernels stand in for a learner's (their traces are exported
//! with `trace --mistaken`); every number the screen prints is read back from the two logs.

use crate::support::cli::cmd;
use crate::support::root;
use crate::support::tui::{draw, key, screen_lines};
use attn_trace::tui::app::{App, Screen};
use attn_trace::tui::screens::mine::{self, Mine};
use attn_trace::tui::{Theme, Walk};
use attn_trace_analysis::format::num;
use attn_trace_core::scenario::Scenario;
use crossterm::event::KeyCode;
use std::path::{Path, PathBuf};

/// The mistaken trace of gallery scenario `name` written into `dir`, and the scenario's path.
fn mistaken(dir: &Path, name: &str, pass: &str) -> (PathBuf, PathBuf) {
    let s = root().join("scenarios/mistakes").join(format!("{name}.toml"));
    let t = dir.join(format!("{name}.jsonl"));
    cmd()
        .args(["trace", "--mistaken", "--pass", pass])
        .arg(&s)
        .arg("-o")
        .arg(&t)
        .assert()
        .success();
    (s, t)
}

fn opened(s: &Path, t: &Path) -> App {
    let scenario = Scenario::load(s).unwrap();
    let view = mine::load(&scenario, s, t, None).unwrap();
    App {
        screen: Screen::Mine(Box::new(view)),
        ..App::new(Walk::builtin(), Theme::MONO, 120, 40)
    }
}

fn view(app: &App) -> &Mine {
    match &app.screen {
        Screen::Mine(m) => m,
        _ => panic!("the --mine view is open"),
    }
}

/// The two access lines of the screen, as printed.
fn access_lines(app: &App) -> (String, String) {
    let screen = screen_lines(app, 120, 40);
    let yours = screen
        .iter()
        .find(|l| l.starts_with("yours #"))
        .unwrap()
        .trim_end()
        .to_string();
    let reference = screen
        .iter()
        .find(|l| l.starts_with("reference #") || l.starts_with("the reference never"))
        .unwrap()
        .trim_end()
        .to_string();
    (yours, reference)
}

#[test]
fn it_opens_at_the_divergence_and_every_access_line_is_the_logs() {
    let dir = tempfile::tempdir().unwrap();
    let (s, t) = mistaken(dir.path(), "scale_by_seq_len", "forward");
    let mut app = opened(&s, &t);
    let m = view(&app);
    let (n0, r0) = m.beside.divergence().unwrap();
    let n0 = n0.unwrap();
    assert_eq!(m.n, n0, "opens on the learner's write of the divergent cell");
    let screen = draw(&app, 120, 40);
    assert!(
        screen.contains("3. first divergence (d): scores[b0 h0 i0 j0]"),
        "{screen}"
    );
    assert!(screen.contains("mistake 2: scale_by_seq_len"), "{screen}");
    assert!(screen.contains(" wrong "), "{screen}");
    // step through the first 300 accesses: each line is the learner's access and the
    // reference's access of the same cell, with the logs' values
    key(&mut app, KeyCode::Home);
    for _ in 0..300 {
        let m = view(&app);
        let a = m.beside.accesses[m.n];
        let (yours, reference) = access_lines(&app);
        let label = m.beside.label(m.n);
        let name = m.beside.name(m.n).to_string();
        assert_eq!(
            yours,
            format!(
                "yours #{} {} {name}[{}] = {}  ({label})",
                m.n,
                a.op.name(),
                a.offset,
                num(a.value),
            )
        );
        let r = m.beside.matched(m.n).unwrap();
        let e = m.beside.reference.trace().events[r];
        assert_eq!(
            (e.buf.name(), i64::from(e.offset), e.op),
            (name.as_str(), a.offset, a.op),
            "paired by cell"
        );
        assert!(
            reference.starts_with(&format!(
                "reference #{r} {} {}[{}] = {}",
                e.op.name(),
                e.buf.name(),
                e.offset,
                num(e.value)
            )),
            "{reference}"
        );
        let same = e.value.to_bits() == a.value.to_bits();
        assert_eq!(reference.ends_with("same value"), same, "{reference}");
        key(&mut app, KeyCode::Char('n'));
    }
    // d comes back to the divergence; the reference stands on its event
    key(&mut app, KeyCode::Char('d'));
    assert_eq!(view(&app).n, n0);
    assert_eq!(view(&app).beside.matched(n0), Some(r0));
}

#[test]
fn e_jumps_between_access_errors() {
    // mistake 7 overwrites d_k and d_v where the reference adds: lost accumulations
    let dir = tempfile::tempdir().unwrap();
    let (s, t) = mistaken(dir.path(), "overwrite_kv_grad", "backward");
    let mut app = opened(&s, &t);
    let errors = view(&app).beside.errors();
    assert_eq!(errors.len(), 2, "{errors:?}");
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::Char('e'));
    assert_eq!(view(&app).n, errors[0]);
    key(&mut app, KeyCode::Char('e'));
    assert_eq!(view(&app).n, errors[1]);
    key(&mut app, KeyCode::Char('e'));
    assert_eq!(view(&app).n, errors[1]);
    assert_eq!(view(&app).message.as_deref(), Some("no access error after this one"));
    key(&mut app, KeyCode::Char('E'));
    assert_eq!(view(&app).n, errors[0]);
    let screen = draw(&app, 120, 40);
    assert!(screen.contains("2. 2 access errors in"), "{screen}");
    assert!(screen.contains("mistake 7: overwrite_kv_grad"), "{screen}");
    // q goes back
    key(&mut app, KeyCode::Char('q'));
    assert!(!matches!(app.screen, Screen::Mine(_)));
}

#[test]
fn a_bad_trace_is_refused_before_the_terminal_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"format\":\"attn-trace-trace\",\"version\":7}\n").unwrap();
    let out = cmd()
        .arg("tui")
        .arg(root().join("scenarios/mha_walkthrough.toml"))
        .arg("--mine")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.jsonl:1: \"version\""), "{err}");
}
