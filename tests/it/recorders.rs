//! The learners' recorders, `recorders/attn_record.py` and `recorders/attn_record.h`, and the
//! worked kernels of `examples/learner/`, run with python3, gcc and g++: their traces checked
//! line by line against the trace format (a header, then one JSON object per access).

use crate::support::root;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// A hand-written inputs file: comments (one trailing a line), a scenario path with a space (one
/// token, `%20`), an input seed, and non-finite numbers in a tensor (as `attn-trace inputs` writes
/// them).
const INPUTS: &str = "\
attn-trace-inputs 1
# written by hand for the recorders' tests
scenario my%20scenarios/mha_walkthrough.toml
variant mha    # a trailing comment
pass forward
input 3
dim B 1
dim T 2
param causal 1
param scale 0.70710677
tensor q 4 3 1 2 2
0.25 -1.5 NaN 1e-9
tensor k 3 1 3
inf -inf 2
end
";

const HEADER: &str = r#"{"format":"attn-trace-trace","version":1,"scenario":"my scenarios/mha_walkthrough.toml","variant":"mha","pass":"forward","input":3,"dims":{"B":1,"T":2}}"#;

/// Runs `cmd`, which must succeed; its output.
fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The trace's lines after the header, which must be `HEADER`; each must parse as JSON with the
/// required fields.
fn events(path: &Path, header: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().map(String::from);
    assert_eq!(lines.next().as_deref(), Some(header));
    let rest: Vec<String> = lines.collect();
    for l in &rest {
        let e: Value = serde_json::from_str(l).unwrap_or_else(|err| panic!("{err}: {l}"));
        assert!(matches!(e["op"].as_str(), Some("read" | "write")), "{l}");
        assert!(e["buffer"].is_string() && e["file"].is_string(), "{l}");
        assert!(e["offset"].is_i64() && e["line"].is_u64(), "{l}");
        assert!(
            e["value"].is_number() || matches!(e["value"].as_str(), Some("nan" | "inf" | "-inf")),
            "{l}"
        );
    }
    rest
}

/// One event line as a recorder writes it.
fn ev(op: &str, buffer: &str, offset: i64, value: &str, file: &str, line: u32, phase: Option<&str>) -> String {
    let phase = phase.map_or(String::new(), |p| format!(r#","phase":"{p}""#));
    format!(
        r#"{{"op":"{op}","buffer":"{buffer}","offset":{offset},"value":{value},"file":"{file}","line":{line}{phase}}}"#
    )
}

#[test]
fn python_records_each_access_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, trace, script) = (
        dir.path().join("inputs.txt"),
        dir.path().join("trace.jsonl"),
        dir.path().join("kernel.py"),
    );
    std::fs::write(&inputs, INPUTS).unwrap();
    // the line numbers below are this script's
    let program = "\
import sys
sys.path.insert(0, sys.argv[3])
from attn_record import load_inputs, Recorder
inp = load_inputs()
with Recorder(inp) as rec:
    q, k = rec.input('q'), rec.input('k')
    d_k = rec.zeros('d_k', 2)
    rec.phase('scores_back')
    d_k[1] += q[0]
    d_k[2] = 7.0
    far = q[-1] + q[4]
    d_k[0] = k[0] + k[1]
    rec.phase(None)
    d_k[0] = q[2]
    print(far, d_k.data, len(q), inp.dims['T'], inp.params, inp.input, q[0:2])
";
    std::fs::write(&script, program).unwrap();
    let out = run(Command::new("python3")
        .arg(&script)
        .arg(&inputs)
        .arg(&trace)
        .arg(root().join("recorders"))
        .env_remove("ATTN_TRACE_INPUTS")
        .env_remove("ATTN_TRACE_OUT"));
    // out-of-bounds reads gave 0.0 and the write at offset 2 touched nothing
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "0.0 [nan, 0.25] 4 2 {'causal': 1, 'scale': 0.70710677} 3 [0.25, -1.5]\n"
    );
    let f = script.to_str().unwrap();
    let sb = Some("scores_back");
    let want = [
        // `+=` is a read of the old value and a write of the new, on the same line
        ev("read", "d_k", 1, "0.0", f, 9, sb),
        ev("read", "q", 0, "0.25", f, 9, sb),
        ev("write", "d_k", 1, "0.25", f, 9, sb),
        // out of bounds: recorded as given
        ev("write", "d_k", 2, "7.0", f, 10, sb),
        ev("read", "q", -1, "0.0", f, 11, sb),
        ev("read", "q", 4, "0.0", f, 11, sb),
        // non-finite values are strings
        ev("read", "k", 0, r#""inf""#, f, 12, sb),
        ev("read", "k", 1, r#""-inf""#, f, 12, sb),
        ev("write", "d_k", 0, r#""nan""#, f, 12, sb),
        ev("read", "q", 2, r#""nan""#, f, 14, None),
        ev("write", "d_k", 0, r#""nan""#, f, 14, None),
        // a slice reads each element
        ev("read", "q", 0, "0.25", f, 15, None),
        ev("read", "q", 1, "-1.5", f, 15, None),
    ];
    assert_eq!(events(&trace, HEADER), want);
}

#[test]
fn c_and_cpp_record_each_access_at_its_line_without_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, trace, source) = (
        dir.path().join("inputs.txt"),
        dir.path().join("trace.jsonl"),
        dir.path().join("kernel.c"),
    );
    std::fs::write(&inputs, INPUTS).unwrap();
    // the line numbers below are this program's; one access per statement, since C leaves the
    // order of the operands of + unspecified
    let program = r#"#include "attn_record.h"
int main(int argc, char **argv) {
    at_inputs *in = at_begin(argc, argv);
    at_buf q = at_input(in, "q"), k = at_input(in, "k"), d_k = at_zeros("d_k", 2);
    float a, b;
    at_phase("scores_back");
    AT_ADD(d_k, 1, AT_READ(q, 0));
    AT_WRITE(d_k, 2, 7.0f);
    a = AT_READ(q, -1);
    b = AT_READ(q, 4);
    a += AT_READ(k, 0);
    a += AT_READ(k, 1);
    AT_WRITE(d_k, 0, a);
    at_phase(NULL);
    AT_WRITE(d_k, 0, AT_READ(q, 2));
    printf("%g %g %lld %lld %g %lld %s\n", b, d_k.data[1], q.len, at_dim(in, "T"), at_param(in, "scale", 0),
           in->input, in->variant);
    at_buf_free(&d_k);
    at_inputs_free(in);
    return 0;
}
"#;
    std::fs::write(&source, program).unwrap();
    let include = root().join("recorders");
    for (compiler, args) in [
        ("gcc", &["-std=c99"][..]),
        ("g++", &["-x", "c++", "-std=c++11"][..]),
        ("g++", &["-x", "c++", "-std=c++17"][..]),
    ] {
        let exe = dir.path().join("kernel");
        let out = run(Command::new(compiler)
            .args(args)
            .args(["-Wall", "-Wextra", "-pedantic", "-Werror", "-I"])
            .arg(&include)
            .arg(&source)
            .arg("-o")
            .arg(&exe));
        assert!(
            out.stderr.is_empty(),
            "{compiler} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // the paths from the environment this time (as `attn-trace grade -- COMMAND` gives them),
        // and the trace closed at exit
        let out = run(Command::new(&exe)
            .env("ATTN_TRACE_INPUTS", &inputs)
            .env("ATTN_TRACE_OUT", &trace));
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "0 0.25 4 2 0.707107 3 mha\n");
        let f = source.to_str().unwrap();
        let sb = Some("scores_back");
        let want = [
            ev("read", "q", 0, "0.25", f, 7, sb),
            ev("read", "d_k", 1, "0", f, 7, sb),
            ev("write", "d_k", 1, "0.25", f, 7, sb),
            ev("write", "d_k", 2, "7", f, 8, sb),
            ev("read", "q", -1, "0", f, 9, sb),
            ev("read", "q", 4, "0", f, 10, sb),
            ev("read", "k", 0, r#""inf""#, f, 11, sb),
            ev("read", "k", 1, r#""-inf""#, f, 12, sb),
            ev("write", "d_k", 0, r#""nan""#, f, 13, sb),
            ev("read", "q", 2, r#""nan""#, f, 15, None),
            ev("write", "d_k", 0, r#""nan""#, f, 15, None),
        ];
        assert_eq!(events(&trace, HEADER), want, "{compiler} {args:?}");
    }
}

#[test]
fn a_bad_inputs_file_is_one_line_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("kernel");
    let source = dir.path().join("kernel.c");
    std::fs::write(
        &source,
        "#include \"attn_record.h\"\nint main(int argc, char **argv) { at_begin(argc, argv); return 0; }\n",
    )
    .unwrap();
    run(Command::new("gcc")
        .args(["-std=c99", "-I"])
        .arg(root().join("recorders"))
        .arg(&source)
        .arg("-o")
        .arg(&exe));
    let cases = [
        ("attn-trace-inputs 2\nend\n", 1, "version"),
        (
            "# no header\nscenario s.toml\nend\n",
            2,
            "not an attn-trace inputs file",
        ),
        ("attn-trace-inputs 1\ntensor q 3 1 3\n1 2\nend\n", 3, "3"),
        ("attn-trace-inputs 1\ntensor q 2 1 2\n1 x\nend\n", 3, "q"),
        ("attn-trace-inputs 1\ndim T 3\n", 2, "end"),
    ];
    for (text, line, says) in cases {
        let inputs = dir.path().join("bad.txt");
        std::fs::write(&inputs, text).unwrap();
        let at = format!("{}:{line}: ", inputs.display());

        let py = Command::new("python3")
            .arg("-c")
            .arg(
                "import sys; sys.path.insert(0, sys.argv[1]); import attn_record; attn_record.load_inputs(sys.argv[2])",
            )
            .arg(root().join("recorders"))
            .arg(&inputs)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&py.stderr);
        let last = err.lines().last().unwrap_or_default();
        assert!(!py.status.success(), "{text:?}");
        assert!(
            last.starts_with(&format!("attn_record.InputsError: {at}")) && last.contains(says),
            "python, {text:?}: {err}"
        );

        let trace = dir.path().join("trace.jsonl");
        let c = Command::new(&exe).arg(&inputs).arg(&trace).output().unwrap();
        let err = String::from_utf8_lossy(&c.stderr);
        assert_eq!(c.status.code(), Some(2), "{text:?}");
        assert!(
            err.starts_with(&format!("attn_record: {at}")) && err.lines().count() == 1,
            "C, {text:?}: {err}"
        );
        assert!(!trace.exists(), "no trace is opened from bad inputs");
    }
}

#[test]
fn python_takes_numpy_arrays_when_numpy_is_there() {
    let probe = Command::new("python3").args(["-c", "import numpy"]).output().unwrap();
    if !probe.status.success() {
        eprintln!(
            "skipped: python3 cannot import numpy ({}); the recorder never needs it",
            String::from_utf8_lossy(&probe.stderr)
                .lines()
                .last()
                .unwrap_or_default()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (inputs, trace, script) = (
        dir.path().join("inputs.txt"),
        dir.path().join("trace.jsonl"),
        dir.path().join("kernel.py"),
    );
    std::fs::write(&inputs, INPUTS).unwrap();
    let program = "\
import sys
sys.path.insert(0, sys.argv[3])
import numpy as np
from attn_record import load_inputs, Recorder
inp = load_inputs(sys.argv[1])
with Recorder(inp, sys.argv[2]) as rec:
    q = rec.buffer('q', np.array(inp.tensors['q'], dtype=np.float32))
    att = rec.buffer('att', np.zeros(2, dtype=np.float32))
    att[np.int64(1)] += q[0]
    att[0] = 0.1
    print(type(q[1]).__name__, att.data.tolist())
";
    std::fs::write(&script, program).unwrap();
    let out = run(Command::new("python3")
        .arg(&script)
        .arg(&inputs)
        .arg(&trace)
        .arg(root().join("recorders")));
    // a float32 array keeps its element type, and a write records what memory then holds
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "float32 [0.10000000149011612, 0.25]\n"
    );
    let f = script.to_str().unwrap();
    let want = [
        ev("read", "att", 1, "0.0", f, 9, None),
        ev("read", "q", 0, "0.25", f, 9, None),
        ev("write", "att", 1, "0.25", f, 9, None),
        ev("write", "att", 0, "0.10000000149011612", f, 10, None),
        ev("read", "q", 1, "-1.5", f, 11, None),
    ];
    assert_eq!(events(&trace, HEADER), want);
}
