//! The learners' recorders, `recorders/attn_record.py` and `recorders/attn_record.h`, and the
//! worked kernels of `examples/learner/`, run with python3, gcc and g++: their traces checked
//! line by line against the trace format (a header, then one JSON object per access), and the
//! kernels graded by `attn-trace grade`: the correct ones right, the gallery's mistakes wrong and
//! named, a kernel right by luck caught by the seeds, bad accesses at their file and line.

use crate::support::cli::grade_json as grade;
use crate::support::root;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
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

/// `python3`, told not to leave a `__pycache__` beside the recorder it imports.
fn python3() -> Command {
    python_at(Path::new("python3"))
}

/// The python at `path`, told the same.
fn python_at(path: &Path) -> Command {
    let mut c = Command::new(path);
    c.env("PYTHONDONTWRITEBYTECODE", "1");
    c
}

/// The python of the virtual environment `.ci/venv` makes (numpy and triton, pinned in
/// `.ci/requirements.txt`): `$ATTN_TRACE_VENV/bin/python`, by default under
/// `~/.cache/attn-trace/venv`. When it is missing, or made from other requirements, the test
/// that asks is skipped, with a line saying so; but under `ATTN_TRACE_CI=1` (set by `.ci/run`,
/// which makes the environment first) it fails, so CI never passes by skipping.
fn venv_python() -> Option<PathBuf> {
    let default = || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/attn-trace/venv");
    let dir = std::env::var_os("ATTN_TRACE_VENV").map_or_else(default, PathBuf::from);
    let python = dir.join("bin/python");
    let wanted = std::fs::read(root().join(".ci/requirements.txt")).unwrap();
    let made_from = std::fs::read(dir.join("attn-trace-requirements.txt")).ok();
    let why = if !python.exists() {
        format!("{} is missing", python.display())
    } else if made_from.as_deref() != Some(&wanted[..]) {
        format!("{} was not made from .ci/requirements.txt", dir.display())
    } else {
        return Some(python);
    };
    assert!(
        std::env::var("ATTN_TRACE_CI").as_deref() != Ok("1"),
        "{why}: run `bash .ci/venv` first (ATTN_TRACE_CI=1 allows no skipping)"
    );
    eprintln!("skipped: {why}; `bash .ci/venv` makes it");
    None
}

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
        if e["op"] == "at" {
            assert!(e["index"].is_object(), "{l}");
            continue;
        }
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
with Recorder(inp, vars=('j',)) as rec:
    q, k = rec.input('q'), rec.input('k')
    d_k = rec.zeros('d_k', 2)
    rec.phase('scores_back')
    d_k[1] += q[0]
    d_k[2] = 7.0
    far = q[-1] + q[4]
    d_k[0] = k[0] + k[1]
    rec.phase(None)
    for j in (1,): d_k[0] = q[2]
    print(far, d_k.data, len(q), inp.dims['T'], inp.params, inp.input, q[0:2])
";
    std::fs::write(&script, program).unwrap();
    let out = run(python3()
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
    let with_j = |line: String| line.replace("}", r#","vars":{"j":1}}"#);
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
        // with the loop variables asked for, from the caller's locals
        with_j(ev("read", "q", 2, r#""nan""#, f, 14, None)),
        with_j(ev("write", "d_k", 0, r#""nan""#, f, 14, None)),
        // a slice reads each element
        with_j(ev("read", "q", 0, "0.25", f, 15, None)),
        with_j(ev("read", "q", 1, "-1.5", f, 15, None)),
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

        let py = python3()
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
fn python_takes_flat_numpy_arrays() {
    let Some(venv) = venv_python() else { return };
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
    let out = run(python_at(&venv)
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

/// `examples/learner/NAME`.
fn example(name: &str) -> PathBuf {
    root().join("examples/learner").join(name)
}

/// Compiles `examples/learner/NAME` into `dir` with every warning an error; the executable.
fn compile(dir: &Path, compiler: &str, std: &str, name: &str) -> PathBuf {
    let exe = dir.join(name.split('.').next().unwrap());
    let out = run(Command::new(compiler)
        .arg(format!("-std={std}"))
        .args(["-O2", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I"])
        .arg(root().join("recorders"))
        .arg(example(name))
        .arg("-o")
        .arg(&exe)
        .arg("-lm"));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    exe
}

fn python(script: &str, args: &[&str]) -> Vec<OsString> {
    let mut v = vec![OsString::from("python3"), example(script).into()];
    v.extend(args.iter().map(OsString::from));
    v
}

/// The grade of the scenario's own input (the first run).
fn first(answer: &Value) -> &Value {
    &answer["runs"][0]["grade"]
}

/// The line of `file` (1-based) that contains `text`, which must be there once.
fn line_of(file: &Path, text: &str) -> u64 {
    let source = std::fs::read_to_string(file).unwrap();
    let found: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(text))
        .map(|(n, _)| n + 1)
        .collect();
    assert_eq!(found.len(), 1, "{text:?} in {}: {found:?}", file.display());
    found[0] as u64
}

/// Checks a graded run is right: every cell within tolerance, no access error.
fn assert_right(code: i32, answer: &Value, what: &str) {
    assert_eq!(
        (code, answer["verdict"].as_str()),
        (0, Some("correct")),
        "{what}: {answer:#}"
    );
    for run in answer["runs"].as_array().unwrap() {
        let g = &run["grade"];
        for r in g["results"].as_array().unwrap() {
            assert_eq!(
                (r["wrong"].as_u64(), r["missing"].as_u64()),
                (Some(0), Some(0)),
                "{what}: {r}"
            );
        }
        assert!(
            g["findings"].as_array().unwrap().iter().all(|f| f["error"] == false),
            "{what}: {g:#}"
        );
    }
}

#[test]
fn an_example_trace_has_the_inputs_header_and_the_reference_s_accesses() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, trace) = (dir.path().join("inputs.txt"), dir.path().join("trace.jsonl"));
    let scenario = "scenarios/mha_walkthrough.toml";
    crate::support::cli::stdout_of(&["inputs", scenario, "-o", inputs.to_str().unwrap()]);
    run(python3().arg(example("attention.py")).arg(&inputs).arg(&trace));
    let header = r#"{"format":"attn-trace-trace","version":1,"scenario":"scenarios/mha_walkthrough.toml","variant":"mha","pass":"forward","input":0,"dims":{"B":1,"T":3,"S":3,"C":4,"H":2,"D":2,"H_kv":2,"L":1}}"#;
    let mine = events(&trace, header);
    // the Python kernel walks the reference's loops, so it makes its accesses one for one
    let theirs = crate::support::cli::stdout_of(&["trace", scenario, "--variant", "mha", "--pass", "forward"]);
    let key = |l: &str| {
        let e: Value = serde_json::from_str(l).unwrap();
        (
            e["op"].to_string(),
            e["buffer"].to_string(),
            e["offset"].as_i64().unwrap(),
        )
    };
    let mut a: Vec<_> = mine.iter().map(|l| key(l)).collect();
    // the same header as the `trace` command's export of the reference
    let mut theirs = theirs.lines();
    assert_eq!(theirs.next(), Some(header));
    let mut b: Vec<_> = theirs.map(key).collect();
    assert_eq!(a.len(), 816);
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // every access names this file and a line of it that indexes the buffer
    let source: Vec<String> = std::fs::read_to_string(example("attention.py"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    for l in &mine {
        let e: Value = serde_json::from_str(l).unwrap();
        assert_eq!(e["file"].as_str(), example("attention.py").to_str(), "{l}");
        let line = &source[e["line"].as_u64().unwrap() as usize - 1];
        assert!(line.contains('['), "{l}: {line}");
    }
}

#[test]
fn the_correct_python_and_cpp_kernels_are_graded_right() {
    let dir = tempfile::tempdir().unwrap();
    let cpp = compile(dir.path(), "g++", "c++17", "attention_jfirst.cpp");
    // the gallery's scenarios without their mistakes, forward, and the grouped-query backward
    for m in [
        "no_input_projection",
        "scale_by_seq_len",
        "mask_by_multiply",
        "no_output_projection",
        "dropout_not_applied",
        "softmax_over_two_dims",
    ] {
        let scenario = format!("scenarios/mistakes/{m}.toml");
        let (code, answer) = grade(&scenario, &["--seeds", "1"], &python("attention.py", &[]));
        assert_right(code, &answer, &scenario);
        assert_eq!(
            answer["runs"].as_array().unwrap().len(),
            2,
            "{scenario}: its input and one seed"
        );
    }
    let (code, answer) = grade(
        "scenarios/mistakes/overwrite_kv_grad.toml",
        &["--pass", "backward"],
        &python("attention.py", &[]),
    );
    assert_right(code, &answer, "gqa backward");
    assert_eq!(first(&answer)["results"].as_array().unwrap().len(), 12, "{answer:#}");

    for scenario in [
        "scenarios/mha_walkthrough.toml",
        "scenarios/mistakes/dropout_not_applied.toml",
    ] {
        let (code, answer) = grade(scenario, &[], &python("attention.py", &[]));
        assert_right(code, &answer, scenario);
        assert_eq!(answer["runs"].as_array().unwrap().len(), 4, "its input and three seeds");
        // C++, with its loops in other orders: right too, its traffic only information
        let (code, answer) = grade(scenario, &[], &[cpp.clone().into()]);
        assert_right(code, &answer, &format!("C++ on {scenario}"));
        let probs = first(&answer)["traffic"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["buffer"] == "probs")
            .unwrap()
            .clone();
        // the online softmax writes each probability once, the reference twice (the hidden
        // pairs too, which are not graded)
        let result = first(&answer)["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["buffer"] == "probs")
            .unwrap()
            .clone();
        let cells = result["cells"].as_u64().unwrap() + result["unneeded"].as_u64().unwrap();
        assert_eq!(
            (probs["writes"].as_u64(), probs["reference_writes"].as_u64()),
            (Some(cells), Some(2 * cells)),
            "{scenario}: {probs}"
        );
    }
}

#[test]
fn each_gallery_mistake_is_graded_wrong_at_its_line_and_named() {
    let source = example("mistakes.py");
    for (m, class, pass) in [
        ("no_input_projection", "NoInputProjection", "forward"),
        ("scale_by_seq_len", "ScaleBySeqLen", "forward"),
        ("mask_by_multiply", "MaskByMultiply", "forward"),
        ("no_output_projection", "NoOutputProjection", "forward"),
        ("dropout_not_applied", "DropoutNotApplied", "forward"),
        ("softmax_over_two_dims", "SoftmaxOverTwoDims", "forward"),
        ("overwrite_kv_grad", "OverwriteKvGrad", "backward"),
    ] {
        let scenario = format!("scenarios/mistakes/{m}.toml");
        let (code, answer) = grade(
            &scenario,
            &["--pass", pass, "--seeds", "0"],
            &python("mistakes.py", &[m]),
        );
        assert_eq!(
            (code, answer["verdict"].as_str()),
            (3, Some("wrong")),
            "{m}: {answer:#}"
        );
        let g = first(&answer);
        assert_eq!(g["mistake"]["name"].as_str(), Some(m), "{m}: {g:#}");
        // the buffers with wrong or missing cells
        let wrong: Vec<&str> = g["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["wrong"] != 0 || r["missing"] != 0)
            .map(|r| r["buffer"].as_str().unwrap())
            .collect();
        // the first divergence is at a line of the learner's variation of the kernel; mistakes 4
        // and 5 leave a call out: out is never written, and the undropped weights are summed by
        // attention.py's own pass
        let at = &g["divergence"]["mine_at"];
        match m {
            "no_output_projection" => {
                assert!(at.is_null(), "{m}: {at}");
                assert_eq!(wrong, ["out"], "{m}");
            }
            "dropout_not_applied" => {
                assert_eq!(at["file"].as_str(), example("attention.py").to_str(), "{m}: {at}");
                assert_eq!(wrong, ["att", "out"], "{m}");
            }
            "mask_by_multiply" => {
                // the hidden scores are not graded (no result depends on them): the first wrong
                // cell is a probability, computed by attention.py's own softmax from a hidden
                // score the mistaken line left at 0, which the hint names with its line
                assert_eq!(at["file"].as_str(), example("attention.py").to_str(), "{m}: {at}");
                assert_eq!(wrong, ["probs", "att", "out"], "{m}");
                let hint = g["hints"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|h| h.as_str())
                    .find(|h| h.contains("hidden"))
                    .unwrap_or_else(|| panic!("{g:#}"));
                let start = line_of(&source, &format!("class {class}("));
                let line: u64 = hint
                    .split(&format!("{}:", source.display()))
                    .nth(1)
                    .and_then(|t| t.split(',').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{hint}"));
                assert!(
                    line > start && line < start + 45,
                    "{m}: line {line}, class at {start}: {hint}"
                );
                assert!(
                    hint.starts_with(
                        "scores[b0 h0 i0 j1] is read though it is hidden: j > i: yours is 0.00, written at "
                    ),
                    "{hint}"
                );
            }
            _ => {
                assert_eq!(at["file"].as_str(), source.to_str(), "{m}: {at}");
                let line = at["line"].as_u64().unwrap();
                let start = line_of(&source, &format!("class {class}("));
                assert!(line > start && line < start + 45, "{m}: line {line}, class at {start}");
                assert!(!wrong.is_empty(), "{m}: {g:#}");
            }
        }
    }
}

#[test]
fn a_kernel_right_by_luck_is_caught_by_the_seeds() {
    let scenario = "scenarios/learner/lucky.toml";
    // on the scenario's own input alone every value is right, but head 1's scores read head 0's
    // keys, which the reference never reads for them: right only by luck, from this one trace
    let (code, answer) = grade(scenario, &["--seeds", "0"], &python("lucky.py", &[]));
    assert_eq!((code, answer["verdict"].as_str()), (3, Some("wrong")), "{answer:#}");
    let g = first(&answer);
    let scores = g["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["buffer"] == "scores")
        .unwrap();
    assert_eq!(
        (scores["wrong"].as_u64(), scores["misread"].as_u64()),
        (Some(0), Some(6)),
        "{g:#}"
    );
    let d = &g["divergence"];
    assert_eq!(d["cell"]["index"].as_str(), Some("b0 h1 i0 j0"), "{g:#}");
    assert_eq!(
        d["cell"]["stray"]["read"]["cell"].as_str(),
        Some("k[b0 j0 h0 d0]"),
        "{g:#}"
    );
    assert_eq!(d["cell"]["stray"]["expected"].as_str(), Some("h = 1"), "{g:#}");
    assert!(
        g["hints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h.as_str() == Some("your k reads are the same for every h of scores (h = 0 each time)")),
        "{g:#}"
    );
    // its values are caught by the seeds
    let (code, answer) = grade(scenario, &[], &python("lucky.py", &[]));
    assert_eq!((code, answer["verdict"].as_str()), (3, Some("wrong")), "{answer:#}");
    assert_eq!(answer["exposed_by"].as_u64(), Some(0), "its own input: {answer:#}");
    let exposed = &answer["runs"][0]["grade"];
    let at = &exposed["divergence"]["mine_at"];
    assert_eq!(at["file"].as_str(), example("lucky.py").to_str());
    // head 1's first score, at the line that writes the scores
    assert_eq!(exposed["divergence"]["cell"]["index"].as_str(), Some("b0 h1 i0 j0"));
    assert_eq!(
        at["line"].as_u64(),
        Some(line_of(&example("lucky.py"), "scores[off] = s"))
    );
    // the correct kernel passes the same seeds
    let (code, answer) = grade(scenario, &[], &python("attention.py", &[]));
    assert_right(code, &answer, "attention.py on lucky.toml");
}

#[test]
fn a_read_past_the_end_and_an_unzeroed_accumulator_are_reported_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    // both compute the right values: only the accesses are wrong
    let uninit = compile(dir.path(), "gcc", "c99", "uninit.c");
    let cases = [
        (
            "scenarios/mha_walkthrough.toml",
            python("oob.py", &[]),
            example("oob.py"),
            "m = max(m, scores[row + j])",
            ("out_of_bounds", "read", "scores", 18, 1),
        ),
        (
            "scenarios/learner/lucky.toml",
            vec![uninit.into()],
            example("uninit.c"),
            "AT_ADD(att",
            // every cell of att is read once before anything wrote it: the first is reported
            ("uninitialised", "read", "att", 0, 12),
        ),
    ];
    for (scenario, command, file, text, (kind, op, buffer, offset, count)) in cases {
        let (code, answer) = grade(scenario, &["--seeds", "0"], &command);
        assert_eq!((code, answer["verdict"].as_str()), (3, Some("wrong")), "{answer:#}");
        let g = first(&answer);
        assert!(
            g["results"].as_array().unwrap().iter().all(|r| r["wrong"] == 0),
            "{g:#}"
        );
        let errors: Vec<&Value> = g["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["error"] == true)
            .collect();
        assert_eq!(errors.len(), 1, "{g:#}");
        let f = errors[0];
        assert_eq!(
            (
                f["kind"].as_str(),
                f["op"].as_str(),
                f["buffer"].as_str(),
                f["offset"].as_u64(),
                f["count"].as_u64()
            ),
            (Some(kind), Some(op), Some(buffer), Some(offset), Some(count)),
            "{f}"
        );
        let at = &f["at"];
        assert!(
            at["file"]
                .as_str()
                .unwrap()
                .ends_with(file.file_name().unwrap().to_str().unwrap()),
            "{at}"
        );
        assert_eq!(at["line"].as_u64(), Some(line_of(&file, text)), "{at}");
    }
}

#[test]
fn numpy_slices_record_each_element_at_its_line() {
    let Some(venv) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (inputs, trace, script) = (
        dir.path().join("inputs.txt"),
        dir.path().join("trace.jsonl"),
        dir.path().join("kernel.py"),
    );
    std::fs::write(&inputs, INPUTS).unwrap();
    // the line numbers below are this script's; q is [1, 2, 2], k is [3]
    let program = "\
import sys
sys.path.insert(0, sys.argv[3])
import numpy as np
from attn_record import load_inputs, Recorder
inp = load_inputs(sys.argv[1])
with Recorder(inp, sys.argv[2]) as rec:
    q, k = rec.array('q'), rec.array('k')
    row = q[0, 1]
    picked = q[0, [1, 0], 0]
    a = rec.zeros('a', (2, 2))
    a[:, 1] = [1.5, 2.5]
    a[1] += 1
    halves = np.split(a, 2, axis=0)
    m = a @ np.ones((2, 1), np.float32)
    row[0] = 7
    print(a.data.tolist(), q.data[0, 1].tolist(), len(a), a.shape, m.ravel().tolist(), k[5], k[-1:].tolist())
";
    std::fs::write(&script, program).unwrap();
    let out = run(python_at(&venv)
        .arg(&script)
        .arg(&inputs)
        .arg(&trace)
        .arg(root().join("recorders")));
    // a read is a copy (row[0] = 7 changed nothing), len is the number of elements, a flat
    // offset on a one-dimensional array is still recorded as given
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "[[0.0, 1.5], [1.0, 3.5]] [nan, 9.999999717180685e-10] 4 (2, 2) [1.5, 4.5] 0.0 [2.0]\n"
    );
    let f = script.to_str().unwrap();
    let e = |op, buffer, offset, value, line| ev(op, buffer, offset, value, f, line, None);
    let mut want = vec![
        // a row: its elements in order, at their row-major offsets
        e("read", "q", 2, r#""nan""#, 8),
        e("read", "q", 3, "9.999999717180685e-10", 8),
        // a fancy index, in the order it names them
        e("read", "q", 2, r#""nan""#, 9),
        e("read", "q", 0, "0.25", 9),
        // a column assigned: only the elements it sets
        e("write", "a", 1, "1.5", 11),
        e("write", "a", 3, "2.5", 11),
        // += on a row: each element read, then each written
        e("read", "a", 2, "0.0", 12),
        e("read", "a", 3, "2.5", 12),
        e("write", "a", 2, "1.0", 12),
        e("write", "a", 3, "3.5", 12),
    ];
    // np.split reads the whole buffer from inside numpy, an operator too: at the learner's line
    for line in [13, 14] {
        for (off, v) in [(0, "0.0"), (1, "1.5"), (2, "1.0"), (3, "3.5")] {
            want.push(e("read", "a", off, v, line));
        }
    }
    want.push(e("read", "k", 5, "0.0", 16));
    want.push(e("read", "k", 2, "2.0", 16));
    assert_eq!(events(&trace, HEADER), want);
}

#[test]
fn bindings_go_into_the_header_before_the_first_access() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, trace) = (dir.path().join("inputs.txt"), dir.path().join("trace.jsonl"));
    std::fs::write(&inputs, INPUTS).unwrap();
    let program = "\
import sys
sys.path.insert(0, sys.argv[3])
from attn_record import load_inputs, Recorder
rec = Recorder(load_inputs(sys.argv[1]), sys.argv[2])
rec.bind('preatt', 'scores')
rec.bind('inp', q=dict(offset=0, strides=dict(b=24, i=12, h=2, d=1)), k=dict(offset='C', strides=dict(b=24, j=12, h=2, d=1), slice=dict(h=(0, 1))))
rec.bind('row', [dict(tensor='scores', strides=dict(b=0, h=0, i=0, j=1))])
for bad in [dict(views='q', k={}), dict(views=[dict(tensor='q', offset=-1)]), dict(views=[dict(tensor='q', offset=0, stride={})])]:
    try:
        rec.bind('x', **bad)
    except ValueError as e:
        print(e)
inp = rec.buffer('inp', [0.0] * 48)
rec.at(i=2)
inp[4] = 1.0
try:
    rec.bind('late', 'att')
except ValueError as e:
    print(e)
rec.close()
";
    let out = run(python3()
        .arg("-c")
        .arg(program)
        .arg(&inputs)
        .arg(&trace)
        .arg(root().join("recorders")));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "attn_record: bind('x', 'q'): a rename takes no views besides\n\
         attn_record: bind('x'): the offset of q must be a whole number >= 0 or an expression such as \"3*C\", not -1\n\
         attn_record: bind('x'): unknown key 'stride' in a view\n\
         attn_record: bind('late') after the first access: declare bindings first\n"
    );
    let header = HEADER.replace(
        "}}",
        r#"},"bind":{"preatt":"scores","inp":[{"tensor":"q","offset":0,"strides":{"b":24,"i":12,"h":2,"d":1}},{"tensor":"k","offset":"C","strides":{"b":24,"j":12,"h":2,"d":1},"slice":{"h":[0,1]}}],"row":[{"tensor":"scores","offset":0,"strides":{"b":0,"h":0,"i":0,"j":1}}]}}"#,
    );
    // which row a scratch buffer holds is a line of its own
    assert_eq!(
        events(&trace, &header),
        [
            r#"{"op":"at","index":{"i":2}}"#.to_string(),
            ev("write", "inp", 4, "1.0", "<string>", 15, None)
        ]
    );
}

#[test]
fn the_vectorised_numpy_mha_is_graded_and_its_scale_mistake_found_at_its_line() {
    let Some(venv) = venv_python() else { return };
    let script = example("mha_numpy.py");
    let command = |extra: &[&str]| {
        let mut v: Vec<OsString> = vec![venv.clone().into(), script.clone().into()];
        v.extend(extra.iter().map(OsString::from));
        v
    };
    let (code, answer) = grade("scenarios/mha_walkthrough.toml", &[], &command(&[]));
    assert_right(code, &answer, "mha_numpy.py");
    assert_eq!(answer["runs"].as_array().unwrap().len(), 4, "its input and three seeds");
    // only the buffers it wraps are recorded: x read once per element, att and out written once
    let g = first(&answer);
    let traffic = |buffer: &str| {
        let t = g["traffic"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["buffer"] == buffer)
            .unwrap();
        (t["reads"].as_u64().unwrap(), t["writes"].as_u64().unwrap())
    };
    assert_eq!(
        [traffic("x"), traffic("w_qkv"), traffic("att"), traffic("out")],
        [(12, 0), (48, 0), (12, 12), (0, 12)]
    );
    let (code, answer) = grade(
        "scenarios/mha_walkthrough.toml",
        &["--seeds", "0"],
        &command(&["--scale-by-c"]),
    );
    assert_eq!((code, answer["verdict"].as_str()), (3, Some("wrong")), "{answer:#}");
    let at = &first(&answer)["divergence"]["mine_at"];
    // vectorised, the first wrong cell is written where the heads are stored
    assert_eq!(at["file"].as_str(), script.to_str(), "{at}");
    assert_eq!(at["line"].as_u64(), Some(line_of(&script, "att[bb] = mha(")));
}

#[test]
fn the_recorders_install_with_pip_and_say_where_the_format_is_documented() {
    // the C header and both Python modules point at the format in their first lines
    for (file, lines) in [
        ("attn_record.h", 6),
        ("attn_record.py", 4),
        ("attn_record_triton.py", 4),
    ] {
        let text = std::fs::read_to_string(root().join("recorders").join(file)).unwrap();
        let head: Vec<&str> = text.lines().take(lines).collect();
        assert!(
            head.iter().any(|l| l.contains("docs/your_kernel.md")),
            "{file}: {head:#?}"
        );
    }
    // the wheel built without the network by the tests' environment (its setuptools), then
    // installed into a fresh virtual environment and imported from elsewhere, with no path set
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("recorders");
    // a copy, so the build leaves nothing in the repository
    std::fs::create_dir(&source).unwrap();
    for file in ["pyproject.toml", "README.md", "attn_record.py", "attn_record_triton.py"] {
        std::fs::copy(root().join("recorders").join(file), source.join(file)).unwrap();
    }
    let wheels = dir.path().join("wheels");
    run(python_at(&python)
        .args([
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
        ])
        .arg(&wheels)
        .arg(&source));
    let wheel: Vec<PathBuf> = std::fs::read_dir(&wheels).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(wheel.len(), 1, "{wheel:?}");
    let venv = dir.path().join("venv");
    run(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    run(python_at(&venv.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--no-index"])
        .arg(&wheel[0]));
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let out = run(python_at(&venv.join("bin/python"))
        .current_dir(&elsewhere)
        .env_remove("PYTHONPATH")
        .args([
            "-c",
            "import attn_record, importlib.util as u; print(attn_record.__file__.startswith(__import__('sys').prefix), \
             attn_record.Recorder.__name__, u.find_spec('attn_record_triton') is not None)",
        ]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "True Recorder True\n");
}

#[test]
fn triton_records_each_lane_at_its_line_and_no_masked_one() {
    let Some(venv) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (inputs, trace, script) = (
        dir.path().join("inputs.txt"),
        dir.path().join("trace.jsonl"),
        dir.path().join("kernel.py"),
    );
    std::fs::write(&inputs, INPUTS).unwrap();
    // the line numbers below are this script's; q is [1, 2, 2], k is [3]
    let program = "\
import sys
sys.path.insert(0, sys.argv[3])
from attn_record import load_inputs, Recorder
from attn_record_triton import TritonRecorder, Tensor
import numpy as np
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

@triton.jit
def load_from(ptr, offs):
    return tl.load(ptr + offs)

@triton.jit
def kernel(q, k, out, scratch, a_desc, b_desc, n):
    r = tl.arange(0, 2)
    tile = tl.load(q + r[:, None] * 2 + r[None, :], mask=r[None, :] < 1)
    tl.store(out + r, tl.sum(tile, 1))
    tl.store(scratch + r, tl.max(tile, 1) * 3)
    past = load_from(q, tl.arange(0, 4) + 2)
    before = tl.load(k + r - 2, mask=r < n)
    tl.atomic_add(out + r, before + 1, mask=r < n)
    t = a_desc.load([0, 0])
    b_desc.store([0, 0], t * 2)

inp = load_inputs(sys.argv[1])
with Recorder(inp, sys.argv[2]) as rec, TritonRecorder(rec) as tt:
    q, k = tt.input('q'), tt.input('k')
    out = tt.zeros('out', 2)
    a = tt.zeros('a', (3, 4))
    a.numpy()[:] = np.arange(12).reshape(3, 4)
    b = tt.zeros('b', (3, 4))
    tt.bind('a', 'scores', a[1:, 1:3], 'i j')
    scratch = Tensor(np.zeros(2, np.float32))
    kernel[(1,)](q, k, out, scratch, TensorDescriptor.from_tensor(a, [4, 4]),
                 TensorDescriptor.from_tensor(b, [4, 4]), 2)
    print(out.tolist(), scratch.tolist(), b.numpy()[2].tolist())
";
    std::fs::write(&script, program).unwrap();
    let out = run(python_at(&venv)
        .arg(&script)
        .arg(&inputs)
        .arg(&trace)
        .arg(root().join("recorders")));
    // the kernel ran as written: the scratch buffer holds its values, unrecorded; the reads
    // before k gave 0, so the atomic add put 1 into each of out's cells
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "[1.25, nan] [0.75, 0.0] [16.0, 18.0, 20.0, 22.0]\n"
    );
    let f = script.to_str().unwrap();
    let e = |op, buffer, offset, value: &str, line| ev(op, buffer, offset, value, f, line, None);
    let mut want = vec![
        // a [2, 2] block whose mask keeps column 0: two lanes, in row-major order
        e("read", "q", 0, "0.25", 17),
        e("read", "q", 2, r#""nan""#, 17),
        e("write", "out", 0, "0.25", 18),
        e("write", "out", 1, r#""nan""#, 18),
        // the helper's tl.load: two lanes inside q, two past its end (read as 0) at the offsets
        // the pointer arithmetic gave
        e("read", "q", 2, r#""nan""#, 12),
        e("read", "q", 3, "9.999999717180685e-10", 12),
        e("read", "q", 4, "0.0", 12),
        e("read", "q", 5, "0.0", 12),
        // before k: no lane inside any buffer, counted against the nearest
        e("read", "k", -2, "0.0", 21),
        e("read", "k", -1, "0.0", 21),
        // an atomic add: each lane's old value read, then its new one written
        e("read", "out", 0, "0.25", 22),
        e("write", "out", 0, "1.25", 22),
        e("read", "out", 1, r#""nan""#, 22),
        e("write", "out", 1, r#""nan""#, 22),
    ];
    // the descriptors' [4, 4] blocks over [3, 4] tensors: the fourth row is padding, never
    // read, and dropped, never written
    for off in 0..12 {
        want.push(e("read", "a", off, &format!("{off}.0"), 23));
    }
    for off in 0..12 {
        want.push(e("write", "b", off, &format!("{}.0", 2 * off), 24));
    }
    // the binding comes from the view's place in a and its strides
    let header = HEADER.replace(
        "}}",
        r#"},"bind":{"a":[{"tensor":"scores","offset":5,"strides":{"i":4,"j":1}}]}}"#,
    );
    assert_eq!(events(&trace, &header), want);
}

/// `VENV_PYTHON examples/learner/NAME ARGS…`.
fn venv_example(venv: &Path, script: &str, args: &[&str]) -> Vec<OsString> {
    let mut v = vec![venv.as_os_str().to_owned(), example(script).into()];
    v.extend(args.iter().map(OsString::from));
    v
}

#[test]
fn the_triton_flash_attention_is_graded_right_forward_and_backward() {
    let Some(venv) = venv_python() else { return };
    for (pass, written) in [
        ("forward", &["qkv", "att", "out", "lse"][..]),
        (
            "backward",
            &[
                "d_att", "d_qkv", "d_x", "d_w_qkv", "d_b_qkv", "d_w_proj", "d_b_proj", "delta",
            ][..],
        ),
    ] {
        let (code, answer) = grade(
            "scenarios/flash.toml",
            &["--variant", "flash", "--pass", pass],
            &venv_example(&venv, "triton_flash.py", &[]),
        );
        assert_right(code, &answer, pass);
        assert_eq!(
            answer["runs"].as_array().unwrap().len(),
            4,
            "{pass}: its input and three seeds"
        );
        let g = first(&answer);
        let graded: Vec<&str> = g["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["buffer"].as_str().unwrap())
            .collect();
        assert_eq!(graded, written, "{pass}");
        // T = 5 in tiles of 2 (4 for the projections): the masked lanes are not recorded, so
        // each of x's 20 cells is read once per tile of columns of the output (3 for qkv's 12),
        // and each output cell is written once
        let traffic = |buffer: &str| {
            let t = g["traffic"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["buffer"] == buffer)
                .unwrap();
            (t["reads"].as_u64().unwrap(), t["writes"].as_u64().unwrap())
        };
        if pass == "forward" {
            assert_eq!(
                [traffic("x"), traffic("att"), traffic("lse")],
                [(60, 0), (20, 20), (0, 10)]
            );
        } else {
            assert_eq!([traffic("d_qkv"), traffic("delta")], [(180, 60), (28, 10)]);
        }
    }
}

#[test]
fn the_triton_flash_mistakes_are_graded_wrong_at_the_line_storing_att() {
    let Some(venv) = venv_python() else { return };
    let source = example("triton_flash_mistakes.py");
    for (mistake, kernel) in [
        ("wrong_mask", "def flash_forward_wrong_mask("),
        ("wrong_rescale", "def flash_forward_wrong_rescale("),
    ] {
        let (code, answer) = grade(
            "scenarios/flash.toml",
            &["--variant", "flash", "--seeds", "0"],
            &venv_example(&venv, "triton_flash_mistakes.py", &[mistake]),
        );
        assert_eq!(
            (code, answer["verdict"].as_str()),
            (3, Some("wrong")),
            "{mistake}: {answer:#}"
        );
        let g = first(&answer);
        let wrong: Vec<&str> = g["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["wrong"] != 0 || r["missing"] != 0)
            .map(|r| r["buffer"].as_str().unwrap())
            .collect();
        // an unmasked diagonal tile also changes the row's log-sum-exp; a missed rescale only
        // the weighted sum
        let lse = if mistake == "wrong_mask" {
            &["att", "out", "lse"][..]
        } else {
            &["att", "out"][..]
        };
        assert_eq!(wrong, lse, "{mistake}");
        let at = &g["divergence"]["mine_at"];
        assert_eq!(at["file"].as_str(), source.to_str(), "{mistake}: {at}");
        // the store of att in this mistake's own kernel
        let start = line_of(&source, kernel);
        let store = std::fs::read_to_string(&source)
            .unwrap()
            .lines()
            .enumerate()
            .skip(start as usize)
            .find(|(_, l)| l.contains("tl.store(o_ptr"))
            .map(|(n, _)| n as u64 + 1);
        assert_eq!(at["line"].as_u64(), store, "{mistake}: {at}");
        assert_eq!(g["divergence"]["cell"]["buffer"].as_str(), Some("att"), "{mistake}");
    }
}

#[test]
fn the_triton_flash_in_its_own_zhnd_layout_is_graded_through_its_bindings() {
    let Some(venv) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (inputs, trace) = (dir.path().join("inputs.txt"), dir.path().join("trace.jsonl"));
    let scenario = "scenarios/flash.toml";
    crate::support::cli::stdout_of(&["inputs", scenario, "--variant", "flash", "-o", inputs.to_str().unwrap()]);
    run(python_at(&venv)
        .arg(example("triton_flash_zhnd.py"))
        .arg(&inputs)
        .arg(&trace));
    // B=1 H=2 T=5 D=2: Q [Z, H, N, D] has strides 20, 10, 2, 1, read off the tensor
    let text = std::fs::read_to_string(&trace).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let view = |buffer: &str| header["bind"][buffer][0].to_string();
    assert_eq!(
        [view("Q"), view("K"), view("O"), view("M")],
        [
            r#"{"offset":0,"strides":{"b":20,"d":1,"h":10,"i":2},"tensor":"q"}"#,
            r#"{"offset":0,"strides":{"b":20,"d":1,"h":10,"j":2},"tensor":"k"}"#,
            r#"{"offset":0,"strides":{"b":20,"d":1,"h":10,"i":2},"tensor":"att"}"#,
            r#"{"offset":0,"strides":{"b":10,"h":5,"i":1},"tensor":"lse"}"#,
        ]
    );
    let (code, answer) = grade(
        scenario,
        &["--variant", "flash"],
        &venv_example(&venv, "triton_flash_zhnd.py", &[]),
    );
    assert_right(code, &answer, "triton_flash_zhnd.py");
    // Q, K, V, O and M are graded as the q, k, v, att and lse they are views of
    let graded: Vec<&str> = first(&answer)["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["buffer"].as_str().unwrap())
        .collect();
    assert_eq!(graded, ["qkv", "q", "k", "v", "att", "out", "lse"]);
}
