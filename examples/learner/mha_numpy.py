#!/usr/bin/env python3
"""Multi-head attention written the vectorised numpy way, recorded by wrapping only its buffers.

The functions below are ordinary numpy, in the style of the small GPT implementations people
write to learn (a `linear`, a `softmax`, an `attention` for one head, an `mha` over the heads):
no loops over elements and no recorder calls inside. The recorder sees the buffers: the given
tensors wrapped with `rec.array`, and `att` and `out` made with `rec.zeros`. Every element a
slice or an operator touches is recorded, at the line that touched it.

    attn-trace grade scenarios/mha_walkthrough.toml -- python3 examples/learner/mha_numpy.py

By hand:

    attn-trace inputs scenarios/mha_walkthrough.toml -o inputs.txt
    python3 examples/learner/mha_numpy.py inputs.txt trace.jsonl
    attn-trace grade scenarios/mha_walkthrough.toml trace.jsonl

`--scale-by-c` divides the scores by √C instead of √D, a mistake the grade finds at its line.
Needs numpy (the recorder itself does not).
"""

import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "recorders"))
from attn_record import Recorder, load_inputs  # noqa: E402


def linear(x, w, b):
    """[n, i] @ [i, o] + [o]: the weights are stored [in, out]."""
    return x @ w + b


def softmax(s):
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))  # the row's maximum first: exp never overflows
    return e / np.sum(e, axis=-1, keepdims=True)


def attention(q, k, v, mask, width):
    """One head: [n, d] queries against [n, d] keys and values; `mask` is 0 where a key is seen
    and a large negative number where it is hidden."""
    return softmax(q @ k.T / np.sqrt(width) + mask) @ v


def mha(x, w_qkv, b_qkv, n_head, causal, scale_by_c=False):
    """[n, C] -> the concatenated heads [n, C]."""
    n, C = x.shape
    qkv = linear(x, w_qkv, b_qkv)                       # [n, 3C]
    q, k, v = np.split(qkv, 3, axis=-1)                 # [n, C] each
    heads = zip(*(np.split(t, n_head, axis=-1) for t in (q, k, v)))
    hidden = (1.0 - np.tri(n, dtype=np.float32)) * -1e10 if causal else np.zeros((n, n), np.float32)
    width = C if scale_by_c else C // n_head            # MISTAKE with --scale-by-c: √C, not √D
    return np.hstack([attention(qh, kh, vh, hidden, width) for qh, kh, vh in heads])


def main(args):
    scale_by_c = "--scale-by-c" in args
    paths = [a for a in args if a != "--scale-by-c"]
    inp = load_inputs(paths[0] if paths else None)
    B, T, C, H = (inp.dims[d] for d in "BTCH")
    with Recorder(inp, paths[1] if len(paths) > 1 else None) as rec:
        # the given tensors, with their shapes: x [B,T,C], w_qkv [C,3C], b_qkv [3C], ...
        x, w_qkv, b_qkv = rec.array("x"), rec.array("w_qkv"), rec.array("b_qkv")
        w_proj, b_proj = rec.array("w_proj"), rec.array("b_proj")
        att = rec.zeros("att", (B, T, C))   # the heads side by side, before the output projection
        out = rec.zeros("out", (B, T, C))
        causal = inp.params.get("causal", 1) == 1
        for bb in range(B):
            att[bb] = mha(x[bb], w_qkv, b_qkv, H, causal, scale_by_c)
            out[bb] = linear(att[bb], w_proj, b_proj)


if __name__ == "__main__":
    main(sys.argv[1:])
