//! The gradient-check panel of the backward pass: for the gradient cell the current event
//! writes (or the iteration it is in is summing), the central finite difference of
//! `L = Σ out ⊙ d_out` next to the backward pass's value, their relative error and what was
//! perturbed. The numbers come from the tracer's [`Checker`]; drawing never computes them.

use super::Ctx;
use crate::tui::gradcheck::{Checker, target};
use attn_trace_analysis::gradcheck::sci;
use attn_trace_i18n::tr;
use ratatui::text::{Line, Span};

/// The panel's lines; `wide` adds what was perturbed.
pub(crate) fn lines<'a>(ctx: &Ctx, checks: &Checker, wide: bool) -> Vec<Line<'a>> {
    let t = ctx.theme;
    let Some((grad, off, own)) = target(ctx.trace, ctx.cursor) else {
        return vec![Line::styled(
            tr!(
                "no gradient cell here: each write of one (d_q, d_k, d_x, d_w_qkv, …) is checked by finite differences"
            ),
            t.dim(),
        )];
    };
    let p = grad.primal().map_or("?", |b| b.name());
    let what = if own {
        tr!("this event writes {grad}[{off}]", grad, off)
    } else {
        tr!("this iteration sums {grad}[{off}]", grad, off)
    };
    // large screens give it a line of its own, small ones a prefix
    let (mut out, lead) = if wide {
        (vec![Line::styled(what, t.dim())], String::new())
    } else {
        (Vec::new(), tr!("{what}: ", what))
    };
    // the gradient this cell ends at may be what an open question asks: it waits for the answer
    if ctx.asked.is_some() {
        out.push(Line::styled(
            tr!("{lead}the finite difference waits until the question is answered", lead),
            t.dim(),
        ));
        return out;
    }
    let Some(result) = checks.get(&(ctx.variant, grad, off)) else {
        let text = if ctx.traced.inputs.is_some() {
            tr!(
                "{lead}finite difference of ∂L/∂{p}[{off}]: computing (six untraced forward passes)…",
                lead,
                p,
                off
            )
        } else {
            tr!(
                "{lead}no finite difference: this walkthrough keeps no inputs to re-run",
                lead
            )
        };
        out.push(Line::styled(text, t.dim()));
        return out;
    };
    let c = match result {
        Ok(c) => c,
        Err(e) => {
            out.push(Line::styled(
                tr!("{lead}{grad}[{off}]: no finite difference: {e}", lead, grad, off, e),
                t.dim(),
            ));
            return out;
        }
    };
    let verdict = if c.agrees() { t.op_read() } else { t.error() };
    let text = c.line();
    let (numbers, tail) = text.rsplit_once(", ").unwrap_or((text.as_str(), ""));
    out.push(Line::from(vec![
        Span::styled(lead, t.dim()),
        Span::raw(format!("{numbers}, ")),
        Span::styled(tail.to_string(), verdict),
    ]));
    if wide {
        out.push(Line::styled(c.perturbed(), t.dim()));
    }
    // a write of a sum still being added to (d_x from three projections) is not the final value
    let e = ctx.trace.events[ctx.cursor];
    if own && e.value != c.analytic {
        out.push(Line::styled(
            tr!(
                "this write stores {now} so far; {grad}[{off}] ends at {end} when backward is done",
                now = sci(e.value as f64),
                grad,
                off,
                end = sci(c.analytic as f64)
            ),
            t.dim(),
        ));
    }
    out
}
