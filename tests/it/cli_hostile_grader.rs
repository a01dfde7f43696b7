//! Hostile inputs, round three (issue 54), through the real binary: the grader, the programs it
//! runs, FIFOs, signals and the files it touches. Every command runs under the address-space
//! and time limits of `cli_hostile.rs`, so a regression that holds a whole line, a whole stderr
//! or a name per access aborts its test instead of the machine; sizes are scaled to those limits
//! (sparse files stand in for the giants). The cases of the issue that live in the TUI are in
//! `tui_hostile.rs`; the property tests over the trace reader and the pickers are in
//! `reader_picker_props.rs`.

use crate::cli_hostile::{bin, cmd, mkfifo, refused, std_cmd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(name)
}

fn learner(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/learner")
        .join(name)
}

/// The reference's own forward trace of the walkthrough (graded right), written to `d/NAME`.
fn reference_trace(d: &Path, name: &str) -> PathBuf {
    let out = d.join(name);
    let done = cmd(d)
        .arg("trace")
        .arg(scenario("mha_walkthrough.toml"))
        .args(["--variant", "mha", "--pass", "forward", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    out
}

/// The walkthrough's header line (mha forward, input 0), as the recorders write it.
fn header() -> String {
    format!(
        "{{\"format\":\"attn-trace-trace\",\"version\":1,\"scenario\":{},\"variant\":\"mha\",\"pass\":\"forward\",\"input\":0,\"dims\":{{\"B\":1,\"T\":3,\"S\":3,\"C\":4,\"H\":2,\"D\":2,\"H_kv\":2,\"L\":1}}}}",
        serde_json::to_string(&scenario("mha_walkthrough.toml").display().to_string()).unwrap()
    )
}

/// A sparse file: `head`, then zero bytes up to `len`, without a newline.
fn sparse(path: &Path, head: &[u8], len: u64) {
    std::fs::write(path, head).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// What a finished command said: (exit code, stdout, stderr).
fn said(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The entries of a folder (a private TMPDIR must be empty after every command).
fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `grade WALKTHROUGH ARGS… -- sh -c SCRIPT` in `d`, with TMPDIR `tmp`, under the limits.
fn grade_sh(d: &Path, tmp: &Path, args: &[&str], script: &str) -> Output {
    cmd(d)
        .env("TMPDIR", tmp)
        .arg("grade")
        .arg(scenario("mha_walkthrough.toml"))
        .args(args)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap()
}

/// Is process `pid` gone (or a zombie waiting for whoever reaps it)?
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Waits up to 3 s for `pid` to be gone; kills it (SIGKILL) if it is not, and says so.
fn ended(pid: i32) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        if gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: ending a process this test's program started, by its id.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    false
}

// ---------------------------------------------------------------------------------------------
// 2 and 12: the learner's stderr is a bounded tail, printed safely

/// 600 MB of stderr without a newline, then `exit 1`: the grader read the whole log into one
/// string (an abort under the 1 GiB limit; 6.3 GB peak at 2 GiB) and printed it as one line,
/// and left it in the temporary folder. Now the tail is a few lines of bounded length.
#[test]
fn a_program_that_floods_its_stderr_gets_a_short_tail() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = grade_sh(dir.path(), tmp.path(), &[], "head -c 629145600 /dev/zero >&2; exit 1");
    let (code, text, err) = said(&out);
    assert_eq!(code, 3, "{err}");
    assert!(text.contains("your program exited with status 1"), "{text}");
    assert!(text.len() < 4000, "{} bytes of report", text.len());
    assert!(text.lines().all(|l| l.chars().count() <= 240), "{text}");
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

/// The tail is printed without the program's escape sequences (a terminal would obey them), and
/// a line of invalid UTF-8 does not cost the whole tail (it was dropped at the first bad byte).
#[test]
fn the_stderr_tail_is_printed_without_escapes_and_keeps_invalid_utf8_lines() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = grade_sh(
        dir.path(),
        tmp.path(),
        &[],
        r"printf 'first\n\033[31mred\033[0m\n\377\376 after bad bytes\nTraceback: IndexError\n' >&2; exit 1",
    );
    let (code, text, _) = said(&out);
    assert_eq!(code, 3, "{text}");
    assert!(!text.contains('\x1b'), "a raw escape: {text:?}");
    assert!(text.contains("\\u{1b}[31mred"), "{text}");
    assert!(text.contains("after bad bytes"), "{text}");
    assert!(text.contains("    Traceback: IndexError"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// 3 and 12: every line is bounded before it is held

/// A trace line with a 700 MB string: read whole into memory (an abort under the limit; 4.2 GB
/// for a 1 GB line). Now a line longer than the bound is refused where it starts. The header
/// line too.
#[test]
fn a_giant_line_is_refused_without_being_held() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let line = "{\"op\":\"read\",\"buffer\":\"q\",\"offset\":0,\"value\":1,\"file\":\"";
    sparse(
        &d.join("t.jsonl"),
        format!("{}\n{line}", header()).as_bytes(),
        700 << 20,
    );
    let start = Instant::now();
    let err = refused(
        cmd(d).arg("grade").arg(scenario("mha_walkthrough.toml")).arg("t.jsonl"),
        &["t.jsonl:2:", "longer than"],
    );
    assert!(err.len() < 300, "{err}");
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    sparse(
        &d.join("h.jsonl"),
        b"{\"format\":\"attn-trace-trace\",\"version\":1,\"scenario\":\"",
        700 << 20,
    );
    let err = refused(
        cmd(d).arg("grade").arg(scenario("mha_walkthrough.toml")).arg("h.jsonl"),
        &["h.jsonl:1:", "longer than"],
    );
    assert!(err.len() < 300, "{err}");
}

/// A scenario name of thousands of bytes in the header was echoed whole in the error; a 100 MB
/// one gave a 100 MB line. The echo is now cut short (and a name longer than a path may be is
/// refused as such), and a header error shows the header as it is written, without doubled
/// braces.
#[test]
fn header_errors_echo_a_bounded_name_and_single_braces() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (n, needles) in [
        (3000, &["t.jsonl:1:", "\"scenario\"", "xxx", "…"][..]),
        (10_000, &["t.jsonl:1:", "\"scenario\"", "longer than"]),
    ] {
        let long = format!("{}.toml", "x".repeat(n));
        let text = header().replace("mha_walkthrough.toml", &long) + "\n";
        std::fs::write(d.join("t.jsonl"), text).unwrap();
        let err = refused(
            cmd(d).arg("grade").arg(scenario("mha_walkthrough.toml")).arg("t.jsonl"),
            needles,
        );
        assert!(err.len() < 600, "{} bytes: {err}", err.len());
    }
    std::fs::write(d.join("n.jsonl"), "not json\n").unwrap();
    let err = refused(
        cmd(d).arg("grade").arg(scenario("mha_walkthrough.toml")).arg("n.jsonl"),
        &["n.jsonl:1:", "{\"format\":\"attn-trace-trace\",\"version\":1,…}"],
    );
    assert!(!err.contains("{{"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// 4: the grader's memory does not grow with the trace

/// Each access naming another source file: every name was kept (a 1 GB trace peaked at 2.0 GB,
/// a 4.5 GB one aborted). The names a trace may use are bounded, and the trace past that bound
/// is refused where it crosses it. Here 300 000 accesses of 900-byte names (270 MB of them,
/// twice over in memory) under a 256 MiB address-space limit.
#[test]
fn a_name_per_access_does_not_grow_the_grader() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = header();
    text.push('\n');
    let pad = "p".repeat(900);
    {
        use std::io::Write;
        let mut w = std::io::BufWriter::new(std::fs::File::create(d.join("t.jsonl")).unwrap());
        w.write_all(text.as_bytes()).unwrap();
        for k in 0..300_000 {
            writeln!(
                w,
                "{{\"op\":\"read\",\"buffer\":\"x\",\"offset\":0,\"value\":0.1,\"file\":\"{pad}{k}.py\",\"line\":1}}"
            )
            .unwrap();
        }
    }
    let mut c = std::process::Command::new(bin());
    c.current_dir(d)
        .env("NO_COLOR", "1")
        .arg("grade")
        .arg(scenario("mha_walkthrough.toml"))
        .arg("t.jsonl");
    as_limit(&mut c, 256 << 20);
    let out = c.output().unwrap();
    let (code, text, err) = said(&out);
    assert_eq!(code, 2, "{text}{err}");
    assert!(err.contains("t.jsonl:") && err.contains("\"file\""), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// Every access out of bounds at a line of its own: each was a finding of its own, searched
/// one by one for the next (quadratic: minutes for 300 000 accesses, and memory per access).
/// The findings of a kind are now a few listed sites and a count of the rest.
#[test]
fn an_error_at_every_line_is_counted_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    {
        use std::io::Write;
        let mut w = std::io::BufWriter::new(std::fs::File::create(d.join("t.jsonl")).unwrap());
        writeln!(w, "{}", header()).unwrap();
        for k in 0..300_000 {
            writeln!(
                w,
                "{{\"op\":\"read\",\"buffer\":\"x\",\"offset\":{},\"value\":0,\"file\":\"k.py\",\"line\":{k}}}",
                1000 + k
            )
            .unwrap();
        }
    }
    let start = Instant::now();
    let out = cmd(d)
        .arg("grade")
        .arg(scenario("mha_walkthrough.toml"))
        .arg("t.jsonl")
        .output()
        .unwrap();
    let (code, text, err) = said(&out);
    assert_eq!(code, 3, "{err}");
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    let listed = text.lines().filter(|l| l.contains("outside the buffer")).count();
    assert!((1..=20).contains(&listed), "{listed} lines listed:\n{text}");
    assert!(text.contains("300,000") || text.contains("more"), "{text}");
}

/// `rlimit`'s address-space limit for a command about to start.
fn as_limit(c: &mut std::process::Command, bytes: u64) {
    // SAFETY: setrlimit is async-signal-safe and touches nothing but the child's limits.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &raw const lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

// ---------------------------------------------------------------------------------------------
// 5: signals leave no temporary data

/// A trace that takes the grader a second or more to read: the walkthrough's header, then
/// accesses in an order the fast reader does not take.
fn slow_trace(path: &Path, lines: usize) {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(w, "{}", header()).unwrap();
    for _ in 0..lines {
        writeln!(
            w,
            "{{\"file\":\"k.py\",\"line\":1,\"op\":\"read\",\"buffer\":\"x\",\"value\":0.25,\"offset\":0}}"
        )
        .unwrap();
    }
}

/// SIGINT, SIGTERM or SIGHUP while `grade -- COMMAND` reads the trace of a program that has
/// exited: the exit was 130/143/129 and `attn-trace-grade-*` stayed (3.8 GB in the issue). The
/// temporary folder is now removed on every exit path.
#[test]
fn a_signal_while_the_programs_trace_is_read_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    slow_trace(&d.join("big.jsonl"), 4_000_000);
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        let tmp = tempfile::tempdir().unwrap();
        let mark = d.join("exited");
        let _ = std::fs::remove_file(&mark);
        let mut child = std_cmd(d)
            .env("TMPDIR", tmp.path())
            .arg("grade")
            .arg(scenario("mha_walkthrough.toml"))
            .args([
                "--seeds",
                "0",
                "--",
                "sh",
                "-c",
                "cp big.jsonl \"$ATTN_TRACE_OUT\" && : > exited",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !mark.exists() {
            assert!(start.elapsed() < Duration::from_secs(20), "the program never ran");
            std::thread::sleep(Duration::from_millis(5));
        }
        // the program has exited; the grader is reading its trace
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            child.try_wait().unwrap().is_none(),
            "the trace was read too fast for the test"
        );
        // SAFETY: signalling our own child by its id.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "signal {signal}: {status:?}");
        assert_eq!(entries(tmp.path()), Vec::<String>::new(), "signal {signal}");
    }
}

/// The same signals while the program is still running: the handler's clean-up reaped the
/// program under the grader's wait, which then failed ("cannot wait for the program: No child
/// processes", exit 1) before the handler could exit 143. Each signal now ends `grade` with its
/// own code, the program and the temporary folder gone.
#[test]
fn a_signal_while_the_program_runs_ends_grade_with_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for round in 0..3 {
        for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
            let tmp = tempfile::tempdir().unwrap();
            let pid_file = d.join("pid");
            let _ = std::fs::remove_file(&pid_file);
            let child = std_cmd(d)
                .env("TMPDIR", tmp.path())
                .arg("grade")
                .arg(scenario("mha_walkthrough.toml"))
                .args([
                    "--seeds",
                    "0",
                    "--",
                    "sh",
                    "-c",
                    "echo $$ > pid.new; mv pid.new pid; exec sleep 1000",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let start = Instant::now();
            while !pid_file.exists() {
                assert!(start.elapsed() < Duration::from_secs(20), "the program never ran");
                std::thread::sleep(Duration::from_millis(5));
            }
            let program: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
            // SAFETY: signalling our own child by its id.
            assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
            let out = child.wait_with_output().unwrap();
            let (got, text, err) = said(&out);
            assert_eq!(got, code, "round {round}, signal {signal}: {text}{err}");
            assert_eq!(err, "", "round {round}, signal {signal}");
            assert!(
                ended(program),
                "round {round}, signal {signal}: the program outlived grade"
            );
            assert_eq!(entries(tmp.path()), Vec::<String>::new(), "signal {signal}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 6: FIFOs never hang

/// `grade S t.fifo` blocked in open(); `tui S --mine t.fifo` too; a program that leaves a FIFO
/// at `$ATTN_TRACE_OUT` hung `grade --timeout 5` for ever. Each is now refused at once.
#[test]
fn a_fifo_as_a_trace_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("t.fifo"));
    let start = Instant::now();
    refused(
        cmd(d).arg("grade").arg(scenario("mha_walkthrough.toml")).arg("t.fifo"),
        &["t.fifo", "FIFO"],
    );
    refused(
        cmd(d)
            .arg("tui")
            .arg(scenario("mha_walkthrough.toml"))
            .args(["--mine", "t.fifo"]),
        &["t.fifo", "FIFO"],
    );
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());

    let tmp = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = grade_sh(d, tmp.path(), &["--timeout", "5"], "mkfifo \"$ATTN_TRACE_OUT\"");
    let (code, text, err) = said(&out);
    assert_eq!(code, 3, "{text}{err}");
    assert!(text.contains("FIFO"), "{text}");
    assert!(start.elapsed() < Duration::from_secs(8), "{:?}", start.elapsed());
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// 7: every descendant of the program ends with it

/// A child the learner's program starts in a session of its own (`setsid`) outlived `grade`;
/// one that kept appending to the trace kept `grade --timeout 5` reading for 38 s. Both end
/// with the program now, and the trace is read within the same time limit.
#[test]
fn descendants_in_their_own_session_end_with_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let reference = reference_trace(d, "ref.jsonl");
    let tmp = tempfile::tempdir().unwrap();
    let script = format!(
        "cp {r} \"$ATTN_TRACE_OUT\"; setsid sh -c 'echo $$ > pid; exec sleep 1000' </dev/null >/dev/null 2>&1 & \
         while [ ! -s pid ]; do sleep 0.01; done",
        r = reference.display()
    );
    let out = grade_sh(d, tmp.path(), &["--seeds", "0"], &script);
    let (code, text, err) = said(&out);
    let pid: i32 = std::fs::read_to_string(d.join("pid")).unwrap().trim().parse().unwrap();
    assert!(ended(pid), "the program's setsid child {pid} outlived grade");
    assert_eq!(code, 0, "{text}{err}");
    assert_eq!(entries(tmp.path()), Vec::<String>::new());

    // an appender in its own session, as fast as `yes` writes (at most 256 MB of it)
    let line = "{\\\"op\\\":\\\"read\\\",\\\"buffer\\\":\\\"x\\\",\\\"offset\\\":0,\\\"value\\\":0.25,\\\"file\\\":\\\"k.py\\\",\\\"line\\\":1}";
    let script = format!(
        "cp {r} \"$ATTN_TRACE_OUT\"; setsid sh -c 'echo $$ > pid2; ulimit -f 524288; exec yes \"{line}\" >> \"$ATTN_TRACE_OUT\"' </dev/null >/dev/null 2>&1 & \
         while [ ! -s pid2 ]; do sleep 0.01; done; sleep 0.5",
        r = reference.display()
    );
    let start = Instant::now();
    let out = grade_sh(d, tmp.path(), &["--seeds", "0", "--timeout", "2"], &script);
    let took = start.elapsed();
    let (code, text, err) = said(&out);
    let pid: i32 = std::fs::read_to_string(d.join("pid2")).unwrap().trim().parse().unwrap();
    assert!(ended(pid), "the appender {pid} outlived grade");
    assert!(code == 0 || code == 3, "{text}{err}");
    assert!(took < Duration::from_secs(6), "{took:?}: {text}");
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// 8: a path is not a verdict

/// A copy of the walkthrough under `name` in `d`.
fn walkthrough_as(d: &Path, name: &str) -> PathBuf {
    let p = d.join(name);
    std::fs::copy(scenario("mha_walkthrough.toml"), &p).unwrap();
    p
}

/// A scenario path with a newline broke the inputs file (the recorder failed: "wrong", exit 3);
/// a literal `%20` in a path read back as a space, and the trace was refused as another
/// scenario's. The correct kernels, in Python and in C++ (each recorder reads the path back),
/// are right on each.
#[test]
fn a_correct_kernel_is_right_whatever_the_scenario_is_called() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmp = tempfile::tempdir().unwrap();
    let cpp = d.join("jfirst");
    let built = std::process::Command::new("g++")
        .args(["-std=c++11", "-O2", "-I"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("recorders"))
        .arg(learner("attention_jfirst.cpp"))
        .arg("-o")
        .arg(&cpp)
        .arg("-lm")
        .status()
        .unwrap();
    assert!(built.success());
    for name in ["new\nline.toml", "a b%20c.toml", "100%.toml", "tab\there.toml"] {
        let s = walkthrough_as(d, name);
        let python = [std::ffi::OsString::from("python3"), learner("attention.py").into()];
        for program in [&python[..], &[cpp.clone().into()]] {
            let out = cmd(d)
                .env("TMPDIR", tmp.path())
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .arg("grade")
                .arg(&s)
                .args(["--seeds", "1", "--"])
                .args(program)
                .output()
                .unwrap();
            let (code, text, err) = said(&out);
            assert_eq!(code, 0, "{name:?} {program:?}: {text}{err}");
            assert!(text.contains("Verdict: right"), "{name:?}: {text}");
        }
    }
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------
// 9: a write never replaces what the caller could not write

/// `nobody`'s uid and gid.
const NOBODY: u32 = 65534;

/// The binary in `d` as the user `nobody`.
fn as_nobody(d: &Path) -> assert_cmd::Command {
    let mut c = std_cmd(d);
    // SAFETY: setgroups, setgid and setuid are async-signal-safe; they change only the child.
    unsafe {
        c.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(NOBODY) != 0 || libc::setuid(NOBODY) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut c = assert_cmd::Command::from_std(c);
    c.timeout(Duration::from_secs(30));
    c
}

/// A 0444 file of root's in a folder anyone may write: `echo x > f` as another user is refused,
/// but `inputs -o`, `trace -o` and `tui --snapshot` replaced it through a rename (exit 0, the
/// file now theirs). They are refused now, and the file is untouched. A file they may write
/// (0666) keeps its owner. Needs root (to be root and another user); CI runs as root.
#[test]
fn a_file_the_caller_may_not_write_is_refused_not_replaced() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root, to own a file and write it as another user");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
    let s = walkthrough_as(d, "s.toml");
    std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o644)).unwrap();
    let f = d.join("f");
    let commands: [&[&str]; 3] = [
        &["inputs", "s.toml", "-o", "f"],
        &["trace", "s.toml", "-o", "f"],
        &["tui", "s.toml", "--snapshot", "f"],
    ];
    for args in commands {
        std::fs::write(&f, "root's\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
        refused(as_nobody(d).args(args), &["f", "ermission denied"]);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "root's\n", "{args:?}");
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!((m.uid(), m.mode() & 0o777), (0, 0o444), "{args:?}");
        // a file anyone may write is written, and stays root's
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        let out = as_nobody(d).args(args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!((m.uid(), m.gid(), m.mode() & 0o777), (0, 0, 0o666), "{args:?}");
        assert_ne!(std::fs::read_to_string(&f).unwrap(), "root's\n", "{args:?}");
        assert_eq!(entries(d), ["f", "s.toml"], "{args:?}");
        std::fs::remove_file(&f).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// 10 and 14: one exit-code rule

/// A failed write is exit code 1 for every command: `tui --snapshot` on a full disk exited 2
/// (`trace -o` exits 1). A destination that cannot be opened is bad input, exit 2: `inputs -o`
/// exited 2 for a missing folder but 1 for a name too long. (A file-size limit stands in for
/// the full disk.)
#[test]
fn every_command_follows_one_exit_code_rule() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    walkthrough_as(d, "s.toml");
    for args in [
        &["tui", "s.toml", "--snapshot", "out.svg"][..],
        &["trace", "s.toml", "-o", "out.svg"],
        &["inputs", "s.toml", "-o", "out.svg"],
    ] {
        let mut c = std_cmd(d);
        c.args(args);
        // SAFETY: setrlimit and signal are async-signal-safe; SIGXFSZ ignored makes an oversized
        // write fail with EFBIG instead of killing the process.
        unsafe {
            c.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: 1024,
                    rlim_max: 1024,
                };
                libc::setrlimit(libc::RLIMIT_FSIZE, &raw const lim);
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
        let out = c.output().unwrap();
        let (code, _, err) = said(&out);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: out.svg") && err.contains("too large"),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert_eq!(entries(d), ["s.toml"], "{args:?}");
    }
    let long = format!("{}.txt", "n".repeat(300));
    for args in [
        &["inputs", "s.toml", "-o", "missing/x.txt"][..],
        &["inputs", "s.toml", "-o", &long],
        &["trace", "s.toml", "-o", &long],
        &["tui", "s.toml", "--snapshot", &long],
        &["tui", "s.toml", "--snapshot", "missing/x.txt"],
    ] {
        refused(cmd(d).args(args), &[]);
    }
}

// ---------------------------------------------------------------------------------------------
// 11: cache levels

/// `--levels L1=32K/128/8` alone read 1,920 bytes from memory on flash.toml; a cold
/// `L2=512K/64/8` below it gave 960: a level whose lines are smaller than the level above's
/// fetched half a line for each miss. It is refused.
#[test]
fn a_cache_level_with_smaller_lines_than_the_level_above_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(
        cmd(d)
            .arg("cache")
            .arg(scenario("flash.toml"))
            .args(["--levels", "L1=32K/128/8,L2=512K/64/8"]),
        &["--levels", "L2", "64", "128", "L1"],
    );
    let out = cmd(d)
        .arg("cache")
        .arg(scenario("flash.toml"))
        .args(["--levels", "L1=32K/64/8,L2=512K/128/8"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

// ---------------------------------------------------------------------------------------------
// 13: `tui --mine` refuses what `grade` refuses

/// `tui --mine` showed "right" for traces `grade` refuses: other sizes, another scenario. Both
/// refuse them with the same line now (the TUI before taking the terminal).
#[test]
fn tui_mine_refuses_what_grade_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = std::fs::read_to_string(reference_trace(d, "ref.jsonl")).unwrap();
    let (head, rest) = good.split_once('\n').unwrap();
    let cases = [
        ("dims.jsonl", head.replace("\"T\":3", "\"T\":4"), "\"dims\""),
        (
            "other.jsonl",
            head.replace("mha_walkthrough.toml", "gqa.toml"),
            "\"scenario\"",
        ),
    ];
    for (name, h, needle) in cases {
        std::fs::write(d.join(name), format!("{h}\n{rest}")).unwrap();
        let from_grade = refused(
            cmd(d).arg("grade").arg(scenario("mha_walkthrough.toml")).arg(name),
            &[name, needle],
        );
        let from_tui = refused(
            cmd(d)
                .arg("tui")
                .arg(scenario("mha_walkthrough.toml"))
                .args(["--mine", name]),
            &[name, needle],
        );
        assert_eq!(from_grade, from_tui);
    }
}

// ---------------------------------------------------------------------------------------------
// 14: the smaller ones

/// `--seeds` and `--timeout` with a trace file were ignored without a word.
#[test]
fn seeds_and_timeout_with_a_trace_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    reference_trace(d, "ref.jsonl");
    for flag in ["--seeds", "--timeout"] {
        refused(
            cmd(d)
                .arg("grade")
                .arg(scenario("mha_walkthrough.toml"))
                .args(["ref.jsonl", flag, "5"]),
            &[flag],
        );
    }
}

/// Headers without `dims`, or without `H`, or with keys nobody defined, were accepted; `1e400`
/// read as infinity while `1e999999999` was refused.
#[test]
fn headers_and_numbers_are_read_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let h = header();
    let ok = "{\"op\":\"read\",\"buffer\":\"x\",\"offset\":0,\"value\":0.5,\"file\":\"k.py\",\"line\":1}";
    let no_dims = h.split(",\"dims\"").next().unwrap().to_string() + "}";
    let cases = [
        ("no dims", no_dims, ok.to_string(), ":1: \"dims\""),
        ("no H", h.replace(",\"H\":2", ""), ok.to_string(), ":1: \"dims\""),
        (
            "an unknown key",
            h.replace("\"input\":0", "\"input\":0,\"seed\":3"),
            ok.to_string(),
            ":1:",
        ),
        (
            "an unknown size",
            h.replace("\"B\":1", "\"B\":1,\"Q\":7"),
            ok.to_string(),
            ":1: \"dims\"",
        ),
        ("1e400", h.clone(), ok.replace("0.5", "1e400"), ":2: \"value\""),
        (
            "1e999999999",
            h.clone(),
            ok.replace("0.5", "1e999999999"),
            ":2: \"value\"",
        ),
    ];
    let mut messages = Vec::new();
    for (what, head, line, needle) in cases {
        std::fs::write(d.join("t.jsonl"), format!("{head}\n{line}\n")).unwrap();
        let err = refused(
            cmd(d).arg("grade").arg(scenario("mha_walkthrough.toml")).arg("t.jsonl"),
            &[needle],
        );
        messages.push((what, err));
    }
    // the two numbers beyond f64 get the same answer
    let beyond: Vec<String> = messages[4..]
        .iter()
        .map(|(_, e)| e.replace("1e999999999", "N").replace("1e400", "N"))
        .collect();
    assert_eq!(beyond[0], beyond[1], "{messages:?}");
}

/// A trace the program wrote that cannot be read named a temporary path already deleted, and
/// was bad input (exit 2); it is the program's failure (exit 3), named as `$ATTN_TRACE_OUT`.
#[test]
fn a_bad_trace_from_the_program_is_the_programs_failure() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = grade_sh(
        dir.path(),
        tmp.path(),
        &[],
        "printf 'not a header\\n' > \"$ATTN_TRACE_OUT\"",
    );
    let (code, text, err) = said(&out);
    assert_eq!(code, 3, "{text}{err}");
    assert!(!text.contains(&tmp.path().display().to_string()), "{text}");
    assert!(!err.contains(&tmp.path().display().to_string()), "{err}");
    assert!(text.contains("$ATTN_TRACE_OUT:1:"), "{text}");
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

/// A temporary folder too full for the program's trace blamed the learner ("exited with status
/// 1", exit 3). It is said for what it is, exit 1. A 64 KiB tmpfs stands in for the full disk
/// (mounting it needs root and the right to mount; without them the test says why and stops).
#[test]
fn a_full_temporary_folder_is_not_the_learners_fault() {
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a small tmpfs here (needs root and CAP_SYS_ADMIN)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = cmd(dir.path())
        .env("TMPDIR", &mnt)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .arg("grade")
        .arg(scenario("mha_walkthrough.toml"))
        .args(["--", "python3"])
        .arg(learner("attention.py"))
        .output()
        .unwrap();
    let left = entries(&mnt);
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    let (code, text, err) = said(&out);
    assert_eq!(code, 1, "{text}{err}");
    assert!(err.contains("temporary folder") && err.contains("full"), "{err}");
    assert_eq!(left, Vec::<String>::new());
}

/// `inputs --pass backward` on a decode scenario suggested adding "backward" to its passes,
/// which decode refuses; MLA took `qkv = "separate"` and did nothing with it.
#[test]
fn decode_backward_and_mla_qkv_are_refused_with_the_right_advice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let err = refused(
        cmd(d)
            .arg("inputs")
            .arg(scenario("kv_cache_decode.toml"))
            .args(["--pass", "backward"]),
        &["forward only"],
    );
    assert!(!err.contains("add \"backward\""), "{err}");
    let mla = std::fs::read_to_string(scenario("mla.toml"))
        .unwrap()
        .replace("variants = [\"mla\"]", "variants = [\"mla\"]\nqkv = \"separate\"");
    std::fs::write(d.join("mla.toml"), mla).unwrap();
    refused(cmd(d).args(["check", "mla.toml"]), &["mla.toml", "[run].qkv"]);
}
