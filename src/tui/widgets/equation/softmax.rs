//! A softmax row's lines: the pass the cursor is in (max, exponentials, normalise; backward,
//! the row's dot and the scores' gradient), with its chain and the numbers the log read.

use super::result_spans;
use crate::tui::widgets::Ctx;
use attn_trace_analysis::format::four;
use attn_trace_analysis::hand::Digits;
use attn_trace_analysis::softmax_row::{BackStep, SoftmaxBackRow, SoftmaxRow, Step};
use attn_trace_core::trace::{Buf, Op, Phase};
use attn_trace_i18n::tr;
use ratatui::text::{Line, Span};

/// Softmax rows are three passes (max, exponentials, normalise) forward and two backward
/// ([`SoftmaxRow`], [`SoftmaxBackRow`]): the step the cursor is in, with its chain.
pub(super) fn softmax_lines<'a>(ctx: &Ctx) -> Vec<Line<'a>> {
    if ctx.view.phase != Phase::SoftmaxBack {
        return softmax_forward_lines(ctx);
    }
    let t = ctx.theme;
    let tr = ctx.trace;
    let n = ctx.cursor;
    let Some(row) = SoftmaxBackRow::at(tr, n) else {
        return Vec::new();
    };
    let T = row.cols.len();
    let Some(step) = row.step(n) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    match step {
        BackStep::Dot(k) => {
            // the column's P read completes its term
            let upto = if n == row.cols[k].dot_p { k + 1 } else { k };
            out.push(Line::from(vec![
                Span::raw(tr!("pass a: Σ_k dP·P so far ({upto} of {T}) = ", upto, T)),
                Span::styled(four(row.dot_of(tr, upto)), t.number()),
            ]));
        }
        BackStep::Delta => out.push(Line::from(vec![
            Span::raw(tr!("D = Σ_k dP·P, kept for the sink logit's gradient: ")),
            Span::styled(four(ctx.view.value), t.number()),
        ])),
        BackStep::Ds(k) => {
            let f = row.ds_calc(tr, k).fit(Digits::Four);
            let mut spans = vec![Span::raw(tr!(
                "pass b: dS = P (dP − Σ) = {p} × ({dp} − {dot}) = ",
                p = f.val(0),
                dp = f.val(1),
                dot = f.par(2)
            ))];
            spans.extend(result_spans(ctx, row.cols[k].ds, f.result));
            out.push(Line::from(spans));
        }
    }
    out
}

/// A forward softmax's three passes, over whichever columns its row has (all `T` keys, a decode
/// step's keys, the keys its window keeps, a part of a split step, or the parts' log-sum-exps of
/// a merge), with the row's sink logit when it has one; after a split step's part, the part's
/// log-sum-exp `m + ln Σ e`.
fn softmax_forward_lines<'a>(ctx: &Ctx) -> Vec<Line<'a>> {
    let t = ctx.theme;
    let v = &ctx.view;
    let tr = ctx.trace;
    let n = ctx.cursor;
    let Some(row) = SoftmaxRow::at(tr, n) else {
        return Vec::new();
    };
    let Some(step) = row.step(tr, n) else {
        return Vec::new();
    };
    let T = row.cols.len();
    let x_name = if row.x == Buf::Scores {
        "S".to_string()
    } else {
        row.x.name().to_string()
    };
    let line = |text: String, at: usize, result: String| {
        let mut spans = vec![Span::raw(text)];
        spans.extend(result_spans(ctx, at, result));
        Line::from(spans)
    };
    let mut out = Vec::new();
    match step {
        Step::Lse => {
            if let (Some(c), Some(at)) = (row.lse_calc(tr), row.lse) {
                let f = c.fit(Digits::Four);
                out.push(line(
                    tr!("lse = m + ln Σ e = {m} + ln {sum} = ", m = f.val(0), sum = f.val(1)),
                    at,
                    f.result,
                ));
            }
        }
        Step::Sink => out.push(Line::from(vec![
            Span::raw(tr!("pass a: the sink logit starts the row max, m = sink = ")),
            Span::styled(four(v.value), t.number()),
        ])),
        Step::PSink => {
            if let (Some(c), Some(at)) = (row.p_sink_calc(tr), row.p_sink) {
                let f = c.fit(Digits::Four);
                out.push(line(
                    tr!(
                        "the sink's share: P_sink = e_sink / Σ e = {e} / {sum} = ",
                        e = f.val(0),
                        sum = f.val(1)
                    ),
                    at,
                    f.result,
                ));
            }
        }
        Step::Max(pos) => {
            let offs: Vec<usize> = row.cols[..=pos].iter().map(|c| c.off).collect();
            let contiguous = offs.windows(2).all(|w| w[1] == w[0] + 1);
            let range = if contiguous {
                format!("{}..={}", offs[0], offs[pos])
            } else {
                offs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            };
            let text = if row.sink.is_some() {
                tr!(
                    "pass a: row max so far m = max(sink, {x}[{range}]) = ",
                    x = x_name,
                    range
                )
            } else {
                tr!("pass a: row max so far m = max({x}[{range}]) = ", x = x_name, range)
            };
            out.push(Line::from(vec![
                Span::raw(text),
                Span::styled(four(row.max_of(tr, pos + 1)), t.number()),
            ]));
        }
        Step::Exp(k) => {
            let j = row.cols[k].j;
            let f = row.exp_calc(tr, k).fit(Digits::Four);
            out.push(line(
                tr!("pass b: e_{j} = exp({s} − {m}) = ", j, s = f.val(0), m = f.par(1)),
                row.cols[k].e,
                f.result,
            ));
            let written = if v.op == Op::Write { k + 1 } else { k };
            let sum = four(row.sum_of(tr, written));
            let so_far = match row.e_sink_calc(tr) {
                Some(c) => {
                    let f = c.fit(Digits::Four);
                    tr!(
                        "Σ e so far (e_sink = exp({s} − {m}) = {e} and {written} of {T}) = {sum}",
                        s = f.val(0),
                        m = f.par(1),
                        e = f.result,
                        written,
                        T,
                        sum
                    )
                }
                None => tr!("Σ e so far ({written} of {T}) = {sum}", written, T, sum),
            };
            out.push(Line::from(so_far));
        }
        Step::Norm(k) => {
            let j = row.cols[k].j;
            let f = row.norm_calc(tr, k).fit(Digits::Four);
            out.push(line(
                tr!(
                    "pass c: P = e_{j} / Σ e = {e} / {sum} = ",
                    j,
                    e = f.val(0),
                    sum = f.val(1)
                ),
                row.cols[k].p,
                f.result,
            ));
        }
    }
    out
}
