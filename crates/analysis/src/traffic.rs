//! Memory traffic: how many reads and writes the attention core makes to each buffer, and so to
//! each memory level (global memory, or a tiled kernel's on-chip working set). Counted from a
//! trace ([`counted`]) or, without running anything, in closed form ([`closed_form`]); a test
//! holds the two equal.
//!
//! Only the attention core counts, from `q, k, v` to `att` and back from `d_att` to
//! `d_q, d_k, d_v` (in a decode run, each step's scores, softmax and sum over the cache): the
//! projections around it are the same for every variant. [`kv_cache_per_token`] gives what a
//! key/value cache holds per token, for each way of sharing or compressing it.
#![allow(non_snake_case)]

use attn_trace_core::engine::{Count, Passes, Plan, Registry, Run, TileSums};
use attn_trace_core::kernels::attention_mla::Latent;
use attn_trace_core::kernels::{Mask, Variant, kernel_shape};
use attn_trace_core::tensor::{Level, Shape};
use attn_trace_core::trace::{Buf, Op, Pass, Stage};
use serde::Serialize;
use std::collections::BTreeMap;

/// Reads and writes of one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BufferTraffic {
    #[serde(rename = "name", serialize_with = "buf_name")]
    pub buf: Buf,
    pub level: Level,
    pub reads: u64,
    pub writes: u64,
}

fn buf_name<S: serde::Serializer>(b: &Buf, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(b.name())
}

/// Reads and writes of one memory level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LevelTraffic {
    pub level: Level,
    pub reads: u64,
    pub writes: u64,
}

/// The attention core's traffic in one pass of one variant, buffer by buffer (in [`Buf`] order,
/// only the buffers it touches).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PassTraffic {
    pub variant: Variant,
    pub pass: Pass,
    pub buffers: Vec<BufferTraffic>,
}

impl PassTraffic {
    /// Reads and writes per level, global first; a level the pass does not touch is absent.
    pub fn totals(&self) -> Vec<LevelTraffic> {
        [Level::Global, Level::Tile]
            .into_iter()
            .filter(|&l| self.buffers.iter().any(|b| b.level == l))
            .map(|level| {
                let of = self.buffers.iter().filter(|b| b.level == level);
                LevelTraffic {
                    level,
                    reads: of.clone().map(|b| b.reads).sum(),
                    writes: of.map(|b| b.writes).sum(),
                }
            })
            .collect()
    }

    /// Reads plus writes of `level`.
    pub fn accesses(&self, level: Level) -> u64 {
        self.buffers
            .iter()
            .filter(|b| b.level == level)
            .map(|b| b.reads + b.writes)
            .sum()
    }

    pub fn get(&self, buf: Buf) -> Option<&BufferTraffic> {
        self.buffers.iter().find(|b| b.buf == buf)
    }
}

/// `(reads, writes)` per buffer.
type Tally = BTreeMap<Buf, (u64, u64)>;

/// The traffic of each recorded pass of `run`, counted event by event from its trace (empty
/// for an untraced run).
pub fn counted(run: &Run) -> Vec<PassTraffic> {
    let Some(trace) = &run.trace else { return Vec::new() };
    // (reads, writes) per pass and buffer, in the order the passes were recorded
    let mut passes: Vec<(Pass, Tally)> = Vec::new();
    for k in 0..trace.phases.len() {
        // a decode run's core is its steps' attention over the cache (their projections, the
        // cache writes among them, are the same for every variant)
        let phase = trace.phases[k].1;
        if !matches!(phase.stage(), Stage::Core | Stage::Decode) {
            continue;
        }
        let pass = phase.pass();
        if passes.last().is_none_or(|(p, _)| *p != pass) {
            passes.push((pass, BTreeMap::new()));
        }
        let Some((_, counts)) = passes.last_mut() else { continue };
        for e in &trace.events[trace.span_range(k)] {
            let c = counts.entry(e.buf).or_default();
            match e.op {
                Op::Read => c.0 += 1,
                Op::Write => c.1 += 1,
            }
        }
    }
    passes
        .into_iter()
        .map(|(pass, counts)| PassTraffic {
            variant: run.variant,
            pass,
            buffers: counts
                .into_iter()
                .map(|(buf, (reads, writes))| BufferTraffic {
                    buf,
                    level: trace.level(buf),
                    reads,
                    writes,
                })
                .collect(),
        })
        .collect()
}

/// The same counts as [`counted`] would find for `pass` of `variant` on `plan`, in closed form:
/// no tensor is allocated and nothing runs, so it answers for any `T`.
pub fn closed_form(plan: &Plan, variant: Variant, pass: Pass) -> PassTraffic {
    let plan = &plan.for_variant(variant);
    let registry = Registry::new(plan, variant, Passes::BOTH);
    let counts = match variant {
        Variant::Flash => flash_counts(plan, pass),
        _ => plain_counts(plan, variant, pass),
    };
    let mut buffers: Vec<BufferTraffic> = counts
        .into_iter()
        .filter(|&(_, r, w)| r + w > 0)
        .map(|(buf, reads, writes)| BufferTraffic {
            buf,
            level: registry.get(buf).map_or(Level::Global, |s| s.level),
            reads,
            writes,
        })
        .collect();
    buffers.sort_by_key(|b| b.buf);
    // a buffer both named twice (a probability read in two passes) is summed
    buffers.dedup_by(|b, a| {
        let same = a.buf == b.buf;
        if same {
            a.reads += b.reads;
            a.writes += b.writes;
        }
        same
    });
    PassTraffic { variant, pass, buffers }
}

/// `(buffer, reads, writes)` of the plain kernels' passes (`attention_1h.rs`, `attention_mha.rs`,
/// `softmax.rs`, `dropout.rs`).
fn plain_counts(plan: &Plan, variant: Variant, pass: Pass) -> Vec<(Buf, u64, u64)> {
    let ksh = kernel_shape(plan.shape, variant);
    let Shape { b, s, t, c, h, .. } = ksh;
    let visible = plan.mask.visible_pairs(s, t) as u64;
    let kv = ksh.kv_c() as u64; // channels of a key/value row: H_kv·D
    let (b, s, t, c, h) = (b as u64, s as u64, t as u64, c as u64, h as u64);
    // d_k and d_v: written once per element, or, in GQA, cleared and then added to by each
    // query head of the group (+=: a read and a write per query head and channel)
    let d_kv = if variant.shares_kv_heads() {
        (b * t * c, b * t * kv + b * t * c)
    } else {
        (0, b * t * c)
    };
    let cells = b * h * s * t; // entries of scores, probs and their gradients
    let pairs_c = b * s * t * c; // one read per (i, j) pair and channel, over all heads
    let (p, d_p) = if plan.dropout {
        (Buf::ProbsDrop, Buf::DProbsDrop)
    } else {
        (Buf::Probs, Buf::DProbs)
    };
    use Buf::*;
    match pass {
        Pass::Forward => {
            let mut v = vec![
                // scores: q and k per pair and channel
                (Q, pairs_c, 0),
                (K, pairs_c, 0),
                (Scores, 2 * cells, cells),
                // softmax: two reads of each score (max, exp), the exp written and normalised
                (Probs, cells, 2 * cells),
                // weighted sum: each probability once per channel, v per pair and channel
                (p, pairs_c, 0),
                (V, pairs_c, 0),
                (Att, 0, b * s * c),
            ];
            if plan.dropout {
                v.extend([(DropMask, cells, 0), (Probs, cells, 0), (ProbsDrop, 0, cells)]);
            }
            v
        }
        Pass::Backward => {
            let mut v = vec![
                // dP per pair and channel, dV per pair and channel
                (DAtt, 2 * pairs_c, 0),
                (V, pairs_c, 0),
                (p, pairs_c, 0),
                (d_p, 0, cells),
                (DV, d_kv.0, d_kv.1),
                // softmax backward: dP and P twice each per entry
                (DProbs, 2 * cells, 0),
                (Probs, 2 * cells, 0),
                (DScores, 2 * b * visible * c, cells),
                // dQ and dK over the visible pairs
                (K, b * visible * c, 0),
                (Q, b * visible * c, 0),
                (DQ, 0, b * s * c),
                (DK, d_kv.0, d_kv.1),
            ];
            if plan.dropout {
                v.extend([(DropMask, cells, 0), (DProbsDrop, cells, 0), (DProbs, 0, cells)]);
            }
            v
        }
    }
}

/// `(buffer, reads, writes)` of `attention_flash.rs`, loop by loop: per `(b, h)`, sums over the
/// query tiles (`nr` rows), key tiles (`nc` columns) and the pairs of them the mask does not
/// hide entirely.
fn flash_counts(plan: &Plan, pass: Pass) -> Vec<(Buf, u64, u64)> {
    let sh = plan.shape;
    // summed in closed form, not pair by pair: any T costs the same memory
    let visited = TileSums::new(sh.s, sh.t, plan.tiles, &plan.mask);
    let (S, T, D) = (sh.s as u64, sh.t as u64, sh.d() as u64);
    let heads = Count::from(sh.b) * Count::from(sh.h);
    // the sweep's and a traced scenario's sizes, whose counts fit in a u64 (else: u64::MAX)
    let fit = |c: Count| c.get().unwrap_or(u64::MAX);
    let sum = |f: &dyn Fn(u64, u64) -> u64| fit(heads * visited.sum(f));
    let per_head = |n: u64| fit(heads * n);
    use Buf::*;
    match pass {
        Pass::Forward => vec![
            // load each query row once; start m, l, acc
            (Q, per_head(S * D), 0),
            (QTile, sum(&|nr, nc| nr * nc * D), per_head(S * D)),
            (
                Acc,
                sum(&|nr, _| nr * D) + per_head(S * D),
                sum(&|nr, _| nr * D) + per_head(S * D),
            ),
            (RowMax, sum(&|nr, _| nr) + per_head(S), sum(&|nr, _| nr) + per_head(S)),
            (RowSum, sum(&|nr, _| nr) + per_head(S), sum(&|nr, _| nr) + per_head(S)),
            // per visited tile: k and v loaded, the scores, the online softmax
            (K, sum(&|_, nc| nc * D), 0),
            (V, sum(&|_, nc| nc * D), 0),
            (KTile, sum(&|nr, nc| nr * nc * D), sum(&|_, nc| nc * D)),
            (VTile, sum(&|nr, nc| nr * nc * D), sum(&|_, nc| nc * D)),
            (
                STile,
                sum(&|nr, nc| 2 * nr * nc + nr * nc * D),
                sum(&|nr, nc| 2 * nr * nc),
            ),
            // the output tile and lse, once per row
            (Att, 0, per_head(S * D)),
            (Lse, 0, per_head(S)),
        ],
        Pass::Backward => vec![
            // D_i and dQ = 0
            (DAtt, per_head(S * D) + sum(&|nr, _| nr * D), 0),
            (Att, per_head(S * D), 0),
            (Delta, sum(&|nr, _| nr), per_head(S)),
            // per key tile: k, v loaded, dK, dV zeroed and written back
            (K, per_head(T * D), 0),
            (V, per_head(T * D), 0),
            (KTile, sum(&|nr, nc| nr * nc * D + nr * D * nc), per_head(T * D)),
            (VTile, sum(&|nr, nc| nr * nc * D), per_head(T * D)),
            (
                DKTile,
                per_head(T * D) + sum(&|_, nc| nc * D),
                per_head(T * D) + sum(&|_, nc| nc * D),
            ),
            (
                DVTile,
                per_head(T * D) + sum(&|_, nc| nc * D),
                per_head(T * D) + sum(&|_, nc| nc * D),
            ),
            (DK, 0, per_head(T * D)),
            (DV, 0, per_head(T * D)),
            // per visited tile: q and dO loaded, P recomputed from lse, dV, dS, dQ, dK
            (Q, sum(&|nr, _| nr * D), 0),
            (QTile, sum(&|nr, nc| nr * nc * D + nc * D * nr), sum(&|nr, _| nr * D)),
            (DOTile, sum(&|nr, nc| nc * D * nr + nr * nc * D), sum(&|nr, _| nr * D)),
            (Lse, sum(&|nr, _| nr), 0),
            (STile, sum(&|nr, nc| nc * D * nr + nr * nc), sum(&|nr, nc| nr * nc)),
            (DSTile, sum(&|nr, nc| nr * D * nc + nc * D * nr), sum(&|nr, nc| nr * nc)),
            (DQ, sum(&|nr, _| nr * D), per_head(S * D) + sum(&|nr, _| nr * D)),
        ],
    }
}

/// One point of the sweep: per head, the forward pass's global accesses of the plain MHA kernel
/// (and of those, its `[T,T]` scores and probabilities) and of flash for each tile size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AccessRow {
    #[serde(rename = "T")]
    pub t: usize,
    pub naive: u64,
    pub naive_scores_probs: u64,
    pub flash: Vec<u64>,
}

/// A sweep over sequence lengths and tile sizes: one head of size `d`, self-attention with
/// `mask`, forward pass, global accesses per head (closed form, so any `T` is cheap).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sweep {
    #[serde(rename = "D")]
    pub d: usize,
    pub mask: attn_trace_core::kernels::Mask,
    /// The square tile sizes `br = bc` of the flash columns.
    pub tiles: Vec<usize>,
    /// Floats of flash's tile-local working set for each tile size (`M`).
    pub tile_floats: Vec<usize>,
    pub rows: Vec<AccessRow>,
}

/// Global accesses per head of the forward pass, naive MHA against flash with square tiles of
/// each size in `tiles`, for each sequence length in `lengths`.
pub fn sweep(lengths: &[usize], tiles: &[usize], d: usize, mask: Mask) -> Sweep {
    use attn_trace_core::kernels::attention_flash::Tiles;
    use attn_trace_core::kernels::attention_mistakes::Mistakes;
    let plan = |t: usize, tile: usize| {
        let shape = Shape::new(1, t, d, 1);
        Plan {
            shape,
            mask: mask.clone(),
            start: attn_trace_core::engine::StartKind::Qkv,
            proj: false,
            dropout: false,
            mistakes: Mistakes::NONE,
            rope: None,
            decode: false,
            cache: attn_trace_core::kernels::decode::CacheSpec::default(),
            tiles: Tiles { br: tile, bc: tile }.fit(shape),
            sink: false,
            bias: true,
        }
    };
    let rows = lengths
        .iter()
        .map(|&t| {
            let naive = closed_form(&plan(t, 1), Variant::Mha, Pass::Forward);
            let tt: u64 = [Buf::Scores, Buf::Probs]
                .iter()
                .filter_map(|&b| naive.get(b))
                .map(|b| b.reads + b.writes)
                .sum();
            AccessRow {
                t,
                naive: naive.accesses(Level::Global),
                naive_scores_probs: tt,
                flash: tiles
                    .iter()
                    .map(|&tile| closed_form(&plan(t, tile), Variant::Flash, Pass::Forward).accesses(Level::Global))
                    .collect(),
            }
        })
        .collect();
    Sweep {
        d,
        mask,
        tiles: tiles.to_vec(),
        tile_floats: tiles
            .iter()
            .map(|&tile| Tiles { br: tile, bc: tile }.forward_floats(d))
            .collect(),
        rows,
    }
}

/// What a key/value cache keeps per token and layer under one attention design, in floats:
/// `formula` with the sizes' names, `numbers` with their values, each as printed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KvPerToken {
    pub design: &'static str,
    pub formula: &'static str,
    pub numbers: String,
    pub floats: usize,
}

/// DeepSeek-V2's latent rank and rotary width as multiples of the head size (`d_c = 4·d_h`,
/// `d_h^R = d_h/2`: 512 and 64 for heads of 128), used when a scenario has no MLA sizes.
pub const MLA_RANK_PER_D: usize = 4;

/// The floats a KV cache keeps per token and layer for the sizes of `sh`: MHA keeps a key and a
/// value per head (`2·H·D`), grouped-query attention per key/value head (`2·H_kv·D`, when `sh`
/// groups its heads), multi-query attention one pair (`2·D`), and multi-head latent attention
/// one latent row and one shared rotary key (`R + DR`: the scenario's own `latent` sizes, else
/// DeepSeek-V2's `R = 4·D`, `DR = D/2`).
pub fn kv_cache_per_token(sh: Shape, latent: Option<Latent>) -> Vec<KvPerToken> {
    let (h, h_kv, d) = (sh.h, sh.h_kv, sh.d());
    let mut out = vec![KvPerToken {
        design: "MHA",
        formula: "2·H·D",
        numbers: format!("2·{h}·{d}"),
        floats: 2 * h * d,
    }];
    if h_kv > 1 && h_kv < h {
        out.push(KvPerToken {
            design: "GQA",
            formula: "2·H_kv·D",
            numbers: format!("2·{h_kv}·{d}"),
            floats: 2 * h_kv * d,
        });
    }
    if h > 1 {
        out.push(KvPerToken {
            design: "MQA",
            formula: "2·D",
            numbers: format!("2·{d}"),
            floats: 2 * d,
        });
    }
    let (r, dr) = latent.map_or((MLA_RANK_PER_D * d, d.div_ceil(2)), |l| (l.r, l.dr));
    out.push(KvPerToken {
        design: "MLA",
        formula: "R + DR",
        numbers: format!("{r} + {dr}"),
        floats: r + dr,
    });
    out
}

/// How many cached rows each query head reads over the `T` steps of a decode run, and how the
/// sum goes. Step `t` reads the rows its mask shows query `t`: all of `0..=t` under the causal
/// mask; under a window of `W` with `N` sinks the sinks and the last `W`, which is again all of
/// `0..=t` until `t + 1` passes `W + N` (the first sink leaves the band just as the window
/// starts to slide), so step `t` reads `min(t + 1, W + N)` rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeRows {
    /// Every step reads rows `0..=t`: `T(T+1)/2` in all (the causal mask, or a window that
    /// never slides within `T`).
    Full { t: usize, n: usize },
    /// A window of `w` keys and `sinks` sinks that slides within `T`: the first `m = W + N`
    /// steps read `1 + 2 + … + m = ramp` rows, each of the other `T − m` reads `m`.
    Window {
        t: usize,
        w: usize,
        sinks: usize,
        m: usize,
        ramp: usize,
        n: usize,
    },
}

impl DecodeRows {
    /// The rows a decode run of `T` steps under `mask` reads per query head (a decode run's mask
    /// is the causal one or a window, [`Mask::is_causal`]).
    pub fn of(mask: &Mask, T: usize) -> DecodeRows {
        let triangle = |m: usize| m * (m + 1) / 2;
        match *mask {
            Mask::Window { w, sinks } if w + sinks < T => {
                let m = w + sinks;
                let ramp = triangle(m);
                DecodeRows::Window {
                    t: T,
                    w,
                    sinks,
                    m,
                    ramp,
                    n: ramp + (T - m) * m,
                }
            }
            _ => DecodeRows::Full { t: T, n: triangle(T) },
        }
    }

    /// The cached rows each query head reads over the run.
    pub fn total(&self) -> usize {
        match *self {
            DecodeRows::Full { n, .. } | DecodeRows::Window { n, .. } => n,
        }
    }
}
