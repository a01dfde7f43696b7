//! gpt-oss's learned sink logits (`[run] sink_logit`): a sink far below every score is the plain
//! run bit for bit, a worked row against hand-computed probabilities, `d_sink` and every other
//! gradient against finite differences, flash against MHA, traced against untraced, the closed
//! form counts, and the command line.

use crate::support::cli::stdout_of;
use crate::support::gradients::{central_difference, check_gradients, gradient_error};
use crate::support::inputs::{from_qkv, from_x, values};
use crate::support::trace::{closed_form_counts, counted};
use attn_trace_core::engine::{Inputs, Passes, Run, run};
use attn_trace_core::kernels::attention_flash::Tiles;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Phase};

const FROM_X: &[Buf] = &[Buf::X, Buf::WQkv, Buf::BQkv, Buf::WProj, Buf::BProj, Buf::Sink];

/// The shapes each variant is checked on: the baseline's single head, MHA, grouped heads.
fn cases() -> Vec<(Variant, Shape, Mask)> {
    vec![
        (Variant::Baseline, Shape::new(2, 5, 4, 1), Mask::Causal),
        (Variant::Mha, Shape::new(2, 6, 6, 3), Mask::Window { w: 3, sinks: 1 }),
        (Variant::Mha, Shape::new(1, 5, 4, 2), Mask::None),
        (Variant::Gqa, Shape::new(1, 7, 8, 4).with_kv_heads(2), Mask::Causal),
        (Variant::Flash, Shape::new(2, 7, 6, 3), Mask::Causal),
        (Variant::Flash, Shape::new(1, 6, 4, 2), Mask::Window { w: 2, sinks: 0 }),
    ]
}

/// Inputs from `x` with one sink logit per query head (one for the baseline).
fn with_sinks(sh: Shape, mask: Mask, seed: u64) -> Inputs {
    from_x(sh, mask, seed)
        .with_sink(Some(values(sh.h, seed + 40)))
        .tiled(Tiles { br: 2, bc: 3 })
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// The value of the last write to `buf[offset]` in the log.
fn last_write(r: &Run, buf: Buf, offset: usize) -> f32 {
    let t = r.trace.as_ref().unwrap();
    let last = t
        .events
        .iter()
        .rev()
        .find(|e| e.op == Op::Write && e.buf == buf && e.offset as usize == offset);
    last.unwrap_or_else(|| panic!("no write to {buf}[{offset}]")).value
}

#[test]
fn a_sink_logit_far_below_every_score_is_the_plain_run_bit_for_bit() {
    // exp(−1e30 − m) is exactly 0, and max(−1e30, S) = S: the denominator adds 0 to a sum that
    // starts at 0 and the maximum is the row's, so every bit is the plain run's
    for (v, sh, mask) in cases() {
        let plain = from_x(sh, mask.clone(), 80).tiled(Tiles { br: 2, bc: 3 });
        let sunk = plain.clone().with_sink(Some(vec![-1e30; sh.h]));
        for traced in [true, false] {
            let a = run(&plain, v, Passes::BOTH, traced);
            let b = run(&sunk, v, Passes::BOTH, traced);
            let mut compared = 0;
            for (buf, _) in a.registry.iter() {
                assert_eq!(
                    bits(&a.tensors[buf]),
                    bits(&b.tensors[buf]),
                    "{v} {sh:?} {mask:?}: {buf}"
                );
                compared += 1;
            }
            assert!(compared > 10, "{v}: only {compared} buffers");
            assert!(
                b.tensors[Buf::DSink].iter().all(|&g| g == 0.0),
                "{v}: {:?}",
                &b.tensors[Buf::DSink]
            );
            assert!(b.tensors[Buf::PSink].iter().all(|&p| p == 0.0), "{v}");
        }
    }
}

#[test]
fn a_worked_row_has_the_hand_computed_probabilities_in_the_log() {
    // one head of one channel: S[i,j] = q_i·k_j = ln(j + 1), so exp(S − m) is (j + 1)/4 with
    // the sink ln 4 as the maximum; row 2 is [1, 2, 3]/4 over 1 + 6/4: P = [0.1, 0.2, 0.3]
    // and P_sink = 0.4; row 1 is [1, 2]/4 over 7/4, row 0 is 1/4 over 5/4
    let sh = Shape::new(1, 3, 1, 1);
    let k = vec![0.0, 2f32.ln(), 3f32.ln()];
    let inputs = from_qkv(sh, Mask::Causal, vec![1.0; 3], k, vec![1.0, 2.0, 3.0]).with_sink(Some(vec![4f32.ln()]));
    for v in [Variant::Baseline, Variant::Mha] {
        let r = run(&inputs, v, Passes::BOTH, true);
        let want = [[0.2, 0.0, 0.0], [1.0 / 7.0, 2.0 / 7.0, 0.0], [0.1, 0.2, 0.3]];
        let p_sink = [0.8, 4.0 / 7.0, 0.4];
        for (i, row) in want.iter().enumerate() {
            for (j, &w) in row.iter().enumerate() {
                let p = last_write(&r, Buf::Probs, i * 3 + j);
                assert!((p - w).abs() < 1e-6, "{v} P[{i},{j}] = {p}, want {w}");
            }
            let ps = last_write(&r, Buf::PSink, i);
            assert!((ps - p_sink[i]).abs() < 1e-6, "{v} P_sink[{i}] = {ps}");
        }
        // att = P·v: 0.2, (1 + 4)/7 and 0.1 + 0.4 + 0.9 = 1.4
        let att = &r.tensors[Buf::Att];
        for (got, want) in att.iter().zip([0.2, 5.0 / 7.0, 1.4]) {
            assert!((got - want).abs() < 1e-6, "{v} att {got}, want {want}");
        }
        // with d_out = 1, dP[i,j] = v_j and D_i = Σ_j P·v = att_i, so
        // d_sink = −(0.8·0.2 + 4/7·5/7 + 0.4·1.4) = −(0.72 + 20/49)
        let d_sink = last_write(&r, Buf::DSink, 0);
        let want = -(0.72 + 20.0 / 49.0);
        assert!((d_sink as f64 - want).abs() < 1e-6, "{v} d_sink {d_sink}, want {want}");
        // the sink is read as an event once in every row, in the kernel's own file
        let t = r.trace.as_ref().unwrap();
        let reads: Vec<usize> = (0..t.len())
            .filter(|&n| t.events[n].buf == Buf::Sink && t.events[n].op == Op::Read)
            .collect();
        assert_eq!(reads.len(), 3, "{v}");
        for n in reads {
            let file = t.view(n).file;
            assert!(
                file.ends_with("attention_1h.rs") || file.ends_with("attention_mha.rs"),
                "{file}"
            );
        }
    }
}

/// Central differences for every listed input, the sink logits among them, and the largest
/// error `d_sink` shows.
fn check_with_sinks(v: Variant) {
    for (variant, sh, mask) in cases().into_iter().filter(|c| c.0 == v) {
        let inputs = with_sinks(sh, mask, 81);
        check_gradients(&inputs, variant, FROM_X);
        let analytic = run(&inputs, variant, Passes::BOTH, false).tensors;
        let worst = (0..sh.h)
            .map(|k| {
                gradient_error(
                    analytic[Buf::DSink][k] as f64,
                    central_difference(&inputs, variant, Buf::Sink, k),
                )
            })
            .fold(0.0, f64::max);
        eprintln!(
            "{variant} {sh:?}: d_sink {:?}, worst error {worst:e}",
            &analytic[Buf::DSink]
        );
        assert!(
            analytic[Buf::DSink].iter().all(|&g| g != 0.0),
            "{variant}: a sink got no gradient"
        );
    }
}

#[test]
fn finite_differences_baseline_with_a_sink_logit() {
    check_with_sinks(Variant::Baseline);
}

#[test]
fn finite_differences_mha_with_sink_logits() {
    check_with_sinks(Variant::Mha);
}

#[test]
fn finite_differences_gqa_with_sink_logits() {
    check_with_sinks(Variant::Gqa);
}

#[test]
fn finite_differences_flash_with_sink_logits() {
    check_with_sinks(Variant::Flash);
}

#[test]
fn flash_with_sink_logits_gives_mha_output_and_every_gradient_within_1e_5() {
    for (sh, mask) in [
        (Shape::new(2, 7, 6, 3), Mask::Causal),
        (Shape::new(1, 9, 4, 2), Mask::Window { w: 3, sinks: 1 }),
        (Shape::new(1, 5, 4, 2), Mask::None),
    ] {
        for tiles in [(1, 1), (2, 3), (4, 4)] {
            let inputs = with_sinks(sh, mask.clone(), 82).tiled(Tiles {
                br: tiles.0,
                bc: tiles.1,
            });
            let mha = run(&inputs, Variant::Mha, Passes::BOTH, false);
            let flash = run(&inputs, Variant::Flash, Passes::BOTH, false);
            for buf in [
                Buf::Out,
                Buf::Att,
                Buf::DX,
                Buf::DWQkv,
                Buf::DBQkv,
                Buf::DWProj,
                Buf::DSink,
                Buf::PSink,
            ] {
                let (a, b) = (&mha.tensors[buf], &flash.tensors[buf]);
                assert_eq!(a.len(), b.len(), "{buf}");
                let d = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
                assert!(d < 1e-5, "{sh:?} {mask:?} {tiles:?}: {buf} differs by {d:e}");
            }
        }
    }
}

#[test]
fn traced_and_untraced_runs_with_sink_logits_give_the_same_bits() {
    for (v, sh, mask) in cases() {
        let inputs = with_sinks(sh, mask, 83);
        for passes in [Passes::BOTH, Passes::FORWARD] {
            let traced = run(&inputs, v, passes, true);
            let untraced = run(&inputs, v, passes, false);
            assert_eq!(traced.registry, untraced.registry);
            for (buf, _) in traced.registry.iter() {
                assert_eq!(
                    bits(&traced.tensors[buf]),
                    bits(&untraced.tensors[buf]),
                    "{v} {sh:?}: {buf}"
                );
            }
        }
    }
}

#[test]
fn every_phase_with_sink_logits_matches_its_closed_form_count() {
    for (v, sh, mask) in cases() {
        let inputs = with_sinks(sh, mask, 84);
        for passes in [
            Passes::BOTH,
            Passes::FORWARD,
            Passes {
                forward: false,
                backward: true,
            },
        ] {
            let r = run(&inputs, v, passes, true);
            let got = counted(r.trace.as_ref().unwrap());
            assert_eq!(
                got,
                closed_form_counts(&inputs.plan(), v, passes),
                "{v} {sh:?} {passes:?}"
            );
            assert_eq!(got.contains_key(&Phase::SinkBack), passes.backward, "{v}");
        }
    }
}

#[test]
fn run_shows_the_sink_phase_and_rows_that_sum_to_one_with_their_sink() {
    let out = stdout_of(&["run", "scenarios/sink_logit.toml"]);
    assert!(out.contains("sliding window W=3"), "{out}");
    assert!(
        out.contains("probs: 12 rows, each sums to 1 with its sink's share p_sink"),
        "{out}"
    );
    // d_sink: one pair (P_sink, D) per row, 6 rows per head, one write per head
    let sink_back: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("sink_back"))
        .collect();
    assert_eq!(sink_back.len(), 2, "{out}");
    for line in sink_back {
        assert_eq!(line.split_whitespace().collect::<Vec<_>>(), ["sink_back", "24", "2"]);
    }
}
