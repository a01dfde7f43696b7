//! MHA beside flash in Compare: the same `P[i,j]` (and, backward, `dS[i,j]`) reached two ways.
//! MHA stores it in `probs` (`d_scores`); flash holds it in one cell of its score tile for as long
//! as the query and key tiles are loaded, and never writes it to global memory. Each side's
//! global traffic, counted from its log, goes beside them.
//!
//! Every number comes from the two logs: the events [`FlashCell`] finds, the stored cells of
//! MHA's buffers, and [`traffic::counted`]; the arithmetic is the reader's kind (`e^(S − lse)`
//! of two shown numbers, the sum of shown products).

use super::{Compare, window};
use crate::tui::theme::Theme;
use crate::tui::traced_scenario::{Element, TracedScenario};
use crate::tui::widgets::put;
use attn_trace_analysis::accum::Scale;
use attn_trace_analysis::explain::{num, par};
use attn_trace_analysis::flash_cell::{FlashCell, value_of};
use attn_trace_analysis::format::hidden_because;
use attn_trace_analysis::formula::{sizes, substitute};
use attn_trace_analysis::hand::Digits;
use attn_trace_analysis::traffic::{self, PassTraffic};
use attn_trace_core::kernels::Variant;
use attn_trace_core::tensor::Level;
use attn_trace_core::trace::{Buf, MASKED, Pass, Phase, Trace};
use attn_trace_i18n::tr;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};

/// The phases compared: MHA's phase, the buffer it stores the element in, and flash's phase
/// that computes the same number in a tile.
pub(crate) const PHASES: [(Phase, Buf, Phase); 2] = [
    (Phase::Softmax, Buf::Probs, Phase::Flash),
    (Phase::SoftmaxBack, Buf::DScores, Phase::FlashBack),
];

/// Most cells of the element's tile whose events are looked up and drawn (the rest show `·`).
const TILE_CELLS: usize = 64;

/// What the flash side shows for one element, found in the logs once per element.
#[derive(Debug)]
pub(crate) struct Facts {
    /// The element's events in flash's log.
    pub cell: FlashCell,
    /// The other pairs of the element's tile, `(i, j, events)`.
    pub tile: Vec<(usize, usize, FlashCell)>,
    /// The attention core's traffic, MHA's passes then flash's.
    pub traffic: Vec<PassTraffic>,
}

impl Facts {
    /// The facts of element `e`, reusing `traffic` when it was counted before (it does not
    /// depend on the element).
    pub(crate) fn new(traced: &TracedScenario, e: Element, traffic: Option<Vec<PassTraffic>>) -> Option<Facts> {
        let trace = traced.trace(Variant::Flash)?;
        let cell = FlashCell::find(trace, e)?;
        let s = cell.spot;
        let rows = s.i0..(s.i0 + s.br).min(traced.shape.s);
        let cols = s.j0..(s.j0 + s.bc).min(traced.shape.t);
        let mut tile = Vec::new();
        if rows.len() * cols.len() <= TILE_CELLS {
            for i in rows {
                for j in cols.clone() {
                    if let Some(c) = FlashCell::find(trace, Element { i, j, ..e }) {
                        tile.push((i, j, c));
                    }
                }
            }
        }
        let traffic = traffic.unwrap_or_else(|| {
            [Variant::Mha, Variant::Flash]
                .iter()
                .filter_map(|&v| traced.run(v))
                .flat_map(traffic::counted)
                .collect()
        });
        Some(Facts { cell, tile, traffic })
    }

    /// The flash event Enter opens the tracer at ([`FlashCell::event_at`]).
    pub(crate) fn event_of(&self, phase: Phase, trace: &Trace) -> Option<usize> {
        self.cell.event_at(phase, trace)
    }

    fn pass(&self, variant: Variant, pass: Pass) -> Option<&PassTraffic> {
        self.traffic.iter().find(|t| t.variant == variant && t.pass == pass)
    }
}

/// The header's words for the stage: what the element is and who stores it.
pub(crate) fn stage_title(phase: Phase) -> String {
    match phase {
        Phase::SoftmaxBack => tr!("dS[i,j]: stored by MHA, recomputed on chip by flash").to_string(),
        _ => tr!("P[i,j]: stored by MHA, never by flash").to_string(),
    }
}

/// Flash's side: the element's head cut into tiles, and in the element's tile the values its
/// tile buffer takes for each pair (`e^(S − m)` forward, `dS` backward), each from its event.
pub(crate) fn side(frame: &mut Frame, area: Rect, st: &Compare, phase: Phase, t: Theme) {
    let backward = phase == Phase::SoftmaxBack;
    let title = if backward {
        tr!(" flash · ds_tile, on chip ")
    } else {
        tr!(" flash · s_tile, on chip ")
    };
    let block = Block::bordered().title(title).border_style(t.border(true));
    let inner = block.inner(area);
    block.render(area, frame.buffer_mut());
    let (Some(f), Some(trace)) = (&st.flash, st.traced.trace(Variant::Flash)) else {
        return;
    };
    let sh = st.traced.shape;
    let e = st.element;
    let spot = f.cell.spot;
    let cw = 7u16;
    let legend = if backward {
        tr!(
            "coloured: dS of this tile's pairs, as ds_tile holds them · ·: another tile · –: skipped, the mask hides the whole tile"
        )
    } else {
        tr!(
            "coloured: e^(S − m) of this tile's pairs, as s_tile holds them · ·: another tile · –: skipped, the mask hides the whole tile"
        )
    };
    let fit_cols = (inner.width.saturating_sub(5) / (cw + 1)).max(1) as usize;
    let js = window(sh.t, fit_cols, e.j);
    // what the grid leaves out is said under it (Compare's note), on lines kept for it
    let said = |is: &std::ops::Range<usize>| {
        let mut parts = Vec::new();
        if js.len() < sh.t {
            parts.push(tr!(
                "j{first}..={last} of {n}",
                first = js.start,
                last = js.end - 1,
                n = sh.t
            ));
        }
        if is.len() < sh.s {
            parts.push(tr!(
                "i{first}..={last} of {n}",
                first = is.start,
                last = is.end - 1,
                n = sh.s
            ));
        }
        super::note_lines(&parts, inner.width)
    };
    let mut note_h = said(&(0..sh.s)).len() as u16;
    // the legend only under a grid that shows every query row (or five of them)
    let legend_h = crate::tui::widgets::wrap(legend, inner.width.max(1) as usize).len() as u16;
    let legend_h = if inner.height as usize >= 1 + sh.s.min(5) + 1 + legend_h as usize + note_h as usize {
        legend_h
    } else {
        0
    };
    // a blank line before each query tile but the first, where there is room
    let tiles_down = sh.s.div_ceil(spot.br);
    let rows_room = |note_h: u16| {
        inner
            .height
            .saturating_sub(1 + legend_h + u16::from(legend_h > 0) + note_h) as usize
    };
    let mut is = window(sh.s, rows_room(note_h).max(1).min(sh.s), e.i);
    if said(&is).len() as u16 > note_h {
        note_h = said(&is).len() as u16;
        is = window(sh.s, rows_room(note_h).max(1).min(sh.s), e.i);
    }
    let note = said(&is);
    let gaps = rows_room(note_h) >= sh.s + tiles_down - 1;
    let out = frame.buffer_mut();
    // a column's x: one more column of space before each new key tile, where `│` goes
    let x_of = |k: usize, j: usize| inner.x + 4 + k as u16 * cw + (j / spot.bc - js.start / spot.bc) as u16;
    put(out, inner, inner.x, inner.y, &format!("h{}", e.h), t.title());
    for (k, j) in js.clone().enumerate() {
        put(
            out,
            inner,
            x_of(k, j),
            inner.y,
            &format!("{:>6}", format!("j{j}")),
            t.dim(),
        );
    }
    let mut y = inner.y + 1;
    for i in is.clone() {
        if gaps && i > is.start && i % spot.br == 0 {
            y += 1;
        }
        put(out, inner, inner.x, y, &format!("i{i}"), t.dim());
        let i0 = i - i % spot.br;
        for (k, j) in js.clone().enumerate() {
            let j0 = j - j % spot.bc;
            if k > 0 && j == j0 {
                put(out, inner, x_of(k, j) - 1, y, "│", t.dim());
            }
            let hidden = st
                .traced
                .mask
                .hides_tile(i0..(i0 + spot.br).min(sh.s), j0..(j0 + spot.bc).min(sh.t));
            let mine = f.tile.iter().find(|(a, b, _)| (*a, *b) == (i, j));
            let (text, style) = match mine {
                Some((_, _, c)) => {
                    let n = if backward { c.ds } else { c.p_tilde };
                    let style = if (i, j) == (e.i, e.j) { t.write() } else { t.written() };
                    (
                        value_of(trace, n).map_or("·".to_string(), attn_trace_analysis::format::num),
                        style,
                    )
                }
                None if hidden => ("–".to_string(), t.masked()),
                None => ("·".to_string(), t.dim()),
            };
            put(out, inner, x_of(k, j), y, &format!("{text:>6}"), style);
        }
        y += 1;
    }
    for (k, line) in note.iter().enumerate() {
        let y = (inner.bottom() as usize + k).saturating_sub(note.len()) as u16;
        if y >= inner.y {
            put(out, inner, inner.x, y, &" ".repeat(inner.width as usize), t.base());
            put(out, inner, inner.x, y, line, t.dim());
        }
    }
    if legend_h == 0 {
        return;
    }
    let text = Rect {
        y: (y + 1).min(inner.bottom()),
        height: inner.bottom().saturating_sub(y + 1 + note.len() as u16),
        ..inner
    };
    frame.render_widget(
        Paragraph::new(Line::styled(legend, t.dim())).wrap(Wrap { trim: true }),
        text,
    );
}

/// How flash reaches the element's number, step by step, each value with its event.
fn derivation(st: &Compare, f: &Facts, trace: &Trace, backward: bool) -> Vec<String> {
    let e = st.element;
    let s = f.cell.spot;
    let c = &f.cell;
    let buf = if backward { "ds_tile" } else { "s_tile" };
    let mut lines = vec![tr!(
        "flash: the pair is {buf}[ii*bc + jj] = {buf}[{ii}*{bc} + {jj}] = {buf}[{off}] while query tile i0={i0} and key tile j0={j0} ({br}×{bc}) are loaded",
        buf,
        ii = s.ii,
        bc = s.bc,
        jj = s.jj,
        off = s.off,
        i0 = s.i0,
        j0 = s.j0,
        br = s.br
    )];
    let Some(score) = value_of(trace, c.score) else {
        lines.push(tr!(
            "the mask hides every pair of this tile: flash skips it, no read and no write; {name} = 0 ({why})",
            name = if backward { "dS" } else { "P" },
            why = hidden_because(&st.traced.mask, e.i, e.j)
        ));
        return lines;
    };
    let n = |x: Option<usize>| x.map_or("?".to_string(), |n| n.to_string());
    let v = |x: Option<usize>| value_of(trace, x).map_or("?".to_string(), num);
    // inside a difference, a negative number goes in parentheses
    let vp = |x: Option<usize>| value_of(trace, x).map_or("?".to_string(), par);
    if backward {
        lines.push(tr!(
            "P = e^(S − lse) = {p} (s_tile[{off}], #{n}): recomputed, forward stored only lse",
            p = v(c.p_back),
            off = s.off,
            n = n(c.p_back)
        ));
        lines.push(tr!(
            "D_i = rowsum(dO ∘ O) = {d} (delta, read at #{n})",
            d = v(c.delta),
            n = n(c.delta)
        ));
        let dp = c.d_p(trace);
        lines.push(tr!(
            "dP = Σ_d dO_tile[{ii},d]·v_tile[{jj},d] = {dp}",
            ii = s.ii,
            jj = s.jj,
            dp = dp.map_or("?".to_string(), num)
        ));
        let scale = Scale::of(Variant::Flash, st.traced.shape, 0);
        let ds = c.ds_chain(trace, scale).map(|ch| ch.calc().fit(Digits::Plain));
        let part = |k: usize| ds.as_ref().map_or("?".to_string(), |f| f.val(k));
        lines.push(tr!(
            "dS = P·(dP − D_i) = {p} × ({dp} − {d}) = {ds} (#{n}); dQ += dS·K/√D goes straight to global memory",
            p = part(0),
            dp = part(1),
            d = ds.as_ref().map_or("?".to_string(), |f| f.par(2)),
            ds = ds.as_ref().map_or("?".to_string(), |f| f.result.clone()),
            n = n(c.ds)
        ));
        return lines;
    }
    if score == MASKED {
        lines.push(tr!(
            "S = -1e9 (#{n}): masked, {why}",
            n = n(c.score),
            why = hidden_because(&st.traced.mask, e.i, e.j)
        ));
    } else {
        lines.push(tr!("S = q·k/√D = {s} (#{n})", s = num(score), n = n(c.score)));
    }
    let m_old = c.m_old(trace);
    lines.push(tr!(
        "m = max(m_old, rowmax(S_tile)) = max({old}, …) = {m} (#{n})",
        old = m_old.map_or("?".to_string(), num),
        m = v(c.m_tile),
        n = n(c.m_tile)
    ));
    let tilde = c.p_tilde_calc(trace).map(|ch| ch.fit(Digits::Plain));
    lines.push(tr!(
        "s_tile[{off}] = e^(S − m) = e^({s} − {m}) = {p} (#{n}), folded into l and acc, then overwritten",
        off = s.off,
        s = tilde.as_ref().map_or_else(|| num(score), |f| f.val(0)),
        m = tilde.as_ref().map_or_else(|| vp(c.m_tile), |f| f.par(1)),
        p = tilde.as_ref().map_or_else(|| v(c.p_tilde), |f| f.result.clone()),
        n = n(c.p_tilde)
    ));
    lines.push(tr!(
        "row i={i} done: m = {m}, l = {l}; lse = m + ln l = {lse} (#{n}), to global memory",
        i = e.i,
        m = v(c.m_final),
        l = v(c.l_final),
        lse = v(c.lse),
        n = n(c.lse)
    ));
    let p = c.p_calc(trace).map(|ch| ch.fit(Digits::Plain));
    lines.push(tr!(
        "P = e^(S − lse) = e^({s} − {lse}) = {p}: written nowhere",
        s = p.as_ref().map_or_else(|| num(score), |f| f.val(0)),
        lse = p.as_ref().map_or_else(|| vp(c.lse), |f| f.par(1)),
        p = p.as_ref().map_or("?".to_string(), |f| f.result.clone())
    ));
    if c.p_back.is_some() {
        lines.push(tr!(
            "backward recomputes it: s_tile[{off}] = {p} (#{n})",
            off = s.off,
            p = v(c.p_back),
            n = n(c.p_back)
        ));
    }
    lines
}

/// The notes under both sides: where MHA stores the element, whether the two numbers agree,
/// and each side's traffic in the pass.
pub(crate) fn notes<'a>(st: &Compare, phase: Phase) -> Vec<Line<'a>> {
    let traced = &st.traced;
    let e = st.element;
    let mut lines = Vec::new();
    let (Some(f), Some(mt), Some(ft)) = (&st.flash, traced.trace(Variant::Mha), traced.trace(Variant::Flash)) else {
        return lines;
    };
    let backward = phase == Phase::SoftmaxBack;
    lines.extend(derivation(st, f, ft, backward).into_iter().map(Line::from));
    let (buf, name) = if backward {
        (Buf::DScores, "dS")
    } else {
        (Buf::Probs, "P")
    };
    // MHA's stored cell, with its offset as attention_mha.rs computes it
    let mut symbols = sizes(traced.shape, phase);
    symbols.extend([("bb", e.b), ("hh", e.h), ("i", e.i), ("j", e.j)]);
    let stored = st.event_of(Variant::Mha, phase).and_then(|n| {
        let ev = mt.events.get(n)?;
        (ev.buf == buf).then_some((n, ev.value))
    });
    if let (Some(s), Some((n, x))) = (substitute("attention_mha.rs", "off", &symbols), stored) {
        lines.push(Line::from(tr!(
            "mha: stores {name}[{b},{h},{i},{j}] = {x} in {buf}[{off}] (#{n}), off = {formula} = {numbers}",
            name,
            b = e.b,
            h = e.h,
            i = e.i,
            j = e.j,
            buf,
            off = s.value,
            formula = s.formula,
            numbers = s.numbers,
            x = num(x),
            n
        )));
    }
    // a pair of a tile the mask hides has no event in flash's log: its P and dS are 0
    let skipped = f.cell.score.is_none().then_some(0.0);
    let theirs = if backward {
        value_of(ft, f.cell.ds).or(skipped)
    } else {
        f.cell.probability(ft).or(skipped)
    };
    if let (Some(a), Some((_, b))) = (theirs, stored) {
        let verdict = if a.to_bits() == b.to_bits() {
            tr!("the same bits").to_string()
        } else {
            tr!(
                "they differ by {d} (float rounding: flash adds in another order)",
                d = format!("{:.1e}", (a - b).abs())
            )
        };
        lines.push(Line::from(tr!(
            "flash's {name} = {a}, mha's = {b}: {verdict}",
            name,
            a = num(a),
            b = num(b),
            verdict
        )));
    }
    // each side's global traffic in this pass, and what each writes there
    let pass = phase.pass();
    let global = |v: Variant| -> Option<String> {
        let t = f.pass(v, pass)?;
        let g = t.totals().into_iter().find(|l| l.level == Level::Global)?;
        let writes: Vec<String> = t
            .buffers
            .iter()
            .filter(|b| b.level == Level::Global && b.writes > 0)
            .map(|b| format!("{} {}", b.buf.name(), b.writes))
            .collect();
        Some(tr!(
            "{v} {reads} reads, {writes} writes ({list})",
            v = v.name(),
            reads = g.reads,
            writes = g.writes,
            list = writes.join(tr!(", "))
        ))
    };
    if let (Some(m), Some(fl)) = (global(Variant::Mha), global(Variant::Flash)) {
        lines.push(Line::from(tr!(
            "global memory, {pass}: {m} · {fl}",
            pass = phase_text_of(pass),
            m,
            fl
        )));
    }
    if let Some(t) = f.pass(Variant::Flash, pass)
        && let Some(chip) = t.totals().into_iter().find(|l| l.level == Level::Tile)
    {
        let sh = traced.shape;
        lines.push(Line::from(tr!(
            "on chip, flash: {reads} reads, {writes} writes; its score tile holds {tile} numbers at a time, where mha's {buf} holds {all}",
            reads = chip.reads,
            writes = chip.writes,
            tile = f.cell.spot.br * f.cell.spot.bc,
            buf,
            all = sh.b * sh.h * sh.s * sh.t
        )));
    }
    lines
}

/// `forward` / `backward`, as the pass is named in the notes.
fn phase_text_of(pass: Pass) -> &'static str {
    match pass {
        Pass::Forward => tr!("forward"),
        Pass::Backward => tr!("backward"),
    }
}
