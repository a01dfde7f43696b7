//! FlashAttention against the plain MHA kernel, finite differences and PyTorch; traced against
//! untraced; its event counts against the closed forms, for tile sizes that do and do not
//! divide the sequence.

use crate::support::gradients::check_gradients;
use crate::support::inputs::{explicit, from_qkv, from_x, values};
use crate::support::trace::{closed_form_counts, counted};
use attn_trace_core::engine::{Inputs, Passes, run};
use attn_trace_core::kernels::attention_flash::Tiles;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Phase};

const TILES: [(usize, usize); 7] = [(1, 1), (2, 2), (2, 3), (3, 2), (3, 5), (4, 4), (64, 64)];

fn tiled(inputs: &Inputs, (br, bc): (usize, usize)) -> Inputs {
    inputs.clone().tiled(Tiles { br, bc })
}

/// Every buffer both runs have, compared within `tol` (relative to 1 or the value's size).
fn worst_difference(a: &attn_trace_core::engine::Run, b: &attn_trace_core::engine::Run) -> (f32, Buf) {
    let mut worst = (0.0f32, Buf::Out);
    for (buf, _) in a.registry.iter() {
        if !b.registry.has(buf) {
            continue;
        }
        for (x, y) in a.tensors[buf].iter().zip(&b.tensors[buf]) {
            let d = (x - y).abs() / y.abs().max(1.0);
            if d > worst.0 {
                worst = (d, buf);
            }
        }
    }
    worst
}

#[test]
fn flash_gives_mha_output_and_every_gradient_within_1e_5() {
    let shapes = [
        Shape::new(1, 3, 4, 2),
        Shape::new(2, 5, 6, 3),
        Shape::new(1, 7, 8, 2),
        Shape::new(1, 9, 4, 1),
    ];
    let mut compared = 0;
    for sh in shapes {
        for mask in [Mask::Causal, Mask::None, explicit(sh.s, sh.t)] {
            let base = from_x(sh, mask.clone(), 40);
            let mha = run(&base, Variant::Mha, Passes::BOTH, false);
            for tiles in TILES {
                let flash = run(&tiled(&base, tiles), Variant::Flash, Passes::BOTH, false);
                let (d, buf) = worst_difference(&flash, &mha);
                assert!(d < 1e-5, "{sh:?} {mask:?} {tiles:?}: {buf} differs by {d:e}");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 4 * 3 * TILES.len());
}

/// `n` values `((k·a + b) mod m)/div − off`: exact in f32, and the same numbers the PyTorch
/// script that produced the references below used.
fn pattern(n: usize, (a, b, m): (usize, usize, usize), div: f32, off: f32) -> Vec<f32> {
    (0..n).map(|k| ((k * a + b) % m) as f32 / div - off).collect()
}

fn assert_close(name: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{name}: length");
    for (n, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() < 1e-5, "{name}[{n}]: flash {g}, PyTorch {w}");
    }
}

/// References from PyTorch 2.15 autograd (float32): `softmax(Q·Kᵀ/√D + mask)·V` per head with
/// `masked_fill(-inf)` for the causal mask, then `o.backward(d_out)`; q, k, v, d_out are the
/// [`pattern`]s below, viewed `[B,S,H,D]` and permuted to `[B,H,S,D]`; results flattened back to
/// `[B,S,H,D]`.
#[test]
fn flash_matches_pytorch_autograd() {
    struct Case {
        shape: Shape,
        mask: Mask,
        tiles: (usize, usize),
        att: &'static [f32],
        dq: &'static [f32],
        dk: &'static [f32],
        dv: &'static [f32],
    }
    let cases = [
        Case {
            shape: Shape::new(1, 5, 4, 2),
            mask: Mask::Causal,
            tiles: (2, 3),
            att: &[
                -0.5, 1.0, -1.0, 0.5, -1.149927, 0.350073, 0.824875, -0.22995, -0.5985267, 0.0350941, 0.1343982, -0.5,
                -0.355292, 0.5008771, 0.294802, 0.0538614, -0.4945921, 0.4721849, -0.1647846, -0.2046824,
            ],
            dq: &[
                0.0, 0.0, 0.0, 0.0, -0.070386, 0.0603308, -0.3397558, 0.3963818, 0.0485573, -0.0683736, -0.0753665,
                0.1831373, 0.0534132, -0.076426, -0.1166345, 0.137749, 0.036697, -0.0599328, -0.0735287, 0.0892871,
            ],
            dk: &[
                0.0799229, -0.0369961, 0.2577472, -0.1184854, 0.0562681, -0.2334283, -0.3667195, 0.2673513, -0.0813687,
                0.2031267, 0.1579829, -0.2732259, -0.0548223, 0.1039922, -0.0370336, 0.1203676, 0.0, -0.0366945,
                -0.0119771, 0.0039924,
            ],
            dv: &[
                -0.0260343, 0.9540872, -0.30376, -0.7577216, -0.4824871, 0.3717105, 1.115_295, -0.2868522, -0.2681222,
                0.0237969, 0.4307244, -0.0430487, -0.3687603, -0.0647292, 0.2264242, 0.4936737, -0.1045961, -0.0348654,
                0.0313162, 0.0939486,
            ],
        },
        // cross-attention: S = 3 queries against T = 5 keys, no mask
        Case {
            shape: Shape::cross(1, 3, 5, 4, 2),
            mask: Mask::None,
            tiles: (2, 2),
            att: &[
                -0.2856652, 0.2776498, -0.2658612, -0.1837135, -0.4721849, 0.4945921, -0.2229866, 0.0314405,
                -0.5007249, 0.4671972, -0.211847, -0.1947763,
            ],
            dq: &[
                0.0250687, -0.034154, -0.0588847, -0.148193, 0.0509418, -0.0388652, 0.1906407, 0.1126335, 0.0406785,
                -0.0420504, 0.1828636, 0.0105436,
            ],
            dk: &[
                -0.0223898, 0.0876633, -0.0274672, 0.0094805, -0.0349186, -0.0767795, -0.348334, 0.3344455, -0.0003086,
                -0.0509392, 0.046224, -0.0677179, 0.0592345, 0.0586979, 0.09628, -0.0330333, -0.0016175, -0.0186424,
                0.2332971, -0.2431747,
            ],
            dv: &[
                0.0192208, 0.3009682, 0.0312524, -0.4779561, -0.0484534, 0.2726409, 0.2277904, -0.4225903, 0.0289005,
                0.3148985, 0.0407575, -0.4705625, -0.0378732, 0.2805167, 0.228477, -0.4151083, 0.0382052, 0.3309757,
                0.2217228, -0.4637827,
            ],
        },
    ];
    for case in cases {
        let Shape { b, s, t, c, .. } = case.shape;
        let (queries, keys) = (b * s * c, b * t * c);
        let mut inputs = from_qkv(
            case.shape,
            case.mask,
            pattern(queries, (7, 3, 11), 4.0, 1.25),
            pattern(keys, (5, 1, 13), 8.0, 0.75),
            pattern(keys, (3, 2, 7), 2.0, 1.5),
        );
        inputs.d_out = pattern(queries, (11, 5, 9), 4.0, 1.0);
        let r = run(&tiled(&inputs, case.tiles), Variant::Flash, Passes::BOTH, true);
        assert_close("att", &r.tensors[Buf::Att], case.att);
        assert_close("d_q", &r.tensors[Buf::DQ], case.dq);
        assert_close("d_k", &r.tensors[Buf::DK], case.dk);
        assert_close("d_v", &r.tensors[Buf::DV], case.dv);
    }
}

const FROM_X: &[Buf] = &[Buf::X, Buf::WQkv, Buf::BQkv, Buf::WProj, Buf::BProj];

#[test]
fn flash_matches_finite_differences_with_tiles_that_do_not_divide_t() {
    let inputs = tiled(&from_x(Shape::new(2, 5, 6, 3), Mask::Causal, 14), (2, 3));
    check_gradients(&inputs, Variant::Flash, FROM_X);
    let sh = Shape::new(1, 7, 4, 2);
    let n = 7 * 4;
    let mut core = from_qkv(sh, explicit(7, 7), values(n, 15), values(n, 16), values(n, 17));
    core.d_out = values(n, 18);
    check_gradients(&tiled(&core, (3, 2)), Variant::Flash, &[Buf::Q, Buf::K, Buf::V]);
}

#[test]
fn traced_and_untraced_flash_give_the_same_bits() {
    let passes = [
        Passes::BOTH,
        Passes::FORWARD,
        Passes {
            forward: false,
            backward: true,
        },
    ];
    for mask in [Mask::Causal, Mask::None, explicit(5, 5)] {
        for tiles in TILES {
            for p in passes {
                let inputs = tiled(&from_x(Shape::new(2, 5, 6, 3), mask.clone(), 32), tiles);
                let plain = run(&inputs, Variant::Flash, p, false);
                let traced = run(&inputs, Variant::Flash, p, true);
                assert!(traced.events() > 0 && plain.trace.is_none());
                for (buf, _) in plain.registry.iter() {
                    let bits = |r: &attn_trace_core::engine::Run| {
                        r.tensors[buf].iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                    };
                    assert_eq!(bits(&plain), bits(&traced), "{buf} {mask:?} {tiles:?} {p:?}");
                }
            }
        }
    }
}

#[test]
fn every_flash_phase_matches_its_closed_form_count() {
    let shapes = [
        Shape::new(1, 3, 4, 2),
        Shape::new(2, 5, 6, 3),
        Shape::new(1, 7, 2, 1),
        Shape::cross(2, 3, 5, 4, 2),
        Shape::cross(1, 6, 4, 2, 2),
    ];
    let mut checked = 0;
    for sh in shapes {
        for mask in [Mask::Causal, Mask::None, explicit(sh.s, sh.t)] {
            for tiles in TILES {
                let n = sh.b * sh.s * sh.c;
                let kv = sh.b * sh.t * sh.c;
                let mut inputs = from_qkv(sh, mask.clone(), values(n, 1), values(kv, 2), values(kv, 3));
                inputs.d_out = values(n, 4);
                let inputs = tiled(&inputs, tiles);
                let r = run(&inputs, Variant::Flash, Passes::BOTH, true);
                let t = r.trace.as_ref().unwrap();
                let got = counted(t);
                let want = closed_form_counts(&inputs.plan(), Variant::Flash, Passes::BOTH);
                assert_eq!(got, want, "{sh:?} {mask:?} {tiles:?}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 5 * 3 * TILES.len());
}

#[test]
fn causal_flash_never_loads_a_key_tile_above_the_diagonal() {
    // H = 2 heads of 7 queries and 7 keys
    let sh = Shape::new(1, 7, 4, 2);
    for (br, bc) in TILES {
        let inputs = tiled(&from_x(sh, Mask::Causal, 6), (br, bc));
        let r = run(&inputs, Variant::Flash, Passes::BOTH, true);
        let t = r.trace.as_ref().unwrap();
        let (br, bc) = (br.min(7), bc.min(7));
        let (mut forward_loads, mut backward_loads) = (0, 0);
        for n in 0..t.len() {
            if t.events[n].buf != Buf::K || t.events[n].op != Op::Read {
                continue;
            }
            let v = t.view(n);
            let var = |name| v.vars.iter().find(|(n, _)| *n == name).map(|&(_, x)| x);
            let first = var("jj") == Some(0) && var("d") == Some(0);
            match (v.phase, var("i0"), var("j0")) {
                (Phase::Flash, Some(i0), Some(j0)) => {
                    // the tile's first key is not after its last query
                    assert!(
                        j0 < i0 + br,
                        "({br},{bc}): key tile j0={j0} loaded for query tile i0={i0}"
                    );
                    forward_loads += first as usize;
                }
                (Phase::FlashBack, None, Some(_)) => backward_loads += first as usize,
                other => panic!("k read at #{n} outside a tile load: {other:?}"),
            }
        }
        // forward loads a key tile once per visible pair of tiles, backward once per key tile
        let visible: usize = (0..7)
            .step_by(br)
            .map(|i0| (0..7).step_by(bc).filter(|&j0| j0 < (i0 + br).min(7)).count())
            .sum();
        assert_eq!(
            (forward_loads, backward_loads),
            (2 * visible, 2 * 7usize.div_ceil(bc)),
            "({br},{bc})"
        );
    }
}

#[test]
fn lse_is_the_log_sum_exp_of_each_score_row_and_no_score_is_ever_stored() {
    let sh = Shape::new(2, 5, 6, 3);
    for mask in [Mask::Causal, explicit(5, 5)] {
        let inputs = tiled(&from_x(sh, mask.clone(), 8), (2, 3));
        let mha = run(&inputs, Variant::Mha, Passes::FORWARD, false);
        let flash = run(&inputs, Variant::Flash, Passes::BOTH, false);
        assert!(!flash.registry.has(Buf::Scores) && !flash.registry.has(Buf::Probs));
        let lse = &flash.tensors[Buf::Lse];
        assert_eq!(flash.registry.get(Buf::Lse).unwrap().shape, [2, 3, 5]);
        // lse[b,h,i] = m + ln Σ_j e^(S[b,h,i,j] − m), over the visible keys of MHA's score row
        for (row, scores) in mha.tensors[Buf::Scores].chunks(5).enumerate() {
            let i = row % 5;
            let visible: Vec<f64> = (0..5)
                .filter(|&j| !mask.hides(i, j))
                .map(|j| scores[j] as f64)
                .collect();
            let m = visible.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let want = m + visible.iter().map(|s| (s - m).exp()).sum::<f64>().ln();
            assert!(
                (lse[row] as f64 - want).abs() < 1e-5,
                "row {row}: {} vs {want}",
                lse[row]
            );
        }
    }
}

#[test]
fn flash_runs_after_rotary_positions_and_on_grouped_inputs_like_mha() {
    use attn_trace_core::kernels::rope::{Pairs, Rope};
    // rope turns q and k before flash's loop and d_q, d_k after its backward; grouped inputs
    // (H_kv < H) reach flash as MHA reads them, each key/value head repeated for its group
    let sh = Shape::new(2, 5, 8, 4);
    let cases = [
        (
            sh,
            Some(Rope {
                pairs: Pairs::Half,
                base: 10000.0,
            }),
        ),
        (sh.with_kv_heads(2), None),
        (
            sh.with_kv_heads(1),
            Some(Rope {
                pairs: Pairs::Interleaved,
                base: 100.0,
            }),
        ),
    ];
    for (shape, rope) in cases {
        let kv = shape.kv_c();
        let (b, t, c) = (shape.b, shape.t, shape.c);
        let mut inputs = from_x(shape, Mask::Causal, 51);
        inputs.start = attn_trace_core::engine::Start::X {
            x: values(b * t * c, 52),
            w_qkv: values(c * (c + 2 * kv), 53),
            b_qkv: values(c + 2 * kv, 54),
        };
        inputs.rope = rope;
        let mha = run(&inputs, Variant::Mha, Passes::BOTH, false);
        for tiles in [(2, 2), (3, 2)] {
            let flash = run(&tiled(&inputs, tiles), Variant::Flash, Passes::BOTH, true);
            let (d, buf) = worst_difference(&flash, &mha);
            assert!(d < 1e-5, "{shape:?} {rope:?} {tiles:?}: {buf} differs by {d:e}");
            let phases: Vec<Phase> = flash.trace.as_ref().unwrap().phases.iter().map(|p| p.1).collect();
            assert_eq!(phases.contains(&Phase::Rope), rope.is_some());
            assert!(phases.contains(&Phase::Flash) && !phases.contains(&Phase::Scores));
        }
    }
}
