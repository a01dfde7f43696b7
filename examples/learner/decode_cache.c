/* A learner's decoding loop in the layout of a C inference engine, graded through a bindings
 * file: per-layer key/value caches side by side, weights stored [layer, out, in] (attn-trace's
 * are [in, out]), no biases, and one scratch row per buffer reused at every step.
 *
 *   key_cache, value_cache [L, T, H_kv·D]   row t of layer l at (l·T + t)·H_kv·D
 *   w_q [L, C, C], w_k, w_v [L, H_kv·D, C], w_o [L, C, C]
 *   x [L, T, C]                             each layer's input rows (the layers are independent)
 *   q [C], att [H, T], mix [C], y [C]       scratch rows, overwritten at every step and layer
 *
 * decode_cache.bind.toml places them; the scratch rows are bound with a stride of 0 along the
 * step i and the layer l, and at_at("i", t), at_at("l", l) say which step and layer they hold.
 *
 *   attn-trace grade scenarios/learner/decode_layers.toml \
 *       --bind examples/learner/decode_cache.bind.toml -- ./decode_cache
 *
 * Compile: gcc -std=c99 -O1 -I recorders examples/learner/decode_cache.c -lm -o decode_cache
 * With -DMISTAKE_HEAD, -DMISTAKE_ROW, -DMISTAKE_SCALE or -DMISTAKE_LAYER it makes one mistake
 * (marked MISTAKE): each is graded wrong.                                                   */
#include "attn_record.h"
#include <math.h>

typedef struct {
    int L, T, C, H, H_kv, D, KV; /* KV = H_kv·D, the channels of a cache row */
} dims;

typedef struct {
    at_buf x, w_q, w_k, w_v, w_o, key_cache, value_cache, q, att, mix, y;
} state;

/* out[o] = Σ_c w[o·n + c] · in[c], for o < m: a weight stored [out, in] */
static void project(at_buf *out, long out0, at_buf *w, long w0, at_buf *in, long in0, int m, int n) {
    for (int o = 0; o < m; o++) {
        float s = 0.0f;
        for (int c = 0; c < n; c++) s += AT_READ(*w, w0 + (long)o * n + c) * AT_READ(*in, in0 + c);
        AT_WRITE(*out, out0 + o, s);
    }
}

/* the channel pairs (2m, 2m+1) of each head turned by the angle t·θ_m, θ_m = 10000^(−2m/D) */
static void rotate(dims n, at_buf *v, long v0, int width, int t) {
    for (int c = 0; c < width; c += 2) {
        float theta = powf(10000.0f, -(float)(c % n.D) / (float)n.D);
        float cs = cosf(t * theta), sn = sinf(t * theta);
        float a = AT_READ(*v, v0 + c), b = AT_READ(*v, v0 + c + 1);
        AT_WRITE(*v, v0 + c, a * cs - b * sn);
        AT_WRITE(*v, v0 + c + 1, a * sn + b * cs);
    }
}

static void step(dims n, state *s, int t) {
    at_at("i", t);
    for (int l = 0; l < n.L; l++) {
        at_at("l", l);
        long x0 = ((long)l * n.T + t) * n.C;
#ifdef MISTAKE_LAYER
        long cache = 0; /* MISTAKE: every layer's cache at layer 0's place */
#else
        long cache = (long)l * n.T * n.KV;
#endif
#ifdef MISTAKE_ROW
        long stride = n.C; /* MISTAKE: a cache row as wide as a query row */
#else
        long stride = n.KV;
#endif
        long own = cache + (long)t * stride; /* this step's cache row */
        project(&s->q, 0, &s->w_q, (long)l * n.C * n.C, &s->x, x0, n.C, n.C);
        project(&s->key_cache, own, &s->w_k, (long)l * n.KV * n.C, &s->x, x0, n.KV, n.C);
        project(&s->value_cache, own, &s->w_v, (long)l * n.KV * n.C, &s->x, x0, n.KV, n.C);
        rotate(n, &s->q, 0, n.C, t);
        rotate(n, &s->key_cache, own, n.KV, t);
        for (int h = 0; h < n.H; h++) {
#ifdef MISTAKE_HEAD
            int g = h % n.H_kv; /* MISTAKE: heads dealt out in turn, not in groups */
#else
            int g = h / (n.H / n.H_kv);
#endif
#ifdef MISTAKE_SCALE
            float scale = 1.0f / sqrtf((float)n.C); /* MISTAKE: the model width, not a head's */
#else
            float scale = 1.0f / sqrtf((float)n.D);
#endif
            long row = (long)h * n.T; /* head h's row of att */
            float top = -INFINITY;
            for (int j = 0; j <= t; j++) {
                long kj = cache + (long)j * stride + (long)g * n.D;
                float dot = 0.0f;
                for (int d = 0; d < n.D; d++) dot += AT_READ(s->q, h * n.D + d) * AT_READ(s->key_cache, kj + d);
                AT_WRITE(s->att, row + j, dot * scale);
                if (dot * scale > top) top = dot * scale;
            }
            /* softmax in place: the row holds the scores, then the probabilities */
            float total = 0.0f;
            for (int j = 0; j <= t; j++) {
                float e = expf(AT_READ(s->att, row + j) - top);
                AT_WRITE(s->att, row + j, e);
                total += e;
            }
            for (int j = 0; j <= t; j++) AT_WRITE(s->att, row + j, AT_READ(s->att, row + j) / total);
            for (int d = 0; d < n.D; d++) {
                float acc = 0.0f;
                for (int j = 0; j <= t; j++) {
                    long vj = cache + (long)j * stride + (long)g * n.D;
                    acc += AT_READ(s->att, row + j) * AT_READ(s->value_cache, vj + d);
                }
                AT_WRITE(s->mix, h * n.D + d, acc);
            }
        }
        project(&s->y, 0, &s->w_o, (long)l * n.C * n.C, &s->mix, 0, n.C, n.C);
    }
}

/* columns [c0, c0 + m) of our [L, n, width] weights as [L, m, n] (setting up: not recorded) */
static at_buf transposed(const char *name, const at_tensor *w, int L, int n, int width, int c0, int m) {
    at_buf b = at_zeros(name, (long long)L * m * n);
    for (int l = 0; l < L; l++)
        for (int o = 0; o < m; o++)
            for (int c = 0; c < n; c++)
                b.data[((long)l * m + o) * n + c] = w->data[((long)l * n + c) * width + c0 + o];
    return b;
}

int main(int argc, char **argv) {
    at_inputs *in = at_begin(argc, argv);
    dims n;
    n.L = (int)at_dim(in, "L");
    n.T = (int)at_dim(in, "T");
    n.C = (int)at_dim(in, "C");
    n.H = (int)at_dim(in, "H");
    n.H_kv = (int)at_dim(in, "H_kv");
    n.D = n.C / n.H;
    n.KV = n.H_kv * n.D;
    const at_tensor *w_qkv = at_tensor_find(in, "w_qkv"), *w_proj = at_tensor_find(in, "w_proj");
    if (!w_qkv || !w_proj || n.L < 1) return 2;
    int width = n.C + 2 * n.KV;
    state s;
    s.x = at_input(in, "x");
    s.w_q = transposed("w_q", w_qkv, n.L, n.C, width, 0, n.C);
    s.w_k = transposed("w_k", w_qkv, n.L, n.C, width, n.C, n.KV);
    s.w_v = transposed("w_v", w_qkv, n.L, n.C, width, n.C + n.KV, n.KV);
    s.w_o = transposed("w_o", w_proj, n.L, n.C, n.C, 0, n.C);
    s.key_cache = at_zeros("key_cache", (long long)n.L * n.T * n.KV);
    s.value_cache = at_zeros("value_cache", (long long)n.L * n.T * n.KV);
    s.q = at_zeros("q", n.C);
    s.att = at_zeros("att", (long long)n.H * n.T);
    s.mix = at_zeros("mix", n.C);
    s.y = at_zeros("y", n.C);
    for (int t = 0; t < n.T; t++) step(n, &s, t);
    at_close();
    return 0;
}
