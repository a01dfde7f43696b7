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
    assert!(text.contains("q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*2 + 1)*2 = 10"));
    assert!(text.contains("k_base = ((bb*T + j)*H + hh)*D = ((0*3 + 1)*2 + 1)*2 = 6"));
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
    assert!(text.contains("qi = (bb*S + i)*C = (0*3 + 2)*4 = 8"));
    assert!(text.contains("kj = (bb*T + j)*C = (0*3 + 1)*4 = 4"));
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
        attn_trace_core::scenario::Scenario::load(std::path::Path::new("scenarios/backward_simple.toml")).unwrap();
    let run = scenario.run(attn_trace_core::kernels::Variant::Mha, false);
    for (primal, grad) in [
        ("probs", attn_trace_core::trace::Buf::DProbs),
        ("scores", attn_trace_core::trace::Buf::DScores),
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
    // each operand with the digits the chain needs by hand: 0.576×10 + 0.284×5 would be 7.18
    assert!(text.contains("d=0: att.data[10] = 0.575975×10 + [0.14×0] + 0.283995×5 = 7.1797"));
    assert!(text.contains("d=1: att.data[11] = 0.576×0 + [0.14003×10] + 0.284×5 = 2.8203"));
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
            &["scenarios/numeric_mha.toml", "--variant", "sparse"],
            "--variant sparse: expected one of baseline, mha, flash, gqa",
        ),
        (
            &["scenarios/numeric_mha.toml", "--variant", "gqa"],
            "--variant gqa: the scenario does not run it",
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

#[test]
fn a_grouped_query_head_reads_its_groups_key_head() {
    let text = explain(&["scenarios/gqa.toml", "--variant", "gqa", "--at", "b=0,h=3,i=3,j=2"]);
    assert!(
        text.contains("(B=1, T=4, C=8, H=4, H_kv=2, D=2, causal mask)"),
        "{text}"
    );
    assert!(text.contains("kv_h = hh/(H/H_kv) = 3/(4/2) = 1"), "{text}");
    assert!(text.contains("k_base = ((bb*T + j)*H_kv + kv_h)*D = ((0*4 + 2)*2 + 1)*2 = 10"));
    assert!(text.contains("q.data[30] × k.data[10]"));
    assert!(text.contains("att[b,i,h,d] = Σ_j P[b,h,i,j] · v[b,j,kv_h,d],  kv_h = h/(H/H_kv)"));
    // backward: the heads of the one group of multi-query attention add into the same d_k
    let back = explain(&[
        "scenarios/mqa.toml",
        "--variant",
        "gqa",
        "--pass",
        "backward",
        "--at",
        "h=2,i=3,j=1",
    ]);
    assert!(back.contains("kv_h = hh/(H/H_kv) = 2/(4/1) = 0"), "{back}");
    assert!(back.contains("d_k.data[2] += dS × q.data[28] × scale"), "{back}");
    assert!(back.contains("added to its group's earlier heads"), "{back}");
}

#[test]
fn rotary_positions_and_the_kv_cache_are_explained_with_their_numbers() {
    let rope = explain(&["scenarios/rope.toml", "--variant", "mha", "--at", "h=1,i=4,j=1"]);
    assert!(rope.contains("rope interleaved base 10000)"), "{rope}");
    assert!(rope.contains("query i=4 turned by 4·θ_m, key j=1 by 1·θ_m"), "{rope}");
    // D = 4: θ_1 = 10000^(−2/4) = 0.01, so pair 1 of query 4 turns by 0.04
    assert!(
        rope.contains("query 4, pair m=1 (channels 2, 3): angle 4·θ_1 = 0.04"),
        "{rope}"
    );
    let decode = explain(&["scenarios/kv_cache_decode.toml", "--at", "h=3,i=4,j=2"]);
    assert!(
        decode.contains("decoded token by token from the KV cache, rope half base 10000"),
        "{decode}"
    );
    assert!(decode.contains("key j=2: step 2 wrote k_cache.data[10]"), "{decode}");
    assert!(
        decode.contains("ci = (bb*T + t)*H_kv*D = (0*5 + 2)*2*2 = 8"),
        "{decode}"
    );
    assert!(decode.contains("(the decode_scores pass of decode.rs)"), "{decode}");
    assert!(decode.contains("q_base = xi + hh*D = 32 + 3*2 = 38"), "{decode}");
    assert!(
        decode.contains("one score per key j in 0..=4, the cached positions"),
        "{decode}"
    );
    assert!(decode.contains("v_cache[b,j,kv_h,d]"), "{decode}");
    // a later key does not exist yet at step i
    Command::cargo_bin("attn-trace")
        .unwrap()
        .args(["explain", "scenarios/kv_cache_decode.toml", "--at", "h=3,i=2,j=4"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a decode run has no score for j=4 > i=2"));
}

/// The number after the last `= ` of the line holding `key`, up to a `:` or a space.
fn number_after(text: &str, key: &str) -> f32 {
    let line = text
        .lines()
        .find(|l| l.contains(key))
        .unwrap_or_else(|| panic!("{key} in {text}"));
    let tail = line.rsplit("= ").next().unwrap();
    tail.split([':', ' ']).next().unwrap().parse().unwrap()
}

#[test]
fn explain_flash_reaches_the_probability_mha_stores() {
    // flash never stores P[0,1,3,1]: its forward gets it as e^(S − lse), its backward
    // recomputes it; both equal the probability the MHA kernel of the same scenario stores
    let at = ["scenarios/flash.toml", "--at", "b=0,h=1,i=3,j=1"];
    let mha = explain(&[&at[..], &["--variant", "mha"]].concat());
    let fwd = explain(&[&at[..], &["--variant", "flash"]].concat());
    let bwd = explain(&[&at[..], &["--variant", "flash", "--pass", "backward"]].concat());
    // MHA: the term in brackets of att's sum is P[b,h,i,j]·v
    let line = mha.lines().find(|l| l.contains("d=0: att.data")).unwrap();
    let stored: f32 = line
        .split('[')
        .nth(2)
        .unwrap()
        .split('×')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(stored, 0.1778);
    assert_eq!(number_after(&fwd, "P = e^(S − lse)"), stored, "{fwd}");
    assert_eq!(number_after(&bwd, "P = e^(Σ_d q_tile"), stored, "{bwd}");
    // the online softmax: two key tiles (j0 = 0, 2) reach row 3, the third is above the diagonal
    assert!(fwd.contains("key tile j0=0: m = max(-inf, rowmax) = 0.2152"), "{fwd}");
    // the second key tile raises the row's maximum: l is rescaled by e^(m_old − m_new)
    assert!(
        fwd.contains(
            "key tile j0=2: m = max(0.2152, rowmax) = 1.1036; l = e^(0.2152 − 1.1036)·1.978 + rowsum = 2.3128"
        ),
        "{fwd}"
    );
    assert!(!fwd.contains("key tile j0=4"), "{fwd}");
    assert!(
        fwd.contains("lse.data[8] = m + ln l = 1.1036 + ln 2.3128 = 1.942"),
        "{fwd}"
    );
    assert!(bwd.contains("dS = 0.1778 × (0.1104 − (-0.1223)) = 0.0414"), "{bwd}");
    // a pair in a tile the causal mask hides entirely: no event at all
    let skipped = explain(&["scenarios/flash.toml", "--variant", "flash", "--at", "b=0,h=0,i=1,j=4"]);
    assert!(skipped.contains("2. Skipped"), "{skipped}");
}

#[test]
fn flash_backward_checks_the_elements_ds_by_finite_differences() {
    // flash stores no score to perturb: its dS of the pair (the ds_tile write in the log) is
    // checked against the finite difference of L = Σ out ⊙ d_out over scores[36], perturbed in
    // an MHA forward pass of the same inputs: the very number the MHA walkthrough prints
    let at = ["scenarios/flash.toml", "--at", "b=0,h=1,i=2,j=1", "--pass", "backward"];
    let flash = explain(&[&at[..], &["--variant", "flash"]].concat());
    let mha = explain(&[&at[..], &["--variant", "mha"]].concat());
    assert!(
        flash.contains("\n4. Checked by finite differences (L = Σ out ⊙ d_out)\n"),
        "{flash}"
    );
    let key = "finite difference ∂L/∂scores[36] = ";
    let line_of = |text: &str| -> String {
        let found = text.lines().find(|l| l.contains(key));
        found
            .unwrap_or_else(|| panic!("no finite difference line for scores[36]:\n{text}"))
            .to_string()
    };
    let number = |line: &str, after: &str| -> f64 {
        let at = line.find(after).unwrap_or_else(|| panic!("{after} in {line}")) + after.len();
        line[at..].split([' ', ',']).next().unwrap().parse().unwrap()
    };
    let line = line_of(&flash);
    let (numeric, analytic) = (number(&line, key), number(&line, "flash dS = ds_tile[1] = "));
    let rel = number(&line, "relative error ");
    assert_eq!((numeric, analytic, rel), (-0.0367767, -0.0367747, 5.3e-5), "{line}");
    assert!(line.ends_with(", agree"), "{line}");
    // the gradient is the value flash wrote into ds_tile[1] for the pair, as the log has it
    let scenario = attn_trace_core::scenario::Scenario::load(std::path::Path::new("scenarios/flash.toml")).unwrap();
    let run = scenario.run(attn_trace_core::kernels::Variant::Flash, true);
    let trace = run.trace.as_ref().unwrap();
    let element = attn_trace_analysis::Element { b: 0, h: 1, i: 2, j: 1 };
    let ds = attn_trace_analysis::flash_cell::FlashCell::find(trace, element)
        .and_then(|c| c.ds)
        .unwrap();
    let logged = trace.events[ds].value as f64;
    // printed with 7 decimals: within half a unit of the last
    assert!(
        (analytic - logged).abs() <= 0.5e-7 * 1.001,
        "{line}: the log has {logged}"
    );
    assert!(line.contains(&format!(" (event #{ds}) · ")), "{line}");
    // and it agrees with the d_scores[36] the MHA kernel stores for the same inputs
    let mha_run = scenario.run(attn_trace_core::kernels::Variant::Mha, false);
    let stored = mha_run.tensors.get(attn_trace_core::trace::Buf::DScores)[36] as f64;
    assert!(
        (analytic - stored).abs() <= 1e-5 * stored.abs(),
        "{line}: mha stores {stored}"
    );
    // the finite difference is the one the MHA walkthrough of the element prints
    assert_eq!(number(&line_of(&mha), key), numeric, "{mha}");
    // their relative error, printed and from the printed numbers, is under 1e-3
    let from_numbers = (analytic - numeric).abs() / analytic.abs().max(numeric.abs());
    assert!(rel < 1e-3 && from_numbers < 1e-3, "{line}");
    assert!((rel - from_numbers).abs() <= 0.2 * from_numbers, "{line}");
    // what was perturbed, and in which run
    assert!(flash.contains("it is perturbed in scores[36] of an MHA forward pass of the same inputs"));
    assert!(
        flash.contains(
            "perturbed scores[36] (b0 h1 i2 j1, an activation) by ±0.1, ±0.05 and ±0.025 right after its kernel wrote it"
        ),
        "{flash}"
    );
    // a pair of a tile the causal mask hides: no dS at all, and a zero finite difference
    let skipped = explain(&[
        "scenarios/flash.toml",
        "--variant",
        "flash",
        "--at",
        "b=0,h=0,i=1,j=4",
        "--pass",
        "backward",
    ]);
    assert!(
        skipped.contains(
            "\n3. Checked by finite differences (L = Σ out ⊙ d_out)\n  finite difference ∂L/∂scores[9] = 0 in an MHA \
             forward pass of the same inputs: flash skips the pair's tile and writes no dS to compare it with\n"
        ),
        "{skipped}"
    );
}

/// Under a window each pair is explained by the rule that decides it: in the future, slid out,
/// a sink, or in the window; flash names the masked pair of a visited tile and the skipped tile
/// in the same words, without the semicolon that leads on in plain explain.
#[test]
fn a_sliding_window_says_which_rule_hides_or_keeps_each_pair() {
    let sinks = "scenarios/sinks.toml";
    let at = |i: usize, j: usize| format!("b=0,h=1,i={i},j={j}");
    let cases = [
        (7, 0, "mask: j=0 < sinks = 1: key 0 is an attention sink"),
        (
            7,
            3,
            "mask: j=3 ≤ i−W = 7−3: key 3 has slid out of query 7's window of 3 keys and is not a sink",
        ),
        (7, 5, "mask: i−W < j ≤ i (7−3 < 5 ≤ 7): key 5 is in query 7's window"),
        (
            2,
            3,
            "mask: j=3 > i=2: key 3 comes after query 2, so the causal mask hides it",
        ),
        // the sink is also in the window of the first queries: the window keeps it
        (1, 0, "mask: i−W < j ≤ i (1−3 < 0 ≤ 1)"),
    ];
    for (i, j, want) in cases {
        let out = explain(&[sinks, "--variant", "gqa", "--at", &at(i, j)]);
        assert!(out.contains(want), "i={i} j={j}: {want}\n{out}");
    }
    let window = "scenarios/sliding_window.toml";
    for (j, want) in [
        (
            4,
            "masked (j=4 ≤ i−W = 7−3: key 4 has slid out of query 7's window of 3 keys and is not a sink, so it is hidden): S = -1e9",
        ),
        (
            1,
            "(j=1 ≤ i−W = 7−3: key 1 has slid out of query 7's window of 3 keys and is not a sink, so it is hidden), so flash never loads",
        ),
    ] {
        let out = explain(&[window, "--variant", "flash", "--at", &format!("b=0,h=0,i=7,j={j}")]);
        assert!(out.contains(want) && !out.contains(";)"), "j={j}: {want}\n{out}");
    }
}

#[test]
fn decode_through_a_rolling_paged_or_split_cache_is_explained_from_the_log() {
    // every printed `A op B = C` of the three walkthroughs holds to its printed digits
    let check = |text: &str| {
        let lines: Vec<&str> = text.lines().collect();
        let n = crate::support::chains::check_lines(&lines).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(n >= 10, "{n} chains checked in\n{text}");
    };
    // the rolling window: step 7 reads the sink at its own row and key 6 at slot 6 % 3 = 0
    let window = explain(&["scenarios/window_decode.toml", "--at", "h=1,i=7,j=6"]);
    check(&window);
    assert!(
        window.contains("through a rolling cache of N + W = 1 + 3 rows"),
        "{window}"
    );
    assert!(
        window.contains("k_base = ((bb*(N + W) + N + j % W)*H_kv + kv_h)*D = ((0*(1 + 3) + 1 + 6 % 3)*2 + 0)*2 = 4"),
        "{window}"
    );
    assert!(
        window.contains("ci = (bb*(N + W) + N + t % W)*H_kv*D = (0*(1 + 3) + 1 + 7 % 3)*2*2 = 8"),
        "{window}"
    );
    assert!(
        window.contains("one score per key j in {0, 5, 6, 7}, the cached positions the window keeps"),
        "{window}"
    );
    assert!(window.contains("the sinks 0..1 and the window 5..=7"), "{window}");
    let sink = explain(&["scenarios/window_decode.toml", "--at", "h=1,i=7,j=0"]);
    check(&sink);
    assert!(
        sink.contains("k_base = ((bb*(N + W) + j)*H_kv + kv_h)*D = ((0*(1 + 3) + 0)*2 + 0)*2 = 0"),
        "{sink}"
    );
    assert!(sink.contains("key 0 is an attention sink"), "{sink}");
    Command::cargo_bin("attn-trace")
        .unwrap()
        .args(["explain", "scenarios/window_decode.toml", "--at", "h=1,i=7,j=2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "key 2 slid out of the window of 3 keys (j ≤ i − W = 4)",
        ));
    // the paged cache: sequence 1's key 3 is in block table[1*3 + 1] = 0, row 1
    let paged = explain(&["scenarios/paged_decode.toml", "--at", "b=1,h=1,i=5,j=3"]);
    check(&paged);
    assert!(paged.contains("paged in blocks of BS = 2"), "{paged}");
    assert!(paged.contains("j_blk = j / BS = 3 / 2 = 1"), "{paged}");
    assert!(
        paged.contains("k_base = ((j_phys*BS + j % BS)*H_kv + kv_h)*D = ((0*2 + 3 % 2)*2 + 1)*2 = 6"),
        "{paged}"
    );
    // the split: key 4 is in part 4 / 3 = 1, and the merge weighs the three parts
    let split = explain(&["scenarios/split_kv.toml", "--at", "h=1,i=7,j=4"]);
    check(&split);
    assert!(
        split.contains("3. Softmax of part p=1 of row (b=0, head h=1, i=7)"),
        "{split}"
    );
    assert!(
        split.contains("one score per key j in 3..=5, part p = j / L = 4 / 3 = 1"),
        "{split}"
    );
    assert!(split.contains("lse_part.data[46] = max + ln Σ exp = "), "{split}");
    assert!(
        split.contains("5. Merge of the parts for query i=7 (decode_merge)"),
        "{split}"
    );
    assert!(
        split.contains("lse_row = ((bb*H + hh)*T + t)*P = ((0*2 + 1)*8 + 7)*3 = 45"),
        "{split}"
    );
}

#[test]
fn a_sink_logit_is_one_more_term_of_the_row_in_mha_and_flash() {
    let check = |text: &str| {
        let lines: Vec<&str> = text.lines().collect();
        crate::support::chains::check_lines(&lines).unwrap_or_else(|e| panic!("{e}\n{text}"))
    };
    let at = ["scenarios/sink_logit.toml", "--at", "b=0,h=0,i=5,j=4"];
    let with = |variant: &str, pass: &str| {
        let mut args = at.to_vec();
        args.extend(["--variant", variant, "--pass", pass]);
        explain(&args)
    };
    // forward MHA: head 0's sink 0.5 is above every score of row 5, so it is the max and its
    // exponential is exactly 1; the row's three keys and the sink share Σ exp = 2.9754
    let mha = with("mha", "forward");
    assert!(check(&mha) >= 10, "{mha}");
    assert!(mha.contains(", a sink logit per head)"), "{mha}");
    assert!(mha.contains("sink logit: sink.data[0] = 0.5 (event #"), "{mha}");
    assert!(mha.contains("max = max(sink, scores) = 0.5"), "{mha}");
    assert!(mha.contains("  sink         0.5                 1    0.3361"), "{mha}");
    assert!(
        mha.contains("Σ exp = exp(sink − max) + Σ_j exp(score − max) = 1 + 1.9754 = 2.9754"),
        "{mha}"
    );
    assert!(
        mha.contains("P_sink = exp(sink − max) / Σ exp = 1 / 2.9754 = 0.3361 (p_sink.data[5], event #"),
        "{mha}"
    );
    // the printed row sums to 1 − P_sink: 0.1661 + 0.3013 + 0.1965 = 0.6639
    let probs: f32 = ["     3 ", "     4 ", "     5 "]
        .iter()
        .map(|key| {
            let line = mha.lines().find(|l| l.starts_with(key)).unwrap();
            line.split_whitespace().nth(3).unwrap().parse::<f32>().unwrap()
        })
        .sum();
    assert!((probs + 0.3361 - 1.0).abs() < 2e-4, "{probs}");
    // flash reaches the same share from its lse, which starts at m = sink, l = 1
    let flash = with("flash", "forward");
    assert!(flash.contains("the row starts at m = sink[0] = 0.5, l = 1"), "{flash}");
    assert!(
        flash.contains("P_sink = e^(sink − lse) = e^(0.5 − 1.5904) = 0.3361"),
        "{flash}"
    );
    // backward: both sum d_sink[0] = −Σ P_sink·D over the head's six rows, to the same number
    let mha_back = with("mha", "backward");
    let flash_back = with("flash", "backward");
    for text in [&mha_back, &flash_back] {
        assert!(check(text) >= 3, "{text}");
        assert!(text.contains("The sink logit's gradient (sink_back)"), "{text}");
        assert!(text.contains("d_sink.data[0] = −Σ = −(-0.039) = 0.039"), "{text}");
        assert!(text.contains(" + 0.3361×0.053 = -0.039"), "{text}");
    }
    assert!(
        flash_back.contains("P_sink = e^(sink − lse) = e^(0.5 − 1.5904) = 0.3361: row i's sink share"),
        "{flash_back}"
    );
}

#[test]
fn latent_attention_is_explained_with_both_parts_of_its_heads() {
    let check = |text: &str| {
        let lines: Vec<&str> = text.lines().collect();
        crate::support::chains::check_lines(&lines).unwrap_or_else(|e| panic!("{e}\n{text}"))
    };
    // head 1 of query 3 is 4 channels wide: 2 against k_nope's row of head 1, 2 against the
    // rotary key k_pe of key 1, which every head shares; the scale is 1/√(D + DR) = 1/2
    let fwd = explain(&["scenarios/mla.toml"]);
    assert!(check(&fwd) >= 10, "{fwd}");
    assert!(
        fwd.contains("(B=1, T=4, C=4, H=2, D=2, R=3, DR=2, causal mask, rope interleaved base 10000)"),
        "{fwd}"
    );
    assert!(
        fwd.contains("q_base = ((bb*S + i)*H + hh)*(D + DR) = ((0*4 + 3)*2 + 1)*(2 + 2) = 28"),
        "{fwd}"
    );
    assert!(fwd.contains("d=1: q.data[29] × k_nope.data[7] = "), "{fwd}");
    assert!(fwd.contains("d=2: q.data[30] × k_pe.data[2] = "), "{fwd}");
    assert!(fwd.contains("scale: × 1/√(D + DR) = 1/√4 = 0.5"), "{fwd}");
    // rope turns only the rotary part: channels 2, 3 of the query head (q.data[30], [31]) by
    // 3·θ_0 = 3, and key 1's k_pe row (k_pe.data[2], [3]) by 1; θ_m's exponent is over DR
    assert!(fwd.contains("θ_m = base^(−2m/DR) = 10000^(−2m/2)"), "{fwd}");
    assert!(
        fwd.contains("query 3, pair m=0 (channels 2, 3): angle 3·θ_0 = 3, cos = -0.99, sin = 0.1411"),
        "{fwd}"
    );
    assert!(fwd.contains("    q.data[30] = "), "{fwd}");
    assert!(
        fwd.contains("key 1, pair m=0 (channels 0, 1): angle 1·θ_0 = 1, cos = 0.5403"),
        "{fwd}"
    );
    assert!(fwd.contains("    k_pe.data[2] = "), "{fwd}");
    assert!(!fwd.contains("q.data[28] = "), "q_nope is not turned: {fwd}");
    // backward: d_q reads k_nope and k_pe, and d_k_pe sums over the heads
    let back = explain(&["scenarios/mla.toml", "--pass", "backward"]);
    assert!(check(&back) >= 8, "{back}");
    assert!(back.contains("d_q.data[30] += dS × k_pe.data[2] × scale = "), "{back}");
    assert!(back.contains("d_k_pe.data[2] += dS × q.data[30] × scale = "), "{back}");
    assert!(back.contains("(after every head's visible pairs: "), "{back}");
}

/// The absorbed decode, walked from its log: the latent cache row each step writes, the query
/// absorbing w_uk, the score read straight from the cached rows, the softmax over the cached
/// positions, the weighted sum in the latent space and the projection up by w_uv.
#[test]
fn latent_attentions_absorbed_decode_is_walked_from_the_latent_cache() {
    let check = |text: &str| {
        let lines: Vec<&str> = text.lines().collect();
        crate::support::chains::check_lines(&lines).unwrap_or_else(|e| panic!("{e}\n{text}"))
    };
    // [focus]: h=1, i=3, j=1; B=1, T=4, C=4, H=2, so D=2, with R=3, DR=2
    let text = explain(&["scenarios/mla_decode.toml"]);
    assert!(check(&text) >= 20, "{text}");
    assert!(
        text.contains("(B=1, T=4, C=4, H=2, D=2, R=3, DR=2, decoded token by token from the latent cache"),
        "{text}"
    );
    // the cache: step 3 wrote its own row at ci = 15, key 1's row was written at step 1
    assert!(
        text.contains("ci = (bb*T + t)*(R + DR) = (0*4 + 3)*(3 + 2) = 15"),
        "{text}"
    );
    assert!(
        text.contains("ci = (bb*T + t)*(R + DR) = (0*4 + 1)*(3 + 2) = 5"),
        "{text}"
    );
    assert!(text.contains("key j=1: step 1 wrote kv_cache.data[5..=9]"), "{text}");
    assert!(
        text.contains("kv_base = (bb*T + j)*(R + DR) = (0*4 + 1)*(3 + 2) = 5"),
        "{text}"
    );
    // the absorption: q_lat's channels of head 1 from q_nope and w_uk, R = 3 of them
    assert!(
        text.contains("l_base = ((bb*T + t)*H + hh)*R = ((0*4 + 3)*2 + 1)*3 = 21"),
        "{text}"
    );
    assert!(
        text.contains("q_base = ((bb*T + t)*H + hh)*(D + DR) = ((0*4 + 3)*2 + 1)*(2 + 2) = 28"),
        "{text}"
    );
    assert!(
        text.contains("w_off = r*H*D + hh*D + d = 0*2*2 + 1*2 + 0 = 2"),
        "{text}"
    );
    assert!(
        text.contains("r=0: q_lat.data[21] = q.data[28]×w_uk.data[2] + q.data[29]×w_uk.data[3]\n"),
        "{text}"
    );
    assert!(
        text.contains("r=2: q_lat.data[23] = q.data[28]×w_uk.data[10] + q.data[29]×w_uk.data[11]\n"),
        "{text}"
    );
    assert!(text.contains("= Σ_r q_lat[r]·c_kv[j,r] = q_lat·c_kv[j]"), "{text}");
    // the score: R + DR = 5 products, the latent channels then the rotary ones
    assert!(text.contains("R + DR = 3 + 2 = 5 products"), "{text}");
    assert!(
        text.contains("r=0: q_lat.data[21] × kv_cache.data[5] = 0.6127 × (-0.7991) = -0.4896"),
        "{text}"
    );
    assert!(text.contains("r=2: q_lat.data[23] × kv_cache.data[7] = "), "{text}");
    assert!(text.contains("d=2: q.data[30] × kv_cache.data[8] = "), "{text}");
    assert!(text.contains("d=3: q.data[31] × kv_cache.data[9] = "), "{text}");
    assert!(text.contains("scale: × 1/√(D + DR) = 1/√4 = 0.5"), "{text}");
    assert!(
        text.contains("d=2 reads column r = R + d - D = 3 + 2 - 2 = 3 of the row"),
        "{text}"
    );
    assert!(text.contains("write: scores.data[29] = -0.0965   (event #"), "{text}");
    // the softmax over the four cached positions
    assert!(
        text.contains("one score per key j in 0..=3, the cached positions"),
        "{text}"
    );
    // o_lat: four terms a channel, the element's in brackets; then up by w_uv
    assert!(
        text.contains("this element: probs.data[29] = 0.2445 (event #"),
        "{text}"
    );
    // a channel's sum too wide for 100 columns goes on under its cell
    let lines: Vec<&str> = text.lines().collect();
    let k = lines.iter().position(|l| l.contains("r=0: o_lat.data[21]")).unwrap();
    let o_lat = if lines[k].contains(" = ") {
        lines[k]
    } else {
        lines[k + 1]
    };
    assert_eq!(
        o_lat.matches('×').count(),
        4,
        "one term per cached position 0..=3: {o_lat}"
    );
    assert!(o_lat.contains(" + [0.2445×(-0.7991)] + "), "{o_lat}");
    assert!(text.contains("a_base = xi + hh*D = 12 + 1*2 = 14"), "{text}");
    assert!(text.contains("d=0: att.data[14] = "), "{text}");
    // P[i,j]'s share of att: its terms of o_lat, taken up by w_uv
    assert!(
        text.contains("d=0: 0.2445 × ((-0.7991)×(-0.931) + 0.5449×(-0.2942) + (-0.3375)×(-0.5764)) = 0.1903"),
        "{text}"
    );
    // the element's term in each of the R = 3 latent channels
    assert_eq!(text.matches(" + [0.2445×").count(), 3, "{text}");
    // the diagonal: step 2 reads the row it has just written
    let own = explain(&["scenarios/mla_decode.toml", "--at", "h=0,i=2,j=2"]);
    assert!(check(&own) >= 20, "{own}");
    assert!(own.contains("key j=2: step 2 wrote kv_cache.data[10..=14]"), "{own}");
    // a later key is not generated yet
    Command::cargo_bin("attn-trace")
        .unwrap()
        .args(["explain", "scenarios/mla_decode.toml", "--at", "h=1,i=1,j=3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a decode run has no score for j=3 > i=1"));
    // decode is forward only: backward is not a pass it could record
    Command::cargo_bin("attn-trace")
        .unwrap()
        .args(["explain", "scenarios/mla_decode.toml", "--pass", "backward"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a decode run is forward only"));
}

#[test]
fn the_absorbed_decode_with_rope_turns_each_new_rows_k_pe_once() {
    // mla_decode.toml with rope = "half" for its "interleaved": step 1 wrote key 1's k_pe column r = 3 as
    // Σ_c x·w_kr = 0.4653, then turned it by 1·θ_0 = 1 radian (cos 0.5403, sin 0.8415) in place;
    // the score reads the turned value at kv_cache.data[8]
    let text = std::fs::read_to_string("scenarios/mla_decode.toml")
        .unwrap()
        .replace("rope = \"interleaved\"", "rope = \"half\"");
    let file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    std::fs::write(file.path(), text).unwrap();
    let out = explain(&[file.path().to_str().unwrap()]);
    let lines: Vec<&str> = out.lines().collect();
    let checked = crate::support::chains::check_lines(&lines).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert!(checked >= 24, "{checked} in\n{out}");
    for want in [
        "r=3 (k_pe): kv_cache.data[8] = Σ_c x[xi + c]·w_kr[c*DR + r - R]",
        "then turned by rope at step 1 into 0.3338 (the rotation below)",
        "θ_m = base^(−2m/DR) = 10000^(−2m/2); pair m is (lo, hi) = (m, m + DR/2)",
        "key 1, pair m=0 (channels 0, 1): angle 1·θ_0 = 1, cos = 0.5403, sin = 0.8415",
        "kv_cache.data[8] = 0.4653 × 0.5403 − (-0.0979) × 0.8415 = 0.3338",
        "d=2: q.data[30] × kv_cache.data[8] = -0.3299 × 0.3338 = -0.1101",
    ] {
        assert!(out.contains(want), "{want:?} not in\n{out}");
    }
    // the sections in the kernel's order: the cache row, its rotation, then w_uk's absorption
    let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("{s:?} not in\n{out}"));
    assert!(at("the latent cache at step t=3") < at("rotary positions"));
    assert!(at("rotary positions") < at("absorbs w_uk"));
}

/// A paged cache's offsets use block ids read from the block table: `explain` reads them out of
/// the table where it uses them, for the key's row and for the query's own, as integers.
#[test]
fn explain_reads_a_paged_caches_block_ids_out_of_the_table() {
    // paged_decode.toml: B=2, blocks of BS=2, MB=3 a sequence, table [[5, 2, 7], [5, 0, 3]]
    let text = explain(&["scenarios/paged_decode.toml", "--at", "b=1,h=1,i=5,j=3"]);
    for want in [
        // key 3 of sequence 1 is in its block j/BS = 1, cell 1*3 + 1 = 4 of the table, block 0
        "j_phys = block_table[bb*MB + j_blk] = block_table[1*3 + 1] = block_table[4] = 0",
        // step 5 writes its own row into block t/BS = 2 of the sequence: cell 5, block 3
        "phys = block_table[bb*MB + blk] = block_table[1*3 + 2] = block_table[5] = 3",
        "k_base = ((j_phys*BS + j % BS)*H_kv + kv_h)*D = ((0*2 + 3 % 2)*2 + 1)*2 = 6",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
    // the j_phys line comes before the offset that uses it
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s:?} not in\n{text}"));
    assert!(at("step 5 reads it at j_phys = ") < at("step 5 reads it at k_base = "));
    assert!(!text.contains("block_table[4] = 0.0"), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    crate::support::chains::check_lines(&lines).unwrap_or_else(|e| panic!("{e}\n{text}"));
}

/// Two operands that nearly cancel still give their printed difference by hand: each may take
/// as many decimals as f32 holds, leading zeros included (a generated latent decode printed
/// `0.000707174 + (-0.000705344) = 1.830733e-6`, which a calculator makes 1.83e-6).
#[test]
fn operands_that_nearly_cancel_print_the_digits_their_difference_needs() {
    let text = "title = \"cancel\"\n[shape]\nB = 2\nT = 2\nC = 3\nH = 3\nkv_rank = 2\nrope_dim = 4\n\
                [run]\nvariants = [\"mla\"]\ndecode = true\nrope = \"half\"\n[init]\nseed = 731\n";
    let mut file = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
    let path = file.path().to_str().unwrap().to_string();
    let out = explain(&[&path, "--at", "b=0,h=0,i=0,j=0"]);
    assert!(out.contains("= 0.0007071744 + (-0.0007053437) = 1.831e-6"), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    crate::support::chains::check_lines(&lines).unwrap_or_else(|e| panic!("{e}\n{out}"));
}
