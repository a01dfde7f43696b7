//! The real binary in a pseudo-terminal: keys go in, and whether it quits normally or panics
//! the terminal comes back (alternate screen left, mouse capture off).

use crate::support::pty::{ENTER_ALT_SCREEN, Pty, Spawn, assert_restored};

fn spawn<'a>(args: &'a [&'a str], env: &'a [(&'a str, &'a str)]) -> Pty {
    Pty::spawn(Spawn {
        args,
        env,
        ..Spawn::default()
    })
}

#[test]
fn keys_step_and_q_quits_with_the_terminal_restored() {
    let mut pty = spawn(&[], &[]);
    pty.wait_for("q_base", 0);
    for k in ["n", "j", "?", "\x1b", "g", "1", "2", "\r", "q"] {
        pty.send(k);
    }
    pty.wait_for("Step through baseline attention", 0);
    pty.send("q");
    assert_eq!(pty.exit_status().code(), Some(0), "output:\n{}", pty.text());
    assert_restored(&pty.text());
}

#[test]
fn a_panic_restores_the_terminal_too() {
    let mut pty = spawn(
        &["tui", "scenarios/indexing_trace.toml"],
        &[("ATTN_TRACE_TUI_PANIC", "1")],
    );
    let code = pty.exit_status().code();
    assert_eq!(
        code,
        Some(1),
        "the deliberate panic fails the process as an internal error"
    );
    let out = pty.text();
    assert_restored(&out);
    assert!(out.contains("panicking on purpose"), "the panic is reported:\n{out}");
    // in one line that says it is a bug, not an 80-line report
    let report: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("attn-trace: internal error"))
        .collect();
    assert_eq!(report.len(), 1, "{out}");
    assert!(report[0].contains("please report it"), "{out}");
    assert!(
        !out.contains("The application panicked") && !out.contains("Location:"),
        "{out}"
    );
}

#[test]
fn a_bad_scenario_is_reported_before_the_terminal_is_touched() {
    let mut pty = spawn(&["tui", "no/such/file.toml"], &[]);
    assert_eq!(pty.exit_status().code(), Some(2));
    let out = pty.text();
    assert!(out.contains("no/such/file.toml: no such file"), "{out}");
    assert!(!out.contains(ENTER_ALT_SCREEN));
}

#[test]
fn no_color_draws_without_colour_codes_and_colour_is_the_default() {
    for (env, coloured) in [(vec![("NO_COLOR", "1")], false), (vec![], true)] {
        let mut pty = spawn(&[], &env);
        pty.wait_for("q_base", 0);
        pty.send("q");
        pty.send("q");
        assert_eq!(pty.exit_status().code(), Some(0));
        let out = pty.text();
        let has_colour = out.contains("\x1b[38;5;") || out.contains("\x1b[48;5;") || out.contains("\x1b[38;2;");
        assert_eq!(has_colour, coloured, "NO_COLOR={env:?}");
    }
}

/// A copy of the binary, run in an empty folder far from the repository (as after `cargo
/// install`): "Open scenario…" and "Lessons…" offer the shipped ones, built in, open them, and
/// name the folder the program runs in, never the one it was built in; a file of the user's
/// own there is listed and opened by its path relative to where it runs.
#[test]
fn a_copy_of_the_binary_in_an_empty_folder_offers_the_shipped_scenarios_and_lessons() {
    let tmp = tempfile::tempdir().unwrap();
    let (bin, work) = (tmp.path().join("bin"), tmp.path().join("work"));
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let program = bin.join("attn-trace");
    std::fs::copy(env!("CARGO_BIN_EXE_attn-trace"), &program).unwrap();
    let work_shown = work.canonicalize().unwrap().display().to_string();
    let mut pty = Pty::spawn(Spawn {
        args: &["--lang", "en"],
        dir: Some(&work),
        cols: 120,
        rows: 40,
        program: Some(&program),
        ..Spawn::default()
    });
    pty.wait_for("q_base", 0);
    pty.send("q");
    let at = pty.wait_for("Open scenario", 0);
    pty.send("4");
    let at = pty.wait_for(&format!("Open scenario · {work_shown}"), at);
    pty.wait_for("window_decode.toml", at);
    pty.wait_for("built into attn-trace", at);
    // the first is the walkthrough: Enter opens it
    pty.send("\r");
    let at = pty.wait_for("q_base", at);
    pty.send("q");
    let at = pty.wait_for("Lessons", at);
    pty.send("l");
    let at = pty.wait_for(&format!("Open lesson · {work_shown}"), at);
    pty.wait_for("Grouped-query attention", at);
    // the first lesson, the walkthrough's: it opens at its first stop, on its own scenario
    pty.send("\r");
    let at = pty.wait_for("Stop 1 of 8", at);
    // back to the list of lessons, Esc to the menu, q to quit
    pty.send("q");
    let at = pty.wait_for("Open lesson", at);
    pty.send("\x1b");
    pty.wait_for("Lessons", at);
    pty.send("q");
    assert_eq!(pty.exit_status().code(), Some(0), "output:\n{}", pty.text());
    assert!(
        !pty.text().contains(env!("CARGO_MANIFEST_DIR")),
        "the build folder is named:\n{}",
        pty.text()
    );

    // a scenario of the user's own in that folder: listed, and opened by its relative path
    let mine = std::fs::read_to_string(crate::support::root().join("scenarios/gqa.toml"))
        .unwrap()
        .replace("title = \"", "title = \"My own copy: ");
    std::fs::write(work.join("mine.toml"), mine).unwrap();
    let mut pty = Pty::spawn(Spawn {
        args: &["--lang", "en"],
        dir: Some(&work),
        cols: 120,
        rows: 40,
        program: Some(&program),
        ..Spawn::default()
    });
    pty.wait_for("q_base", 0);
    pty.send("q");
    let at = pty.wait_for("Open scenario", 0);
    pty.send("4");
    let at = pty.wait_for("mine.toml", at);
    for c in "mine.toml\r".chars() {
        pty.send(&c.to_string());
    }
    pty.wait_for("My own copy:", at);
    pty.send("q");
    pty.send("q");
    assert_eq!(pty.exit_status().code(), Some(0), "output:\n{}", pty.text());
}
