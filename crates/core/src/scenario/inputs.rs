//! From a scenario to the engine: its inputs (the given tensors, the rest filled from
//! `[init]`), the same scenario on other numbers (`reseeded`, `layer`), and its runs.

use super::{DEFAULT_STD, Dist, Init, Mode, Qkv, Scenario};
use crate::engine::{self, Inputs, Run, Start, registry};
use crate::kernels::Variant;
use crate::kernels::attention_mistakes::Mistakes;
use crate::tensor::numel;
use crate::trace::Buf;

impl Scenario {
    /// A given tensor, or its deterministic fill (nothing for a bias of a model without them).
    fn tensor(&self, buf: Buf) -> Vec<f32> {
        if !self.bias && matches!(buf, Buf::BQkv | Buf::BQ | Buf::BK | Buf::BV | Buf::BProj) {
            return Vec::new();
        }
        match self.values.get(&buf) {
            Some(data) => data.clone(),
            None => self
                .init
                .fill(buf, numel(&registry::given_shape(buf, self.shape, self.latent))),
        }
    }

    /// The engine's inputs for the correct run: the given tensors, and the rest filled from
    /// `[init]`. [`Scenario::mistaken_inputs`] gives the mistaken run's.
    pub fn inputs(&self) -> Inputs {
        let t = |buf: Buf| self.tensor(buf);
        let start = match (self.from_x(), self.qkv) {
            (true, _) if let Some(latent) = self.latent => Start::Latent {
                latent,
                x: t(Buf::X),
                w_q: t(Buf::WQ),
                w_dkv: t(Buf::WDkv),
                w_kr: t(Buf::WKr),
                w_uk: t(Buf::WUk),
                w_uv: t(Buf::WUv),
            },
            (false, _) => Start::Qkv {
                q: t(Buf::Q),
                k: t(Buf::K),
                v: t(Buf::V),
            },
            (true, Qkv::Fused) => Start::X {
                x: t(Buf::X),
                w_qkv: t(Buf::WQkv),
                b_qkv: t(Buf::BQkv),
            },
            (true, Qkv::Separate) => Start::Separate {
                x: t(Buf::X),
                memory: self.cross.then(|| t(Buf::Memory)),
                w_q: t(Buf::WQ),
                b_q: t(Buf::BQ),
                w_k: t(Buf::WK),
                b_k: t(Buf::BK),
                w_v: t(Buf::WV),
                b_v: t(Buf::BV),
            },
        };
        let plan = self.plan();
        let proj = plan.proj.then(|| (t(Buf::WProj), t(Buf::BProj)));
        Inputs {
            shape: self.shape,
            mask: self.mask.clone(),
            start,
            proj,
            d_out: t(Buf::DOut),
            dropout: self.dropout.filter(|_| self.mode == Mode::Train),
            mistakes: Mistakes::NONE,
            rope: self.rope,
            decode: self.decode,
            cache: self.cache.clone(),
            tiles: plan.tiles,
            sink: self.sink_logit.then(|| t(Buf::Sink)),
            bias: self.bias,
        }
    }

    /// The inputs of the mistaken run: the same values with `[run].mistakes` switched on.
    pub fn mistaken_inputs(&self) -> Option<Inputs> {
        (!self.mistakes.is_empty()).then(|| self.inputs().with_mistakes(self.mistakes))
    }

    /// The same scenario on other numbers: every tensor drawn afresh from a seed derived from
    /// `[init].seed` and `k`, the given ones too (so data chosen to make a wrong kernel look
    /// right is gone, while what is given still decides where the run starts), and a new
    /// dropout mask. Shapes, mask, variants and passes stay.
    /// `k = 0` is the scenario itself. `grade --seeds` runs the learner's kernel on these.
    ///
    /// Every structural choice of the scenario holds on these numbers: its sizes, mask and
    /// options, a model without biases (`[run] bias = false`), and a tensor it gives as all
    /// zeros, which stays zero (a bias the model does not have is structure, not data).
    #[must_use]
    pub fn reseeded(&self, k: u64) -> Scenario {
        if k == 0 {
            return self.clone();
        }
        // splitmix64's increment: seeds 1, 2, 3 land far apart from each other and from the
        // scenario's own
        self.redrawn(k.wrapping_mul(0x9e37_79b9_7f4a_7c15), k)
    }

    /// Layer `l` of the model the scenario stands for when it has `[shape] L` layers: layer 0
    /// is the scenario itself; a later layer is the same attention on numbers of its own, drawn
    /// as [`Scenario::reseeded`] draws them (every structural choice kept) from another seed.
    #[must_use]
    pub fn layer(&self, l: usize) -> Scenario {
        if l == 0 {
            return self.clone();
        }
        // another odd multiplier than reseeded's: layer 1 is not random input 1
        let l = l as u64;
        self.redrawn(l.wrapping_mul(0xd1b5_4a32_d192_ed03), l.wrapping_mul(0x100_0001))
    }

    /// Every tensor drawn afresh from `[init].seed ^ mix`, the dropout mask from its seed plus
    /// `dropout_step`; what is structure stays.
    fn redrawn(&self, mix: u64, dropout_step: u64) -> Scenario {
        let mut s = self.clone();
        let seed = self.init.seed ^ mix;
        let dist = match self.init.dist {
            d @ (Dist::Normal { .. } | Dist::Uniform { .. }) => d,
            // constant or counting fills would hide the very mistakes random inputs catch
            Dist::Zeros | Dist::Ones | Dist::Arange { .. } => Dist::Normal { std: DEFAULT_STD },
        };
        s.init = Init { seed, dist };
        // a given tensor stays given (it decides where the run starts), with drawn values; one
        // given as all zeros stays zero
        for (&buf, values) in &mut s.values {
            if values.iter().all(|&x| x == 0.0) {
                continue;
            }
            *values = s.init.fill(buf, values.len());
        }
        if let Some(d) = &mut s.dropout {
            d.seed = d.seed.wrapping_add(dropout_step);
        }
        s
    }

    /// Runs one variant with the scenario's passes (the correct run).
    pub fn run(&self, variant: Variant, traced: bool) -> Run {
        engine::run(&self.inputs(), variant, self.passes, traced)
    }

    /// Runs every variant of the scenario, in its order; with mistakes, each correct run is
    /// followed by its mistaken twin (forward only, but for a backward mistake).
    pub fn runs(&self, traced: bool) -> Vec<Run> {
        let inputs = self.inputs();
        let mistaken = self.mistaken_inputs();
        let mut runs = Vec::new();
        for &v in &self.variants {
            runs.push(engine::run(&inputs, v, self.passes, traced));
            if let Some(wrong) = &mistaken {
                runs.push(engine::run(wrong, v, self.passes, traced));
            }
        }
        runs
    }
}
