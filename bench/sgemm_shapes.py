#!/usr/bin/env python3
"""The linear layers' matrix products at TinyGPT's shapes: attn-trace's sgemm libraries against
PyTorch's torch.mm, in alternating rounds, one thread each, in the thread's CPU time.

Each round runs `cargo bench --bench linear`'s binary once per library (ATTN_TRACE_SGEMM=
matrixmultiply, then gemm) and `bench/torch_sgemm.py --shapes` once; the table shows, for each
product of one training shard, each one's GFLOP/s (the median over the rounds of each run's best
timing), and for each config the time of all of a shard's products in a step (each weight
matrix's three products, times the layers) and PyTorch's time over each library's.

Run from the repository root:
  cargo bench --bench linear --no-run      # prints the path of the binary, BIN below
  python3 bench/sgemm_shapes.py --bin BIN --rounds 3 --fifo
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

LIBS = ("matrixmultiply", "gemm")


def run(cmd, env, fifo):
    if fifo:
        cmd = ["chrt", "-f", "1", *cmd]
    out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="the binary of `cargo bench --bench linear`")
    ap.add_argument("--configs", default="a,b,c,d")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=9, help="timings per product in each run (the best counts)")
    ap.add_argument(
        "--python",
        default=os.environ.get("TORCH_PYTHON", sys.executable),
        help="the Python that has PyTorch (default: $TORCH_PYTHON, else the one running this script)",
    )
    ap.add_argument("--fifo", action="store_true", help="run each under `chrt -f 1` (needs root)")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    args = ["--configs", a.configs, "--reps", str(a.reps)]
    best = {}  # (who, config, matrix, product) -> [best seconds of each round]
    info = {}
    for r in range(a.rounds):
        for who in (*LIBS, "torch"):
            if who == "torch":
                lines = run([a.python, os.path.join(here, "torch_sgemm.py"), "--shapes", a.configs, "--reps", str(a.reps)], dict(os.environ), a.fifo)
            else:
                lines = run([a.bin, *args], dict(os.environ, ATTN_TRACE_SGEMM=who), a.fifo)
            for line in lines:
                if line["who"] != who:
                    raise SystemExit(f"asked for {who}, the binary ran {line['who']} (a build without the feature avx512?)")
                key = (who, line["config"], line["matrix"], line["product"])
                best.setdefault(key, []).append(line["best_s"])
                info[key[1:]] = line
            print(f"round {r + 1}: {who} done", file=sys.stderr, flush=True)
    med = statistics.median
    gf = lambda who, key: 2.0 * info[key]["m"] * info[key]["k"] * info[key]["n"] / med(best[(who, *key)]) / 1e9
    print(f"\none thread, GFLOP/s (median over {a.rounds} rounds of each run's best of {a.reps})")
    print("| config | matrix | product (m×k×n) | " + " | ".join(LIBS) + " | torch.mm |")
    print("|---|---|---|" + "---|" * (len(LIBS) + 1))
    for key, line in info.items():
        cells = " | ".join(f"{gf(who, key):.0f}" for who in (*LIBS, "torch"))
        print(f"| ({key[0]}) | {key[1]} | {key[2]} ({line['m']}×{line['k']}×{line['n']}) | {cells} |")
    print("\na shard's products in one step (each matrix's three, times its layers), ms")
    print("| config | " + " | ".join(LIBS) + " | torch.mm | " + " | ".join(f"torch.mm / {lib}" for lib in LIBS) + " |")
    print("|---|" + "---|" * (2 * len(LIBS) + 1))
    for config in a.configs.split(","):
        keys = [k for k in info if k[0] == config]
        total = {who: sum(med(best[(who, *k)]) * info[k]["layers"] for k in keys) * 1e3 for who in (*LIBS, "torch")}
        cells = " | ".join(f"{total[who]:.2f}" for who in (*LIBS, "torch"))
        ratios = " | ".join(f"{total['torch'] / total[lib]:.2f}" for lib in LIBS)
        print(f"| ({config}) | {cells} | {ratios} |")


if __name__ == "__main__":
    main()
