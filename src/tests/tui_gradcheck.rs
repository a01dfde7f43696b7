//! The tracer's gradient-check panel in the backward pass: the numbers it draws against the
//! tests' own finite differences (`common::central_difference`) and the run's gradients.

use crate::tests::support::gradients::{central_difference, gradient_error};
use crate::tests::support::inputs::from_qkv;
use crate::tests::support::tui::{goto, key};
use crate::tui::app::{self, App, Msg, Screen};
use crate::tui::{Theme, TracedScenario};
use attn_trace_core::engine::{Passes, run};
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::Buf;
use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::time::Duration;

/// The screen once the check under way has arrived, as a person sees it a moment later.
fn settled(app: &mut App, w: u16, h: u16) -> String {
    if let Screen::Tracer(t) = &mut app.screen {
        t.checks.wait(Duration::from_secs(60));
    }
    app::update(app, Msg::Tick);
    assert!(!app.wants_tick(), "nothing left to wait for");
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app::render(f, app)).unwrap();
    // one line per row, the panel's wrapped text joined back
    term.backend()
        .buffer()
        .content()
        .chunks(w as usize)
        .map(|row| row.iter().map(ratatui::buffer::Cell::symbol).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The panel's two numbers: `finite difference ∂L/∂P[k] = N · backward G[k] = A`.
fn numbers(screen: &str, primal: &str, grad: &str, k: usize) -> (f64, f64) {
    // the panel wraps inside its border: take the text between the borders, row after row
    let text: String = screen
        .lines()
        .map(|l| {
            l.trim_start_matches('│')
                .split('│')
                .next()
                .unwrap_or("")
                .trim_end()
                .to_string()
                + " "
        })
        .collect();
    let head = format!("finite difference ∂L/∂{primal}[{k}] = ");
    let at = text.find(&head).unwrap_or_else(|| panic!("no {head} in\n{screen}"));
    let rest = &text[at + head.len()..];
    let numeric: f64 = rest.split_whitespace().next().unwrap().parse().unwrap();
    let tag = format!("backward {grad}[{k}] = ");
    let rest = &rest[rest.find(&tag).unwrap() + tag.len()..];
    let analytic: f64 = rest
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches(',')
        .parse()
        .unwrap();
    (numeric, analytic)
}

#[test]
fn the_panel_agrees_with_the_tests_finite_differences() {
    let traced = TracedScenario::builtin();
    let inputs = (**traced.inputs.as_ref().unwrap()).clone();
    let plain = run(&inputs, Variant::Mha, Passes::BOTH, false).tensors;
    let mut a = App::new(traced, Theme::MONO, 120, 40);
    // the forward pass has no gradient check
    assert!(!settled(&mut a, 120, 40).contains("Gradient check"));
    for (primal, buf, grad, k) in [
        ("x", Buf::X, Buf::DX, 5),
        ("w_qkv", Buf::WQkv, Buf::DWQkv, 7),
        ("b_proj", Buf::BProj, Buf::DBProj, 2),
    ] {
        goto(&mut a, &format!("{grad}[{k}]"));
        assert!(a.wants_tick(), "the check runs on the worker; the app ticks meanwhile");
        let screen = settled(&mut a, 120, 40);
        assert!(screen.contains(&format!("this event writes {grad}[{k}]")), "{screen}");
        let (numeric, analytic) = numbers(&screen, primal, grad.name(), k);
        let ours = central_difference(&inputs, Variant::Mha, buf, k);
        assert!(
            gradient_error(numeric, ours) < 5e-3,
            "{grad}[{k}]: panel {numeric}, tests {ours}"
        );
        let want = plain.get(grad)[k] as f64;
        assert!(
            (analytic - want).abs() <= 1e-6 * want.abs().max(1.0),
            "{grad}[{k}]: {analytic} vs {want}"
        );
        assert!(screen.contains(&format!("perturbed {primal}[{k}]")), "{screen}");
    }
    // an activation: q[10] perturbed inside the run equals q[10] perturbed as an input of a run
    // that starts at q, k, v with the same values
    goto(&mut a, "d_q[10]");
    let screen = settled(&mut a, 120, 40);
    let (numeric, _) = numbers(&screen, "q", "d_q", 10);
    let mut core = from_qkv(
        inputs.shape,
        inputs.mask.clone(),
        plain.get(Buf::Q).to_vec(),
        plain.get(Buf::K).to_vec(),
        plain.get(Buf::V).to_vec(),
    );
    core.proj = inputs.proj.clone();
    core.d_out = inputs.d_out.clone();
    let direct = central_difference(&core, Variant::Mha, Buf::Q, 10);
    assert!(
        gradient_error(numeric, direct) < 5e-3,
        "panel {numeric}, tests {direct}"
    );
    // q[10] = -1.12: the step is 0.1 whatever the cell's size (up to gradcheck::FLAT_UP_TO)
    assert!(screen.contains("an activation) by ±0.1, ±0.05"), "{screen}");
    assert!(screen.contains("right after its kernel wrote it"), "{screen}");
    // a read inside the iteration that sums d_q[10] shows the same check
    key(&mut a, KeyCode::Char('p'));
    let screen = settled(&mut a, 120, 40);
    assert!(screen.contains("this iteration sums d_q[10]"), "{screen}");
    assert_eq!(numbers(&screen, "q", "d_q", 10).0, numeric);
    // at 80×24 the check is two rows under the equation
    let screen = settled(&mut a, 80, 24);
    assert!(
        screen.contains("this iteration sums d_q[10]: finite difference ∂L/∂q[10] = "),
        "{screen}"
    );
}

#[test]
fn a_partial_sum_is_told_from_the_final_gradient() {
    // separate projections: d_x gets the v, k and q projections' parts one after the other
    let s = attn_trace_core::scenario::Scenario::shipped("separate_qkv").unwrap();
    let mut a = App::new(TracedScenario::from_scenario(&s), Theme::MONO, 120, 40);
    goto(&mut a, "d_x[3]");
    let screen = settled(&mut a, 120, 40);
    assert!(screen.contains("this event writes d_x[3]"), "{screen}");
    assert!(screen.contains("so far; d_x[3] ends at"), "{screen}");
    assert!(screen.contains(", agree"), "{screen}");
    insta::assert_snapshot!("gradcheck_120x40", screen);
}

/// Issue 34: on the shipped GQA scenario, `Tab` (to MHA) then `f` (backward) asked MHA's check
/// on the grouped-head weights; an assertion in `kernels/linear.rs` killed the worker and the
/// app stopped answering. The check now perturbs the weights as MHA read them (each key/value
/// head's repeated), and agrees.
#[test]
fn mha_on_grouped_heads_checks_the_weights_it_read() {
    let s = attn_trace_core::scenario::Scenario::shipped("gqa").unwrap();
    let mut a = App::new(TracedScenario::from_scenario(&s), Theme::MONO, 120, 40);
    key(&mut a, KeyCode::Tab);
    key(&mut a, KeyCode::Char('f'));
    let screen = settled(&mut a, 120, 40);
    assert!(screen.contains("mha"), "{screen}");
    assert!(!screen.contains("failed") && !screen.contains("panicked"), "{screen}");
    // a weight MHA reads repeated: k's part of w_qkv, column 8 + 3 of C + 2·C
    goto(&mut a, "d_w_qkv[11]");
    let screen = settled(&mut a, 120, 40);
    assert!(screen.contains("d_w_qkv[11]"), "{screen}");
    assert!(screen.contains(", agree"), "{screen}");
}
