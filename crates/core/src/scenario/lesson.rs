//! Lesson files: a scenario and an ordered path of stops through its logs, each with a short note
//! and, if the teacher wants one, a question (docs/lessons.md). Read as strictly as scenarios:
//! every unknown key, wrong type or missing field is one line naming the file, the field and the
//! line. Where a stop's position lands is checked once the scenario is traced
//! (`tui::lesson::resolve`), with the same kind of error.
//!
//! ```toml
//! title = "Multi-head attention, stop by stop"
//! scenario = "../scenarios/mha_walkthrough.toml"   # relative to the lesson file
//!
//! [[stop]]
//! at = "b=0 h=1 i=2 j=1"          # any position `g` and `tui --at` take
//! note = "Head 1's score for query 2 and key 1 is written here."
//! ask = "offset"                  # predict the next access's offset (or "value": the next write's value)
//!
//! [[stop]]
//! at = "softmax"
//! note = "Each row of scores becomes probabilities."
//! question = "Which dimension does softmax normalise over?"
//! options = ["the keys j", "the queries i", "the heads h"]
//! answer = 1                      # 1-based
//! ```

use super::reader::{Doc, Result, toml_error};
use super::{MAX_FILE_BYTES, ScenarioError};
use crate::kernels::Variant;
use crate::trace::Pass;
use attn_trace_i18n::tr;
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};

const ROOT_KEYS: &[&str] = &["title", "about", "scenario", "stop"];
const STOP_KEYS: &[&str] = &["at", "variant", "pass", "note", "ask", "question", "options", "answer"];
/// Most stops a lesson may have, and most options a choice may offer (keys 1 to 9 choose).
pub const MAX_STOPS: usize = 500;
pub const MAX_OPTIONS: usize = 9;
/// Longest note, in characters: a note is read at a stop, beside the screen it is about.
pub const MAX_NOTE: usize = 600;

/// A lesson: which scenario, and the stops in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Lesson {
    /// The lesson file as the user named it.
    pub source: String,
    pub title: String,
    pub about: Option<String>,
    /// The scenario file, relative to the current directory (the file names it relative to
    /// itself).
    pub scenario: PathBuf,
    pub stops: Vec<Stop>,
}

/// One stop: where, what the note says, and what is asked.
#[derive(Clone, Debug, PartialEq)]
pub struct Stop {
    /// A position as `g` takes it.
    pub at: String,
    pub variant: Option<Variant>,
    pub pass: Option<Pass>,
    pub note: String,
    pub ask: Option<Ask>,
    /// Where `at` is in the file (field, line, column), for an error once it is resolved.
    pub at_field: String,
    pub at_line: usize,
    pub at_column: usize,
}

/// A stop's question.
#[derive(Clone, Debug, PartialEq)]
pub enum Ask {
    /// The offset of the access right after the stop, checked against the log.
    Offset { question: Option<String> },
    /// The value the first write after the stop stores, checked against the log.
    Value { question: Option<String> },
    /// One of the teacher's options; `answer` is 0-based.
    Choice {
        question: String,
        options: Vec<String>,
        answer: usize,
    },
}

impl Stop {
    /// An error about this stop's position, at its place in the file.
    pub fn error(&self, file: &str, message: String) -> ScenarioError {
        ScenarioError {
            file: file.to_string(),
            field: Some(self.at_field.clone()),
            line: Some(self.at_line),
            column: Some(self.at_column),
            message,
        }
    }
}

/// The shipped lessons, embedded, by file stem (`gqa`, `gqa.zh-CN`): a binary installed
/// anywhere offers them. Each follows the shipped scenario its `scenario` path names by stem.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "mha_walkthrough",
        include_str!("../../../../lessons/mha_walkthrough.toml"),
    ),
    (
        "mha_walkthrough.zh-CN",
        include_str!("../../../../lessons/mha_walkthrough.zh-CN.toml"),
    ),
    ("backward", include_str!("../../../../lessons/backward.toml")),
    (
        "backward.zh-CN",
        include_str!("../../../../lessons/backward.zh-CN.toml"),
    ),
    ("gqa", include_str!("../../../../lessons/gqa.toml")),
    ("gqa.zh-CN", include_str!("../../../../lessons/gqa.zh-CN.toml")),
    ("flash", include_str!("../../../../lessons/flash.toml")),
    ("flash.zh-CN", include_str!("../../../../lessons/flash.zh-CN.toml")),
];

impl Lesson {
    /// Reads and checks the lesson file at `path` (its scenario is not opened yet).
    pub fn load(path: &Path) -> std::result::Result<Lesson, ScenarioError> {
        let source = path.display().to_string();
        let bytes = crate::files::input::read(path, MAX_FILE_BYTES, attn_trace_i18n::msg!("a lesson file"))
            .map_err(|e| ScenarioError::file(&source, e.to_string()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ScenarioError::file(&source, tr!("not UTF-8 text: save the lesson file as UTF-8")))?;
        let mut lesson = Lesson::parse(&text, &source)?;
        // the scenario is named relative to the lesson file; `lessons/../scenarios/x.toml` is
        // shown as `scenarios/x.toml`
        if lesson.scenario.is_relative() {
            lesson.scenario = tidy(&crate::files::atomic::dir_of(path).join(&lesson.scenario));
        }
        Ok(lesson)
    }

    /// A shipped lesson by file stem, with the shipped scenario it follows (the one whose stem
    /// its `scenario` path ends in); `None` for a name that is not shipped.
    pub fn shipped(name: &str) -> Option<std::result::Result<(Lesson, super::Scenario), ScenarioError>> {
        let (_, text) = SHIPPED.iter().find(|(n, _)| *n == name)?;
        let source = format!("<built-in lessons/{name}.toml>");
        Some(Lesson::parse(text, &source).and_then(|lesson| {
            let stem = lesson.scenario.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            let scenario = super::Scenario::shipped(stem).ok_or_else(|| {
                ScenarioError::file(
                    &source,
                    tr!(
                        "its scenario {path} is not one of the shipped scenarios",
                        path = lesson.scenario.display()
                    ),
                )
            })?;
            Ok((lesson, scenario))
        }))
    }

    /// Parses lesson text; `source` names it in errors. The scenario path is left as written.
    pub fn parse(text: &str, source: &str) -> std::result::Result<Lesson, ScenarioError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let doc = Doc { text, source };
        if text.trim().is_empty() {
            return Err(ScenarioError::file(
                source,
                tr!("empty file: a lesson needs a title, a scenario and at least one [[stop]]"),
            ));
        }
        let root = DeTable::parse(text).map_err(|e| toml_error(&doc, e.message(), e.span()))?;
        let root = root.get_ref();
        doc.known_keys(root, ROOT_KEYS, "")?;
        let required = |key: &str, what: &str| -> Result<String> {
            let Some(v) = root.get(key) else {
                return Err(ScenarioError {
                    field: Some(key.to_string()),
                    ..ScenarioError::file(source, tr!("missing: every lesson needs {what}", what))
                });
            };
            let s = doc.string(v, key)?;
            if s.trim().is_empty() {
                return Err(doc.err(Some(v.span()), key, tr!("expected a non-empty string")));
            }
            Ok(s.to_string())
        };
        let title = required("title", tr!("a title = \"…\""))?;
        let scenario = PathBuf::from(required("scenario", tr!("a scenario = \"path/to/scenario.toml\""))?);
        let about = root
            .get("about")
            .map(|v| doc.string(v, "about"))
            .transpose()?
            .map(str::to_string);
        let Some(stops_v) = root.get("stop") else {
            return Err(ScenarioError {
                field: Some("[[stop]]".into()),
                ..ScenarioError::file(source, tr!("missing: a lesson needs at least one [[stop]]"))
            });
        };
        let DeValue::Array(items) = stops_v.get_ref() else {
            return Err(doc.err(
                Some(stops_v.span()),
                "stop",
                tr!("expected [[stop]] tables, found {found}", found = doc.found(stops_v)),
            ));
        };
        if items.len() > MAX_STOPS {
            return Err(doc.err(
                Some(stops_v.span()),
                "[[stop]]",
                tr!("at most {max} stops, found {n}", max = MAX_STOPS, n = items.len()),
            ));
        }
        let stops = items
            .iter()
            .enumerate()
            .map(|(k, v)| parse_stop(&doc, k + 1, v))
            .collect::<Result<Vec<_>>>()?;
        if stops.is_empty() {
            return Err(doc.err(
                Some(stops_v.span()),
                "[[stop]]",
                tr!("a lesson needs at least one [[stop]]"),
            ));
        }
        Ok(Lesson {
            source: source.to_string(),
            title,
            about,
            scenario,
            stops,
        })
    }
}

/// Stop `k` (1-based) of the file.
fn parse_stop(doc: &Doc<'_>, k: usize, v: &super::reader::Value<'_>) -> Result<Stop> {
    let section = format!("stop {k}");
    let field = |key: &str| format!("[[stop]] {k}.{key}");
    let t = doc.table(v, &format!("[[stop]] {k}"))?;
    doc.known_keys(t, STOP_KEYS, &section)?;
    let missing = |key: &str, what: &str| {
        doc.err(
            Some(v.span()),
            &field(key),
            tr!("missing: every stop needs {what}", what),
        )
    };
    let at_v = t
        .get("at")
        .ok_or_else(|| missing("at", tr!("an at = \"…\" (a position, as g takes it)")))?;
    let at = doc.string(at_v, &field("at"))?.trim().to_string();
    if at.is_empty() {
        return Err(doc.err(
            Some(at_v.span()),
            &field("at"),
            tr!("expected a position, found an empty string"),
        ));
    }
    let (at_line, at_column) = super::line_column(doc.text, at_v.span().start);
    let note_v = t.get("note").ok_or_else(|| missing("note", tr!("a note = \"…\"")))?;
    let note = doc.string(note_v, &field("note"))?.trim().to_string();
    if note.is_empty() {
        return Err(doc.err(Some(note_v.span()), &field("note"), tr!("expected a non-empty string")));
    }
    if note.chars().count() > MAX_NOTE {
        return Err(doc.err(
            Some(note_v.span()),
            &field("note"),
            tr!(
                "a note is at most {max} characters, found {n}: split it over two stops",
                max = MAX_NOTE,
                n = note.chars().count()
            ),
        ));
    }
    let variant = t
        .get("variant")
        .map(|x| {
            let names: Vec<(&str, Variant)> = Variant::ALL.iter().map(|&v| (v.name(), v)).collect();
            doc.choice(x, &field("variant"), &names, tr!("variant"))
        })
        .transpose()?;
    let pass = t
        .get("pass")
        .map(|x| {
            let names: Vec<(&str, Pass)> = Pass::ALL.iter().map(|&p| (p.name(), p)).collect();
            doc.choice(x, &field("pass"), &names, tr!("pass"))
        })
        .transpose()?;
    let question = t
        .get("question")
        .map(|x| doc.string(x, &field("question")).map(|s| s.trim().to_string()))
        .transpose()?;
    let ask = match (t.get("ask"), t.get("options"), t.get("answer")) {
        (Some(a), Some(_), _) => {
            return Err(doc.err(
                Some(a.span()),
                &field("ask"),
                tr!("give either ask (the log answers) or options and answer (you answer), not both"),
            ));
        }
        (Some(a), None, answer) => {
            if let Some(x) = answer {
                return Err(doc.err(
                    Some(x.span()),
                    &field("answer"),
                    tr!("answer goes with options; with ask the log gives the answer"),
                ));
            }
            let kind = doc.choice(
                a,
                &field("ask"),
                &[("offset", 0u8), ("value", 1u8)],
                tr!("question kind"),
            )?;
            Some(if kind == 0 {
                Ask::Offset { question }
            } else {
                Ask::Value { question }
            })
        }
        (None, Some(o), answer) => {
            let DeValue::Array(items) = o.get_ref() else {
                return Err(doc.err(
                    Some(o.span()),
                    &field("options"),
                    tr!("expected an array of strings, found {found}", found = doc.found(o)),
                ));
            };
            if !(2..=MAX_OPTIONS).contains(&items.len()) {
                return Err(doc.err(
                    Some(o.span()),
                    &field("options"),
                    tr!(
                        "expected 2 to {max} options, found {n}",
                        max = MAX_OPTIONS,
                        n = items.len()
                    ),
                ));
            }
            let options = items
                .iter()
                .map(|x| doc.string(x, &field("options")).map(|s| s.trim().to_string()))
                .collect::<Result<Vec<_>>>()?;
            let Some(answer) = answer else {
                return Err(missing("answer", tr!("an answer = N (1-based) with its options")));
            };
            let n = doc.integer(
                answer,
                &field("answer"),
                1,
                options.len() as i128,
                &tr!("an option number from 1 to {n}", n = options.len()),
            )?;
            let Some(question) = question.filter(|q| !q.is_empty()) else {
                return Err(missing("question", tr!("a question = \"…\" with its options")));
            };
            Some(Ask::Choice {
                question,
                options,
                answer: n as usize - 1,
            })
        }
        (None, None, Some(x)) => {
            return Err(doc.err(
                Some(x.span()),
                &field("answer"),
                tr!("answer goes with options = [\"…\", \"…\"]"),
            ));
        }
        (None, None, None) => {
            if let Some(x) = t.get("question") {
                return Err(doc.err(
                    Some(x.span()),
                    &field("question"),
                    tr!("a question needs ask = \"offset\" or \"value\", or options and answer"),
                ));
            }
            None
        }
    };
    Ok(Stop {
        at,
        variant,
        pass,
        note,
        ask,
        at_field: field("at"),
        at_line,
        at_column,
    })
}

/// `path` with each `dir/..` pair and every `.` removed, by its text alone (no symbolic link is
/// followed): the path a person would write.
fn tidy(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    if out.is_empty() {
        PathBuf::from(".")
    } else {
        out.iter().collect()
    }
}
