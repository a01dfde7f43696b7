#!/usr/bin/env python3
"""A kernel that never reads k: its scores are q·q, the query read where the key belongs.

On scenarios/learner/k_equals_q.toml, whose keys are its queries, every value it writes is
right. It is still wrong, and `attn-trace grade` says so from this one trace, without random
inputs: the results depend on k, and this kernel never reads it ("never reads k: your results
cannot depend on it"); and each score reads the query of another position where the reference
reads that position's key.

    attn-trace inputs scenarios/learner/k_equals_q.toml -o inputs.txt
    python3 examples/learner/never_reads_k.py inputs.txt trace.jsonl
    attn-trace grade scenarios/learner/k_equals_q.toml trace.jsonl --seeds 0
"""

import math
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside attention.py
from attention import MASKED, Attention, main  # noqa: E402


class NeverReadsK(Attention):
    def attention_scores(self):
        B, S, T, H, D = self.B, self.S, self.T, self.H, self.D
        q = self.q
        scale = 1.0 / math.sqrt(D)
        self.rec.phase("scores")
        self.scores = scores = self.rec.zeros("scores", B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                for i in range(S):
                    q_base = ((bb * S + i) * H + hh) * D
                    for j in range(T):
                        k_base = ((bb * T + j) * H + hh) * D
                        off = ((bb * H + hh) * S + i) * T + j
                        s = 0.0
                        for d in range(D):
                            s += q[q_base + d] * q[k_base + d]  # the bug: q where k belongs
                        s *= scale
                        if self.hidden(i, j):
                            s = MASKED
                        scores[off] = s


if __name__ == "__main__":
    main(NeverReadsK)
