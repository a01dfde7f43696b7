//! Tests of the analysis layer (`crates/analysis/src/`), one module per source file: what were the
//! `#[cfg(test)]` unit tests of those files, now through the library's public API.

/// `crates/analysis/src/explain/text.rs`
mod text {
    use attn_trace_analysis::explain::{elide, num};
    use attn_trace_core::trace::MASKED;

    #[test]
    fn numbers_read_like_handwriting() {
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(0.38275), "0.3828");
        assert_eq!(num(10.0), "10");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(MASKED), "-1e9");
        assert_eq!(num(1.5e-7), "1.500e-7");
    }

    #[test]
    fn long_sums_are_elided_but_keep_their_ends() {
        let items: Vec<String> = (0..20).map(|k| k.to_string()).collect();
        assert_eq!(elide(items[..3].to_vec(), 8, " + "), "0 + 1 + 2");
        assert_eq!(
            elide(items, 8, " + "),
            "0 + 1 + 2 + 3 + 4 + 5 + … (20 terms in all) + 18 + 19"
        );
    }
}

/// `crates/analysis/src/format.rs`
mod format {
    use attn_trace_analysis::format::*;
    use attn_trace_core::kernels::Mask;
    use attn_trace_core::trace::Phase;

    #[test]
    fn wrapping_keeps_every_word_whole_where_it_fits() {
        assert_eq!(wrap("back to the menu; quit", 10), ["back to", "the menu;", "quit"]);
        assert_eq!(wrap("abcdefghijkl", 5), ["abcde", "fghij", "kl"]);
        assert_eq!(wrap("", 5), Vec::<String>::new());
        // Chinese breaks between characters, each two columns wide; never inside one
        assert_eq!(wrap("回到菜单 q", 5), ["回到", "菜单", "q"]);
        assert_eq!(wrap("下一个事件", 3), ["下", "一", "个", "事", "件"]);
    }

    #[test]
    fn titles_name_the_runs_own_mask() {
        let explicit = Mask::explicit(&[vec![true, false]]);
        assert_eq!(
            phase_title(Phase::Scores, &Mask::Causal),
            "scores S = Q·Kᵀ/√d + causal mask"
        );
        assert_eq!(phase_title(Phase::Scores, &Mask::None), "scores S = Q·Kᵀ/√d, no mask");
        assert!(phase_title(Phase::Scores, &explicit).ends_with("explicit mask"));
        assert_eq!(phase_title(Phase::Softmax, &explicit), Phase::Softmax.title());
        assert_eq!(hidden_because(&Mask::Causal, 1, 3), "j=3 > i=1");
        assert!(hidden_because(&explicit, 0, 1).contains("row i=0, column j=1"));
    }
}

/// `crates/analysis/src/formula.rs`
mod formula {
    use attn_trace_analysis::formula::*;
    use attn_trace_core::tensor::Shape;
    use attn_trace_core::trace::Phase;

    #[test]
    fn walkthrough_q_base_reads_like_the_docs() {
        let sh = Shape::new(1, 3, 4, 2);
        let mut symbols = sizes(sh, Phase::Scores);
        symbols.extend([("bb", 0), ("hh", 1), ("i", 2), ("j", 1)]);
        let q = substitute("crates/core/src/kernels/attention_mha.rs", "q_base", &symbols).unwrap();
        assert_eq!(
            q.to_string(),
            "q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*2 + 1)*2 = 10"
        );
        let k = substitute("crates/core/src/kernels/attention_mha.rs", "k_base", &symbols).unwrap();
        assert_eq!(k.value, 6);
        let off = substitute("crates/core/src/kernels/attention_mha.rs", "off", &symbols).unwrap();
        assert_eq!(off.numbers, "((0*2 + 1)*3 + 2)*3 + 1");
        assert_eq!(off.value, 16);
    }

    #[test]
    fn code_expressions_evaluate_with_the_codes_names() {
        let symbols = [("C", 4), ("ri", 24), ("c", 1), ("q_base", 10), ("d", 1)];
        assert_eq!(
            evaluate("ri + 2 * C + c", &symbols),
            Some(("24 + 2 * 4 + 1".into(), 33))
        );
        assert_eq!(evaluate("q_base + d", &symbols), Some(("10 + 1".into(), 11)));
        assert_eq!(evaluate("off", &symbols), None);
        assert_eq!(names("c * OC + o + c"), ["c", "OC", "o"]);
    }

    #[test]
    fn unknown_symbols_and_names_give_none() {
        assert_eq!(substitute("attention_1h.rs", "qi", &[("T", 3)]), None);
        assert_eq!(formula("attention_1h.rs", "nope"), None);
        assert_eq!(formula("other.rs", "qi"), None);
    }

    #[test]
    fn evaluator_respects_precedence_and_parentheses() {
        // an expression of numbers alone: `evaluate` substitutes nothing and only evaluates
        let eval = |s: &str| {
            evaluate(s, &[]).map(|(numbers, value)| {
                assert_eq!(numbers, s, "no name to substitute");
                value
            })
        };
        assert_eq!(eval("2 + 3*4"), Some(14));
        assert_eq!(eval("(2 + 3)*4"), Some(20));
        assert_eq!(eval("(2 + 3"), None);
        assert_eq!(eval("2 +"), None);
        assert_eq!(eval("3/(4/2)"), Some(1));
        assert_eq!(eval("7/2*2"), Some(6));
        assert_eq!(eval("1/0"), None);
    }

    #[test]
    fn grouped_offsets_read_like_the_docs() {
        // H = 4 query heads over H_kv = 2: head 3 reads key/value head 1
        let sh = Shape::new(1, 3, 8, 4).with_kv_heads(2);
        let mut symbols = sizes(sh, Phase::Scores);
        symbols.extend([("bb", 0), ("hh", 3), ("i", 2), ("j", 1)]);
        let kv = substitute("crates/core/src/kernels/attention_gqa.rs", "kv_h", &symbols).unwrap();
        assert_eq!(kv.to_string(), "kv_h = hh/(H/H_kv) = 3/(4/2) = 1");
        symbols.push(("kv_h", kv.value));
        let k = substitute("crates/core/src/kernels/attention_gqa.rs", "k_base", &symbols).unwrap();
        assert_eq!(
            k.to_string(),
            "k_base = ((bb*T + j)*H_kv + kv_h)*D = ((0*3 + 1)*2 + 1)*2 = 6"
        );
        let mut symbols = sizes(sh, Phase::Split);
        symbols.extend([("bb", 0), ("i", 2)]);
        let ri = substitute("crates/core/src/kernels/attention_gqa.rs", "ri", &symbols).unwrap();
        assert_eq!(ri.value, 2 * (8 + 2 * 4));
        assert_eq!(sizes(sh, Phase::QkvProj).last(), Some(&("OC", 16)));
    }
}

/// `crates/analysis/src/gradcheck.rs`
mod gradcheck {
    use attn_trace_analysis::gradcheck::*;
    use attn_trace_core::tensor::Role;
    use attn_trace_core::trace::Buf;

    /// A check of `d_q[10]` with the given numbers.
    fn check(analytic: f32, numeric: f64, step: f32, noise: f64) -> Check {
        Check {
            grad: Buf::DQ,
            primal: Buf::Q,
            offset: 10,
            label: "b0 i2 h1 d0".into(),
            role: Role::Input,
            value: 0.5,
            analytic,
            numeric,
            step,
            noise,
            spread: 0.0,
        }
    }

    #[test]
    fn numbers_keep_six_significant_digits() {
        assert_eq!(sci(0.123456789), "0.123457");
        assert_eq!(sci(-1.5), "-1.50000");
        assert_eq!(sci(1234.5678), "1234.57");
        assert_eq!(sci(2.5e-5), "2.50000e-5");
        assert_eq!(sci(0.0), "0");
        // the relative error, the margin and the steps, short, as the panel's lines print them
        let line = check(1.0, 1.0 - 8.123e-6, STEP, 0.0).line();
        assert!(line.contains("relative error 8.1e-6, agree"), "{line}");
        let verdict = check(1.0, 0.5, STEP, 5.23e-6).verdict();
        assert_eq!(verdict, "DISAGREE: the finite difference is good to ±5.2e-6");
        let perturbed = check(1.0, 1.0, STEP, 0.0).perturbed();
        assert!(perturbed.contains("by ±0.1, ±0.05 and ±0.025 "), "{perturbed}");
        // a masked score's steps: the quarter step is 6103.515625 (which f32 holds exactly)
        let perturbed = check(1.0, 1.0, (4.0 * 6103.515625f64) as f32, 0.0).perturbed();
        assert!(perturbed.contains("by ±2.4e4, ±1.2e4 and ±6.1e3 "), "{perturbed}");
    }
}

/// `crates/analysis/src/quiz/`
mod quiz {
    use attn_trace_analysis::quiz::*;
    use attn_trace_core::trace::Op;

    #[test]
    fn a_kernel_line_gives_its_offsets_in_call_order() {
        let line = "s += rec.read(Buf::Q, q, q_base + d) * rec.read(Buf::K, k, k_base + d);";
        assert_eq!(
            line_accesses(line),
            [
                (Op::Read, "q_base + d".to_string()),
                (Op::Read, "k_base + d".to_string())
            ]
        );
        assert_eq!(
            line_accesses("rec.add(dx_id, dx, xi + c, s);"),
            [(Op::Read, "xi + c".to_string()), (Op::Write, "xi + c".to_string())]
        );
        assert_eq!(
            line_accesses("rec.write(Buf::DScores, d_scores, row + j, p * (dp - dot));"),
            [(Op::Write, "row + j".to_string())]
        );
        assert!(line_accesses("rec.enter(&[\"j\"], [j]);").is_empty());
    }

    #[test]
    fn typed_offsets_and_ranges() {
        let all = |text: &str| offset_ranges(text).map(|r| offsets(&r, usize::MAX));
        assert_eq!(all("10 6, 11 7"), Ok(vec![10, 6, 11, 7]));
        assert_eq!(all("8..=11 4..6 3..3"), Ok(vec![8, 9, 10, 11, 4, 5]));
        assert!(all("ten").is_err());
        // ranges are not expanded beyond what the question can use: the largest is two numbers
        let huge = offset_ranges("0..=18446744073709551615 0..4000000000").unwrap();
        assert_eq!(offsets_named(&huge), (1u128 << 64) + 4_000_000_000);
        assert_eq!(offsets(&huge, 3), [0, 1, 2]);
        assert!(value_matches(-0.314, -0.31) && !value_matches(-0.4, -0.31));
        assert!(value_matches(-1e9, attn_trace_core::trace::MASKED));
        assert_eq!(QuizLevel::Iterations.next(), QuizLevel::Offsets);
        assert_eq!(QuizLevel::from_name("values"), Some(QuizLevel::Values));
    }
}

/// `crates/analysis/src/hand.rs`
mod hand {
    use attn_trace_analysis::hand::{Calc, Digits, exp, fit, inv_sqrt, v};

    #[test]
    fn chains_print_the_digits_that_make_them_hold_by_hand() {
        // issue 53: `exp(-0.31 − 0.67) = 0.3739` printed operands at 2 decimals, the result
        // from unrounded ones (exp(−0.98) is 0.3753): the operands get the digits it needs
        let (s, m) = (-0.3124f32, 0.6713f32);
        let e = Calc::new(vec![s, m], exp(v(0) - v(1)), (s - m).exp()).fit_as(Digits::Short, Digits::Four);
        assert_eq!(
            (e.val(0).as_str(), e.val(1).as_str(), e.result.as_str()),
            ("-0.3124", "0.6713", "0.3739")
        );
        // a scale is the 1/√3 it is, not 0.5774: `5.5277 × 0.5774 = 3.1914` does not hold
        let sigma = 5.5277f32;
        let scaled = Calc::new(vec![sigma], v(0) * inv_sqrt(3), sigma * (1.0 / 3f32.sqrt())).fit(Digits::Four);
        assert_eq!((scaled.val(0).as_str(), scaled.result.as_str()), ("5.5277", "3.1914"));
        // `0.04 + 0.0885 = 0.1284` (explain mla_decode): one operand at a time, the one whose
        // next digit brings the chain nearest
        let sum = fit(&[0.039953, 0.088471], &[v(0) + v(1)], 0.128424, Digits::Plain);
        assert_eq!(sum.vals, ["0.03995", "0.08847"]);
        assert_eq!(sum.result, "0.1284");
        // a factor multiplied by 10 takes the digit, not the one multiplied by 0
        let sum = fit(
            &[0.575975, 10.0, 0.140029, 0.0, 0.283995, 5.0],
            &[v(0) * v(1) + v(2) * v(3) + v(4) * v(5)],
            7.17972,
            Digits::Plain,
        );
        assert_eq!(sum.vals[2], "0.14", "{sum:?}");
        assert_eq!(sum.result, "7.1797");
        // a chain that holds as the surface prints it is printed so
        let plain = fit(&[0.5, 0.25], &[v(0) * v(1)], 0.125, Digits::Four);
        assert_eq!(plain.vals, ["0.5000", "0.2500"]);
        assert_eq!(plain.result, "0.1250");
        // negative operands in parentheses after an operator
        assert_eq!(fit(&[1.0, -0.5], &[v(0) - v(1)], 1.5, Digits::Plain).par(1), "(-0.5)");
    }

    #[test]
    fn operands_that_cancel_take_the_digits_their_difference_needs() {
        // softmax backward of a row whose P is all but 1 (CI, display oracle, seed 234):
        // dP and Σ_k dP·P agree in 7 digits, so their f32 difference is 4 ulps, 5.96e-8. Printed
        // as f32's shortest forms, 0.15155521 − 0.151555151, a calculator makes it 5.9e-8: the
        // operands need the digits of the values f32 holds (0.1515552103519…)
        let (p, dp, sum) = (0.999_999_76_f32, 0.151_555_21_f32, 0.151_555_15_f32);
        let ds = p * (dp - sum);
        let f = Calc::new(vec![p, dp, sum], v(0) * (v(1) - v(2)), ds).fit(Digits::Plain);
        let line = format!("dS = {} × ({} − {}) = {}", f.val(0), f.val(1), f.val(2), f.result);
        assert_eq!(crate::support::chains::check_line(&line), Ok(1), "{line}");
    }

    #[test]
    fn a_sum_that_cancels_prints_the_digits_f32_kept() {
        // MLA decode's absorbed query (display oracle, seed 31): q·w_uk over D = 2 is two
        // products of 0.07 that cancel to -2.2575e-6. Each product was rounded to f32 (±4e-9),
        // so exact arithmetic on the operands, however many of their digits are printed, lands
        // a few parts in 1000 away: the result keeps only the digits that rounding left true
        let (a, b, c, d) = (-0.118_755_6_f32, -0.586_211_5_f32, 0.395_956_96_f32, -0.175_822_54_f32);
        let sum = a * b + c * d;
        let f = Calc::new(vec![a, b, c, d], v(0) * v(1) + v(2) * v(3), sum).fit(Digits::Plain);
        let line = format!(
            "q_lat = {}×{} + {}×{} = {}",
            f.par(0),
            f.par(1),
            f.val(2),
            f.par(3),
            f.result
        );
        assert_eq!(crate::support::chains::check_line(&line), Ok(1), "{line}");
        // exact arithmetic gives -2.25996e-6, f32's -2.257526e-6: both are -2.26e-6
        assert_eq!(f.result, "-2.26e-6", "{line}");
    }
}
