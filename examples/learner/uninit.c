/*
 * A kernel whose accumulator is never zeroed: the weighted sum adds into att with AT_ADD (a read
 * of the old value, then a write) before anything wrote att. at_zeros happens to hand out zeros,
 * so the output is right and an output check passes; `attn-trace grade` reports the read of a
 * cell nothing wrote, at this file and line. (With malloc instead, the output would be garbage
 * on some runs and right on others.)
 *
 * Multi-head attention forward from given q, k, v (e.g. scenarios/learner/lucky.toml):
 *
 *     gcc -std=c99 -O2 -I recorders examples/learner/uninit.c -o uninit -lm
 *     attn-trace grade scenarios/learner/lucky.toml -- ./uninit
 */
#include "attn_record.h"

int main(int argc, char **argv) {
    at_inputs *in = at_begin(argc, argv);
    long long B = at_dim(in, "B"), T = at_dim(in, "T"), C = at_dim(in, "C"), H = at_dim(in, "H");
    long long S = at_dim(in, "S") > 0 ? at_dim(in, "S") : T;
    long long D = C / H;
    int causal = at_param(in, "causal", 1) != 0;
    float scale = 1.0f / sqrtf((float)D);
    at_buf q = at_input(in, "q"), k = at_input(in, "k"), v = at_input(in, "v");
    at_buf scores = at_zeros("scores", B * H * S * T), probs = at_zeros("probs", B * H * S * T);
    at_buf att = at_zeros("att", B * S * C);
    long long bb, hh, i, j, d;

    if (!q.data || !k.data || !v.data || at_tensor_find(in, "mask")) {
        fprintf(stderr, "uninit: this example starts at given q, k, v with a causal mask or none\n");
        return 2;
    }

    at_phase("scores");
    for (bb = 0; bb < B; bb++)
        for (hh = 0; hh < H; hh++)
            for (i = 0; i < S; i++) {
                long long q_base = ((bb * S + i) * H + hh) * D;
                for (j = 0; j < T; j++) {
                    long long k_base = ((bb * T + j) * H + hh) * D;
                    long long off = ((bb * H + hh) * S + i) * T + j;
                    float s = 0.0f;
                    for (d = 0; d < D; d++) s += AT_READ(q, q_base + d) * AT_READ(k, k_base + d);
                    AT_WRITE(scores, off, (causal && j > i) ? -1e9f : s * scale);
                }
            }

    at_phase("softmax");
    for (bb = 0; bb < B; bb++)
        for (hh = 0; hh < H; hh++)
            for (i = 0; i < S; i++) {
                long long row = ((bb * H + hh) * S + i) * T;
                float m = AT_READ(scores, row), total = 0.0f;
                for (j = 1; j < T; j++) m = fmaxf(m, AT_READ(scores, row + j));
                for (j = 0; j < T; j++) {
                    float e = expf(AT_READ(scores, row + j) - m);
                    AT_WRITE(probs, row + j, e);
                    total += e;
                }
                for (j = 0; j < T; j++) AT_WRITE(probs, row + j, AT_READ(probs, row + j) / total);
            }

    at_phase("weighted_sum");
    for (bb = 0; bb < B; bb++)
        for (hh = 0; hh < H; hh++)
            for (i = 0; i < S; i++) {
                long long a_base = ((bb * S + i) * H + hh) * D;
                long long row = ((bb * H + hh) * S + i) * T;
                /* the bug: no AT_WRITE(att, a_base + d, 0) before adding into it */
                for (j = 0; j < T; j++) {
                    long long v_base = ((bb * T + j) * H + hh) * D;
                    float p = AT_READ(probs, row + j);
                    for (d = 0; d < D; d++) AT_ADD(att, a_base + d, p * AT_READ(v, v_base + d));
                }
            }

    at_close();
    at_buf_free(&scores);
    at_buf_free(&probs);
    at_buf_free(&att);
    at_inputs_free(in);
    return 0;
}
