#!/usr/bin/env python3
"""PyTorch's matrix product on this machine, for comparing with the sgemm ceiling that
`cargo run --release --example speed` measures for the linear layers' sgemm: the best of ten
`a @ b` of n×n f32 matrices (2·n³ floating-point operations each) on the given number of threads.

  python3 bench/torch_sgemm.py --threads 2
  ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 python3 bench/torch_sgemm.py --threads 2

With --shapes CONFIGS (e.g. a,b,c,d), instead the products of TinyGPT's linear layers as
`cargo bench --bench linear` times ours: for each weight matrix of each config, one training
shard's forward and two backward products (B/2·T rows), on one thread, in the thread's CPU time,
one JSON line each (bench/sgemm_shapes.py tabulates both). The weights are stored [OC, IC] as
nn.Linear stores them, and each product is the one its autograd runs: x·Wᵀ, dy·W, dyᵀ·x.
"""

import argparse
import json
import statistics
import time

import torch

# (name, B, T, C, L) as in bench/compare.py; V = 256
CONFIGS = {"a": (4, 64, 64, 1), "b": (16, 64, 128, 2), "c": (8, 128, 256, 4), "d": (4, 1024, 128, 2)}


def timed(reps, f):
    """Seconds per call of f: each timing repeats it for about 2 ms of thread CPU time; the best
    and the median of `reps` timings, after one to warm up."""
    t0 = time.thread_time()
    f()
    once = max(time.thread_time() - t0, 1e-7)
    inner = max(1, int(2e-3 / once + 0.999))
    times = []
    for _ in range(reps):
        t0 = time.thread_time()
        for _ in range(inner):
            f()
        times.append((time.thread_time() - t0) / inner)
    return min(times), statistics.median(times)


def shapes(configs, reps):
    torch.set_num_threads(1)
    for name in configs.split(","):
        B, T, C, L = CONFIGS[name]
        rows = (B + 1) // 2 * T
        for matrix, ic, oc in (("qkv", C, 3 * C), ("proj", C, C), ("fc", C, 4 * C), ("out", 4 * C, C), ("head", C, 256)):
            x, w, dy = torch.randn(rows, ic), torch.randn(oc, ic), torch.randn(rows, oc)
            # our product names (bench/linear.rs), PyTorch's own operands
            for product, m, k, n, f in (
                ("x·W", rows, ic, oc, lambda: torch.mm(x, w.t())),
                ("dy·Wᵀ", rows, oc, ic, lambda: torch.mm(dy, w)),
                ("xᵀ·dy", ic, rows, oc, lambda: torch.mm(dy.t(), x)),
            ):
                best, median = timed(reps, f)
                flops = 2.0 * m * k * n
                line = dict(who="torch", config=name, matrix=matrix, product=product, m=m, k=k, n=n)
                line.update(layers=1 if matrix == "head" else L, best_s=best, median_s=median)
                line.update(gflops_best=round(flops / best / 1e9, 1), gflops_median=round(flops / median / 1e9, 1))
                print(json.dumps(line, ensure_ascii=False), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--shapes", help="TinyGPT's products instead, for these configs (a,b,c,d), one thread")
    ap.add_argument("--reps", type=int, default=9, help="--shapes: timings per product")
    a = ap.parse_args()
    if a.shapes:
        shapes(a.shapes, a.reps)
        return
    torch.set_num_threads(a.threads)
    n = a.n
    x, y = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        x @ y
    best = 0.0
    for _ in range(10):
        t0 = time.perf_counter()
        x @ y
        best = max(best, 2 * n**3 / (time.perf_counter() - t0) / 1e9)
    print(f"torch {torch.__version__}, {n}x{n} f32 product on {a.threads} threads: best of 10 {best:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
