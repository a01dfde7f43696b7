//! Reading a trace: the JSON Lines the `trace` command exports and the recorders write.
//!
//! The first line is a header, `{"format":"attn-trace-trace","version":1,"scenario":…,
//! "variant":…,"pass":…,"input":0}` (with `"bind"`, how the learner's buffers lie over ours:
//! [`super::bind`]); every other line is one access. Of an access only `op`, `buffer`,
//! `offset`, `value`, `file` and `line` are required: what a learner's recorder cannot know (the
//! logical index, loop variables, derived offsets, level, phase) is optional, and the grader
//! derives what it needs from the registry. The buffer may have any name; which reference cell
//! an access is, is the bindings' business. A line `{"op":"at","index":{"i":3}}` says which
//! index the accesses after it are at along a dimension a buffer is reused on (a scratch row). Lines are read one at a time, so a trace of
//! any length takes memory for one line; every problem is one message naming the trace's line
//! and the field.

use super::bind::Bindings;
use super::{TRACE_FORMAT, TRACE_VERSION};
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Op, Pass, Phase};
use attn_trace_i18n::tr;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io::BufRead;

/// What the header line says a trace is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub version: u32,
    /// The scenario the trace was recorded on, as its recorder named it.
    pub scenario: Option<String>,
    pub variant: Option<Variant>,
    pub pass: Option<Pass>,
    /// Which input (0 the scenario's own values, `k` those of `grade --seeds`).
    pub input: u64,
    /// The sizes the recorder saw (`B`, `T`, …), when it says.
    pub dims: Vec<(String, u64)>,
    /// How the learner's buffers lie over the reference's tensors (`"bind"`), when it says.
    pub bind: Option<Bindings>,
}

/// One access of an imported trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Access {
    pub op: Op,
    /// The learner's buffer: index into [`Reader::buffers`].
    pub name: u32,
    /// As recorded: it may lie outside the buffer, even below it (the grade says so).
    pub offset: i64,
    pub value: f32,
    /// Index into [`Reader::files`].
    pub file: u32,
    pub line: u32,
    pub phase: Option<Phase>,
    /// The trace's line this access was read from (1-based; the header is line 1).
    pub at: u64,
}

/// A trace that cannot be read: which line, which field, what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportError {
    pub path: String,
    /// 1-based; 0 when the whole file is at fault.
    pub line: u64,
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path, self.message)
        } else {
            write!(f, "{}:{}: {}", self.path, self.line, self.message)
        }
    }
}

impl std::error::Error for ImportError {}

#[derive(Deserialize)]
struct HeaderLine<'a> {
    #[serde(borrow)]
    format: Option<Cow<'a, str>>,
    version: Option<serde_json::Value>,
    #[serde(borrow)]
    scenario: Option<Cow<'a, str>>,
    #[serde(borrow)]
    variant: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pass: Option<Cow<'a, str>>,
    input: Option<u64>,
    dims: Option<HashMap<String, u64>>,
    bind: Option<serde_json::Value>,
}

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

/// Reads a trace line by line.
pub struct Reader<R> {
    src: R,
    path: String,
    /// The line last read (1-based).
    at: u64,
    text: String,
    header: Header,
    files: Vec<String>,
    file_ids: HashMap<String, u32>,
    buffers: Vec<String>,
    buffer_ids: HashMap<String, u32>,
    /// The indices the last `at` lines gave, by dimension.
    index: Vec<(String, u64)>,
}

impl<R: BufRead> Reader<R> {
    /// Reads and checks the header line. `path` names the trace in messages.
    pub fn new(src: R, path: &str) -> Result<Reader<R>, ImportError> {
        let mut r = Reader {
            src,
            path: path.to_string(),
            at: 0,
            text: String::new(),
            header: Header::default(),
            files: Vec::new(),
            file_ids: HashMap::new(),
            buffers: Vec::new(),
            buffer_ids: HashMap::new(),
            index: Vec::new(),
        };
        if !r.next_line()? {
            return Err(r.error(0, tr!("empty trace: expected a header line first")));
        }
        r.header = r.parse_header()?;
        Ok(r)
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The source files the accesses name, indexed by [`Access::file`].
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The learner's buffer names, indexed by [`Access::name`].
    pub fn buffers(&self) -> &[String] {
        &self.buffers
    }

    /// The indices of the scratch dimensions, as the last `at` lines before the access just
    /// read gave them.
    pub fn index(&self) -> &[(String, u64)] {
        &self.index
    }

    /// An error at the trace's line `line` (1-based; 0 for the whole file).
    pub fn error_at(&self, line: u64, message: impl Into<String>) -> ImportError {
        self.error(line, message)
    }

    fn error(&self, line: u64, message: impl Into<String>) -> ImportError {
        ImportError {
            path: self.path.clone(),
            line,
            message: message.into(),
        }
    }

    /// Reads the next line into `text`; `false` at the end.
    fn next_line(&mut self) -> Result<bool, ImportError> {
        self.text.clear();
        match self.src.read_line(&mut self.text) {
            Ok(0) => Ok(false),
            Ok(_) => {
                self.at += 1;
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                Err(self.error(self.at + 1, tr!("not UTF-8 text")))
            }
            Err(e) => Err(self.error(self.at + 1, tr!("cannot read: {e}", e))),
        }
    }

    fn parse_header(&self) -> Result<Header, ImportError> {
        let at = self.at;
        let h: HeaderLine = serde_json::from_str(self.text.trim_end()).map_err(|e| {
            self.error(
                at,
                tr!(
                    "the first line must be the header {{\"format\":\"{format}\",\"version\":{version},…}}: {e}",
                    format = TRACE_FORMAT,
                    version = TRACE_VERSION,
                    e = json_error(&e)
                ),
            )
        })?;
        if h.format.as_deref() != Some(TRACE_FORMAT) {
            return Err(self.error(
                at,
                tr!(
                    "\"format\": expected \"{format}\" in the header line, found {found}",
                    format = TRACE_FORMAT,
                    found = h.format.map_or_else(|| tr!("none").to_string(), |f| format!("\"{f}\""))
                ),
            ));
        }
        let version = h.version.as_ref().and_then(serde_json::Value::as_u64);
        if version != Some(u64::from(TRACE_VERSION)) {
            return Err(self.error(
                at,
                tr!(
                    "\"version\": this attn-trace reads version {version} of the trace format, the trace is version {found}",
                    version = TRACE_VERSION,
                    found = h.version.map_or_else(|| tr!("none").to_string(), |v| v.to_string())
                ),
            ));
        }
        let variant = match h.variant.as_deref() {
            None => None,
            Some(v) => Some(
                Variant::from_name(v).ok_or_else(|| self.error(at, tr!("\"variant\": unknown variant \"{v}\"", v)))?,
            ),
        };
        let pass = match h.pass.as_deref() {
            None => None,
            Some(p) => Some(
                Pass::from_name(p)
                    .ok_or_else(|| self.error(at, tr!("\"pass\": expected forward or backward, found \"{p}\"", p)))?,
            ),
        };
        let mut dims: Vec<(String, u64)> = h.dims.unwrap_or_default().into_iter().collect();
        dims.sort();
        let bind = match &h.bind {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(
                Bindings::from_json(v, &format!("{}:{at}: \"bind\"", self.path))
                    .map_err(|e| self.error(at, format!("\"bind\": {e}")))?,
            ),
        };
        Ok(Header {
            version: TRACE_VERSION,
            scenario: h.scenario.map(Cow::into_owned),
            variant,
            pass,
            input: h.input.unwrap_or(0),
            dims,
            bind,
        })
    }

    /// The next access, `None` at the end of the trace. Blank lines are skipped, `at` lines
    /// taken into [`Reader::index`].
    pub fn next_access(&mut self) -> Option<Result<Access, ImportError>> {
        loop {
            match self.next_line() {
                Err(e) => return Some(Err(e)),
                Ok(false) => return None,
                Ok(true) if self.text.trim().is_empty() => {}
                Ok(true) => match self.parse_access() {
                    Ok(Some(a)) => return Some(Ok(a)),
                    Ok(None) => {}
                    Err(e) => return Some(Err(e)),
                },
            }
        }
    }

    /// An access, or `None` for an `at` line.
    fn parse_access(&mut self) -> Result<Option<Access>, ImportError> {
        let at = self.at;
        let text = std::mem::take(&mut self.text);
        let result = self.parse_line(&text, at);
        self.text = text;
        result
    }

    fn parse_line(&mut self, text: &str, at: u64) -> Result<Option<Access>, ImportError> {
        if let Some(a) = fast::access(text.trim_end()) {
            let phase = a.phase.map(Phase::from_name);
            if phase.is_some_and(|p| p.is_none()) {
                return self.parse_json(text, at);
            }
            let file = self.file_id(a.file);
            let name = self.buffer_id(a.buffer);
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
                        other
                    ),
                ));
            }
            None => return Err(missing("op")),
        };
        let name = l.buffer.ok_or_else(|| missing("buffer"))?;
        if name.is_empty() {
            return Err(self.error(at, tr!("\"buffer\": an empty name")));
        }
        let offset = l.offset.ok_or_else(|| missing("offset"))?;
        // a negative offset is the learner's mistake (`k_base - 1`), reported by the grade
        let offset = offset
            .as_i64()
            .ok_or_else(|| self.error(at, tr!("\"offset\": expected a whole number, found {offset}", offset)))?;
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
                            t
                        ),
                    ));
                }
            },
            Some(other) => {
                return Err(self.error(
                    at,
                    tr!(
                        "\"value\": expected a number (or \"nan\", \"inf\", \"-inf\"), found {other}",
                        other
                    ),
                ));
            }
        };
        let file = l.file.ok_or_else(|| missing("file"))?;
        let line = l.line.ok_or_else(|| missing("line"))?;
        let line = line
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| self.error(at, tr!("\"line\": expected a source line number, found {line}", line)))?;
        let phase = match l.phase.as_deref() {
            None => None,
            Some(p) => {
                Some(Phase::from_name(p).ok_or_else(|| self.error(at, tr!("\"phase\": unknown phase \"{p}\"", p)))?)
            }
        };
        let file = self.file_id(&file);
        let name = self.buffer_id(&name);
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
                return Err(self.error(at, tr!("\"index\": {dim}: expected a whole number, found {v}", dim, v)));
            };
            match self.index.iter_mut().find(|(d, _)| d == dim) {
                Some(slot) => slot.1 = x,
                None => self.index.push((dim.clone(), x)),
            }
        }
        Ok(())
    }

    fn buffer_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.buffer_ids.get(name) {
            return id;
        }
        let id = self.buffers.len() as u32;
        self.buffers.push(name.to_string());
        self.buffer_ids.insert(name.to_string(), id);
        id
    }

    fn file_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.file_ids.get(name) {
            return id;
        }
        let id = self.files.len() as u32;
        self.files.push(name.to_string());
        self.file_ids.insert(name.to_string(), id);
        id
    }
}

/// serde_json's message without its " at line 1 column n" (the line is the trace's, said
/// before), keeping the column.
fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(k) => format!("{} (column {})", &text[..k], e.column()),
        None => text,
    }
}

/// The lines the recorders write, read without a JSON parser: `{"op":…,"buffer":…,"offset":…,
/// "value":…,"file":…,"line":…}` in this order, then optionally `"phase"` and a flat `"vars"`
/// object of whole numbers. Anything else (another order, escapes, other fields, a malformed
/// number) returns `None` and goes through serde_json, which reads every valid line and names
/// the problem of an invalid one: this only makes the common case fast (about 4× on a
/// ten-million-access trace), it accepts nothing serde_json would refuse.
mod fast {
    use attn_trace_core::trace::Op;

    pub struct Fast<'a> {
        pub op: Op,
        pub buffer: &'a str,
        pub offset: i64,
        pub value: f32,
        pub file: &'a str,
        pub line: u32,
        pub phase: Option<&'a str>,
    }

    /// `s` after `prefix`.
    fn eat<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
        s.strip_prefix(prefix)
    }

    /// A JSON string body without escapes, up to its closing quote; the rest after it.
    fn string(s: &str) -> Option<(&str, &str)> {
        let end = s.find(['"', '\\'])?;
        (s.as_bytes()[end] == b'"').then(|| (&s[..end], &s[end + 1..]))
    }

    /// A JSON number's text: `-?digits(.digits)?([eE][+-]?digits)?`; the rest after it.
    fn number(s: &str) -> Option<(&str, &str)> {
        let b = s.as_bytes();
        let mut k = usize::from(b.first() == Some(&b'-'));
        let digits = |k: &mut usize| {
            let from = *k;
            while b.get(*k).is_some_and(u8::is_ascii_digit) {
                *k += 1;
            }
            *k > from
        };
        if !digits(&mut k) {
            return None;
        }
        if b.get(k) == Some(&b'.') {
            k += 1;
            if !digits(&mut k) {
                return None;
            }
        }
        if matches!(b.get(k), Some(b'e' | b'E')) {
            k += 1;
            if matches!(b.get(k), Some(b'+' | b'-')) {
                k += 1;
            }
            if !digits(&mut k) {
                return None;
            }
        }
        Some((&s[..k], &s[k..]))
    }

    pub fn access(line: &str) -> Option<Fast<'_>> {
        let s = eat(line, "{\"op\":\"")?;
        let (op, s) = string(s)?;
        let op = match op {
            "read" => Op::Read,
            "write" => Op::Write,
            _ => return None,
        };
        let (buffer, s) = string(eat(s, ",\"buffer\":\"")?)?;
        let (offset, s) = number(eat(s, ",\"offset\":")?)?;
        let offset: i64 = offset.parse().ok()?;
        let s = eat(s, ",\"value\":")?;
        let (value, s) = match s.strip_prefix('"') {
            Some(q) => {
                let (text, rest) = string(q)?;
                let v = match text {
                    "nan" => f32::NAN,
                    "inf" => f32::INFINITY,
                    "-inf" => f32::NEG_INFINITY,
                    _ => return None,
                };
                (v, rest)
            }
            None => {
                let (text, rest) = number(s)?;
                (text.parse::<f64>().ok()? as f32, rest)
            }
        };
        let (file, s) = string(eat(s, ",\"file\":\"")?)?;
        let (line_no, mut s) = number(eat(s, ",\"line\":")?)?;
        let line: u32 = line_no.parse().ok()?;
        let mut phase = None;
        if let Some(rest) = s.strip_prefix(",\"phase\":\"") {
            let (p, rest) = string(rest)?;
            phase = Some(p);
            s = rest;
        }
        if let Some(mut rest) = s.strip_prefix(",\"vars\":{") {
            // "name":whole, … }
            if let Some(after) = rest.strip_prefix('}') {
                rest = after;
            } else {
                loop {
                    let (_, r) = string(rest.strip_prefix('"')?)?;
                    let (n, r) = number(r.strip_prefix(':')?)?;
                    n.parse::<u64>().ok()?;
                    if let Some(r) = r.strip_prefix(',') {
                        rest = r;
                    } else {
                        rest = r.strip_prefix('}')?;
                        break;
                    }
                }
            }
            s = rest;
        }
        (s == "}").then_some(Fast {
            op,
            buffer,
            offset,
            value,
            file,
            line,
            phase,
        })
    }
}
