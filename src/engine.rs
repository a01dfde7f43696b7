//! Runs one attention variant on concrete inputs, traced or not, and says in advance how many
//! events that will record.

use crate::kernels::{Mask, Variant, attention_1h, attention_mha, linear, split};
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
    /// At the attention core, with `q, k, v [B,T,C]` given.
    Qkv { q: Vec<f32>, k: Vec<f32>, v: Vec<f32> },
}

/// Everything a run needs: sizes, mask, the starting tensors, the optional output projection
/// and the upstream gradient `d_out` (the loss is `L = Σ out ⊙ d_out`).
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    pub shape: Shape,
    pub mask: Mask,
    pub start: Start,
    /// `w_proj [C,C]` and `b_proj [C]`; without them the output is `att` itself.
    pub proj: Option<(Vec<f32>, Vec<f32>)>,
    pub d_out: Vec<f32>,
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

/// Everything the engine needs to know to count events, without the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub shape: Shape,
    pub mask: Mask,
    /// Starts at `x` (with the input projection and the split) rather than at `q, k, v`.
    pub from_x: bool,
    pub proj: bool,
}

impl Inputs {
    pub fn plan(&self) -> Plan {
        Plan {
            shape: self.shape,
            mask: self.mask,
            from_x: matches!(self.start, Start::X { .. }),
            proj: self.proj.is_some(),
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

/// Every buffer of a run, flat. An empty vector is a buffer this run does not have.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tensors {
    pub x: Vec<f32>,
    pub w_qkv: Vec<f32>,
    pub b_qkv: Vec<f32>,
    pub qkv: Vec<f32>,
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
    pub scores: Vec<f32>,
    pub probs: Vec<f32>,
    pub att: Vec<f32>,
    pub w_proj: Vec<f32>,
    pub b_proj: Vec<f32>,
    pub out: Vec<f32>,
    pub d_out: Vec<f32>,
    pub d_att: Vec<f32>,
    pub d_probs: Vec<f32>,
    pub d_scores: Vec<f32>,
    pub d_q: Vec<f32>,
    pub d_k: Vec<f32>,
    pub d_v: Vec<f32>,
    pub d_qkv: Vec<f32>,
    pub d_x: Vec<f32>,
    pub d_w_qkv: Vec<f32>,
    pub d_b_qkv: Vec<f32>,
    pub d_w_proj: Vec<f32>,
    pub d_b_proj: Vec<f32>,
}

impl Tensors {
    pub fn get(&self, buf: Buf) -> &[f32] {
        match buf {
            Buf::X => &self.x,
            Buf::WQkv => &self.w_qkv,
            Buf::BQkv => &self.b_qkv,
            Buf::Qkv => &self.qkv,
            Buf::Q => &self.q,
            Buf::K => &self.k,
            Buf::V => &self.v,
            Buf::Scores => &self.scores,
            Buf::Probs => &self.probs,
            Buf::Att => &self.att,
            Buf::WProj => &self.w_proj,
            Buf::BProj => &self.b_proj,
            Buf::Out => &self.out,
            Buf::DOut => &self.d_out,
            Buf::DAtt => &self.d_att,
            Buf::DProbs => &self.d_probs,
            Buf::DScores => &self.d_scores,
            Buf::DQ => &self.d_q,
            Buf::DK => &self.d_k,
            Buf::DV => &self.d_v,
            Buf::DQkv => &self.d_qkv,
            Buf::DX => &self.d_x,
            Buf::DWQkv => &self.d_w_qkv,
            Buf::DBQkv => &self.d_b_qkv,
            Buf::DWProj => &self.d_w_proj,
            Buf::DBProj => &self.d_b_proj,
        }
    }

    /// Buffers given as inputs, in place, and zeroed buffers for everything the requested
    /// passes compute.
    pub fn new(inputs: &Inputs, variant: Variant, passes: Passes) -> Tensors {
        let sh = inputs.shape;
        let z = |buf: Buf| vec![0.0; shapes(buf, variant, sh).0.iter().product()];
        let mut t = Tensors::default();
        match &inputs.start {
            Start::X { x, w_qkv, b_qkv } => {
                (t.x, t.w_qkv, t.b_qkv) = (x.clone(), w_qkv.clone(), b_qkv.clone());
                (t.qkv, t.q, t.k, t.v) = (z(Buf::Qkv), z(Buf::Q), z(Buf::K), z(Buf::V));
            }
            Start::Qkv { q, k, v } => (t.q, t.k, t.v) = (q.clone(), k.clone(), v.clone()),
        }
        (t.scores, t.probs, t.att) = (z(Buf::Scores), z(Buf::Probs), z(Buf::Att));
        if let Some((w, b)) = &inputs.proj {
            (t.w_proj, t.b_proj, t.out) = (w.clone(), b.clone(), z(Buf::Out));
        }
        if passes.backward {
            t.d_out = inputs.d_out.clone();
            (t.d_att, t.d_probs, t.d_scores) = (z(Buf::DAtt), z(Buf::DProbs), z(Buf::DScores));
            (t.d_q, t.d_k, t.d_v) = (z(Buf::DQ), z(Buf::DK), z(Buf::DV));
            if !t.x.is_empty() {
                (t.d_qkv, t.d_x) = (z(Buf::DQkv), z(Buf::DX));
                (t.d_w_qkv, t.d_b_qkv) = (z(Buf::DWQkv), z(Buf::DBQkv));
            }
            if inputs.proj.is_some() {
                (t.d_w_proj, t.d_b_proj) = (z(Buf::DWProj), z(Buf::DBProj));
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
/// their gradients as `[B,T,H,D]` views of `[B,T,C]` storage.
#[allow(non_snake_case)]
pub fn shapes(buf: Buf, variant: Variant, sh: Shape) -> (Vec<usize>, Vec<usize>) {
    let Shape { b: B, t: T, c: C, h: H } = sh;
    let D = sh.d();
    let mha = variant == Variant::Mha;
    let btc = vec![B, T, C];
    let heads = vec![B, T, H, D];
    let same = |s: Vec<usize>| (s.clone(), s);
    match buf {
        Buf::X | Buf::Out | Buf::DOut | Buf::DX => same(btc),
        Buf::Q | Buf::K | Buf::V | Buf::DQ | Buf::DK | Buf::DV => (btc, if mha { heads } else { vec![B, T, C] }),
        Buf::Att | Buf::DAtt => same(if mha { heads } else { btc }),
        Buf::Scores | Buf::Probs | Buf::DScores | Buf::DProbs => {
            same(if mha { vec![B, H, T, T] } else { vec![B, T, T] })
        }
        Buf::WQkv | Buf::DWQkv => same(vec![C, 3 * C]),
        Buf::BQkv | Buf::DBQkv => same(vec![3 * C]),
        Buf::Qkv | Buf::DQkv => same(vec![B, T, 3 * C]),
        Buf::WProj | Buf::DWProj => same(vec![C, C]),
        Buf::BProj | Buf::DBProj => same(vec![C]),
    }
}

/// The forward pass: projection and split (when starting at `x`), the attention core of the
/// variant, and the output projection (when there is one).
pub fn forward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, sh: Shape, mask: Mask) {
    let ksh = kernel_shape(sh, variant);
    let bt = [sh.b, sh.t];
    if !t.x.is_empty() {
        linear::forward(
            rec,
            Phase::QkvProj,
            bt,
            (Buf::X, &t.x),
            (Buf::WQkv, &t.w_qkv),
            (Buf::BQkv, &t.b_qkv),
            (Buf::Qkv, &mut t.qkv),
        );
        split::forward(rec, sh, &t.qkv, &mut t.q, &mut t.k, &mut t.v);
    }
    let core = match variant {
        Variant::Baseline => attention_1h::forward,
        Variant::Mha => attention_mha::forward,
    };
    core(
        rec,
        ksh,
        mask,
        &t.q,
        &t.k,
        &t.v,
        &mut t.scores,
        &mut t.probs,
        &mut t.att,
    );
    if !t.w_proj.is_empty() {
        linear::forward(
            rec,
            Phase::OutProj,
            bt,
            (Buf::Att, &t.att),
            (Buf::WProj, &t.w_proj),
            (Buf::BProj, &t.b_proj),
            (Buf::Out, &mut t.out),
        );
    }
}

/// The backward pass from `t.d_out`, in the reverse order of [`forward`].
pub fn backward<R: Recorder>(rec: &mut R, t: &mut Tensors, variant: Variant, sh: Shape, mask: Mask) {
    let ksh = kernel_shape(sh, variant);
    let bt = [sh.b, sh.t];
    if t.w_proj.is_empty() {
        // no output projection: out is att, so its gradient is d_out unchanged
        t.d_att.copy_from_slice(&t.d_out);
    } else {
        linear::backward(
            rec,
            Phase::OutProjBack,
            bt,
            (Buf::Att, &t.att),
            (Buf::WProj, &t.w_proj),
            (Buf::DOut, &t.d_out),
            (Buf::DAtt, &mut t.d_att),
            (Buf::DWProj, &mut t.d_w_proj),
            (Buf::DBProj, &mut t.d_b_proj),
        );
    }
    let core = match variant {
        Variant::Baseline => attention_1h::backward,
        Variant::Mha => attention_mha::backward,
    };
    core(
        rec,
        ksh,
        mask,
        &t.q,
        &t.k,
        &t.v,
        &t.probs,
        &t.d_att,
        &mut t.d_probs,
        &mut t.d_scores,
        &mut t.d_q,
        &mut t.d_k,
        &mut t.d_v,
    );
    if !t.x.is_empty() {
        split::backward(rec, sh, &t.d_q, &t.d_k, &t.d_v, &mut t.d_qkv);
        linear::backward(
            rec,
            Phase::QkvProjBack,
            bt,
            (Buf::X, &t.x),
            (Buf::WQkv, &t.w_qkv),
            (Buf::DQkv, &t.d_qkv),
            (Buf::DX, &mut t.d_x),
            (Buf::DWQkv, &mut t.d_w_qkv),
            (Buf::DBQkv, &mut t.d_b_qkv),
        );
    }
}

/// The result of running one variant.
#[derive(Debug)]
pub struct Run {
    pub variant: Variant,
    pub shape: Shape,
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

/// Runs `variant` on `inputs`. A traced run records the requested passes.
pub fn run(inputs: &Inputs, variant: Variant, passes: Passes, traced: bool) -> Run {
    let (sh, mask) = (inputs.shape, inputs.mask);
    let mut t = Tensors::new(inputs, variant, passes);
    let trace = if traced {
        let mut log = Logger::with_capacity(estimate_events(inputs.plan(), variant, passes) as usize);
        let mut initial = None;
        if passes.forward {
            initial = Some(t.snapshot(variant, sh));
            forward(&mut log, &mut t, variant, sh, mask);
        } else {
            forward(&mut NoRecord, &mut t, variant, sh, mask);
        }
        if passes.backward {
            if initial.is_none() {
                initial = Some(t.snapshot(variant, sh));
            }
            backward(&mut log, &mut t, variant, sh, mask);
        }
        Some(log.finish(initial.unwrap_or_default()))
    } else {
        forward(&mut NoRecord, &mut t, variant, sh, mask);
        if passes.backward {
            backward(&mut NoRecord, &mut t, variant, sh, mask);
        }
        None
    };
    Run {
        variant,
        shape: sh,
        tensors: t,
        trace,
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
pub fn phase_counts(plan: Plan, variant: Variant, passes: Passes) -> Vec<PhaseCount> {
    let Shape { b, t, c, .. } = plan.shape;
    let (b, t, c) = (b as u64, t as u64, c as u64);
    let h = kernel_shape(plan.shape, variant).h as u64;
    let rows = b * t; // rows of every [B,T,·] activation
    let score_rows = b * h * t; // rows of softmax
    // visible (i, j) pairs per (b, h): all of them, or the lower triangle
    let visible = match plan.mask {
        Mask::Causal => t * (t + 1) / 2,
        Mask::None => t * t,
    };
    let pc = |phase, reads, writes| PhaseCount { phase, reads, writes };
    // y = x·W + b: per output one bias read and IC (x, W) pairs
    let lin_fwd = |phase, ic: u64, oc: u64| pc(phase, rows * oc * (1 + 2 * ic), rows * oc);
    // dx (IC per row, OC pairs each), dW (IC·OC, one pair per row), db (OC, one read per row)
    let lin_bwd = |phase, ic: u64, oc: u64| {
        pc(
            phase,
            rows * ic * 2 * oc + ic * oc * 2 * rows + oc * rows,
            rows * ic + ic * oc + oc,
        )
    };
    let mut out = Vec::new();
    if passes.forward {
        if plan.from_x {
            out.push(lin_fwd(Phase::QkvProj, c, 3 * c));
            out.push(pc(Phase::Split, 3 * rows * c, 3 * rows * c));
        }
        out.push(pc(Phase::Scores, 2 * b * t * t * c, b * h * t * t));
        out.push(pc(Phase::Softmax, 3 * score_rows * t, 2 * score_rows * t));
        out.push(pc(Phase::WeightedSum, 2 * rows * c * t, rows * c));
        if plan.proj {
            out.push(lin_fwd(Phase::OutProj, c, c));
        }
    }
    if passes.backward {
        if plan.proj {
            out.push(lin_bwd(Phase::OutProjBack, c, c));
        }
        // dP: 2·D reads per (b,h,i,j); dV: 2·T reads per element of v
        out.push(pc(
            Phase::WeightedSumBack,
            2 * b * t * t * c + 2 * rows * c * t,
            b * h * t * t + rows * c,
        ));
        out.push(pc(Phase::SoftmaxBack, 4 * score_rows * t, score_rows * t));
        // dQ and dK: one (dS, k) or (dS, q) pair per visible pair and channel
        out.push(pc(Phase::ScoresBack, 2 * 2 * b * visible * c, 2 * rows * c));
        if plan.from_x {
            out.push(pc(Phase::SplitBack, 3 * rows * c, 3 * rows * c));
            out.push(lin_bwd(Phase::QkvProjBack, c, 3 * c));
        }
    }
    out
}

/// Total events a traced run will record.
pub fn estimate_events(plan: Plan, variant: Variant, passes: Passes) -> u64 {
    phase_counts(plan, variant, passes)
        .iter()
        .map(|p| p.reads + p.writes)
        .sum()
}
