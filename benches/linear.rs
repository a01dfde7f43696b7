//! The linear layers' matrix products alone, at TinyGPT's shapes: for each weight matrix of a
//! config, one training shard's three products (forward `x·W`, backward `dy·Wᵀ` and `xᵀ·dy`,
//! `B/2·T` rows), each through `model::ops::matmul` on one thread, as the step runs them; the
//! best and the median of several timings in the thread's CPU time, as GFLOP/s. It prints one
//! JSON line per product; `bench/sgemm_shapes.py` runs it with each sgemm library
//! (`ATTN_TRACE_SGEMM`) in turn with `bench/torch_sgemm.py --shapes` (PyTorch's `torch.mm` on the
//! same products) and tabulates them:
//!
//! ```sh
//! cargo bench --bench linear -- --configs a,b,c,d --reps 9
//! ```

// a benchmark stops on what it cannot do, like a test
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(unix)]
#[path = "common/cpu.rs"]
#[allow(dead_code)] // the criterion measurement is not used here, only the clock
mod cpu;

use attn_trace_model::ops;
use std::hint::black_box;

/// The configs' shapes: (name, B, T, C, L), as in bench/compare.py. V = 256.
const CONFIGS: &[(&str, usize, usize, usize, usize)] = &[
    ("a", 4, 64, 64, 1),
    ("b", 16, 64, 128, 2),
    ("c", 8, 128, 256, 4),
    ("d", 4, 1024, 128, 2),
];

/// The weight matrices of one block, (name, IC, OC), and the head's.
fn matrices(c: usize) -> [(&'static str, usize, usize); 5] {
    [
        ("qkv", c, 3 * c),
        ("proj", c, c),
        ("fc", c, 4 * c),
        ("out", 4 * c, c),
        ("head", c, 256),
    ]
}

fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|i| (((i * 7 + seed) % 13) as f32 - 6.0) / 7.0).collect()
}

#[cfg(unix)]
fn now() -> f64 {
    cpu::thread_cpu_seconds()
}

#[cfg(not(unix))]
fn now() -> f64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// Seconds per call of `f`: each timing repeats it for about 2 ms of CPU time; the best and the
/// median of `reps` timings, after one to warm up.
fn time(reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    let t0 = now();
    f();
    let once = (now() - t0).max(1e-7);
    let inner = ((2e-3 / once).ceil() as usize).max(1);
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t0 = now();
            for _ in 0..inner {
                f();
            }
            (now() - t0) / inner as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[0], times[times.len() / 2])
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str| args.iter().position(|a| a == name).map(|i| args[i + 1].clone());
    let pick = opt("--configs").unwrap_or_else(|| "a,b,c,d".into());
    let reps: usize = opt("--reps").map_or(9, |v| v.parse().unwrap());
    let sgemm = ops::sgemm().name();
    for &(name, b, t, c, l) in CONFIGS.iter().filter(|c| pick.split(',').any(|p| p == c.0)) {
        let rows = b.div_ceil(2) * t;
        for (matrix, ic, oc) in matrices(c) {
            let layers = if matrix == "head" { 1 } else { l };
            let (x, w, dy) = (values(rows * ic, 1), values(ic * oc, 2), values(rows * oc, 3));
            let (mut y, mut dx, mut dw) = (vec![0.0; rows * oc], vec![0.0; rows * ic], vec![0.0; ic * oc]);
            // (product, m, k, n): the forward, then the backward's two
            let products = [("x·W", rows, ic, oc), ("dy·Wᵀ", rows, oc, ic), ("xᵀ·dy", ic, rows, oc)];
            for (p, (product, m, k, n)) in products.into_iter().enumerate() {
                let (best, median) = time(reps, || match p {
                    0 => ops::matmul(rows, ic, oc, &x, false, &w, false, black_box(&mut y)),
                    1 => ops::matmul(rows, oc, ic, &dy, false, &w, true, black_box(&mut dx)),
                    _ => ops::matmul(ic, rows, oc, &x, true, &dy, false, black_box(&mut dw)),
                });
                let flops = 2.0 * (m * k * n) as f64;
                println!(
                    "{{\"who\": \"{sgemm}\", \"config\": \"{name}\", \"matrix\": \"{matrix}\", \"product\": \"{product}\", \
                     \"m\": {m}, \"k\": {k}, \"n\": {n}, \"layers\": {layers}, \"best_s\": {best:e}, \"median_s\": {median:e}, \
                     \"gflops_best\": {:.1}, \"gflops_median\": {:.1}}}",
                    flops / best / 1e9,
                    flops / median / 1e9
                );
            }
        }
    }
}
