"""Reference numbers for tests/it/engine_torch.rs: grouped-query attention with rotary
positions, forward and backward, in PyTorch autograd (float64).

Run with `python3 tests/data/torch_gqa_rope.py > tests/data/torch_gqa_rope.json` (needs torch;
the tests only read the JSON). Inputs are the same float32 values the Rust test builds from
`input(n, k)`; every intermediate that attn-trace reports is retained and written out.
"""
import json

import torch

torch.set_default_dtype(torch.float64)


def inp(n, k):
    # exactly representable in f32 after one rounding, computed the same way in the test
    vals = [((i * 7919 + k * 104729) % 2001) / 1000.0 - 1.0 for i in range(n)]
    return torch.tensor(vals, dtype=torch.float32).to(torch.float64)


def rope_turn(x, heads, pairs, base):
    # x [B,T,heads*D] -> turned copy; pair m = (2m, 2m+1) or (m, m + D/2), angle t * base^(-2m/D)
    B, T, W = x.shape
    D = W // heads
    x = x.view(B, T, heads, D)
    m = torch.arange(D // 2, dtype=torch.float64)
    theta = base ** (-2.0 * m / D)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * theta[None, :]  # [T, D/2]
    cos, sin = ang.cos()[None, :, None, :], ang.sin()[None, :, None, :]
    if pairs == "interleaved":
        x0, x1 = x[..., 0::2], x[..., 1::2]
        y0, y1 = x0 * cos - x1 * sin, x0 * sin + x1 * cos
        y = torch.stack([y0, y1], dim=-1).reshape(B, T, heads, D)
    else:
        x0, x1 = x[..., : D // 2], x[..., D // 2 :]
        y = torch.cat([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1)
    return y.reshape(B, T, W)


def case(name, B, T, C, H, H_kv, rope, base):
    D = C // H
    KV = H_kv * D
    x = inp(B * T * C, 1).view(B, T, C).requires_grad_()
    w_qkv = inp(C * (C + 2 * KV), 2).view(C, C + 2 * KV).requires_grad_()
    b_qkv = inp(C + 2 * KV, 3).requires_grad_()
    w_proj = inp(C * C, 4).view(C, C).requires_grad_()
    b_proj = inp(C, 5).requires_grad_()
    d_out = inp(B * T * C, 6).view(B, T, C)

    qkv = x @ w_qkv + b_qkv
    qkv.retain_grad()
    q, k, v = qkv[..., :C], qkv[..., C : C + KV], qkv[..., C + KV :]
    if rope:
        qr, kr = rope_turn(q, H, rope, base), rope_turn(k, H_kv, rope, base)
    else:
        qr, kr = q, k
    G = H // H_kv
    qh = qr.view(B, T, H, D).transpose(1, 2)  # [B,H,T,D]
    kh = kr.view(B, T, H_kv, D).transpose(1, 2).repeat_interleave(G, dim=1)
    vh = v.view(B, T, H_kv, D).transpose(1, 2).repeat_interleave(G, dim=1)
    scores = (qh @ kh.transpose(-1, -2)) / D**0.5
    hidden = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(hidden, -1e9)
    scores.retain_grad()
    probs = scores.softmax(-1)
    probs.retain_grad()
    att = (probs @ vh).transpose(1, 2).reshape(B, T, C)
    att.retain_grad()
    out = att @ w_proj + b_proj
    (out * d_out).sum().backward()

    # q, k after the rotation (attn-trace turns them in place); d_q, d_k, d_v of the split's
    # outputs, before the rotation
    d_qkv = qkv.grad
    flat = lambda t: [float(f"{v:.9g}") for v in t.detach().reshape(-1).tolist()]
    return {
        "name": name,
        "shape": [B, T, C, H, H_kv],
        "rope": rope,
        "base": base,
        "tensors": {
            "q": flat(qr),
            "k": flat(kr),
            "v": flat(v),
            "scores": flat(scores),
            "probs": flat(probs),
            "att": flat(att),
            "out": flat(out),
            "d_att": flat(att.grad),
            "d_probs": flat(probs.grad),
            "d_scores": flat(scores.grad),
            "d_q": flat(d_qkv[..., :C]),
            "d_k": flat(d_qkv[..., C : C + KV]),
            "d_v": flat(d_qkv[..., C + KV :]),
            "d_qkv": flat(d_qkv),
            "d_x": flat(x.grad),
            "d_w_qkv": flat(w_qkv.grad),
            "d_b_qkv": flat(b_qkv.grad),
            "d_w_proj": flat(w_proj.grad),
            "d_b_proj": flat(b_proj.grad),
        },
    }


cases = [
    case("gqa H=4 H_kv=2, rope half", 2, 5, 8, 4, 2, "half", 10000.0),
    case("mqa H=3 H_kv=1, rope interleaved base 100", 1, 6, 12, 3, 1, "interleaved", 100.0),
    case("gqa H=H_kv=2, no rope", 2, 4, 8, 2, 2, None, 10000.0),
    case("gqa H=6 H_kv=3, rope interleaved", 1, 7, 12, 6, 3, "interleaved", 10000.0),
    case("one head (the baseline), rope half", 2, 4, 6, 1, 1, "half", 10000.0),
]
print(json.dumps(cases))
