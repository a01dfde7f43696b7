//! Decoding from a key/value cache: the same `out` as the full-sequence causal run, bit for bit,
//! for every kernel, with and without rotary positions; the cache filled one row per step and
//! read only up to the step; the closed-form counts and the cache offsets in the frames.

use crate::support::bits;
use crate::support::inputs::from_x;
use crate::support::trace::{assert_derived_lines_match, closed_form_counts, counted};
use attn_trace_analysis::formula::derived_lines;
use attn_trace_core::engine::{Passes, kernel_shape, run};
use attn_trace_core::kernels::rope::{Pairs, Rope};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Phase};

fn shapes() -> [Shape; 4] {
    [
        Shape::new(1, 5, 4, 1),
        Shape::new(2, 6, 8, 2),
        Shape::new(2, 7, 8, 4).with_kv_heads(2),
        Shape::new(1, 9, 12, 3).with_kv_heads(1),
    ]
}

#[test]
fn decoding_gives_the_full_causal_runs_out_bit_for_bit() {
    let ropes = [
        None,
        Some(Rope {
            pairs: Pairs::Interleaved,
            base: 10000.0,
        }),
        Some(Rope {
            pairs: Pairs::Half,
            base: 100.0,
        }),
    ];
    for sh in shapes() {
        for rope in ropes {
            let full = from_x(sh, Mask::Causal, 31).with_rope(rope);
            // flash has no decoding loop (its causal run computes the same out)
            let variants: &[Variant] = if sh.shares_kv_heads() {
                &[Variant::Gqa, Variant::Mha]
            } else {
                &[Variant::Baseline, Variant::Mha, Variant::Gqa]
            };
            for &variant in variants {
                let whole = run(&full, variant, Passes::FORWARD, false).tensors;
                for traced in [false, true] {
                    let step = run(&full.clone().with_decode(true), variant, Passes::BOTH, traced);
                    let t = &step.tensors;
                    let what = format!("{variant} {sh:?} {rope:?} traced={traced}");
                    assert_eq!(bits(&t[Buf::Out]), bits(&whole[Buf::Out]), "out {what}");
                    // on the way: the same (rotated) queries, the cache is the whole run's k and
                    // v, the same probabilities (a masked one is 0 either way) and att
                    assert_eq!(bits(&t[Buf::Q]), bits(&whole[Buf::Q]), "q {what}");
                    assert_eq!(bits(&t[Buf::KCache]), bits(&whole[Buf::K]), "k_cache {what}");
                    assert_eq!(bits(&t[Buf::VCache]), bits(&whole[Buf::V]), "v_cache {what}");
                    assert_eq!(bits(&t[Buf::Probs]), bits(&whole[Buf::Probs]), "probs {what}");
                    assert_eq!(bits(&t[Buf::Att]), bits(&whole[Buf::Att]), "att {what}");
                    // forward only: no gradient, and no k, v or qkv of the whole sequence
                    for buf in [Buf::DX, Buf::DQ, Buf::K, Buf::V, Buf::Qkv] {
                        assert!(!step.registry.has(buf), "{buf} {what}");
                    }
                }
            }
        }
    }
}

#[test]
fn each_step_writes_its_row_of_the_cache_and_reads_only_rows_up_to_itself() {
    let sh = Shape::new(2, 5, 8, 4).with_kv_heads(2);
    let r = run(
        &from_x(sh, Mask::Causal, 32).with_decode(true),
        Variant::Gqa,
        Passes::FORWARD,
        true,
    );
    let t = r.trace.as_ref().unwrap();
    let row_width = sh.kv_c(); // H_kv·D = 4 channels per cached position
    let mut written_rows = 0;
    for n in 0..t.len() {
        let e = t.events[n];
        if !matches!(e.buf, Buf::KCache | Buf::VCache) {
            continue;
        }
        let v = t.view(n);
        let step = v.vars.iter().find(|(name, _)| *name == "t").unwrap().1;
        let bb = v.vars[0].1;
        let row = e.offset as usize / row_width; // (b*T + j)
        let (b, j) = (row / sh.t, row % sh.t);
        assert_eq!(b, bb, "#{n}: step of sequence {bb} touched sequence {b}");
        match e.op {
            Op::Write => {
                assert_eq!(
                    (v.phase, j),
                    (Phase::DecodeQkv, step),
                    "#{n}: step {step} wrote row {j}"
                );
                written_rows += 1;
            }
            Op::Read => assert!(j <= step, "#{n}: step {step} read the future row {j}"),
        }
    }
    assert_eq!(written_rows, 2 * sh.b * sh.t * row_width);
    // the cache offsets substituted: step t = 3 of sequence 1, query head 3 reads cache head
    // kv_h = 3/(4/2) = 1 of position j = 2 at k_base = ((1*5 + 2)*2 + 1)*2 = 30
    let n = (0..t.len())
        .find(|&n| {
            let v = t.view(n);
            v.phase == Phase::DecodeScores
                && v.buf == Buf::KCache
                && v.offset == 30
                && v.vars.iter().any(|&(name, x)| name == "t" && x == 3)
                && v.vars.iter().any(|&(name, x)| name == "hh" && x == 3)
        })
        .unwrap();
    let text: Vec<String> = derived_lines(&t.view(n), sh).iter().map(ToString::to_string).collect();
    assert!(
        text.contains(&"ci = (bb*T + t)*H_kv*D = (1*5 + 3)*2*2 = 32".to_string()),
        "{text:?}"
    );
    assert!(
        text.contains(&"kv_h = hh/(H/H_kv) = 3/(4/2) = 1".to_string()),
        "{text:?}"
    );
    assert!(
        text.contains(&"q_base = xi + hh*D = 64 + 3*2 = 70".to_string()),
        "{text:?}"
    );
    assert!(
        text.contains(&"k_base = ((bb*T + j)*H_kv + kv_h)*D = ((1*5 + 2)*2 + 1)*2 = 30".to_string()),
        "{text:?}"
    );
    assert_eq!(t.label(Buf::KCache, 30), "b1 j2 kv_h1 d0");
}

#[test]
fn decode_phases_match_their_closed_form_counts_and_formulas() {
    for sh in shapes() {
        for rope in [
            None,
            Some(Rope {
                pairs: Pairs::Half,
                base: 10000.0,
            }),
        ] {
            let inputs = from_x(sh, Mask::Causal, 33).with_decode(true).with_rope(rope);
            for variant in [Variant::Baseline, Variant::Mha, Variant::Gqa] {
                let r = run(&inputs, variant, Passes::FORWARD, true);
                let t = r.trace.as_ref().unwrap();
                let got = counted(t);
                let plan = inputs.for_variant(variant).plan();
                let want = closed_form_counts(&plan, variant, Passes::FORWARD);
                assert_eq!(got, want, "{variant} {sh:?} {rope:?}");
                // one span of each phase per step: B·T steps
                let steps = t.phases.iter().filter(|(_, p)| *p == Phase::DecodeQkv).count();
                assert_eq!(steps, sh.b * sh.t);
                let ksh = kernel_shape(r.shape, variant);
                assert_derived_lines_match(t, ksh);
            }
        }
    }
}
