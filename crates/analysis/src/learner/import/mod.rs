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

mod access;
mod fast;
mod header;

use super::bind::Bindings;
use crate::format::thousands;
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Op, Pass, Phase};
use attn_trace_i18n::tr;
use serde_json::Value;
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
}
