//! The real binary on the slave side of a fresh pseudo-terminal, as its controlling terminal:
//! keys go in through the master side, and everything the program draws is kept for the test
//! to read. Shared by the TUI's pty tests (`tui_pty`, `tui_hostile`).

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(crate) const LEAVE_ALT_SCREEN: &str = "\x1b[?1049l";
pub(crate) const ENTER_ALT_SCREEN: &str = "\x1b[?1049h";

/// How to start the program: its arguments, folder, terminal size, environment, and an optional
/// cap on its address space (so a regression that believes a hostile file fails, not the host).
pub(crate) struct Spawn<'a> {
    pub args: &'a [&'a str],
    pub dir: Option<&'a Path>,
    pub cols: u16,
    pub rows: u16,
    pub env: &'a [(&'a str, &'a str)],
    pub memory_limit: Option<u64>,
    /// Standard output to /dev/null instead of the terminal (a program whose output is
    /// redirected, its standard error still on the terminal).
    pub stdout_null: bool,
    /// Another copy of the program to run (the build's own binary when `None`).
    pub program: Option<&'a Path>,
}

impl Default for Spawn<'_> {
    fn default() -> Self {
        Spawn {
            args: &[],
            dir: None,
            cols: 80,
            rows: 24,
            env: &[],
            memory_limit: None,
            stdout_null: false,
            program: None,
        }
    }
}

/// A child process on a pty, and everything it printed so far.
pub(crate) struct Pty {
    pub child: Child,
    master: std::fs::File,
    output: Arc<Mutex<Vec<u8>>>,
}

impl Pty {
    pub(crate) fn spawn(how: Spawn) -> Pty {
        let (mut master, mut slave) = (0, 0);
        let size = libc::winsize {
            ws_row: how.rows,
            ws_col: how.cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty writes two fresh descriptors into the given integers.
        let rc = unsafe {
            libc::openpty(
                &raw mut master,
                &raw mut slave,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &raw const size,
            )
        };
        assert_eq!(rc, 0, "openpty failed");
        // SAFETY: both descriptors were just opened and are owned here alone.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let mut cmd = Command::new(how.program.unwrap_or(Path::new(env!("CARGO_BIN_EXE_attn-trace"))));
        cmd.args(how.args)
            .env("TERM", "xterm-256color")
            .env_remove("NO_COLOR")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(if how.stdout_null {
                Stdio::null()
            } else {
                Stdio::from(slave.try_clone().unwrap())
            })
            .stderr(Stdio::from(slave));
        if let Some(dir) = how.dir {
            cmd.current_dir(dir);
        }
        for (k, v) in how.env {
            cmd.env(k, v);
        }
        let limit = how.memory_limit;
        // SAFETY: only async-signal-safe calls between fork and exec: a new session whose
        // controlling terminal is the pty, as in a real terminal, and the memory limit.
        unsafe {
            cmd.pre_exec(move || {
                libc::setsid();
                libc::ioctl(0, libc::TIOCSCTTY as _, 0);
                if let Some(bytes) = limit {
                    let lim = libc::rlimit {
                        rlim_cur: bytes,
                        rlim_max: bytes,
                    };
                    libc::setrlimit(libc::RLIMIT_AS, &raw const lim);
                }
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

    /// Everything printed so far, escape sequences included.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Waits until `needle` appears on screen after byte `from` of the output; returns where it
    /// ends. The screen is drawn in pieces (only changed cells, with cursor moves between them),
    /// so the output is compared without escape sequences and without spaces.
    pub(crate) fn wait_for(&self, needle: &str, from: usize) -> usize {
        let start = Instant::now();
        let needle: String = needle.chars().filter(|c| !c.is_whitespace()).collect();
        loop {
            let text = self.text();
            let (shown, ends) = visible(text.get(from..).unwrap_or(""));
            if let Some(k) = shown.find(&needle) {
                return from + ends[k + needle.len() - 1];
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "never saw {needle:?} (the screen froze or the program died); got:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `keys`, then waits a little: one key per read, as a person types.
    pub(crate) fn send(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
        self.master.flush().unwrap();
        std::thread::sleep(Duration::from_millis(150));
    }

    /// Whether the terminal is in cooked mode again: line editing and echo on, as before the
    /// program put it in raw mode (the master side reads the pty's settings).
    pub(crate) fn cooked(&self) -> bool {
        use std::os::fd::AsRawFd;
        // SAFETY: tcgetattr fills a termios the size libc declares, on a descriptor we own.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::tcgetattr(self.master.as_raw_fd(), &raw mut t) };
        assert_eq!(rc, 0, "tcgetattr on the pty");
        t.c_lflag & libc::ICANON != 0 && t.c_lflag & libc::ECHO != 0
    }

    /// Waits for the program to end (killing it after 30 s) and lets the reader drain.
    pub(crate) fn exit_status(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(200));
                return status;
            }
            if start.elapsed() > Duration::from_secs(30) {
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

pub(crate) const HIDE_CURSOR: &str = "\x1b[?25l";
pub(crate) const SHOW_CURSOR: &str = "\x1b[?25h";

/// The alternate screen was entered, and left again after the last time it was entered, mouse
/// capture was turned off, and the cursor, hidden while the TUI drew, was shown again after the
/// last time it was hidden.
pub(crate) fn assert_restored(out: &str) {
    let entered = out
        .rfind(ENTER_ALT_SCREEN)
        .expect("the TUI entered the alternate screen");
    let left = out.rfind(LEAVE_ALT_SCREEN).expect("the alternate screen was left");
    assert!(left > entered, "the alternate screen was left after it was entered");
    assert!(out.contains("\x1b[?1000l"), "mouse capture was turned off");
    let hidden = out.rfind(HIDE_CURSOR).expect("the TUI hid the cursor while drawing");
    let shown = out.rfind(SHOW_CURSOR);
    assert!(
        shown.is_some_and(|s| s > hidden),
        "the cursor was shown again after it was last hidden"
    );
}
