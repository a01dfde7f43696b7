//! Sliding windows and attention sinks (`Mask::Window`): the same accesses and bits as the
//! explicit band mask they stand for, the causal mask when the window is as long as the
//! sequence, finite differences through the band, flash's closed-form counts and the key tiles
//! it skips, and a worked row.

use crate::support::gradients::check_gradients;
use crate::support::inputs::{from_qkv, from_x, values};
use crate::support::trace::{closed_form_counts, counted};
use attn_trace_core::engine::plan::TileSums;
use attn_trace_core::engine::{Inputs, Passes, Run, run};
use attn_trace_core::kernels::attention_flash::Tiles;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Phase};

/// (window, sinks): one key, narrow, narrow with sinks, sinks past the window, wider than T.
const WINDOWS: [(usize, usize); 6] = [(1, 0), (2, 0), (3, 1), (2, 3), (4, 2), (12, 0)];

/// The window written out cell by cell: query `i` sees `j ≤ i` with `i − w < j` or `j < sinks`.
fn band(s: usize, t: usize, w: usize, sinks: usize) -> Mask {
    let rows: Vec<Vec<bool>> = (0..s)
        .map(|i| (0..t).map(|j| j <= i && (j + w > i || j < sinks)).collect())
        .collect();
    Mask::explicit(&rows)
}

fn with_mask(inputs: &Inputs, mask: Mask) -> Inputs {
    let mut x = inputs.clone();
    x.mask = mask;
    x
}

/// Every event (buffer, read or write, offset, value's bits, line) and every tensor's bits.
fn assert_same_run(a: &Run, b: &Run, what: &str) {
    let (ta, tb) = (a.trace.as_ref().unwrap(), b.trace.as_ref().unwrap());
    assert_eq!(ta.len(), tb.len(), "{what}: event counts");
    for n in 0..ta.len() {
        let (x, y) = (&ta.events[n], &tb.events[n]);
        assert!(
            (x.buf, x.op, x.offset, x.value.to_bits(), x.line) == (y.buf, y.op, y.offset, y.value.to_bits(), y.line),
            "{what}: event #{n} differs: {x:?} vs {y:?}"
        );
    }
    for (buf, _) in a.registry.iter() {
        let bits = |r: &Run| r.tensors[buf].iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(a), bits(b), "{what}: {buf}");
    }
}

#[test]
fn a_window_records_exactly_what_its_explicit_band_mask_records() {
    let shapes = [
        Shape::new(1, 7, 4, 2),
        Shape::new(2, 9, 6, 3),
        Shape::new(1, 8, 8, 4).with_kv_heads(2),
    ];
    let mut compared = 0;
    for sh in shapes {
        let base = from_x(sh, Mask::Causal, 70).tiled(Tiles { br: 2, bc: 3 });
        for (w, sinks) in WINDOWS {
            let window = with_mask(&base, Mask::Window { w, sinks });
            let explicit = with_mask(&base, band(sh.s, sh.t, w, sinks));
            let variants = if sh.shares_kv_heads() {
                vec![Variant::Gqa, Variant::Flash]
            } else {
                vec![Variant::Mha, Variant::Flash, Variant::Gqa]
            };
            for v in variants {
                let a = run(&window, v, Passes::BOTH, true);
                let b = run(&explicit, v, Passes::BOTH, true);
                assert_same_run(&a, &b, &format!("{sh:?} w={w} sinks={sinks} {v}"));
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 2 * 6 * 3 + 6 * 2);
}

#[test]
fn a_window_as_long_as_the_sequence_without_sinks_is_the_causal_mask() {
    let sh = Shape::new(2, 6, 6, 3);
    let base = from_x(sh, Mask::Causal, 71).tiled(Tiles { br: 4, bc: 2 });
    for w in [6, 7, 1000] {
        for v in [Variant::Mha, Variant::Flash] {
            let causal = run(&base, v, Passes::BOTH, true);
            let window = run(&with_mask(&base, Mask::Window { w, sinks: 0 }), v, Passes::BOTH, true);
            assert_same_run(&window, &causal, &format!("w={w} {v}"));
        }
    }
    // and the baseline's one head
    let one = from_x(Shape::new(1, 5, 4, 1), Mask::Causal, 72);
    let causal = run(&one, Variant::Baseline, Passes::BOTH, true);
    let window = run(
        &with_mask(&one, Mask::Window { w: 5, sinks: 3 }),
        Variant::Baseline,
        Passes::BOTH,
        true,
    );
    assert_same_run(&window, &causal, "baseline w=5 sinks=3");
}

#[test]
fn the_gradients_through_a_window_match_finite_differences() {
    const FROM_X: &[Buf] = &[Buf::X, Buf::WQkv, Buf::BQkv, Buf::WProj, Buf::BProj];
    let inputs = from_x(Shape::new(2, 6, 6, 3), Mask::Window { w: 2, sinks: 1 }, 73);
    check_gradients(&inputs, Variant::Mha, FROM_X);
    check_gradients(&inputs.clone().tiled(Tiles { br: 2, bc: 3 }), Variant::Flash, FROM_X);
    let grouped = from_x(
        Shape::new(1, 7, 8, 4).with_kv_heads(2),
        Mask::Window { w: 3, sinks: 0 },
        74,
    );
    check_gradients(&grouped, Variant::Gqa, FROM_X);
}

#[test]
fn flash_under_a_window_counts_what_the_closed_forms_say_and_skips_whole_tiles() {
    let sh = Shape::new(1, 11, 4, 2);
    let n = 11 * 4;
    for (w, sinks) in WINDOWS {
        for (br, bc) in [(1, 1), (2, 2), (2, 3), (3, 2), (4, 4), (16, 16)] {
            let mask = Mask::Window { w, sinks };
            let mut inputs = from_qkv(sh, mask.clone(), values(n, 1), values(n, 2), values(n, 3));
            inputs.d_out = values(n, 4);
            let inputs = inputs.tiled(Tiles { br, bc });
            let r = run(&inputs, Variant::Flash, Passes::BOTH, true);
            let t = r.trace.as_ref().unwrap();
            let what = format!("w={w} sinks={sinks} ({br},{bc})");
            assert_eq!(
                counted(t),
                closed_form_counts(&inputs.plan(), Variant::Flash, Passes::BOTH),
                "{what}"
            );
            // the (query tile, key tile) pairs forward loads k for are exactly those with a
            // visible cell, and TileSums counts them
            let (br, bc) = (br.min(11), bc.min(11));
            let mut loaded = std::collections::BTreeSet::new();
            for e in 0..t.len() {
                if t.events[e].buf == Buf::K && t.events[e].op == Op::Read {
                    let v = t.view(e);
                    let var = |name| v.vars.iter().find(|(n, _)| *n == name).map(|&(_, x)| x);
                    if let (Phase::Flash, Some(i0), Some(j0)) = (v.phase, var("i0"), var("j0")) {
                        loaded.insert((i0, j0));
                    }
                }
            }
            let mut visible = std::collections::BTreeSet::new();
            for i0 in (0..11).step_by(br) {
                for j0 in (0..11).step_by(bc) {
                    let cells = (i0..(i0 + br).min(11)).flat_map(|i| (j0..(j0 + bc).min(11)).map(move |j| (i, j)));
                    if cells.into_iter().any(|(i, j)| !mask.hides(i, j)) {
                        visible.insert((i0, j0));
                    }
                }
            }
            assert_eq!(loaded, visible, "{what}");
            let sums = TileSums::new(11, 11, inputs.plan().tiles, &mask);
            assert_eq!(sums.pairs.get(), Some(visible.len() as u64), "{what}");
        }
    }
}

#[test]
fn query_7_of_a_window_of_3_with_one_sink_weighs_keys_0_5_6_7() {
    // one head, D = 1: q = 1 everywhere and k_j = j/4, so the visible scores of query 7 are
    // 0, 5/4, 6/4 and 7/4 and its probabilities e^s / Σ e^s over those four keys
    let sh = Shape::new(1, 8, 1, 1);
    let k: Vec<f32> = (0..8).map(|j| j as f32 / 4.0).collect();
    let v: Vec<f32> = (0..8).map(|j| j as f32).collect();
    let inputs = from_qkv(sh, Mask::Window { w: 3, sinks: 1 }, vec![1.0; 8], k, v);
    let r = run(&inputs, Variant::Mha, Passes::FORWARD, false);
    let p = &r.tensors[Buf::Probs][7 * 8..8 * 8];
    let e = [0.0f64, 1.25, 1.5, 1.75].map(f64::exp);
    let sum: f64 = e.iter().sum();
    let want = [e[0] / sum, 0.0, 0.0, 0.0, 0.0, e[1] / sum, e[2] / sum, e[3] / sum];
    for (j, (&got, want)) in p.iter().zip(want).enumerate() {
        assert!((f64::from(got) - want).abs() < 1e-6, "p[7][{j}] = {got}, want {want}");
    }
    assert!((want[0] - 0.0679).abs() < 1e-4 && (want[7] - 0.3908).abs() < 1e-4);
    // p = 0.0679, 0.2370, 0.3043, 0.3908 (e⁰, e^1.25, e^1.5, e^1.75 over their sum 14.7266), so
    // att = 0·0.0679 + 5·0.2370 + 6·0.3043 + 7·0.3908 = 5.7463
    let att = r.tensors[Buf::Att][7];
    let want_att = (5.0 * e[1] + 6.0 * e[2] + 7.0 * e[3]) / sum;
    assert!(
        (f64::from(att) - want_att).abs() < 1e-5,
        "att[7] = {att}, want {want_att}"
    );
    assert!((want_att - 5.7463).abs() < 1e-4, "{want_att}");
}
