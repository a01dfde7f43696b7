//! Hostile files in the real TUI, in a pseudo-terminal: a checkpoint that claims a huge model, a
//! FIFO among the scenarios, a device typed as a path, and SIGTERM. The screen stays live and
//! shows one line of error, and whatever ends the program gives the terminal back.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const LEAVE_ALT_SCREEN: &str = "\x1b[?1049l";
const ENTER_ALT_SCREEN: &str = "\x1b[?1049h";
/// As in tests/cli_hostile.rs: a regression that believes a hostile file fails here.
const MEMORY_LIMIT: u64 = 1 << 30;

struct Pty {
    child: Child,
    master: std::fs::File,
    output: Arc<Mutex<Vec<u8>>>,
}

/// The binary in `dir` on the slave side of a fresh 120×40 pty, as its controlling terminal.
fn spawn(dir: &Path, args: &[&str]) -> Pty {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 40,
        ws_col: 120,
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
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("attn-trace"));
    cmd.args(args)
        .current_dir(dir)
        .env("TERM", "xterm-256color")
        .env("NO_COLOR", "1")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    // SAFETY: only async-signal-safe calls between fork and exec: a new session whose
    // controlling terminal is the pty, and the memory limit.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::ioctl(0, libc::TIOCSCTTY as _, 0);
            let lim = libc::rlimit {
                rlim_cur: MEMORY_LIMIT,
                rlim_max: MEMORY_LIMIT,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let child = cmd.spawn().expect("the binary starts");
    drop(cmd);
    let master = std::fs::File::from(master);
    let output = Arc::new(Mutex::new(Vec::new()));
    let mut reader = master.try_clone().unwrap();
    let sink = Arc::clone(&output);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
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

    /// Waits until `needle` appears on screen after byte `from` of the output; returns where it
    /// ends. The screen is drawn in pieces (only changed cells, with cursor moves between them),
    /// so the output is compared without escape sequences and without spaces.
    fn wait_for(&mut self, needle: &str, from: usize) -> usize {
        let start = Instant::now();
        let needle: String = needle.chars().filter(|c| !c.is_whitespace()).collect();
        loop {
            let text = self.text();
            let (shown, ends) = visible(text.get(from..).unwrap_or(""));
            if let Some(k) = shown.find(&needle) {
                return from + ends[k + needle.len() - 1];
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = self.child.kill();
                panic!("never saw {needle:?} (the screen froze or the program died); got:\n{text}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn send(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
        self.master.flush().unwrap();
        std::thread::sleep(Duration::from_millis(150));
    }

    fn exit_status(&mut self) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(200));
                return status;
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = self.child.kill();
                panic!("the TUI did not exit; output:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The characters of terminal output other than escape sequences and whitespace, and for each
/// the byte offset just past it in `out`.
fn visible(out: &str) -> (String, Vec<usize>) {
    let (mut shown, mut ends) = (String::new(), Vec::new());
    let mut chars = out.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ parameters, ended by a byte in @..~; other escapes: one more char
            if chars.next_if(|&(_, c)| c == '[').is_some() {
                for (_, c) in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            } else {
                chars.next();
            }
        } else if !c.is_whitespace() {
            shown.push(c);
            for _ in 0..c.len_utf8() {
                ends.push(i + c.len_utf8());
            }
        }
    }
    (shown, ends)
}

fn assert_restored(out: &str) {
    let entered = out
        .rfind(ENTER_ALT_SCREEN)
        .expect("the TUI entered the alternate screen");
    let left = out.rfind(LEAVE_ALT_SCREEN).expect("the alternate screen was left");
    assert!(left > entered, "the alternate screen was left after it was entered");
    assert!(out.contains("\x1b[?1000l"), "mouse capture was turned off");
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
    pty.wait_for("character device", at);
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
