//! Reading a trace: the JSON Lines the `trace` command exports and the recorders write.
//!
//! The first line is a header, `{"format":"attn-trace-trace","version":1,"scenario":…,
//! "variant":…,"pass":…,"input":0}` (with `"bind"`, how the learner's buffers lie over ours:
//! [`super::bind`]); every other line is one access. Of an access only `op`, `buffer`,
//! `offset`, `value`, `file` and `line` are required: what a learner's recorder cannot know (the
//! logical index, loop variables, derived offsets, level, phase) is optional, and the grader
//! derives what it needs from the registry. The buffer may have any name; which reference cell
//! an access is, is the bindings' business. A line `{"op":"at","index":{"i":3}}` says which
//! index the accesses after it are at along a dimension a buffer is reused on (a scratch row).
//! Lines are read one at a time, so a trace of any length takes memory for one line; every
//! problem is one message naming the trace's line and the field.
//!
//! Everything read is bounded before it is held: a line is at most [`MAX_LINE`] bytes (a longer
//! one is refused where it starts, its bytes never stored), a name (the scenario, a source file,
//! a buffer, a dimension) at most [`MAX_NAME`], and a trace names at most [`MAX_FILES`] source
//! files, [`MAX_BUFFERS`] buffers and [`MAX_AT_DIMS`] dimensions in its `at` lines, so the
//! reader holds at most a few megabytes whatever the trace. A message repeats at most
//! [`ECHO_CHARS`] characters of the trace, its control characters escaped. docs/your_kernel.md
//! lists the bounds.

use super::bind::Bindings;
use super::{TRACE_FORMAT, TRACE_VERSION};
use crate::format::thousands;
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Op, Pass, Phase};
use attn_trace_i18n::tr;
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io::BufRead;
use std::path::Path;

/// The longest line a trace may have, in bytes, without its newline. An access takes about 100
/// (an export's, with its loop variables, a few hundred), the header a few hundred.
pub const MAX_LINE: usize = 64 << 10;
/// The longest name a trace may give, in bytes: the scenario's path, an access's source file.
pub const MAX_NAME: usize = 4096;
/// The most source files a trace may name (a kernel's accesses come from a few).
pub const MAX_FILES: usize = 1024;
/// The most buffer names a trace may use (a kernel has a few dozen at most).
pub const MAX_BUFFERS: usize = 1024;
/// The most dimensions the `at` lines may name (a scratch row is reused along one or two).
pub const MAX_AT_DIMS: usize = 16;
/// The most characters of the trace a message repeats.
pub const ECHO_CHARS: usize = 100;

/// The fields of the header line; any other is refused (a misspelt one would be ignored).
pub const HEADER_FIELDS: [&str; 8] = [
    "format", "version", "scenario", "variant", "pass", "input", "dims", "bind",
];
/// The sizes the header's `dims` gives, every one of them: the inputs file's `dim` lines.
pub const DIMS: [&str; 8] = ["B", "T", "S", "C", "H", "D", "H_kv", "L"];

/// `text` as a message repeats it: control characters escaped as Rust writes them (`\n`,
/// `\u{1b}`), and at most [`ECHO_CHARS`] characters of it, `…` marking a cut.
pub fn echo(text: &str) -> String {
    echo_at_most(text, ECHO_CHARS)
}

fn echo_at_most(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (shown, c) in text.chars().enumerate() {
        if shown >= max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// A JSON value as a message repeats it (see [`echo`]).
fn echo_value(v: &Value) -> String {
    echo(&v.to_string())
}

/// Opens a trace for reading: a regular file, opened without blocking, so a FIFO or a device is
/// refused at once instead of waited on or read without end. `shown` names it in the message.
pub fn open(path: &Path, shown: &str) -> Result<std::fs::File, ImportError> {
    attn_trace_core::files::input::open_regular(path)
        .map(|(file, _)| file)
        .map_err(|e| ImportError {
            path: shown.to_string(),
            line: 0,
            message: tr!("cannot read the trace: {e}", e).to_string(),
        })
}

/// What [`read_line`] found.
enum Bounded {
    End,
    Line,
    TooLong,
}

/// Reads one line into `line` (its newline included), never more than `max` bytes of it: a
/// longer line is [`Bounded::TooLong`] with at most `max` bytes held.
fn read_line<R: BufRead>(src: &mut R, line: &mut Vec<u8>, max: usize) -> std::io::Result<Bounded> {
    loop {
        let buf = match src.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(if line.is_empty() { Bounded::End } else { Bounded::Line });
        }
        let (n, ends) = match memchr::memchr(b'\n', buf) {
            Some(k) => (k + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + n > max {
            return Ok(Bounded::TooLong);
        }
        line.extend_from_slice(&buf[..n]);
        src.consume(n);
        if ends {
            return Ok(Bounded::Line);
        }
    }
}

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
    pub(crate) fn error_at(&self, line: u64, message: impl Into<String>) -> ImportError {
        self.error(line, message)
    }

    fn error(&self, line: u64, message: impl Into<String>) -> ImportError {
        ImportError {
            path: self.path.clone(),
            line,
            message: message.into(),
        }
    }

    /// Reads the next line into `text`, at most [`MAX_LINE`] bytes of it; `false` at the end.
    fn next_line(&mut self) -> Result<bool, ImportError> {
        // the line's bytes go where the last line's text was: no allocation per line
        let mut bytes = std::mem::take(&mut self.text).into_bytes();
        bytes.clear();
        let next = self.at + 1;
        match read_line(&mut self.src, &mut bytes, MAX_LINE + 1) {
            Ok(Bounded::End) => Ok(false),
            Ok(Bounded::TooLong) => Err(self.error(
                next,
                tr!(
                    "the line is longer than {max} bytes, the most a trace's line may be (an access takes about 100)",
                    max = thousands(MAX_LINE as u64)
                ),
            )),
            Ok(Bounded::Line) => match String::from_utf8(bytes) {
                Ok(text) => {
                    self.text = text;
                    self.at = next;
                    Ok(true)
                }
                Err(_) => Err(self.error(next, tr!("not UTF-8 text"))),
            },
            Err(e) => Err(self.error(next, tr!("cannot read: {e}", e))),
        }
    }

    fn parse_header(&self) -> Result<Header, ImportError> {
        let at = self.at;
        let err = |message: String| self.error(at, message);
        let h: serde_json::Map<String, Value> = serde_json::from_str(self.text.trim_end()).map_err(|e| {
            err(tr!(
                "the first line must be the header {\"format\":\"{format}\",\"version\":{version},…}: {e}",
                format = TRACE_FORMAT,
                version = TRACE_VERSION,
                e = json_error(&e)
            )
            .to_string())
        })?;
        let none = || tr!("none").to_string();
        let format = h.get("format");
        if format.and_then(Value::as_str) != Some(TRACE_FORMAT) {
            return Err(err(tr!(
                "\"format\": expected \"{format}\" in the header line, found {found}",
                format = TRACE_FORMAT,
                found = format.map_or_else(none, echo_value)
            )
            .to_string()));
        }
        let version = h.get("version");
        if version.and_then(Value::as_u64) != Some(u64::from(TRACE_VERSION)) {
            return Err(err(tr!(
                "\"version\": this attn-trace reads version {version} of the trace format, the trace is version {found}",
                version = TRACE_VERSION,
                found = version.map_or_else(none, echo_value)
            )
            .to_string()));
        }
        if let Some(key) = h.keys().find(|k| !HEADER_FIELDS.contains(&k.as_str())) {
            return Err(err(tr!(
                "\"{key}\": not a field of the header; its fields are {fields}",
                key = echo(key),
                fields = HEADER_FIELDS.join(", ")
            )
            .to_string()));
        }
        // a string, or null for "not said" (an export of several variants has "variant":null)
        let text = |name: &str| -> Result<Option<&str>, ImportError> {
            match h.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(other) => Err(err(tr!(
                    "\"{name}\": expected a string, found {found}",
                    name,
                    found = echo_value(other)
                )
                .to_string())),
            }
        };
        let scenario = text("scenario")?;
        if scenario.is_some_and(|s| s.len() > MAX_NAME) {
            return Err(err(tr!(
                "\"scenario\": longer than {max} bytes, the most a path may be",
                max = thousands(MAX_NAME as u64)
            )
            .to_string()));
        }
        let variant = match text("variant")? {
            None => None,
            Some(v) => Some(
                Variant::from_name(v)
                    .ok_or_else(|| err(tr!("\"variant\": unknown variant \"{v}\"", v = echo(v)).to_string()))?,
            ),
        };
        let pass = match text("pass")? {
            None => None,
            Some(p) => Some(Pass::from_name(p).ok_or_else(|| {
                err(tr!("\"pass\": expected forward or backward, found \"{p}\"", p = echo(p)).to_string())
            })?),
        };
        let input = match h.get("input") {
            None | Some(Value::Null) => 0,
            Some(v) => v.as_u64().ok_or_else(|| {
                err(tr!(
                    "\"input\": expected a whole number, found {found}",
                    found = echo_value(v)
                )
                .to_string())
            })?,
        };
        let dims = self.parse_dims(h.get("dims"))?;
        let bind = match h.get("bind") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                Bindings::from_json(v, &format!("{}:{at}: \"bind\"", self.path))
                    .map_err(|e| err(format!("\"bind\": {e}")))?,
            ),
        };
        Ok(Header {
            version: TRACE_VERSION,
            scenario: scenario.map(str::to_string),
            variant,
            pass,
            input,
            dims,
            bind,
        })
    }

    /// The header's `dims`: every one of [`DIMS`], each a whole number, and nothing else.
    fn parse_dims(&self, dims: Option<&Value>) -> Result<Vec<(String, u64)>, ImportError> {
        let err = |message: String| self.error(self.at, message);
        let all = DIMS.join(", ");
        let Some(dims) = dims else {
            return Err(err(tr!(
                "\"dims\": missing; the header gives the sizes the recorder saw ({all}), as the inputs file's dim lines do",
                all
            )
            .to_string()));
        };
        let Some(map) = dims.as_object() else {
            return Err(err(tr!(
                "\"dims\": expected an object of sizes ({all}), found {found}",
                all,
                found = echo_value(dims)
            )
            .to_string()));
        };
        if let Some(name) = map.keys().find(|k| !DIMS.contains(&k.as_str())) {
            return Err(err(tr!(
                "\"dims\": unknown size \"{name}\"; the sizes are {all}",
                name = echo(name),
                all
            )
            .to_string()));
        }
        let mut out = Vec::with_capacity(DIMS.len());
        for name in DIMS {
            let Some(v) = map.get(name) else {
                return Err(err(tr!(
                    "\"dims\": no {name}; the header gives every size: {all}",
                    name,
                    all
                )
                .to_string()));
            };
            let n = v.as_u64().ok_or_else(|| {
                err(tr!(
                    "\"dims\": {name} must be a whole number, found {found}",
                    name,
                    found = echo_value(v)
                )
                .to_string())
            })?;
            out.push((name.to_string(), n));
        }
        out.sort();
        Ok(out)
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

/// serde_json's message without its " at line 1 column n" (the line is the trace's, said
/// before), keeping the column.
fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let text = match text.rfind(" at line ") {
        Some(k) => &text[..k],
        None => &text,
    };
    // serde_json repeats what it found (a string, a key): a part of it only
    let text = echo_at_most(text, 2 * ECHO_CHARS);
    if text == "number out of range" {
        return tr!(
            "a number beyond the range of a float (column {column}); write \"inf\" or \"-inf\" for an infinite value",
            column = e.column()
        )
        .to_string();
    }
    format!("{text} (column {})", e.column())
}

/// The lines the recorders write, read without a JSON parser: `{"op":…,"buffer":…,"offset":…,
/// "value":…,"file":…,"line":…}` in this order, then optionally `"phase"` and a flat `"vars"`
/// object of whole numbers. Anything else (another order, escapes, other fields, a malformed
/// number) returns `None` and goes through serde_json, which reads every valid line and names
/// the problem of an invalid one: this only makes the common case fast (about 4× on a
/// ten-million-access trace), it accepts nothing serde_json would refuse.
mod fast {
    use attn_trace_core::trace::Op;

    /// A value whose number is beyond float64's range (`1e400`): refused, not read as ±inf.
    pub(super) struct Beyond<'a>(pub &'a str);

    pub(super) struct Fast<'a> {
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

    pub(super) fn access(line: &str) -> Option<Result<Fast<'_>, Beyond<'_>>> {
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
                let x = text.parse::<f64>().ok()?;
                if x.is_infinite() {
                    return Some(Err(Beyond(text)));
                }
                (x as f32, rest)
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
        (s == "}").then_some(Ok(Fast {
            op,
            buffer,
            offset,
            value,
            file,
            line,
            phase,
        }))
    }
}
