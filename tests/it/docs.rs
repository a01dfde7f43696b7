//! Docs the engine keeps honest.
//!
//! Every number a page in `docs/` (or README.md) quotes sits in a marked block that this test
//! regenerates and compares:
//!
//! ````text
//! <!-- generated: attn-trace explain scenarios/mha_walkthrough.toml --variant mha --at b=0,h=1,i=2,j=1 -->
//! ```text
//! …the command's output…
//! ```
//! <!-- /generated -->
//! ````
//!
//! `| grep WORD` after the command keeps only the lines containing WORD. Quoted kernel code is
//! marked the same way with `<!-- source: PATH from "START" to "END" -->`: the lines of PATH from
//! the first one containing START through the next one containing END (`until "END"` stops
//! just before it).
//!
//! After changing a kernel or a command's output, regenerate with
//! `ATTN_TRACE_UPDATE_DOCS=1 cargo test --release --test it docs::`, read the diff, and commit it.

use crate::support::root;
use assert_cmd::Command;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

const END_GENERATED: &str = "<!-- /generated -->";

/// Makes a block's content from the text after its marker's colon.
type Producer = fn(&str) -> Result<String, String>;
const END_SOURCE: &str = "<!-- /source -->";

/// Splits a marker's argument string on spaces, keeping "double quoted" words together.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for ch in s.chars() {
        match ch {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(ch),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The output of `attn-trace ARGS`, optionally filtered by `| grep WORD`.
fn generate(spec: &str) -> Result<String, String> {
    let (cmd, filter) = match spec.split_once(" | grep ") {
        Some((c, f)) => (c, Some(words(f).join(" "))),
        None => (spec, None),
    };
    let mut args = words(cmd);
    if args.first().map(String::as_str) != Some("attn-trace") {
        return Err(format!("a generated block must run attn-trace, not `{cmd}`"));
    }
    args.remove(0);
    let out = Command::cargo_bin("attn-trace")
        .map_err(|e| e.to_string())?
        .current_dir(root())
        .env("NO_COLOR", "1")
        .args(&args)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("`{cmd}` failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Ok(match filter {
        Some(word) => text
            .lines()
            .filter(|l| l.contains(&word))
            .map(|l| format!("{l}\n"))
            .collect(),
        None => text,
    })
}

/// The lines of `path` from the first containing `start` through the next containing `end`
/// (`to`), or up to but not including it (`until`), without trailing blank lines.
fn source(spec: &str) -> Result<String, String> {
    let w = words(spec);
    let usage = || format!("expected `PATH from \"START\" to|until \"END\"`, got `{spec}`");
    let [path, from, start, to, end] = w.as_slice() else {
        return Err(usage());
    };
    if from != "from" || (to != "to" && to != "until") {
        return Err(usage());
    }
    let text = fs::read_to_string(root().join(path)).map_err(|e| format!("{path}: {e}"))?;
    let lines: Vec<&str> = text.lines().collect();
    let a = lines
        .iter()
        .position(|l| l.contains(start.as_str()))
        .ok_or(format!("{path}: no line has `{start}`"))?;
    let mut b = a
        + 1
        + lines[a + 1..]
            .iter()
            .position(|l| l.contains(end.as_str()))
            .ok_or(format!("{path}: no `{end}`"))?;
    if to == "until" {
        b -= 1;
    }
    // quoted code keeps its shape but not the kernel's indentation; trailing blank lines and
    // the closing braces of whatever encloses the quote stay out
    let indent = lines[a].len() - lines[a].trim_start().len();
    let indent_of = |l: &str| l.len() - l.trim_start().len();
    while b > a && (lines[b].trim().is_empty() || indent_of(lines[b]) < indent) {
        b -= 1;
    }
    Ok(lines[a..=b]
        .iter()
        .map(|l| format!("{}\n", l.get(indent..).unwrap_or(l.trim_start())))
        .collect())
}

/// Rebuilds a page with every marked block regenerated.
fn regenerate(page: &Path) -> Result<(String, usize), String> {
    let text = fs::read_to_string(page).map_err(|e| e.to_string())?;
    let mut out = String::new();
    let mut blocks = 0;
    let mut rest = text.as_str();
    while let Some(at) = rest.find("<!-- ") {
        let (before, marker_on) = rest.split_at(at);
        out.push_str(before);
        let close = marker_on.find("-->").ok_or("unclosed marker")? + 3;
        let marker = &marker_on[..close];
        let body = marker.trim_start_matches("<!-- ").trim_end_matches("-->").trim();
        let (kind, spec) = body.split_once(": ").unwrap_or((body, ""));
        let (end_marker, lang, produce): (&str, &str, Producer) = match kind {
            "generated" => (END_GENERATED, "text", generate),
            // a quote of Python (a learner's example) is fenced as Python
            "source" if spec.split_whitespace().next().is_some_and(|p| p.ends_with(".py")) => {
                (END_SOURCE, "python", source)
            }
            "source" => (END_SOURCE, "rust", source),
            _ => {
                out.push_str(marker);
                rest = &marker_on[close..];
                continue;
            }
        };
        let end = marker_on
            .find(end_marker)
            .ok_or(format!("`{marker}` has no {end_marker}"))?;
        let content = produce(spec).map_err(|e| format!("{}: {e}", page.display()))?;
        out.push_str(&format!("{marker}\n```{lang}\n{content}```\n{end_marker}"));
        blocks += 1;
        rest = &marker_on[end + end_marker.len()..];
    }
    out.push_str(rest);
    Ok((out, blocks))
}

fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.push(root().join("README.md"));
    pages.sort();
    pages
}

#[test]
fn generated_blocks_match_the_engine() {
    let update = std::env::var_os("ATTN_TRACE_UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    let mut total = 0;
    for page in pages().iter().filter(|p| p.exists()) {
        let current = fs::read_to_string(page).expect("readable page");
        let (fresh, blocks) = regenerate(page).unwrap_or_else(|e| panic!("{e}"));
        total += blocks;
        if fresh != current {
            if update {
                let dir = page.parent().expect("page has a folder");
                let mut tmp = tempfile::NamedTempFile::new_in(dir).expect("temp file");
                tmp.write_all(fresh.as_bytes()).expect("write");
                tmp.persist(page).expect("rename over the page");
            } else {
                stale.push(page.strip_prefix(root()).unwrap_or(page).display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "these pages quote output the engine no longer produces: {stale:?}\n\
         regenerate with `ATTN_TRACE_UPDATE_DOCS=1 cargo test --release --test it docs::` and review the diff"
    );
    assert!(total >= 10, "only {total} generated blocks across the docs");
}

#[test]
fn every_english_page_has_a_chinese_twin() {
    for page in pages() {
        let name = page.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if page.parent() != Some(&root().join("docs")) || name.ends_with(".zh-CN.md") {
            continue;
        }
        // one machine's measurements, not a teaching page: English only
        if name == "performance.md" {
            continue;
        }
        let twin = page.with_file_name(name.replace(".md", ".zh-CN.md"));
        assert!(twin.exists(), "{name} has no 简体中文 version {}", twin.display());
        // the twin quotes the same generated blocks
        let markers = |p: &Path| -> Vec<String> {
            fs::read_to_string(p)
                .unwrap_or_default()
                .lines()
                .filter(|l| l.starts_with("<!-- generated:") || l.starts_with("<!-- source:"))
                .map(String::from)
                .collect()
        };
        assert_eq!(
            markers(&page),
            markers(&twin),
            "{name} and its twin quote different blocks"
        );
    }
}

#[test]
fn grep_filter_and_source_ranges_work() {
    assert_eq!(words(r#"a "b c" d"#), vec!["a", "b c", "d"]);
    let src =
        source(r#"crates/core/src/kernels/attention_mha.rs from "pass 1:" to "rec.phase(Phase::Scores);""#).unwrap();
    assert!(src.starts_with("// pass 1:"), "{src}");
    assert!(src.trim_end().ends_with("rec.phase(Phase::Scores);"), "{src}");
    let until = source(r#"crates/core/src/kernels/attention_mha.rs from "pass 1:" until "/// Pass 2""#).unwrap();
    assert!(until.trim_end().ends_with('}') && !until.contains("Pass 2"), "{until}");
    assert!(source("crates/core/src/kernels/attention_mha.rs from \"no such line\" to \"x\"").is_err());
}

/// The README tells a newcomer how to put `attn-trace` on `PATH` and walks the first five
/// minutes; the limits, exit codes and full `--help` live in docs/cli.md, keeping it short.
#[test]
fn the_readme_starts_a_newcomer_and_stays_short() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains("cargo install --path ."), "no way onto PATH");
    // the two set-up commands, and the performance summary keeps its commands
    assert!(
        readme.contains("cargo run --release ") && readme.contains("cargo test --release "),
        "no set-up"
    );
    assert!(
        readme.contains("## Performance") && readme.contains("`cargo bench --bench trace`"),
        "no figures"
    );
    assert!(readme.contains("## The first five minutes"), "no first traced");
    assert!(readme.contains("(docs/cli.md)"), "no link to the command line page");
    assert!(
        !readme.contains("<!-- generated: attn-trace --help -->"),
        "the full help belongs in docs/cli.md"
    );
    let lines = readme.lines().count();
    assert!(lines <= 260, "README.md has {lines} lines");
    let cli = fs::read_to_string(root().join("docs/cli.md")).unwrap();
    assert!(
        cli.contains("<!-- generated: attn-trace --help -->") && cli.contains("| 3 |"),
        "{cli}"
    );
}
