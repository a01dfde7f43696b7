#!/usr/bin/env python3
"""A kernel right by luck: every query head reads head 0's keys.

On scenarios/learner/lucky.toml, whose keys are the same for both heads, its output is exactly
right, so an output check passes. `attn-trace grade` finds it wrong there already, from the cells
it reads (head 1's scores read head 0's keys, which the reference never reads for them); on
random inputs of the same shape its values are wrong too, which the grade finds by running it
again with other seeds:

    attn-trace grade scenarios/learner/lucky.toml -- python3 examples/learner/lucky.py

By hand, on the scenario's own input (right) and on the first random one (wrong):

    attn-trace inputs scenarios/learner/lucky.toml -o inputs.txt
    python3 examples/learner/lucky.py inputs.txt trace.jsonl
    attn-trace inputs scenarios/learner/lucky.toml --input 1 -o inputs1.txt
    python3 examples/learner/lucky.py inputs1.txt trace1.jsonl
"""

import math
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside attention.py
from attention import MASKED, Attention, main  # noqa: E402


class Lucky(Attention):
    def attention_scores(self):
        B, S, T, H, D = self.B, self.S, self.T, self.H, self.D
        q, k = self.q, self.k
        scale = 1.0 / math.sqrt(D)
        self.rec.phase("scores")
        self.scores = scores = self.rec.zeros("scores", B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                for i in range(S):
                    q_base = ((bb * S + i) * H + hh) * D
                    for j in range(T):
                        k_base = (bb * T + j) * H * D  # the bug: no `+ hh`, so every head reads head 0's keys
                        off = ((bb * H + hh) * S + i) * T + j
                        s = 0.0
                        for d in range(D):
                            s += q[q_base + d] * k[k_base + d]
                        s *= scale
                        if self.hidden(i, j):
                            s = MASKED
                        scores[off] = s


if __name__ == "__main__":
    main(Lucky)
