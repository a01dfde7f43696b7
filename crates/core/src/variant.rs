//! The attention variants, each declared once.
//!
//! A [`Variant`] names a kernel; its [`Descriptor`] holds everything fixed about it that the
//! engine, the analysis, the TUI and the scenario reader need: its name and kernel file, how it
//! lays out its heads (and so the shape its kernel sees), the variant whose plain passes it runs
//! where it has none of its own, the width its dot product sums (and so its scale `1/√width`),
//! the sizes a sentence about it names, its menu entry, the equations of the phases it writes
//! its own way, and the scenario choices it refuses. None of those readers matches on a
//! variant's name: they ask its descriptor. Adding a variant is its kernel file, a case of
//! [`Variant`] and an entry of [`DESCRIPTORS`], its docs and its tests (docs/architecture.md,
//! "What it takes to add a variant").

use crate::tensor::Shape;
use crate::trace::Phase;
use attn_trace_i18n::msg;
use serde::Serialize;
use std::fmt;

/// Which attention kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// One head over all `C` channels (`attention_1h.rs`).
    Baseline,
    /// `H` heads of `D = C/H` channels each (`attention_mha.rs`).
    Mha,
    /// MHA computed tile by tile with the online softmax, FlashAttention-2's loop order
    /// (`attention_flash.rs`): no `[B,H,S,T]` buffer at all.
    Flash,
    /// `H` query heads sharing `H_kv` key/value heads (`attention_gqa.rs`).
    Gqa,
    /// Multi-head latent attention (`attention_mla.rs`): every head's keys and values projected
    /// up from one latent row per token, and a rotary key part shared by the heads.
    Mla,
}

/// How a kernel lays out its heads, which decides the shape it sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heads {
    /// One head over all `C` channels: `H` is 1 for it, whatever the scenario says.
    One,
    /// `H` heads of `D = C/H` channels, each with its own key/value head.
    PerHead,
    /// `H` query heads sharing `H_kv` key/value heads, `H/H_kv` to a group.
    Grouped,
}

/// The channels a score's dot product sums, which also give its scale `1/√width`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// All `C` channels (one head).
    C,
    /// A head's `D = C/H` channels.
    D,
    /// A latent attention head's `D` channels against `k_nope` and `DR` rotary ones against
    /// `k_pe`.
    DPlusRope,
}

impl Width {
    /// How the docs write it: `C`, `D`, `(D + DR)`.
    pub const fn symbol(self) -> &'static str {
        match self {
            Width::C => "C",
            Width::D => "D",
            Width::DPlusRope => "(D + DR)",
        }
    }

    /// Its square root as the docs write it: `√C`, `√D`, `√(D + DR)`.
    pub const fn sqrt(self) -> &'static str {
        match self {
            Width::C => "√C",
            Width::D => "√D",
            Width::DPlusRope => "√(D + DR)",
        }
    }

    /// The loop variable its dot product runs over: `c` over all channels, `d` over a head's.
    pub const fn channel(self) -> &'static str {
        match self {
            Width::C => "c",
            Width::D | Width::DPlusRope => "d",
        }
    }

    /// Its value in the kernel's shape `ksh` (see [`kernel_shape`]), with latent attention's
    /// rotary channels `rope_dim` (0 elsewhere).
    pub const fn value(self, ksh: Shape, rope_dim: usize) -> usize {
        match self {
            Width::C => ksh.c,
            Width::D => ksh.d(),
            Width::DPlusRope => ksh.d() + rope_dim,
        }
    }
}

/// A scenario choice a variant cannot run with: the scenario reader refuses it with the
/// descriptor's words ([`Descriptor::refuses`]), and the engine runs the variant without it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `[run].dropout` in train mode.
    Dropout,
    /// `[run].mistakes`.
    Mistakes,
    /// `[run].decode`.
    Decode,
}

impl Refusal {
    /// The key of `[run]` that makes the choice.
    pub const fn key(self) -> &'static str {
        match self {
            Refusal::Dropout => "dropout",
            Refusal::Mistakes => "mistakes",
            Refusal::Decode => "decode",
        }
    }
}

/// What a scenario asks of a run, as far as a variant may refuse it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Choices {
    pub dropout: bool,
    pub mistakes: bool,
    pub decode: bool,
}

/// Everything fixed about one attention kernel.
#[derive(Debug)]
pub struct Descriptor {
    pub variant: Variant,
    /// As `[run].variants`, `--variant` and the exports write it: `mha`.
    pub name: &'static str,
    /// As a title names it: `baseline`, `MHA`, `GQA`, `flash`, `MLA`.
    pub title: &'static str,
    /// Its lesson file, as the compiler names it (and the log's loop sites record it), and its
    /// text, embedded: what the code panel shows.
    pub file: &'static str,
    pub source: &'static str,
    pub heads: Heads,
    /// The width its dot product sums, and so its scale.
    pub width: Width,
    /// The variant whose plain passes (softmax, weighted sum) and buffers it runs where it has
    /// none of its own: flash's untiled pieces and latent attention's softmax are MHA's.
    pub plain: Variant,
    /// An untraced run of its plain passes takes `untraced/fast/`, held to its loops bit for bit
    /// (`tests/it/kernels_untraced.rs`); without one, an untraced run takes its reference loops
    /// with a recorder that records nothing.
    pub fast: bool,
    /// The kernel shown beside it where a screen puts two side by side and the scenario traces
    /// no other: the baseline beside MHA (one head against H), MHA beside the rest.
    pub beside: Variant,
    /// The kernel Compare puts on its left when the scenario traces both (its teaching pairs:
    /// the baseline and MHA, MHA and GQA, MHA and flash).
    pub compare: Option<Variant>,
    /// Computed tile by tile, with tile-local buffers (FlashAttention).
    pub tiled: bool,
    /// Keys and values projected up from a latent ([`crate::engine::Start::Latent`] inputs).
    pub latent: bool,
    /// The gallery's mistakes are written into its kernel (`attention_mistakes.rs`).
    pub gallery: bool,
    /// The sizes a sentence about a run of it names, in order (`S` only for cross-attention).
    pub sizes: &'static [&'static str],
    /// Its weighted sum as `explain` writes it: over a whole sequence, and decoded from a cache.
    pub sum: [&'static str; 2],
    /// The menu entry that steps through it, and the line under the menu that says what it is
    /// (`msg!` texts, translated where they are shown).
    pub menu: &'static str,
    pub about: &'static str,
    /// The scenario choices it cannot run with, each with what to do about it (a `msg!`).
    pub refuses: &'static [(Refusal, &'static str)],
    /// The equations of the phases it writes its own way (the others are the plain kernels':
    /// one head's for [`Heads::One`], a head's for the rest).
    pub math: &'static [(Phase, &'static [&'static str])],
}

/// One descriptor per variant, in [`Variant::ALL`]'s order.
pub static DESCRIPTORS: [Descriptor; 5] = [
    Descriptor {
        variant: Variant::Baseline,
        name: "baseline",
        title: "baseline",
        file: "crates/core/src/kernels/attention_1h.rs",
        source: include_str!("kernels/attention_1h.rs"),
        heads: Heads::One,
        width: Width::C,
        plain: Variant::Baseline,
        fast: true,
        beside: Variant::Mha,
        compare: None,
        tiled: false,
        latent: false,
        gallery: true,
        sizes: &["B", "S", "T", "C"],
        sum: [
            "att[b,i,c] = Σ_j P[b,i,j] · v[b,j,c]",
            "att[b,t,c] = Σ_{j ≤ t} P[b,t,j] · v_cache[b,j,c]",
        ],
        menu: msg!("Step through baseline attention"),
        about: msg!("One head over all C channels: scores [B,T,T], scale 1/√C."),
        refuses: &[],
        math: &[],
    },
    Descriptor {
        variant: Variant::Mha,
        name: "mha",
        title: "MHA",
        file: "crates/core/src/kernels/attention_mha.rs",
        source: include_str!("kernels/attention_mha.rs"),
        heads: Heads::PerHead,
        width: Width::D,
        plain: Variant::Mha,
        fast: true,
        beside: Variant::Baseline,
        compare: Some(Variant::Baseline),
        tiled: false,
        latent: false,
        gallery: true,
        sizes: &["B", "S", "T", "C", "H", "D"],
        sum: [
            "att[b,i,h,d] = Σ_j P[b,h,i,j] · v[b,j,h,d]",
            "att[b,t,h,d] = Σ_{j ≤ t} P[b,h,t,j] · v_cache[b,j,kv_h,d],  kv_h = h/(H/H_kv)",
        ],
        menu: msg!("Step through multi-head attention"),
        about: msg!("H heads of D = C/H channels read from the same q, k, v rows: scores [B,H,T,T], scale 1/√D."),
        refuses: &[],
        math: &[],
    },
    Descriptor {
        variant: Variant::Flash,
        name: "flash",
        title: "flash",
        file: "crates/core/src/kernels/attention_flash.rs",
        source: include_str!("kernels/attention_flash.rs"),
        heads: Heads::PerHead,
        width: Width::D,
        plain: Variant::Mha,
        fast: true,
        beside: Variant::Mha,
        compare: Some(Variant::Mha),
        tiled: true,
        latent: false,
        gallery: false,
        sizes: &["B", "S", "T", "C", "H", "D"],
        sum: [
            "att[b,i,h,d] = Σ_j P[b,h,i,j] · v[b,j,h,d]",
            "att[b,t,h,d] = Σ_{j ≤ t} P[b,h,t,j] · v_cache[b,j,kv_h,d],  kv_h = h/(H/H_kv)",
        ],
        menu: msg!("Step through FlashAttention"),
        about: msg!("MHA computed tile by tile with the online softmax: no [B,H,T,T] buffer at all."),
        refuses: &[
            (
                Refusal::Dropout,
                msg!(
                    "the flash variant has no dropout: remove dropout, set mode = \"eval\", or remove \"flash\" from [run].variants"
                ),
            ),
            (
                Refusal::Mistakes,
                msg!(
                    "the mistakes are made in the plain kernels and flash has none: remove \"flash\" from [run].variants"
                ),
            ),
            (
                Refusal::Decode,
                msg!(
                    "flash computes whole sequences tile by tile and has no decoding loop: remove decode or \"flash\" from [run].variants"
                ),
            ),
        ],
        math: &[],
    },
    Descriptor {
        variant: Variant::Gqa,
        name: "gqa",
        title: "GQA",
        file: "crates/core/src/kernels/attention_gqa.rs",
        source: include_str!("kernels/attention_gqa.rs"),
        heads: Heads::Grouped,
        width: Width::D,
        plain: Variant::Gqa,
        fast: true,
        beside: Variant::Baseline,
        compare: Some(Variant::Mha),
        tiled: false,
        latent: false,
        gallery: false,
        sizes: &["B", "S", "T", "C", "H", "H_kv", "D"],
        sum: [
            "att[b,i,h,d] = Σ_j P[b,h,i,j] · v[b,j,kv_h,d],  kv_h = h/(H/H_kv)",
            "att[b,t,h,d] = Σ_{j ≤ t} P[b,h,t,j] · v_cache[b,j,kv_h,d],  kv_h = h/(H/H_kv)",
        ],
        menu: msg!("Step through grouped-query attention"),
        about: msg!("H query heads sharing H_kv key/value heads: head h reads kv head h/(H/H_kv)."),
        refuses: &[],
        // query head `h` reads key/value head `g = h/(H/H_kv)`, and the heads of a group add
        // into the same `dK_g`, `dV_g`
        math: &[
            (
                Phase::Split,
                &["q[i] = qkv[i, 0:C]   k[i] = qkv[i, C:C+H_kv·D]   v[i] = qkv[i, C+H_kv·D:C+2·H_kv·D]"],
            ),
            (
                Phase::SplitBack,
                &[msg!("d_qkv[i] = concat(dq[i], dk[i], dv[i])   (C + 2·H_kv·D channels)")],
            ),
            (
                Phase::Scores,
                &["S_h[i,j] = Q_h[i]·K_g[j] / √D + mask(i,j),  g = kv_h = h/(H/H_kv)"],
            ),
            (
                Phase::WeightedSum,
                &["Y_h[i] = Σ_j P_h[i,j] V_g[j],  g = h/(H/H_kv)   (att[i] = concat_h Y_h[i])"],
            ),
            (
                Phase::WeightedSumBack,
                &[
                    "dP_h[i,j] = dY_h[i]·V_g[j]   dV_g[j] += Σ_i P_h[i,j] dY_h[i]",
                    msg!("dV starts at 0; every query head h of group g adds its share"),
                ],
            ),
            (
                Phase::ScoresBack,
                &[
                    msg!(
                        "dQ_h[i] = Σ_j dS_h[i,j] K_g[j] / √D   dK_g[j] += Σ_i dS_h[i,j] Q_h[i] / √D   (visible pairs only)"
                    ),
                    msg!("dK starts at 0; every query head h of group g adds its share"),
                ],
            ),
        ],
    },
    Descriptor {
        variant: Variant::Mla,
        name: "mla",
        title: "MLA",
        file: "crates/core/src/kernels/attention_mla.rs",
        source: include_str!("kernels/attention_mla.rs"),
        heads: Heads::PerHead,
        width: Width::DPlusRope,
        plain: Variant::Mha,
        fast: true,
        beside: Variant::Mha,
        compare: None,
        tiled: false,
        latent: true,
        gallery: false,
        sizes: &["B", "T", "C", "H", "D", "R", "DR"],
        sum: [
            "att[b,i,h,d] = Σ_j P[b,h,i,j] · v[b,j,h,d]",
            "att[b,t,h,d] = Σ_{j ≤ t} P[b,h,t,j] · v_cache[b,j,kv_h,d],  kv_h = h/(H/H_kv)",
        ],
        menu: msg!("Step through multi-head latent attention"),
        about: msg!(
            "Every head's keys and values projected up from one latent row per token, and a rotary key part the heads share."
        ),
        // its refusals depend on its latent sizes: the scenario reader's check_latent
        refuses: &[],
        // only the rotary part turns: q_nope and the latent hold no position
        math: &[
            (
                Phase::Scores,
                &["S_h[i,j] = (q_nope_h[i]·k_nope_h[j] + q_pe_h[i]·k_pe[j]) / √(D + DR) + mask(i,j)"],
            ),
            (
                Phase::ScoresBack,
                &[
                    "dQ_h[i] = Σ_j dS_h[i,j] [k_nope_h[j] | k_pe[j]] / √(D + DR)   dk_nope_h[j] = Σ_i dS_h[i,j] q_nope_h[i] / √(D + DR)",
                    msg!("dk_pe[j] = Σ_h Σ_i dS_h[i,j] q_pe_h[i] / √(D + DR)   (one rotary key for every head)"),
                ],
            ),
            (
                Phase::DecodeScores,
                &["S_h[t,j] = (q_lat_h[t]·c_kv[j] + q_pe_h[t]·k_pe[j]) / √(D + DR),  j ≤ t"],
            ),
            (
                Phase::Rope,
                &[
                    "x'[d0] = x[d0]·cos(tθ_m) − x[d1]·sin(tθ_m)   x'[d1] = x[d0]·sin(tθ_m) + x[d1]·cos(tθ_m)",
                    msg!("θ_m = base^(−2m/DR), for q_pe and for k_pe; q_nope and c_kv keep no position"),
                ],
            ),
            (
                Phase::RopeBack,
                &[
                    "dx'[d0] = dx[d0]·cos(tθ_m) + dx[d1]·sin(tθ_m)   dx'[d1] = −dx[d0]·sin(tθ_m) + dx[d1]·cos(tθ_m)",
                    msg!("the turn by −tθ_m, for dQ_pe and for dk_pe"),
                ],
            ),
        ],
    },
];

impl Variant {
    pub const ALL: [Variant; 5] = [
        Variant::Baseline,
        Variant::Mha,
        Variant::Flash,
        Variant::Gqa,
        Variant::Mla,
    ];

    /// The variants that run on the same q/k/v inputs, side by side: every one but the latent
    /// ones, which start from their own latent weights and run alone.
    pub const STANDARD: [Variant; 4] = [Variant::Baseline, Variant::Mha, Variant::Flash, Variant::Gqa];

    /// What a scenario runs when `[run].variants` does not say: the two plain kernels.
    pub const DEFAULT: [Variant; 2] = [Variant::Baseline, Variant::Mha];

    /// Everything fixed about this variant.
    pub const fn desc(self) -> &'static Descriptor {
        &DESCRIPTORS[self as usize]
    }

    /// Does this variant's kernel read grouped key/value heads (`H_kv` of them)? The others
    /// read one key/value head per query head.
    pub const fn shares_kv_heads(self) -> bool {
        matches!(self.desc().heads, Heads::Grouped)
    }

    /// Does its kernel have a head dimension at all? (The baseline's one head has none.)
    pub const fn has_heads(self) -> bool {
        !matches!(self.desc().heads, Heads::One)
    }

    /// The sizes `sh` with the key/value heads this variant's kernel reads: `H_kv` in GQA, one
    /// per query head (ungrouped) in the others.
    pub const fn kv_shape(self, sh: Shape) -> Shape {
        if self.shares_kv_heads() { sh } else { sh.full_kv_heads() }
    }

    /// How many heads its kernel sees of a run with `h` heads: one for the baseline.
    pub const fn heads(self, h: usize) -> usize {
        if self.has_heads() { h } else { 1 }
    }

    pub const fn name(self) -> &'static str {
        self.desc().name
    }

    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Does this variant run without `choice`, whatever the scenario says?
    pub fn refuses(self, choice: Refusal) -> bool {
        self.desc().refuses.iter().any(|&(r, _)| r == choice)
    }

    /// The first of `choices` this variant cannot run with, and what to do about it.
    pub fn refusal(self, choices: Choices) -> Option<(Refusal, &'static str)> {
        self.desc().refuses.iter().copied().find(|(r, _)| match r {
            Refusal::Dropout => choices.dropout,
            Refusal::Mistakes => choices.mistakes,
            Refusal::Decode => choices.decode,
        })
    }

    /// Its own equations of `phase`, when it writes that phase its own way.
    pub fn math(self, phase: Phase) -> Option<&'static [&'static str]> {
        self.desc().math.iter().find(|(p, _)| *p == phase).map(|&(_, m)| m)
    }
}

/// The shape a variant's kernel sees: the baseline always has one head, MHA one key/value head
/// per query head, GQA `H_kv` of them ([`Variant::kv_shape`]).
pub const fn kernel_shape(sh: Shape, variant: Variant) -> Shape {
    if variant.has_heads() {
        variant.kv_shape(sh)
    } else {
        sh.single_head()
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
