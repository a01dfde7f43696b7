//! A scenario from explicit tensors: what the TUI writes when a learner exports the attention of
//! a trained model's layer, so the same computation can be shared, run and reopened.

use super::{Focus, Init, Mode, Qkv, Scenario, ScenarioError};
use crate::engine::{Inputs, Passes, Start};
use crate::kernels::Variant;
use crate::trace::Buf;
use std::collections::BTreeMap;

impl Scenario {
    /// The scenario that runs `variant`, both passes, on exactly `inputs`: every tensor goes into
    /// `[values]`, nothing is filled from `[init]`. It is checked by writing it as TOML and
    /// parsing that text back (`source` names it in errors), so the scenario returned is the one
    /// the exported file reads as, value for value.
    pub fn from_inputs(
        source: &str,
        title: &str,
        about: Option<&str>,
        inputs: &Inputs,
        variant: Variant,
        focus: Option<Focus>,
    ) -> Result<Scenario, ScenarioError> {
        let values: BTreeMap<Buf, Vec<f32>> = inputs.given().into_iter().map(|(b, data)| (b, data.to_vec())).collect();
        let scenario = Scenario {
            source: source.to_string(),
            title: title.to_string(),
            about: about.map(str::to_string),
            shape: inputs.shape,
            cross: matches!(&inputs.start, Start::Separate { memory: Some(_), .. }),
            variants: vec![variant],
            passes: Passes::BOTH,
            mask: inputs.mask.clone(),
            qkv: if matches!(inputs.start, Start::Separate { .. }) {
                Qkv::Separate
            } else {
                Qkv::Fused
            },
            dropout: inputs.dropout,
            mode: Mode::Train,
            mistakes: inputs.mistakes,
            rope: inputs.rope,
            decode: false,
            tiles: inputs.tiles.sizes(),
            init: Init::default(),
            values,
            focus,
        };
        Scenario::parse(&scenario.to_toml(), source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine;

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
