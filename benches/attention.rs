//! The attention core as training runs it, untraced, forward and backward of one shard's
//! batch: the naive kernel (`untraced/fast/`, `[B,H,T,T]` probabilities kept for backward) against
//! flash (`untraced/flash/`, training's tiles), causal, at the shapes of the performance
//! tables (`cargo bench --bench attention`), and flash's forward alone (`bench/sdpa_core.py`
//! times PyTorch's fused attention on the same shapes). Measured in the benchmarking thread's
//! CPU time, which other programs on a shared machine hardly move; one thread, as each of
//! training's shards runs.

// a benchmark stops on what it cannot do, like a test
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(unix)]
#[path = "common/cpu.rs"]
mod cpu;

use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::untraced::dispatch;
use attn_trace_model::gpt::Attention;
use criterion::measurement::Measurement;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

/// One shard of training's batches: (name, B, T, C, H). Training splits B = 4 into two shards.
const SHAPES: &[(&str, usize, usize, usize, usize)] = &[
    ("train form T24 C32 H4", 8, 24, 32, 4),
    ("T256 C128 H4", 2, 256, 128, 4),
    ("T1024 C128 H4", 2, 1024, 128, 4),
    ("T2048 C256 H8", 2, 2048, 256, 8),
];

fn values(n: usize, seed: u32) -> Vec<f32> {
    // a small deterministic pattern in [-1, 1): no two heads alike, no NaN
    (0..n as u32)
        .map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) % 2000) as f32 / 1000.0 - 1.0)
        .collect()
}

fn bench<M: Measurement>(c: &mut Criterion<M>, name: &str) {
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    for &(label, b, t, c_, h) in SHAPES {
        let sh = Shape::new(b, t, c_, h);
        let n = b * t * c_;
        let (q, k, v, d_att) = (values(n, 1), values(n, 2), values(n, 3), values(n, 4));
        let variant = if h == 1 { Variant::Baseline } else { Variant::Mha };
        group.throughput(Throughput::Elements((b * t) as u64));
        if t <= 1024 {
            group.bench_with_input(BenchmarkId::new("naive", label), &sh, |bench, &sh| {
                let (mut probs, mut att) = (vec![0.0f32; b * h * t * t], vec![0.0f32; n]);
                let (mut d_q, mut d_k, mut d_v) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
                bench.iter(|| {
                    dispatch::forward_untraced(variant, sh, &Mask::Causal, &q, &k, &v, &mut probs, &mut att);
                    let grads = (&mut d_q[..], &mut d_k[..], &mut d_v[..]);
                    dispatch::backward_untraced(variant, sh, &Mask::Causal, (&q, &k, &v, &probs), &d_att, grads);
                    black_box(&d_q);
                });
            });
        }
        let Attention::Flash(tiles) = Attention::FLASH else {
            unreachable!("Attention::FLASH is flash")
        };
        group.bench_with_input(BenchmarkId::new("flash", label), &sh, |bench, &sh| {
            let tiles = tiles.fit(sh);
            let (mut att, mut lse, mut delta) = (vec![0.0f32; n], vec![0.0f32; b * h * t], vec![0.0f32; b * h * t]);
            let (mut d_q, mut d_k, mut d_v) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
            bench.iter(|| {
                dispatch::flash_forward_untraced(sh, tiles, &Mask::Causal, (&q, &k, &v), &mut att, &mut lse);
                let grads = (&mut d_q[..], &mut d_k[..], &mut d_v[..]);
                let saved = (&att[..], &lse[..]);
                dispatch::flash_backward_untraced(
                    sh,
                    tiles,
                    &Mask::Causal,
                    (&q, &k, &v),
                    saved,
                    &d_att,
                    &mut delta,
                    grads,
                );
                black_box(&d_q);
            });
        });
        // the forward alone, so that the backward's share is the difference
        group.bench_with_input(BenchmarkId::new("flash forward", label), &sh, |bench, &sh| {
            let tiles = tiles.fit(sh);
            let (mut att, mut lse) = (vec![0.0f32; n], vec![0.0f32; b * h * t]);
            bench.iter(|| {
                dispatch::flash_forward_untraced(sh, tiles, &Mask::Causal, (&q, &k, &v), &mut att, &mut lse);
                black_box(&att);
            });
        });
    }
    group.finish();
}

#[cfg(unix)]
fn bench_cpu(c: &mut Criterion<cpu::ThreadCpu>) {
    bench(c, "attention, thread CPU time");
}

#[cfg(not(unix))]
fn bench_wall(c: &mut Criterion) {
    bench(c, "attention");
}

#[cfg(unix)]
criterion_group! {
    name = cpu_time;
    config = Criterion::default().with_measurement(cpu::ThreadCpu);
    targets = bench_cpu
}
#[cfg(unix)]
criterion_main!(cpu_time);
#[cfg(not(unix))]
criterion_group!(wall, bench_wall);
#[cfg(not(unix))]
criterion_main!(wall);
