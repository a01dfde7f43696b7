//! Rotary positions: the rotation of the channel pairs of the element's query and key.

use super::super::text::num;
use super::super::{Result, Section, missing};
use super::Ctx;
use crate::hand::Digits;
use crate::rope_pair::RopePair;
use attn_trace_core::tensor::Layout;
use attn_trace_core::trace::{Buf, Phase};
use attn_trace_i18n::tr;

/// Start of head `head` of one row of a per-head layout: its head dimension is `h` (queries,
/// MHA's keys), `kv_h` (GQA's keys and values) or absent (the baseline's single head).
fn head_row(layout: &Layout, b: (&str, usize), row: (&str, usize), head: usize) -> Option<usize> {
    let name = if layout.position("kv_h").is_some() { "kv_h" } else { "h" };
    layout.offset_of(&[b, row, (name, head)])
}

impl Ctx<'_> {
    /// Rotary positions: each pair of the query row and of the key row, turned by its angle.
    pub(super) fn rotation(&self) -> Result<Section> {
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
}
