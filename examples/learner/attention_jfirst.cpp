// A learner's multi-head attention forward in C++, with loops in other orders than the
// reference's: projections row by row as sums of scaled rows of W, the heads innermost in the
// scores, a one-pass (online) softmax, and the weighted sum with the keys j outermost. The
// grader compares results and accesses, not the order, so it passes; its different memory traffic
// is reported as information.
//
//     g++ -std=c++17 -O2 -I recorders examples/learner/attention_jfirst.cpp -o attention_jfirst
//     attn-trace grade scenarios/mha_walkthrough.toml -- ./attention_jfirst
//
// Forward only: from x (fused projection) or from given q, k, v; dropout when the inputs have a
// drop_mask; out = att·W_proj + b_proj when they have w_proj.
#include "attn_record.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace {

// y = x·W + b for `rows` rows: each row of y starts as b, then adds x[c] times row c of W, so W
// is read row by row (the reference walks its columns).
void linear(long long rows, at_buf &x, at_buf &w, at_buf &b, at_buf &y) {
    const long long IC = x.len / rows, OC = y.len / rows;
    for (long long r = 0; r < rows; r++) {
        const long long xi = r * IC, yi = r * OC;
        for (long long o = 0; o < OC; o++) AT_WRITE(y, yi + o, AT_READ(b, o));
        for (long long c = 0; c < IC; c++) {
            const float x_c = AT_READ(x, xi + c);
            for (long long o = 0; o < OC; o++) AT_ADD(y, yi + o, x_c * AT_READ(w, c * OC + o));
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    at_inputs *in = at_begin(argc, argv);
    const long long T = at_dim(in, "T"), B = at_dim(in, "B"), C = at_dim(in, "C");
    const long long S = at_dim(in, "S") > 0 ? at_dim(in, "S") : T;  // query rows: T but in cross-attention
    const long long H = std::strcmp(in->variant, "baseline") == 0 ? 1 : at_dim(in, "H");
    // only the grouped kernel shares key/value heads; MHA has one per query head
    const long long H_kv = std::strcmp(in->variant, "gqa") == 0 ? at_dim(in, "H_kv") : H;
    const long long D = C / H, KV = H_kv * D;
    const bool causal = at_param(in, "causal", 1) != 0;
    const at_tensor *mask = at_tensor_find(in, "mask");  // [S,T], 1 visible: not a buffer of ours
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));

    at_buf q = at_input(in, "q"), k = at_input(in, "k"), v = at_input(in, "v");
    at_buf x = at_input(in, "x");
    if (x.data) {
        // the fused projection, then the split: q from columns 0..C, k and v after it
        at_buf w_qkv = at_input(in, "w_qkv"), b_qkv = at_input(in, "b_qkv");
        at_buf qkv = at_zeros("qkv", B * T * (C + 2 * KV));
        at_phase("qkv_proj");
        linear(B * T, x, w_qkv, b_qkv, qkv);
        q = at_zeros("q", B * T * C);
        k = at_zeros("k", B * T * KV);
        v = at_zeros("v", B * T * KV);
        at_phase("split");
        for (long long r = 0; r < B * T; r++) {
            const long long ri = r * (C + 2 * KV);
            for (long long c = 0; c < C; c++) AT_WRITE(q, r * C + c, AT_READ(qkv, ri + c));
            for (long long c = 0; c < KV; c++) AT_WRITE(k, r * KV + c, AT_READ(qkv, ri + C + c));
            for (long long c = 0; c < KV; c++) AT_WRITE(v, r * KV + c, AT_READ(qkv, ri + C + KV + c));
        }
        at_buf_free(&qkv);
    }
    if (!q.data || !k.data || !v.data) {
        std::fprintf(stderr, "attention_jfirst: the inputs have neither x nor q, k, v\n");
        return 2;
    }

    // scores: for each pair (i, j), every head in turn
    at_buf scores = at_zeros("scores", B * H * S * T);
    at_phase("scores");
    for (long long bb = 0; bb < B; bb++)
        for (long long i = 0; i < S; i++)
            for (long long j = 0; j < T; j++) {
                const bool hidden = mask ? mask->data[i * T + j] == 0.0f : causal && j > i;
                for (long long hh = 0; hh < H; hh++) {
                    const long long kv_h = hh / (H / H_kv);
                    const long long q_base = ((bb * S + i) * H + hh) * D;
                    const long long k_base = ((bb * T + j) * H_kv + kv_h) * D;
                    const long long off = ((bb * H + hh) * S + i) * T + j;
                    if (hidden) {
                        AT_WRITE(scores, off, -1e9f);  // no need to read q and k for a hidden pair
                        continue;
                    }
                    float s = 0.0f;
                    for (long long d = 0; d < D; d++) s += AT_READ(q, q_base + d) * AT_READ(k, k_base + d);
                    AT_WRITE(scores, off, s * scale);
                }
            }

    // online softmax: one pass keeps the running maximum m and the sum l of exp(s - m), rescaling
    // l whenever m grows; a second pass writes the probabilities
    at_buf probs = at_zeros("probs", B * H * S * T);
    at_phase("softmax");
    for (long long row = 0; row < B * H * S * T; row += T) {
        float m = -INFINITY, l = 0.0f;
        for (long long j = 0; j < T; j++) {
            const float s = AT_READ(scores, row + j);
            const float m_new = std::fmax(m, s);
            l = l * std::exp(m - m_new) + std::exp(s - m_new);
            m = m_new;
        }
        for (long long j = 0; j < T; j++) AT_WRITE(probs, row + j, std::exp(AT_READ(scores, row + j) - m) / l);
    }

    at_buf p = probs;
    at_buf keep = at_input(in, "drop_mask");
    at_buf probs_drop = {"probs_drop", nullptr, 0, nullptr};
    if (keep.data) {
        const float rescale = 1.0f / (1.0f - static_cast<float>(at_param(in, "dropout", 0.0)));
        probs_drop = at_zeros("probs_drop", B * H * S * T);
        at_phase("dropout");
        for (long long off = 0; off < B * H * S * T; off++)
            AT_WRITE(probs_drop, off, AT_READ(probs, off) * AT_READ(keep, off) * rescale);
        p = probs_drop;
    }

    // the weighted sum with j outermost: clear head hh's slot of row i, then add p_ij · v_j
    at_buf att = at_zeros("att", B * S * C);
    at_phase("weighted_sum");
    for (long long bb = 0; bb < B; bb++)
        for (long long hh = 0; hh < H; hh++) {
            const long long kv_h = hh / (H / H_kv);
            for (long long i = 0; i < S; i++) {
                const long long a_base = ((bb * S + i) * H + hh) * D;
                const long long row = ((bb * H + hh) * S + i) * T;
                for (long long d = 0; d < D; d++) AT_WRITE(att, a_base + d, 0.0f);
                for (long long j = 0; j < T; j++) {
                    const long long v_base = ((bb * T + j) * H_kv + kv_h) * D;
                    const float p_ij = AT_READ(p, row + j);
                    for (long long d = 0; d < D; d++) AT_ADD(att, a_base + d, p_ij * AT_READ(v, v_base + d));
                }
            }
        }

    at_buf w_proj = at_input(in, "w_proj");
    if (w_proj.data) {
        at_buf b_proj = at_input(in, "b_proj");
        at_buf out = at_zeros("out", B * S * C);
        at_phase("out_proj");
        linear(B * S, att, w_proj, b_proj, out);
        at_buf_free(&out);
    }

    at_close();
    if (x.data) {
        at_buf_free(&q);
        at_buf_free(&k);
        at_buf_free(&v);
    }
    at_buf_free(&scores);
    at_buf_free(&probs);
    at_buf_free(&probs_drop);
    at_buf_free(&att);
    at_inputs_free(in);
    return 0;
}
