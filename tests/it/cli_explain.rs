//! `attn-trace explain`: golden walkthroughs (insta snapshots) of the MHA walkthrough element,
//! the baseline element and a masked element, forward and backward, and its input errors.

use assert_cmd::Command;
use predicates::prelude::*;

fn explain(args: &[&str]) -> String {
    let out = Command::cargo_bin("attn-trace")
        .unwrap()
        .arg("explain")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn mha_walkthrough_element() {
    let text = explain(&[
        "scenarios/mha_walkthrough.toml",
        "--variant",
        "mha",
        "--at",
        "b=0,h=1,i=2,j=1",
    ]);
    // the docs' offsets, substituted
    assert!(text.contains("q_base = ((b*T + i)*H + h)*D = ((0*3 + 2)*2 + 1)*2 = 10"));
    assert!(text.contains("k_base = ((b*T + j)*H + h)*D = ((0*3 + 1)*2 + 1)*2 = 6"));
    assert!(text.contains("write: scores.data[16] = "));
    insta::assert_snapshot!(text);
}

#[test]
fn baseline_element() {
    let text = explain(&[
        "scenarios/mha_walkthrough.toml",
        "--variant",
        "baseline",
        "--at",
        "b=0,i=2,j=1",
    ]);
    assert!(text.contains("qi = (b*T + i)*C = (0*3 + 2)*4 = 8"));
    assert!(text.contains("kj = (b*T + j)*C = (0*3 + 1)*4 = 4"));
    assert!(text.contains("write: scores.data[7] = "));
    insta::assert_snapshot!(text);
}

#[test]
fn masked_element() {
    let text = explain(&[
        "scenarios/masked_element.toml",
        "--variant",
        "baseline",
        "--at",
        "b=0,i=1,j=3",
    ]);
    assert!(text.contains("mask: j=3 > i=1"));
    assert!(text.contains("write: scores.data[7] = -1e9"));
    assert!(text.contains("probs.data[7] = 0 "));
    insta::assert_snapshot!(text);
}

#[test]
fn masked_element_backward() {
    let text = explain(&[
        "scenarios/masked_element.toml",
        "--variant",
        "baseline",
        "--at",
        "b=0,i=1,j=3",
        "--pass",
        "backward",
    ]);
    assert!(text.contains("no gradient reaches d_q or d_k"));
    insta::assert_snapshot!(text);
}

#[test]
fn backward_of_a_visible_element() {
    let text = explain(&[
        "scenarios/backward_simple.toml",
        "--variant",
        "mha",
        "--at",
        "b=0,h=0,i=2,j=1",
        "--pass",
        "backward",
    ]);
    assert!(text.contains("into d_q of query i=2"));
    assert!(text.contains("into d_k of key j=1"));
    // the element's gradients against finite differences of the loss, numbers from the run
    let scenario =
        attn_trace::scenario::Scenario::load(std::path::Path::new("scenarios/backward_simple.toml")).unwrap();
    let run = scenario.run(attn_trace::kernels::Variant::Mha, false);
    for (primal, grad) in [
        ("probs", attn_trace::trace::Buf::DProbs),
        ("scores", attn_trace::trace::Buf::DScores),
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("finite difference ∂L/∂{primal}[7] = ")))
            .unwrap_or_else(|| panic!("no finite difference line for {primal}[7]:\n{text}"));
        let number = |after: &str| -> f64 {
            let rest = &line[line.find(after).unwrap() + after.len()..];
            rest.split_whitespace().next().unwrap().parse().unwrap()
        };
        let (numeric, analytic) = (number("] = "), number(&format!("backward {grad}[7] = ")));
        let want = run.tensors.get(grad)[7] as f64;
        assert!(
            (analytic - want).abs() <= 1e-6 * want.abs().max(1.0),
            "{line}: the run has {want}"
        );
        assert!((numeric - analytic).abs() <= 1e-4 * analytic.abs().max(1e-3), "{line}");
        assert!(line.ends_with(", agree"), "{line}");
    }
    insta::assert_snapshot!(text);
}

#[test]
fn worked_row_numbers_come_out_of_the_trace() {
    let text = explain(&["scenarios/numeric_mha.toml"]);
    // defaults from [focus]: mha, h=1, i=2, j=1
    assert!(text.contains("scores[b=0, h=1, i=2, j=1] of the mha variant, forward pass"));
    assert!(text.contains("d=1: q.data[11] × k.data[7] = -1 × 1 = -1"));
    assert!(text.contains("write: scores.data[16] = -0.7071"));
    assert!(text.contains("probs.data[16] = 0.14 "));
    assert!(text.contains("d=0: att.data[10] = 0.576×10 + [0.14×0] + 0.284×5 = 7.1797"));
    assert!(text.contains("d=1: att.data[11] = 0.576×0 + [0.14×10] + 0.284×5 = 2.8203"));
    let explicit = explain(&[
        "scenarios/numeric_mha.toml",
        "--variant",
        "mha",
        "--at",
        "b=0,h=1,i=2,j=1",
    ]);
    assert_eq!(text, explicit);
}

#[test]
fn bad_elements_and_passes_exit_with_code_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["scenarios/numeric_mha.toml", "--variant", "mha", "--at", "i=3,j=0"],
            "i=3 is outside the shape: expected i in 0..3 (T = 3)",
        ),
        (
            &["scenarios/numeric_mha.toml", "--variant", "mha", "--at", "h=2,i=0,j=0"],
            "h=2 is outside the shape: expected h in 0..2 (H = 2)",
        ),
        (
            &[
                "scenarios/mha_walkthrough.toml",
                "--variant",
                "baseline",
                "--at",
                "h=1,i=0,j=0",
            ],
            "the baseline has a single head",
        ),
        (
            &[
                "scenarios/numeric_mha.toml",
                "--variant",
                "mha",
                "--at",
                "i=1,j=0",
                "--pass",
                "backward",
            ],
            "the backward pass was not recorded",
        ),
        (
            &["scenarios/numeric_mha.toml", "--variant", "baseline"],
            "the scenario does not run it",
        ),
        (&["scenarios/numeric_mha.toml", "--at", "i=1"], "i and j are required"),
        (
            &["scenarios/numeric_mha.toml", "--at", "i=1,j=x"],
            "j=x: expected a non-negative integer",
        ),
        (
            &["scenarios/numeric_mha.toml", "--at", "i=1,j=0,k=2"],
            "unknown index \"k\"",
        ),
        (
            &["scenarios/numeric_mha.toml", "--variant", "gqa"],
            "--variant gqa: expected one of baseline, mha",
        ),
    ];
    for (args, message) in cases {
        Command::cargo_bin("attn-trace")
            .unwrap()
            .arg("explain")
            .args(*args)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(*message));
    }
}
