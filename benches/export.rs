//! The exports' speed (`cargo bench --bench export`): the events of `bench/export.toml`'s MHA
//! run (forward and backward, 18.7 million events) written to a sink in each format by
//! `analysis::export`, the writer `attn-trace trace` uses. The trace is recorded once; the
//! figures are events written per second, not counting the recording (docs/performance.md has
//! the whole command's figures too).

// a benchmark or example stops on what it cannot do, like a test
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use attn_trace_analysis::export::{self, Filter, Format};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::path::Path;

fn bench(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/export.toml");
    let scenario = Scenario::load(&path).unwrap();
    let run = attn_trace_core::engine::run_unindexed(&scenario.inputs(), Variant::Mha, scenario.passes);
    let trace = run.trace.as_ref().unwrap();
    let mut g = c.benchmark_group("export");
    g.sample_size(10);
    g.throughput(Throughput::Elements(trace.len() as u64));
    for (name, format) in [
        ("jsonl", Format::Jsonl),
        ("csv", Format::Csv),
        ("din", Format::Din),
        ("lackey", Format::Lackey),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                export::write_events(
                    trace,
                    Variant::Mha,
                    &Filter::default(),
                    format,
                    &mut std::io::sink(),
                    |_, _| {},
                )
                .unwrap()
            });
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
