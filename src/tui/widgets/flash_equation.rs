//! The equation panel in flash's loops (`attention_flash.rs`): which step of the tiled
//! algorithm the cursor is in, with the numbers the log holds so far substituted. The online
//! softmax of a row reads, in order, `m_old`, the score tile's row (its maximum), the row again
//! (each `e^(S − m_new)` written in place), `l_old`, then writes `l_new` and `m_new`; the
//! accumulator's update follows, one channel at a time. Every number here is a value an event
//! of the current loop iteration read or wrote.

use super::Ctx;
use attn_trace_analysis::accum::{Accumulation, Scale, term_factors};
use attn_trace_analysis::format::four;
use attn_trace_analysis::hand::Digits;
use attn_trace_analysis::online_softmax::{RowUpdate, WriteBack, alpha, sink_share_calc};
use attn_trace_analysis::scope;
use attn_trace_core::kernels::names;
use attn_trace_core::trace::{Buf, Op, Phase};
use attn_trace_i18n::tr;
use ratatui::text::{Line, Span};

fn var(ctx: &Ctx, name: &str) -> Option<usize> {
    scope::var(&ctx.view, name)
}

/// The step of flash's loops the cursor is in: its equation, then its numbers.
pub(crate) fn lines<'a>(ctx: &Ctx) -> Vec<Line<'a>> {
    let (step, numbers) = parts(ctx);
    let mut out: Vec<Line> = step.iter().map(|m| Line::styled(*m, ctx.theme.title())).collect();
    out.extend(numbers);
    out
}

/// How many of [`lines`] are the step's equation (the rest are its numbers): what a short panel
/// gives up first.
pub(crate) fn step_lines(ctx: &Ctx) -> usize {
    parts(ctx).0.len()
}

fn parts<'a>(ctx: &Ctx) -> (Vec<&'static str>, Vec<Line<'a>>) {
    let tr = ctx.trace;
    let n = ctx.cursor;
    if let Some(s) = Accumulation::at(tr, n) {
        (vec![sum_step(ctx, tr.events[s.write].buf)], sum_lines(ctx, &s))
    } else if let Some(row) = RowUpdate::at(tr, n) {
        (
            vec![
                tr!("online softmax: m_new = max(m_old, rowmax(S_tile))"),
                "P_tile = e^(S_tile − m_new)   l_new = e^(m_old − m_new)·l_old + rowsum(P_tile)",
            ],
            softmax_lines(ctx, &row),
        )
    } else {
        (vec![single_step(ctx)], single_lines(ctx))
    }
}

/// The equation a sum of products computes.
fn sum_step(ctx: &Ctx, target: Buf) -> &'static str {
    match (target, ctx.view.phase) {
        (Buf::STile, Phase::Flash) => "S_tile = Q_tile·K_tileᵀ / √D + mask",
        (Buf::STile, _) => tr!("P_tile = e^(Q_tile·K_tileᵀ/√D − lse)   (recomputed, never stored)"),
        (Buf::Acc, _) => "acc_new = e^(m_old − m_new)·acc_old + P_tile·V_tile",
        (Buf::Delta, _) => tr!("D_i = Σ_d dO[i,d]·O[i,d]   (O = att, dO = d_att)"),
        (Buf::DVTile, _) => "dV_tile += P_tileᵀ·dO_tile",
        (Buf::DSTile, _) => "dS_tile = P_tile ⊙ (dP − D_i),  dP = dO_tile·V_tileᵀ",
        (Buf::DQ, _) => tr!("dQ += dS_tile·K_tile / √D   (added in global memory)"),
        _ => "dK_tile += dS_tileᵀ·Q_tile / √D",
    }
}

/// The equation of a load, a start value or a write-back.
fn single_step(ctx: &Ctx) -> &'static str {
    let v = &ctx.view;
    // gpt-oss's sink logit: each row starts at m = sink, l = e^(sink − sink) = 1
    let sink = ctx.trace.buffer(Buf::Sink).is_some();
    match (v.phase, v.buf, v.op) {
        (Phase::Flash, Buf::Q | Buf::QTile | Buf::Sink, _)
        | (Phase::Flash, Buf::Acc | Buf::RowMax | Buf::RowSum, Op::Write)
            if sink =>
        {
            tr!("Q_tile ← q rows i0..i1 (global → tile);  m = sink, l = 1 (the sink's own term), acc = 0")
        }
        (Phase::Flash, Buf::Q | Buf::QTile, _) | (Phase::Flash, Buf::Acc | Buf::RowMax | Buf::RowSum, Op::Write) => {
            tr!("Q_tile ← q rows i0..i1 (global → tile);  m = −∞, l = 0, acc = 0")
        }
        (Phase::FlashDelta, ..) if sink => "D_i = Σ_d dO[i,d]·O[i,d]   dQ = 0   P_sink = e^(sink − lse_i)",
        (Phase::Flash, Buf::K | Buf::V | Buf::KTile | Buf::VTile, _) => {
            tr!("K_tile, V_tile ← k, v rows j0..j1 (global → tile)")
        }
        (Phase::Flash, ..) => tr!("att = acc / l   lse = m + ln l   (written once per query tile)"),
        (Phase::FlashDelta, ..) => "D_i = Σ_d dO[i,d]·O[i,d]   dQ = 0",
        (_, Buf::Q | Buf::QTile | Buf::DAtt | Buf::DOTile, _) => {
            tr!("Q_tile, dO_tile ← q, d_att rows i0..i1 (global → tile)")
        }
        (_, Buf::DK | Buf::DV, _) | (_, Buf::DKTile | Buf::DVTile, Op::Read) => {
            tr!("dK, dV ← dK_tile, dV_tile   (once per key tile)")
        }
        (_, Buf::Lse, _) => "P_tile = e^(Q_tile·K_tileᵀ/√D − lse)",
        (_, Buf::Delta, _) => "dS_tile = P_tile ⊙ (dP − D_i)",
        _ => tr!("K_tile, V_tile ← k, v rows j0..j1 (global → tile);  dK_tile = dV_tile = 0"),
    }
}

fn sum_lines<'a>(ctx: &Ctx, s: &Accumulation) -> Vec<Line<'a>> {
    let t = ctx.theme;
    let tr = ctx.trace;
    let n = ctx.cursor;
    let v = &ctx.view;
    let mut out = Vec::new();
    let target = tr.events[s.write].buf;
    let done = s.done();
    let waiting = s.waiting();
    // reads of the summing iteration itself, up to the cursor: acc_old, dv_tile_old, dS's P
    let constants: Vec<(Buf, usize, f32)> = s
        .inits
        .iter()
        .filter(|&&k| k <= n)
        .map(|&k| (tr.events[k].buf, tr.events[k].offset as usize, tr.events[k].value))
        .collect();
    // the term the cursor reads, with its factors
    let ev = tr.events[n];
    if ev.op == Op::Read && ev.frame != s.frame {
        let k = done + usize::from(waiting);
        if let Some(term) = s.terms.get(k.saturating_sub(1)) {
            // only the factors read so far
            let read: Vec<usize> = term.reads.iter().copied().filter(|&r| r <= n).collect();
            // with an open question on the write, the last term's product is a step of its answer
            let (names, values, product) = term_factors(tr, &read, !waiting && ctx.shows(s.write), Digits::Four);
            let mut spans = vec![Span::raw(format!("term {k}/{}: {names} = {values}", s.terms.len()))];
            match product {
                Some(p) => {
                    spans.push(Span::raw(" = "));
                    spans.push(Span::styled(p, t.number()));
                }
                None if waiting => spans.push(Span::styled("  (next factor follows)", t.dim())),
                None => {}
            }
            out.push(Line::from(spans));
        }
    }
    let sigma = s.sigma(tr);
    // with an open question on the write, a sum whose every term is in is its answer or one
    // printed operation from it (rescaled and added, scaled, turned into dS): held back
    let held = done == s.terms.len() && !ctx.shows(s.write);
    let of = format!("({} of {} terms)", done, s.terms.len());
    let written = v.op == Op::Write;
    let scale = Scale::in_trace(tr, ctx.variant, ctx.traced.shape);
    // the write's chain, from the log: shown at the write
    let chain = s.will(tr, scale).filter(|_| written);
    match target {
        Buf::Acc => {
            // acc_new = e^(m_old − m_new)·acc_old + Σ_jj P·V
            let row = RowUpdate::at(tr, n);
            let (m_old, m_new) = row.map_or((0.0, 0.0), |r| r.maxima(tr));
            let a = alpha(m_old, m_new);
            let old = constants.first().map_or(0.0, |c| c.2);
            if let Some(r) = row {
                let f = r.alpha_calc(tr).fit(Digits::Four);
                out.push(Line::from(format!(
                    "rescale: e^(m_old − m_new) = e^({} − {}) = {}; acc_old = {}",
                    f.val(0),
                    f.par(1),
                    f.result,
                    four(old)
                )));
            }
            let partial_sum = if held { "?".to_string() } else { four(a * old + sigma) };
            out.push(Line::from(vec![
                Span::raw(format!("partial sum e^(m_old − m_new)·acc + Σ_jj P·V {of} = ")),
                Span::styled(partial_sum, t.number()),
            ]));
            if let Some(c) = chain {
                let f = c.calc().fit(Digits::Four);
                out.push(Line::from(Span::styled(
                    format!(
                        "{}[{}] = e^({} − {})·{} + {} = {}",
                        v.buf,
                        v.offset,
                        f.val(0),
                        f.par(1),
                        f.par(2),
                        f.par(3),
                        f.result
                    ),
                    t.op_write(),
                )));
                return out;
            }
        }
        Buf::DVTile => {
            let old = constants.first().map_or(0.0, |c| c.2);
            out.push(Line::from(format!("dv_tile_old = {}", four(old))));
            out.push(partial(
                ctx,
                &format!("partial sum dv_tile + Σ_ii P·dO {of} = "),
                if held { None } else { Some(old + sigma) },
            ));
            if let Some(c) = chain {
                let f = c.calc().fit(Digits::Four);
                out.push(Line::from(Span::styled(
                    format!("{}[{}] = {} + {} = {}", v.buf, v.offset, f.val(0), f.par(1), f.result),
                    t.op_write(),
                )));
                return out;
            }
        }
        Buf::DSTile => {
            // dS = P ⊙ (dP − D_i): the dot product is dP; P is read after it
            out.push(partial(
                ctx,
                &format!("partial sum dP = Σ_d dO·V {of} = "),
                (!held).then_some(sigma),
            ));
            if !constants.is_empty()
                && let Some(c) = s.will(tr, scale)
            {
                let f = c.calc().fit(Digits::Four);
                let dp = if held { "dP".to_string() } else { f.val(1) };
                let mut spans = vec![Span::raw(format!(
                    "dS = P · (dP − D_i) = {} × ({dp} − {}) = ",
                    f.val(0),
                    f.par(2)
                ))];
                spans.extend(result(ctx, s.write, f.result));
                out.push(Line::from(spans));
            }
        }
        Buf::DQ | Buf::DKTile => {
            let what = if target == Buf::DQ {
                "Σ_jj dS·K"
            } else {
                "Σ_ii dS·Q"
            };
            out.push(partial(
                ctx,
                &format!("partial sum {what} {of} = "),
                (!held).then_some(sigma),
            ));
            if let Some(&(b, o, _)) = constants.first()
                && done == s.terms.len()
                && let Some(c) = s.will(tr, scale)
            {
                let f = c.calc().fit(Digits::Four);
                let sum = if held { "Σ".to_string() } else { f.val(1) };
                let mut spans = vec![Span::raw(format!(
                    "{b}[{o}] += Σ × 1/√{d}: {} + ({sum} × {}) = ",
                    f.val(0),
                    scale.written(),
                    d = scale.width
                ))];
                spans.extend(result(ctx, s.write, f.result));
                out.push(Line::from(spans));
            }
        }
        Buf::STile => {
            out.push(partial(
                ctx,
                &format!("partial sum Σ_d Q_tile·K_tile {of} = "),
                (!held).then_some(sigma),
            ));
            if written {
                out.push(score_write(ctx, s, scale));
            }
        }
        _ => {
            out.push(partial(
                ctx,
                &format!("partial sum D_i = Σ_d dO·O {of} = "),
                if held { None } else { Some(sigma) },
            ));
        }
    }
    if written && !matches!(target, Buf::STile | Buf::DSTile | Buf::DQ | Buf::DKTile) {
        out.push(Line::from(Span::styled(
            format!("{}[{}] = {}", v.buf, v.offset, four(v.value)),
            t.op_write(),
        )));
    }
    out
}

/// ` = result`, or `?` while an open question asks for it ([`Ctx::shows`]).
fn result<'a>(ctx: &Ctx, n: usize, text: String) -> Vec<Span<'a>> {
    vec![Span::styled(
        if ctx.shows(n) { text } else { "?".to_string() },
        ctx.theme.number(),
    )]
}

fn partial<'a>(ctx: &Ctx, text: &str, value: Option<f32>) -> Line<'a> {
    Line::from(vec![
        Span::raw(text.to_string()),
        Span::styled(value.map_or("?".to_string(), four), ctx.theme.number()),
    ])
}

/// A score of the tile written: forward scales it (or hides it), backward turns it into P.
fn score_write<'a>(ctx: &Ctx, s: &Accumulation, scale: Scale) -> Line<'a> {
    let t = ctx.theme;
    let v = &ctx.view;
    let tr = ctx.trace;
    let (i, j) = (
        var(ctx, names::I0).unwrap_or(0) + var(ctx, names::II).unwrap_or(0),
        var(ctx, names::J0).unwrap_or(0) + var(ctx, names::JJ).unwrap_or(0),
    );
    let hidden = ctx.traced.mask.hides(i, j);
    let target = format!("{}[{}] (i={i}, j={j})", v.buf, v.offset);
    let (d, sc) = (scale.width, scale.written());
    let text = match (v.phase, hidden, s.will(tr, scale)) {
        (Phase::Flash, true, _) => format!(
            "masked ({}): {target} = −1e9, the dot product {} is discarded",
            attn_trace_analysis::format::hidden_because(&ctx.traced.mask, i, j),
            four(s.sigma(tr))
        ),
        (Phase::Flash, false, Some(c)) => {
            let f = c.calc().fit(Digits::Four);
            format!("S: {target} = Σ × 1/√{d} = {} × {sc} = {}", f.val(0), f.result)
        }
        (_, true, _) => format!("masked: P = {target} = e^(−1e9 − lse) = {}", four(v.value)),
        (_, false, Some(c)) => {
            let f = c.calc().fit(Digits::Four);
            format!(
                "P recomputed: {target} = e^(Σ × 1/√{d} − lse) = e^({} × {sc} − {}) = {}",
                f.val(0),
                f.par(1),
                f.result
            )
        }
        (_, false, None) => format!("{target} = {}", four(v.value)),
    };
    Line::from(Span::styled(text, t.op_write()))
}

/// The online softmax of one row ([`RowUpdate`]): the step the cursor is in, with `m_old`, the
/// scores, `m_new`, `l_old`, `l_new` as the log has them.
fn softmax_lines<'a>(ctx: &Ctx, row: &RowUpdate) -> Vec<Line<'a>> {
    let t = ctx.theme;
    let tr = ctx.trace;
    let n = ctx.cursor;
    let (start, nc) = (row.start, row.nc);
    let p = n - start;
    let (m_old, m_new) = row.maxima(tr);
    let scores = row.scores(tr);
    let list = |vals: &[f32]| vals.iter().map(|&v| four(v)).collect::<Vec<_>>().join(", ");
    let mut out = Vec::new();
    if p <= nc {
        // m_old, then the row maximum so far
        let seen = &scores[..p];
        let so_far = seen.iter().copied().fold(m_old, f32::max);
        out.push(Line::from(vec![
            Span::raw(format!(
                "m_new = max(m_old, rowmax(S_tile)) = max({}, {}) so far = ",
                four(m_old),
                if seen.is_empty() { "…".to_string() } else { list(seen) }
            )),
            Span::styled(four(so_far), t.number()),
        ]));
        return out;
    }
    out.push(Line::from(format!(
        "m_new = max(m_old, rowmax(S_tile)) = max({}, {}) = {}",
        four(m_old),
        list(&scores),
        four(m_new)
    )));
    // the exponentials, written in place of the scores
    let written = (0..nc).filter(|&k| row.p(k) <= n).count();
    if n < row.l_old() {
        let jj = var(ctx, names::JJ).unwrap_or(0).min(nc.saturating_sub(1));
        let f = row.p_calc(tr, jj).fit(Digits::Four);
        let mut spans = vec![Span::raw(format!(
            "P_tile[ii, {jj}] = e^(S − m_new) = e^({} − {}) = ",
            f.val(0),
            f.par(1)
        ))];
        spans.extend(result(ctx, row.p(jj), f.result));
        out.push(Line::from(spans));
        out.push(Line::from(format!(
            "rowsum(P_tile) so far ({written} of {nc}) = {}",
            four(row.rowsum_of(tr, written))
        )));
        return out;
    }
    let f = row.l_calc(tr).fit(Digits::Four);
    if !ctx.shows(row.l_new()) {
        // an open question on l_new: its operands, without the rowsum it adds (a step of the
        // answer)
        out.push(Line::from(format!(
            "l_new = e^(m_old − m_new)·l_old + rowsum(P_tile) = e^({} − {})·{} + rowsum(P_tile)",
            f.val(0),
            f.par(1),
            f.val(2)
        )));
        return out;
    }
    let mut spans = vec![Span::raw(format!(
        "l_new = e^(m_old − m_new)·l_old + rowsum(P_tile) = e^({} − {})·{} + {} = {} × {} + {} = ",
        f.val(0),
        f.par(1),
        f.val(2),
        f.par(3),
        f.val(4),
        f.val(2),
        f.par(3)
    ))];
    spans.extend(result(ctx, row.l_new(), f.result));
    out.push(Line::from(spans));
    if n >= row.m_new() {
        out.push(Line::from(format!("m = m_new = {}", four(m_new))));
    }
    out
}

/// Loads, initial values, the output tile's write-back and backward's row reads.
fn single_lines<'a>(ctx: &Ctx) -> Vec<Line<'a>> {
    let t = ctx.theme;
    let tr = ctx.trace;
    let v = &ctx.view;
    let n = ctx.cursor;
    let e = tr.events[n];
    let level = |b: Buf| tr.level(b).name();
    // the event before in the same iteration: the global read a tile write copies
    let before = n
        .checked_sub(1)
        .map(|k| tr.events[k])
        .filter(|p| p.frame == e.frame && p.op == Op::Read);
    let text = match (e.op, e.buf) {
        (Op::Write, Buf::RowMax) if before.is_some_and(|b| b.buf == Buf::Sink) => tr!(
            "m[{off}] = sink = {m}: the row starts at its sink logit",
            off = v.offset,
            m = four(e.value)
        ),
        (Op::Write, Buf::RowSum) if tr.buffer(Buf::Sink).is_some() && v.phase == Phase::Flash && e.value == 1.0 => tr!(
            "l[{off}] = 1 = e^(sink − m): the sink's term of the row's sum, with no value in acc",
            off = v.offset
        ),
        (Op::Write, Buf::PSink) => match sink_share_calc(tr, n) {
            Some(c) => {
                let f = c.fit(Digits::Four);
                format!(
                    "p_sink[{}] = e^(sink − lse) = e^({} − {}) = {}",
                    v.offset,
                    f.val(0),
                    f.par(1),
                    f.result
                )
            }
            None => format!("p_sink[{}] = {}", v.offset, four(e.value)),
        },
        (Op::Read, Buf::Sink) => tr!(
            "sink[{off}] = {value}: this head's sink logit (gpt-oss)",
            off = v.offset,
            value = four(e.value)
        ),
        (Op::Write, Buf::RowMax) => format!("m[{}] = −∞: no score of this row seen yet", v.offset),
        (Op::Write, Buf::RowSum | Buf::Acc | Buf::DKTile | Buf::DVTile) if e.value == 0.0 => {
            format!("{}[{}] = 0: starts empty", v.buf, v.offset)
        }
        (Op::Write, Buf::DQ) => format!("d_q[{}] = 0: dQ starts at 0, every key tile adds its part", v.offset),
        (Op::Write, Buf::Att) => match WriteBack::at(tr, n).and_then(|w| w.att_calc(tr, n)) {
            Some(c) => {
                let f = c.fit(Digits::Four);
                format!(
                    "att[{}] = acc / l = {} / {} = {}",
                    v.offset,
                    f.val(0),
                    f.val(1),
                    f.result
                )
            }
            None => format!("att[{}] = {}", v.offset, four(e.value)),
        },
        (Op::Write, Buf::Lse) => match WriteBack::at(tr, n) {
            Some(w) => {
                let f = w.lse_calc(tr).fit(Digits::Four);
                format!(
                    "lse[{}] = m + ln l = {} + ln {} = {}",
                    v.offset,
                    f.val(0),
                    f.val(1),
                    f.result
                )
            }
            None => format!("lse[{}] = {}", v.offset, four(e.value)),
        },
        (Op::Write, dst) => match before {
            Some(src) => format!(
                "{}[{}] ({}) ← {}[{}] ({}) = {}",
                dst,
                v.offset,
                level(dst),
                src.buf,
                src.offset,
                level(src.buf),
                four(e.value)
            ),
            None => format!("{}[{}] = {}", dst, v.offset, four(e.value)),
        },
        (Op::Read, Buf::Lse) => format!(
            "lse[{}] = {}: this row's log-sum-exp, saved by forward",
            v.offset,
            four(e.value)
        ),
        (Op::Read, Buf::Delta) => format!("D_i = delta[{}] = {}", v.offset, four(e.value)),
        (Op::Read, b) => format!("read {}[{}] ({}) = {}", b, v.offset, level(b), four(e.value)),
    };
    vec![Line::from(Span::styled(
        text,
        if e.op == Op::Write { t.op_write() } else { t.base() },
    ))]
}
