//! Tests of buffers and events (`crates/core/src/trace/`), one module per source file: what were the
//! `#[cfg(test)]` unit tests of those files, now through the library's public API.

/// `crates/core/src/trace/buffers.rs`
mod buffers {
    use attn_trace_core::tensor::Role;
    use attn_trace_core::trace::{Buf, Facts, Sizes};

    #[test]
    fn a_gradient_is_named_after_its_buffer_and_has_its_layout() {
        let sz = Sizes {
            b: 1,
            s: 3,
            t: 3,
            c: 8,
            h: 4,
            h_kv: 2,
            per_head: true,
            kv_heads: true,
            br: 2,
            bc: 2,
            cache: attn_trace_core::trace::CacheDims::default(),
            parts: 0,
            kv_rank: 0,
            rope_dim: 0,
        };
        let grads: Vec<Buf> = Buf::ALL.iter().copied().filter(|b| b.primal().is_some()).collect();
        assert_eq!(grads.len(), 29);
        for g in grads {
            let p = g.primal().unwrap();
            assert_eq!(g.name(), format!("d_{}", p.name()));
            assert_eq!(g.spec(&sz).layout, p.spec(&sz).layout, "{g}");
        }
        // d_k of grouped keys: [b, j, kv_h, d], stored as rows of H_kv·D = 4 channels
        assert_eq!(Buf::DK.spec(&sz).layout.names(), ["b", "j", "kv_h", "d"]);
        assert_eq!(Buf::DK.spec(&sz).shape, [1, 3, 4]);
        assert_eq!(Buf::DK.spec(&sz).role, Role::Gradient);
    }

    #[test]
    fn a_gradient_exists_on_a_backward_run_that_has_its_buffer() {
        let fwd = Facts {
            from_x: true,
            fused: true,
            proj: true,
            ..Facts::default()
        };
        let bwd = Facts { backward: true, ..fwd };
        assert!(Buf::Qkv.present(&fwd) && !Buf::DQkv.present(&fwd) && Buf::DQkv.present(&bwd));
        assert!(!Buf::DWQ.present(&bwd), "no separate projections, no d_w_q");
        assert!(!Buf::Lse.present(&bwd) && !Buf::Delta.present(&bwd));
        let flash = Facts { flash: true, ..bwd };
        assert!(Buf::Delta.present(&flash) && !Buf::DScores.present(&flash));
    }
}

/// `crates/core/src/trace/mod.rs`
mod trace {
    use attn_trace_core::trace::*;

    #[test]
    fn names_round_trip() {
        for &b in Buf::ALL {
            assert_eq!(Buf::from_name(b.name()), Some(b));
        }
        for &p in Phase::ALL {
            assert_eq!(Phase::from_name(p.name()), Some(p));
        }
        assert_eq!(Buf::from_name("scores"), Some(Buf::Scores));
        assert_eq!(Phase::ScoresBack.pass(), Pass::Backward);
    }

    #[test]
    fn event_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Event>(), 16);
        assert_eq!(std::mem::size_of::<Frame>(), 28);
    }
}
