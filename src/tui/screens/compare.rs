//! Two kernels side by side on the same input, phase by phase: baseline and MHA (where the same
//! (i, j) lives in each layout, the two scales, and how H probability rows replace one); for a
//! scenario that traces grouped-query attention, MHA and GQA (which key/value head each query
//! head reads, and the memory the shared heads save); for one that traces FlashAttention, MHA
//! and flash (the same `P[i,j]` stored by one and never stored by the other, and the global
//! traffic of each: see [`flash`]).

mod notes;
mod render;

pub(crate) use notes::notes;
pub(crate) use render::render;
use render::{note_lines, title_name, window};

pub(crate) mod flash;

use crate::tui::traced_scenario::{Element, TracedScenario};
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Buf, Phase, Trace};
use attn_trace_i18n::{msg, tr};
use crossterm::event::{KeyCode, KeyEvent};
use std::sync::Arc;

/// Compare's keys, for its `?` overlay.
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("]  n  /  [  p", msg!("next / previous phase")),
    ("←  /  →", msg!("key j − 1 / + 1")),
    ("↑  /  ↓", msg!("query i − 1 / + 1")),
    ("h, Tab", msg!("next head")),
    ("b", msg!("next batch item")),
    ("PgDn  /  PgUp", msg!("scroll the notes when they do not fit")),
    (
        "Enter",
        msg!("open the tracer (MHA) at the event that writes this element"),
    ),
    ("?", msg!("these keys")),
    ("Esc  /  q", msg!("back")),
];

/// The phases where the two kernels differ, with the buffer each shows.
const PHASES: [(Phase, Buf); 6] = [
    (Phase::Scores, Buf::Scores),
    (Phase::Softmax, Buf::Probs),
    (Phase::WeightedSum, Buf::Att),
    (Phase::WeightedSumBack, Buf::DProbs),
    (Phase::SoftmaxBack, Buf::DScores),
    (Phase::ScoresBack, Buf::DQ),
];

#[derive(Debug)]
pub(crate) struct Compare {
    pub traced: Arc<TracedScenario>,
    /// Index into the phases both traces have.
    pub phase: usize,
    pub element: Element,
    /// First line of the notes shown, when they are longer than their panel.
    pub scroll: usize,
    /// MHA beside flash: the element's events in flash's log and both runs' traffic, found
    /// once per element rather than on every frame.
    pub flash: Option<flash::Facts>,
}

/// What the app should do after a key.
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    Stay,
    Back,
    Help,
    /// Open the tracer on this variant at this event.
    Trace(Variant, usize),
}

impl Compare {
    pub(crate) fn new(traced: Arc<TracedScenario>) -> Compare {
        let element = match traced.focus {
            Some(f) => f.2,
            None => Element {
                b: 0,
                h: traced.shape.h.saturating_sub(1),
                i: traced.shape.s.saturating_sub(1),
                j: 0,
            },
        };
        let mut compare = Compare {
            traced,
            phase: 0,
            element,
            scroll: 0,
            flash: None,
        };
        compare.refresh();
        compare
    }

    /// The two kernels compared, left and right.
    pub(crate) fn pair(&self) -> (Variant, Variant) {
        pair_of(&self.traced)
    }

    /// Phases recorded by both variants. MHA beside flash has two: softmax (where MHA stores
    /// `P`, and flash's forward loop folds it into `m`, `l` and `acc`) and softmax backward
    /// (MHA's stored `dS`, flash's recomputed one).
    pub(crate) fn phases(&self) -> Vec<(Phase, Buf)> {
        let (left, right) = self.pair();
        let (Some(a), Some(b)) = (self.traced.trace(left), self.traced.trace(right)) else {
            return Vec::new();
        };
        let has = |t: &Trace, p: Phase| t.phases.iter().any(|&(s, q)| q == p && (s as usize) < t.len());
        if right.desc().tiled {
            return flash::PHASES
                .iter()
                .filter(|&&(p, _, f)| has(a, p) && has(b, f))
                .map(|&(p, buf, _)| (p, buf))
                .collect();
        }
        PHASES
            .iter()
            .copied()
            .filter(|&(p, _)| has(a, p) && has(b, p))
            .collect()
    }

    /// Puts the element at `e` (a pair of the scores' shape).
    #[cfg(test)]
    pub(crate) fn set_element(&mut self, e: Element) {
        self.element = e;
        self.refresh();
    }

    /// Finds again what depends on the element (flash's events of the pair).
    fn refresh(&mut self) {
        if self.pair().1.desc().tiled {
            let traffic = self.flash.take().map(|f| f.traffic);
            self.flash = flash::Facts::new(&self.traced, self.element, traffic);
        }
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        let sh = self.traced.shape;
        let n = self.phases().len();
        let before = self.element;
        let e = &mut self.element;
        match key.code {
            KeyCode::Char(']' | 'n') if n > 0 => {
                self.phase = (self.phase + 1) % n;
                self.scroll = 0;
            }
            KeyCode::Char('[' | 'p') if n > 0 => {
                self.phase = (self.phase + n - 1) % n;
                self.scroll = 0;
            }
            // render keeps the last page in view
            KeyCode::PageDown => self.scroll += 5,
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(5),
            KeyCode::Left => e.j = e.j.saturating_sub(1),
            KeyCode::Right => e.j = (e.j + 1).min(sh.t - 1),
            KeyCode::Up => e.i = e.i.saturating_sub(1),
            KeyCode::Down => e.i = (e.i + 1).min(sh.s - 1),
            KeyCode::Char('h') | KeyCode::Tab => e.h = (e.h + 1) % sh.h.max(1),
            KeyCode::Char('b') => e.b = (e.b + 1) % sh.b.max(1),
            KeyCode::Enter => {
                let right = self.pair().1;
                if let Some((phase, _)) = self.phases().get(self.phase)
                    && let Some(n) = self.event_of(right, *phase)
                {
                    return Outcome::Trace(right, n);
                }
            }
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Back,
            _ => {}
        }
        // what flash's side shows depends on the element only, not on the phase
        if self.element != before {
            self.refresh();
        }
        Outcome::Stay
    }

    /// The event in `phase` of `variant` that writes the element's cell its final value there
    /// (the normalised probability, not softmax's intermediate exponential), or the phase's first.
    pub(crate) fn event_of(&self, variant: Variant, phase: Phase) -> Option<usize> {
        if variant.desc().tiled {
            return self.flash.as_ref()?.event_of(phase, self.traced.trace(variant)?);
        }
        let trace = self.traced.trace(variant)?;
        let k = trace.phases.iter().position(|&(_, p)| p == phase)?;
        let range = trace.span_range(k);
        let buf = PHASES.iter().find(|(p, _)| *p == phase)?.1;
        let off = self.offset(variant, buf)?;
        Some(
            trace
                .index
                .last_write_in(buf, off, range.clone())
                .unwrap_or(range.start),
        )
    }

    /// Flat offset of the element in `buf`, from the variant's registry layout: the score cell,
    /// or the first channel of query row i (of head h) for the `[B,S,C]` buffers.
    fn offset(&self, variant: Variant, buf: Buf) -> Option<usize> {
        let e = self.element;
        let layout = self.traced.run(variant)?.registry.layout(buf)?;
        if layout.is_pairs() {
            return self.traced.score_offset(variant, e);
        }
        let h = e.in_heads_of(variant).h;
        layout.offset_of(&[("b", e.b), ("i", e.i), ("h", h)])
    }
}

/// The two kernels a scenario's Compare puts side by side, left and right: MHA and GQA, or MHA
/// and flash, when both are traced; else the baseline and MHA.
pub(crate) fn pair_of(traced: &TracedScenario) -> (Variant, Variant) {
    let has_run = |v| traced.trace(v).is_some();
    // the newest kernel first: GQA beside MHA, then flash beside MHA, then MHA beside the baseline
    Variant::ALL
        .iter()
        .rev()
        .filter_map(|&right| right.desc().compare.map(|left| (left, right)))
        .find(|&(left, right)| has_run(left) && has_run(right))
        .unwrap_or((Variant::Baseline, Variant::Mha))
}

/// The menu's words for Compare on this scenario: `Compare baseline and MHA`.
pub(crate) fn menu_label(traced: &TracedScenario) -> String {
    let (left, right) = pair_of(traced);
    tr!(
        "Compare {left} and {right}",
        left = title_name(left),
        right = title_name(right)
    )
}
