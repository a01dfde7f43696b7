//! TinyGPT training speed in tokens per second, one full step (batch draw, forward, backward,
//! AdamW) at the three configurations (`cargo bench --bench train`):
//! (a) B=4, T=64, C=64, L=1, H=1, (b) B=16, T=64, C=128, L=2, H=4 and (c) B=8, T=128, C=256,
//! L=4, H=8, on the `kernels` corpus. `cargo run --release --example speed` prints the same
//! steps' GFLOP/s next to the machine's sgemm ceiling.
//! Criterion's `thrpt` line is tokens/s. Attention runs the tracer's kernels untraced (their
//! vectorised loop order, `crates/core/src/untraced/fast/`), the linear layers sgemm (`model::ops`); the two
//! threads each take half the batch.

// a benchmark or example stops on what it cannot do, like a test
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use attn_trace_model::{Config, Dataset, TinyGpt, Trainer};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("train_step");
    let configs = [
        ("a: B=4 T=64 C=64 L=1 H=1", 4, 64, 64, 1, 1),
        ("b: B=16 T=64 C=128 L=2 H=4", 16, 64, 128, 2, 4),
        ("c: B=8 T=128 C=256 L=4 H=8", 8, 128, 256, 4, 8),
    ];
    for (name, b, t, d_model, n_layers, n_heads) in configs {
        let config = Config {
            seq_len: t,
            d_model,
            n_layers,
            n_heads,
            ..Config::default()
        };
        let data = Dataset::builtin("kernels", t).expect("built-in corpus");
        let model = TinyGpt::new(config, 1).expect("valid config");
        let mut trainer = Trainer::new(model, data, b, 3e-4, 1).expect("valid trainer");
        group.throughput(Throughput::Elements((b * t) as u64));
        group.sample_size(20);
        group.warm_up_time(Duration::from_secs(2));
        group.measurement_time(Duration::from_secs(8));
        group.bench_function(name, |bench| bench.iter(|| black_box(trainer.step())));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
