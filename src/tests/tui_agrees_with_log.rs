//! Eight things the tracer once showed that its own log contradicted, one test each: the
//! running partial sum, the cross-attention grid, the key rows' labels, the phase title of an
//! explicit mask, heat mode's offsets and legend, Compare's jump into softmax, dropout's
//! arithmetic, and a grouped `d_k +=` whose old value was folded into its sum.

use crate::tests::support::tui::{key, tracer_at, tracer_screen};
use crate::tui::app::{App, Screen};
use crate::tui::screens::tracer::{self, Tracer};
use crate::tui::widgets::{equation, memory};
use crate::tui::{Theme, TracedScenario};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::{Buf, Op, Phase, Trace};
use crossterm::event::KeyCode;
use ratatui::widgets::Block;
use std::sync::Arc;

fn traced(name: &str) -> Arc<TracedScenario> {
    let s = Scenario::shipped(name).unwrap_or_else(|| panic!("{name} is shipped"));
    Arc::new(TracedScenario::from_scenario(&s))
}

fn equation_text(st: &Tracer) -> Vec<String> {
    let ctx = st.ctx(Theme::MONO).expect("a context");
    equation::lines(&ctx)
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

/// `partial sum … = X` of the equation panel.
fn partial_sum(lines: &[String]) -> f64 {
    let line = lines
        .iter()
        .find(|l| l.starts_with("partial sum"))
        .expect("a partial sum");
    line.rsplit("= ")
        .next()
        .and_then(|x| x.trim().parse().ok())
        .expect("a number")
}

fn trace(traced: &TracedScenario, v: Variant) -> &Trace {
    traced.trace(v).expect("traced")
}

/// The events of the loop iteration whose last event is event `w`.
fn iteration(trace: &Trace, w: usize) -> std::ops::RangeInclusive<usize> {
    let f = trace.frame(trace.events[w].frame).expect("inside a loop");
    f.start as usize..=w
}

#[test]
fn partial_sums_hold_only_finished_terms() {
    // scores[7] of the walkthrough's baseline: the panel went 0.8595 → −0.7497 → −0.3655 →
    // −0.6691 → −1.7916 while the kernel's s goes 0 → −0.7497 → −0.7497 → −0.6691 → −0.6691
    let w = traced("mha_walkthrough");
    let tr = trace(&w, Variant::Baseline);
    let write = tr.index.first_write(Buf::Scores, 7).expect("scores[7] is written");
    let events: Vec<usize> = iteration(tr, write).collect();
    let sums: Vec<f64> = events[..5]
        .iter()
        .map(|&n| partial_sum(&equation_text(&tracer_at(&w, Variant::Baseline, n))))
        .collect();
    let want = [0.0, -0.7497, -0.7497, -0.6691, -0.6691];
    for (got, want) in sums.iter().zip(want) {
        assert!(
            (got - want).abs() < 1e-4,
            "partial sums {sums:?}, the kernel's s {want:?}"
        );
    }
    // every read of a first factor says the second follows, the last term's too
    for &n in &events[..events.len() - 1] {
        let lines = equation_text(&tracer_at(&w, Variant::Baseline, n));
        let first_factor = tr.events[n].buf == Buf::Q;
        assert_eq!(
            lines.iter().any(|l| l.contains("(next factor follows)")),
            first_factor,
            "event #{n}: {lines:#?}"
        );
    }
    // the weighted sum's first read: no term is finished yet
    let ws = tr
        .phases
        .iter()
        .find(|p| p.1 == Phase::WeightedSum)
        .expect("a weighted sum")
        .0 as usize;
    let lines = equation_text(&tracer_at(&w, Variant::Baseline, ws));
    assert!(lines.iter().any(|l| l.contains("(0 of 3 terms)")), "{lines:#?}");
    assert_eq!(partial_sum(&lines), 0.0);
    // and the backward scores pass
    let sb = tr
        .phases
        .iter()
        .find(|p| p.1 == Phase::ScoresBack)
        .expect("scores_back")
        .0 as usize;
    let lines = equation_text(&tracer_at(&w, Variant::Baseline, sb));
    assert_eq!(partial_sum(&lines), 0.0, "{lines:#?}");
    assert!(lines.iter().any(|l| l.contains("(0 of ")), "{lines:#?}");
}

#[test]
fn cross_attention_grids_are_s_rows_of_t_columns() {
    // S = 2 queries, T = 5 keys, an explicit mask
    let w = traced("cross_attention");
    let tr = trace(&w, Variant::Mha);
    let write = (0..tr.len())
        .find(|&n| tr.events[n].buf == Buf::Scores && tr.events[n].op == Op::Write)
        .expect("a score write");
    let st = tracer_at(&w, Variant::Mha, write);
    let ctx = st.ctx(Theme::MONO).expect("a context");
    let areas = tracer::areas(ratatui::layout::Rect::new(0, 0, 120, 40), &st, &ctx);
    let inner = Block::bordered().inner(areas.memory.expect("a memory panel"));
    let plan = memory::plan(inner, &ctx);
    let scores = plan
        .grids
        .iter()
        .find(|p| p.buf == Buf::Scores)
        .expect("the scores are drawn");
    let mut rows: Vec<&str> = scores
        .labels
        .iter()
        .map(|l| l.2.as_str())
        .filter(|l| l.starts_with('i'))
        .collect();
    let mut cols: Vec<&str> = scores
        .labels
        .iter()
        .map(|l| l.2.as_str())
        .filter(|l| l.starts_with('j'))
        .collect();
    rows.sort_unstable();
    rows.dedup();
    cols.sort_unstable();
    cols.dedup();
    assert_eq!(rows, ["i0", "i1"], "{:?}", scores.labels);
    assert_eq!(cols, ["j0", "j1", "j2", "j3", "j4"], "{:?}", scores.labels);
    // the grid's cells (not the flat row) are S·T per head, masked where the matrix says 0
    let keep = [[true, true, false, true, false], [false, true, true, true, true]];
    let data_y = scores.labels.iter().find(|l| l.2 == "data").map(|l| l.1);
    let grid: Vec<_> = scores.cells.iter().filter(|c| Some(c.y) != data_y).collect();
    for c in &grid {
        let (i, j) = (c.off / 5 % 2, c.off % 5);
        assert_eq!(c.masked, !keep[i][j], "scores[{}] (i{i} j{j})", c.off);
    }
    assert!(grid.len() >= 10, "at least one head's 2×5 matrix: {} cells", grid.len());
}

#[test]
fn key_rows_are_labelled_j() {
    // MHA walkthrough: the read of k[6] is key j = 1 of head 1
    let w = traced("mha_walkthrough");
    let tr = trace(&w, Variant::Mha);
    let n = (0..tr.len())
        .find(|&n| {
            let e = tr.events[n];
            (e.buf, e.offset, e.op) == (Buf::K, 6, Op::Read) && tr.phase_at(n) == Phase::Scores
        })
        .expect("scores read k[6]");
    let text = tracer_screen(&tracer_at(&w, Variant::Mha, n), 120, 40);
    assert!(text.contains("(b0 j1 h1 d0)"), "{text}");
    assert!(!text.contains("k[6] = 0.82  (b0 i1"), "{text}");
    // the k grid's rows are keys
    for row in ["j0 ", "j1 ", "j2 "] {
        assert!(
            text.lines()
                .any(|l| l.contains(&format!("│{row}")) || l.contains(&format!(" {row}"))),
            "{row}\n{text}"
        );
    }
}

#[test]
fn the_phase_title_names_the_runs_mask() {
    let w = traced("cross_attention");
    let tr = trace(&w, Variant::Mha);
    let n = tr.phases.iter().find(|p| p.1 == Phase::Scores).expect("scores").0 as usize;
    let text = tracer_screen(&tracer_at(&w, Variant::Mha, n), 120, 40);
    assert!(text.contains("explicit mask"), "{text}");
    assert!(!text.contains("causal"), "{text}");
    // a hidden pair's write says why in the mask's own terms
    let hidden = (0..tr.len())
        .find(|&n| tr.events[n].buf == Buf::Scores && tr.events[n].op == Op::Write && tr.events[n].value == -1e9)
        .expect("a masked score");
    let lines = equation_text(&tracer_at(&w, Variant::Mha, hidden));
    assert!(lines.iter().any(|l| l.contains("explicit mask has 0")), "{lines:#?}");
}

#[test]
fn heat_mode_labels_whole_offsets_and_has_a_legend() {
    // why_sqrt_d's buffers are too wide for numbers at 120 columns (and 80 rows leave room for
    // their flat rows under the dot product)
    let w = traced("why_sqrt_d");
    let tr = trace(&w, Variant::Baseline);
    let n = tr.len() / 3;
    let st = tracer_at(&w, Variant::Baseline, n);
    let ctx = st.ctx(Theme::MONO).expect("a context");
    let areas = tracer::areas(ratatui::layout::Rect::new(0, 0, 120, 80), &st, &ctx);
    let inner = Block::bordered().inner(areas.memory.expect("a memory panel"));
    let plan = memory::plan(inner, &ctx);
    let heat = plan.grids.iter().find(|p| p.heat).expect("a buffer in heat mode");
    let data_y = heat.labels.iter().find(|l| l.2 == "data").expect("the flat row").1;
    let mut labelled = 0;
    for c in heat.cells.iter().filter(|c| c.y == data_y) {
        if let Some(l) = heat
            .labels
            .iter()
            // a heat cell's label starts over it (issue 37: right-aligned, it stood two columns left)
            .find(|l| l.1 + 1 == data_y && l.0 == c.x)
        {
            assert_eq!(l.2, c.off.to_string(), "the label over data[{}]", c.off);
            labelled += 1;
        }
    }
    assert!(labelled >= 3, "some flat offsets are labelled: {:?}", heat.labels);
    assert!(tracer_screen(&st, 120, 80).contains("heat −"), "a legend");
}

#[test]
fn compare_enter_on_softmax_lands_on_the_final_probability() {
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
    key(&mut a, KeyCode::Char('3')); // Compare
    assert!(matches!(a.screen, Screen::Compare(_)), "menu entry 3 is Compare");
    key(&mut a, KeyCode::Char(']')); // softmax
    key(&mut a, KeyCode::Enter);
    let t = a.tracer().expect("Enter opens the tracer");
    let tr = t.traced.trace(t.variant).expect("traced");
    let e = tr.events[t.cursor];
    assert_eq!(
        (e.buf, e.op, tr.phase_at(t.cursor)),
        (Buf::Probs, Op::Write, Phase::Softmax)
    );
    let final_value = t.traced.run(t.variant).expect("a run").tensors[Buf::Probs][e.offset as usize];
    assert_eq!(e.value, final_value, "the probability Compare showed, not exp(S − max)");
    let writes = tr.index.writes(Buf::Probs, e.offset as usize);
    assert_eq!(writes.last().map(|&x| x as usize), Some(t.cursor), "its last write");
}

#[test]
fn dropout_shows_its_arithmetic() {
    let w = traced("dropout");
    let tr = trace(&w, Variant::Mha);
    let n = (0..tr.len())
        .find(|&n| tr.events[n].buf == Buf::ProbsDrop && tr.events[n].op == Op::Write)
        .expect("a probs_drop write");
    let lines = equation_text(&tracer_at(&w, Variant::Mha, n));
    let keep = tr.events[n - 2].value;
    let p = tr.events[n - 1].value;
    let line = lines
        .iter()
        .find(|l| l.contains("1/(1 − 0.25)"))
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(!line.starts_with("copy"), "{line}");
    let product = f64::from(p) * f64::from(keep) / 0.75;
    let shown: f64 = line
        .rsplit("= ")
        .next()
        .and_then(|x| x.trim().parse().ok())
        .expect("a result");
    assert!(
        (shown - product).abs() < 1e-4,
        "{line}: {p} × {keep} / 0.75 = {product}"
    );
    assert_eq!(
        tr.events[n].value,
        (p * keep * (1.0 / 0.75)),
        "the kernel's own product"
    );
}

#[test]
fn a_grouped_d_k_add_shows_old_plus_scaled_sum() {
    // `attn-trace tui scenarios/gqa.toml`, `g d_k[10]`, `}` four times: the second query head of
    // the group adds its share into d_k[10]. The panel printed `Σ × 1/√D = -0.0563 × 0.7071 =
    // -0.05`, the old value folded into Σ and the product false; the kernel computes
    // old + Σ·scale.
    let s = Scenario::shipped("gqa").expect("gqa is shipped");
    let mut a = App::new(TracedScenario::from_scenario(&s), Theme::MONO, 120, 40);
    key(&mut a, KeyCode::Char('g'));
    for c in "d_k[10]".chars() {
        key(&mut a, KeyCode::Char(c));
    }
    key(&mut a, KeyCode::Enter);
    for _ in 0..4 {
        key(&mut a, KeyCode::Char('}'));
    }
    let st = a.tracer().expect("the tracer is open");
    assert_eq!(st.cursor, 5337);
    let tr = st.traced.trace(st.variant).expect("traced");
    let e = tr.events[st.cursor];
    assert_eq!((e.op, e.buf, e.offset), (Op::Write, Buf::DK, 10));
    // the log: the old value read right before the write, the scaled sum added to it
    let old = tr.events[st.cursor - 1];
    assert_eq!((old.op, old.buf, old.offset), (Op::Read, Buf::DK, 10));
    let lines = equation_text(st);
    assert!(
        lines
            .iter()
            .any(|l| l == "d_k[10] += Σ × 1/√D: -0.0304 + (-0.0259 × 1/√2) = -0.0487"),
        "{lines:#?}"
    );
    // the running sum is the products alone: the old value is added at the write
    assert!((partial_sum(&lines) - -0.02593).abs() < 5e-5, "{lines:#?}");
    assert!((f64::from(e.value) - (f64::from(old.value) + -0.02593 * std::f64::consts::FRAC_1_SQRT_2)).abs() < 1e-4);
    // the dot strip says the sum is scaled before it is added to the old value
    let text = tracer_screen(st, 120, 40);
    assert!(text.contains("Σ × 1/√D added to d_k[10] = -0.03036"), "{text}");
    assert!(!text.contains("plus d_k[10]"), "{text}");
    // and the write's chain stays on a small terminal: the notes under the equation give way
    let small = tracer_screen(st, 80, 24);
    assert!(
        small.contains("d_k[10] += Σ × 1/√D: -0.0304 + (-0.0259 × 1/√2) = -0.0487"),
        "{small}"
    );
}

/// The tracer's equation panel at event `n` of the shipped sink scenario's MHA run, as text.
fn equation_at(traced: &std::sync::Arc<crate::tui::TracedScenario>, n: usize) -> Vec<String> {
    let st = crate::tests::support::tui::tracer_at(traced, Variant::Mha, n);
    let ctx = st.ctx(crate::tui::Theme::MONO).expect("a context");
    crate::tui::widgets::equation::lines(&ctx)
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

#[test]
fn the_tracer_steps_through_a_softmax_row_with_its_sink() {
    // row (b=0, h=0, i=5) of sink_logit.toml: sink 0.5 above every score, keys 3..=5 in the
    // window, e = [0, 0, 0, 0.4944, 0.8965, 0.5846], Σ e = 1 + 1.9754 = 2.9754
    let s = attn_trace_core::scenario::Scenario::shipped("sink_logit").expect("shipped");
    let traced = std::sync::Arc::new(crate::tui::TracedScenario::from_scenario(&s));
    let tr = traced.trace(Variant::Mha).expect("traced");
    let share = tr.index.first_write(Buf::PSink, 5).expect("p_sink[5] is written");
    let row = tr.frame(tr.events[share].frame).expect("the row's iteration");
    let events: Vec<usize> = (row.start as usize..row.end as usize).collect();
    let sink_read = events[0];
    assert_eq!(
        (tr.events[sink_read].buf, tr.events[sink_read].op),
        (Buf::Sink, Op::Read)
    );
    let has = |n: usize, want: &str| {
        let lines = equation_at(&traced, n);
        assert!(
            lines.iter().any(|l| l.contains(want)),
            "event #{n}: want {want:?} in {lines:#?}"
        );
        lines
    };
    let lines = has(sink_read, "pass a: the sink logit starts the row max, m = sink = 0.5");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("Z = exp(sink_h − m) + Σ_k exp(S[i,k] − m)")),
        "{lines:#?}"
    );
    // pass a: the first score read; pass b: e_4 written, five exponentials and the sink summed
    has(events[1], "pass a: row max so far m = max(sink, S[30..=30]) = 0.5");
    let write = |off: usize, k: usize| {
        events
            .iter()
            .copied()
            .filter(|&n| {
                tr.events[n].op == Op::Write && tr.events[n].buf == Buf::Probs && tr.events[n].offset as usize == off
            })
            .nth(k)
            .expect("a write of probs")
    };
    has(write(34, 0), "pass b: e_4 = exp(0.3907 − 0.5000) = 0.8965");
    has(
        write(34, 0),
        "Σ e so far (e_sink = exp(0.5000 − 0.5000) = 1.0000 and 5 of 6) = 2.3908",
    );
    has(write(34, 1), "pass c: P = e_4 / Σ e = 0.8965 / 2.9754 = 0.3013");
    has(
        share,
        "the sink's share: P_sink = e_sink / Σ e = 1.0000 / 2.9754 = 0.3361",
    );
}
