//! Grouped-query attention: `H_kv = H` is MHA bit for bit, `H_kv < H` is MHA with the heads of a
//! group tied, every gradient against finite differences (MQA included), traced against
//! untraced, the grouped offsets and the `+=` of `d_k`, `d_v` in the log, and the closed-form
//! counts and formulas.

use crate::support::bits;
use crate::support::gradients::check_gradients;
use crate::support::inputs::{from_qkv, from_x, separate, values};
use crate::support::trace::{assert_derived_lines_match, closed_form_counts, counted};
use attn_trace_analysis::formula::derived_lines;
use attn_trace_core::engine::{Passes, kernel_shape, run};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Phase};

const FROM_X: &[Buf] = &[Buf::X, Buf::WQkv, Buf::BQkv, Buf::WProj, Buf::BProj];
const FROM_QKV: &[Buf] = &[Buf::Q, Buf::K, Buf::V];
const SEPARATE: &[Buf] = &[
    Buf::X,
    Buf::WQ,
    Buf::BQ,
    Buf::WK,
    Buf::BK,
    Buf::WV,
    Buf::BV,
    Buf::WProj,
    Buf::BProj,
];

#[test]
fn gqa_with_as_many_kv_heads_as_query_heads_is_mha_bit_for_bit() {
    let explicit = Mask::explicit(&[
        vec![true, false, true, false, true],
        vec![false, true, true, true, false],
        vec![true, true, false, false, true],
    ]);
    let cases = [
        from_x(Shape::new(2, 5, 8, 4), Mask::Causal, 1),
        from_x(Shape::new(1, 6, 6, 3), Mask::None, 2),
        separate(Shape::new(2, 4, 6, 2), Mask::Causal, false, 3),
        separate(Shape::cross(2, 3, 5, 4, 2), explicit, true, 4),
    ];
    for inputs in cases {
        for traced in [false, true] {
            let mha = run(&inputs, Variant::Mha, Passes::BOTH, traced).tensors;
            let gqa = run(&inputs, Variant::Gqa, Passes::BOTH, traced).tensors;
            let mut compared = 0;
            for &buf in Buf::ALL {
                assert_eq!(
                    bits(mha.get(buf)),
                    bits(gqa.get(buf)),
                    "{buf} traced={traced} {:?}",
                    inputs.shape
                );
                compared += usize::from(!mha.get(buf).is_empty());
            }
            assert!(compared >= 20, "only {compared} buffers compared");
        }
    }
}

#[test]
fn grouped_runs_are_identical_traced_and_untraced() {
    for (sh, mask) in [
        (Shape::new(2, 7, 8, 4).with_kv_heads(2), Mask::Causal),
        (Shape::new(1, 9, 12, 6).with_kv_heads(3), Mask::None),
        (Shape::new(2, 5, 12, 4).with_kv_heads(1), Mask::Causal),
        (Shape::new(1, 20, 64, 4).with_kv_heads(2), Mask::Causal),
    ] {
        let inputs = from_x(sh, mask, 7);
        let fast = run(&inputs, Variant::Gqa, Passes::BOTH, false).tensors;
        let traced = run(&inputs, Variant::Gqa, Passes::BOTH, true).tensors;
        for &buf in Buf::ALL {
            assert_eq!(bits(fast.get(buf)), bits(traced.get(buf)), "{buf} {sh:?}");
        }
    }
}

#[test]
fn gqa_is_mha_with_the_heads_of_each_group_tied() {
    // H = 4 query heads, H_kv = 2: MHA on the same inputs gets each key/value head's weights
    // repeated for the two query heads of its group, and computes exactly GQA's forward pass
    let sh = Shape::new(2, 5, 8, 4).with_kv_heads(2);
    let inputs = from_x(sh, Mask::Causal, 9);
    let gqa = run(&inputs, Variant::Gqa, Passes::BOTH, false);
    let mha = run(&inputs, Variant::Mha, Passes::BOTH, false);
    assert_eq!(gqa.registry.get(Buf::K).unwrap().shape, [2, 5, 4]);
    assert_eq!(mha.registry.get(Buf::K).unwrap().shape, [2, 5, 8]);
    for buf in [Buf::Q, Buf::Scores, Buf::Probs, Buf::Att, Buf::Out] {
        assert_eq!(bits(&gqa.tensors[buf]), bits(&mha.tensors[buf]), "{buf}");
    }
    // MHA's key head hh holds GQA's key head hh / 2
    let (t, d) = (5, 2);
    for row in 0..2 * t {
        for hh in 0..4 {
            let m = &mha.tensors[Buf::K][(row * 4 + hh) * d..][..d];
            let g = &gqa.tensors[Buf::K][(row * 2 + hh / 2) * d..][..d];
            assert_eq!(m, g, "row {row} head {hh}");
        }
    }
    // backward: d_x is the same up to the order of the sums; GQA's d_k is the sum of the tied
    // MHA heads' d_k, and so are the key columns of d_w_qkv
    for (a, b) in gqa.tensors[Buf::DX].iter().zip(&mha.tensors[Buf::DX]) {
        assert!((a - b).abs() < 1e-5, "d_x {a} vs {b}");
    }
    for row in 0..2 * t {
        for kv_h in 0..2 {
            for dd in 0..d {
                let g = gqa.tensors[Buf::DK][(row * 2 + kv_h) * d + dd];
                let m: f32 = (0..2)
                    .map(|k| mha.tensors[Buf::DK][(row * 4 + kv_h * 2 + k) * d + dd])
                    .sum();
                assert!((g - m).abs() < 1e-6, "d_k row {row} kv_h {kv_h}: {g} vs {m}");
            }
        }
    }
    let (c, wide, narrow) = (8, 24, 16);
    for cc in 0..c {
        for kv_h in 0..2 {
            for dd in 0..d {
                let g = gqa.tensors[Buf::DWQkv][cc * narrow + c + kv_h * d + dd];
                let m: f32 = (0..2)
                    .map(|k| mha.tensors[Buf::DWQkv][cc * wide + c + (kv_h * 2 + k) * d + dd])
                    .sum();
                assert!((g - m).abs() < 1e-5, "d_w_qkv[{cc}] k block kv_h {kv_h}: {g} vs {m}");
            }
        }
    }
}

#[test]
fn grouped_gradients_match_finite_differences() {
    // H = 4 over H_kv = 2, and multi-query attention (H_kv = 1)
    for sh in [
        Shape::new(2, 4, 8, 4).with_kv_heads(2),
        Shape::new(1, 5, 6, 3).with_kv_heads(1),
    ] {
        check_gradients(&from_x(sh, Mask::Causal, 11), Variant::Gqa, FROM_X);
        check_gradients(&separate(sh, Mask::None, false, 12), Variant::Gqa, SEPARATE);
    }
    // cross-attention with an explicit mask, from separate projections
    let sh = Shape::cross(2, 3, 5, 8, 4).with_kv_heads(2);
    let mask = Mask::explicit(&[
        vec![true, false, true, false, true],
        vec![false, true, true, true, false],
        vec![true, true, false, false, true],
    ]);
    let all: Vec<Buf> = [Buf::Memory].iter().chain(SEPARATE).copied().collect();
    check_gradients(&separate(sh, mask, true, 13), Variant::Gqa, &all);
    // from the attention core: k and v have H_kv·D channels
    let sh = Shape::new(2, 4, 6, 3).with_kv_heads(1);
    let (nq, nk) = (2 * 4 * 6, 2 * 4 * 2);
    let mut inputs = from_qkv(sh, Mask::Causal, values(nq, 14), values(nk, 15), values(nk, 16));
    inputs.d_out = values(nq, 17);
    check_gradients(&inputs, Variant::Gqa, FROM_QKV);
}

#[test]
fn grouped_phases_match_their_closed_form_counts_and_formulas() {
    let cases = [
        from_x(Shape::new(2, 4, 8, 4).with_kv_heads(2), Mask::Causal, 1),
        from_x(Shape::new(1, 3, 6, 3).with_kv_heads(1), Mask::None, 2),
        separate(Shape::cross(2, 3, 5, 8, 4).with_kv_heads(2), Mask::None, true, 3),
        from_qkv(
            Shape::new(1, 3, 8, 4).with_kv_heads(2),
            Mask::Causal,
            values(24, 4),
            values(12, 5),
            values(12, 6),
        ),
    ];
    for inputs in cases {
        for variant in Variant::STANDARD {
            let r = run(&inputs, variant, Passes::BOTH, true);
            let t = r.trace.as_ref().unwrap();
            // MHA and the baseline run the inputs with their heads tied: their own plan
            let plan = inputs.for_variant(variant).plan();
            let want = closed_form_counts(&plan, variant, Passes::BOTH);
            assert_eq!(counted(t), want, "{variant} {:?}", inputs.shape);
            let ksh = kernel_shape(r.shape, variant);
            assert_derived_lines_match(t, ksh);
        }
    }
}

#[test]
fn a_query_head_reads_its_groups_key_head_at_the_grouped_offset() {
    // B=1, T=3, C=8, H=4, D=2, H_kv=2: query head 3 reads key head kv_h = 3/(4/2) = 1; for i=2,
    // j=1 that is k_base = ((0*3 + 1)*2 + 1)*2 = 6, and the score goes to ((0*4 + 3)*3 + 2)*3 + 1
    let sh = Shape::new(1, 3, 8, 4).with_kv_heads(2);
    let r = run(&from_x(sh, Mask::Causal, 3), Variant::Gqa, Passes::BOTH, true);
    let t = r.trace.as_ref().unwrap();
    let w = t.index.first_write(Buf::Scores, 34).unwrap();
    let v = t.view(w);
    assert_eq!(v.phase, Phase::Scores);
    let text: Vec<String> = derived_lines(&v, sh).iter().map(ToString::to_string).collect();
    assert!(
        text.contains(&"kv_h = hh/(H/H_kv) = 3/(4/2) = 1".to_string()),
        "{text:?}"
    );
    assert!(
        text.contains(&"k_base = ((bb*T + j)*H_kv + kv_h)*D = ((0*3 + 1)*2 + 1)*2 = 6".to_string()),
        "{text:?}"
    );
    assert!(text.contains(&"q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*4 + 3)*2 = 22".to_string()));
    // the dot product read k[6] and k[7], and so did query head 2's (the same group)
    let reads: Vec<usize> = t
        .span_range(t.phase_span(w))
        .filter(|&n| t.events[n].buf == Buf::K && t.events[n].op == Op::Read)
        .map(|n| t.events[n].offset as usize)
        .collect();
    let row_of = |off: usize| (off / 2) % 2; // the kv head of a k offset
    assert_eq!(reads.len(), 4 * 3 * 3 * 2, "H·S·T·D reads of k");
    assert_eq!(
        reads.iter().filter(|&&o| row_of(o) == 1).count(),
        reads.len() / 2,
        "heads 2 and 3 read kv head 1, heads 0 and 1 kv head 0"
    );
    assert_eq!(t.label(Buf::K, 6), "b0 j1 kv_h1 d0");
}

#[test]
fn the_query_heads_of_a_group_add_into_the_same_d_k_and_d_v() {
    // H = 2 query heads sharing H_kv = 1 key/value head: every cell of d_k is cleared, then
    // head 0 adds (reads 0, writes its share) and head 1 adds (reads head 0's, writes the sum)
    let sh = Shape::new(1, 3, 4, 2).with_kv_heads(1);
    let r = run(&from_x(sh, Mask::Causal, 5), Variant::Gqa, Passes::BOTH, true);
    let t = r.trace.as_ref().unwrap();
    for buf in [Buf::DK, Buf::DV] {
        for off in 0..3 * 2 {
            let writes: Vec<usize> = (0..t.len())
                .filter(|&n| {
                    t.events[n].buf == buf && t.events[n].offset as usize == off && t.events[n].op == Op::Write
                })
                .collect();
            assert_eq!(writes.len(), 3, "{buf}[{off}]: clear, head 0, head 1");
            assert_eq!(t.events[writes[0]].value, 0.0);
            for (k, &w) in writes[1..].iter().enumerate() {
                // the += is a read of the value before and a write of the new one
                let before = t.events[w - 1];
                assert_eq!((before.buf, before.offset as usize, before.op), (buf, off, Op::Read));
                assert_eq!(before.value.to_bits(), t.events[writes[k]].value.to_bits());
                let hh = t.view(w).vars.iter().find(|(n, _)| *n == "hh").unwrap().1;
                assert_eq!(hh, k, "head {k} adds its share");
            }
            let last = t.events[writes[2]].value;
            assert_eq!(last.to_bits(), r.tensors[buf][off].to_bits());
        }
    }
}
