#!/usr/bin/env python3
"""Where a training step's time goes, attn-trace beside PyTorch: attention, linear layers, GELU, rest.

For one shape, in alternating rounds: `attn-trace train --json` under `perf record` (its samples
grouped by the function they fell in) and `bench/pytorch_train.py --profile` (torch.profiler, each
operator's own time). Each part's share times the step's time gives milliseconds per step (for
PyTorch the step's time of a second run without the profiler); the table shows the medians over
the rounds.

  attention  attn-trace: attn_trace_core::untraced::* (flash's or the naive kernel's fast path)
             PyTorch: the SDPA operators, or bmm, softmax and masked_fill when written out
  linear     attn-trace: the sgemm's kernel and packing (matrixmultiply::*, or gemm_f32::* and
             gemm_common::*, whichever the run uses); PyTorch: mm, addmm
  gelu       functions or operators named gelu
  other      the rest (layer norms, embeddings, cross-entropy, AdamW, the batch draw)

attn-trace's samples also cover its start and the validation loss at the end (a few percent of a
run of 16 steps at T = 1024); PyTorch's profiler adds a small cost to every operator, so the share
of its many small ones ("other") comes out larger than it is, and its large ones' a little smaller.

Needs `perf` (linux-tools) and PyTorch. Run from the repository root:
  python3 bench/breakdown.py --config d --rounds 3 --avx2 --bin /tmp/attn-trace-avx2 --fifo
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from compare import CONFIGS, environments

PARTS = ("attention", "linear", "gelu", "other")


def part_of(symbol):
    if symbol.startswith(("attn_trace_core::untraced::", "attn_trace::untraced::")):
        return "attention"
    if symbol.startswith(("matrixmultiply::", "gemm_f32::", "gemm_common::")):
        return "linear"
    if "gelu" in symbol:
        return "gelu"
    return "other"


def ours(a, env, size, steps):
    """attn-trace under perf: its last JSON line and each part's share of the samples."""
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        cmd = ["perf", "record", "-q", "-F", "999", "-o", data, "--", a.bin, "train", "--json", *size]
        cmd += ["--steps", str(steps), "--log-every", str(steps)]
        if a.fifo:
            cmd = ["chrt", "-f", "1", *cmd]
        out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
        report = subprocess.run(
            ["perf", "report", "-i", data, "--no-children", "--sort", "sym", "--stdio", "-q"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            check=True,
        ).stdout
    shares = dict.fromkeys(PARTS, 0.0)
    for line in report.splitlines():
        fields = line.split(None, 2)  # "12.34%  [.]  symbol"
        if len(fields) == 3 and fields[0].endswith("%"):
            shares[part_of(fields[2].strip())] += float(fields[0][:-1]) / 100
    total = sum(shares.values()) or 1.0
    return json.loads(out.strip().splitlines()[-1]), {p: s / total for p, s in shares.items()}


def torch_run(a, env, size, steps, attention, here):
    """PyTorch twice: as it runs (its last JSON line, the step's time) and under its profiler
    (each part's share; the profiler's own cost would lengthen the step)."""
    lines = []
    for profile in (False, True):
        cmd = [a.python, os.path.join(here, "pytorch_train.py"), *size, "--steps", str(steps)]
        cmd += ["--attention", attention, "--threads", str(a.threads)] + (["--profile"] if profile else [])
        if a.fifo:
            cmd = ["chrt", "-f", "1", *cmd]
        run = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited with {run.returncode}:\n{run.stderr}")
        lines.append(json.loads(run.stdout.strip().splitlines()[-1]))
    return lines[0], lines[1]["shares"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="d", choices=sorted(CONFIGS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", default="target/release/attn-trace")
    ap.add_argument("--avx2", action="store_true", help="cap both programs at AVX2")
    ap.add_argument("--fifo", action="store_true", help="run both under `chrt -f 1` (needs root)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--python",
        default=os.environ.get("TORCH_PYTHON", sys.executable),
        help="the Python that has PyTorch (default: $TORCH_PYTHON, else the one running this script)",
    )
    a = ap.parse_args()

    ours_env, torch_env = environments(a.threads, a.avx2)
    here = os.path.dirname(os.path.abspath(__file__))
    B, T, C, L, H, ours_steps, torch_steps, attention = CONFIGS[a.config]
    size = ["--batch", str(B), "--seq", str(T), "--dmodel", str(C), "--layers", str(L), "--heads", str(H)]
    ms = {who: {p: [] for p in (*PARTS, "step")} for who in ("ours", "torch")}
    for r in range(a.rounds):
        for who in ("ours", "torch"):
            if who == "ours":
                line, shares = ours(a, ours_env, size, ours_steps)
            else:
                line, shares = torch_run(a, torch_env, size, torch_steps, attention, here)
            step_ms = 1000 * B * T / line["tokens_per_s"]
            ms[who]["step"].append(step_ms)
            for p in PARTS:
                ms[who][p].append(shares[p] * step_ms)
            parts = "  ".join(f"{p} {shares[p] * step_ms:6.1f}" for p in PARTS)
            print(f"round {r + 1} {who:5}: step {step_ms:6.1f} ms   {parts}", flush=True)
    med = statistics.median
    mode = ("AVX2 only" if a.avx2 else "as is") + (", SCHED_FIFO" if a.fifo else "")
    print(f"\n({a.config}) B{B} T{T} C{C} L{L} H{H}, PyTorch {attention} ({mode}, {a.threads} threads, {a.rounds} rounds)")
    print("ms per step, medians | attn-trace | PyTorch | attn-trace / PyTorch")
    print("|---|---|---|---|")
    for p in (*PARTS, "step"):
        o, t = med(ms["ours"][p]), med(ms["torch"][p])
        print(f"| {p} | {o:.1f} | {t:.1f} | {o / t if t else float('nan'):.2f} |")


if __name__ == "__main__":
    main()
