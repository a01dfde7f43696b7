//! The weighted sum of the values into `att`, a split decode step's merge of its parts, and
//! backward, `dP` from `d_att`.

use super::super::text::{KEEP, elide, num};
use super::super::{Result, Section, missing};
use super::Ctx;
use crate::format::pad_left;
use attn_trace_core::trace::{Buf, Phase};
use attn_trace_i18n::tr;

impl Ctx<'_> {
    /// The weighted sum of the element's query row.
    pub(super) fn weighted_sum(&self) -> Result<Section> {
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
    pub(super) fn merge(&self) -> Result<Section> {
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
    pub(super) fn d_probs(&self) -> Result<Section> {
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
}
