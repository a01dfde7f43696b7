//! One access line read: the fast path for the recorders' own lines, serde_json for the rest,
//! the `at` lines' indices, and the ids of buffer and source-file names, each bounded.

use super::{
    Access, ImportError, MAX_AT_DIMS, MAX_BUFFERS, MAX_FILES, MAX_NAME, Reader, echo, echo_value, fast, json_error,
};
use crate::format::thousands;
use attn_trace_core::trace::{Op, Phase};
use attn_trace_i18n::tr;
use serde::Deserialize;
use std::borrow::Cow;
use std::io::BufRead;

/// One access line as JSON. Fields the grade does not need are skipped unparsed.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    op: Option<Cow<'a, str>>,
    #[serde(borrow)]
    buffer: Option<Cow<'a, str>>,
    offset: Option<serde_json::Value>,
    value: Option<serde_json::Value>,
    #[serde(borrow)]
    file: Option<Cow<'a, str>>,
    line: Option<serde_json::Value>,
    #[serde(borrow)]
    phase: Option<Cow<'a, str>>,
    index: Option<serde_json::Value>,
}

impl<R: BufRead> Reader<R> {
    /// An access, or `None` for an `at` line.
    pub(super) fn parse_access(&mut self) -> Result<Option<Access>, ImportError> {
        let at = self.at;
        let text = std::mem::take(&mut self.text);
        let result = self.parse_line(&text, at);
        self.text = text;
        result
    }

    fn parse_line(&mut self, text: &str, at: u64) -> Result<Option<Access>, ImportError> {
        if let Some(a) = fast::access(text.trim_end()) {
            let a = a.map_err(|fast::Beyond(v)| self.error(at, beyond("value", v)))?;
            let phase = a.phase.map(Phase::from_name);
            if phase.is_some_and(|p| p.is_none()) {
                return self.parse_json(text, at);
            }
            let file = self.file_id(a.file, at)?;
            let name = self.buffer_id(a.buffer, at)?;
            return Ok(Some(Access {
                op: a.op,
                name,
                offset: a.offset,
                value: a.value,
                file,
                line: a.line,
                phase: phase.flatten(),
                at,
            }));
        }
        self.parse_json(text, at)
    }

    /// Any line [`fast::access`] does not take: through serde_json, every problem named.
    fn parse_json(&mut self, text: &str, at: u64) -> Result<Option<Access>, ImportError> {
        let l: Line = serde_json::from_str(text.trim_end())
            .map_err(|e| self.error(at, tr!("not a JSON object: {e}", e = json_error(&e))))?;
        let missing = |field: &str| {
            self.error(
                at,
                tr!(
                    "\"{field}\": missing; every access needs op, buffer, offset, value, file and line",
                    field
                ),
            )
        };
        let op = match l.op.as_deref() {
            Some("read") => Op::Read,
            Some("write") => Op::Write,
            Some("at") => {
                self.take_index(l.index.as_ref(), at)?;
                return Ok(None);
            }
            Some(other) => {
                return Err(self.error(
                    at,
                    tr!(
                        "\"op\": expected \"read\", \"write\" or \"at\", found \"{other}\"",
                        other = echo(other)
                    ),
                ));
            }
            None => return Err(missing("op")),
        };
        let name = l.buffer.ok_or_else(|| missing("buffer"))?;
        let offset = l.offset.ok_or_else(|| missing("offset"))?;
        // a negative offset is the learner's mistake (`k_base - 1`), reported by the grade
        let offset = offset.as_i64().ok_or_else(|| {
            self.error(
                at,
                tr!(
                    "\"offset\": expected a whole number, found {offset}",
                    offset = echo_value(&offset)
                ),
            )
        })?;
        // a number, or for the non-finite ones a string ("nan", "inf", "-inf") or null (what
        // the `trace` command writes for them)
        let value = match l.value {
            None => return Err(missing("value")),
            Some(serde_json::Value::Number(x)) => x.as_f64().unwrap_or(f64::NAN) as f32,
            Some(serde_json::Value::Null) => f32::NAN,
            Some(serde_json::Value::String(t)) => match t.to_ascii_lowercase().as_str() {
                "nan" => f32::NAN,
                "inf" | "+inf" | "infinity" => f32::INFINITY,
                "-inf" | "-infinity" => f32::NEG_INFINITY,
                _ => {
                    return Err(self.error(
                        at,
                        tr!(
                            "\"value\": expected a number (or \"nan\", \"inf\", \"-inf\"), found \"{t}\"",
                            t = echo(&t)
                        ),
                    ));
                }
            },
            Some(other) => {
                return Err(self.error(
                    at,
                    tr!(
                        "\"value\": expected a number (or \"nan\", \"inf\", \"-inf\"), found {other}",
                        other = echo_value(&other)
                    ),
                ));
            }
        };
        let file = l.file.ok_or_else(|| missing("file"))?;
        let line = l.line.ok_or_else(|| missing("line"))?;
        let line = line.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| {
            self.error(
                at,
                tr!(
                    "\"line\": expected a source line number, found {line}",
                    line = echo_value(&line)
                ),
            )
        })?;
        let phase = match l.phase.as_deref() {
            None => None,
            Some(p) => Some(
                Phase::from_name(p)
                    .ok_or_else(|| self.error(at, tr!("\"phase\": unknown phase \"{p}\"", p = echo(p))))?,
            ),
        };
        let file = self.file_id(&file, at)?;
        let name = self.buffer_id(&name, at)?;
        Ok(Some(Access {
            op,
            name,
            offset,
            value,
            file,
            line,
            phase,
            at,
        }))
    }

    /// An `at` line's `"index": {"i": 3, …}`: the indices of the scratch dimensions from here on.
    fn take_index(&mut self, index: Option<&serde_json::Value>, at: u64) -> Result<(), ImportError> {
        let Some(serde_json::Value::Object(map)) = index else {
            return Err(self.error(
                at,
                tr!("\"index\": an \"at\" line needs \"index\": {\"dimension\": index, …}"),
            ));
        };
        for (dim, v) in map {
            let Some(x) = v.as_u64() else {
                return Err(self.error(
                    at,
                    tr!(
                        "\"index\": {dim}: expected a whole number, found {v}",
                        dim = echo(dim),
                        v = echo_value(v)
                    ),
                ));
            };
            if let Some(slot) = self.index.iter_mut().find(|(d, _)| d == dim) {
                slot.1 = x;
                continue;
            }
            if dim.len() > MAX_NAME {
                return Err(self.error(
                    at,
                    tr!(
                        "\"index\": a dimension's name longer than {max} bytes, the most a name may be",
                        max = thousands(MAX_NAME as u64)
                    ),
                ));
            }
            if self.index.len() >= MAX_AT_DIMS {
                return Err(self.error(
                    at,
                    tr!(
                        "\"index\": one dimension more than the {max} the \"at\" lines may name (a scratch row is reused along one or two)",
                        max = MAX_AT_DIMS
                    ),
                ));
            }
            self.index.push((dim.clone(), x));
        }
        Ok(())
    }

    /// The id of the learner's buffer `name`, named at the trace's line `at`: like source files,
    /// at most [`MAX_BUFFERS`] names of at most [`MAX_NAME`] bytes are kept, so a trace naming
    /// another buffer in every access is refused where it crosses the bound.
    fn buffer_id(&mut self, name: &str, at: u64) -> Result<u32, ImportError> {
        if let Some(&id) = self.buffer_ids.get(name) {
            return Ok(id);
        }
        if name.is_empty() {
            return Err(self.error(at, tr!("\"buffer\": an empty name")));
        }
        if name.len() > MAX_NAME {
            return Err(self.error(
                at,
                tr!(
                    "\"buffer\": longer than {max} bytes, the most a name may be",
                    max = thousands(MAX_NAME as u64)
                ),
            ));
        }
        if self.buffers.len() >= MAX_BUFFERS {
            return Err(self.error(
                at,
                tr!(
                    "\"buffer\": one buffer more than the {max} a trace may name (a kernel has a few dozen at most)",
                    max = thousands(MAX_BUFFERS as u64)
                ),
            ));
        }
        let id = self.buffers.len() as u32;
        self.buffers.push(name.to_string());
        self.buffer_ids.insert(name.to_string(), id);
        Ok(id)
    }

    /// The id of source file `name`, named at the trace's line `at`: at most [`MAX_FILES`]
    /// names of at most [`MAX_NAME`] bytes are kept, so a trace naming another file in every
    /// access is refused where it crosses the bound instead of growing the reader.
    fn file_id(&mut self, name: &str, at: u64) -> Result<u32, ImportError> {
        if let Some(&id) = self.file_ids.get(name) {
            return Ok(id);
        }
        if name.len() > MAX_NAME {
            return Err(self.error(
                at,
                tr!(
                    "\"file\": longer than {max} bytes, the most a path may be",
                    max = thousands(MAX_NAME as u64)
                ),
            ));
        }
        if self.files.len() >= MAX_FILES {
            return Err(self.error(
                at,
                tr!(
                    "\"file\": one source file more than the {max} a trace may name (a kernel's accesses come from a few files)",
                    max = thousands(MAX_FILES as u64)
                ),
            ));
        }
        let id = self.files.len() as u32;
        self.files.push(name.to_string());
        self.file_ids.insert(name.to_string(), id);
        Ok(id)
    }
}

/// A number beyond float64's range: refused, whatever field it is in (a value beyond float32's
/// but within float64's becomes ±inf, as a float32 kernel's would).
fn beyond(field: &str, literal: &str) -> String {
    tr!(
        "\"{field}\": {number} is beyond the range of a float; write \"inf\" or \"-inf\" for an infinite value",
        field,
        number = echo(literal)
    )
    .to_string()
}
