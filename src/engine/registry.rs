//! The buffer registry: every buffer a run can have, declared once — its role, the shape it is
//! reported in, and the layout the variant's kernel indexes it with, each dimension named as the
//! kernel's loop names it (`k`'s row is the key position `j`, not the query `i`).
//!
//! The engine allocates from it, the trace records it, and every panel, `explain`, Compare, the
//! exports and the scenario format read names, shapes, labels and offsets from it. A new buffer
//! is one arm of [`declare`] and one line of [`Registry::new`].
#![allow(non_snake_case)]

use super::plan::{Passes, Plan, StartKind};
use crate::kernels::Variant;
use crate::kernels::attention_flash::{FittedTiles, Tiles};
use crate::kernels::attention_mistakes::Mistake;
use crate::tensor::{Dim, Layout, Level, Role, Shape, Spec, dim};
use crate::trace::Buf;

/// The buffer whose gradient `buf` is (`d_q` → `q`), for gradient buffers.
pub const fn primal(buf: Buf) -> Option<Buf> {
    use Buf::*;
    Some(match buf {
        DOut => Out,
        DAtt => Att,
        DProbs => Probs,
        DProbsDrop => ProbsDrop,
        DScores => Scores,
        DQ => Q,
        DK => K,
        DV => V,
        DQkv => Qkv,
        DX => X,
        DMemory => Memory,
        DWQkv => WQkv,
        DBQkv => BQkv,
        DWProj => WProj,
        DBProj => BProj,
        DWQ => WQ,
        DBQ => BQ,
        DWK => WK,
        DBK => BK,
        DWV => WV,
        DBV => BV,
        _ => return None,
    })
}

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

/// Role, level, stored dimensions and (when the kernel reads it differently) the viewed
/// dimensions of `buf` for `variant` on sizes `sh` (flash's tile buffers have the sizes of
/// `tiles`). Gradients are declared through the buffer they belong to.
pub fn declare(buf: Buf, variant: Variant, sh: Shape, tiles: FittedTiles) -> Spec {
    // the key/value heads the variant's kernel reads: H_kv in GQA, one per query head otherwise
    let sh = variant.kv_shape(sh);
    let Shape {
        b: B,
        s: S,
        t: T,
        c: C,
        h: H,
        h_kv: H_kv,
    } = sh;
    let D = sh.d();
    let KV = sh.kv_c();
    // flash reads MHA's buffers the way MHA does
    let mha = variant != Variant::Baseline;
    // a row of channels: the query rows are walked by `i`, the key/value rows by `j`
    let channels = |row: Dim| vec![dim("b", B), row, dim("c", C)];
    // a key/value row: `H_kv·D` channels (C unless grouped)
    let kv_channels = |row: Dim| vec![dim("b", B), row, dim("c", KV)];
    // the same rows as the variant's kernel reads them: per head in MHA
    let heads = |row: Dim| {
        if mha {
            vec![dim("b", B), row, dim("h", H), dim("d", D)]
        } else {
            channels(row)
        }
    };
    // key/value rows per key/value head: `kv_h` in GQA, the query head `h` in MHA
    let kv_heads = |row: Dim| match variant {
        Variant::Gqa => vec![dim("b", B), row, dim("kv_h", H_kv), dim("d", D)],
        _ => heads(row),
    };
    // one score per (query i, key j), per head in MHA
    let pairs = if mha {
        vec![dim("b", B), dim("h", H), dim("i", S), dim("j", T)]
    } else {
        vec![dim("b", B), dim("i", S), dim("j", T)]
    };
    let (i, j) = (dim("i", S), dim("j", T));
    // one number per query row of each head: flash's log-sum-exp and backward's D_i
    let rows = vec![dim("b", B), dim("h", H), dim("i", S)];
    // flash's tile-local working set: rows `ii` of a query tile, rows `jj` of a key tile
    let Tiles { br, bc } = tiles.sizes();
    let tile = |role: Role, dims: Vec<Dim>| Spec {
        role,
        level: Level::Tile,
        shape: dims.iter().map(|d| d.size).collect(),
        layout: Layout::new(dims),
    };
    // the rotation tables: one angle per position t and channel pair m of a head (D = C in the
    // baseline's single head)
    let half = if mha { D / 2 } else { C / 2 };
    let weights = |oc: usize| vec![dim("c", C), dim("o", oc)];
    let bias = |oc: usize| vec![dim("o", oc)];
    let (role, stored, view) = match buf {
        Buf::X => (Role::Input, channels(i), None),
        Buf::Memory => (Role::Input, channels(j), None),
        Buf::DOut => (Role::Input, channels(i), None),
        Buf::DropMask => (Role::Input, pairs, None),
        // q, k and v side by side: column blocks at 0, C and C + H_kv·D (3C unless grouped)
        Buf::WQkv => (Role::Parameter, weights(C + 2 * KV), None),
        Buf::BQkv => (Role::Parameter, bias(C + 2 * KV), None),
        Buf::WQ | Buf::WProj => (Role::Parameter, weights(C), None),
        Buf::BQ | Buf::BProj => (Role::Parameter, bias(C), None),
        Buf::WK | Buf::WV => (Role::Parameter, weights(KV), None),
        Buf::BK | Buf::BV => (Role::Parameter, bias(KV), None),
        // the fused projection's rows are the keys' positions (self-attention: S = T)
        Buf::Qkv => (
            Role::Activation,
            vec![dim("b", B), dim("i", T), dim("c", C + 2 * KV)],
            None,
        ),
        Buf::Q => (Role::Activation, channels(i), Some(heads(i))),
        Buf::K | Buf::V => (Role::Activation, kv_channels(j), Some(kv_heads(j))),
        // a decode run's caches: row j holds position j's key (value), written at step j
        Buf::KCache | Buf::VCache => (Role::Activation, kv_channels(j), Some(kv_heads(j))),
        Buf::RopeCos | Buf::RopeSin => (Role::Input, vec![dim("t", T), dim("m", half)], None),
        Buf::Scores | Buf::Probs | Buf::ProbsDrop => (Role::Activation, pairs, None),
        // `att [B,S,H,D]` is `[B,S,C]` in memory: the heads concatenated by the layout itself
        Buf::Att => (Role::Activation, heads(i), None),
        Buf::Out => (Role::Activation, channels(i), None),
        Buf::Lse => (Role::Activation, rows, None),
        Buf::Delta => (Role::Gradient, rows, None),
        Buf::QTile | Buf::Acc => return tile(Role::Activation, vec![dim("ii", br), dim("d", D)]),
        Buf::KTile | Buf::VTile => return tile(Role::Activation, vec![dim("jj", bc), dim("d", D)]),
        Buf::STile => return tile(Role::Activation, vec![dim("ii", br), dim("jj", bc)]),
        Buf::RowMax | Buf::RowSum => return tile(Role::Activation, vec![dim("ii", br)]),
        Buf::DOTile => return tile(Role::Gradient, vec![dim("ii", br), dim("d", D)]),
        Buf::DSTile => return tile(Role::Gradient, vec![dim("ii", br), dim("jj", bc)]),
        Buf::DKTile | Buf::DVTile => return tile(Role::Gradient, vec![dim("jj", bc), dim("d", D)]),
        grad => {
            let of = primal(grad).unwrap_or(grad);
            let spec = declare(of, variant, sh, tiles);
            return Spec {
                role: Role::Gradient,
                ..spec
            };
        }
    };
    Spec {
        role,
        level: Level::Global,
        shape: stored.iter().map(|d| d.size).collect(),
        layout: Layout::new(view.unwrap_or(stored)),
    }
}

/// The buffers of one run: which exist for a plan, variant and passes, and each one's [`Spec`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Registry {
    pub variant: Variant,
    pub shape: Shape,
    specs: Vec<Option<Spec>>,
}

impl Registry {
    /// The buffers a run of `plan` on `variant` has: what it starts from, what its forward pass
    /// computes, and with a backward pass every gradient. Weights a mistake leaves out (no input
    /// or output projection) are absent.
    pub fn new(plan: &Plan, variant: Variant, passes: Passes) -> Registry {
        let plan = &plan.for_variant(variant);
        let m = plan.mistakes;
        let backward = plan.possible(passes).backward;
        let mut has = vec![false; Buf::ALL.len()];
        let mut add = |bufs: &[Buf]| bufs.iter().for_each(|&b| has[b as usize] = true);
        let project = !m.has(Mistake::NoInputProjection);
        use Buf::*;
        if plan.rope.is_some() {
            add(&[RopeCos, RopeSin]);
        }
        if plan.decode {
            // token by token from x: q, the caches and the score rows; no qkv, k or v of the
            // whole sequence, and no backward pass
            add(&[X, WQkv, BQkv, Q, KCache, VCache, Scores, Probs, Att]);
            if plan.proj {
                add(&[WProj, BProj, Out]);
            }
            return Registry::from_presence(plan, variant, &has);
        }
        match plan.start {
            StartKind::Fused => {
                add(&[X, Q, K, V]);
                if project {
                    add(&[WQkv, BQkv, Qkv]);
                }
            }
            StartKind::Separate { cross } => {
                add(&[X, Q, K, V]);
                if cross {
                    add(&[Memory]);
                }
                if project {
                    add(&[WQ, BQ, WK, BK, WV, BV]);
                }
            }
            StartKind::Qkv => add(&[Q, K, V]),
        }
        let flash = variant == Variant::Flash;
        if flash {
            // no scores, no probabilities: the row statistics and the tiles instead
            add(&[Att, Lse, QTile, KTile, VTile, STile, RowMax, RowSum, Acc]);
        } else {
            add(&[Scores, Probs, Att]);
        }
        if plan.dropout && !m.has(Mistake::DropoutNotApplied) {
            add(&[DropMask, ProbsDrop]);
        }
        if plan.proj && !m.has(Mistake::NoOutputProjection) {
            add(&[WProj, BProj, Out]);
        }
        if backward && flash {
            add(&[DOut, DAtt, DQ, DK, DV, Delta, DOTile, DSTile, DKTile, DVTile]);
        } else if backward {
            add(&[DOut, DAtt, DProbs, DScores, DQ, DK, DV]);
        }
        if backward {
            // every buffer that is not given data has a gradient when it exists
            let grads: Vec<Buf> = Buf::ALL
                .iter()
                .copied()
                .filter(|&g| primal(g).is_some_and(|p| has[p as usize]))
                .collect();
            for g in grads {
                has[g as usize] = true;
            }
        }
        Registry::from_presence(plan, variant, &has)
    }

    /// The specs of the buffers marked in `has` (indexed by [`Buf`]).
    fn from_presence(plan: &Plan, variant: Variant, has: &[bool]) -> Registry {
        use Buf::*;
        let start_given = plan.start == StartKind::Qkv && !plan.decode;
        let specs = Buf::ALL
            .iter()
            .map(|&b| {
                has[b as usize].then(|| {
                    let spec = declare(b, variant, plan.shape, plan.tiles);
                    match b {
                        Q | K | V if start_given => Spec {
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
        let sh = Shape::cross(2, 3, 5, 8, 4).grouped(2);
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
        let sh = Shape::new(1, 3, 8, 4).grouped(2);
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
