//! `inputs`, the trace format and `grade` (issue 32): the export read back is the log, the
//! reference graded against itself is right, each gallery mistake is graded wrong and named,
//! access errors are reported at their source line, malformed traces are one line and exit 2,
//! and a program run with `--` that hangs or dies is reported and leaves nothing behind.

use crate::support::cli::cmd;
use crate::support::root;
use attn_trace_analysis::learner::import::Reader;
use attn_trace_analysis::learner::inputs::InputsFile;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use std::io::BufReader;
use std::path::{Path, PathBuf};

fn scenario(name: &str) -> PathBuf {
    root().join("scenarios").join(name)
}

/// `attn-trace trace ARGS -o FILE` into `dir`; returns the file.
fn export(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = dir.join(name);
    cmd().args(["trace"]).args(args).arg("-o").arg(&out).assert().success();
    out
}

/// `attn-trace grade ARGS`: (exit code, stdout, stderr).
fn grade(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = cmd().arg("grade").args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn os(s: &Path) -> &std::ffi::OsStr {
    s.as_os_str()
}

#[test]
fn the_export_read_back_is_the_log() {
    // every shipped scenario, every variant, both passes: what the import keeps of each event
    // (op, buffer, offset, value, file, line, phase) equals the log's
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(root().join("scenarios")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let s = Scenario::load(&path).unwrap();
        let file = export(dir.path(), "all.jsonl", &[path.to_str().unwrap()]);
        let mut reader = Reader::new(BufReader::new(std::fs::File::open(&file).unwrap()), "all.jsonl").unwrap();
        assert_eq!(reader.header().input, 0);
        assert_eq!(
            reader.header().dims.iter().find(|(n, _)| n == "T").map(|d| d.1),
            Some(s.shape.t as u64)
        );
        for &variant in &s.variants {
            let run = s.run(variant, true);
            let trace = run.trace.as_ref().unwrap();
            for n in 0..trace.len() {
                let a = reader.next_access().unwrap().unwrap();
                let e = trace.events[n];
                let same_value = a.value.to_bits() == e.value.to_bits() || (a.value.is_nan() && e.value.is_nan());
                assert!(
                    (a.op, reader.buffers()[a.name as usize].as_str(), a.offset, a.line)
                        == (e.op, e.buf.name(), i64::from(e.offset), u32::from(e.line))
                        && same_value,
                    "{}: {variant:?} event {n}: imported {a:?}, logged {e:?}",
                    path.display()
                );
                assert_eq!(reader.files()[a.file as usize], trace.file_of(n));
                assert_eq!(a.phase, Some(trace.phase_at(n)));
                checked += 1;
            }
        }
        assert!(
            reader.next_access().is_none(),
            "{}: more lines than events",
            path.display()
        );
    }
    assert!(checked > 50_000, "{checked} events");
}

#[test]
fn inputs_are_what_the_pass_reads_first() {
    // mha_walkthrough's backward pass is given x, the weights, the forward's q, k, v, probs and
    // att, and d_out: the buffers it reads before writing them, at their forward values
    let out = cmd()
        .args(["inputs", "--pass", "backward"])
        .arg(scenario("mha_walkthrough.toml"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let f = InputsFile::parse(std::str::from_utf8(&out.stdout).unwrap()).unwrap();
    let names: Vec<&str> = f.tensors.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["x", "w_qkv", "q", "k", "v", "probs", "att", "w_proj", "d_out"]);
    assert_eq!(
        (f.variant, f.pass, f.input),
        (Some(Variant::Mha), Some(Pass::Backward), 0)
    );
    assert_eq!(
        (f.dim("T"), f.dim("D"), f.param("causal")),
        (Some(3), Some(2), Some(1.0))
    );
    assert_eq!(f.param("scale").map(|s| s as f32), Some(1.0f32 / 2.0f32.sqrt()));
    let s = Scenario::load(&scenario("mha_walkthrough.toml")).unwrap();
    let run = s.run(Variant::Mha, false);
    for (name, sizes, values) in &f.tensors {
        let buf = attn_trace_core::trace::Buf::from_name(name).unwrap();
        assert_eq!(values.as_slice(), run.tensors.get(buf), "{name}");
        assert_eq!(sizes.iter().product::<usize>(), values.len());
    }
    // q is given as the [b, i, h, d] view the kernel indexes
    assert_eq!(f.tensors[2].1, vec![1, 3, 2, 2]);
}

#[test]
fn the_reference_graded_against_itself_is_right() {
    let dir = tempfile::tempdir().unwrap();
    for (file, variant, pass) in [
        ("mha_walkthrough.toml", "mha", "forward"),
        ("mha_walkthrough.toml", "baseline", "backward"),
        ("gqa.toml", "gqa", "backward"),
        ("flash.toml", "flash", "forward"),
        ("flash.toml", "flash", "backward"),
        ("dropout.toml", "mha", "forward"),
        ("cross_attention.toml", "mha", "forward"),
    ] {
        let path = scenario(file);
        let t = export(
            dir.path(),
            "t.jsonl",
            &[path.to_str().unwrap(), "--variant", variant, "--pass", pass],
        );
        let (code, out, err) = grade(&[os(&path), os(&t)]);
        assert_eq!(code, 0, "{file} {variant} {pass}: {out}{err}");
        assert!(out.contains("Verdict: right."), "{out}");
        assert!(out.contains("Accesses: no errors"), "{out}");
        if (file, variant, pass) == ("mha_walkthrough.toml", "mha", "forward") {
            // the reference computes the 6 hidden pairs' dot products (2 heads, causal T = 3)
            // before the mask overwrites them: 6 × D = 12 reads of q and of k are waste
            for b in ["q", "k"] {
                let line = format!(
                    "· 12 reads of {b} feed only masked scores, whose products the mask throws away (waste, not an error)"
                );
                assert!(out.contains(&line), "{out}");
            }
        }
    }
}

#[test]
fn every_gallery_mistake_is_graded_wrong_and_named() {
    let dir = tempfile::tempdir().unwrap();
    for (number, name) in [
        (1, "no_input_projection"),
        (2, "scale_by_seq_len"),
        (3, "mask_by_multiply"),
        (4, "no_output_projection"),
        (5, "dropout_not_applied"),
        (6, "softmax_over_two_dims"),
        (7, "overwrite_kv_grad"),
    ] {
        let path = root().join("scenarios/mistakes").join(format!("{name}.toml"));
        let pass = if name == "overwrite_kv_grad" {
            "backward"
        } else {
            "forward"
        };
        let t = export(
            dir.path(),
            "m.jsonl",
            &[path.to_str().unwrap(), "--mistaken", "--pass", pass],
        );
        let (code, out, _) = grade(&[os(&path), os(&t)]);
        assert_eq!(code, 3, "{name}: {out}");
        assert!(
            out.contains(&format!("This is mistake {number} of the gallery, {name}:")),
            "{name}: {out}"
        );
        assert!(out.contains("Verdict: wrong."), "{out}");
    }
}

/// The reference's forward trace of mha_walkthrough as lines, header first.
fn walkthrough_lines(dir: &Path) -> Vec<String> {
    let path = scenario("mha_walkthrough.toml");
    let t = export(
        dir,
        "ref.jsonl",
        &[path.to_str().unwrap(), "--variant", "mha", "--pass", "forward"],
    );
    std::fs::read_to_string(t)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

#[test]
fn a_wrong_value_is_the_first_divergence_with_its_reads() {
    // change the value of the write of scores[16] (head 1, i = 2, j = 1: the walkthrough's
    // focus element) and every later event that depends on it is still the reference's: the
    // first divergence is that cell, at that event, with q[10], k[6], q[11], k[7] feeding it
    let dir = tempfile::tempdir().unwrap();
    let mut lines = walkthrough_lines(dir.path());
    let k = lines
        .iter()
        .position(|l| l.contains("\"op\":\"write\",\"buffer\":\"scores\",\"level\":\"global\",\"offset\":16,"))
        .unwrap();
    let event: serde_json::Value = serde_json::from_str(&lines[k]).unwrap();
    let seq = event["seq"].as_u64().unwrap();
    let right = event["value"].as_f64().unwrap() as f32;
    lines[k] = lines[k].replace(&format!("\"value\":{right:?}"), "\"value\":0.5");
    let t = write_lines(dir.path(), "wrong.jsonl", &lines);
    let out = cmd()
        .arg("grade")
        .arg(scenario("mha_walkthrough.toml"))
        .arg(&t)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["verdict"], "wrong");
    let g = &j["runs"][0]["grade"];
    let d = &g["divergence"];
    assert_eq!(d["cell"]["buffer"], "scores");
    assert_eq!(d["cell"]["offset"], 16);
    assert_eq!(d["cell"]["index"], "b0 h1 i2 j1");
    assert_eq!(d["cell"]["mine"], 0.5);
    assert_eq!(d["cell"]["reference"].as_f64().unwrap() as f32, right);
    assert_eq!(d["reference_event"], seq);
    let reads = |side: &str| -> Vec<(String, u64)> {
        d[side]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["buffer"].as_str().unwrap().to_string(), t["offset"].as_u64().unwrap()))
            .collect()
    };
    let fed = vec![("q".into(), 10), ("k".into(), 6), ("q".into(), 11), ("k".into(), 7)];
    assert_eq!(reads("reference_reads"), fed);
    assert_eq!(reads("mine_reads"), fed);
    assert_eq!(d["mine_at"]["trace_line"], (k + 1) as u64);
    assert_eq!(d["mine_at"]["file"], "crates/core/src/kernels/attention_mha.rs");
    // only that cell of scores is wrong; nothing names a gallery mistake
    let scores = g["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["buffer"] == "scores")
        .unwrap();
    assert_eq!(
        (scores["wrong"].as_u64(), scores["missing"].as_u64()),
        (Some(1), Some(0))
    );
    assert!(g["mistake"].is_null());
}

#[test]
fn access_errors_are_reported_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let header = walkthrough_lines(dir.path())[0].clone();
    let access = |op: &str, buf: &str, off: i64, line: u32| {
        format!(
            "{{\"op\":\"{op}\",\"buffer\":\"{buf}\",\"offset\":{off},\"value\":0.0,\"file\":\"mine.py\",\"line\":{line}}}"
        )
    };
    // k has 12 cells: offset 12 is one past its end; out is nobody's input: reading it before
    // writing it is an uninitialised accumulator
    let lines = vec![
        header,
        access("read", "k", -1, 30),
        access("read", "k", 12, 31),
        access("read", "k", 13, 31),
        access("read", "out", 0, 40),
        access("write", "out", 0, 40),
    ];
    let t = write_lines(dir.path(), "bad.jsonl", &lines);
    let (code, out, _) = grade(&[os(&scenario("mha_walkthrough.toml")), os(&t)]);
    assert_eq!(code, 3);
    assert!(
        out.contains("✗ read of k[12] outside the buffer (12 cells) at mine.py:31 (2 times)"),
        "{out}"
    );
    assert!(
        out.contains("✗ read of out[0] before anything wrote it (nobody gives out: it starts empty) at mine.py:40"),
        "{out}"
    );
    // below the buffer too (`k_base - 1`): recorded as given, reported, not refused
    assert!(
        out.contains("✗ read of k[-1] outside the buffer (12 cells) at mine.py:30\n"),
        "{out}"
    );
    // and it reads none of the forward pass's inputs: its results cannot depend on them
    for input in ["x", "w_qkv", "b_qkv", "w_proj", "b_proj"] {
        assert!(
            out.contains(&format!("✗ never reads {input}: your results cannot depend on it\n")),
            "{out}"
        );
    }
    assert!(out.contains("Accesses: 8 errors"), "{out}");
}

#[test]
fn an_accumulation_overwritten_is_an_error_even_with_right_values() {
    // GQA backward with every read of d_k that feeds its own `+=` removed: the values written
    // are still the reference's, so only the access rule can see that the query heads'
    // contributions would overwrite one another
    let dir = tempfile::tempdir().unwrap();
    let path = scenario("gqa.toml");
    let t = export(
        dir.path(),
        "gqa.jsonl",
        &[path.to_str().unwrap(), "--variant", "gqa", "--pass", "backward"],
    );
    let lines: Vec<String> = std::fs::read_to_string(&t)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let mut kept = vec![lines[0].clone()];
    for w in lines[1..].windows(2) {
        let (a, b): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&w[0]).unwrap(),
            serde_json::from_str(&w[1]).unwrap(),
        );
        let feeds_its_add = a["buffer"] == "d_k"
            && a["op"] == "read"
            && b["op"] == "write"
            && a["offset"] == b["offset"]
            && b["buffer"] == "d_k";
        if !feeds_its_add {
            kept.push(w[0].clone());
        }
    }
    kept.push(lines.last().unwrap().clone());
    let t = write_lines(dir.path(), "lost.jsonl", &kept);
    let (code, out, _) = grade(&[os(&path), os(&t)]);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("1. Results: right"), "{out}");
    assert!(
        out.contains("✗ write of d_k[0] at crates/core/src/kernels/attention_gqa.rs:"),
        "{out}"
    );
    assert!(out.contains("where the reference adds into the cell"), "{out}");
}

#[test]
fn malformed_traces_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let lines = walkthrough_lines(dir.path());
    let header = lines[0].clone();
    let ok = "{\"op\":\"read\",\"buffer\":\"q\",\"offset\":0,\"value\":0.5,\"file\":\"k.py\",\"line\":3}";
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "bad json",
            vec![header.clone(), "{\"op\":\"read\",".into()],
            ":2: not a JSON object: EOF while parsing a value (column 13)",
        ),
        (
            "unknown buffer",
            vec![header.clone(), ok.replace("\"q\"", "\"qq\"")],
            ":2: \"buffer\": \"qq\" is neither one of ours nor bound; bind it to the reference's tensors",
        ),
        (
            "offset not a number",
            vec![
                header.clone(),
                ok.to_string(),
                ok.replace("\"offset\":0", "\"offset\":\"12x\""),
            ],
            ":3: \"offset\": expected a whole number, found \"12x\"",
        ),
        (
            "missing line",
            vec![header.clone(), ok.replace(",\"line\":3", "")],
            ":2: \"line\": missing",
        ),
        (
            "wrong version",
            vec![header.replace("\"version\":1", "\"version\":2"), ok.to_string()],
            ":1: \"version\": this attn-trace reads version 1 of the trace format, the trace is version 2",
        ),
        (
            "no header",
            vec![ok.to_string()],
            ":1: \"format\": expected \"attn-trace-trace\" in the header line, found none",
        ),
        (
            "another scenario's shapes",
            vec![header.replace("\"T\":3", "\"T\":4"), ok.to_string()],
            ":1: \"dims\": the trace was recorded with T = 4, the scenario has T = 3",
        ),
        (
            "another scenario",
            vec![header.replace("mha_walkthrough.toml", "gqa.toml"), ok.to_string()],
            ":1: \"scenario\": the trace was recorded on /",
        ),
        (
            "a buffer the pass has not",
            vec![header.clone(), ok.replace("\"q\"", "\"d_q\"")],
            ":2: \"buffer\": the mha forward pass of this scenario has no buffer \"d_q\"",
        ),
    ];
    for (what, lines, expected) in cases {
        let t = write_lines(dir.path(), "m.jsonl", &lines);
        let (code, out, err) = grade(&[os(&scenario("mha_walkthrough.toml")), os(&t)]);
        assert_eq!(code, 2, "{what}: {out}{err}");
        assert!(out.is_empty(), "{what}: {out}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.contains(&format!("m.jsonl{expected}")), "{what}: {err}");
        if what == "another scenario" {
            assert!(err.contains("gqa.toml, not on "), "{err}");
        }
    }
    // the flags must agree with the header
    let t = write_lines(dir.path(), "m.jsonl", &[header, ok.to_string()]);
    let (code, _, err) = grade(&[
        os(&scenario("mha_walkthrough.toml")),
        os(&t),
        "--pass".as_ref(),
        "backward".as_ref(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains(":1: \"pass\": the trace was recorded for the forward pass, not --pass backward"),
        "{err}"
    );
}

/// `attn-trace grade mha_walkthrough -- sh -c SCRIPT` with TMPDIR in `tmp`.
fn grade_program(tmp: &Path, script: &str, extra: &[&str]) -> (i32, String) {
    let out = cmd()
        .env("TMPDIR", tmp)
        .arg("grade")
        .arg(scenario("mha_walkthrough.toml"))
        .args(extra)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap())
}

#[cfg(unix)]
#[test]
fn a_program_that_hangs_or_dies_is_reported_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    // hangs, with a child of its own: both are stopped at the time limit
    let started = std::time::Instant::now();
    let (code, out) = grade_program(tmp.path(), "sleep 30 & sleep 30", &["--timeout", "1"]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains(
            "input 0 (the scenario's own): your program did not finish within 1 s (--timeout) and was stopped"
        ),
        "{out}"
    );
    assert!(started.elapsed().as_secs() < 10);
    // dies, saying why on stderr
    let (code, out) = grade_program(tmp.path(), "echo 'Traceback: IndexError' >&2; exit 7", &[]);
    assert_eq!(code, 3);
    assert!(
        out.contains("your program exited with status 7\n    Traceback: IndexError"),
        "{out}"
    );
    // finishes without a trace
    let (code, out) = grade_program(tmp.path(), "true", &[]);
    assert_eq!(code, 3);
    assert!(
        out.contains("finished without writing a trace to $ATTN_TRACE_OUT"),
        "{out}"
    );
    // no temporary directory is left behind
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    // a command that does not exist is bad input
    let out = cmd()
        .arg("grade")
        .arg(scenario("mha_walkthrough.toml"))
        .args(["--", "/nonexistent/kernel"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run /nonexistent/kernel"));
}

#[cfg(unix)]
#[test]
fn a_program_is_run_on_the_scenario_and_on_random_inputs() {
    // a "program" that replays the reference's own trace of whatever input it is given is right
    // on every input; one that always replays input 0's is right only on the scenario's own
    let tmp = tempfile::tempdir().unwrap();
    let exe = assert_cmd::cargo::cargo_bin("attn-trace");
    let s = scenario("numeric_mha.toml");
    let replay = format!(
        "k=$(sed -n 's/^input //p' \"$ATTN_TRACE_INPUTS\") && \
         {exe} trace {s} --variant mha --pass forward -o \"$ATTN_TRACE_OUT\" 2>/dev/null && \
         sed -i \"1s/\\\"input\\\":0/\\\"input\\\":$k/\" \"$ATTN_TRACE_OUT\"",
        exe = exe.display(),
        s = s.display()
    );
    let out = cmd()
        .env("TMPDIR", tmp.path())
        .arg("grade")
        .arg(&s)
        .args(["--seeds", "2", "--", "sh", "-c", &replay])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("input 0 (the scenario's own): right"), "{text}");
    assert!(text.contains("input 1 (random): wrong"), "{text}");
    assert!(
        text.contains(
            "Verdict: wrong. Right on the scenario's own input, wrong on random input 1: right there only by luck."
        ),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn the_rust_example_kernel_is_right_on_every_input() {
    // examples/my_attention.rs: another loop order for the weighted sum, accumulating in memory
    let exe = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/my_attention");
    assert!(exe.exists(), "{}", exe.display());
    let out = cmd()
        .arg("grade")
        .arg(scenario("numeric_mha.toml"))
        .arg("--json")
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{j}");
    assert_eq!(j["verdict"], "correct");
    assert_eq!(j["runs"].as_array().unwrap().len(), 4);
    // its accesses differ from the reference's and say so: att accumulated in memory
    let att = j["runs"][0]["grade"]["traffic"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["buffer"] == "att")
        .unwrap()
        .clone();
    assert_eq!((att["reads"].as_u64(), att["writes"].as_u64()), (Some(36), Some(48)));
    assert_eq!(
        (att["reference_reads"].as_u64(), att["reference_writes"].as_u64()),
        (Some(0), Some(12))
    );
    assert_eq!(j["runs"][0]["grade"]["findings"].as_array().unwrap().len(), 0);
}

#[test]
fn the_flash_column_is_a_flash_runs_own_count() {
    // grade's flash column is computed in closed form; a traced flash run counts the same
    use attn_trace_core::engine::run_recording;
    use attn_trace_core::trace::{Buf, Op};
    let dir = tempfile::tempdir().unwrap();
    for (file, pass) in [("mha_walkthrough.toml", Pass::Forward), ("flash.toml", Pass::Backward)] {
        let path = scenario(file);
        let t = export(
            dir.path(),
            "t.jsonl",
            &[path.to_str().unwrap(), "--variant", "mha", "--pass", pass.name()],
        );
        let out = cmd().arg("grade").arg(&path).arg(&t).arg("--json").output().unwrap();
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let s = Scenario::load(&path).unwrap();
        let run = run_recording(&s.inputs(), Variant::Flash, pass);
        let trace = run.trace.as_ref().unwrap();
        let mut checked = 0;
        for row in j["runs"][0]["grade"]["traffic"].as_array().unwrap() {
            let buf = Buf::from_name(row["buffer"].as_str().unwrap()).unwrap();
            let count = |op: Op| trace.events.iter().filter(|e| e.buf == buf && e.op == op).count() as u64;
            match row["flash_reads"].as_u64() {
                Some(r) => {
                    assert_eq!(
                        (r, row["flash_writes"].as_u64().unwrap()),
                        (count(Op::Read), count(Op::Write)),
                        "{file} {buf:?}"
                    );
                    checked += 1;
                }
                None => assert!(!run.registry.has(buf), "{file}: flash has {buf:?}"),
            }
        }
        assert!(checked >= 5, "{file}: {checked}");
    }
}

#[test]
fn the_fast_reader_and_serde_json_read_the_same() {
    // the recorders' key order takes the import's fast path; the same access with its keys in
    // another order goes through serde_json: both must give the same access, and a line the
    // fast path would misread (a bad number, an escape) must still be refused or read right
    let header = "{\"format\":\"attn-trace-trace\",\"version\":1}";
    let mut fast = vec![header.to_string()];
    let mut slow = vec![header.to_string()];
    let values = [
        "0.25",
        "-1e-9",
        "3.4028235e38",
        "1E+3",
        "-0.0",
        "\"nan\"",
        "\"inf\"",
        "\"-inf\"",
    ];
    for (k, value) in values.iter().enumerate() {
        let (op, off) = if k % 2 == 0 {
            ("read", -1 + k as i64)
        } else {
            ("write", 12 * k as i64)
        };
        let tail = match k % 3 {
            0 => String::new(),
            1 => ",\"phase\":\"scores\"".into(),
            _ => ",\"phase\":\"softmax\",\"vars\":{\"bb\":0,\"i\":2}".into(),
        };
        fast.push(format!(
            "{{\"op\":\"{op}\",\"buffer\":\"q\",\"offset\":{off},\"value\":{value},\"file\":\"a b.py\",\"line\":{k}{tail}}}"
        ));
        slow.push(format!(
            "{{\"file\":\"a b.py\",\"line\":{k},\"op\":\"{op}\",\"offset\":{off},\"buffer\":\"q\",\"value\":{value}{tail}}}"
        ));
    }
    let read = |lines: &[String]| {
        let text = lines.join("\n") + "\n";
        let mut r = Reader::new(text.as_bytes(), "t.jsonl").unwrap();
        let mut out = Vec::new();
        while let Some(a) = r.next_access() {
            let a = a.unwrap();
            out.push((
                a.op,
                r.buffers()[a.name as usize].clone(),
                a.offset,
                a.value.to_bits(),
                r.files()[a.file as usize].clone(),
                a.line,
                a.phase,
            ));
        }
        out
    };
    let (a, b) = (read(&fast), read(&slow));
    assert_eq!(a.len(), values.len());
    assert_eq!(a, b);
    assert_eq!(a[1].3, (-1e-9f32).to_bits());
    // not JSON, or not the fast shape: refused with serde_json's reason, or read by it
    for (bad, why) in [
        ("\"value\":1.", "not a JSON object"),
        ("\"value\":+1", "not a JSON object"),
        ("\"value\":.5", "not a JSON object"),
        ("\"value\":\"NaNa\"", "\"value\": expected a number"),
    ] {
        let line = format!("{{\"op\":\"read\",\"buffer\":\"q\",\"offset\":0,{bad},\"file\":\"f\",\"line\":1}}");
        let text = format!("{header}\n{line}\n");
        let mut r = Reader::new(text.as_bytes(), "t.jsonl").unwrap();
        let e = r.next_access().unwrap().unwrap_err();
        assert!(e.to_string().contains(why), "{bad}: {e}");
    }
    let escaped = format!(
        "{header}\n{{\"op\":\"read\",\"buffer\":\"q\",\"offset\":0,\"value\":1,\"file\":\"a\\\"b.py\",\"line\":1}}\n"
    );
    let mut r = Reader::new(escaped.as_bytes(), "t.jsonl").unwrap();
    let a = r.next_access().unwrap().unwrap();
    assert_eq!(r.files()[a.file as usize], "a\"b.py");
}
