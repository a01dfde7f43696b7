#!/usr/bin/env python3
"""FlashAttention in Triton, forward and backward, run by Triton's interpreter and recorded.

The whole pass of scenarios/flash.toml, one Triton kernel per step: the input projection (through
tensor descriptors), the tiled attention with its online softmax, the output projection; and
backward, the projections' gradients, the row sums delta, then d_k, d_v per key tile and d_q per
query tile, recomputing the probabilities from the saved log-sum-exp. The kernels know nothing of
attn-trace: every tl.load and tl.store is recorded by attn_record_triton, lane by lane, at its
line here.

    attn-trace grade scenarios/flash.toml --variant flash -- python3 examples/learner/triton_flash.py
    attn-trace grade scenarios/flash.toml --variant flash --pass backward -- \
        python3 examples/learner/triton_flash.py

Needs triton and numpy (`bash .ci/venv` makes a virtual environment with both, then use its
python). triton_flash_mistakes.py has two bugs to find.
"""

import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "recorders"))
from attn_record import Recorder, load_inputs  # noqa: E402
from attn_record_triton import TritonRecorder  # noqa: E402  (before triton: it turns the interpreter on)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

# Tiles of 2 queries by 2 keys, as the scenario's own [flash] br and bc: with T = 5 a row sees up
# to three key tiles, and the last tile of each is cut short by the masks.
BLOCK_M = 2
BLOCK_N = 2
# The projections' tiles: 4 columns of float32 are 16 bytes, what a tensor descriptor's block
# offsets must be a multiple of.
TILE = 4


# ---------------------------------------------------------------------------------- projections

@triton.jit
def linear_kernel(x_desc, w_desc, b_ptr, y_desc, K, N,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """y = x @ w + b, one [BM, BN] tile of y per program; x [M, K] and w [K, N] row-major."""
    row0 = tl.program_id(0) * BM
    col0 = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        # a descriptor load pads past the edge with zeros: rows past M, columns past K
        x = x_desc.load([row0, k0])
        w = w_desc.load([k0, col0])
        acc += tl.dot(x, w, input_precision="ieee")
    cols = col0 + tl.arange(0, BN)
    b = tl.load(b_ptr + cols, mask=cols < N, other=0.0)
    y_desc.store([row0, col0], acc + b[None, :])


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """c = a @ b for any strides (a transpose is a swap of two strides), pointer by pointer."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn, acc,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def column_sum_kernel(a_ptr, out_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
    """out[c] = Σ_r a[r, c]: a bias's gradient, summed over every row of the batch."""
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros((BN,), tl.float32)
    for r0 in range(0, M, BM):
        rows = r0 + tl.arange(0, BM)
        a = tl.load(a_ptr + rows[:, None] * stride_m + cols[None, :],
                    mask=(rows[:, None] < M) & (cols[None, :] < N), other=0.0)
        acc += tl.sum(a, 0)
    tl.store(out_ptr + cols, acc, mask=cols < N)


# ---------------------------------------------------------------------------------- attention

@triton.jit
def flash_forward_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, stride_q, stride_kv, stride_o,
                         T, H, scale, CAUSAL: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    """One tile of BLOCK_M queries of one head. q, k, v and o are [B*T, ·] row-major with row
    strides stride_q, stride_kv, stride_o; head hh is columns hh*D .. hh*D + D - 1 of a row."""
    start_m = tl.program_id(0) * BLOCK_M
    bb = tl.program_id(1) // H
    hh = tl.program_id(1) % H
    rows = start_m + tl.arange(0, BLOCK_M)
    dd = tl.arange(0, D)
    row_ok = rows < T
    q = tl.load(q_ptr + (bb * T + rows[:, None]) * stride_q + hh * D + dd[None, :],
                mask=row_ok[:, None], other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)  # each row's running maximum
    l_i = tl.zeros((BLOCK_M,), tl.float32)  # its running sum of e^(s - m_i)
    acc = tl.zeros((BLOCK_M, D), tl.float32)  # its running Σ e^(s - m_i)·v
    # with the causal mask, the key tiles past this query tile's last row are all hidden
    hi = tl.minimum(start_m + BLOCK_M, T) if CAUSAL else T
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        col_ok = cols < T
        kv_off = (bb * T + cols[:, None]) * stride_kv + hh * D + dd[None, :]
        k = tl.load(k_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        seen = col_ok[None, :]
        if CAUSAL:
            seen = seen & (cols[None, :] <= rows[:, None])  # the diagonal tile is cut in two
        s = tl.where(seen, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)  # what the old sums shrink by when the maximum grows
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(o_ptr + (bb * T + rows[:, None]) * stride_o + hh * D + dd[None, :], acc / l_i[:, None],
             mask=row_ok[:, None])
    # the row's log-sum-exp, all that backward needs to recompute its probabilities
    tl.store(lse_ptr + tl.program_id(1) * T + rows, m_i + tl.log(l_i), mask=row_ok)


@triton.jit
def flash_delta_kernel(o_ptr, do_ptr, delta_ptr, stride, T, H, BLOCK_M: tl.constexpr, D: tl.constexpr):
    """delta[b, h, i] = Σ_d dO·O over the row's head: the Σ_j P·dP of the softmax's gradient."""
    bb = tl.program_id(1) // H
    hh = tl.program_id(1) % H
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dd = tl.arange(0, D)
    off = (bb * T + rows[:, None]) * stride + hh * D + dd[None, :]
    o = tl.load(o_ptr + off, mask=rows[:, None] < T, other=0.0)
    do = tl.load(do_ptr + off, mask=rows[:, None] < T, other=0.0)
    tl.store(delta_ptr + tl.program_id(1) * T + rows, tl.sum(o * do, 1), mask=rows < T)


@triton.jit
def flash_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr,
                      stride, stride_d, T, H, scale, CAUSAL: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    """d_k and d_v of one tile of BLOCK_N keys of one head, over every query tile that sees it.
    q, k, v, dO have row stride `stride`; d_k and d_v `stride_d` (they are columns of d_qkv)."""
    start_n = tl.program_id(0) * BLOCK_N
    bh = tl.program_id(1)
    bb = bh // H
    hh = bh % H
    cols = start_n + tl.arange(0, BLOCK_N)
    dd = tl.arange(0, D)
    col_ok = cols < T
    kv_off = (bb * T + cols[:, None]) * stride + hh * D + dd[None, :]
    k = tl.load(k_ptr + kv_off, mask=col_ok[:, None], other=0.0)
    v = tl.load(v_ptr + kv_off, mask=col_ok[:, None], other=0.0)
    dk = tl.zeros((BLOCK_N, D), tl.float32)
    dv = tl.zeros((BLOCK_N, D), tl.float32)
    # with the causal mask, the query tiles before this key tile's first column see none of it
    lo = (start_n // BLOCK_M) * BLOCK_M if CAUSAL else 0
    for start_m in range(lo, T, BLOCK_M):
        rows = start_m + tl.arange(0, BLOCK_M)
        row_ok = rows < T
        q_off = (bb * T + rows[:, None]) * stride + hh * D + dd[None, :]
        q = tl.load(q_ptr + q_off, mask=row_ok[:, None], other=0.0)
        do = tl.load(do_ptr + q_off, mask=row_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + bh * T + rows, mask=row_ok, other=0.0)
        delta = tl.load(delta_ptr + bh * T + rows, mask=row_ok, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        seen = row_ok[:, None] & col_ok[None, :]
        if CAUSAL:
            seen = seen & (cols[None, :] <= rows[:, None])
        p = tl.where(seen, tl.exp(s - lse[:, None]), 0.0)  # the forward's probabilities, again
        dv += tl.dot(tl.trans(p), do, input_precision="ieee")
        dp = tl.dot(do, tl.trans(v), input_precision="ieee")
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds), q, input_precision="ieee")
    d_off = (bb * T + cols[:, None]) * stride_d + hh * D + dd[None, :]
    tl.store(dk_ptr + d_off, dk * scale, mask=col_ok[:, None])
    tl.store(dv_ptr + d_off, dv, mask=col_ok[:, None])


@triton.jit
def flash_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr,
                    stride, stride_d, T, H, scale, CAUSAL: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    """d_q of one tile of BLOCK_M queries of one head, over every key tile it sees."""
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    bb = bh // H
    hh = bh % H
    rows = start_m + tl.arange(0, BLOCK_M)
    dd = tl.arange(0, D)
    row_ok = rows < T
    q_off = (bb * T + rows[:, None]) * stride + hh * D + dd[None, :]
    q = tl.load(q_ptr + q_off, mask=row_ok[:, None], other=0.0)
    do = tl.load(do_ptr + q_off, mask=row_ok[:, None], other=0.0)
    lse = tl.load(lse_ptr + bh * T + rows, mask=row_ok, other=0.0)
    delta = tl.load(delta_ptr + bh * T + rows, mask=row_ok, other=0.0)
    dq = tl.zeros((BLOCK_M, D), tl.float32)
    hi = tl.minimum(start_m + BLOCK_M, T) if CAUSAL else T
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        col_ok = cols < T
        kv_off = (bb * T + cols[:, None]) * stride + hh * D + dd[None, :]
        k = tl.load(k_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        v = tl.load(v_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        seen = row_ok[:, None] & col_ok[None, :]
        if CAUSAL:
            seen = seen & (cols[None, :] <= rows[:, None])
        p = tl.where(seen, tl.exp(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision="ieee")
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds, k, input_precision="ieee")
    tl.store(dq_ptr + (bb * T + rows[:, None]) * stride_d + hh * D + dd[None, :], dq * scale,
             mask=row_ok[:, None])


# ---------------------------------------------------------------------------------- the host

def cdiv(a, b):
    return (a + b - 1) // b


def linear(x, w, b, y):
    """y = x @ w + b through tensor descriptors: x [M, K], w [K, N], y [M, N]."""
    (M, K), N = x.shape, w.shape[1]
    x_desc = TensorDescriptor.from_tensor(x, [TILE, TILE])
    w_desc = TensorDescriptor.from_tensor(w, [TILE, TILE])
    y_desc = TensorDescriptor.from_tensor(y, [TILE, TILE])
    linear_kernel[(cdiv(M, TILE), cdiv(N, TILE))](x_desc, w_desc, b, y_desc, K, N, BM=TILE, BN=TILE, BK=TILE)


def matmul(a, b, c):
    """c = a @ b; a, b, c may be transposed views."""
    (M, K), N = a.shape, b.shape[1]
    matmul_kernel[(cdiv(M, TILE), cdiv(N, TILE))](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BM=TILE, BN=TILE, BK=TILE)


def column_sum(a, out):
    M, N = a.shape
    column_sum_kernel[(cdiv(N, TILE),)](a, out, M, N, a.stride(0), BM=TILE, BN=TILE)


class Flash:
    """The host side: buffers named as attn-trace names them, and the kernels launched in order.
    `forward_kernel` is the attention kernel to run (triton_flash_mistakes.py swaps it)."""

    forward_kernel = flash_forward_kernel

    def __init__(self, inp, tt):
        self.tt = tt
        d = inp.dims
        self.B, self.T, self.C, self.H = d["B"], d["T"], d["C"], d["H"]
        self.D = self.C // self.H
        if self.D & (self.D - 1):
            sys.exit("triton_flash: the head size D = %d is not a power of two (tl.arange needs one)" % self.D)
        self.scale = inp.params["scale"]
        self.causal = inp.params.get("causal", 0) == 1

    def forward(self):
        tt, B, T, C, H, D = self.tt, self.B, self.T, self.C, self.H, self.D
        rows = B * T
        x = tt.input("x").reshape(rows, C)
        qkv = tt.zeros("qkv", (rows, 3 * C))
        linear(x, tt.input("w_qkv"), tt.input("b_qkv"), qkv)
        # q, k and v are views of qkv's column blocks: the attention kernel reads them in place
        q, k, v = qkv[:, :C], qkv[:, C:2 * C], qkv[:, 2 * C:]
        att = tt.zeros("att", (rows, C))
        lse = tt.zeros("lse", (B, H, T))
        type(self).forward_kernel[(cdiv(T, BLOCK_M), B * H)](
            q, k, v, att, lse, q.stride(0), k.stride(0), att.stride(0), T, H, self.scale,
            CAUSAL=self.causal, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, D=D)
        out = tt.zeros("out", (rows, C))
        linear(att, tt.input("w_proj"), tt.input("b_proj"), out)

    def backward(self):
        tt, B, T, C, H, D = self.tt, self.B, self.T, self.C, self.H, self.D
        rows = B * T
        x, w_qkv = tt.input("x").reshape(rows, C), tt.input("w_qkv")
        q, k, v = (tt.input(n).reshape(rows, C) for n in ("q", "k", "v"))
        att, lse = tt.input("att").reshape(rows, C), tt.input("lse")
        w_proj, d_out = tt.input("w_proj"), tt.input("d_out").reshape(rows, C)
        # out = att @ w_proj + b_proj, backwards
        d_att = tt.zeros("d_att", (rows, C))
        matmul(d_out, w_proj.T, d_att)
        matmul(att.T, d_out, tt.zeros("d_w_proj", (C, C)))
        column_sum(d_out, tt.zeros("d_b_proj", (C,)))
        # attention, backwards: d_q, d_k, d_v go straight into their column blocks of d_qkv
        delta = tt.zeros("delta", (B, H, T))
        flash_delta_kernel[(cdiv(T, BLOCK_M), B * H)](att, d_att, delta, C, T, H, BLOCK_M=BLOCK_M, D=D)
        d_qkv = tt.zeros("d_qkv", (rows, 3 * C))
        d_q, d_k, d_v = d_qkv[:, :C], d_qkv[:, C:2 * C], d_qkv[:, 2 * C:]
        common = dict(CAUSAL=self.causal, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, D=D)
        flash_dkdv_kernel[(cdiv(T, BLOCK_N), B * H)](
            q, k, v, d_att, lse, delta, d_k, d_v, C, 3 * C, T, H, self.scale, **common)
        flash_dq_kernel[(cdiv(T, BLOCK_M), B * H)](
            q, k, v, d_att, lse, delta, d_q, C, 3 * C, T, H, self.scale, **common)
        # qkv = x @ w_qkv + b_qkv, backwards
        matmul(d_qkv, w_qkv.T, tt.zeros("d_x", (rows, C)))
        matmul(x.T, d_qkv, tt.zeros("d_w_qkv", (C, 3 * C)))
        column_sum(d_qkv, tt.zeros("d_b_qkv", (3 * C,)))


def main(kernel=Flash, args=None):
    args = sys.argv[1:] if args is None else args
    inp = load_inputs(args[0] if args else None)
    with Recorder(inp, args[1] if len(args) > 1 else None) as rec, TritonRecorder(rec) as tt:
        flash = kernel(inp, tt)
        flash.backward() if inp.pass_ == "backward" else flash.forward()


if __name__ == "__main__":
    main()
