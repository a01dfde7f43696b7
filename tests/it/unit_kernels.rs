//! Tests of the kernels' helpers (`crates/core/src/kernels/`), one module per source file: what were the
//! `#[cfg(test)]` unit tests of those files, now through the library's public API.

/// `crates/core/src/kernels/attention_mistakes.rs`
mod attention_mistakes {
    use attn_trace_core::kernels::attention_mistakes::*;

    #[test]
    fn names_round_trip_and_sets_hold_what_was_put_in() {
        for m in Mistake::ALL {
            assert_eq!(Mistake::from_name(m.name()), Some(m));
        }
        let set = Mistakes::of(&[Mistake::ScaleBySeqLen, Mistake::SoftmaxOverTwoDims]);
        assert!(set.has(Mistake::ScaleBySeqLen) && set.has(Mistake::SoftmaxOverTwoDims));
        assert!(!set.has(Mistake::MaskByMultiply));
        assert_eq!(set.list(), vec![Mistake::ScaleBySeqLen, Mistake::SoftmaxOverTwoDims]);
        assert!(Mistakes::NONE.is_empty() && !set.is_empty());
    }
}

/// `crates/core/src/kernels/dropout.rs`
mod dropout {
    use attn_trace_core::kernels::dropout::*;

    #[test]
    fn keep_mask_is_seeded_and_keeps_about_one_minus_p() {
        let a = keep_mask(10_000, 0.25, 7);
        assert_eq!(a, keep_mask(10_000, 0.25, 7));
        assert_ne!(a, keep_mask(10_000, 0.25, 8));
        let kept = a.iter().filter(|&&k| k == 1.0).count();
        assert!((7300..7700).contains(&kept), "{kept} of 10000 kept");
        assert!(a.iter().all(|&k| k == 0.0 || k == 1.0));
        assert!(keep_mask(100, 0.0, 1).iter().all(|&k| k == 1.0));
    }
}

/// `crates/core/src/kernels/mod.rs`
mod kernels {
    use attn_trace_core::kernels::*;
    use attn_trace_core::tensor::Shape;

    #[test]
    fn only_gqa_reads_grouped_key_value_heads() {
        let sh = Shape::new(1, 3, 8, 4).with_kv_heads(2);
        assert_eq!(Variant::Gqa.kv_shape(sh), sh);
        for v in [Variant::Baseline, Variant::Mha, Variant::Flash] {
            assert_eq!(v.kv_shape(sh), Shape::new(1, 3, 8, 4), "{v}");
        }
    }

    #[test]
    fn masks_hide_what_they_say_and_nothing_outside_the_matrix_is_visible() {
        assert!(Mask::Causal.hides(0, 1) && !Mask::Causal.hides(1, 1));
        assert!(!Mask::None.hides(0, 5));
        // 2 queries × 3 keys
        let m = Mask::explicit(&[vec![true, false, true], vec![false, true, false]]);
        assert!(!m.hides(0, 0) && m.hides(0, 1) && !m.hides(0, 2));
        assert!(m.hides(1, 0) && !m.hides(1, 1));
        // outside: a fourth key, a third query
        assert!(m.hides(0, 3) && m.hides(2, 0) && m.hides(9, 9));
        assert_eq!(m.visible_pairs(2, 3), 3);
        assert_eq!(Mask::Causal.visible_pairs(2, 5), 1 + 2);
        assert_eq!(Mask::Causal.visible_pairs(3, 2), 1 + 2 + 2);
        for (s, t) in [(0, 0), (0, 3), (3, 0), (1, 1), (4, 4), (5, 5), (7, 3), (3, 7), (6, 9)] {
            let listed = (0..s).map(|i| (i + 1).min(t)).sum::<usize>();
            assert_eq!(Mask::Causal.visible_pairs(s, t), listed, "S={s} T={t}");
        }
    }

    #[test]
    fn a_tile_is_hidden_only_when_every_pair_in_it_is() {
        // causal: keys 2..4 against queries 0..2 lie above the diagonal; 1..3 touch it
        assert!(Mask::Causal.hides_tile(0..2, 2..4));
        assert!(!Mask::Causal.hides_tile(0..2, 1..3));
        assert!(!Mask::Causal.hides_tile(2..4, 0..2));
        assert!(!Mask::None.hides_tile(0..1, 5..9));
        let m = Mask::explicit(&[vec![true, false, false], vec![false, false, true]]);
        assert!(m.hides_tile(0..2, 1..2));
        assert!(!m.hides_tile(0..2, 1..3));
        assert!(!m.hides_tile(0..1, 0..1));
        for i0 in 0..4 {
            for j0 in 0..4 {
                let every = (i0..i0 + 2).all(|i| (j0..j0 + 3).all(|j| Mask::Causal.hides(i, j)));
                assert_eq!(Mask::Causal.hides_tile(i0..i0 + 2, j0..j0 + 3), every, "{i0} {j0}");
            }
        }
    }
}

/// `crates/core/src/kernels/rope.rs`
mod rope {
    use attn_trace_core::kernels::rope::*;

    #[test]
    fn pairs_and_angles_follow_the_two_conventions() {
        assert_eq!(Pairs::Interleaved.channels(1, 8), (2, 3));
        assert_eq!(Pairs::Half.channels(1, 8), (1, 5));
        let r = Rope {
            pairs: Pairs::Half,
            base: 10000.0,
        };
        // θ_1 = 10000^(−2/4) = 0.01, at t = 3: 0.03
        assert!((r.angle(3, 1, 4) - 0.03).abs() < 1e-12);
        let (cos, sin) = tables(r, 3, 4);
        assert_eq!(cos.len(), 6);
        // t = 0 is no rotation at all
        assert_eq!((&cos[..2], &sin[..2]), (&[1.0, 1.0][..], &[0.0, 0.0][..]));
        assert_eq!(cos[2 * 2], 2.0f64.cos() as f32);
        assert_eq!(sin[2 * 2 + 1], 0.02f64.sin() as f32);
    }
}
