//! Flash's walkthrough of one probability it never stores, from its tile cell's events.

use super::text::{elide, mask_reason, num, par};
use super::{ExplainError, Result, Section, Walkthrough, missing};
use crate::Element;
use crate::accum::{Accumulation, Scale};
use crate::gradcheck::{self, sci};
use crate::hand::{self, Calc, Digits, v};
use crate::online_softmax::RowUpdate;
use attn_trace_core::engine::{Inputs, Passes, Registry, Run};
use attn_trace_core::kernels::{Mask, Variant, names};
use attn_trace_core::tensor::Shape;
use attn_trace_core::tensor::simd;
use attn_trace_core::trace::{Buf, MASKED, Op, Pass, Phase, Trace};
use attn_trace_i18n::tr;

/// Flash's walkthrough of `P[b,h,i,j]`, which it never stores: the query tile holding row `i`
/// and the key tile holding column `j`; the score written into `s_tile`; the online softmax of
/// row `i` key tile by key tile (`m`, `l` as the log has them); `att` and `lse` written once;
/// `P` as `e^(S − lse)`. Backward: `D_i`, `P` recomputed from `lse`, and `dS`.
pub(super) fn explain(trace: &Trace, sh: Shape, mask: &Mask, at: Element, pass: Pass) -> Result<Walkthrough> {
    // the pair's events (its score-tile cell forward and backward, its row's lse, D_i), found
    // in the log by the same lookup Compare uses
    let cell = crate::flash_cell::FlashCell::find(trace, at).ok_or_else(|| missing("s_tile buffer"))?;
    let crate::flash_cell::TileSpot {
        br,
        bc,
        i0,
        j0,
        ii,
        jj,
        off,
    } = cell.spot;
    let scale = Scale::of(Variant::Flash, sh, 0);
    let d = scale.width;
    let tiles_line = tr!(
        "query tile i0={i0} (rows {i0}..={i1}, i = i0 + ii with ii={ii}), key tile j0={j0} (keys {j0}..={j1}, jj={jj}); \
         tiles of br={br} rows by bc={bc} columns; the pair lives in s_tile[ii*bc + jj] = s_tile[{off}] only while both are loaded",
        i0,
        i1 = (i0 + br).min(sh.s) - 1,
        ii,
        j0,
        j1 = (j0 + bc).min(sh.t) - 1,
        jj,
        br,
        bc,
        off
    );
    let mut how = crate::format::mask_words(mask).to_string();
    if trace.buffer(Buf::Sink).is_some() {
        how.push_str(tr!(", a sink logit per head"));
    }
    let heading = |pass: Pass| {
        tr!(
            "P[b={b}, h={h}, i={i}, j={j}] of the flash variant, {pass} pass (B={B}, T={T}, C={C}, H={H}, D={d}, {mask}): never stored, \
             computed tile by tile",
            b = at.b,
            h = at.h,
            i = at.i,
            j = at.j,
            pass = crate::format::pass_text(pass),
            B = sh.b,
            T = sh.t,
            C = sh.c,
            H = sh.h,
            d,
            mask = how
        )
    };
    let mut sections = vec![Section {
        title: tr!("1. The tiles").to_string(),
        lines: vec![tiles_line],
    }];
    let Some(s_write) = cell.score else {
        // a tile the mask hides entirely is skipped: no event for this pair at all
        sections.push(Section {
            title: tr!("2. Skipped").to_string(),
            lines: vec![tr!(
                "the mask hides every pair of this query tile and key tile ({why}), so flash never loads the key tile \
                 for it: P = 0 with no read or write",
                why = mask_reason(mask, at.i, at.j).trim_end_matches([';', '；'])
            )],
        });
        return Ok(Walkthrough {
            heading: heading(pass),
            sections,
        });
    };
    let s_val = trace.events[s_write].value;
    match pass {
        Pass::Forward => {
            // the score: Σ_d q_tile·k_tile in the iteration that writes it, then scaled
            let acc = Accumulation::at(trace, s_write).ok_or_else(|| missing("loop frame"))?;
            let sum = acc.sigma(trace);
            // the kernel's `s * scale`, before a mask overwrites it
            let scaled = Calc::new(vec![sum], v(0) * scale.expr(), sum * scale.value).fit(Digits::Plain);
            let vals: Vec<f32> = acc
                .terms
                .iter()
                .flat_map(|t| t.reads.iter().map(|&r| trace.events[r].value))
                .collect();
            let form = hand::sum_of_products(0, acc.terms.len(), 2).ok_or_else(|| missing("loop frame"))?;
            let f = hand::fit_to(&vals, &[form], &scaled.val(0), Digits::Plain);
            let terms: Vec<String> = (0..acc.terms.len())
                .map(|k| format!("{}·{}", f.par(2 * k), f.par(2 * k + 1)))
                .collect();
            let mut lines = vec![
                tr!(
                    "S = Σ_d q_tile[{ii},d]·k_tile[{jj},d] = {terms}",
                    ii,
                    jj,
                    terms = elide(terms, 8, " + ")
                ),
                format!("  = {} × {} = {}", scaled.val(0), scale.written(), scaled.result),
            ];
            if mask.hides(at.i, at.j) {
                // the reason without the semicolon that leads on to the overwrite in plain explain
                let why = mask_reason(mask, at.i, at.j);
                let why = why.trim_end_matches([';', '；']);
                lines.push(tr!("masked ({why}): S = -1e9", why));
            }
            lines.push(tr!(
                "written to s_tile[{off}] = {value} (event #{n}), a tile-local cell",
                off,
                value = num(s_val),
                n = s_write
            ));
            sections.push(Section {
                title: tr!("2. The score, on chip").to_string(),
                lines,
            });
            // the online softmax of row i, key tile by key tile
            let rows = RowUpdate::of_row(trace, at.b, at.h, i0, ii);
            if rows.is_empty() {
                return Err(missing("online softmax of the row"));
            }
            let mut lines = Vec::new();
            // gpt-oss's sink logit: the row starts at m = sink, l = 1 instead of −∞ and 0
            let sink = trace.buffer(Buf::Sink).is_some();
            if sink {
                let m0 = trace.events[rows[0].start].value;
                lines.push(tr!(
                    "the row starts at m = sink[{h}] = {m0}, l = 1: e^(sink − m) = 1 is the sink logit's term of l, with no value in acc",
                    h = at.h,
                    m0 = num(m0)
                ));
            }
            let mut last = (0.0f32, 0.0f32);
            for row in &rows {
                let (m_old, m_new) = row.maxima(trace);
                let l_old = trace.events[row.l_old()].value;
                let l_new = trace.events[row.l_new()].value;
                let k0 = crate::scope::var_at(trace, row.start, names::J0).unwrap_or(0);
                lines.push(tr!(
                    "key tile j0={k0}: m = max({m_old}, rowmax) = {m_new}; l = e^({m_old} − {m_new_p})·{l_old} + rowsum = {l_new}",
                    k0,
                    m_old = num(m_old),
                    m_new = num(m_new),
                    m_new_p = par(m_new),
                    l_old = num(l_old),
                    l_new = num(l_new)
                ));
                if k0 == j0
                    && let Some(c) = cell.p_tilde_calc(trace)
                {
                    let f = c.fit(Digits::Plain);
                    lines.push(tr!(
                        "  here s_tile[{off}] becomes e^(S − m) = e^({s} − {m}) = {p}, folded into acc; it is overwritten by the next tile",
                        off,
                        s = f.val(0),
                        m = f.par(1),
                        p = f.result
                    ));
                }
                last = (m_new, l_new);
            }
            sections.push(Section {
                title: tr!("3. Online softmax of row i, key tile by key tile").to_string(),
                lines,
            });
            let l = last.1;
            let lse_off = (at.b * sh.h + at.h) * sh.s + at.i;
            let lse_write = cell.lse.ok_or_else(|| missing("write of lse"))?;
            let lse = trace.events[lse_write].value;
            let sink_share = sink.then(|| {
                let s = trace.events[rows[0].start].value;
                let f = Calc::new(vec![s, lse], hand::exp(v(0) - v(1)), simd::exp(s - lse)).fit(Digits::Plain);
                tr!(
                    "P_sink = e^(sink − lse) = e^({s} − {lse}) = {p}: the sink's share of the row, which backward recomputes from lse",
                    s = f.val(0),
                    lse = f.par(1),
                    p = f.result
                )
            });
            let lse_chain = cell
                .lse_calc(trace)
                .ok_or_else(|| missing("write of lse"))?
                .fit(Digits::Plain);
            let p = cell
                .p_calc(trace)
                .ok_or_else(|| missing("write of lse"))?
                .fit(Digits::Plain);
            let mut lines = vec![
                tr!(
                    "att[b={b},i={i},h={h},:] = acc / l, l = {l}",
                    b = at.b,
                    i = at.i,
                    h = at.h,
                    l = num(l)
                ),
                tr!(
                    "lse.data[{off}] = m + ln l = {m} + ln {l} = {lse} (event #{n})",
                    off = lse_off,
                    m = lse_chain.val(0),
                    l = lse_chain.val(1),
                    lse = lse_chain.result,
                    n = lse_write
                ),
                tr!(
                    "P = e^(S − lse) = e^({s} − {lse}) = {p}: the probability naive attention stores in probs, never written here",
                    s = p.val(0),
                    lse = p.par(1),
                    p = p.result
                ),
            ];
            lines.extend(sink_share);
            sections.push(Section {
                title: tr!("4. Written once: att and lse").to_string(),
                lines,
            });
        }
        Pass::Backward => {
            let p_write = cell.p_back.ok_or(ExplainError::PassNotRecorded("backward"))?;
            let lse_read = (0..p_write)
                .rev()
                .find(|&n| trace.events[n].buf == Buf::Lse && trace.events[n].op == Op::Read)
                .ok_or_else(|| missing("read of lse"))?;
            let p = trace.events[p_write].value;
            let lse = trace.events[lse_read].value;
            let ds_write = cell.ds.ok_or_else(|| missing("write of ds_tile"))?;
            let dp = cell.d_p(trace).ok_or_else(|| missing("loop frame"))?;
            let delta_read = cell.delta.ok_or_else(|| missing("read of delta"))?;
            let d_i = trace.events[delta_read].value;
            let ds = cell
                .ds_chain(trace, scale)
                .ok_or_else(|| missing("write of ds_tile"))?
                .calc()
                .fit(Digits::Plain);
            sections.push(Section {
                title: tr!("2. P recomputed from lse").to_string(),
                lines: vec![
                    tr!(
                        "P = e^(Σ_d q_tile·k_tile / √{d} − lse) = e^(S − {lse}) = {p} (s_tile[{off}], event #{n})",
                        d,
                        lse = num(lse),
                        p = num(p),
                        off,
                        n = p_write
                    ),
                    tr!("no probability was stored by forward: only lse, one number per row").to_string(),
                ],
            });
            sections.push(Section {
                title: tr!("3. dS = P ⊙ (dP − D_i)").to_string(),
                lines: vec![
                    tr!("dP = Σ_d dO_tile[{ii},d]·v_tile[{jj},d] = {dp}", ii, jj, dp = num(dp)),
                    tr!(
                        "D_i = Σ_d dO[i,d]·O[i,d] = {d_i} (delta, read at event #{n})",
                        d_i = num(d_i),
                        n = delta_read
                    ),
                    tr!(
                        "dS = {p} × ({dp} − {d_i}) = {ds} (ds_tile[{off}], event #{n}); dQ += dS·K/√D in global memory, dK_tile += dSᵀ·Q/√D on chip",
                        p = ds.val(0),
                        dp = ds.val(1),
                        d_i = ds.par(2),
                        ds = ds.result,
                        off,
                        n = ds_write
                    ),
                ],
            });
            if let Some(section) = sink_gradient(trace, sh, at)? {
                sections.push(section);
            }
        }
    }
    Ok(Walkthrough {
        heading: heading(pass),
        sections,
    })
}

/// Backward 3b, with sink logits (gpt-oss): row `i`'s sink share recomputed from `lse`, as
/// `flash_delta` writes it, and the head's `d_sink[h] = −Σ_{b,i} P_sink·D` that `sink_back`
/// sums from it. `None` in a run without sink logits.
fn sink_gradient(trace: &Trace, sh: Shape, at: Element) -> Result<Option<Section>> {
    let write_of = |buf: Buf, off: usize| trace.index.writes(buf, off).first().map(|&n| n as usize);
    let Some(w) = write_of(Buf::DSink, at.h) else {
        return Ok(None);
    };
    let row = (at.b * sh.h + at.h) * sh.s + at.i;
    let p_at = write_of(Buf::PSink, row).ok_or_else(|| missing("write of p_sink"))?;
    // the iteration's reads just before the write: sink[h], then lse of the row
    let share = crate::online_softmax::sink_share_calc(trace, p_at)
        .ok_or_else(|| missing("read of sink"))?
        .fit(Digits::Plain);
    let acc = crate::accum::Accumulation::at(trace, w).ok_or_else(|| missing("the sum of d_sink"))?;
    let place = |n: usize| {
        let v = trace.view(n);
        tr!(
            "event #{n}, {file}:{line}",
            n,
            file = super::text::short(v.file),
            line = v.line
        )
    };
    let mut lines = vec![tr!(
        "P_sink = e^(sink − lse) = e^({s} − {lse}) = {p}: row i's sink share, recomputed from lse in flash_delta (p_sink.data[{off}], {place})",
        s = share.val(0),
        lse = share.par(1),
        p = share.result,
        off = row,
        place = place(p_at)
    )];
    let cell = format!("d_sink.data[{}]", at.h);
    lines.extend(super::plain::sink_sum_lines(trace, &acc, &cell, &place(w)));
    lines.push(
        tr!("the sink carries no value, so its own softmax gradient is P_sink × (0 − D) in every row of the head")
            .to_string(),
    );
    Ok(Some(Section {
        title: tr!("3b. The sink logit's gradient (sink_back)").to_string(),
        lines,
    }))
}

/// [`super::gradient_check`] of flash, which stores neither `P` nor `S` nor their gradients:
/// the pair's `dS`, as flash wrote it into `ds_tile`, beside the finite difference of `L` over
/// the score. `S` itself lives only in `s_tile`, which every tile pair reuses, so it is
/// perturbed where the MHA kernel stores it, `scores`, in an MHA forward pass of the inputs flash
/// ran on: the same function `L` of the same inputs.
pub(super) fn gradient_check(run: &Run, inputs: &Inputs, at: Element) -> Result<Section> {
    let trace = run.trace.as_ref().ok_or(ExplainError::NotTraced)?;
    if !trace.phases.iter().any(|&(_, p)| p == Phase::FlashBack) {
        return Err(ExplainError::PassNotRecorded("backward"));
    }
    let cell = crate::flash_cell::FlashCell::find(trace, at).ok_or_else(|| missing("s_tile buffer"))?;
    // flash runs no dropout, mistakes or decoding: the inputs as it read them
    let inputs = inputs.for_variant(Variant::Flash);
    let registry = Registry::new(&inputs.plan(), Variant::Mha, Passes::FORWARD);
    let scores = registry.layout(Buf::Scores).ok_or_else(|| missing("scores buffer"))?;
    let off = at
        .offset(scores)
        .ok_or_else(|| missing("the element in the scores layout"))?;
    // the step depends on |S| (see gradcheck::step; a masked −1e9 needs a larger one): S as
    // flash's forward pass wrote it, or, for a pair of a tile flash skips, the value MHA's
    // mask writes
    let value = match cell.score {
        Some(n) => trace.events[n].value,
        None if inputs.mask.hides(at.i, at.j) => MASKED,
        None => 0.0,
    };
    let analytic = cell.ds.map_or(0.0, |n| trace.events[n].value);
    let check = gradcheck::check(
        &inputs,
        Variant::Mha,
        Buf::DScores,
        off,
        value,
        analytic,
        scores.label(off),
    );
    let mut lines = Vec::new();
    match (check, cell.ds) {
        (Ok(c), Some(ds)) => {
            let rel = c.rel_err();
            lines.push(tr!(
                "flash never stores S: it is perturbed in scores[{off}] of an MHA forward pass of the same inputs, \
                 which computes the same L; the gradient is flash's dS from the log",
                off
            ));
            lines.push(tr!(
                "finite difference ∂L/∂{primal}[{off}] = {numeric} · flash dS = ds_tile[{tile}] = {analytic} (event #{n}) · \
                 relative error {rel}, {verdict}",
                primal = c.primal,
                off,
                numeric = sci(c.numeric),
                tile = cell.spot.off,
                analytic = sci(c.analytic as f64),
                n = ds,
                rel = if rel == 0.0 { "0".to_string() } else { format!("{rel:.1e}") },
                verdict = c.verdict()
            ));
            lines.push(format!("  {}", c.perturbed()));
        }
        // the mask hides the pair's whole tile: flash skips it and computes no dS
        (Ok(c), None) => {
            lines.push(tr!(
                "finite difference ∂L/∂{primal}[{off}] = {numeric} in an MHA forward pass of the same inputs: \
                 flash skips the pair's tile and writes no dS to compare it with",
                primal = c.primal,
                off,
                numeric = sci(c.numeric)
            ));
            lines.push(format!("  {}", c.perturbed()));
        }
        (Err(e), _) => lines.push(tr!(
            "{grad}[{off}]: no finite difference: {e}",
            grad = Buf::DScores,
            off,
            e
        )),
    }
    // after "1. The tiles" and "2. Skipped" when flash has no score for the pair
    let title = if cell.score.is_some() {
        tr!("4. Checked by finite differences (L = Σ out ⊙ d_out)")
    } else {
        tr!("3. Checked by finite differences (L = Σ out ⊙ d_out)")
    };
    Ok(Section {
        title: title.to_string(),
        lines,
    })
}
