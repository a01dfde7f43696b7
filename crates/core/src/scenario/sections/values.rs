//! The `[values]` table: the tensors a scenario gives, flat or nested, each checked against
//! its buffer's shape.

use super::super::reader::{Doc, Result, Value};
use crate::engine::Passes;
use crate::engine::registry::{GIVEN, given_shape};
use crate::kernels::attention_mla::Latent;
use crate::tensor::{Shape, checked_numel};
use crate::trace::Buf;
use attn_trace_i18n::tr;
use std::collections::BTreeMap;
use toml::de::DeValue;

pub(in crate::scenario) fn parse_values(
    doc: &Doc<'_>,
    v: &Value<'_>,
    sh: Shape,
    latent: Option<Latent>,
    passes: Passes,
) -> Result<BTreeMap<Buf, Vec<f32>>> {
    let t = doc.table(v, "[values]")?;
    let names = GIVEN.map(Buf::name);
    doc.known_keys(t, &names, "values")?;
    let mut values = BTreeMap::new();
    // in file order, so the first bad tensor reported is the first one the reader meets
    let mut entries: Vec<_> = t.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    for (key, x) in entries {
        let Some(buf) = Buf::from_name(key.get_ref()) else {
            continue;
        };
        // latent attention's weights have no shape without its sizes
        if latent.is_none() && matches!(buf, Buf::WDkv | Buf::WKr | Buf::WUk | Buf::WUv) {
            return Err(doc.err(
                Some(x.span()),
                &field(buf),
                tr!("only the \"mla\" variant reads this weight: add \"mla\" to [run].variants with [shape].kv_rank and rope_dim, or remove it"),
            ));
        }
        let shape = given_shape(buf, sh, latent);
        values.insert(buf, tensor(doc, x, &field(buf), &shape)?);
    }

    // where the run starts decides which tensors may be given together
    let has = |b: Buf| t.get(b.name());
    let core: Vec<Buf> = [Buf::Q, Buf::K, Buf::V]
        .into_iter()
        .filter(|&b| has(b).is_some())
        .collect();
    if !core.is_empty() {
        if core.len() < 3 {
            let missing: Vec<&str> = [Buf::Q, Buf::K, Buf::V]
                .into_iter()
                .filter(|&b| has(b).is_none())
                .map(Buf::name)
                .collect();
            let first = has(core[0]).map(toml::Spanned::span);
            return Err(doc.err(
                first,
                &field(core[0]),
                tr!(
                    "q, k and v start the run at the attention core and must be given together; missing {missing}",
                    missing = missing.join(tr!(" and "))
                ),
            ));
        }
        let projections = [
            Buf::X,
            Buf::WQkv,
            Buf::BQkv,
            Buf::WQ,
            Buf::BQ,
            Buf::WK,
            Buf::BK,
            Buf::WV,
            Buf::BV,
        ];
        if let Some(b) = projections.into_iter().find(|&b| has(b).is_some()) {
            return Err(doc.err(
                has(b).map(toml::Spanned::span),
                &field(b),
                tr!("not used when q, k and v are given (the run starts at the attention core, after the input projection)"),
            ));
        }
        let (w, b) = (has(Buf::WProj), has(Buf::BProj));
        if w.is_some() != b.is_some() {
            let (given, missing, span) = match w {
                Some(w) => (Buf::WProj, Buf::BProj, w.span()),
                None => (Buf::BProj, Buf::WProj, b.map_or(0..0, toml::Spanned::span)),
            };
            return Err(doc.err(
                Some(span),
                &field(given),
                tr!(
                    "the output projection needs both w_proj and b_proj; missing {missing}",
                    missing = missing.name()
                ),
            ));
        }
    }
    if let Some(x) = has(Buf::DOut)
        && !passes.backward
    {
        return Err(doc.err(
            Some(x.span()),
            &field(Buf::DOut),
            tr!("only the backward pass reads d_out; add \"backward\" to [run].passes or remove d_out"),
        ));
    }
    Ok(values)
}

/// The field of a given buffer: `[values].NAME`.
pub(in crate::scenario) fn field(buf: Buf) -> String {
    format!("[values].{}", buf.name())
}

/// One tensor: a flat array of `numel(shape)` numbers, or nested arrays whose inner levels are
/// the trailing dimensions of `shape` and whose outer level holds all the leading ones (so a
/// `[B,T,C]` tensor may be written flat, as `B*T` rows of `C`, or fully nested).
pub(super) fn tensor(doc: &Doc<'_>, v: &Value<'_>, field: &str, shape: &[usize]) -> Result<Vec<f32>> {
    let dims_text = shape.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let Some(expected) = checked_numel(shape) else {
        return Err(doc.err(
            Some(v.span()),
            field,
            tr!(
                "shape [{dims_text}] has more elements than memory can address: use smaller sizes",
                dims_text
            ),
        ));
    };
    let DeValue::Array(_) = v.get_ref() else {
        return Err(doc.err(
            Some(v.span()),
            field,
            tr!(
                "expected an array of {expected} numbers (shape [{dims_text}]), found {found}",
                expected,
                dims_text,
                found = doc.found(v)
            ),
        ));
    };
    // the nesting, read down the first elements; every other branch must match it
    let mut dims = Vec::new();
    let mut probe = v;
    while let DeValue::Array(a) = probe.get_ref() {
        dims.push(a.len());
        match a.first() {
            Some(first) => probe = first,
            None => break,
        }
    }
    let mut out = Vec::with_capacity(expected.min(1 << 20));
    collect(doc, v, field, &dims, &mut out)?;

    let n = dims.len();
    let fits = n <= shape.len()
        && dims[1..] == shape[shape.len() + 1 - n..]
        && checked_numel(&shape[..shape.len() + 1 - n]) == Some(dims[0]);
    if !fits {
        let found = if n == 1 {
            tr!("{n} numbers", n = dims[0])
        } else {
            tr!(
                "nesting [{dims}]",
                dims = dims.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
            )
        };
        return Err(doc.err(
            Some(v.span()),
            field,
            tr!(
                "expected shape [{dims_text}] ({expected} numbers, flat or nested), found {found}",
                dims_text,
                expected,
                found
            ),
        ));
    }
    Ok(out)
}

/// Walks nested arrays whose level `k` must hold `dims[k]` entries, appending the numbers.
pub(super) fn collect(doc: &Doc<'_>, v: &Value<'_>, field: &str, dims: &[usize], out: &mut Vec<f32>) -> Result<()> {
    let items: &[Value<'_>] = match v.get_ref() {
        DeValue::Array(items) => items,
        _ => &[],
    };
    let (len, inner) = (dims[0], &dims[1..]);
    if items.len() != len {
        return Err(doc.err(
            Some(v.span()),
            field,
            tr!(
                "ragged nesting: expected {len} entries like the first row at this level, found {found}",
                len,
                found = items.len()
            ),
        ));
    }
    for (k, item) in items.iter().enumerate() {
        let f = format!("{field}[{k}]");
        match (item.get_ref(), inner.is_empty()) {
            (DeValue::Array(_), false) => collect(doc, item, &f, inner, out)?,
            (DeValue::Array(_), true) => {
                return Err(doc.err(
                    Some(item.span()),
                    &f,
                    tr!("ragged nesting: expected a number here like the other entries at this level, found an array"),
                ));
            }
            (_, false) => {
                return Err(doc.err(
                    Some(item.span()),
                    &f,
                    tr!(
                        "ragged nesting: expected an array of {n} entries like the first row, found {found}",
                        n = inner[0],
                        found = doc.found(item)
                    ),
                ));
            }
            (_, true) => out.push(doc.number(item, &f)?),
        }
    }
    Ok(())
}
