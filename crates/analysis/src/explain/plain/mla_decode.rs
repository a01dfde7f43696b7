//! Multi-head latent attention's absorbed decode (`attention_mla.rs`, `decode`): the latent
//! cache row each step writes, the query absorbing `w_uk`, the score's two parts read from the
//! cached rows, and the weighted sum taken in the latent space, then projected up by `w_uv`.
//! Every number is an event of the log; the sums are the ones [`Accumulation`] finds there.

use super::super::text::{KEEP, elide, num};
use super::super::{Result, Section, missing};
use super::Ctx;
use crate::accum::Accumulation;
use crate::hand::{self, Calc, Digits, v};
use attn_trace_core::trace::{Buf, Op, Phase};
use attn_trace_i18n::tr;

/// Most channels of a per-channel list shown before the middle ones are only counted: each
/// channel takes a line or two.
const CHANNELS: usize = 4;

/// Widest line, with the two columns of indent the walkthrough adds, before [`fold`] breaks it.
const WIDTH: usize = 98;

/// Lines too wide for a terminal broken before their first ` = `, the rest indented on the next
/// line: `r=0: o_lat.data[21]` then `    = 0.27×(-0.31) + … = -0.31`.
fn fold(lines: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    for line in lines {
        match line.split_once(" = ") {
            Some((head, tail)) if line.chars().count() > WIDTH => {
                out.push(head.to_string());
                out.push(format!("    = {tail}"));
            }
            _ => out.push(line),
        }
    }
    out
}

impl Ctx<'_> {
    /// A size the kernel recorded among the trace's constants: `R` or `DR`.
    pub(super) fn size(&self, name: &str) -> Result<usize> {
        self.trace
            .constant(name)
            .ok_or_else(|| missing(&format!("latent size {name}")))
    }

    /// The sum the write `w` ends, as the accumulation engine reads it from the log.
    fn sum_at(&self, w: usize) -> Result<Accumulation> {
        Accumulation::at(self.trace, w).ok_or_else(|| missing("the sum of products"))
    }

    /// `a×b + c×d + … = value` of the write `w`, term by term (values only).
    fn values_sum(&self, w: usize) -> Result<String> {
        let (terms, total) = self.sum_terms(w)?;
        Ok(format!("{} = {}", elide(terms, KEEP, " + "), total))
    }

    /// The element's term of latent channel `r` of `o_lat` (its row at `l_base`): the reads of
    /// its probability and of key j's `c_kv[j, r]`.
    fn element_term(&self, l_base: usize, r: usize) -> Result<(usize, usize)> {
        let t = self.trace;
        let w = self.write_in(Buf::OLat, l_base + r, Phase::DecodeLatentSum)?;
        self.products(w)?
            .into_iter()
            .find(|&(p, _)| t.events[p].buf == Buf::Probs && t.events[p].offset as usize == self.off)
            .ok_or_else(|| missing("the element's term of o_lat"))
    }

    /// The first write of each cell `base..base + n` of `buf` in `phase`.
    fn row_writes(&self, buf: Buf, base: usize, n: usize, phase: Phase) -> Result<Vec<usize>> {
        (0..n).map(|k| self.write_in(buf, base + k, phase)).collect()
    }

    /// `lines` with the middle of a long per-channel list said, not listed: `per` lines a
    /// channel, `n` channels.
    fn elide_channels(mut lines: Vec<String>, per: usize, n: usize) -> Vec<String> {
        if n > CHANNELS {
            lines.drain((CHANNELS - 1) * per..(n - 1) * per);
            lines.insert((CHANNELS - 1) * per, tr!("… ({n} channels in all)", n));
        }
        lines
    }

    /// The score's write `w`, and the read of the factor `pick` takes from its first term (the
    /// product's `a` is the q_lat row, its `b` key j's cache row): channel 0, the row's base.
    fn score_first_read(&self, pick: fn(&(usize, usize)) -> usize, what: &str) -> Result<(usize, usize)> {
        let w = self.write_in(Buf::Scores, self.off, self.phases[0])?;
        let read = self.products(w)?.first().map(pick).ok_or_else(|| missing(what))?;
        Ok((w, read))
    }

    /// Before the scores: the cache row `[c_kv | k_pe]` step `i` writes for its own token, the
    /// row of key `j` written `j` steps in, and where step `i` reads it.
    pub(super) fn latent_cache(&self) -> Result<Section> {
        let t = self.trace;
        let (i, j) = (self.at.i, self.at.j);
        let (R, DR) = (self.size("R")?, self.size("DR")?);
        let (H, D) = (self.ksh.h, self.ksh.d());
        // key j's row as the dot product reads it: its first term reads column 0 of the row
        let (w, kv_read) = self.score_first_read(|&(_, b)| b, "the cached row read")?;
        let kv_base = t.events[kv_read].offset as usize;
        // the last write of each cell of the row at `base` before event `before`: with rope,
        // a k_pe column's is the rotation's, which turned it after decode_latent wrote it
        let last_writes = |base: usize, before: usize| -> Option<Vec<usize>> {
            (0..R + DR)
                .map(|r| {
                    t.index
                        .writes(Buf::KvCache, base + r)
                        .iter()
                        .map(|&n| n as usize)
                        .rfind(|&n| n < before)
                })
                .collect()
        };
        // step i's own row: where its decode_latent phase, the last one before the score,
        // writes the cache
        let own: Vec<usize> = t
            .phases
            .iter()
            .filter(|(_, p)| *p == Phase::DecodeLatent)
            .map(|&(n, _)| n as usize)
            .rfind(|&n| n <= w)
            .and_then(|start| (start..w).find(|&n| t.events[n].buf == Buf::KvCache && t.events[n].op == Op::Write))
            .and_then(|n| last_writes(t.events[n].offset as usize, w))
            .unwrap_or_default();
        // key j's row, as step i read it
        let key = last_writes(kv_base, kv_read).ok_or_else(|| missing("the write of the cached row"))?;
        if own.len() != R + DR {
            return Err(missing("the step's write of its own cache row"));
        }
        let mut lines = vec![
            tr!(
                "step t projects token t once into one cache row of R + DR = {R} + {DR} = {n} numbers:",
                R,
                DR,
                n = R + DR
            ),
            tr!("columns r < R hold c_kv = x[t]·w_dkv, columns r ≥ R hold k_pe = x[t]·w_kr (decode_latent);")
                .to_string(),
            tr!(
                "the row serves all H = {H} heads, where MHA caches 2·H·D = 2·{H}·{D} = {n} numbers a token",
                H,
                D,
                n = 2 * H * D
            ),
        ];
        let row = |writes: &[usize]| {
            let value = |k: &[usize]| elide(k.iter().map(|&n| num(t.events[n].value)).collect(), KEEP, ", ");
            format!("[c_kv {} | k_pe {}]", value(&writes[..R]), value(&writes[R..]))
        };
        let mut rows = Vec::new();
        if i != j {
            rows.push((tr!("the query's own token "), i, &own));
        }
        rows.push((tr!("key j="), j, &key));
        for (what, step, writes) in rows {
            let (&first, &last) = writes.first().zip(writes.last()).ok_or_else(|| missing("cache row"))?;
            lines.push(tr!(
                "{what}{step}: step {step} wrote kv_cache.data[{lo}..={hi}] (events #{first} to #{last})",
                what,
                step,
                lo = t.events[first].offset,
                hi = t.events[last].offset,
                first,
                last
            ));
            lines.push(format!("  = {}", row(writes)));
            lines.extend(self.formulas(first, &["ci"]).into_iter().map(|l| format!("  {l}")));
        }
        if i == j {
            lines.push(tr!(
                "key j={j} is the query's own token: step {i} reads the row it has just written",
                i,
                j
            ));
        }
        // one latent and one rotary column of key j's row, each a sum over x's channels
        lines.push(tr!(
            "each column is a sum over x's C channels; the first c_kv and k_pe columns of key j={j}:",
            j
        ));
        lines.extend(self.formulas(key[0], &["xi"]));
        for (r, formula) in [
            (0, "Σ_c x[xi + c]·w_dkv[c*R + r]"),
            (R, "Σ_c x[xi + c]·w_kr[c*DR + r - R]"),
        ] {
            let part = if r < R { "c_kv" } else { "k_pe" };
            // the sum decode_latent wrote; rope may have turned a k_pe column since
            let sum = self.write_in(Buf::KvCache, kv_base + r, Phase::DecodeLatent)?;
            lines.push(format!("r={r} ({part}): {} = {formula}", self.cell(sum)));
            lines.push(format!("    = {}", self.values_sum(sum)?));
            if sum != key[r] {
                lines.push(tr!(
                    "    then turned by rope at step {j} into {value} (the rotation below)",
                    j,
                    value = num(t.events[key[r]].value)
                ));
            }
        }
        for line in self.formulas(kv_read, &["kv_base"]) {
            lines.push(tr!("step {i} reads it at {line}", i, line));
        }
        lines.push(tr!(
            "step {i} reads cached rows 0..={i}; row {j} has been in the cache since step {j}, nothing is computed again",
            i,
            j
        ));
        Ok(Section {
            title: tr!("Before the scores: the latent cache at step t={i}", i),
            lines,
        })
    }

    /// Before the scores: the query head turned into the latent space once per step,
    /// `q_lat[r] = Σ_d q_nope[d]·w_uk[r, h·D + d]`, every channel the score reads.
    pub(super) fn absorb(&self) -> Result<Section> {
        let t = self.trace;
        let R = self.size("R")?;
        // the q_lat row the score reads: its first term's first factor is channel 0
        let (_, l_read) = self.score_first_read(|&(a, _)| a, "the q_lat read")?;
        let l_base = t.events[l_read].offset as usize;
        let writes = self.row_writes(Buf::QLat, l_base, R, Phase::DecodeAbsorb)?;
        let mut lines = vec![
            "q_lat[l_base + r] = Σ_{d<D} q[q_base + d]·w_uk[r*H*D + h*D + d]".to_string(),
            tr!("head h's q_nope times w_ukᵀ, once per step and not once per key:").to_string(),
        ];
        lines.extend(self.formulas(writes[0], &["q_base", "l_base"]));
        // where w_uk's column of (h, d) starts, from the first term's read
        if let Some(term) = self.sum_at(writes[0])?.terms.first()
            && let Some(&w_read) = term.reads.get(1)
        {
            lines.extend(self.formulas(w_read, &["w_off"]));
        }
        let mut channels = Vec::new();
        for (r, &n) in writes.iter().enumerate() {
            let cells: Vec<String> = self
                .products(n)?
                .iter()
                .map(|&(a, b)| format!("{}×{}", self.cell(a), self.cell(b)))
                .collect();
            channels.push(format!("r={r}: {} = {}", self.cell(n), elide(cells, KEEP, " + ")));
            channels.push(format!("    = {}", self.values_sum(n)?));
        }
        lines.extend(Self::elide_channels(channels, 2, R));
        lines.push(
            tr!("as k_nope[j] = c_kv[j]·w_uk, q_nope·k_nope[j] = Σ_d q_nope[d]·Σ_r c_kv[j,r]·w_uk[r, h·D + d]")
                .to_string(),
        );
        lines.push(
            tr!("= Σ_r q_lat[r]·c_kv[j,r] = q_lat·c_kv[j]: the score reads c_kv straight from the cache,").to_string(),
        );
        lines.push(tr!("and k_nope, H·D numbers a token, is never made").to_string());
        Ok(Section {
            title: tr!(
                "Before the scores: query i={i} absorbs w_uk into the latent space (decode_absorb)",
                i = self.at.i
            ),
            lines,
        })
    }

    /// The dot product of the absorbed form, from the score's write `w`: the R latent terms
    /// `q_lat·c_kv[j]`, then the DR rotary terms `q_pe·k_pe[j]` against the row's columns
    /// `r = R + d − D`. Its lines, and the sum as the kernel added it.
    pub(super) fn latent_dot(&self, w: usize) -> Result<(Vec<String>, f32)> {
        let t = self.trace;
        let (R, DR) = (self.size("R")?, self.size("DR")?);
        let acc = self.sum_at(w)?;
        let mut lines = vec![
            tr!(
                "the score sums R + DR = {R} + {DR} = {n} products: q_lat against the cached c_kv in channels r < R,",
                R,
                DR,
                n = R + DR
            ),
            tr!("then q_pe (query channels d ≥ D) against the cached k_pe in column r = R + d − D of the row:")
                .to_string(),
        ];
        let (mut sum, mut latent, mut rotary) = (0.0f32, 0.0f32, 0.0f32);
        let mut products = Vec::new();
        for term in &acc.terms {
            let (Some(&a), Some(&b)) = (term.reads.first(), term.reads.get(1)) else {
                continue;
            };
            let (x, y) = (t.events[a].value, t.events[b].value);
            sum += x * y;
            // the kernel's loop variable of the term: r of the latent loop, d of the rotary one
            let (var, k) = term.vars.last().copied().unwrap_or(("r", 0));
            if t.events[a].buf == Buf::QLat {
                latent += x * y;
            } else {
                rotary += x * y;
            }
            products.push(self.product_line((var, k), a, b));
        }
        lines.extend(Self::shown_products(products));
        // the column of the first rotary term, worked out
        if let Some(&b) = acc.terms.get(R).and_then(|term| term.reads.get(1)) {
            for line in self.formulas(b, &["r"]) {
                lines.push(tr!("d={d} reads column {line} of the row", d = self.ksh.d(), line));
            }
        }
        let f = Calc::new(vec![latent, rotary], v(0) + v(1), sum).fit(Digits::Plain);
        lines.push(format!(
            "q·k = q_lat·c_kv[j] + q_pe·k_pe[j] = {} + {} = {}",
            f.val(0),
            f.par(1),
            f.result
        ));
        Ok((lines, sum))
    }

    /// Step 4 of the absorbed form: `o_lat[r] = Σ_j P[t,j]·c_kv[j,r]`, the weighted sum of the
    /// cached latent rows, with the element's term in brackets in each channel.
    pub(super) fn latent_sum(&self) -> Result<Section> {
        let t = self.trace;
        let R = self.size("R")?;
        let (i, j) = (self.at.i, self.at.j);
        let l_base = self.l_base()?;
        let writes = self.row_writes(Buf::OLat, l_base, R, Phase::DecodeLatentSum)?;
        let mut lines = vec![
            "o_lat[l_base + r] = Σ_{j ≤ t} P[off] · kv_cache[kv_base + r],  r < R".to_string(),
            tr!("the probabilities weigh the cached c_kv rows themselves: no value row v[j] is made").to_string(),
        ];
        lines.extend(self.formulas(writes[0], &["l_base"]));
        // this element's term in brackets: its probability times column r of key j's row
        let sums = self.channel_sums_as("r", &writes, |_, p| {
            t.events[p].buf == Buf::Probs && t.events[p].offset as usize == self.off
        })?;
        lines.extend(fold(Self::elide_channels(sums, 1, R)));
        let p = t.value_at(Buf::Probs, self.off, t.len().saturating_sub(1));
        let (_, c_read) = self.element_term(l_base, 0)?;
        let kv_base = t.events[c_read].offset;
        lines.push(tr!(
            "[bracketed]: this element's term, probs.data[{off}] = {p} times kv_cache.data[{kv_base} + r],",
            off = self.off,
            p = num(p),
            kv_base
        ));
        lines.push(tr!(
            "column r of key j={j}'s row c_kv[{j}]: P[i,j] enters every latent channel",
            j
        ));
        Ok(Section {
            title: tr!(
                "4. Weighted sum in the latent space for query i={i} (decode_latent_sum)",
                i
            ),
            lines,
        })
    }

    /// Step 5 of the absorbed form: `att[d] = Σ_r o_lat[r]·w_uv[r, h·D + d]`, and the element's
    /// share of it, `P·Σ_r c_kv[j,r]·w_uv[r, h·D + d]`, the `P·v[j,d]` of the training form.
    pub(super) fn up(&self) -> Result<Section> {
        let t = self.trace;
        let D = self.ksh.d();
        let l_base = self.l_base()?;
        // the element's terms of o_lat: its probability and c_kv[j], channel by channel
        let element: Vec<(usize, usize)> = (0..self.size("R")?)
            .map(|r| self.element_term(l_base, r))
            .collect::<Result<_>>()?;
        let first = self.write_in(Buf::OLat, l_base, Phase::DecodeLatentSum)?;
        // att's row of the head: where its first up-projection reads o_lat channel 0
        let a_first = t
            .index
            .reads(Buf::OLat, l_base)
            .iter()
            .map(|&n| n as usize)
            .find(|&n| n > first && t.phase_at(n) == Phase::DecodeUp)
            .and_then(|n| Accumulation::at(t, n))
            .map(|acc| acc.write)
            .ok_or_else(|| missing("the projection up of o_lat"))?;
        let a_base = t.events[a_first].offset as usize;
        let writes = self.row_writes(Buf::Att, a_base, D, Phase::DecodeUp)?;
        let mut lines = vec!["att[a_base + d] = Σ_r o_lat[l_base + r] · w_uv[r*H*D + h*D + d]".to_string()];
        lines.extend(self.formulas(writes[0], &["a_base"]));
        lines.extend(fold(Self::elide_channels(
            self.channel_sums_as("d", &writes, |_, _| false)?,
            1,
            D,
        )));
        lines.push(tr!("since v[j] = c_kv[j]·w_uv, Σ_j P·v[j] = (Σ_j P·c_kv[j])·w_uv = o_lat·w_uv:").to_string());
        lines.push(tr!("the training form's att, with its sums taken in another order").to_string());
        lines.push(tr!("this element's share of each channel, its terms of o_lat taken up by w_uv,").to_string());
        lines.push(
            tr!("P × Σ_r c_kv[j,r]·w_uv[r*H*D + h*D + d] = P·v[j,d], a value v[j] that is never made:").to_string(),
        );
        let p = element.first().map_or(0.0, |&(p, _)| t.events[p].value);
        let mut shares = Vec::new();
        for (d, &n) in writes.iter().enumerate() {
            // w_uv's factor of each r, as this channel's sum read it
            let w_uv: Vec<f32> = self.products(n)?.iter().map(|&(_, b)| t.events[b].value).collect();
            let pairs: Vec<(f32, f32)> = element
                .iter()
                .zip(&w_uv)
                .map(|(&(_, c), &u)| (t.events[c].value, u))
                .collect();
            let v_jd: f32 = pairs.iter().map(|&(c, u)| c * u).sum();
            // P × (Σ_r c·u): operand 0 is P, then each r's c and u
            let vals: Vec<f32> = std::iter::once(p)
                .chain(pairs.iter().flat_map(|&(c, u)| [c, u]))
                .collect();
            let Some(inner) = hand::sum_of_products(1, pairs.len(), 2) else {
                continue;
            };
            let f = Calc::new(vals, v(0) * inner, p * v_jd).fit(Digits::Plain);
            let terms: Vec<String> = (0..pairs.len())
                .map(|k| format!("{}×{}", f.par(1 + 2 * k), f.par(2 + 2 * k)))
                .collect();
            shares.push(format!(
                "d={d}: {} × ({}) = {}",
                f.val(0),
                elide(terms, KEEP, " + "),
                f.result
            ));
        }
        lines.extend(fold(Self::elide_channels(shares, 1, D)));
        Ok(Section {
            title: tr!("5. Up to the values by w_uv for query i={i} (decode_up)", i = self.at.i),
            lines,
        })
    }

    /// Where the element's head keeps its latent row at step `i`: the q_lat row its score
    /// reads (o_lat's row is at the same offset).
    fn l_base(&self) -> Result<usize> {
        let w = self.write_in(Buf::Scores, self.off, self.phases[0])?;
        self.products(w)?
            .first()
            .map(|&(a, _)| self.trace.events[a].offset as usize)
            .ok_or_else(|| missing("the q_lat read"))
    }
}
