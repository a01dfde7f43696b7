//! Everything a run needs: sizes, mask, the starting tensors, the optional output projection,
//! dropout, mistakes and the upstream gradient, and where the run starts.

use super::*;

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
            latent == variant.desc().latent,
            "variant {variant} on {} inputs: \"mla\" runs on latent inputs (Start::Latent) only, and they on it",
            if latent { "latent" } else { "non-latent" }
        );
        let sh = self.shape;
        let choices = Choices {
            dropout: self.dropout.is_some(),
            mistakes: !self.mistakes.is_empty(),
            decode: self.decode,
        };
        if variant.refusal(choices).is_some() {
            let decode = self.decode && !variant.refuses(Refusal::Decode);
            let plain = Inputs {
                dropout: self.dropout.filter(|_| !variant.refuses(Refusal::Dropout)),
                mistakes: if variant.refuses(Refusal::Mistakes) {
                    Mistakes::NONE
                } else {
                    self.mistakes
                },
                decode,
                cache: if decode {
                    self.cache.clone()
                } else {
                    CacheSpec::default()
                },
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

    /// The passes a run of these inputs can make: a mistaken run is forward only (but for a
    /// backward mistake).
    pub fn possible(&self, passes: Passes) -> Passes {
        self.plan().possible(passes)
    }
}
