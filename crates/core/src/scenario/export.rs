//! A scenario from explicit tensors: what the TUI writes when a learner exports the attention of
//! a trained model's layer, so the same computation can be shared, run and reopened.

use super::{Focus, Init, Mode, Qkv, Scenario, ScenarioError};
use crate::engine::{Inputs, Passes, Start};
use crate::kernels::Variant;
use crate::kernels::decode::CacheSpec;
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
            cache: CacheSpec::default(),
            sink_logit: inputs.sink.is_some(),
            latent: inputs.plan().latent(),
            tiles: inputs.tiles.sizes(),
            bias: inputs.bias,
            layers: 1,
            init: Init::default(),
            values,
            focus,
        };
        Scenario::parse(&scenario.to_toml(), source)
    }
}
