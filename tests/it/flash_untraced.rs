//! Flash as training runs it (`dispatch::flash_*_untraced`, the vectorised loops of
//! `untraced/flash/`) against flash's reference loops traced (`kernels/attention_flash.rs`,
//! what the tracer shows): `att`, `lse`, `delta`, `d_q`, `d_k` and `d_v` identical bit for bit,
//! for every mask, self- and cross-attention, tiles that divide the sequence or leave a ragged
//! last tile, training's own shapes and tiles, and inputs with infinities, NaN and scores large
//! enough to overflow (a NaN matches a NaN of either sign).

use attn_trace_core::kernels::Mask;
use attn_trace_core::kernels::attention_flash::{BackwardTiles, ForwardTiles, Tiles};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::Logger;
use attn_trace_core::untraced::dispatch;
use attn_trace_model::gpt::Attention;
use proptest::prelude::*;

use crate::support::inputs::{Core, core, half_mask};

/// What a flash forward and backward produce.
struct Out {
    att: Vec<f32>,
    lse: Vec<f32>,
    delta: Vec<f32>,
    d_q: Vec<f32>,
    d_k: Vec<f32>,
    d_v: Vec<f32>,
}

impl Out {
    /// Buffers full of NaN, so an entry left unwritten shows.
    fn nan(sh: Shape) -> Out {
        let Shape { b, s, t, c, h, .. } = sh;
        let nan = |n: usize| vec![f32::NAN; n];
        Out {
            att: nan(b * s * c),
            lse: nan(b * h * s),
            delta: nan(b * h * s),
            d_q: nan(b * s * c),
            d_k: nan(b * t * c),
            d_v: nan(b * t * c),
        }
    }
}

/// The reference loops, traced, with their tile-local buffers.
fn reference(sh: Shape, tiles: Tiles, mask: &Mask, x: &Core) -> Out {
    let tiles = tiles.fit(sh);
    let Tiles { br, bc } = tiles.sizes();
    let d = sh.d();
    let z = |n: usize| vec![0.0f32; n];
    let (mut q_t, mut k_t, mut v_t, mut s_t) = (z(br * d), z(bc * d), z(bc * d), z(br * bc));
    let (mut m, mut l, mut acc) = (z(br), z(br), z(br * d));
    let (mut do_t, mut ds_t, mut dk_t, mut dv_t) = (z(br * d), z(br * bc), z(bc * d), z(bc * d));
    let mut o = Out::nan(sh);
    let mut log = Logger::new();
    let work = ForwardTiles {
        q_t: &mut q_t,
        k_t: &mut k_t,
        v_t: &mut v_t,
        s_t: &mut s_t,
        m: &mut m,
        l: &mut l,
        acc: &mut acc,
    };
    let qkv = (&x.q[..], &x.k[..], &x.v[..]);
    dispatch::flash_forward(&mut log, sh, tiles, mask, qkv, None, &mut o.att, &mut o.lse, work);
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
    let grads = (&mut o.d_q[..], &mut o.d_k[..], &mut o.d_v[..]);
    let saved = (&o.att[..], &o.lse[..]);
    dispatch::flash_backward(
        &mut log,
        sh,
        tiles,
        mask,
        qkv,
        saved,
        &x.d_att,
        (&mut o.delta, None),
        grads,
        work,
    );
    assert!(!log.is_empty(), "the traced run recorded nothing");
    o
}

/// Training's path: no tile-local buffers passed, nothing recorded.
fn untraced(sh: Shape, tiles: Tiles, mask: &Mask, x: &Core) -> Out {
    let tiles = tiles.fit(sh);
    let mut o = Out::nan(sh);
    let qkv = (&x.q[..], &x.k[..], &x.v[..]);
    dispatch::flash_forward_untraced(sh, tiles, mask, qkv, &mut o.att, &mut o.lse);
    let grads = (&mut o.d_q[..], &mut o.d_k[..], &mut o.d_v[..]);
    let saved = (&o.att[..], &o.lse[..]);
    dispatch::flash_backward_untraced(sh, tiles, mask, qkv, saved, &x.d_att, &mut o.delta, grads);
    o
}

/// Untraced against the reference, every output bit for bit.
fn check(sh: Shape, tiles: Tiles, mask: &Mask, x: &Core) {
    let want = reference(sh, tiles, mask, x);
    let got = untraced(sh, tiles, mask, x);
    let pairs = [
        ("att", &got.att, &want.att),
        ("lse", &got.lse, &want.lse),
        ("delta", &got.delta, &want.delta),
        ("d_q", &got.d_q, &want.d_q),
        ("d_k", &got.d_k, &want.d_k),
        ("d_v", &got.d_v, &want.d_v),
    ];
    for (name, got, want) in pairs {
        assert_eq!(got.len(), want.len());
        for (n, (g, w)) in got.iter().zip(want).enumerate() {
            // a NaN is a NaN whatever its sign, which IEEE 754 leaves unspecified: the reference
            // compiled for the baseline CPU and the vectorised loops make NaNs of opposite signs
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{name}[{n}] {sh:?} {tiles:?} {mask:?}: untraced {g:e} ({:#x}) vs reference {w:e} ({:#x})",
                g.to_bits(),
                w.to_bits()
            );
        }
    }
}

fn check_all_masks(sh: Shape, tiles: Tiles, seed: u64) {
    let x = core(sh, 3.0, seed);
    let windows = [(3, 0), (5, 2), (1, 1)].map(|(w, sinks)| Mask::Window { w, sinks });
    for mask in [Mask::Causal, Mask::None, half_mask(sh.s, sh.t, seed)]
        .into_iter()
        .chain(windows)
    {
        check(sh, tiles, &mask, &x);
    }
}

#[test]
fn trainings_tiles_on_trainings_shapes_give_the_references_bits() {
    // the model's heads are D = C/H = 32 channels (and the baseline's one head all of C); D = 56
    // cuts a head into column blocks of 32, 16 and 8 where the AVX-512 copy starts with 32
    let Attention::Flash(tiles) = Attention::FLASH else {
        unreachable!("Attention::FLASH is flash")
    };
    for (b, t, c, h) in [(2, 100, 128, 4), (1, 96, 64, 1), (1, 130, 256, 8), (1, 77, 112, 2)] {
        let sh = Shape::new(b, t, c, h);
        check(sh, tiles, &Mask::Causal, &core(sh, 3.0, t as u64));
    }
}

#[test]
fn ragged_tiles_and_cross_attention_give_the_references_bits() {
    for (br, bc) in [(1, 1), (2, 3), (3, 2), (4, 16), (5, 7), (16, 8), (64, 64)] {
        let tiles = Tiles { br, bc };
        check_all_masks(Shape::new(2, 11, 6, 2), tiles, 1);
        check_all_masks(Shape::cross(1, 7, 13, 8, 1), tiles, 2);
        check_all_masks(Shape::cross(1, 19, 5, 51, 3), tiles, 3);
    }
}

#[test]
fn infinities_nan_and_overflowing_scores_give_the_references_bits() {
    let sh = Shape::new(1, 9, 8, 2);
    let tiles = Tiles { br: 4, bc: 4 };
    let specials = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e30, -1e30, 0.0, -0.0];
    for (n, &bad) in specials.iter().enumerate() {
        let mut x = core(sh, 3.0, 40 + n as u64);
        // one query, one key, one value and one upstream gradient each get the value
        x.q[3] = bad;
        x.k[21] = bad;
        x.v[40] = bad;
        x.d_att[17] = bad;
        for mask in [Mask::Causal, Mask::None, half_mask(9, 9, n as u64)] {
            check(sh, tiles, &mask, &x);
        }
    }
}

proptest! {
    #![proptest_config(crate::support::proptest_config(24))]

    #[test]
    fn random_shapes_and_tiles_give_the_references_bits(
        b in 1usize..3, s in 1usize..24, t in 1usize..24, d in 1usize..20, h in 1usize..4,
        br in 1usize..20, bc in 1usize..20, seed: u64,
    ) {
        check_all_masks(Shape::cross(b, s, t, d * h, h), Tiles { br, bc }, seed);
    }
}
