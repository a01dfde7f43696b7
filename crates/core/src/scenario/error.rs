//! The error every bad scenario file turns into: which file, which field, where, and what was
//! expected, on one line.

use std::fmt;
use std::ops::Range;

/// A scenario that cannot be used, with everything a person needs to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file as the user named it, or `<built-in NAME>`.
    pub file: String,
    /// The field at fault, e.g. `[shape].C` or `[values].q[1][2]`; `None` for the whole file.
    pub field: Option<String>,
    /// 1-based line and column (in characters), when the position is known.
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// What was expected and what was found.
    pub message: String,
}

impl ScenarioError {
    /// An error about the whole file, without a position.
    pub fn file(file: &str, message: impl Into<String>) -> Self {
        ScenarioError {
            file: file.to_string(),
            field: None,
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// An error at byte range `span` of `text` (the position is its start).
    pub fn at(file: &str, text: &str, span: Option<Range<usize>>, field: Option<String>, message: String) -> Self {
        let (line, column) = match span {
            Some(s) => {
                let (l, c) = line_column(text, s.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        ScenarioError {
            file: file.to_string(),
            field,
            line,
            column,
            message,
        }
    }
}

/// 1-based line and character column of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |k| k + 1);
    (line, before[line_start..].chars().count() + 1)
}

impl fmt::Display for ScenarioError {
    /// `file:line:column: field: message`, leaving out what is unknown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if let Some(field) = &self.field {
            f.write_str(": ")?;
            one_line(f, field)?;
        }
        f.write_str(": ")?;
        one_line(f, &self.message)
    }
}

/// Writes `text` with control characters (a newline inside a quoted key or value, say) shown
/// escaped, so an error is always one line whatever the file held.
fn one_line(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    for c in text.chars() {
        if c.is_control() {
            write!(f, "{}", c.escape_debug())?;
        } else {
            write!(f, "{c}")?;
        }
    }
    Ok(())
}

impl std::error::Error for ScenarioError {}
