//! The score: its dot product term by term, the scale, the mask and the write; and backward,
//! how its gradient flows to `d_q` and `d_k`.

use super::super::text::{KEEP, mask_reason, num, short};
use super::super::{Result, Section, missing};
use super::Ctx;
use crate::accum::Accumulation;
use crate::hand::{self, Calc, Digits};
use attn_trace_core::kernels::Mask;
use attn_trace_core::trace::{Buf, MASKED, Op, Phase};
use attn_trace_i18n::tr;

impl Ctx<'_> {
    /// The scores pass: offsets, products, scale, mask and the write.
    pub(super) fn scores(&self) -> Result<(Section, Section)> {
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
    pub(super) fn product_line(&self, (var, k): (&str, usize), a: usize, b: usize) -> String {
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
    pub(super) fn shown_products(mut products: Vec<String>) -> Vec<String> {
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

    /// Backward 3: where `dS` goes: `d_q` of query i and `d_k` of key j.
    pub(super) fn flow_to_q_and_k(&self) -> Result<Section> {
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
