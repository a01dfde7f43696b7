//! The `[init]` table: how the inputs not given are drawn.

use super::super::reader::{Doc, Result, Value};
use super::super::{DEFAULT_STD, Dist, Init};
use super::{DISTS, INIT_KEYS};
use attn_trace_i18n::tr;

pub(in crate::scenario) fn parse_init(doc: &Doc<'_>, v: &Value<'_>) -> Result<Init> {
    let t = doc.table(v, "[init]")?;
    doc.known_keys(t, INIT_KEYS, "init")?;
    let seed = match t.get("seed") {
        Some(x) => doc.integer(x, "[init].seed", 0, i64::MAX as i128, tr!("a non-negative integer"))? as u64,
        None => 0,
    };
    let dist_name = match t.get("dist") {
        Some(x) => {
            let name = doc.string(x, "[init].dist")?;
            if !DISTS.contains(&name) {
                let quoted: Vec<String> = DISTS.iter().map(|d| format!("\"{d}\"")).collect();
                return Err(doc.err(
                    Some(x.span()),
                    "[init].dist",
                    tr!(
                        "unknown dist \"{name}\"; expected one of {choices}",
                        name,
                        choices = quoted.join(tr!(", "))
                    ),
                ));
            }
            name
        }
        None => "normal",
    };
    // each dist takes at most its own parameter; another one is a mistake, not a no-op
    let param = |key: &str, default: f32, non_negative: bool| -> Result<f32> {
        let field = format!("[init].{key}");
        match t.get(key) {
            Some(x) => {
                let p = doc.number(x, &field)?;
                if non_negative && p < 0.0 {
                    return Err(doc.err(
                        Some(x.span()),
                        &field,
                        tr!("expected a non-negative number, found {p}", p),
                    ));
                }
                Ok(p)
            }
            None => Ok(default),
        }
    };
    let reject = |key: &str| -> Result<()> {
        match t.get(key) {
            Some(x) => Err(doc.err(
                Some(x.span()),
                &format!("[init].{key}"),
                tr!("dist = \"{dist_name}\" takes no {key}; std goes with \"normal\", scale with \"uniform\" and \"arange\"", dist_name, key),
            )),
            None => Ok(()),
        }
    };
    let dist = match dist_name {
        "normal" => {
            reject("scale")?;
            Dist::Normal {
                std: param("std", DEFAULT_STD, true)?,
            }
        }
        "uniform" => {
            reject("std")?;
            Dist::Uniform {
                scale: param("scale", 1.0, true)?,
            }
        }
        "arange" => {
            reject("std")?;
            Dist::Arange {
                scale: param("scale", 1.0, false)?,
            }
        }
        other => {
            reject("std")?;
            reject("scale")?;
            if other == "zeros" { Dist::Zeros } else { Dist::Ones }
        }
    };
    Ok(Init { seed, dist })
}
