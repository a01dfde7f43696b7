//! `train`, `eval` and `sample` through the binary: output formats, resuming, and bad input
//! (each an exit code 2 with one clear message).

use assert_cmd::Command;
use attn_trace_core::kernels::rope::Pairs;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;

/// The binary, without colour.
fn cmd() -> Command {
    let mut c = crate::support::cli::cmd();
    c.env("NO_COLOR", "1");
    c
}

const TINY: &[&str] = &["--seq", "8", "--dmodel", "8", "--heads", "2", "--batch", "2"];

fn train_tiny(dir: &Path, extra: &[&str]) -> Vec<Value> {
    let out = cmd()
        .current_dir(dir)
        .args(["train", "--dataset", "sort", "--json"])
        .args(TINY)
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn train_json_lines_then_resume_eval_and_sample() {
    let dir = tempfile::tempdir().unwrap();
    let lines = train_tiny(
        dir.path(),
        &["--steps", "6", "--log-every", "3", "--save", "m.safetensors"],
    );
    // steps 3 and 6 are logged, then the final line
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["step"], 3);
    assert_eq!(lines[1]["step"], 6);
    for key in ["loss", "val_loss", "tokens_per_s"] {
        assert!(lines[1][key].as_f64().unwrap() > 0.0, "{key}");
    }
    let done = &lines[2];
    assert_eq!(done["done"], true);
    assert_eq!(done["steps"], 6);
    for key in ["loss", "val_loss", "tokens_per_s", "seconds"] {
        assert!(done[key].as_f64().unwrap() > 0.0, "{key}");
    }
    assert!(dir.path().join("m.safetensors").exists());

    // resuming continues the step count; the sizes come from the checkpoint
    let lines = cmd()
        .current_dir(dir.path())
        .args(["train", "--dataset", "sort", "--json", "--batch", "2", "--steps", "2"])
        .args(["--load", "m.safetensors", "--save", "m.safetensors"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let last: Value = serde_json::from_str(String::from_utf8(lines).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(last["steps"], 8);

    // eval: 40 bytes give (40 − 1)/8 = 4 windows of 8 tokens (the last byte only a target)
    std::fs::write(
        dir.path().join("text.txt"),
        b"0123456789|0123456789\n9876543210|0123456",
    )
    .unwrap();
    let out = cmd()
        .current_dir(dir.path())
        .args(["eval", "--checkpoint", "m.safetensors", "--data", "text.txt", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    // one line of JSON and nothing else: the mean loss over the 32 scored tokens
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with('\n') && text.lines().count() == 1, "{text:?}");
    let json: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json.as_object().map(serde_json::Map::len), Some(2), "{text}");
    assert_eq!(json["tokens"], 32, "{text}");
    let loss = json["loss"].as_f64().unwrap();
    assert!(loss.is_finite() && loss > 0.0, "{text}");

    // greedy sampling is deterministic and prints the prompt first
    let sample = |seed: &str| {
        cmd()
            .current_dir(dir.path())
            .args([
                "sample",
                "--checkpoint",
                "m.safetensors",
                "--prompt",
                "31|",
                "--gen",
                "5",
            ])
            .args(["--temp", "0", "--seed", seed])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let a = sample("1");
    assert_eq!(a.len(), 3 + 5 + 1);
    assert!(a.starts_with(b"31|"));
    assert_eq!(a, sample("2"));
}

/// `--window` and `--sinks`: the first line names them, the checkpoint keeps them (resuming
/// needs neither flag, a disagreeing one is refused), sampling from it decodes through the
/// rolling cache and draws the bytes the model gives without one.
#[test]
fn a_sliding_window_trains_saves_resumes_and_samples() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    cmd()
        .current_dir(d)
        .args([
            "train",
            "--dataset",
            "copy",
            "--steps",
            "2",
            "--seq",
            "12",
            "--dmodel",
            "8",
        ])
        .args([
            "--heads",
            "2",
            "--batch",
            "2",
            "--window",
            "4",
            "--sinks",
            "1",
            "--save",
            "w.safetensors",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "(T=12 C=8 L=1 H=2 window=4 sinks=1 attention=naive (auto), B=2)",
        ));
    let loaded = attn_trace_model::checkpoint::load(&d.join("w.safetensors")).unwrap();
    let sliding = loaded.model.config.sliding.unwrap();
    assert_eq!((sliding.w, sliding.sinks), (4, 1));
    cmd()
        .current_dir(d)
        .args([
            "train",
            "--dataset",
            "copy",
            "--batch",
            "2",
            "--steps",
            "3",
            "--load",
            "w.safetensors",
        ])
        .assert()
        .success();
    fails(
        d,
        &["train", "--load", "w.safetensors", "--window", "5"],
        "--window 5 does not match the checkpoint's window 4",
    );
    fails(
        d,
        &["train", "--load", "w.safetensors", "--sinks", "0"],
        "--sinks 0 does not match the checkpoint's sinks 1",
    );
    fails(
        d,
        &["train", "--sinks", "2"],
        "--sinks keep positions visible that a window would hide",
    );
    fails(d, &["train", "--window", "0"], "--window must be 1..=");
    fails(
        d,
        &["train", "--window", "3", "--sinks", "65"],
        "--sinks must be 0..=64, got 65",
    );
    // 30 bytes after a 6-byte prompt: the window of 12 fills and slides, the cache rolls
    let out = cmd()
        .current_dir(d)
        .args([
            "sample",
            "--checkpoint",
            "w.safetensors",
            "--prompt",
            "hello|",
            "--gen",
            "30",
            "--temp",
            "0",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let mut plain = Vec::new();
    loaded
        .model
        .sample_each_without_cache(
            b"hello|",
            &attn_trace_model::SampleOptions {
                n_gen: 30,
                temp: 0.0,
                ..Default::default()
            },
            |b| {
                plain.push(b);
                std::ops::ControlFlow::Continue(())
            },
        )
        .unwrap();
    // the prompt, the bytes, a newline
    let mut want = b"hello|".to_vec();
    want.extend_from_slice(&plain);
    want.push(b'\n');
    assert_eq!(out, want);
}

/// `--kv-heads` and `--rope`: the plain output names them, the checkpoint keeps them (resuming
/// needs neither flag, and a disagreeing one is refused), and sampling from it works.
#[test]
fn grouped_heads_and_rotary_positions_train_save_resume_and_sample() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    cmd()
        .current_dir(d)
        .args(["train", "--dataset", "sort", "--steps", "2", "--log-every", "1"])
        .args([
            "--seq",
            "8",
            "--dmodel",
            "8",
            "--heads",
            "4",
            "--kv-heads",
            "2",
            "--rope",
            "half",
        ])
        .args(["--batch", "2", "--save", "g.safetensors"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "(T=8 C=8 L=1 H=4 H_kv=2 rope=half attention=naive (auto), B=2)",
        ));
    let loaded = attn_trace_model::checkpoint::load(&d.join("g.safetensors")).unwrap();
    assert_eq!(loaded.model.config.kv_heads(), 2);
    assert_eq!(loaded.model.config.rope.map(Pairs::name), Some("half"));
    let lines = cmd()
        .current_dir(d)
        .args(["train", "--dataset", "sort", "--json", "--batch", "2", "--steps", "1"])
        .args(["--load", "g.safetensors", "--kv-heads", "2", "--rope", "half"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let last: Value = serde_json::from_str(String::from_utf8(lines).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(last["steps"], 3);
    fails(
        d,
        &["train", "--load", "g.safetensors", "--kv-heads", "1"],
        "--kv-heads 1 does not match the checkpoint's n_kv_heads 2",
    );
    fails(
        d,
        &["train", "--load", "g.safetensors", "--rope", "interleaved"],
        "--rope interleaved does not match the checkpoint's rope half",
    );
    // resuming a grouped checkpoint on flash: the checkpoint's heads are checked as the flags are
    fails(
        d,
        &[
            "train",
            "--load",
            "g.safetensors",
            "--dataset",
            "sort",
            "--attention",
            "flash",
        ],
        "--attention flash needs as many key/value heads as heads (H_kv = 2, H = 4): it runs on the MHA layout",
    );
    let out = cmd()
        .current_dir(d)
        .args([
            "sample",
            "--checkpoint",
            "g.safetensors",
            "--prompt",
            "31|",
            "--gen",
            "12",
            "--temp",
            "0",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(out.len(), 3 + 12 + 1);
}

#[test]
fn attention_flash_trains_to_the_naive_loss() {
    // `train --attention flash`: the same loss and validation loss as the naive kernels
    let dir = tempfile::tempdir().unwrap();
    let last = |extra: &[&str]| {
        let lines = train_tiny(dir.path(), &[&["--steps", "20", "--log-every", "20"], extra].concat());
        let done = lines.last().unwrap().clone();
        (done["loss"].as_f64().unwrap(), done["val_loss"].as_f64().unwrap())
    };
    let (naive, flash) = (last(&[]), last(&["--attention", "flash"]));
    assert!(
        (naive.0 - flash.0).abs() <= 1e-4,
        "loss: naive {naive:?}, flash {flash:?}"
    );
    assert!(
        (naive.1 - flash.1).abs() <= 1e-4,
        "val loss: naive {naive:?}, flash {flash:?}"
    );
}

#[test]
fn plain_output_without_json() {
    let dir = tempfile::tempdir().unwrap();
    cmd()
        .current_dir(dir.path())
        .args(["train", "--dataset", "copy", "--steps", "2", "--log-every", "1"])
        .args(TINY)
        .assert()
        .success()
        .stdout(predicate::str::contains("step      2  loss").and(predicate::str::contains("done at step 2")));
    // the first line names the kernel, and says when it was chosen by the shape: flash from
    // T = 512 on, unless the heads share key/value heads
    let first = |extra: &[&str]| {
        let out = cmd()
            .current_dir(dir.path())
            .args(["train", "--steps", "1", "--log-every", "1"])
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string()
    };
    let cases: [(&[&str], &str); 5] = [
        (
            &["--seq", "8", "--attention", "flash"],
            "(T=8 C=8 L=1 H=2 attention=flash, B=2)",
        ),
        (
            &["--seq", "512", "--attention", "naive"],
            "(T=512 C=8 L=1 H=2 attention=naive, B=2)",
        ),
        (&["--seq", "8"], "(T=8 C=8 L=1 H=2 attention=naive (auto), B=2)"),
        (&["--seq", "512"], "(T=512 C=8 L=1 H=2 attention=flash (auto), B=2)"),
        (
            &["--seq", "512", "--kv-heads", "1"],
            " H=2 H_kv=1 attention=naive (auto), B=2)",
        ),
    ];
    for (extra, want) in cases {
        let args = [&TINY[2..], extra].concat();
        let line = first(&args);
        assert!(line.contains(want), "{args:?}: {line}");
    }
}

/// Runs `args` in `dir` and expects exit code 2 with `needle` in the one-line message.
fn fails(dir: &Path, args: &[&str], needle: &str) {
    let out = cmd().current_dir(dir).args(args).assert().code(2).get_output().clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
}

#[test]
fn bad_arguments_exit_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("short.txt"), b"tiny").unwrap();
    std::fs::write(d.join("garbage.safetensors"), b"this is not a checkpoint at all").unwrap();
    let mut lying = (1u64 << 40).to_le_bytes().to_vec();
    lying.extend_from_slice(b"{}");
    std::fs::write(d.join("lying.safetensors"), lying).unwrap();

    fails(d, &["train", "--data", "nope.txt"], "nope.txt");
    fails(
        d,
        &["train", "--attention", "tiled"],
        "--attention tiled: expected one of naive, flash",
    );
    fails(d, &["train", "--data", "short.txt", "--seq", "8"], "at least 18 bytes");
    fails(d, &["train", "--dataset", "poems"], "kernels, copy, reverse, sort");
    fails(
        d,
        &["train", "--heads", "3", "--dmodel", "64"],
        "--heads must divide d_model: 64 is not a multiple of 3",
    );
    fails(
        d,
        &["train", "--heads", "4", "--kv-heads", "3"],
        "--kv-heads must divide the heads: 4 query heads cannot be shared out among 3 key/value heads (H % H_kv ≠ 0; try 1, 2, 4)",
    );
    fails(d, &["train", "--kv-heads", "0"], "--kv-heads must be 1..=");
    fails(
        d,
        &[
            "train",
            "--attention",
            "flash",
            "--heads",
            "4",
            "--kv-heads",
            "2",
            "--dataset",
            "copy",
        ],
        "--attention flash needs as many key/value heads as heads (H_kv = 2, H = 4): it runs on the MHA layout",
    );
    fails(
        d,
        &["train", "--rope", "spiral"],
        "--rope must be none, interleaved or half, got \"spiral\"",
    );
    fails(
        d,
        &["train", "--rope", "half", "--dmodel", "12", "--heads", "4"],
        "--rope turns pairs of channels, so a head needs an even number of them: D = d_model / heads = 12 / 4 = 3",
    );
    fails(d, &["train", "--seq", "0"], "--seq must be 1..=");
    fails(d, &["train", "--lr", "-1"], "--lr must be in (0, 1]");
    fails(d, &["train", "--batch", "0"], "--batch must be 1..=");
    fails(d, &["train", "--save", "no/such/dir/m.safetensors"], "does not exist");
    fails(d, &["train", "--load", "garbage.safetensors"], "garbage.safetensors");
    fails(d, &["train", "--load", "lying.safetensors"], "header claims");
    fails(d, &["train", "--load", "missing.safetensors"], "missing.safetensors");
    fails(
        d,
        &["eval", "--checkpoint", "garbage.safetensors", "--data", "short.txt"],
        "not a safetensors checkpoint",
    );
    fails(
        d,
        &["sample", "--checkpoint", "garbage.safetensors", "--prompt", "x"],
        "garbage.safetensors",
    );

    // a real checkpoint, then input that does not fit it
    train_tiny(d, &["--steps", "1", "--save", "m.safetensors"]);
    fails(
        d,
        &["train", "--load", "m.safetensors", "--dmodel", "16"],
        "--dmodel 16 does not match the checkpoint's d_model 8",
    );
    fails(
        d,
        &["eval", "--checkpoint", "m.safetensors", "--data", "short.txt"],
        "at least 9 bytes",
    );
    fails(
        d,
        &["sample", "--checkpoint", "m.safetensors", "--prompt", ""],
        "--prompt is empty",
    );
    fails(
        d,
        &[
            "sample",
            "--checkpoint",
            "m.safetensors",
            "--prompt",
            "x",
            "--temp",
            "-1",
        ],
        "--temp",
    );
    // a truncated copy of the real checkpoint
    let bytes = std::fs::read(d.join("m.safetensors")).unwrap();
    std::fs::write(d.join("cut.safetensors"), &bytes[..bytes.len() / 2]).unwrap();
    fails(
        d,
        &["sample", "--checkpoint", "cut.safetensors", "--prompt", "x"],
        "truncated",
    );
}

/// Ctrl-C (SIGINT) stops between steps, saves first with `--save`, and reports it.
#[cfg(unix)]
#[test]
fn ctrl_c_stops_cleanly_and_saves() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("attn-trace"))
        .current_dir(dir.path())
        .args([
            "train",
            "--dataset",
            "sort",
            "--json",
            "--steps",
            "1000000",
            "--log-every",
            "1",
        ])
        .args(TINY)
        .args(["--save", "m.safetensors"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // training is under way once the first step is logged
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(first["step"], 1);
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let last: Value = serde_json::from_str(&lines.last().unwrap().unwrap()).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(last["done"], true);
    assert_eq!(last["interrupted"], true);
    let steps = last["steps"].as_u64().unwrap();
    assert!((1..1_000_000).contains(&steps));
    let saved = attn_trace_model::checkpoint::load(&dir.path().join("m.safetensors")).unwrap();
    assert_eq!(saved.step, steps);
}

#[test]
fn the_number_of_threads_does_not_change_the_numbers() {
    // the batch is cut into a fixed number of shards whatever the pool's size, and each step
    // runs on the pool however many threads it has: one, two or three threads give the same
    // losses and the same saved weights, bit for bit
    let dir = tempfile::tempdir().unwrap();
    let run = |threads: &str| {
        let save = format!("m{threads}.safetensors");
        let out = cmd()
            .current_dir(dir.path())
            .env("RAYON_NUM_THREADS", threads)
            .args("train --dataset sort --json --steps 4 --log-every 1 --batch 3".split(' '))
            .args(["--seq", "8", "--dmodel", "8", "--heads", "2", "--save", &save])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let losses: Vec<String> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter_map(|v| v.get("loss").map(|l| (l.to_string(), v["val_loss"].to_string())))
            .map(|(l, v)| format!("{l} {v}"))
            .collect();
        let saved = attn_trace_model::checkpoint::load(&dir.path().join(save)).unwrap();
        let state = saved.state.expect("the optimizer state is saved");
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        (
            losses,
            [bits(&saved.model.params), bits(&state.opt.m), bits(&state.opt.v)],
        )
    };
    let (one, weights_one) = run("1");
    assert_eq!(one.len(), 5, "four steps and the final line: {one:?}");
    for threads in ["2", "3"] {
        let (losses, weights) = run(threads);
        assert_eq!(losses, one, "{threads} threads");
        assert!(
            weights == weights_one,
            "{threads} threads saved other weights or moments"
        );
    }
}

/// The text says what each loss is, and is right: a logged step's loss is the mean over the
/// steps since the previous line (the per-step losses of the same run, logged every step, give
/// it), and the last line's is the last step's batch alone.
#[test]
fn the_text_says_which_steps_each_loss_is_the_mean_of() {
    let dir = tempfile::tempdir().unwrap();
    let run = |every: &str, json: bool| {
        let mut c = cmd();
        c.current_dir(dir.path())
            .args([
                "--lang",
                "en",
                "train",
                "--dataset",
                "copy",
                "--steps",
                "4",
                "--log-every",
                every,
            ])
            .args(TINY);
        if json {
            c.arg("--json");
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    // each step's own loss, from the JSON lines logged every step
    let per_step: Vec<f64> = run("1", true)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v.get("done").is_none())
        .map(|v| v["loss"].as_f64().unwrap())
        .collect();
    assert_eq!(per_step.len(), 4);
    let text = run("2", false);
    let mean = |a: usize, b: usize| per_step[a - 1..b].iter().sum::<f64>() / (b - a + 1) as f64;
    for (step, a) in [(2, 1), (4, 3)] {
        let want = format!("step {step:>6}  loss {:.4} (mean of steps {a}-{step})", mean(a, step));
        assert!(text.contains(&want), "{want:?} not in\n{text}");
    }
    let last = format!("done at step 4: loss {:.4} (the last step's batch)", per_step[3]);
    assert!(text.contains(&last), "{last:?} not in\n{text}");
    // every step logged: each line is its own step's batch
    let one = run("1", false);
    assert!(one.contains("(that step's batch)"), "{one}");
    // the JSON documentation says the same
    let help = String::from_utf8(cmd().args(["train", "--help"]).output().unwrap().stdout).unwrap();
    assert!(
        help.contains("mean training loss") && help.contains("last step's batch"),
        "{help}"
    );
    // in Chinese too, with one unit of speed on every line
    let out = cmd()
        .current_dir(dir.path())
        .args([
            "--lang",
            "zh-CN",
            "train",
            "--dataset",
            "copy",
            "--steps",
            "4",
            "--log-every",
            "2",
        ])
        .args(TINY)
        .output()
        .unwrap();
    let zh = String::from_utf8(out.stdout).unwrap();
    assert!(
        zh.contains("（第 1-2 步的平均）") && zh.contains("（最后一步的批次）"),
        "{zh}"
    );
    assert_eq!(zh.matches("token/秒").count(), 3, "{zh}");
    assert!(!zh.contains("token/s"), "{zh}");
}
