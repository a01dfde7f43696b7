//! Hostile files in the real TUI, in a pseudo-terminal: a checkpoint that claims a huge model, a
//! FIFO among the scenarios, a device typed as a path, and SIGTERM. The screen stays live and
//! shows one line of error, and whatever ends the program gives the terminal back.

use crate::support::pty::{Pty, Spawn, assert_restored};
use std::path::Path;

/// As in cli_hostile.rs: a regression that believes a hostile file fails here.
const MEMORY_LIMIT: u64 = 1 << 30;

/// The binary in `dir` on a fresh 120×40 pty, under the memory limit, without colour.
fn spawn(dir: &Path, args: &[&str]) -> Pty {
    Pty::spawn(Spawn {
        args,
        dir: Some(dir),
        cols: 120,
        rows: 40,
        env: &[("NO_COLOR", "1")],
        memory_limit: Some(MEMORY_LIMIT),
        ..Spawn::default()
    })
}

/// Issue item 1, in the TUI: "Open checkpoint…" on a 300-byte file that claims 51.6 GB of
/// weights shows why it cannot be opened, and the app goes on.
#[test]
fn a_checkpoint_claiming_a_huge_model_gives_a_popup_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let data = vec![0u8; 16];
    let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2, 2], &data).unwrap();
    let meta: std::collections::HashMap<String, String> = [
        ("format", "attn-trace-tinygpt"),
        ("vocab_size", "256"),
        ("seq_len", "4096"),
        ("d_model", "4096"),
        ("n_layers", "64"),
        ("n_heads", "1"),
        ("step", "0"),
        ("checksum", "0000000000000000"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let bytes = safetensors::serialize([("wte", view)], Some(meta)).unwrap();
    std::fs::write(dir.path().join("huge.safetensors"), bytes).unwrap();

    let mut pty = spawn(dir.path(), &[]);
    let at = pty.wait_for("q_base", 0);
    pty.send("q"); // the menu
    pty.send("6"); // Open checkpoint…
    let at = pty.wait_for("huge.safetensors", at);
    pty.send("\r");
    let at = pty.wait_for("Cannot open this checkpoint", at);
    pty.wait_for("needs", at);
    pty.send("\x1b"); // closes the popup
    pty.send("\x1b"); // back to the menu
    pty.send("q");
    let status = pty.exit_status();
    assert_eq!(status.code(), Some(0), "{status:?}; output:\n{}", pty.text());
    assert_restored(&pty.text());
}

/// Issue item 8, in the TUI: a FIFO among the scenarios and a device typed as a path do not
/// freeze the picker; each is named as what it is.
#[test]
fn a_fifo_in_the_scenarios_folder_and_a_typed_device_do_not_freeze_the_picker() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    std::fs::write(
        scenarios.join("good.toml"),
        "title = \"A good one\"\n[shape]\nB = 1\nT = 3\nC = 4\n",
    )
    .unwrap();
    let fifo = std::ffi::CString::new(scenarios.join("pipe.toml").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);

    let mut pty = spawn(dir.path(), &[]);
    let at = pty.wait_for("q_base", 0);
    pty.send("q");
    pty.send("4"); // Open scenario…
    let at = pty.wait_for("A good one", at);
    pty.send("\x1b[B"); // ↓ to pipe.toml, whose error shows in the about box
    let at = pty.wait_for("FIFO", at);
    for c in "/dev/urandom".chars() {
        pty.send(&c.to_string());
    }
    pty.send("\r");
    let at = pty.wait_for("Cannot open this scenario", at);
    // (the popup is drawn over the list: only its changed cells are written, so the needle is
    // one no cell beneath it already holds)
    pty.wait_for("/dev/urandom is a", at);
    pty.send("\x1b"); // the popup
    pty.send("\x1b"); // the typed path
    pty.send("\x1b"); // the menu
    pty.send("q");
    let status = pty.exit_status();
    assert_eq!(status.code(), Some(0), "{status:?}; output:\n{}", pty.text());
    assert_restored(&pty.text());
}

/// SIGTERM to the running TUI gives the terminal back and exits with 128 + 15.
#[test]
fn sigterm_restores_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let mut pty = spawn(dir.path(), &[]);
    pty.wait_for("q_base", 0);
    // SAFETY: signalling our own child by its id.
    assert_eq!(unsafe { libc::kill(pty.child.id() as i32, libc::SIGTERM) }, 0);
    let status = pty.exit_status();
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_restored(&pty.text());
}

// ---------------------------------------------------------------------------------------------
// Round two (issue 34)

/// The binary in `dir` on a fresh 120×40 pty, under the memory limit, without colour, with
/// `env` besides.
fn spawn_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Pty {
    let mut all = vec![("NO_COLOR", "1")];
    all.extend_from_slice(env);
    Pty::spawn(Spawn {
        args,
        dir: Some(dir),
        cols: 120,
        rows: 40,
        env: &all,
        memory_limit: Some(MEMORY_LIMIT),
        ..Spawn::default()
    })
}

/// Class 1, in the TUI: the scenario picker describes every file of its folder, and a ten-line
/// flash scenario beside a good one made the estimate allocate 4 GiB and abort, leaving the
/// terminal in the alternate screen. Now the picker shows the neighbour's refusal.
#[test]
fn a_scenario_whose_estimate_was_huge_is_described_in_the_picker() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    std::fs::write(
        scenarios.join("a_good.toml"),
        "title = \"A good one\"\n[shape]\nB = 1\nT = 3\nC = 4\n",
    )
    .unwrap();
    std::fs::write(
        scenarios.join("b_flash.toml"),
        "title = \"long\"\n[shape]\nB = 1\nT = 100000\nC = 1\n[run]\nvariants = [\"flash\"]\n[flash]\nbr = 1\nbc = 1\n",
    )
    .unwrap();
    let mut pty = spawn(dir.path(), &[]);
    let at = pty.wait_for("q_base", 0);
    pty.send("q");
    pty.send("4"); // Open scenario…
    let at = pty.wait_for("A good one", at);
    pty.send("\x1b[B"); // ↓ to b_flash.toml, whose error shows in the about box
    pty.wait_for("budget", at);
    pty.send("\x1b"); // the menu
    pty.send("q");
    let status = pty.exit_status();
    assert_eq!(status.code(), Some(0), "{status:?}; output:\n{}", pty.text());
    assert_restored(&pty.text());
}

/// Class 3: a panic on a worker thread (made on purpose with `ATTN_TRACE_WORKER_PANIC`) reaches
/// the UI as an error popup, the app goes on answering keys, and quitting gives the terminal
/// back. Before, the hook restored the terminal from the worker's thread and printed its report
/// over the screen, and the app was left answering nothing (or, tracing, waiting forever).
#[test]
fn a_worker_thread_that_panics_gives_a_popup_and_the_app_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("small.toml"),
        "title = \"small\"\n[shape]\nB = 1\nT = 3\nC = 4\nH = 2\n",
    )
    .unwrap();

    // the gradient check: `f` switches the tracer to the backward pass, whose cell is checked
    let mut pty = spawn_with(d, &[], &[("ATTN_TRACE_WORKER_PANIC", "gradient-check")]);
    let at = pty.wait_for("q_base", 0);
    pty.send("f");
    let at = pty.wait_for("The gradient check failed", at);
    pty.wait_for("panicked", at);
    pty.send("\x1b"); // closes the popup
    pty.send("n"); // the tracer still steps
    pty.send("q"); // the menu
    pty.send("q");
    let status = pty.exit_status();
    assert_eq!(status.code(), Some(0), "{status:?}; output:\n{}", pty.text());
    assert_restored(&pty.text());
    assert!(
        !pty.text().contains("The application panicked"),
        "no report over the screen"
    );

    // tracing a scenario behind the progress box: back to the menu, with the popup
    let mut pty = spawn_with(d, &["tui", "small.toml"], &[("ATTN_TRACE_WORKER_PANIC", "loading")]);
    let at = pty.wait_for("Tracing failed", 0);
    pty.wait_for("panicked", at);
    pty.send("\x1b");
    pty.send("q");
    let status = pty.exit_status();
    assert_eq!(status.code(), Some(0), "{status:?}; output:\n{}", pty.text());
    assert_restored(&pty.text());

    // the cache simulation of the memory traffic screen: the popup, and the screen answers keys
    let mut pty = spawn_with(d, &[], &[("ATTN_TRACE_WORKER_PANIC", "cache-sweep")]);
    let at = pty.wait_for("q_base", 0);
    pty.send("q");
    pty.send("9"); // Memory traffic
    let opened = pty.wait_for("Traffic: naive vs flash", at);
    pty.send("c"); // its cache misses
    let at = pty.wait_for("The cache simulation failed", opened);
    let at = pty.wait_for("panicked", at);
    pty.wait_for("stopped before its last run", opened);
    pty.send("\x1b"); // the popup
    pty.send("c"); // back to the global traffic
    pty.wait_for("Traffic: naive vs flash", at);
    pty.send("q"); // the menu
    pty.send("q");
    let status = pty.exit_status();
    assert_eq!(status.code(), Some(0), "{status:?}; output:\n{}", pty.text());
    assert_restored(&pty.text());

    // training: the run ends as failed, with the popup
    let mut pty = spawn_with(d, &[], &[("ATTN_TRACE_WORKER_PANIC", "training")]);
    let at = pty.wait_for("q_base", 0);
    pty.send("q");
    pty.send("5"); // Train TinyGPT
    let at = pty.wait_for("Start", at);
    pty.send("\r");
    let at = pty.wait_for("Training failed", at);
    pty.wait_for("panicked", at);
    pty.send("\x1b"); // the popup
    pty.send("q"); // the menu
    pty.send("q");
    let status = pty.exit_status();
    assert_eq!(status.code(), Some(0), "{status:?}; output:\n{}", pty.text());
    assert_restored(&pty.text());
}

/// Class 5: a typed range was expanded before it was checked: `0..=18446744073709551615` panicked
/// (capacity overflow) and `0..4000000000` aborted out of memory with the terminal left raw. Both
/// are now a wrong answer like any other.
#[test]
fn quiz_ranges_beyond_any_iteration_are_wrong_answers_not_allocations() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("small.toml"),
        "title = \"small\"\n[shape]\nB = 1\nT = 3\nC = 4\nH = 2\n",
    )
    .unwrap();
    let mut pty = spawn(d, &["tui", "small.toml", "--quiz=iterations"]);
    let at = pty.wait_for("predict", 0);
    // the iteration's first two reads are at offset 0: each answer is wrong, none is expanded
    for answer in ["0..=18446744073709551615", "5..4000000000", "7..=4000000000"] {
        pty.send(answer);
        pty.send("\r");
        std::thread::sleep(std::time::Duration::from_millis(300));
        pty.send(&"\x7f".repeat(30)); // Backspace: clears what was typed (Esc on nothing leaves)
    }
    // (the screen redraws only the cells that change, so the later verdicts show in pieces)
    pty.wait_for("not quite", at);
    // Ctrl-C quits, after the answers: an exit code 0 says none of them ended the program
    pty.send("\x03");
    let status = pty.exit_status();
    assert_eq!(status.code(), Some(0), "{status:?}; output:\n{}", pty.text());
    assert_restored(&pty.text());
    assert!(pty.cooked(), "the terminal is out of raw mode");
}

/// Class 6: SIGINT, SIGTERM and SIGHUP end the TUI with 128 + n and give the whole terminal back:
/// the alternate screen and mouse capture were undone, but the cursor stayed hidden.
#[test]
fn every_signal_the_tui_handles_restores_the_whole_terminal() {
    let dir = tempfile::tempdir().unwrap();
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        let mut pty = spawn(dir.path(), &[]);
        pty.wait_for("q_base", 0);
        // SAFETY: signalling our own child by its id.
        assert_eq!(unsafe { libc::kill(pty.child.id() as i32, signal) }, 0);
        let status = pty.exit_status();
        assert_eq!(status.code(), Some(code), "signal {signal}: {status:?}");
        assert_restored(&pty.text());
        assert!(pty.cooked(), "signal {signal}: the terminal is out of raw mode");
    }
}

// ---------------------------------------------------------------------------------------------
// Round three (issue 54)

/// Items 1 and 6: menu 8 "Grade your own kernel…" describes every `*.jsonl` of the folder by
/// its header. A header line of 1.5 GB (sparse) was read whole: an allocation of its size
/// aborted the app (exit 134, the terminal left raw, the cursor hidden); a FIFO named `*.jsonl`
/// froze the app in open(), Ctrl-C ignored. Each is now described as what it is, and opening
/// them is an error popup; the app goes on and quits cleanly.
#[test]
fn the_trace_picker_survives_a_giant_header_and_a_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let big = d.join("a_big.jsonl");
    std::fs::write(&big, b"{\"format\":\"attn-trace-trace\",\"version\":1,\"scenario\":\"").unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(3 << 29)
        .unwrap();
    let fifo = std::ffi::CString::new(d.join("b_pipe.jsonl").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);

    let mut pty = spawn(d, &[]);
    let at = pty.wait_for("q_base", 0);
    pty.send("q");
    pty.send("8"); // Grade your own kernel…
    let at = pty.wait_for("a_big.jsonl", at);
    pty.wait_for("65,536 bytes", at);
    let at = pty.wait_for("FIFO", at);
    pty.send("\r"); // opens a_big.jsonl
    let at = pty.wait_for("Cannot open this trace", at);
    pty.send("\x1b"); // the popup
    pty.send("\x1b[B"); // ↓ to b_pipe.jsonl
    pty.send("\r");
    let at = pty.wait_for("Cannot open this trace", at);
    pty.wait_for("FIFO", at);
    pty.send("\x1b"); // the popup
    pty.send("\x1b"); // the menu
    pty.send("q");
    let status = pty.exit_status();
    assert_eq!(status.code(), Some(0), "{status:?}; output:\n{}", pty.text());
    assert_restored(&pty.text());
}
