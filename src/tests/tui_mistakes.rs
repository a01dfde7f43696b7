//! The mistakes gallery and the side-by-side view, driven through `update` as the terminal drives
//! them: the seven entries, stepping both runs together, `d` to the first divergence, the
//! `MISTAKE n` lines, and the downstream panel's numbers checked against the tensors that
//! `attn-trace run` reports (`Scenario::runs`). Snapshots at 80×24 and 120×40.
#![allow(non_snake_case)] // sizes keep the docs' capital letters: T, C, D

use crate::tests::support::tui::{draw, key, settle};
use crate::tui::app::{self, App, Msg, Popup, Screen};
use crate::tui::screens::mistakes::{self, SideBySide};
use crate::tui::{Theme, TracedScenario};
use attn_trace_analysis::mistakes::{CORRECT, MISTAKEN, Place, Timeline};
use attn_trace_core::engine::{Run, first_divergence};
use attn_trace_core::kernels::Mask;
use attn_trace_core::kernels::attention_mistakes::Mistake;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Buf;
use attn_trace_core::trace::Phase;
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

fn scenario(name: &str) -> Scenario {
    Scenario::mistake(name).unwrap_or_else(|| panic!("the gallery ships {name}"))
}

/// The app opened on a gallery scenario, as `attn-trace tui scenarios/mistakes/NAME.toml` opens it.
fn opened(name: &str, w: u16, h: u16) -> App {
    App::new(TracedScenario::from_scenario(&scenario(name)), Theme::MONO, w, h)
}

fn view(app: &App) -> &SideBySide {
    match &app.screen {
        Screen::Mistakes(s) => s,
        _ => panic!("the side-by-side view is open"),
    }
}

/// The correct and the mistaken run of the scenario's only variant, as `run --json` reports them.
fn runs(name: &str) -> (Run, Run) {
    let mut runs = scenario(name).runs(false).into_iter();
    let good = runs.next().expect("a correct run");
    let bad = runs.next().expect("a mistaken run");
    assert!(good.mistakes.is_empty() && !bad.mistakes.is_empty());
    (good, bad)
}

/// The downstream panel's text on a terminal wide enough that no line wraps.
fn panel(name: &str) -> String {
    let app = opened(name, 240, 60);
    let screen = draw(&app, 240, 60);
    for n in &view(&app).report {
        assert!(screen.contains(&n.text), "the panel shows {:?}:\n{screen}", n.text);
    }
    screen
}

fn list(values: impl IntoIterator<Item = f32>) -> String {
    values
        .into_iter()
        .map(|v| format!("{:.2}", v + 0.0))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_gallery_lists_the_seven_mistakes_and_opens_each_side_by_side() {
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
    key(&mut a, KeyCode::Char('7'));
    let Screen::Gallery(g) = &a.screen else {
        panic!("menu entry 7 opens the gallery")
    };
    assert_eq!(g.entries.len(), 7);
    let names: Vec<&str> = g.entries.iter().map(|e| e.name).collect();
    assert_eq!(names, Mistake::ALL.map(Mistake::name));
    assert!(g.entries.iter().all(|e| e.mistake.is_some() && !e.about.is_empty()));
    let screen = draw(&a, 120, 40);
    for m in Mistake::ALL {
        assert!(screen.contains(m.name()), "{screen}");
    }
    // the highlighted entry's whole symptom and its scenario's about
    assert!(
        screen.contains("symptom: queries, keys and values are all x itself"),
        "{screen}"
    );
    assert!(
        screen.contains("this scenario: The scores of the mistaken run are symmetric"),
        "{screen}"
    );
    for k in 0..7 {
        key(&mut a, KeyCode::Char(char::from(b'1' + k as u8)));
        assert_eq!(view(&a).mistakes().list(), vec![Mistake::ALL[k]]);
        key(&mut a, KeyCode::Esc);
        let Screen::Gallery(g) = &a.screen else {
            panic!("Esc goes back to the gallery")
        };
        assert_eq!(g.selected, k, "with the same entry highlighted");
    }
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Enter);
    assert_eq!(
        view(&a).mistakes().list(),
        vec![Mistake::ALL[0]],
        "↓ from the last entry wraps to the first"
    );
    key(&mut a, KeyCode::Char('q'));
    key(&mut a, KeyCode::Char('q'));
    assert!(
        matches!(a.screen, Screen::Menu(ref m) if m.selected == 6),
        "q leaves the gallery for the menu"
    );
}

#[test]
fn a_click_in_the_gallery_opens_the_entry_under_it() {
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    key(&mut a, KeyCode::Char('7'));
    let screen = draw(&a, 80, 24);
    let row = screen
        .lines()
        .position(|l| l.contains("mask_by_multiply"))
        .expect("entry 3 is drawn") as u16;
    let click = MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: 10,
        row,
        modifiers: KeyModifiers::NONE,
    };
    app::update(&mut a, Msg::Mouse(click));
    assert_eq!(view(&a).mistakes().list(), vec![Mistake::MaskByMultiply]);
}

#[test]
fn a_scenario_with_mistakes_opens_side_by_side_however_it_is_opened() {
    // attn-trace tui FILE
    let a = opened("mask_by_multiply", 80, 24);
    assert!(
        !a.back.iter().any(|s| matches!(s, Screen::Gallery(_))),
        "not opened from the gallery"
    );
    // Open scenario… in the menu
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    a.scenarios_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/mistakes").into();
    key(&mut a, KeyCode::Char('4'));
    key(&mut a, KeyCode::Enter);
    settle(&mut a);
    assert!(!view(&a).mistakes().is_empty());
    key(&mut a, KeyCode::Esc);
    assert!(
        matches!(a.screen, Screen::Menu(_)),
        "Esc goes to the menu when not opened from the gallery"
    );
    // a scenario without mistakes still opens the tracer
    assert!(
        App::new(TracedScenario::builtin(), Theme::MONO, 80, 24)
            .tracer()
            .is_some()
    );
}

#[test]
fn the_timeline_matches_the_phases_both_runs_make_and_waits_on_the_others() {
    let traced = TracedScenario::from_scenario(&scenario("no_input_projection"));
    let a = traced.runs[0].trace.as_ref().unwrap();
    let b = traced.mistaken[0].trace.as_ref().unwrap();
    let tl = Timeline::new([a, b]);
    let phases: Vec<(Phase, bool, bool)> = tl
        .segments
        .iter()
        .map(|s| (s.phase, s.spans[CORRECT].is_some(), s.spans[MISTAKEN].is_some()))
        .collect();
    assert_eq!(
        phases,
        [
            (Phase::QkvProj, true, false),
            (Phase::Split, true, false),
            (Phase::NoProj, false, true),
            (Phase::Scores, true, true),
            (Phase::Softmax, true, true),
            (Phase::WeightedSum, true, true),
            (Phase::OutProj, true, true),
        ]
    );
    let noproj = &tl.segments[2];
    assert_eq!(tl.len, a.len() + noproj.len, "every event of both runs has a step");
    // in no_proj the correct run waits on the last event of its split
    let split_end = tl.segments[1].spans[CORRECT].as_ref().unwrap().end;
    assert_eq!(tl.place(noproj.t0, CORRECT), Place::Waiting(split_end - 1));
    assert_eq!(tl.place(noproj.t0, MISTAKEN), Place::At(0));
    // in the projections the mistaken run waits on its first event
    assert_eq!(tl.place(0, MISTAKEN), Place::Waiting(0));
    // from the scores on, the two runs step in lockstep, each at the same point of its phase
    let scores = &tl.segments[3];
    for t in [scores.t0, scores.t0 + 5, tl.len - 1] {
        let (Place::At(x), Place::At(y)) = (tl.place(t, CORRECT), tl.place(t, MISTAKEN)) else {
            panic!("both runs make the phase at step {t}")
        };
        assert_eq!(
            (a.events[x].buf, a.events[x].offset),
            (b.events[y].buf, b.events[y].offset)
        );
        assert_eq!(tl.step_of(CORRECT, x), Some(t));
        assert_eq!(tl.step_of(MISTAKEN, y), Some(t));
    }
}

#[test]
fn both_runs_step_together_and_d_jumps_to_where_they_diverge() {
    let mut a = opened("mask_by_multiply", 120, 40);
    let traced = TracedScenario::from_scenario(&scenario("mask_by_multiply"));
    let (good, bad) = (
        traced.runs[0].trace.as_ref().unwrap(),
        traced.mistaken[0].trace.as_ref().unwrap(),
    );
    let n = first_divergence(good, bad).expect("the runs differ");
    // the first masked score: query 0, key 1 of head 0, −1e9 against 0
    assert_eq!((good.events[n].buf.name(), good.events[n].offset), ("scores", 1));
    assert_eq!((good.events[n].value, bad.events[n].value), (-1e9, 0.0));
    assert_eq!(view(&a).places(), [Place::At(0), Place::At(0)]);
    key(&mut a, KeyCode::Char('n'));
    key(&mut a, KeyCode::Char('n'));
    assert_eq!(view(&a).places(), [Place::At(2), Place::At(2)]);
    key(&mut a, KeyCode::Char('p'));
    assert_eq!(view(&a).places(), [Place::At(1), Place::At(1)]);
    key(&mut a, KeyCode::Char('d'));
    let v = view(&a);
    assert_eq!(v.diverges_at, Some(n));
    assert_eq!(v.places(), [Place::At(n), Place::At(n)]);
    let msg = v.message.as_deref().expect("d explains itself on the status line");
    assert!(
        msg.contains(&format!("#{n}")) && msg.contains("-1e9") && msg.contains("0.00"),
        "{msg}"
    );
    let screen = draw(&a, 120, 40);
    assert!(screen.contains(&format!("diverge at #{n}")), "{screen}");
    assert!(
        screen.contains("≠ correct"),
        "the mistaken half marks the differing event: {screen}"
    );
    // j steps the innermost loop of both, ] the phase, End the last step
    key(&mut a, KeyCode::Char(']'));
    assert_eq!(good.phase_at(view(&a).places()[CORRECT].event()), Phase::Softmax);
    // from the first step of softmax, [ goes to the first step of the scores
    key(&mut a, KeyCode::Char('['));
    assert_eq!(good.phase_at(view(&a).places()[CORRECT].event()), Phase::Scores);
    key(&mut a, KeyCode::End);
    assert_eq!(view(&a).places(), [Place::At(good.len() - 1), Place::At(bad.len() - 1)]);
    key(&mut a, KeyCode::Char('n'));
    assert_eq!(view(&a).t, view(&a).timeline.len - 1, "n at the end stays");
    key(&mut a, KeyCode::Home);
    let before = view(&a).places()[CORRECT].event();
    key(&mut a, KeyCode::Char('j'));
    let after = view(&a).places()[CORRECT].event();
    assert_eq!(Some(after), good.next_iteration(before, 0));
}

#[test]
fn the_mistaken_half_marks_the_mistake_line_when_it_runs() {
    let mut a = opened("mask_by_multiply", 120, 40);
    key(&mut a, KeyCode::Char('d'));
    let v = view(&a);
    let [good, bad] = v.traces().unwrap();
    let [pg, pb] = v.places();
    let code = mistakes::code_view(bad, pb, MISTAKEN, Phase::Scores, v.mistakes());
    assert!(code.file.ends_with("attention_mistakes.rs"));
    let text = attn_trace_core::source::source(code.file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(!code.marks.is_empty());
    assert!(
        lines[code.marks[0] - 1].contains("MISTAKE 3"),
        "{:?}",
        lines[code.marks[0] - 1]
    );
    assert_eq!(code.current, Some(pb.event()).map(|n| bad.events[n].line as usize));
    // the correct half shows its own kernel, unmarked
    let right = mistakes::code_view(good, pg, CORRECT, Phase::Scores, v.mistakes());
    assert!(right.file.ends_with("attention_mha.rs") && right.marks.is_empty());
    let screen = draw(&a, 120, 40);
    assert!(screen.contains(&format!("{:>4}! ", code.marks[0])), "{screen}");
    // mistake 6 runs the shared row softmax from its own loop: the panel stays on that loop
    let mut a = opened("softmax_over_two_dims", 120, 40);
    key(&mut a, KeyCode::Char('d'));
    let v = view(&a);
    let [_, bad] = v.traces().unwrap();
    let code = mistakes::code_view(bad, v.places()[MISTAKEN], MISTAKEN, Phase::Softmax, v.mistakes());
    assert!(code.file.ends_with("attention_mistakes.rs"));
    assert!(lines_of(&code.marks).any(|l| l.contains("MISTAKE 6")));
}

fn lines_of(marks: &[usize]) -> impl Iterator<Item = &'static str> + '_ {
    let text = attn_trace_core::source::source("crates/core/src/kernels/attention_mistakes.rs").unwrap();
    marks.iter().filter_map(move |&m| text.lines().nth(m - 1))
}

#[test]
fn a_phase_the_mistake_leaves_out_shows_the_mistaken_run_waiting() {
    let mut a = opened("no_output_projection", 120, 40);
    key(&mut a, KeyCode::End);
    let traced = TracedScenario::from_scenario(&scenario("no_output_projection"));
    let (good, bad) = (
        traced.runs[0].trace.as_ref().unwrap(),
        traced.mistaken[0].trace.as_ref().unwrap(),
    );
    let v = view(&a);
    assert_eq!(good.phase_at(v.places()[CORRECT].event()), Phase::OutProj);
    assert_eq!(v.places()[MISTAKEN], Place::Waiting(bad.len() - 1));
    let code = mistakes::code_view(bad, v.places()[MISTAKEN], MISTAKEN, Phase::OutProj, v.mistakes());
    assert_eq!(code.current, None);
    assert!(lines_of(&code.marks).any(|l| l.starts_with("//! 4. no output projection")));
    let screen = draw(&a, 120, 40);
    assert!(
        screen.contains("no out_proj here: mistake 4 returns att as the output"),
        "{screen}"
    );
    // the divergence is where the correct run starts its output projection
    key(&mut a, KeyCode::Char('d'));
    let v = view(&a);
    assert_eq!(v.diverges_at, Some(bad.len()));
    assert_eq!(v.places()[CORRECT], Place::At(bad.len()));
    assert!(v.message.as_deref().unwrap().contains("has ended"));
}

#[test]
fn enter_traces_the_correct_run_here_and_q_comes_back() {
    let mut a = opened("scale_by_seq_len", 80, 24);
    key(&mut a, KeyCode::Char('d'));
    let n = view(&a).places()[CORRECT].event();
    key(&mut a, KeyCode::Enter);
    let t = a.tracer().expect("Enter opens the tracer");
    assert_eq!(t.cursor, n);
    key(&mut a, KeyCode::Char('q'));
    assert_eq!(
        view(&a).places()[CORRECT].event(),
        n,
        "q in the tracer comes back to the same step"
    );
    key(&mut a, KeyCode::Char('?'));
    match &a.popup {
        Some(Popup::Help(h)) => assert!(h.keys.iter().any(|k| k.1.contains("where they diverge")), "{h:?}"),
        other => panic!("? lists the view's keys, got {other:?}"),
    }
}

#[test]
fn no_input_projection_shows_symmetric_scores() {
    let (good, bad) = runs("no_input_projection");
    let (g, w) = (&good.tensors, &bad.tensors);
    assert_eq!(w[Buf::Q], w[Buf::X], "q is x itself");
    assert!(w[Buf::WQkv].is_empty());
    // mask = "none", B = 1, H = 2, T = 4: every pair is visible both ways
    let T = 4;
    let asym = |s: &[f32]| {
        let mut worst = 0.0f32;
        for h in 0..2 {
            for i in 0..T {
                for j in 0..T {
                    worst = worst.max((s[(h * T + i) * T + j] - s[(h * T + j) * T + i]).abs());
                }
            }
        }
        worst
    };
    assert_eq!(asym(&w[Buf::Scores]), 0.0);
    assert!(asym(&g[Buf::Scores]) > 0.1);
    let screen = panel("no_input_projection");
    assert!(
        screen.contains(&format!(
            "the mistaken scores are symmetric: max |S[i,j] − S[j,i]| = 0.0000 over 12 pairs (correct run: {:.4})",
            asym(&g[Buf::Scores])
        )),
        "{screen}"
    );
    assert!(screen.contains(&format!(
        "mistaken S[0,1] = {:.3}, S[1,0] = {:.3}",
        w[Buf::Scores][1],
        w[Buf::Scores][4]
    )));
}

#[test]
fn scale_by_seq_len_shows_the_score_ratio_and_a_flatter_softmax() {
    let (good, bad) = runs("scale_by_seq_len");
    let (g, w) = (&good.tensors, &bad.tensors);
    let (T, D) = (16usize, 2usize);
    let ratios: Vec<f32> = (0..g[Buf::Scores].len())
        .filter(|&o| !Mask::Causal.hides(o / T % T, o % T) && g[Buf::Scores][o].abs() > 1e-3)
        .map(|o| w[Buf::Scores][o] / g[Buf::Scores][o])
        .collect();
    let mean = ratios.iter().sum::<f32>() / ratios.len() as f32;
    assert!((mean - (D as f32).sqrt() / (T as f32).sqrt()).abs() < 1e-4, "{mean}");
    let row_max = |p: &[f32]| {
        p.chunks(T)
            .map(|r| r.iter().copied().fold(0.0f32, f32::max))
            .sum::<f32>()
            / 64.0
    };
    let (sharp, flat) = (row_max(&g[Buf::Probs]), row_max(&w[Buf::Probs]));
    assert!(flat < sharp);
    let screen = panel("scale_by_seq_len");
    for want in [
        format!("mistaken / correct = {mean:.3} (over {} scores)", ratios.len()),
        "each is √D/√T = 0.354 times the correct one".to_string(),
        format!("correct {sharp:.3}, mistaken {flat:.3}: the softmax is too flat (T = 16 > D = 2)"),
        format!(
            "  mistaken {}",
            list(
                w[Buf::Probs][..T * T]
                    .chunks(T)
                    .map(|r| r.iter().copied().fold(0.0, f32::max))
            )
        ),
    ] {
        assert!(screen.contains(&want), "{want}\n{screen}");
    }
}

#[test]
fn mask_by_multiply_shows_masked_probabilities_above_zero() {
    let (good, bad) = runs("mask_by_multiply");
    let (g, w) = (&good.tensors, &bad.tensors);
    let T = 4;
    let hidden: Vec<usize> = (0..w[Buf::Probs].len())
        .filter(|&o| Mask::Causal.hides(o / T % T, o % T))
        .collect();
    assert_eq!(hidden.len(), 12);
    assert!(
        hidden
            .iter()
            .all(|&o| w[Buf::Probs][o] > 0.0 && g[Buf::Probs][o] == 0.0)
    );
    let worst = hidden.iter().map(|&o| w[Buf::Probs][o]).fold(0.0f32, f32::max);
    let screen = panel("mask_by_multiply");
    assert!(
        screen.contains(&format!(
            "12 of 12 masked probabilities are > 0 in the mistaken run, the largest {worst:.3}"
        )),
        "{screen}"
    );
    assert!(screen.contains("(correct run: at most 0.000)"));
    let row0 = format!(
        "row i=0, b0 h0: correct [1.00 0.00 0.00 0.00] · mistaken [{}]",
        list(w[Buf::Probs][..T].to_vec())
    );
    assert!(screen.contains(&row0), "{row0}\n{screen}");
}

#[test]
fn no_output_projection_shows_each_head_in_its_own_channels() {
    let (good, bad) = runs("no_output_projection");
    let (g, w) = (&good.tensors, &bad.tensors);
    assert!(w[Buf::WProj].is_empty() && w[Buf::Out].is_empty());
    assert_eq!(bad.tensors.output(), &w[Buf::Att][..], "the mistaken output is att");
    // C = 4, H = 2, D = 2, T = 3: the last query's row
    let (C, D, row) = (4usize, 2usize, 2 * 4);
    let part = |h: usize, c: usize| -> f32 {
        (h * D..(h + 1) * D)
            .map(|k| g[Buf::Att][row + k] * g[Buf::WProj][k * C + c])
            .sum()
    };
    let correct = format!(
        "  correct  h0 [{}] h1 [{}]",
        list((0..C).map(|c| part(0, c))),
        list((0..C).map(|c| part(1, c)))
    );
    let mistaken = format!(
        "  mistaken h0 [{:.2} {:.2} 0.00 0.00] h1 [0.00 0.00 {:.2} {:.2}]",
        w[Buf::Att][row],
        w[Buf::Att][row + 1],
        w[Buf::Att][row + 2],
        w[Buf::Att][row + 3]
    );
    let screen = panel("no_output_projection");
    for want in [&correct, &mistaken] {
        assert!(screen.contains(want.as_str()), "{want}\n{screen}");
    }
    assert!(screen.contains("correct: 4 of 4 output channels mix several heads"));
}

#[test]
fn dropout_not_applied_shows_the_probabilities_that_were_never_dropped() {
    let (good, bad) = runs("dropout_not_applied");
    let (g, w) = (&good.tensors, &bad.tensors);
    assert!(
        w[Buf::DropMask].is_empty() && w[Buf::ProbsDrop].is_empty(),
        "the mistaken run never drops"
    );
    let dropped: Vec<usize> = (0..g[Buf::DropMask].len())
        .filter(|&o| g[Buf::DropMask][o] == 0.0)
        .collect();
    assert!(!dropped.is_empty());
    let used = dropped.iter().filter(|&&o| w[Buf::Probs][o] > 0.0).count();
    assert!(used < dropped.len(), "the scenario drops some masked pairs too");
    assert!(used > 0 && dropped.iter().all(|&o| g[Buf::ProbsDrop][o] == 0.0));
    let diff = g[Buf::Att]
        .iter()
        .zip(&w[Buf::Att])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    let screen = panel("dropout_not_applied");
    for want in [
        format!(
            "the correct run drops {} of 32 probabilities (drop_mask = 0) and scales the kept ones by 1/(1 − p) = 1.429",
            dropped.len()
        ),
        format!("the mistaken run still uses {used} of those {}", dropped.len()),
        // the dropped cells it does not use are masked ones, and the note says so
        format!(
            "(the other {} are masked: probability 0 in both runs)",
            dropped.len() - used
        ),
        format!("att differs between the runs by up to {diff:.3}"),
    ] {
        assert!(screen.contains(&want), "{want}\n{screen}");
    }
}

#[test]
fn softmax_over_two_dims_shows_rows_that_no_longer_sum_to_one() {
    let (good, bad) = runs("softmax_over_two_dims");
    let (g, w) = (&good.tensors, &bad.tensors);
    let T = 4;
    let sums: Vec<f32> = w[Buf::Probs].chunks(T).map(|r| r.iter().sum()).collect();
    assert!(sums.iter().all(|s| (s - 1.0).abs() > 1e-3), "{sums:?}");
    assert!(
        g[Buf::Probs]
            .chunks(T)
            .all(|r| (r.iter().sum::<f32>() - 1.0).abs() < 1e-5)
    );
    let heads: Vec<f32> = w[Buf::Probs].chunks(T * T).map(|m| m.iter().sum()).collect();
    assert!(heads.iter().all(|s| (s - 1.0).abs() < 1e-5), "{heads:?}");
    let screen = panel("softmax_over_two_dims");
    for want in [
        format!("row sums, mistaken b0 h0: {}", list(sums[..T].to_vec())),
        format!("row sums, mistaken b0 h1: {}", list(sums[T..].to_vec())),
        "8 of 8 mistaken rows are off 1 by more than 0.001".to_string(),
        format!("b0: h0 {:.3} · h1 {:.3}", heads[0], heads[1]),
    ] {
        assert!(screen.contains(&want), "{want}\n{screen}");
    }
}

#[test]
fn side_by_side_snapshots() {
    for name in [
        "mask_by_multiply",
        "softmax_over_two_dims",
        "no_output_projection",
        "overwrite_kv_grad",
    ] {
        for (w, h) in [(80, 24), (120, 40)] {
            let mut a = opened(name, w, h);
            key(&mut a, KeyCode::Char('d'));
            insta::assert_snapshot!(format!("side_by_side_{name}_{w}x{h}"), draw(&a, w, h));
        }
    }
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    key(&mut a, KeyCode::Char('7'));
    insta::assert_snapshot!("gallery_80x24", draw(&a, 80, 24));
}

#[test]
fn two_variants_with_backward_switch_with_tab_and_the_mistaken_run_waits_in_backward() {
    let text = "title = \"both\"\n[shape]\nB = 1\nT = 3\nC = 4\nH = 2\n\
                [run]\nmistakes = [\"mask_by_multiply\", \"scale_by_seq_len\"]\n";
    let s = Scenario::parse(text, "both.toml").expect("a valid scenario");
    let mut a = App::new(TracedScenario::from_scenario(&s), Theme::MONO, 120, 40);
    assert_eq!(view(&a).variant().name(), "mha", "MHA first, as the tracer opens");
    let names: Vec<&str> = view(&a).mistakes().list().iter().map(|m| m.name()).collect();
    assert_eq!(names, ["scale_by_seq_len", "mask_by_multiply"]);
    key(&mut a, KeyCode::Char(']'));
    key(&mut a, KeyCode::Char(']'));
    let phase = |a: &App| {
        let v = view(a);
        v.timeline.segments[v.timeline.segment_at(v.t)].phase
    };
    assert_eq!(phase(&a), Phase::Scores);
    key(&mut a, KeyCode::Tab);
    assert_eq!(view(&a).variant().name(), "baseline");
    assert_eq!(phase(&a), Phase::Scores, "Tab keeps the phase");
    // both mistakes' lines are marked in the scores pass
    let v = view(&a);
    let [_, bad] = v.traces().unwrap();
    let code = mistakes::code_view(bad, v.places()[MISTAKEN], MISTAKEN, Phase::Scores, v.mistakes());
    let marked: Vec<&str> = lines_of(&code.marks).collect();
    assert!(marked.iter().any(|l| l.contains("MISTAKE 2")) && marked.iter().any(|l| l.contains("MISTAKE 3")));
    // the correct run goes on backward; the mistaken one is forward only
    key(&mut a, KeyCode::End);
    let v = view(&a);
    assert!(matches!(v.places()[MISTAKEN], Place::Waiting(_)));
    let screen = draw(&a, 120, 40);
    assert!(screen.contains("a mistaken run is forward only"), "{screen}");
    // the downstream panel has both mistakes, in the kernel file's order
    let headings: Vec<&str> = v.report.iter().filter(|n| n.heading).map(|n| n.text.as_str()).collect();
    assert!(headings[0].starts_with("MISTAKE 2 scale_by_seq_len") && headings[1].starts_with("MISTAKE 3"));
}

#[test]
fn overwrite_kv_grad_keeps_only_the_last_query_heads_share_of_d_k_and_d_v() {
    // B=1, T=3, C=8, H=4 query heads of D=2 over H_kv=2 key/value heads: heads 0, 1 read kv
    // head 0, heads 2, 3 read kv head 1
    let (S, T, H, H_kv, D) = (3, 3, 4, 2, 2);
    let traced = TracedScenario::from_scenario(&scenario("overwrite_kv_grad"));
    let (good, bad) = (&traced.runs[0], &traced.mistaken[0]);
    let (g, w) = (&good.tensors, &bad.tensors);
    // a backward mistake: both runs make the backward pass, and agree up to d_k and d_v
    assert!(w.has(Buf::DV) && w.has(Buf::DX));
    assert_eq!(g[Buf::DQ], w[Buf::DQ]);
    assert_eq!(g[Buf::DScores], w[Buf::DScores]);
    // each query head's share, recomputed here from the correct run's tensors, in kernel order
    let pair = |hh: usize, i: usize, j: usize| (hh * S + i) * T + j;
    let row = |i: usize, hh: usize, d: usize| (i * H + hh) * D + d;
    let dv_share = |hh: usize, j: usize, d: usize| {
        (0..S).fold(0.0f32, |s, i| {
            s + g[Buf::Probs][pair(hh, i, j)] * g[Buf::DAtt][row(i, hh, d)]
        })
    };
    let dk_share = |hh: usize, j: usize, d: usize| {
        (j..S).fold(0.0f32, |s, i| {
            s + g[Buf::DScores][pair(hh, i, j)] * g[Buf::Q][row(i, hh, d)]
        }) * (1.0 / (D as f32).sqrt())
    };
    for j in 0..T {
        for k in 0..H_kv {
            for d in 0..D {
                let o = (j * H_kv + k) * D + d;
                let (first, last) = (2 * k, 2 * k + 1);
                assert_eq!(
                    w[Buf::DV][o],
                    dv_share(last, j, d),
                    "mistaken d_v is the last head's share"
                );
                assert_eq!(
                    w[Buf::DK][o],
                    dk_share(last, j, d),
                    "mistaken d_k is the last head's share"
                );
                assert_eq!(g[Buf::DV][o], dv_share(first, j, d) + dv_share(last, j, d));
                assert_eq!(g[Buf::DK][o], dk_share(first, j, d) + dk_share(last, j, d));
            }
        }
    }
    assert_ne!(
        g[Buf::DWQkv],
        w[Buf::DWQkv],
        "the error flows on into the weights' gradient"
    );

    // the traces part at head 0's first share of d_v[0]: after the 1920 forward events, 888 of
    // out_proj_back, dP's 36·(4 + 1) and the 12 zeros of the clear, the 3 (p, d_att) pairs are
    // the same; then the correct run reads d_v[0] to add, the mistaken one writes its share
    let (a, b) = (good.trace.as_ref().unwrap(), bad.trace.as_ref().unwrap());
    // the estimate counts the mistaken run's writes without the += read: 2·(T·C) = 48 fewer
    let s = scenario("overwrite_kv_grad");
    let plan = s.mistaken_inputs().unwrap().plan();
    let want = attn_trace_core::engine::estimate_events(&plan, attn_trace_core::kernels::Variant::Gqa, s.passes)
        .get()
        .unwrap();
    assert_eq!((a.len(), b.len(), want), (5496, 5448, 5448));
    let n = first_divergence(a, b).unwrap();
    assert_eq!(n, 1920 + 888 + 36 * 5 + 12 + 6);
    let (e, f) = (a.events[n], b.events[n]);
    assert_eq!((e.buf, e.offset, e.op.name(), e.value), (Buf::DV, 0, "read", 0.0));
    assert_eq!(
        (f.buf, f.offset, f.op.name(), f.value),
        (Buf::DV, 0, "write", dv_share(0, 0, 0))
    );
    // the values part one head later, at head 1's write of d_v[0]: each head's 6 cells took
    // 6 reads and a write (+ a read in the correct run)
    let v = attn_trace_analysis::mistakes::values_part(a, b, n).expect("the values part later");
    assert_eq!(
        (v.correct_event, v.mistaken_event),
        (n - 6 + 6 * 8 + 7, n - 6 + 6 * 7 + 6)
    );
    let (e, f) = (a.events[v.correct_event], b.events[v.mistaken_event]);
    assert_eq!(
        (e.buf, e.offset, e.value),
        (Buf::DV, 0, dv_share(0, 0, 0) + dv_share(1, 0, 0))
    );
    assert_eq!((f.buf, f.offset, f.value), (Buf::DV, 0, dv_share(1, 0, 0)));
    assert_ne!(e.value, f.value);

    // d goes there: both halves stand on that write of d_v[0], the mistaken one on MISTAKE 7
    let mut app = opened("overwrite_kv_grad", 120, 40);
    key(&mut app, KeyCode::Char('d'));
    let sv = view(&app);
    assert_eq!(sv.places(), [Place::At(v.correct_event), Place::At(v.mistaken_event)]);
    let msg = sv.message.as_deref().unwrap();
    assert!(
        msg.contains(&format!("diverge at #{n}")) && msg.contains("values first differ at #3055 / #3048"),
        "{msg}"
    );
    let code = mistakes::code_view(
        b,
        sv.places()[MISTAKEN],
        MISTAKEN,
        Phase::WeightedSumBack,
        sv.mistakes(),
    );
    assert!(code.file.ends_with("attention_mistakes.rs"));
    let text = attn_trace_core::source::source(code.file).unwrap();
    let current = text.lines().nth(code.current.unwrap() - 1).unwrap();
    assert!(current.contains("rec.write(Buf::DV, d_v, v_base + d, s)"), "{current}");
    assert!(lines_of(&code.marks).any(|l| l.contains("MISTAKE 7: d_v[v_base + d] = s, not += s")));
    // stepping on keeps both on the same access: the next iteration of d
    key(&mut app, KeyCode::Char('n'));
    let [pa, pb] = view(&app).places();
    assert_eq!(
        (a.events[pa.event()].buf, b.events[pb.event()].buf),
        (Buf::Probs, Buf::Probs)
    );
    let screen = draw(&app, 120, 40);
    assert!(!screen.contains("a mistaken run is forward only"), "{screen}");

    // the downstream panel's numbers
    let screen = panel("overwrite_kv_grad");
    let cells = |f: &dyn Fn(usize) -> f32| list((0..D).map(f));
    for want in [
        "2 query heads share each key/value head (H = 4, H_kv = 2)".to_string(),
        format!(
            "d_v[b0 j0 kv_h0 d0..2]: correct [{}] · mistaken [{}]",
            cells(&|d| g[Buf::DV][d]),
            cells(&|d| w[Buf::DV][d])
        ),
        format!(
            "the shares of query heads h0..h1: h0 [{}] h1 [{}]",
            cells(&|d| dk_share(0, 0, d)),
            cells(&|d| dk_share(1, 0, d))
        ),
        "over all 12 cells of d_k: mistaken − last head's share ≤ 0.0e0 · correct − sum of the shares ≤ 0.0e0"
            .to_string(),
    ] {
        assert!(screen.contains(&want), "{want}\n{screen}");
    }
}

#[test]
fn the_side_by_side_header_names_the_scale_its_kernel_uses() {
    // both sides run MHA, which divides by √D (the tracer's header says so too), never by a
    // lowercase d that reads like the channel loop's variable
    let mut a = opened("mask_by_multiply", 120, 40);
    key(&mut a, KeyCode::Char('d'));
    let screen = draw(&a, 120, 40);
    let head = screen.lines().next().unwrap();
    assert!(head.contains("S = Q·Kᵀ/√D + causal mask"), "{head}");
    assert!(!screen.contains("/√d"), "{head}");
}
