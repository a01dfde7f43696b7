//! The progress of a long export: with standard error on a terminal and the events going
//! elsewhere, `trace` announces the events and their size before it starts, and draws a bar once
//! it has run a second, cleared at the end; with standard error not a terminal, or an export
//! under two million events, it prints no announcement.

use crate::support::pty::{Pty, Spawn};
use std::io::Read;
use std::process::Stdio;

/// One MHA layer, forward only: 3,305,472 events, above the two million the bar waits for.
const LONG: &str = "title = \"Progress: B=1, T=64, C=64, H=4\"\n[shape]\nB = 1\nT = 64\nC = 64\nH = 4\n[run]\nvariants = [\"mha\"]\npasses = [\"forward\"]\n[init]\nseed = 1\n";

#[test]
fn a_long_export_is_announced_on_the_terminal_and_its_bar_cleared() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("long.toml");
    std::fs::write(&scenario, LONG).unwrap();
    let s = scenario.to_str().unwrap();
    // `trace FILE --format csv > /dev/null` on a terminal: the announcement and the bar on it
    let mut pty = Pty::spawn(Spawn {
        args: &["trace", s, "--format", "csv"],
        cols: 100,
        stdout_null: true,
        ..Spawn::default()
    });
    assert_eq!(pty.exit_status().code(), Some(0), "{}", pty.text());
    let text = pty.text();
    // the same export counted byte by byte, standard error not a terminal
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_attn-trace"))
        .args(["trace", s, "--format", "csv"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut size, mut rows) = (0u64, 0u64);
    let mut out = child.stdout.take().unwrap();
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = out.read(&mut chunk).unwrap();
        if n == 0 {
            break;
        }
        size += n as u64;
        rows += chunk[..n].iter().filter(|&&b| b == b'\n').count() as u64;
    }
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(err, "", "nothing on standard error when it is not a terminal");
    assert_eq!(rows, 1 + 3_305_472, "the header and every event");
    // the announcement: the events the filter keeps, and about their size (MiB, as indicatif
    // rounds)
    let first = text.lines().next().unwrap_or_default();
    let head = "mha: 3,305,472 events, about ";
    assert!(first.starts_with(head), "{text:?}");
    let about = first[head.len()..].trim();
    let mib: f64 = about
        .trim_end_matches(" MiB")
        .parse()
        .unwrap_or_else(|_| panic!("{about:?}"));
    let real = size as f64 / f64::from(1 << 20);
    assert!(
        (mib - real).abs() / real < 0.1,
        "the estimate {mib} MiB is within 10% of the export's {real:.2} MiB"
    );
    // a bar, if the export ran long enough to draw one, is erased at the end: nothing follows
    // the last erase of the line
    if let Some(k) = text.rfind("\x1b[2K") {
        assert_eq!(text[k + 4..].trim(), "", "the bar is cleared: {text:?}");
    }
}

#[test]
fn a_short_export_is_not_announced_even_on_a_terminal() {
    let mut pty = Pty::spawn(Spawn {
        args: &["trace", "scenarios/mha_walkthrough.toml", "--format", "csv"],
        stdout_null: true,
        ..Spawn::default()
    });
    assert_eq!(pty.exit_status().code(), Some(0), "{}", pty.text());
    assert_eq!(pty.text().trim(), "", "no announcement under two million events");
}
