//! The attention core of a layer, forward and backward side by side: which kernel
//! ([`Attention`]: naive or flash) and the untraced calls through [`dispatch`].

use super::{Config, Grads, LayerActs};
use crate::kernels::Mask;
use crate::kernels::attention_flash::{BackwardTiles, FittedTiles, ForwardTiles, Tiles};
use crate::tensor::Shape;
use crate::trace::NoRecord;
use crate::untraced::dispatch;

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
    /// Flash's tiles when training: 16 query rows by 16 key columns (fewer when T is shorter).
    pub const FLASH: Attention = Attention::Flash(Tiles { br: 16, bc: 16 });

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

/// The attention core of one layer, causal, untraced: through the same dispatcher as the
/// engine, so one head runs the baseline variant, grouped key/value heads the GQA variant and
/// several heads otherwise the MHA variant, on the fast path that `tests/it/kernels_untraced.rs`
/// holds to the traced kernels bit for bit.
pub(super) fn attention_forward(cfg: &Config, attention: Attention, sh: Shape, a: &mut LayerActs) {
    if let Some(tiles) = attention.flash_tiles(sh) {
        flash_forward(tiles, sh, a);
        return;
    }
    let v = cfg.variant();
    dispatch::forward_untraced(v, sh, &Mask::Causal, &a.q, &a.k, &a.v, &mut a.probs, &mut a.att);
}

pub(super) fn attention_backward(cfg: &Config, attention: Attention, sh: Shape, a: &LayerActs, g: &mut Grads) {
    if let Some(tiles) = attention.flash_tiles(sh) {
        flash_backward(tiles, sh, a, g);
        return;
    }
    let v = cfg.variant();
    let grads = (&mut g.d_q[..], &mut g.d_k[..], &mut g.d_v[..]);
    dispatch::backward_untraced(v, sh, &Mask::Causal, (&a.q, &a.k, &a.v, &a.probs), &g.d_att, grads);
}

/// Flash's forward: `att` and `lse` tile by tile, in the tile-local buffers of one call.
fn flash_forward(tiles: FittedTiles, sh: Shape, a: &mut LayerActs) {
    let Tiles { br, bc } = tiles.sizes();
    let d = sh.d();
    let z = |n: usize| vec![0.0f32; n];
    let (mut q_t, mut k_t, mut v_t, mut s_t) = (z(br * d), z(bc * d), z(bc * d), z(br * bc));
    let (mut m, mut l, mut acc) = (z(br), z(br), z(br * d));
    let work = ForwardTiles {
        q_t: &mut q_t,
        k_t: &mut k_t,
        v_t: &mut v_t,
        s_t: &mut s_t,
        m: &mut m,
        l: &mut l,
        acc: &mut acc,
    };
    let qkv = (&a.q[..], &a.k[..], &a.v[..]);
    dispatch::flash_forward(
        &mut NoRecord,
        sh,
        tiles,
        &Mask::Causal,
        qkv,
        &mut a.att,
        &mut a.lse,
        work,
    );
}

/// Flash's backward: `d_q`, `d_k`, `d_v`, every probability recomputed from `lse`.
fn flash_backward(tiles: FittedTiles, sh: Shape, a: &LayerActs, g: &mut Grads) {
    let Tiles { br, bc } = tiles.sizes();
    let d = sh.d();
    let z = |n: usize| vec![0.0f32; n];
    let (mut q_t, mut k_t, mut v_t, mut s_t) = (z(br * d), z(bc * d), z(bc * d), z(br * bc));
    let (mut do_t, mut ds_t, mut dk_t, mut dv_t) = (z(br * d), z(br * bc), z(bc * d), z(bc * d));
    let mut delta = z(a.lse.len());
    let work = BackwardTiles {
        q_t: &mut q_t,
        k_t: &mut k_t,
        v_t: &mut v_t,
        s_t: &mut s_t,
        do_t: &mut do_t,
        ds_t: &mut ds_t,
        dk_t: &mut dk_t,
        dv_t: &mut dv_t,
    };
    dispatch::flash_backward(
        &mut NoRecord,
        sh,
        tiles,
        &Mask::Causal,
        (&a.q, &a.k, &a.v),
        (&a.att, &a.lse),
        &g.d_att,
        &mut delta,
        (&mut g.d_q, &mut g.d_k, &mut g.d_v),
        work,
    );
}
