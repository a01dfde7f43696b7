//! The program's binary as a command.

use assert_cmd::Command;

/// `attn-trace`, the binary this build made.
pub fn cmd() -> Command {
    Command::cargo_bin("attn-trace").unwrap()
}

/// What `attn-trace ARGS` prints on standard output; it must succeed.
pub fn stdout_of(args: &[&str]) -> String {
    let out = cmd().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
