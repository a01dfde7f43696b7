//! `attn-trace grade` on a trace of about ten million accesses (`cargo bench --bench grade`):
//! the wall time of the whole command (reading the trace twice, running and summarising the
//! reference pass, flash's traffic for comparison) and its peak memory, for the trace and for the
//! same trace with every access twice, which must take twice the time and no more memory (the
//! grade keeps a few numbers per cell, none per access).
//!
//! The trace is the reference's own MHA forward pass of B=1, T=144, C=64, H=4, recorded by
//! `JsonlRecorder` (every access with its loop variables: longer lines than a learner's
//! recorder writes), so the grade finds it right.

// a benchmark stops on what it cannot do, like a test
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use attn_trace_analysis::learner;
use attn_trace_analysis::learner::inputs::InputsFile;
use attn_trace_analysis::learner::jsonl::JsonlRecorder;
use attn_trace_core::engine::{self, Passes, Registry, Tensors};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const SCENARIO: &str = "title = \"grade benchmark\"\n\n[shape]\nB = 1\nT = 144\nC = 64\nH = 4\n\n[run]\nvariants = [\"mha\"]\npasses = [\"forward\"]\n";

/// Writes the reference's forward pass as a learner's trace; returns its number of accesses.
fn write_trace(scenario: &Scenario, path: &Path) -> u64 {
    let header = InputsFile {
        scenario: "grade.toml".into(),
        variant: Some(Variant::Mha),
        pass: Some(Pass::Forward),
        input: 0,
        dims: learner::dims(scenario.shape, 1)
            .map(|(n, v)| (n.to_string(), v))
            .to_vec(),
        ..InputsFile::default()
    };
    let file = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let mut rec = JsonlRecorder::new(file, &header, "my_attention.rs").unwrap();
    let inputs = scenario.inputs();
    let registry = Registry::new(&inputs.plan(), Variant::Mha, Passes::FORWARD);
    let mut t = Tensors::new(&inputs, &registry);
    engine::forward(&mut rec, &mut t, Variant::Mha, &inputs);
    rec.finish().unwrap().flush().unwrap();
    let lines = BufReader::new(std::fs::File::open(path).unwrap()).lines().count();
    lines as u64 - 1
}

/// The same trace with every access twice (the header once).
fn doubled(from: &Path, to: &Path) {
    let text = std::fs::read_to_string(from).unwrap();
    let (header, body) = text.split_once('\n').unwrap();
    let mut w = BufWriter::new(std::fs::File::create(to).unwrap());
    writeln!(w, "{header}").unwrap();
    w.write_all(body.as_bytes()).unwrap();
    w.write_all(body.as_bytes()).unwrap();
}

/// Peak resident memory of the largest child so far, in MiB.
#[cfg(unix)]
#[allow(unsafe_code)]
fn children_peak_mib() -> f64 {
    // SAFETY: getrusage fills the struct we own; RUSAGE_CHILDREN is a valid target.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut u) };
    u.ru_maxrss as f64 / 1024.0
}

#[cfg(not(unix))]
fn children_peak_mib() -> f64 {
    f64::NAN
}

/// The release binary `attn-trace`, built first: the benchmarks are a package of their own, so
/// cargo does not build the program's binary for them (`target/release/attn-trace`, beside the
/// `deps/` folder this benchmark runs from).
fn program() -> PathBuf {
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--quiet",
            "-p",
            "attn-trace",
            "--bin",
            "attn-trace",
        ])
        .status()
        .unwrap();
    assert!(status.success(), "cargo build of attn-trace failed");
    let exe = std::env::current_exe().unwrap();
    let release = exe.parent().and_then(Path::parent).unwrap();
    release.join(format!("attn-trace{}", std::env::consts::EXE_SUFFIX))
}

/// Seconds of `attn-trace grade scenario trace`, which must find the trace right.
fn grade_secs(program: &Path, scenario: &Path, trace: &Path) -> f64 {
    let started = Instant::now();
    let out = Command::new(program)
        .arg("grade")
        .arg(scenario)
        .arg(trace)
        .output()
        .unwrap();
    let secs = started.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    secs
}

fn main() {
    // `--measure DIR`: time the grades of the traces a first run of this program wrote into
    // DIR. The timing runs in a fresh process so that the children's peak memory is theirs: a
    // child forked from a process holding the trace generator's pages counts them until it
    // execs
    let args: Vec<String> = std::env::args().collect();
    if let Some(k) = args.iter().position(|a| a == "--measure") {
        measure(Path::new(&args[k + 1]));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scenario_path = dir.path().join("grade.toml");
    std::fs::write(&scenario_path, SCENARIO).unwrap();
    let scenario = Scenario::load(&scenario_path).unwrap();
    let trace = dir.path().join("trace.jsonl");
    let events = write_trace(&scenario, &trace);
    let bytes = std::fs::metadata(&trace).unwrap().len();
    println!(
        "trace: {events} accesses, {:.0} MB ({:.0} bytes an access)",
        bytes as f64 / 1e6,
        bytes as f64 / events as f64
    );
    doubled(&trace, &dir.path().join("twice.jsonl"));
    std::fs::write(dir.path().join("events"), events.to_string()).unwrap();
    let status = Command::new(std::env::current_exe().unwrap())
        .arg("--measure")
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
}

fn measure(dir: &Path) {
    let program = program();
    let scenario_path = dir.join("grade.toml");
    let events: u64 = std::fs::read_to_string(dir.join("events")).unwrap().parse().unwrap();
    let (trace, twice) = (dir.join("trace.jsonl"), dir.join("twice.jsonl"));
    // peak memory is the largest child's so far: the single trace's runs come first
    for (name, path, n) in [("trace", &trace, events), ("every access twice", &twice, 2 * events)] {
        let mut secs: Vec<f64> = (0..3).map(|_| grade_secs(&program, &scenario_path, path)).collect();
        secs.sort_by(f64::total_cmp);
        println!(
            "grade, {name}: {n} accesses in {:.2} s (median of 3; {:.2}–{:.2}), {:.1} M accesses/s, peak RSS so far {:.0} MiB",
            secs[1],
            secs[0],
            secs[2],
            n as f64 / secs[1] / 1e6,
            children_peak_mib()
        );
    }
}
