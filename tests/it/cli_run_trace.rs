//! `check`, `run --json` and `trace` on the shipped scenarios: the documented JSON, the worked
//! examples of DESIGN.md, trace exports that parse and agree with `run --json`, atomic `-o`.

use crate::support::cli::{cmd, stdout_of};
use predicates::prelude::*;
use serde::de::IgnoredAny;
use serde_json::Value;
use std::borrow::Cow;

/// Checks that `keys` appear in `json` as object keys, in this order (serde_json's own map
/// sorts keys, so order is checked on the text).
fn assert_key_order(json: &str, keys: &[&str]) {
    let mut at = 0;
    for k in keys {
        let pat = format!("\"{k}\":");
        let found = json[at..]
            .find(&pat)
            .unwrap_or_else(|| panic!("{k} missing or out of order in {json:.300}"));
        at += found + pat.len();
    }
}

/// The text of the object after `"key":` in `json` (up to its closing brace; flat objects only).
fn flat_object<'a>(json: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\":{{");
    let start = json.find(&pat).unwrap() + pat.len() - 1;
    let end = start + json[start..].find('}').unwrap();
    &json[start..=end]
}

fn run_json(scenario: &str) -> Value {
    serde_json::from_str(&stdout_of(&["run", scenario, "--json"])).unwrap()
}

/// Every shipped scenario: `scenarios/*.toml` and the mistakes gallery `scenarios/mistakes/*.toml`.
fn shipped() -> Vec<String> {
    let mut v: Vec<String> = ["scenarios", "scenarios/mistakes"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap())
        .map(|e| e.unwrap().path().display().to_string())
        .filter(|p| p.ends_with(".toml"))
        .collect();
    v.sort();
    assert!(v.len() >= 18, "{v:?}");
    v
}

fn data(run: &Value, name: &str) -> Vec<f64> {
    run["tensors"][name]["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no tensor {name}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn shape(run: &Value, name: &str) -> Vec<u64> {
    run["tensors"][name]["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "{got:?} vs {want:?}");
    }
}

#[test]
fn check_passes_on_every_shipped_scenario() {
    let files = shipped();
    assert!(files.len() >= 9, "{files:?}");
    let mut args = vec!["check".to_string()];
    args.extend(files.iter().cloned());
    let out = stdout_of(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.lines().count(), files.len());
    assert!(out.lines().all(|l| l.starts_with("OK scenarios/")), "{out}");
}

#[test]
fn run_json_has_the_documented_keys_in_order() {
    let text = stdout_of(&["run", "scenarios/mha_walkthrough.toml", "--json"]);
    assert!(text.starts_with("{\"title\":"), "{text:.100}");
    assert_key_order(
        &text,
        &[
            "title", "shape", "B", "T", "C", "H", "runs", "variant", "events", "tensors",
        ],
    );
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["title"], "MHA walkthrough: B=1, T=3, C=4, H=2");
    assert_eq!(doc["shape"], serde_json::json!({"B": 1, "T": 3, "C": 4, "H": 2}));
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(
        (runs[0]["variant"].as_str(), runs[1]["variant"].as_str()),
        (Some("baseline"), Some("mha"))
    );
    // starting at x with both passes: every buffer exists, in the engine's order
    let all = [
        "x", "w_qkv", "b_qkv", "qkv", "q", "k", "v", "scores", "probs", "att", "w_proj", "b_proj", "out", "d_out",
        "d_att", "d_probs", "d_scores", "d_q", "d_k", "d_v", "d_qkv", "d_x", "d_w_qkv", "d_b_qkv", "d_w_proj",
        "d_b_proj",
    ];
    for run in runs {
        assert_eq!(run["tensors"].as_object().unwrap().len(), all.len());
    }
    let mha = &text[text.find("\"variant\":\"mha\"").unwrap()..];
    assert_key_order(mha, &all);
    assert_eq!(shape(&runs[0], "scores"), [1, 3, 3]);
    assert_eq!(shape(&runs[1], "scores"), [1, 2, 3, 3]);
    assert_eq!(shape(&runs[0], "att"), [1, 3, 4]);
    assert_eq!(shape(&runs[1], "att"), [1, 3, 2, 2]);
    assert_eq!(shape(&runs[1], "q"), [1, 3, 4]);
    assert_eq!(shape(&runs[1], "w_qkv"), [4, 12]);
    for run in runs {
        assert!(run["events"].as_u64().unwrap() > 2000);
    }
}

#[test]
fn run_json_reproduces_the_worked_rows() {
    let doc = run_json("scenarios/numeric_baseline.toml");
    let run = &doc["runs"][0];
    assert_eq!(run["variant"], "baseline");
    // no projection and forward only: exactly these tensors
    assert_eq!(run["tensors"].as_object().unwrap().len(), 6);
    assert_key_order(
        &stdout_of(&["run", "scenarios/numeric_baseline.toml", "--json"]),
        &["q", "k", "v", "scores", "probs", "att"],
    );
    close(&data(run, "scores")[6..9], &[0.5, 0.0, 0.5], 1e-6);
    close(&data(run, "probs")[6..9], &[0.383, 0.233, 0.383], 1e-3);
    close(&data(run, "att")[8..12], &[0.383, 0.466, 1.151, 0.0], 1e-3);

    let doc = run_json("scenarios/numeric_mha.toml");
    let run = &doc["runs"][0];
    // head 1, row i=2 of [B,H,T,T] starts at ((0*2 + 1)*3 + 2)*3 = 15
    let r = std::f64::consts::FRAC_1_SQRT_2;
    close(&data(run, "scores")[15..18], &[r, -r, 0.0], 1e-6);
    close(&data(run, "probs")[15..18], &[0.576, 0.140, 0.284], 1e-3);
    close(&data(run, "att")[10..12], &[7.18, 2.82], 1e-2);

    let doc = run_json("scenarios/indexing_trace.toml");
    let scores = data(&doc["runs"][0], "scores");
    // scores[0,1,0] at data[3] = q[1]·k[0]/√2 = (0.2*1.0 + 0.3*1.1)/√2; masked scores[0,1,2] at data[5]
    close(&scores[3..4], &[(0.2 * 1.0 + 0.3 * 1.1) / 2f64.sqrt()], 1e-5);
    assert_eq!(scores[5], -1e9);
}

/// The events of a JSON Lines export, after its header line (checked here).
fn trace_lines(args: &[&str]) -> Vec<serde_json::Map<String, Value>> {
    let text = stdout_of(args);
    let (header, events) = text.split_once('\n').unwrap();
    let header: Value = serde_json::from_str(header).unwrap();
    assert_eq!(
        (&header["format"], &header["version"]),
        (&Value::from("attn-trace-trace"), &Value::from(1))
    );
    assert_eq!(header["scenario"].as_str(), args.get(1).copied());
    for line in events.lines().step_by(101) {
        assert_key_order(line, &FIELDS);
    }
    events
        .lines()
        .map(|l| match serde_json::from_str(l).unwrap() {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        })
        .collect()
}

const FIELDS: [&str; 14] = [
    "seq", "variant", "pass", "phase", "op", "buffer", "level", "offset", "index", "value", "vars", "derived", "file",
    "line",
];

/// What every line of a whole trace is read for: an object with exactly the keys of [`FIELDS`],
/// and its variant. Reading the 300 000 lines of the shipped scenarios' traces into maps of
/// values took most of the test's time; the lines sampled are read in full.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "every key is required, only the variant is read")]
struct TraceLine<'a> {
    seq: IgnoredAny,
    #[serde(borrow)]
    variant: Cow<'a, str>,
    pass: IgnoredAny,
    phase: IgnoredAny,
    op: IgnoredAny,
    buffer: IgnoredAny,
    level: IgnoredAny,
    offset: IgnoredAny,
    index: IgnoredAny,
    value: IgnoredAny,
    vars: IgnoredAny,
    derived: IgnoredAny,
    file: IgnoredAny,
    line: IgnoredAny,
}

/// Every event line of `text` (after the header line, checked here) as a [`TraceLine`] (and the
/// keys of every 101st in [`FIELDS`]' order).
fn trace_keys(text: &str) -> Vec<TraceLine<'_>> {
    let (header, text) = text.split_once('\n').unwrap();
    let header: Value = serde_json::from_str(header).unwrap();
    assert_eq!(header["format"], "attn-trace-trace");
    for line in text.lines().step_by(101) {
        assert_key_order(line, &FIELDS);
    }
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn trace_jsonl_has_every_field_and_as_many_events_as_run_json() {
    // a line short of a key, or with one more, is refused
    let line = r#"{"seq":0,"variant":"mha","pass":"forward","phase":"scores","op":"read","buffer":"q","level":"global","offset":0,"index":[0],"value":0.5,"vars":{},"derived":{},"file":"a.rs","line":1}"#;
    assert!(serde_json::from_str::<TraceLine>(line).is_ok());
    assert!(serde_json::from_str::<TraceLine>(&line.replace(r#","line":1"#, "")).is_err());
    assert!(serde_json::from_str::<TraceLine>(&line.replace(r#""line":1"#, r#""line":1,"x":2"#)).is_err());
    for file in shipped() {
        let doc = run_json(&file);
        let text = stdout_of(&["trace", &file]);
        let lines = trace_keys(&text);
        // the correct runs; a mistaken one (`"mistakes"`) is exported by `trace --mistaken`
        let correct: Vec<&Value> = doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r.get("mistakes").is_none())
            .collect();
        let expected: u64 = correct.iter().map(|r| r["events"].as_u64().unwrap()).sum();
        assert_eq!(lines.len() as u64, expected, "{file}");
        let mistaken: u64 = doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r.get("mistakes").is_some())
            .map(|r| r["events"].as_u64().unwrap())
            .sum();
        if mistaken > 0 {
            assert_eq!(
                trace_keys(&stdout_of(&["trace", &file, "--mistaken"])).len() as u64,
                mistaken,
                "{file} --mistaken"
            );
        }
        for run in correct {
            let v = run["variant"].as_str().unwrap();
            let n = lines.iter().filter(|l| l.variant == v).count() as u64;
            assert_eq!(n, run["events"].as_u64().unwrap(), "{file} {v}");
        }
        for l in text.lines().skip(1).step_by(97) {
            let Value::Object(l) = serde_json::from_str(l).unwrap() else {
                panic!("not an object: {l}")
            };
            assert!(matches!(l["op"].as_str(), Some("read" | "write")));
            assert!(matches!(l["pass"].as_str(), Some("forward" | "backward")));
            // the plain kernels touch only global memory; flash also its tile-local buffers
            let tile = l["buffer"].as_str().unwrap().ends_with("_tile")
                || ["m", "l", "acc"].contains(&l["buffer"].as_str().unwrap());
            assert_eq!(l["level"], if tile { "tile" } else { "global" }, "{file}");
            assert!(!tile || l["variant"] == "flash", "{file}");
            assert!(l["index"].is_array() && l["vars"].is_object() && l["derived"].is_object());
            assert!(l["file"].as_str().unwrap().ends_with(".rs"));
            assert!(l["line"].as_u64().unwrap() > 0);
        }
    }
}

#[test]
fn trace_jsonl_shows_the_indexing_example() {
    let lines = trace_lines(&[
        "trace",
        "scenarios/indexing_trace.toml",
        "--phase",
        "scores",
        "--buffer",
        "scores",
    ]);
    assert_eq!(lines.len(), 9, "one write per (i, j)");
    let at3 = lines.iter().find(|l| l["offset"] == 3).unwrap();
    assert_eq!(at3["op"], "write");
    assert_eq!(at3["index"], serde_json::json!([0, 1, 0]));
    assert_eq!(at3["vars"], serde_json::json!({"bb": 0, "i": 1, "j": 0}));
    assert_eq!(at3["derived"], serde_json::json!({"qi": 2, "kj": 0, "off": 3}));
    let raw = stdout_of(&[
        "trace",
        "scenarios/indexing_trace.toml",
        "--phase",
        "scores",
        "--buffer",
        "scores",
    ]);
    let raw3 = raw.lines().find(|l| l.contains("\"offset\":3,")).unwrap();
    assert_eq!(
        flat_object(raw3, "vars"),
        "{\"bb\":0,\"i\":1,\"j\":0}",
        "loop order is kept"
    );
    assert_eq!(flat_object(raw3, "derived"), "{\"qi\":2,\"kj\":0,\"off\":3}");
    let at5 = lines.iter().find(|l| l["offset"] == 5).unwrap();
    assert_eq!(at5["value"].as_f64(), Some(-1e9));

    // the MHA walkthrough element: reads of q4.data[10..11] and k4.data[6..7], write at 16
    let lines = trace_lines(&[
        "trace",
        "scenarios/mha_walkthrough.toml",
        "--variant",
        "mha",
        "--phase",
        "scores",
    ]);
    let write = lines.iter().find(|l| l["op"] == "write" && l["offset"] == 16).unwrap();
    assert_eq!(
        write["derived"],
        serde_json::json!({"q_base": 10, "k_base": 6, "off": 16})
    );
    assert_eq!(write["vars"], serde_json::json!({"bb": 0, "hh": 1, "i": 2, "j": 1}));
    let seq = write["seq"].as_u64().unwrap();
    let reads: Vec<(String, u64)> = lines
        .iter()
        .filter(|l| (seq - 4..seq).contains(&l["seq"].as_u64().unwrap()))
        .map(|l| (l["buffer"].as_str().unwrap().to_string(), l["offset"].as_u64().unwrap()))
        .collect();
    let want = [("q", 10), ("k", 6), ("q", 11), ("k", 7)].map(|(b, o)| (b.to_string(), o));
    assert_eq!(reads, want);
}

#[test]
fn trace_csv_parses_with_the_same_rows_as_jsonl() {
    let file = "scenarios/batch_b2.toml";
    let csv_text = stdout_of(&["trace", file, "--format", "csv"]);
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(header, FIELDS);
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let json = trace_lines(&["trace", file]);
    let raw = stdout_of(&["trace", file]);
    let raw: Vec<&str> = raw.lines().skip(1).collect();
    assert_eq!(rows.len(), json.len());
    for ((row, l), text) in rows.iter().zip(&json).zip(&raw).step_by(53) {
        assert_eq!(row[0], l["seq"].to_string());
        assert_eq!(&row[1], l["variant"].as_str().unwrap());
        assert_eq!(&row[5], l["buffer"].as_str().unwrap());
        assert_eq!(&row[6], l["level"].as_str().unwrap());
        let index: Vec<String> = l["index"].as_array().unwrap().iter().map(ToString::to_string).collect();
        assert_eq!(row[8], index.join(";"));
        assert_eq!(row[9].parse::<f64>().unwrap(), l["value"].as_f64().unwrap());
        // "bb=0;i=1" in CSV is {"bb":0,"i":1} in JSON, same order
        let as_csv = |obj: &str| {
            obj.trim_matches(['{', '}'])
                .replace('"', "")
                .replace(':', "=")
                .replace(',', ";")
        };
        assert_eq!(row[10], as_csv(flat_object(text, "vars")));
        assert_eq!(row[11], as_csv(flat_object(text, "derived")));
    }
    // the batch term: sequence b=1 of MHA writes scores[1,1,2,1] at ((1*2 + 1)*3 + 2)*3 + 1 = 34
    let hit = rows
        .iter()
        .find(|r| &r[1] == "mha" && &r[3] == "scores" && &r[4] == "write" && &r[7] == "34")
        .unwrap();
    assert_eq!(&hit[11], "q_base=22;k_base=18;off=34");
}

#[test]
fn trace_filters_by_variant_and_pass() {
    let file = "scenarios/backward_simple.toml";
    let all = trace_lines(&["trace", file]);
    let back = trace_lines(&["trace", file, "--variant", "mha", "--pass", "backward"]);
    let expected = all
        .iter()
        .filter(|l| l["variant"] == "mha" && l["pass"] == "backward")
        .count();
    assert_eq!(back.len(), expected);
    assert!(back.iter().all(|l| l["variant"] == "mha" && l["pass"] == "backward"));
    assert!(expected > 0);
}

#[test]
fn trace_output_file_is_written_whole_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("scores.csv");
    let target_s = target.display().to_string();
    cmd()
        .args([
            "trace",
            "scenarios/indexing_trace.toml",
            "--format",
            "csv",
            "-o",
            &target_s,
        ])
        .assert()
        .success()
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("wrote 132 events"));
    let written = std::fs::read_to_string(&target).unwrap();
    #[cfg(unix)]
    {
        // an ordinary file, as private as any file this process creates, no more
        use std::os::unix::fs::PermissionsExt;
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&target), mode(&plain));
        std::fs::remove_file(&plain).unwrap();
    }
    assert_eq!(
        written,
        stdout_of(&["trace", "scenarios/indexing_trace.toml", "--format", "csv"])
    );

    // nothing matches: exit 2, the old file is untouched and no temporary file is left behind
    cmd()
        .args([
            "trace",
            "scenarios/indexing_trace.toml",
            "--buffer",
            "d_q",
            "-o",
            &target_s,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no event matches the filters"));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), written);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // a directory that does not exist: exit 2 naming the path
    let missing = dir.path().join("no/such/dir/t.jsonl").display().to_string();
    cmd()
        .args(["trace", "scenarios/indexing_trace.toml", "-o", &missing])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(missing.as_str()).and(predicate::str::contains("cannot write")));
}

#[test]
fn bad_arguments_exit_with_code_2() {
    let file = "scenarios/indexing_trace.toml";
    cmd()
        .args(["trace", file, "--variant", "mha"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the scenario does not run it"));
    cmd()
        .args(["trace", file, "--pass", "backward"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not record the backward pass"));
    cmd()
        .args(["trace", file, "--phase", "scorez"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--phase scorez: expected one of")
                .and(predicate::str::contains("(did you mean 'scores'?)")),
        );
    cmd()
        .args(["trace", file, "--buffer", "qq"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--buffer qq: expected one of").and(predicate::str::contains("d_scores")));
    cmd().args(["trace", file, "--format", "xml"]).assert().code(2);
}

#[test]
fn run_summary_names_events_phases_and_output() {
    cmd()
        .args(["run", "scenarios/numeric_mha.toml", "--no-color"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("mha: 264 events")
                .and(predicate::str::contains("scores"))
                .and(predicate::str::contains("probs: 6 rows, each sums to 1"))
                .and(predicate::str::contains("att [1,3,2,2]"))
                .and(predicate::str::contains("\x1b[").not()),
        );
}

#[test]
fn version_and_completions() {
    cmd()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("attn-trace "));
    for shell in ["bash", "zsh", "fish"] {
        cmd()
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains("attn-trace").and(predicate::str::contains("explain")));
    }
    cmd().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn run_json_reports_the_mistaken_run_after_the_correct_one() {
    let doc = run_json("scenarios/mistakes/mask_by_multiply.toml");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs[0].get("mistakes").is_none() && runs[0].get("diverges_at").is_none());
    assert_eq!(runs[1]["mistakes"], serde_json::json!(["mask_by_multiply"]));
    // the traces part at the first masked score: after 432 + 48 projection events and the
    // split's 96, the visible score (i0, j0) is the same in both (4 reads, 1 write); the hidden
    // (i0, j1) reads the same 4 values and then writes 0 instead of −1e9
    assert_eq!(runs[1]["diverges_at"], 432 + 48 + 96 + 5 + 4);
    // [B,H,T,T] = [1,2,4,4]: the hidden pair (h0, i0, j1) at offset 1
    let (good, bad) = (data(&runs[0], "probs"), data(&runs[1], "probs"));
    assert_eq!(good[1], 0.0);
    assert!(
        bad[1] > 0.0,
        "mask by multiply gives a future key probability {}",
        bad[1]
    );
    assert_eq!(data(&runs[1], "scores")[1], 0.0);

    // what each run does there, and the symptom in numbers, from the log and the tensors
    let d = &runs[1]["divergence"];
    assert_eq!(d["event"], 585);
    assert_eq!(d["correct"], "write scores[1] = -1e9 (scores)");
    assert_eq!(d["mistaken"], "write scores[1] = 0.00 (scores)");
    let symptoms: Vec<&str> = runs[1]["symptoms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["text"].as_str().unwrap())
        .collect();
    let leaked = bad.iter().zip(&good).filter(|&(&b, &g)| g == 0.0 && b > 0.0).count();
    assert_eq!(leaked, 12, "every hidden pair of [1,2,4,4] leaks");
    assert!(
        symptoms
            .iter()
            .any(|t| t.starts_with("12 of 12 masked probabilities are > 0")),
        "{symptoms:#?}"
    );
    assert!(runs[0].get("symptoms").is_none());

    let text = stdout_of(&["run", "scenarios/mistakes/mask_by_multiply.toml"]);
    assert!(text.contains("mha with mask_by_multiply (forward only)"), "{text}");
    assert!(
        text.contains("leaves the correct run at event #585: write scores[1] = 0.00 (scores)"),
        "{text}"
    );
    // explain reports the same divergence and symptoms after the element's walkthrough
    let text = stdout_of(&[
        "explain",
        "scenarios/mistakes/mask_by_multiply.toml",
        "--variant",
        "mha",
        "--at",
        "i=0,j=1",
    ]);
    assert!(text.contains("The mistaken run (mask_by_multiply)"), "{text}");
    assert!(
        text.contains(
            "diverge at #585: correct write scores[1] = -1e9 (scores) · mistaken write scores[1] = 0.00 (scores)"
        ),
        "{text}"
    );
    assert!(text.contains("12 of 12 masked probabilities are > 0"), "{text}");
}

#[test]
fn run_json_and_explain_report_where_the_overwritten_kv_grad_parts() {
    let doc = run_json("scenarios/mistakes/overwrite_kv_grad.toml");
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs[1]["mistakes"], serde_json::json!(["overwrite_kv_grad"]));
    // the mistaken run makes the backward pass too: d_v [1,3,4] = [B, T, H_kv·D]
    let (good, bad) = (data(&runs[0], "d_v"), data(&runs[1], "d_v"));
    assert_eq!((good.len(), bad.len()), (12, 12));
    assert_eq!(data(&runs[0], "d_q"), data(&runs[1], "d_q"));
    // 1920 forward events, 888 of out_proj_back, 180 of dP, 12 zeros, 6 reads: then the correct
    // run reads d_v[0] to add where the mistaken one writes head 0's share
    assert_eq!(runs[1]["diverges_at"], 3006);
    let d = &runs[1]["divergence"];
    assert_eq!(d["correct"], "read d_v[0] = 0.00 (weighted_sum_back)");
    assert_eq!(d["mistaken"], "write d_v[0] = 0.38 (weighted_sum_back)");
    // the values part at head 1's write of d_v[0]: the sum in the correct run (its final value),
    // head 1's share alone in the mistaken one (its final value too)
    let v = &d["values"];
    assert_eq!(
        (&v["correct_event"], &v["mistaken_event"]),
        (&3055.into(), &3048.into())
    );
    assert_eq!(
        v["correct"],
        format!("write d_v[0] = {:.2} (weighted_sum_back)", good[0])
    );
    assert_eq!(
        v["mistaken"],
        format!("write d_v[0] = {:.2} (weighted_sum_back)", bad[0])
    );
    assert_eq!(
        (format!("{:.2}", good[0]), format!("{:.2}", bad[0])),
        ("0.88".into(), "0.50".into())
    );
    let symptoms: Vec<&str> = runs[1]["symptoms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["text"].as_str().unwrap())
        .collect();
    assert!(
        symptoms.contains(
            &"over all 12 cells of d_v: mistaken − last head's share ≤ 0.0e0 · correct − sum of the shares ≤ 0.0e0"
        ),
        "{symptoms:#?}"
    );
    // runs without the mistake keep the old shape of the report
    let other = run_json("scenarios/mistakes/mask_by_multiply.toml");
    assert!(other["runs"][1]["divergence"].get("values").is_none());

    let text = stdout_of(&["run", "scenarios/mistakes/overwrite_kv_grad.toml"]);
    assert!(
        text.contains("gqa with overwrite_kv_grad (forward and backward)"),
        "{text}"
    );
    assert!(
        text.contains("its values first differ at event #3048: write d_v[0] = 0.50 (weighted_sum_back) (correct run: write d_v[0] = 0.88 (weighted_sum_back))"),
        "{text}"
    );
    let text = stdout_of(&[
        "explain",
        "scenarios/mistakes/overwrite_kv_grad.toml",
        "--at",
        "h=1,i=2,j=0",
    ]);
    assert!(text.contains("The mistaken run (overwrite_kv_grad)"), "{text}");
    assert!(
        text.contains("values first differ at #3055 / #3048: correct write d_v[0] = 0.88 (weighted_sum_back) · mistaken write d_v[0] = 0.50 (weighted_sum_back)"),
        "{text}"
    );
    assert!(
        text.contains("d_v[b0 j0 kv_h0 d0..2]: correct [0.88 -0.26] · mistaken [0.50 -0.26]"),
        "{text}"
    );
}

#[test]
fn cross_attention_json_has_s_queries_and_t_keys() {
    let doc = run_json("scenarios/cross_attention.toml");
    assert_eq!(
        doc["shape"],
        serde_json::json!({"B": 1, "S": 2, "T": 5, "C": 4, "H": 2})
    );
    let mha = &doc["runs"][1];
    assert_eq!(mha["variant"], "mha");
    assert_eq!(shape(mha, "scores"), vec![1, 2, 2, 5]);
    assert_eq!(shape(mha, "x"), vec![1, 2, 4]);
    assert_eq!(shape(mha, "memory"), vec![1, 5, 4]);
    assert_eq!(shape(mha, "d_memory"), vec![1, 5, 4]);
    // the explicit mask hides (i0, j2): probability exactly 0 in both heads
    let p = data(mha, "probs");
    assert_eq!((p[2], p[10 + 2]), (0.0, 0.0));
}

#[test]
fn the_tui_without_a_terminal_is_one_plain_line() {
    // no terminal on stdin (as `attn-trace < /dev/null`), and none on stdout (as `> out.txt`):
    // one line naming the commands that work without one, no escape codes, exit 2
    for args in [vec![], vec!["tui", "scenarios/mha_walkthrough.toml"]] {
        let out = cmd().args(&args).write_stdin("").output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "nothing is drawn into the output");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: the TUI needs a terminal"), "{err}");
        assert!(err.contains("run, explain or trace"), "{err}");
        assert!(!err.contains('\u{1b}'), "no escape codes: {err:?}");
    }
    // a bad file is still named first
    cmd()
        .args(["tui", "no/such/file.toml"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no/such/file.toml"));
}

#[test]
fn run_json_reports_gqa_with_mhas_external_tensors_and_its_own() {
    let doc = run_json("scenarios/gqa.toml");
    assert_eq!(
        doc["shape"],
        serde_json::json!({"B": 1, "T": 4, "C": 8, "H": 4, "H_kv": 2})
    );
    let runs = doc["runs"].as_array().unwrap();
    let (gqa, mha) = (&runs[0], &runs[1]);
    assert_eq!(
        (gqa["variant"].as_str(), mha["variant"].as_str()),
        (Some("gqa"), Some("mha"))
    );
    for name in ["out", "d_x", "d_w_qkv", "d_b_qkv", "d_w_proj", "d_b_proj"] {
        assert!(
            gqa["tensors"].get(name).is_some() && mha["tensors"].get(name).is_some(),
            "{name}"
        );
    }
    // its own: k, v and their gradients have H_kv·D = 4 channels, w_qkv C + 2·H_kv·D = 16 columns
    assert_eq!(shape(gqa, "k"), [1, 4, 4]);
    assert_eq!(shape(gqa, "d_v"), [1, 4, 4]);
    assert_eq!(shape(gqa, "d_w_qkv"), [8, 16]);
    assert_eq!(shape(mha, "d_w_qkv"), [8, 24]);
    // MHA with the heads of each group tied computes the same out
    close(&data(gqa, "out"), &data(mha, "out"), 0.0);
    // a decode run: forward only, with its caches and no whole-sequence k or v
    let decode = run_json("scenarios/kv_cache_decode.toml");
    let run = &decode["runs"][0];
    let names: Vec<&str> = run["tensors"].as_object().unwrap().keys().map(String::as_str).collect();
    for name in ["rope_cos", "rope_sin", "k_cache", "v_cache", "out"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(!names.contains(&"k") && !names.contains(&"d_x"), "{names:?}");
    assert_eq!(shape(run, "k_cache"), [1, 5, 4]);
    assert_eq!(shape(run, "rope_cos"), [5, 1]);
}

/// `trace --help` names every kernel and phase there is, from the registry, and no list of its
/// own that could fall behind (it once said `baseline | mha | flash` and the first phases only).
#[test]
fn trace_help_names_every_variant_and_phase_of_the_registry() {
    let help = stdout_of(&["--lang", "en", "trace", "--help"]);
    for v in attn_trace_core::kernels::Variant::ALL {
        assert!(help.contains(v.name()), "{} not in\n{help}", v.name());
    }
    for p in attn_trace_core::trace::Phase::ALL {
        assert!(help.contains(p.name()), "{} not in\n{help}", p.name());
    }
    let fields = help.split("Fields").nth(1).expect("the fields");
    assert!(!fields.contains("baseline | mha | flash"), "{fields}");
    assert!(!fields.contains("flash, flash_delta, flash_back"), "{fields}");
}
