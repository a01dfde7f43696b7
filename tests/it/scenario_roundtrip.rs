//! Random valid scenarios survive the TOML writer and the parser unchanged, bit for bit.

use attn_trace_core::engine::registry::given_shape;
use attn_trace_core::engine::{Dropout, Passes};
use attn_trace_core::kernels::attention_flash::Tiles;
use attn_trace_core::kernels::attention_mistakes::{Mistake, Mistakes};
use attn_trace_core::kernels::attention_mla::Latent;
use attn_trace_core::kernels::decode::{CacheSpec, Paged};
use attn_trace_core::kernels::rope::{Pairs, Rope};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::scenario::{Dist, Focus, Init, Mode, Qkv, Scenario};
use attn_trace_core::tensor::{Shape, numel};
use attn_trace_core::trace::{Buf, Pass};
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Any finite f32: normal, subnormal or zero, either sign.
fn finite() -> impl Strategy<Value = f32> {
    use proptest::num::f32::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO
}

fn dist() -> impl Strategy<Value = Dist> {
    prop_oneof![
        finite().prop_map(|x| Dist::Normal { std: x.abs() }),
        finite().prop_map(|x| Dist::Uniform { scale: x.abs() }),
        Just(Dist::Zeros),
        Just(Dist::Ones),
        finite().prop_map(|scale| Dist::Arange { scale }),
    ]
}

fn text() -> impl Strategy<Value = String> {
    any::<String>().prop_filter("not blank", |s| !s.trim().is_empty())
}

prop_compose! {
    fn scenario()(
        (b, t, h, d, s_len) in (1usize..3, 1usize..5, 1usize..4, 1usize..4, 1usize..5),
        variants in prop_oneof![
            Just(vec![Variant::Baseline]),
            Just(vec![Variant::Mha]),
            Just(vec![Variant::Baseline, Variant::Mha]),
            Just(vec![Variant::Mha, Variant::Baseline]),
            Just(vec![Variant::Flash]),
            Just(vec![Variant::Mha, Variant::Flash]),
        ],
        (br, bc) in (1usize..7, 1usize..7),
        passes in prop_oneof![Just(Passes::BOTH), Just(Passes::FORWARD), Just(Passes { forward: false, backward: true })],
        mask_kind in 0usize..4,
        mask_bits in proptest::collection::vec(any::<bool>(), 16),
        init in (0..=i64::MAX as u64, dist()).prop_map(|(seed, dist)| Init { seed, dist }),
        title in text(),
        about in proptest::option::of(text()),
        start in 0usize..5,
        given in proptest::collection::vec(any::<bool>(), 16),
        seed_values in proptest::collection::vec(finite(), 1..64),
        dropout in proptest::option::of((0.001f32..0.999, 0..=i64::MAX as u64)),
        eval in any::<bool>(),
        wrong in proptest::collection::vec(any::<bool>(), 6),
        focus in proptest::option::of((any::<bool>(), any::<bool>(), 0usize..100, 0usize..100, 0usize..100, 0usize..100)),
        mla_pick in proptest::option::of((1usize..4, 1usize..4)),
        (kv_pick, rope_pick, decode, paged_pick, split_pick) in (0usize..4, proptest::option::of((any::<bool>(), 1.001f32..1e6)), any::<bool>(), proptest::option::of((1usize..4, 0usize..3, 0u64..100)), proptest::option::of(1usize..16)),
    ) -> Scenario {
        // start: 0 fused from x with everything filled, 1 fused with some tensors given,
        // 2 q, k, v given, 3 separate projections, 4 cross-attention (S queries, memory)
        let cross = start == 4;
        // multi-head latent attention: alone, from x (everything filled or some given), with
        // its own sizes R and DR
        let latent = mla_pick.filter(|_| start <= 1).map(|(r, dr)| Latent { r, dr });
        let shape = if cross { Shape::cross(b, s_len, t, h * d, h) } else { Shape::new(b, t, h * d, h) };
        // grouped-query attention: the gqa variant with H_kv some divisor of H
        let with_gqa = kv_pick > 0 && latent.is_none();
        let divisors: Vec<usize> = (1..=h).filter(|k| h.is_multiple_of(*k)).collect();
        let shape = if with_gqa { shape.with_kv_heads(divisors[kv_pick % divisors.len()]) } else { shape };
        let mut variants = if latent.is_some() { vec![Variant::Mla] } else { variants };
        if with_gqa {
            variants.push(Variant::Gqa);
        }
        // rotary positions need one sequence and even heads; decoding a causal run from x,
        // forward only, with no dropout in training
        // (latent attention turns its DR rotary channels only)
        let even = latent.map_or(d, |l| l.dr) % 2 == 0;
        let rope = rope_pick
            .filter(|_| !cross && even)
            .map(|(half, base)| Rope { pairs: if half { Pairs::Half } else { Pairs::Interleaved }, base });
        // flash has no decoding loop
        let decode = decode && start <= 1 && mask_kind == 0 && (dropout.is_none() || eval) && !variants.contains(&Variant::Flash);
        let passes = if decode { Passes::FORWARD } else { passes };
        // a decode run's cache: paged (blocks dealt from a seed, a few spare) when it has no
        // rotation, and split into up to T parts
        let cache = CacheSpec {
            paged: paged_pick
                .filter(|_| decode && rope.is_none() && latent.is_none())
                .map(|(bs, spare, seed)| Paged::shuffled(bs, b * t.div_ceil(bs) + spare, b, t, seed)),
            split: split_pick.filter(|_| decode && latent.is_none()).map(|p| 1 + (p - 1) % t),
        };
        let qkv = if start >= 3 { Qkv::Separate } else { Qkv::Fused };
        let pick = |names: &[&'static str]| -> Vec<&'static str> {
            names.iter().zip(&given).filter(|(_, g)| **g).map(|(n, _)| *n).collect()
        };
        let mut names: Vec<&str> = match start {
            0 => vec![],
            1 if latent.is_some() => pick(&["x", "w_q", "w_dkv", "w_kr", "w_uk", "w_uv", "w_proj", "b_proj"]),
            1 => pick(&["x", "w_qkv", "b_qkv", "w_proj", "b_proj"]),
            2 => {
                let mut n = vec!["q", "k", "v"];
                if given[0] {
                    n.extend(["w_proj", "b_proj"]);
                }
                n
            }
            3 => pick(&["x", "w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_proj", "b_proj"]),
            _ => pick(&["x", "memory", "w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_proj"]),
        };
        if start == 4 && names.contains(&"w_proj") {
            names.push("b_proj");
        }
        if passes.backward && given[15] {
            names.push("d_out");
        }
        let mut values = BTreeMap::new();
        for name in names {
            let buf = Buf::from_name(name).unwrap();
            let len = numel(&given_shape(buf, shape, latent));
            let data = (0..len).map(|k| seed_values[(k * 7 + name.len()) % seed_values.len()]).collect();
            values.insert(buf, data);
        }
        let mask = match mask_kind {
            0 => Mask::Causal,
            1 => Mask::None,
            // a window (and maybe sinks) narrows the causal mask of one sequence
            3 if !cross => Mask::Window { w: 1 + mask_bits.iter().filter(|b| **b).count() % (t + 1), sinks: usize::from(mask_bits[0]) * (t % 3) },
            _ => {
                // every query sees at least one key
                let rows: Vec<Vec<bool>> = (0..shape.s)
                    .map(|i| (0..t).map(|j| j == i % t || mask_bits[(i * 5 + j) % 16]).collect())
                    .collect();
                Mask::explicit(&rows)
            }
        };
        let mode = if eval { Mode::Eval } else { Mode::Train };
        // flash runs no dropout (in training) and none of the mistakes
        let flash = variants.contains(&Variant::Flash);
        let dropout = dropout
            .map(|(p, seed)| Dropout { p, seed })
            .filter(|_| (!flash || eval) && latent.is_none());
        let wrong: Vec<bool> = wrong.iter().map(|&w| w && !flash).collect();
        let tiles = if flash { Tiles { br, bc } } else { Tiles::default() };
        // only the mistakes this scenario can make
        let from_x = start != 2;
        let proj = from_x || values.contains_key(&Buf::WProj);
        let possible = [
            (Mistake::NoInputProjection, from_x),
            (Mistake::ScaleBySeqLen, true),
            (Mistake::MaskByMultiply, true),
            (Mistake::NoOutputProjection, proj),
            (Mistake::DropoutNotApplied, dropout.is_some() && mode == Mode::Train),
            (Mistake::SoftmaxOverTwoDims, true),
        ];
        let list: Vec<Mistake> = possible
            .iter()
            .zip(&wrong)
            .filter(|((_, ok), w)| *ok && **w && !with_gqa && !decode && latent.is_none())
            .map(|((m, _), _)| *m)
            .collect();
        // sink logits: the correct kernels of whole sequences, one per head (the baseline has one)
        let sink_logit = given[13]
            && !decode
            && list.is_empty()
            && latent.is_none()
            && (h == 1 || !variants.contains(&Variant::Baseline));
        if sink_logit && given[14] {
            values.insert(Buf::Sink, (0..h).map(|k| seed_values[(k * 5) % seed_values.len()]).collect());
        }
        let focus = focus.map(|(pick_variant, pick_pass, fb, fh, fi, fj)| {
            let variant = pick_variant.then_some(variants[0]);
            let pass = pick_pass.then_some(if passes.forward { Pass::Forward } else { Pass::Backward });
            let heads = if variant == Some(Variant::Baseline) { 1 } else { h };
            Focus { variant, pass, b: fb % b, h: fh % heads, i: fi % shape.s, j: fj % t }
        });
        // a model without biases is given none (LLaMA's); its layers are an independent count
        let biases = [Buf::BQkv, Buf::BQ, Buf::BK, Buf::BV, Buf::BProj];
        let bias = (init.seed / 3).is_multiple_of(2) || biases.iter().any(|b| values.contains_key(b));
        let layers = 1 + (init.seed % 3) as usize;
        Scenario {
            source: "prop.toml".to_string(),
            title,
            about,
            shape,
            cross,
            variants,
            passes,
            mask,
            qkv,
            dropout,
            mode,
            mistakes: Mistakes::of(&list),
            rope,
            decode,
            cache,
            sink_logit,
            latent,
            tiles,
            bias,
            layers,
            init,
            values,
            focus,
        }
    }
}

proptest! {
    #![proptest_config(crate::support::proptest_config(256))]

    #[test]
    fn written_scenarios_parse_back_equal(s in scenario()) {
        let text = s.to_toml();
        let back = Scenario::parse(&text, "prop.toml").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        // f32 equality is not enough for -0.0 vs 0.0: compare the bits too
        for (name, data) in &s.values {
            let bits: Vec<u32> = data.iter().map(|x| x.to_bits()).collect();
            let back_bits: Vec<u32> = back.values[name].iter().map(|x| x.to_bits()).collect();
            prop_assert_eq!(bits, back_bits, "{}", name);
        }
        prop_assert_eq!(back, s);
    }
}

#[test]
fn the_shipped_scenarios_round_trip_too() {
    for (name, text) in attn_trace_core::scenario::SHIPPED {
        let s = Scenario::parse(text, name).unwrap();
        let back = Scenario::parse(&s.to_toml(), name).unwrap();
        assert_eq!(back, s, "{name}");
        assert_eq!(
            back.inputs(),
            s.inputs(),
            "{name}: the filled values depend only on what round-trips"
        );
    }
}

/// A shipped scenario with one byte range replaced by arbitrary text.
fn mutated() -> impl Strategy<Value = String> {
    let texts: Vec<&'static str> = attn_trace_core::scenario::SHIPPED.iter().map(|(_, t)| *t).collect();
    (
        0..texts.len(),
        any::<prop::sample::Index>(),
        0usize..12,
        "\\PC{0,6}|[\\[\\]=\"',.#\\n0-9a-z-]{0,6}",
    )
        .prop_map(move |(k, at, len, insert)| {
            let text = texts[k];
            let mut start = at.index(text.len());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + len).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            format!("{}{insert}{}", &text[..start], &text[end..])
        })
}

proptest! {
    #![proptest_config(crate::support::proptest_config(512))]

    /// Bad input is an error, never a panic; whatever is accepted round-trips.
    #[test]
    fn edited_scenarios_are_accepted_or_rejected_cleanly(text in mutated()) {
        match Scenario::parse(&text, "edited.toml") {
            Ok(s) => prop_assert_eq!(Scenario::parse(&s.to_toml(), "edited.toml").ok(), Some(s)),
            Err(e) => {
                let line = e.to_string();
                prop_assert!(line.starts_with("edited.toml"));
                prop_assert!(!line.contains('\n'), "one line: {}", line);
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let _ = Scenario::parse(&text, "any.toml");
    }
}
