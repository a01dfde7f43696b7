//! The event log's recording speed and size: forward + backward of every variant but MLA for
//! B=2, T=64, C=64, H=4, GQA with H_kv=2 (`cargo bench --bench trace`); of MHA, GQA and flash
//! under a sliding window of 16 keys with 4 sinks (`record window`); MHA decoding token by token
//! (forward only) from a contiguous cache, a rolling window cache (W=16, 4 sinks), a paged cache
//! (blocks of 16, shuffled) and split in 4 parts (`record decode`); MHA forward + backward with a
//! sink logit per head (`record sink`); and multi-head latent attention with a latent of R=16
//! channels and a rotary key of DR=8 turned by rope, forward + backward (`record mla/train`) and its absorbed
//! decode token by token, forward only (`record mla/decode`), all beside `record/mha`. Recording
//! is measured in wall-clock time (group `trace`) and, on Unix, in the benchmarking thread's CPU
//! time (group `trace, thread CPU time`: `cargo bench --bench trace -- "thread CPU"`), which
//! other programs on a shared machine hardly move.

// a benchmark or example stops on what it cannot do, like a test
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(unix)]
#[path = "common/cpu.rs"]
mod cpu;

use attn_trace_core::engine::{self, Inputs, Passes, Registry, Start, Tensors, estimate_events};
use attn_trace_core::kernels::attention_mla::Latent;
use attn_trace_core::kernels::decode::{CacheSpec, Paged};
use attn_trace_core::kernels::rope::{Pairs, Rope};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Logger, NoRecord, Trace};
use criterion::measurement::Measurement;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

/// `n` values in [-1, 1], a different sequence for each `k`.
fn vals(n: usize, k: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 7919 + k * 104_729) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

fn inputs(sh: Shape) -> Inputs {
    let Shape { b, t, c, .. } = sh;
    let qkv = c + 2 * sh.kv_c();
    let start = Start::X {
        x: vals(b * t * c, 1),
        w_qkv: vals(c * qkv, 2),
        b_qkv: vals(qkv, 3),
    };
    Inputs::new(sh, Mask::Causal, start, vals(b * t * c, 6)).with_proj(vals(c * c, 4), vals(c, 5))
}

/// Multi-head latent attention's inputs: `x`, the query weights `[C, H·(D + DR)]`, the latent's
/// `[C, R]`, the rotary key's `[C, DR]` and the up-projections `[R, C]`, with the output
/// projection.
fn latent_inputs(sh: Shape, latent: Latent) -> Inputs {
    let Shape { b, t, c, h, .. } = sh;
    let start = Start::Latent {
        latent,
        x: vals(b * t * c, 1),
        w_q: vals(c * h * latent.q_head(sh.d()), 2),
        w_dkv: vals(c * latent.r, 3),
        w_kr: vals(c * latent.dr, 7),
        w_uk: vals(latent.r * c, 8),
        w_uv: vals(latent.r * c, 9),
    };
    Inputs::new(sh, Mask::Causal, start, vals(b * t * c, 6)).with_proj(vals(c * c, 4), vals(c, 5))
}

fn record(inputs: &Inputs, variant: Variant) -> Logger {
    record_passes(inputs, variant, Passes::BOTH)
}

/// Records the passes of `passes` that the inputs allow (a decode run's forward alone).
fn record_passes(inputs: &Inputs, variant: Variant, passes: Passes) -> Logger {
    let plan = inputs.plan();
    let passes = plan.possible(passes);
    let registry = Registry::new(&plan, variant, passes);
    let mut t = Tensors::new(inputs, &registry);
    let mut log = Logger::with_capacity(estimate_events(&plan, variant, passes).to_usize().unwrap_or(0));
    engine::forward(&mut log, &mut t, variant, inputs);
    if passes.backward {
        engine::backward(&mut log, &mut t, variant, inputs);
    }
    log
}

/// Prints a run's events, its log's bytes per event (and frames), and its cell index's.
fn describe(what: &str, trace: &Trace) {
    let events = trace.len() as f64;
    println!(
        "{what}: {} events, log {:.1} bytes/event ({} frames), index {:.1} bytes/event",
        trace.len(),
        trace.log_bytes() as f64 / events,
        trace.frames.len(),
        trace.index.bytes() as f64 / events,
    );
}

fn bench_wall(c: &mut Criterion) {
    bench(c, "trace", true);
}

#[cfg(unix)]
fn bench_cpu(c: &mut Criterion<cpu::ThreadCpu>) {
    bench(c, "trace, thread CPU time", false);
}

/// Recording (and with `all`, recording with the cell index and the untraced run) of each
/// variant but MLA; then recording alone under a sliding window, decoding from each cache, with
/// sink logits, and MLA's training form and absorbed decode.
fn bench<M: Measurement>(c: &mut Criterion<M>, name: &str, all: bool) {
    let sh = Shape::new(2, 64, 64, 4);
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    // MLA starts from its latent weights, not from `w_qkv`: its rows are `record mla/…` below
    for variant in Variant::STANDARD {
        let inputs = inputs(if variant.shares_kv_heads() {
            sh.with_kv_heads(2)
        } else {
            sh
        });
        let run = engine::run(&inputs, variant, Passes::BOTH, true);
        let trace = run.trace.as_ref().expect("traced");
        let events = trace.len() as u64;
        if all {
            describe(&variant.to_string(), trace);
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
    // MHA decoding token by token (forward only) from each of its caches: its events per second
    // against `record/mha`'s above
    let (w, sinks, bs) = (16, 4, 16);
    let decoded = inputs(sh).with_decode(true);
    let paged = CacheSpec {
        paged: Some(Paged::shuffled(bs, sh.b * sh.t.div_ceil(bs) + 3, sh.b, sh.t, 1)),
        split: None,
    };
    let split = CacheSpec {
        paged: None,
        split: Some(4),
    };
    let mut windowed = decoded.clone();
    windowed.mask = Mask::Window { w, sinks };
    let caches = [
        ("contiguous", decoded.clone()),
        ("window", windowed),
        ("paged", decoded.clone().with_cache(paged)),
        ("split", decoded.with_cache(split)),
    ];
    for (cache, inputs) in &caches {
        let run = engine::run(inputs, Variant::Mha, Passes::FORWARD, true);
        let trace = run.trace.as_ref().expect("traced");
        let events = trace.len() as u64;
        if all {
            describe(&format!("mha decode, {cache} cache"), trace);
        }
        group.throughput(Throughput::Elements(events));
        group.bench_with_input(BenchmarkId::new("record decode", cache), inputs, |b, i| {
            b.iter(|| black_box(record_passes(i, Variant::Mha, Passes::FORWARD)));
        });
    }
    // MHA forward + backward with one sink logit per head: against `record/mha`
    let sunk = inputs(sh).with_sink(Some((0..sh.h).map(|h| h as f32 / 4.0 - 0.5).collect()));
    let run = engine::run(&sunk, Variant::Mha, Passes::BOTH, true);
    let trace = run.trace.as_ref().expect("traced");
    let events = trace.len() as u64;
    if all {
        describe("mha with sink logits", trace);
    }
    group.throughput(Throughput::Elements(events));
    group.bench_with_input(BenchmarkId::new("record sink", Variant::Mha), &sunk, |b, i| {
        b.iter(|| black_box(record(i, Variant::Mha)));
    });
    // MLA with a latent of R=16 channels and a rotary key of DR=8 turned by rope, as DeepSeek
    // runs it: its training form forward + backward, and its absorbed decode token by token
    // (forward only), against `record/mha`
    let rope = Rope {
        pairs: Pairs::Interleaved,
        base: 10000.0,
    };
    let trained = latent_inputs(sh, Latent { r: 16, dr: 8 }).with_rope(Some(rope));
    let forms = [
        ("train", Passes::BOTH, trained.clone()),
        ("decode", Passes::FORWARD, trained.with_decode(true)),
    ];
    for (form, passes, inputs) in &forms {
        let run = engine::run(inputs, Variant::Mla, *passes, true);
        let trace = run.trace.as_ref().expect("traced");
        let events = trace.len() as u64;
        if all {
            describe(&format!("mla {form}"), trace);
        }
        group.throughput(Throughput::Elements(events));
        group.bench_with_input(BenchmarkId::new("record mla", form), inputs, |b, i| {
            b.iter(|| black_box(record_passes(i, Variant::Mla, *passes)));
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
