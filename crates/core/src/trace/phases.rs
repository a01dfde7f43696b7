//! The phase registry: every commented pass of a kernel declared once, with the facts the rest of
//! the program asks of it. The memory panel draws a phase's [`Phase::buffers`], the analysis
//! layer takes sums of products only in phases that [`Phase::sums`], and the traffic counts and
//! the display oracle keep to the attention core by [`Phase::stage`]. A new phase is one entry
//! here and the kernel that records it.

use super::{Buf, Pass};
use serde::Serialize;

/// Where a phase stands in a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// The linear layers and copies around attention (the same for every variant).
    Projection,
    /// The attention core, from `q, k, v` to `att` and back: where the variants differ.
    Core,
    /// Rotary positions turning `q` and `k` (and their gradients back).
    Rope,
    /// A decode step's attention over the key/value cache.
    Decode,
}

macro_rules! phases {
    ($($variant:ident {
        name: $name:literal,
        pass: $pass:ident,
        title: $title:literal,
        stage: $stage:ident,
        sums: $sums:literal,
        buffers: [$($buf:ident),* $(,)?],
    },)*) => {
        /// One commented pass of a kernel: the unit the TUI steps between with `]` / `[`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[repr(u8)]
        pub enum Phase { $($variant,)* }

        impl Phase {
            pub const ALL: &'static [Phase] = &[$(Phase::$variant,)*];

            /// Short machine name, used on the command line and in exports.
            pub const fn name(self) -> &'static str {
                match self { $(Phase::$variant => $name,)* }
            }

            pub const fn pass(self) -> Pass {
                match self { $(Phase::$variant => Pass::$pass,)* }
            }

            /// What the phase computes, in words.
            pub const fn title(self) -> &'static str {
                match self { $(Phase::$variant => $title,)* }
            }

            /// Where the phase stands in a layer.
            pub const fn stage(self) -> Stage {
                match self { $(Phase::$variant => Stage::$stage,)* }
            }

            /// Are the phase's writes sums of products of its reads (dot products, matrix
            /// products)? Copies, softmax rows, dropout and rotations are not.
            pub const fn sums(self) -> bool {
                match self { $(Phase::$variant => $sums,)* }
            }

            /// The buffers the phase reads or writes, in the order the memory panel draws them:
            /// what it writes first.
            pub const fn buffers(self) -> &'static [Buf] {
                match self { $(Phase::$variant => &[$(Buf::$buf,)*],)* }
            }

            pub fn from_name(name: &str) -> Option<Phase> {
                match name { $($name => Some(Phase::$variant),)* _ => None }
            }
        }
    };
}

phases! {
    QkvProj {
        name: "qkv_proj",
        pass: Forward,
        title: "input projection qkv = x·W_qkv + b_qkv",
        stage: Projection,
        sums: true,
        buffers: [Qkv, X, WQkv, BQkv],
    },
    Split {
        name: "split",
        pass: Forward,
        title: "slice qkv into q, k, v",
        stage: Projection,
        sums: false,
        buffers: [Qkv, Q, K, V],
    },
    QProj {
        name: "q_proj",
        pass: Forward,
        title: "query projection q = x·W_q + b_q",
        stage: Projection,
        sums: true,
        buffers: [Q, X, WQ, BQ],
    },
    KProj {
        name: "k_proj",
        pass: Forward,
        title: "key projection k = m·W_k + b_k",
        stage: Projection,
        sums: true,
        buffers: [K, Memory, X, WK, BK],
    },
    VProj {
        name: "v_proj",
        pass: Forward,
        title: "value projection v = m·W_v + b_v",
        stage: Projection,
        sums: true,
        buffers: [V, Memory, X, WV, BV],
    },
    NoProj {
        name: "no_proj",
        pass: Forward,
        title: "mistake: q = k = v = x, no input projections",
        stage: Projection,
        sums: false,
        buffers: [Q, K, V, X, Memory],
    },
    Scores {
        name: "scores",
        pass: Forward,
        title: "scores S = Q·Kᵀ/√d",
        stage: Core,
        sums: true,
        buffers: [Scores, Q, K, KNope, KPe],
    },
    Softmax {
        name: "softmax",
        pass: Forward,
        title: "softmax over each score row",
        stage: Core,
        sums: false,
        buffers: [Probs, Scores, Sink, PSink],
    },
    Dropout {
        name: "dropout",
        pass: Forward,
        title: "dropout P' = P ⊙ keep / (1 − p)",
        stage: Core,
        sums: false,
        buffers: [ProbsDrop, Probs, DropMask],
    },
    WeightedSum {
        name: "weighted_sum",
        pass: Forward,
        title: "weighted sum att = P·V",
        stage: Core,
        sums: true,
        buffers: [Att, ProbsDrop, Probs, V],
    },
    OutProj {
        name: "out_proj",
        pass: Forward,
        title: "output projection out = att·W_proj + b_proj",
        stage: Projection,
        sums: true,
        buffers: [Out, Att, WProj, BProj],
    },
    OutProjBack {
        name: "out_proj_back",
        pass: Backward,
        title: "backward of the output projection",
        stage: Projection,
        sums: true,
        buffers: [DAtt, DOut, WProj, Att, DWProj, DBProj],
    },
    WeightedSumBack {
        name: "weighted_sum_back",
        pass: Backward,
        title: "dP = dAtt·Vᵀ and dV = Pᵀ·dAtt",
        stage: Core,
        sums: true,
        buffers: [DProbsDrop, DProbs, DAtt, V, ProbsDrop, Probs, DV],
    },
    DropoutBack {
        name: "dropout_back",
        pass: Backward,
        title: "dropout backward dP = dP' ⊙ keep / (1 − p)",
        stage: Core,
        sums: false,
        buffers: [DProbs, DProbsDrop, DropMask],
    },
    SoftmaxBack {
        name: "softmax_back",
        pass: Backward,
        title: "softmax backward dS = P ⊙ (dP − Σ dP·P)",
        stage: Core,
        sums: false,
        buffers: [DScores, Probs, DProbs, Delta],
    },
    SinkBack {
        name: "sink_back",
        pass: Backward,
        title: "sink logit backward: d_sink = −Σ P_sink·D over the head's rows",
        stage: Core,
        sums: true,
        buffers: [DSink, PSink, Delta],
    },
    ScoresBack {
        name: "scores_back",
        pass: Backward,
        title: "dQ = dS·K/√d and dK = dSᵀ·Q/√d",
        stage: Core,
        sums: true,
        buffers: [DQ, DK, DScores, K, Q, DKNope, DKPe, KNope, KPe],
    },
    SplitBack {
        name: "split_back",
        pass: Backward,
        title: "gather dq, dk, dv into d_qkv",
        stage: Projection,
        sums: false,
        buffers: [DQkv, DQ, DK, DV],
    },
    QkvProjBack {
        name: "qkv_proj_back",
        pass: Backward,
        title: "backward of the input projection",
        stage: Projection,
        sums: true,
        buffers: [DX, DQkv, WQkv, X, DWQkv, DBQkv],
    },
    VProjBack {
        name: "v_proj_back",
        pass: Backward,
        title: "backward of the value projection",
        stage: Projection,
        sums: true,
        buffers: [DMemory, DX, DV, WV, Memory, X, DWV, DBV],
    },
    KProjBack {
        name: "k_proj_back",
        pass: Backward,
        title: "backward of the key projection",
        stage: Projection,
        sums: true,
        buffers: [DMemory, DX, DK, WK, Memory, X, DWK, DBK],
    },
    QProjBack {
        name: "q_proj_back",
        pass: Backward,
        title: "backward of the query projection",
        stage: Projection,
        sums: true,
        buffers: [DX, DQ, WQ, X, DWQ, DBQ],
    },
    Flash {
        name: "flash",
        pass: Forward,
        title: "flash: per tile S = Q·Kᵀ/√d, online softmax, att = acc/l",
        stage: Core,
        sums: true,
        buffers: [Att, Lse, Q, K, V, Sink, QTile, KTile, VTile, STile, RowMax, RowSum, Acc],
    },
    FlashDelta {
        name: "flash_delta",
        pass: Backward,
        title: "flash backward: D = rowsum(dAtt ⊙ att), dQ = 0",
        stage: Core,
        sums: true,
        buffers: [Delta, DQ, PSink, DAtt, Att, Sink, Lse],
    },
    FlashBack {
        name: "flash_back",
        pass: Backward,
        title: "flash backward: recompute P from lse; dV, dS, dQ, dK per tile",
        stage: Core,
        sums: true,
        buffers: [DQ, DK, DV, Q, K, V, DAtt, Lse, Delta, QTile, KTile, VTile, STile, DOTile, DSTile, DKTile, DVTile],
    },
    Rope {
        name: "rope",
        pass: Forward,
        title: "rotary positions: turn each channel pair of q and k by t·θ_m",
        stage: Rope,
        sums: false,
        buffers: [Q, K, KCache, KPe, KvCache, RopeCos, RopeSin],
    },
    RopeBack {
        name: "rope_back",
        pass: Backward,
        title: "rotary positions backward: turn dQ and dK back by −t·θ_m",
        stage: Rope,
        sums: false,
        buffers: [DQ, DK, DKPe, RopeCos, RopeSin],
    },
    DecodeQkv {
        name: "decode_qkv",
        pass: Forward,
        title: "decode step t: project token t into q and the k/v cache",
        stage: Projection,
        sums: true,
        buffers: [Q, KCache, VCache, X, WQkv, BQkv, BlockTable],
    },
    DecodeScores {
        name: "decode_scores",
        pass: Forward,
        title: "decode step t: q[t] against the cached keys it sees",
        stage: Decode,
        sums: true,
        buffers: [Scores, Q, KCache, BlockTable, QLat, KvCache],
    },
    DecodeSoftmax {
        name: "decode_softmax",
        pass: Forward,
        title: "decode step t: softmax over the cached positions it sees",
        stage: Decode,
        sums: false,
        buffers: [Probs, Scores],
    },
    DecodeSum {
        name: "decode_sum",
        pass: Forward,
        title: "decode step t: att[t] = Σ_j P[t,j]·v_cache[j]",
        stage: Decode,
        sums: true,
        buffers: [Att, Probs, VCache, BlockTable],
    },
    DecodePartSoftmax {
        name: "decode_part_softmax",
        pass: Forward,
        title: "decode step t: each part's softmax of its own scores, and its log-sum-exp",
        stage: Decode,
        sums: false,
        buffers: [PPart, LsePart, Scores],
    },
    DecodePartSum {
        name: "decode_part_sum",
        pass: Forward,
        title: "decode step t: each part's output o_part[p] = Σ_{j in p} p_part[t,j]·v_cache[j]",
        stage: Decode,
        sums: true,
        buffers: [OPart, PPart, VCache, BlockTable],
    },
    DecodeMergeWeights {
        name: "decode_merge_weights",
        pass: Forward,
        title: "decode step t: the parts' weights w_part = softmax(lse_part)",
        stage: Decode,
        sums: false,
        buffers: [WPart, LsePart],
    },
    DecodeMerge {
        name: "decode_merge",
        pass: Forward,
        title: "decode step t: merge the parts, att[t] = Σ_p w_part[p]·o_part[p]",
        stage: Decode,
        sums: true,
        buffers: [Att, WPart, OPart],
    },
    DecodeOut {
        name: "decode_out",
        pass: Forward,
        title: "decode step t: out[t] = att[t]·W_proj + b_proj",
        stage: Projection,
        sums: true,
        buffers: [Out, Att, WProj, BProj],
    },
    // multi-head latent attention's projections: the query, the latent and the rotary key
    // from x, then each head's keys and values projected up from the latent
    MlaQProj {
        name: "mla_q_proj",
        pass: Forward,
        title: "query projection q = x·W_q, each head [q_nope | q_pe]",
        stage: Projection,
        sums: true,
        buffers: [Q, X, WQ],
    },
    LatentProj {
        name: "latent_proj",
        pass: Forward,
        title: "latent c_kv = x·W_dkv, one row of R for every head",
        stage: Projection,
        sums: true,
        buffers: [CKv, X, WDkv],
    },
    KPeProj {
        name: "k_pe_proj",
        pass: Forward,
        title: "rotary key k_pe = x·W_kr, one for every head",
        stage: Projection,
        sums: true,
        buffers: [KPe, X, WKr],
    },
    KUp {
        name: "k_up",
        pass: Forward,
        title: "keys up from the latent, k_nope = c_kv·W_uk",
        stage: Projection,
        sums: true,
        buffers: [KNope, CKv, WUk],
    },
    VUp {
        name: "v_up",
        pass: Forward,
        title: "values up from the latent, v = c_kv·W_uv",
        stage: Projection,
        sums: true,
        buffers: [V, CKv, WUv],
    },
    VUpBack {
        name: "v_up_back",
        pass: Backward,
        title: "backward of v = c_kv·W_uv",
        stage: Projection,
        sums: true,
        buffers: [DCKv, DV, WUv, CKv, DWUv],
    },
    KUpBack {
        name: "k_up_back",
        pass: Backward,
        title: "backward of k_nope = c_kv·W_uk, added to d_c_kv",
        stage: Projection,
        sums: true,
        buffers: [DCKv, DKNope, WUk, CKv, DWUk],
    },
    KPeProjBack {
        name: "k_pe_proj_back",
        pass: Backward,
        title: "backward of k_pe = x·W_kr",
        stage: Projection,
        sums: true,
        buffers: [DX, DKPe, WKr, X, DWKr],
    },
    LatentProjBack {
        name: "latent_proj_back",
        pass: Backward,
        title: "backward of c_kv = x·W_dkv, added to d_x",
        stage: Projection,
        sums: true,
        buffers: [DX, DCKv, WDkv, X, DWDkv],
    },
    MlaQProjBack {
        name: "mla_q_proj_back",
        pass: Backward,
        title: "backward of q = x·W_q, added to d_x",
        stage: Projection,
        sums: true,
        buffers: [DX, DQ, WQ, X, DWQ],
    },
    // the absorbed decode form, step by step from the latent cache
    DecodeLatent {
        name: "decode_latent",
        pass: Forward,
        title: "decode step t: cache row [c_kv | k_pe] = x[t]·[W_dkv | W_kr]",
        stage: Projection,
        sums: true,
        buffers: [KvCache, X, WDkv, WKr],
    },
    DecodeQ {
        name: "decode_q",
        pass: Forward,
        title: "decode step t: q[t] = x[t]·W_q",
        stage: Projection,
        sums: true,
        buffers: [Q, X, WQ],
    },
    DecodeAbsorb {
        name: "decode_absorb",
        pass: Forward,
        title: "decode step t: q_lat = q_nope·W_ukᵀ, the query in the latent space",
        stage: Decode,
        sums: true,
        buffers: [QLat, Q, WUk],
    },
    DecodeLatentSum {
        name: "decode_latent_sum",
        pass: Forward,
        title: "decode step t: o_lat = Σ_j P[t,j]·c_kv[j]",
        stage: Decode,
        sums: true,
        buffers: [OLat, Probs, KvCache],
    },
    DecodeUp {
        name: "decode_up",
        pass: Forward,
        title: "decode step t: att[t] = o_lat·W_uv, each head's values",
        stage: Decode,
        sums: true,
        buffers: [Att, OLat, WUv],
    },
}
