/* A learner's attention in its own names and layout, graded through a bindings file.
 *
 * q, k and v live side by side in one buffer `packed [B, T, 3C]` (row b·T + i holds query i's
 * C channels, then key i's, then value i's), the scores are `logits`, the probabilities
 * `weights`, the output `mixed [B, T, C]`; the backward pass writes `d_packed`, `d_logits` and
 * `d_weights` from the output's gradient `d_mixed`. None of these is one of attn-trace's
 * names, and `packed` is none of its layouts: fused_qkv.bind.toml says where each cell lies.
 *
 *   attn-trace grade scenarios/learner/packed.toml --bind examples/learner/fused_qkv.bind.toml \
 *       --pass forward -- ./fused_qkv            (and --pass backward)
 *
 * Compile: gcc -std=c99 -O1 -I recorders examples/learner/fused_qkv.c -lm -o fused_qkv
 * With -DMISTAKE_CAUSAL, -DMISTAKE_SCALE, -DMISTAKE_NO_ZERO or -DMISTAKE_KEY it makes one
 * mistake (the lines marked MISTAKE): each is graded wrong, at its line.                    */
#include "attn_record.h"
#include <math.h>
#include <string.h>

/* the keys query i sees: j < i + 1, or (the mistake) j < i, its own key left out */
#ifdef MISTAKE_CAUSAL
#define SEEN(i) (i) /* MISTAKE: query i does not see key i */
#else
#define SEEN(i) ((i) + 1)
#endif

/* where key j's channels start in its packed row: after the query's C */
#ifdef MISTAKE_KEY
#define KEY_AT 0 /* MISTAKE: the query's channels are read as the key's */
#else
#define KEY_AT C
#endif

typedef struct {
    int B, T, C, H, D;
    float scale;
} sizes;

static sizes sizes_of(const at_inputs *in) {
    sizes s;
    s.B = (int)at_dim(in, "B");
    s.T = (int)at_dim(in, "T");
    s.C = (int)at_dim(in, "C");
    s.H = (int)at_dim(in, "H");
    s.D = s.C / s.H;
#ifdef MISTAKE_SCALE
    s.scale = 1.0f / sqrtf((float)s.C); /* MISTAKE: the width of a row, not of a head */
#else
    s.scale = 1.0f / sqrtf((float)s.D);
#endif
    return s;
}

/* the packed row of position i of sequence b, and the start of head h's channels in it */
static long row(sizes s, int b, int i) { return ((long)b * s.T + i) * 3 * s.C; }

static void forward(sizes s, at_buf packed, at_buf logits, at_buf weights, at_buf mixed) {
    int C = s.C;
    for (int b = 0; b < s.B; b++)
        for (int h = 0; h < s.H; h++)
            for (int i = 0; i < s.T; i++) {
                long qi = row(s, b, i) + (long)h * s.D;
                long lrow = (((long)b * s.H + h) * s.T + i) * s.T; /* logits and weights */
                /* one row of scores, and its largest */
                float top = -INFINITY;
                for (int j = 0; j < SEEN(i); j++) {
                    long kj = row(s, b, j) + KEY_AT + (long)h * s.D;
                    float dot = 0.0f;
                    for (int d = 0; d < s.D; d++) dot += AT_READ(packed, qi + d) * AT_READ(packed, kj + d);
                    AT_WRITE(logits, lrow + j, dot * s.scale);
                    if (dot * s.scale > top) top = dot * s.scale;
                }
                /* softmax of the row, the hidden keys left alone */
                float total = 0.0f;
                for (int j = 0; j < SEEN(i); j++) total += expf(AT_READ(logits, lrow + j) - top);
                for (int j = 0; j < SEEN(i); j++)
                    AT_WRITE(weights, lrow + j, expf(AT_READ(logits, lrow + j) - top) / total);
                /* the weighted sum of the values, straight into head h's channels of row i */
                long oi = ((long)b * s.T + i) * C + (long)h * s.D;
                for (int d = 0; d < s.D; d++) {
                    float acc = 0.0f;
                    for (int j = 0; j < SEEN(i); j++) {
                        long vj = row(s, b, j) + 2 * C + (long)h * s.D;
                        acc += AT_READ(weights, lrow + j) * AT_READ(packed, vj + d);
                    }
                    AT_WRITE(mixed, oi + d, acc);
                }
            }
}

static void backward(sizes s, at_buf packed, at_buf weights, at_buf d_mixed, at_buf d_packed, at_buf d_logits,
                     at_buf d_weights) {
    int C = s.C;
#ifndef MISTAKE_NO_ZERO
    /* the gradients are added into: they start at zero */
    for (long o = 0; o < d_packed.len; o++) AT_WRITE(d_packed, o, 0.0f);
#endif
    for (int b = 0; b < s.B; b++)
        for (int h = 0; h < s.H; h++)
            for (int i = 0; i < s.T; i++) {
                long qi = row(s, b, i) + (long)h * s.D;
                long oi = ((long)b * s.T + i) * C + (long)h * s.D;
                long lrow = (((long)b * s.H + h) * s.T + i) * s.T;
                /* dP[j] = d_mixed · v_j, and d_v_j += P[j] · d_mixed */
                for (int j = 0; j < SEEN(i); j++) {
                    long vj = row(s, b, j) + 2 * C + (long)h * s.D;
                    float dp = 0.0f;
                    for (int d = 0; d < s.D; d++) {
                        float g = AT_READ(d_mixed, oi + d);
                        dp += g * AT_READ(packed, vj + d);
                        AT_ADD(d_packed, vj + d, AT_READ(weights, lrow + j) * g);
                    }
                    AT_WRITE(d_weights, lrow + j, dp);
                }
                /* dS[j] = P[j] (dP[j] − Σ_j' P[j'] dP[j']) */
                float dot = 0.0f;
                for (int j = 0; j < SEEN(i); j++) dot += AT_READ(weights, lrow + j) * AT_READ(d_weights, lrow + j);
                for (int j = 0; j < SEEN(i); j++)
                    AT_WRITE(d_logits, lrow + j, AT_READ(weights, lrow + j) * (AT_READ(d_weights, lrow + j) - dot));
                /* d_q_i += dS[j] k_j · scale, d_k_j += dS[j] q_i · scale */
                for (int j = 0; j < SEEN(i); j++) {
                    long kj = row(s, b, j) + KEY_AT + (long)h * s.D;
                    float ds = AT_READ(d_logits, lrow + j) * s.scale;
                    for (int d = 0; d < s.D; d++) {
                        AT_ADD(d_packed, qi + d, ds * AT_READ(packed, kj + d));
                        AT_ADD(d_packed, kj + d, ds * AT_READ(packed, qi + d));
                    }
                }
            }
}

int main(int argc, char **argv) {
    at_inputs *in = at_begin(argc, argv);
    sizes s = sizes_of(in);
    /* our tensors q, k, v [B, T, C] packed into one buffer (setting up memory: not recorded) */
    at_buf packed = at_zeros("packed", (long long)s.B * s.T * 3 * s.C);
    const char *parts[3] = {"q", "k", "v"};
    for (int p = 0; p < 3; p++) {
        at_tensor *t = at_tensor_find(in, parts[p]);
        if (!t) return 2;
        for (long r = 0; r < (long)s.B * s.T; r++) memcpy(packed.data + r * 3 * s.C + p * s.C, t->data + r * s.C, sizeof(float) * s.C);
    }
    long pairs = (long)s.B * s.H * s.T * s.T;
    if (strcmp(in->pass, "forward") == 0) {
        forward(s, packed, at_zeros("logits", pairs), at_zeros("weights", pairs), at_zeros("mixed", (long long)s.B * s.T * s.C));
    } else {
        at_buf weights = at_input(in, "probs"), d_mixed = at_input(in, "d_att");
        weights.name = "weights";
        d_mixed.name = "d_mixed";
        backward(s, packed, weights, d_mixed, at_zeros("d_packed", (long long)s.B * s.T * 3 * s.C),
                 at_zeros("d_logits", pairs), at_zeros("d_weights", pairs));
    }
    at_close();
    return 0;
}
