//! Reading TOML text: typed getters that turn every wrong type, unknown key and syntax error
//! into a [`ScenarioError`] naming the file, the field, the line and the column.

use super::ScenarioError;
use attn_trace_i18n::tr;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// Largest accepted size of one dimension; the memory budget is usually hit long before.
pub const MAX_SIZE: usize = 1 << 20;

pub(super) type Result<T> = std::result::Result<T, ScenarioError>;
pub(super) type Value<'i> = Spanned<DeValue<'i>>;
/// The text being parsed and the name to report it under.
pub(super) struct Doc<'a> {
    pub text: &'a str,
    pub source: &'a str,
}

impl Doc<'_> {
    pub(super) fn err(&self, span: Option<Range<usize>>, field: &str, message: impl Into<String>) -> ScenarioError {
        let field = (!field.is_empty()).then(|| field.to_string());
        ScenarioError::at(self.source, self.text, span, field, message.into())
    }

    /// "found …" for a value of the wrong type: its kind and, briefly, its text.
    pub(super) fn found(&self, v: &Value<'_>) -> String {
        let raw = self.text.get(v.span()).unwrap_or("");
        let raw = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        let raw = if raw.chars().count() > 40 {
            format!("{}…", raw.chars().take(40).collect::<String>())
        } else {
            raw.clone()
        };
        match v.get_ref() {
            DeValue::String(_) => tr!("a string {raw}", raw),
            DeValue::Integer(_) => tr!("an integer {raw}", raw),
            DeValue::Float(_) => tr!("a float {raw}", raw),
            DeValue::Boolean(_) => tr!("a boolean {raw}", raw),
            DeValue::Datetime(_) => tr!("a date {raw}", raw),
            DeValue::Array(_) => tr!("an array {raw}", raw),
            DeValue::Table(_) => tr!("a table").to_string(),
        }
    }

    /// Rejects every key of `table` not in `allowed`, suggesting the likely intended one.
    pub(super) fn known_keys(&self, table: &DeTable<'_>, allowed: &[&str], section: &str) -> Result<()> {
        // report the first unknown key in file order, not in the map's sorted order
        let mut keys: Vec<_> = table.iter().map(|(k, _)| k).collect();
        keys.sort_by_key(|k| k.span().start);
        for key in keys {
            let name: &str = key.get_ref();
            if allowed.contains(&name) {
                continue;
            }
            let expected = allowed.join(tr!(", "));
            let hint = match suggest(name, allowed) {
                Some(s) => tr!(" (did you mean {s}?)", s),
                None => String::new(),
            };
            return Err(self.err(
                Some(key.span()),
                &field_name(section, name),
                tr!("unknown key{hint}; expected one of: {expected}", hint, expected),
            ));
        }
        Ok(())
    }

    pub(super) fn table<'t, 'i>(&self, v: &'t Value<'i>, field: &str) -> Result<&'t DeTable<'i>> {
        match v.get_ref() {
            DeValue::Table(t) => Ok(t),
            _ => Err(self.err(
                Some(v.span()),
                field,
                tr!("expected a table, found {found}", found = self.found(v)),
            )),
        }
    }

    pub(super) fn string<'t>(&self, v: &'t Value<'_>, field: &str) -> Result<&'t str> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s),
            _ => Err(self.err(
                Some(v.span()),
                field,
                tr!("expected a string, found {found}", found = self.found(v)),
            )),
        }
    }

    /// An integer in `min..=max`; `what` describes the range for the message.
    pub(super) fn integer(&self, v: &Value<'_>, field: &str, min: i128, max: i128, what: &str) -> Result<i128> {
        let n = match v.get_ref() {
            DeValue::Integer(n) => i128::from_str_radix(n.as_str(), n.radix()).ok(),
            _ => None,
        };
        match n {
            Some(n) if (min..=max).contains(&n) => Ok(n),
            Some(n) => Err(self.err(
                Some(v.span()),
                field,
                tr!("expected {what}, found {found}", what, found = n),
            )),
            None => Err(self.err(
                Some(v.span()),
                field,
                tr!("expected {what}, found {found}", what, found = self.found(v)),
            )),
        }
    }

    pub(super) fn size(&self, v: &Value<'_>, field: &str) -> Result<usize> {
        let n = self.integer(v, field, 1, i128::MAX, tr!("a positive integer"))?;
        if n > MAX_SIZE as i128 {
            return Err(self.err(
                Some(v.span()),
                field,
                tr!("expected a positive integer up to {max}, found {n}", max = MAX_SIZE, n),
            ));
        }
        Ok(n as usize)
    }

    /// A finite number (integer or float), as `f32`.
    pub(super) fn number(&self, v: &Value<'_>, field: &str) -> Result<f32> {
        let x = match v.get_ref() {
            DeValue::Integer(n) => i128::from_str_radix(n.as_str(), n.radix()).ok().map(|n| n as f32),
            DeValue::Float(x) => {
                let s = x.as_str().replace('_', "");
                if s.contains("nan") || s.contains("inf") {
                    return Err(self.err(
                        Some(v.span()),
                        field,
                        tr!(
                            "expected a finite number, found {found}",
                            found = s.trim_start_matches('+')
                        ),
                    ));
                }
                // parse straight to f32 so the writer's shortest form reads back bit for bit
                s.parse::<f32>().ok()
            }
            _ => {
                return Err(self.err(
                    Some(v.span()),
                    field,
                    tr!("expected a number, found {found}", found = self.found(v)),
                ));
            }
        };
        match x {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(self.err(
                Some(v.span()),
                field,
                tr!(
                    "expected a finite number, found {found} (beyond the f32 range ±3.4e38)",
                    found = self.found(v)
                ),
            )),
        }
    }

    /// `true` or `false`.
    pub(super) fn boolean(&self, v: &Value<'_>, field: &str) -> Result<bool> {
        match v.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            _ => Err(self.err(
                Some(v.span()),
                field,
                tr!("expected true or false, found {found}", found = self.found(v)),
            )),
        }
    }

    /// A list of distinct names drawn from `choices`, at least one.
    pub(super) fn names<T: PartialEq + Copy>(
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
                tr!(
                    "expected an array of {what}s such as [{example}], found {found}",
                    what,
                    example,
                    found = self.found(v)
                ),
            ));
        };
        if items.is_empty() {
            return Err(self.err(
                Some(v.span()),
                field,
                tr!(
                    "expected at least one {what} among {example}, found an empty array",
                    what,
                    example
                ),
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
                    tr!(
                        "unknown {what} \"{name}\"; expected one of {example}",
                        what,
                        name,
                        example
                    ),
                ));
            };
            if out.contains(&x) {
                return Err(self.err(
                    Some(item.span()),
                    &f,
                    tr!("{what} \"{name}\" is listed twice", what, name),
                ));
            }
            out.push(x);
        }
        Ok(out)
    }

    /// One name drawn from `choices`.
    pub(super) fn choice<T: Clone>(&self, v: &Value<'_>, field: &str, choices: &[(&str, T)], what: &str) -> Result<T> {
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
                    tr!(
                        "unknown {what} \"{name}\"; expected one of {example}",
                        what,
                        name,
                        example = quoted.join(tr!(", "))
                    ),
                )
            })
    }
}

/// `[section].key`, or just `key` at the top level.
pub(super) fn field_name(section: &str, key: &str) -> String {
    if section.is_empty() {
        key.to_string()
    } else {
        format!("[{section}].{key}")
    }
}

/// The allowed key a mistyped one most likely meant: same letters in another case, or at
/// most two edits away.
pub(super) fn suggest<'a>(name: &str, allowed: &[&'a str]) -> Option<&'a str> {
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
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
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

/// The TOML parser's own error (syntax, duplicate key), reduced to one line.
pub(super) fn toml_error(doc: &Doc<'_>, message: &str, span: Option<Range<usize>>) -> ScenarioError {
    let message = message.lines().next().unwrap_or("").trim().trim_end_matches('.');
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
        return doc.err(span, &field, tr!("duplicate key: each key may be given only once"));
    }
    doc.err(span, "", tr!("not valid TOML: {message}", message))
}

/// The `[table]` whose header most recently precedes byte `offset`, if any: a `[` at the start
/// of a line outside every array, string and comment (so rows of a nested array are not taken
/// for headers).
pub(super) fn section_at(text: &str, offset: usize) -> Option<&str> {
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
