//! The dot product being stepped, at the top of the memory panel: both operands side by side,
//! term by term (the q row and the k row, P's row and the v column, x's row and W's column),
//! each finished term's product, and the cell the sum is written to.
//!
//! Everything comes from the log: the terms are the nested iterations of the loop that ends
//! with the write, a factor is the value its read returned, a product is the product of a
//! finished term's reads. Terms after the cursor are drawn dim: the log already has them (in quiz
//! mode, where they are what the learner predicts, the strip is not drawn).

use super::{Ctx, put};
use crate::tui::widgets::cols;
use attn_trace_analysis::accum::{Accumulation, Finish, Scale, Term};
use attn_trace_analysis::format::{exact_all, exact_decimals, fixed};
use attn_trace_core::trace::{Buf, Trace};
use attn_trace_i18n::tr;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

/// Where one number of the strip is drawn: the factor `factor` of term `term`, or its product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DotSpot {
    pub x: u16,
    pub y: u16,
    pub w: u16,
    pub term: usize,
    /// `None`: the term's product.
    pub factor: Option<usize>,
}

/// What a piece of the strip's title says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// `dot product → scores[16] (b0 h1 i2 j1)`
    Title,
    /// At the write, the value written: `= -0.3139`.
    Written,
    /// What the strip leaves out, what the sum starts from.
    Note,
}

/// The strip laid out: its lines of text and where each number goes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DotPlan {
    pub dot: Accumulation,
    /// The title's pieces, `(x, y, text, kind)`, in reading order.
    pub title: Vec<(u16, u16, String, Piece)>,
    /// `(x, y, text)`: the header's loop name, then each operand's name, then the products'.
    pub labels: Vec<(u16, u16, String)>,
    /// Where each header value is (`x`, `y`, width, term).
    pub heads: Vec<(u16, u16, u16, usize)>,
    pub spots: Vec<DotSpot>,
    /// Lines the strip takes.
    pub height: u16,
    /// Decimals of every number of the strip: the most any of them needs, so that the factors,
    /// products and the value written are written alike.
    pub decimals: usize,
}

/// `10..=11`, `2..=10 step 4`, `3, 5, 6` or `3, 5, …, 14`: the offsets one operand reads.
pub(crate) fn offsets_text(offs: &[usize]) -> String {
    let (Some(&first), Some(&last)) = (offs.first(), offs.last()) else {
        return String::new();
    };
    if offs.len() == 1 {
        return first.to_string();
    }
    let step = offs[1] as isize - first as isize;
    let even = step > 0 && offs.windows(2).all(|w| w[1] as isize - w[0] as isize == step);
    match (even, step) {
        (true, 1) => format!("{first}..={last}"),
        (true, s) => tr!("{first}..={last} step {s}", first, last, s),
        _ if offs.len() <= 4 => offs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        _ => format!("{first}, {}, …, {last}", offs[1]),
    }
}

/// The name of factor `f`'s buffer and the offsets it reads, `q[10..=11]`, in at most `width`
/// characters where it can (`o_part[84, 88, 92]`, `v[2, 6, …, 62]`, else `v[…]`).
fn operand(trace: &Trace, dot: &Accumulation, f: usize, width: usize) -> Option<(Buf, String)> {
    let reads = dot.factor_reads(trace, f);
    let buf = reads.first()?.0;
    // a factor read from more than one buffer (latent attention's k_nope, then k_pe) is named
    // run by run, each with its own offsets
    if reads.iter().any(|r| r.0 != buf) {
        let runs: Vec<String> = reads
            .chunk_by(|a, b| a.0 == b.0)
            .map(|run| {
                let offs: Vec<usize> = run.iter().map(|r| r.1).collect();
                format!("{}[{}]", run[0].0, offsets_text(&offs))
            })
            .collect();
        let full = runs.join(" ");
        return Some((
            buf,
            if cols(&full) <= width {
                full
            } else {
                factor_name(trace, dot, f)
            },
        ));
    }
    let offs: Vec<usize> = reads.iter().map(|r| r.1).collect();
    let full = format!("{buf}[{}]", offsets_text(&offs));
    if cols(&full) <= width {
        return Some((buf, full));
    }
    // a few offsets are listed whole: `…` stands for at least two, never for one or none
    let listed = format!(
        "{buf}[{}]",
        offs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    );
    if offs.len() <= 4 && cols(&listed) <= width {
        return Some((buf, listed));
    }
    let ends = match (offs.as_slice(), offs.last()) {
        ([a, b, _, _, _, ..], Some(z)) => format!("{buf}[{a}, {b}, …, {z}]"),
        _ => String::new(),
    };
    if !ends.is_empty() && cols(&ends) <= width {
        return Some((buf, ends));
    }
    Some((buf, format!("{buf}[…]")))
}

/// The buffers factor `f` of the terms reads, one name each: `k_nope|k_pe`.
fn factor_name(trace: &Trace, dot: &Accumulation, f: usize) -> String {
    let names: Vec<&str> = dot.factor_bufs(trace, f).iter().map(|b| b.name()).collect();
    names.join("|")
}

/// Lays out the strip of the dot product at the cursor in `area`, if there is one.
pub(crate) fn plan(area: Rect, ctx: &Ctx) -> Option<DotPlan> {
    // the strip shows the terms still to come: in quiz mode that is the answer
    if ctx.quiz {
        return None;
    }
    let trace = ctx.trace;
    let dot = Accumulation::at(trace, ctx.cursor)?;
    let factors = dot.terms.iter().map(|t| t.reads.len()).max().unwrap_or(0);
    let most = (area.width as usize * 2 / 5).max(8);
    let ops: Vec<(Buf, String)> = (0..factors).filter_map(|f| operand(trace, &dot, f, most)).collect();
    let with_product = factors >= 2;
    let mut product_name = (0..ops.len())
        .map(|f| factor_name(trace, &dot, f))
        .collect::<Vec<_>>()
        .join("·");
    if cols(&product_name) > most {
        product_name = tr!("product").into();
    }
    let names: Vec<&str> = dot.terms[0].vars.iter().map(|v| v.0).collect();
    // latent attention's score sums r (the latent channels) then d (the rotary ones, read from
    // the cache's columns R + d − D): each key names its own loop then
    let mixed = mixed(&dot);
    let head_name = if mixed {
        let mut all: Vec<String> = Vec::new();
        for t in &dot.terms {
            let name = names_of(t);
            if all.last() != Some(&name) {
                all.push(name);
            }
        }
        all.join("|")
    } else {
        names.join(" ")
    };
    // the label column: as wide as the widest name, at most a third of the panel
    let label_w = ops
        .iter()
        .map(|(_, l)| cols(l))
        .chain([cols(&product_name), cols(&head_name)])
        .max()
        .unwrap_or(0) as u16
        + 1;
    // one precision for the strip; columns as wide as the widest number of the sum, and its
    // loop values
    let all: Vec<f32> = dot
        .terms
        .iter()
        .flat_map(|t| t.reads.iter().map(|&k| trace.events[k].value))
        .chain((0..dot.terms.len()).map(|k| dot.product(trace, k)))
        .chain([trace.events[dot.write].value])
        .collect();
    let decimals = all.iter().map(|&v| exact_decimals(v)).max().unwrap_or(4);
    let values = exact_all(&all).into_iter().map(|s| s.chars().count());
    let keys = dot.terms.iter().map(|t| key(t, mixed).len());
    let col_w = values.chain(keys).max().unwrap_or(6).max(6) as u16 + 1;
    let room = (area.width.saturating_sub(label_w) / col_w).max(1) as usize;
    let at = dot.current().unwrap_or(0);
    let count = room.min(dot.terms.len());
    let first = at.saturating_sub(count / 2).min(dot.terms.len() - count);
    let shown = first..first + count;

    let mut labels = Vec::new();
    let (x0, y0) = (area.x, area.y);
    let w = trace.events[dot.write];
    let total = dot.terms.len();
    // the title, in pieces that flow onto more lines when the panel is narrow
    let mut pieces = vec![
        (Piece::Title, tr!("dot product →").to_string()),
        (
            Piece::Title,
            format!("{}[{}] ({})", w.buf, w.offset, trace.label(w.buf, w.offset as usize)),
        ),
    ];
    if ctx.cursor == dot.write {
        pieces.push((Piece::Written, format!("= {}", fixed(w.value, decimals))));
    }
    if count < total {
        let vals = |k: usize| key(&dot.terms[k], mixed);
        let what = if mixed {
            tr!(
                "showing {first}..={last} of {total}",
                first = vals(shown.start),
                last = vals(shown.end - 1),
                total
            )
        } else {
            tr!(
                "showing {names} {first}..={last} of {total}",
                names = head_name,
                first = vals(shown.start),
                last = vals(shown.end - 1),
                total
            )
        };
        pieces.push((Piece::Note, what));
    }
    let old = dot.old(trace);
    for &k in &dot.inits {
        let e = trace.events[k];
        let (buf, off, value) = (e.buf, e.offset, attn_trace_analysis::format::exact(e.value));
        // a scaled `+=` scales the sum, not the old value it is added to
        let note = if Some(k) == old && dot.finish == Finish::AddScaled {
            let symbol = Scale::in_trace(ctx.trace, ctx.variant, ctx.traced.shape).symbol;
            tr!(
                "Σ × 1/√{symbol} added to {buf}[{off}] = {value}",
                symbol,
                buf,
                off,
                value
            )
        } else {
            tr!("plus {buf}[{off}] = {value}", buf, off, value)
        };
        pieces.push((Piece::Note, note));
    }
    let mut title = Vec::new();
    let (mut x, mut y) = (x0, y0);
    for (kind, text) in pieces {
        let sep = if kind == Piece::Note { " · " } else { " " };
        let width = cols(&text) as u16;
        if x > x0 && x + cols(sep) as u16 + width > area.right() {
            (x, y) = (x0, y + 1);
        }
        let text = if x > x0 { format!("{sep}{text}") } else { text };
        let end = x + cols(&text) as u16;
        title.push((x, y, text, kind));
        x = end;
    }
    let y0 = y;
    labels.push((x0, y0 + 1, head_name));
    let mut heads = Vec::new();
    let mut spots = Vec::new();
    let rows = ops.len() as u16 + u16::from(with_product);
    for (f, (_, name)) in ops.iter().enumerate() {
        labels.push((x0, y0 + 2 + f as u16, name.clone()));
    }
    if with_product {
        labels.push((x0, y0 + 1 + rows, product_name));
    }
    for (c, k) in shown.enumerate() {
        let x = x0 + label_w + c as u16 * col_w;
        heads.push((x, y0 + 1, col_w - 1, k));
        for f in 0..ops.len() {
            if dot.terms[k].reads.get(f).is_some() {
                spots.push(DotSpot {
                    x,
                    y: y0 + 2 + f as u16,
                    w: col_w - 1,
                    term: k,
                    factor: Some(f),
                });
            }
        }
        if with_product && dot.finished(k) {
            spots.push(DotSpot {
                x,
                y: y0 + 1 + rows,
                w: col_w - 1,
                term: k,
                factor: None,
            });
        }
    }
    Some(DotPlan {
        dot,
        title,
        labels,
        heads,
        spots,
        height: 2 + rows + (y0 - area.y),
        decimals,
    })
}

/// A term's loop values as its column header: `1`, or `1 0` for two loops; `d2` with the loop's
/// name when the terms run over loops of different names ([`mixed`]).
pub(crate) fn key(t: &Term, mixed: bool) -> String {
    let part = |v: &(&str, usize)| {
        if mixed {
            format!("{}{}", v.0, v.1)
        } else {
            v.1.to_string()
        }
    };
    t.vars.iter().map(part).collect::<Vec<_>>().join(" ")
}

/// The loop names of a term, `r` or `bb i`.
fn names_of(t: &Term) -> String {
    t.vars.iter().map(|v| v.0).collect::<Vec<_>>().join(" ")
}

/// Do the terms run over loops of different names (latent attention's `r`, then `d`)?
pub(crate) fn mixed(dot: &Accumulation) -> bool {
    dot.terms.windows(2).any(|w| names_of(&w[0]) != names_of(&w[1]))
}

pub(crate) fn render(buf: &mut Buffer, area: Rect, ctx: &Ctx, p: &DotPlan) {
    let t = ctx.theme;
    let trace = ctx.trace;
    let n = ctx.cursor;
    for (x, y, text, kind) in &p.title {
        let style = match kind {
            Piece::Title => t.title(),
            Piece::Written => t.write(),
            Piece::Note => t.dim(),
        };
        put(buf, area, *x, *y, text, style);
    }
    for (x, y, text) in &p.labels {
        put(buf, area, *x, *y, text, t.name());
    }
    // the key of the term the cursor is in stands out, so the row follows the loop
    let current = p.dot.current();
    for &(x, y, w, k) in &p.heads {
        let text = format!("{:>w$}", key(&p.dot.terms[k], mixed(&p.dot)), w = w as usize);
        put(
            buf,
            area,
            x,
            y,
            &text,
            if Some(k) == current { t.name() } else { t.dim() },
        );
    }
    for s in &p.spots {
        let shown = p
            .dot
            .shown(trace, s.term, s.factor)
            .map_or(String::new(), |v| fixed(v, p.decimals));
        let text = format!("{shown:>w$}", w = s.w as usize);
        let style = match s.factor.map(|f| p.dot.terms[s.term].reads[f]) {
            Some(k) if k == n => t.read(),
            Some(k) if k > n => t.dim(),
            Some(_) => t.base(),
            None => t.number(),
        };
        put(buf, area, s.x, s.y, &text, style);
    }
}
