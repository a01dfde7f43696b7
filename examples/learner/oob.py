#!/usr/bin/env python3
"""A kernel that reads one element past the end of each row of scores.

Its softmax looks for the row's maximum with `range(T + 1)` instead of `range(T)`. The maximum is
only subtracted to keep exp from overflowing, so the probabilities come out right and an output
check passes; but every row reads the first score of the next row, and the last row reads past
the end of `scores` altogether. `attn-trace grade` reports that read at this file and its line:

    attn-trace grade scenarios/mha_walkthrough.toml -- python3 examples/learner/oob.py
"""

import math
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside attention.py
from attention import Attention, main  # noqa: E402


class ReadsPastTheRow(Attention):
    def softmax(self):
        B, S, T, H = self.B, self.S, self.T, self.H
        scores = self.scores
        self.rec.phase("softmax")
        self.probs = probs = self.rec.zeros("probs", B * H * S * T)
        for bb in range(B):
            for hh in range(H):
                for i in range(S):
                    row = ((bb * H + hh) * S + i) * T
                    m = scores[row]
                    for j in range(1, T + 1):  # the bug: T + 1, so j = T is the next row's first score
                        m = max(m, scores[row + j])
                    total = 0.0
                    for j in range(T):
                        e = math.exp(scores[row + j] - m)
                        probs[row + j] = e
                        total += e
                    for j in range(T):
                        probs[row + j] = probs[row + j] / total


if __name__ == "__main__":
    main(ReadsPastTheRow)
