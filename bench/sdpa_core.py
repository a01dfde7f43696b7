#!/usr/bin/env python3
"""PyTorch's fused attention alone, for comparing with `cargo bench --bench attention`: the
forward and the forward plus backward of `scaled_dot_product_attention` (causal) on one shard's
shapes, one thread, in the thread's CPU time, as the benchmark measures ours. Prints the
minimum and median of --reps calls of each.

  python3 bench/sdpa_core.py
  ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 python3 bench/sdpa_core.py
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

# one shard of training's batch, as benches/attention.rs: (name, B, T, C, H)
SHAPES = (
    ("train form T24 C32 H4", 8, 24, 32, 4),
    ("T256 C128 H4", 2, 256, 128, 4),
    ("T1024 C128 H4", 2, 1024, 128, 4),
    ("T2048 C256 H8", 2, 2048, 256, 8),
)

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--reps", type=int, default=15)
a = ap.parse_args()
torch.set_num_threads(1)
torch.manual_seed(0)
for name, B, T, C, H in SHAPES:
    D = C // H
    q, k, v = (torch.randn(B, H, T, D, requires_grad=True) for _ in range(3))
    g = torch.randn(B, H, T, D)
    reps = a.reps if T <= 1024 else 3  # the longest shape takes a second a call
    fwd, both = [], []
    for r in range(reps + 2):
        t0 = time.thread_time()
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        t1 = time.thread_time()
        o.backward(g)
        t2 = time.thread_time()
        q.grad = k.grad = v.grad = None
        if r >= 2:  # two calls to warm up
            fwd.append(t1 - t0)
            both.append(t2 - t0)
    ms = lambda xs: f"{min(xs) * 1e3:.2f} / {statistics.median(xs) * 1e3:.2f} ms"
    print(f"{name}: forward {ms(fwd)}, forward and backward {ms(both)} (min / median of {reps})")
