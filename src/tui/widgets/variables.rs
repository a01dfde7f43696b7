//! The variables panel: loop variables, and every derived offset as formula → numbers → value.

use super::Ctx;
use crate::tui::traced_scenario::TracedScenario;
use attn_trace_analysis::formula::{self, derived_lines};
use attn_trace_i18n::tr;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// The panel's lines (also used for its height).
pub(crate) fn lines<'a>(ctx: &Ctx) -> Vec<Line<'a>> {
    let t = ctx.theme;
    let v = &ctx.view;
    let mut spans = Vec::new();
    // a loop nested in one over the same variable at the same value (a decode step's `bb, t`
    // around rope's own `bb, t`) shows it once
    let shown: Vec<&(&str, usize)> = v
        .vars
        .iter()
        .enumerate()
        .filter(|&(k, var)| !v.vars[..k].contains(var))
        .map(|(_, var)| var)
        .collect();
    for (k, (name, value)) in shown.iter().enumerate() {
        if k > 0 {
            spans.push(Span::raw("  "));
        }
        let style = if k + 1 == shown.len() { t.number() } else { t.name() };
        spans.push(Span::styled(format!("{name}={value}"), style));
    }
    if spans.is_empty() {
        spans.push(Span::styled(tr!("(outside every loop)"), t.dim()));
    }
    let shape = shape_of(ctx.traced, ctx);
    let derived = derived_lines(v, shape);
    // the kernels' `S` counts the queries; the equations' `S[i,j]` is a score: say which is which
    if derived.iter().any(|s| formula::names(&s.formula).contains(&"S")) {
        spans.push(Span::styled(
            tr!("   S = {s} queries (S[i,j] in the equation is a score)", s = shape.s),
            t.dim(),
        ));
    }
    let mut out = vec![Line::from(spans)];
    for s in derived {
        // a formula that is one variable (`lo = m`) has nothing to work out: `lo = m = 0`
        let worked = if s.numbers == s.value.to_string() {
            format!(" = {} = ", s.formula)
        } else {
            format!(" = {} = {} = ", s.formula, s.numbers)
        };
        out.push(Line::from(vec![
            Span::styled(s.name, t.name()),
            Span::raw(worked),
            Span::styled(s.value.to_string(), t.number()),
        ]));
    }
    let op_style = match v.op {
        attn_trace_core::trace::Op::Read => t.op_read(),
        attn_trace_core::trace::Op::Write => t.op_write(),
    };
    out.push(Line::from(vec![
        Span::styled(
            match v.op {
                attn_trace_core::trace::Op::Read => tr!("read"),
                attn_trace_core::trace::Op::Write => tr!("write"),
            },
            op_style,
        ),
        Span::raw(format!(" {}[{}] ", v.buf, v.offset)),
        Span::styled(format!("({})", ctx.trace.label(v.buf, v.offset)), t.dim()),
        Span::raw(" = "),
        Span::styled(attn_trace_analysis::format::num_of(v.buf, v.value), t.number()),
    ]));
    out
}

/// The sizes the variant's kernel sees (the baseline runs with one head).
fn shape_of(traced: &TracedScenario, ctx: &Ctx) -> attn_trace_core::tensor::Shape {
    attn_trace_core::engine::kernel_shape(traced.shape, ctx.variant)
}

pub(crate) fn render(frame: &mut Frame, area: Rect, ctx: &Ctx, focused: bool) {
    let block = Block::bordered()
        .title(tr!(" Variables "))
        .border_style(ctx.theme.border(focused));
    let panel = Paragraph::new(lines(ctx)).block(block).wrap(Wrap { trim: false });
    frame.render_widget(panel, area);
}
