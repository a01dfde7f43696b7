//! The program's binary as a command.

use assert_cmd::Command;

/// `attn-trace`, the binary this build made.
pub(crate) fn cmd() -> Command {
    Command::cargo_bin("attn-trace").unwrap()
}

/// What `attn-trace ARGS` prints on standard output; it must succeed.
pub(crate) fn stdout_of(args: &[&str]) -> String {
    let out = cmd().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `attn-trace grade SCENARIO FLAGS --json -- COMMAND…` (SCENARIO relative to the repository):
/// its exit code and its answer.
pub(crate) fn grade_json(scenario: &str, flags: &[&str], command: &[std::ffi::OsString]) -> (i32, serde_json::Value) {
    let out = cmd()
        .arg("grade")
        .arg(super::root().join(scenario))
        .args(flags)
        .arg("--json")
        .arg("--")
        .args(command)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let json = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{scenario} {command:?}: {e}\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), json)
}
