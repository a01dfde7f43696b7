#!/usr/bin/env python3
"""Training speed of attn-trace against eager PyTorch, in alternating runs.

For each round and each config, runs `attn-trace train --json` and then bench/pytorch_train.py
(A B A B ...), each printing tokens/s, and records how busy the rest of the machine was during
the run (CPU time of other processes, in cores, from /proc/stat minus the run's own CPU time),
and tokens per CPU-second of each program (its own CPU time, all threads: attn-trace's counts
the whole process, start and final validation included; PyTorch's the timed steps only), a
measure of work per core that the others' load disturbs much less than wall time.
Before each run it waits (up to --quiet-wait seconds) for the others to use less than
--quiet cores, so that runs land in the machine's quieter moments; a run that had to start
anyway is still counted and its load shown.

On a shared machine whose other work never stops, --fifo runs both programs at real-time
priority (chrt -f 1, root only): the others then wait, which approximates a quiet machine; the
load column shows what was left to them.

PyTorch comes from the Python running this script, or --python, or $TORCH_PYTHON (e.g. a venv's).
Run from the repository root after `cargo build --release`:
  python3 bench/compare.py --rounds 3                 # as is (AVX-512 where the CPU has it)
  python3 bench/compare.py --rounds 3 --long          # the long-context table, both PyTorch forms
  python3 bench/compare.py --rounds 3 --avx2 --bin /tmp/attn-trace-avx2
The second form is the AVX2-only machine: the binary built with
`cargo build --release --no-default-features` (the sgemm without its AVX-512 kernels: check with
`nm -C BIN | grep -E 'kernel_target_avx512|gemm_f32'`, which prints nothing for it), run with
ATTN_TRACE_SIMD=avx2; PyTorch with ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2
ONEDNN_MAX_CPU_ISA=AVX2.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# name, B, T, C, L, H, attn-trace steps, PyTorch steps (each run a few seconds), PyTorch's
# attention: (a)-(c) against eager PyTorch as written, the long context (d) against its fused
# scaled_dot_product_attention. attn-trace runs the attention `train` picks by default.
CONFIGS = {
    "a": (4, 64, 64, 1, 1, 3000, 400, "explicit"),
    "b": (16, 64, 128, 2, 4, 400, 80, "explicit"),
    "c": (8, 128, 256, 4, 8, 60, 20, "explicit"),
    "d": (4, 1024, 128, 2, 4, 16, 8, "sdpa"),
}

# --long: B=4, L=2, the sequence lengths and widths of the long-context table, each run by both
# of attn-trace's kernels and both PyTorch forms; steps per run scale as 1/T
LONG_T = (256, 512, 1024, 2048)
LONG_CH = ((128, 4), (256, 8))
LONG_RUNS = (("naive", "ours"), ("flash", "ours"), ("explicit", "torch"), ("sdpa", "torch"))
HZ = os.sysconf("SC_CLK_TCK")


def busy_jiffies():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]  # idle + iowait
    return sum(v[:8]) - idle  # user nice system idle iowait irq softirq steal


def others_load(seconds):
    """Cores the machine's other processes used over the next `seconds`."""
    b0 = busy_jiffies()
    time.sleep(seconds)
    return (busy_jiffies() - b0) / HZ / seconds


def wait_quiet(limit, cores):
    t0 = time.time()
    load = others_load(1.0)
    while load > cores and time.time() - t0 < limit:
        load = others_load(2.0)
    return load


def environments(threads, avx2):
    """The environments of attn-trace and of PyTorch: `threads` threads for attn-trace (PyTorch's
    scripts take --threads), and with `avx2` both capped at AVX2."""
    ours_env, torch_env = dict(os.environ), dict(os.environ)
    ours_env["RAYON_NUM_THREADS"] = str(threads)
    if avx2:
        ours_env["ATTN_TRACE_SIMD"] = "avx2"
        torch_env.update(ATEN_CPU_CAPABILITY="avx2", MKL_ENABLE_INSTRUCTIONS="AVX2", ONEDNN_MAX_CPU_ISA="AVX2")
    return ours_env, torch_env


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--configs", default="a,b,c")
    ap.add_argument("--bin", default="target/release/attn-trace")
    ap.add_argument("--avx2", action="store_true", help="cap both programs at AVX2")
    ap.add_argument("--quiet", type=float, default=0.3, help="cores the others may use when a run starts")
    ap.add_argument("--quiet-wait", type=float, default=60, help="seconds to wait for that at most")
    ap.add_argument(
        "--python",
        default=os.environ.get("TORCH_PYTHON", sys.executable),
        help="the Python that has PyTorch (default: $TORCH_PYTHON, else the one running this script)",
    )
    ap.add_argument("--threads", type=int, default=2, help="threads of each program (attn-trace: RAYON_NUM_THREADS)")
    ap.add_argument(
        "--fifo",
        action="store_true",
        help="run both programs under `chrt -f 1` (real-time priority, needs root): the machine's other "
        "work waits while they run (the kernel still leaves it 5%% of each second), as on a quiet machine",
    )
    ap.add_argument(
        "--long",
        action="store_true",
        help="the long-context table instead: T = 256..2048, C128 H4 and C256 H8, attn-trace naive and flash "
        "against PyTorch explicit and SDPA, with each run's peak memory",
    )
    ap.add_argument("--seqs", default=",".join(map(str, LONG_T)), help="--long: the sequence lengths to run")
    a = ap.parse_args()

    ours_env, torch_env = environments(a.threads, a.avx2)
    here = os.path.dirname(os.path.abspath(__file__))
    if a.long:
        long_table(a, ours_env, torch_env, here)
        return
    keys = ("ours", "torch", "ratio", "load", "ours_cpu", "torch_cpu", "cpu_ratio")
    results = {c: {k: [] for k in keys} for c in a.configs.split(",")}
    for r in range(a.rounds):
        for name in results:
            B, T, C, L, H, ours_steps, torch_steps, torch_attention = CONFIGS[name]
            size = ["--batch", str(B), "--seq", str(T), "--dmodel", str(C), "--layers", str(L), "--heads", str(H)]
            pair = {}
            for who in ("ours", "torch"):
                if who == "ours":
                    cmd = [a.bin, "train", "--json", *size, "--steps", str(ours_steps), "--log-every", str(ours_steps)]
                    env = ours_env
                else:
                    cmd = [a.python, os.path.join(here, "pytorch_train.py"), *size, "--steps", str(torch_steps)]
                    cmd += ["--attention", torch_attention]
                    cmd += ["--threads", str(a.threads)]
                    env = torch_env
                if a.fifo:
                    cmd = ["chrt", "-f", "1", *cmd]
                before = wait_quiet(a.quiet_wait, a.quiet)
                t0 = time.time()
                usage0 = os.times()
                b0 = busy_jiffies()
                out = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, check=True).stdout
                wall = time.time() - t0
                usage1 = os.times()
                own = (usage1.children_user - usage0.children_user) + (usage1.children_system - usage0.children_system)
                others = max(0.0, (busy_jiffies() - b0) / HZ - own) / wall
                line = json.loads(out.strip().splitlines()[-1])
                tps = line["tokens_per_s"]
                steps = ours_steps if who == "ours" else torch_steps
                cpu = own if who == "ours" else line["cpu_seconds"]
                per_cpu = steps * B * T / cpu
                pair[who], pair[who + "_cpu"] = tps, per_cpu
                results[name][who].append(tps)
                results[name][who + "_cpu"].append(per_cpu)
                results[name]["load"].append(others)
                print(
                    f"round {r + 1} ({name}) {who:5}: {tps:10.0f} tokens/s {per_cpu:10.0f} tokens/CPU-s   "
                    f"others used {others:.2f} cores during the run ({before:.2f} just before)",
                    flush=True,
                )
            results[name]["ratio"].append(pair["ours"] / pair["torch"])
            results[name]["cpu_ratio"].append(pair["ours_cpu"] / pair["torch_cpu"])

    mode = ("AVX2 only" if a.avx2 else "as is") + (", SCHED_FIFO" if a.fifo else "")
    print(f"\nsummary ({mode}, {a.threads} threads, {a.rounds} alternating rounds): min / median / max")
    print("| config | attn-trace tokens/s | PyTorch tokens/s | ratio | others' load (cores) | ratio per CPU-s |")
    print("|---|---|---|---|---|---|")
    for name, res in results.items():
        B, T, C, L, H, *_, torch_attention = CONFIGS[name]
        rng = lambda xs, f: f"{f(min(xs))} / {f(statistics.median(xs))} / {f(max(xs))}"
        k = lambda x: f"{x / 1000:.1f}k"
        print(
            f"| ({name}) B{B} T{T} C{C} L{L} H{H} | {rng(res['ours'], k)} | {rng(res['torch'], k)} ({torch_attention}) | "
            f"{rng(res['ratio'], lambda x: f'{x:.2f}')} | {rng(res['load'], lambda x: f'{x:.2f}')} | "
            f"{rng(res['cpu_ratio'], lambda x: f'{x:.2f}')} |"
        )


def run_measured(cmd, env):
    """Runs `cmd`; returns its last JSON line and its peak resident memory in MiB (wait4's rusage
    of that child alone)."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} exited with {proc.returncode}")
    return json.loads(out.strip().splitlines()[-1]), usage.ru_maxrss / 1024


def long_table(a, ours_env, torch_env, here):
    """Tokens/s (and peak MiB) of the four attention forms for each long-context shape, the four
    run one after another in each round; medians over the rounds."""
    res = {}
    seqs = [int(t) for t in a.seqs.split(",")]
    for r in range(a.rounds):
        for C, H in LONG_CH:
            for T in seqs:
                size = ["--batch", "4", "--seq", str(T), "--dmodel", str(C), "--layers", "2", "--heads", str(H)]
                for form, who in LONG_RUNS:
                    steps = max(3, (40 if who == "ours" else 20) * 256 // T)
                    if who == "ours":
                        cmd = [a.bin, "train", "--json", *size, "--attention", form, "--steps", str(steps)]
                        cmd += ["--log-every", str(steps)]
                        env = ours_env
                    else:
                        cmd = [a.python, os.path.join(here, "pytorch_train.py"), *size, "--steps", str(steps)]
                        cmd += ["--attention", form, "--threads", str(a.threads), "--warmup", "2"]
                        env = torch_env
                    if a.fifo:
                        cmd = ["chrt", "-f", "1", *cmd]
                    wait_quiet(a.quiet_wait, a.quiet)
                    line, mib = run_measured(cmd, env)
                    cell = res.setdefault((C, H, T, form), {"tps": [], "mib": []})
                    cell["tps"].append(line["tokens_per_s"])
                    cell["mib"].append(mib)
                    print(f"round {r + 1} C{C} H{H} T{T} {who} {form:8}: {line['tokens_per_s']:8.0f} tokens/s {mib:7.0f} MiB", flush=True)
    mode = ("AVX2 only" if a.avx2 else "as is") + (", SCHED_FIFO" if a.fifo else "")
    print(f"\nlong context ({mode}, B=4 L=2, {a.threads} threads, {a.rounds} rounds): median tokens/s (peak MiB)")
    print("| C, H | T | attn-trace naive | attn-trace flash | PyTorch explicit | PyTorch SDPA | flash / SDPA |")
    print("|---|---|---|---|---|---|---|")
    med = statistics.median
    for C, H in LONG_CH:
        for T in seqs:
            cells = [res[(C, H, T, form)] for form, _ in LONG_RUNS]
            text = [f"{med(c['tps']) / 1000:.1f}k ({med(c['mib']):.0f})" for c in cells]
            ratio = med(cells[1]["tps"]) / med(cells[3]["tps"])
            print(f"| C{C} H{H} | {T} | " + " | ".join(text) + f" | {ratio:.2f} |")


if __name__ == "__main__":
    main()
