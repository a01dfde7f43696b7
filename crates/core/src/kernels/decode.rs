//! Generation from a key/value cache, one token at a time (forward only): how a trained model
//! writes text. At step `t` only token `t` is new: it is projected once, its key and value are
//! written into row `t` of `k_cache` and `v_cache`, and its query attends over the rows `0..=t`
//! the cache already holds. Nothing of tokens `0..t` is computed again, and no score of a later
//! token exists yet, so no mask is needed: the causal mask is the order of the steps.
//!
//! Layouts: `x, q, att, out [B,T,C]` share the row start `xi = (bb*T + t)*C`; the caches are
//! `[B,T,H_kv,D]` with row start `ci = (bb*T + t)*H_kv*D`, and query head `hh` reads cache head
//! `kv_h = hh / (H/H_kv)` of position `j` at `k_base = ((bb*T + j)*H_kv + kv_h)*D` (llama2.c's
//! `loff + pos*kv_dim + (h/kv_mul)*head_size`, with the batch in place of the layer). MHA is
//! `H_kv = H`, the baseline `H = H_kv = 1` and `D = C`. Scores and probs are `[B,H,T,T]`; step
//! `t` fills row `t` up to `j = t`.
//!
//! Every sum is taken in the order of the full-sequence kernels (`linear.rs`, the attention
//! files), so `out` is the causal run's `out` bit for bit.
//!
//! The cache can be kept three ways ([`Cache`]), and only where a position's row is changes:
//! - contiguous, as above: row `bb*T + p`;
//! - rolling, under a sliding window of `W` keys after `N` sink tokens: `N + W` rows per
//!   sequence, sink `p < N` in row `p`, every later position in slot `p % W` after them, which
//!   position `p + W` overwrites once `p` has slid out of every later query's window;
//! - paged, as serving engines keep it: a pool of `NB` blocks of `BS` rows shared by the batch,
//!   and a block table `[B, MB]` whose row `bb` lists the blocks of sequence `bb` in order, so
//!   position `p` is row `p % BS` of block `phys = block_table[bb*MB + p/BS]`. The table is
//!   read like any buffer, so the indirection is in the log.
//!
//! With `split_kv = P` (flash-decoding), the cached positions are cut into parts of `L = ⌈T/P⌉`
//! and each part takes its own softmax and weighted sum (`p_part`, `o_part`) and keeps its
//! log-sum-exp (`lse_part`); a merge then weighs the parts by `softmax(lse_part)` (`w_part`).
//! On a GPU the parts run side by side; the result equals the unsplit step's up to rounding.

use super::rope::{self, Pairs};
use super::softmax;
use crate::tensor::Shape;
use crate::trace::{Buf, Phase, Recorder};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// How a scenario keeps a decode run's cache and splits its steps (a sliding window's rolling
/// cache follows from the mask).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheSpec {
    /// A paged cache: a pool of blocks found through a block table.
    pub paged: Option<Paged>,
    /// `split_kv = P`: each step cuts its cached positions into `P` parts and merges them.
    pub split: Option<usize>,
}

/// A paged cache: `num_blocks` blocks of `block_size` positions, and for each sequence the
/// blocks that hold its positions in order (`table`, `[B, MB]` row-major, `MB = ⌈T/BS⌉`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paged {
    pub block_size: usize,
    pub num_blocks: usize,
    pub table: Vec<usize>,
}

impl Paged {
    /// Blocks a sequence of `T` positions needs: `MB = ⌈T/BS⌉`.
    pub const fn per_row(&self, T: usize) -> usize {
        T.div_ceil(self.block_size)
    }

    /// The table `[B, MB]` as the kernel reads it, one block id per cell.
    pub fn table_f32(&self) -> Vec<f32> {
        self.table.iter().map(|&b| b as f32).collect()
    }

    /// A pool of `num_blocks` with the `B·MB` blocks the sequences need dealt out in an order
    /// shuffled by `seed` (a serving engine hands out whichever blocks are free), each used once.
    pub fn shuffled(block_size: usize, num_blocks: usize, B: usize, T: usize, seed: u64) -> Paged {
        let mut ids: Vec<usize> = (0..num_blocks).collect();
        ids.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
        ids.truncate(B * T.div_ceil(block_size));
        Paged {
            block_size,
            num_blocks,
            table: ids,
        }
    }
}

/// Where a decode run keeps each position's key and value.
#[derive(Clone, Copy, Debug)]
pub enum Cache<'a> {
    /// `[B, T, H_kv, D]`: position `p` of sequence `bb` in row `bb*T + p`.
    Contiguous,
    /// `[B, N + W, H_kv, D]`: sink `p < N` in row `p`, a later `p` in slot `p % W` after them.
    Rolling { w: usize, sinks: usize },
    /// `[NB, BS, H_kv, D]`, found through `table [B, MB]`: row `p % BS` of block
    /// `table[bb*MB + p/BS]`.
    Paged { bs: usize, mb: usize, table: &'a [f32] },
}

/// What a decode run reads: the tokens `x`, the fused projection, the output projection, the
/// rotation tables when it uses rotary positions, how its cache is kept, and into how many
/// parts a step splits the cache (`None`: it does not).
pub struct Given<'a> {
    pub x: &'a [f32],
    pub w_qkv: &'a [f32],
    /// `None` for a model without biases.
    pub b_qkv: Option<&'a [f32]>,
    pub w_proj: &'a [f32],
    pub b_proj: Option<&'a [f32]>,
    pub rope: Option<(Pairs, &'a [f32], &'a [f32])>,
    pub cache: Cache<'a>,
    pub split: Option<usize>,
}

/// What a decode run writes: each token's query, the caches, the score rows, the outputs, and
/// either the probabilities or, split, each part's probabilities, log-sum-exp and output and
/// the merge weights (the others are empty).
pub struct Written<'a> {
    pub q: &'a mut [f32],
    pub k_cache: &'a mut [f32],
    pub v_cache: &'a mut [f32],
    pub scores: &'a mut [f32],
    pub probs: &'a mut [f32],
    pub p_part: &'a mut [f32],
    pub lse_part: &'a mut [f32],
    pub o_part: &'a mut [f32],
    pub w_part: &'a mut [f32],
    pub att: &'a mut [f32],
    pub out: &'a mut [f32],
}

/// Which of a cached position's rows an iteration reads.
#[derive(Clone, Copy)]
enum Row {
    Key,
    Value,
}

/// The keys query `t` sees, in order: the sinks below its window, then the window
/// `t − W < j ≤ t` (every `j ≤ t` without a window).
fn seen(cache: Cache<'_>, t: usize) -> std::iter::Chain<std::ops::Range<usize>, std::ops::Range<usize>> {
    match cache {
        Cache::Rolling { w, sinks } => {
            let lo = (t + 1).saturating_sub(w);
            (0..sinks.min(lo)).chain(lo..t + 1)
        }
        Cache::Contiguous | Cache::Paged { .. } => (0..0).chain(0..t + 1),
    }
}

/// Enters step `t`'s iteration, `xi` its row of `x`, with where its key and value go: row start
/// `ci` of the cache (a paged cache's block read from the table first). Returns `ci` and the
/// iterations opened.
fn enter_step<R: Recorder>(rec: &mut R, sh: Shape, cache: Cache<'_>, bb: usize, t: usize, xi: usize) -> (usize, usize) {
    let (T, kv) = (sh.t, sh.kv_c());
    let ci = match cache {
        Cache::Contiguous => (bb * T + t) * kv,
        // a sink keeps its own row for good
        Cache::Rolling { w: W, sinks: N } if t < N => (bb * (N + W) + t) * kv,
        // a later token takes slot t % W: the row of t − W, which no query from t on can see
        Cache::Rolling { w: W, sinks: N } => (bb * (N + W) + N + t % W) * kv,
        // the table names the block that holds position t; t % BS is its row there
        Cache::Paged { bs: BS, mb: MB, table } => {
            let blk = t / BS;
            rec.enter(&["t", "xi", "blk"], [t, xi, blk]);
            let phys = rec.read(Buf::BlockTable, table, bb * MB + blk) as usize;
            let ci = (phys * BS + t % BS) * kv;
            rec.enter(&["phys", "ci"], [phys, ci]);
            return (ci, 2);
        }
    };
    rec.enter(&["t", "xi", "ci"], [t, xi, ci]);
    (ci, 1)
}

/// Enters the iteration of cached position `j` for query head `hh` (key/value head `kv_h`),
/// `off` its score's offset, with where its key (or value) row starts: `k_base` (`v_base`).
/// Returns that start and the iterations opened.
#[allow(clippy::too_many_arguments)]
fn enter_key<R: Recorder>(
    rec: &mut R,
    sh: Shape,
    cache: Cache<'_>,
    which: Row,
    (bb, kv_h): (usize, usize),
    j: usize,
    off: usize,
) -> (usize, usize) {
    let (T, H_kv, D) = (sh.t, sh.h_kv, sh.d());
    let key = matches!(which, Row::Key);
    let base = match cache {
        Cache::Contiguous => ((bb * T + j) * H_kv + kv_h) * D,
        // a sink's own row
        Cache::Rolling { w: W, sinks: N } if j < N => ((bb * (N + W) + j) * H_kv + kv_h) * D,
        // a later key's window slot after the sinks
        Cache::Rolling { w: W, sinks: N } => ((bb * (N + W) + N + j % W) * H_kv + kv_h) * D,
        // row j % BS of the block the table names for position j
        Cache::Paged { bs: BS, mb: MB, table } => {
            let j_blk = j / BS;
            rec.enter(&["j", "j_blk", "off"], [j, j_blk, off]);
            let j_phys = rec.read(Buf::BlockTable, table, bb * MB + j_blk) as usize;
            let base = ((j_phys * BS + j % BS) * H_kv + kv_h) * D;
            let names = if key {
                &["j_phys", "k_base"]
            } else {
                &["j_phys", "v_base"]
            };
            rec.enter(names, [j_phys, base]);
            return (base, 2);
        }
    };
    let names = if key {
        &["j", "k_base", "off"]
    } else {
        &["j", "v_base", "off"]
    };
    rec.enter(names, [j, base, off]);
    (base, 1)
}

/// Closes `n` iterations.
fn exit_n<R: Recorder>(rec: &mut R, n: usize) {
    for _ in 0..n {
        rec.exit();
    }
}

/// Generates the `T` positions of each of the `B` sequences in turn.
pub fn generate<R: Recorder>(rec: &mut R, sh: Shape, g: &Given<'_>, w: Written<'_>) {
    let Shape {
        b: B,
        t: T,
        c: C,
        h: H,
        h_kv: H_kv,
        ..
    } = sh;
    let D = sh.d();
    let scale = 1.0 / (D as f32).sqrt();
    let Written {
        q,
        k_cache,
        v_cache,
        scores,
        probs,
        p_part,
        lse_part,
        o_part,
        w_part,
        att,
        out,
    } = w;
    let cache = g.cache;
    // the sizes the cache's offsets are made of, for the formulas beside them
    match cache {
        Cache::Contiguous => {}
        Cache::Rolling { w, sinks } => rec.constants(&["W", "N"], &[w, sinks]),
        Cache::Paged { bs, mb, .. } => rec.constants(&["BS", "MB"], &[bs, mb]),
    }
    // split: P parts of L = ⌈T/P⌉ positions; step t has the parts 0..=t/L
    let split = g.split.map(|P| (P, T.div_ceil(P)));
    if let Some((P, L)) = split {
        rec.constants(&["P", "L"], &[P, L]);
    }
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for t in 0..T {
            let xi = (bb * T + t) * C;

            // step 1: project token t once: qkv = x[t]·W_qkv + b_qkv, with q kept for this step
            // and k, v written straight into token t's row of the caches
            rec.phase(Phase::DecodeQkv);
            let (ci, opened) = enter_step(rec, sh, cache, bb, t, xi);
            for o in 0..C + 2 * H_kv * D {
                rec.enter(&["o"], [o]);
                // the sum starts at the bias, or at 0 in a model without biases
                let mut s = g.b_qkv.map_or(0.0, |b| rec.read(Buf::BQkv, b, o));
                for c in 0..C {
                    let w_off = c * (C + 2 * H_kv * D) + o;
                    rec.enter(&["c", "w_off"], [c, w_off]);
                    s += rec.read(Buf::X, g.x, xi + c) * rec.read(Buf::WQkv, g.w_qkv, w_off);
                    rec.exit();
                }
                if o < C {
                    rec.write(Buf::Q, q, xi + o, s);
                } else if o < C + H_kv * D {
                    rec.write(Buf::KCache, k_cache, ci + o - C, s);
                } else {
                    rec.write(Buf::VCache, v_cache, ci + o - C - H_kv * D, s);
                }
                rec.exit();
            }

            // step 2: rotary positions turn the new query and key by t·θ_m (the cached keys
            // were turned at their own steps)
            if let Some((pairs, cos, sin)) = g.rope {
                let rows = (bb..bb + 1, t..t + 1);
                rope::forward(rec, sh, pairs, rows, (cos, sin), q, (Buf::KCache, k_cache));
            }

            // step 3: scores of query t against the cached keys it sees, head by head
            rec.phase(Phase::DecodeScores);
            for hh in 0..H {
                let kv_h = hh / (H / H_kv);
                let q_base = xi + hh * D;
                rec.enter(&["hh", "kv_h", "q_base"], [hh, kv_h, q_base]);
                for j in seen(cache, t) {
                    let off = ((bb * H + hh) * T + t) * T + j;
                    let (k_base, keyed) = enter_key(rec, sh, cache, Row::Key, (bb, kv_h), j, off);
                    let mut s = 0.0;
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        s += rec.read(Buf::Q, q, q_base + d) * rec.read(Buf::KCache, k_cache, k_base + d);
                        rec.exit();
                    }
                    rec.write(Buf::Scores, scores, off, s * scale);
                    exit_n(rec, keyed);
                }
                rec.exit();
            }

            if let Some((P, L)) = split {
                // step 4: each part p of the cached positions takes the softmax of its own
                // scores, as if they were the whole row, and keeps its log-sum-exp
                rec.phase(Phase::DecodePartSoftmax);
                for hh in 0..H {
                    let row = ((bb * H + hh) * T + t) * T;
                    rec.enter(&["hh", "row"], [hh, row]);
                    for p in 0..=t / L {
                        let (lo, lse_off) = (p * L, ((bb * H + hh) * T + t) * P + p);
                        rec.enter(&["p", "lo", "lse_off"], [p, lo, lse_off]);
                        let part = lo..(lo + L).min(t + 1);
                        let names = &["j", "off"];
                        let (x, y) = ((Buf::Scores, &*scores), (Buf::PPart, &mut *p_part));
                        let st = softmax::cols_forward(rec, names, part, row, x, y, None);
                        rec.write(Buf::LsePart, lse_part, lse_off, st.max + st.sum.ln());
                        rec.exit();
                    }
                    rec.exit();
                }

                // step 5: each part's own output, o_part[p] = Σ_{j in p} p_part[t,j]·v_cache[j]
                rec.phase(Phase::DecodePartSum);
                for hh in 0..H {
                    let kv_h = hh / (H / H_kv);
                    rec.enter(&["hh", "kv_h"], [hh, kv_h]);
                    for p in 0..=t / L {
                        let o_base = (((bb * H + hh) * T + t) * P + p) * D;
                        rec.enter(&["p", "o_base"], [p, o_base]);
                        for d in 0..D {
                            rec.enter(&["d"], [d]);
                            let mut s = 0.0;
                            for j in p * L..((p + 1) * L).min(t + 1) {
                                let off = ((bb * H + hh) * T + t) * T + j;
                                let (v_base, keyed) = enter_key(rec, sh, cache, Row::Value, (bb, kv_h), j, off);
                                s += rec.read(Buf::PPart, p_part, off) * rec.read(Buf::VCache, v_cache, v_base + d);
                                exit_n(rec, keyed);
                            }
                            rec.write(Buf::OPart, o_part, o_base + d, s);
                            rec.exit();
                        }
                        rec.exit();
                    }
                    rec.exit();
                }

                // step 6: the parts' weights w_part = softmax(lse_part): each part's share
                // exp(lse_p − max) / Σ of the whole row's exponentials
                rec.phase(Phase::DecodeMergeWeights);
                let parts = 0..t / L + 1;
                for hh in 0..H {
                    let lse_row = ((bb * H + hh) * T + t) * P;
                    rec.enter(&["hh", "lse_row"], [hh, lse_row]);
                    let (lse, w) = ((Buf::LsePart, &*lse_part), (Buf::WPart, &mut *w_part));
                    softmax::cols_forward(rec, &["p", "off"], parts.clone(), lse_row, lse, w, None);
                    rec.exit();
                }

                // step 7: merge: att[t] = Σ_p w_part[p]·o_part[p]
                rec.phase(Phase::DecodeMerge);
                for hh in 0..H {
                    let (lse_row, a_base) = (((bb * H + hh) * T + t) * P, xi + hh * D);
                    rec.enter(&["hh", "lse_row", "a_base"], [hh, lse_row, a_base]);
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        let mut s = 0.0;
                        for p in parts.clone() {
                            let o_base = (lse_row + p) * D;
                            rec.enter(&["p", "o_base"], [p, o_base]);
                            s += rec.read(Buf::WPart, w_part, lse_row + p) * rec.read(Buf::OPart, o_part, o_base + d);
                            rec.exit();
                        }
                        rec.write(Buf::Att, att, a_base + d, s);
                        rec.exit();
                    }
                    rec.exit();
                }
            } else {
                // step 4: softmax over the scores of each head's row that the step has
                rec.phase(Phase::DecodeSoftmax);
                for hh in 0..H {
                    let row = ((bb * H + hh) * T + t) * T;
                    rec.enter(&["hh", "row"], [hh, row]);
                    softmax::cols_forward(
                        rec,
                        &["j", "off"],
                        seen(cache, t),
                        row,
                        (Buf::Scores, scores),
                        (Buf::Probs, probs),
                        None,
                    );
                    rec.exit();
                }

                // step 5: att[t] = Σ_j P[t,j] · v_cache[j], the values read from the cache
                rec.phase(Phase::DecodeSum);
                for hh in 0..H {
                    let kv_h = hh / (H / H_kv);
                    let a_base = xi + hh * D;
                    rec.enter(&["hh", "kv_h", "a_base"], [hh, kv_h, a_base]);
                    for d in 0..D {
                        rec.enter(&["d"], [d]);
                        let mut s = 0.0;
                        for j in seen(cache, t) {
                            let off = ((bb * H + hh) * T + t) * T + j;
                            let (v_base, keyed) = enter_key(rec, sh, cache, Row::Value, (bb, kv_h), j, off);
                            s += rec.read(Buf::Probs, probs, off) * rec.read(Buf::VCache, v_cache, v_base + d);
                            exit_n(rec, keyed);
                        }
                        rec.write(Buf::Att, att, a_base + d, s);
                        rec.exit();
                    }
                    rec.exit();
                }
            }

            // last step: out[t] = att[t]·W_proj + b_proj
            rec.phase(Phase::DecodeOut);
            for o in 0..C {
                rec.enter(&["o"], [o]);
                let mut s = g.b_proj.map_or(0.0, |b| rec.read(Buf::BProj, b, o));
                for c in 0..C {
                    let wo_off = c * C + o;
                    rec.enter(&["c", "wo_off"], [c, wo_off]);
                    s += rec.read(Buf::Att, att, xi + c) * rec.read(Buf::WProj, g.w_proj, wo_off);
                    rec.exit();
                }
                rec.write(Buf::Out, out, xi + o, s);
                rec.exit();
            }

            exit_n(rec, opened);
        }
        rec.exit();
    }
}
