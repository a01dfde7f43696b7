//! A mistaken run beside the correct one: where they part and what the mistake does downstream.
//!
//! The two traces have different phases (a mistaken run may lack the output projection or the
//! dropout pass, or replace the input projection by `q = k = v = x`), so they are laid on one
//! [`Timeline`] of phases: the phases both runs make are matched in order (a longest common
//! subsequence of the two phase lists), and a phase only one run makes has the other run wait,
//! saying why. [`downstream`] reads each mistake's documented symptom, in numbers, from the two
//! runs' final tensors, with every offset from the registry's layouts. The TUI's side-by-side
//! view, `run --json` and `explain` all report from here.
#![allow(non_snake_case)]

mod downstream;
mod timeline;

pub use downstream::downstream;
pub use timeline::{Place, Segment, Timeline};

use crate::format::num;
use attn_trace_core::engine::Run;
use attn_trace_core::kernels::Mask;
use attn_trace_core::kernels::attention_mistakes::{Mistake, Mistakes};
use attn_trace_core::trace::{Pass, Phase, Trace};
use attn_trace_i18n::tr;
use serde::Serialize;

/// The two runs of the view, as indexes into [`Timeline`]'s per-run arrays.
pub const CORRECT: usize = 0;
pub const MISTAKEN: usize = 1;

/// Where a mistaken run first leaves the correct one: the event, and what each run does there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunDivergence {
    pub event: usize,
    /// `write scores[2] = -1e9 (scores)`, or `has ended (N events)`.
    pub correct: String,
    pub mistaken: String,
    /// When the runs first part in what they do to the same cell (mistake 7: the correct run
    /// reads `d_v` to add to it where the mistaken one writes its share): the first write whose
    /// value differs, matching the two runs' writes in order from there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<ValuesPart>,
}

/// The first write at which two runs' numbers part: the event in each run and its words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValuesPart {
    pub correct_event: usize,
    pub mistaken_event: usize,
    /// `write d_v[0] = 0.31 (weighted_sum_back)`.
    pub correct: String,
    pub mistaken: String,
}

/// From event `n` on, the first of the writes (matched in order) whose values differ, when at
/// `n` the runs touch the same cell in different ways (the correct run reads a cell to add to it
/// where the mistaken one writes it): there no value can be compared yet.
pub fn values_part(correct: &Trace, mistaken: &Trace, n: usize) -> Option<ValuesPart> {
    let (a, b) = (correct.events.get(n)?, mistaken.events.get(n)?);
    if (a.buf, a.offset) != (b.buf, b.offset) || a.op == b.op {
        return None;
    }
    let writes = |t: &Trace| {
        (n..t.len())
            .filter(|&k| t.events[k].op == attn_trace_core::trace::Op::Write)
            .collect::<Vec<_>>()
    };
    let (x, y) = writes(correct).into_iter().zip(writes(mistaken)).find(|&(x, y)| {
        let (e, f) = (correct.events[x], mistaken.events[y]);
        (e.buf, e.offset, e.value.to_bits()) != (f.buf, f.offset, f.value.to_bits())
    })?;
    let say = |t: &Trace, k: usize| format!("{} ({})", event_words(t, k), t.phase_at(k));
    Some(ValuesPart {
        correct_event: x,
        mistaken_event: y,
        correct: say(correct, x),
        mistaken: say(mistaken, y),
    })
}

impl std::fmt::Display for RunDivergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&tr!(
            "diverge at #{n}: correct {correct} · mistaken {mistaken}",
            n = self.event,
            correct = self.correct,
            mistaken = self.mistaken
        ))?;
        if let Some(v) = &self.values {
            write!(
                f,
                "; {}",
                attn_trace_i18n::tr!(
                    "values first differ at #{correct_event} / #{mistaken_event}: correct {correct} · mistaken {mistaken}",
                    correct_event = v.correct_event,
                    mistaken_event = v.mistaken_event,
                    correct = v.correct,
                    mistaken = v.mistaken
                )
            )?;
        }
        Ok(())
    }
}

/// The first event where the traces differ, in words; `None` when they never do.
pub fn divergence(correct: &Trace, mistaken: &Trace) -> Option<RunDivergence> {
    let n = attn_trace_core::engine::first_divergence(correct, mistaken)?;
    let say = |t: &Trace| {
        if n < t.len() {
            format!("{} ({})", event_words(t, n), t.phase_at(n))
        } else {
            tr!("has ended ({n} events)", n = t.len())
        }
    };
    Some(RunDivergence {
        event: n,
        correct: say(correct),
        mistaken: say(mistaken),
        values: values_part(correct, mistaken, n),
    })
}

/// What a mistaken run does, for `run --json` and `explain`: where it parts from the correct
/// run and its symptoms in numbers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub mistakes: Vec<&'static str>,
    pub divergence: Option<RunDivergence>,
    pub symptoms: Vec<Note>,
}

/// The report on `bad`, the mistaken twin of `good` (same inputs and variant, both traced).
pub fn report(good: &Run, bad: &Run, mask: &Mask) -> Report {
    Report {
        mistakes: bad.mistakes.list().iter().map(|m| m.name()).collect(),
        divergence: match (&good.trace, &bad.trace) {
            (Some(g), Some(b)) => divergence(g, b),
            _ => None,
        },
        symptoms: downstream(good, bad, mask),
    }
}

/// One line of the downstream panel: a mistake's heading, or a finding under it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Note {
    pub heading: bool,
    pub text: String,
}

/// `write scores[2] = -1e9`: an event in words.
pub(crate) fn event_words(trace: &Trace, n: usize) -> String {
    let e = trace.events[n];
    format!(
        "{} {}[{}] = {}",
        super::format::op_text(e.op),
        e.buf,
        e.offset,
        num(e.value)
    )
}

/// The mistake's number in the kernel file's comments (`MISTAKE 3`).
pub fn number(m: Mistake) -> usize {
    Mistake::ALL.iter().position(|&x| x == m).map_or(0, |k| k + 1)
}

/// The phases where a mistake's own code runs, for the ones `attention_mistakes.rs` implements.
pub fn phases_of(m: Mistake) -> &'static [Phase] {
    match m {
        Mistake::NoInputProjection => &[Phase::NoProj],
        Mistake::ScaleBySeqLen | Mistake::MaskByMultiply => &[Phase::Scores],
        Mistake::SoftmaxOverTwoDims => &[Phase::Softmax],
        Mistake::OverwriteKvGrad => &[Phase::WeightedSumBack, Phase::ScoresBack],
        Mistake::NoOutputProjection | Mistake::DropoutNotApplied => &[],
    }
}

/// The mistake that leaves a phase of the correct run out of the mistaken one.
pub fn removed_by(phase: Phase, mistakes: Mistakes) -> Option<Mistake> {
    let m = match phase {
        Phase::QkvProj | Phase::Split | Phase::QProj | Phase::KProj | Phase::VProj => Mistake::NoInputProjection,
        Phase::Dropout => Mistake::DropoutNotApplied,
        Phase::OutProj => Mistake::NoOutputProjection,
        _ => return None,
    };
    mistakes.has(m).then_some(m)
}

/// Why a run has no such phase, in words.
pub fn missing_why(side: usize, phase: Phase, mistakes: Mistakes) -> String {
    if side == MISTAKEN {
        if phase.pass() == Pass::Backward && !mistakes.allow_backward() {
            return tr!("a mistaken run is forward only").into();
        }
        return match removed_by(phase, mistakes) {
            Some(Mistake::NoInputProjection) => tr!("mistake 1 uses x itself as q, k and v").into(),
            Some(Mistake::DropoutNotApplied) => tr!("mistake 5 never applies dropout").into(),
            Some(Mistake::NoOutputProjection) => tr!("mistake 4 returns att as the output").into(),
            _ => tr!("the mistaken module skips it").into(),
        };
    }
    match phase {
        Phase::NoProj => tr!("it projects x with learned weights instead").into(),
        _ => tr!("only the mistaken module makes it").into(),
    }
}
