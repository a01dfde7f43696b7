//! The softmax of the element's row, forward and backward (`dS`), and a sink logit's gradient.

use super::super::text::{KEEP, elide, num};
use super::super::{Result, Section, missing};
use super::Ctx;
use crate::accum::Accumulation;
use crate::format::pad_left;
use crate::hand::{self, Calc, Digits};
use crate::softmax_row::{SoftmaxBackRow, SoftmaxRow};
use attn_trace_core::kernels::Mask;
use attn_trace_core::trace::{Buf, Phase, Trace};
use attn_trace_i18n::tr;

impl Ctx<'_> {
    /// The softmax row holding the element, from the row's own loop iteration
    /// ([`SoftmaxRow`]).
    pub(super) fn softmax(&self) -> Result<Section> {
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

    /// Backward 2: softmax backward for the element, `dS = P · (dP − Σ_k dP·P)`, from its row
    /// ([`SoftmaxBackRow`]).
    pub(super) fn d_scores(&self) -> Result<Section> {
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
    pub(super) fn d_sink(&self) -> Result<Section> {
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
}

/// The sum of a sink logit's gradient as the accumulation engine reads it from the log,
/// `Σ_{b,i} P_sink·D` term by term, then the write `d_sink[h] = −Σ` at `cell` (`place`): the
/// sink has no value, so it has no `dP` and its gradient is minus the rows' `P_sink·D`.
pub(in crate::explain) fn sink_sum_lines(t: &Trace, acc: &Accumulation, cell: &str, place: &str) -> Vec<String> {
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
