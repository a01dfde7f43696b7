//! Checks that span tables: where the run starts, what it projects, which mistakes it makes,
//! and its grouped heads, rotary positions and decoding must agree with each other.

use super::reader::{Doc, Result, Value};
use super::sections::field;
use super::{Init, Mode, Options, Qkv};
use crate::engine::{Passes, Plan, StartKind, kernel_shape};
use crate::kernels::attention_mistakes::Mistake;
use crate::kernels::{Mask, Variant};
use crate::tensor::Shape;
use crate::trace::Buf;
use attn_trace_i18n::tr;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// The span of `[table].key`, when the file has it.
pub(super) fn span_of(root: &DeTable<'_>, table: &str, key: &str) -> Option<Range<usize>> {
    match root.get(table)?.get_ref() {
        DeValue::Table(t) => t.get(key).map(toml::Spanned::span),
        _ => None,
    }
}

/// Cross-attention, the projection style and the tensors given must agree.
pub(super) fn check_start(
    doc: &Doc<'_>,
    root: &DeTable<'_>,
    shape_v: &Value<'_>,
    values: &BTreeMap<Buf, Vec<f32>>,
    o: &Options,
) -> Result<()> {
    let from_x = !values.contains_key(&Buf::Q);
    let given = |bufs: &[Buf]| bufs.iter().copied().find(|b| values.contains_key(b));
    let at = |b: Buf| span_of(root, "values", b.name());
    if o.cross && from_x && o.qkv == Qkv::Fused {
        return Err(doc.err(
            span_of(root, "shape", "S").or(Some(shape_v.span())),
            "[shape].S",
            tr!("cross-attention projects x and memory with their own weights: set [run].qkv = \"separate\" (or give q, k and v)"),
        ));
    }
    if let Some(b) = given(&[Buf::Memory]) {
        let why = if !from_x {
            tr!("not used when q, k and v are given (the run starts at the attention core)")
        } else if !o.cross {
            tr!("memory is the key/value input of cross-attention: give [shape].S, the number of queries")
        } else {
            ""
        };
        if !why.is_empty() {
            return Err(doc.err(at(b), &field(b), why));
        }
    }
    match o.qkv {
        Qkv::Fused => {
            // multi-head latent attention reads its own w_q (`check_latent` refuses the rest)
            let separate: &[Buf] = if o.latent.is_some() {
                &[Buf::BQ, Buf::WK, Buf::BK, Buf::WV, Buf::BV]
            } else {
                &[Buf::WQ, Buf::BQ, Buf::WK, Buf::BK, Buf::WV, Buf::BV]
            };
            if let Some(b) = given(separate) {
                return Err(doc.err(
                    at(b),
                    &field(b),
                    tr!("belongs to qkv = \"separate\"; this scenario uses the fused w_qkv (set [run].qkv = \"separate\")"),
                ));
            }
        }
        Qkv::Separate => {
            if let Some(b) = given(&[Buf::WQkv, Buf::BQkv]) {
                return Err(doc.err(
                    at(b),
                    &field(b),
                    tr!("belongs to qkv = \"fused\"; with qkv = \"separate\" give w_q, b_q, w_k, b_k, w_v, b_v"),
                ));
            }
            if !from_x {
                return Err(doc.err(
                    span_of(root, "run", "qkv"),
                    "[run].qkv",
                    tr!("q, k and v are given, so nothing is projected: remove qkv or give x instead"),
                ));
            }
        }
    }
    Ok(())
}

/// A mistake must have something to get wrong in this scenario.
pub(super) fn check_mistakes(doc: &Doc<'_>, root: &DeTable<'_>, plan: &crate::engine::Plan, o: &Options) -> Result<()> {
    let span = span_of(root, "run", "mistakes");
    let field = "[run].mistakes";
    let need = |m: Mistake, ok: bool, why: &str| -> Result<()> {
        if o.mistakes.has(m) && !ok {
            return Err(doc.err(span.clone(), field, tr!("\"{mistake}\" {why}", mistake = m.name(), why)));
        }
        Ok(())
    };
    need(
        Mistake::NoInputProjection,
        plan.start != crate::engine::StartKind::Qkv,
        tr!("needs a run that starts at x: with q, k and v given there is no input projection to leave out"),
    )?;
    need(
        Mistake::NoOutputProjection,
        plan.proj,
        tr!("needs an output projection to leave out: start at x, or give w_proj and b_proj"),
    )?;
    need(
        Mistake::DropoutNotApplied,
        plan.dropout,
        tr!("needs dropout to forget: set [run].dropout above 0 with mode = \"train\""),
    )
}

/// The flash variant and the `[flash]` table go together, and flash runs neither dropout, nor
/// the mistakes (both live in the plain kernels), nor a decoding loop.
pub(super) fn check_flash(doc: &Doc<'_>, root: &DeTable<'_>, variants: &[Variant], o: &Options) -> Result<()> {
    let flash = variants.contains(&Variant::Flash);
    if let Some(v) = root.get("flash")
        && !flash
    {
        return Err(doc.err(
            Some(v.span()),
            "[flash]",
            tr!("sets the tile sizes of the flash variant, which this scenario does not run: add \"flash\" to [run].variants or remove [flash]"),
        ));
    }
    if !flash {
        return Ok(());
    }
    if o.dropout.is_some() && o.mode == Mode::Train {
        return Err(doc.err(
            span_of(root, "run", "dropout"),
            "[run].dropout",
            tr!("the flash variant has no dropout: remove dropout, set mode = \"eval\", or remove \"flash\" from [run].variants"),
        ));
    }
    if !o.mistakes.is_empty() {
        return Err(doc.err(
            span_of(root, "run", "mistakes"),
            "[run].mistakes",
            tr!("the mistakes are made in the plain kernels and flash has none: remove \"flash\" from [run].variants"),
        ));
    }
    if o.decode {
        return Err(doc.err(
            span_of(root, "run", "decode"),
            "[run].decode",
            tr!("flash computes whole sequences tile by tile and has no decoding loop: remove decode or \"flash\" from [run].variants"),
        ));
    }
    Ok(())
}

/// Grouped key/value heads, rotary positions and decoding must have something to act on, and
/// fit the rest of the scenario.
pub(super) fn check_modern(
    doc: &Doc<'_>,
    root: &DeTable<'_>,
    plan: &Plan,
    variants: &[Variant],
    passes: Passes,
    o: &Options,
) -> Result<()> {
    let gqa = variants.contains(&Variant::Gqa);
    if let Some(span) = span_of(root, "shape", "H_kv")
        && !gqa
    {
        return Err(doc.err(
            Some(span),
            "[shape].H_kv",
            tr!("only the \"gqa\" variant reads fewer key/value heads than query heads: add \"gqa\" to [run].variants or remove H_kv"),
        ));
    }
    if o.mistakes.has(Mistake::OverwriteKvGrad) {
        let (span, field) = (span_of(root, "run", "mistakes"), "[run].mistakes");
        let name = Mistake::OverwriteKvGrad.name();
        let (h, h_kv) = (plan.shape.h, plan.shape.h_kv);
        let why = if variants.iter().any(|&v| v != Variant::Gqa) {
            Some(tr!(
                "\"{mistake}\" is a mistake of grouped-query attention's backward pass: set [run].variants = [\"gqa\"]",
                mistake = name
            ))
        } else if h_kv >= h {
            Some(tr!(
                "\"{mistake}\" needs query heads that share a key/value head: set [shape].H_kv below H = {heads}",
                mistake = name,
                heads = h
            ))
        } else if !passes.backward {
            Some(tr!(
                "\"{mistake}\" is in the gradients: add \"backward\" to [run].passes",
                mistake = name
            ))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(doc.err(span, field, why));
        }
    }
    if gqa && o.mistakes.list().iter().any(|m| !m.backward()) {
        return Err(doc.err(
            span_of(root, "run", "mistakes"),
            "[run].mistakes",
            tr!("the classic mistakes are written into the baseline and MHA kernels: run them with variants \"baseline\" and \"mha\""),
        ));
    }
    if o.rope.is_some() {
        let (span, field) = (span_of(root, "run", "rope"), "[run].rope");
        if o.cross {
            return Err(doc.err(
                span,
                field,
                tr!("rotary positions turn q and k by their positions in one sequence, but cross-attention's queries and keys come from two: remove rope or [shape].S"),
            ));
        }
        // multi-head latent attention turns only its rotary part, checked with its sizes
        for &v in variants.iter().filter(|&&v| v != Variant::Mla) {
            let d = kernel_shape(plan.shape, v).d();
            if !d.is_multiple_of(2) {
                let size = if v == Variant::Baseline { "C" } else { "C/H" };
                return Err(doc.err(
                    span,
                    field,
                    tr!(
                        "rope turns channel pairs, so a head needs an even number of channels; the {v} kernel's head has D = {size} = {d}",
                        v,
                        size,
                        d
                    ),
                ));
            }
        }
    }
    if o.decode {
        let (span, field) = (span_of(root, "run", "decode"), "[run].decode");
        let why = if passes.backward {
            tr!("decode generates token by token, forward only: remove \"backward\" from [run].passes")
        } else if o.cross {
            tr!("decode generates one sequence from its own keys and values: remove [shape].S (cross-attention)")
        } else if !matches!(plan.start, StartKind::Fused | StartKind::Latent(_)) {
            tr!(
                "decode projects each token with the fused w_qkv: start from x (no q, k, v values) with qkv = \"fused\""
            )
        } else if matches!(plan.mask, Mask::Window { .. }) && o.cache.paged.is_some() {
            tr!("a sliding window decodes through its own rolling cache of N + W rows: remove [paged] or [run].window")
        } else if matches!(plan.mask, Mask::Window { .. }) && o.cache.split.is_some() {
            tr!(
                "a sliding window's step already reads at most N + W keys, and splitting them is not traced: remove [run].split_kv or [run].window"
            )
        } else if o.rope.is_some() && (o.cache.paged.is_some() || matches!(plan.mask, Mask::Window { .. })) {
            tr!(
                "rotary positions are traced in a decode run's contiguous cache only: remove [run].rope, or [paged] and [run].window"
            )
        } else if !matches!(plan.mask, Mask::Causal | Mask::Window { .. }) {
            tr!("decode attends over the positions 0..=t it has generated, which is the causal mask: remove [run].mask")
        } else if plan.dropout {
            tr!("decode is inference, where dropout does not act: remove [run].dropout or set mode = \"eval\"")
        } else if !o.mistakes.is_empty() {
            tr!("decode runs the correct kernels only: remove [run].mistakes")
        } else {
            ""
        };
        if !why.is_empty() {
            return Err(doc.err(span, field, why));
        }
    } else if let Some(span) = span_of(root, "run", "split_kv") {
        return Err(doc.err(
            Some(span),
            "[run].split_kv",
            tr!("split_kv splits a decode step's cache: set [run].decode = true"),
        ));
    } else if let Some(v) = root.get("paged") {
        return Err(doc.err(
            Some(v.span()),
            "[paged]",
            tr!("a paged cache is where a decode run keeps its keys and values: set [run].decode = true"),
        ));
    }
    Ok(())
}

/// Sequences that share a block of a paged cache (prefix caching) must have the same tokens in
/// it: each writes its keys and values there, and the block holds one copy.
pub(super) fn check_shared_blocks(
    doc: &Doc<'_>,
    root: &DeTable<'_>,
    shape: Shape,
    init: &Init,
    values: &BTreeMap<Buf, Vec<f32>>,
    o: &Options,
) -> Result<()> {
    let Some(paged) = &o.cache.paged else {
        return Ok(());
    };
    let (t, c, bs) = (shape.t, shape.c, paged.block_size);
    let mb = paged.per_row(t);
    let x = match values.get(&Buf::X) {
        Some(x) => x.clone(),
        None => init.fill(Buf::X, shape.b * t * c),
    };
    let tokens = |bb: usize, blk: usize| {
        let (lo, hi) = (blk * bs, ((blk + 1) * bs).min(t));
        &x[(bb * t + lo) * c..(bb * t + hi) * c]
    };
    for (k, &id) in paged.table.iter().enumerate() {
        let (bb, blk) = (k / mb, k % mb);
        if let Some(b0) = (0..bb).find(|&b0| paged.table[b0 * mb + blk] == id)
            && tokens(b0, blk) != tokens(bb, blk)
        {
            return Err(doc.err(
                span_of(root, "paged", "table"),
                "[paged].table",
                tr!(
                    "rows {b0} and {bb} share block {id}, but their tokens at positions {lo}..{hi} differ: prefix caching shares a block only between sequences with the same tokens there",
                    b0,
                    bb,
                    id,
                    lo = blk * bs,
                    hi = ((blk + 1) * bs).min(t)
                ),
            ));
        }
    }
    Ok(())
}

/// Sink logits (gpt-oss) need `[run].sink_logit`, and are traced in the correct kernels of a
/// whole sequence: not in a decoding loop, nor in the mistaken kernels; the baseline's single
/// head has one.
pub(super) fn check_sink(
    doc: &Doc<'_>,
    root: &DeTable<'_>,
    plan: &Plan,
    variants: &[Variant],
    values: &BTreeMap<Buf, Vec<f32>>,
    o: &Options,
) -> Result<()> {
    if !o.sink_logit {
        if values.contains_key(&Buf::Sink) {
            return Err(doc.err(
                span_of(root, "values", Buf::Sink.name()),
                &field(Buf::Sink),
                tr!("only a run with [run].sink_logit = true reads sink logits: set it, or remove sink"),
            ));
        }
        return Ok(());
    }
    let why = if o.decode {
        tr!("decode runs are traced without sink logits; leave out sink_logit or decode").to_string()
    } else if !o.mistakes.is_empty() {
        tr!("the mistakes are written into kernels without sink logits; leave out sink_logit or [run].mistakes")
            .to_string()
    } else if variants.contains(&Variant::Baseline) && plan.shape.h != 1 {
        tr!(
            "the baseline has a single head and so a single sink logit, but H = {h}: set [shape].H = 1 or remove \"baseline\" from [run].variants",
            h = plan.shape.h
        )
    } else {
        return Ok(());
    };
    Err(doc.err(span_of(root, "run", "sink_logit"), "[run].sink_logit", why))
}

/// A model without biases (`[run] bias = false`) is given none.
pub(super) fn check_bias(
    doc: &Doc<'_>,
    root: &DeTable<'_>,
    values: &BTreeMap<Buf, Vec<f32>>,
    o: &Options,
) -> Result<()> {
    if o.bias {
        return Ok(());
    }
    let biases = [Buf::BQkv, Buf::BQ, Buf::BK, Buf::BV, Buf::BProj];
    match biases.into_iter().find(|b| values.contains_key(b)) {
        Some(b) => Err(doc.err(
            span_of(root, "values", b.name()),
            &field(b),
            tr!("the scenario's linear layers have no biases ([run].bias = false): remove {name}, or the bias line", name = b.name()),
        )),
        None => Ok(()),
    }
}

/// Multi-head latent attention runs alone, from `x` through its own projections, and its
/// sizes `[shape] kv_rank, rope_dim` belong to it: each of the things it is not traced with
/// is one message naming its field.
pub(super) fn check_latent(
    doc: &Doc<'_>,
    root: &DeTable<'_>,
    variants: &[Variant],
    values: &BTreeMap<Buf, Vec<f32>>,
    o: &Options,
) -> Result<()> {
    let mla = variants.contains(&Variant::Mla);
    let given = |b: Buf| {
        values
            .contains_key(&b)
            .then(|| (span_of(root, "values", b.name()), field(b)))
    };
    if o.latent.is_none() {
        if mla {
            return Err(doc.err(
                span_of(root, "run", "variants"),
                "[run].variants",
                tr!("\"mla\" projects keys and values up from a latent: give its sizes [shape].kv_rank and [shape].rope_dim"),
            ));
        }
        return Ok(());
    }
    let run = |key: &str| (span_of(root, "run", key), format!("[run].{key}"));
    let (shape_span, shape_field) = (span_of(root, "shape", "kv_rank"), "[shape].kv_rank".to_string());
    // where the refused field is, and why
    type At = (Option<Range<usize>>, String);
    let refusal: Option<(At, String)> = if !mla || variants.len() > 1 {
        Some((
            (shape_span, shape_field),
            tr!("kv_rank and rope_dim size multi-head latent attention, which runs on its own: set [run].variants = [\"mla\"]").to_string(),
        ))
    } else if let Some(at) = [Buf::Q, Buf::K, Buf::V].into_iter().find_map(given) {
        Some((
            at,
            tr!("multi-head latent attention starts from x through its own projections: remove q, k and v").to_string(),
        ))
    } else if let Some(at) = [
        Buf::WQkv,
        Buf::BQkv,
        Buf::BQ,
        Buf::WK,
        Buf::BK,
        Buf::WV,
        Buf::BV,
        Buf::Memory,
    ]
    .into_iter()
    .find_map(given)
    {
        Some((at, tr!("multi-head latent attention does not read this tensor: its projections are w_q, w_dkv, w_kr, w_uk and w_uv, without biases").to_string()))
    } else if o.cross {
        Some((
            (span_of(root, "shape", "S"), "[shape].S".to_string()),
            tr!("multi-head latent attention is traced as self-attention: remove [shape].S").to_string(),
        ))
    } else if span_of(root, "shape", "H_kv").is_some() {
        Some((
            (span_of(root, "shape", "H_kv"), "[shape].H_kv".to_string()),
            tr!("multi-head latent attention has one latent for every head, not grouped key/value heads: remove H_kv")
                .to_string(),
        ))
    } else if let Some(dr) = o
        .latent
        .map(|l| l.dr)
        .filter(|dr| o.rope.is_some() && !dr.is_multiple_of(2))
    {
        Some((
            (span_of(root, "shape", "rope_dim"), "[shape].rope_dim".to_string()),
            tr!(
                "rope turns the rotary channels of q_pe and k_pe in pairs, so rope_dim must be even; it is {dr}",
                dr
            ),
        ))
    } else if o.dropout.is_some() {
        Some((
            run("dropout"),
            tr!("multi-head latent attention is traced without dropout: remove [run].dropout").to_string(),
        ))
    } else if !o.mistakes.is_empty() {
        Some((run("mistakes"), tr!("the mistakes are written into the plain kernels, not multi-head latent attention: remove [run].mistakes").to_string()))
    } else if o.sink_logit {
        Some((
            run("sink_logit"),
            tr!("multi-head latent attention is traced without sink logits: remove [run].sink_logit").to_string(),
        ))
    } else if o.decode && (o.cache.paged.is_some() || o.cache.split.is_some()) {
        let key = if o.cache.split.is_some() { "split_kv" } else { "decode" };
        Some((
            run(key),
            tr!("the absorbed decode reads its own latent cache, one row per token: remove [paged] and [run].split_kv")
                .to_string(),
        ))
    } else if o.decode && span_of(root, "run", "window").is_some() {
        Some((
            run("window"),
            tr!("the absorbed decode is traced with the causal mask: remove [run].window").to_string(),
        ))
    } else {
        None
    };
    match refusal {
        Some(((span, field), why)) => Err(doc.err(span, &field, why)),
        None => Ok(()),
    }
}
