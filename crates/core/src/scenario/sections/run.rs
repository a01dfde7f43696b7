//! The `[run]` table: variants, passes, the mask (named, a sliding window, or an explicit
//! matrix), and every option of the run.

use super::super::reader::{Doc, Result, Value};
use super::super::{Mode, Options, Qkv};
use super::{RUN_KEYS, named};
use crate::engine::{Dropout, Passes};
use crate::kernels::attention_flash::Tiles;
use crate::kernels::attention_mistakes::{Mistake, Mistakes};
use crate::kernels::decode::CacheSpec;
use crate::kernels::rope::{DEFAULT_BASE, Pairs, Rope};
use crate::kernels::{Mask, Variant};
use crate::tensor::Shape;
use crate::trace::Pass;
use attn_trace_i18n::tr;
use toml::de::{DeTable, DeValue};

/// The `[run]` table.
pub(in crate::scenario) struct RunTable {
    pub variants: Vec<Variant>,
    pub passes: Passes,
    pub mask: Mask,
    pub opts: Options,
}

pub(in crate::scenario) fn parse_run(doc: &Doc<'_>, v: &Value<'_>, shape: Shape, cross: bool) -> Result<RunTable> {
    let t = doc.table(v, "[run]")?;
    doc.known_keys(t, RUN_KEYS, "run")?;
    let variants = match t.get("variants") {
        Some(x) => doc.names(x, "[run].variants", &named(&Variant::ALL, |v| v.name()), tr!("variant"))?,
        None => Variant::DEFAULT.to_vec(),
    };
    let passes = match t.get("passes") {
        Some(x) => {
            let list = doc.names(x, "[run].passes", &named(&Pass::ALL, |p| p.name()), tr!("pass"))?;
            Passes {
                forward: list.contains(&Pass::Forward),
                backward: list.contains(&Pass::Backward),
            }
        }
        None => Passes::BOTH,
    };
    let mask = match t.get("mask") {
        Some(x) if matches!(x.get_ref(), DeValue::Array(_)) => mask_matrix(doc, x, shape)?,
        Some(x) => doc.choice(x, "[run].mask", &named(&Mask::NAMED, Mask::name), tr!("mask"))?,
        None => Mask::Causal,
    };
    let mask = parse_window(doc, t, mask, shape, cross)?;
    let qkv = match t.get("qkv") {
        Some(x) => doc.choice(x, "[run].qkv", &named(&Qkv::ALL, |q| q.name()), tr!("qkv"))?,
        None => Qkv::Fused,
    };
    let dropout = match t.get("dropout") {
        Some(x) => {
            let p = doc.number(x, "[run].dropout")?;
            if !(0.0..1.0).contains(&p) {
                return Err(doc.err(
                    Some(x.span()),
                    "[run].dropout",
                    tr!("expected a probability in [0, 1), found {p}", p),
                ));
            }
            let seed = match t.get("dropout_seed") {
                Some(s) => doc.integer(
                    s,
                    "[run].dropout_seed",
                    0,
                    i64::MAX as i128,
                    tr!("a non-negative integer"),
                )? as u64,
                None => 0,
            };
            (p > 0.0).then_some(Dropout { p, seed })
        }
        None => {
            if let Some(s) = t.get("dropout_seed") {
                return Err(doc.err(
                    Some(s.span()),
                    "[run].dropout_seed",
                    tr!("there is no dropout to seed: set [run].dropout too"),
                ));
            }
            None
        }
    };
    let mode = match t.get("mode") {
        Some(x) => doc.choice(x, "[run].mode", &named(&Mode::ALL, |m| m.name()), tr!("mode"))?,
        None => Mode::Train,
    };
    let mistakes = match t.get("mistakes") {
        Some(x) => {
            let table = named(&Mistake::ALL, |m| m.name());
            Mistakes::of(&doc.names(x, "[run].mistakes", &table, tr!("mistake"))?)
        }
        None => Mistakes::NONE,
    };
    let rope = match t.get("rope") {
        Some(x) => {
            let pairs = doc.choice(x, "[run].rope", &named(&Pairs::ALL, |p| p.name()), "rope")?;
            let base = match t.get("rope_base") {
                Some(b) => {
                    let base = doc.number(b, "[run].rope_base")?;
                    if base <= 1.0 {
                        return Err(doc.err(
                            Some(b.span()),
                            "[run].rope_base",
                            tr!(
                                "expected a number above 1 (θ_m = base^(−2m/D) must shrink with m), found {base}",
                                base
                            ),
                        ));
                    }
                    base
                }
                None => DEFAULT_BASE,
            };
            Some(Rope { pairs, base })
        }
        None => {
            if let Some(b) = t.get("rope_base") {
                return Err(doc.err(
                    Some(b.span()),
                    "[run].rope_base",
                    "there is no rotation to set the base of: set [run].rope = \"interleaved\" or \"half\" too",
                ));
            }
            None
        }
    };
    let decode = match t.get("decode") {
        Some(x) => doc.boolean(x, "[run].decode")?,
        None => false,
    };
    // a split decode step: P parts of at least one position each
    let split = match t.get("split_kv") {
        Some(x) => {
            let max = shape.t as i128;
            let what = tr!("a number of parts from 1 to T = {max}", max);
            Some(doc.integer(x, "[run].split_kv", 1, max, &what)? as usize)
        }
        None => None,
    };
    let sink_logit = match t.get("sink_logit") {
        Some(x) => doc.boolean(x, "[run].sink_logit")?,
        None => false,
    };
    let bias = match t.get("bias") {
        Some(x) => doc.boolean(x, "[run].bias")?,
        None => true,
    };
    // a decode run generates: forward only, so its default is the forward pass alone
    let passes = if decode && t.get("passes").is_none() {
        Passes::FORWARD
    } else {
        passes
    };
    Ok(RunTable {
        variants,
        passes,
        mask,
        opts: Options {
            cross,
            qkv,
            dropout,
            mode,
            mistakes,
            rope,
            decode,
            cache: CacheSpec { paged: None, split },
            sink_logit,
            latent: None,
            tiles: Tiles::default(),
            bias,
        },
    })
}

/// `[run] window = W` and `sinks = N`: the causal mask narrowed to a band of `W` keys, with the
/// first `N` positions kept visible to every query. A window is causal by definition, so it
/// refuses another mask and cross-attention (whose keys are not positions of the queries').
fn parse_window(doc: &Doc<'_>, t: &DeTable<'_>, mask: Mask, shape: Shape, cross: bool) -> Result<Mask> {
    let Some(x) = t.get("window") else {
        if let Some(n) = t.get("sinks") {
            return Err(doc.err(
                Some(n.span()),
                "[run].sinks",
                tr!("sink tokens stay visible when a window would hide them: set [run].window too"),
            ));
        }
        return Ok(mask);
    };
    let w = doc.size(x, "[run].window")?;
    let why = if mask != Mask::Causal {
        tr!("a sliding window narrows the causal mask: remove [run].mask or set it to \"causal\"")
    } else if cross {
        tr!("a sliding window counts positions of one sequence: remove [shape].S (cross-attention)")
    } else {
        ""
    };
    if !why.is_empty() {
        return Err(doc.err(Some(x.span()), "[run].window", why));
    }
    let sinks = match t.get("sinks") {
        Some(n) => {
            let max = shape.t as i128;
            doc.integer(n, "[run].sinks", 0, max, &tr!("an integer from 0 to T = {max}", max))? as usize
        }
        None => 0,
    };
    Ok(Mask::Window { w, sinks })
}

/// An explicit mask: `S` rows of `T` entries, 1 (or true) where query `i` may see key `j`.
pub(super) fn mask_matrix(doc: &Doc<'_>, v: &Value<'_>, shape: Shape) -> Result<Mask> {
    let (s, t) = (shape.s, shape.t);
    let field = "[run].mask";
    let expected = tr!(
        "an S×T = {s}×{t} matrix of 0 and 1 (1: the query may see the key)",
        s,
        t
    );
    let DeValue::Array(rows) = v.get_ref() else {
        return Err(doc.err(Some(v.span()), field, tr!("expected {expected}", expected)));
    };
    if rows.len() != s {
        return Err(doc.err(
            Some(v.span()),
            field,
            tr!("expected {expected}, found {n} rows", expected, n = rows.len()),
        ));
    }
    let mut keep = Vec::with_capacity(s);
    for (i, row) in rows.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let DeValue::Array(items) = row.get_ref() else {
            return Err(doc.err(
                Some(row.span()),
                &f,
                tr!(
                    "expected a row of {t} entries, found {found}",
                    t,
                    found = doc.found(row)
                ),
            ));
        };
        if items.len() != t {
            return Err(doc.err(
                Some(row.span()),
                &f,
                tr!("expected a row of {t} entries, found {found}", t, found = items.len()),
            ));
        }
        let mut out = Vec::with_capacity(t);
        for (j, item) in items.iter().enumerate() {
            let visible = match item.get_ref() {
                DeValue::Boolean(b) => *b,
                DeValue::Integer(n) if matches!(n.as_str(), "0" | "1") => n.as_str() == "1",
                _ => {
                    return Err(doc.err(
                        Some(item.span()),
                        &format!("{f}[{j}]"),
                        tr!("expected 0 or 1, found {found}", found = doc.found(item)),
                    ));
                }
            };
            out.push(visible);
        }
        if !out.contains(&true) {
            return Err(doc.err(
                Some(row.span()),
                &f,
                tr!(
                    "query {i} may see no key: softmax of a row of −1e9 is uniform, not zero; give it at least one 1",
                    i
                ),
            ));
        }
        keep.push(out);
    }
    Ok(Mask::explicit(&keep))
}
