//! The adversarial suite: hostile files and failing outputs, through the real binary.
//!
//! Crafted checkpoints, special files (FIFOs, devices, sparse giants), destinations that are not
//! plain files, standard output that is closed or full, signals in the middle of a write, and bad
//! flags. Each command runs under an address-space limit and a time limit, so a regression that
//! believes a hostile file (allocating what it claims, reading a device to the end, waiting on a
//! FIFO) fails its test instead of eating the machine. Big files are sparse.
//!
//! The promise held here is docs/cli.md's: bad input is one line naming what is wrong, exit
//! code 2, never a panic; a failing output is one `error:` line and exit code 1 (a closed pipe
//! ends quietly); and nothing a user saved is lost or left half written.

use assert_cmd::Command;
use attn_trace_model::{Config, Dataset, TinyGpt, Trainer};
use predicates::prelude::*;
use serde_json::{Value, json};
use std::ffi::CString;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Address space the binary may use: a small model, a scenario and the program itself fit many
/// times over; what a lying header or `/dev/zero` asks for does not.
pub(crate) const MEMORY_LIMIT: u64 = 1 << 30;
/// Longest any command here may take.
pub(crate) const TIME_LIMIT: Duration = Duration::from_secs(30);

pub(crate) fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("attn-trace")
}

/// Applies the memory limit to a command about to start.
pub(crate) fn limit_memory(c: &mut std::process::Command) {
    // SAFETY: setrlimit is async-signal-safe and touches nothing but the child's limits.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: MEMORY_LIMIT,
                rlim_max: MEMORY_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &raw const lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

pub(crate) fn std_cmd(dir: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(bin());
    c.current_dir(dir).env("NO_COLOR", "1");
    limit_memory(&mut c);
    c
}

/// The binary in `dir`, limited in memory and time, its output captured.
pub(crate) fn cmd(dir: &Path) -> Command {
    let mut c = Command::from_std(std_cmd(dir));
    c.timeout(TIME_LIMIT);
    c
}

/// Expects exit code 2 and exactly one line on stderr, `error: …`, containing every needle.
pub(crate) fn refused(c: &mut Command, needles: &[&str]) -> String {
    let out = c.assert().get_output().clone();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected exit code 2; status {:?}, stderr:\n{err}",
        out.status
    );
    assert!(err.starts_with("error: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "expected {n:?} in: {err}");
    }
    err
}

pub(crate) fn tiny_config() -> Config {
    Config {
        seq_len: 8,
        d_model: 8,
        n_layers: 1,
        n_heads: 2,
        ..Config::default()
    }
}

/// A real checkpoint with optimizer state, after a few steps.
pub(crate) fn trained(path: &Path) {
    let data = Dataset::builtin("sort", 8).unwrap();
    let mut t = Trainer::new(TinyGpt::new(tiny_config(), 3).unwrap(), data, 2, 1e-3, 3).unwrap();
    for _ in 0..2 {
        t.step();
    }
    t.save(path).unwrap();
}

/// A weights-only checkpoint.
pub(crate) fn weights(path: &Path) {
    TinyGpt::new(tiny_config(), 1).unwrap().save(path, 5).unwrap();
}

/// A safetensors file's header (as JSON) and its data.
pub(crate) fn split(bytes: &[u8]) -> (Value, Vec<u8>) {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    (header, bytes[8 + n..].to_vec())
}

pub(crate) fn join(header: &Value, data: &[u8]) -> Vec<u8> {
    let text = serde_json::to_vec(header).unwrap();
    let mut out = (text.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&text);
    out.extend_from_slice(data);
    out
}

/// Rewrites a checkpoint's header in place.
fn edit_header(path: &Path, edit: impl FnOnce(&mut Value)) {
    let (mut header, data) = split(&std::fs::read(path).unwrap());
    edit(&mut header);
    std::fs::write(path, join(&header, &data)).unwrap();
}

/// FNV-1a over bytes, as the first version of the checkpoint format checksummed its tensors.
fn fnv1a(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// A checkpoint in the first version of the format (`format = attn-trace-tinygpt`, a checksum
/// over the tensor data only), holding `model` and optimizer moments `m`, `v` with `meta`
/// overriding the optimizer's settings; the checksum is right, so only the values are wrong.
fn v1_with_state(path: &Path, m: &[f32], v: &[f32], meta: &[(&str, &str)]) {
    let model = TinyGpt::new(tiny_config(), 1).unwrap();
    let le = |x: &[f32]| -> Vec<u8> { x.iter().flat_map(|f| f.to_le_bytes()).collect() };
    let mut named: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for s in &model.layout.specs {
        let r = s.offset..s.offset + s.len;
        named.push((s.name.clone(), s.shape.clone(), le(&model.params[r.clone()])));
        named.push((format!("adamw.m.{}", s.name), s.shape.clone(), le(&m[r.clone()])));
        named.push((format!("adamw.v.{}", s.name), s.shape.clone(), le(&v[r])));
    }
    let mut checksum = 0xcbf2_9ce4_8422_2325u64;
    for (_, _, b) in &named {
        fnv1a(&mut checksum, b);
    }
    let mut metadata: std::collections::HashMap<String, String> = [
        ("format", "attn-trace-tinygpt"),
        ("vocab_size", "256"),
        ("seq_len", "8"),
        ("d_model", "8"),
        ("n_layers", "1"),
        ("n_heads", "2"),
        ("step", "2"),
        ("lr", "0.001"),
        ("beta1", "0.9"),
        ("beta2", "0.999"),
        ("eps", "0.00000001"),
        ("weight_decay", "0.01"),
        ("adamw_t", "2"),
        ("data_seed", "3"),
        ("data_rng_pos", "64"),
        ("dataset", "sort"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    metadata.insert("checksum".into(), format!("{checksum:016x}"));
    for (k, v) in meta {
        metadata.insert(k.to_string(), v.to_string());
    }
    let views: Vec<_> = named
        .iter()
        .map(|(n, s, b)| {
            let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.clone(), b).unwrap();
            (n.clone(), view)
        })
        .collect();
    std::fs::write(path, safetensors::serialize(views, Some(metadata)).unwrap()).unwrap();
}

fn n_params() -> usize {
    TinyGpt::new(tiny_config(), 1).unwrap().num_params()
}

pub(crate) fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {}",
        path.display()
    );
}

/// Our own character device node in the test's folder (never one under /dev), as /dev/null
/// (1, 3) or /dev/full (1, 7). Needs root; None elsewhere (or when the container forbids it).
fn char_device(path: &Path, minor: u32) -> Option<()> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; mknod only creates the node.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, minor)) };
    // the node must also be usable: some containers allow creating it but not opening it
    (rc == 0 && std::fs::OpenOptions::new().write(true).open(path).is_ok()).then_some(())
}

/// A sparse file of `len` bytes that starts with `head`.
fn sparse(path: &Path, head: &[u8], len: u64) {
    std::fs::write(path, head).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

pub(crate) fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

const SCENARIO: &str = "title = \"small\"\n[shape]\nB = 1\nT = 3\nC = 4\nH = 2\n";

// ---------------------------------------------------------------------------------------------
// 1–4: checkpoints are untrusted input

/// Issue item 1: a valid safetensors file of a few hundred bytes whose metadata claims the
/// largest configuration (51.6 GB of weights) is refused from its size, before any allocation.
#[test]
fn a_tiny_file_claiming_a_huge_model_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = vec![0u8; 16];
    let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2, 2], &data).unwrap();
    let meta: std::collections::HashMap<String, String> = [
        ("format", "attn-trace-tinygpt"),
        ("vocab_size", "256"),
        ("seq_len", "4096"),
        ("d_model", "4096"),
        ("n_layers", "64"),
        ("n_heads", "1"),
        ("step", "0"),
        ("checksum", "0000000000000000"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let bytes = safetensors::serialize([("wte", view)], Some(meta)).unwrap();
    assert!(bytes.len() < 400, "{}", bytes.len());
    std::fs::write(d.join("huge.safetensors"), &bytes).unwrap();
    std::fs::write(d.join("text.txt"), "0123456789".repeat(10)).unwrap();
    for args in [
        vec!["eval", "--checkpoint", "huge.safetensors", "--data", "text.txt"],
        vec!["sample", "--checkpoint", "huge.safetensors", "--prompt", "a"],
        vec!["train", "--load", "huge.safetensors", "--data", "text.txt"],
    ] {
        refused(cmd(d).args(&args), &["huge.safetensors", "bytes"]);
    }
}

/// Issue item 2: an absurd header length is checked against the file's size after reading 8
/// bytes; a junk file's few-byte header is refused without reading the gigabytes after it.
#[test]
fn lying_header_lengths_and_giant_junk_files_are_refused_without_reading_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let giant = (39u64 << 30) / 10; // 3.9 GiB, sparse
    sparse(&d.join("lying.safetensors"), &(1u64 << 60).to_le_bytes(), giant);
    let mut junk = 16u64.to_le_bytes().to_vec();
    junk.extend_from_slice(b"not json at all!");
    sparse(&d.join("junk.safetensors"), &junk, giant);
    let start = Instant::now();
    refused(
        cmd(d).args(["sample", "--checkpoint", "lying.safetensors", "--prompt", "a"]),
        &["lying.safetensors", "header"],
    );
    refused(
        cmd(d).args(["sample", "--checkpoint", "junk.safetensors", "--prompt", "a"]),
        &["junk.safetensors"],
    );
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}

/// Issue item 3: the checksum is required, covers the metadata, and cannot be switched off by
/// renaming its key; tensors the configuration does not have are named.
#[test]
fn the_checksum_is_required_and_covers_the_metadata_and_extra_tensors_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("text.txt"), "0123456789".repeat(10)).unwrap();
    let eval = |file: &str| {
        let mut c = cmd(d);
        c.args(["eval", "--checkpoint", file, "--data", "text.txt"]);
        c
    };
    weights(&d.join("good.safetensors"));
    eval("good.safetensors").assert().success();

    // the heads of a layer can be regrouped without changing a shape (4 heads, each still its
    // own key/value head): only the checksum sees it
    std::fs::copy(d.join("good.safetensors"), d.join("heads.safetensors")).unwrap();
    edit_header(&d.join("heads.safetensors"), |h| {
        h["__metadata__"]["n_heads"] = json!("4");
        h["__metadata__"]["n_kv_heads"] = json!("4");
    });
    refused(&mut eval("heads.safetensors"), &["heads.safetensors", "checksum"]);

    // the step and the optimizer's settings are covered too
    trained(&d.join("state.safetensors"));
    edit_header(&d.join("state.safetensors"), |h| {
        h["__metadata__"]["lr"] = json!("0.5");
    });
    refused(&mut eval("state.safetensors"), &["state.safetensors", "checksum"]);

    // no checksum at all, or one whose key lost a bit
    std::fs::copy(d.join("good.safetensors"), d.join("none.safetensors")).unwrap();
    edit_header(&d.join("none.safetensors"), |h| {
        h["__metadata__"].as_object_mut().unwrap().remove("checksum");
    });
    refused(&mut eval("none.safetensors"), &["none.safetensors", "checksum"]);
    std::fs::copy(d.join("good.safetensors"), d.join("flip.safetensors")).unwrap();
    edit_header(&d.join("flip.safetensors"), |h| {
        let meta = h["__metadata__"].as_object_mut().unwrap();
        let sum = meta.remove("checksum").unwrap();
        // one bit of the last letter flipped: 'm' (0x6d) becomes 'l' (0x6c)
        meta.insert("checksul".into(), sum);
    });
    refused(&mut eval("flip.safetensors"), &["flip.safetensors", "checksul"]);

    // a tensor the configuration does not have
    let (header, data) = split(&std::fs::read(d.join("good.safetensors")).unwrap());
    let mut header = header;
    let end = data.len();
    header["extra.weight"] = json!({"dtype": "F32", "shape": [2], "data_offsets": [end, end + 8]});
    let mut data = data;
    data.extend_from_slice(&[0u8; 8]);
    std::fs::write(d.join("extra.safetensors"), join(&header, &data)).unwrap();
    refused(&mut eval("extra.safetensors"), &["extra.safetensors", "extra.weight"]);
}

/// Issue item 4: the optimizer state is validated on load (here in files of the first format
/// version, whose checksum is right).
#[test]
fn optimizer_state_from_a_file_is_validated() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("text.txt"), "0123456789".repeat(10)).unwrap();
    let n = n_params();
    let zeros = vec![0.0f32; n];
    let mut nan_v = vec![0.0f32; n];
    nan_v[3] = f32::NAN;
    let mut negative_v = vec![0.0f32; n];
    negative_v[5] = -1.0;
    let mut inf_m = vec![0.0f32; n];
    inf_m[0] = f32::INFINITY;

    v1_with_state(&d.join("ok.safetensors"), &zeros, &zeros, &[]);
    cmd(d)
        .args([
            "train",
            "--load",
            "ok.safetensors",
            "--data",
            "text.txt",
            "--steps",
            "1",
        ])
        .args(["--batch", "2"])
        .assert()
        .success();

    // (file name, m, v, metadata overrides, what the message names)
    type Case<'a> = (&'a str, Vec<f32>, Vec<f32>, Vec<(&'a str, &'a str)>, &'a str);
    let cases: Vec<Case> = vec![
        ("nan_v", zeros.clone(), nan_v, vec![], "adamw.v.wte"),
        ("negative_v", zeros.clone(), negative_v, vec![], "adamw.v.wte"),
        ("inf_m", inf_m, zeros.clone(), vec![], "adamw.m.wte"),
        ("beta1", zeros.clone(), zeros.clone(), vec![("beta1", "2")], "beta1"),
        ("beta2", zeros.clone(), zeros.clone(), vec![("beta2", "1")], "beta2"),
        ("eps", zeros.clone(), zeros.clone(), vec![("eps", "0")], "eps"),
        (
            "decay",
            zeros.clone(),
            zeros.clone(),
            vec![("weight_decay", "-1")],
            "weight_decay",
        ),
        ("lr", zeros.clone(), zeros.clone(), vec![("lr", "-1")], "metadata 'lr'"),
        (
            "huge_lr",
            zeros.clone(),
            zeros.clone(),
            vec![("lr", "1e30")],
            "learning rate",
        ),
        ("t", zeros.clone(), zeros.clone(), vec![("adamw_t", "3")], "adamw_t"),
    ];
    for (name, m, v, meta, needle) in cases {
        let file = format!("{name}.safetensors");
        v1_with_state(&d.join(&file), &m, &v, &meta);
        refused(
            cmd(d).args(["train", "--load", &file, "--data", "text.txt", "--steps", "1"]),
            &[&file, needle],
        );
    }
    // a learning rate out of train's range stops resuming at it, not using the weights
    cmd(d)
        .args(["eval", "--checkpoint", "huge_lr.safetensors", "--data", "text.txt"])
        .assert()
        .success();
    cmd(d)
        .args([
            "train",
            "--load",
            "huge_lr.safetensors",
            "--data",
            "text.txt",
            "--steps",
            "1",
        ])
        .args(["--batch", "2", "--lr", "0.001"])
        .assert()
        .success();
}

/// Issue item 5: `--lr` is checked as the train form checks it, and training that diverges
/// stops with one line and leaves the saved checkpoint as it was.
#[test]
fn a_runaway_learning_rate_is_refused_and_divergence_never_overwrites_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("m.safetensors"), b"the previous checkpoint").unwrap();
    for lr in ["1e30", "2", "0", "nan", "inf"] {
        refused(
            cmd(d).args(["train", "--dataset", "sort", "--lr", lr, "--save", "m.safetensors"]),
            &["--lr", "(0, 1]"],
        );
    }
    assert_eq!(
        std::fs::read(d.join("m.safetensors")).unwrap(),
        b"the previous checkpoint"
    );

    // weights so large that the first forward pass overflows: the loss is not finite, which
    // is the checkpoint's doing, before any step (issue 34: one line naming it, exit code 2)
    let mut model = TinyGpt::new(tiny_config(), 1).unwrap();
    model.params.iter_mut().for_each(|p| *p = 3e38);
    model.save(&d.join("big.safetensors"), 0).unwrap();
    let before = std::fs::read(d.join("big.safetensors")).unwrap();
    let out = cmd(d)
        .args([
            "train",
            "--load",
            "big.safetensors",
            "--dataset",
            "sort",
            "--batch",
            "2",
        ])
        .args(["--steps", "5", "--save", "big.safetensors"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: --load big.safetensors") && err.contains("not a number"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(
        std::fs::read(d.join("big.safetensors")).unwrap(),
        before,
        "left as it was"
    );
    assert_eq!(names(d), ["big.safetensors", "m.safetensors"]);
}

// ---------------------------------------------------------------------------------------------
// 6–7: writing files

/// A reader on a FIFO that never blocks: opened before the writer, drained until `done`.
struct FifoReader {
    file: std::fs::File,
    got: Vec<u8>,
}

impl FifoReader {
    fn open(path: &Path) -> FifoReader {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .unwrap();
        FifoReader { file, got: Vec::new() }
    }

    /// Reads whatever is there now.
    fn drain(&mut self) {
        let mut buf = [0u8; 65536];
        loop {
            match self.file.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => self.got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) => panic!("{e}"),
            }
        }
    }
}

/// Runs `c` while draining `fifo`; returns the exit status and what came through the FIFO.
fn run_into_fifo(mut c: std::process::Command, fifo: &Path) -> (std::process::ExitStatus, Vec<u8>) {
    let mut reader = FifoReader::open(fifo);
    let mut child = c.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        reader.drain();
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TIME_LIMIT {
            child.kill().unwrap();
            panic!("timed out");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    reader.drain();
    (status, reader.got)
}

/// Issue item 6: a FIFO or a character device is written through, not replaced; a symbolic link
/// is followed; a socket is refused; an existing file keeps its permissions.
#[test]
fn destinations_that_are_not_plain_files_are_written_through_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();

    // a FIFO: the export streams through it, and it is still a FIFO afterwards
    mkfifo(&d.join("events.fifo"));
    let mut c = std_cmd(d);
    c.args(["trace", "s.toml", "--phase", "scores", "-o", "events.fifo"]);
    let (status, got) = run_into_fifo(c, &d.join("events.fifo"));
    assert!(status.success(), "{status:?}");
    let text = String::from_utf8(got).unwrap();
    assert!(
        text.lines().count() > 10 && text.starts_with("{\"format\":\"attn-trace-trace\""),
        "{text}"
    );
    assert!(
        text.lines().nth(1).is_some_and(|l| l.starts_with("{\"seq\":")),
        "{text}"
    );
    assert!(
        std::fs::symlink_metadata(d.join("events.fifo"))
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // `train --save` into a FIFO: the checkpoint's bytes come through it
    let mut c = std_cmd(d);
    c.args([
        "train",
        "--dataset",
        "sort",
        "--seq",
        "8",
        "--dmodel",
        "8",
        "--heads",
        "2",
    ])
    .args(["--batch", "2", "--steps", "1", "--save", "events.fifo"]);
    let (status, got) = run_into_fifo(c, &d.join("events.fifo"));
    assert!(status.success(), "{status:?}");
    assert!(got.len() > 1000 && got[8] == b'{', "{} bytes", got.len());
    assert!(
        std::fs::symlink_metadata(d.join("events.fifo"))
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // a FIFO that nobody reads: one line at once, not a wait without end
    refused(
        cmd(d).args(["trace", "s.toml", "-o", "events.fifo"]),
        &["events.fifo", "no process is reading"],
    );
    assert!(
        std::fs::symlink_metadata(d.join("events.fifo"))
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // our own null device (root only): written to, still a device
    if char_device(&d.join("null"), 3).is_some() {
        cmd(d).args(["trace", "s.toml", "-o", "null"]).assert().success();
        cmd(d)
            .args([
                "train",
                "--dataset",
                "sort",
                "--seq",
                "8",
                "--dmodel",
                "8",
                "--heads",
                "2",
            ])
            .args(["--batch", "2", "--steps", "1", "--save", "null"])
            .assert()
            .success();
        assert!(
            std::fs::symlink_metadata(d.join("null"))
                .unwrap()
                .file_type()
                .is_char_device()
        );
    } else {
        eprintln!("not root: the character-device case is skipped");
    }

    // a socket cannot be replaced by a file
    let _listener = std::os::unix::net::UnixListener::bind(d.join("sock")).unwrap();
    refused(cmd(d).args(["trace", "s.toml", "-o", "sock"]), &["sock", "socket"]);
    // before any training, not after
    refused(
        cmd(d).args(["train", "--dataset", "sort", "--steps", "1000000", "--save", "sock"]),
        &["--save sock", "socket"],
    );
    assert!(
        std::fs::symlink_metadata(d.join("sock"))
            .unwrap()
            .file_type()
            .is_socket()
    );

    // a symbolic link is followed: the file it points to is replaced, the link stays
    std::fs::create_dir(d.join("real")).unwrap();
    std::fs::write(d.join("real/events.jsonl"), "old").unwrap();
    std::os::unix::fs::symlink("real/events.jsonl", d.join("link.jsonl")).unwrap();
    cmd(d).args(["trace", "s.toml", "-o", "link.jsonl"]).assert().success();
    assert!(
        std::fs::symlink_metadata(d.join("link.jsonl"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let text = std::fs::read_to_string(d.join("real/events.jsonl")).unwrap();
    assert!(text.starts_with("{\"format\":\"attn-trace-trace\","), "{text}");
    // a dangling link names the file to create
    std::os::unix::fs::symlink("real/new.jsonl", d.join("dangling.jsonl")).unwrap();
    cmd(d)
        .args(["trace", "s.toml", "-o", "dangling.jsonl"])
        .assert()
        .success();
    assert!(
        std::fs::symlink_metadata(d.join("dangling.jsonl"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(d.join("real/new.jsonl"))
            .unwrap()
            .starts_with("{\"format\":\"attn-trace-trace\",")
    );
    assert_eq!(
        names(&d.join("real")),
        ["events.jsonl", "new.jsonl"],
        "no temporary file left"
    );

    // permissions are kept: a private checkpoint stays private, a shared export stays shared
    std::fs::write(d.join("m.safetensors"), b"old").unwrap();
    std::fs::set_permissions(d.join("m.safetensors"), std::fs::Permissions::from_mode(0o600)).unwrap();
    cmd(d)
        .args([
            "train",
            "--dataset",
            "sort",
            "--seq",
            "8",
            "--dmodel",
            "8",
            "--heads",
            "2",
        ])
        .args(["--batch", "2", "--steps", "1", "--save", "m.safetensors"])
        .assert()
        .success();
    assert_eq!(mode(&d.join("m.safetensors")), 0o600);
    std::fs::write(d.join("shared.csv"), b"old").unwrap();
    std::fs::set_permissions(d.join("shared.csv"), std::fs::Permissions::from_mode(0o664)).unwrap();
    cmd(d)
        .args(["trace", "s.toml", "--format", "csv", "-o", "shared.csv"])
        .assert()
        .success();
    assert_eq!(mode(&d.join("shared.csv")), 0o664);
    assert!(
        std::fs::read_to_string(d.join("shared.csv"))
            .unwrap()
            .starts_with("seq,variant")
    );
}

/// A scenario whose export takes seconds (several million events), for interrupting.
const BIG: &str = "title = \"big\"\n[shape]\nB = 1\nT = 48\nC = 32\nH = 4\n";

/// Files in `d` other than `keep`.
fn others(d: &Path, keep: &[&str]) -> Vec<String> {
    names(d).into_iter().filter(|n| !keep.contains(&n.as_str())).collect()
}

/// Issue item 7: Ctrl-C or SIGTERM in the middle of an export removes the temporary file and
/// leaves the previous output as it was.
#[test]
fn a_signal_in_the_middle_of_a_write_leaves_no_debris_and_the_old_file_whole() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("big.toml"), BIG).unwrap();
        std::fs::write(d.join("out.jsonl"), "previous\n").unwrap();
        let keep = ["big.toml", "out.jsonl"];
        let mut child = std_cmd(d)
            .args(["trace", "big.toml", "-o", "out.jsonl"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // wait until the temporary file is being written
        let start = Instant::now();
        loop {
            let temp = others(d, &keep);
            if temp
                .iter()
                .any(|n| std::fs::metadata(d.join(n)).is_ok_and(|m| m.len() > 0))
            {
                break;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "the export ended before it was interrupted"
            );
            assert!(start.elapsed() < TIME_LIMIT, "no temporary file appeared");
            std::thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: signalling our own child by its id.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > TIME_LIMIT {
                child.kill().unwrap();
                panic!("the export did not stop on signal {signal}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert_eq!(status.code(), Some(128 + signal), "signal {signal}: {status:?} {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(others(d, &keep), Vec::<String>::new(), "signal {signal}: debris");
        assert_eq!(std::fs::read_to_string(d.join("out.jsonl")).unwrap(), "previous\n");
    }
}

/// Issue item 7: SIGTERM stops training as Ctrl-C does: the run is saved first and ends well.
#[test]
fn sigterm_stops_training_between_steps_and_saves_first() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut child = std_cmd(d)
        .args([
            "train",
            "--dataset",
            "sort",
            "--seq",
            "8",
            "--dmodel",
            "8",
            "--heads",
            "2",
        ])
        .args(["--batch", "2", "--steps", "10000000", "--log-every", "10", "--json"])
        .args(["--save", "m.safetensors"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the first logged line says training is under way
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    stdout.read_exact(&mut first).unwrap();
    // SAFETY: signalling our own child by its id.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TIME_LIMIT {
            child.kill().unwrap();
            panic!("training did not stop on SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut out = String::from_utf8(first.to_vec()).unwrap();
    stdout.read_to_string(&mut out).unwrap();
    assert!(status.success(), "{status:?}");
    let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(last["interrupted"], true, "{out}");
    let step = last["steps"].as_u64().unwrap();
    let loaded = attn_trace_model::checkpoint::load(&d.join("m.safetensors")).unwrap();
    assert_eq!(loaded.step, step);
    assert_eq!(names(d), ["m.safetensors"]);
}

/// Issue item 7: temporary files left by a process that was killed outright (SIGKILL) are named
/// after their target and their process, so the next write to that target removes them; those
/// of a live process, and anything else, are left alone.
#[test]
fn stale_temporary_files_of_dead_processes_are_removed_by_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
    // a pid above any pid_max: that process is certainly gone
    let stale = ".out.jsonl.attn-trace-2147483647.AbC123.tmp";
    let live = format!(".out.jsonl.attn-trace-{}.XyZ789.tmp", std::process::id());
    let other = ".other.jsonl.attn-trace-2147483647.AbC123.tmp";
    for n in [stale, live.as_str(), other, "notes.tmp"] {
        std::fs::write(d.join(n), "half").unwrap();
    }
    cmd(d).args(["trace", "s.toml", "-o", "out.jsonl"]).assert().success();
    let mut want = vec![
        live.clone(),
        other.to_string(),
        "notes.tmp".into(),
        "out.jsonl".into(),
        "s.toml".into(),
    ];
    want.sort();
    assert_eq!(names(d), want);
}

// ---------------------------------------------------------------------------------------------
// 8: reading files

/// Issue item 8: devices, FIFOs and giant files given as scenarios, data or checkpoints are
/// refused at once with one line.
#[test]
fn special_and_giant_input_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("pipe.toml"));
    mkfifo(&d.join("pipe.txt"));
    sparse(&d.join("giant.toml"), b"title = \"giant\"\n", (39u64 << 30) / 10);
    sparse(&d.join("giant.txt"), b"abc", (39u64 << 30) / 10);
    weights(&d.join("m.safetensors"));
    let start = Instant::now();
    for (args, needles) in [
        (vec!["check", "/dev/zero"], vec!["/dev/zero", "character device"]),
        (vec!["check", "/dev/urandom"], vec!["/dev/urandom", "character device"]),
        (vec!["check", "pipe.toml"], vec!["pipe.toml", "FIFO"]),
        (vec!["run", "pipe.toml"], vec!["pipe.toml", "FIFO"]),
        (vec!["tui", "/dev/zero"], vec!["/dev/zero", "character device"]),
        (vec!["check", "giant.toml"], vec!["giant.toml", "MiB"]),
        (
            vec!["train", "--data", "/dev/zero", "--steps", "1"],
            vec!["--data", "/dev/zero", "character device"],
        ),
        (
            vec!["train", "--data", "pipe.txt", "--steps", "1"],
            vec!["pipe.txt", "FIFO"],
        ),
        (
            vec!["train", "--data", "giant.txt", "--steps", "1"],
            vec!["giant.txt", "GiB"],
        ),
        (
            vec!["eval", "--checkpoint", "m.safetensors", "--data", "/dev/urandom"],
            vec!["/dev/urandom", "character device"],
        ),
        (
            vec!["eval", "--checkpoint", "m.safetensors", "--data", "pipe.txt"],
            vec!["pipe.txt", "FIFO"],
        ),
        (
            vec!["sample", "--checkpoint", "/dev/zero", "--prompt", "a"],
            vec!["/dev/zero", "character device"],
        ),
        (
            vec!["sample", "--checkpoint", "pipe.txt", "--prompt", "a"],
            vec!["pipe.txt", "FIFO"],
        ),
    ] {
        refused(cmd(d).args(&args), &needles);
    }
    assert!(start.elapsed() < Duration::from_secs(20), "{:?}", start.elapsed());
}

// ---------------------------------------------------------------------------------------------
// 9: standard output that fails

/// A pipe whose reading end is already closed: every write fails with EPIPE.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe fills the two descriptors; the read end is closed at once, the write end
    // is owned by the returned Stdio.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        libc::close(fds[0]);
        Stdio::from(OwnedFd::from_raw_fd(fds[1]))
    }
}

/// A full device as standard output: every write fails with ENOSPC. Our own node when root,
/// else /dev/full opened for writing (only opened: nothing can replace it through a descriptor).
fn full_device(d: &Path) -> Stdio {
    let own = d.join("full");
    let path = if own.exists() || char_device(&own, 7).is_some() {
        own
    } else {
        PathBuf::from("/dev/full")
    };
    Stdio::from(std::fs::OpenOptions::new().write(true).open(path).unwrap())
}

/// Every command that prints: to a closed pipe it ends quietly with exit code 0; to a full
/// disk it says so in one line with exit code 1. Never a panic.
#[test]
fn closed_and_full_standard_output_end_quietly_or_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
    weights(&d.join("m.safetensors"));
    std::fs::write(d.join("text.txt"), "0123456789".repeat(10)).unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["check", "s.toml"],
        vec!["completions", "bash"],
        vec!["run", "s.toml"],
        vec!["run", "s.toml", "--json"],
        vec!["trace", "s.toml"],
        vec!["trace", "s.toml", "--format", "csv"],
        vec!["explain", "s.toml", "--variant", "mha", "--at", "i=2,j=1"],
        vec![
            "sample",
            "--checkpoint",
            "m.safetensors",
            "--prompt",
            "ab",
            "--gen",
            "4",
        ],
        vec!["eval", "--checkpoint", "m.safetensors", "--data", "text.txt"],
        vec![
            "train",
            "--dataset",
            "sort",
            "--seq",
            "8",
            "--dmodel",
            "8",
            "--steps",
            "2",
            "--json",
        ],
        vec!["--help"],
        vec!["--version"],
    ];
    for args in &commands {
        let out = std_cmd(d).args(args).stdout(closed_pipe()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?} to a closed pipe: {err}");
        assert_eq!(err, "", "{args:?} to a closed pipe");

        let out = std_cmd(d).args(args).stdout(full_device(d)).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?} to a full disk: {err}");
        assert!(
            err.starts_with("error: ") && err.contains("No space left on device"),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

/// `trace -o` onto a disk that fills up: one line, exit code 1, the temporary file removed and
/// the previous export whole. (A file-size limit stands in for the full disk.)
#[test]
fn an_export_that_fills_the_disk_fails_in_one_line_and_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
    std::fs::write(d.join("out.jsonl"), "previous\n").unwrap();
    let mut c = std_cmd(d);
    c.args(["trace", "s.toml", "-o", "out.jsonl"]);
    // SAFETY: setrlimit and signal are async-signal-safe; SIGXFSZ ignored makes an oversized
    // write fail with EFBIG instead of killing the process.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 16 << 10,
                rlim_max: 16 << 10,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &raw const lim);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error: out.jsonl: ") && err.contains("File too large"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_eq!(names(d), ["out.jsonl", "s.toml"]);
    assert_eq!(std::fs::read_to_string(d.join("out.jsonl")).unwrap(), "previous\n");
}

// ---------------------------------------------------------------------------------------------
// 10–12

/// Issue item 10: in cross-attention a query index runs over S, not T.
#[test]
fn explain_bounds_the_query_index_by_s_in_cross_attention() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for pass in ["forward", "backward"] {
        refused(
            cmd(root)
                .args(["explain", "scenarios/cross_attention.toml", "--variant", "mha"])
                .args(["--at", "i=2,j=1", "--pass", pass]),
            &["cross_attention.toml", "i=2", "S = 2"],
        );
    }
    // the last query row and the last key are still in range
    cmd(root)
        .args(["explain", "scenarios/cross_attention.toml", "--variant", "mha"])
        .args(["--at", "h=1,i=1,j=4", "--pass", "backward"])
        .assert()
        .success()
        .stdout(predicate::str::contains("scores[b=0, h=1, i=1, j=4]"));
}

/// Issue item 11: clap's errors are one line like every other error, and a negative number is
/// called one.
#[test]
fn flag_errors_are_one_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let s = "scenarios/mha_walkthrough.toml";
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["train", "--steps", "-1"], vec!["--steps", "-1", "negative"]),
        (vec!["train", "--batch", "-4"], vec!["--batch", "-4", "negative"]),
        (vec!["train", "--seed", "-3"], vec!["--seed", "negative"]),
        (vec!["train", "--steps", "ten"], vec!["--steps", "ten", "whole number"]),
        (vec!["train", "--steps", "1.5"], vec!["--steps", "1.5", "whole number"]),
        (vec!["train", "--lr"], vec!["--lr", "value"]),
        (
            vec!["train", "--data", "a", "--dataset", "copy"],
            vec!["--data", "--dataset"],
        ),
        (vec!["sample", "--gen", "-5"], vec!["--gen", "negative"]),
        (vec!["sample", "--checkpoint", "m"], vec!["--prompt"]),
        (
            vec!["eval", "--batch", "-1", "--checkpoint", "m", "--data", "x"],
            vec!["--batch", "negative"],
        ),
        (vec!["explain", s, "--at", "i=x,j=1"], vec!["--at", "i=x"]),
        (vec!["explain", s, "--at", "i=1"], vec!["--at", "i and j are required"]),
        (vec!["explain", s, "--at", "q=1,i=1,j=1"], vec!["--at", "unknown index"]),
        (vec!["explain", s, "--at", "i=-1,j=1"], vec!["--at", "i=-1"]),
        (vec!["explain", s, "--at", "i1j1"], vec!["--at", "key=value"]),
        (
            vec!["explain", s, "--variant", "sparse"],
            vec!["--variant", "sparse", "baseline, mha, flash"],
        ),
        (vec!["explain", s, "--pass", "sideways"], vec!["--pass", "sideways"]),
        (
            vec!["trace", s, "--phase", "scorez"],
            vec!["--phase", "scorez", "scores"],
        ),
        (
            vec!["trace", s, "--format", "xml"],
            vec!["--format", "xml", "jsonl, csv"],
        ),
        (vec!["trace", s, "--fromat", "csv"], vec!["--fromat", "--format"]),
        (vec!["trace"], vec!["SCENARIO"]),
        (vec!["run", s, "extra"], vec!["extra"]),
        (vec!["completions", "tcsh"], vec!["tcsh", "bash"]),
        (vec!["completions"], vec!["SHELL"]),
        (vec!["tarce", s], vec!["tarce", "trace"]),
        (vec!["--colour"], vec!["--colour"]),
        (vec!["-1"], vec!["-1"]),
        (vec!["tui", "--variant", "x"], vec!["--variant", "x"]),
    ];
    for (args, needles) in cases {
        let err = refused(cmd(root).args(&args), &needles);
        assert!(!err.contains("Usage:") && !err.contains("tip:"), "{args:?}: {err}");
        // and where to read more
        let sub = args.first().filter(|a| !a.starts_with('-') && **a != "tarce");
        let help = sub.map_or("attn-trace --help".to_string(), |s| format!("attn-trace {s} --help"));
        assert!(err.trim_end().ends_with(&format!("; see {help}")), "{args:?}: {err}");
    }
}

/// Issue item 12: `sample` streams: each byte is written as soon as it is drawn, even into a
/// pipe, so a reader sees text long before the end.
#[test]
fn sample_streams_its_bytes_into_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    weights(&d.join("m.safetensors"));
    let mut child = std_cmd(d)
        .args([
            "sample",
            "--checkpoint",
            "m.safetensors",
            "--prompt",
            "ab",
            "--gen",
            "100000000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (checked_tx, checked_rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16];
        let mut got = Vec::new();
        while got.len() < 16 {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        let _ = tx.send(got);
        // the pipe stays open until the test has looked at the process: closing it first would
        // let the sampler end before that look (a race the test once lost on a busy machine)
        let _ = checked_rx.recv_timeout(Duration::from_secs(15));
        // dropping stdout closes the pipe: the sampler ends quietly
    });
    let got = rx.recv_timeout(Duration::from_secs(15));
    let running = child.try_wait().unwrap().is_none();
    let _ = checked_tx.send(());
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(15) {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let got = got.expect("no output within 15 s: sample does not stream");
    assert!(got.starts_with(b"ab") && got.len() >= 16, "{got:?}");
    assert!(running, "the text arrived while it was still being generated");
    assert_eq!(status.and_then(|s| s.code()), Some(0), "a closed pipe ends it quietly");
}

/// Issue item 12: `check` prints a title's control characters escaped, so a title cannot break
/// the one line per file or send escape codes to the terminal.
#[test]
fn check_escapes_control_characters_in_titles() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("t.toml"),
        "title = \"two\\nlines \\u001b[31mred\\u0007\"\n[shape]\nB = 1\nT = 3\nC = 4\n",
    )
    .unwrap();
    let out = cmd(d).args(["check", "t.toml"]).assert().success().get_output().clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text:?}");
    assert!(text.contains(r"two\nlines \u{1b}[31mred\u{7}"), "{text:?}");
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    for args in [
        vec!["run", "t.toml"],
        vec!["explain", "t.toml", "--variant", "mha", "--at", "i=1,j=0"],
    ] {
        let out = cmd(d).args(&args).assert().success().get_output().clone();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.starts_with(r"two\nlines \u{1b}[31mred\u{7}"), "{args:?}: {text:?}");
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{args:?}: {text:?}");
    }
}
