//! Hostile inputs, round two (issue 34), through the real binary: estimates that cannot explode,
//! arithmetic that cannot wrap, a parser with a cap it can afford, work that cannot be saved
//! refused before it starts, and results that are not results refused as such. Every command
//! runs under the address-space and time limits of `cli_hostile.rs`. The classes of the issue
//! that live in the TUI (worker panics, the quiz's ranges, signals) are in `tui_hostile.rs`; the
//! property test over generated scenarios is `cli_hostile_props.rs`.

use crate::cli_hostile::{cmd, join, mkfifo, mode, refused, split, std_cmd, tiny_config, weights};
use attn_trace_model::TinyGpt;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn scenarios_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// Standard error of a finished command: exit code 0 or 2, at most one line, in `limit`.
fn zero_or_two(c: &mut assert_cmd::Command, limit: Duration) -> (i32, String) {
    let start = Instant::now();
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or(-1);
    assert!(code == 0 || code == 2, "exit {:?}, stderr:\n{err}", out.status);
    assert!(err.trim_end().lines().count() <= 1, "one line at most: {err}");
    assert!(start.elapsed() < limit, "took {:?}: {err}", start.elapsed());
    (code, err)
}

// ---------------------------------------------------------------------------------------------
// 1: the estimate does not allocate

/// Ten lines: T = 100000 with 1×1 flash tiles. The estimate used to list every visited tile pair
/// (5·10⁹ of them) before comparing with the budget, and aborted on a 4 GiB allocation.
#[test]
fn flash_with_a_long_sequence_and_one_by_one_tiles_is_refused_before_any_allocation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, t, mask) in [
        ("causal.toml", 100_000, ""),
        ("none.toml", 1 << 20, "mask = \"none\"\n"),
        ("max.toml", 1 << 20, ""),
    ] {
        std::fs::write(
            d.join(name),
            format!(
                "title = \"t\"\n[shape]\nB = 1\nT = {t}\nC = 1\n[run]\nvariants = [\"flash\"]\n{mask}[flash]\nbr = 1\nbc = 1\n"
            ),
        )
        .unwrap();
        for command in ["check", "run", "io", "explain"] {
            let start = Instant::now();
            refused(cmd(d).args([command, name]), &[name, "events", "budget"]);
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{command} {name}: {:?}",
                start.elapsed()
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2: counts and byte sizes that cannot wrap

/// The events a budget refusal counts, when it prints a number, and the GiB it says they take.
fn figures(err: &str) -> (Option<u128>, Option<f64>) {
    let Some(rest) = err.split("would record ").nth(1) else {
        return (None, None);
    };
    let events = rest.split(' ').next().and_then(|n| n.parse().ok());
    let gib = rest
        .split("(about ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|g| g.parse().ok());
    (events, gib)
}

/// Each size at its largest (2²⁰) with the others small, and products of sizes just above and
/// far above `u64::MAX`: `check` answers each in one line, and every figure it prints is true.
/// A scenario whose true count is about 2.8·10¹⁹ events passed as 9.2·10¹⁸, its bytes wrapped.
#[test]
fn every_size_at_its_maximum_and_counts_beyond_u64_give_true_figures() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let max = 1u64 << 20;
    // (name, [shape] lines, [run] lines, a lower bound on the true event count)
    let cases: Vec<(&str, String, &str, u128)> = vec![
        ("b.toml", format!("B = {max}\nT = 1\nC = 1"), "", 0),
        ("t.toml", format!("B = 1\nT = {max}\nC = 1"), "", 0),
        ("c.toml", format!("B = 1\nT = 1\nC = {max}"), "", 0),
        ("h.toml", format!("B = 1\nT = 1\nC = {max}\nH = {max}"), "", 0),
        (
            "s.toml",
            format!("B = 1\nS = {max}\nT = 1\nC = 1"),
            "qkv = \"separate\"",
            0,
        ),
        (
            "gqa.toml",
            format!("B = 1\nT = 1\nC = {max}\nH = {max}\nH_kv = 1"),
            "variants = [\"gqa\"]",
            0,
        ),
        (
            "decode.toml",
            format!("B = 1\nT = {max}\nC = {max}"),
            "variants = [\"mha\"]\ndecode = true",
            // the projections of every step: 2·C² per token for q, k, v and out
            8 * (max as u128).pow(3),
        ),
        // out and q projections, forward and backward, in both kernels: 24·S·C² ≈ 2.8·10¹⁹
        (
            "over.toml",
            format!("B = 1\nS = {max}\nT = 1\nC = {max}"),
            "qkv = \"separate\"",
            24 * (max as u128).pow(3),
        ),
        (
            "all.toml",
            format!("B = {max}\nS = {max}\nT = {max}\nC = {max}\nH = {max}"),
            "qkv = \"separate\"\nvariants = [\"baseline\", \"mha\", \"flash\"]",
            (max as u128).pow(4),
        ),
    ];
    for (name, shape, run, at_least) in &cases {
        std::fs::write(d.join(name), format!("title = \"t\"\n[shape]\n{shape}\n[run]\n{run}\n")).unwrap();
        let (code, err) = zero_or_two(cmd(d).args(["check", name]), Duration::from_secs(10));
        if *at_least > u64::MAX as u128 {
            assert!(
                err.contains("more than 18446744073709551615 events"),
                "{name}: at least {at_least} events: {err}"
            );
        }
        let (events, gib) = figures(&err);
        if let Some(events) = events {
            assert!(events >= *at_least, "{name}: {events} < {at_least}: {err}");
        }
        match (events, gib) {
            (Some(events), Some(gib)) => {
                let want = events as f64 * 40.0 / (1u64 << 30) as f64;
                assert!(
                    (gib - want).abs() <= 0.05 + 1e-3 * want,
                    "{name}: {gib} GiB for {events} events: {err}"
                );
            }
            _ => assert!(code == 0 || err.contains("far beyond"), "{name}: {err}"),
        }
    }
    // one above the largest size
    std::fs::write(
        d.join("over_max.toml"),
        format!("title = \"t\"\n[shape]\nB = 1\nT = {}\nC = 1\n", max + 1),
    )
    .unwrap();
    refused(cmd(d).args(["check", "over_max.toml"]), &["[shape].T", "1048576"]);
}

// ---------------------------------------------------------------------------------------------
// 3: a valid request the code did not support

/// `explain --variant mha --pass backward` on the shipped GQA scenario checked MHA's gradient on
/// the grouped-head weights, and `kernels/linear.rs` asserted (exit 101, an 80-line report). Now
/// the check perturbs the weights as each kernel reads them; every kernel and pass of the
/// scenarios with grouped heads answers.
#[test]
fn explain_checks_every_kernel_on_grouped_heads_in_both_passes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // the shipped scenario runs GQA and MHA; the baseline (one head) reads the weights ungrouped too
    let shipped = std::fs::read_to_string(scenarios_dir().join("gqa.toml")).unwrap();
    let all = shipped.replace(
        "variants = [\"gqa\", \"mha\"]",
        "variants = [\"gqa\", \"mha\", \"baseline\"]",
    );
    assert_ne!(all, shipped);
    std::fs::write(d.join("gqa.toml"), all).unwrap();
    for variant in ["mha", "baseline", "gqa"] {
        let out = cmd(d)
            .args(["explain", "gqa.toml", "--at", "b=0,h=0,i=2,j=1"])
            .args(["--variant", variant, "--pass", "backward"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{variant}: {err}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("finite difference"), "{variant}: {text}");
        assert!(text.contains("agree"), "{variant}: {text}");
    }
    for file in ["gqa.toml", "mqa.toml", "kv_cache_decode.toml", "flash.toml"] {
        for variant in ["baseline", "mha", "flash", "gqa"] {
            for pass in ["forward", "backward"] {
                zero_or_two(
                    cmd(d)
                        .arg("explain")
                        .arg(scenarios_dir().join(file))
                        .args(["--variant", variant, "--pass", pass]),
                    Duration::from_secs(20),
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 4: a file-size cap the parser can afford

/// `N` bytes of the parser's most expensive text (measured: about 570 bytes of memory per byte):
/// dotted keys in inline tables, each part a table of its own.
fn costly_toml(n: usize) -> String {
    let unit = format!("{{{}=0}},", vec!["a"; 78].join("."));
    let mut text = String::from("title = \"t\"\nx = [");
    while text.len() + unit.len() + 3 < n {
        text.push_str(&unit);
    }
    text.push_str("0]\n");
    text
}

/// A 64 MiB scenario (within the old cap) peaked at about 5 GB before its error. The cap is now
/// what the parser can afford: a file of the costliest text just under it is answered in one
/// line under the 1 GB limit, and anything larger is refused before it is read.
#[test]
fn the_scenario_cap_is_what_the_parser_can_afford() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cap = attn_trace_core::scenario::MAX_FILE_BYTES as usize;
    // a few MiB of the costliest text: refused for its size, at once
    std::fs::write(d.join("big.toml"), costly_toml(4 << 20)).unwrap();
    let start = Instant::now();
    refused(cmd(d).args(["check", "big.toml"]), &["big.toml", "larger than"]);
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    // just under the cap: parsed within the memory limit, in a few seconds
    std::fs::write(d.join("cap.toml"), costly_toml(cap)).unwrap();
    assert!(std::fs::metadata(d.join("cap.toml")).unwrap().len() <= cap as u64);
    refused(cmd(d).args(["check", "cap.toml"]), &["cap.toml", "unknown key"]);
    // a file made of syntax errors kept every error: hundreds of bytes per byte
    let errors = "=\n".repeat(cap / 2 - 1);
    std::fs::write(d.join("errors.toml"), errors).unwrap();
    refused(
        cmd(d).args(["check", "errors.toml"]),
        &["errors.toml:1:1", "not valid TOML"],
    );
}

// ---------------------------------------------------------------------------------------------
// 7: work that cannot be saved

fn train_args() -> Vec<&'static str> {
    vec![
        "train",
        "--dataset",
        "sort",
        "--seq",
        "8",
        "--dmodel",
        "8",
        "--heads",
        "2",
        "--batch",
        "2",
        "--steps",
        "10000000",
        "--log-every",
        "10",
        "--json",
    ]
}

/// Whether a file can be created in `dir` (not in a read-only folder, unless we are root).
fn writable(dir: &Path) -> bool {
    let probe = dir.join(".probe");
    let ok = std::fs::write(&probe, b"x").is_ok();
    let _ = std::fs::remove_file(probe);
    ok
}

/// `train --save` to a FIFO nobody reads or into a read-only folder failed only after the whole
/// run (here: ten million steps); it is refused before the first step.
#[test]
fn train_save_to_an_unwritable_destination_is_refused_before_training() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("fifo"));
    let start = Instant::now();
    refused(
        cmd(d).args(train_args()).args(["--save", "fifo"]),
        &["--save fifo", "FIFO"],
    );
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());

    std::fs::create_dir(d.join("ro")).unwrap();
    std::fs::set_permissions(d.join("ro"), std::fs::Permissions::from_mode(0o555)).unwrap();
    // root writes into a 0555 folder: /sys is a folder nobody may create files in
    let target = if writable(&d.join("ro")) {
        if Path::new("/sys").is_dir() && !writable(Path::new("/sys")) {
            "/sys/m.safetensors".to_string()
        } else {
            eprintln!("skipped the read-only folder: this user writes everywhere");
            return;
        }
    } else {
        "ro/m.safetensors".to_string()
    };
    let start = Instant::now();
    refused(
        cmd(d).args(train_args()).args(["--save", &target]),
        &[&target, "cannot write"],
    );
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
}

/// The temporary file that replaces a 0600 checkpoint is 0600 from the moment it exists (it was
/// 0644 until the rename), and it exists from the start of training, so a destination that
/// cannot take it is known at once.
#[test]
fn the_temporary_checkpoint_has_the_mode_of_the_file_it_replaces_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    weights(&d.join("m.safetensors"));
    std::fs::set_permissions(d.join("m.safetensors"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let mut child = std_cmd(d)
        .args(train_args())
        .args(["--save", "m.safetensors"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let temp = loop {
        let found = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()).find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".m.safetensors.attn-trace-")
        });
        if let Some(p) = found {
            break p;
        }
        if start.elapsed() > Duration::from_secs(10) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("no temporary file beside m.safetensors while training");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(mode(&temp), 0o600, "{}", temp.display());
    // once training is under way (its first logged line), SIGTERM stops it and it saves
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    // SAFETY: signalling our own child by its id.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(mode(&d.join("m.safetensors")), 0o600);
    assert!(
        attn_trace_model::checkpoint::load(&d.join("m.safetensors"))
            .unwrap()
            .step
            > 0
    );
    assert!(!temp.exists());
}

// ---------------------------------------------------------------------------------------------
// 8: results that are not results

/// A checkpoint whose weights are finite but so large that the logits overflow: `eval` printed a
/// `null` loss with exit 0 and `sample` printed bytes drawn from NaNs.
#[test]
fn a_checkpoint_whose_weights_overflow_is_refused_by_eval_sample_and_train() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("text.txt"), "0123456789".repeat(100)).unwrap();
    let mut model = TinyGpt::new(tiny_config(), 1).unwrap();
    // finite, but any sum of two of them overflows f32
    for p in &mut model.params {
        *p = 3e38;
    }
    model.save(&d.join("huge.safetensors"), 5).unwrap();
    // the TUI's attention map replays each layer of an opened checkpoint: refused, not NaNs drawn
    let Err(err) = model.layer_attention_inputs(b"01", 0) else {
        panic!("an overflowing layer is refused")
    };
    let err = err.to_string();
    assert!(err.contains("not finite") && err.contains("overflow f32"), "{err}");
    refused(
        cmd(d).args(["eval", "--checkpoint", "huge.safetensors", "--data", "text.txt"]),
        &["--checkpoint huge.safetensors", "not a number"],
    );
    refused(
        cmd(d).args([
            "eval",
            "--checkpoint",
            "huge.safetensors",
            "--data",
            "text.txt",
            "--json",
        ]),
        &["huge.safetensors"],
    );
    let out = cmd(d)
        .args([
            "sample",
            "--checkpoint",
            "huge.safetensors",
            "--prompt",
            "01",
            "--gen",
            "20",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("huge.safetensors") && err.contains("not finite"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        "01",
        "nothing drawn from NaN logits"
    );
    refused(
        cmd(d).args([
            "train",
            "--load",
            "huge.safetensors",
            "--data",
            "text.txt",
            "--steps",
            "3",
            "--batch",
            "2",
        ]),
        &["--load huge.safetensors", "not a number"],
    );
}

/// `io` on a decode scenario printed the heading and no table, with exit 0; it now counts the
/// decode steps (their numbers are checked in cli_io.rs).
#[test]
fn io_counts_a_decode_scenario_instead_of_printing_an_empty_table() {
    let dir = tempfile::tempdir().unwrap();
    let decode = scenarios_dir().join("kv_cache_decode.toml");
    let out = cmd(dir.path()).arg("io").arg(&decode).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty());
    assert!(
        text.contains("gqa · forward") && text.contains("  k_cache    global"),
        "{text}"
    );
}

/// The keys of a flat JSON object of numbers, in order, as written (a parser would keep one of
/// two equal keys and hide the other).
fn raw_keys(line: &str, field: &str) -> Vec<String> {
    let start = line.find(&format!("\"{field}\":{{")).unwrap() + field.len() + 4;
    let body = &line[start..start + line[start..].find('}').unwrap()];
    body.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| p.split(':').next().unwrap().trim_matches('"').to_string())
        .collect()
}

/// In decode with rope the rotation's loops (`bb`, `t`) run inside the decode step's loops of the
/// same names: `vars` held `{"bb":0,"t":0,"bb":0,"t":0,…}`.
#[test]
fn trace_objects_of_decode_with_rope_have_unique_keys() {
    let dir = tempfile::tempdir().unwrap();
    let out = cmd(dir.path())
        .arg("trace")
        .arg(scenarios_dir().join("kv_cache_decode.toml"))
        .args(["--format", "jsonl"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rope = 0;
    // after the header line
    for line in text.lines().skip(1) {
        for field in ["vars", "derived"] {
            let keys = raw_keys(line, field);
            let mut unique = keys.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(keys.len(), unique.len(), "{field} repeats a key: {line}");
        }
        let v: Value = serde_json::from_str(line).unwrap();
        rope += usize::from(v["phase"] == "rope");
    }
    assert!(rope > 0, "the scenario rotates q and k");
}

/// FNV-1a as the checkpoint format's checksum uses it.
fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

fn piece(h: &mut u64, bytes: &[u8]) {
    fnv1a(h, &(bytes.len() as u64).to_le_bytes());
    fnv1a(h, bytes);
}

/// Rewrites a weights-only checkpoint of `tiny_config()` with `edit` applied to its metadata and
/// the checksum made right again, so that only the edit is wrong.
fn edit_and_resign(path: &Path, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) {
    let (mut header, data) = split(&std::fs::read(path).unwrap());
    let meta = header["__metadata__"].as_object_mut().unwrap();
    edit(meta);
    let mut keys: Vec<String> = meta.keys().filter(|k| *k != "checksum").cloned().collect();
    keys.sort();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for k in &keys {
        piece(&mut h, k.as_bytes());
        piece(&mut h, meta[k].as_str().unwrap().as_bytes());
    }
    let layout = TinyGpt::new(tiny_config(), 1).unwrap().layout;
    for spec in &layout.specs {
        let info = &header[&spec.name];
        let (s, e) = (
            info["data_offsets"][0].as_u64().unwrap() as usize,
            info["data_offsets"][1].as_u64().unwrap() as usize,
        );
        piece(&mut h, spec.name.as_bytes());
        let dims: Vec<u8> = spec.shape.iter().flat_map(|&d| (d as u64).to_le_bytes()).collect();
        piece(&mut h, &dims);
        fnv1a(&mut h, &data[s..e]);
    }
    header["__metadata__"]["checksum"] = json!(format!("{h:016x}"));
    std::fs::write(path, join(&header, &data)).unwrap();
}

/// `train --rope ''` trained without rotation; `n_kv_heads = "+2"` (Rust's `parse` takes the
/// sign) loaded as 2.
#[test]
fn an_empty_rope_and_a_signed_number_in_checkpoint_metadata_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(
        cmd(d).args([
            "train",
            "--dataset",
            "sort",
            "--seq",
            "8",
            "--dmodel",
            "8",
            "--heads",
            "2",
            "--steps",
            "1",
            "--rope",
            "",
        ]),
        &["--rope", "none, interleaved or half"],
    );
    std::fs::write(d.join("text.txt"), "0123456789".repeat(10)).unwrap();
    weights(&d.join("good.safetensors"));
    // the re-signing is right: an edit that changes nothing loads
    edit_and_resign(&d.join("good.safetensors"), |_| {});
    cmd(d)
        .args(["eval", "--checkpoint", "good.safetensors", "--data", "text.txt"])
        .assert()
        .success();
    for (key, value) in [
        ("n_kv_heads", "+2"),
        ("n_heads", "+2"),
        ("step", "+5"),
        ("seq_len", " 8"),
    ] {
        std::fs::copy(d.join("good.safetensors"), d.join("signed.safetensors")).unwrap();
        edit_and_resign(&d.join("signed.safetensors"), |m| {
            m.insert(key.into(), json!(value));
        });
        refused(
            cmd(d).args(["eval", "--checkpoint", "signed.safetensors", "--data", "text.txt"]),
            &["signed.safetensors", key, "whole number"],
        );
    }
}

/// A dotted key of more parts than the TOML parser's recursion limit came back as "not valid
/// TOML: recursion limit" with no line and column.
#[test]
fn a_toml_error_deep_in_a_dotted_key_has_a_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let deep = vec!["a"; 100].join(".");
    std::fs::write(
        d.join("deep.toml"),
        format!("title = \"t\"\n# a comment\n  {deep} = 1\n"),
    )
    .unwrap();
    refused(cmd(d).args(["check", "deep.toml"]), &["deep.toml:3:3:", "recursion"]);
    std::fs::write(d.join("header.toml"), format!("title = \"t\"\n[{deep}]\nx = 1\n")).unwrap();
    refused(cmd(d).args(["check", "header.toml"]), &["header.toml:2:"]);
}
