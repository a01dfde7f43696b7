#!/usr/bin/env python3
"""A learner's attention kernel in plain Python, every access to our buffers recorded.

    attn-trace inputs scenarios/mha_walkthrough.toml -o inputs.txt
    python3 examples/learner/attention.py inputs.txt trace.jsonl
    attn-trace grade scenarios/mha_walkthrough.toml trace.jsonl

or let the grader run it (it hands over both paths in ATTN_TRACE_INPUTS and ATTN_TRACE_OUT):

    attn-trace grade scenarios/mha_walkthrough.toml -- python3 examples/learner/attention.py

Forward: qkv = x·W_qkv + b_qkv and its split into q, k, v (when the inputs start at x), scores,
softmax, dropout (when the inputs have a drop_mask), the weighted sum, and out = att·W_proj +
b_proj (when they have w_proj). Backward: from d_out back to d_x and the weights, for grouped-query
attention, which multi-head attention is with H_kv = H.

Each pass is one method, so a variation of the kernel (mistakes.py, lucky.py, oob.py) is a
subclass that writes one pass differently.
"""

import math
import os
import sys

# the recorder lives in recorders/ at the repository's root; importing it (and this file, from
# the variations) leaves no __pycache__ in the repository
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "recorders"))
from attn_record import Recorder, load_inputs  # noqa: E402

# a hidden score, as the reference writes it: exp(-1e9 - max) is exactly 0
MASKED = -1e9


class Attention:
    def __init__(self, inp, rec):
        self.rec = rec
        dims = inp.dims
        self.B, self.T, self.C = dims["B"], dims["T"], dims["C"]
        self.S = dims.get("S", self.T)  # query rows: T but in cross-attention
        if inp.variant == "baseline":
            self.H = self.H_kv = 1  # one head over all C channels
        else:
            self.H = dims["H"]
            # only the grouped kernel shares key/value heads; MHA has one per query head
            self.H_kv = dims.get("H_kv", self.H) if inp.variant == "gqa" else self.H
        self.D = self.C // self.H
        self.causal = inp.params.get("causal", 1) == 1
        self.explicit_mask = inp.tensors.get("mask")  # [S,T], 1 visible, 0 hidden; not a buffer of ours
        self.p_drop = inp.params.get("dropout", 0.0)

        # the given tensors, wrapped under our buffer names; None when the pass does not read them
        given = {name: rec.input(name) for name in inp.tensors if name != "mask"}
        for name in ("x", "w_qkv", "b_qkv", "q", "k", "v", "probs", "probs_drop", "att", "w_proj", "b_proj",
                     "drop_mask", "d_out"):
            setattr(self, name, given.get(name))

    def hidden(self, i, j):
        """Is key j hidden from query i?"""
        if self.explicit_mask is not None:
            return self.explicit_mask[i * self.T + j] == 0
        return self.causal and j > i

    # ---------------------------------------------------------------- forward

    def forward(self):
        if self.x is not None:
            self.qkv_proj()
            self.split()
        self.attention_scores()
        self.softmax()
        if self.drop_mask is not None:
            self.dropout()
        self.weighted_sum()
        if self.w_proj is not None:
            self.out_proj()

    def linear(self, rows, x, w, b, y):
        """y = x·W + b, one row of x at a time: W is [IC, OC], stored row-major."""
        B, T = rows
        IC, OC = len(x) // (B * T), len(y) // (B * T)
        for bb in range(B):
            for i in range(T):
                xi = (bb * T + i) * IC
                yi = (bb * T + i) * OC
                for o in range(OC):
                    s = b[o]
                    for c in range(IC):
                        s += x[xi + c] * w[c * OC + o]
                    y[yi + o] = s

    def qkv_proj(self):
        B, T, C, KV = self.B, self.T, self.C, self.H_kv * self.D
        self.rec.phase("qkv_proj")
        # one row of C + 2·H_kv·D per token: q, then k, then v
        self.qkv = self.rec.zeros("qkv", B * T * (C + 2 * KV))
        self.linear((B, T), self.x, self.w_qkv, self.b_qkv, self.qkv)

    def split(self):
        B, T, C, KV = self.B, self.T, self.C, self.H_kv * self.D
        qkv = self.qkv
        self.rec.phase("split")
        self.q = q = self.rec.zeros("q", B * T * C)
        self.k = k = self.rec.zeros("k", B * T * KV)
        self.v = v = self.rec.zeros("v", B * T * KV)
        for bb in range(B):
            for i in range(T):
                ri = (bb * T + i) * (C + 2 * KV)
                qi = (bb * T + i) * C
                ki = (bb * T + i) * KV
                for c in range(C):
                    q[qi + c] = qkv[ri + c]
                for c in range(KV):
                    k[ki + c] = qkv[ri + C + c]
                    v[ki + c] = qkv[ri + C + KV + c]

    def attention_scores(self):
        B, S, T, H, H_kv, D = self.B, self.S, self.T, self.H, self.H_kv, self.D
        q, k = self.q, self.k
        scale = 1.0 / math.sqrt(D)  # a dot product of D numbers grows like √D
        self.rec.phase("scores")
        self.scores = scores = self.rec.zeros("scores", B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                kv_h = hh // (H // H_kv)  # the key/value head this query head reads
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

    def softmax(self):
        B, S, T, H = self.B, self.S, self.T, self.H
        scores = self.scores
        self.rec.phase("softmax")
        self.probs = probs = self.rec.zeros("probs", B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                for i in range(S):
                    row = ((bb * H + hh) * S + i) * T
                    # subtract the row's maximum so exp never overflows
                    m = scores[row]
                    for j in range(1, T):
                        m = max(m, scores[row + j])
                    total = 0.0
                    for j in range(T):
                        e = math.exp(scores[row + j] - m)
                        probs[row + j] = e
                        total += e
                    for j in range(T):
                        probs[row + j] = probs[row + j] / total

    def dropout(self):
        B, S, T, H = self.B, self.S, self.T, self.H
        probs, keep = self.probs, self.drop_mask
        rescale = 1.0 / (1.0 - self.p_drop)  # keeps the expected weighted sum unchanged
        self.rec.phase("dropout")
        self.probs_drop = probs_drop = self.rec.zeros("probs_drop", B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                for i in range(S):
                    row = ((bb * H + hh) * S + i) * T
                    for j in range(T):
                        probs_drop[row + j] = probs[row + j] * keep[row + j] * rescale

    def weighted_sum(self):
        B, S, T, H, H_kv, D = self.B, self.S, self.T, self.H, self.H_kv, self.D
        # the weights are the dropped-out probabilities when there is dropout
        p = self.probs_drop if self.probs_drop is not None else self.probs
        v = self.v
        self.rec.phase("weighted_sum")
        self.att = att = self.rec.zeros("att", B * S * H * D)
        for bb in range(B):
            for hh in range(H):
                kv_h = hh // (H // H_kv)
                for i in range(S):
                    # head hh's slot of the [B,S,C] row: the heads are concatenated by the layout
                    a_base = ((bb * S + i) * H + hh) * D
                    row = ((bb * H + hh) * S + i) * T
                    for d in range(D):
                        s = 0.0
                        for j in range(T):
                            v_base = ((bb * T + j) * H_kv + kv_h) * D
                            s += p[row + j] * v[v_base + d]
                        att[a_base + d] = s

    def out_proj(self):
        self.rec.phase("out_proj")
        self.out = self.rec.zeros("out", self.B * self.S * self.C)
        self.linear((self.B, self.S), self.att, self.w_proj, self.b_proj, self.out)

    # ---------------------------------------------------------------- backward

    def backward(self):
        if self.w_proj is not None:
            self.out_proj_back()
        else:
            self.no_out_proj_back()
        self.d_probs()
        self.d_values()
        if self.drop_mask is not None:
            self.dropout_back()
        self.softmax_back()
        self.d_queries()
        self.d_keys()
        if self.x is not None:
            self.split_back()
            self.qkv_proj_back()

    def linear_back(self, rows, x, w, dy, dx, dw, db):
        """From dy to dx = dy·Wᵀ, dW = xᵀ·dy and db = Σ dy over the rows."""
        B, T = rows
        IC, OC = len(x) // (B * T), len(dy) // (B * T)
        for bb in range(B):
            for i in range(T):
                xi = (bb * T + i) * IC
                yi = (bb * T + i) * OC
                for c in range(IC):
                    s = 0.0
                    for o in range(OC):
                        s += dy[yi + o] * w[c * OC + o]
                    dx[xi + c] = s
        for c in range(IC):
            for o in range(OC):
                s = 0.0
                for bb in range(B):
                    for i in range(T):
                        s += x[(bb * T + i) * IC + c] * dy[(bb * T + i) * OC + o]
                dw[c * OC + o] = s
        for o in range(OC):
            s = 0.0
            for bb in range(B):
                for i in range(T):
                    s += dy[(bb * T + i) * OC + o]
            db[o] = s

    def out_proj_back(self):
        B, S, C = self.B, self.S, self.C
        self.rec.phase("out_proj_back")
        self.d_att = self.rec.zeros("d_att", B * S * C)
        self.d_w_proj = self.rec.zeros("d_w_proj", C * C)
        self.d_b_proj = self.rec.zeros("d_b_proj", C)
        self.linear_back((B, S), self.att, self.w_proj, self.d_out, self.d_att, self.d_w_proj, self.d_b_proj)

    def no_out_proj_back(self):
        # without an output projection out is att, so its gradient is d_out itself
        self.d_att = self.rec.zeros("d_att", len(self.d_out))
        for c in range(len(self.d_out)):
            self.d_att[c] = self.d_out[c]

    def d_probs(self):
        B, S, T, H, H_kv, D = self.B, self.S, self.T, self.H, self.H_kv, self.D
        v, d_att = self.v, self.d_att
        self.rec.phase("weighted_sum_back")
        # the gradient of whichever probabilities the weighted sum read
        name = "d_probs_drop" if self.drop_mask is not None else "d_probs"
        self.d_p = d_p = self.rec.zeros(name, B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                kv_h = hh // (H // H_kv)
                for i in range(S):
                    a_base = ((bb * S + i) * H + hh) * D
                    for j in range(T):
                        v_base = ((bb * T + j) * H_kv + kv_h) * D
                        off = ((bb * H + hh) * S + i) * T + j
                        s = 0.0
                        for d in range(D):
                            s += d_att[a_base + d] * v[v_base + d]
                        d_p[off] = s

    def d_values(self):
        B, S, T, H, H_kv, D = self.B, self.S, self.T, self.H, self.H_kv, self.D
        p = self.probs_drop if self.probs_drop is not None else self.probs
        d_att = self.d_att
        self.d_v = d_v = self.rec.zeros("d_v", B * T * H_kv * D)
        # the query heads of a group share one value head: d_v starts at 0 and each adds its share
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
                        d_v[v_base + d] += s

    def dropout_back(self):
        B, S, T, H = self.B, self.S, self.T, self.H
        keep, d_pd = self.drop_mask, self.d_p
        rescale = 1.0 / (1.0 - self.p_drop)
        self.rec.phase("dropout_back")
        self.d_p = d_p = self.rec.zeros("d_probs", B * H * S * T)
        for off in range(B * H * S * T):
            d_p[off] = d_pd[off] * keep[off] * rescale  # a dropped probability gets no gradient

    def softmax_back(self):
        B, S, T, H = self.B, self.S, self.T, self.H
        probs, d_p = self.probs, self.d_p
        self.rec.phase("softmax_back")
        self.d_scores = d_scores = self.rec.zeros("d_scores", B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                for i in range(S):
                    row = ((bb * H + hh) * S + i) * T
                    # dS = P ⊙ (dP − Σ_j dP·P): the sum is shared by the whole row
                    dot = 0.0
                    for j in range(T):
                        dot += d_p[row + j] * probs[row + j]
                    for j in range(T):
                        d_scores[row + j] = probs[row + j] * (d_p[row + j] - dot)

    def d_queries(self):
        B, S, T, H, H_kv, D = self.B, self.S, self.T, self.H, self.H_kv, self.D
        k, d_scores = self.k, self.d_scores
        scale = 1.0 / math.sqrt(D)
        self.rec.phase("scores_back")
        self.d_q = d_q = self.rec.zeros("d_q", B * S * H * D)
        for bb in range(B):
            for hh in range(H):
                kv_h = hh // (H // H_kv)
                for i in range(S):
                    q_base = ((bb * S + i) * H + hh) * D
                    for d in range(D):
                        s = 0.0
                        for j in range(T):
                            if self.hidden(i, j):
                                continue  # a masked score is a constant: no gradient flows
                            k_base = ((bb * T + j) * H_kv + kv_h) * D
                            off = ((bb * H + hh) * S + i) * T + j
                            s += d_scores[off] * k[k_base + d]
                        d_q[q_base + d] = s * scale

    def d_keys(self):
        B, S, T, H, H_kv, D = self.B, self.S, self.T, self.H, self.H_kv, self.D
        q, d_scores = self.q, self.d_scores
        scale = 1.0 / math.sqrt(D)
        self.d_k = d_k = self.rec.zeros("d_k", B * T * H_kv * D)
        # as d_v: the group's query heads add into one key head's gradient
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
                        d_k[k_base + d] += s * scale

    def split_back(self):
        B, T, C, KV = self.B, self.T, self.C, self.H_kv * self.D
        d_q, d_k, d_v = self.d_q, self.d_k, self.d_v
        self.rec.phase("split_back")
        self.d_qkv = d_qkv = self.rec.zeros("d_qkv", B * T * (C + 2 * KV))
        for bb in range(B):
            for i in range(T):
                ri = (bb * T + i) * (C + 2 * KV)
                qi = (bb * T + i) * C
                ki = (bb * T + i) * KV
                for c in range(C):
                    d_qkv[ri + c] = d_q[qi + c]
                for c in range(KV):
                    d_qkv[ri + C + c] = d_k[ki + c]
                    d_qkv[ri + C + KV + c] = d_v[ki + c]

    def qkv_proj_back(self):
        B, T, C = self.B, self.T, self.C
        self.rec.phase("qkv_proj_back")
        d_x = self.rec.zeros("d_x", B * T * C)
        d_w = self.rec.zeros("d_w_qkv", len(self.w_qkv))
        d_b = self.rec.zeros("d_b_qkv", len(self.d_qkv) // (B * T))
        self.linear_back((B, T), self.x, self.w_qkv, self.d_qkv, d_x, d_w, d_b)

    def run(self, pass_):
        if pass_ == "backward":
            self.backward()
        else:
            self.forward()


def main(kernel=Attention, args=None):
    """Run `kernel` on the inputs file args[0] (else $ATTN_TRACE_INPUTS), recording into args[1]
    (else $ATTN_TRACE_OUT)."""
    args = sys.argv[1:] if args is None else args
    inputs = args[0] if args else os.environ.get("ATTN_TRACE_INPUTS")
    out = args[1] if len(args) > 1 else os.environ.get("ATTN_TRACE_OUT")
    if not inputs or not out:
        sys.exit("usage: %s INPUTS TRACE.jsonl (or set ATTN_TRACE_INPUTS and ATTN_TRACE_OUT)" % sys.argv[0])
    inp = load_inputs(inputs)
    with Recorder(inp, out) as rec:
        kernel(inp, rec).run(inp.pass_)


if __name__ == "__main__":
    main()
