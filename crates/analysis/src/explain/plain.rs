//! The walkthrough of the kernels that store their scores and probabilities: the baseline,
//! mha, gqa, a decode step from the KV cache and rotary positions; and their gradient check.

use super::text::{KEEP, elide, mask_reason, num, short};
use super::{ExplainError, Result, Section, Walkthrough, missing};
use crate::Element;
use crate::accum::{Accumulation, Scale};
use crate::format::{pad_left, sizes_text};
use crate::formula;
use crate::gradcheck;
use crate::hand::{self, Calc, Digits};
use crate::rope_pair::RopePair;
use crate::softmax_row::{SoftmaxBackRow, SoftmaxRow};
use attn_trace_core::engine::{Inputs, Run};
use attn_trace_core::kernels::rope::Rope;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::{Layout, Shape};
use attn_trace_core::trace::{Buf, MASKED, Op, Pass, Phase, Trace};
use attn_trace_i18n::tr;

mod mla_decode;

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

/// Start of head `head` of one row of a per-head layout: its head dimension is `h` (queries,
/// MHA's keys), `kv_h` (GQA's keys and values) or absent (the baseline's single head).
fn head_row(layout: &Layout, b: (&str, usize), row: (&str, usize), head: usize) -> Option<usize> {
    let name = if layout.position("kv_h").is_some() { "kv_h" } else { "h" };
    layout.offset_of(&[b, row, (name, head)])
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

    /// A decode run: where query `i`'s step wrote its own key and value, and where key `j`'s
    /// were written, `j` steps in: found from the log, as the dot product reads them, whichever
    /// way the cache is kept (a row per position, a rolling window's slots, a paged pool).
    fn cache(&self) -> Result<Section> {
        let t = self.trace;
        let (i, j) = (self.at.i, self.at.j);
        let w = self.write_in(Buf::Scores, self.off, self.phases[0])?;
        let pairs = self.products(w)?;
        // the key row j of the dot product, as the step read it
        let &(_, k_read) = pairs.first().ok_or_else(|| missing("the cached key read"))?;
        let paged = t.buffer(Buf::BlockTable).is_some();
        let mut lines = vec![if paged {
            tr!("generation runs step by step: step t projects token t once and writes its key and value into row t % BS of the block the block table lists for it").to_string()
        } else if let Mask::Window { .. } = self.mask {
            tr!("generation runs step by step: step t projects token t once and writes its key and value into its row of the rolling cache: a sink's own row, else slot t % W after the sinks").to_string()
        } else {
            tr!("generation runs step by step: step t projects token t once and writes its key and value into row t of k_cache and v_cache").to_string()
        }];
        // the step's own token: the first k_cache write of its step; key j: the last write of
        // the cell the dot product reads, before that read
        let mut own = t
            .index
            .writes(Buf::KCache, t.events[k_read].offset as usize)
            .iter()
            .map(|&n| n as usize);
        let key_write = own
            .rfind(|&n| n < k_read)
            .ok_or_else(|| missing("the write of the cached key"))?;
        let step_write = t
            .phases
            .iter()
            .filter(|(_, p)| *p == Phase::DecodeQkv)
            .map(|&(n, _)| n as usize)
            .rfind(|&n| n <= w)
            .and_then(|start| {
                // its first key write is channel 0 of its row; the head's row starts kv_h·D on
                let kv_h = self.at.h / (self.ksh.h / self.ksh.h_kv);
                let writes = (start..w).filter(|&n| t.events[n].buf == Buf::KCache && t.events[n].op == Op::Write);
                let first = writes.clone().next()?;
                let head = t.events[first].offset as usize + kv_h * self.ksh.d();
                writes.clone().find(|&n| t.events[n].offset as usize == head)
            })
            .ok_or_else(|| missing("the step's write of its own key"))?;
        for (what, row, n) in [
            (tr!("the query's own token "), i, step_write),
            (tr!("key j="), j, key_write),
        ] {
            // a paged cache's row: the block id read from the table, then the row in it
            let ci = self.formulas(n, &["blk", "phys", "ci"]).join(tr!("; "));
            lines.push(tr!(
                "{what}{row}: step {row} wrote k_cache.data[{off}] = {value}   ({place}); {ci}",
                what,
                row,
                off = t.events[n].offset,
                value = num(t.events[n].value),
                place = self.where_(n),
                ci
            ));
        }
        // where step i reads key j: the offsets of the read, with the slot or block worked out
        for line in self.formulas(k_read, &["j_blk", "j_phys", "k_base"]) {
            lines.push(tr!("step {i} reads it at {line}", i, line));
        }
        if let Mask::Window { w, sinks } = self.mask {
            lines.push(tr!(
                "step {i} reads only the keys it sees: the sinks 0..{sinks} and the window {lo}..={i}; the rows of the keys that slid out hold later positions now",
                i,
                sinks,
                lo = (i + 1).saturating_sub(w)
            ));
        } else {
            lines.push(tr!(
                "step {i} reads cached rows 0..={i}; row {j} has been in the cache since step {j}, nothing is computed again",
                i,
                j
            ));
        }
        Ok(Section {
            title: tr!("Before the scores: the key/value cache at step t={i}", i),
            lines,
        })
    }

    /// Rotary positions: each pair of the query row and of the key row, turned by its angle.
    fn rotation(&self) -> Result<Section> {
        let t = self.trace;
        let r = self.rope.ok_or_else(|| missing("rotary positions"))?;
        let (i, j) = (self.at.i, self.at.j);
        let latent = match self.variant.desc().latent {
            true => Some((self.size("R")?, self.size("DR")?)),
            false => None,
        };
        // the turned channels: a head's D (C in the baseline's single head), or latent
        // attention's DR rotary channels, which sit after the D of q_nope in a query head
        let (D, D_name) = match latent {
            Some((_, dr)) => (dr, "DR"),
            None if !self.variant.has_heads() => (self.ksh.c, "D"),
            None => (self.ksh.d(), "D"),
        };
        let kv_h = self.at.h / (self.ksh.h / self.ksh.h_kv);
        // (buffer, position, head, where the turned channels start in the head, what it is)
        let rows = match latent {
            Some((r, _)) => {
                let key = if self.decode { (Buf::KvCache, r) } else { (Buf::KPe, 0) };
                [
                    (Buf::Q, i, self.at.h, self.ksh.d(), tr!("query")),
                    (key.0, j, 0, key.1, tr!("key")),
                ]
            }
            None => {
                let k_buf = if self.decode { Buf::KCache } else { Buf::K };
                [(Buf::Q, i, self.at.h, 0, tr!("query")), (k_buf, j, kv_h, 0, tr!("key"))]
            }
        };
        let mut lines = vec![
            tr!(
                "θ_m = base^(−2m/{D_name}) = {base}^(−2m/{D}); pair m is ({pair}), turned by t·θ_m before the scores:",
                D_name,
                base = num(r.base),
                D,
                pair = match (r.pairs, latent) {
                    (attn_trace_core::kernels::rope::Pairs::Interleaved, _) => "d0, d1) = (2m, 2m+1",
                    (attn_trace_core::kernels::rope::Pairs::Half, None) => "lo, hi) = (m, m + D/2",
                    (attn_trace_core::kernels::rope::Pairs::Half, Some(_)) => "lo, hi) = (m, m + DR/2",
                }
            ),
            "x'[d0] = x[d0]·cos − x[d1]·sin,  x'[d1] = x[d0]·sin + x[d1]·cos".to_string(),
        ];
        if latent.is_some() {
            lines.push(tr!(
                "only the rotary part turns: the query head's channels D..D + DR (q_pe) and the key's k_pe; q_nope and c_kv keep no position"
            ).to_string());
        }
        for (buf, pos, head, at, what) in rows {
            let layout = t.buffer(buf).ok_or_else(|| missing("q or k buffer"))?.layout();
            let row = (if buf == Buf::Q { "i" } else { "j" }, pos);
            let base = head_row(layout, ("b", self.at.b), row, head)
                .ok_or_else(|| missing("the row in the q or k layout"))?
                + at;
            // a query's channels are numbered in its head (the scores' d), from q_pe's start
            let named = if buf == Buf::Q { at } else { 0 };
            let mut shown = 0;
            for m in 0..D / 2 {
                let (d0, d1) = r.pairs.channels(m, D);
                let Some(pair) = RopePair::of_write(t, buf, base + d1, Phase::Rope) else {
                    continue;
                };
                if shown == 3 {
                    lines.push(tr!("  … ({n} pairs in all)", n = D / 2));
                    break;
                }
                shown += 1;
                let value = |n: usize| t.events[n].value;
                lines.push(tr!(
                    "{what} {pos}, pair m={m} (channels {d0}, {d1}): angle {pos}·θ_{m} = {angle}, cos = {cos}, sin = {sin}",
                    what,
                    pos,
                    m,
                    d0 = named + d0,
                    d1 = named + d1,
                    angle = num(r.angle(pos, m, D) as f32),
                    cos = num(value(pair.cos)),
                    sin = num(value(pair.sin))
                ));
                let (first, second) = (
                    pair.first_calc(t).fit(Digits::Plain),
                    pair.second_calc(t).fit(Digits::Plain),
                );
                lines.push(format!(
                    "  {buf}.data[{}] = {} × {} − {} × {} = {}; {buf}.data[{}] = {} × {} + {} × {} = {}",
                    base + d0,
                    first.par(0),
                    first.par(1),
                    first.par(2),
                    first.par(3),
                    first.result,
                    base + d1,
                    second.par(0),
                    second.par(1),
                    second.par(2),
                    second.par(3),
                    second.result
                ));
            }
        }
        Ok(Section {
            title: tr!(
                "Before the scores: rotary positions, query i={i} turned by {i}·θ_m, key j={j} by {j}·θ_m (the rope pass)",
                i,
                j
            ),
            lines,
        })
    }

    /// The scores pass: offsets, products, scale, mask and the write.
    fn scores(&self) -> Result<(Section, Section)> {
        let t = self.trace;
        let w = self.write_in(Buf::Scores, self.off, self.phases[0])?;
        let file = short(t.view(w).file);
        let mut lines = vec![tr!("(the {phase} pass of {file})", phase = self.phases[0], file)];
        // the absorbed decode's step row ci is the cache section's, not the score's
        let names: &[&str] = if self.absorbed {
            &["q_base", "l_base", "kv_base", "off"]
        } else {
            &[]
        };
        lines.extend(self.formulas(w, names));
        let (name, width) = self.width;
        let sum = if self.absorbed {
            let (dot, sum) = self.latent_dot(w)?;
            lines.extend(dot);
            sum
        } else {
            self.dot_lines(w, &mut lines, name, width)?
        };
        let dot = Section {
            title: tr!(
                "1. The dot product of query i={i} and key j={j}",
                i = self.at.i,
                j = self.at.j
            ),
            lines,
        };
        self.score_write(w, sum, dot)
    }

    /// The products of a query row and a key row, as `lines`; their sum as the kernel added it.
    fn dot_lines(&self, w: usize, lines: &mut Vec<String>, name: &str, width: usize) -> Result<f32> {
        let t = self.trace;
        let pairs = self.products(w)?;
        lines.push(tr!(
            "q·k sums {width} products, one per channel {ch} in 0..{name}:",
            width,
            ch = self.ch,
            name
        ));
        let mut sum = 0.0f32;
        let mut products = Vec::new();
        for (k, &(a, b)) in pairs.iter().enumerate() {
            sum += t.events[a].value * t.events[b].value;
            products.push(self.product_line((self.ch, k), a, b));
        }
        lines.extend(Self::shown_products(products));
        lines.push(format!("q·k = {}", num(sum)));
        Ok(sum)
    }

    /// One product of a dot product, `d=1: q.data[29] × k.data[7] = -0.453 × 0.384 = -0.174`:
    /// the kernel's loop variable and its value, the two reads `a`, `b` and what they multiply to.
    fn product_line(&self, (var, k): (&str, usize), a: usize, b: usize) -> String {
        let f = crate::accum::product_calc(self.trace, &[a, b]).fit(Digits::Plain);
        format!(
            "{var}={k}: {} × {} = {} × {} = {}",
            self.cell(a),
            self.cell(b),
            f.val(0),
            f.par(1),
            f.result
        )
    }

    /// Product lines indented, the middle of a long list counted rather than listed.
    fn shown_products(mut products: Vec<String>) -> Vec<String> {
        if products.len() > KEEP {
            let n = products.len();
            products.drain(KEEP - 2..n - 2);
            products.insert(KEEP - 2, tr!("… ({n} products in all)", n));
        }
        products.into_iter().map(|p| format!("  {p}")).collect()
    }

    /// The scale, the mask's decision and the write of the score `w`, whose dot product is
    /// `sum`; returned after `dot`, its dot product's section.
    fn score_write(&self, w: usize, sum: f32, dot: Section) -> Result<(Section, Section)> {
        let t = self.trace;
        let sc = self.scale();
        let written = t.events[w].value;
        // the kernel's `s * scale`, before a mask overwrites it
        let f = Calc::new(vec![sum], hand::v(0) * sc.expr(), sum * sc.value).fit(Digits::Plain);
        let mut lines = vec![tr!(
            "scale: × {scale_text}, so q·k × scale = {sum} × {scale} = {product}",
            scale_text = self.scale_text(),
            sum = f.val(0),
            scale = sc.written(),
            product = f.result
        )];
        let (i, j) = (self.at.i, self.at.j);
        if self.decode && matches!(self.mask, Mask::Window { .. }) {
            lines.push(tr!(
                "mask: none needed: step {i} reads only the cached keys it sees: {reason}",
                i,
                reason = mask_reason(&self.mask, i, j)
            ));
        } else if self.decode {
            lines.push(tr!(
                "mask: none needed: step {i} reads the cached keys 0..={i} only, key {j} among them",
                i,
                j
            ));
        } else {
            lines.push(tr!("mask: {reason}", reason = mask_reason(&self.mask, i, j)));
        }
        if self.mask.hides(i, j) && !self.decode {
            lines.push(tr!("      the dot product above is computed anyway (as in the reference code),").to_string());
            lines.push(tr!(
                "      then overwritten with {masked} so that softmax gives it probability 0",
                masked = num(MASKED)
            ));
        }
        lines.push(tr!(
            "write: {cell} = {value}   ({place})",
            cell = self.cell(w),
            value = num(written),
            place = self.where_(w)
        ));
        let write = Section {
            title: tr!("2. Scale, mask and write").to_string(),
            lines,
        };
        Ok((dot, write))
    }

    /// The softmax row holding the element, from the row's own loop iteration
    /// ([`SoftmaxRow`]).
    fn softmax(&self) -> Result<Section> {
        let t = self.trace;
        let w = self.write_in(Buf::Scores, self.off, self.phases[0])?;
        let first = t
            .index
            .next_read_after(Buf::Scores, self.off, w)
            .filter(|&n| t.phase_at(n) == self.phases[1])
            .ok_or_else(|| missing("softmax read of the score"))?;
        let row = SoftmaxRow::at(t, first).ok_or_else(|| missing("softmax row frame"))?;
        let row_off = self.off - self.at.j;
        let mut lines = self.formulas(first, &["row"]);
        let (i, focus) = (self.at.i, self.at.j);
        // the keys of the row's softmax, as its columns read them: all T, a decode step's t + 1
        // or those its window keeps, or the element's part of a split step
        let keys: Vec<usize> = row.cols.iter().map(|c| c.j).collect();
        let (&lo, &hi) = keys
            .first()
            .zip(keys.last())
            .ok_or_else(|| missing("the keys of the row"))?;
        let which = match (self.decode, self.split, &self.mask) {
            (true, Some(l), _) => tr!(
                "{lo}..={hi}, part p = j / L = {j} / {l} = {p} of the cached positions",
                lo,
                hi,
                j = focus,
                l,
                p = focus / l
            ),
            (true, None, Mask::Window { .. }) => {
                let list: Vec<String> = keys.iter().map(ToString::to_string).collect();
                let set = format!("{{{}}}", list.join(", "));
                tr!("{set}, the cached positions the window keeps", set)
            }
            (true, None, _) => tr!("0..={i}, the cached positions", i),
            (false, _, _) => "0..T".to_string(),
        };
        lines.push(tr!(
            "the row is scores.data[{row_off}..={end}], one score per key j in {keys}",
            row_off,
            end = row_off + self.ksh.t - 1,
            keys = which
        ));
        // gpt-oss's sink logit: read in the row's own iteration, first for the max, then for its
        // exponential; its share of the row is written last
        if let Some(n) = row.sink {
            lines.push(tr!(
                "sink logit: {cell} = {s} ({place}), one more logit of the row that carries no value",
                cell = self.cell(n),
                s = num(t.events[n].value),
                place = self.where_(n)
            ));
        }
        let max = row.max(t);
        if row.sink.is_some() {
            lines.push(tr!(
                "max = max(sink, scores) = {max}   (read first, so exp never overflows)",
                max = num(max)
            ));
        } else {
            lines.push(tr!(
                "max = {max}   (read first, so exp never overflows)",
                max = num(max)
            ));
        }
        lines.push(format!(
            "{:>4}  {}  {}  {}",
            "j",
            pad_left(tr!("score"), 10),
            pad_left(tr!("exp(score − max)"), 16),
            pad_left(tr!("prob"), 8)
        ));
        let tt = row.cols.len();
        let mut gap = false;
        for (k, c) in row.cols.iter().enumerate() {
            let jj = c.j;
            let show = tt <= 12 || k < 4 || k + 2 >= tt || jj.abs_diff(focus) <= 1;
            if !show {
                if !gap {
                    lines.push(format!("{:>4}", "…"));
                }
                gap = true;
                continue;
            }
            gap = false;
            let mark = if jj == focus { tr!("   ◀ this element") } else { "" };
            lines.push(format!(
                "{jj:>4}  {:>10}  {:>16}  {:>8}{mark}",
                num(row.x(t, k)),
                num(row.e(t, k)),
                num(row.p(t, k))
            ));
        }
        let total = row.sum(t);
        match (row.sink, row.p_sink, row.p_sink_calc(t)) {
            (Some(n), Some(p_sink), Some(share)) => {
                lines.push(format!(
                    "{:>4}  {:>10}  {:>16}  {:>8}",
                    "sink",
                    num(t.events[n].value),
                    num(row.e_sink(t)),
                    num(t.events[p_sink].value)
                ));
                let sum = row.sum_calc(t).fit(Digits::Plain);
                lines.push(tr!(
                    "Σ exp = exp(sink − max) + Σ_j exp(score − max) = {e} + {rest} = {total}; each prob = exp / Σ exp, so the row sums to 1 − P_sink",
                    e = sum.val(0),
                    rest = sum.val(1),
                    total = sum.result
                ));
                let share = share.fit(Digits::Plain);
                lines.push(tr!(
                    "the sink's share: P_sink = exp(sink − max) / Σ exp = {e} / {total} = {p} ({cell}, {place})",
                    e = share.val(0),
                    total = share.val(1),
                    p = share.result,
                    cell = self.cell(p_sink),
                    place = self.where_(p_sink)
                ));
            }
            (Some(_), ..) => return Err(missing("write of p_sink")),
            _ if self.split.is_some() => lines.push(tr!(
                "Σ exp = {total}; each prob = exp / Σ exp, so the part's probabilities sum to 1",
                total = num(total)
            )),
            _ => lines.push(tr!(
                "Σ exp = {total}; each prob = exp / Σ exp, so the row sums to 1",
                total = num(total)
            )),
        }
        let k = keys
            .iter()
            .position(|&j| j == focus)
            .ok_or_else(|| missing("the element's probability"))?;
        let (p, p_at) = (row.p(t, k), row.cols[k].p);
        if let Some(l) = self.split {
            // the part's log-sum-exp, written after its softmax: what the merge weighs it by
            let lse_at = row.lse.ok_or_else(|| missing("the part's log-sum-exp"))?;
            let lse = row
                .lse_calc(t)
                .ok_or_else(|| missing("the part's log-sum-exp"))?
                .fit(Digits::Plain);
            lines.push(tr!(
                "this element: p_part.data[{off}] = {p} ({place}), its share of part {part} alone",
                off = self.off,
                p = num(p),
                place = self.where_(p_at),
                part = focus / l
            ));
            lines.push(format!(
                "{} = max + ln Σ exp = {} + ln {} = {}   ({})",
                self.cell(lse_at),
                lse.val(0),
                lse.val(1),
                lse.result,
                self.where_(lse_at)
            ));
        } else if self.mask.hides(self.at.i, focus) && !self.decode {
            lines.push(tr!(
                "this element: exp(-1e9 − max) = 0, so probs.data[{off}] = {p} ({place})",
                off = self.off,
                p = num(p),
                place = self.where_(p_at)
            ));
        } else {
            lines.push(tr!(
                "this element: probs.data[{off}] = {p} ({place})",
                off = self.off,
                p = num(p),
                place = self.where_(p_at)
            ));
        }
        let head = if self.variant.has_heads() {
            tr!(", head h={h}", h = self.at.h)
        } else {
            String::new()
        };
        let title = match self.split {
            Some(l) => tr!(
                "3. Softmax of part p={p} of row (b={b}{head}, i={i})",
                p = focus / l,
                b = self.at.b,
                head,
                i = self.at.i
            ),
            None => tr!(
                "3. Softmax of row (b={b}{head}, i={i})",
                b = self.at.b,
                head,
                i = self.at.i
            ),
        };
        Ok(Section { title, lines })
    }

    /// The weighted sum of the element's query row.
    fn weighted_sum(&self) -> Result<Section> {
        let t = self.trace;
        // a value row's channels: D per head (C for the baseline's one head), which is not the
        // score's width in latent attention, whose query heads are D + DR wide
        let width = self.ksh.d();
        // a split step's weighted sum is the element's part's own, into o_part
        let (target, base) = match self.split {
            Some(l) => {
                let o_part = t.buffer(Buf::OPart).ok_or_else(|| missing("o_part buffer"))?;
                let coords = [
                    ("b", self.at.b),
                    ("h", self.at.h),
                    ("t", self.at.i),
                    ("p", self.at.j / l),
                ];
                (Buf::OPart, o_part.layout().offset_of(&coords))
            }
            None => {
                let att = t.buffer(Buf::Att).ok_or_else(|| missing("att buffer"))?;
                let coords = [("b", self.at.b), ("i", self.at.i), ("h", self.at.h)];
                (Buf::Att, att.layout().offset_of(&coords))
            }
        };
        let base = base.ok_or_else(|| missing("the element's row in the att layout"))?;
        let formula = match self.split {
            Some(_) => "o_part[b,h,t,p,d] = Σ_{j in p} p_part[b,h,t,j] · v_cache[j,kv_h,d],  kv_h = h/(H/H_kv)",
            None => self.variant.desc().sum[usize::from(self.decode)],
        };
        let mut lines = vec![formula.to_string()];
        let writes = (0..width)
            .map(|k| self.write_in(target, base + k, self.phases[2]))
            .collect::<Result<Vec<_>>>()?;
        // the baseline's weighted sum names its row `ai`, the headed kernels and the decode
        // loops `a_base`
        let names: &[&str] = match (self.variant.has_heads(), self.decode) {
            _ if self.split.is_some() => &["o_base"],
            (false, false) => &["ai"],
            _ => &["a_base"],
        };
        lines.extend(self.formulas(writes[0], names));
        // this element's term in brackets: its probability times v row j
        lines.extend(self.channel_sums(&writes, |_, p| t.events[p].offset as usize == self.off)?);
        let probs_buf = if self.split.is_some() { Buf::PPart } else { Buf::Probs };
        let p = t.value_at(probs_buf, self.off, t.len().saturating_sub(1));
        lines.push(tr!(
            "[bracketed]: this element's term, its probability {p} times channel {ch} of v row j={j}",
            p = num(p),
            ch = self.ch,
            j = self.at.j
        ));
        let title = match self.split {
            Some(l) => tr!(
                "4. Weighted sum of part p={p} for query i={i}",
                p = self.at.j / l,
                i = self.at.i
            ),
            None => tr!("4. Weighted sum for query i={i}", i = self.at.i),
        };
        Ok(Section { title, lines })
    }

    /// A split decode step's merge: the parts weighed by the softmax of their log-sum-exps,
    /// then summed into `att`, with the element's part in brackets.
    fn merge(&self) -> Result<Section> {
        let t = self.trace;
        let l = self.split.ok_or_else(|| missing("the split"))?;
        let part = self.at.j / l;
        let att = t.buffer(Buf::Att).ok_or_else(|| missing("att buffer"))?;
        let coords = [("b", self.at.b), ("i", self.at.i), ("h", self.at.h)];
        let base = att
            .layout()
            .offset_of(&coords)
            .ok_or_else(|| missing("the element's row in the att layout"))?;
        let w0 = self.write_in(Buf::Att, base, Phase::DecodeMerge)?;
        let lse_row = t
            .view(w0)
            .derived
            .iter()
            .find(|d| d.name == "lse_row")
            .map(|d| d.value)
            .ok_or_else(|| missing("the merge's lse_row"))?;
        // the weights' iteration for this head: the one around the last write of its first
        // weight before the merge
        let w_first = t
            .index
            .writes(Buf::WPart, lse_row)
            .iter()
            .map(|&n| n as usize)
            .rfind(|&n| n < w0)
            .ok_or_else(|| missing("the merge's weights"))?;
        let head = t
            .frames_of(w_first)
            .into_iter()
            .rev()
            .nth(1)
            .ok_or_else(|| missing("the merge's head frame"))?;
        let span = head.start as usize..head.end as usize;
        let parts = self.at.i / l + 1;
        let mut lines = vec![
            tr!("the parts' outputs are weighed by w_part = softmax(lse_part): each part's share of the whole row's Σ exp").to_string(),
        ];
        lines.extend(self.formulas(w0, &["lse_row"]));
        lines.push(format!(
            "{:>4}  {}  {}  {}",
            "p",
            pad_left("lse_part", 10),
            pad_left(tr!("exp(lse − max)"), 16),
            pad_left("w_part", 8)
        ));
        let mut max = f32::NEG_INFINITY;
        let mut total = 0.0f32;
        for p in 0..parts {
            let lse = t.value_at(Buf::LsePart, lse_row + p, span.start);
            max = max.max(lse);
            let writes: Vec<usize> = t
                .index
                .writes(Buf::WPart, lse_row + p)
                .iter()
                .map(|&n| n as usize)
                .filter(|n| span.contains(n))
                .collect();
            let (&e_at, &w_at) = writes
                .first()
                .zip(writes.last())
                .ok_or_else(|| missing("the merge's weights"))?;
            let (e, w) = (t.events[e_at].value, t.events[w_at].value);
            total += e;
            let mark = if p == part {
                tr!("   ◀ the element's part")
            } else {
                ""
            };
            lines.push(format!("{p:>4}  {:>10}  {:>16}  {:>8}{mark}", num(lse), num(e), num(w)));
        }
        lines.push(tr!(
            "max = {max}; Σ exp = {total}; each w_part = exp / Σ exp",
            max = num(max),
            total = num(total)
        ));
        lines.push("att[b,t,h,d] = Σ_p w_part[p] · o_part[p,d]".to_string());
        lines.extend(self.formulas(w0, &["a_base"]));
        let writes = (0..self.width.1)
            .map(|k| self.write_in(Buf::Att, base + k, Phase::DecodeMerge))
            .collect::<Result<Vec<_>>>()?;
        // the element's part in brackets: its weight times its o_part
        lines.extend(self.channel_sums(&writes, |p, _| p == part)?);
        lines.push(tr!(
            "[bracketed]: the element's part p={part}, its weight times channel d of its o_part",
            part
        ));
        Ok(Section {
            title: tr!("5. Merge of the parts for query i={i} (decode_merge)", i = self.at.i),
            lines,
        })
    }

    /// Backward 1: `dP` of the element, from `d_att` and `v`.
    fn d_probs(&self) -> Result<Section> {
        let w = self.write_in(Buf::DProbs, self.off, Phase::WeightedSumBack)?;
        let mut lines = vec![
            tr!("dP[i,j] = Σ over channels of d_att[i] · v[j]: how the loss changes with this probability").to_string(),
        ];
        lines.extend(self.formulas(w, &[]));
        let (terms, total) = self.sum_terms(w)?;
        lines.push(format!(
            "{} = {} = {}   ({})",
            self.cell(w),
            elide(terms, KEEP, " + "),
            total,
            self.where_(w)
        ));
        if self.mask.hides(self.at.i, self.at.j) {
            lines.push(tr!("dP is computed for masked pairs too; softmax backward multiplies it by P = 0").to_string());
        }
        Ok(Section {
            title: tr!("1. Gradient of the probability (weighted_sum_back)").to_string(),
            lines,
        })
    }

    /// Backward 2: softmax backward for the element, `dS = P · (dP − Σ_k dP·P)`, from its row
    /// ([`SoftmaxBackRow`]).
    fn d_scores(&self) -> Result<Section> {
        let t = self.trace;
        let w = self.write_in(Buf::DScores, self.off, Phase::SoftmaxBack)?;
        let row = SoftmaxBackRow::at(t, w).ok_or_else(|| missing("softmax backward row frame"))?;
        let k = row
            .cols
            .iter()
            .position(|c| c.ds == w)
            .ok_or_else(|| missing("softmax backward reads"))?;
        // pass a of the row: the (dP, P) pairs of Σ_k dP·P
        let dot = row
            .dot_calc(t)
            .ok_or_else(|| missing("softmax backward reads"))?
            .fit(Digits::Plain);
        let terms: Vec<String> = (0..row.cols.len())
            .map(|k| format!("{}×{}", dot.par(2 * k), dot.par(2 * k + 1)))
            .collect();
        let mut lines = vec![format!("Σ_k dP·P = {} = {}", elide(terms, KEEP, " + "), dot.result)];
        let f = row.ds_calc(t, k).fit(Digits::Plain);
        lines.push(format!(
            "{} = P × (dP − Σ_k dP·P) = {} × ({} − {}) = {}   ({})",
            self.cell(w),
            f.val(0),
            f.val(1),
            f.par(2),
            f.result,
            self.where_(w)
        ));
        if self.mask.hides(self.at.i, self.at.j) {
            lines.push(tr!("P = 0 for a masked pair, so its score gradient is 0").to_string());
        }
        Ok(Section {
            title: tr!("2. Softmax backward (softmax_back)").to_string(),
            lines,
        })
    }

    /// Backward 2b: the gradient of the head's sink logit (gpt-oss), which has no value and so
    /// no `dP` of its own: `d_sink[h] = −Σ_{b,i} P_sink · D`, with the row's `D = Σ_k dP·P`
    /// kept in `delta` by softmax backward, as the accumulation engine reads the sum.
    fn d_sink(&self) -> Result<Section> {
        let t = self.trace;
        let h = self.at.h;
        let w = self.write_in(Buf::DSink, h, Phase::SinkBack)?;
        let acc = Accumulation::at(t, w).ok_or_else(|| missing("the sum of d_sink"))?;
        let row = self.off / self.ksh.t;
        let delta = self.write_in(Buf::Delta, row, Phase::SoftmaxBack)?;
        let mut lines = vec![tr!(
            "softmax backward kept this row's Σ_k dP·P = {dot} in {cell} ({place})",
            dot = num(t.events[delta].value),
            cell = self.cell(delta),
            place = self.where_(delta)
        )];
        lines.extend(sink_sum_lines(t, &acc, &self.cell(w), &self.where_(w)));
        lines.push(
            tr!("the sink carries no value, so its own softmax gradient is P_sink × (0 − D) in every row of the head")
                .to_string(),
        );
        Ok(Section {
            title: tr!("2b. The sink logit's gradient (sink_back)").to_string(),
            lines,
        })
    }

    /// Backward 3: where `dS` goes: `d_q` of query i and `d_k` of key j.
    fn flow_to_q_and_k(&self) -> Result<Section> {
        let t = self.trace;
        let start = t
            .phases
            .iter()
            .find(|&&(_, p)| p == Phase::ScoresBack)
            .map(|&(s, _)| s as usize)
            .ok_or_else(|| missing("scores_back phase"))?;
        let reads: Vec<usize> = t
            .index
            .reads(Buf::DScores, self.off)
            .iter()
            .map(|&n| n as usize)
            .filter(|&n| n >= start)
            .collect();
        let (i, j) = (self.at.i, self.at.j);
        let mut lines = Vec::new();
        if reads.is_empty() {
            lines.push(tr!(
                "none: ({i}, {j}) is a masked pair ({reason}). Its score was overwritten by a constant, so it does",
                i,
                j,
                reason = mask_reason(&self.mask, i, j).trim_end_matches([';', '；'])
            ));
            lines.push(
                tr!("not depend on q or k; the kernel skips the pair and no gradient reaches d_q or d_k through it")
                    .to_string(),
            );
            return Ok(Section {
                title: tr!("3. Into d_q and d_k (scores_back)").to_string(),
                lines,
            });
        }
        let ds = t.events[reads[0]].value;
        let sc = self.scale();
        lines.push(format!(
            "dS = d_scores.data[{}] = {}; scale = {}",
            self.off,
            num(ds),
            self.scale_text()
        ));
        let mut to_q = Vec::new();
        let mut to_k = Vec::new();
        for &r in &reads {
            let other = r + 1;
            let Some(e) = t.events.get(other) else { continue };
            // the sum this product is a term of, as the accumulation engine finds it: d_q's or
            // d_k's channel (latent attention's d_k_pe sums over the heads as well)
            let Some(target) = Accumulation::at(t, r).map(|a| a.write) else {
                continue;
            };
            // the pair's term of the sum, as the kernel scales it: dS × other × 1/√D
            let f = Calc::new(
                vec![ds, e.value],
                hand::v(0) * hand::v(1) * sc.expr(),
                ds * e.value * sc.value,
            )
            .fit(Digits::Plain);
            // GQA adds each query head's share into a d_k its group shares: the write is the
            // `+=` of a read of the value before
            let total = t.events[target].value;
            let after = match target.checked_sub(1).map(|k| t.events[k]) {
                Some(old)
                    if old.op == Op::Read
                        && (old.buf, old.offset) == (t.events[target].buf, t.events[target].offset) =>
                {
                    tr!(
                        "this head's visible pairs: {own}; added to its group's earlier heads: {total}",
                        own = num(total - old.value),
                        total = num(total)
                    )
                }
                // latent attention's one rotary key takes every head's share
                _ if t.events[target].buf == Buf::DKPe => {
                    tr!("after every head's visible pairs: {total}", total = num(total))
                }
                _ => tr!("after every visible pair: {total}", total = num(total)),
            };
            let line = format!(
                "{} += dS × {} × scale = {} × {} × {} = {}   ({after})",
                self.cell(target),
                self.cell(other),
                f.val(0),
                f.par(1),
                sc.written(),
                f.result,
            );
            match e.buf {
                Buf::K | Buf::KNope | Buf::KPe => to_q.push(line),
                _ => to_k.push(line),
            }
        }
        lines.push(tr!("into d_q of query i={i} (dQ = dS·K/√{w}):", i, w = sc.symbol));
        lines.extend(to_q.into_iter().take(KEEP).map(|l| format!("  {l}")));
        lines.push(tr!("into d_k of key j={j} (dK = dSᵀ·Q/√{w}):", j, w = sc.symbol));
        lines.extend(to_k.into_iter().take(KEEP).map(|l| format!("  {l}")));
        Ok(Section {
            title: tr!("3. Into d_q and d_k (scores_back)").to_string(),
            lines,
        })
    }
}

/// The sum of a sink logit's gradient as the accumulation engine reads it from the log,
/// `Σ_{b,i} P_sink·D` term by term, then the write `d_sink[h] = −Σ` at `cell` (`place`): the
/// sink has no value, so it has no `dP` and its gradient is minus the rows' `P_sink·D`.
pub(super) fn sink_sum_lines(t: &Trace, acc: &Accumulation, cell: &str, place: &str) -> Vec<String> {
    let factors = acc.terms.iter().map(|term| term.reads.len()).max().unwrap_or(0);
    let vals: Vec<f32> = acc
        .terms
        .iter()
        .flat_map(|term| term.reads.iter().map(|&r| t.events[r].value))
        .collect();
    let sigma = acc.sigma(t);
    let sum =
        hand::sum_of_products(0, acc.terms.len(), factors).map(|form| Calc::new(vals, form, sigma).fit(Digits::Plain));
    let terms: Vec<String> = (0..acc.terms.len())
        .map(|k| {
            let f: Vec<String> = (0..factors)
                .map(|f| sum.as_ref().map_or_else(String::new, |s| s.par(k * factors + f)))
                .collect();
            f.join("×")
        })
        .collect();
    let total = sum.map_or_else(|| num(sigma), |s| s.result);
    let negated = Calc::new(vec![sigma], -hand::v(0), t.events[acc.write].value).fit(Digits::Plain);
    vec![
        format!("Σ_{{b,i}} P_sink·D = {} = {}", elide(terms, KEEP, " + "), total),
        format!("{cell} = −Σ = −({}) = {}   ({place})", negated.val(0), negated.result),
    ]
}
