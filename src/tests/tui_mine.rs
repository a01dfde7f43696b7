//! `tui --mine`: a learner's trace beside the reference, driven through `update` as the terminal
//! drives it. The gallery's mistaken kernels stand in for a learner's (their traces are exported
//! with `trace --mistaken`); every number the screen prints is read back from the two logs.

use crate::tests::support::cli::cmd;
use crate::tests::support::root;
use crate::tests::support::tui::{draw, key, screen_lines};
use crate::tui::app::{App, Screen};
use crate::tui::screens::mine::{self, Mine};
use crate::tui::{Theme, TracedScenario};
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
    let view = Mine::load(&scenario, s, t, None).unwrap();
    App {
        screen: Screen::Mine(Box::new(view)),
        ..App::new(TracedScenario::builtin(), Theme::MONO, 120, 40)
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

/// Runs `command` (its last two arguments the inputs and trace files) on `scenario`'s inputs;
/// the trace.
fn record(dir: &Path, scenario: &Path, command: &[&std::ffi::OsStr], extra: &[&str]) -> PathBuf {
    let inputs = dir.join("inputs.txt");
    let trace = dir.join("mine.jsonl");
    cmd()
        .arg("inputs")
        .arg(scenario)
        .args(extra)
        .arg("-o")
        .arg(&inputs)
        .assert()
        .success();
    let out = std::process::Command::new(command[0])
        .args(&command[1..])
        .arg(&inputs)
        .arg(&trace)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    trace
}

#[test]
fn a_read_of_a_cell_the_reference_does_not_read_there_stands_beside_the_one_it_does() {
    // never_reads_k.py reads query j where the reference reads key j: beside the reference's
    // read of k for the same score, marked, not paired with some read of the same q cell
    let dir = tempfile::tempdir().unwrap();
    let s = root().join("scenarios/learner/k_equals_q.toml");
    let script = root().join("examples/learner/never_reads_k.py");
    let t = record(dir.path(), &s, &["python3".as_ref(), script.as_os_str()], &[]);
    let mut app = opened(&s, &t);
    let m = view(&app);
    // the learner's first read for scores[b0 h0 i1 j0] of query 0's channel 0 (k_base of j = 0)
    let n = (0..m.beside.accesses.len())
        .find(|&n| m.beside.is_stray(n))
        .expect("a stray read");
    assert_eq!(m.beside.label(n), "q[b0 i0 h0 d0]");
    let r = m.beside.matched(n).unwrap();
    let e = m.beside.reference.event(r).unwrap();
    assert_eq!(m.beside.reference.cell_label(e.buf, e.offset), "k[b0 j0 h0 d0]");
    key(&mut app, KeyCode::Home);
    for _ in 0..n {
        key(&mut app, KeyCode::Char('n'));
    }
    let (yours, reference) = access_lines(&app);
    assert!(
        yours.starts_with(&format!("yours #{n} read q[0] = 0.50  (q[b0 i0 h0 d0])")),
        "{yours}"
    );
    assert!(
        reference.ends_with("✗ not this cell: for scores[b0 h0 i1 j0] the reference reads k[b0 j0 h0 d0]"),
        "{reference}"
    );
    assert!(!reference.contains("same value"), "{reference}");
    // the grade's lines say why the kernel is wrong though every value is right
    let screen = draw(&app, 120, 40);
    assert!(screen.contains("1. wrong cells: scores 6/12"), "{screen}");
}

#[test]
fn a_kernel_in_its_own_layout_is_stepped_with_its_bindings() {
    // fused_qkv.c's packed [B, T, 3C] buffer, with its bindings file: each access shows the
    // learner's name and offset, and the reference cell it is
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("fused_qkv");
    let out = std::process::Command::new("gcc")
        .args(["-std=c99", "-O1", "-I"])
        .arg(root().join("recorders"))
        .arg(root().join("examples/learner/fused_qkv.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = root().join("scenarios/learner/packed.toml");
    let t = record(dir.path(), &s, &[exe.as_os_str()], &["--pass", "forward"]);
    let bind = root().join("examples/learner/fused_qkv.bind.toml");
    let scenario = Scenario::load(&s).unwrap();
    let m = Mine::load(&scenario, &s, &t, Some(&bind)).unwrap();
    assert!(m.beside.grade.correct(), "{:#?}", m.beside.grade);
    let mut app = App {
        screen: Screen::Mine(Box::new(m)),
        ..App::new(TracedScenario::builtin(), Theme::MONO, 120, 40)
    };
    key(&mut app, KeyCode::Home);
    // the second access: the key's first channel, 8 cells into the packed row
    key(&mut app, KeyCode::Char('n'));
    let (yours, reference) = access_lines(&app);
    assert!(yours.starts_with("yours #1 read packed[8] = "), "{yours}");
    assert!(yours.ends_with("(k[b0 j0 h0 d0])"), "{yours}");
    assert!(reference.starts_with("reference #1 read k[0] = "), "{reference}");
    assert!(reference.ends_with("same value"), "{reference}");
    // without the bindings, packed is nobody's buffer: one line
    let e = Mine::load(&scenario, &s, &t, None).unwrap_err();
    assert!(
        e.contains("\"buffer\": \"packed\" is neither one of ours nor bound"),
        "{e}"
    );
}

#[test]
fn the_grade_lines_take_the_rows_their_hint_needs_on_a_small_terminal() {
    // mask_by_multiply's hint names the hidden score, the line that wrote it and the reference's
    // value there: on 80×24 the grade wraps over six rows, and the hint's last words are on screen
    let dir = tempfile::tempdir().unwrap();
    let (s, t) = mistaken(dir.path(), "mask_by_multiply", "forward");
    let app = opened(&s, &t);
    let hint = &view(&app).beside.grade.hints[0];
    assert!(hint.ends_with("which gives it no weight"), "{hint}");
    let screen = screen_lines(&app, 80, 24).join("");
    assert!(screen.contains("which gives it no weight"), "{screen}");
}

/// The trace picker gives each file one row: a refusal longer than the row (a header line past
/// the bound, a FIFO) wrapped onto the next rows, pushing the files below it down and the
/// highlighted one off the list. It is cut at the edge instead, and names the fault without
/// repeating the file's path (its name is on the left); the popup on Enter says it whole.
#[test]
fn the_trace_picker_gives_every_file_one_row() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = d.join("a_big.jsonl");
    std::fs::write(&big, b"{\"format\":\"attn-trace-trace\",\"version\":1,\"scenario\":\"").unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(d.join("b_pipe.jsonl"))
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::write(d.join("c_junk.jsonl"), "not json\n").unwrap();
    let app = App {
        screen: Screen::PickTrace(mine::list(d.to_path_buf())),
        ..App::new(TracedScenario::builtin(), Theme::MONO, 80, 24)
    };
    for w in [80u16, 120] {
        let rows = screen_lines(&app, w, 24);
        let starts: Vec<&str> = rows[1..4].iter().map(|r| r.trim_start()).collect();
        assert!(starts[0].starts_with("a_big.jsonl"), "{w}: {rows:#?}");
        assert!(starts[1].starts_with("b_pipe.jsonl"), "{w}: {rows:#?}");
        assert!(starts[2].starts_with("c_junk.jsonl"), "{w}: {rows:#?}");
        assert!(rows[1].contains("the line is longer than"), "{w}: {}", rows[1]);
        assert!(rows[2].contains("FIFO") && !rows[2].contains("./"), "{w}: {}", rows[2]);
        assert!(!rows[1].contains(&*d.to_string_lossy()), "{w}: {}", rows[1]);
    }
}

#[test]
fn the_learners_source_keeps_its_nesting_below_the_line_that_ran() {
    // a Python kernel's nesting is its meaning: at the first divergence of mistakes.py's
    // mask_by_multiply (the normalise line of its softmax, deep in four loops) the dropout
    // method below it must still show `for hh` inside `for bb`, not beside it
    let dir = tempfile::tempdir().unwrap();
    let s = root().join("scenarios/mha_walkthrough.toml");
    let script = root().join("examples/learner/mistakes.py");
    let t = record(
        dir.path(),
        &s,
        &["python3".as_ref(), script.as_os_str(), "mask_by_multiply".as_ref()],
        &[],
    );
    let app = opened(&s, &t);
    let screen = screen_lines(&app, 120, 40);
    let left: Vec<String> = screen
        .iter()
        .map(|l| l.chars().skip(1).take(58).collect::<String>())
        .collect();
    let column = |text: &str| {
        left.iter()
            .find_map(|l| l.find(text).map(|at| l[..at].chars().count()))
            .unwrap_or_else(|| panic!("{text:?} on the left:\n{}", left.join("\n")))
    };
    let (bb, hh, i) = (
        column("for bb in range(B):"),
        column("for hh in range(H):"),
        column("for i in range(S):"),
    );
    assert_eq!((hh - bb, i - hh), (4, 4), "{}", left.join("\n"));
    assert!(column("def dropout(self):") + 4 == bb, "{}", left.join("\n"));
}
