#!/usr/bin/env python3
"""The PyTorch loader of docs/tinygpt.md, run as the page prints it, against attn-trace itself:
its loss on a file beside `attn-trace eval --data FILE`, and its greedy continuation of a prompt
beside `attn-trace sample --temp 0`. Exit status 1 when either differs.

A manual check (it needs PyTorch, which the test suite does not): after changing the page's
loader or what a checkpoint holds, train a checkpoint of each kind and run this on it, e.g.

  cargo build --release
  target/release/attn-trace train --dataset copy --steps 300 --heads 4 --window 8 --sinks 1 \\
      --dmodel 32 --seq 24 --batch 8 --lr 3e-3 --save /tmp/window.safetensors
  python3 bench/torch_loader.py /tmp/window.safetensors --data docs/tinygpt.md

(pip install torch safetensors numpy)
"""

import argparse
import json
import math
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "attn-trace"

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("checkpoint")
ap.add_argument("--data", required=True, help="the file whose loss both compute")
ap.add_argument("--prompt", default="hello|")
ap.add_argument("--gen", type=int, default=6)
ap.add_argument("--page", default=str(ROOT / "docs" / "tinygpt.md"))
a = ap.parse_args()

# the page's first Python block after its PyTorch heading, as printed
page = pathlib.Path(a.page).read_text(encoding="utf-8")
section = page.split("## Loading a checkpoint in PyTorch", 1)[1]
code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
definitions, _sampling = code.split("\ntokens = torch.tensor(", 1)
definitions = definitions.replace('path = "copy.safetensors"', f"path = {a.checkpoint!r}")
env: dict = {}
exec(compile(definitions, "docs/tinygpt.md", "exec"), env)
torch, cfg, forward = env["torch"], env["cfg"], env["forward"]

# the loss as `eval` takes it: non-overlapping windows of seq_len bytes from byte 0, targets one
# byte later
data = torch.tensor(list(pathlib.Path(a.data).read_bytes()), dtype=torch.int64)
T = cfg["seq_len"]
n = (len(data) - 1) // T
tokens = torch.stack([data[k * T : k * T + T] for k in range(n)])
targets = torch.stack([data[k * T + 1 : k * T + T + 1] for k in range(n)])
with torch.no_grad():
    logits = forward(tokens).double()
ours = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)).item()

# the greedy continuation, as the page's own sampling loop does it
out = torch.tensor([list(a.prompt.encode())])
with torch.no_grad():
    for _ in range(a.gen):
        nxt = forward(out[:, -T:])[0, -1].argmax()
        out = torch.cat([out, nxt.view(1, 1)], dim=1)
continuation = bytes(out[0].tolist())


def run(*args: str) -> bytes:
    return subprocess.run([str(BIN), "--lang", "en", *args], check=True, capture_output=True).stdout


theirs = json.loads(run("eval", "--checkpoint", a.checkpoint, "--data", a.data, "--json"))["loss"]
sampled = run("sample", "--checkpoint", a.checkpoint, "--prompt", a.prompt, "--gen", str(a.gen), "--temp", "0")
sampled = sampled.removesuffix(b"\n")  # `sample` ends its output with a newline of its own
meta = {k: cfg.get(k) for k in ("n_heads", "n_kv_heads")} | {"window": env.get("window"), "sinks": env.get("sinks")}
print(f"checkpoint   {a.checkpoint} {meta}")
print(f"loss         PyTorch {ours:.6f}   attn-trace eval {theirs:.6f}")
print(f"continuation PyTorch {continuation!r}   attn-trace sample {sampled!r}")
same = math.isclose(ours, theirs, abs_tol=5e-5) and continuation == sampled
print("the same" if same else "DIFFERENT")
sys.exit(0 if same else 1)
