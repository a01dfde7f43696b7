//! Lessons, positions and snapshots (issue 37): every shipped lesson walked from its first stop
//! to its summary with every question answered from the log, in both languages and at 80×24 and
//! 120×40; bad lesson files each refused with their message; `--at` and `y` round-tripping to
//! the same event; `S` and `--snapshot` writing what the screen shows; `--quiz-report`.

use crate::tests::support::cli::cmd;
use crate::tests::support::tui::{chars, key, screen, settle, tracer};
use crate::tui::app::{App, Popup, Screen};
use crate::tui::lesson::{self, Answer, LessonRun};
use crate::tui::quiz::Feedback;
use crate::tui::{Theme, TracedScenario};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::scenario::lesson::{Ask, Lesson};
use attn_trace_core::trace::Op;
use attn_trace_i18n::{self as i18n, Lang};
use crossterm::event::KeyCode;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shipped lesson files, English and 简体中文.
fn shipped() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("lessons"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// The app walking `path`, as `tui --lesson` opens it.
fn lesson_app(path: &Path, w: u16, h: u16) -> App {
    let lesson = Lesson::load(path).unwrap();
    let scenario = Scenario::load(&lesson.scenario).unwrap();
    let traced = Arc::new(TracedScenario::from_scenario(&scenario));
    let stops = lesson::resolve(&lesson, &traced).unwrap();
    App::with_lesson(traced, LessonRun::new(Arc::new(lesson), stops), Theme::MONO, w, h)
}

fn run(app: &App) -> &LessonRun {
    tracer(app).lesson.as_ref().unwrap()
}

/// The answer to stop `k`'s question, from the log (offset, value) or the file (choice).
fn right_answer(app: &App) -> Option<String> {
    let r = run(app);
    let t = tracer(app);
    let trace = t.traced.trace(r.here().variant).unwrap();
    Some(match r.stop().ask.as_ref()? {
        Ask::Offset { .. } => trace.events[r.here().target.unwrap()].offset.to_string(),
        Ask::Value { .. } => format!("{:e}", trace.events[r.here().target.unwrap()].value),
        Ask::Choice { answer, .. } => (answer + 1).to_string(),
    })
}

#[test]
fn every_shipped_lesson_walks_to_its_summary_in_both_sizes() {
    let files = shipped();
    assert_eq!(files.len(), 8, "four lessons in two languages: {files:?}");
    for path in &files {
        let zh = path.to_string_lossy().contains(".zh-CN.");
        let lang = if zh { Lang::ZhCn } else { Lang::En };
        i18n::with_lang(lang, || {
            for (w, h) in [(80, 24), (120, 40)] {
                let mut a = lesson_app(path, w, h);
                let n = run(&a).stops.len();
                let asked = run(&a).score().1;
                assert!(n >= 5 && asked >= 3, "{path:?}: {n} stops, {asked} questions");
                for k in 0..n {
                    assert_eq!(run(&a).at, k);
                    let r = run(&a).here().clone();
                    assert_eq!((tracer(&a).variant, tracer(&a).cursor), (r.variant, r.place.cursor));
                    let shown = screen(&a, w, h);
                    // the stop, its note's first words and the cursor's event are on screen
                    // (a CJK character takes two cells: compared without spaces)
                    let compact = |s: &str| s.replace(' ', "");
                    let note: String = run(&a).stop().note.chars().take(12).collect();
                    assert!(
                        compact(&shown).contains(&compact(&note)),
                        "{path:?} {w}×{h} stop {k}: {note:?} in\n{shown}"
                    );
                    assert!(
                        shown.contains(&format!("#{}/", r.place.cursor)),
                        "{path:?} stop {k}\n{shown}"
                    );
                    if let Some(answer) = right_answer(&a) {
                        chars(&mut a, &answer);
                        key(&mut a, KeyCode::Enter);
                        assert_eq!(
                            run(&a).answers[k],
                            Answer::Right { tries: 0 },
                            "{path:?} stop {k}: {answer} is right ({:?})",
                            run(&a).feedback
                        );
                        // the tracer stepped to the access asked about
                        let to = r.target.unwrap_or(r.place.cursor);
                        assert_eq!(tracer(&a).cursor, to);
                        let shown = screen(&a, w, h);
                        let right = if zh { "正确" } else { "correct" };
                        assert!(compact(&shown).contains(right), "{path:?} stop {k}\n{shown}");
                    }
                    key(&mut a, KeyCode::Char('N'));
                }
                assert_eq!(run(&a).score(), (asked, asked));
                let Some(Popup::Message { text, .. }) = &a.popup else {
                    panic!("{path:?}: the summary after the last stop")
                };
                assert!(text.contains(&format!("{asked}")), "{text}");
            }
        });
    }
}

#[test]
fn the_lesson_keys_move_between_stops_and_back() {
    let mut a = lesson_app(&root().join("lessons/mha_walkthrough.toml"), 120, 40);
    key(&mut a, KeyCode::Char('P'));
    assert_eq!(tracer(&a).message.as_deref(), Some("this is the first stop"));
    key(&mut a, KeyCode::Char('N'));
    key(&mut a, KeyCode::Char('N'));
    let stop = run(&a).here().clone();
    // free stepping away from the stop: the question waits, R comes back
    for _ in 0..5 {
        key(&mut a, KeyCode::Char('n'));
    }
    assert_eq!(tracer(&a).cursor, stop.place.cursor + 5);
    assert!(!run(&a).asking(tracer(&a).variant, tracer(&a).cursor));
    assert!(screen(&a, 120, 40).contains("R returns to the stop"));
    key(&mut a, KeyCode::Char('R'));
    assert_eq!(tracer(&a).cursor, stop.place.cursor);
    assert!(run(&a).asking(tracer(&a).variant, tracer(&a).cursor));
    // a wrong offset: explained without the answer, the answer kept for editing
    let trace = tracer(&a).traced.trace(Variant::Mha).unwrap();
    let want = trace.events[stop.target.unwrap()].offset;
    let wrong = want + 3;
    chars(&mut a, &wrong.to_string());
    key(&mut a, KeyCode::Enter);
    let Some(Feedback::Wrong(text)) = run(&a).feedback.clone() else {
        panic!()
    };
    assert!(text.contains(&format!("you typed {wrong} = ")), "{text}");
    assert!(
        !text.contains(&format!("[{want}]")) && !text.contains(&format!("= {want}")),
        "{text}"
    );
    assert_eq!(run(&a).input, wrong.to_string());
    key(&mut a, KeyCode::Char('v'));
    assert_eq!(run(&a).answers[run(&a).at], Answer::Revealed);
    assert_eq!(tracer(&a).cursor, stop.target.unwrap());
    // the menu lists the lessons: l, then Enter traces the scenario and opens the first stop
    let mut m = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
    key(&mut m, KeyCode::Char('l'));
    let Screen::Lessons(list) = &m.screen else {
        panic!("the lessons list")
    };
    let names: Vec<String> = list
        .entries
        .iter()
        .map(|e| e.path.file_name().unwrap().to_string_lossy().into())
        .collect();
    assert_eq!(
        names,
        ["mha_walkthrough.toml", "backward.toml", "gqa.toml", "flash.toml"]
    );
    key(&mut m, KeyCode::Enter);
    settle(&mut m);
    assert_eq!(
        tracer(&m).lesson.as_ref().unwrap().lesson.title,
        "Multi-head attention, stop by stop"
    );
    // and m lists today's attention scenarios
    let mut m = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
    key(&mut m, KeyCode::Char('m'));
    let Screen::Open(list) = &m.screen else {
        panic!("the scenarios list")
    };
    let names: Vec<String> = list
        .entries
        .iter()
        .map(|e| e.path.file_stem().unwrap().to_string_lossy().into())
        .collect();
    // (tui_app holds MODERN to the order of docs/modern_attention.md)
    assert_eq!(names, crate::tui::screens::open::MODERN);
}

/// `tui --lesson FILE --snapshot OUT.txt`: exit code and standard error.
fn lesson_error(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    let text = text.replace(
        "SCENARIO",
        &root().join("scenarios/mha_walkthrough.toml").display().to_string(),
    );
    std::fs::write(&path, text).unwrap();
    let out = cmd()
        .args(["tui", "--lesson"])
        .arg(&path)
        .arg("--snapshot")
        .arg(dir.path().join("out.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.path().join("out.txt").exists());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    err.replace(&path.display().to_string(), "bad.toml")
}

#[test]
fn bad_lesson_files_are_one_line_naming_the_file_the_field_and_the_line() {
    let head = "title = \"t\"\nscenario = \"SCENARIO\"\n";
    let cases = [
        ("", "bad.toml: empty file"),
        (
            "title = \"t\"\n",
            "bad.toml: scenario: missing: every lesson needs a scenario",
        ),
        (
            head,
            "bad.toml: [[stop]]: missing: a lesson needs at least one [[stop]]",
        ),
        (
            &format!("{head}colour = 1\n[[stop]]\nat = \"#0\"\nnote = \"n\"\n"),
            "bad.toml:3:1: colour: unknown key",
        ),
        (
            &format!("{head}[[stop]]\nat = \"#0\"\n"),
            "bad.toml:3:1: [[stop]] 1.note: missing: every stop needs a note",
        ),
        (
            &format!("{head}[[stop]]\nat = \"#0\"\nnote = \"n\"\nask = \"offsets\"\n"),
            "bad.toml:6:7: [[stop]] 1.ask: unknown question kind \"offsets\"",
        ),
        (
            &format!("{head}[[stop]]\nat = \"#0\"\nnote = \"n\"\nquestion = \"q\"\noptions = [\"a\", \"b\"]\n"),
            "[[stop]] 1.answer: missing: every stop needs an answer",
        ),
        (
            &format!(
                "{head}[[stop]]\nat = \"#0\"\nnote = \"n\"\nquestion = \"q\"\noptions = [\"a\", \"b\"]\nanswer = 3\n"
            ),
            "bad.toml:8:10: [[stop]] 1.answer: expected an option number from 1 to 2, found 3",
        ),
        (
            &format!(
                "{head}[[stop]]\nat = \"#0\"\nnote = \"n\"\nask = \"offset\"\noptions = [\"a\", \"b\"]\nanswer = 1\n"
            ),
            "[[stop]] 1.ask: give either ask",
        ),
        (
            &format!("{head}[[stop]]\nat = \"#0\"\nnote = \"n\"\n[[stop]]\nat = \"#99999\"\nnote = \"n\"\n"),
            "bad.toml:7:6: [[stop]] 2.at: event 99999 is past the end: the log has 2192 events (0..2191)",
        ),
        (
            &format!("{head}[[stop]]\nat = \"no such place\"\nnote = \"n\"\n"),
            "bad.toml:4:6: [[stop]] 1.at: expected an event number",
        ),
        (
            &format!("{head}[[stop]]\nat = \"#2191\"\nnote = \"n\"\nask = \"offset\"\n"),
            "bad.toml:4:6: [[stop]] 1.at: ask = \"offset\" asks the next access, but this stop is the last event",
        ),
        (
            &format!("{head}[[stop]]\nat = \"softmax\"\npass = \"backward\"\nnote = \"n\"\n"),
            "[[stop]] 1.at: phase softmax is in the forward pass, not the backward pass",
        ),
        (
            &format!("{head}[[stop]]\nat = \"#0\"\nvariant = \"flash\"\nnote = \"n\"\n"),
            "[[stop]] 1.at: ",
        ),
    ];
    for (text, want) in cases {
        let err = lesson_error(text);
        assert!(err.contains(want), "{text:?}\n  gave {err}\n  want {want}");
    }
}

#[test]
fn at_and_the_y_command_reopen_the_same_event() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.txt");
    let scenario = root().join("scenarios/gqa.toml");
    let status = cmd()
        .arg("tui")
        .arg(&scenario)
        .args([
            "--variant",
            "gqa",
            "--pass",
            "backward",
            "--at",
            "d_k[10]",
            "--snapshot",
        ])
        .arg(&out)
        .args(["--size", "120x40"])
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    // the backward pass's first access of d_k[10]: its zeroing write, event 5122 of 7768
    assert!(text.contains("#5122/7768 │ gqa │ backward"), "{text}");
    assert_eq!(text.lines().count(), 40);
    // y in the tracer gives the command; run, it lands on the same event
    let traced = Arc::new(TracedScenario::from_scenario(&Scenario::load(&scenario).unwrap()));
    let mut a = App::at(
        Arc::clone(&traced),
        Some(Variant::Gqa),
        None,
        Some("#5337"),
        Theme::MONO,
        120,
        40,
    )
    .unwrap();
    key(&mut a, KeyCode::Char('y'));
    let cmdline = a.clipboard.clone().expect("y copies");
    assert_eq!(
        cmdline,
        format!("attn-trace tui {} --variant gqa --at '#5337'", scenario.display())
    );
    assert!(screen(&a, 120, 40).contains("--at '#5337'"));
    let svg = dir.path().join("s.svg");
    let status = cmd()
        .arg("tui")
        .arg(&scenario)
        .args(["--variant", "gqa", "--at", "#5337", "--snapshot"])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(status.status.success());
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.starts_with("<svg") && picture.contains("#5337/7768"),
        "{}",
        &picture[..200]
    );
    // positions that do not exist: one line, exit code 2, nothing written
    for (at, want) in [
        (
            "#7768",
            "--at: event 7768 is past the end: the log has 7768 events (0..7767)",
        ),
        ("b=0 h=9 i=0 j=0", "--at: no score element b=0 h=9 i=0 j=0 in gqa"),
        ("q[99]", "--at: q[99] is out of range: q has 32 elements"),
    ] {
        let bad = dir.path().join("bad.svg");
        let o = cmd()
            .arg("tui")
            .arg(&scenario)
            .args(["--variant", "gqa", "--at", at, "--snapshot"])
            .arg(&bad)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{at}: {err}");
        assert!(!bad.exists());
    }
}

#[test]
fn s_saves_the_screen_and_the_quiz_report_keeps_the_scores() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = App::new(TracedScenario::builtin(), Theme::MONO, 100, 30);
    a.snapshots_dir = dir.path().join("snapshots");
    let report = dir.path().join("scores.json");
    a.quiz_report = Some((report.clone(), String::new()));
    let drawn = screen(&a, 100, 30);
    key(&mut a, KeyCode::Char('S'));
    let n = tracer(&a).cursor;
    let txt = a.snapshots_dir.join(format!("mha_walkthrough-mha-{n}.txt"));
    let saved = std::fs::read_to_string(&txt).unwrap();
    let trimmed: Vec<&str> = drawn.lines().map(str::trim_end).collect();
    assert_eq!(
        saved,
        trimmed.join("\n") + "\n",
        "the text is the screen as it was drawn"
    );
    assert!(
        std::fs::read_to_string(txt.with_extension("svg"))
            .unwrap()
            .starts_with("<svg")
    );
    assert!(tracer(&a).message.as_deref().unwrap().contains("snapshots"));
    // quiz: a wrong then a right answer, the report rewritten after each
    key(&mut a, KeyCode::Char('Q'));
    let next = tracer(&a).traced.trace(Variant::Mha).unwrap().events[n + 1];
    assert_eq!(next.op, Op::Read);
    chars(&mut a, "999");
    key(&mut a, KeyCode::Enter);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["phases"][0]["phase"], "scores");
    assert_eq!(json["phases"][0]["right"], 0);
    key(&mut a, KeyCode::Esc);
    chars(&mut a, &next.offset.to_string());
    key(&mut a, KeyCode::Enter);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["phases"][0]["retried"], 1);
    assert_eq!(json["scenario"], "<built-in mha_walkthrough>");
}

#[test]
fn feedback_positions_and_snapshots_speak_chinese_too() {
    i18n::with_lang(Lang::ZhCn, || {
        let mut a = lesson_app(&root().join("lessons/mha_walkthrough.zh-CN.toml"), 80, 24);
        key(&mut a, KeyCode::Char('N'));
        key(&mut a, KeyCode::Char('N'));
        // a wrong offset at 80×24: the formula and the typed number placed, in Chinese
        chars(&mut a, "7");
        key(&mut a, KeyCode::Enter);
        let shown = screen(&a, 80, 24).replace([' ', '\n'], "");
        assert!(
            shown.contains("不太对：k[k_base+d]，其中k_base=((bb*T+j)*H+hh)*D：你输入的"),
            "{shown}"
        );
        assert!(shown.contains("你输入的7=k[b=0,j=1,h=1,d=1]"), "{shown}");
        assert!(shown.contains("第3站，共8站"), "{shown}");
        key(&mut a, KeyCode::Esc);
        key(&mut a, KeyCode::Char('y'));
        let shown = screen(&a, 80, 24).replace([' ', '\n'], "");
        assert!(shown.contains("--variantmha--at'#432'"), "{shown}");
        assert!(shown.contains("终端支持OSC52时已复制"), "{shown}");
        let dir = tempfile::tempdir().unwrap();
        a.snapshots_dir = dir.path().to_path_buf();
        key(&mut a, KeyCode::Char('S'));
        let shown = screen(&a, 80, 24).replace([' ', '\n'], "");
        assert!(shown.contains("已保存"), "{shown}");
        let txt = std::fs::read_to_string(dir.path().join("mha_walkthrough-mha-432.txt")).unwrap();
        assert!(
            txt.contains("第 3 站，共 8 站"),
            "the text file has one character a CJK glyph:\n{txt}"
        );
    });
}

/// A multiple-choice question takes one option: `1` then `2` is option 2 (not "12"), a digit
/// past the options is ignored, and the tracer's keys still step.
#[test]
fn a_choice_is_one_digit_and_a_new_one_replaces_it() {
    let path = root().join("lessons/gqa.toml");
    let mut a = lesson_app(&path, 120, 40);
    let lesson = Lesson::load(&path).unwrap();
    let k = lesson
        .stops
        .iter()
        .position(|s| matches!(s.ask, Some(Ask::Choice { .. })))
        .expect("a multiple-choice stop");
    for _ in 0..k {
        key(&mut a, KeyCode::Char('N'));
    }
    assert!(run(&a).asking(tracer(&a).variant, tracer(&a).cursor));
    chars(&mut a, "1");
    assert_eq!(run(&a).input, "1");
    chars(&mut a, "2");
    assert_eq!(run(&a).input, "2", "a new digit replaces the choice");
    chars(&mut a, "9");
    assert_eq!(run(&a).input, "2", "there is no option 9");
    key(&mut a, KeyCode::Enter);
    assert_eq!(run(&a).answers[run(&a).at], Answer::Right { tries: 0 });
}

/// In Chinese the answer's colon is the full-width one, as everywhere else in the interface
/// ("正确：", never "正确:").
#[test]
fn the_chinese_answer_has_a_full_width_colon() {
    i18n::with_lang(Lang::ZhCn, || {
        let path = root().join("lessons/gqa.zh-CN.toml");
        let mut a = lesson_app(&path, 120, 40);
        let lesson = Lesson::load(&path).unwrap();
        let k = lesson
            .stops
            .iter()
            .position(|s| matches!(s.ask, Some(Ask::Choice { .. })))
            .expect("a multiple-choice stop");
        for _ in 0..k {
            key(&mut a, KeyCode::Char('N'));
        }
        let Some(Ask::Choice { answer, .. }) = run(&a).stop().ask.clone() else {
            panic!()
        };
        chars(&mut a, &(answer + 1).to_string());
        key(&mut a, KeyCode::Enter);
        // a CJK character takes two cells: compared without spaces
        let shown = screen(&a, 120, 40).replace(' ', "");
        assert!(shown.contains("正确："), "{shown}");
        assert!(!shown.contains("正确:"), "{shown}");
    });
}
