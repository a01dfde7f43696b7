//! The walkthrough of the kernels that store their scores and probabilities: the baseline,
//! mha, gqa, a decode step from the KV cache and rotary positions; and their gradient check.
//!
//! Here: the context every section reads, its shared helpers and the order of the sections;
//! each section is a file of `plain/`.

use super::text::{KEEP, elide, num, short};
use super::{ExplainError, Result, Section, Walkthrough, missing};
use crate::Element;
use crate::accum::{Accumulation, Scale};
use crate::format::sizes_text;
use crate::formula;
use crate::gradcheck;
use crate::hand::{self, Calc, Digits};
use attn_trace_core::engine::{Inputs, Run};
use attn_trace_core::kernels::rope::Rope;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Pass, Phase, Trace};
use attn_trace_i18n::tr;

mod cache;
mod mla_decode;
mod rotation;
mod scores;
mod softmax;
mod weighted_sum;

pub(super) use softmax::sink_sum_lines;

/// What every section needs: the trace, the shapes and the element.
struct Ctx<'a> {
    trace: &'a Trace,
    variant: Variant,
    /// The shape the kernel saw (the baseline's has one head).
    ksh: Shape,
    mask: Mask,
    at: Element,
    /// Flat offset of the element in scores, probs and their gradients.
    off: usize,
    /// The loop variable of the channel loop: `d` for MHA, `c` for the baseline.
    ch: &'static str,
    /// How many channels the dot product runs over: `D` for MHA, `C` for the baseline.
    width: (&'static str, usize),
    /// The phases of the scores, the softmax and the weighted sum: a decode run's own.
    phases: [Phase; 3],
    /// The run generated token by token from the key/value cache.
    decode: bool,
    /// Multi-head latent attention's absorbed decode: scores and sums from the latent cache.
    absorbed: bool,
    /// A split decode run's part length `L`: the parts of step `t` are `p*L..(p + 1)*L`.
    split: Option<usize>,
    /// Rotary positions, when the run turned q and k.
    rope: Option<Rope>,
}

/// The walkthrough of `run`, a kernel that stores its scores: `trace` is its log, `ksh` the
/// shape the kernel saw, `at` already checked against it.
pub(super) fn explain(
    run: &Run,
    trace: &Trace,
    ksh: Shape,
    mask: Mask,
    at: Element,
    pass: Pass,
) -> Result<Walkthrough> {
    let scores = trace.buffer(Buf::Scores).ok_or_else(|| missing("scores buffer"))?;
    // a split decode run's part length, as its kernel recorded it
    let split = trace.buffer(Buf::PPart).and_then(|_| trace.constant("L"));
    // a latent attention query head: D channels against k_nope, DR against k_pe
    let w = run.variant.desc().width;
    let (ch, width) = (
        w.channel(),
        (w.symbol(), w.value(ksh, trace.constant("DR").unwrap_or(0))),
    );
    let absorbed = run.decode && run.variant.desc().latent;
    let cx = Ctx {
        trace,
        variant: run.variant,
        ksh,
        mask: mask.clone(),
        at,
        off: at
            .offset(scores.layout())
            .ok_or_else(|| missing("the element in the scores layout"))?,
        ch,
        width,
        phases: match (run.decode, split) {
            _ if absorbed => [Phase::DecodeScores, Phase::DecodeSoftmax, Phase::DecodeLatentSum],
            (true, Some(_)) => [Phase::DecodeScores, Phase::DecodePartSoftmax, Phase::DecodePartSum],
            (true, None) => [Phase::DecodeScores, Phase::DecodeSoftmax, Phase::DecodeSum],
            (false, _) => [Phase::Scores, Phase::Softmax, Phase::WeightedSum],
        },
        decode: run.decode,
        absorbed,
        split,
        rope: run.rope,
    };
    if run.decode && at.j > at.i {
        return Err(ExplainError::NotYetDecoded { i: at.i, j: at.j });
    }
    if let Mask::Window { w, .. } = mask
        && run.decode
        && mask.hides(at.i, at.j)
    {
        return Err(ExplainError::SlidOut { i: at.i, j: at.j, w });
    }
    let recorded = |p: Phase| trace.phases.iter().any(|&(_, q)| q == p);
    let sh = run.shape;
    let place = if run.variant.has_heads() {
        format!("scores[b={}, h={}, i={}, j={}]", at.b, at.h, at.i, at.j)
    } else {
        format!("scores[b={}, i={}, j={}]", at.b, at.i, at.j)
    };
    let sizes = sizes_text(run.variant, sh, |n| trace.constant(n));
    let mut sections = Vec::new();
    match pass {
        Pass::Forward => {
            if !recorded(cx.phases[0]) {
                return Err(ExplainError::PassNotRecorded("forward"));
            }
            // in the kernel's order: the cache row, its rotation, then (absorbed) w_uk
            if cx.absorbed {
                sections.push(cx.latent_cache()?);
            } else if cx.decode {
                sections.push(cx.cache()?);
            }
            if cx.rope.is_some() {
                sections.push(cx.rotation()?);
            }
            if cx.absorbed {
                sections.push(cx.absorb()?);
            }
            let (dot, write) = cx.scores()?;
            sections.push(dot);
            sections.push(write);
            sections.push(cx.softmax()?);
            if cx.absorbed {
                sections.push(cx.latent_sum()?);
                sections.push(cx.up()?);
            } else {
                sections.push(cx.weighted_sum()?);
            }
            if cx.split.is_some() {
                sections.push(cx.merge()?);
            }
        }
        Pass::Backward => {
            if !recorded(Phase::ScoresBack) {
                return Err(ExplainError::PassNotRecorded("backward"));
            }
            sections.push(cx.d_probs()?);
            sections.push(cx.d_scores()?);
            if recorded(Phase::SinkBack) {
                sections.push(cx.d_sink()?);
            }
            sections.push(cx.flow_to_q_and_k()?);
            if cx.rope.is_some() {
                sections.push(Section {
                    title: tr!("4. Turned back (rope_back)").to_string(),
                    lines: vec![
                        tr!("rope_back then turns every pair of d_q row i and d_k row j back by −t·θ_m (rope.rs):")
                            .to_string(),
                        tr!(
                            "g'[d0] = g[d0]·cos + g[d1]·sin, g'[d1] = −g[d0]·sin + g[d1]·cos, the gradients of q and k"
                        )
                        .to_string(),
                        tr!("as they were before the rotation").to_string(),
                    ],
                });
            }
        }
    }
    let mut how = match (&mask, run.decode) {
        (Mask::Window { w, sinks }, true) => tr!(
            "decoded token by token through a rolling cache of N + W = {sinks} + {w} rows",
            sinks,
            w
        ),
        _ if cx.absorbed => tr!("decoded token by token from the latent cache, absorbed form").to_string(),
        (_, true) => tr!("decoded token by token from the KV cache").to_string(),
        (mask, _) => crate::format::mask_words(mask).to_string(),
    };
    if let Some(bs) = trace.constant("BS") {
        how.push_str(&tr!(", paged in blocks of BS = {bs}", bs));
    }
    if let Some(l) = split {
        how.push_str(&tr!(", split into parts of L = {l}", l));
    }
    if run.registry.has(Buf::Sink) {
        how.push_str(tr!(", a sink logit per head"));
    }
    if let Some(r) = run.rope {
        how.push_str(&tr!(
            ", rope {pairs} base {base}",
            pairs = r.pairs.name(),
            base = num(r.base)
        ));
    }
    Ok(Walkthrough {
        heading: tr!(
            "{place} of the {variant} variant, {pass} pass ({sizes}, {how})",
            place,
            variant = run.variant,
            pass = crate::format::pass_text(pass),
            sizes,
            how
        ),
        sections,
    })
}

/// [`super::gradient_check`] of a kernel that stores `d_probs` and `d_scores`.
pub(super) fn gradient_check(run: &Run, inputs: &Inputs, at: Element) -> Result<Section> {
    let scores = run
        .registry
        .layout(Buf::Scores)
        .ok_or_else(|| missing("scores buffer"))?;
    let off = at
        .offset(scores)
        .ok_or_else(|| missing("the element in the scores layout"))?;
    let mut lines = Vec::new();
    for grad in [Buf::DProbs, Buf::DScores] {
        let Some(p) = grad.primal().filter(|&p| run.registry.has(p)) else {
            continue;
        };
        let (Some(&value), Some(&analytic)) = (run.tensors.get(p).get(off), run.tensors.get(grad).get(off)) else {
            continue;
        };
        let label = run.registry.layout(p).map_or_else(|| off.to_string(), |l| l.label(off));
        match gradcheck::check(inputs, run.variant, grad, off, value, analytic, label) {
            Ok(c) => {
                lines.push(c.line());
                lines.push(format!("  {}", c.perturbed()));
            }
            Err(e) => lines.push(tr!("{grad}[{off}]: no finite difference: {e}", grad, off, e)),
        }
    }
    Ok(Section {
        title: tr!("4. Checked by finite differences (L = Σ out ⊙ d_out)").to_string(),
        lines,
    })
}

impl Ctx<'_> {
    /// The first write of `buf[offset]` in `phase`.
    fn write_in(&self, buf: Buf, offset: usize, phase: Phase) -> Result<usize> {
        self.trace
            .index
            .writes(buf, offset)
            .iter()
            .map(|&n| n as usize)
            .find(|&n| self.trace.phase_at(n) == phase)
            .ok_or_else(|| {
                missing(&tr!(
                    "write of {buf}.data[{offset}] in the {phase} phase",
                    buf,
                    offset,
                    phase
                ))
            })
    }

    /// The factor pairs `(a, b)` of the sum the write `w` ends, as [`Accumulation`] finds them.
    fn products(&self, w: usize) -> Result<Vec<(usize, usize)>> {
        let acc = Accumulation::at(self.trace, w).ok_or_else(|| missing("the sum of products"))?;
        Ok(acc
            .terms
            .iter()
            .filter_map(|t| Some((*t.reads.first()?, *t.reads.get(1)?)))
            .collect())
    }

    /// One line per channel of a weighted sum, `d=k: cell = a×b + … = value`, from the writes
    /// `writes` (channel k's at `writes[k]`), the term that `mark(term, first factor)` picks in
    /// brackets; past `KEEP` channels the middle ones are said, not listed.
    fn channel_sums(&self, writes: &[usize], mark: impl Fn(usize, usize) -> bool) -> Result<Vec<String>> {
        self.channel_sums_as(self.ch, writes, mark)
    }

    /// [`Ctx::channel_sums`] with the channels named `ch` (latent attention's `r`).
    fn channel_sums_as(&self, ch: &str, writes: &[usize], mark: impl Fn(usize, usize) -> bool) -> Result<Vec<String>> {
        let mut sums = Vec::new();
        for (k, &w) in writes.iter().enumerate() {
            let pairs = self.products(w)?;
            let (terms, total) = self.sum_terms(w)?;
            let terms: Vec<String> = terms
                .into_iter()
                .zip(&pairs)
                .enumerate()
                .map(|(n, (term, &(a, _)))| if mark(n, a) { format!("[{term}]") } else { term })
                .collect();
            sums.push(format!(
                "{ch}={k}: {} = {} = {}",
                self.cell(w),
                elide(terms, KEEP, " + "),
                total
            ));
        }
        if sums.len() > KEEP {
            let n = sums.len();
            sums.drain(KEEP - 2..n - 2);
            sums.insert(KEEP - 2, tr!("… ({n} channels in all)", n));
        }
        Ok(sums)
    }

    /// The terms `a×b` of the sum the write `w` ends and the value written, each number printed
    /// with the digits that make `a×b + … = value` hold by hand.
    pub(super) fn sum_terms(&self, w: usize) -> Result<(Vec<String>, String)> {
        let t = self.trace;
        let pairs = self.products(w)?;
        let vals: Vec<f32> = pairs
            .iter()
            .flat_map(|&(a, b)| [t.events[a].value, t.events[b].value])
            .collect();
        let form = hand::sum_of_products(0, pairs.len(), 2).ok_or_else(|| missing("the sum of products"))?;
        let f = Calc::new(vals, form, t.events[w].value).fit(Digits::Plain);
        let terms = (0..pairs.len())
            .map(|k| format!("{}×{}", f.par(2 * k), f.par(2 * k + 1)))
            .collect();
        Ok((terms, f.result))
    }

    /// The substituted formula lines of event `n`'s derived offsets, optionally only `names`.
    fn formulas(&self, n: usize, names: &[&str]) -> Vec<String> {
        let view = self.trace.view(n);
        formula::derived_lines(&view, self.ksh)
            .into_iter()
            .filter(|s| names.is_empty() || names.contains(&s.name))
            .map(|s| s.to_string())
            .collect()
    }

    /// `buf.data[offset]`.
    fn cell(&self, n: usize) -> String {
        let e = self.trace.events[n];
        format!("{}.data[{}]", e.buf, e.offset)
    }

    fn where_(&self, n: usize) -> String {
        let v = self.trace.view(n);
        tr!("event #{n}, {file}:{line}", n, file = short(v.file), line = v.line)
    }

    /// The scale, `1/√D = 1/√2 = 0.7071`, as the kernel computes it ([`Scale`]).
    fn scale(&self) -> Scale {
        Scale::in_trace(self.trace, self.variant, self.ksh)
    }

    fn scale_text(&self) -> String {
        let sc = self.scale();
        let f = Calc::new(Vec::new(), sc.expr(), sc.value).fit(Digits::Plain);
        format!("1/√{} = {} = {}", sc.symbol, sc.written(), f.result)
    }
}
