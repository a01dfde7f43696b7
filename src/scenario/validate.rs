//! Checks that span tables: where the run starts, what it projects and which mistakes it makes
//! must agree with each other.

use super::reader::{Doc, Result, Value};
use super::{Mode, Options, Qkv};
use crate::kernels::Variant;
use crate::kernels::attention_mistakes::Mistake;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// The span of `[table].key`, when the file has it.
pub(super) fn span_of(root: &DeTable<'_>, table: &str, key: &str) -> Option<Range<usize>> {
    match root.get(table)?.get_ref() {
        DeValue::Table(t) => t.get(key).map(|v| v.span()),
        _ => None,
    }
}

/// Cross-attention, the projection style and the tensors given must agree.
pub(super) fn check_start(
    doc: &Doc<'_>,
    root: &DeTable<'_>,
    shape_v: &Value<'_>,
    values: &BTreeMap<String, Vec<f32>>,
    o: &Options,
) -> Result<()> {
    let from_x = !values.contains_key("q");
    let given = |names: &[&'static str]| names.iter().copied().find(|n| values.contains_key(*n));
    let at = |n: &str| span_of(root, "values", n);
    if o.cross && from_x && o.qkv == Qkv::Fused {
        return Err(doc.err(
            span_of(root, "shape", "S").or(Some(shape_v.span())),
            "[shape].S",
            "cross-attention projects x and memory with their own weights: set [run].qkv = \"separate\" (or give q, k and v)",
        ));
    }
    if let Some(n) = given(&["memory"]) {
        let why = if !from_x {
            "not used when q, k and v are given (the run starts at the attention core)"
        } else if !o.cross {
            "memory is the key/value input of cross-attention: give [shape].S, the number of queries"
        } else {
            ""
        };
        if !why.is_empty() {
            return Err(doc.err(at(n), "[values].memory", why));
        }
    }
    let separate = ["w_q", "b_q", "w_k", "b_k", "w_v", "b_v"];
    match o.qkv {
        Qkv::Fused => {
            if let Some(n) = given(&separate) {
                return Err(doc.err(
                    at(n),
                    &format!("[values].{n}"),
                    "belongs to qkv = \"separate\"; this scenario uses the fused w_qkv (set [run].qkv = \"separate\")",
                ));
            }
        }
        Qkv::Separate => {
            if let Some(n) = given(&["w_qkv", "b_qkv"]) {
                return Err(doc.err(
                    at(n),
                    &format!("[values].{n}"),
                    "belongs to qkv = \"fused\"; with qkv = \"separate\" give w_q, b_q, w_k, b_k, w_v, b_v",
                ));
            }
            if !from_x {
                return Err(doc.err(
                    span_of(root, "run", "qkv"),
                    "[run].qkv",
                    "q, k and v are given, so nothing is projected: remove qkv or give x instead",
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
            return Err(doc.err(span.clone(), field, format!("\"{}\" {why}", m.name())));
        }
        Ok(())
    };
    need(
        Mistake::NoInputProjection,
        plan.start != crate::engine::StartKind::Qkv,
        "needs a run that starts at x: with q, k and v given there is no input projection to leave out",
    )?;
    need(
        Mistake::NoOutputProjection,
        plan.proj,
        "needs an output projection to leave out: start at x, or give w_proj and b_proj",
    )?;
    need(
        Mistake::DropoutNotApplied,
        plan.dropout,
        "needs dropout to forget: set [run].dropout above 0 with mode = \"train\"",
    )
}

/// The flash variant and the `[flash]` table go together, and flash runs neither dropout nor
/// the mistakes (both live in the plain kernels).
pub(super) fn check_flash(doc: &Doc<'_>, root: &DeTable<'_>, variants: &[Variant], o: &Options) -> Result<()> {
    let flash = variants.contains(&Variant::Flash);
    if let Some(v) = root.get("flash")
        && !flash
    {
        return Err(doc.err(
            Some(v.span()),
            "[flash]",
            "sets the tile sizes of the flash variant, which this scenario does not run: add \"flash\" to [run].variants or remove [flash]",
        ));
    }
    if !flash {
        return Ok(());
    }
    if o.dropout.is_some() && o.mode == Mode::Train {
        return Err(doc.err(
            span_of(root, "run", "dropout"),
            "[run].dropout",
            "the flash variant has no dropout: remove dropout, set mode = \"eval\", or remove \"flash\" from [run].variants",
        ));
    }
    if !o.mistakes.is_empty() {
        return Err(doc.err(
            span_of(root, "run", "mistakes"),
            "[run].mistakes",
            "the mistakes are made in the plain kernels and flash has none: remove \"flash\" from [run].variants",
        ));
    }
    Ok(())
}
