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
use crate::tensor::{Layout, Role, Shape, Spec};
use crate::trace::{Buf, Facts, Sizes};

/// The buffers a run's [`Inputs`](super::Inputs) can give data for, in the order the engine
/// takes them: the start's (x with the fused or the separate projections and, in
/// cross-attention, memory; or q, k and v), the output projection's weights and `d_out`. A
/// scenario's `[values]` are these.
pub const GIVEN: [Buf; 16] = {
    use Buf::*;
    [
        X, Memory, WQkv, BQkv, WQ, BQ, WK, BK, WV, BV, Q, K, V, WProj, BProj, DOut,
    ]
};

/// The stored shape of the data given for `buf` on sizes `sh`: the sizes as given, with `H_kv`
/// key/value heads (the grouped kernel's declaration; the other kernels read those heads
/// repeated, see [`Inputs::for_variant`](super::Inputs::for_variant)).
pub fn given_shape(buf: Buf, sh: Shape) -> Vec<usize> {
    // no given buffer is a tile, so the tile sizes do not matter
    declare(buf, Variant::Gqa, sh, Tiles::default().fit(sh)).shape
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
        backward: plan.possible(passes).backward,
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
        let sizes = sizes(variant, plan.shape, plan.tiles);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Mask;
    use crate::kernels::attention_mistakes::Mistakes;
    use crate::tensor::Level;

    fn plan(shape: Shape, start: StartKind) -> Plan {
        Plan {
            shape,
            mask: Mask::Causal,
            start,
            proj: true,
            dropout: false,
            mistakes: Mistakes::NONE,
            tiles: Tiles::default().fit(shape),
            rope: None,
            decode: false,
        }
    }

    #[test]
    fn given_data_has_the_sizes_as_given_with_h_kv_key_value_heads() {
        // B = 2, S = 3 queries, T = 5 keys, C = 8 in H = 4 heads of D = 2, H_kv = 2: KV = 4
        let sh = Shape::cross(2, 3, 5, 8, 4).with_kv_heads(2);
        let want: [(Buf, Vec<usize>); 16] = [
            (Buf::X, vec![2, 3, 8]),
            (Buf::Memory, vec![2, 5, 8]),
            (Buf::WQkv, vec![8, 16]),
            (Buf::BQkv, vec![16]),
            (Buf::WQ, vec![8, 8]),
            (Buf::BQ, vec![8]),
            (Buf::WK, vec![8, 4]),
            (Buf::BK, vec![4]),
            (Buf::WV, vec![8, 4]),
            (Buf::BV, vec![4]),
            (Buf::Q, vec![2, 3, 8]),
            (Buf::K, vec![2, 5, 4]),
            (Buf::V, vec![2, 5, 4]),
            (Buf::WProj, vec![8, 8]),
            (Buf::BProj, vec![8]),
            (Buf::DOut, vec![2, 3, 8]),
        ];
        assert_eq!(GIVEN, want.clone().map(|(b, _)| b));
        for (b, shape) in want {
            assert_eq!(given_shape(b, sh), shape, "{b}");
        }
    }

    #[test]
    fn key_rows_are_named_j_and_query_rows_i() {
        let sh = Shape::new(1, 3, 4, 2);
        let mha = Registry::new(&plan(sh, StartKind::Fused), Variant::Mha, Passes::BOTH);
        assert_eq!(mha.layout(Buf::K).unwrap().label(6), "b0 j1 h1 d0");
        assert_eq!(mha.layout(Buf::Q).unwrap().label(10), "b0 i2 h1 d0");
        assert_eq!(mha.layout(Buf::DV).unwrap().names(), ["b", "j", "h", "d"]);
        assert_eq!(mha.layout(Buf::Scores).unwrap().label(16), "b0 h1 i2 j1");
        assert_eq!(mha.get(Buf::K).unwrap().shape, [1, 3, 4]);
        let base = Registry::new(&plan(sh, StartKind::Fused), Variant::Baseline, Passes::BOTH);
        assert_eq!(base.layout(Buf::Scores).unwrap().label(7), "b0 i2 j1");
        assert_eq!(base.layout(Buf::V).unwrap().label(5), "b0 j1 c1");
    }

    #[test]
    fn grouped_keys_and_values_have_h_kv_heads_and_the_fused_projection_is_narrower() {
        // H = 4 query heads of D = 2 over H_kv = 2 key/value heads: k, v [1,3,4] read [b,j,kv_h,d]
        let sh = Shape::new(1, 3, 8, 4).with_kv_heads(2);
        let gqa = Registry::new(&plan(sh, StartKind::Fused), Variant::Gqa, Passes::BOTH);
        assert_eq!(gqa.get(Buf::K).unwrap().shape, [1, 3, 4]);
        assert_eq!(gqa.layout(Buf::DV).unwrap().names(), ["b", "j", "kv_h", "d"]);
        // k_base = ((b*T + j)*H_kv + kv_h)*D = ((0*3 + 1)*2 + 1)*2 = 6
        assert_eq!(gqa.layout(Buf::K).unwrap().label(6), "b0 j1 kv_h1 d0");
        assert_eq!(gqa.get(Buf::WQkv).unwrap().shape, [8, 8 + 2 * 4]);
        assert_eq!(gqa.get(Buf::DBQkv).unwrap().shape, [16]);
        assert_eq!(gqa.get(Buf::Qkv).unwrap().shape, [1, 3, 16]);
        assert_eq!(gqa.layout(Buf::Q).unwrap().sizes(), [1, 3, 4, 2]);
        assert_eq!(gqa.layout(Buf::Scores).unwrap().sizes(), [1, 4, 3, 3]);
        let sep = Registry::new(
            &plan(sh, StartKind::Separate { cross: false }),
            Variant::Gqa,
            Passes::BOTH,
        );
        assert_eq!(sep.get(Buf::WK).unwrap().shape, [8, 4]);
        assert_eq!(sep.get(Buf::DBV).unwrap().shape, [4]);
        assert_eq!(sep.get(Buf::WQ).unwrap().shape, [8, 8]);
        // MHA on the same sizes reads one key/value head per query head
        let mha = Registry::new(&plan(sh, StartKind::Fused), Variant::Mha, Passes::BOTH);
        assert_eq!(mha.get(Buf::K).unwrap().shape, [1, 3, 8]);
        assert_eq!(mha.get(Buf::WQkv).unwrap().shape, [8, 24]);
    }

    #[test]
    fn cross_attention_scores_are_s_rows_of_t() {
        let sh = Shape::cross(1, 2, 5, 4, 2);
        let r = Registry::new(
            &plan(sh, StartKind::Separate { cross: true }),
            Variant::Mha,
            Passes::BOTH,
        );
        assert_eq!(r.layout(Buf::Probs).unwrap().sizes(), [1, 2, 2, 5]);
        assert_eq!(r.layout(Buf::Memory).unwrap().names(), ["b", "j", "c"]);
        assert!(r.has(Buf::DMemory) && r.has(Buf::DWK) && !r.has(Buf::WQkv) && !r.has(Buf::DQkv));
    }

    #[test]
    fn flash_keeps_row_statistics_and_tiles_instead_of_scores() {
        let sh = Shape::new(1, 5, 6, 3);
        let p = Plan {
            tiles: Tiles { br: 2, bc: 3 }.fit(sh),
            ..plan(sh, StartKind::Fused)
        };
        let r = Registry::new(&p, Variant::Flash, Passes::BOTH);
        assert!(!r.has(Buf::Scores) && !r.has(Buf::Probs) && !r.has(Buf::DScores) && !r.has(Buf::DProbs));
        assert_eq!(r.layout(Buf::Lse).unwrap().label(7), "b0 h1 i2");
        assert_eq!(r.layout(Buf::K).unwrap().label(8), "b0 j1 h1 d0");
        let level = |b: Buf| r.get(b).unwrap().level;
        for b in [
            Buf::QTile,
            Buf::KTile,
            Buf::STile,
            Buf::RowMax,
            Buf::RowSum,
            Buf::Acc,
            Buf::DSTile,
            Buf::DKTile,
        ] {
            assert_eq!(level(b), Level::Tile, "{b}");
        }
        for b in [Buf::Q, Buf::Att, Buf::Lse, Buf::Delta, Buf::DQ, Buf::X] {
            assert_eq!(level(b), Level::Global, "{b}");
        }
        assert_eq!(r.get(Buf::STile).unwrap().shape, [2, 3]);
        assert_eq!(r.layout(Buf::KTile).unwrap().names(), ["jj", "d"]);
        assert_eq!(r.layout(Buf::Acc).unwrap().sizes(), [2, 2]);
        // tiles larger than the sequence have as many rows as there are queries
        let big = Plan {
            tiles: Tiles { br: 64, bc: 9 }.fit(sh),
            ..plan(sh, StartKind::Fused)
        };
        let r = Registry::new(&big, Variant::Flash, Passes::FORWARD);
        assert_eq!(r.get(Buf::STile).unwrap().shape, [5, 5]);
        assert!(!r.has(Buf::DSTile) && !r.has(Buf::Delta));
        // the plain kernels keep every buffer in global memory
        let mha = Registry::new(&plan(sh, StartKind::Fused), Variant::Mha, Passes::BOTH);
        assert!(mha.iter().all(|(_, s)| s.level == Level::Global));
    }

    #[test]
    fn presence_follows_the_plan() {
        let sh = Shape::new(1, 3, 4, 2);
        let fwd = Registry::new(&plan(sh, StartKind::Fused), Variant::Mha, Passes::FORWARD);
        assert!(fwd.has(Buf::Qkv) && !fwd.has(Buf::DOut) && !fwd.has(Buf::DropMask));
        let core = Registry::new(
            &Plan {
                proj: false,
                ..plan(sh, StartKind::Qkv)
            },
            Variant::Mha,
            Passes::BOTH,
        );
        assert_eq!(core.get(Buf::Q).unwrap().role, Role::Input);
        assert!(!core.has(Buf::X) && !core.has(Buf::DX) && !core.has(Buf::Out) && core.has(Buf::DQ));
        let present: Vec<&str> = core.iter().map(|(b, _)| b.name()).collect();
        assert_eq!(
            present,
            [
                "q", "k", "v", "scores", "probs", "att", "d_out", "d_att", "d_probs", "d_scores", "d_q", "d_k", "d_v"
            ]
        );
    }
}
