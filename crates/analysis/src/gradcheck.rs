//! The gradient check the tracer and `explain --pass backward` show: the central finite
//! difference of the scenario's loss `L = Σ out ⊙ d_out` with respect to one cell, next to the
//! gradient the backward pass computed for it, and their relative error.
//!
//! The cell is changed by `±h` and the forward pass re-run untraced (the fast path of
//! `dispatch.rs`, as `engine::run(…, traced = false)` runs it). An input or a weight is changed
//! before the run; an activation (`q`, `scores`, `probs`, …) the moment the kernel that computes
//! it has written it, so that everything computed from it sees the change and nothing before
//! it does: that is the partial derivative the backward pass computes for an intermediate.
//!
//! Precision: the forward pass runs in f32 and `L` is summed in f64. Rounding then leaves a
//! noise of about `u·Σ|out ⊙ d_out|` in each `L` (`u = 2⁻²⁴`), which a central difference
//! `D(h) = (L(x+h) − L(x−h)) / 2h` divides by `2h`, while `D(h)` itself is off by `h²/6·L'''`.
//! A small `h` drowns in the noise, a large one in the `h²` and `h⁴` terms, so the check takes a
//! large step, [`STEP`] `h = 0.1`, and two Richardson steps: `R(h) = (4·D(h/2) − D(h)) / 3`
//! cancels the `h²` term, `(16·R(h/2) − R(h)) / 15` the `h⁴` term; six forward runs, at `±h`,
//! `±h/2` and `±h/4`. (One step left 1.6e-3 of a sharply bent `d_x` cell, where the second
//! leaves 8e-5.) The step does not grow with the cell's size: the softmax bends as sharply
//! around a score of 9 as around 0.5 (a step of 0.1·|x| left a score of 9.18 off by 1.2e-3).
//! Only beyond [`FLAT_UP_TO`], where f32 could not move the cell by 0.1 (a masked score's −1e9),
//! is it `0.1·|x| / FLAT_UP_TO` ([`step`]). On every gradient cell of the shipped scenarios (every
//! plain variant, both passes: 5732 cells) that agrees with the backward pass to 1e-3 of the
//! gradient's size plus 1.5 times the noise bound `u·Σ|out ⊙ d_out| / (h/4)`; the plain
//! `D(1e-3)` was off by up to 30% on small gradients. [`Check::agrees`] allows 1e-3 plus four
//! times that bound, plus how far the second Richardson step moved the estimate (the spread):
//! the bound counts the rounding of `L`'s last sum only, and a sum inside `out` that cancels
//! rounds more than `out` shows (a `d_k` of 8.5e-5 came out 2.5e-3 of itself off, a bias
//! gradient that is exactly 0 at −3.9e-6, both ten times the bound); where the estimate is
//! that uncertain, its last two levels differ by as much. The steps used are what f32 stores of
//! `x ± h` minus `x`.

use attn_trace_core::engine::{self, Inputs, Passes, Registry, Tensors};
use attn_trace_core::kernels::Variant;
use attn_trace_core::tensor::{Level, Role};
use attn_trace_core::trace::{Buf, NO_FRAME, NoRecord, Op, Pass, Trace};
use attn_trace_i18n::tr;

/// The step `h` of the finite difference, for a cell of magnitude up to [`FLAT_UP_TO`].
pub const STEP: f32 = 0.1;

/// The magnitude up to which the step is [`STEP`]; beyond it the step is `STEP·|x| / FLAT_UP_TO`,
/// 200 to 400 of f32's units in the last place of `x`.
pub const FLAT_UP_TO: f32 = 4096.0;

/// The step `h` for a cell whose value is `x`.
pub fn step(x: f32) -> f32 {
    STEP * (x.abs() / FLAT_UP_TO).max(1.0)
}

/// One gradient cell checked by finite differences.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The gradient buffer (`d_q`) and the buffer it is the gradient of (`q`).
    pub grad: Buf,
    pub primal: Buf,
    pub offset: usize,
    /// `b0 i2 h1 d0`: the cell's index, named as the kernel's loops name it.
    pub label: String,
    /// What the primal is to the computation: an input, a parameter, an activation.
    pub role: Role,
    /// The cell's value in the forward pass.
    pub value: f32,
    /// The gradient the backward pass computed (its final value).
    pub analytic: f32,
    /// `∂L/∂cell` by central differences with two Richardson steps.
    pub numeric: f64,
    /// The step `h`.
    pub step: f32,
    /// How far f32 rounding in `L`'s last sum alone can move `numeric`:
    /// `4·u·Σ|out ⊙ d_out| / (h/4)`.
    pub noise: f64,
    /// How far the second Richardson step moved the estimate, `|numeric − R(h)|`: a measure of
    /// what the steps' truncation and the rounding inside the forward pass leave in it, which
    /// `noise` does not count (a sum inside `out` that cancels rounds more than `out` shows).
    pub spread: f64,
}

impl Check {
    /// `|analytic − numeric| / max(|analytic|, |numeric|)`, 0 when both are 0.
    pub fn rel_err(&self) -> f64 {
        let a = self.analytic as f64;
        let scale = a.abs().max(self.numeric.abs());
        if scale == 0.0 {
            0.0
        } else {
            (a - self.numeric).abs() / scale
        }
    }

    /// How far the finite difference itself may be off: the rounding bound and the spread.
    pub fn margin(&self) -> f64 {
        self.noise + self.spread
    }

    /// Whether the two agree: within 1e-3 of the larger, plus the finite difference's
    /// [`Check::margin`].
    pub fn agrees(&self) -> bool {
        let a = self.analytic as f64;
        (a - self.numeric).abs() <= 1e-3 * a.abs().max(self.numeric.abs()) + self.margin()
    }

    /// `agree`, `agree within the finite difference's error (±…)` or `DISAGREE: …`.
    pub fn verdict(&self) -> String {
        let error = sci_short(self.margin());
        match (self.agrees(), self.rel_err() < 1e-3) {
            (true, true) => tr!("agree").to_string(),
            (true, false) => tr!("agree within the finite difference's error (±{error})", error),
            (false, _) => tr!("DISAGREE: the finite difference is good to ±{error}", error),
        }
    }

    /// The one line the tracer's panel and `explain` print: `finite difference ∂L/∂q[10] =
    /// 0.123456 · backward d_q[10] = 0.123457 · relative error 8.1e-6, agree`.
    pub fn line(&self) -> String {
        tr!(
            "finite difference ∂L/∂{primal}[{off}] = {numeric} · backward {grad}[{off}] = {analytic} · relative error {rel}, {verdict}",
            primal = self.primal,
            off = self.offset,
            numeric = sci(self.numeric),
            grad = self.grad,
            analytic = sci(self.analytic as f64),
            rel = rel_text(self.rel_err()),
            verdict = self.verdict(),
        )
    }

    /// What was perturbed, and how: the second line under [`Check::line`].
    pub fn perturbed(&self) -> String {
        let when = match self.role {
            Role::Activation => {
                tr!("right after its kernel wrote it, then re-ran the rest of the forward pass untraced")
            }
            _ => tr!("and re-ran the forward pass untraced"),
        };
        let role = match self.role {
            Role::Input => tr!("an input"),
            Role::Activation => tr!("an activation"),
            Role::Parameter => tr!("a parameter"),
            Role::Gradient => tr!("a gradient"),
        };
        tr!(
            "perturbed {primal}[{off}] ({label}, {role}) by ±{h}, ±{half} and ±{quarter} {when}",
            primal = self.primal,
            off = self.offset,
            label = self.label,
            role,
            h = sci_short(self.step as f64),
            half = sci_short(self.step as f64 / 2.0),
            quarter = sci_short(self.step as f64 / 4.0),
            when
        )
    }
}

/// A gradient value in 6 significant digits, in plain or scientific notation by its size.
pub fn sci(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    if (1e-3..1e4).contains(&x.abs()) {
        let digits = (5 - x.abs().log10().floor() as i32).max(0) as usize;
        format!("{x:.digits$}")
    } else {
        format!("{x:.5e}")
    }
}

/// A step or a bound, short: `0.1`, `0.05`, `5.2e-6`, `6.1e3` (a masked score's quarter step).
fn sci_short(x: f64) -> String {
    if (1e-3..1e3).contains(&x.abs()) {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.1e}")
    }
}

fn rel_text(r: f64) -> String {
    if r == 0.0 { "0".to_string() } else { format!("{r:.1e}") }
}

/// Why a cell cannot be checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Skip {
    NotAGradient(Buf),
    NotInForward(Buf),
    Tile(Buf),
    Outside(Buf, usize),
    NeverWritten(Buf),
    NoWorker,
    /// The check itself failed (its thread panicked): why.
    Failed(String),
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&match self {
            Skip::NotAGradient(b) => tr!("{buf} is not the gradient of a buffer", buf = b),
            Skip::NotInForward(b) => tr!("{buf} is not part of this run's forward pass", buf = b),
            Skip::Tile(b) => tr!(
                "{buf} lives in a tile that every block reuses: no single value of it to perturb",
                buf = b
            ),
            Skip::Outside(b, off) => tr!("{buf}[{off}] is outside the buffer", buf = b, off),
            Skip::NeverWritten(b) => tr!("no kernel wrote {buf}, so changing it cannot change the loss", buf = b),
            Skip::NoWorker => tr!("no thread could be started to compute it").to_string(),
            Skip::Failed(why) => tr!("the check failed: {why}", why),
        })
    }
}

impl std::error::Error for Skip {}

/// What one perturbed forward pass gives: `L`, the change the cell actually saw, and
/// `Σ|out ⊙ d_out|`, the size of the terms `L` adds up (for the rounding bound).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nudged {
    pub loss: f64,
    pub applied: f32,
    pub magnitude: f64,
}

/// `L = Σ out ⊙ d_out` (in f64) of an untraced forward pass with `buf[offset]` changed by
/// `delta`. `inputs` are read as `variant` reads them ([`Inputs::for_variant`]: a grouped
/// scenario's key/value heads repeated for mha, flash and the baseline), as its traced run did,
/// so `offset` is a cell of that run's layout.
pub(crate) fn nudged_loss(
    inputs: &Inputs,
    variant: Variant,
    buf: Buf,
    offset: usize,
    delta: f32,
) -> Result<Nudged, Skip> {
    // the inputs as the variant reads them: MHA and the baseline on grouped heads read each
    // key/value head's weights repeated (as `engine::run` gives them), so offsets are theirs
    let inputs = &*inputs.for_variant(variant);
    let registry = Registry::new(&inputs.plan(), variant, Passes::FORWARD);
    let spec = registry.get(buf).ok_or(Skip::NotInForward(buf))?;
    if spec.level == Level::Tile {
        return Err(Skip::Tile(buf));
    }
    let mut t = Tensors::new(inputs, &registry);
    // an activation is changed once its kernel has written it; anything given, at once
    let written = spec.role == Role::Activation;
    if !t.nudge(buf, offset, delta, written) {
        return Err(Skip::Outside(buf, offset));
    }
    engine::forward(&mut NoRecord, &mut t, variant, inputs);
    let applied = t.nudged_by();
    if applied == 0.0 {
        return Err(Skip::NeverWritten(buf));
    }
    let (mut loss, mut magnitude) = (0.0, 0.0);
    for (&o, &g) in t.output().iter().zip(&inputs.d_out) {
        let term = o as f64 * g as f64;
        loss += term;
        magnitude += term.abs();
    }
    Ok(Nudged {
        loss,
        applied,
        magnitude,
    })
}

/// Checks gradient cell `grad[offset]` of `variant` on `inputs`: `value` is the primal cell's
/// value in the forward pass, `analytic` the backward pass's final gradient there, `label` the
/// cell's index as the tracer names it.
pub fn check(
    inputs: &Inputs,
    variant: Variant,
    grad: Buf,
    offset: usize,
    value: f32,
    analytic: f32,
    label: String,
) -> Result<Check, Skip> {
    let primal = grad.primal().ok_or(Skip::NotAGradient(grad))?;
    let registry = Registry::new(&inputs.for_variant(variant).plan(), variant, Passes::FORWARD);
    let role = registry.get(primal).ok_or(Skip::NotInForward(primal))?.role;
    let step = step(value);
    // D(h) = (L(x + h) − L(x − h)) / (h₊ + h₋), with the steps f32 actually took
    let mut magnitude = 0.0f64;
    let mut diff = |h: f32| -> Result<f64, Skip> {
        let up = nudged_loss(inputs, variant, primal, offset, h)?;
        let down = nudged_loss(inputs, variant, primal, offset, -h)?;
        magnitude = magnitude.max(up.magnitude).max(down.magnitude);
        Ok((up.loss - down.loss) / (up.applied as f64 - down.applied as f64))
    };
    // Richardson: (4·D(h/2) − D(h)) / 3 cancels the h² term, and the same of the steps h/2 and
    // h/4, combined as (16·R(h/2) − R(h)) / 15, the h⁴ term
    let (d1, d2, d4) = (diff(step)?, diff(step / 2.0)?, diff(step / 4.0)?);
    let (r1, r2) = ((4.0 * d2 - d1) / 3.0, (4.0 * d4 - d2) / 3.0);
    let numeric = (16.0 * r2 - r1) / 15.0;
    let u = f32::EPSILON as f64 / 2.0;
    Ok(Check {
        grad,
        primal,
        offset,
        label,
        role,
        value,
        analytic,
        numeric,
        step,
        noise: 4.0 * u * magnitude / (step as f64 / 4.0),
        spread: (numeric - r1).abs(),
    })
}

/// The gradient cell the tracer's panel checks at event `n` of a backward pass: the cell the event
/// writes, else the one the loop iteration it is in ends by writing (the sum being
/// accumulated). `None` in the forward pass and outside such an iteration.
pub fn target(trace: &Trace, n: usize) -> Option<(Buf, usize, bool)> {
    let e = *trace.events.get(n)?;
    if trace.phase_at(n).pass() != Pass::Backward {
        return None;
    }
    let is_grad = |b: Buf| b.primal().is_some() && b != Buf::DOut;
    if e.op == Op::Write && is_grad(e.buf) {
        return Some((e.buf, e.offset as usize, true));
    }
    // up to three enclosing iterations: the first whose last event is a gradient write
    let mut id = e.frame;
    for _ in 0..3 {
        if id == NO_FRAME {
            break;
        }
        let f = trace.frame(id)?;
        let last = trace.events.get((f.end as usize).checked_sub(1)?)?;
        if f.end as usize > n && last.op == Op::Write && is_grad(last.buf) {
            return Some((last.buf, last.offset as usize, false));
        }
        id = f.parent;
    }
    None
}
