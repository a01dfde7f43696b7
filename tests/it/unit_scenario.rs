//! Tests of scenario files (`crates/core/src/scenario/`), one module per source file: what were the
//! `#[cfg(test)]` unit tests of those files, now through the library's public API.

/// `crates/core/src/scenario/error.rs`
mod error {
    use attn_trace_core::scenario::{ScenarioError, line_column};

    #[test]
    fn positions_count_lines_and_characters() {
        let text = "a = 1\nτίτλος = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        // "τίτλος" is 6 characters but 12 bytes: the '=' is column 8
        let eq = text.rfind('=').unwrap();
        assert_eq!(line_column(text, eq), (2, 8));
    }

    #[test]
    fn display_is_one_line_with_every_known_part() {
        let e = ScenarioError::at(
            "x.toml",
            "[shape]\nB = 1\nC = -2\n",
            Some(18..20),
            Some("[shape].C".into()),
            "expected a positive integer, found -2".into(),
        );
        assert_eq!(
            e.to_string(),
            "x.toml:3:5: [shape].C: expected a positive integer, found -2"
        );
        let e = ScenarioError::file("y.toml", "empty file");
        assert_eq!(e.to_string(), "y.toml: empty file");
        let e = ScenarioError::file("z.toml", "unknown variant \"mh\na\" …");
        assert_eq!(e.to_string(), "z.toml: unknown variant \"mh\\na\" …");
    }
}

/// `crates/core/src/scenario/export.rs`
mod export {
    use attn_trace_core::engine::{self, Passes};
    use attn_trace_core::kernels::Variant;
    use attn_trace_core::scenario::{Focus, Scenario};
    use attn_trace_core::trace::Buf;

    #[test]
    fn explicit_tensors_round_trip_and_run_the_same() {
        // the walkthrough starts at x and fills everything from [init]: the export gives it all
        let inputs = Scenario::builtin().inputs();
        let s = Scenario::from_inputs(
            "out.toml",
            "copy of the walkthrough",
            Some("about"),
            &inputs,
            Variant::Mha,
            None,
        )
        .expect("valid");
        assert_eq!(
            s.values.len(),
            6,
            "x, w_qkv, b_qkv, w_proj, b_proj and d_out are all given"
        );
        assert_eq!(s.inputs(), inputs);
        assert_eq!(s.variants, vec![Variant::Mha]);
        let a = engine::run(&inputs, Variant::Mha, Passes::BOTH, false);
        let b = s.run(Variant::Mha, false);
        for &buf in Buf::ALL {
            assert_eq!(a.tensors.get(buf), b.tensors.get(buf), "{buf}");
        }
    }

    #[test]
    fn a_focus_outside_the_shape_is_refused_with_the_source_named() {
        let inputs = Scenario::builtin().inputs();
        let focus = Focus {
            variant: None,
            pass: None,
            b: 0,
            h: 0,
            i: 7,
            j: 0,
        };
        let e = Scenario::from_inputs("there.toml", "t", None, &inputs, Variant::Mha, Some(focus)).unwrap_err();
        assert!(e.to_string().contains("there.toml"), "{e}");
    }
}

/// `crates/core/src/scenario/fill.rs`
mod fill {
    use attn_trace_core::scenario::{Dist, Init};
    use attn_trace_core::trace::Buf;

    #[test]
    fn each_tensor_has_its_own_reproducible_stream() {
        let init = Init {
            seed: 7,
            dist: Dist::Normal { std: 1.0 },
        };
        let x = init.fill(Buf::X, 8);
        assert_eq!(x, init.fill(Buf::X, 8), "same seed and name give the same values");
        assert_ne!(x, init.fill(Buf::WQkv, 8), "another tensor draws another stream");
        // a longer fill starts with the same values: sizes do not shift the stream
        assert_eq!(x[..], init.fill(Buf::X, 12)[..8]);
        let other_seed = Init { seed: 8, ..init };
        assert_ne!(x, other_seed.fill(Buf::X, 8));
    }

    #[test]
    fn distributions_have_their_documented_values() {
        let init = |dist| Init { seed: 0, dist };
        assert_eq!(
            init(Dist::Arange { scale: 0.5 }).fill(Buf::X, 4),
            vec![0.0, 0.5, 1.0, 1.5]
        );
        assert_eq!(init(Dist::Ones).fill(Buf::X, 2), vec![1.0, 1.0]);
        assert_eq!(init(Dist::Zeros).fill(Buf::X, 2), vec![0.0, 0.0]);
        let u = init(Dist::Uniform { scale: 0.1 }).fill(Buf::X, 1000);
        assert!(u.iter().all(|v| v.abs() <= 0.1));
        assert!(u.iter().any(|v| *v > 0.05) && u.iter().any(|v| *v < -0.05));
        let n = init(Dist::Normal { std: 2.0 }).fill(Buf::X, 4000);
        let mean = n.iter().sum::<f32>() / n.len() as f32;
        let var = n.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n.len() as f32;
        assert!(mean.abs() < 0.15, "mean {mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.1, "std {}", var.sqrt());
    }
}

/// `crates/core/src/scenario/mod.rs` and its `shipped.rs`
mod scenario {
    use attn_trace_core::engine::{Passes, Start};
    use attn_trace_core::kernels::{Mask, Variant};
    use attn_trace_core::scenario::*;
    use attn_trace_core::tensor::Shape;
    use attn_trace_core::trace::Buf;

    #[test]
    fn every_shipped_scenario_parses() {
        for (name, text) in SHIPPED {
            if let Err(e) = Scenario::parse(text, name) {
                panic!("{e}");
            }
        }
        let s = Scenario::builtin();
        assert_eq!(s.shape, Shape::new(1, 3, 4, 2));
        assert_eq!(s.source, "<built-in mha_walkthrough>");
    }

    #[test]
    fn defaults_fill_everything_from_x() {
        let s = Scenario::parse("title = \"t\"\n[shape]\nB = 2\nT = 3\nC = 4\n", "t.toml").unwrap();
        assert_eq!(s.shape, Shape::new(2, 3, 4, 1));
        assert_eq!(s.variants, vec![Variant::Baseline, Variant::Mha]);
        assert_eq!(s.passes, Passes::BOTH);
        assert_eq!(s.mask, Mask::Causal);
        assert_eq!(s.init, Init::default());
        let inputs = s.inputs();
        let Start::X { x, w_qkv, b_qkv } = &inputs.start else {
            panic!("starts at x")
        };
        assert_eq!((x.len(), w_qkv.len(), b_qkv.len()), (24, 48, 12));
        assert_eq!(inputs.proj.as_ref().map(|(w, b)| (w.len(), b.len())), Some((16, 4)));
        assert_eq!(inputs.d_out.len(), 24);
        assert_eq!(x, &s.init.fill(Buf::X, 24));
    }

    #[test]
    fn filled_scenarios_do_not_saturate_softmax() {
        // no [init]: the walkthrough's N(0, 0.5), whose rows keep several keys in play at T = 8
        let s = Scenario::parse("title = \"t\"\n[shape]\nB = 1\nT = 8\nC = 8\nH = 2\n", "t.toml").unwrap();
        assert_eq!(s.init.dist, Dist::Normal { std: 0.5 });
        let run = s.run(Variant::Mha, false);
        let probs = &run.tensors[attn_trace_core::trace::Buf::Probs];
        let rows: Vec<&[f32]> = probs.chunks(8).collect();
        let saturated = rows.iter().filter(|r| r.iter().any(|&p| p > 0.99)).count();
        // row i = 0 sees only itself; the others must not be one-hot
        assert!(
            saturated <= 2,
            "{saturated} of {} rows are one-hot: {rows:?}",
            rows.len()
        );
    }

    #[test]
    fn giving_one_tensor_leaves_the_others_unchanged() {
        let base = "title = \"t\"\n[shape]\nB = 1\nT = 2\nC = 2\n[init]\nseed = 3\n";
        let a = Scenario::parse(base, "a").unwrap().inputs();
        let b = Scenario::parse(&format!("{base}[values]\nb_qkv = [1, 2, 3, 4, 5, 6]\n"), "b")
            .unwrap()
            .inputs();
        let (
            Start::X { x: xa, w_qkv: wa, .. },
            Start::X {
                x: xb,
                w_qkv: wb,
                b_qkv,
            },
        ) = (&a.start, &b.start)
        else {
            panic!("both start at x")
        };
        assert_eq!((xa, wa), (xb, wb));
        assert_eq!(b_qkv, &vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(a.proj, b.proj);
    }

    #[test]
    fn qkv_start_has_a_projection_only_when_given() {
        let text = "title = \"t\"\n[shape]\nB = 1\nT = 1\nC = 2\n[values]\nq = [1, 2]\nk = [3, 4]\nv = [[5, 6]]\n";
        let s = Scenario::parse(text, "t").unwrap();
        assert!(!s.from_x());
        assert_eq!(s.inputs().proj, None);
        assert_eq!(
            s.inputs().start,
            Start::Qkv {
                q: vec![1.0, 2.0],
                k: vec![3.0, 4.0],
                v: vec![5.0, 6.0]
            }
        );
        let with = format!("{text}w_proj = [[1, 0], [0, 1]]\nb_proj = [0, 0]\n");
        let s = Scenario::parse(&with, "t").unwrap();
        assert_eq!(s.inputs().proj, Some((vec![1.0, 0.0, 0.0, 1.0], vec![0.0, 0.0])));
        let run = s.run(Variant::Baseline, true);
        // one query over one key: att = v, out = att·I + 0
        assert_eq!(run.tensors.get(Buf::Out), &[5.0, 6.0]);
        assert_eq!(Some(run.events() as u64), s.estimated_events(Variant::Baseline).get());
    }

    #[test]
    fn bytes_per_event_covers_what_a_trace_really_takes() {
        let text = "title = \"t\"\n[shape]\nB = 2\nT = 16\nC = 16\nH = 4\n";
        for s in [Scenario::parse(text, "t").unwrap(), Scenario::builtin()] {
            for run in s.runs(true) {
                let trace = run.trace.as_ref().unwrap();
                let bytes = trace.log_bytes() + trace.index.bytes();
                let per_event = bytes as f64 / trace.len() as f64;
                assert!(
                    per_event <= BYTES_PER_EVENT as f64,
                    "{}: {per_event:.1} bytes per event",
                    run.variant
                );
                assert!(per_event > 24.0, "the estimate is not wildly generous: {per_event:.1}");
            }
        }
    }

    #[test]
    fn the_budget_is_checked_before_anything_is_allocated() {
        let text = "title = \"big\"\n[shape]\nB = 64\nT = 2048\nC = 1024\nH = 16\n";
        let e = Scenario::parse(text, "big.toml").unwrap_err();
        assert_eq!((e.line, e.field.as_deref()), (Some(2), Some("[shape]")));
        assert!(e.message.contains("events") && e.message.contains("GiB"), "{e}");
        let huge = "title = \"huge\"\n[shape]\nB = 1048576\nT = 1048576\nC = 1048576\n";
        let e = Scenario::parse(huge, "huge.toml").unwrap_err();
        assert!(e.message.contains("far beyond"), "{e}");
    }
}

/// `crates/core/src/scenario/reader.rs`, through the errors `Scenario::parse` returns.
mod reader {
    use attn_trace_core::scenario::{Scenario, ScenarioError};

    fn error(text: &str) -> ScenarioError {
        Scenario::parse(text, "t.toml").unwrap_err()
    }

    #[test]
    fn duplicate_keys_are_named_with_their_table() {
        // a key given twice is named with the table whose header last precedes it: not a row of
        // a nested array (`[2]` starts a line), nor a `[` in a string or a comment
        let text = "title = \"t\"\n[values]\nq = [\n  [1, 0],\n  [2]\n]\n[shape] # sizes\nB = 1\n";
        let field = |text: &str| error(text).field;
        assert_eq!(field(&format!("{text}B = 2\n")).as_deref(), Some("[shape].B"));
        let (values, shape) = text.split_at(text.find("[shape]").unwrap());
        assert_eq!(field(&format!("{values}q = 1\n{shape}")).as_deref(), Some("[values].q"));
        assert_eq!(field(&format!("title = \"u\"\n{text}")).as_deref(), Some("title"));
        let text = "about = \"\"\"\n[fake]\n\"\"\"\n# [nor this]\nabout = \"\"\n";
        assert_eq!(field(text).as_deref(), Some("about"));
    }

    #[test]
    fn suggestions_catch_case_and_small_typos() {
        let shape = "title = \"t\"\n[shape]\nB = 1\nT = 2\n";
        let e = error(&format!("{shape}c = 2\n"));
        assert_eq!(e.field.as_deref(), Some("[shape].c"));
        assert_eq!(
            e.message,
            "unknown key (did you mean C?); expected one of: B, S, T, C, H, H_kv, kv_rank, rope_dim, L"
        );
        let run = |key: &str| error(&format!("{shape}C = 2\n[run]\n{key} = 1\n")).message;
        let keys = "variants, passes, mask, window, sinks, sink_logit, qkv, dropout, dropout_seed, mode, mistakes, rope, rope_base, decode, split_kv, bias";
        assert_eq!(
            run("varaints"),
            format!("unknown key (did you mean variants?); expected one of: {keys}")
        );
        assert_eq!(run("colour"), format!("unknown key; expected one of: {keys}"));
        // the edit distance against the limit of two edits: vxriant is two from variants (a
        // letter changed, one dropped), vxrixnt three, as kitten is from sitting
        assert!(run("vxriant").contains("(did you mean variants?)"));
        assert!(!run("vxrixnt").contains("did you mean"));
    }
}
