//! The equation panel: the math of the current phase in Unicode, then the current term's
//! numbers and the running partial sum, read from the log (only the current iteration's events).
#![allow(non_snake_case)]

mod softmax;

use softmax::softmax_lines;

use super::Ctx;
use attn_trace_analysis::accum::{Accumulation, Chain, Scale, term_factors};
use attn_trace_analysis::format::{exact, four, hidden_because, phase_title_of};
use attn_trace_analysis::hand::{self, Calc, Digits};
use attn_trace_analysis::rope_pair::RopePair;
use attn_trace_analysis::scope;
use attn_trace_core::kernels::Variant;
use attn_trace_core::kernels::names;
use attn_trace_core::trace::{Buf, Op, Phase};
use attn_trace_i18n::{msg, tr};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// The equations of a phase as the docs write them (`_h` marks a per-head quantity).
pub(crate) fn math(phase: Phase, variant: Variant) -> &'static [&'static str] {
    // the phases the variant writes its own way (grouped heads, a latent), from its descriptor
    if let Some(m) = variant.math(phase) {
        return m;
    }
    let mha = variant.has_heads();
    match (phase, mha) {
        (Phase::QkvProj, _) => &["qkv[i] = x[i]·W_qkv + b_qkv"],
        (Phase::QProj, _) => &["q[i] = x[i]·W_q + b_q"],
        (Phase::KProj, _) => &[msg!("k[j] = m[j]·W_k + b_k   (m = memory in cross-attention, else x)")],
        (Phase::VProj, _) => &[msg!("v[j] = m[j]·W_v + b_v   (m = memory in cross-attention, else x)")],
        (Phase::NoProj, _) => &[msg!(
            "mistake: q = k = v = x, with no W_q, W_k, W_v to learn what to look for"
        )],
        (Phase::Dropout, _) => &["P'[i,j] = P[i,j] · keep[i,j] / (1 − p)"],
        (Phase::DropoutBack, _) => &["dP[i,j] = dP'[i,j] · keep[i,j] / (1 − p)"],
        (Phase::QProjBack, _) => &["dx += dq·W_qᵀ   dW_q = xᵀ·dq   db_q = Σ_i dq[i]"],
        (Phase::KProjBack, _) => &["dm += dk·W_kᵀ   dW_k = mᵀ·dk   db_k = Σ_j dk[j]"],
        (Phase::VProjBack, _) => &["dm = dv·W_vᵀ   dW_v = mᵀ·dv   db_v = Σ_j dv[j]"],
        (Phase::Split, _) => &["q[i] = qkv[i, 0:C]   k[i] = qkv[i, C:2C]   v[i] = qkv[i, 2C:3C]"],
        (Phase::Scores, false) => &["S[i,j] = Q[i]·K[j] / √C + mask(i,j)"],
        (Phase::Scores, true) => &["S_h[i,j] = Q_h[i]·K_h[j] / √D + mask(i,j)"],
        (Phase::Softmax, false) => &["P[i,j] = exp(S[i,j] − m_i) / Σ_k exp(S[i,k] − m_i),  m_i = max_k S[i,k]"],
        (Phase::Softmax, true) => &["P_h[i,j] = exp(S_h[i,j] − m) / Σ_k exp(S_h[i,k] − m),  m = max_k S_h[i,k]"],
        (Phase::WeightedSum, false) => &["Y[i] = Σ_j P[i,j] V[j]"],
        (Phase::WeightedSum, true) => &["Y_h[i] = Σ_j P_h[i,j] V_h[j]   (att[i] = concat_h Y_h[i])"],
        (Phase::OutProj, _) => &["out[i] = att[i]·W_proj + b_proj"],
        (Phase::OutProjBack, _) => &["dAtt = dOut·W_projᵀ   dW_proj = attᵀ·dOut   db_proj = Σ_i dOut[i]"],
        (Phase::WeightedSumBack, false) => &["dP[i,j] = dY[i]·V[j]   dV[j] = Σ_i P[i,j] dY[i]"],
        (Phase::WeightedSumBack, true) => &["dP_h[i,j] = dY_h[i]·V_h[j]   dV_h[j] = Σ_i P_h[i,j] dY_h[i]"],
        (Phase::SoftmaxBack, false) => &["dS[i,j] = P[i,j] (dP[i,j] − Σ_k dP[i,k] P[i,k])"],
        (Phase::SoftmaxBack, true) => &["dS_h[i,j] = P_h[i,j] (dP_h[i,j] − Σ_k dP_h[i,k] P_h[i,k])"],
        (Phase::SinkBack, _) => &["d_sink[h] = −Σ_{b,i} P_sink[b,h,i] · D[b,h,i],  D[b,h,i] = Σ_j dP[i,j] P[i,j]"],
        (Phase::ScoresBack, false) => &[msg!(
            "dQ[i] = Σ_j dS[i,j] K[j] / √C   dK[j] = Σ_i dS[i,j] Q[i] / √C   (visible pairs only)"
        )],
        (Phase::ScoresBack, true) => &[msg!(
            "dQ_h[i] = Σ_j dS_h[i,j] K_h[j] / √D   dK_h[j] = Σ_i dS_h[i,j] Q_h[i] / √D   (visible pairs only)"
        )],
        (Phase::SplitBack, _) => &["d_qkv[i] = concat(dq[i], dk[i], dv[i])"],
        (Phase::QkvProjBack, _) => &["dx = d_qkv·W_qkvᵀ   dW_qkv = xᵀ·d_qkv   db_qkv = Σ_i d_qkv[i]"],
        (Phase::Flash, _) => &[
            "S_tile = Q_tile·K_tileᵀ / √D + mask   m_new = max(m_old, rowmax(S_tile))",
            "P_tile = e^(S_tile − m_new)   l_new = e^(m_old − m_new)·l_old + rowsum(P_tile)",
            "acc_new = e^(m_old − m_new)·acc_old + P_tile·V_tile   att = acc / l   lse = m + ln l",
        ],
        (Phase::FlashDelta, _) => &["D_i = Σ_d dAtt[i,d]·att[i,d]   (= Σ_j dP[i,j]·P[i,j])   dQ = 0"],
        (Phase::FlashBack, _) => &[
            "P_tile = e^(Q_tile·K_tileᵀ/√D − lse)   dV_tile += P_tileᵀ·dO_tile",
            "dS_tile = P_tile ⊙ (dO_tile·V_tileᵀ − D_i)   dQ += dS_tile·K_tile/√D   dK_tile += dS_tileᵀ·Q_tile/√D",
        ],
        (Phase::Rope, _) => &[
            "q'[d0] = q[d0]·cos(tθ_m) − q[d1]·sin(tθ_m)   q'[d1] = q[d0]·sin(tθ_m) + q[d1]·cos(tθ_m)",
            msg!("θ_m = base^(−2m/D), for q and for k"),
        ],
        (Phase::RopeBack, _) => &[
            "d_q'[d0] = d_q[d0]·cos(tθ_m) + d_q[d1]·sin(tθ_m)   d_q'[d1] = −d_q[d0]·sin(tθ_m) + d_q[d1]·cos(tθ_m)",
            msg!("the turn by −tθ_m, for dQ and for dK"),
        ],
        (Phase::DecodeQkv, _) => &["qkv[t] = x[t]·W_qkv + b_qkv → q[t], k_cache[t], v_cache[t]"],
        (Phase::DecodeScores, false) => &["S[t,j] = Q[t]·K_cache[j] / √C,  j ≤ t cached and seen"],
        (Phase::DecodeScores, true) => {
            &["S_h[t,j] = Q_h[t]·K_cache,g[j] / √D,  j ≤ t cached and seen,  g = h/(H/H_kv)"]
        }
        (Phase::DecodeSoftmax, _) => &["P[t,j] = exp(S[t,j] − m) / Σ_k exp(S[t,k] − m),  j, k ≤ t seen"],
        (Phase::DecodeSum, false) => &["att[t] = Σ_j P[t,j] V_cache[j],  j ≤ t seen"],
        (Phase::DecodeSum, true) => &["Y_h[t] = Σ_j P_h[t,j] V_cache,g[j],  j ≤ t seen,  g = h/(H/H_kv)"],
        (Phase::DecodePartSoftmax, _) => &[
            "P_p[t,j] = exp(S[t,j] − m_p) / Σ_{k in p} exp(S[t,k] − m_p),  j in part p",
            "lse_part[p] = m_p + ln Σ_{k in p} exp(S[t,k] − m_p)",
        ],
        (Phase::DecodePartSum, _) => &["o_part[p] = Σ_{j in p} P_p[t,j] V_cache[j]"],
        (Phase::DecodeMergeWeights, _) => &["w_part[p] = exp(lse_part[p] − max) / Σ_q exp(lse_part[q] − max)"],
        (Phase::DecodeMerge, _) => &["att[t] = Σ_p w_part[p]·o_part[p]"],
        (Phase::DecodeOut, _) => &["out[t] = att[t]·W_proj + b_proj"],
        (Phase::MlaQProj, _) => &[msg!("q[i] = x[i]·W_q = [q_nope_h | q_pe_h] per head")],
        (Phase::LatentProj, _) => &[msg!("c_kv[j] = x[j]·W_dkv   (R channels for every head)")],
        (Phase::KPeProj, _) => &[msg!(
            "k_pe[j] = x[j]·W_kr   (DR channels, one rotary key for every head)"
        )],
        (Phase::KUp, _) => &["k_nope[j] = c_kv[j]·W_uk"],
        (Phase::VUp, _) => &["v[j] = c_kv[j]·W_uv"],
        (Phase::VUpBack, _) => &["d_c_kv = dv·W_uvᵀ   dW_uv = c_kvᵀ·dv"],
        (Phase::KUpBack, _) => &["d_c_kv += dk_nope·W_ukᵀ   dW_uk = c_kvᵀ·dk_nope"],
        (Phase::KPeProjBack, _) => &["dx = dk_pe·W_krᵀ   dW_kr = xᵀ·dk_pe"],
        (Phase::LatentProjBack, _) => &["dx += d_c_kv·W_dkvᵀ   dW_dkv = xᵀ·d_c_kv"],
        (Phase::MlaQProjBack, _) => &["dx += dq·W_qᵀ   dW_q = xᵀ·dq"],
        (Phase::DecodeLatent, _) => &["kv_cache[t] = [c_kv | k_pe] = x[t]·[W_dkv | W_kr]"],
        (Phase::DecodeQ, _) => &[msg!("q[t] = x[t]·W_q = [q_nope_h | q_pe_h] per head")],
        (Phase::DecodeAbsorb, _) => &[msg!(
            "q_lat_h[t] = q_nope_h[t]·W_uk,hᵀ   (so q_lat·c_kv = q_nope·k_nope)"
        )],
        (Phase::DecodeLatentSum, _) => &["o_lat_h[t] = Σ_{j ≤ t} P_h[t,j] c_kv[j]"],
        (Phase::DecodeUp, _) => &["Y_h[t] = o_lat_h[t]·W_uv,h   (= Σ_j P_h[t,j] v_h[j])"],
    }
}

/// The softmax with a sink logit per head (gpt-oss): the sink joins the denominator and the
/// maximum, and carries no value.
pub(crate) const SINK_MATH: &[&str] = &[
    "P[i,j] = exp(S[i,j] − m) / Z,  P_sink = exp(sink_h − m) / Z = 1 − Σ_j P[i,j]",
    "Z = exp(sink_h − m) + Σ_k exp(S[i,k] − m),  m = max(sink_h, max_k S[i,k])",
];

pub(crate) fn lines<'a>(ctx: &Ctx) -> Vec<Line<'a>> {
    let t = ctx.theme;
    let v = &ctx.view;
    // flash's phases are one loop nest each: the equation of the step the cursor is in
    if matches!(v.phase, Phase::Flash | Phase::FlashDelta | Phase::FlashBack) {
        return super::flash_equation::lines(ctx);
    }
    let mut out: Vec<Line> = math(v.phase, ctx.variant)
        .iter()
        .map(|m| Line::from(Span::styled(attn_trace_i18n::text(m), t.title())))
        .collect();
    // gpt-oss's sink logit: one more term in every row's denominator, with no value
    if matches!(v.phase, Phase::Softmax) && ctx.trace.buffer(Buf::Sink).is_some() {
        out = SINK_MATH
            .iter()
            .map(|m| Line::from(Span::styled(attn_trace_i18n::text(m), t.title())))
            .collect();
    }
    if v.phase.sums() {
        match Accumulation::at(ctx.trace, ctx.cursor) {
            Some(acc) => out.extend(accum_lines(ctx, &acc)),
            // a start value written before the sums (d_v = 0 before the heads add theirs)
            None => out.push(Line::from(format!(
                "{} {}[{}] = {}",
                attn_trace_analysis::format::op_text(v.op),
                v.buf,
                v.offset,
                four(v.value)
            ))),
        }
    } else if matches!(
        v.phase,
        Phase::Softmax
            | Phase::SoftmaxBack
            | Phase::DecodeSoftmax
            | Phase::DecodePartSoftmax
            | Phase::DecodeMergeWeights
    ) {
        out.extend(softmax_lines(ctx));
    } else if matches!(v.phase, Phase::Rope | Phase::RopeBack) {
        out.extend(rope_lines(ctx));
    } else if matches!(v.phase, Phase::Dropout | Phase::DropoutBack) {
        out.extend(dropout_lines(ctx));
    } else {
        out.push(Line::from(tr!(
            "copy: {op} {buf}[{off}] = {value}",
            op = attn_trace_analysis::format::op_text(v.op),
            buf = v.buf,
            off = v.offset,
            value = attn_trace_analysis::format::num_of(v.buf, v.value)
        )));
    }
    out
}

fn accum_lines<'a>(ctx: &Ctx, acc: &Accumulation) -> Vec<Line<'a>> {
    let t = ctx.theme;
    let v = &ctx.view;
    let trace = ctx.trace;
    let mut out = Vec::new();
    let finished = acc.done();
    let total = acc.terms.len();
    let start = acc.start().map(|k| trace.events[k]);
    if v.op == Op::Read && acc.old(trace) == Some(ctx.cursor) {
        out.push(Line::from(tr!(
            "old value {b}[{o}] = {value}: the sum is added to it",
            b = v.buf,
            o = v.offset,
            value = four(v.value)
        )));
    } else if let Some(k) = acc.current()
        && v.op == Op::Read
        && trace.events[ctx.cursor].frame != acc.frame
    {
        // only the factors read so far: in quiz mode the next one is the learner's to predict
        let read: Vec<usize> = acc.terms[k]
            .reads
            .iter()
            .copied()
            .filter(|&r| r <= ctx.cursor)
            .collect();
        let waiting = acc.waiting();
        let (names, values, product) = term_factors(trace, &read, !waiting, Digits::Exact);
        // with an open question on the write, the last term's product is a step of its answer
        let product = product.filter(|_| ctx.shows(acc.write));
        let number = finished + usize::from(waiting);
        let mut spans = vec![Span::raw(tr!(
            "term {number}/{total}: {names} = {values}",
            number,
            total,
            names,
            values
        ))];
        match product {
            Some(p) => {
                spans.push(Span::raw(" = "));
                spans.push(Span::styled(p, t.number()));
            }
            None if waiting => spans.push(Span::styled(tr!("  (next factor follows)"), t.dim())),
            None => {}
        }
        out.push(Line::from(spans));
    } else if let Some(e) = start
        && finished == 0
    {
        out.push(Line::from(tr!(
            "start from {b}[{o}] = {value}",
            b = e.buf,
            o = e.offset,
            value = exact(e.value)
        )));
    }
    let start = start.map(|e| format!("{}[{}] + ", e.buf, e.offset)).unwrap_or_default();
    // a sum whose every term is in is an open question's answer, or one printed operation
    // from it (the write scales it, adds it to the old value or a bias, negates it)
    let answer = finished == total && !ctx.shows(acc.write);
    out.push(Line::from(vec![
        Span::raw(tr!(
            "partial sum {start}Σ ({finished} of {total} terms) = ",
            start,
            finished,
            total
        )),
        Span::styled(
            if answer {
                "?".to_string()
            } else {
                exact(acc.running(trace))
            },
            t.number(),
        ),
    ]));
    if v.op == Op::Write {
        out.push(write_line(ctx, acc));
    }
    out
}

/// What the write makes of the sum, with the log's numbers: scaled, added to the old value,
/// masked, or stored as is.
fn write_line<'a>(ctx: &Ctx, acc: &Accumulation) -> Line<'a> {
    let t = ctx.theme;
    let v = &ctx.view;
    let trace = ctx.trace;
    let target = format!("{}[{}]", v.buf, v.offset);
    if acc.masked(trace) {
        let (i, j) = (var(v, names::I), var(v, names::J));
        let why = hidden_because(&ctx.traced.mask, i, j);
        let text = tr!(
            "masked ({why}): {target} = −1e9, the dot product {sum} is discarded",
            why,
            target,
            sum = exact(acc.sigma(trace))
        );
        return Line::from(Span::styled(text, t.op_write()));
    }
    let scale = Scale::in_trace(ctx.trace, ctx.variant, ctx.traced.shape);
    let text = match acc.chain(trace, scale) {
        Some(chain) => {
            let f = chain.calc().fit(Digits::Four);
            let sc = |c: &Chain| c.scale.map_or(String::new(), |s| s.written());
            match chain {
                Chain { negated: true, .. } => format!("{target} = −Σ = −({}) = {}", f.val(0), f.result),
                Chain {
                    old: Some(_),
                    scale: Some(s),
                    ..
                } => format!(
                    "{target} += Σ × 1/√{sym}: {} + ({} × {}) = {}",
                    f.val(0),
                    f.val(1),
                    sc(&chain),
                    f.result,
                    sym = s.symbol
                ),
                Chain { old: Some(_), .. } => {
                    format!("{target} += Σ: {} + {} = {}", f.val(0), f.par(1), f.result)
                }
                Chain { scale: Some(s), .. } => format!(
                    "{target} = Σ × 1/√{sym} = {} × {} = {}",
                    f.val(0),
                    sc(&chain),
                    f.result,
                    sym = s.symbol
                ),
                Chain { start: Some(_), .. } => {
                    let from = acc
                        .start()
                        .map(|k| trace.events[k])
                        .map_or(String::new(), |e| format!("{}[{}]", e.buf, e.offset));
                    format!("{target} = {from} + Σ = {} + {} = {}", f.val(0), f.par(1), f.result)
                }
                _ => format!("{target} = Σ = {}", f.result),
            }
        }
        None => format!("{target} = Σ = {}", four(v.value)),
    };
    Line::from(Span::styled(text, t.op_write()))
}

fn var(v: &attn_trace_core::trace::EventView, name: &str) -> usize {
    scope::var(v, name).unwrap_or(0)
}

/// ` = result` when a panel may show it ([`Ctx::shows`]): a result of event `n` or after it is
/// left out while an open question asks for it.
pub(super) fn result_spans<'a>(ctx: &Ctx, n: usize, result: String) -> Vec<Span<'a>> {
    if ctx.shows(n) {
        vec![Span::styled(result, ctx.theme.number())]
    } else {
        vec![Span::styled("?", ctx.theme.number())]
    }
}

/// Dropout multiplies each probability (or its gradient) by its keep flag and 1/(1 − p): the
/// iteration's reads, as the log has them so far, and at the write the product.
fn dropout_lines<'a>(ctx: &Ctx) -> Vec<Line<'a>> {
    let v = &ctx.view;
    let tr = ctx.trace;
    let p = ctx.traced.run(ctx.variant).and_then(|r| r.dropout).map_or(0.0, |d| d.p);
    let Some(f) = tr.frame(tr.events[ctx.cursor].frame) else {
        return Vec::new();
    };
    let (target, source) = match v.phase {
        Phase::Dropout => (Buf::ProbsDrop, Buf::Probs),
        _ => (Buf::DProbs, Buf::DProbsDrop),
    };
    // the iteration reads the keep flag and the value, then writes their product
    let read = |buf: Buf| scope::read_in(tr, f, ctx.cursor, buf).map(|k| tr.events[k].value);
    // p as the scenario gives it; the chain's 1/(1 − p) is that number's, exactly
    let p_text = p.to_string();
    let keep = hand::lit(1.0 / (1.0 - p_text.parse::<f64>().unwrap_or(0.0)));
    let (x, flag) = (read(source), read(Buf::DropMask));
    let shown = |x: Option<f32>| x.map_or("…".to_string(), exact);
    let (a, b, result) = match (x, flag) {
        (Some(x), Some(flag)) if v.op == Op::Write => {
            let f = Calc::new(vec![x, flag], hand::v(0) * hand::v(1) * keep, v.value).fit(Digits::Exact);
            (f.val(0), f.val(1), Some(f.result))
        }
        _ => (shown(x), shown(flag), None),
    };
    let mut spans = vec![Span::raw(format!(
        "{target}[{}] = {source} × keep × 1/(1 − p) = {a} × {b} × 1/(1 − {p_text})",
        v.offset
    ))];
    if let Some(r) = result {
        spans.push(Span::raw(" = "));
        spans.push(Span::styled(r, ctx.theme.number()));
    }
    vec![Line::from(spans)]
}

/// One rotation of a channel pair ([`RopePair`]): the pair and its angle, then cos, sin and
/// the pair's two values as the log has read them, and at each write the value turned.
fn rope_lines<'a>(ctx: &Ctx) -> Vec<Line<'a>> {
    let t = ctx.theme;
    let v = &ctx.view;
    let tr = ctx.trace;
    let Some(pair) = RopePair::at(tr, ctx.cursor) else {
        return Vec::new();
    };
    let shown = |k: usize| k <= ctx.cursor;
    let val = |k: usize| {
        if shown(k) {
            four(tr.events[k].value)
        } else {
            "…".to_string()
        }
    };
    let pos = var(v, names::T);
    let (m, d0, d1) = (pair.m, pair.d0, pair.d1);
    let D = tr.buffer(Buf::RopeCos).map_or(2, |b| 2 * b.layout().dims[1].size);
    let mut out = Vec::new();
    if let Some(r) = ctx.traced.run(ctx.variant).and_then(|run| run.rope) {
        out.push(Line::from(tr!(
            "pair m={m} (channels {d0}, {d1}) at t={pos}: angle t·θ_m = {pos} × {base}^(−2·{m}/{D}) = {angle}{back}",
            m,
            d0,
            d1,
            pos,
            base = r.base,
            D,
            angle = exact(r.angle(pos, m, D) as f32),
            back = if pair.back {
                tr!(", turned back by its negative")
            } else {
                ""
            }
        )));
    }
    let buf = pair.buf(tr);
    let (o0, o1) = (tr.events[pair.x0].offset, tr.events[pair.x1].offset);
    out.push(Line::from(format!(
        "cos = {}   sin = {}   {buf}[{o0}] = {}   {buf}[{o1}] = {}",
        val(pair.cos),
        val(pair.sin),
        val(pair.x0),
        val(pair.x1)
    )));
    let (s_0, s_1) = if pair.back { ("+", "−") } else { ("−", "") };
    // the pair's two cells by their offsets, as the log read them; `'` marks the turned value
    for (k, text) in [
        (pair.y0, format!("{buf}[{o0}]·cos {s_0} {buf}[{o1}]·sin")),
        (pair.y1, format!("{s_1}{buf}[{o0}]·sin + {buf}[{o1}]·cos")),
    ] {
        let target = tr.events[k].offset;
        let mut spans = vec![Span::raw(format!("{buf}'[{target}] = {text}"))];
        if shown(k) {
            spans.push(Span::raw(" = "));
            spans.push(Span::styled(four(tr.events[k].value), t.number()));
        }
        out.push(Line::from(spans));
    }
    out
}

pub(crate) fn render(frame: &mut Frame, area: Rect, ctx: &Ctx, focused: bool) {
    let mut title = format!(
        " {} · {} ",
        ctx.view.phase.name(),
        phase_title_of(ctx.view.phase, &ctx.traced.mask, ctx.variant)
    );
    // a title wider than the panel's top border ends in `…` rather than mid-word
    let room = (area.width as usize).saturating_sub(2);
    if attn_trace_analysis::format::cols(&title) > room {
        title = format!("{}… ", attn_trace_analysis::format::cut(&title, room.saturating_sub(2)));
    }
    let block = Block::bordered().title(title).border_style(ctx.theme.border(focused));
    let panel = Paragraph::new(fit(ctx, lines(ctx), block.inner(area)))
        .block(block)
        .wrap(Wrap { trim: false });
    frame.render_widget(panel, area);
}

/// The panel's lines for `inner`: when they do not fit, the notes under the equation (`(visible
/// pairs only)`, how a gradient starts) go first, so that the numbers of the event, the write's
/// `old + Σ × scale = new` above all, stay on screen.
fn fit<'a>(ctx: &Ctx, mut lines: Vec<Line<'a>>, inner: Rect) -> Vec<Line<'a>> {
    let flash = matches!(ctx.view.phase, Phase::Flash | Phase::FlashDelta | Phase::FlashBack);
    if flash {
        // flash's step equation gives way to its numbers (`l_new = … = 3.8007`), its last line
        // first
        let mut step = super::flash_equation::step_lines(ctx);
        while step > 0 && super::wrapped_rows(&lines, inner.width) > inner.height {
            lines.remove(step - 1);
            step -= 1;
        }
        return lines;
    }
    let mut notes = math(ctx.view.phase, ctx.variant).len().saturating_sub(1);
    while notes > 0 && super::wrapped_rows(&lines, inner.width) > inner.height {
        lines.remove(1);
        notes -= 1;
    }
    lines
}
