#!/usr/bin/env python3
"""Two ways to get triton_flash.py's attention kernel wrong, each a copy of the kernel with one
change, marked MISTAKE:

- `wrong_mask`: the causal mask only skips the key tiles past the query tile; inside the diagonal
  tile every key is seen, so a query also sees the keys after it that share its tile.
- `wrong_rescale`: when a row's maximum grows, the running sum l is shrunk by e^(m_old - m_new)
  but the accumulator is not, so the keys of earlier tiles weigh too much.

Both give att and out wrong, and attn-trace grade points at the line storing att:

    attn-trace grade scenarios/flash.toml --variant flash -- \
        python3 examples/learner/triton_flash_mistakes.py wrong_mask
"""

import sys

sys.dont_write_bytecode = True
from triton_flash import Flash, main  # noqa: E402  (first: it turns Triton's interpreter on)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def flash_forward_wrong_mask(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, stride_q, stride_kv, stride_o,
                             T, H, scale, CAUSAL: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bb = tl.program_id(1) // H
    hh = tl.program_id(1) % H
    rows = start_m + tl.arange(0, BLOCK_M)
    dd = tl.arange(0, D)
    row_ok = rows < T
    q = tl.load(q_ptr + (bb * T + rows[:, None]) * stride_q + hh * D + dd[None, :],
                mask=row_ok[:, None], other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, D), tl.float32)
    hi = tl.minimum(start_m + BLOCK_M, T) if CAUSAL else T
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        col_ok = cols < T
        kv_off = (bb * T + cols[:, None]) * stride_kv + hh * D + dd[None, :]
        k = tl.load(k_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        seen = col_ok[None, :]  # MISTAKE: the tiles past the diagonal are skipped, but not the keys j > i inside it
        s = tl.where(seen, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(o_ptr + (bb * T + rows[:, None]) * stride_o + hh * D + dd[None, :], acc / l_i[:, None],
             mask=row_ok[:, None])
    tl.store(lse_ptr + tl.program_id(1) * T + rows, m_i + tl.log(l_i), mask=row_ok)


@triton.jit
def flash_forward_wrong_rescale(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, stride_q, stride_kv, stride_o,
                                T, H, scale, CAUSAL: tl.constexpr,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bb = tl.program_id(1) // H
    hh = tl.program_id(1) % H
    rows = start_m + tl.arange(0, BLOCK_M)
    dd = tl.arange(0, D)
    row_ok = rows < T
    q = tl.load(q_ptr + (bb * T + rows[:, None]) * stride_q + hh * D + dd[None, :],
                mask=row_ok[:, None], other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, D), tl.float32)
    hi = tl.minimum(start_m + BLOCK_M, T) if CAUSAL else T
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        col_ok = cols < T
        kv_off = (bb * T + cols[:, None]) * stride_kv + hh * D + dd[None, :]
        k = tl.load(k_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        seen = col_ok[None, :]
        if CAUSAL:
            seen = seen & (cols[None, :] <= rows[:, None])
        s = tl.where(seen, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        acc = acc + tl.dot(p, v, input_precision="ieee")  # MISTAKE: acc is not shrunk by alpha
        m_i = m_new
    tl.store(o_ptr + (bb * T + rows[:, None]) * stride_o + hh * D + dd[None, :], acc / l_i[:, None],
             mask=row_ok[:, None])
    tl.store(lse_ptr + tl.program_id(1) * T + rows, m_i + tl.log(l_i), mask=row_ok)


class WrongMask(Flash):
    forward_kernel = flash_forward_wrong_mask


class WrongRescale(Flash):
    forward_kernel = flash_forward_wrong_rescale


MISTAKES = {"wrong_mask": WrongMask, "wrong_rescale": WrongRescale}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in MISTAKES:
        sys.exit("usage: %s {%s} [INPUTS TRACE.jsonl]" % (sys.argv[0], "|".join(MISTAKES)))
    main(MISTAKES[sys.argv[1]], sys.argv[2:])
