#!/usr/bin/env python3
"""The mistakes gallery's seven mistakes, each written as a learner would make it in attention.py.

    attn-trace inputs scenarios/mistakes/scale_by_seq_len.toml -o inputs.txt
    python3 examples/learner/mistakes.py scale_by_seq_len inputs.txt trace.jsonl
    attn-trace grade scenarios/mistakes/scale_by_seq_len.toml trace.jsonl

or, letting the grader run it:

    attn-trace grade scenarios/mistakes/scale_by_seq_len.toml -- python3 examples/learner/mistakes.py scale_by_seq_len

Each mistake is a subclass of the correct kernel that rewrites one pass (or leaves one out); the
line that goes wrong is marked MISTAKE. overwrite_kv_grad is a backward mistake: grade it with
`--pass backward`.
"""

import math
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside attention.py
from attention import MASKED, Attention, main  # noqa: E402


class NoInputProjection(Attention):
    """1: the queries, keys and values are x itself; nothing learns what a token looks for."""

    def forward(self):
        self.split_without_projection()
        self.attention_scores()
        self.softmax()
        if self.drop_mask is not None:
            self.dropout()
        self.weighted_sum()
        if self.w_proj is not None:
            self.out_proj()

    def split_without_projection(self):
        B, T, C = self.B, self.T, self.C
        x = self.x
        self.rec.phase("no_proj")
        self.q = q = self.rec.zeros("q", B * T * C)
        self.k = k = self.rec.zeros("k", B * T * C)
        self.v = v = self.rec.zeros("v", B * T * C)
        for bb in range(B):
            for i in range(T):
                qi = (bb * T + i) * C
                for c in range(C):
                    q[qi + c] = k[qi + c] = v[qi + c] = x[qi + c]  # MISTAKE 1: no x·W_qkv + b_qkv


class ScaleBySeqLen(Attention):
    """2: the scores are divided by √T, the sequence length, instead of √D, the head size."""

    def attention_scores(self):
        B, S, T, H, H_kv, D = self.B, self.S, self.T, self.H, self.H_kv, self.D
        q, k = self.q, self.k
        scale = 1.0 / math.sqrt(T)  # MISTAKE 2: √T, not √D
        self.rec.phase("scores")
        self.scores = scores = self.rec.zeros("scores", B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                kv_h = hh // (H // H_kv)
                for i in range(S):
                    q_base = ((bb * S + i) * H + hh) * D
                    for j in range(T):
                        k_base = ((bb * T + j) * H_kv + kv_h) * D
                        off = ((bb * H + hh) * S + i) * T + j
                        s = 0.0
                        for d in range(D):
                            s += q[q_base + d] * k[k_base + d]
                        s *= scale
                        if self.hidden(i, j):
                            s = MASKED
                        scores[off] = s


class MaskByMultiply(Attention):
    """3: the mask multiplies the scores by 0/1, so a hidden score is 0 and still gets weight."""

    def attention_scores(self):
        B, S, T, H, H_kv, D = self.B, self.S, self.T, self.H, self.H_kv, self.D
        q, k = self.q, self.k
        scale = 1.0 / math.sqrt(D)
        self.rec.phase("scores")
        self.scores = scores = self.rec.zeros("scores", B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                kv_h = hh // (H // H_kv)
                for i in range(S):
                    q_base = ((bb * S + i) * H + hh) * D
                    for j in range(T):
                        k_base = ((bb * T + j) * H_kv + kv_h) * D
                        off = ((bb * H + hh) * S + i) * T + j
                        s = 0.0
                        for d in range(D):
                            s += q[q_base + d] * k[k_base + d]
                        keep = 0.0 if self.hidden(i, j) else 1.0
                        scores[off] = s * scale * keep  # MISTAKE 3: 0 instead of −∞ (−1e9)


class NoOutputProjection(Attention):
    """4: the heads' concatenation att is the answer as it is, never mixed by W_proj."""

    def forward(self):
        if self.x is not None:
            self.qkv_proj()
            self.split()
        self.attention_scores()
        self.softmax()
        if self.drop_mask is not None:
            self.dropout()
        self.weighted_sum()
        # MISTAKE 4: no self.out_proj(): att is taken for the output, and out is never written


class DropoutNotApplied(Attention):
    """5: the dropout layer exists (there is a drop_mask) but forward never calls it."""

    def forward(self):
        if self.x is not None:
            self.qkv_proj()
            self.split()
        self.attention_scores()
        self.softmax()
        # MISTAKE 5: self.dropout() is never called here, so nothing is dropped
        self.weighted_sum()
        if self.w_proj is not None:
            self.out_proj()


class SoftmaxOverTwoDims(Attention):
    """6: softmax over each head's whole S×T matrix instead of each row."""

    def softmax(self):
        B, S, T, H = self.B, self.S, self.T, self.H
        scores = self.scores
        self.rec.phase("softmax")
        self.probs = probs = self.rec.zeros("probs", B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                base = (bb * H + hh) * S * T
                n = S * T  # MISTAKE 6: the whole matrix of head hh, not one row of T
                m = scores[base]
                for j in range(1, n):
                    m = max(m, scores[base + j])
                total = 0.0
                for j in range(n):
                    e = math.exp(scores[base + j] - m)
                    probs[base + j] = e
                    total += e
                for j in range(n):
                    probs[base + j] = probs[base + j] / total


class OverwriteKvGrad(Attention):
    """7: in grouped-query backward, each query head overwrites d_v and d_k instead of adding."""

    def d_values(self):
        B, S, T, H, H_kv, D = self.B, self.S, self.T, self.H, self.H_kv, self.D
        p = self.probs_drop if self.probs_drop is not None else self.probs
        d_att = self.d_att
        self.d_v = d_v = self.rec.zeros("d_v", B * T * H_kv * D)
        for c in range(len(d_v)):
            d_v[c] = 0.0
        for bb in range(B):
            for hh in range(H):
                kv_h = hh // (H // H_kv)
                for j in range(T):
                    v_base = ((bb * T + j) * H_kv + kv_h) * D
                    for d in range(D):
                        s = 0.0
                        for i in range(S):
                            a_base = ((bb * S + i) * H + hh) * D
                            off = ((bb * H + hh) * S + i) * T + j
                            s += p[off] * d_att[a_base + d]
                        d_v[v_base + d] = s  # MISTAKE 7: = instead of +=, the group's last head wins

    def d_keys(self):
        B, S, T, H, H_kv, D = self.B, self.S, self.T, self.H, self.H_kv, self.D
        q, d_scores = self.q, self.d_scores
        scale = 1.0 / math.sqrt(D)
        self.d_k = d_k = self.rec.zeros("d_k", B * T * H_kv * D)
        for c in range(len(d_k)):
            d_k[c] = 0.0
        for bb in range(B):
            for hh in range(H):
                kv_h = hh // (H // H_kv)
                for j in range(T):
                    k_base = ((bb * T + j) * H_kv + kv_h) * D
                    for d in range(D):
                        s = 0.0
                        for i in range(S):
                            if self.hidden(i, j):
                                continue
                            q_base = ((bb * S + i) * H + hh) * D
                            off = ((bb * H + hh) * S + i) * T + j
                            s += d_scores[off] * q[q_base + d]
                        d_k[k_base + d] = s * scale  # MISTAKE 7: = instead of +=


MISTAKES = {
    "no_input_projection": NoInputProjection,
    "scale_by_seq_len": ScaleBySeqLen,
    "mask_by_multiply": MaskByMultiply,
    "no_output_projection": NoOutputProjection,
    "dropout_not_applied": DropoutNotApplied,
    "softmax_over_two_dims": SoftmaxOverTwoDims,
    "overwrite_kv_grad": OverwriteKvGrad,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in MISTAKES:
        sys.exit("usage: %s MISTAKE [INPUTS TRACE.jsonl]\nmistakes: %s" % (sys.argv[0], ", ".join(MISTAKES)))
    main(MISTAKES[sys.argv[1]], sys.argv[2:])
