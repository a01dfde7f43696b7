/*
 * attn_record.h: record a hand-written attention kernel's reads and writes for `attn-trace grade`.
 * The inputs and trace formats are documented in docs/your_kernel.md of the attn-trace repository.
 * One header for C (C99) and C++ (C++11 and later); no dependencies beyond the C library.
 *
 *     #include "attn_record.h"
 *
 *     int main(int argc, char **argv) {
 *         at_inputs *in = at_begin(argc, argv);     // inputs: $ATTN_TRACE_INPUTS or argv[1];
 *                                                   // trace:  $ATTN_TRACE_OUT    or argv[2]
 *         long long T = at_dim(in, "T");
 *         at_buf q = at_input(in, "q");             // a given tensor, under our buffer name
 *         at_buf scores = at_zeros("scores", n);    // a buffer the kernel computes
 *         at_phase("scores");                       // optional: tag the events that follow
 *         float s = AT_READ(q, q_base + d);         // records a read, with __FILE__ and __LINE__
 *         AT_WRITE(scores, off, s);                 // records a write
 *         AT_ADD(d_k, k_base + d, s);               // records a read of the old value, then a write
 *         at_close();                               // also done at exit()
 *     }
 *
 * Each access is one line of the trace (JSON Lines, format "attn-trace-trace" version 1):
 *
 *     {"op":"read","buffer":"q","offset":10,"value":0.25,"file":"attention.c","line":42}
 *
 * Values are printed with %.9g, which gives back the same float; NaN and infinities as the
 * strings "nan", "inf", "-inf". An offset outside the buffer (negative ones included) is recorded
 * as given and never touches memory: such a read returns 0.0f and such a write is dropped, so the
 * grader can point at the line that made it.
 *
 * The recorder's state is per source file (static), which is all a one-file kernel needs. A
 * buffer remembers the recorder it was made with, so at_buf values may be passed to functions in
 * other files; call at_phase in the file that called at_begin.
 *
 * Compile with `-lm` if your kernel uses sqrtf or expf; this header itself needs no library.
 */
#ifndef ATTN_RECORD_H
#define ATTN_RECORD_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AT_MAX_RANK 8
#define AT_MAX_NAMED 32 /* dims and params an inputs file may hold */

/* A flat buffer of floats whose accesses are recorded: `name` is our buffer's name ("q",
 * "scores", "d_k", ...), `len` its number of elements. `rec` is the recorder it writes to (null:
 * this file's default). */
typedef struct at_recorder at_recorder;
typedef struct at_buf {
    const char *name;
    float *data;
    long long len;
    at_recorder *rec;
} at_buf;

/* One tensor of the inputs file: flat, row-major, `count` numbers of shape dims[0..rank). */
typedef struct at_tensor {
    char name[64];
    long long count;
    int rank;
    long long dims[AT_MAX_RANK];
    float *data;
} at_tensor;

typedef struct at_named {
    char name[32];
    double value;
} at_named;

/* An inputs file ("attn-trace-inputs" version 1), parsed. */
typedef struct at_inputs {
    char scenario[1024];
    char variant[32];
    char pass[32];
    long long input; /* 0: the scenario's own values; k > 0: random inputs drawn with seed k */
    int n_dims, n_params, n_tensors;
    at_named dims[AT_MAX_NAMED];
    at_named params[AT_MAX_NAMED];
    at_tensor *tensors;
} at_inputs;

struct at_recorder {
    FILE *f;
    char *buf;            /* the stream's buffer: events are written in large blocks */
    const char *phase;    /* our phase name tagging the events, or null */
    const char *file_src; /* the __FILE__ whose escaped form is in file_json */
    char file_json[1024];
};

/* This file's default recorder, opened by at_begin or at_open. */
static at_recorder at__default;

/* --- the inputs file --------------------------------------------------------------------- */

/* `s` as a JSON string literal into dst (at most cap bytes, always terminated): quotes,
 * backslashes and control characters escaped. */
static inline void at__json(char *dst, size_t cap, const char *s) {
    size_t n = 0;
    if (cap < 3) {
        if (cap) dst[0] = '\0';
        return;
    }
    dst[n++] = '"';
    for (; *s && n + 8 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            dst[n++] = '\\';
            dst[n++] = (char)ch;
        } else if (ch < 0x20) {
            n += (size_t)snprintf(dst + n, cap - n, "\\u%04x", ch);
        } else {
            dst[n++] = (char)ch;
        }
    }
    dst[n++] = '"';
    dst[n] = '\0';
}

static inline void at_inputs_free(at_inputs *in) {
    int k;
    if (!in) return;
    for (k = 0; k < in->n_tensors; k++) free(in->tensors[k].data);
    free(in->tensors);
    free(in);
}

/* Copies token `tok` (length n) into dst of size cap; 0 when it does not fit. */
static inline int at__copy(char *dst, size_t cap, const char *tok, size_t n) {
    if (n + 1 > cap) return 0;
    memcpy(dst, tok, n);
    dst[n] = '\0';
    return 1;
}

/* The next token of the line at *p (spaces and tabs between tokens), or null at the line's end
 * or at a `#`, which starts a comment. */
static inline const char *at__token(const char **p, size_t *len) {
    const char *s = *p, *t;
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;
    if (*s == '\0' || *s == '\n' || *s == '#') {
        *p = s;
        return NULL;
    }
    t = s;
    while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') s++;
    *len = (size_t)(s - t);
    *p = s;
    return t;
}

/* A path is written as one token, each byte that would split it (a space, a newline) or be
 * misread (% itself) as %XX in hexadecimal: back to the bytes, in place. */
static inline int at__hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static inline void at__untoken(char *s) {
    char *out = s;
    for (; *s; s++) {
        int hi = s[0] == '%' ? at__hex(s[1]) : -1;
        int lo = hi >= 0 ? at__hex(s[2]) : -1;
        if (lo >= 0) {
            *out++ = (char)(hi * 16 + lo);
            s += 2;
        } else {
            *out++ = *s;
        }
    }
    *out = '\0';
}

static inline int at__is(const char *tok, size_t n, const char *word) {
    return tok && strlen(word) == n && memcmp(tok, word, n) == 0;
}

/* Reads an inputs file written by `attn-trace inputs`. `path` null: $ATTN_TRACE_INPUTS. On error
 * prints `attn_record: FILE:LINE: what` to stderr and returns null. Free with at_inputs_free. */
static inline at_inputs *at_inputs_load(const char *path) {
    FILE *f;
    char *text = NULL, *end;
    const char *p, *what = NULL;
    long size;
    int line = 0, seen_header = 0, cap = 0;
    at_inputs *in;

    if (!path) path = getenv("ATTN_TRACE_INPUTS");
    if (!path || !*path) {
        fprintf(stderr, "attn_record: no inputs file: give its path or set ATTN_TRACE_INPUTS\n");
        return NULL;
    }
    f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "attn_record: cannot open the inputs file %s\n", path);
        return NULL;
    }
    /* the whole file in memory, terminated, so strtof can walk a line of numbers */
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(text = (char *)malloc((size_t)size + 1)) || fread(text, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(text);
        fprintf(stderr, "attn_record: cannot read the inputs file %s\n", path);
        return NULL;
    }
    fclose(f);
    text[size] = '\0';
    in = (at_inputs *)calloc(1, sizeof *in);
    if (!in) {
        free(text);
        return NULL;
    }

    p = text;
    while (*p && !what) {
        const char *key, *a, *b;
        size_t kn = 0, an = 0, bn = 0;
        line++;
        key = at__token(&p, &kn);
        if (key && !seen_header) {
            a = at__token(&p, &an);
            if (!at__is(key, kn, "attn-trace-inputs")) {
                what = "not an attn-trace inputs file (the first line is not `attn-trace-inputs 1`)";
            } else if (!at__is(a, an, "1") || at__token(&p, &bn)) {
                what = "inputs format version is not 1, the version this recorder reads";
            }
            seen_header = 1;
        } else if (at__is(key, kn, "end")) {
            free(text);
            return in;
        } else if (at__is(key, kn, "scenario") || at__is(key, kn, "variant") || at__is(key, kn, "pass")) {
            char *dst = key[0] == 's' ? in->scenario : key[0] == 'v' ? in->variant : in->pass;
            size_t cap = key[0] == 's' ? sizeof in->scenario : sizeof in->variant;
            a = at__token(&p, &an);
            if (!a || at__token(&p, &bn) || !at__copy(dst, cap, a, an)) what = "expected `NAME VALUE`";
            if (dst == in->scenario) at__untoken(dst);
        } else if (at__is(key, kn, "input")) {
            a = at__token(&p, &an);
            in->input = a ? strtoll(a, NULL, 10) : 0;
            if (!a) what = "expected `input N`";
        } else if (at__is(key, kn, "dim") || at__is(key, kn, "param")) {
            int dim = key[0] == 'd';
            at_named *list = dim ? in->dims : in->params;
            int *n = dim ? &in->n_dims : &in->n_params;
            a = at__token(&p, &an);
            b = at__token(&p, &bn);
            if (!a || !b || at__token(&p, &kn)) {
                what = "expected `dim NAME SIZE` or `param NAME NUMBER`";
            } else if (*n == AT_MAX_NAMED || !at__copy(list[*n].name, sizeof list[*n].name, a, an)) {
                what = "too many dims or params, or a name too long";
            } else {
                list[(*n)++].value = strtod(b, NULL);
            }
        } else if (at__is(key, kn, "tensor")) {
            at_tensor *t;
            long long k;
            const char *tok;
            size_t tn = 0;
            if (in->n_tensors == cap) {
                at_tensor *grown;
                cap = cap ? 2 * cap : 16;
                grown = (at_tensor *)realloc(in->tensors, (size_t)cap * sizeof *grown);
                if (!grown) {
                    what = "out of memory";
                    break;
                }
                in->tensors = grown;
            }
            t = &in->tensors[in->n_tensors];
            memset(t, 0, sizeof *t);
            a = at__token(&p, &an);
            if (!a || !at__copy(t->name, sizeof t->name, a, an)) {
                what = "expected `tensor NAME COUNT RANK DIM0 ...`";
                break;
            }
            tok = at__token(&p, &tn);
            t->count = tok ? strtoll(tok, NULL, 10) : -1;
            tok = at__token(&p, &tn);
            t->rank = tok ? (int)strtol(tok, NULL, 10) : -1;
            if (t->count < 0 || t->rank < 0 || t->rank > AT_MAX_RANK) {
                what = "expected `tensor NAME COUNT RANK DIM0 ...` (rank at most 8)";
                break;
            }
            for (k = 0; k < t->rank; k++) {
                tok = at__token(&p, &tn);
                if (!tok) break;
                t->dims[k] = strtoll(tok, NULL, 10);
            }
            if (k < t->rank || at__token(&p, &tn)) {
                what = "a tensor's number of dimensions is not its rank";
                break;
            }
            while (*p && *p != '\n') p++; /* past a trailing comment */
            t->data = (float *)malloc((size_t)(t->count ? t->count : 1) * sizeof(float));
            if (!t->data) {
                what = "out of memory";
                break;
            }
            in->n_tensors++;
            /* the numbers are the whole next line */
            if (*p == '\n') p++;
            if (!*p && t->count > 0) {
                what = "a tensor's numbers are missing";
                break;
            }
            line++;
            for (k = 0; k < t->count; k++) {
                t->data[k] = strtof(p, &end);
                if (end == p || (*end && *end != ' ' && *end != '\t' && *end != '\r' && *end != '\n')) break;
                p = end;
                while (*p == ' ' || *p == '\t') p++;
                if (*p == '\n' && k + 1 < t->count) break;
            }
            while (*p == ' ' || *p == '\t' || *p == '\r') p++;
            if (k < t->count || (*p && *p != '\n')) what = "a tensor's line does not hold COUNT numbers";
        } else if (key) {
            what = "unknown line";
        }
        /* on to the next line (anything after a `#` is a comment) */
        while (*p && *p != '\n') p++;
        if (*p == '\n') p++;
    }
    if (!what) what = "no `end` line: the file is cut short";
    fprintf(stderr, "attn_record: %s:%d: %s\n", path, line, what);
    free(text);
    at_inputs_free(in);
    return NULL;
}

/* A dimension (B, T, C, H, D, H_kv, S) by name; -1 when the file has none. */
static inline long long at_dim(const at_inputs *in, const char *name) {
    int k;
    for (k = 0; k < in->n_dims; k++)
        if (strcmp(in->dims[k].name, name) == 0) return (long long)in->dims[k].value;
    return -1;
}

/* A parameter (causal, scale, dropout, br, bc) by name; `fallback` when the file has none. */
static inline double at_param(const at_inputs *in, const char *name, double fallback) {
    int k;
    for (k = 0; k < in->n_params; k++)
        if (strcmp(in->params[k].name, name) == 0) return in->params[k].value;
    return fallback;
}

/* A tensor by name, or null when the file has none. */
static inline at_tensor *at_tensor_find(const at_inputs *in, const char *name) {
    int k;
    for (k = 0; k < in->n_tensors; k++)
        if (strcmp(in->tensors[k].name, name) == 0) return &in->tensors[k];
    return NULL;
}

/* --- buffers ----------------------------------------------------------------------------- */

/* The inputs file's tensor `name` as our buffer `name` (its data, not a copy); data null and len
 * 0 when the file has no such tensor. */
static inline at_buf at_input(const at_inputs *in, const char *name) {
    at_buf b;
    at_tensor *t = at_tensor_find(in, name);
    b.name = t ? t->name : name;
    b.data = t ? t->data : NULL;
    b.len = t ? t->count : 0;
    b.rec = &at__default;
    return b;
}

/* A new buffer of n zeros named `name` (free it with at_buf_free); data null if out of memory. */
static inline at_buf at_zeros(const char *name, long long n) {
    at_buf b;
    b.name = name;
    b.data = (float *)calloc((size_t)(n > 0 ? n : 1), sizeof(float));
    b.len = b.data ? n : 0;
    b.rec = &at__default;
    return b;
}

static inline void at_buf_free(at_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

/* --- the trace --------------------------------------------------------------------------- */

static inline void at_close(void) {
    at_recorder *r = &at__default;
    if (!r->f) return;
    fclose(r->f);
    free(r->buf);
    r->f = NULL;
    r->buf = NULL;
}

static inline void at__close_at_exit(void) {
    at_close();
}

/* Opens the trace at `path` (null: $ATTN_TRACE_OUT) as this file's default recorder and writes
 * its header from the inputs' scenario, variant, pass, input and dims. 0 on success; -1 (with a
 * message on stderr) when it cannot. The trace is closed by at_close and at exit(). */
static inline int at_open(const at_inputs *in, const char *path) {
    static int registered = 0;
    at_recorder *r = &at__default;
    char s[2100], v[80], p[80];
    int k;
    if (!path) path = getenv("ATTN_TRACE_OUT");
    if (!path || !*path) {
        fprintf(stderr, "attn_record: no trace file: give its path or set ATTN_TRACE_OUT\n");
        return -1;
    }
    at_close();
    r->f = fopen(path, "w");
    if (!r->f) {
        fprintf(stderr, "attn_record: cannot create the trace file %s\n", path);
        return -1;
    }
    r->buf = (char *)malloc(1 << 20);
    if (r->buf) setvbuf(r->f, r->buf, _IOFBF, 1 << 20);
    r->phase = NULL;
    r->file_src = NULL;
    at__json(s, sizeof s, in->scenario);
    at__json(v, sizeof v, in->variant);
    at__json(p, sizeof p, in->pass);
    fprintf(r->f, "{\"format\":\"attn-trace-trace\",\"version\":1,\"scenario\":%s,\"variant\":%s,\"pass\":%s,\"input\":%lld,\"dims\":{",
            s, v, p, in->input);
    /* the sizes too, so a trace recorded on another scenario's shapes is told apart */
    for (k = 0; k < in->n_dims; k++) {
        at__json(v, sizeof v, in->dims[k].name);
        fprintf(r->f, "%s%s:%lld", k ? "," : "", v, (long long)in->dims[k].value);
    }
    fputs("}}\n", r->f);
    if (!registered) registered = atexit(at__close_at_exit) == 0;
    return 0;
}

/* Loads the inputs ($ATTN_TRACE_INPUTS, else argv[1]) and opens the trace ($ATTN_TRACE_OUT, else
 * argv[2]); on failure prints why and exits with status 2. */
static inline at_inputs *at_begin(int argc, char **argv) {
    const char *inputs = getenv("ATTN_TRACE_INPUTS"), *out = getenv("ATTN_TRACE_OUT");
    at_inputs *in;
    if ((!inputs || !*inputs) && argc > 1) inputs = argv[1];
    if ((!out || !*out) && argc > 2) out = argv[2];
    if (!inputs || !*inputs || !out || !*out) {
        fprintf(stderr, "usage: %s INPUTS TRACE.jsonl (or set ATTN_TRACE_INPUTS and ATTN_TRACE_OUT)\n",
                argc > 0 ? argv[0] : "kernel");
        exit(2);
    }
    in = at_inputs_load(inputs);
    if (!in || at_open(in, out) != 0) exit(2);
    return in;
}

/* Tags the events that follow with our phase `name` (e.g. "scores"; a string that outlives the
 * events, such as a literal); null stops tagging. */
static inline void at_phase(const char *name) {
    at__default.phase = name;
}

/* One event: {"op":..,"buffer":..,"offset":..,"value":..,"file":..,"line":..[,"phase":..]}. */
static inline void at__event(const at_buf *b, const char *op, long long off, float v, const char *file, int line) {
    at_recorder *r = b->rec ? b->rec : &at__default;
    char name[160];
    if (!r->f) return; /* no trace open (or already closed): nothing to record into */
    if (r->file_src != file) {
        at__json(r->file_json, sizeof r->file_json, file);
        r->file_src = file;
    }
    at__json(name, sizeof name, b->name ? b->name : "");
    fprintf(r->f, "{\"op\":\"%s\",\"buffer\":%s,\"offset\":%lld,\"value\":", op, name, off);
    if (isnan(v))
        fputs("\"nan\"", r->f);
    else if (isinf(v))
        fputs(v > 0 ? "\"inf\"" : "\"-inf\"", r->f);
    else
        fprintf(r->f, "%.9g", (double)v);
    fprintf(r->f, ",\"file\":%s,\"line\":%d", r->file_json, line);
    if (r->phase) {
        at__json(name, sizeof name, r->phase);
        fprintf(r->f, ",\"phase\":%s", name);
    }
    fputs("}\n", r->f);
}

/* b[off], recorded; 0.0f (and no memory touched) when off is outside the buffer. */
static inline float at_read(const at_buf *b, long long off, const char *file, int line) {
    float v = (off >= 0 && off < b->len) ? b->data[off] : 0.0f;
    at__event(b, "read", off, v, file, line);
    return v;
}

/* b[off] = v, recorded; dropped when off is outside the buffer. */
static inline void at_write(at_buf *b, long long off, float v, const char *file, int line) {
    if (off >= 0 && off < b->len) b->data[off] = v;
    at__event(b, "write", off, v, file, line);
}

/* b[off] += delta: a read of the old value, then a write of the new, which it returns. */
static inline float at_add(at_buf *b, long long off, float delta, const char *file, int line) {
    float v = at_read(b, off, file, line) + delta;
    at_write(b, off, v, file, line);
    return v;
}

/* The accesses after this are at index `value` of dimension `dim` ("i", "l", ...): for a buffer
 * reused along that dimension (a scratch row, bound with a stride of 0; docs/your_kernel.md).
 * One line {"op":"at","index":{"i":3}}; call it where your loop moves on, e.g. at_at("i", pos). */
static inline void at_at(const char *dim, long long value) {
    char name[160];
    if (!at__default.f) return;
    at__json(name, sizeof name, dim ? dim : "");
    fprintf(at__default.f, "{\"op\":\"at\",\"index\":{%s:%lld}}\n", name, value);
}

/* The accesses, with the caller's file and line; `b` is an at_buf variable (not a pointer). */
#define AT_READ(b, off) at_read(&(b), (long long)(off), __FILE__, __LINE__)
#define AT_WRITE(b, off, v) at_write(&(b), (long long)(off), (float)(v), __FILE__, __LINE__)
#define AT_ADD(b, off, delta) at_add(&(b), (long long)(off), (float)(delta), __FILE__, __LINE__)

#endif /* ATTN_RECORD_H */
