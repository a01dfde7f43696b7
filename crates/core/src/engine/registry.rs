//! The buffer registry: every buffer a run can have, declared once — its role, the shape it is
//! reported in, and the layout the variant's kernel indexes it with, each dimension named as the
//! kernel's loop names it (`k`'s row is the key position `j`, not the query `i`).
//!
//! The engine allocates from it, the trace records it, and every panel, `explain`, Compare, the
//! exports and the scenario format read names, shapes, labels and offsets from it. The buffers
//! themselves are declared in one table, [`crate::trace::Buf`]'s (`trace/buffers.rs`): a new
//! buffer is one line there. This module evaluates it for a run.

use super::plan::{Passes, Plan, StartKind};
use crate::kernels::Variant;
use crate::kernels::attention_flash::{FittedTiles, Tiles};
use crate::kernels::attention_mistakes::Mistake;
use crate::kernels::attention_mla::Latent;
use crate::tensor::{Layout, Role, Shape, Spec};
use crate::trace::{Buf, CacheDims, Facts, Sizes};

/// The buffers a run's [`Inputs`](super::Inputs) can give data for, in the order the engine
/// takes them: the start's (x with the fused or the separate projections and, in
/// cross-attention, memory; or q, k and v), the output projection's weights, the sink logits
/// and `d_out`. A scenario's `[values]` are these.
pub const GIVEN: [Buf; 21] = {
    use Buf::*;
    [
        X, Memory, WQkv, BQkv, WQ, BQ, WK, BK, WV, BV, Q, K, V, WDkv, WKr, WUk, WUv, WProj, BProj, Sink, DOut,
    ]
};

/// The stored shape of the data given for `buf` on sizes `sh`: the sizes as given, with `H_kv`
/// key/value heads (the grouped kernel's declaration; the other kernels read those heads
/// repeated, see [`Inputs::for_variant`](super::Inputs::for_variant)).
/// With multi-head latent attention's sizes `latent`, its weights have theirs (and `w_q` is
/// `[C, H·(D + DR)]`).
pub fn given_shape(buf: Buf, sh: Shape, latent: Option<Latent>) -> Vec<usize> {
    // no given buffer is a tile, so the tile sizes do not matter
    let sizes = Sizes {
        kv_rank: latent.map_or(0, |l| l.r),
        rope_dim: latent.map_or(0, |l| l.dr),
        ..sizes(Variant::Gqa, sh, Tiles::default().fit(sh))
    };
    buf.spec(&sizes).shape
}

/// The sizes the buffer table's dimensions are made of, for `variant` on sizes `sh` (flash's
/// tile buffers have the sizes of `tiles`).
pub fn sizes(variant: Variant, sh: Shape, tiles: FittedTiles) -> Sizes {
    // the key/value heads the variant's kernel reads: H_kv in GQA, one per query head otherwise
    let sh = variant.kv_shape(sh);
    let Tiles { br, bc } = tiles.sizes();
    Sizes {
        b: sh.b,
        s: sh.s,
        t: sh.t,
        c: sh.c,
        h: sh.h,
        h_kv: sh.h_kv,
        // flash reads MHA's buffers the way MHA does
        per_head: variant != Variant::Baseline,
        kv_heads: variant == Variant::Gqa,
        br,
        bc,
        cache: CacheDims::Contiguous,
        parts: 0,
        kv_rank: 0,
        rope_dim: 0,
    }
}

/// What a run of `plan` on `variant` computes, as far as the buffer table asks.
pub fn facts(plan: &Plan, variant: Variant, passes: Passes) -> Facts {
    let m = plan.mistakes;
    let decode = plan.decode;
    // a mistake can leave out the input projections, the output projection or the dropout
    let project = !decode && !m.has(Mistake::NoInputProjection);
    Facts {
        from_x: decode || plan.start != StartKind::Qkv,
        fused: project && plan.start == StartKind::Fused,
        separate: project && matches!(plan.start, StartKind::Separate { .. }),
        cross: !decode && plan.start == (StartKind::Separate { cross: true }),
        decode,
        flash: !decode && variant == Variant::Flash,
        dropout: !decode && plan.dropout && !m.has(Mistake::DropoutNotApplied),
        proj: plan.proj && (decode || !m.has(Mistake::NoOutputProjection)),
        rope: plan.rope.is_some(),
        paged: decode && plan.cache.paged.is_some(),
        split: decode && plan.cache.split.is_some(),
        // the kernels that make mistakes (and decoding) have no sink logit
        sink_logit: plan.sink && !decode && m.is_empty(),
        mla: plan.latent().is_some(),
        backward: plan.possible(passes).backward,
        no_bias: !plan.bias,
    }
}

/// Role, level, stored shape and layout of `buf` for `variant` on sizes `sh`.
pub fn declare(buf: Buf, variant: Variant, sh: Shape, tiles: FittedTiles) -> Spec {
    buf.spec(&sizes(variant, sh, tiles))
}

/// The buffers of one run: which exist for a plan, variant and passes, and each one's [`Spec`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registry {
    pub variant: Variant,
    pub shape: Shape,
    specs: Vec<Option<Spec>>,
}

impl Registry {
    /// The buffers a run of `plan` on `variant` has: those of the buffer table present for what
    /// the run computes ([`facts`]). Given `q, k, v` are the run's inputs.
    pub fn new(plan: &Plan, variant: Variant, passes: Passes) -> Registry {
        let plan = &plan.for_variant(variant);
        let facts = facts(plan, variant, passes);
        let sizes = Sizes {
            cache: plan.cache_dims(),
            parts: plan.cache.split.unwrap_or(0),
            kv_rank: plan.latent().map_or(0, |l| l.r),
            rope_dim: plan.latent().map_or(0, |l| l.dr),
            ..sizes(variant, plan.shape, plan.tiles)
        };
        let specs = Buf::ALL
            .iter()
            .map(|&b| {
                b.present(&facts).then(|| {
                    let spec = b.spec(&sizes);
                    match b {
                        Buf::Q | Buf::K | Buf::V if !facts.from_x => Spec {
                            role: Role::Input,
                            ..spec
                        },
                        _ => spec,
                    }
                })
            })
            .collect();
        Registry {
            variant,
            shape: plan.shape,
            specs,
        }
    }

    pub fn get(&self, buf: Buf) -> Option<&Spec> {
        self.specs.get(buf as usize).and_then(Option::as_ref)
    }

    pub fn has(&self, buf: Buf) -> bool {
        self.get(buf).is_some()
    }

    pub fn layout(&self, buf: Buf) -> Option<&Layout> {
        self.get(buf).map(|s| &s.layout)
    }

    /// The present buffers with their specs, in [`Buf`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Buf, &Spec)> {
        Buf::ALL.iter().filter_map(|&b| self.get(b).map(|s| (b, s)))
    }
}
