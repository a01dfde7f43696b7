//! The `[shape]` table: the sizes, cross-attention's `S`, the number of layers and multi-head
//! latent attention's ranks.

use super::super::reader::{Doc, Result, Value};
use super::SHAPE_KEYS;
use crate::kernels::attention_mla::Latent;
use crate::tensor::Shape;
use attn_trace_i18n::tr;

/// The sizes, and whether `S` (cross-attention) was given.
pub(in crate::scenario) fn parse_shape(doc: &Doc<'_>, v: &Value<'_>) -> Result<(Shape, bool)> {
    let t = doc.table(v, "[shape]")?;
    doc.known_keys(t, SHAPE_KEYS, "shape")?;
    let get = |key: &str| -> Result<usize> {
        match t.get(key) {
            Some(x) => doc.size(x, &format!("[shape].{key}")),
            None => Err(doc.err(
                Some(v.span()),
                &format!("[shape].{key}"),
                tr!("missing: [shape] needs B, T and C (and optionally H, default 1)"),
            )),
        }
    };
    let (b, tt, c) = (get("B")?, get("T")?, get("C")?);
    let h = match t.get("H") {
        Some(x) => doc.size(x, "[shape].H")?,
        None => 1,
    };
    if c % h != 0 {
        let span = t.get("H").map(toml::Spanned::span);
        return Err(doc.err(
            span,
            "[shape].H",
            tr!(
                "C = {c} is not divisible by H = {h}: every head needs D = C/H whole channels",
                c,
                h
            ),
        ));
    }
    let h_kv = match t.get("H_kv") {
        Some(x) => {
            let h_kv = doc.size(x, "[shape].H_kv")?;
            if h % h_kv != 0 {
                return Err(doc.err(
                    Some(x.span()),
                    "[shape].H_kv",
                    tr!(
                        "H = {h} is not divisible by H_kv = {h_kv}: each key/value head serves H/H_kv query heads (try a divisor of {h})",
                        h,
                        h_kv
                    ),
                ));
            }
            h_kv
        }
        None => h,
    };
    let shape = match t.get("S") {
        Some(x) => (Shape::cross(b, doc.size(x, "[shape].S")?, tt, c, h), true),
        None => (Shape::new(b, tt, c, h), false),
    };
    Ok((shape.0.with_kv_heads(h_kv), shape.1))
}

/// Most layers a scenario may have: `grade` runs the reference once per layer, and a few
/// layers are what a layer offset needs.
pub const MAX_LAYERS: usize = 64;

/// `[shape] L`: the layers `grade` and `inputs` run (1 when left out).
pub(in crate::scenario) fn parse_layers(doc: &Doc<'_>, v: &Value<'_>) -> Result<usize> {
    let t = doc.table(v, "[shape]")?;
    match t.get("L") {
        Some(x) => {
            let what = tr!("a number of layers from 1 to {max}", max = MAX_LAYERS);
            Ok(doc.integer(x, "[shape].L", 1, MAX_LAYERS as i128, &what)? as usize)
        }
        None => Ok(1),
    }
}

/// Multi-head latent attention's sizes, `[shape] kv_rank = R, rope_dim = DR`, when given: both
/// or neither, each at least 1.
pub(in crate::scenario) fn parse_latent(doc: &Doc<'_>, v: &Value<'_>) -> Result<Option<Latent>> {
    let t = doc.table(v, "[shape]")?;
    match (t.get("kv_rank"), t.get("rope_dim")) {
        (None, None) => Ok(None),
        (Some(r), Some(dr)) => Ok(Some(Latent {
            r: doc.size(r, "[shape].kv_rank")?,
            dr: doc.size(dr, "[shape].rope_dim")?,
        })),
        (Some(x), None) | (None, Some(x)) => {
            let field = if t.get("kv_rank").is_some() {
                "[shape].rope_dim"
            } else {
                "[shape].kv_rank"
            };
            Err(doc.err(
                Some(x.span()),
                field,
                tr!("missing: multi-head latent attention needs both kv_rank (R, the latent's channels) and rope_dim (DR, the rotary channels)"),
            ))
        }
    }
}
