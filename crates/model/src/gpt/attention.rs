//! The attention core of a layer, forward and backward side by side: which kernel
//! ([`Attention`]: naive or flash) and the untraced calls through [`dispatch`].

use super::{Config, Grads, LayerActs};
use attn_trace_core::kernels::Mask;
use attn_trace_core::kernels::attention_flash::{FittedTiles, Tiles};
use attn_trace_core::tensor::Shape;
use attn_trace_core::untraced::dispatch;

/// Which attention kernel TinyGPT runs: the naive one (baseline for one head, MHA for more),
/// which stores the `[B,H,T,T]` probabilities for backward, or flash, which keeps one tile of
/// them at a time and saves only the row log-sum-exp `lse [B,H,T]` for backward.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Attention {
    #[default]
    Naive,
    Flash(Tiles),
}

impl Attention {
    /// Flash's tiles when training: 64 query rows by 64 key columns (fewer when T is shorter).
    /// With a head of D = 32 channels (the models of the performance tables), a key tile's
    /// packed `kᵀ` and `v` (2 × 64 × 32 floats, 16 KiB) and the score tile (64 × 64 floats,
    /// 16 KiB) fill this machine's 32 KiB L1d, and a head's packed keys (T·D floats: 128 KiB at
    /// T = 1024) stay in its 512 KiB L2. Of the tiles tried from 16 to 128 a side, 64 × 64
    /// trained fastest at T = 1024 (docs/performance.md).
    pub const FLASH: Attention = Attention::Flash(Tiles { br: 64, bc: 64 });

    /// From this sequence length on, flash trains faster than the naive kernel: on the Zen 3
    /// EPYC at T = 256 naive was about 5% faster, at T = 512 flash about 13%; on the Zen 5 EPYC
    /// (AVX-512) they are level at T = 256, flash 1.1–1.3× at T = 512 and 1.7–2.5× from T = 1024
    /// (docs/performance.md).
    pub const FLASH_FROM: usize = 512;

    /// The kernel `train` picks when none is named: flash from [`Attention::FLASH_FROM`] tokens
    /// on when the model has one key/value head per query head (flash's layout), naive otherwise.
    pub const fn for_shape(seq_len: usize, n_heads: usize, n_kv_heads: usize) -> Attention {
        if seq_len >= Attention::FLASH_FROM && n_kv_heads == n_heads {
            Attention::FLASH
        } else {
            Attention::Naive
        }
    }

    /// The kernels by name: naive, and flash with [`Attention::FLASH`]'s tiles.
    pub const ALL: [Attention; 2] = [Attention::Naive, Attention::FLASH];

    /// The name used on the command line and in the train form.
    pub const fn name(self) -> &'static str {
        match self {
            Attention::Naive => "naive",
            Attention::Flash(_) => "flash",
        }
    }

    pub fn from_name(name: &str) -> Option<Attention> {
        Attention::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Flash's tiles fitted to a batch of sizes `sh`, or `None` for the naive kernel.
    fn flash_tiles(self, sh: Shape) -> Option<FittedTiles> {
        match self {
            Attention::Naive => None,
            Attention::Flash(tiles) => Some(tiles.fit(sh)),
        }
    }
}

/// The attention core of one layer, causal (or a sliding window), untraced: through the same dispatcher as the
/// engine, so one head runs the baseline variant, grouped key/value heads the GQA variant and
/// several heads otherwise the MHA variant, on the fast path that `tests/it/kernels_untraced.rs`
/// holds to the traced kernels bit for bit.
pub(super) fn attention_forward(cfg: &Config, attention: Attention, sh: Shape, a: &mut LayerActs) {
    let mask = cfg.mask();
    if let Some(tiles) = attention.flash_tiles(sh) {
        flash_forward(tiles, sh, &mask, a);
        return;
    }
    let v = cfg.variant();
    dispatch::forward_untraced(v, sh, &mask, &a.q, &a.k, &a.v, &mut a.probs, &mut a.att);
}

pub(super) fn attention_backward(cfg: &Config, attention: Attention, sh: Shape, a: &LayerActs, g: &mut Grads) {
    let mask = cfg.mask();
    if let Some(tiles) = attention.flash_tiles(sh) {
        flash_backward(tiles, sh, &mask, a, g);
        return;
    }
    let v = cfg.variant();
    let grads = (&mut g.d_q[..], &mut g.d_k[..], &mut g.d_v[..]);
    dispatch::backward_untraced(v, sh, &mask, (&a.q, &a.k, &a.v, &a.probs), &g.d_att, grads);
}

/// Flash's forward: `att` and `lse` tile by tile.
fn flash_forward(tiles: FittedTiles, sh: Shape, mask: &Mask, a: &mut LayerActs) {
    let qkv = (&a.q[..], &a.k[..], &a.v[..]);
    dispatch::flash_forward_untraced(sh, tiles, mask, qkv, &mut a.att, &mut a.lse);
}

/// Flash's backward: `d_q`, `d_k`, `d_v`, every probability recomputed from `lse`.
fn flash_backward(tiles: FittedTiles, sh: Shape, mask: &Mask, a: &LayerActs, g: &mut Grads) {
    let mut delta = vec![0.0f32; a.lse.len()];
    dispatch::flash_backward_untraced(
        sh,
        tiles,
        mask,
        (&a.q, &a.k, &a.v),
        (&a.att, &a.lse),
        &g.d_att,
        &mut delta,
        (&mut g.d_q, &mut g.d_k, &mut g.d_v),
    );
}
