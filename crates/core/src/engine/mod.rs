//! Runs one attention variant on concrete inputs, traced or not, and says in advance how many
//! events that will record.
//!
//! - [`plan`]: what a run will do without its data, and its closed-form event counts;
//! - [`count`]: the arithmetic of those counts, which cannot wrap;
//! - [`registry`]: every buffer's role, shape and named layout, declared once;
//! - [`tensors`]: the run's buffers, stored keyed by [`Buf`];
//! - this file: the forward and backward passes in order, and [`run`].
#![allow(non_snake_case)]

pub mod count;
pub mod plan;
pub mod registry;
pub mod tensors;

pub use crate::untraced::dispatch::kernel_shape;
pub use count::Count;
pub use plan::{Passes, PhaseCount, Plan, StartKind, TileSums, estimate_events, phase_counts};
pub use registry::Registry;
pub use tensors::Tensors;

use crate::kernels::attention_flash::{BackwardTiles, FittedTiles, ForwardTiles, Tiles};
use crate::kernels::attention_mistakes::{self, Mistake, Mistakes};
use crate::kernels::attention_mla::{self, Latent};
use crate::kernels::decode::CacheSpec;
use crate::kernels::rope::{self, LatentKey, Rope};
use crate::kernels::softmax::Sinks;
use crate::kernels::{Mask, Variant, attention_gqa, attention_mha, decode, dropout, linear};
use crate::tensor::{Shape, Tensor};
use crate::trace::{Buf, Logger, NoRecord, Pass, Phase, Progress, Recorder, Trace};
use crate::untraced::dispatch;
use std::borrow::Cow;

/// Where the run starts.
#[derive(Clone, Debug, PartialEq)]
pub enum Start {
    /// From the input `x [B,T,C]` through the fused projection `w_qkv [C, C + 2·H_kv·D]`,
    /// `b_qkv [C + 2·H_kv·D]` (`[C,3C]` and `[3C]` unless grouped).
    X {
        x: Vec<f32>,
        w_qkv: Vec<f32>,
        b_qkv: Vec<f32>,
    },
    /// From `x [B,S,C]` through three separate projections `w_q [C,C]`, `w_k, w_v [C,H_kv·D]`
    /// with biases, like three linear layers. Keys and values come from `memory [B,T,C]` when
    /// it is given (cross-attention), else from `x` too.
    Separate {
        x: Vec<f32>,
        memory: Option<Vec<f32>>,
        w_q: Vec<f32>,
        b_q: Vec<f32>,
        w_k: Vec<f32>,
        b_k: Vec<f32>,
        w_v: Vec<f32>,
        b_v: Vec<f32>,
    },
    /// At the attention core, with `q [B,S,C]` and `k, v [B,T,H_kv·D]` given.
    Qkv { q: Vec<f32>, k: Vec<f32>, v: Vec<f32> },
    /// Multi-head latent attention from `x [B,T,C]`: `w_q [C, H·(D + DR)]`, the latent's
    /// `w_dkv [C, R]`, the rotary key's `w_kr [C, DR]`, and the up-projections
    /// `w_uk, w_uv [R, H·D]`, none with a bias.
    Latent {
        latent: Latent,
        x: Vec<f32>,
        w_q: Vec<f32>,
        w_dkv: Vec<f32>,
        w_kr: Vec<f32>,
        w_uk: Vec<f32>,
        w_uv: Vec<f32>,
    },
}

/// Training-mode attention dropout: probability `p`, keep mask drawn from `seed`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropout {
    pub p: f32,
    pub seed: u64,
}

/// Everything a run needs: sizes, mask, the starting tensors, the optional output projection,
/// dropout, mistakes, and the upstream gradient `d_out` (the loss is `L = Σ out ⊙ d_out`).
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    pub shape: Shape,
    pub mask: Mask,
    pub start: Start,
    /// `w_proj [C,C]` and `b_proj [C]`; without them the output is `att` itself.
    pub proj: Option<(Vec<f32>, Vec<f32>)>,
    pub d_out: Vec<f32>,
    /// Attention dropout (training mode); `None` in evaluation.
    pub dropout: Option<Dropout>,
    /// Mistakes switched on (see `kernels::attention_mistakes`); a mistaken run is forward only,
    /// unless its mistakes are all backward ones (mistake 7).
    pub mistakes: Mistakes,
    /// Rotary position embeddings on q and k (`kernels::rope`).
    pub rope: Option<Rope>,
    /// Generate token by token from a key/value cache (`kernels::decode`); forward only.
    pub decode: bool,
    /// How a decode run keeps its cache (paged or not) and whether it splits its steps.
    pub cache: CacheSpec,
    /// Flash's tile sizes, fitted to `shape` (the other variants ignore them).
    pub tiles: FittedTiles,
    /// gpt-oss's learned sink logit of each query head, `sink [H]` (`[1]` for the baseline's
    /// single head): one more logit in every softmax row's denominator, carrying no value.
    pub sink: Option<Vec<f32>>,
    /// The linear layers add their biases (`b_qkv`, `b_proj`, …); `false`: they have none, and
    /// the bias vectors of `start` and `proj` are not read (LLaMA-family models).
    pub bias: bool,
}

impl Inputs {
    /// Inputs that start at `start`, with the upstream gradient `d_out`, and otherwise plain: no
    /// output projection, no dropout, no mistakes, no rotation, the whole sequence at once (no
    /// decoding) and flash's default tiles fitted to `shape`. The `with_*` methods and
    /// [`Inputs::tiled`] change one of these each:
    ///
    /// ```
    /// # use attn_trace_core::engine::{Inputs, Start};
    /// # use attn_trace_core::kernels::{Mask, attention_flash::Tiles};
    /// # use attn_trace_core::tensor::Shape;
    /// let sh = Shape::new(1, 3, 4, 2);
    /// let qkv = Start::Qkv { q: vec![0.5; 12], k: vec![0.25; 12], v: vec![1.0; 12] };
    /// let inputs = Inputs::new(sh, Mask::Causal, qkv, vec![1.0; 12])
    ///     .with_proj(vec![0.0; 16], vec![0.0; 4])
    ///     .tiled(Tiles { br: 2, bc: 2 });
    /// assert!(inputs.proj.is_some() && inputs.dropout.is_none());
    /// ```
    pub fn new(shape: Shape, mask: Mask, start: Start, d_out: Vec<f32>) -> Inputs {
        Inputs {
            shape,
            mask,
            start,
            proj: None,
            d_out,
            dropout: None,
            mistakes: Mistakes::NONE,
            rope: None,
            decode: false,
            cache: CacheSpec::default(),
            tiles: Tiles::default().fit(shape),
            sink: None,
            bias: true,
        }
    }

    /// The same inputs with the output projection `w_proj [C,C]`, `b_proj [C]`.
    #[must_use]
    pub fn with_proj(self, w_proj: Vec<f32>, b_proj: Vec<f32>) -> Inputs {
        Inputs {
            proj: Some((w_proj, b_proj)),
            ..self
        }
    }

    /// The same inputs with attention dropout `dropout` (`None`: evaluation).
    #[must_use]
    pub fn with_dropout(self, dropout: Option<Dropout>) -> Inputs {
        Inputs { dropout, ..self }
    }

    /// The same inputs with `mistakes` switched on (and every other one off).
    #[must_use]
    pub fn with_mistakes(self, mistakes: Mistakes) -> Inputs {
        Inputs { mistakes, ..self }
    }

    /// The same inputs with the rotation `rope` on q and k (`None`: none).
    #[must_use]
    pub fn with_rope(self, rope: Option<Rope>) -> Inputs {
        Inputs { rope, ..self }
    }

    /// The same inputs generated token by token from a key/value cache when `decode`.
    #[must_use]
    pub fn with_decode(self, decode: bool) -> Inputs {
        Inputs { decode, ..self }
    }

    /// The same inputs decoding through the cache `cache` (paged, split).
    #[must_use]
    pub fn with_cache(self, cache: CacheSpec) -> Inputs {
        Inputs { cache, ..self }
    }

    /// The same inputs with the sink logits `sink [H]` (gpt-oss) in every softmax row (`None`:
    /// none).
    #[must_use]
    pub fn with_sink(self, sink: Option<Vec<f32>>) -> Inputs {
        Inputs { sink, ..self }
    }

    /// The same inputs with the linear layers' biases (`false`: none, their vectors unread).
    #[must_use]
    pub fn with_bias(self, bias: bool) -> Inputs {
        Inputs { bias, ..self }
    }

    /// The same inputs with flash's tiles `tiles`, fitted to their shape.
    #[must_use]
    pub fn tiled(self, tiles: Tiles) -> Inputs {
        Inputs {
            tiles: tiles.fit(self.shape),
            ..self
        }
    }

    pub fn plan(&self) -> Plan {
        Plan {
            shape: self.shape,
            mask: self.mask.clone(),
            start: match &self.start {
                Start::X { .. } => StartKind::Fused,
                Start::Separate { memory, .. } => StartKind::Separate {
                    cross: memory.is_some(),
                },
                Start::Qkv { .. } => StartKind::Qkv,
                Start::Latent { latent, .. } => StartKind::Latent(*latent),
            },
            proj: self.proj.is_some(),
            dropout: self.dropout.is_some(),
            mistakes: self.mistakes,
            rope: self.rope,
            decode: self.decode,
            cache: self.cache.clone(),
            tiles: self.tiles,
            sink: self.sink.is_some(),
            bias: self.bias,
        }
    }

    /// The inputs as `variant` reads them. Grouped-query attention reads `H_kv` key/value heads;
    /// the other kernels read one per query head, so on grouped inputs they get each key/value
    /// head's weights (or k and v) repeated for every query head of its group: MHA with the
    /// heads of a group tied, which computes exactly what GQA does.
    ///
    /// Flash also runs no dropout, none of the mistakes (both live in the plain kernels) and no
    /// decoding path: its causal run computes the same output (see [`Plan::for_variant`]).
    ///
    /// # Panics
    /// When `variant` and the inputs disagree about latent attention: [`Variant::Mla`] runs
    /// on [`Start::Latent`] inputs only, and those inputs run as nothing else. A scenario
    /// checks this (`check_latent`); a caller that mixes them has a bug, and no other kernel
    /// quietly stands in.
    pub fn for_variant(&self, variant: Variant) -> Cow<'_, Inputs> {
        let latent = matches!(self.start, Start::Latent { .. });
        assert!(
            latent == (variant == Variant::Mla),
            "variant {variant} on {} inputs: \"mla\" runs on latent inputs (Start::Latent) only, and they on it",
            if latent { "latent" } else { "non-latent" }
        );
        let sh = self.shape;
        if variant == Variant::Flash && (self.dropout.is_some() || !self.mistakes.is_empty() || self.decode) {
            let plain = Inputs {
                dropout: None,
                mistakes: Mistakes::NONE,
                decode: false,
                cache: CacheSpec::default(),
                ..self.clone()
            };
            return Cow::Owned(plain.for_variant(variant).into_owned());
        }
        if variant.kv_shape(sh) == sh {
            return Cow::Borrowed(self);
        }
        let (C, D, G) = (sh.c, sh.d(), sh.group());
        let KV = sh.kv_c();
        // one row's key/value block of H_kv·D channels, as H·D: head hh reads kv head hh / G
        let repeat = |block: &[f32], out: &mut Vec<f32>| {
            for hh in 0..sh.h {
                out.extend_from_slice(&block[(hh / G) * D..(hh / G + 1) * D]);
            }
        };
        // rows of `width` = lead + KV (+ KV): the lead copied, each key/value block repeated
        let widen = |data: &[f32], lead: usize, blocks: usize| {
            let width = lead + blocks * KV;
            let mut out = Vec::with_capacity(data.len() / width * (lead + blocks * C));
            for row in data.chunks(width) {
                out.extend_from_slice(&row[..lead]);
                for k in 0..blocks {
                    repeat(&row[lead + k * KV..lead + (k + 1) * KV], &mut out);
                }
            }
            out
        };
        let start = match &self.start {
            Start::X { x, w_qkv, b_qkv } => Start::X {
                x: x.clone(),
                w_qkv: widen(w_qkv, C, 2),
                b_qkv: widen(b_qkv, C, 2),
            },
            Start::Separate {
                x,
                memory,
                w_q,
                b_q,
                w_k,
                b_k,
                w_v,
                b_v,
            } => Start::Separate {
                x: x.clone(),
                memory: memory.clone(),
                w_q: w_q.clone(),
                b_q: b_q.clone(),
                w_k: widen(w_k, 0, 1),
                b_k: widen(b_k, 0, 1),
                w_v: widen(w_v, 0, 1),
                b_v: widen(b_v, 0, 1),
            },
            Start::Qkv { q, k, v } => Start::Qkv {
                q: q.clone(),
                k: widen(k, 0, 1),
                v: widen(v, 0, 1),
            },
            // its keys and values come from the latent, one per query head
            Start::Latent { .. } => self.start.clone(),
        };
        Cow::Owned(Inputs {
            shape: variant.kv_shape(sh),
            start,
            ..self.clone()
        })
    }

    /// The buffers these inputs give data for, with that data: the start's tensors, the output
    /// projection's weights and `d_out` (the dropout keep mask is drawn, not given).
    pub fn given(&self) -> Vec<(Buf, &[f32])> {
        let mut given: Vec<(Buf, &[f32])> = match &self.start {
            Start::X { x, w_qkv, b_qkv } => vec![(Buf::X, x), (Buf::WQkv, w_qkv), (Buf::BQkv, b_qkv)],
            Start::Separate {
                x,
                memory,
                w_q,
                b_q,
                w_k,
                b_k,
                w_v,
                b_v,
            } => {
                let mut g = vec![(Buf::X, x.as_slice())];
                if let Some(m) = memory {
                    g.push((Buf::Memory, m));
                }
                g.extend([
                    (Buf::WQ, w_q.as_slice()),
                    (Buf::BQ, b_q),
                    (Buf::WK, w_k),
                    (Buf::BK, b_k),
                    (Buf::WV, w_v),
                    (Buf::BV, b_v),
                ]);
                g
            }
            Start::Qkv { q, k, v } => vec![(Buf::Q, q), (Buf::K, k), (Buf::V, v)],
            Start::Latent {
                x,
                w_q,
                w_dkv,
                w_kr,
                w_uk,
                w_uv,
                ..
            } => vec![
                (Buf::X, x),
                (Buf::WQ, w_q),
                (Buf::WDkv, w_dkv),
                (Buf::WKr, w_kr),
                (Buf::WUk, w_uk),
                (Buf::WUv, w_uv),
            ],
        };
        if let Some((w, b)) = &self.proj {
            given.extend([(Buf::WProj, w.as_slice()), (Buf::BProj, b)]);
        }
        if let Some(sink) = &self.sink {
            given.push((Buf::Sink, sink));
        }
        given.push((Buf::DOut, &self.d_out));
        if !self.bias {
            // a model without biases: their vectors are not the run's
            given.retain(|(b, _)| !matches!(b, Buf::BQkv | Buf::BQ | Buf::BK | Buf::BV | Buf::BProj));
        }
        given
    }

    /// The same inputs with every mistake switched off: the run a mistaken one is compared with.
    #[must_use]
    pub fn corrected(&self) -> Inputs {
        self.clone().with_mistakes(Mistakes::NONE)
    }

    /// The passes a run of these inputs can make: a mistaken run is forward only (but for a
    /// backward mistake).
    pub fn possible(&self, passes: Passes) -> Passes {
        self.plan().possible(passes)
    }
}

/// The forward pass: the input projections (or the split, or nothing when starting at q, k, v),
/// the attention core of the variant, dropout, and the output projection (when there is one).
pub fn forward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    if let Some(lat) = inputs.plan().latent() {
        return latent_forward(rec, t, lat, inputs);
    }
    if inputs.decode {
        return generate(rec, t, variant, inputs);
    }
    let sh = inputs.shape;
    let (mask, m) = (&inputs.mask, inputs.mistakes);
    let (queries, keys) = ([sh.b, sh.s], [sh.b, sh.t]);
    // keys and values come from memory in cross-attention, else from x
    let mem = if t.has(Memory) { Memory } else { X };

    // input projections: q = x·W_q + b_q, k = m·W_k + b_k, v = m·W_v + b_v (fused: one of 3C)
    if m.has(Mistake::NoInputProjection) && t.has(X) {
        t.write([Q, K, V], |t, [q, k, v]| {
            attention_mistakes::no_input_projection(rec, sh, t.arg(X), t.arg(mem), q, k, v);
        });
    } else if t.has(WQkv) {
        t.write([Qkv], |t, [y]| {
            linear::forward(
                rec,
                Phase::QkvProj,
                keys,
                t.arg(X),
                t.arg(WQkv),
                t.has(BQkv).then(|| t.arg(BQkv)),
                (Qkv, y),
            );
        });
        t.write([Q, K, V], |t, [q, k, v]| {
            dispatch::split(rec, variant, sh, t.get(Qkv), q, k, v);
        });
    } else if t.has(WQ) {
        t.write([Q], |t, [y]| {
            let b = t.has(BQ).then(|| t.arg(BQ));
            linear::forward(rec, Phase::QProj, queries, t.arg(X), t.arg(WQ), b, (Q, y));
        });
        t.write([K], |t, [y]| {
            let b = t.has(BK).then(|| t.arg(BK));
            linear::forward(rec, Phase::KProj, keys, t.arg(mem), t.arg(WK), b, (K, y));
        });
        t.write([V], |t, [y]| {
            let b = t.has(BV).then(|| t.arg(BV));
            linear::forward(rec, Phase::VProj, keys, t.arg(mem), t.arg(WV), b, (V, y));
        });
    }

    // rotary positions: q and k turned pair by pair, by an angle that grows with the position
    let ksh = kernel_shape(sh, variant);
    if let Some(r) = inputs.rope {
        t.write([Q, K], |t, [q, k]| {
            let tables = (t.get(RopeCos), t.get(RopeSin));
            rope::forward(rec, ksh, r.pairs, (0..sh.b, 0..sh.t), tables, q, (K, k));
        });
    }

    // the attention core: flash's tiled loop, or the passes of the plain kernels
    if variant == Variant::Flash {
        t.write(
            [Att, Lse, QTile, KTile, VTile, STile, RowMax, RowSum, Acc],
            |t, [att, lse, q_t, k_t, v_t, s_t, m, l, acc]| {
                let qkv = (t.get(Q), t.get(K), t.get(V));
                let sink = t.has(Sink).then(|| t.get(Sink));
                let tiles = ForwardTiles {
                    q_t,
                    k_t,
                    v_t,
                    s_t,
                    m,
                    l,
                    acc,
                };
                dispatch::flash_forward(rec, ksh, inputs.tiles, mask, qkv, sink, att, lse, tiles);
            },
        );
    } else {
        core_forward(rec, t, variant, inputs);
    }

    out_proj(rec, t, queries);
}

/// The output projection, when there is one: out = att·W_proj + b_proj.
fn out_proj<R: Recorder>(rec: &mut R, t: &mut Tensors, queries: [usize; 2]) {
    use Buf::*;
    if t.has(WProj) {
        t.write([Out], |t, [y]| {
            let (att, w, b) = (t.arg(Att), t.arg(WProj), t.has(BProj).then(|| t.arg(BProj)));
            linear::forward(rec, Phase::OutProj, queries, att, w, b, (Out, y));
        });
    }
}

/// Multi-head latent attention (`attention_mla.rs`): the training form's projections from x
/// and up from the latent, its scores, MHA's softmax and weighted sum, and the output
/// projection; or, decoding, the absorbed form step by step from the latent cache.
fn latent_forward<R: Recorder>(rec: &mut R, t: &mut Tensors, lat: Latent, inputs: &Inputs) {
    use Buf::*;
    let sh = inputs.shape;
    let (queries, keys) = ([sh.b, sh.s], [sh.b, sh.t]);
    // the latent sizes, for the offsets and the scale 1/√(D + DR) the panels show
    rec.constants(&["R", "DR"], &[lat.r, lat.dr]);
    if inputs.decode {
        t.write(
            [KvCache, Q, QLat, Scores, Probs, OLat, Att, Out],
            |t, [kv_cache, q, q_lat, scores, probs, o_lat, att, out]| {
                let weights = attention_mla::Weights {
                    x: t.get(X),
                    w_q: t.get(WQ),
                    w_dkv: t.get(WDkv),
                    w_kr: t.get(WKr),
                    w_uk: t.get(WUk),
                    w_uv: t.get(WUv),
                    w_proj: t.get(WProj),
                    b_proj: t.has(BProj).then(|| t.get(BProj)),
                    rope: inputs.rope.map(|r| (r.pairs, t.get(RopeCos), t.get(RopeSin))),
                };
                let written = attention_mla::Written {
                    kv_cache,
                    q,
                    q_lat,
                    scores,
                    probs,
                    o_lat,
                    att,
                    out,
                };
                attention_mla::decode(rec, sh, lat, &weights, written);
            },
        );
        return;
    }
    // q, the latent c_kv and the rotary key k_pe from x; each head's k_nope and v up from c_kv
    let projections = [
        (Phase::MlaQProj, queries, X, WQ, Q),
        (Phase::LatentProj, keys, X, WDkv, CKv),
        (Phase::KPeProj, keys, X, WKr, KPe),
        (Phase::KUp, keys, CKv, WUk, KNope),
        (Phase::VUp, keys, CKv, WUv, V),
    ];
    for (phase, rows, x, w, y) in projections {
        t.write([y], |t, [out]| {
            linear::forward(rec, phase, rows, t.arg(x), t.arg(w), None, (y, out));
        });
    }
    // rotary positions turn q_pe and k_pe only: the latent, and so k_nope, holds no position
    if let Some(r) = inputs.rope {
        t.write([Q, KPe], |t, [q, k_pe]| {
            let (tables, rows) = ((t.get(RopeCos), t.get(RopeSin)), (0..sh.b, 0..sh.t));
            rope::forward_latent(rec, sh, lat.dr, r.pairs, rows, tables, q, (LatentKey::KPe, k_pe));
        });
    }
    t.write([Scores], |t, [s]| {
        let k = (t.get(KNope), t.get(KPe));
        attention_mla::scores(rec, sh, lat, &inputs.mask, t.get(Q), k, s);
    });
    t.write([Probs], |t, [p]| {
        attention_mha::softmax_rows(rec, sh, t.get(Scores), p, None);
    });
    t.write([Att], |t, [att]| {
        attention_mha::weighted_sum(rec, sh, t.arg(Probs), t.get(V), att);
    });
    out_proj(rec, t, queries);
}

/// [`latent_forward`]'s training form, backwards: the output projection, MHA's weighted sum
/// and softmax, the scores' three gradients, then the projections in reverse, `d_c_kv` from
/// both up-projections and `d_x` from all three of x's.
fn latent_backward<R: Recorder>(rec: &mut R, t: &mut Tensors, lat: Latent, inputs: &Inputs) {
    use Buf::*;
    let sh = inputs.shape;
    let (queries, keys) = ([sh.b, sh.s], [sh.b, sh.t]);
    out_proj_back(rec, t, queries);
    t.write([DProbs, DV], |t, [dp, d_v]| {
        attention_mha::weighted_sum_back(rec, sh, t.arg(Probs), t.get(V), t.get(DAtt), (DProbs, dp), d_v);
    });
    t.write([DScores], |t, [ds]| {
        attention_mha::softmax_rows_back(rec, sh, (t.get(Probs), t.get(DProbs)), ds, None);
    });
    t.write([DQ, DKNope, DKPe], |t, [d_q, d_k_nope, d_k_pe]| {
        let k = (t.get(KNope), t.get(KPe));
        let grads = (d_q, d_k_nope, d_k_pe);
        attention_mla::scores_back(rec, sh, lat, &inputs.mask, t.get(Q), k, t.get(DScores), grads);
    });
    if let Some(r) = inputs.rope {
        t.write([DQ, DKPe], |t, [d_q, d_k_pe]| {
            let tables = (t.get(RopeCos), t.get(RopeSin));
            rope::backward_latent(rec, sh, lat.dr, r.pairs, tables, d_q, d_k_pe);
        });
    }
    // (phase, rows, input, weight, output's gradient, input's gradient, weight's, `+=`)
    let projections = [
        (Phase::VUpBack, keys, CKv, WUv, DV, DCKv, DWUv, false),
        (Phase::KUpBack, keys, CKv, WUk, DKNope, DCKv, DWUk, true),
        (Phase::KPeProjBack, keys, X, WKr, DKPe, DX, DWKr, false),
        (Phase::LatentProjBack, keys, X, WDkv, DCKv, DX, DWDkv, true),
        (Phase::MlaQProjBack, queries, X, WQ, DQ, DX, DWQ, true),
    ];
    for (phase, rows, x, w, dy, dx, dw, add) in projections {
        t.write([dx, dw], |t, [d_x, d_w]| {
            let (x, w, dy) = (t.arg(x), t.arg(w), t.arg(dy));
            linear::backward_into(rec, phase, rows, x, w, dy, (dx, d_x), (dw, d_w), None, add);
        });
    }
}

/// The plain kernels' attention core: S = Q·Kᵀ/√D + mask, P = softmax(S), (dropout), att = P·V.
fn core_forward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    let sh = inputs.shape;
    let (mask, m) = (&inputs.mask, inputs.mistakes);
    let ksh = kernel_shape(sh, variant);
    t.write([Scores], |t, [s]| {
        if m.has(Mistake::ScaleBySeqLen) || m.has(Mistake::MaskByMultiply) {
            attention_mistakes::scores(rec, ksh, mask, m, t.get(Q), t.get(K), s);
        } else {
            dispatch::scores(rec, variant, sh, mask, t.get(Q), t.get(K), s);
        }
    });
    // with sink logits (gpt-oss) each row's denominator has its head's sink, whose share of
    // the row goes to p_sink
    t.write([Probs, PSink], |t, [p, p_sink]| {
        if m.has(Mistake::SoftmaxOverTwoDims) {
            attention_mistakes::softmax_over_two_dims(rec, ksh, t.get(Scores), p);
        } else {
            let sink = t.has(Sink).then(|| Sinks {
                sink: t.get(Sink),
                p_sink,
            });
            dispatch::softmax_rows(rec, variant, sh, t.get(Scores), p, sink);
        }
    });
    let p = match inputs.dropout {
        Some(d) if t.has(ProbsDrop) => {
            t.write([ProbsDrop], |t, [pd]| {
                dropout::forward(rec, ksh, d.p, t.get(DropMask), t.get(Probs), pd);
            });
            ProbsDrop
        }
        _ => Probs,
    };
    t.write([Att], |t, [att]| {
        dispatch::weighted_sum(rec, variant, sh, t.arg(p), t.get(V), att);
    });
}

/// The backward pass from `d_out`, in the reverse order of [`forward`].
pub fn backward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    assert!(
        inputs.mistakes.allow_backward(),
        "only a backward mistake makes the backward pass"
    );
    let sh = inputs.shape;
    let mask = &inputs.mask;
    let queries = [sh.b, sh.s];
    if let Some(lat) = inputs.plan().latent() {
        return latent_backward(rec, t, lat, inputs);
    }

    out_proj_back(rec, t, queries);

    // the attention core, backwards: flash recomputes its tiles; the plain kernels walk back
    // their passes
    if variant == Variant::Flash {
        let ksh = kernel_shape(sh, variant);
        t.write(
            [
                Delta, DQ, DK, DV, QTile, KTile, VTile, STile, DOTile, DSTile, DKTile, DVTile, PSink,
            ],
            |t, [delta, d_q, d_k, d_v, q_t, k_t, v_t, s_t, do_t, ds_t, dk_t, dv_t, p_sink]| {
                let qkv = (t.get(Q), t.get(K), t.get(V));
                let sink = t.has(Sink).then(|| Sinks {
                    sink: t.get(Sink),
                    p_sink,
                });
                let tiles = BackwardTiles {
                    q_t,
                    k_t,
                    v_t,
                    s_t,
                    do_t,
                    ds_t,
                    dk_t,
                    dv_t,
                };
                let saved = (t.get(Att), t.get(Lse));
                let grads = (d_q, d_k, d_v);
                dispatch::flash_backward(
                    rec,
                    ksh,
                    inputs.tiles,
                    mask,
                    qkv,
                    saved,
                    t.get(DAtt),
                    (delta, sink),
                    grads,
                    tiles,
                );
            },
        );
        if t.has(Sink) {
            t.write([DSink], |t, [d_sink]| {
                dispatch::sink_back(rec, variant, sh, (t.get(PSink), t.get(Delta)), d_sink);
            });
        }
    } else {
        core_backward(rec, t, variant, inputs);
    }
    rope_and_projections_backward(rec, t, variant, inputs);
}

/// The output projection, backwards: dAtt = dOut·W_projᵀ, dW_proj = attᵀ·dOut,
/// db_proj = Σ dOut; without one, out is att and its gradient is d_out unchanged.
fn out_proj_back<R: Recorder>(rec: &mut R, t: &mut Tensors, queries: [usize; 2]) {
    use Buf::*;
    if t.has(WProj) {
        t.write([DAtt, DWProj, DBProj], |t, [d_att, d_w, d_b]| {
            let (att, w, d_out) = (t.arg(Att), t.arg(WProj), t.arg(DOut));
            let (d_att, d_w, d_b) = ((DAtt, d_att), (DWProj, d_w), bias_grad(DBProj, d_b));
            linear::backward(rec, Phase::OutProjBack, queries, att, w, d_out, d_att, d_w, d_b);
        });
    } else {
        t.write([DAtt], |t, [d_att]| d_att.copy_from_slice(t.get(DOut)));
    }
}

/// A bias's gradient buffer as the linear layer's backward takes it: `None` when the run has no
/// biases (the buffer is empty).
fn bias_grad(buf: Buf, d_b: &mut [f32]) -> Option<(Buf, &mut [f32])> {
    (!d_b.is_empty()).then_some((buf, d_b))
}

/// The plain kernels' attention core, backwards: dP and dV, (dropout), dS, then dQ and dK.
fn core_backward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    let sh = inputs.shape;
    let mask = &inputs.mask;
    let (p, d_p) = if t.has(ProbsDrop) {
        (ProbsDrop, DProbsDrop)
    } else {
        (Probs, DProbs)
    };
    // (mistake 7 runs the grouped kernels' passes with d_v and d_k overwritten, not added to)
    let overwrite = inputs.mistakes.has(Mistake::OverwriteKvGrad);
    t.write([d_p, DV], |t, [dp, d_v]| {
        if overwrite {
            attention_gqa::d_probs(rec, sh, t.get(V), t.get(DAtt), (d_p, dp));
            attention_mistakes::d_values_overwritten(rec, sh, t.arg(p), t.get(DAtt), d_v);
        } else {
            dispatch::weighted_sum_back(rec, variant, sh, t.arg(p), t.get(V), t.get(DAtt), (d_p, dp), d_v);
        }
    });
    if let Some(d) = inputs.dropout.filter(|_| t.has(DropMask)) {
        let ksh = kernel_shape(sh, variant);
        t.write([DProbs], |t, [dp]| {
            dropout::backward(rec, ksh, d.p, t.get(DropMask), t.get(DProbsDrop), dp);
        });
    }
    // with sink logits each row's Σ dP·P is kept in delta, and the sinks' gradient read from it
    let sink = t.has(Sink);
    t.write([DScores, Delta], |t, [ds, delta]| {
        let delta = sink.then_some(delta);
        dispatch::softmax_rows_back(rec, variant, sh, (t.get(Probs), t.get(DProbs)), ds, delta);
    });
    if sink {
        t.write([DSink], |t, [d_sink]| {
            dispatch::sink_back(rec, variant, sh, (t.get(PSink), t.get(Delta)), d_sink);
        });
    }
    t.write([DQ, DK], |t, [d_q, d_k]| {
        if overwrite {
            attention_gqa::d_queries(rec, sh, mask, t.get(K), t.get(DScores), d_q);
            attention_mistakes::d_keys_overwritten(rec, sh, mask, t.get(Q), t.get(DScores), d_k);
        } else {
            dispatch::scores_back(rec, variant, sh, mask, t.get(Q), t.get(K), t.get(DScores), d_q, d_k);
        }
    });
}

/// Rotary positions and the input projections, backwards: from d_q, d_k, d_v to the inputs and
/// weights.
fn rope_and_projections_backward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    let sh = inputs.shape;
    let (queries, keys) = ([sh.b, sh.s], [sh.b, sh.t]);
    // rotary positions, backwards: dQ and dK turned back into the gradients of q and k as
    // they were before the rotation
    if let Some(r) = inputs.rope {
        let ksh = kernel_shape(sh, variant);
        t.write([DQ, DK], |t, [d_q, d_k]| {
            rope::backward(rec, ksh, r.pairs, (t.get(RopeCos), t.get(RopeSin)), d_q, d_k);
        });
    }

    // input projections, backwards
    if t.has(WQkv) {
        t.write([DQkv], |t, [d]| {
            dispatch::split_back(rec, variant, sh, t.get(DQ), t.get(DK), t.get(DV), d);
        });
        t.write([DX, DWQkv, DBQkv], |t, [d_x, d_w, d_b]| {
            let (x, w, dy) = (t.arg(X), t.arg(WQkv), t.arg(DQkv));
            linear::backward(
                rec,
                Phase::QkvProjBack,
                keys,
                x,
                w,
                dy,
                (DX, d_x),
                (DWQkv, d_w),
                bias_grad(DBQkv, d_b),
            );
        });
    } else if t.has(WQ) {
        // k and v read memory (cross-attention) or x: their input gradients add up there,
        // and in self-attention the query projection's adds to the same d_x
        let cross = t.has(Memory);
        let (mem, d_mem) = if cross { (Memory, DMemory) } else { (X, DX) };
        t.write([d_mem, DWV, DBV], |t, [d_m, d_w, d_b]| {
            let (m, w, dy) = (t.arg(mem), t.arg(WV), t.arg(DV));
            let (d_m, d_w, d_b) = ((d_mem, d_m), (DWV, d_w), bias_grad(DBV, d_b));
            linear::backward_into(rec, Phase::VProjBack, keys, m, w, dy, d_m, d_w, d_b, false);
        });
        t.write([d_mem, DWK, DBK], |t, [d_m, d_w, d_b]| {
            let (m, w, dy) = (t.arg(mem), t.arg(WK), t.arg(DK));
            let (d_m, d_w, d_b) = ((d_mem, d_m), (DWK, d_w), bias_grad(DBK, d_b));
            linear::backward_into(rec, Phase::KProjBack, keys, m, w, dy, d_m, d_w, d_b, true);
        });
        t.write([DX, DWQ, DBQ], |t, [d_x, d_w, d_b]| {
            let (x, w, dy) = (t.arg(X), t.arg(WQ), t.arg(DQ));
            let (d_x, d_w, d_b) = ((DX, d_x), (DWQ, d_w), bias_grad(DBQ, d_b));
            linear::backward_into(rec, Phase::QProjBack, queries, x, w, dy, d_x, d_w, d_b, !cross);
        });
    }
}

/// A decode run: every sequence generated token by token from the key/value cache
/// (`kernels/decode.rs`), in the kernel shape of the variant.
fn generate<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    use Buf::*;
    let ksh = kernel_shape(inputs.shape, variant);
    let pairs = inputs.rope.map(|r| r.pairs);
    t.write(
        [Q, KCache, VCache, Scores, Probs, PPart, LsePart, OPart, WPart, Att, Out],
        |t,
         [
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
        ]| {
            let cache = match (&inputs.cache.paged, &inputs.mask) {
                (Some(p), _) => decode::Cache::Paged {
                    bs: p.block_size,
                    mb: p.per_row(ksh.t),
                    table: t.get(BlockTable),
                },
                (None, &Mask::Window { w, sinks }) => decode::Cache::Rolling { w, sinks },
                (None, _) => decode::Cache::Contiguous,
            };
            let given = decode::Given {
                x: t.get(X),
                w_qkv: t.get(WQkv),
                b_qkv: t.has(BQkv).then(|| t.get(BQkv)),
                w_proj: t.get(WProj),
                b_proj: t.has(BProj).then(|| t.get(BProj)),
                rope: pairs.map(|p| (p, t.get(RopeCos), t.get(RopeSin))),
                cache,
                split: inputs.cache.split,
            };
            let written = decode::Written {
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
            };
            decode::generate(rec, ksh, &given, written);
        },
    );
}

/// The result of running one variant.
#[derive(Debug)]
pub struct Run {
    pub variant: Variant,
    pub shape: Shape,
    /// The mistakes this run made (empty for the correct implementation).
    pub mistakes: Mistakes,
    /// Attention dropout, when the run applies it.
    pub dropout: Option<Dropout>,
    /// Rotary position embeddings, when the run applies them.
    pub rope: Option<Rope>,
    /// The run generated token by token from a key/value cache.
    pub decode: bool,
    /// The run's buffers: which exist, their shapes and layouts.
    pub registry: Registry,
    pub tensors: Tensors,
    /// The event log, for traced runs.
    pub trace: Option<Trace>,
}

impl Run {
    /// Number of recorded events (0 for an untraced run).
    pub fn events(&self) -> usize {
        self.trace.as_ref().map_or(0, Trace::len)
    }

    /// Every present buffer with its reported shape, in [`Buf`] order.
    pub fn named_tensors(&self) -> Vec<(Buf, Tensor)> {
        self.registry
            .iter()
            .map(|(b, spec)| (b, Tensor::new(spec.shape.clone(), self.tensors.get(b).to_vec())))
            .collect()
    }
}

/// Runs `variant` on `inputs`. A traced run records the requested passes; a mistaken run
/// makes (and records) the forward pass only.
pub fn run(inputs: &Inputs, variant: Variant, passes: Passes, traced: bool) -> Run {
    run_watched(inputs, variant, passes, traced, None)
}

/// [`run`], reporting a traced run's progress to `progress` as it records.
pub fn run_watched(inputs: &Inputs, variant: Variant, passes: Passes, traced: bool, progress: Option<Progress>) -> Run {
    let record = if traced {
        passes
    } else {
        Passes {
            forward: false,
            backward: false,
        }
    };
    run_with(inputs, variant, passes, record, progress, true)
}

/// Runs `variant` on `inputs`, making the passes of `passes` that the plan allows, with the
/// recorder `make(registry)` for each pass it makes and keeping no log: for a reader of the
/// accesses as they happen (`trace --format din`). Returns the recorder.
pub fn run_into<R: Recorder>(
    inputs: &Inputs,
    variant: Variant,
    passes: Passes,
    make: impl FnOnce(&Registry) -> R,
) -> R {
    let inputs = &*inputs.for_variant(variant);
    let plan = inputs.plan();
    let passes = plan.possible(passes);
    let registry = Registry::new(&plan, variant, passes);
    let mut t = Tensors::new(inputs, &registry);
    let mut rec = make(&registry);
    if passes.forward {
        forward(&mut rec, &mut t, variant, inputs);
    } else {
        forward(&mut NoRecord, &mut t, variant, inputs);
    }
    if passes.backward {
        backward(&mut rec, &mut t, variant, inputs);
    }
    rec
}

/// A traced [`run`] whose trace has no cell index (`Trace::index` is empty): for a reader of
/// the log in order, such as an export, which never asks who last wrote a cell.
pub fn run_unindexed(inputs: &Inputs, variant: Variant, passes: Passes) -> Run {
    run_with(inputs, variant, passes, passes, None, false)
}

/// Runs the forward pass of `variant` on `inputs` and, for [`Pass::Backward`], the backward
/// pass, recording `pass` only: the trace begins at that pass's first event, and its buffers'
/// starting contents are what the passes before it left (what `grade` gives a learner who
/// writes that pass alone). A mistaken run makes the passes it can.
pub fn run_recording(inputs: &Inputs, variant: Variant, pass: Pass) -> Run {
    let (make, record) = match pass {
        Pass::Forward => (Passes::FORWARD, Passes::FORWARD),
        Pass::Backward => (
            Passes::BOTH,
            Passes {
                forward: false,
                backward: true,
            },
        ),
    };
    run_with(inputs, variant, make, record, None, true)
}

/// Makes the passes of `make` that the plan allows, recording those of `record` (a trace
/// exactly when it records one).
fn run_with(
    inputs: &Inputs,
    variant: Variant,
    make: Passes,
    record: Passes,
    progress: Option<Progress>,
    index: bool,
) -> Run {
    let inputs = &*inputs.for_variant(variant);
    let plan = inputs.plan();
    let passes = plan.possible(make);
    let registry = Registry::new(&plan, variant, passes);
    let mut t = Tensors::new(inputs, &registry);
    let traced = (record.forward && passes.forward) || (record.backward && passes.backward);
    let trace = if traced {
        let recorded = Passes {
            forward: record.forward && passes.forward,
            backward: record.backward && passes.backward,
        };
        // the budget was checked on the scenario: an estimate beyond memory only grows as it goes
        let mut log = Logger::with_capacity(estimate_events(&plan, variant, recorded).to_usize().unwrap_or(0));
        if let Some(p) = progress {
            log = log.watched(p);
        }
        let mut initial = None;
        if recorded.forward {
            initial = Some(t.snapshot(&registry));
            forward(&mut log, &mut t, variant, inputs);
        } else {
            forward(&mut NoRecord, &mut t, variant, inputs);
        }
        if passes.backward {
            if recorded.backward {
                if initial.is_none() {
                    initial = Some(t.snapshot(&registry));
                }
                backward(&mut log, &mut t, variant, inputs);
            } else {
                backward(&mut NoRecord, &mut t, variant, inputs);
            }
        }
        Some(log.finish_indexed(initial.unwrap_or_default(), index))
    } else {
        forward(&mut NoRecord, &mut t, variant, inputs);
        if passes.backward {
            backward(&mut NoRecord, &mut t, variant, inputs);
        }
        None
    };
    Run {
        variant,
        shape: inputs.shape,
        mistakes: inputs.mistakes,
        dropout: inputs.dropout.filter(|_| registry.has(Buf::DropMask)),
        rope: inputs.rope,
        decode: inputs.decode,
        registry,
        tensors: t,
        trace,
    }
}

/// The first event at which two traces differ (in buffer, offset, op or value), or the shorter
/// one's length when one is a prefix of the other; `None` when they are identical.
pub fn first_divergence(a: &Trace, b: &Trace) -> Option<usize> {
    let same = |x: &crate::trace::Event, y: &crate::trace::Event| {
        (x.buf, x.offset, x.op, x.value.to_bits()) == (y.buf, y.offset, y.op, y.value.to_bits())
    };
    match a.events.iter().zip(&b.events).position(|(x, y)| !same(x, y)) {
        Some(n) => Some(n),
        None if a.len() != b.len() => Some(a.len().min(b.len())),
        None => None,
    }
}
