//! A decode run's cache kept three ways, and split: a sliding window's rolling cache of N + W
//! rows gives the full windowed run's out bit for bit; a paged cache read through its block
//! table gives the contiguous cache's out bit for bit (shuffled pool, shared prefix blocks);
//! split-KV steps give the unsplit step's out within 1e-6, with the merge's numbers checked from
//! the log. Counts match the closed forms and every offset formula matches the log.

#![allow(non_snake_case)]

use crate::support::bits;
use crate::support::inputs::from_x;
use crate::support::trace::{assert_derived_lines_match, closed_form_counts, counted};
use attn_trace_core::engine::{Inputs, Passes, kernel_shape, run};
use attn_trace_core::kernels::decode::{CacheSpec, Paged};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Phase};

fn shapes() -> [Shape; 3] {
    [
        Shape::new(1, 7, 4, 1),
        Shape::new(2, 9, 8, 2),
        Shape::new(2, 8, 8, 4).with_kv_heads(2),
    ]
}

fn variants(sh: Shape) -> &'static [Variant] {
    if sh.shares_kv_heads() {
        &[Variant::Gqa, Variant::Mha]
    } else {
        &[Variant::Baseline, Variant::Mha, Variant::Gqa]
    }
}

/// Counts equal the closed forms, and every derived offset equals its formula.
fn assert_counts_and_formulas(inputs: &Inputs, variant: Variant) {
    let r = run(inputs, variant, Passes::FORWARD, true);
    let t = r.trace.as_ref().unwrap();
    let plan = inputs.for_variant(variant).plan();
    assert_eq!(
        counted(t),
        closed_form_counts(&plan, variant, Passes::FORWARD),
        "{variant}"
    );
    assert_derived_lines_match(t, kernel_shape(r.shape, variant));
}

#[test]
fn a_rolling_window_cache_gives_the_full_windowed_runs_out_bit_for_bit() {
    for sh in shapes() {
        for (w, sinks) in [(1, 0), (3, 0), (3, 1), (2, 2), (4, 3), (sh.t, 0)] {
            let mask = Mask::Window { w, sinks };
            let full = from_x(sh, mask.clone(), 41);
            for &variant in variants(sh) {
                let whole = run(&full, variant, Passes::FORWARD, false).tensors;
                for traced in [false, true] {
                    let step = run(&full.clone().with_decode(true), variant, Passes::FORWARD, traced);
                    let what = format!("{variant} {sh:?} W={w} N={sinks} traced={traced}");
                    let t = &step.tensors;
                    assert_eq!(bits(&t[Buf::Out]), bits(&whole[Buf::Out]), "out {what}");
                    assert_eq!(bits(&t[Buf::Att]), bits(&whole[Buf::Att]), "att {what}");
                    // the cache holds N + W rows per sequence, not T
                    let rows = step.registry.get(Buf::KCache).unwrap().shape[1];
                    assert_eq!(rows, sinks + w, "{what}");
                }
                assert_counts_and_formulas(&full.clone().with_decode(true), variant);
            }
        }
    }
}

#[test]
fn each_window_step_reads_the_sinks_and_the_last_w_positions_at_their_slots() {
    // T = 8, W = 3, N = 1, one head of D = 4: step 7 sees key 0 (its sink row 0) and keys 5, 6,
    // 7 at slots 5 % 3 = 2, 6 % 3 = 0, 7 % 3 = 1, rows N + slot = 3, 1, 2
    let sh = Shape::new(1, 8, 4, 1);
    let inputs = from_x(sh, Mask::Window { w: 3, sinks: 1 }, 42).with_decode(true);
    let r = run(&inputs, Variant::Mha, Passes::FORWARD, true);
    let t = r.trace.as_ref().unwrap();
    let step7 = t
        .phases
        .iter()
        .filter(|(_, p)| *p == Phase::DecodeScores)
        .nth(7)
        .unwrap()
        .0 as usize;
    let rows: Vec<usize> = (step7..t.len())
        .take_while(|&n| t.phase_at(n) == Phase::DecodeScores)
        .filter(|&n| t.events[n].buf == Buf::KCache && t.events[n].offset.is_multiple_of(4))
        .map(|n| t.events[n].offset as usize / 4)
        .collect();
    assert_eq!(rows, [0, 3, 1, 2]);
    // and the slot arithmetic the tracer shows beside the offsets
    let n = (step7..t.len())
        .find(|&n| t.events[n].buf == Buf::KCache && t.events[n].offset == 4 * 3)
        .unwrap();
    let lines: Vec<String> = attn_trace_analysis::formula::derived_lines(&t.view(n), sh)
        .iter()
        .map(ToString::to_string)
        .collect();
    let want = "k_base = ((bb*(N + W) + N + j % W)*H_kv + kv_h)*D = ((0*(1 + 3) + 1 + 5 % 3)*1 + 0)*4 = 12";
    assert!(lines.iter().any(|l| l == want), "{lines:?}");
    // step 7 wrote its key into slot 7 % 3 = 1, row 2: over position 4's, which no query from
    // 7 on sees
    let write7 = t
        .phases
        .iter()
        .filter(|(_, p)| *p == Phase::DecodeQkv)
        .nth(7)
        .unwrap()
        .0 as usize;
    let k_rows: Vec<usize> = (write7..t.len())
        .take_while(|&n| t.phase_at(n) == Phase::DecodeQkv)
        .filter(|&n| t.events[n].op == Op::Write && t.events[n].buf == Buf::KCache)
        .map(|n| t.events[n].offset as usize / 4)
        .collect();
    assert_eq!(k_rows, [2, 2, 2, 2]);
}

fn paged(sh: Shape, bs: usize, seed: u64) -> CacheSpec {
    let mb = sh.t.div_ceil(bs);
    CacheSpec {
        paged: Some(Paged::shuffled(bs, sh.b * mb + 3, sh.b, sh.t, seed)),
        split: None,
    }
}

#[test]
fn a_paged_cache_gives_the_contiguous_caches_out_bit_for_bit() {
    for sh in shapes() {
        for bs in [1, 2, 3, sh.t] {
            let contiguous = from_x(sh, Mask::Causal, 43).with_decode(true);
            for &variant in variants(sh) {
                let want = run(&contiguous, variant, Passes::FORWARD, false).tensors;
                for seed in [1, 2] {
                    let inputs = contiguous.clone().with_cache(paged(sh, bs, seed));
                    for traced in [false, true] {
                        let got = run(&inputs, variant, Passes::FORWARD, traced).tensors;
                        let what = format!("{variant} {sh:?} BS={bs} seed={seed} traced={traced}");
                        assert_eq!(bits(&got[Buf::Out]), bits(&want[Buf::Out]), "out {what}");
                        assert_eq!(bits(&got[Buf::Probs]), bits(&want[Buf::Probs]), "probs {what}");
                    }
                    assert_counts_and_formulas(&inputs, variant);
                }
            }
        }
    }
}

#[test]
fn a_paged_step_reads_the_block_table_then_the_block_it_names() {
    // B = 1, T = 5, blocks of 2: positions 0, 1 in block 6, 2, 3 in block 1, 4 in block 4
    let sh = Shape::new(1, 5, 4, 2);
    let cache = CacheSpec {
        paged: Some(Paged {
            block_size: 2,
            num_blocks: 7,
            table: vec![6, 1, 4],
        }),
        split: None,
    };
    let inputs = from_x(sh, Mask::Causal, 44).with_decode(true).with_cache(cache);
    let r = run(&inputs, Variant::Mha, Passes::FORWARD, true);
    let t = r.trace.as_ref().unwrap();
    // the pool is [NB, BS, H, D] = [7, 2, 2, 2]
    assert_eq!(r.registry.get(Buf::KCache).unwrap().shape, [7, 2, 4]);
    assert_eq!(r.registry.get(Buf::BlockTable).unwrap().shape, [1, 3]);
    // step 3's key goes to block table[3/2] = table[1] = 1, row 3 % 2 = 1: offset (1*2 + 1)*4
    let step3 = t
        .phases
        .iter()
        .filter(|(_, p)| *p == Phase::DecodeQkv)
        .nth(3)
        .unwrap()
        .0 as usize;
    let first = &t.events[step3];
    assert_eq!(
        (first.buf, first.op, first.offset, first.value),
        (Buf::BlockTable, Op::Read, 1, 1.0)
    );
    let k_writes: Vec<u32> = (step3..t.len())
        .take_while(|&n| t.phase_at(n) == Phase::DecodeQkv)
        .filter(|&n| t.events[n].op == Op::Write && t.events[n].buf == Buf::KCache)
        .map(|n| t.events[n].offset)
        .collect();
    assert_eq!(k_writes, [12, 13, 14, 15]);
    // step 4's scores read the table once per (head, key): 2 heads × 5 keys
    let scores4 = t
        .phases
        .iter()
        .filter(|(_, p)| *p == Phase::DecodeScores)
        .nth(4)
        .unwrap()
        .0 as usize;
    let table_reads: Vec<u32> = (scores4..t.len())
        .take_while(|&n| t.phase_at(n) == Phase::DecodeScores)
        .filter(|&n| t.events[n].buf == Buf::BlockTable)
        .map(|n| t.events[n].offset)
        .collect();
    assert_eq!(table_reads, [0, 0, 1, 1, 2, 0, 0, 1, 1, 2]);
    let n = (scores4..t.len()).find(|&n| t.events[n].buf == Buf::KCache).unwrap();
    let lines: Vec<String> = attn_trace_analysis::formula::derived_lines(&t.view(n), sh)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(lines.contains(&"j_blk = j / BS = 0 / 2 = 0".to_string()), "{lines:?}");
    assert!(
        lines.contains(&"k_base = ((j_phys*BS + j % BS)*H_kv + kv_h)*D = ((6*2 + 0 % 2)*2 + 0)*2 = 48".to_string()),
        "{lines:?}"
    );
}

#[test]
fn a_split_step_equals_the_unsplit_step_within_1e_6() {
    for sh in shapes() {
        let unsplit = from_x(sh, Mask::Causal, 45).with_decode(true);
        for &variant in variants(sh) {
            let want = run(&unsplit, variant, Passes::FORWARD, false).tensors;
            for parts in 1..=sh.t {
                for pages in [None, Some(2)] {
                    let mut cache = match pages {
                        Some(bs) => paged(sh, bs, 5),
                        None => CacheSpec::default(),
                    };
                    cache.split = Some(parts);
                    let inputs = unsplit.clone().with_cache(cache);
                    let got = run(&inputs, variant, Passes::FORWARD, true).tensors;
                    let what = format!("{variant} {sh:?} P={parts} paged={pages:?}");
                    for (a, b) in got[Buf::Out].iter().zip(&want[Buf::Out]) {
                        assert!((a - b).abs() <= 1e-6, "out {a} vs {b}: {what}");
                    }
                    if parts == 1 {
                        // one part is the whole row: the same numbers, bit for bit, but for
                        // the merge's w = 1 (exactly) times o_part
                        assert_eq!(bits(&got[Buf::PPart]), bits(&want[Buf::Probs]), "{what}");
                        assert_eq!(bits(&got[Buf::Att]), bits(&want[Buf::Att]), "{what}");
                    }
                    assert_counts_and_formulas(&inputs, variant);
                }
            }
        }
    }
}

#[test]
fn the_merge_weighs_each_part_by_the_softmax_of_the_log_sum_exps() {
    // T = 8 in P = 3 parts of L = 3: step 7 has the parts {0,1,2}, {3,4,5}, {6,7}
    let sh = Shape::new(1, 8, 8, 2);
    let inputs = from_x(sh, Mask::Causal, 46).with_decode(true).with_cache(CacheSpec {
        paged: None,
        split: Some(3),
    });
    let r = run(&inputs, Variant::Mha, Passes::FORWARD, true);
    let t = &r.tensors;
    let (heads, T, P) = (2, 8, 3);
    let (s, pp, lse, w) = (&t[Buf::Scores], &t[Buf::PPart], &t[Buf::LsePart], &t[Buf::WPart]);
    for hh in 0..heads {
        let (row, lrow) = ((hh * T + 7) * T, (hh * T + 7) * P);
        for (p, part) in [0..3, 3..6, 6..8].into_iter().enumerate() {
            // lse_p = ln Σ_{j in p} exp(S[j]), from the scores in f64
            let want: f64 = part.clone().map(|j| f64::from(s[row + j]).exp()).sum::<f64>().ln();
            assert!((f64::from(lse[lrow + p]) - want).abs() < 1e-6, "lse h{hh} p{p}");
            // each part's probabilities sum to 1 on their own
            let sum: f32 = part.clone().map(|j| pp[row + j]).sum();
            assert!((sum - 1.0).abs() < 1e-6, "p_part h{hh} p{p}");
        }
        // w = softmax(lse): the parts' shares of the whole row's exponentials
        let total: f64 = (0..3).map(|p| f64::from(lse[lrow + p]).exp()).sum();
        for p in 0..3 {
            let want = f64::from(lse[lrow + p]).exp() / total;
            assert!((f64::from(w[lrow + p]) - want).abs() < 1e-6, "w h{hh} p{p}");
        }
    }
    // the row's probability P[t,j] is w_part[p] · p_part[t,j]: the unsplit step's within 1e-6
    let unsplit = run(
        &inputs.clone().with_cache(CacheSpec::default()),
        Variant::Mha,
        Passes::FORWARD,
        false,
    );
    let probs = &unsplit.tensors[Buf::Probs];
    for hh in 0..heads {
        for j in 0..8 {
            let p = j / 3;
            let got = w[(hh * T + 7) * P + p] * pp[(hh * T + 7) * T + j];
            assert!((got - probs[(hh * T + 7) * T + j]).abs() < 1e-6, "h{hh} j{j}");
        }
    }
    // the merge is a phase of its own, once per step, after the parts
    let tr = r.trace.as_ref().unwrap();
    let order: Vec<Phase> = tr.phases.iter().take(6).map(|&(_, p)| p).collect();
    assert_eq!(
        order,
        [
            Phase::DecodeQkv,
            Phase::DecodeScores,
            Phase::DecodePartSoftmax,
            Phase::DecodePartSum,
            Phase::DecodeMergeWeights,
            Phase::DecodeMerge
        ]
    );
}
