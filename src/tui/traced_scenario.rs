//! A loaded scenario ready to step through: its traced runs, one per variant, and where to start.

use attn_trace_core::engine::{self, Inputs, Run};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::scenario::Scenario;
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Pass, Progress, Trace};
use attn_trace_i18n::tr;
use std::sync::Arc;

/// The element a walkthrough opens on: the same score coordinates `explain` takes.
pub(crate) use attn_trace_analysis::Element;

/// Everything the tracer and compare screens show, computed once when a scenario is opened.
#[derive(Debug)]
pub struct TracedScenario {
    pub(crate) title: String,
    /// The file it came from, or `<built-in NAME>`.
    pub(crate) source: String,
    pub(crate) shape: Shape,
    pub(crate) mask: Mask,
    /// Traced runs, in the scenario's variant order.
    pub(crate) runs: Vec<Run>,
    /// With `[run].mistakes`: each variant's mistaken run (forward only, but for a backward
    /// mistake), in the same order.
    pub(crate) mistaken: Vec<Run>,
    pub(crate) focus: Option<(Option<Variant>, Option<Pass>, Element)>,
    /// The correct runs' inputs, for the gradient check's finite differences (re-run untraced).
    pub(crate) inputs: Option<Arc<Inputs>>,
}

impl TracedScenario {
    /// Runs (traced) every variant of the scenario.
    pub fn from_scenario(s: &Scenario) -> TracedScenario {
        Self::traced(s, &Progress::default()).unwrap_or_else(|| Self::empty(s))
    }

    /// Runs every variant of the scenario, reporting the events recorded to `progress`; `None`
    /// when `progress` is cancelled before the last run (a run under way finishes first).
    pub(crate) fn traced(s: &Scenario, progress: &Progress) -> Option<TracedScenario> {
        let inputs = s.inputs();
        let mut runs = Vec::new();
        for &v in &s.variants {
            if progress.cancelled() {
                return None;
            }
            runs.push(engine::run_watched(&inputs, v, s.passes, true, Some(progress.clone())));
        }
        let mut mistaken = Vec::new();
        if let Some(wrong) = s.mistaken_inputs() {
            for &v in &s.variants {
                if progress.cancelled() {
                    return None;
                }
                mistaken.push(engine::run_watched(&wrong, v, s.passes, true, Some(progress.clone())));
            }
        }
        Some(TracedScenario {
            runs,
            mistaken,
            inputs: Some(Arc::new(inputs)),
            ..Self::empty(s)
        })
    }

    /// The scenario's description with no runs yet.
    fn empty(s: &Scenario) -> TracedScenario {
        TracedScenario {
            title: s.title.clone(),
            source: s.source.clone(),
            shape: s.shape,
            mask: s.mask.clone(),
            runs: Vec::new(),
            mistaken: Vec::new(),
            focus: s.focus.map(|f| {
                (
                    f.variant,
                    f.pass,
                    Element {
                        b: f.b,
                        h: f.h,
                        i: f.i,
                        j: f.j,
                    },
                )
            }),
            inputs: None,
        }
    }

    /// The built-in MHA walkthrough (B=1, T=3, C=4, H=2).
    pub fn builtin() -> TracedScenario {
        TracedScenario::from_scenario(&Scenario::builtin())
    }

    /// Is this the built-in walkthrough (the one `attn-trace` opens on)?
    pub(crate) fn is_builtin(&self) -> bool {
        self.source == "<built-in mha_walkthrough>"
    }

    /// `B=1, T=3, C=4, H=2`, with `S=` when the queries are not the keys.
    pub(crate) fn shape_text(&self) -> String {
        let sh = self.shape;
        let s = if sh.s == sh.t {
            String::new()
        } else {
            format!(", S={}", sh.s)
        };
        format!("B={}, T={}{s}, C={}, H={}", sh.b, sh.t, sh.c, sh.h)
    }

    /// Why a screen that needs `variant` cannot open on this scenario: the same words wherever
    /// that happens (the menu, Compare, `Tab` in the tracer and the side-by-side view).
    pub(crate) fn not_traced(&self, variant: Variant) -> String {
        let runs: Vec<String> = self.variants().iter().map(ToString::to_string).collect();
        let runs = if runs.is_empty() {
            tr!("no kernel").to_string()
        } else {
            tr!("only {names}", names = runs.join(tr!(" and ")))
        };
        tr!(
            "\"{title}\" does not trace the {variant} kernel: it runs {runs}. Open a scenario that runs \
             both, or press w on the menu for the built-in walkthrough.",
            title = self.title,
            variant,
            runs
        )
    }

    pub(crate) fn variants(&self) -> Vec<Variant> {
        self.runs.iter().map(|r| r.variant).collect()
    }

    pub(crate) fn run(&self, variant: Variant) -> Option<&Run> {
        self.runs.iter().find(|r| r.variant == variant)
    }

    pub fn trace(&self, variant: Variant) -> Option<&Trace> {
        self.run(variant).and_then(|r| r.trace.as_ref())
    }

    /// Heads the variant's kernel sees (the baseline always one).
    pub(crate) fn heads(&self, variant: Variant) -> usize {
        variant.heads(self.shape.h)
    }

    /// The variant to open first: the focus's, else MHA when traced, else the first.
    pub fn first_variant(&self) -> Option<Variant> {
        let vs = self.variants();
        let wanted = self.focus.and_then(|(v, _, _)| v).or(Some(Variant::Mha));
        wanted.filter(|v| vs.contains(v)).or_else(|| vs.first().copied())
    }

    /// Flat offset of score element `e` in the variant's scores layout, if it is in range. The
    /// baseline has one head: an MHA element's `(b, i, j)` is the same pair there.
    pub(crate) fn score_offset(&self, variant: Variant, e: Element) -> Option<usize> {
        let e = e.in_heads_of(variant);
        e.offset(self.run(variant)?.registry.layout(Buf::Scores)?)
    }

    /// The event that writes element `e` in `variant`'s log: its score in the forward pass,
    /// its score gradient in the backward pass ([`Element::write_event`]).
    pub(crate) fn element_event(&self, variant: Variant, pass: Pass, e: Element) -> Option<usize> {
        let e = e.in_heads_of(variant);
        e.write_event(self.trace(variant)?, pass)
    }

    /// Where the tracer opens on `variant`: the focus element's write, else the first event.
    pub(crate) fn start_cursor(&self, variant: Variant) -> usize {
        self.focus
            .and_then(|(_, pass, e)| self.element_event(variant, pass.unwrap_or(Pass::Forward), e))
            .unwrap_or(0)
    }
}
