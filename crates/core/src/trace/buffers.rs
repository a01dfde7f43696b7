//! The buffer table: every buffer a kernel can touch, declared once — its name, what it is to the
//! computation, its dimensions as stored and as the kernel reads them, and which runs have it.
//!
//! A gradient is declared by the buffer it belongs to (`d_q` of `q`): it has that buffer's layout
//! and exists on a backward run that has that buffer. The engine's registry
//! ([`crate::engine::registry`]) evaluates this table for one run: [`Sizes`] are the run's sizes
//! as the variant's kernel reads them, [`Facts`] what the run computes. A new buffer is one line
//! here (and the kernel that records it).

use crate::tensor::{Dim, Layout, Level, Role, Spec, dim};
use serde::Serialize;
use std::fmt;

/// The sizes a buffer's dimensions are made of, as the run's kernel reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    pub b: usize,
    /// Query positions.
    pub s: usize,
    /// Key positions (S = T in self-attention).
    pub t: usize,
    pub c: usize,
    /// Query heads.
    pub h: usize,
    /// Key/value heads the kernel reads (H unless the kernel shares them between query heads).
    pub h_kv: usize,
    /// Does the kernel walk heads (every variant but the single-head baseline)?
    pub per_head: bool,
    /// Does the kernel index keys and values by their own head `kv_h` (grouped-query attention)?
    pub kv_heads: bool,
    /// Flash's tile rows (queries) and columns (keys).
    pub br: usize,
    pub bc: usize,
    /// How a decode run keeps its cache.
    pub cache: CacheDims,
    /// Parts a split decode step cuts its cache into (`P`; 0 when it does not split).
    pub parts: usize,
    /// Multi-head latent attention's latent channels `R` and rotary channels `DR` (0 and 0
    /// in the other variants).
    pub kv_rank: usize,
    pub rope_dim: usize,
}

/// The outer dimensions of a decode run's key/value cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheDims {
    /// `[B, T]`: a row per position.
    #[default]
    Contiguous,
    /// `[B, N + W]`: the sinks' rows, then the window's `W` slots.
    Rolling { rows: usize },
    /// `[NB, BS]`: a pool of blocks, listed per sequence in a block table `[B, MB]`.
    Paged { nb: usize, bs: usize, mb: usize },
}

/// What a run computes, as far as which buffers it has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// Does the run start from `x` (not from given `q, k, v`)?
    pub from_x: bool,
    /// The fused input projection `qkv = x·W_qkv + b_qkv`.
    pub fused: bool,
    /// The three separate projections `x·W_q`, `m·W_k`, `m·W_v`.
    pub separate: bool,
    /// Keys and values from a second sequence, `memory`.
    pub cross: bool,
    /// Decoding token by token from a key/value cache.
    pub decode: bool,
    /// FlashAttention: tiles and row statistics instead of scores and probabilities.
    pub flash: bool,
    /// Dropout on the probabilities.
    pub dropout: bool,
    /// The output projection `out = att·W_proj + b_proj`.
    pub proj: bool,
    /// Rotary positions.
    pub rope: bool,
    /// A decode run's cache is a pool of blocks read through a block table.
    pub paged: bool,
    /// A decode run splits each step's cache into parts and merges them (flash-decoding).
    pub split: bool,
    /// gpt-oss's learned sink logit per head, in every softmax row's denominator.
    pub sink_logit: bool,
    /// Multi-head latent attention: keys and values projected up from a latent row per token.
    pub mla: bool,
    /// A backward pass.
    pub backward: bool,
    /// The linear layers have no biases (`[run] bias = false`: LLaMA-family models).
    pub no_bias: bool,
}

/// A buffer's dimensions, outermost first: as stored, and as viewed when the kernel reads the
/// stored rows differently (MHA reads `q [B,S,C]` as `[B,S,H,D]`).
pub struct Dims {
    level: Level,
    stored: Vec<Dim>,
    view: Option<Vec<Dim>>,
}

impl Sizes {
    /// Head width D.
    pub const fn d(&self) -> usize {
        self.c / self.h
    }

    /// Channels of a key/value row: `H_kv·D`.
    pub const fn kv(&self) -> usize {
        self.h_kv * self.d()
    }

    /// The query rows, walked by `i`.
    pub const fn i(&self) -> Dim {
        dim("i", self.s)
    }

    /// The key/value rows, walked by `j`.
    pub const fn j(&self) -> Dim {
        dim("j", self.t)
    }

    /// Stored as read.
    pub fn global(&self, stored: Vec<Dim>) -> Dims {
        Dims {
            level: Level::Global,
            stored,
            view: None,
        }
    }

    /// Stored as `stored`, read by the kernel as `view`.
    pub fn viewed(&self, stored: Vec<Dim>, view: Vec<Dim>) -> Dims {
        Dims {
            level: Level::Global,
            stored,
            view: Some(view),
        }
    }

    /// Flash's tile-local working set.
    pub fn tile(&self, dims: Vec<Dim>) -> Dims {
        Dims {
            level: Level::Tile,
            stored: dims,
            view: None,
        }
    }

    /// A row of channels per position: `[B, row, C]`.
    pub fn channels(&self, row: Dim) -> Vec<Dim> {
        vec![dim("b", self.b), row, dim("c", self.c)]
    }

    /// A key/value row of `H_kv·D` channels (C unless grouped).
    pub fn kv_channels(&self, row: Dim) -> Vec<Dim> {
        vec![dim("b", self.b), row, dim("c", self.kv())]
    }

    /// Rows of channels as the kernel reads them: per head, or one row of C in the baseline.
    pub fn heads(&self, row: Dim) -> Vec<Dim> {
        if self.per_head {
            vec![dim("b", self.b), row, dim("h", self.h), dim("d", self.d())]
        } else {
            self.channels(row)
        }
    }

    /// Key/value rows per key/value head: `kv_h` when grouped, the query head `h` otherwise.
    pub fn kv_heads(&self, row: Dim) -> Vec<Dim> {
        if self.kv_heads {
            vec![dim("b", self.b), row, dim("kv_h", self.h_kv), dim("d", self.d())]
        } else {
            self.heads(row)
        }
    }

    /// One number per (query i, key j), per head when the kernel has heads.
    pub fn pairs(&self) -> Vec<Dim> {
        if self.per_head {
            vec![dim("b", self.b), dim("h", self.h), self.i(), self.j()]
        } else {
            vec![dim("b", self.b), self.i(), self.j()]
        }
    }

    /// One number per query row of each head: flash's log-sum-exp and backward's D_i.
    pub fn rows(&self) -> Vec<Dim> {
        vec![dim("b", self.b), dim("h", self.h), self.i()]
    }

    /// One number per softmax row, per head when the kernel has heads: the sink's share of the
    /// row and backward's D_i.
    pub fn row_stats(&self) -> Vec<Dim> {
        if self.per_head {
            self.rows()
        } else {
            vec![dim("b", self.b), self.i()]
        }
    }

    /// One number per head: its sink logit (the baseline's single head has one).
    pub fn one_per_head(&self) -> Vec<Dim> {
        vec![dim("h", if self.per_head { self.h } else { 1 })]
    }

    /// A weight matrix `[C, out]`.
    pub fn weights(&self, out: usize) -> Vec<Dim> {
        vec![dim("c", self.c), dim("o", out)]
    }

    /// A bias `[out]`.
    pub fn bias(&self, out: usize) -> Vec<Dim> {
        vec![dim("o", out)]
    }

    /// The fused projection's width: q, k and v side by side at columns 0, C and C + H_kv·D.
    pub const fn fused(&self) -> usize {
        self.c + 2 * self.kv()
    }

    /// The rotation tables: one angle per position t and channel pair m of a head (D = C in the
    /// baseline's single head).
    pub fn angles(&self) -> Vec<Dim> {
        // multi-head latent attention turns only its DR rotary channels
        let half = if self.rope_dim > 0 {
            self.rope_dim / 2
        } else if self.per_head {
            self.d() / 2
        } else {
            self.c / 2
        };
        vec![dim("t", self.t), dim("m", half)]
    }

    /// Flash's tile rows `ii` of a query tile and `jj` of a key tile.
    pub const fn ii(&self) -> Dim {
        dim("ii", self.br)
    }

    pub const fn jj(&self) -> Dim {
        dim("jj", self.bc)
    }

    /// A head's channels `d`.
    pub const fn dd(&self) -> Dim {
        dim("d", self.d())
    }

    /// A decode run's key (or value) cache: rows of `H_kv·D` channels, per position, per window
    /// slot, or per row of a pool block, read per key/value head as the kernel reads `k`.
    pub fn cache(&self) -> Dims {
        let outer = match self.cache {
            CacheDims::Contiguous => return self.viewed(self.kv_channels(self.j()), self.kv_heads(self.j())),
            CacheDims::Rolling { rows } => [dim("b", self.b), dim("slot", rows)],
            CacheDims::Paged { nb, bs, .. } => [dim("phys", nb), dim("r", bs)],
        };
        let stored = [&outer[..], &[dim("c", self.kv())]].concat();
        let view = match (self.kv_heads, self.per_head) {
            (true, _) => [&outer[..], &[dim("kv_h", self.h_kv), self.dd()]].concat(),
            (false, true) => [&outer[..], &[dim("h", self.h), self.dd()]].concat(),
            (false, false) => stored.clone(),
        };
        self.viewed(stored, view)
    }

    /// A paged cache's block table: the blocks of each sequence, in order.
    pub fn block_table(&self) -> Vec<Dim> {
        let mb = match self.cache {
            CacheDims::Paged { mb, .. } => mb,
            CacheDims::Contiguous | CacheDims::Rolling { .. } => 0,
        };
        vec![dim("b", self.b), dim("blk", mb)]
    }

    /// One number per part of each decode step, per head when the kernel has heads:
    /// `[B, H, T, P]`.
    pub fn parts(&self) -> Vec<Dim> {
        if self.per_head {
            vec![
                dim("b", self.b),
                dim("h", self.h),
                dim("t", self.t),
                dim("p", self.parts),
            ]
        } else {
            vec![dim("b", self.b), dim("t", self.t), dim("p", self.parts)]
        }
    }

    /// A part's output row of each decode step: `[B, H, T, P, D]` (`C` channels in the
    /// baseline's single head).
    pub fn part_rows(&self) -> Vec<Dim> {
        let ch = if self.per_head { self.dd() } else { dim("c", self.c) };
        [self.parts(), vec![ch]].concat()
    }

    /// Multi-head latent attention's query heads are `D + DR` wide (`[q_nope | q_pe]`).
    const fn q_head(&self) -> usize {
        self.d() + self.rope_dim
    }

    /// The query projection's width: `C`, or `H·(D + DR)` in multi-head latent attention.
    pub const fn q_width(&self) -> usize {
        if self.kv_rank > 0 {
            self.h * self.q_head()
        } else {
            self.c
        }
    }

    /// `q [B,S,C]` read per head as `[B,S,H,D]` (one row of C in the baseline); in multi-head
    /// latent attention `[B,S,H·(D + DR)]` read as `[B,S,H,D + DR]`.
    pub fn query(&self) -> Dims {
        if self.kv_rank > 0 {
            let stored = vec![dim("b", self.b), self.i(), dim("c", self.q_width())];
            let view = vec![dim("b", self.b), self.i(), dim("h", self.h), dim("d", self.q_head())];
            self.viewed(stored, view)
        } else {
            self.viewed(self.channels(self.i()), self.heads(self.i()))
        }
    }

    /// A row of `n` latent channels `r` per (batch, position `row`).
    pub fn latent(&self, row: Dim, n: usize) -> Vec<Dim> {
        vec![dim("b", self.b), row, dim("r", n)]
    }

    /// A row per (batch, position `row`, head) of `R` latent channels: the absorbed query and
    /// the latent weighted sum of a decode step.
    pub fn latent_heads(&self) -> Vec<Dim> {
        vec![dim("b", self.b), self.i(), dim("h", self.h), dim("r", self.kv_rank)]
    }

    /// An up-projection from the latent, `[R, H·D]`: input channel `c` of `R`.
    pub fn up_weights(&self) -> Vec<Dim> {
        vec![dim("c", self.kv_rank), dim("o", self.c)]
    }
}

macro_rules! buffers {
    ($(
        $variant:ident => $name:literal $(of $owner:ident)? $(: $role:ident, $dims:expr, when $when:expr)?;
    )*) => {
        /// Every buffer a kernel can touch, named as in the docs and in `run --json`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[repr(u8)]
        pub enum Buf { $($variant,)* }

        impl Buf {
            pub const ALL: &'static [Buf] = &[$(Buf::$variant,)*];

            pub const fn name(self) -> &'static str {
                match self { $(Buf::$variant => $name,)* }
            }

            pub fn from_name(name: &str) -> Option<Buf> {
                match name { $($name => Some(Buf::$variant),)* _ => None }
            }

            /// The buffer whose gradient this one is (`d_q` → `q`), for gradient buffers.
            pub const fn primal(self) -> Option<Buf> {
                match self {
                    $(Buf::$variant => primal!($($owner)?),)*
                }
            }

            /// Role, level, stored shape and layout on sizes `sz`.
            pub fn spec(self, sz: &Sizes) -> Spec {
                match self { $(Buf::$variant => spec!(sz; $($owner)?; $($role, $dims)?),)* }
            }

            /// Does a run that computes `facts` have this buffer?
            pub fn present(self, facts: &Facts) -> bool {
                match self { $(Buf::$variant => present!(facts; $($owner)?; $($when)?),)* }
            }
        }
    };
}

/// The buffer a gradient is `of`.
macro_rules! primal {
    () => {
        None
    };
    ($owner:ident) => {
        Some(Buf::$owner)
    };
}

/// A buffer's spec: a gradient (`of` a buffer, nothing else said) has its buffer's layout.
macro_rules! spec {
    ($sz:ident; $owner:ident;) => {
        Buf::$owner.spec($sz).gradient()
    };
    ($sz:ident; $($owner:ident)?; $role:ident, $dims:expr) => {{
        let dims: fn(&Sizes) -> Dims = $dims;
        dims($sz).spec(Role::$role)
    }};
}

/// Whether a run has a buffer: a gradient exists on a backward run that has its buffer.
macro_rules! present {
    ($facts:ident; $owner:ident;) => {
        $facts.backward && Buf::$owner.present($facts)
    };
    ($facts:ident; $($owner:ident)?; $when:expr) => {{
        let when: fn(&Facts) -> bool = $when;
        when($facts)
    }};
}

// name  →  what it is, its dimensions (as stored; as viewed), and which runs have it; a gradient
// is declared `of` the buffer it belongs to
buffers! {
    X => "x": Input, |z| z.global(z.channels(z.i())), when |r| r.from_x;
    WQkv => "w_qkv": Parameter, |z| z.global(z.weights(z.fused())), when |r| r.fused || (r.decode && !r.mla);
    BQkv => "b_qkv": Parameter, |z| z.global(z.bias(z.fused())),
        when |r| (r.fused || (r.decode && !r.mla)) && !r.no_bias;
    // the fused projection's rows are the keys' positions (self-attention: S = T)
    Qkv => "qkv": Activation, |z| z.global(vec![dim("b", z.b), dim("i", z.t), dim("c", z.fused())]),
        when |r| r.fused;
    Q => "q": Activation, Sizes::query, when |_| true;
    K => "k": Activation, |z| z.viewed(z.kv_channels(z.j()), z.kv_heads(z.j())), when |r| !r.decode && !r.mla;
    V => "v": Activation, |z| z.viewed(z.kv_channels(z.j()), z.kv_heads(z.j())), when |r| !r.decode;
    Scores => "scores": Activation, |z| z.global(z.pairs()), when |r| !r.flash;
    // a split decode step has each part's probabilities instead (`p_part`)
    Probs => "probs": Activation, |z| z.global(z.pairs()), when |r| !r.flash && !r.split;
    // `att [B,S,H,D]` is `[B,S,C]` in memory: the heads concatenated by the layout itself
    Att => "att": Activation, |z| z.global(z.heads(z.i())), when |_| true;
    WProj => "w_proj": Parameter, |z| z.global(z.weights(z.c)), when |r| r.proj;
    BProj => "b_proj": Parameter, |z| z.global(z.bias(z.c)), when |r| r.proj && !r.no_bias;
    Out => "out": Activation, |z| z.global(z.channels(z.i())), when |r| r.proj;
    // the upstream gradient is given: of `out`, or of `att` when there is no output projection
    DOut => "d_out" of Out: Input, |z| z.global(z.channels(z.i())), when |r| r.backward;
    DAtt => "d_att" of Att;
    DProbs => "d_probs" of Probs;
    DScores => "d_scores" of Scores;
    DQ => "d_q" of Q;
    DK => "d_k" of K;
    DV => "d_v" of V;
    DQkv => "d_qkv" of Qkv;
    DX => "d_x" of X;
    DWQkv => "d_w_qkv" of WQkv;
    DBQkv => "d_b_qkv" of BQkv;
    DWProj => "d_w_proj" of WProj;
    DBProj => "d_b_proj" of BProj;
    Memory => "memory": Input, |z| z.global(z.channels(z.j())), when |r| r.cross;
    WQ => "w_q": Parameter, |z| z.global(z.weights(z.q_width())), when |r| r.separate || r.mla;
    BQ => "b_q": Parameter, |z| z.global(z.bias(z.c)), when |r| r.separate && !r.no_bias;
    WK => "w_k": Parameter, |z| z.global(z.weights(z.kv())), when |r| r.separate;
    BK => "b_k": Parameter, |z| z.global(z.bias(z.kv())), when |r| r.separate && !r.no_bias;
    WV => "w_v": Parameter, |z| z.global(z.weights(z.kv())), when |r| r.separate;
    BV => "b_v": Parameter, |z| z.global(z.bias(z.kv())), when |r| r.separate && !r.no_bias;
    DropMask => "drop_mask": Input, |z| z.global(z.pairs()), when |r| r.dropout;
    ProbsDrop => "probs_drop": Activation, |z| z.global(z.pairs()), when |r| r.dropout;
    DMemory => "d_memory" of Memory;
    DWQ => "d_w_q" of WQ;
    DBQ => "d_b_q" of BQ;
    DWK => "d_w_k" of WK;
    DBK => "d_b_k" of BK;
    DWV => "d_w_v" of WV;
    DBV => "d_b_v" of BV;
    DProbsDrop => "d_probs_drop" of ProbsDrop;
    // flash's row statistics, and its working set: rows `ii` of a query tile, `jj` of a key tile
    Lse => "lse": Activation, |z| z.global(z.rows()), when |r| r.flash;
    Delta => "delta": Gradient, |z| z.global(z.row_stats()), when |r| (r.flash || r.sink_logit) && r.backward;
    QTile => "q_tile": Activation, |z| z.tile(vec![z.ii(), z.dd()]), when |r| r.flash;
    KTile => "k_tile": Activation, |z| z.tile(vec![z.jj(), z.dd()]), when |r| r.flash;
    VTile => "v_tile": Activation, |z| z.tile(vec![z.jj(), z.dd()]), when |r| r.flash;
    STile => "s_tile": Activation, |z| z.tile(vec![z.ii(), z.jj()]), when |r| r.flash;
    RowMax => "m": Activation, |z| z.tile(vec![z.ii()]), when |r| r.flash;
    RowSum => "l": Activation, |z| z.tile(vec![z.ii()]), when |r| r.flash;
    Acc => "acc": Activation, |z| z.tile(vec![z.ii(), z.dd()]), when |r| r.flash;
    DOTile => "do_tile": Gradient, |z| z.tile(vec![z.ii(), z.dd()]), when |r| r.flash && r.backward;
    DSTile => "ds_tile": Gradient, |z| z.tile(vec![z.ii(), z.jj()]), when |r| r.flash && r.backward;
    DKTile => "dk_tile": Gradient, |z| z.tile(vec![z.jj(), z.dd()]), when |r| r.flash && r.backward;
    DVTile => "dv_tile": Gradient, |z| z.tile(vec![z.jj(), z.dd()]), when |r| r.flash && r.backward;
    // the rotation tables: one angle per position t and channel pair m of a head
    RopeCos => "rope_cos": Input, |z| z.global(z.angles()), when |r| r.rope;
    RopeSin => "rope_sin": Input, |z| z.global(z.angles()), when |r| r.rope;
    // a decode run's caches: row j holds position j's key (value), written at step j
    KCache => "k_cache": Activation, Sizes::cache, when |r| r.decode && !r.mla;
    VCache => "v_cache": Activation, Sizes::cache, when |r| r.decode && !r.mla;
    // a paged cache's table of physical block ids, [B, MB]
    BlockTable => "block_table": Input, |z| z.global(z.block_table()), when |r| r.paged;
    // a split decode step: each part's probabilities (a key is in one part, so they share the
    // layout of `probs`), its log-sum-exp and output, and the merge's weights
    PPart => "p_part": Activation, |z| z.global(z.pairs()), when |r| r.split;
    LsePart => "lse_part": Activation, |z| z.global(z.parts()), when |r| r.split;
    OPart => "o_part": Activation, |z| z.global(z.part_rows()), when |r| r.split;
    WPart => "w_part": Activation, |z| z.global(z.parts()), when |r| r.split;
    // gpt-oss's sink logit: one per head, in each row's denominator with no value; the sink's
    // share P_sink of each row (recomputed from lse in flash's backward)
    Sink => "sink": Parameter, |z| z.global(z.one_per_head()), when |r| r.sink_logit;
    PSink => "p_sink": Activation, |z| z.global(z.row_stats()), when |r| r.sink_logit && (!r.flash || r.backward);
    DSink => "d_sink" of Sink;
    // multi-head latent attention: the latent row per token and the rotary key every head
    // shares, their weights, and each head's keys (without position) projected up
    WDkv => "w_dkv": Parameter, |z| z.global(z.weights(z.kv_rank)), when |r| r.mla;
    WKr => "w_kr": Parameter, |z| z.global(z.weights(z.rope_dim)), when |r| r.mla;
    WUk => "w_uk": Parameter, |z| z.global(z.up_weights()), when |r| r.mla;
    WUv => "w_uv": Parameter, |z| z.global(z.up_weights()), when |r| r.mla;
    CKv => "c_kv": Activation, |z| z.global(z.latent(z.j(), z.kv_rank)), when |r| r.mla && !r.decode;
    KPe => "k_pe": Activation, |z| z.global(vec![dim("b", z.b), z.j(), dim("e", z.rope_dim)]),
        when |r| r.mla && !r.decode;
    KNope => "k_nope": Activation, |z| z.viewed(z.kv_channels(z.j()), z.kv_heads(z.j())),
        when |r| r.mla && !r.decode;
    DWDkv => "d_w_dkv" of WDkv;
    DWKr => "d_w_kr" of WKr;
    DWUk => "d_w_uk" of WUk;
    DWUv => "d_w_uv" of WUv;
    DCKv => "d_c_kv" of CKv;
    DKPe => "d_k_pe" of KPe;
    DKNope => "d_k_nope" of KNope;
    // the absorbed decode form: one cache row [c_kv | k_pe] per token for all heads, and per
    // step and head the query and the weighted sum in the latent space
    KvCache => "kv_cache": Activation, |z| z.global(z.latent(z.j(), z.kv_rank + z.rope_dim)),
        when |r| r.mla && r.decode;
    QLat => "q_lat": Activation, |z| z.global(z.latent_heads()), when |r| r.mla && r.decode;
    OLat => "o_lat": Activation, |z| z.global(z.latent_heads()), when |r| r.mla && r.decode;
}

impl Dims {
    fn spec(self, role: Role) -> Spec {
        Spec {
            role,
            level: self.level,
            shape: self.stored.iter().map(|d| d.size).collect(),
            layout: Layout::new(self.view.unwrap_or(self.stored)),
        }
    }
}

impl Spec {
    /// The same buffer's gradient: its layout, computed by the backward pass.
    fn gradient(self) -> Spec {
        Spec {
            role: Role::Gradient,
            ..self
        }
    }
}

impl fmt::Display for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
