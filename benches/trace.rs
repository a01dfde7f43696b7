//! The event log's recording speed and size: forward + backward of every variant for
//! B=2, T=64, C=64, H=4, GQA with H_kv=2 (`cargo bench --bench trace`), and of MHA, GQA and
//! flash under a sliding window of 16 keys with 4 sinks (`record window`). Recording is measured
//! in wall-clock time (group `trace`) and, on Unix, in the benchmarking thread's CPU time (group
//! `trace, thread CPU time`: `cargo bench --bench trace -- "thread CPU"`), which other programs
//! on a shared machine hardly move.

// a benchmark or example stops on what it cannot do, like a test
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(unix)]
#[path = "common/cpu.rs"]
mod cpu;

use attn_trace::engine::{self, Inputs, Passes, Registry, Start, Tensors, estimate_events};
use attn_trace::kernels::{Mask, Variant};
use attn_trace::tensor::Shape;
use attn_trace::trace::{Logger, NoRecord};
use criterion::measurement::Measurement;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn inputs(sh: Shape) -> Inputs {
    let Shape { b, t, c, .. } = sh;
    let qkv = c + 2 * sh.kv_c();
    let vals = |n: usize, k: usize| {
        (0..n)
            .map(|i| ((i * 7919 + k * 104_729) % 2001) as f32 / 1000.0 - 1.0)
            .collect()
    };
    let start = Start::X {
        x: vals(b * t * c, 1),
        w_qkv: vals(c * qkv, 2),
        b_qkv: vals(qkv, 3),
    };
    Inputs::new(sh, Mask::Causal, start, vals(b * t * c, 6)).with_proj(vals(c * c, 4), vals(c, 5))
}

fn record(inputs: &Inputs, variant: Variant) -> Logger {
    let registry = Registry::new(&inputs.plan(), variant, Passes::BOTH);
    let mut t = Tensors::new(inputs, &registry);
    let mut log = Logger::with_capacity(
        estimate_events(&inputs.plan(), variant, Passes::BOTH)
            .to_usize()
            .unwrap_or(0),
    );
    engine::forward(&mut log, &mut t, variant, inputs);
    engine::backward(&mut log, &mut t, variant, inputs);
    log
}

fn bench_wall(c: &mut Criterion) {
    bench(c, "trace", true);
}

#[cfg(unix)]
fn bench_cpu(c: &mut Criterion<cpu::ThreadCpu>) {
    bench(c, "trace, thread CPU time", false);
}

/// Recording (and with `all`, recording with the cell index and the untraced run) of each variant.
fn bench<M: Measurement>(c: &mut Criterion<M>, name: &str, all: bool) {
    let sh = Shape::new(2, 64, 64, 4);
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    for variant in Variant::ALL {
        let inputs = inputs(if variant.shares_kv_heads() {
            sh.with_kv_heads(2)
        } else {
            sh
        });
        let run = engine::run(&inputs, variant, Passes::BOTH, true);
        let trace = run.trace.as_ref().expect("traced");
        let events = trace.len() as u64;
        if all {
            println!(
                "{variant}: {events} events, log {:.1} bytes/event ({} frames), index {:.1} bytes/event",
                trace.log_bytes() as f64 / events as f64,
                trace.frames.len(),
                trace.index.bytes() as f64 / events as f64,
            );
        }
        group.throughput(Throughput::Elements(events));
        group.bench_with_input(BenchmarkId::new("record", variant), &variant, |b, &v| {
            b.iter(|| black_box(record(&inputs, v)));
        });
        if !all {
            continue;
        }
        group.bench_with_input(BenchmarkId::new("record+index", variant), &variant, |b, &v| {
            b.iter(|| black_box(engine::run(&inputs, v, Passes::BOTH, true)));
        });
        group.bench_with_input(BenchmarkId::new("untraced", variant), &variant, |b, &v| {
            b.iter(|| {
                let registry = Registry::new(&inputs.plan(), v, Passes::BOTH);
                let mut t = Tensors::new(&inputs, &registry);
                engine::forward(&mut NoRecord, &mut t, v, &inputs);
                engine::backward(&mut NoRecord, &mut t, v, &inputs);
                black_box(t)
            });
        });
    }
    // a sliding window is a mask of the same kernels: its events per second against the
    // causal runs' above
    for variant in [Variant::Mha, Variant::Gqa, Variant::Flash] {
        let mut inputs = inputs(if variant.shares_kv_heads() {
            sh.with_kv_heads(2)
        } else {
            sh
        });
        inputs.mask = Mask::Window { w: 16, sinks: 4 };
        let events = engine::run(&inputs, variant, Passes::BOTH, true).events() as u64;
        group.throughput(Throughput::Elements(events));
        group.bench_with_input(BenchmarkId::new("record window", variant), &variant, |b, &v| {
            b.iter(|| black_box(record(&inputs, v)));
        });
    }
    group.finish();
}

criterion_group!(wall, bench_wall);
#[cfg(unix)]
criterion_group! {
    name = cpu_time;
    config = Criterion::default().with_measurement(cpu::ThreadCpu);
    targets = bench_cpu
}
#[cfg(unix)]
criterion_main!(wall, cpu_time);
#[cfg(not(unix))]
criterion_main!(wall);
