//! The notes under the two sides: how each kernel reaches the element, with the logs' numbers
//! (MHA beside GQA, the baseline beside MHA; flash's in `flash.rs`).

use super::{Compare, flash};
use crate::tui::widgets::num;
use attn_trace_analysis::accum::Scale;
use attn_trace_analysis::formula::{sizes, substitute};
use attn_trace_analysis::hand::{Calc, Digits};
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Buf, BufferInfo, Phase, Trace};
use attn_trace_i18n::tr;
use ratatui::text::Line;

/// The notes under the two sides for `phase` (whose element is stored in `buf`): how each
/// kernel reaches the element, with the logs' numbers.
pub(crate) fn notes<'a>(st: &Compare, phase: Phase, buf: Buf) -> Vec<Line<'a>> {
    if st.pair().1.desc().tiled {
        flash::notes(st, phase)
    } else {
        explain(st, phase, buf)
    }
}

/// MHA beside GQA: which key/value head each query head reads, the element's key offset in
/// both layouts, the memory of k and v, and whether the two `out` agree, all from the logs.
#[allow(non_snake_case)]
fn grouped_notes<'a>(st: &Compare, phase: Phase) -> Vec<Line<'a>> {
    let traced = &st.traced;
    let sh = traced.shape;
    let e = st.element;
    let (H, H_kv, D) = (sh.h, sh.h_kv, sh.d());
    let kv_h = e.h / (H / H_kv);
    let mut lines = vec![Line::from(tr!(
        "query head h={h}: mha reads k head {h}; gqa reads kv_h = h/(H/H_kv) = {h}/({H}/{H_kv}) = {kv_h}, shared by heads {first}..={last}",
        h = e.h,
        H,
        H_kv,
        kv_h,
        first = kv_h * (H / H_kv),
        last = kv_h * (H / H_kv) + H / H_kv - 1
    ))];
    let mut symbols = sizes(Variant::Mha.kv_shape(sh), phase);
    symbols.extend([("bb", e.b), ("hh", e.h), ("i", e.i), ("j", e.j)]);
    let mut grouped = sizes(sh, phase);
    grouped.extend([("bb", e.b), ("hh", e.h), ("i", e.i), ("j", e.j), ("kv_h", kv_h)]);
    if let (Some(m), Some(g)) = (
        substitute("attention_mha.rs", "k_base", &symbols),
        substitute("attention_gqa.rs", "k_base", &grouped),
    ) {
        for (name, s) in [("mha", m), ("gqa", g)] {
            lines.push(Line::from(tr!(
                "key j={j} in {name}: k[{first}..={last}], k_base = {formula} = {numbers}",
                j = e.j,
                name,
                first = s.value,
                last = s.value + D - 1,
                formula = s.formula,
                numbers = s.numbers
            )));
        }
    }
    let size = |v: Variant, buf: Buf| {
        traced
            .run(v)
            .and_then(|r| r.registry.get(buf))
            .map_or(0, attn_trace_core::tensor::Spec::len)
    };
    let (km, kg) = (size(Variant::Mha, Buf::K), size(Variant::Gqa, Buf::K));
    if let Some(pct) = (100 * kg).checked_div(km) {
        lines.push(Line::from(tr!(
            "k and v: mha 2 × {km} values, gqa 2 × {kg} (H_kv/H = {H_kv}/{H}): {pct}% of MHA's, what a KV cache keeps per layer",
            km,
            kg,
            H_kv,
            H,
            pct
        )));
    }
    let (wm, wg) = (size(Variant::Mha, Buf::WQkv), size(Variant::Gqa, Buf::WQkv));
    if wm > 0 {
        lines.push(Line::from(tr!(
            "w_qkv: mha [C, 3C] = {wm} weights, gqa [C, C + 2·H_kv·D] = {wg}",
            wm,
            wg
        )));
    }
    // the two outputs, as the logs leave them
    let out = |v: Variant| -> Option<Vec<u32>> {
        let t = traced.trace(v)?;
        let n = t.buffer(Buf::Out)?.len();
        let last = t.len().checked_sub(1)?;
        Some((0..n).map(|o| t.value_at(Buf::Out, o, last).to_bits()).collect())
    };
    if let (Some(a), Some(b)) = (out(Variant::Mha), out(Variant::Gqa)) {
        lines.push(Line::from(if a == b {
            tr!("out: identical, bit for bit: MHA here is GQA with the heads of each group tied").to_string()
        } else {
            tr!(
                "out: {n} of {total} values differ",
                n = a.iter().zip(&b).filter(|(x, y)| x != y).count(),
                total = a.len()
            )
        }));
    }
    lines
}

#[allow(non_snake_case)]
fn explain<'a>(st: &Compare, phase: Phase, buf: Buf) -> Vec<Line<'a>> {
    if st.pair() == (Variant::Mha, Variant::Gqa) {
        return grouped_notes(st, phase);
    }
    let traced = &st.traced;
    let sh = traced.shape;
    let e = st.element;
    let mut lines = Vec::new();
    let mut symbols = sizes(sh, phase);
    symbols.extend([("bb", e.b), ("hh", e.h), ("i", e.i), ("j", e.j)]);
    let mut base_symbols = sizes(sh.single_head(), phase);
    base_symbols.extend([("bb", e.b), ("hh", 0), ("i", e.i), ("j", e.j)]);
    if matches!(buf, Buf::Scores | Buf::Probs | Buf::DScores | Buf::DProbs) {
        if let Some(s) = substitute("attention_1h.rs", "off", &base_symbols) {
            lines.push(Line::from(tr!(
                "baseline {buf}[{b},{i},{j}] at data[{off}]: off = {formula} = {numbers}",
                buf,
                b = e.b,
                i = e.i,
                j = e.j,
                off = s.value,
                formula = s.formula,
                numbers = s.numbers
            )));
        }
        if let Some(s) = substitute("attention_mha.rs", "off", &symbols) {
            lines.push(Line::from(tr!(
                "mha head {h} {buf}[{b},{h},{i},{j}] at data[{off}]: off = {formula} = {numbers}",
                h = e.h,
                buf,
                b = e.b,
                i = e.i,
                j = e.j,
                off = s.value,
                formula = s.formula,
                numbers = s.numbers
            )));
        }
    } else {
        // the row's start as each kernel names it: qi / q_base for the queries (and d_q), ai /
        // a_base for the weighted sum's output
        let (base, head) = if phase == Phase::WeightedSum {
            ("ai", "a_base")
        } else {
            ("qi", "q_base")
        };
        if let (Some(a), Some(q)) = (
            substitute("attention_1h.rs", base, &base_symbols),
            substitute("attention_mha.rs", head, &symbols),
        ) {
            lines.push(Line::from(tr!(
                "baseline row i={i}: data[{first}..={last}] ({base} = {formula} = {numbers})",
                i = e.i,
                first = a.value,
                last = a.value + sh.c - 1,
                base,
                formula = a.formula,
                numbers = a.numbers
            )));
            lines.push(Line::from(tr!(
                "mha head {h} of row i={i}: data[{first}..={last}] ({head} = {formula} = {numbers})",
                h = e.h,
                i = e.i,
                first = q.value,
                last = q.value + sh.d() - 1,
                head,
                formula = q.formula,
                numbers = q.numbers
            )));
        }
    }
    let (base, mha) = (Scale::of(Variant::Baseline, sh, 0), Scale::of(Variant::Mha, sh, 0));
    let value = |s: Scale| Calc::new(Vec::new(), s.expr(), s.value).fit(Digits::Four).result;
    lines.push(Line::from(tr!(
        "scale: baseline 1/√C = 1/√{C} = {sc} · mha 1/√D = 1/√{D} = {sd}",
        C = base.width,
        sc = value(base),
        D = mha.width,
        sd = value(mha)
    )));
    if let (Some(bt), Some(mt)) = (traced.trace(Variant::Baseline), traced.trace(Variant::Mha)) {
        let row = |trace: &Trace, h: usize| -> String {
            let last = trace.len().saturating_sub(1);
            let Some(probs) = trace.buffer(Buf::Probs).map(BufferInfo::layout) else {
                return String::new();
            };
            let vals: Vec<String> = (0..sh.t)
                .filter_map(|j| probs.offset_of(&[("b", e.b), ("h", h), ("i", e.i), ("j", j)]))
                .map(|off| num(trace.value_at(Buf::Probs, off, last)))
                .collect();
            vals.join(" ")
        };
        lines.push(Line::from(tr!(
            "probability rows of query i={i}: baseline one row [{row}]",
            i = e.i,
            row = row(bt, 0)
        )));
        let heads: Vec<String> = (0..sh.h).map(|h| format!("h{h} [{}]", row(mt, h))).collect();
        lines.push(Line::from(tr!(
            "mha {n} rows, one per head, each summing to 1: {heads}",
            n = sh.h,
            heads = heads.join(" ")
        )));
    }
    lines
}
