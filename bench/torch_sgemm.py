#!/usr/bin/env python3
"""PyTorch's matrix product on this machine, for comparing with the sgemm ceiling that
`cargo run --release --example speed` measures for matrixmultiply: the best of ten `a @ b` of
n×n f32 matrices (2·n³ floating-point operations each) on the given number of threads.

  python3 bench/torch_sgemm.py --threads 2
  ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 python3 bench/torch_sgemm.py --threads 2
"""

import argparse
import time

import torch

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--n", type=int, default=2048)
a = ap.parse_args()
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
