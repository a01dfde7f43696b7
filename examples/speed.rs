//! Training speed next to the machine's sgemm ceiling, both measured here and now.
//!
//! ```sh
//! cargo run --release --example speed                      # configs a, b, c; 2048² sgemm
//! cargo run --release --example speed -- --configs b,c --seconds 10 --n 1024
//! ATTN_TRACE_SIMD=avx2 cargo run --release --no-default-features --example speed   # AVX2 only
//! ```
//!
//! 1. **The sgemm ceiling**: `C = A·B` with square `n × n` f32 matrices through
//!    `ops::matmul` (the sgemm the linear layers use, `ops::sgemm`, single-threaded as each
//!    training shard calls it), on one thread, then on both cores at once (two independent
//!    products, as the two shards run). `2n³` floating-point operations per product; the best of
//!    several repetitions.
//! 2. **The training step** of each config (`Trainer::step`: batch draw, forward, backward,
//!    AdamW, the batch split over two threads) for about `--seconds`: tokens/s, and GFLOP/s from
//!    the model's operation count per token (a multiply-add counts 2, the backward pass twice the
//!    forward):
//!
//!    `flops/token = 6·(12·L·C² + C·V) + 12·L·T·C`
//!
//!    `12·L·C²` are the weights the linear layers multiply per block (`w_qkv` 3C², `w_proj` C²,
//!    `w_fc` 4C², `w_out` 4C²) and `C·V` the head's; `12·L·T·C` is attention's `Q·Kᵀ` and `P·V`
//!    over all `T×T` pairs (forward 4·T·C per token and layer, backward 8·T·C), as PyTorch
//!    computes them; the causal mask lets the kernels skip part of that work, which is not
//!    subtracted. Embeddings, LayerNorm, GELU, softmax and AdamW are not counted.
//!
//! 3. **The step's own products**: the linear layers of one shard of the config (`B/2·T` rows;
//!    `x·W`, then `dy·Wᵀ` and `xᵀ·dy` through `model::ops`, as the step calls them), on both
//!    cores at once, one shard each, counting `6·(12·L·C² + C·V)` per token; and the share of
//!    the step's time the products would take at that speed. These are the shapes the step
//!    really multiplies, which need not run as fast as two 2048² products at once (those share
//!    the caches and memory; a shard's products mostly fit its own core's caches).
//!
//! On a shared machine all of them move with the load, so each config alternates them: ten
//! rounds of two 2048² products at once, the two shards' products, and a tenth of `--seconds` of
//! training steps; the best round of each (and the median) is printed, the step's GFLOP/s as a
//! percentage of the 2048² ceiling, and the products' share of the step's time.

// a benchmark or example stops on what it cannot do, like a test
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use attn_trace_model::gpt::Attention;
use attn_trace_model::{Config, Dataset, TinyGpt, Trainer, ops};
use std::time::{Duration, Instant};

/// `c = a·b`, all `n × n` row-major, through the sgemm the linear layers use (`ops::sgemm`), on
/// the calling thread.
fn sgemm(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    ops::matmul(n, n, n, a, false, b, false, c);
}

/// Best GFLOP/s of `threads` concurrent `n × n` products, over `reps` rounds.
fn ceiling(n: usize, threads: usize, reps: usize) -> f64 {
    let a: Vec<f32> = (0..n * n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 7.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0).collect();
    let mut outs = vec![vec![0.0f32; n * n]; threads];
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t0 = Instant::now();
        std::thread::scope(|s| {
            for c in &mut outs {
                let (a, b) = (&a, &b);
                s.spawn(move || sgemm(n, a, b, c));
            }
        });
        best = best.min(t0.elapsed().as_secs_f64());
    }
    threads as f64 * 2.0 * (n as f64).powi(3) / best / 1e9
}

/// Best GFLOP/s of the linear layers of one shard of `run` (forward and backward of every weight
/// matrix, `B/2·T` rows), on two threads at once, over `reps` rounds.
fn shard_products(run: &Run, reps: usize) -> f64 {
    let cfg = &run.config;
    let (c, v) = (cfg.d_model, cfg.vocab_size);
    let rows = run.b.div_ceil(2) * cfg.seq_len;
    // (in, out) of each weight matrix the step multiplies, as in the model's layout
    let mut mats: Vec<(usize, usize)> = (0..cfg.n_layers)
        .flat_map(|_| [(c, c + 2 * cfg.kv_channels()), (c, c), (c, 4 * c), (4 * c, c)])
        .collect();
    mats.push((c, v));
    // each shard's operands and outputs, made before timing, as the step's workspace is
    let one_shard = || -> Vec<[Vec<f32>; 8]> {
        let fill = |n: usize| -> Vec<f32> { (0..n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 7.0).collect() };
        let zero = |n: usize| vec![0.0f32; n];
        mats.iter()
            .map(|&(ic, oc)| {
                let (x, w, b, dy) = (fill(rows * ic), fill(ic * oc), fill(oc), fill(rows * oc));
                [x, w, b, dy, zero(rows * oc), zero(rows * ic), zero(ic * oc), zero(oc)]
            })
            .collect()
    };
    // the products of one shard, timed on its own thread (not the thread's start)
    let products = |bufs: &mut Vec<[Vec<f32>; 8]>| {
        let t0 = Instant::now();
        for [x, w, b, dy, y, dx, dw, db] in bufs.iter_mut() {
            ops::linear_forward([1, rows], x, w, b, y);
            ops::linear_backward([1, rows], x, w, dy, dx, dw, db);
        }
        t0.elapsed().as_secs_f64()
    };
    let mut shards = [one_shard(), one_shard()];
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let slowest = std::thread::scope(|s| {
            let threads: Vec<_> = shards.iter_mut().map(|bufs| s.spawn(|| products(bufs))).collect();
            threads.into_iter().map(|t| t.join().unwrap()).fold(0.0, f64::max)
        });
        best = best.min(slowest);
    }
    2.0 * linear_flops_per_token(cfg) * rows as f64 / best / 1e9
}

/// Floating-point operations per trained token (see the module's doc).
fn flops_per_token(cfg: &Config) -> f64 {
    let (t, c, l) = (cfg.seq_len as f64, cfg.d_model as f64, cfg.n_layers as f64);
    linear_flops_per_token(cfg) + 12.0 * l * t * c
}

/// The linear layers' share of [`flops_per_token`]: `6·(12·L·C² + C·V)`.
fn linear_flops_per_token(cfg: &Config) -> f64 {
    let (c, l, v) = (cfg.d_model as f64, cfg.n_layers as f64, cfg.vocab_size as f64);
    6.0 * (12.0 * l * c * c + c * v)
}

struct Run {
    name: &'static str,
    b: usize,
    config: Config,
}

fn runs() -> Vec<Run> {
    let cfg = |t, c, l, h| Config {
        seq_len: t,
        d_model: c,
        n_layers: l,
        n_heads: h,
        ..Config::default()
    };
    vec![
        Run {
            name: "a",
            b: 4,
            config: cfg(64, 64, 1, 1),
        },
        Run {
            name: "b",
            b: 16,
            config: cfg(64, 128, 2, 4),
        },
        Run {
            name: "c",
            b: 8,
            config: cfg(128, 256, 4, 8),
        },
        // the long context, on the attention `train` picks for it (flash)
        Run {
            name: "d",
            b: 4,
            config: cfg(1024, 128, 2, 4),
        },
    ]
}

/// A trainer for the run, warmed up for a second.
fn trainer(run: &Run) -> Trainer {
    let data = Dataset::builtin("kernels", run.config.seq_len).unwrap();
    let mut model = TinyGpt::new(run.config, 1).unwrap();
    // the attention `train` picks when none is named
    let c = &run.config;
    model.attention = Attention::for_shape(c.seq_len, c.n_heads, c.kv_heads());
    let mut trainer = Trainer::new(model, data, run.b, 3e-4, 1).unwrap();
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_secs(1) {
        trainer.step();
    }
    trainer
}

/// Tokens/s of the training steps run within about `secs` seconds (at least one step).
fn tokens_per_s(trainer: &mut Trainer, secs: f64) -> f64 {
    let (t0, mut steps) = (Instant::now(), 0usize);
    while steps == 0 || t0.elapsed().as_secs_f64() < secs {
        trainer.step();
        steps += 1;
    }
    (steps * trainer.tokens_per_step()) as f64 / t0.elapsed().as_secs_f64()
}

/// The best and the median of `xs`.
fn best_median(mut xs: Vec<f64>) -> (f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() - 1], xs[xs.len() / 2])
}

fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// Rounds per config: the ceiling and the step are measured alternately, so both see the same
/// moments of a shared machine.
const ROUNDS: usize = 10;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str| args.iter().position(|a| a == name).map(|i| args[i + 1].clone());
    let n: usize = opt("--n").map_or(2048, |v| v.parse().unwrap());
    let secs: f64 = opt("--seconds").map_or(5.0, |v| v.parse().unwrap());
    let pick = opt("--configs").unwrap_or_else(|| "a,b,c".into());

    let avx512_sgemm = cfg!(feature = "avx512") && std::arch::is_x86_feature_detected!("avx512f");
    println!(
        "{} ({} threads available); loops: {:?}; sgemm: {}, {} kernel",
        cpu_name(),
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        attn_trace_core::tensor::simd::level(),
        ops::sgemm().name(),
        if avx512_sgemm { "AVX-512" } else { "AVX2 (FMA)" }
    );
    ceiling(n.min(512), 1, 2); // warm-up
    let one = ceiling(n, 1, 5);
    println!("sgemm {n}×{n} on one thread: {one:.1} GFLOP/s (best of 5)");
    println!(
        "each config: {ROUNDS} rounds of [two {n}×{n} products at once, then {:.2} s of training steps]; best (median)",
        secs / ROUNDS as f64
    );
    for run in runs().iter().filter(|r| pick.split(',').any(|p| p == r.name)) {
        let c = &run.config;
        let mut trainer = trainer(run);
        let (mut ceil, mut own, mut tps) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            ceil.push(ceiling(n, 2, 1));
            own.push(shard_products(run, 3));
            tps.push(tokens_per_s(&mut trainer, secs / ROUNDS as f64));
        }
        let ((ceil_best, ceil_med), (tps_best, tps_med)) = (best_median(ceil), best_median(tps));
        let (own_best, own_med) = best_median(own);
        let gflops = |tps: f64| tps * flops_per_token(c) / 1e9;
        println!(
            "({}) B{} T{} C{} L{} H{}: {:.0} ({:.0}) tokens/s, {:.1} ({:.1}) GFLOP/s; \
             sgemm on two threads {:.1} ({:.1}) GFLOP/s: the step at {:.0}% ({:.0}%) of it; \
             the shards' own products on two threads {:.1} ({:.1}) GFLOP/s, {:.0}% ({:.0}%) of the step's time",
            run.name,
            run.b,
            c.seq_len,
            c.d_model,
            c.n_layers,
            c.n_heads,
            tps_best,
            tps_med,
            gflops(tps_best),
            gflops(tps_med),
            ceil_best,
            ceil_med,
            100.0 * gflops(tps_best) / ceil_best,
            100.0 * gflops(tps_med) / ceil_med,
            own_best,
            own_med,
            100.0 * tps_best * linear_flops_per_token(c) / 1e9 / own_best,
            100.0 * tps_med * linear_flops_per_token(c) / 1e9 / own_med,
        );
    }
}
