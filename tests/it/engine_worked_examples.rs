//! The worked examples of the walkthroughs, checked in the tensors and in the event log.

use crate::support::inputs::{from_qkv, from_x, rows};
use attn_trace_core::engine::{Passes, Run, run};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, MASKED, Op, Phase, Trace};

fn trace(r: &Run) -> &Trace {
    r.trace.as_ref().expect("traced run")
}

/// The only write of `buf[off]` in the forward pass.
fn forward_write(t: &Trace, buf: Buf, off: usize) -> usize {
    let writes = t.index.writes(buf, off);
    assert!(!writes.is_empty(), "{buf}[{off}] is never written");
    writes[writes.len() - 1] as usize
}

fn derived(t: &Trace, n: usize, name: &str) -> usize {
    let v = t.view(n);
    v.derived
        .iter()
        .rev()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no {name} at #{n}"))
        .value
}

/// The reads made inside the loop iteration that produced event `n`, as (buffer, offset).
fn reads_of_iteration(t: &Trace, n: usize) -> Vec<(Buf, usize)> {
    let f = t.frame(t.events[n].frame).unwrap();
    (f.start as usize..f.end as usize)
        .map(|k| t.events[k])
        .filter(|e| e.op == Op::Read)
        .map(|e| (e.buf, e.offset as usize))
        .collect()
}

fn assert_close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "got {got:?}, want {want:?}");
    }
}

#[test]
fn baseline_scores_0_2_1_reads_q_8_to_11_and_k_4_to_7_and_writes_data_7() {
    let inputs = from_x(Shape::new(1, 3, 4, 2), Mask::Causal, 7);
    let r = run(&inputs, Variant::Baseline, Passes::BOTH, true);
    let t = trace(&r);
    let w = forward_write(t, Buf::Scores, 7);
    assert_eq!(t.phase_at(w), Phase::Scores);
    assert_eq!(
        (derived(t, w, "qi"), derived(t, w, "kj"), derived(t, w, "off")),
        (8, 4, 7)
    );
    let v = t.view(w);
    assert_eq!(v.index, vec![0, 2, 1]);
    assert_eq!(v.vars, vec![("bb", 0), ("i", 2), ("j", 1)]);
    let reads = reads_of_iteration(t, w);
    let want: Vec<(Buf, usize)> = (0..4).flat_map(|c| [(Buf::Q, 8 + c), (Buf::K, 4 + c)]).collect();
    assert_eq!(reads, want);
    // the value written is q[2]·k[1] scaled by 1/√C = 1/2
    let tn = &r.tensors;
    let dot: f32 = (0..4).map(|c| tn[Buf::Q][8 + c] * tn[Buf::K][4 + c]).sum();
    assert!((t.events[w].value - dot * 0.5).abs() < 1e-6);
    assert_eq!(t.events[w].value, tn[Buf::Scores][7]);
}

#[test]
fn mha_head_1_i_2_j_1_reads_q_10_11_and_k_6_7_and_writes_data_16() {
    let inputs = from_x(Shape::new(1, 3, 4, 2), Mask::Causal, 7);
    let r = run(&inputs, Variant::Mha, Passes::BOTH, true);
    let t = trace(&r);
    let w = forward_write(t, Buf::Scores, 16);
    assert_eq!(
        (derived(t, w, "q_base"), derived(t, w, "k_base"), derived(t, w, "off")),
        (10, 6, 16)
    );
    let v = t.view(w);
    assert_eq!(v.index, vec![0, 1, 2, 1]);
    assert_eq!(v.vars, vec![("bb", 0), ("hh", 1), ("i", 2), ("j", 1)]);
    assert_eq!(
        reads_of_iteration(t, w),
        vec![(Buf::Q, 10), (Buf::K, 6), (Buf::Q, 11), (Buf::K, 7)]
    );
    // q is read through its [B,T,H,D] view: q[10] is (b0, t2, h1, d0)
    let first = t.index.first_access(Buf::Q, 10).unwrap();
    assert_eq!(t.view(first).index, vec![0, 2, 1, 0]);
    let tn = &r.tensors;
    let dot = tn[Buf::Q][10] * tn[Buf::K][6] + tn[Buf::Q][11] * tn[Buf::K][7];
    assert!((t.events[w].value - dot / 2f32.sqrt()).abs() < 1e-6);
}

#[test]
fn indexing_trace_scores_0_1_0_at_data_3_and_masked_0_1_2_at_data_5() {
    let inputs = from_x(Shape::new(1, 3, 2, 1), Mask::Causal, 3);
    let r = run(&inputs, Variant::Baseline, Passes::FORWARD, true);
    let t = trace(&r);
    let w = forward_write(t, Buf::Scores, 3);
    assert_eq!((derived(t, w, "qi"), derived(t, w, "kj")), (2, 0));
    assert_eq!(t.view(w).index, vec![0, 1, 0]);
    let m = forward_write(t, Buf::Scores, 5);
    assert_eq!(t.view(m).index, vec![0, 1, 2]);
    assert_eq!(t.events[m].value, MASKED);
    assert_eq!(r.tensors[Buf::Scores][5], -1e9);
    // the dot product of a masked pair is still computed before it is overwritten
    assert_eq!(
        reads_of_iteration(t, m),
        vec![(Buf::Q, 2), (Buf::K, 4), (Buf::Q, 3), (Buf::K, 5)]
    );
    assert_eq!(r.tensors[Buf::Probs][5], 0.0);
}

/// Baseline worked row: Q[2]=[1,0,1,0]; K rows e0, e1, e0+e1; V rows e0, 2·e1, 3·e2.
fn numeric_baseline() -> Run {
    let q = rows(&[[0.5, 0.5, 0.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0]]);
    let k = rows(&[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]]);
    let v = rows(&[[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0]]);
    run(
        &from_qkv(Shape::new(1, 3, 4, 1), Mask::Causal, q, k, v),
        Variant::Baseline,
        Passes::BOTH,
        true,
    )
}

#[test]
fn numeric_baseline_row_2_in_tensors_and_in_the_log() {
    let r = numeric_baseline();
    let t = trace(&r);
    assert_close(&r.tensors[Buf::Scores][6..9], &[0.5, 0.0, 0.5], 1e-6);
    // exactly: P = [e^½, 1, e^½] / (2e^½ + 1) and att = P0·V0 + P1·V1 + P2·V2
    let e = 0.5f32.exp();
    let p = [e / (2.0 * e + 1.0), 1.0 / (2.0 * e + 1.0), e / (2.0 * e + 1.0)];
    assert_close(&r.tensors[Buf::Probs][6..9], &p, 1e-6);
    assert_close(&r.tensors[Buf::Att][8..12], &[p[0], 2.0 * p[1], 3.0 * p[2], 0.0], 1e-5);
    // the walkthrough quotes 3 decimals (att computed from the rounded probabilities)
    assert_close(&r.tensors[Buf::Probs][6..9], &[0.383, 0.233, 0.383], 1e-3);
    assert_close(&r.tensors[Buf::Att][8..12], &[0.383, 0.466, 1.149, 0.0], 2e-3);
    // the log's last write of each cell carries the same numbers
    let logged = |buf: Buf, offs: std::ops::Range<usize>| -> Vec<f32> {
        offs.map(|o| t.events[forward_write(t, buf, o)].value).collect()
    };
    assert_close(&logged(Buf::Probs, 6..9), &p, 1e-6);
    assert_close(&logged(Buf::Att, 8..12), &[p[0], 2.0 * p[1], 3.0 * p[2], 0.0], 1e-5);
    assert_eq!(logged(Buf::Probs, 6..9), r.tensors[Buf::Probs][6..9].to_vec());
}

#[test]
fn numeric_mha_head_1_row_2() {
    // head 1 lives in channels 2..3 of every row; head 0 (channels 0..1) is arbitrary
    let q = rows(&[[0.3, -0.2, 0.0, 1.0], [1.0, 1.0, 2.0, 0.0], [0.5, 0.5, 1.0, -1.0]]);
    let k = rows(&[[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [0.5, 0.5, 1.0, 1.0]]);
    let v = rows(&[[1.0, 2.0, 10.0, 0.0], [3.0, 4.0, 0.0, 10.0], [5.0, 6.0, 5.0, 5.0]]);
    let r = run(
        &from_qkv(Shape::new(1, 3, 4, 2), Mask::Causal, q, k, v),
        Variant::Mha,
        Passes::BOTH,
        true,
    );
    let t = trace(&r);
    // [B,H,T,T]: head 1, row 2 starts at ((0*2 + 1)*3 + 2)*3 = 15
    let s = std::f32::consts::FRAC_1_SQRT_2;
    assert_close(&r.tensors[Buf::Scores][15..18], &[s, -s, 0.0], 1e-6);
    let z = s.exp() + (-s).exp() + 1.0;
    let p = [s.exp() / z, (-s).exp() / z, 1.0 / z];
    assert_close(&r.tensors[Buf::Probs][15..18], &p, 1e-6);
    assert_close(&r.tensors[Buf::Probs][15..18], &[0.576, 0.140, 0.284], 1e-3);
    // att [B,T,H,D]: (b0, t2, h1) starts at ((0*3 + 2)*2 + 1)*2 = 10
    let att = [10.0 * p[0] + 5.0 * p[2], 10.0 * p[1] + 5.0 * p[2]];
    assert_close(&r.tensors[Buf::Att][10..12], &att, 1e-5);
    assert_close(&r.tensors[Buf::Att][10..12], &[7.18, 2.82], 5e-3);
    let w = forward_write(t, Buf::Att, 10);
    assert_eq!(derived(t, w, "a_base"), 10);
    assert_eq!(t.events[w].value, r.tensors[Buf::Att][10]);
}

#[test]
fn numeric_rows_sum_to_one_and_masked_probabilities_are_zero() {
    let r = numeric_baseline();
    for i in 0..3 {
        let row = &r.tensors[Buf::Probs][i * 3..i * 3 + 3];
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        for (j, &p) in row.iter().enumerate() {
            assert_eq!(p == 0.0, j > i, "probs[{i},{j}] = {p}");
        }
    }
}
