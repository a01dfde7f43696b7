//! Runs one attention variant on concrete inputs, traced or not, and says in advance how many
//! events that will record.

use crate::kernels::attention_mistakes::{self, Mistake, Mistakes};
use crate::kernels::{Mask, Variant, attention_1h, attention_mha, dropout, linear, split};
use crate::tensor::{Shape, Tensor};
use crate::trace::{Buf, BufferInfo, Logger, NoRecord, Phase, Recorder, Trace};
use serde::Serialize;

/// Where the run starts.
#[derive(Clone, Debug, PartialEq)]
pub enum Start {
    /// From the input `x [B,T,C]` through the fused projection `w_qkv [C,3C]`, `b_qkv [3C]`.
    X {
        x: Vec<f32>,
        w_qkv: Vec<f32>,
        b_qkv: Vec<f32>,
    },
    /// From `x [B,S,C]` through three separate projections `w_q, w_k, w_v [C,C]` with biases
    /// `[C]`, like three linear layers. Keys and values come from `memory [B,T,C]` when it is
    /// given (cross-attention), else from `x` too.
    Separate {
        x: Vec<f32>,
        memory: Option<Vec<f32>>,
        w_q: Vec<f32>,
        b_q: Vec<f32>,
        w_k: Vec<f32>,
        b_k: Vec<f32>,
        w_v: Vec<f32>,
        b_v: Vec<f32>,
    },
    /// At the attention core, with `q [B,S,C]` and `k, v [B,T,C]` given.
    Qkv { q: Vec<f32>, k: Vec<f32>, v: Vec<f32> },
}

/// Training-mode attention dropout: probability `p`, keep mask drawn from `seed`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropout {
    pub p: f32,
    pub seed: u64,
}

/// Everything a run needs: sizes, mask, the starting tensors, the optional output projection,
/// dropout, mistakes, and the upstream gradient `d_out` (the loss is `L = Σ out ⊙ d_out`).
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    pub shape: Shape,
    pub mask: Mask,
    pub start: Start,
    /// `w_proj [C,C]` and `b_proj [C]`; without them the output is `att` itself.
    pub proj: Option<(Vec<f32>, Vec<f32>)>,
    pub d_out: Vec<f32>,
    /// Attention dropout (training mode); `None` in evaluation.
    pub dropout: Option<Dropout>,
    /// Mistakes switched on (see `kernels::attention_mistakes`); a mistaken run is forward only.
    pub mistakes: Mistakes,
}

/// Which passes run (and, in a traced run, are recorded). Backward needs the forward
/// activations, so a backward-only run still computes the forward pass, unrecorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Passes {
    pub forward: bool,
    pub backward: bool,
}

impl Passes {
    pub const BOTH: Passes = Passes {
        forward: true,
        backward: true,
    };
    pub const FORWARD: Passes = Passes {
        forward: true,
        backward: false,
    };
}

/// How the queries, keys and values are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartKind {
    /// Fused `w_qkv` projection of `x`, then the split.
    Fused,
    /// Three projections; `cross` when keys and values come from `memory`.
    Separate { cross: bool },
    /// `q, k, v` given.
    Qkv,
}

/// Everything the engine needs to know to count events, without the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub shape: Shape,
    pub mask: Mask,
    pub start: StartKind,
    pub proj: bool,
    pub dropout: bool,
    pub mistakes: Mistakes,
}

impl Inputs {
    pub fn plan(&self) -> Plan {
        Plan {
            shape: self.shape,
            mask: self.mask.clone(),
            start: match &self.start {
                Start::X { .. } => StartKind::Fused,
                Start::Separate { memory, .. } => StartKind::Separate {
                    cross: memory.is_some(),
                },
                Start::Qkv { .. } => StartKind::Qkv,
            },
            proj: self.proj.is_some(),
            dropout: self.dropout.is_some(),
            mistakes: self.mistakes,
        }
    }

    /// The same inputs with every mistake switched off: the run a mistaken one is compared with.
    pub fn corrected(&self) -> Inputs {
        Inputs {
            mistakes: Mistakes::NONE,
            ..self.clone()
        }
    }

    /// The passes a run of these inputs can make: a mistaken run is forward only.
    pub fn possible(&self, passes: Passes) -> Passes {
        Passes {
            forward: passes.forward,
            backward: passes.backward && self.mistakes.is_empty(),
        }
    }
}

/// The shape a variant sees: the baseline always has one head.
pub fn kernel_shape(sh: Shape, variant: Variant) -> Shape {
    match variant {
        Variant::Baseline => sh.single_head(),
        Variant::Mha => sh,
    }
}

/// Calls the pass `$f` of the variant's kernel file: both files have the same passes.
macro_rules! kernel {
    ($variant:expr, $f:ident($($arg:expr),* $(,)?)) => {
        match $variant {
            Variant::Baseline => attention_1h::$f($($arg),*),
            Variant::Mha => attention_mha::$f($($arg),*),
        }
    };
}

/// Every buffer of a run, flat. An empty vector is a buffer this run does not have.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tensors {
    pub x: Vec<f32>,
    pub memory: Vec<f32>,
    pub w_qkv: Vec<f32>,
    pub b_qkv: Vec<f32>,
    pub w_q: Vec<f32>,
    pub b_q: Vec<f32>,
    pub w_k: Vec<f32>,
    pub b_k: Vec<f32>,
    pub w_v: Vec<f32>,
    pub b_v: Vec<f32>,
    pub qkv: Vec<f32>,
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
    pub scores: Vec<f32>,
    pub probs: Vec<f32>,
    pub drop_mask: Vec<f32>,
    pub probs_drop: Vec<f32>,
    pub att: Vec<f32>,
    pub w_proj: Vec<f32>,
    pub b_proj: Vec<f32>,
    pub out: Vec<f32>,
    pub d_out: Vec<f32>,
    pub d_att: Vec<f32>,
    pub d_probs_drop: Vec<f32>,
    pub d_probs: Vec<f32>,
    pub d_scores: Vec<f32>,
    pub d_q: Vec<f32>,
    pub d_k: Vec<f32>,
    pub d_v: Vec<f32>,
    pub d_qkv: Vec<f32>,
    pub d_x: Vec<f32>,
    pub d_memory: Vec<f32>,
    pub d_w_qkv: Vec<f32>,
    pub d_b_qkv: Vec<f32>,
    pub d_w_q: Vec<f32>,
    pub d_b_q: Vec<f32>,
    pub d_w_k: Vec<f32>,
    pub d_b_k: Vec<f32>,
    pub d_w_v: Vec<f32>,
    pub d_b_v: Vec<f32>,
    pub d_w_proj: Vec<f32>,
    pub d_b_proj: Vec<f32>,
}

impl Tensors {
    pub fn get(&self, buf: Buf) -> &[f32] {
        match buf {
            Buf::X => &self.x,
            Buf::Memory => &self.memory,
            Buf::WQkv => &self.w_qkv,
            Buf::BQkv => &self.b_qkv,
            Buf::WQ => &self.w_q,
            Buf::BQ => &self.b_q,
            Buf::WK => &self.w_k,
            Buf::BK => &self.b_k,
            Buf::WV => &self.w_v,
            Buf::BV => &self.b_v,
            Buf::Qkv => &self.qkv,
            Buf::Q => &self.q,
            Buf::K => &self.k,
            Buf::V => &self.v,
            Buf::Scores => &self.scores,
            Buf::Probs => &self.probs,
            Buf::DropMask => &self.drop_mask,
            Buf::ProbsDrop => &self.probs_drop,
            Buf::Att => &self.att,
            Buf::WProj => &self.w_proj,
            Buf::BProj => &self.b_proj,
            Buf::Out => &self.out,
            Buf::DOut => &self.d_out,
            Buf::DAtt => &self.d_att,
            Buf::DProbsDrop => &self.d_probs_drop,
            Buf::DProbs => &self.d_probs,
            Buf::DScores => &self.d_scores,
            Buf::DQ => &self.d_q,
            Buf::DK => &self.d_k,
            Buf::DV => &self.d_v,
            Buf::DQkv => &self.d_qkv,
            Buf::DX => &self.d_x,
            Buf::DMemory => &self.d_memory,
            Buf::DWQkv => &self.d_w_qkv,
            Buf::DBQkv => &self.d_b_qkv,
            Buf::DWQ => &self.d_w_q,
            Buf::DBQ => &self.d_b_q,
            Buf::DWK => &self.d_w_k,
            Buf::DBK => &self.d_b_k,
            Buf::DWV => &self.d_w_v,
            Buf::DBV => &self.d_b_v,
            Buf::DWProj => &self.d_w_proj,
            Buf::DBProj => &self.d_b_proj,
        }
    }

    /// The output of the forward pass: `out`, or `att` when there is no output projection.
    pub fn output(&self) -> &[f32] {
        if self.out.is_empty() { &self.att } else { &self.out }
    }

    /// Buffers given as inputs, in place, and zeroed buffers for everything the requested
    /// passes compute. Weights a mistake leaves out (no input or output projection) are absent.
    pub fn new(inputs: &Inputs, variant: Variant, passes: Passes) -> Tensors {
        let sh = inputs.shape;
        let m = inputs.mistakes;
        let passes = inputs.possible(passes);
        let z = |buf: Buf| vec![0.0; shapes(buf, variant, sh).0.iter().product()];
        let mut t = Tensors::default();
        let project = !m.has(Mistake::NoInputProjection);
        match &inputs.start {
            Start::X { x, w_qkv, b_qkv } => {
                t.x = x.clone();
                if project {
                    (t.w_qkv, t.b_qkv, t.qkv) = (w_qkv.clone(), b_qkv.clone(), z(Buf::Qkv));
                }
                (t.q, t.k, t.v) = (z(Buf::Q), z(Buf::K), z(Buf::V));
            }
            Start::Separate {
                x,
                memory,
                w_q,
                b_q,
                w_k,
                b_k,
                w_v,
                b_v,
            } => {
                t.x = x.clone();
                t.memory = memory.clone().unwrap_or_default();
                if project {
                    (t.w_q, t.b_q, t.w_k, t.b_k) = (w_q.clone(), b_q.clone(), w_k.clone(), b_k.clone());
                    (t.w_v, t.b_v) = (w_v.clone(), b_v.clone());
                }
                (t.q, t.k, t.v) = (z(Buf::Q), z(Buf::K), z(Buf::V));
            }
            Start::Qkv { q, k, v } => (t.q, t.k, t.v) = (q.clone(), k.clone(), v.clone()),
        }
        (t.scores, t.probs, t.att) = (z(Buf::Scores), z(Buf::Probs), z(Buf::Att));
        if let Some(d) = inputs.dropout.filter(|_| !m.has(Mistake::DropoutNotApplied)) {
            t.drop_mask = dropout::keep_mask(t.probs.len(), d.p, d.seed);
            t.probs_drop = z(Buf::ProbsDrop);
        }
        if let Some((w, b)) = inputs.proj.as_ref().filter(|_| !m.has(Mistake::NoOutputProjection)) {
            (t.w_proj, t.b_proj, t.out) = (w.clone(), b.clone(), z(Buf::Out));
        }
        if passes.backward {
            t.d_out = inputs.d_out.clone();
            (t.d_att, t.d_probs, t.d_scores) = (z(Buf::DAtt), z(Buf::DProbs), z(Buf::DScores));
            (t.d_q, t.d_k, t.d_v) = (z(Buf::DQ), z(Buf::DK), z(Buf::DV));
            let grad = |w: &Vec<f32>| vec![0.0; w.len()];
            if !t.x.is_empty() {
                t.d_x = z(Buf::DX);
            }
            if !t.memory.is_empty() {
                t.d_memory = z(Buf::DMemory);
            }
            if !t.w_qkv.is_empty() {
                t.d_qkv = z(Buf::DQkv);
                (t.d_w_qkv, t.d_b_qkv) = (grad(&t.w_qkv), grad(&t.b_qkv));
            }
            if !t.w_q.is_empty() {
                (t.d_w_q, t.d_b_q, t.d_w_k) = (grad(&t.w_q), grad(&t.b_q), grad(&t.w_k));
                (t.d_b_k, t.d_w_v, t.d_b_v) = (grad(&t.b_k), grad(&t.w_v), grad(&t.b_v));
            }
            if !t.drop_mask.is_empty() {
                t.d_probs_drop = z(Buf::DProbsDrop);
            }
            if !t.w_proj.is_empty() {
                (t.d_w_proj, t.d_b_proj) = (grad(&t.w_proj), grad(&t.b_proj));
            }
        }
        t
    }

    /// Shapes and current contents of every present buffer, indexed by [`Buf`].
    fn snapshot(&self, variant: Variant, sh: Shape) -> Vec<Option<BufferInfo>> {
        Buf::ALL
            .iter()
            .map(|&b| {
                let data = self.get(b);
                (!data.is_empty()).then(|| {
                    let (shape, view) = shapes(b, variant, sh);
                    BufferInfo {
                        shape,
                        view,
                        initial: data.to_vec(),
                    }
                })
            })
            .collect()
    }
}

/// `(shape reported, view the kernel indexes)` of a buffer. The MHA kernel reads q, k, v and
/// their gradients as `[B,S,H,D]` / `[B,T,H,D]` views of `[B,S,C]` / `[B,T,C]` storage.
#[allow(non_snake_case)]
pub fn shapes(buf: Buf, variant: Variant, sh: Shape) -> (Vec<usize>, Vec<usize>) {
    let Shape {
        b: B,
        s: S,
        t: T,
        c: C,
        h: H,
    } = sh;
    let D = sh.d();
    let mha = variant == Variant::Mha;
    let same = |s: Vec<usize>| (s.clone(), s);
    // [B,L,C] stored, viewed per head by the MHA kernel
    let rows = |L: usize| (vec![B, L, C], if mha { vec![B, L, H, D] } else { vec![B, L, C] });
    let probs = if mha { vec![B, H, S, T] } else { vec![B, S, T] };
    match buf {
        Buf::X | Buf::Out | Buf::DOut | Buf::DX => same(vec![B, S, C]),
        Buf::Memory | Buf::DMemory => same(vec![B, T, C]),
        Buf::Q | Buf::DQ => rows(S),
        Buf::K | Buf::V | Buf::DK | Buf::DV => rows(T),
        Buf::Att | Buf::DAtt => same(rows(S).1),
        Buf::Scores | Buf::Probs | Buf::DScores | Buf::DProbs => same(probs),
        Buf::DropMask | Buf::ProbsDrop | Buf::DProbsDrop => same(probs),
        Buf::WQkv | Buf::DWQkv => same(vec![C, 3 * C]),
        Buf::BQkv | Buf::DBQkv => same(vec![3 * C]),
        Buf::Qkv | Buf::DQkv => same(vec![B, T, 3 * C]),
        Buf::WProj | Buf::DWProj | Buf::WQ | Buf::DWQ | Buf::WK | Buf::DWK | Buf::WV | Buf::DWV => same(vec![C, C]),
        Buf::BProj | Buf::DBProj | Buf::BQ | Buf::DBQ | Buf::BK | Buf::DBK | Buf::BV | Buf::DBV => same(vec![C]),
    }
}

/// The forward pass: the input projections (or the split, or nothing when starting at q, k, v),
/// the attention core of the variant, dropout, and the output projection (when there is one).
pub fn forward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    let sh = inputs.shape;
    let ksh = kernel_shape(sh, variant);
    let (mask, m) = (&inputs.mask, inputs.mistakes);
    let (queries, keys) = ([sh.b, sh.s], [sh.b, sh.t]);
    // keys and values come from memory in cross-attention, else from x
    let mem = if t.memory.is_empty() {
        (Buf::X, &t.x[..])
    } else {
        (Buf::Memory, &t.memory[..])
    };
    if m.has(Mistake::NoInputProjection) && !t.x.is_empty() {
        attention_mistakes::no_input_projection(rec, sh, (Buf::X, &t.x), mem, &mut t.q, &mut t.k, &mut t.v);
    } else if !t.w_qkv.is_empty() {
        let (x, w, b) = ((Buf::X, &t.x[..]), (Buf::WQkv, &t.w_qkv[..]), (Buf::BQkv, &t.b_qkv[..]));
        linear::forward(rec, Phase::QkvProj, keys, x, w, b, (Buf::Qkv, &mut t.qkv));
        split::forward(rec, sh, &t.qkv, &mut t.q, &mut t.k, &mut t.v);
    } else if !t.w_q.is_empty() {
        let x = (Buf::X, &t.x[..]);
        linear::forward(
            rec,
            Phase::QProj,
            queries,
            x,
            (Buf::WQ, &t.w_q),
            (Buf::BQ, &t.b_q),
            (Buf::Q, &mut t.q),
        );
        linear::forward(
            rec,
            Phase::KProj,
            keys,
            mem,
            (Buf::WK, &t.w_k),
            (Buf::BK, &t.b_k),
            (Buf::K, &mut t.k),
        );
        linear::forward(
            rec,
            Phase::VProj,
            keys,
            mem,
            (Buf::WV, &t.w_v),
            (Buf::BV, &t.b_v),
            (Buf::V, &mut t.v),
        );
    }

    if m.has(Mistake::ScaleBySeqLen) || m.has(Mistake::MaskByMultiply) {
        attention_mistakes::scores(rec, ksh, mask, m, &t.q, &t.k, &mut t.scores);
    } else {
        kernel!(variant, scores(rec, ksh, mask, &t.q, &t.k, &mut t.scores));
    }
    if m.has(Mistake::SoftmaxOverTwoDims) {
        attention_mistakes::softmax_over_two_dims(rec, ksh, &t.scores, &mut t.probs);
    } else {
        kernel!(variant, softmax_rows(rec, ksh, &t.scores, &mut t.probs));
    }
    let p = match inputs.dropout {
        Some(d) if !t.drop_mask.is_empty() => {
            dropout::forward(rec, ksh, d.p, &t.drop_mask, &t.probs, &mut t.probs_drop);
            (Buf::ProbsDrop, &t.probs_drop[..])
        }
        _ => (Buf::Probs, &t.probs[..]),
    };
    kernel!(variant, weighted_sum(rec, ksh, p, &t.v, &mut t.att));

    if !t.w_proj.is_empty() {
        let (att, w, b) = (
            (Buf::Att, &t.att[..]),
            (Buf::WProj, &t.w_proj[..]),
            (Buf::BProj, &t.b_proj[..]),
        );
        linear::forward(rec, Phase::OutProj, queries, att, w, b, (Buf::Out, &mut t.out));
    }
}

/// The backward pass from `t.d_out`, in the reverse order of [`forward`].
pub fn backward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, inputs: &Inputs) {
    assert!(inputs.mistakes.is_empty(), "a mistaken run is forward only");
    let sh = inputs.shape;
    let ksh = kernel_shape(sh, variant);
    let mask = &inputs.mask;
    let (queries, keys) = ([sh.b, sh.s], [sh.b, sh.t]);
    if t.w_proj.is_empty() {
        // no output projection: out is att, so its gradient is d_out unchanged
        t.d_att.copy_from_slice(&t.d_out);
    } else {
        let (att, w, d_out) = (
            (Buf::Att, &t.att[..]),
            (Buf::WProj, &t.w_proj[..]),
            (Buf::DOut, &t.d_out[..]),
        );
        let (d_att, d_w, d_b) = (
            (Buf::DAtt, &mut t.d_att[..]),
            (Buf::DWProj, &mut t.d_w_proj[..]),
            (Buf::DBProj, &mut t.d_b_proj[..]),
        );
        linear::backward(rec, Phase::OutProjBack, queries, att, w, d_out, d_att, d_w, d_b);
    }

    match inputs.dropout {
        Some(d) if !t.drop_mask.is_empty() => {
            let (p, d_p) = (
                (Buf::ProbsDrop, &t.probs_drop[..]),
                (Buf::DProbsDrop, &mut t.d_probs_drop[..]),
            );
            kernel!(variant, weighted_sum_back(rec, ksh, p, &t.v, &t.d_att, d_p, &mut t.d_v));
            dropout::backward(rec, ksh, d.p, &t.drop_mask, &t.d_probs_drop, &mut t.d_probs);
        }
        _ => {
            let (p, d_p) = ((Buf::Probs, &t.probs[..]), (Buf::DProbs, &mut t.d_probs[..]));
            kernel!(variant, weighted_sum_back(rec, ksh, p, &t.v, &t.d_att, d_p, &mut t.d_v));
        }
    }
    kernel!(
        variant,
        softmax_rows_back(rec, ksh, &t.probs, &t.d_probs, &mut t.d_scores)
    );
    kernel!(
        variant,
        scores_back(rec, ksh, mask, &t.q, &t.k, &t.d_scores, &mut t.d_q, &mut t.d_k)
    );

    if !t.w_qkv.is_empty() {
        split::backward(rec, sh, &t.d_q, &t.d_k, &t.d_v, &mut t.d_qkv);
        let (x, w, d_qkv) = ((Buf::X, &t.x[..]), (Buf::WQkv, &t.w_qkv[..]), (Buf::DQkv, &t.d_qkv[..]));
        let (d_x, d_w, d_b) = (
            (Buf::DX, &mut t.d_x[..]),
            (Buf::DWQkv, &mut t.d_w_qkv[..]),
            (Buf::DBQkv, &mut t.d_b_qkv[..]),
        );
        linear::backward(rec, Phase::QkvProjBack, keys, x, w, d_qkv, d_x, d_w, d_b);
    } else if !t.w_q.is_empty() {
        // k and v read memory (cross-attention) or x: their input gradients add up there,
        // and in self-attention the query projection's adds to the same d_x
        let cross = !t.memory.is_empty();
        let (mem, d_mem) = if cross {
            ((Buf::Memory, &t.memory[..]), (Buf::DMemory, &mut t.d_memory[..]))
        } else {
            ((Buf::X, &t.x[..]), (Buf::DX, &mut t.d_x[..]))
        };
        let (w, d_v, d_w, d_b) = (
            (Buf::WV, &t.w_v[..]),
            (Buf::DV, &t.d_v[..]),
            (Buf::DWV, &mut t.d_w_v[..]),
            (Buf::DBV, &mut t.d_b_v[..]),
        );
        linear::backward_into(
            rec,
            Phase::VProjBack,
            keys,
            mem,
            w,
            d_v,
            (d_mem.0, &mut *d_mem.1),
            d_w,
            d_b,
            false,
        );
        let (w, d_k, d_w, d_b) = (
            (Buf::WK, &t.w_k[..]),
            (Buf::DK, &t.d_k[..]),
            (Buf::DWK, &mut t.d_w_k[..]),
            (Buf::DBK, &mut t.d_b_k[..]),
        );
        linear::backward_into(rec, Phase::KProjBack, keys, mem, w, d_k, d_mem, d_w, d_b, true);
        let (x, w, d_q) = ((Buf::X, &t.x[..]), (Buf::WQ, &t.w_q[..]), (Buf::DQ, &t.d_q[..]));
        let (d_x, d_w, d_b) = (
            (Buf::DX, &mut t.d_x[..]),
            (Buf::DWQ, &mut t.d_w_q[..]),
            (Buf::DBQ, &mut t.d_b_q[..]),
        );
        linear::backward_into(rec, Phase::QProjBack, queries, x, w, d_q, d_x, d_w, d_b, !cross);
    }
}

/// The result of running one variant.
#[derive(Debug)]
pub struct Run {
    pub variant: Variant,
    pub shape: Shape,
    /// The mistakes this run made (empty for the correct implementation).
    pub mistakes: Mistakes,
    pub tensors: Tensors,
    /// The event log, for traced runs.
    pub trace: Option<Trace>,
}

impl Run {
    /// Number of recorded events (0 for an untraced run).
    pub fn events(&self) -> usize {
        self.trace.as_ref().map_or(0, Trace::len)
    }

    /// Every present buffer with its reported shape, in [`Buf`] order.
    pub fn named_tensors(&self) -> Vec<(Buf, Tensor)> {
        Buf::ALL
            .iter()
            .filter(|&&b| !self.tensors.get(b).is_empty())
            .map(|&b| {
                (
                    b,
                    Tensor::new(shapes(b, self.variant, self.shape).0, self.tensors.get(b).to_vec()),
                )
            })
            .collect()
    }
}

/// Runs `variant` on `inputs`. A traced run records the requested passes; a mistaken run
/// makes (and records) the forward pass only.
pub fn run(inputs: &Inputs, variant: Variant, passes: Passes, traced: bool) -> Run {
    let passes = inputs.possible(passes);
    let sh = inputs.shape;
    let mut t = Tensors::new(inputs, variant, passes);
    let trace = if traced {
        let mut log = Logger::with_capacity(estimate_events(&inputs.plan(), variant, passes) as usize);
        let mut initial = None;
        if passes.forward {
            initial = Some(t.snapshot(variant, sh));
            forward(&mut log, &mut t, variant, inputs);
        } else {
            forward(&mut NoRecord, &mut t, variant, inputs);
        }
        if passes.backward {
            if initial.is_none() {
                initial = Some(t.snapshot(variant, sh));
            }
            backward(&mut log, &mut t, variant, inputs);
        }
        Some(log.finish(initial.unwrap_or_default()))
    } else {
        forward(&mut NoRecord, &mut t, variant, inputs);
        if passes.backward {
            backward(&mut NoRecord, &mut t, variant, inputs);
        }
        None
    };
    Run {
        variant,
        shape: sh,
        mistakes: inputs.mistakes,
        tensors: t,
        trace,
    }
}

/// The first event at which two traces differ (in buffer, offset, op or value), or the shorter
/// one's length when one is a prefix of the other; `None` when they are identical.
pub fn first_divergence(a: &Trace, b: &Trace) -> Option<usize> {
    let same = |x: &crate::trace::Event, y: &crate::trace::Event| {
        (x.buf, x.offset, x.op, x.value.to_bits()) == (y.buf, y.offset, y.op, y.value.to_bits())
    };
    match a.events.iter().zip(&b.events).position(|(x, y)| !same(x, y)) {
        Some(n) => Some(n),
        None if a.len() != b.len() => Some(a.len().min(b.len())),
        None => None,
    }
}

/// Reads and writes one phase makes, in closed form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PhaseCount {
    pub phase: Phase,
    pub reads: u64,
    pub writes: u64,
}

/// The events each recorded phase will make, in order. `+=` counts as a read and a write.
pub fn phase_counts(plan: &Plan, variant: Variant, passes: Passes) -> Vec<PhaseCount> {
    let Shape { b, s, t, c, .. } = plan.shape;
    let backward = passes.backward && plan.mistakes.is_empty();
    let visible = plan.mask.visible_pairs(s, t) as u64; // visible (i, j) pairs per (b, h)
    let (b, s, t, c) = (b as u64, s as u64, t as u64, c as u64);
    let h = kernel_shape(plan.shape, variant).h as u64;
    let m = plan.mistakes;
    let (q_rows, k_rows) = (b * s, b * t); // rows of the [B,S,·] and [B,T,·] activations
    let cells = b * h * s * t; // entries of scores, probs and their gradients
    let pc = |phase, reads, writes| PhaseCount { phase, reads, writes };
    // y = x·W + b: per output one bias read and IC (x, W) pairs
    let lin_fwd = |phase, rows: u64, ic: u64, oc: u64| pc(phase, rows * oc * (1 + 2 * ic), rows * oc);
    // dx (IC per row, OC pairs each; `+=` adds a read), dW (IC·OC, one pair per row), db
    let lin_bwd = |phase, rows: u64, ic: u64, oc: u64, acc: bool| {
        let dx_reads = rows * ic * (2 * oc + acc as u64);
        pc(
            phase,
            dx_reads + ic * oc * 2 * rows + oc * rows,
            rows * ic + ic * oc + oc,
        )
    };
    let project = !m.has(Mistake::NoInputProjection);
    let dropout = plan.dropout && !m.has(Mistake::DropoutNotApplied);
    let proj = plan.proj && !m.has(Mistake::NoOutputProjection);
    let mut out = Vec::new();
    if passes.forward {
        match plan.start {
            StartKind::Qkv => {}
            _ if !project => out.push(pc(Phase::NoProj, q_rows * c + k_rows * c, q_rows * c + 2 * k_rows * c)),
            StartKind::Fused => {
                out.push(lin_fwd(Phase::QkvProj, k_rows, c, 3 * c));
                out.push(pc(Phase::Split, 3 * k_rows * c, 3 * k_rows * c));
            }
            StartKind::Separate { .. } => {
                out.push(lin_fwd(Phase::QProj, q_rows, c, c));
                out.push(lin_fwd(Phase::KProj, k_rows, c, c));
                out.push(lin_fwd(Phase::VProj, k_rows, c, c));
            }
        }
        out.push(pc(Phase::Scores, 2 * q_rows * t * c, cells));
        // per softmax row 3 reads (max, exp, normalise) and 2 writes per entry, whatever the row
        out.push(pc(Phase::Softmax, 3 * cells, 2 * cells));
        if dropout {
            out.push(pc(Phase::Dropout, 2 * cells, cells));
        }
        out.push(pc(Phase::WeightedSum, 2 * q_rows * c * t, q_rows * c));
        if proj {
            out.push(lin_fwd(Phase::OutProj, q_rows, c, c));
        }
    }
    if backward {
        if proj {
            out.push(lin_bwd(Phase::OutProjBack, q_rows, c, c, false));
        }
        // dP: 2·D reads per (b,h,i,j); dV: 2·S reads per element of v
        out.push(pc(
            Phase::WeightedSumBack,
            2 * q_rows * t * c + 2 * k_rows * c * s,
            cells + k_rows * c,
        ));
        if dropout {
            out.push(pc(Phase::DropoutBack, 2 * cells, cells));
        }
        out.push(pc(Phase::SoftmaxBack, 4 * cells, cells));
        // dQ and dK: one (dS, k) or (dS, q) pair per visible pair and channel
        out.push(pc(Phase::ScoresBack, 2 * 2 * b * visible * c, q_rows * c + k_rows * c));
        match plan.start {
            StartKind::Qkv => {}
            StartKind::Fused => {
                out.push(pc(Phase::SplitBack, 3 * k_rows * c, 3 * k_rows * c));
                out.push(lin_bwd(Phase::QkvProjBack, k_rows, c, 3 * c, false));
            }
            StartKind::Separate { cross } => {
                out.push(lin_bwd(Phase::VProjBack, k_rows, c, c, false));
                out.push(lin_bwd(Phase::KProjBack, k_rows, c, c, true));
                out.push(lin_bwd(Phase::QProjBack, q_rows, c, c, !cross));
            }
        }
    }
    out
}

/// Total events a traced run will record.
pub fn estimate_events(plan: &Plan, variant: Variant, passes: Passes) -> u64 {
    phase_counts(plan, variant, passes)
        .iter()
        .map(|p| p.reads + p.writes)
        .sum()
}
