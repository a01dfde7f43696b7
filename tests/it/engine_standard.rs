//! The standard form of multi-head attention (separate q/k/v projections, cross-attention,
//! explicit masks, dropout) against finite differences, and each classic mistake's symptom in
//! numbers.

use crate::support::gradients::check_gradients;
use crate::support::inputs::{separate, values};
use crate::support::trace::{assert_derived_lines_match, closed_form_counts, counted};
use attn_trace_analysis::formula::derived_lines;
use attn_trace_core::engine::{Dropout, Inputs, Passes, Start, first_divergence, kernel_shape, run};
use attn_trace_core::kernels::attention_mistakes::{Mistake, Mistakes};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, MASKED, Op};

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
fn separate_projections_match_finite_differences() {
    let inputs = separate(Shape::new(2, 4, 6, 3), Mask::Causal, false, 1);
    check_gradients(&inputs, Variant::Baseline, SEPARATE);
    check_gradients(&inputs, Variant::Mha, SEPARATE);
}

#[test]
fn cross_attention_matches_finite_differences_with_every_kind_of_mask() {
    // S = 3 queries against T = 5 keys
    let sh = Shape::cross(2, 3, 5, 4, 2);
    let explicit = Mask::explicit(&[
        vec![true, false, true, false, true],
        vec![false, true, true, true, false],
        vec![true, true, false, false, true],
    ]);
    for mask in [Mask::None, Mask::Causal, explicit] {
        let inputs = separate(sh, mask, true, 2);
        let all: Vec<Buf> = [Buf::Memory].iter().chain(SEPARATE).copied().collect();
        check_gradients(&inputs, Variant::Mha, &all);
        check_gradients(&inputs, Variant::Baseline, &all);
    }
}

#[test]
fn dropout_with_a_fixed_mask_matches_finite_differences() {
    let inputs =
        separate(Shape::new(1, 5, 4, 2), Mask::Causal, false, 3).with_dropout(Some(Dropout { p: 0.3, seed: 9 }));
    check_gradients(&inputs, Variant::Mha, SEPARATE);
    check_gradients(&inputs, Variant::Baseline, SEPARATE);
}

#[test]
fn dropout_zeroes_the_masked_probabilities_and_rescales_the_rest() {
    let p = 0.25;
    let inputs = separate(Shape::new(1, 6, 4, 2), Mask::None, false, 4).with_dropout(Some(Dropout { p, seed: 5 }));
    let t = run(&inputs, Variant::Mha, Passes::FORWARD, false).tensors;
    let dropped = t[Buf::DropMask].iter().filter(|&&k| k == 0.0).count();
    assert!(dropped > 0 && dropped < t[Buf::DropMask].len(), "{dropped} dropped");
    for ((&keep, &pr), &pd) in t[Buf::DropMask].iter().zip(&t[Buf::Probs]).zip(&t[Buf::ProbsDrop]) {
        if keep == 0.0 {
            assert_eq!(pd, 0.0);
        } else {
            assert!((pd - pr / (1.0 - p)).abs() < 1e-6);
        }
    }
    // evaluation (no dropout) differs, and has no dropout buffers at all
    let eval = run(&inputs.clone().with_dropout(None), Variant::Mha, Passes::FORWARD, false).tensors;
    assert!(eval[Buf::DropMask].is_empty() && eval[Buf::ProbsDrop].is_empty());
    assert_ne!(eval[Buf::Att], t[Buf::Att]);
}

#[test]
fn cross_attention_layouts_use_s_for_queries_and_t_for_keys() {
    let sh = Shape::cross(1, 2, 4, 4, 2);
    let r = run(&separate(sh, Mask::None, true, 6), Variant::Mha, Passes::BOTH, true);
    let tr = r.trace.as_ref().unwrap();
    assert_eq!(tr.buffer(Buf::Scores).unwrap().spec.shape, vec![1, 2, 2, 4]); // [B,H,S,T]
    assert_eq!(tr.buffer(Buf::Q).unwrap().layout().sizes(), vec![1, 2, 2, 2]); // [B,S,H,D]
    assert_eq!(tr.buffer(Buf::K).unwrap().layout().sizes(), vec![1, 4, 2, 2]); // [B,T,H,D]
    // head 1, query 1, key 3: off = ((0*2 + 1)*2 + 1)*4 + 3 = 15, q_base = ((0*2 + 1)*2 + 1)*2 = 6
    let w = tr.index.first_write(Buf::Scores, 15).unwrap();
    let v = tr.view(w);
    let lines = derived_lines(&v, sh);
    let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
    assert!(
        text.contains(&"q_base = ((bb*S + i)*H + hh)*D = ((0*2 + 1)*2 + 1)*2 = 6".to_string()),
        "{text:?}"
    );
    assert!(
        text.contains(&"k_base = ((bb*T + j)*H + hh)*D = ((0*4 + 3)*2 + 1)*2 = 14".to_string()),
        "{text:?}"
    );
    assert!(
        text.contains(&"off = ((bb*H + hh)*S + i)*T + j = ((0*2 + 1)*2 + 1)*4 + 3 = 15".to_string()),
        "{text:?}"
    );
}

#[test]
fn new_phases_match_their_closed_form_counts_and_formulas() {
    let dropped =
        separate(Shape::new(2, 4, 4, 2), Mask::Causal, false, 7).with_dropout(Some(Dropout { p: 0.5, seed: 1 }));
    let cross = separate(
        Shape::cross(2, 3, 5, 4, 2),
        Mask::explicit(&vec![vec![true, false, true, true, false]; 3]),
        true,
        8,
    );
    let mistaken = separate(Shape::new(1, 4, 4, 2), Mask::Causal, false, 9)
        .with_mistakes(Mistakes::of(&Mistake::ALL))
        .with_dropout(Some(Dropout { p: 0.5, seed: 1 }));
    for inputs in [dropped, cross, mistaken] {
        for variant in Variant::STANDARD {
            let r = run(&inputs, variant, Passes::BOTH, true);
            let t = r.trace.as_ref().unwrap();
            let got = counted(t);
            let want = closed_form_counts(&inputs.plan(), variant, Passes::BOTH);
            assert_eq!(got, want, "{variant} {:?}", inputs.plan());
            // formulas are read in the kernel's shape: the baseline has one head
            let ksh = kernel_shape(inputs.shape, variant);
            assert_derived_lines_match(t, ksh);
        }
    }
}

/// Attention core inputs for the mistakes: q, k, v given, with an output projection.
fn core(sh: Shape, seed: u64) -> Inputs {
    let Shape { b, t, c, .. } = sh;
    let n = b * t * c;
    let start = Start::Qkv {
        q: values(n, seed),
        k: values(n, seed + 1),
        v: values(n, seed + 2),
    };
    Inputs::new(sh, Mask::Causal, start, values(n, seed + 5)).with_proj(values(c * c, seed + 3), values(c, seed + 4))
}

/// `inputs` with the one mistake `m` switched on.
fn with(inputs: &Inputs, m: Mistake) -> Inputs {
    inputs.clone().with_mistakes(Mistakes::of(&[m]))
}

#[test]
fn mistake_1_no_input_projection_makes_q_k_v_the_input_and_scores_symmetric() {
    let inputs = separate(Shape::new(1, 4, 4, 2), Mask::None, false, 10)
        .with_mistakes(Mistakes::of(&[Mistake::NoInputProjection]));
    let r = run(&inputs, Variant::Mha, Passes::BOTH, true);
    let t = &r.tensors;
    assert_eq!(
        (&t[Buf::Q], &t[Buf::K], &t[Buf::V]),
        (&t[Buf::X], &t[Buf::X], &t[Buf::X])
    );
    assert!(
        t[Buf::WQ].is_empty() && t[Buf::WK].is_empty(),
        "the mistaken module has no projection weights"
    );
    // S[h,i,j] = x_i·x_j/√D = S[h,j,i]
    let (h, tt) = (2, 4);
    for hh in 0..h {
        for i in 0..tt {
            for j in 0..tt {
                let at = |i: usize, j: usize| t[Buf::Scores][(hh * tt + i) * tt + j];
                assert!((at(i, j) - at(j, i)).abs() < 1e-6);
            }
        }
    }
    // forward only
    assert!(t[Buf::DX].is_empty());
    assert!(
        r.trace
            .unwrap()
            .phases
            .iter()
            .all(|(_, p)| p.pass() == attn_trace_core::trace::Pass::Forward)
    );
}

#[test]
fn mistake_2_scale_by_seq_len_changes_scores_by_sqrt_d_over_sqrt_t() {
    let sh = Shape::new(1, 8, 8, 4); // D = 2, T = 8
    let inputs = core(sh, 11);
    let good = run(&inputs, Variant::Mha, Passes::FORWARD, true);
    let bad = run(
        &with(&inputs, Mistake::ScaleBySeqLen),
        Variant::Mha,
        Passes::FORWARD,
        true,
    );
    let factor = (2f32).sqrt() / (8f32).sqrt();
    for (&g, &b) in good.tensors[Buf::Scores].iter().zip(&bad.tensors[Buf::Scores]) {
        if g == MASKED {
            assert_eq!(b, MASKED);
        } else {
            assert!((b - g * factor).abs() < 1e-6, "{b} vs {g}·{factor}");
        }
    }
    // T > D: the softmax is flatter: the largest probability of each full row shrinks
    let row_max = |p: &[f32]| p[7 * 8..8 * 8].iter().copied().fold(0.0, f32::max);
    assert!(row_max(&bad.tensors[Buf::Probs]) < row_max(&good.tensors[Buf::Probs]));
    // the traces agree until the first score is written
    let (gt, bt) = (good.trace.as_ref().unwrap(), bad.trace.as_ref().unwrap());
    let n = first_divergence(gt, bt).unwrap();
    assert_eq!(gt.events[n].buf, Buf::Scores);
    assert_eq!(gt.events[n].op, Op::Write);
    assert_eq!(n, 2 * 2, "the first score reads D = 2 pairs of q and k first");
}

#[test]
fn mistake_3_mask_by_multiply_gives_future_positions_probability() {
    let sh = Shape::new(1, 4, 4, 2);
    let bad = run(
        &with(&core(sh, 12), Mistake::MaskByMultiply),
        Variant::Mha,
        Passes::FORWARD,
        false,
    );
    let good = run(&core(sh, 12), Variant::Mha, Passes::FORWARD, false);
    for hh in 0..2 {
        for i in 0..4 {
            for j in i + 1..4 {
                let off = (hh * 4 + i) * 4 + j;
                assert_eq!(bad.tensors[Buf::Scores][off], 0.0, "a hidden score is multiplied to 0");
                assert!(
                    bad.tensors[Buf::Probs][off] > 0.0,
                    "the future position ({i},{j}) gets probability"
                );
                assert_eq!(good.tensors[Buf::Probs][off], 0.0);
            }
        }
    }
}

#[test]
fn mistake_4_no_output_projection_keeps_heads_from_mixing() {
    let sh = Shape::new(1, 3, 4, 2); // D = 2: head 0 owns channels 0..2, head 1 channels 2..4
    let inputs = core(sh, 13);
    let nudge = |inputs: &Inputs| {
        let mut i = inputs.clone();
        if let Start::Qkv { v, .. } = &mut i.start {
            v[0] += 1.0; // a value channel of head 0
        }
        i
    };
    let bad = with(&inputs, Mistake::NoOutputProjection);
    let (before, after) = (
        run(&bad, Variant::Mha, Passes::FORWARD, false),
        run(&nudge(&bad), Variant::Mha, Passes::FORWARD, false),
    );
    assert!(before.tensors[Buf::Out].is_empty() && before.tensors[Buf::WProj].is_empty());
    let (o1, o2) = (before.tensors.output(), after.tensors.output());
    for row in 0..3 {
        assert_eq!(
            o1[row * 4 + 2..row * 4 + 4],
            o2[row * 4 + 2..row * 4 + 4],
            "head 1's channels moved"
        );
    }
    assert_ne!(o1[0..2], o2[0..2]);
    // with the projection, the change reaches every output channel
    let (g1, g2) = (
        run(&inputs, Variant::Mha, Passes::FORWARD, false),
        run(&nudge(&inputs), Variant::Mha, Passes::FORWARD, false),
    );
    assert!((0..4).all(|c| g1.tensors[Buf::Out][c] != g2.tensors[Buf::Out][c]));
}

#[test]
fn mistake_5_dropout_not_applied_trains_like_evaluation() {
    let inputs = core(Shape::new(1, 5, 4, 2), 14).with_dropout(Some(Dropout { p: 0.5, seed: 3 }));
    let train = run(&inputs, Variant::Mha, Passes::FORWARD, false).tensors;
    let bad = run(
        &with(&inputs, Mistake::DropoutNotApplied),
        Variant::Mha,
        Passes::FORWARD,
        false,
    )
    .tensors;
    let eval = run(&inputs.clone().with_dropout(None), Variant::Mha, Passes::FORWARD, false).tensors;
    assert_eq!(
        bad[Buf::Out],
        eval[Buf::Out],
        "the mistaken training run is the evaluation run"
    );
    assert_ne!(train[Buf::Out], eval[Buf::Out]);
    assert!(bad[Buf::ProbsDrop].is_empty() && train[Buf::ProbsDrop].contains(&0.0));
}

#[test]
fn mistake_6_softmax_over_two_dims_normalises_the_matrix_not_the_rows() {
    let sh = Shape::new(2, 4, 4, 2);
    let bad = run(
        &with(&core(sh, 15), Mistake::SoftmaxOverTwoDims),
        Variant::Mha,
        Passes::FORWARD,
        false,
    );
    let p = &bad.tensors[Buf::Probs];
    for head in 0..2 * 2 {
        let m = &p[head * 16..(head + 1) * 16];
        assert!((m.iter().sum::<f32>() - 1.0).abs() < 1e-5, "a head's matrix sums to 1");
        let rows: Vec<f32> = (0..4).map(|i| m[i * 4..i * 4 + 4].iter().sum()).collect();
        assert!(
            rows.iter().all(|&r| (r - 1.0).abs() > 1e-3),
            "rows {rows:?} should not sum to 1"
        );
    }
}
