//! Tests of shapes, layouts and the SIMD `exp` (`crates/core/src/tensor/`), one module per source file: what
//! were the `#[cfg(test)]` unit tests of those files, now through the library's public API.

/// `crates/core/src/tensor/mod.rs`
mod tensor {
    use attn_trace_core::tensor::*;

    #[test]
    fn ravel_and_unravel_match_the_docs_offsets() {
        // off(b,h,i,j) = ((b*H + h)*T + i)*T + j with B=1, H=2, T=3: head 1, i=2, j=1 → 16.
        assert_eq!(ravel(&[1, 2, 3, 3], &[0, 1, 2, 1]), 16);
        assert_eq!(unravel(&[1, 2, 3, 3], 16), vec![0, 1, 2, 1]);
        // q_base = ((bb*S + i)*H + hh)*D with T=3, H=2, D=2: i=2, h=1 → 10.
        assert_eq!(ravel(&[1, 3, 2, 2], &[0, 2, 1, 0]), 10);
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
    }

    #[test]
    fn shape_serialises_s_only_for_cross_attention() {
        let own = serde_json::to_string(&Shape::new(1, 3, 4, 2)).unwrap();
        assert_eq!(own, r#"{"B":1,"T":3,"C":4,"H":2}"#);
        let cross = serde_json::to_string(&Shape::cross(1, 2, 5, 4, 2)).unwrap();
        assert_eq!(cross, r#"{"B":1,"S":2,"T":5,"C":4,"H":2}"#);
        let gqa = serde_json::to_string(&Shape::new(1, 3, 8, 4).with_kv_heads(2)).unwrap();
        assert_eq!(gqa, r#"{"B":1,"T":3,"C":8,"H":4,"H_kv":2}"#);
    }

    #[test]
    fn layouts_name_their_dimensions_and_agree_with_ravel() {
        // MHA's k view [B,T,H,D] = [1,3,2,2]: key row j=1, head 1, channel 0 is k_base = 6
        let k = Layout::new(vec![dim("b", 1), dim("j", 3), dim("h", 2), dim("d", 2)]);
        assert_eq!(k.offset(&[0, 1, 1, 0]), Some(6));
        assert_eq!(k.label(6), "b0 j1 h1 d0");
        assert_eq!((k.row_dim(), k.is_pairs()), (Some(1), false));
        assert_eq!(k.offset(&[0, 3, 0, 0]), None);
        assert_eq!(k.offset(&[0, 1, 1]), None);
        assert_eq!((k.stride(1), k.stride(3), k.len()), (4, 1, 12));
        // cross-attention scores [B,H,S,T] = [1,2,2,5]: rows of T = 5, not S
        let s = Layout::new(vec![dim("b", 1), dim("h", 2), dim("i", 2), dim("j", 5)]);
        assert_eq!(s.offset(&[0, 1, 1, 3]), Some(18));
        assert_eq!(s.index(18), vec![0, 1, 1, 3]);
        assert_eq!(s.sizes_text(), "[1,2,2,5]");
        assert_eq!((s.row_dim(), s.is_pairs()), (Some(2), true));
        assert_eq!((s.coord(18, "h"), s.coord(18, "j"), s.coord(18, "d")), (1, 3, 0));
        assert_eq!(s.offset_of(&[("h", 1), ("i", 1), ("j", 3)]), Some(18));
        let base = Layout::new(vec![dim("b", 1), dim("i", 3), dim("j", 3)]);
        assert_eq!(base.offset_of(&[("b", 0), ("h", 0), ("i", 2), ("j", 1)]), Some(7));
        assert_eq!(base.offset_of(&[("h", 1), ("i", 2), ("j", 1)]), None);
    }

    #[test]
    fn head_size_divides_channels() {
        let sh = Shape::new(1, 3, 4, 2);
        assert_eq!(sh.d(), 2);
        assert_eq!(sh.single_head().d(), 4);
        let g = Shape::new(1, 3, 8, 4).with_kv_heads(2);
        assert_eq!((g.group(), g.kv_c(), g.full_kv_heads().kv_c()), (2, 4, 8));
        assert_eq!((g.single_head().h, g.single_head().h_kv), (1, 1));
    }
}

/// `crates/core/src/tensor/simd.rs`
mod simd {
    use attn_trace_core::tensor::simd::*;

    /// Distance in units in the last place between two positive floats.
    fn ulps(a: f32, b: f32) -> u32 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn exp_is_within_one_ulp_of_std_over_its_range() {
        let mut worst = (0, 0.0);
        let mut x = -87.0f32;
        while x <= 88.0 {
            let d = ulps(exp(x), x.exp());
            if d > worst.0 {
                worst = (d, x);
            }
            x += 0.000_37;
        }
        assert!(worst.0 <= 1, "{} ulp at x = {}", worst.0, worst.1);
    }

    #[test]
    fn exp_exact_points_and_limits() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert!(ulps(exp(1.0), std::f32::consts::E) <= 1);
        assert_eq!(exp(-87.5), 0.0);
        assert_eq!(exp(-1e9), 0.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(88.5), f32::INFINITY);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert!(exp(f32::NAN).is_nan());
    }
}
