//! The real binary in a pseudo-terminal: keys go in, and whether it quits normally or panics
//! the terminal comes back (alternate screen left, mouse capture off).

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const LEAVE_ALT_SCREEN: &str = "\x1b[?1049l";
const ENTER_ALT_SCREEN: &str = "\x1b[?1049h";

/// A child process on the slave side of a fresh pty, and everything it printed so far.
struct Pty {
    child: Child,
    master: std::fs::File,
    output: Arc<Mutex<Vec<u8>>>,
}

fn spawn(args: &[&str], env: &[(&str, &str)]) -> Pty {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 24,
        ws_col: 80,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two fresh descriptors into the given integers.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty failed");
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_attn-trace"));
    cmd.args(args)
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    for (k, v) in env {
        cmd.env(k, v);
    }
    // SAFETY: only async-signal-safe calls between fork and exec: a new session whose
    // controlling terminal is the pty, as in a real terminal.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::ioctl(0, libc::TIOCSCTTY as _, 0);
            Ok(())
        });
    }
    let child = cmd.spawn().expect("the binary starts");
    drop(cmd); // closes the parent's copies of the slave side
    let master = std::fs::File::from(master);
    let output = Arc::new(Mutex::new(Vec::new()));
    let mut reader = master.try_clone().unwrap();
    let sink = Arc::clone(&output);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        // EIO once the child side is closed ends the loop
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    Pty { child, master, output }
}

impl Pty {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    fn wait_for(&self, needle: &str) {
        let start = Instant::now();
        while !self.text().contains(needle) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "never saw {needle:?}; got:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn send(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
        self.master.flush().unwrap();
        // one key per read, as a person types
        std::thread::sleep(Duration::from_millis(150));
    }

    fn exit_code(&mut self) -> Option<i32> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // let the reader drain the last bytes
                std::thread::sleep(Duration::from_millis(200));
                return status.code();
            }
            if start.elapsed() > Duration::from_secs(30) {
                let _ = self.child.kill();
                panic!("the TUI did not exit; output:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The alternate screen was entered, and left again after the last time it was entered.
fn assert_restored(out: &str) {
    let entered = out
        .rfind(ENTER_ALT_SCREEN)
        .expect("the TUI entered the alternate screen");
    let left = out.rfind(LEAVE_ALT_SCREEN).expect("the alternate screen was left");
    assert!(left > entered, "the alternate screen was left after it was entered");
    assert!(out.contains("\x1b[?1000l"), "mouse capture was turned off");
}

#[test]
fn keys_step_and_q_quits_with_the_terminal_restored() {
    let mut pty = spawn(&[], &[]);
    pty.wait_for("q_base");
    for k in ["n", "j", "?", "\x1b", "g", "1", "2", "\r", "q"] {
        pty.send(k);
    }
    pty.wait_for("Step through baseline attention");
    pty.send("q");
    assert_eq!(pty.exit_code(), Some(0), "output:\n{}", pty.text());
    assert_restored(&pty.text());
}

#[test]
fn a_panic_restores_the_terminal_too() {
    let mut pty = spawn(
        &["tui", "scenarios/indexing_trace.toml"],
        &[("ATTN_TRACE_TUI_PANIC", "1")],
    );
    let code = pty.exit_code();
    assert_ne!(code, Some(0), "the deliberate panic fails the process");
    let out = pty.text();
    assert_restored(&out);
    assert!(out.contains("panicking on purpose"), "the panic is reported:\n{out}");
}

#[test]
fn a_bad_scenario_is_reported_before_the_terminal_is_touched() {
    let mut pty = spawn(&["tui", "no/such/file.toml"], &[]);
    assert_eq!(pty.exit_code(), Some(2));
    let out = pty.text();
    assert!(out.contains("no/such/file.toml: no such file"), "{out}");
    assert!(!out.contains(ENTER_ALT_SCREEN));
}

#[test]
fn no_color_draws_without_colour_codes_and_colour_is_the_default() {
    for (env, coloured) in [(vec![("NO_COLOR", "1")], false), (vec![], true)] {
        let mut pty = spawn(&[], &env);
        pty.wait_for("q_base");
        pty.send("q");
        pty.send("q");
        assert_eq!(pty.exit_code(), Some(0));
        let out = pty.text();
        let has_colour = out.contains("\x1b[38;5;") || out.contains("\x1b[48;5;") || out.contains("\x1b[38;2;");
        assert_eq!(has_colour, coloured, "NO_COLOR={env:?}");
    }
}
