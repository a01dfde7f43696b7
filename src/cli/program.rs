//! The learner's program, as `grade -- COMMAND` runs it: in a session of its own, every process
//! it starts ended when it ends, and its standard error kept as a bounded tail.
//!
//! - **Its own session** (`setsid`): a terminal's Ctrl-C reaches `grade`, which ends the
//!   program; the program's process group is the session's.
//! - **Every descendant ended**: on Linux `grade` is a subreaper (`PR_SET_CHILD_SUBREAPER`), so
//!   a process the program starts and leaves behind, even in a session of its own (`setsid`,
//!   a daemon's double fork), is adopted by `grade` instead of by init; when the program ends,
//!   every descendant of `grade` (found in `/proc`) is killed and reaped, until none is left.
//!   Elsewhere the program's process group is killed, which ends what did not leave it.
//! - **A bounded tail**: standard error goes through a pipe into the last [`TAIL_BYTES`] bytes,
//!   whatever the program writes; [`Program::tail`] gives its last lines, each cut to
//!   [`LINE_CHARS`] characters, invalid UTF-8 replaced character by character and control
//!   characters escaped, so the report can print them.

use std::collections::VecDeque;
use std::io::Read;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The bytes of the program's standard error kept: its last ones.
pub(crate) const TAIL_BYTES: usize = 4096;
/// The longest line of that tail shown, in characters (an escape such as `\u{1b}` counts its
/// characters).
pub(crate) const LINE_CHARS: usize = 200;

/// The last [`TAIL_BYTES`] bytes of a stream, and whether earlier ones were dropped.
#[derive(Debug, Default)]
struct Tail {
    bytes: VecDeque<u8>,
    cut: bool,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        let chunk = if chunk.len() > TAIL_BYTES {
            self.cut = true;
            &chunk[chunk.len() - TAIL_BYTES..]
        } else {
            chunk
        };
        let over = (self.bytes.len() + chunk.len()).saturating_sub(TAIL_BYTES);
        if over > 0 {
            self.cut = true;
            self.bytes.drain(..over);
        }
        self.bytes.extend(chunk);
    }
}

/// A running learner's program.
pub(crate) struct Program {
    child: Child,
    tail: Arc<Mutex<Tail>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Program {
    /// Starts `cmd` in a session of its own, its standard error piped into the tail (its other
    /// streams are the caller's to set).
    pub(crate) fn spawn(cmd: &mut Command) -> std::io::Result<Program> {
        cmd.stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: setsid is async-signal-safe and changes only the child, between fork and
            // exec; it cannot fail in a freshly forked child, which leads no process group.
            #[allow(unsafe_code)]
            unsafe {
                cmd.pre_exec(|| {
                    libc::setsid();
                    Ok(())
                });
            }
        }
        let mut child = cmd.spawn()?;
        let tail = Arc::new(Mutex::new(Tail::default()));
        let reader = child.stderr.take().map(|mut err| {
            let sink = Arc::clone(&tail);
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                // until every process holding the pipe has ended (or a read fails)
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    sink.lock().unwrap_or_else(PoisonError::into_inner).push(&buf[..n]);
                }
            })
        });
        Ok(Program { child, tail, reader })
    }

    /// The process id, which is also its process group's and its session's.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the program to exit, until `deadline`: `None` when it is still running then.
    /// Then ends whatever it started (the program itself too, at the deadline), so nothing it
    /// left behind writes on.
    pub(crate) fn wait(&mut self, deadline: Instant) -> std::io::Result<Option<ExitStatus>> {
        let status = loop {
            match self.child.try_wait()? {
                Some(status) => break Some(status),
                None if Instant::now() >= deadline => break None,
                None => std::thread::sleep(Duration::from_millis(10)),
            }
        };
        kill_group(self.id());
        if status.is_none() {
            self.child.wait()?;
        }
        end_descendants();
        Ok(status)
    }

    /// The last `n` lines of the program's standard error, ready to print: invalid UTF-8
    /// replaced character by character, control characters escaped, each line cut to
    /// [`LINE_CHARS`] characters; `…` opens a line whose start was dropped.
    pub(crate) fn tail(&mut self, n: usize) -> Vec<String> {
        // the pipe closes once every process holding it has ended: wait a moment for the last
        // bytes, not for a process that escaped (on a system without a subreaper)
        if let Some(reader) = self.reader.take() {
            let started = Instant::now();
            while !reader.is_finished() && started.elapsed() < Duration::from_secs(1) {
                std::thread::sleep(Duration::from_millis(5));
            }
            if reader.is_finished() {
                let _ = reader.join();
            }
        }
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes: Vec<u8> = tail.bytes.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<(usize, &str)> = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(n)..]
            .iter()
            .map(|&(k, l)| {
                let mut line = String::new();
                if k == 0 && tail.cut {
                    line.push('…');
                }
                // LINE_CHARS of what is shown, escapes included
                let mut shown = 0;
                for c in l.chars() {
                    let piece: String = if c.is_control() {
                        c.escape_debug().collect()
                    } else {
                        c.to_string()
                    };
                    shown += piece.chars().count();
                    if shown > LINE_CHARS {
                        line.push('…');
                        break;
                    }
                    line.push_str(&piece);
                }
                line
            })
            .collect()
    }
}

/// Makes this process the reaper of its orphaned descendants (Linux), so that a process the
/// learner's program leaves behind, even in a session of its own, can be found and ended.
pub(crate) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes plain integers and touches no memory.
    #[allow(unsafe_code)]
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Kills process group `pid` (the program and whatever stayed in its group).
pub(crate) fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; a negative pid
        // names the process group the program leads (its session, `setsid` above).
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Kills every descendant of this process and reaps those that are its children, until none is
/// left (a descendant may fork while it is found: the next round finds its child). Only
/// `grade -- COMMAND` starts processes, so its descendants are the learner's program's.
pub(crate) fn end_descendants() {
    #[cfg(target_os = "linux")]
    for _ in 0..100 {
        let found = descendants();
        if found.is_empty() {
            return;
        }
        for &pid in &found {
            // SAFETY: kill(2) takes plain integers; each pid is a descendant of this process,
            // which cannot be reused before this process reaps it.
            #[allow(unsafe_code)]
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        reap();
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Reaps every child of this process that has ended (those of the program it adopted).
#[cfg(target_os = "linux")]
fn reap() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes one int, which lives in this frame.
        #[allow(unsafe_code)]
        let pid = unsafe { libc::waitpid(-1, &raw mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
    }
}

/// The processes descended from this one, from `/proc/PID/stat`'s parent ids.
#[cfg(target_os = "linux")]
fn descendants() -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(i32, i32)> = entries
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (name) state ppid …`: the name may hold spaces and parentheses
            let (_, rest) = stat.rsplit_once(')')?;
            let ppid: i32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![me];
    while let Some(p) = frontier.pop() {
        for &(pid, ppid) in &parents {
            if ppid == p && pid != me && !found.contains(&pid) {
                found.push(pid);
                frontier.push(pid);
            }
        }
    }
    found
}
