//! Multi-head latent attention (`attention_mla.rs`): the training form against a float64
//! reference written here from the equations, every gradient against finite differences, the
//! absorbed decode against the training form, traced against untraced, the closed-form counts,
//! a score worked from the log, and the cache a token costs.

use crate::support::gradients::check_gradients;
use crate::support::inputs::values;
use crate::support::trace::{assert_derived_lines_match, closed_form_counts, counted};
use attn_trace_core::engine::{Inputs, Passes, Run, Start, run};
use attn_trace_core::kernels::attention_mla::Latent;
use attn_trace_core::kernels::rope::{Pairs, Rope};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Phase};

const INPUTS: &[Buf] = &[
    Buf::X,
    Buf::WQ,
    Buf::WDkv,
    Buf::WKr,
    Buf::WUk,
    Buf::WUv,
    Buf::WProj,
    Buf::BProj,
];

/// Shapes, latent sizes, masks and rotations the checks run on: `q_pe` and `k_pe` turned by
/// rope with each pairing, and not turned.
fn cases() -> Vec<(Shape, Latent, Mask, Option<Rope>)> {
    let rope = |pairs, base| Some(Rope { pairs, base });
    vec![
        (
            Shape::new(1, 4, 4, 2),
            Latent { r: 3, dr: 2 },
            Mask::Causal,
            rope(Pairs::Interleaved, 10000.0),
        ),
        (Shape::new(2, 3, 6, 3), Latent { r: 2, dr: 1 }, Mask::None, None),
        (
            Shape::new(1, 5, 4, 1),
            Latent { r: 5, dr: 4 },
            Mask::Window { w: 2, sinks: 1 },
            rope(Pairs::Half, 100.0),
        ),
        (Shape::new(2, 4, 6, 2), Latent { r: 2, dr: 4 }, Mask::Causal, None),
    ]
}

/// Seeded inputs of a multi-head latent attention run with its output projection, turning
/// `q_pe` and `k_pe` by `rope`.
fn latent_inputs(sh: Shape, lat: Latent, mask: Mask, rope: Option<Rope>, seed: u64) -> Inputs {
    let Shape { b, t, c, h, .. } = sh;
    let qd = sh.d() + lat.dr;
    let start = Start::Latent {
        latent: lat,
        x: values(b * t * c, seed),
        w_q: values(c * h * qd, seed + 1),
        w_dkv: values(c * lat.r, seed + 2),
        w_kr: values(c * lat.dr, seed + 3),
        w_uk: values(lat.r * c, seed + 4),
        w_uv: values(lat.r * c, seed + 5),
    };
    Inputs::new(sh, mask, start, values(b * t * c, seed + 6))
        .with_proj(values(c * c, seed + 7), values(c, seed + 8))
        .with_rope(rope)
}

/// Turns the `dr` channels of `x` at `at` by position `pos`'s angles, in f64 from the
/// definition: pair m is `(2m, 2m+1)` or `(m, m + dr/2)`, turned by `pos·base^(−2m/dr)`.
fn turn(x: &mut [f64], at: usize, dr: usize, pos: usize, rope: Rope) {
    for m in 0..dr / 2 {
        let (d0, d1) = match rope.pairs {
            Pairs::Interleaved => (2 * m, 2 * m + 1),
            Pairs::Half => (m, m + dr / 2),
        };
        let a = pos as f64 * f64::from(rope.base).powf(-2.0 * m as f64 / dr as f64);
        let (x0, x1) = (x[at + d0], x[at + d1]);
        x[at + d0] = x0 * a.cos() - x1 * a.sin();
        x[at + d1] = x0 * a.sin() + x1 * a.cos();
    }
}

/// `y[r, o] = Σ_c x[r, c]·w[c, o]` in f64 over `rows` rows.
fn matmul(x: &[f64], w: &[f64], rows: usize, ic: usize, oc: usize) -> Vec<f64> {
    let mut y = vec![0.0; rows * oc];
    for r in 0..rows {
        for o in 0..oc {
            y[r * oc + o] = (0..ic).map(|c| x[r * ic + c] * w[c * oc + o]).sum();
        }
    }
    y
}

/// The training form's out in f64, from the equations (not the kernel's loops): latent, the
/// rotary key, keys and values up from the latent, both parts of the scores, softmax, P·V, the
/// output projection.
fn reference_out(inputs: &Inputs) -> Vec<f64> {
    let Start::Latent {
        latent,
        x,
        w_q,
        w_dkv,
        w_kr,
        w_uk,
        w_uv,
    } = &inputs.start
    else {
        panic!("a latent run");
    };
    let f = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<f64>>();
    let sh = inputs.shape;
    let Shape { b, t, c, h, .. } = sh;
    let (d, r, dr) = (sh.d(), latent.r, latent.dr);
    let qd = d + dr;
    let rows = b * t;
    let mut q = matmul(&f(x), &f(w_q), rows, c, h * qd);
    let c_kv = matmul(&f(x), &f(w_dkv), rows, c, r);
    let mut k_pe = matmul(&f(x), &f(w_kr), rows, c, dr);
    // rope turns each query head's q_pe (after its D channels of q_nope) and k_pe by position
    if let Some(rope) = inputs.rope {
        for row in 0..rows {
            let pos = row % t;
            for hh in 0..h {
                turn(&mut q, (row * h + hh) * qd + d, dr, pos, rope);
            }
            turn(&mut k_pe, row * dr, dr, pos, rope);
        }
    }
    let k_nope = matmul(&c_kv, &f(w_uk), rows, r, c);
    let v = matmul(&c_kv, &f(w_uv), rows, r, c);
    let mut att = vec![0.0; rows * c];
    for bb in 0..b {
        for hh in 0..h {
            for i in 0..t {
                let qi = &q[(bb * t + i) * h * qd + hh * qd..][..qd];
                let s: Vec<Option<f64>> = (0..t)
                    .map(|j| {
                        let kn = &k_nope[(bb * t + j) * c + hh * d..][..d];
                        let kp = &k_pe[(bb * t + j) * dr..][..dr];
                        let dot: f64 = (0..d).map(|e| qi[e] * kn[e]).sum::<f64>()
                            + (0..dr).map(|e| qi[d + e] * kp[e]).sum::<f64>();
                        (!inputs.mask.hides(i, j)).then(|| dot / (qd as f64).sqrt())
                    })
                    .collect();
                let m = s.iter().flatten().fold(f64::NEG_INFINITY, |a, &x| a.max(x));
                let z: f64 = s.iter().flatten().map(|x| (x - m).exp()).sum();
                for (j, sj) in s.iter().enumerate() {
                    let Some(sj) = sj else { continue };
                    let p = (sj - m).exp() / z;
                    for e in 0..d {
                        att[(bb * t + i) * c + hh * d + e] += p * v[(bb * t + j) * c + hh * d + e];
                    }
                }
            }
        }
    }
    let (w, bias) = inputs.proj.as_ref().expect("with the output projection");
    let mut out = matmul(&att, &f(w), rows, c, c);
    for (k, o) in out.iter_mut().enumerate() {
        *o += bias[k % c] as f64;
    }
    out
}

#[test]
fn the_training_form_is_the_float64_reference() {
    for (sh, lat, mask, rope) in cases() {
        let inputs = latent_inputs(sh, lat, mask.clone(), rope, 90);
        let want = reference_out(&inputs);
        for traced in [true, false] {
            let r = run(&inputs, Variant::Mla, Passes::FORWARD, traced);
            let out = r.tensors.output();
            assert_eq!(out.len(), want.len());
            for (k, (&o, &w)) in out.iter().zip(&want).enumerate() {
                assert!(
                    (o as f64 - w).abs() < 1e-5,
                    "{sh:?} {lat:?} {mask:?} {rope:?} out[{k}] = {o}, want {w}"
                );
            }
        }
    }
}

#[test]
fn every_gradient_matches_finite_differences() {
    for (sh, lat, mask, rope) in cases() {
        check_gradients(&latent_inputs(sh, lat, mask, rope, 91), Variant::Mla, INPUTS);
    }
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn traced_and_untraced_agree_bit_for_bit_and_the_counts_are_closed_form() {
    for (sh, lat, mask, rope) in cases() {
        for decode in [false, true] {
            let mask = if decode { Mask::Causal } else { mask.clone() };
            let inputs = latent_inputs(sh, lat, mask, rope, 92).with_decode(decode);
            let a = run(&inputs, Variant::Mla, Passes::BOTH, true);
            let b = run(&inputs, Variant::Mla, Passes::BOTH, false);
            for (buf, _) in a.registry.iter() {
                assert_eq!(
                    bits(&a.tensors[buf]),
                    bits(&b.tensors[buf]),
                    "{sh:?} decode={decode}: {buf}"
                );
            }
            let trace = a.trace.as_ref().expect("traced");
            // every offset the panels show comes out of its formula with the recorded value
            assert_derived_lines_match(trace, sh);
            let passes = if decode { Passes::FORWARD } else { Passes::BOTH };
            assert_eq!(
                counted(trace),
                closed_form_counts(&inputs.plan(), Variant::Mla, passes),
                "{sh:?} {lat:?} decode={decode}"
            );
        }
    }
}

#[test]
fn the_absorbed_decode_is_the_training_form_within_1e5() {
    for (sh, lat, _, rope) in cases() {
        for seed in [93, 94] {
            let inputs = latent_inputs(sh, lat, Mask::Causal, rope, seed);
            let full = run(&inputs, Variant::Mla, Passes::FORWARD, false);
            let dec = run(&inputs.clone().with_decode(true), Variant::Mla, Passes::FORWARD, true);
            for buf in [Buf::Att, Buf::Out] {
                for (k, (&a, &b)) in full.tensors[buf].iter().zip(&dec.tensors[buf]).enumerate() {
                    assert!((a - b).abs() < 1e-5, "{sh:?} {lat:?} {rope:?}: {buf}[{k}] {a} vs {b}");
                }
            }
            // the probabilities of every step's row are the training form's, key by key
            let (t, h) = (sh.t, sh.h);
            for bb in 0..sh.b {
                for hh in 0..h {
                    for i in 0..t {
                        for j in 0..=i {
                            let off = ((bb * h + hh) * t + i) * t + j;
                            let (a, b) = (full.tensors[Buf::Probs][off], dec.tensors[Buf::Probs][off]);
                            assert!((a - b).abs() < 1e-6, "P[{off}] {a} vs {b}");
                        }
                    }
                }
            }
        }
    }
}

/// The last write to `buf[offset]` in a traced run's log.
fn last_write(r: &Run, buf: Buf, offset: usize) -> (usize, f32) {
    let t = r.trace.as_ref().expect("traced");
    let n = (0..t.len())
        .rev()
        .find(|&n| t.events[n].op == Op::Write && t.events[n].buf == buf && t.events[n].offset as usize == offset)
        .unwrap_or_else(|| panic!("no write to {buf}[{offset}]"));
    (n, t.events[n].value)
}

#[test]
fn a_score_reads_both_parts_of_the_head_at_their_offsets() {
    // B=1, T=4, C=4, H=2 (D=2), R=3, DR=2: head 1 of query 3 starts at q_base = (3*2 + 1)*4 =
    // 28, its q_pe at 30; key 1's k_nope row of head 1 at k_base = (1*2 + 1)*2 = 6, its k_pe at
    // pe_base = 1*2 = 2. S = (q[28]k_nope[6] + q[29]k_nope[7] + q[30]k_pe[2] + q[31]k_pe[3]) / 2
    let (sh, lat) = (Shape::new(1, 4, 4, 2), Latent { r: 3, dr: 2 });
    let r = run(
        &latent_inputs(sh, lat, Mask::Causal, None, 95),
        Variant::Mla,
        Passes::FORWARD,
        true,
    );
    let t = r.trace.as_ref().expect("traced");
    let (b, h, i, j) = (0, 1, 3, 1);
    let off = ((b * 2 + h) * 4 + i) * 4 + j; // ((b*H + h)*T + i)*T + j = 29
    let (w, s) = last_write(&r, Buf::Scores, off);
    let f = t.frame(t.events[w].frame).expect("the key's iteration");
    let reads: Vec<(Buf, usize)> = (f.start as usize..w)
        .filter(|&n| t.events[n].op == Op::Read)
        .map(|n| (t.events[n].buf, t.events[n].offset as usize))
        .collect();
    assert_eq!(
        reads,
        [
            (Buf::Q, 28),
            (Buf::KNope, 6),
            (Buf::Q, 29),
            (Buf::KNope, 7),
            (Buf::Q, 30),
            (Buf::KPe, 2),
            (Buf::Q, 31),
            (Buf::KPe, 3),
        ]
    );
    let (q, kn, kp) = (&r.tensors[Buf::Q], &r.tensors[Buf::KNope], &r.tensors[Buf::KPe]);
    let want = (q[28] as f64 * kn[6] as f64
        + q[29] as f64 * kn[7] as f64
        + q[30] as f64 * kp[2] as f64
        + q[31] as f64 * kp[3] as f64)
        / 2.0;
    assert!((s as f64 - want).abs() < 1e-6, "S = {s}, want {want}");
    // the kernel records its latent sizes, which the scale 1/√(D + DR) reads
    assert_eq!(t.consts, [("R", 3), ("DR", 2)]);
}

#[test]
fn a_decode_step_caches_one_row_of_r_plus_dr_for_every_head() {
    // step 2 of sequence 0 writes kv_cache[10..15]: c_kv at 10..13, k_pe at 13..15; it reads
    // rows 0, 5 and 10 of the cache in its scores, never a k_nope or a v
    let (sh, lat) = (Shape::new(1, 4, 4, 2), Latent { r: 3, dr: 2 });
    let r = run(
        &latent_inputs(sh, lat, Mask::Causal, None, 96).with_decode(true),
        Variant::Mla,
        Passes::FORWARD,
        true,
    );
    let t = r.trace.as_ref().expect("traced");
    assert!(!r.registry.has(Buf::KNope) && !r.registry.has(Buf::V) && !r.registry.has(Buf::KCache));
    assert_eq!(r.registry.get(Buf::KvCache).expect("the latent cache").shape, [1, 4, 5]);
    let writes: Vec<usize> = (0..t.len())
        .filter(|&n| t.events[n].op == Op::Write && t.events[n].buf == Buf::KvCache)
        .map(|n| t.events[n].offset as usize)
        .collect();
    assert_eq!(writes, (0..20).collect::<Vec<_>>(), "each row written once, in order");
    // the scores of step 2, head 0: rows j = 0, 1, 2 at kv_base = j*5
    let step2: Vec<usize> = (0..t.len())
        .filter(|&n| {
            let e = t.events[n];
            e.op == Op::Read && e.buf == Buf::KvCache && t.phase_at(n) == Phase::DecodeScores
        })
        .map(|n| t.events[n].offset as usize)
        .collect();
    // steps 0..=2 read 1, 2 and 3 rows per head, all R + DR of each
    let step2 = &step2[2 * 5 * (1 + 2)..][..2 * 5 * 3];
    let rows: Vec<usize> = step2.iter().map(|o| o / 5).collect();
    assert_eq!(&rows[..15], &[0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
}

#[test]
fn rope_turns_only_q_pe_and_k_pe_at_their_offsets() {
    // B=1, T=4, C=4, H=2 (D=2), R=3, DR=2, interleaved: a query head is [q_nope | q_pe] of
    // 2 + 2 channels, so rope writes channels 2 and 3 of each (q_base + D + d0, + d1) and
    // never q_nope's; k_pe's rows are pe_base = t*DR
    let (sh, lat) = (Shape::new(1, 4, 4, 2), Latent { r: 3, dr: 2 });
    let rope = Rope {
        pairs: Pairs::Interleaved,
        base: 10000.0,
    };
    let inputs = latent_inputs(sh, lat, Mask::Causal, Some(rope), 97);
    let r = run(&inputs, Variant::Mla, Passes::BOTH, true);
    let t = r.trace.as_ref().expect("traced");
    let writes = |phase: Phase, buf: Buf| -> Vec<usize> {
        (0..t.len())
            .filter(|&n| t.events[n].op == Op::Write && t.events[n].buf == buf && t.phase_at(n) == phase)
            .map(|n| t.events[n].offset as usize)
            .collect()
    };
    let q_pe: Vec<usize> = (0..8).flat_map(|head| [head * 4 + 2, head * 4 + 3]).collect();
    assert_eq!(writes(Phase::Rope, Buf::Q), q_pe);
    assert_eq!(writes(Phase::Rope, Buf::KPe), (0..8).collect::<Vec<_>>());
    assert_eq!(writes(Phase::RopeBack, Buf::DQ), q_pe);
    assert_eq!(writes(Phase::RopeBack, Buf::DKPe), (0..8).collect::<Vec<_>>());
    assert_eq!(r.registry.get(Buf::RopeCos).expect("tables").shape, [4, 1], "[T, DR/2]");

    // head 1 of position 3 (q_base = (3*2 + 1)*4 = 28): pair 0 is q[30], q[31], turned by
    // 3·θ_0 = 3 radians, its cosine and sine read at cs = 3*(DR/2) + 0 = 3
    let (w, turned) = last_write(&r, Buf::Q, 30);
    let f = t.frame(t.events[w].frame).expect("the pair's iteration");
    let reads: Vec<(Buf, usize, f32)> = (f.start as usize..w)
        .filter(|&n| t.events[n].op == Op::Read)
        .map(|n| (t.events[n].buf, t.events[n].offset as usize, t.events[n].value))
        .collect();
    let at: Vec<(Buf, usize)> = reads.iter().map(|&(b, o, _)| (b, o)).collect();
    assert_eq!(at, [(Buf::RopeCos, 3), (Buf::RopeSin, 3), (Buf::Q, 30), (Buf::Q, 31)]);
    let (c, s, x0, x1) = (reads[0].2, reads[1].2, reads[2].2, reads[3].2);
    assert_eq!((c, s), (3.0f64.cos() as f32, 3.0f64.sin() as f32));
    assert_eq!(turned, x0 * c - x1 * s);
    // the unturned q_pe is the projection's: x·w_q at the same offset, before the rope pass
    let (proj, _) = {
        let n = (0..w)
            .find(|&n| t.events[n].op == Op::Write && t.events[n].buf == Buf::Q && t.events[n].offset == 30)
            .expect("the projection's write");
        (t.events[n].value, n)
    };
    assert_eq!(proj, x0);
    // the scores read the turned value
    let score_read = (w..t.len())
        .find(|&n| t.events[n].op == Op::Read && t.events[n].buf == Buf::Q && t.events[n].offset == 30)
        .expect("a score reads q[30]");
    assert_eq!(t.phase_at(score_read), Phase::Scores);
    assert_eq!(t.events[score_read].value, turned);

    // decoding, step t turns its own cache row's k_pe, at ci + R = t*5 + 3 and t*5 + 4
    let dec = run(&inputs.with_decode(true), Variant::Mla, Passes::FORWARD, true);
    let t = dec.trace.as_ref().expect("traced");
    let cache: Vec<usize> = (0..t.len())
        .filter(|&n| t.events[n].op == Op::Write && t.events[n].buf == Buf::KvCache && t.phase_at(n) == Phase::Rope)
        .map(|n| t.events[n].offset as usize)
        .collect();
    assert_eq!(cache, [3, 4, 8, 9, 13, 14, 18, 19]);
}

#[test]
#[should_panic(expected = "variant mla on non-latent inputs")]
fn the_engine_refuses_mla_on_inputs_without_a_latent() {
    // MHA's inputs under the name "mla" must not quietly run MHA's kernel
    let sh = Shape::new(1, 3, 4, 2);
    let inputs = Inputs::new(
        sh,
        Mask::Causal,
        Start::X {
            x: values(12, 1),
            w_qkv: values(48, 2),
            b_qkv: values(12, 3),
        },
        values(12, 4),
    );
    run(&inputs, Variant::Mla, Passes::FORWARD, false);
}

#[test]
#[should_panic(expected = "variant mha on latent inputs")]
fn the_engine_refuses_latent_inputs_under_another_variant() {
    let (sh, lat) = (Shape::new(1, 3, 4, 2), Latent { r: 2, dr: 2 });
    run(
        &latent_inputs(sh, lat, Mask::Causal, None, 98),
        Variant::Mha,
        Passes::FORWARD,
        false,
    );
}

/// The shipped pair says it: `scenarios/mla_decode.toml`'s absorbed decode gives the out of
/// `scenarios/mla.toml`'s training form within 1e-5, so the two files must set the same sizes,
/// seed, mask and rope.
#[test]
fn the_shipped_absorbed_decode_gives_the_shipped_training_forms_out() {
    use attn_trace_core::scenario::Scenario;
    let load = |name: &str| Scenario::load(&crate::support::root().join("scenarios").join(name)).unwrap();
    let (train, decode) = (load("mla.toml"), load("mla_decode.toml"));
    assert!(decode.decode && !train.decode);
    let (a, b) = (train.run(Variant::Mla, false), decode.run(Variant::Mla, false));
    let (oa, ob) = (&a.tensors[Buf::Out], &b.tensors[Buf::Out]);
    assert_eq!(oa.len(), ob.len());
    for (k, (x, y)) in oa.iter().zip(ob.iter()).enumerate() {
        assert!((x - y).abs() < 1e-5, "out[{k}]: training form {x}, absorbed decode {y}");
    }
}
