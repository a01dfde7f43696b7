//! Tests of the engine's counts, plan and registry (`crates/core/src/engine/`), one module per source file:
//! what were the `#[cfg(test)]` unit tests of those files, now through the library's public API.

/// `crates/core/src/engine/count.rs`
mod count {
    use attn_trace_core::engine::count::*;

    #[test]
    fn sums_and_products_just_above_u64_max_are_over_and_stay_over() {
        let max = Count::from(u64::MAX);
        assert_eq!(max.get(), Some(u64::MAX));
        assert_eq!((max + 1).get(), None);
        assert_eq!((Count::from(1u64 << 32) * Count::from(1u64 << 32)).get(), None);
        assert_eq!(
            (Count::from((1u64 << 32) - 1) * Count::from((1u64 << 32) + 1)).get(),
            Some(u64::MAX)
        );
        // over stays over, but for a product with zero
        assert_eq!((Count::OVER + 0).get(), None);
        assert_eq!((Count::OVER * 1).get(), None);
        assert_eq!((Count::OVER * Count::ZERO).get(), Some(0));
        assert_eq!(
            [Count::from(u64::MAX), Count::from(1u64)].into_iter().sum::<Count>(),
            Count::OVER
        );
        assert!(Count::OVER.exceeds(u64::MAX) && max.exceeds(u64::MAX - 1) && !max.exceeds(u64::MAX));
        assert_eq!(Count::OVER.to_string(), "more than 18446744073709551615");
        assert_eq!(Count::from(17u64).to_string(), "17");
    }
}

/// `crates/core/src/engine/plan/`
mod plan {
    use attn_trace_core::engine::Count;
    use attn_trace_core::engine::plan::*;
    use attn_trace_core::kernels::attention_flash::{FittedTiles, Tiles};
    use attn_trace_core::kernels::attention_mistakes::Mistakes;
    use attn_trace_core::kernels::{Mask, Variant};
    use attn_trace_core::tensor::Shape;

    /// The tile pairs flash visits, listed one by one as its loops do.
    fn listed(s: usize, t: usize, tiles: FittedTiles, mask: &Mask) -> TileSums {
        let Tiles { br, bc } = tiles.sizes();
        let cut = |n: usize, w: usize| (0..n).step_by(w).map(move |a| a..(a + w).min(n));
        let mut acc = TileSums::default();
        for rows in cut(s, br) {
            for cols in cut(t, bc) {
                if !mask.hides_tile(rows.clone(), cols.clone()) {
                    let (nr, nc) = (Count::from(rows.len()), Count::from(cols.len()));
                    acc.pairs += Count::from(1u64);
                    acc.rows += nr;
                    acc.cols += nc;
                    acc.cells += nr * nc;
                }
            }
        }
        acc
    }

    #[test]
    fn tile_sums_in_closed_form_are_the_listed_ones() {
        let stripes = Mask::explicit(
            &(0..7)
                .map(|i| (0..5).map(|j| (i + j) % 3 != 1).collect())
                .collect::<Vec<_>>(),
        );
        for (s, t) in [(1, 1), (5, 5), (7, 5), (5, 7), (8, 8), (3, 11)] {
            for (br, bc) in [(1, 1), (2, 2), (2, 3), (3, 2), (4, 4), (16, 16)] {
                let shape = Shape::cross(1, s, t, 2, 1);
                let tiles = Tiles { br, bc }.fit(shape);
                let mut masks = vec![Mask::None, Mask::Causal];
                if (s, t) == (7, 5) {
                    masks.push(stripes.clone());
                }
                for mask in &masks {
                    assert_eq!(
                        TileSums::new(s, t, tiles, mask),
                        listed(s, t, tiles, mask),
                        "S={s} T={t} br={br} bc={bc} {}",
                        mask.name()
                    );
                }
            }
        }
    }

    #[test]
    fn a_sum_over_tiles_is_read_off_four_values_of_its_terms() {
        let sums = TileSums {
            pairs: Count::from(3u64),
            rows: Count::from(7u64),
            cols: Count::from(11u64),
            cells: Count::from(29u64),
        };
        let f = |nr: u64, nc: u64| 5 + 2 * nr + 3 * nc + 4 * nr * nc;
        assert_eq!(sums.sum(f).get(), Some(5 * 3 + 2 * 7 + 3 * 11 + 4 * 29));
    }

    #[test]
    fn flash_with_the_largest_sequence_and_one_by_one_tiles_is_counted_at_once() {
        // about 5·10¹¹ visited tile pairs: listing them took 2 GB before any budget was checked
        let t = attn_trace_core::scenario::MAX_SIZE;
        let shape = Shape::new(1, t, 1, 1);
        let plan = Plan {
            shape,
            mask: Mask::Causal,
            start: StartKind::Qkv,
            proj: false,
            dropout: false,
            mistakes: Mistakes::NONE,
            rope: None,
            decode: false,
            cache: attn_trace_core::kernels::decode::CacheSpec::default(),
            tiles: Tiles { br: 1, bc: 1 }.fit(shape),
            sink: false,
            bias: true,
        };
        let start = std::time::Instant::now();
        let n = estimate_events(&plan, Variant::Flash, Passes::BOTH);
        assert!(n.exceeds(1 << 40), "{n}");
        assert!(
            start.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
    }
}

/// `crates/core/src/engine/registry.rs`
mod registry {
    use attn_trace_core::engine::registry::*;
    use attn_trace_core::engine::{Passes, Plan, StartKind};
    use attn_trace_core::kernels::attention_flash::Tiles;
    use attn_trace_core::kernels::attention_mistakes::Mistakes;
    use attn_trace_core::kernels::{Mask, Variant};
    use attn_trace_core::tensor::{Level, Role, Shape};
    use attn_trace_core::trace::Buf;

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
            cache: attn_trace_core::kernels::decode::CacheSpec::default(),
            sink: false,
            bias: true,
        }
    }

    #[test]
    fn given_data_has_the_sizes_as_given_with_h_kv_key_value_heads() {
        // B = 2, S = 3 queries, T = 5 keys, C = 8 in H = 4 heads of D = 2, H_kv = 2: KV = 4
        let sh = Shape::cross(2, 3, 5, 8, 4).with_kv_heads(2);
        let want: [(Buf, Vec<usize>); 21] = [
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
            // multi-head latent attention's, here of no latent: see below
            (Buf::WDkv, vec![8, 0]),
            (Buf::WKr, vec![8, 0]),
            (Buf::WUk, vec![0, 8]),
            (Buf::WUv, vec![0, 8]),
            (Buf::WProj, vec![8, 8]),
            (Buf::BProj, vec![8]),
            (Buf::Sink, vec![4]),
            (Buf::DOut, vec![2, 3, 8]),
        ];
        assert_eq!(GIVEN, want.clone().map(|(b, _)| b));
        for (b, shape) in want {
            assert_eq!(given_shape(b, sh, None), shape, "{b}");
        }
        // with a latent of R = 3 and DR = 2: w_q is [C, H·(D + DR)] = [8, 16]
        let lat = Some(attn_trace_core::kernels::attention_mla::Latent { r: 3, dr: 2 });
        let sh = Shape::new(2, 5, 8, 4);
        for (b, shape) in [
            (Buf::WQ, vec![8, 16]),
            (Buf::WDkv, vec![8, 3]),
            (Buf::WKr, vec![8, 2]),
            (Buf::WUk, vec![3, 8]),
            (Buf::WUv, vec![3, 8]),
            (Buf::X, vec![2, 5, 8]),
        ] {
            assert_eq!(given_shape(b, sh, lat), shape, "{b}");
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
        // k_base = ((bb*T + j)*H_kv + kv_h)*D = ((0*3 + 1)*2 + 1)*2 = 6
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
