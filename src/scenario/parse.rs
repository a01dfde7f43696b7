//! From TOML text to a validated [`Scenario`]: every key is known, every value has the right
//! type and range, and every error points at the field, line and column that caused it.

use super::{Dist, Focus, Init, Mode, Options, Qkv, Scenario, ScenarioError, budget_error, value_shape};
use crate::engine::{Dropout, Passes};
use crate::kernels::attention_mistakes::{Mistake, Mistakes};
use crate::kernels::{Mask, Variant};
use crate::tensor::{Shape, numel};
use crate::trace::Pass;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

type Result<T> = std::result::Result<T, ScenarioError>;
type Value<'i> = Spanned<DeValue<'i>>;

/// Keys of each table, in the order the docs list them.
const ROOT_KEYS: &[&str] = &["title", "about", "shape", "run", "init", "values", "focus"];
const SHAPE_KEYS: &[&str] = &["B", "S", "T", "C", "H"];
const RUN_KEYS: &[&str] = &[
    "variants",
    "passes",
    "mask",
    "qkv",
    "dropout",
    "dropout_seed",
    "mode",
    "mistakes",
];
const INIT_KEYS: &[&str] = &["seed", "dist", "std", "scale"];
const FOCUS_KEYS: &[&str] = &["variant", "pass", "b", "h", "i", "j"];

/// The text being parsed and the name to report it under.
struct Doc<'a> {
    text: &'a str,
    source: &'a str,
}

impl Doc<'_> {
    fn err(&self, span: Option<Range<usize>>, field: &str, message: impl Into<String>) -> ScenarioError {
        let field = (!field.is_empty()).then(|| field.to_string());
        ScenarioError::at(self.source, self.text, span, field, message.into())
    }

    /// "found …" for a value of the wrong type: its kind and, briefly, its text.
    fn found(&self, v: &Value<'_>) -> String {
        let raw = self.text.get(v.span()).unwrap_or("");
        let raw = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        let raw = if raw.chars().count() > 40 {
            format!("{}…", raw.chars().take(40).collect::<String>())
        } else {
            raw.to_string()
        };
        let kind = match v.get_ref() {
            DeValue::String(_) => "a string",
            DeValue::Integer(_) => "an integer",
            DeValue::Float(_) => "a float",
            DeValue::Boolean(_) => "a boolean",
            DeValue::Datetime(_) => "a date",
            DeValue::Array(_) => "an array",
            DeValue::Table(_) => return "a table".to_string(),
        };
        format!("{kind} {raw}")
    }

    /// Rejects every key of `table` not in `allowed`, suggesting the likely intended one.
    fn known_keys(&self, table: &DeTable<'_>, allowed: &[&str], section: &str) -> Result<()> {
        // report the first unknown key in file order, not in the map's sorted order
        let mut keys: Vec<_> = table.iter().map(|(k, _)| k).collect();
        keys.sort_by_key(|k| k.span().start);
        for key in keys {
            let name: &str = key.get_ref();
            if allowed.contains(&name) {
                continue;
            }
            let expected = allowed.join(", ");
            let hint = match suggest(name, allowed) {
                Some(s) => format!(" (did you mean {s}?)"),
                None => String::new(),
            };
            return Err(self.err(
                Some(key.span()),
                &field_name(section, name),
                format!("unknown key{hint}; expected one of: {expected}"),
            ));
        }
        Ok(())
    }

    fn table<'t, 'i>(&self, v: &'t Value<'i>, field: &str) -> Result<&'t DeTable<'i>> {
        match v.get_ref() {
            DeValue::Table(t) => Ok(t),
            _ => Err(self.err(
                Some(v.span()),
                field,
                format!("expected a table, found {}", self.found(v)),
            )),
        }
    }

    fn string<'t>(&self, v: &'t Value<'_>, field: &str) -> Result<&'t str> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s),
            _ => Err(self.err(
                Some(v.span()),
                field,
                format!("expected a string, found {}", self.found(v)),
            )),
        }
    }

    /// An integer in `min..=max`; `what` describes the range for the message.
    fn integer(&self, v: &Value<'_>, field: &str, min: i128, max: i128, what: &str) -> Result<i128> {
        let n = match v.get_ref() {
            DeValue::Integer(n) => i128::from_str_radix(n.as_str(), n.radix()).ok(),
            _ => None,
        };
        match n {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            Some(n) => Err(self.err(Some(v.span()), field, format!("expected {what}, found {n}"))),
            None => Err(self.err(
                Some(v.span()),
                field,
                format!("expected {what}, found {}", self.found(v)),
            )),
        }
    }

    fn size(&self, v: &Value<'_>, field: &str) -> Result<usize> {
        let n = self.integer(v, field, 1, i128::MAX, "a positive integer")?;
        if n > MAX_SIZE as i128 {
            return Err(self.err(
                Some(v.span()),
                field,
                format!("expected a positive integer up to {MAX_SIZE}, found {n}"),
            ));
        }
        Ok(n as usize)
    }

    /// A finite number (integer or float), as `f32`.
    fn number(&self, v: &Value<'_>, field: &str) -> Result<f32> {
        let x = match v.get_ref() {
            DeValue::Integer(n) => i128::from_str_radix(n.as_str(), n.radix()).ok().map(|n| n as f32),
            DeValue::Float(x) => {
                let s = x.as_str().replace('_', "");
                if s.contains("nan") || s.contains("inf") {
                    return Err(self.err(
                        Some(v.span()),
                        field,
                        format!("expected a finite number, found {}", s.trim_start_matches('+')),
                    ));
                }
                // parse straight to f32 so the writer's shortest form reads back bit for bit
                s.parse::<f32>().ok()
            }
            _ => {
                return Err(self.err(
                    Some(v.span()),
                    field,
                    format!("expected a number, found {}", self.found(v)),
                ));
            }
        };
        match x {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(self.err(
                Some(v.span()),
                field,
                format!(
                    "expected a finite number, found {} (beyond the f32 range ±3.4e38)",
                    self.found(v)
                ),
            )),
        }
    }

    /// A list of distinct names drawn from `choices`, at least one.
    fn names<T: PartialEq + Copy>(
        &self,
        v: &Value<'_>,
        field: &str,
        choices: &[(&str, T)],
        what: &str,
    ) -> Result<Vec<T>> {
        let quoted: Vec<String> = choices.iter().map(|(n, _)| format!("\"{n}\"")).collect();
        let example = quoted.join(", ");
        let DeValue::Array(items) = v.get_ref() else {
            return Err(self.err(
                Some(v.span()),
                field,
                format!(
                    "expected an array of {what}s such as [{example}], found {}",
                    self.found(v)
                ),
            ));
        };
        if items.is_empty() {
            return Err(self.err(
                Some(v.span()),
                field,
                format!("expected at least one {what} among {example}, found an empty array"),
            ));
        }
        let mut out = Vec::new();
        for (k, item) in items.iter().enumerate() {
            let f = format!("{field}[{k}]");
            let name = self.string(item, &f)?;
            let Some(&(_, x)) = choices.iter().find(|(n, _)| *n == name) else {
                return Err(self.err(
                    Some(item.span()),
                    &f,
                    format!("unknown {what} \"{name}\"; expected one of {example}"),
                ));
            };
            if out.contains(&x) {
                return Err(self.err(Some(item.span()), &f, format!("{what} \"{name}\" is listed twice")));
            }
            out.push(x);
        }
        Ok(out)
    }

    /// One name drawn from `choices`.
    fn choice<T: Clone>(&self, v: &Value<'_>, field: &str, choices: &[(&str, T)], what: &str) -> Result<T> {
        let quoted: Vec<String> = choices.iter().map(|(n, _)| format!("\"{n}\"")).collect();
        let name = self.string(v, field)?;
        choices
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, x)| x.clone())
            .ok_or_else(|| {
                self.err(
                    Some(v.span()),
                    field,
                    format!("unknown {what} \"{name}\"; expected one of {}", quoted.join(", ")),
                )
            })
    }
}

/// Largest accepted size of one dimension; the memory budget is usually hit long before.
pub const MAX_SIZE: usize = 1 << 20;

const VARIANTS: &[(&str, Variant)] = &[("baseline", Variant::Baseline), ("mha", Variant::Mha)];
const PASSES: &[(&str, Pass)] = &[("forward", Pass::Forward), ("backward", Pass::Backward)];
const MASKS: &[(&str, Mask)] = &[("causal", Mask::Causal), ("none", Mask::None)];
const DISTS: &[&str] = &["normal", "uniform", "zeros", "ones", "arange"];

/// `[section].key`, or just `key` at the top level.
fn field_name(section: &str, key: &str) -> String {
    if section.is_empty() {
        key.to_string()
    } else {
        format!("[{section}].{key}")
    }
}

/// The allowed key a mistyped one most likely meant: same letters in another case, or at
/// most two edits away.
fn suggest<'a>(name: &str, allowed: &[&'a str]) -> Option<&'a str> {
    if let Some(a) = allowed.iter().find(|a| a.eq_ignore_ascii_case(name)) {
        return Some(a);
    }
    let limit = if name.chars().count() <= 3 { 1 } else { 2 };
    allowed
        .iter()
        .map(|a| (edit_distance(name, a), *a))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, a)| a)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Parses and validates a whole scenario document.
pub fn parse(text: &str, source: &str) -> Result<Scenario> {
    let doc = Doc { text, source };
    if text.trim().is_empty() {
        return Err(ScenarioError::file(
            source,
            "empty file: a scenario needs at least a title = \"…\" and a [shape] table with B, T and C",
        ));
    }
    let root = DeTable::parse(text).map_err(|e| toml_error(&doc, &e))?;
    let root = root.get_ref();
    doc.known_keys(root, ROOT_KEYS, "")?;

    let title = match root.get("title") {
        Some(v) => {
            let t = doc.string(v, "title")?;
            if t.trim().is_empty() {
                return Err(doc.err(Some(v.span()), "title", "expected a non-empty string"));
            }
            t.to_string()
        }
        None => {
            return Err(ScenarioError {
                field: Some("title".into()),
                ..ScenarioError::file(source, "missing: every scenario needs a title = \"…\" at the top")
            });
        }
    };
    let about = root
        .get("about")
        .map(|v| doc.string(v, "about"))
        .transpose()?
        .map(str::to_string);

    let Some(shape_v) = root.get("shape") else {
        return Err(ScenarioError {
            field: Some("[shape]".into()),
            ..ScenarioError::file(source, "missing: every scenario needs a [shape] table with B, T and C")
        });
    };
    let (shape, cross) = parse_shape(&doc, shape_v)?;

    let RunTable {
        variants,
        passes,
        mask,
        opts,
    } = match root.get("run") {
        Some(v) => parse_run(&doc, v, shape, cross)?,
        None => RunTable {
            variants: Variant::ALL.to_vec(),
            passes: Passes::BOTH,
            mask: Mask::Causal,
            opts: Options {
                cross,
                qkv: Qkv::Fused,
                dropout: None,
                mode: Mode::Train,
                mistakes: Mistakes::NONE,
            },
        },
    };

    let init = match root.get("init") {
        Some(v) => parse_init(&doc, v)?,
        None => Init::default(),
    };
    let values = match root.get("values") {
        Some(v) => parse_values(&doc, v, shape, passes)?,
        None => BTreeMap::new(),
    };
    // where the run starts and what it projects decide which options make sense together
    check_start(&doc, root, shape_v, &values, &opts)?;
    let plan = super::plan_of(shape, mask.clone(), &values, &opts);
    check_mistakes(&doc, root, &plan, &opts)?;
    // decide on the size before a single tensor is filled or a buffer allocated
    if let Some(message) = budget_error(plan, &variants, passes, opts.mistakes) {
        return Err(doc.err(Some(shape_v.span()), "[shape]", message));
    }
    let focus = root
        .get("focus")
        .map(|v| parse_focus(&doc, v, shape, &variants, passes))
        .transpose()?;

    Ok(Scenario {
        source: source.to_string(),
        title,
        about,
        shape,
        cross,
        variants,
        passes,
        mask,
        qkv: opts.qkv,
        dropout: opts.dropout,
        mode: opts.mode,
        mistakes: opts.mistakes,
        init,
        values,
        focus,
    })
}

/// The `[run]` table.
struct RunTable {
    variants: Vec<Variant>,
    passes: Passes,
    mask: Mask,
    opts: Options,
}

/// The span of `[table].key`, when the file has it.
fn span_of(root: &DeTable<'_>, table: &str, key: &str) -> Option<Range<usize>> {
    match root.get(table)?.get_ref() {
        DeValue::Table(t) => t.get(key).map(|v| v.span()),
        _ => None,
    }
}

/// Cross-attention, the projection style and the tensors given must agree.
fn check_start(
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
fn check_mistakes(doc: &Doc<'_>, root: &DeTable<'_>, plan: &crate::engine::Plan, o: &Options) -> Result<()> {
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

/// The TOML parser's own error (syntax, duplicate key), reduced to one line.
fn toml_error(doc: &Doc<'_>, e: &toml::de::Error) -> ScenarioError {
    let message = e.message().lines().next().unwrap_or("").trim().trim_end_matches('.');
    let span = e.span();
    if message.starts_with("duplicate key") {
        let key = span
            .clone()
            .and_then(|s| doc.text.get(s))
            .unwrap_or("")
            .trim()
            .trim_matches('"');
        let field = match (
            key.is_empty(),
            span.as_ref().and_then(|s| section_at(doc.text, s.start)),
        ) {
            (true, _) => String::new(),
            (false, Some(section)) => format!("[{section}].{key}"),
            (false, None) => key.to_string(),
        };
        return doc.err(span, &field, "duplicate key: each key may be given only once");
    }
    doc.err(span, "", format!("not valid TOML: {message}"))
}

/// The `[table]` whose header most recently precedes byte `offset`, if any: a `[` at the start
/// of a line outside every array, string and comment (so rows of a nested array are not taken
/// for headers).
fn section_at(text: &str, offset: usize) -> Option<&str> {
    let before = text.get(..offset)?;
    let bytes = before.as_bytes();
    let mut section = None;
    let (mut depth, mut k, mut line_start) = (0usize, 0usize, true);
    while k < bytes.len() {
        let c = bytes[k];
        match c {
            b'\n' => line_start = true,
            b' ' | b'\t' | b'\r' => {}
            b'#' => {
                // a comment runs to the end of the line
                k = before[k..].find('\n').map_or(bytes.len(), |n| k + n);
                continue;
            }
            b'"' | b'\'' => {
                // skip a string, basic or literal, single- or multi-line
                let quote = if before[k..].starts_with(if c == b'"' { "\"\"\"" } else { "\'\'\'" }) {
                    &before[k..k + 3]
                } else {
                    &before[k..k + 1]
                };
                let mut end = k + quote.len();
                loop {
                    match before[end..].find(quote) {
                        Some(n) if c == b'"' && before[..end + n].ends_with('\\') => end += n + 1,
                        Some(n) => {
                            end += n + quote.len();
                            break;
                        }
                        None => return section,
                    }
                }
                k = end;
                line_start = false;
                continue;
            }
            b'[' if depth == 0 && line_start => {
                let line_end = before[k..].find('\n').map_or(bytes.len(), |n| k + n);
                let header = &before[k..line_end];
                if !header.starts_with("[[") {
                    section = header[1..].split(']').next().map(str::trim).filter(|s| !s.is_empty());
                }
                k = line_end;
                continue;
            }
            b'[' => {
                depth += 1;
                line_start = false;
            }
            b']' => {
                depth = depth.saturating_sub(1);
                line_start = false;
            }
            _ => line_start = false,
        }
        k += 1;
    }
    section
}

/// The sizes, and whether `S` (cross-attention) was given.
fn parse_shape(doc: &Doc<'_>, v: &Value<'_>) -> Result<(Shape, bool)> {
    let t = doc.table(v, "[shape]")?;
    doc.known_keys(t, SHAPE_KEYS, "shape")?;
    let get = |key: &str| -> Result<usize> {
        match t.get(key) {
            Some(x) => doc.size(x, &format!("[shape].{key}")),
            None => Err(doc.err(
                Some(v.span()),
                &format!("[shape].{key}"),
                "missing: [shape] needs B, T and C (and optionally H, default 1)",
            )),
        }
    };
    let (b, tt, c) = (get("B")?, get("T")?, get("C")?);
    let h = match t.get("H") {
        Some(x) => doc.size(x, "[shape].H")?,
        None => 1,
    };
    if c % h != 0 {
        let span = t.get("H").map(|x| x.span());
        return Err(doc.err(
            span,
            "[shape].H",
            format!("C = {c} is not divisible by H = {h}: every head needs D = C/H whole channels"),
        ));
    }
    Ok(match t.get("S") {
        Some(x) => (Shape::cross(b, doc.size(x, "[shape].S")?, tt, c, h), true),
        None => (Shape::new(b, tt, c, h), false),
    })
}

fn parse_run(doc: &Doc<'_>, v: &Value<'_>, shape: Shape, cross: bool) -> Result<RunTable> {
    let t = doc.table(v, "[run]")?;
    doc.known_keys(t, RUN_KEYS, "run")?;
    let variants = match t.get("variants") {
        Some(x) => doc.names(x, "[run].variants", VARIANTS, "variant")?,
        None => Variant::ALL.to_vec(),
    };
    let passes = match t.get("passes") {
        Some(x) => {
            let list = doc.names(x, "[run].passes", PASSES, "pass")?;
            Passes {
                forward: list.contains(&Pass::Forward),
                backward: list.contains(&Pass::Backward),
            }
        }
        None => Passes::BOTH,
    };
    let mask = match t.get("mask") {
        Some(x) if matches!(x.get_ref(), DeValue::Array(_)) => mask_matrix(doc, x, shape)?,
        Some(x) => doc.choice(x, "[run].mask", MASKS, "mask")?,
        None => Mask::Causal,
    };
    let qkv = match t.get("qkv") {
        Some(x) => doc.choice(
            x,
            "[run].qkv",
            &[("fused", Qkv::Fused), ("separate", Qkv::Separate)],
            "qkv",
        )?,
        None => Qkv::Fused,
    };
    let dropout = match t.get("dropout") {
        Some(x) => {
            let p = doc.number(x, "[run].dropout")?;
            if !(0.0..1.0).contains(&p) {
                return Err(doc.err(
                    Some(x.span()),
                    "[run].dropout",
                    format!("expected a probability in [0, 1), found {p}"),
                ));
            }
            let seed = match t.get("dropout_seed") {
                Some(s) => doc.integer(s, "[run].dropout_seed", 0, i64::MAX as i128, "a non-negative integer")? as u64,
                None => 0,
            };
            (p > 0.0).then_some(Dropout { p, seed })
        }
        None => {
            if let Some(s) = t.get("dropout_seed") {
                return Err(doc.err(
                    Some(s.span()),
                    "[run].dropout_seed",
                    "there is no dropout to seed: set [run].dropout too",
                ));
            }
            None
        }
    };
    let mode = match t.get("mode") {
        Some(x) => doc.choice(x, "[run].mode", &[("train", Mode::Train), ("eval", Mode::Eval)], "mode")?,
        None => Mode::Train,
    };
    let mistakes = match t.get("mistakes") {
        Some(x) => {
            let table: Vec<(&str, Mistake)> = Mistake::ALL.iter().map(|&m| (m.name(), m)).collect();
            Mistakes::of(&doc.names(x, "[run].mistakes", &table, "mistake")?)
        }
        None => Mistakes::NONE,
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
        },
    })
}

/// An explicit mask: `S` rows of `T` entries, 1 (or true) where query `i` may see key `j`.
fn mask_matrix(doc: &Doc<'_>, v: &Value<'_>, shape: Shape) -> Result<Mask> {
    let (s, t) = (shape.s, shape.t);
    let field = "[run].mask";
    let expected = format!("an S×T = {s}×{t} matrix of 0 and 1 (1: the query may see the key)");
    let DeValue::Array(rows) = v.get_ref() else {
        return Err(doc.err(Some(v.span()), field, format!("expected {expected}")));
    };
    if rows.len() != s {
        return Err(doc.err(
            Some(v.span()),
            field,
            format!("expected {expected}, found {} rows", rows.len()),
        ));
    }
    let mut keep = Vec::with_capacity(s);
    for (i, row) in rows.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let DeValue::Array(items) = row.get_ref() else {
            return Err(doc.err(
                Some(row.span()),
                &f,
                format!("expected a row of {t} entries, found {}", doc.found(row)),
            ));
        };
        if items.len() != t {
            return Err(doc.err(
                Some(row.span()),
                &f,
                format!("expected a row of {t} entries, found {}", items.len()),
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
                        format!("expected 0 or 1, found {}", doc.found(item)),
                    ));
                }
            };
            out.push(visible);
        }
        if !out.contains(&true) {
            return Err(doc.err(
                Some(row.span()),
                &f,
                format!(
                    "query {i} may see no key: softmax of a row of −1e9 is uniform, not zero; give it at least one 1"
                ),
            ));
        }
        keep.push(out);
    }
    Ok(Mask::explicit(&keep))
}

fn parse_init(doc: &Doc<'_>, v: &Value<'_>) -> Result<Init> {
    let t = doc.table(v, "[init]")?;
    doc.known_keys(t, INIT_KEYS, "init")?;
    let seed = match t.get("seed") {
        Some(x) => doc.integer(x, "[init].seed", 0, i64::MAX as i128, "a non-negative integer")? as u64,
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
                    format!("unknown dist \"{name}\"; expected one of {}", quoted.join(", ")),
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
                        format!("expected a non-negative number, found {p}"),
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
                format!(
                    "dist = \"{dist_name}\" takes no {key}; std goes with \"normal\", scale with \"uniform\" and \"arange\""
                ),
            )),
            None => Ok(()),
        }
    };
    let dist = match dist_name {
        "normal" => {
            reject("scale")?;
            Dist::Normal {
                std: param("std", 1.0, true)?,
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

fn parse_values(doc: &Doc<'_>, v: &Value<'_>, sh: Shape, passes: Passes) -> Result<BTreeMap<String, Vec<f32>>> {
    let t = doc.table(v, "[values]")?;
    doc.known_keys(t, &super::VALUE_NAMES, "values")?;
    let mut values = BTreeMap::new();
    // in file order, so the first bad tensor reported is the first one the reader meets
    let mut entries: Vec<_> = t.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    for (key, x) in entries {
        let name: &str = key.get_ref();
        let Some(shape) = value_shape(name, sh) else {
            continue;
        };
        values.insert(name.to_string(), tensor(doc, x, &format!("[values].{name}"), &shape)?);
    }

    // where the run starts decides which tensors may be given together
    let has = |n: &str| t.get(n);
    let core: Vec<&str> = ["q", "k", "v"].into_iter().filter(|n| has(n).is_some()).collect();
    if !core.is_empty() {
        if core.len() < 3 {
            let missing: Vec<&str> = ["q", "k", "v"].into_iter().filter(|n| has(n).is_none()).collect();
            let first = has(core[0]).map(|x| x.span());
            return Err(doc.err(
                first,
                &format!("[values].{}", core[0]),
                format!(
                    "q, k and v start the run at the attention core and must be given together; missing {}",
                    missing.join(" and ")
                ),
            ));
        }
        let projections = ["x", "w_qkv", "b_qkv", "w_q", "b_q", "w_k", "b_k", "w_v", "b_v"];
        if let Some(n) = projections.into_iter().find(|n| has(n).is_some()) {
            return Err(doc.err(
                has(n).map(|x| x.span()),
                &format!("[values].{n}"),
                "not used when q, k and v are given (the run starts at the attention core, after the input projection)",
            ));
        }
        let (w, b) = (has("w_proj"), has("b_proj"));
        if w.is_some() != b.is_some() {
            let (given, missing, span) = match w {
                Some(w) => ("w_proj", "b_proj", w.span()),
                None => ("b_proj", "w_proj", b.map_or(0..0, |b| b.span())),
            };
            return Err(doc.err(
                Some(span),
                &format!("[values].{given}"),
                format!("the output projection needs both w_proj and b_proj; missing {missing}"),
            ));
        }
    }
    if let Some(x) = has("d_out")
        && !passes.backward
    {
        return Err(doc.err(
            Some(x.span()),
            "[values].d_out",
            "only the backward pass reads d_out; add \"backward\" to [run].passes or remove d_out",
        ));
    }
    Ok(values)
}

/// One tensor: a flat array of `numel(shape)` numbers, or nested arrays whose inner levels are
/// the trailing dimensions of `shape` and whose outer level holds all the leading ones (so a
/// `[B,T,C]` tensor may be written flat, as `B*T` rows of `C`, or fully nested).
fn tensor(doc: &Doc<'_>, v: &Value<'_>, field: &str, shape: &[usize]) -> Result<Vec<f32>> {
    let expected = numel(shape);
    let dims_text = shape.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let DeValue::Array(_) = v.get_ref() else {
        return Err(doc.err(
            Some(v.span()),
            field,
            format!(
                "expected an array of {expected} numbers (shape [{dims_text}]), found {}",
                doc.found(v)
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
        && dims[0] == shape[..shape.len() + 1 - n].iter().product::<usize>();
    if !fits {
        let found = if n == 1 {
            format!("{} numbers", dims[0])
        } else {
            format!(
                "nesting [{}]",
                dims.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
            )
        };
        return Err(doc.err(
            Some(v.span()),
            field,
            format!("expected shape [{dims_text}] ({expected} numbers, flat or nested), found {found}"),
        ));
    }
    Ok(out)
}

/// Walks nested arrays whose level `k` must hold `dims[k]` entries, appending the numbers.
fn collect(doc: &Doc<'_>, v: &Value<'_>, field: &str, dims: &[usize], out: &mut Vec<f32>) -> Result<()> {
    let items: &[Value<'_>] = match v.get_ref() {
        DeValue::Array(items) => items,
        _ => &[],
    };
    let (len, inner) = (dims[0], &dims[1..]);
    if items.len() != len {
        return Err(doc.err(
            Some(v.span()),
            field,
            format!(
                "ragged nesting: expected {len} entries like the first row at this level, found {}",
                items.len()
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
                    "ragged nesting: expected a number here like the other entries at this level, found an array",
                ));
            }
            (_, false) => {
                return Err(doc.err(
                    Some(item.span()),
                    &f,
                    format!(
                        "ragged nesting: expected an array of {} entries like the first row, found {}",
                        inner[0],
                        doc.found(item)
                    ),
                ));
            }
            (_, true) => out.push(doc.number(item, &f)?),
        }
    }
    Ok(())
}

fn parse_focus(doc: &Doc<'_>, v: &Value<'_>, sh: Shape, variants: &[Variant], passes: Passes) -> Result<Focus> {
    let t = doc.table(v, "[focus]")?;
    doc.known_keys(t, FOCUS_KEYS, "focus")?;
    let variant = match t.get("variant") {
        Some(x) => {
            let var = doc.choice(x, "[focus].variant", VARIANTS, "variant")?;
            if !variants.contains(&var) {
                return Err(doc.err(
                    Some(x.span()),
                    "[focus].variant",
                    format!("variant \"{var}\" is not among [run].variants"),
                ));
            }
            Some(var)
        }
        None => None,
    };
    let pass = match t.get("pass") {
        Some(x) => {
            let p = doc.choice(x, "[focus].pass", PASSES, "pass")?;
            let runs = match p {
                Pass::Forward => passes.forward,
                Pass::Backward => passes.backward,
            };
            if !runs {
                return Err(doc.err(
                    Some(x.span()),
                    "[focus].pass",
                    format!("pass \"{}\" is not among [run].passes", p.name()),
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
            format!("0 (the only index, since {dim} = 1)")
        } else {
            format!("an index in 0..{size} ({dim} = {size})")
        }
    };
    // the baseline has a single head, so a focus on it can only name head 0
    let (heads, h_what) = match variant {
        Some(Variant::Baseline) => (1, "0 (the baseline has a single head)".to_string()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_named_with_their_table() {
        let text = "title = \"t\"\n[values]\nq = [\n  [1, 0],\n  [2]\n]\n[shape] # sizes\nB = 1\n";
        assert_eq!(section_at(text, text.len()), Some("shape"));
        assert_eq!(section_at(text, text.find("[2]").unwrap_or(0) + 4), Some("values"));
        assert_eq!(section_at(text, 3), None);
        let text = "about = \"\"\"\n[fake]\n\"\"\"\n# [nor this]\nB = 1\n";
        assert_eq!(section_at(text, text.len()), None);
    }

    #[test]
    fn suggestions_catch_case_and_small_typos() {
        assert_eq!(suggest("c", SHAPE_KEYS), Some("C"));
        assert_eq!(suggest("varaints", RUN_KEYS), Some("variants"));
        assert_eq!(suggest("colour", RUN_KEYS), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
