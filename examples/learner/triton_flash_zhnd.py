#!/usr/bin/env python3
"""FlashAttention's forward in Triton with the heads in their own axis, [Z, H, N, D], as Triton
kernels usually lay them out: bindings tell attn-trace how these buffers lie over ours.

Our q is [B, T, H, D] (a token's heads side by side in one row of C); here the projection's
output is split into Q, K and V of shape [Z, H, N, D] (Z the batch, N the sequence), the
attention writes O [Z, H, N, D] and the row log-sum-exps M [Z, H, N], and the output projection
reads O back. Before the first access, `tt.bind` reads each buffer's strides off the tensor and
declares it a view of ours: Q of q with dimensions "b h i d", K of k "b h j d", O of att, M of
lse. The header of the trace carries them, and grade compares logical cells.

    attn-trace grade scenarios/flash.toml --variant flash -- python3 examples/learner/triton_flash_zhnd.py

Needs triton and numpy (`bash .ci/venv`).
"""

import sys

sys.dont_write_bytecode = True
from triton_flash import TILE, cdiv, linear, load_inputs, Recorder, TritonRecorder  # noqa: E402  (first: the interpreter)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

BLOCK_M = 2
BLOCK_N = 2


@triton.jit
def split_heads_kernel(qkv_ptr, q_ptr, k_ptr, v_ptr, stride_row, T,
                       stride_z, stride_h, stride_n, stride_d, C, H: tl.constexpr, D: tl.constexpr):
    """One token's row of qkv [B*T, 3C] into its [H, D] slots of Q, K and V [Z, H, N, D]."""
    row = tl.program_id(0)
    zz = row // T
    nn = row % T
    hh = tl.arange(0, H)
    dd = tl.arange(0, D)
    src = qkv_ptr + row * stride_row + hh[:, None] * D + dd[None, :]
    dst = zz * stride_z + hh[:, None] * stride_h + nn * stride_n + dd[None, :] * stride_d
    tl.store(q_ptr + dst, tl.load(src))
    tl.store(k_ptr + dst, tl.load(src + C))
    tl.store(v_ptr + dst, tl.load(src + 2 * C))


@triton.jit
def flash_forward_zhnd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, m_ptr,
                              stride_z, stride_h, stride_n, stride_d, stride_mz, stride_mh,
                              N, H, scale, CAUSAL: tl.constexpr,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    """One tile of BLOCK_M queries of head (zz, hh); Q, K, V, O share their strides."""
    start_m = tl.program_id(0) * BLOCK_M
    zz = tl.program_id(1) // H
    hh = tl.program_id(1) % H
    head = zz * stride_z + hh * stride_h  # the head's [N, D] matrix starts here
    rows = start_m + tl.arange(0, BLOCK_M)
    dd = tl.arange(0, D)
    row_ok = rows < N
    q = tl.load(q_ptr + head + rows[:, None] * stride_n + dd[None, :] * stride_d, mask=row_ok[:, None], other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, D), tl.float32)
    hi = tl.minimum(start_m + BLOCK_M, N) if CAUSAL else N
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        col_ok = cols < N
        kv = head + cols[:, None] * stride_n + dd[None, :] * stride_d
        k = tl.load(k_ptr + kv, mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        seen = col_ok[None, :]
        if CAUSAL:
            seen = seen & (cols[None, :] <= rows[:, None])
        s = tl.where(seen, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + kv, mask=col_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(o_ptr + head + rows[:, None] * stride_n + dd[None, :] * stride_d, acc / l_i[:, None],
             mask=row_ok[:, None])
    tl.store(m_ptr + zz * stride_mz + hh * stride_mh + rows, m_i + tl.log(l_i), mask=row_ok)


@triton.jit
def heads_linear_kernel(o_ptr, w_ptr, b_ptr, y_ptr, stride_z, stride_h, stride_n, stride_d,
                        T, M, N_out, H: tl.constexpr, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """y[r, :] = Σ_h O[z, h, n, :] @ w[h*D : h*D + D, :] + b, for the rows r = z*T + n: the
    heads concatenated back into a row of C as they are multiplied."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    dd = tl.arange(0, D)
    row_ok = rows < M
    col_ok = cols < N_out
    src = (rows // T) * stride_z + (rows % T) * stride_n
    acc = tl.zeros((BM, BN), tl.float32)
    for hh in range(H):
        o = tl.load(o_ptr + src[:, None] + hh * stride_h + dd[None, :] * stride_d, mask=row_ok[:, None], other=0.0)
        w = tl.load(w_ptr + (hh * D + dd[:, None]) * N_out + cols[None, :], mask=col_ok[None, :], other=0.0)
        acc += tl.dot(o, w, input_precision="ieee")
    b = tl.load(b_ptr + cols, mask=col_ok, other=0.0)
    tl.store(y_ptr + rows[:, None] * N_out + cols[None, :], acc + b[None, :], mask=row_ok[:, None] & col_ok[None, :])


def main(args):
    inp = load_inputs(args[0] if args else None)
    d = inp.dims
    B, T, C, H = d["B"], d["T"], d["C"], d["H"]
    D = C // H
    causal = inp.params.get("causal", 0) == 1
    with Recorder(inp, args[1] if len(args) > 1 else None) as rec, TritonRecorder(rec) as tt:
        Q, K, V, O = (tt.zeros(name, (B, H, T, D)) for name in ("Q", "K", "V", "O"))
        M = tt.zeros("M", (B, H, T))
        # the bindings, from the tensors' own strides, before the first access
        tt.bind("Q", "q", Q, "b h i d")
        tt.bind("K", "k", K, "b h j d")
        tt.bind("V", "v", V, "b h j d")
        tt.bind("O", "att", O, "b h i d")
        tt.bind("M", "lse", M, "b h i")
        rows = B * T
        x = tt.input("x").reshape(rows, C)
        qkv = tt.zeros("qkv", (rows, 3 * C))
        linear(x, tt.input("w_qkv"), tt.input("b_qkv"), qkv)
        split_heads_kernel[(rows,)](qkv, Q, K, V, qkv.stride(0), T, *Q.stride(), C, H=H, D=D)
        flash_forward_zhnd_kernel[(cdiv(T, BLOCK_M), B * H)](
            Q, K, V, O, M, *Q.stride(), M.stride(0), M.stride(1), T, H, inp.params["scale"],
            CAUSAL=causal, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, D=D)
        out = tt.zeros("out", (rows, C))
        heads_linear_kernel[(cdiv(rows, TILE), cdiv(C, TILE))](
            O, tt.input("w_proj"), tt.input("b_proj"), out, *O.stride(), T, rows, C, H=H, D=D, BM=TILE, BN=TILE)


if __name__ == "__main__":
    main(sys.argv[1:])
