//! Every message has both languages: each `tr!("…")` in the sources is in the zh-CN catalog, the
//! catalog holds nothing that no code uses, and each translation has exactly the placeholders of
//! its English text, so the numbers filled in are the same in both languages.

use attn_trace::i18n::{Lang, placeholders, text_in, zh_cn_messages};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The string literal that starts at the beginning of `src` (after optional whitespace), decoded
/// as Rust decodes it: `\"`, `\\`, `\n`, `\t`, `\u{…}`, and a `\` at the end of a line that skips
/// the line break and the next line's indentation. Raw strings are `r"…"` / `r#"…"#`.
fn literal(src: &str) -> Option<String> {
    let src = src.trim_start();
    if let Some(raw) = src.strip_prefix('r') {
        let hashes = raw.chars().take_while(|&c| c == '#').count();
        let body = raw[hashes..].strip_prefix('"')?;
        let end = format!("\"{}", "#".repeat(hashes));
        return body.find(&end).map(|k| body[..k].to_string());
    }
    let mut chars = src.strip_prefix('"')?.chars().peekable();
    let mut out = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                '0' => out.push('\0'),
                '\\' => out.push('\\'),
                '"' => out.push('"'),
                '\'' => out.push('\''),
                'u' => {
                    let hex: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                '\n' => while chars.next_if(|c| c.is_whitespace()).is_some() {},
                other => panic!("unexpected escape \\{other}"),
            },
            c => out.push(c),
        }
    }
    None
}

/// Every message passed to `tr!` in `src/`, with the places it is used.
fn used_messages() -> BTreeMap<String, Vec<String>> {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let mut used: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        // the macro's own definition and docs are not messages
        if file.ends_with("i18n/mod.rs") {
            continue;
        }
        let calls = text.match_indices("tr!(").chain(text.match_indices("msg!("));
        for (at, call) in calls {
            // `tr!(`, not the end of another macro's name
            if text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let line = text[..at].lines().count();
            let place = format!("{}:{line}", file.display());
            let message = literal(&text[at + call.len()..])
                .unwrap_or_else(|| panic!("{place}: {call} without a literal message"));
            used.entry(message).or_default().push(place);
        }
    }
    used
}

#[test]
fn every_message_has_both_languages() {
    let used = used_messages();
    assert!(
        used.len() > 10,
        "found only {} messages: is the scan broken?",
        used.len()
    );
    let catalog: BTreeMap<&str, &str> = zh_cn_messages().iter().copied().collect();
    assert_eq!(
        catalog.len(),
        zh_cn_messages().len(),
        "the catalog names a message twice"
    );

    let missing: Vec<String> = used
        .iter()
        .filter(|(m, _)| !catalog.contains_key(m.as_str()))
        .map(|(m, places)| format!("{m:?} (used at {})", places.join(", ")))
        .collect();
    assert!(
        missing.is_empty(),
        "messages without a zh-CN text:\n{}",
        missing.join("\n")
    );

    let used_keys: BTreeSet<&str> = used.keys().map(String::as_str).collect();
    let unused: Vec<&&str> = catalog.keys().filter(|k| !used_keys.contains(**k)).collect();
    assert!(unused.is_empty(), "zh-CN texts no code uses: {unused:?}");

    for (en, zh) in &catalog {
        let (mut a, mut b) = (placeholders(en), placeholders(zh));
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "placeholders differ between {en:?} and {zh:?}");
        assert!(!zh.trim().is_empty(), "empty translation of {en:?}");
        assert_eq!(text_in(Lang::ZhCn, en), *zh);
    }
}

#[test]
fn the_scanner_reads_rust_literals_as_rust_does() {
    assert_eq!(literal(r#""a \"b\" {n}\n", x"#).unwrap(), "a \"b\" {n}\n");
    assert_eq!(literal("\"one \\\n        two\")").unwrap(), "one two");
    assert_eq!(literal(r##"r#"raw "q""#"##).unwrap(), "raw \"q\"");
    assert_eq!(literal("\"\\u{3a3}\"").unwrap(), "Σ");
    assert!(literal("format!(\"x\")").is_none());
}
