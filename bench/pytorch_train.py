#!/usr/bin/env python3
"""TinyGPT in eager PyTorch, for comparing training speed with `attn-trace train --json`.

The same model as crates/model/src/gpt.rs (docs/tinygpt.md): byte tokens, learned token and position
embeddings, L pre-LN blocks (LayerNorm without scale or shift, fused q|k|v projection, causal
softmax attention over H heads with scores scaled by 1/sqrt(D) and hidden pairs set to -1e9,
output projection, residual; LayerNorm, C -> 4C, GELU (tanh), 4C -> C, residual), a final
LayerNorm and an untied head C -> 256, mean cross-entropy of the next byte. AdamW with the
program's defaults (lr 3e-4, betas 0.9/0.999, eps 1e-8, weight decay 0.01 on every parameter).
The data is the built-in `kernels` corpus, read from the same source files in the same order
and split the same way (last tenth held out); each step draws B random windows of T bytes.

Timing is counted as `train --json` counts it: each step's wall time (batch draw, forward,
backward, optimizer), no validation. `--warmup` steps run first and are not counted (PyTorch
allocates and picks kernels on its first steps; leaving them out favours PyTorch).

Attention is written out (`--attention explicit`, the default: scores, mask, softmax, weighted
sum, as the naive kernel does) or PyTorch's fused `scaled_dot_product_attention` (`--attention
sdpa`, whose CPU path is a tiled flash kernel that keeps no [B,H,T,T] tensor).

Run from the repository root:
  python3 bench/pytorch_train.py --batch 16 --seq 64 --dmodel 128 --layers 2 --heads 4 --steps 200
It prints one JSON line like the last line of `attn-trace train --json`:
  {"done": true, "steps": ..., "loss": ..., "tokens_per_s": ..., "seconds": ..., "cpu_seconds": ...}
(cpu_seconds: CPU time of all its threads over the timed steps).
With `--profile` the timed steps run under torch.profiler and the line adds "shares": each part of
the step's share of the operators' own CPU time (attention, linear layers, GELU, the rest), the
groups bench/breakdown.py sets beside attn-trace's.
Instruction sets: ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2
cap PyTorch's own kernels, MKL's and oneDNN's at AVX2.
"""

import argparse
import json
import math
import os
import time

import torch
import torch.nn.functional as F
from torch import nn

# crates/model/src/data.rs, KERNELS_CORPUS
CORPUS = [
    "crates/core/src/kernels/mod.rs",
    "crates/core/src/kernels/attention_1h.rs",
    "crates/core/src/kernels/attention_mha.rs",
    "crates/core/src/kernels/softmax.rs",
    "crates/core/src/kernels/linear.rs",
    "crates/core/src/kernels/split.rs",
    "crates/core/src/engine/inputs.rs",
    "crates/core/src/engine/passes.rs",
    "crates/core/src/engine/mod.rs",
]
VOCAB = 256

# --profile: which part of the step each operator is (by its own time, children excluded); an
# operator named in none of these is "other"
PARTS = {
    "attention": (
        "aten::_scaled_dot_product_flash_attention_for_cpu",
        "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
        "aten::bmm",
        "aten::_softmax",
        "aten::_softmax_backward_data",
        "aten::masked_fill",
        "aten::masked_fill_",
    ),
    "linear": ("aten::mm", "aten::addmm"),
    "gelu": ("aten::gelu", "aten::gelu_backward"),
}


def layernorm(x):  # no learnable scale or shift, eps as in crates/model/src/ops/layernorm.rs
    return F.layer_norm(x, x.shape[-1:], eps=1e-5)


class Block(nn.Module):
    def __init__(self, C, H, sdpa):
        super().__init__()
        self.H, self.sdpa = H, sdpa
        self.qkv = nn.Linear(C, 3 * C)
        self.proj = nn.Linear(C, C)
        self.fc = nn.Linear(C, 4 * C)
        self.out = nn.Linear(4 * C, C)

    def forward(self, x, hidden):
        B, T, C = x.shape
        H, D = self.H, C // self.H
        # attention block: x_mid = x + proj(attention(split(LN(x)·W_qkv + b_qkv)))
        q, k, v = (t.reshape(B, T, H, D).transpose(1, 2) for t in self.qkv(layernorm(x)).split(C, dim=-1))
        if self.sdpa:
            # the fused kernel (on a CPU a tiled flash attention): no [B,H,T,T] tensor is kept
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            s = (q @ k.transpose(-2, -1) * (1.0 / math.sqrt(D))).masked_fill(hidden, -1e9)
            att = s.softmax(-1) @ v
        att = att.transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(att)
        # MLP block: x_out = x_mid + W_out·gelu(W_fc·LN(x_mid) + b_fc) + b_out
        return x + self.out(F.gelu(self.fc(layernorm(x)), approximate="tanh"))


class TinyGpt(nn.Module):
    def __init__(self, T, C, L, H, sdpa=False):
        super().__init__()
        self.wte = nn.Parameter(torch.randn(VOCAB, C) / math.sqrt(VOCAB))
        self.wpe = nn.Parameter(torch.randn(T, C) / math.sqrt(T))
        self.blocks = nn.ModuleList(Block(C, H, sdpa) for _ in range(L))
        self.lm = nn.Linear(C, VOCAB)
        # key j after query i is hidden
        self.register_buffer("hidden", torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1))

    def forward(self, tokens, targets):
        T = tokens.shape[1]
        x = self.wte[tokens] + self.wpe[:T]
        for block in self.blocks:
            x = block(x, self.hidden[:T, :T])
        logits = self.lm(layernorm(x))
        return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--dmodel", type=int, default=64)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--heads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument(
        "--attention",
        choices=["explicit", "sdpa"],
        default="explicit",
        help="explicit: softmax(QK^T/sqrt(D) + mask)·V as written; sdpa: F.scaled_dot_product_attention(is_causal=True)",
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--profile", action="store_true", help="add each part's share of the step (torch.profiler)")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    data = b"".join(open(os.path.join(a.root, p), "rb").read() for p in CORPUS)
    n_val = max(len(data) // 10, a.seq + 1)
    train = torch.tensor(list(data[: len(data) - n_val]), dtype=torch.long)

    model = TinyGpt(a.seq, a.dmodel, a.layers, a.heads, sdpa=a.attention == "sdpa")
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    offsets = torch.arange(a.seq + 1)
    last_start = len(train) - a.seq - 1

    def step():
        starts = torch.randint(0, last_start + 1, (a.batch, 1))
        windows = train[starts + offsets]
        loss = model(windows[:, :-1], windows[:, 1:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(a.warmup):
        step()
    started, cpu0 = time.perf_counter(), time.process_time()
    secs = 0.0
    loss = float("nan")
    prof = None
    if a.profile:
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CPU])
        prof.__enter__()
    for _ in range(a.steps):
        t0 = time.perf_counter()
        loss = step()
        secs += time.perf_counter() - t0
    extra = {}
    if prof is not None:
        prof.__exit__(None, None, None)
        own = {}
        for ev in prof.key_averages():
            part = next((p for p, names in PARTS.items() if ev.key in names), "other")
            own[part] = own.get(part, 0.0) + ev.self_cpu_time_total
        total = sum(own.values()) or 1.0
        extra["shares"] = {p: own.get(p, 0.0) / total for p in (*PARTS, "other")}
    print(
        json.dumps(
            {
                **extra,
                "done": True,
                "steps": a.steps,
                "loss": loss,
                "tokens_per_s": a.steps * a.batch * a.seq / max(secs, 1e-9),
                "seconds": time.perf_counter() - started,
                "cpu_seconds": time.process_time() - cpu0,
                "capability": torch.backends.cpu.get_cpu_capability(),
                "threads": torch.get_num_threads(),
                "attention": a.attention,
            }
        )
    )


if __name__ == "__main__":
    main()
