//! The `[focus]` table: the variant, pass and cell the TUI opens on.

use super::super::Focus;
use super::super::reader::{Doc, Result, Value};
use super::{FOCUS_KEYS, named};
use crate::engine::Passes;
use crate::kernels::Variant;
use crate::tensor::Shape;
use crate::trace::Pass;
use attn_trace_i18n::tr;

pub(in crate::scenario) fn parse_focus(
    doc: &Doc<'_>,
    v: &Value<'_>,
    sh: Shape,
    variants: &[Variant],
    passes: Passes,
) -> Result<Focus> {
    let t = doc.table(v, "[focus]")?;
    doc.known_keys(t, FOCUS_KEYS, "focus")?;
    let variant = match t.get("variant") {
        Some(x) => {
            let var = doc.choice(
                x,
                "[focus].variant",
                &named(&Variant::ALL, |v| v.name()),
                tr!("variant"),
            )?;
            if !variants.contains(&var) {
                return Err(doc.err(
                    Some(x.span()),
                    "[focus].variant",
                    tr!("variant \"{var}\" is not among [run].variants", var),
                ));
            }
            Some(var)
        }
        None => None,
    };
    let pass = match t.get("pass") {
        Some(x) => {
            let p = doc.choice(x, "[focus].pass", &named(&Pass::ALL, |p| p.name()), tr!("pass"))?;
            let runs = match p {
                Pass::Forward => passes.forward,
                Pass::Backward => passes.backward,
            };
            if !runs {
                return Err(doc.err(
                    Some(x.span()),
                    "[focus].pass",
                    tr!("pass \"{pass}\" is not among [run].passes", pass = p.name()),
                ));
            }
            Some(p)
        }
        None => None,
    };
    let index = |key: &str, size: usize, what: String| -> Result<usize> {
        match t.get(key) {
            Some(x) => Ok(doc.integer(x, &format!("[focus].{key}"), 0, size as i128 - 1, &what)? as usize),
            None => Ok(0),
        }
    };
    let range = |size: usize, dim: &str| {
        if size == 1 {
            tr!("0 (the only index, since {dim} = 1)", dim)
        } else {
            tr!("an index in 0..{size} ({dim} = {size})", size, dim)
        }
    };
    // the baseline has a single head, so a focus on it can only name head 0
    let (heads, h_what) = match variant {
        Some(v) if !v.has_heads() => (1, tr!("0 (the baseline has a single head)").to_string()),
        _ => (sh.h, range(sh.h, "H")),
    };
    Ok(Focus {
        variant,
        pass,
        b: index("b", sh.b, range(sh.b, "B"))?,
        h: index("h", heads, h_what)?,
        i: index("i", sh.s, range(sh.s, if sh.is_cross() { "S" } else { "T" }))?,
        j: index("j", sh.t, range(sh.t, "T"))?,
    })
}
