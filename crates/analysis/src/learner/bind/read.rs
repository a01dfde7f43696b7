//! Bindings read: from the trace's header (JSON, what the Python recorder writes) or a TOML
//! file (`grade --bind FILE`), every problem one line naming where.

use super::{Bindings, BufferDecl, Expr, MAX_FILE_BYTES, ViewDecl};
use attn_trace_i18n::tr;

/// A number or an expression, from JSON (`4`, `"3*C"`).
fn json_expr(v: &serde_json::Value, what: &str) -> Result<Expr, String> {
    match v {
        serde_json::Value::Number(n) => n
            .as_i64()
            .map(Expr::Num)
            .ok_or_else(|| tr!("{what}: expected a whole number, found {n}", what, n).to_string()),
        serde_json::Value::String(s) => Expr::parse(s).map_err(|e| format!("{what}: {e}")),
        other => Err(tr!(
            "{what}: expected a whole number or an expression such as \"3*C\", found {other}",
            what,
            other
        )),
    }
}

fn json_view(v: &serde_json::Value, buffer: &str) -> Result<ViewDecl, String> {
    let obj = match v {
        serde_json::Value::String(t) => {
            return Ok(ViewDecl {
                tensor: t.clone(),
                offset: Expr::Num(0),
                strides: None,
                slice: Vec::new(),
            });
        }
        serde_json::Value::Object(o) => o,
        other => {
            return Err(tr!(
                "{buffer}: expected a view {{\"tensor\":…,\"offset\":…,\"strides\":{{…}}}} or a tensor's name, found {other}",
                buffer,
                other
            ));
        }
    };
    for key in obj.keys() {
        if !["tensor", "offset", "strides", "slice"].contains(&key.as_str()) {
            return Err(tr!(
                "{buffer}: unknown key \"{key}\" in a view; a view has tensor, offset, strides and slice",
                buffer,
                key
            ));
        }
    }
    let tensor = match obj.get("tensor") {
        Some(serde_json::Value::String(t)) => t.clone(),
        _ => {
            return Err(tr!(
                "{buffer}: a view needs \"tensor\", the reference tensor's name",
                buffer
            ));
        }
    };
    let offset = match obj.get("offset") {
        Some(o) => json_expr(o, &format!("{buffer} → {tensor}: offset"))?,
        None => Expr::Num(0),
    };
    let strides = match obj.get("strides") {
        None => None,
        Some(serde_json::Value::Object(s)) => Some(
            s.iter()
                .map(|(d, x)| Ok((d.clone(), json_expr(x, &format!("{buffer} → {tensor}: stride of {d}"))?)))
                .collect::<Result<Vec<_>, String>>()?,
        ),
        Some(other) => {
            return Err(tr!(
                "{buffer} → {tensor}: \"strides\" must be an object {{\"dimension\": stride, …}}, found {other}",
                buffer,
                tensor,
                other
            ));
        }
    };
    let slice = match obj.get("slice") {
        None => Vec::new(),
        Some(serde_json::Value::Object(s)) => s
            .iter()
            .map(|(d, x)| {
                let what = format!("{buffer} → {tensor}: slice of {d}");
                match x.as_array().map(Vec::as_slice) {
                    Some([lo, hi]) => Ok((d.clone(), json_expr(lo, &what)?, json_expr(hi, &what)?)),
                    _ => Err(tr!("{what}: expected [from, to]", what)),
                }
            })
            .collect::<Result<Vec<_>, String>>()?,
        Some(other) => {
            return Err(tr!(
                "{buffer} → {tensor}: \"slice\" must be an object {{\"dimension\": [from, to], …}}, found {other}",
                buffer,
                tensor,
                other
            ));
        }
    };
    Ok(ViewDecl {
        tensor,
        offset,
        strides,
        slice,
    })
}

impl Bindings {
    /// Reads a bindings file (`grade --bind FILE`): a regular file of at most
    /// [`MAX_FILE_BYTES`], UTF-8, TOML. Every problem is one line naming the file.
    pub fn load(path: &std::path::Path) -> Result<Bindings, String> {
        let shown = path.display().to_string();
        let bytes = attn_trace_core::files::input::read(path, MAX_FILE_BYTES, attn_trace_i18n::msg!("a bindings file"))
            .map_err(|e| format!("{shown}: {e}"))?;
        let text = String::from_utf8(bytes).map_err(|_| format!("{shown}: {}", tr!("not UTF-8 text")))?;
        Bindings::from_toml(text.strip_prefix('\u{feff}').unwrap_or(&text), &shown)
    }

    /// The trace header's `"bind"` object: learner buffer → a view, a tensor's name, or a list
    /// of them. `origin` names the header in messages.
    pub fn from_json(v: &serde_json::Value, origin: &str) -> Result<Bindings, String> {
        let serde_json::Value::Object(map) = v else {
            return Err(tr!(
                "expected an object {{\"your buffer\": view or [views], …}}, found {v}",
                v
            ));
        };
        let mut buffers = Vec::new();
        for (name, views) in map {
            let views = match views {
                serde_json::Value::Array(list) => list
                    .iter()
                    .map(|x| json_view(x, name))
                    .collect::<Result<Vec<_>, String>>()?,
                one => vec![json_view(one, name)?],
            };
            buffers.push(BufferDecl {
                name: name.clone(),
                views,
                origin: origin.to_string(),
            });
        }
        Ok(Bindings { buffers })
    }

    /// A bindings file in TOML: a table per learner buffer whose keys are reference tensors,
    /// each an inline table `{ offset, strides, slice }` (`{}`: the tensor's own layout), or a
    /// top-level `name = "tensor"` for a rename. Messages start `path:line:`.
    pub fn from_toml(text: &str, path: &str) -> Result<Bindings, String> {
        use toml::de::{DeTable, DeValue};
        let at = |span: Option<std::ops::Range<usize>>| match span {
            Some(s) => format!("{path}:{}", attn_trace_core::scenario::line_column(text, s.start).0),
            None => path.to_string(),
        };
        let root = DeTable::parse(text).map_err(|e| format!("{}: {}", at(e.span()), e.message().trim_end()))?;
        let expr = |v: &toml::Spanned<DeValue<'_>>, what: &str| -> Result<Expr, String> {
            match v.get_ref() {
                DeValue::Integer(n) => n
                    .as_str()
                    .parse::<i64>()
                    .map(Expr::Num)
                    .map_err(|_| format!("{}: {what}: {}", at(Some(v.span())), tr!("expected a whole number"))),
                DeValue::String(s) => Expr::parse(s).map_err(|e| format!("{}: {what}: {e}", at(Some(v.span())))),
                _ => Err(format!(
                    "{}: {what}: {}",
                    at(Some(v.span())),
                    tr!("expected a whole number or an expression such as \"3*C\"")
                )),
            }
        };
        let mut buffers = Vec::new();
        for (key, value) in root.get_ref() {
            let name = key.get_ref().to_string();
            let origin = at(Some(key.span()));
            match value.get_ref() {
                DeValue::String(t) => buffers.push(BufferDecl {
                    name,
                    views: vec![ViewDecl {
                        tensor: t.to_string(),
                        offset: Expr::Num(0),
                        strides: None,
                        slice: Vec::new(),
                    }],
                    origin,
                }),
                DeValue::Table(views) => {
                    let mut list = Vec::new();
                    for (tensor, view) in views {
                        let tensor_name = tensor.get_ref().to_string();
                        let what = format!("[{name}].{tensor_name}");
                        let DeValue::Table(v) = view.get_ref() else {
                            let why = if matches!(view.get_ref(), DeValue::String(_)) {
                                // TOML puts every key after [name] into that table
                                tr!(
                                    "expected a view { offset = …, strides = { … } }; a rename such as att = \"probs\" goes above the first [table], where it is not one of its keys"
                                )
                            } else {
                                tr!(
                                    "expected a view { offset = …, strides = { … } }, or {} for the tensor's own layout"
                                )
                            };
                            return Err(format!("{}: {what}: {why}", at(Some(view.span()))));
                        };
                        let mut decl = ViewDecl {
                            tensor: tensor_name.clone(),
                            offset: Expr::Num(0),
                            strides: None,
                            slice: Vec::new(),
                        };
                        for (k, x) in v {
                            match k.get_ref().as_ref() {
                                "offset" => decl.offset = expr(x, &format!("{what}.offset"))?,
                                "strides" => {
                                    let DeValue::Table(s) = x.get_ref() else {
                                        return Err(format!(
                                            "{}: {what}.strides: {}",
                                            at(Some(x.span())),
                                            tr!("expected { dimension = stride, … }")
                                        ));
                                    };
                                    let mut strides = Vec::new();
                                    for (d, sx) in s {
                                        let d = d.get_ref().to_string();
                                        strides.push((d.clone(), expr(sx, &format!("{what}.strides.{d}"))?));
                                    }
                                    decl.strides = Some(strides);
                                }
                                "slice" => {
                                    let DeValue::Table(s) = x.get_ref() else {
                                        return Err(format!(
                                            "{}: {what}.slice: {}",
                                            at(Some(x.span())),
                                            tr!("expected { dimension = [from, to], … }")
                                        ));
                                    };
                                    for (d, sx) in s {
                                        let d = d.get_ref().to_string();
                                        let field = format!("{what}.slice.{d}");
                                        let DeValue::Array(pair) = sx.get_ref() else {
                                            return Err(format!(
                                                "{}: {field}: {}",
                                                at(Some(sx.span())),
                                                tr!("expected [from, to]")
                                            ));
                                        };
                                        let items: Vec<&toml::Spanned<DeValue<'_>>> = pair.iter().collect();
                                        let [lo, hi] = items.as_slice() else {
                                            return Err(format!(
                                                "{}: {field}: {}",
                                                at(Some(sx.span())),
                                                tr!("expected [from, to]")
                                            ));
                                        };
                                        decl.slice.push((d, expr(lo, &field)?, expr(hi, &field)?));
                                    }
                                }
                                other => {
                                    return Err(format!(
                                        "{}: {what}: {}",
                                        at(Some(k.span())),
                                        tr!("unknown key \"{other}\"; a view has offset, strides and slice", other)
                                    ));
                                }
                            }
                        }
                        list.push(decl);
                    }
                    if list.is_empty() {
                        return Err(format!(
                            "{origin}: [{name}]: {}",
                            tr!(
                                "names no tensor; give one view per reference tensor, e.g. q = { offset = 0, strides = { … } }"
                            )
                        ));
                    }
                    buffers.push(BufferDecl {
                        name,
                        views: list,
                        origin,
                    });
                }
                _ => {
                    return Err(format!(
                        "{origin}: {name}: {}",
                        tr!(
                            "expected a table of views [{name}] or a tensor's name (a rename)",
                            name = &name
                        )
                    ));
                }
            }
        }
        Ok(Bindings { buffers })
    }
}
