//! Tests of TinyGPT's parts (`crates/model/src/`), one module per source file: what were the
//! `#[cfg(test)]` unit tests of those files, now through the library's public API.

/// `crates/model/src/adamw.rs`
mod adamw {
    use attn_trace_model::adamw::*;

    #[test]
    fn first_step_moves_each_parameter_by_about_lr_against_its_gradient() {
        // at t=1, m̂ = g and v̂ = g², so the step is lr·(g/(|g| + ε) + wd·p) ≈ lr·sign(g) + lr·wd·p
        let mut opt = AdamW::new(3, 0.1);
        let mut p = [1.0, -2.0, 0.0];
        opt.update(&mut p, &[0.5, -4.0, 0.0]);
        assert!((p[0] - (1.0 - 0.1 * (1.0 + 0.01))).abs() < 1e-6, "{p:?}");
        assert!((p[1] - (-2.0 + 0.1 * (1.0 + 0.02))).abs() < 1e-6, "{p:?}");
        assert_eq!(p[2], 0.0);
        assert_eq!(opt.t, 1);
    }
}

/// `crates/model/src/data.rs`
mod data {
    use attn_trace_model::data::*;
    use std::collections::HashSet;

    #[test]
    fn tasks_answer_their_inputs() {
        let ds = Dataset::builtin("reverse", 64).unwrap();
        let line = ds.train.split(|&b| b == b'\n').next().unwrap();
        let (inp, out) = line.split_at(line.iter().position(|&b| b == b'|').unwrap());
        let rev: Vec<u8> = inp.iter().rev().copied().collect();
        assert_eq!(&out[1..], &rev[..]);
        let ds = Dataset::builtin("sort", 64).unwrap();
        let line = ds.val.split(|&b| b == b'\n').next().unwrap();
        let (inp, out) = line.split_at(line.iter().position(|&b| b == b'|').unwrap());
        let mut sorted = inp.to_vec();
        sorted.sort_unstable();
        assert_eq!(&out[1..], &sorted[..]);
    }

    #[test]
    fn validation_inputs_are_held_out() {
        let ds = Dataset::builtin("copy", 64).unwrap();
        let inputs = |b: &[u8]| -> HashSet<Vec<u8>> {
            b.split(|&c| c == b'\n')
                .filter_map(|l| l.split(|&c| c == b'|').next().map(<[u8]>::to_vec))
                .filter(|s| !s.is_empty())
                .collect()
        };
        let (tr, va) = (inputs(&ds.train), inputs(&ds.val));
        assert!(va.len() > 1000);
        assert!(tr.is_disjoint(&va));
    }

    #[test]
    fn windows_count_needs_a_target_byte() {
        assert_eq!(window_count(129, 64), 2);
        assert_eq!(window_count(128, 64), 1);
        assert_eq!(window_count(64, 64), 0);
    }
}

/// `crates/model/src/ops/`
mod ops {
    // B, T, IC, OC and V: the sizes as the kernels name them
    #![allow(non_snake_case)]

    use attn_trace_core::tensor::simd;
    use attn_trace_model::ops::*;

    #[test]
    fn tanh_matches_std_and_saturates() {
        for u in [-20.0f32, -3.0, -0.5, 0.0, 0.25, 2.0, 50.0, 100.0] {
            assert!((tanh(u) - u.tanh()).abs() < 1e-6, "tanh({u})");
        }
        assert_eq!(tanh(100.0), 1.0);
        assert_eq!(tanh(-100.0), -1.0);
    }

    #[test]
    fn gelu_known_values() {
        // GELU_tanh(1) = 0.8411920, GELU_tanh(−1) = −0.1588080
        let (mut y, mut th) = ([0.0; 3], [0.0; 3]);
        gelu_forward(&[1.0, -1.0, 0.0], &mut y, &mut th);
        assert!((y[0] - 0.841_192).abs() < 1e-6);
        assert!((y[1] + 0.158_808).abs() < 1e-6);
        assert_eq!(y[2], 0.0);
    }

    #[test]
    fn layernorm_row_has_zero_mean_unit_variance() {
        let x = [1.0, 2.0, 3.0, 4.0];
        let (mut y, mut m, mut s) = ([0.0; 4], [0.0], [0.0]);
        layernorm_forward(4, &x, &mut y, &mut m, &mut s);
        assert_eq!(m[0], 2.5);
        // var = 1.25 → ŷ = (x − 2.5)/√1.25000001
        assert!((y[0] + 1.341_640_8).abs() < 1e-5);
        assert!((y.iter().sum::<f32>()).abs() < 1e-6);
    }

    #[test]
    fn crossentropy_forward_gives_the_bits_of_the_row_by_row_loop() {
        // 13 rows: a group of eight side by side, then five; V = 256 as in the model
        let (rows, V) = (13, 256);
        let logits: Vec<f32> = (0..rows * V)
            .map(|i| ((i * 7919 % 1000) as f32 - 500.0) / 97.0)
            .collect();
        let targets: Vec<u8> = (0..rows).map(|r| (r * 37 % V) as u8).collect();
        let (mut probs, mut losses) = (vec![0.0; rows * V], vec![0.0; rows]);
        crossentropy_forward(V, &logits, &targets, &mut probs, &mut losses);
        for r in 0..rows {
            let lr = &logits[r * V..(r + 1) * V];
            let maxval = lr.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            let e: Vec<f32> = lr.iter().map(|&l| simd::exp(l - maxval)).collect();
            let sum: f32 = e.iter().sum();
            let inv = 1.0 / sum;
            for (j, &e) in e.iter().enumerate() {
                assert_eq!((e * inv).to_bits(), probs[r * V + j].to_bits(), "p[{r}, {j}]");
            }
            let loss = sum.ln() - (lr[targets[r] as usize] - maxval);
            assert_eq!(loss.to_bits(), losses[r].to_bits(), "loss[{r}]");
        }
    }

    #[test]
    fn fused_gelu_layers_give_the_bits_of_their_parts() {
        // B=2, T=3, IC=5, OC=12 (not a multiple of the vector widths)
        let ([B, T], IC, OC) = ([2, 3], 5, 12);
        let v = |n: usize, s: usize| -> Vec<f32> { (0..n).map(|i| ((i * s % 101) as f32 - 50.0) / 23.0).collect() };
        let (x, w, b, dg) = (v(B * T * IC, 7), v(IC * OC, 11), v(OC, 13), v(B * T * OC, 17));
        let z = |n: usize| vec![0.0f32; n];
        let (mut y, mut g, mut th) = (z(B * T * OC), z(B * T * OC), z(B * T * OC));
        linear_forward([B, T], &x, &w, &b, &mut y);
        gelu_forward(&y.clone(), &mut g, &mut th);
        let (mut y2, mut g2, mut th2) = (z(B * T * OC), z(B * T * OC), z(B * T * OC));
        linear_gelu_forward([B, T], &x, &w, &b, &mut y2, &mut g2, &mut th2);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!((bits(&y), bits(&g), bits(&th)), (bits(&y2), bits(&g2), bits(&th2)));

        let (mut dy, mut dx, mut dw, mut db) = (z(B * T * OC), z(B * T * IC), z(IC * OC), vec![9.0; OC]);
        gelu_backward(&y, &th, &dg, &mut dy);
        linear_backward([B, T], &x, &w, &dy, &mut dx, &mut dw, &mut db);
        let (mut dy2, mut dx2, mut dw2, mut db2) = (z(B * T * OC), z(B * T * IC), z(IC * OC), vec![9.0; OC]);
        gelu_linear_backward([B, T], &x, &w, (&y, &th), &dg, &mut dy2, &mut dx2, &mut dw2, &mut db2);
        assert_eq!(bits(&dy), bits(&dy2));
        assert_eq!((bits(&dx), bits(&dw), bits(&db)), (bits(&dx2), bits(&dw2), bits(&db2)));
    }

    /// `dx = dy·Wᵀ`, `dW = xᵀ·dy`, `db = Σ_rows dy` summed in f64 one term at a time.
    fn linear_backward_in_f64(x: &[f32], w: &[f32], dy: &[f32], IC: usize, OC: usize) -> [Vec<f64>; 3] {
        let rows = x.len() / IC;
        let mut dx = vec![0.0; rows * IC];
        let mut dw = vec![0.0; IC * OC];
        let mut db = vec![0.0; OC];
        for r in 0..rows {
            for o in 0..OC {
                let d = f64::from(dy[r * OC + o]);
                db[o] += d;
                for c in 0..IC {
                    dx[r * IC + c] += d * f64::from(w[c * OC + o]);
                    dw[c * OC + o] += f64::from(x[r * IC + c]) * d;
                }
            }
        }
        [dx, dw, db]
    }

    #[test]
    fn linear_backward_reads_w_transposed_in_place() {
        // dy·Wᵀ with W [IC, OC] read with swapped strides: shapes with and without whole
        // vector widths and sgemm tiles, the model's (C = 64, 4C, V = 256) among them
        for ([B, T], IC, OC) in [
            ([2, 3], 5, 12),
            ([2, 64], 64, 192),
            ([1, 64], 256, 64),
            ([3, 7], 64, 256),
        ] {
            let v = |n: usize, s: usize| -> Vec<f32> { (0..n).map(|i| ((i * s % 101) as f32 - 50.0) / 23.0).collect() };
            let (x, w, dy) = (v(B * T * IC, 7), v(IC * OC, 11), v(B * T * OC, 17));
            let z = |n: usize| vec![f32::NAN; n];
            let (mut dx, mut dw, mut db) = (z(B * T * IC), z(IC * OC), z(OC));
            linear_backward([B, T], &x, &w, &dy, &mut dx, &mut dw, &mut db);
            let [want_dx, want_dw, want_db] = linear_backward_in_f64(&x, &w, &dy, IC, OC);
            for (name, got, want) in [("dx", &dx, &want_dx), ("dW", &dw, &want_dw), ("db", &db, &want_db)] {
                let scale = want.iter().fold(1.0f64, |m, d| m.max(d.abs()));
                for (n, (&g, &w)) in got.iter().zip(want).enumerate() {
                    let err = (f64::from(g) - w).abs();
                    assert!(err <= 1e-6 * scale, "{B}x{T}x{IC}x{OC} {name}[{n}] = {g}, want {w}");
                }
            }
        }
    }

    #[test]
    fn crossentropy_of_uniform_logits_is_ln_v() {
        let (mut p, mut l) = ([0.0; 4], [0.0]);
        crossentropy_forward(4, &[0.5; 4], &[2], &mut p, &mut l);
        assert!((l[0] - 4f32.ln()).abs() < 1e-6);
        let mut d = [0.0; 4];
        crossentropy_backward(4, &p, &[2], 1.0, &mut d);
        assert_eq!(d, [0.25, 0.25, -0.75, 0.25]);
    }
}

/// `crates/model/src/sample.rs`
mod sample {
    use attn_trace_model::sample::*;

    #[test]
    fn greedy_topk_and_inverse_cdf() {
        let logits = [0.0, 2.0, 1.0, 2.0f32.ln() + 2.0];
        assert_eq!(pick(&logits, 0.0, 0, 0.99), 3);
        // top-2 keeps bytes 3 (weight 2) and 1 (weight 1): u < 2/3 → 3, else 1
        assert_eq!(pick(&logits, 1.0, 2, 0.6), 3);
        assert_eq!(pick(&logits, 1.0, 2, 0.7), 1);
        assert_eq!(pick(&logits, 1.0, 1, 0.99), 3);
    }
}

/// `crates/model/src/spec.rs`
mod spec {
    use attn_trace_model::gpt::{Attention, Config};
    use attn_trace_model::spec::*;

    #[test]
    fn each_setting_is_checked_once_and_cross_checks_wait_for_both_values() {
        let ok = TrainSpec {
            batch: Some(4),
            steps: Some(10),
            lr: Some(3e-3),
            ..TrainSpec::of_config(&Config::default())
        };
        assert_eq!(ok.validate(), Ok(()));
        let bad = TrainSpec {
            d_model: Some(64),
            n_heads: Some(3),
            lr: Some(1e30),
            steps: Some(0),
            ..ok
        };
        let p = bad.problems();
        let settings: Vec<Setting> = p.iter().map(|e| e.setting).collect();
        assert_eq!(settings, [Setting::Steps, Setting::Lr, Setting::Heads]);
        assert_eq!(p[1].msg, "must be in (0, 1], got 1e30");
        assert!(p[2].msg.contains("C % H") && p[2].msg.contains("try 1, 2, 4, 8, 16, 32, 64"));
        // an unreadable d_model leaves heads unchecked against it
        let partial = TrainSpec { d_model: None, ..bad };
        assert!(partial.problems().iter().all(|e| e.setting != Setting::Heads));
        // the memory estimate refuses what would not fit
        let huge = TrainSpec {
            batch: Some(4096),
            ..TrainSpec::of_config(&Config {
                seq_len: 4096,
                d_model: 4096,
                ..Config::default()
            })
        };
        let e = huge.validate().unwrap_err();
        assert_eq!(e.setting, Setting::Batch);
        assert!(e.msg.starts_with("is too large for memory"), "{e}");
    }

    #[test]
    fn flash_needs_one_key_value_head_per_head() {
        let ok = TrainSpec {
            n_heads: Some(4),
            d_model: Some(32),
            attention: Attention::FLASH,
            ..TrainSpec::default()
        };
        // no kv heads given: one per head; as many given: the same
        assert_eq!(ok.validate(), Ok(()));
        assert_eq!(
            TrainSpec {
                n_kv_heads: Some(4),
                ..ok
            }
            .validate(),
            Ok(())
        );
        let grouped = TrainSpec {
            n_kv_heads: Some(2),
            ..ok
        };
        let e = grouped.validate().unwrap_err();
        assert_eq!(e.setting, Setting::Attention);
        assert_eq!(
            e.to_string(),
            "attention flash needs as many key/value heads as heads (H_kv = 2, H = 4): it runs on the MHA layout"
        );
        // the naive kernels run grouped heads
        assert_eq!(
            TrainSpec {
                attention: Attention::Naive,
                ..grouped
            }
            .validate(),
            Ok(())
        );
        // heads unknown (resuming without --heads): nothing to compare yet
        assert_eq!(
            TrainSpec {
                n_heads: None,
                ..grouped
            }
            .validate(),
            Ok(())
        );
    }
}
