//! Every message has both languages: each `tr!("…")` in the sources is in the zh-CN catalog, the
//! catalog holds nothing that no code uses, and each translation has exactly the placeholders of
//! its English text, so the numbers filled in are the same in both languages.

use attn_trace_i18n::{Lang, placeholders, text_in, zh_cn_messages};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        // the app's own tests (src/tests/) say no message to a user
        if path.is_dir() && !path.ends_with("src/tests") {
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

/// Every message passed to `tr!` in the app (`src/`) and the crates below it, with the places
/// it is used.
fn used_messages() -> BTreeMap<String, Vec<String>> {
    let mut files = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    let mut used: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        // the macro's own definition and docs are not messages
        if file.ends_with("i18n/src/lib.rs") {
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
    // what each phase computes is looked up by its title (format::phase_text), and each
    // mistake's symptom by its text (i18n::text(m.symptom())), not by a literal
    for phase in attn_trace_core::trace::Phase::ALL {
        used.entry(phase.title().to_string())
            .or_default()
            .push(format!("Phase::{phase:?}.title()"));
    }
    // and each built-in dataset's line on the train form (i18n::text(about))
    for (name, about) in attn_trace_model::data::BUILTIN {
        used.entry(about.to_string())
            .or_default()
            .push(format!("BUILTIN {name}"));
    }
    for m in attn_trace_core::kernels::attention_mistakes::Mistake::ALL {
        used.entry(m.symptom().to_string())
            .or_default()
            .push(format!("Mistake::{m:?}.symptom()"));
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

/// Every number of `text`, in order: runs of digits with their decimal point, exponent and sign
/// (`-0.3139`, `1.0e8`, `2.5e-7`, the `32` of `f32`), whatever words surround them.
fn numbers(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        if !chars[k].is_ascii_digit() {
            k += 1;
            continue;
        }
        let start = if k > 0 && chars[k - 1] == '-' { k - 1 } else { k };
        let mut end = k;
        while end < chars.len() {
            let c = chars[end];
            let exponent = (c == 'e' || c == 'E')
                && chars.get(end + 1).is_some_and(|n| n.is_ascii_digit() || *n == '-')
                && chars[end - 1].is_ascii_digit();
            let point = c == '.' && chars.get(end + 1).is_some_and(char::is_ascii_digit);
            let sign = c == '-' && end > 0 && (chars[end - 1] == 'e' || chars[end - 1] == 'E');
            if c.is_ascii_digit() || exponent || point || sign {
                end += 1;
            } else {
                break;
            }
        }
        out.push(chars[start..end].iter().collect());
        k = end;
    }
    out
}

fn explain_in(lang: &str, args: &[&str]) -> String {
    let out = assert_cmd::Command::cargo_bin("attn-trace")
        .unwrap()
        .args(["--lang", lang, "explain"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{lang} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_number_scanner_keeps_signs_points_and_exponents() {
    assert_eq!(
        numbers("q·k = -0.444 × 1/√2, ±1.0e8 and 2.5e-7 (f32), d=0: scores.data[16]"),
        ["-0.444", "1", "2", "1.0e8", "2.5e-7", "32", "0", "16"]
    );
    assert_eq!(numbers("第 1 步，共 12 项。"), ["1", "12"]);
}

/// `explain` in 简体中文 says the same numbers as in English, in the same order: every offset,
/// value, index and formula of the walkthrough, forward and backward, in every variant.
#[test]
fn explain_says_the_same_numbers_in_both_languages() {
    let cases: &[&[&str]] = &[
        &[
            "scenarios/mha_walkthrough.toml",
            "--variant",
            "mha",
            "--at",
            "b=0,h=1,i=2,j=1",
        ],
        &[
            "scenarios/mha_walkthrough.toml",
            "--variant",
            "baseline",
            "--at",
            "b=0,i=2,j=1",
        ],
        &[
            "scenarios/mha_walkthrough.toml",
            "--variant",
            "mha",
            "--at",
            "b=0,h=0,i=1,j=1",
            "--pass",
            "backward",
        ],
        &[
            "scenarios/masked_element.toml",
            "--variant",
            "baseline",
            "--at",
            "b=0,i=1,j=3",
        ],
        &[
            "scenarios/masked_element.toml",
            "--variant",
            "baseline",
            "--at",
            "b=0,i=1,j=3",
            "--pass",
            "backward",
        ],
        &[
            "scenarios/backward_simple.toml",
            "--at",
            "i=2,j=0",
            "--pass",
            "backward",
        ],
        &["scenarios/gqa.toml", "--variant", "gqa", "--at", "b=0,h=3,i=2,j=1"],
        &[
            "scenarios/gqa.toml",
            "--variant",
            "gqa",
            "--at",
            "b=0,h=3,i=2,j=1",
            "--pass",
            "backward",
        ],
        &["scenarios/rope.toml", "--at", "i=2,j=1"],
        &["scenarios/rope.toml", "--at", "i=2,j=1", "--pass", "backward"],
        &["scenarios/kv_cache_decode.toml", "--at", "i=3,j=1"],
        &["scenarios/cross_attention.toml", "--at", "i=1,j=2"],
        &["scenarios/flash.toml", "--variant", "flash", "--at", "b=0,h=1,i=3,j=1"],
        &[
            "scenarios/flash.toml",
            "--variant",
            "flash",
            "--at",
            "b=0,h=1,i=3,j=1",
            "--pass",
            "backward",
        ],
        &["scenarios/flash.toml", "--variant", "flash", "--at", "b=0,h=0,i=0,j=4"],
        // latent attention's absorbed decode, from its latent cache
        &["scenarios/mla_decode.toml", "--at", "h=1,i=3,j=1"],
    ];
    for args in cases {
        let en = explain_in("en", args);
        let zh = explain_in("zh-CN", args);
        assert!(
            en.is_ascii() || !en.contains("查询"),
            "{args:?}: English output in Chinese"
        );
        assert!(zh.contains("传播（"), "{args:?}: not in Chinese:\n{zh}");
        let (a, b) = (numbers(&en), numbers(&zh));
        assert!(a.len() > 20, "{args:?}: only {} numbers", a.len());
        assert_eq!(a, b, "{args:?}: the numbers differ\n--- en\n{en}\n--- zh-CN\n{zh}");
    }
}

fn stdout_in(lang: &str, args: &[&str]) -> Vec<u8> {
    let out = assert_cmd::Command::cargo_bin("attn-trace")
        .unwrap()
        .args(["--lang", lang])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{lang} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Machine-readable output does not change with the language: `run --json` (the mistakes'
/// symptoms and divergence included) and `trace`'s JSONL are the same bytes in 简体中文.
#[test]
fn json_output_is_english_in_every_language() {
    for file in [
        "scenarios/mistakes/scale_by_seq_len.toml",
        "scenarios/mistakes/mask_by_multiply.toml",
        "scenarios/mistakes/no_output_projection.toml",
        "scenarios/mha_walkthrough.toml",
    ] {
        let en = stdout_in("en", &["run", file, "--json"]);
        let zh = stdout_in("zh-CN", &["run", file, "--json"]);
        assert!(
            !String::from_utf8_lossy(&en)
                .chars()
                .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "{file}: the English JSON holds Chinese text"
        );
        assert_eq!(
            String::from_utf8_lossy(&en),
            String::from_utf8_lossy(&zh),
            "{file}: run --json depends on the language"
        );
    }
    let en = stdout_in(
        "en",
        &["trace", "scenarios/mistakes/scale_by_seq_len.toml", "--mistaken"],
    );
    let zh = stdout_in(
        "zh-CN",
        &["trace", "scenarios/mistakes/scale_by_seq_len.toml", "--mistaken"],
    );
    assert_eq!(en, zh, "trace's JSONL depends on the language");
}

/// A checkpoint that cannot be read is refused in 简体中文 too, with the same exit code and the
/// same numbers.
#[test]
fn checkpoint_errors_in_both_languages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.safetensors");
    std::fs::write(&path, b"abcd").unwrap();
    let p = path.to_str().unwrap();
    let stderr_of = |lang: &str| {
        let out = assert_cmd::Command::cargo_bin("attn-trace")
            .unwrap()
            .args(["--lang", lang, "eval", "--checkpoint", p, "--dataset", "copy"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{lang}");
        String::from_utf8(out.stderr).unwrap()
    };
    let en = stderr_of("en");
    assert!(
        en.contains("not a safetensors checkpoint: 4 bytes is shorter than the 8-byte header length"),
        "{en}"
    );
    let zh = stderr_of("zh-CN");
    assert!(
        zh.contains("不是 safetensors 检查点：4 字节比 8 字节的头部长度还短"),
        "{zh}"
    );
}

/// `explain` names the pass in the language in use: "前向传播", not "forward 这一遍".
#[test]
fn explain_names_the_pass_in_chinese() {
    for args in [
        &["scenarios/mha_walkthrough.toml"][..],
        &["scenarios/flash.toml", "--variant", "flash", "--at", "b=0,h=1,i=3,j=1"][..],
    ] {
        let text = explain_in("zh-CN", args);
        let head: String = text.lines().take(3).collect::<Vec<_>>().join("\n");
        assert!(head.contains("前向传播"), "{head}");
        assert!(!head.contains("forward"), "{head}");
    }
}

#[test]
fn chinese_explain_separates_its_clauses_with_chinese_semicolons() {
    // a Chinese sentence separates its clauses, formulas included, with `；`, never the
    // English `; ` (the paged cache's block lookup once read `…）；blk = …; phys = …; ci = …`)
    let cjk = |l: &str| l.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    let mut checked = 0;
    let mut dir: Vec<PathBuf> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    dir.sort();
    for path in dir {
        let file = path.display().to_string();
        for pass in ["forward", "backward"] {
            let out = assert_cmd::Command::cargo_bin("attn-trace")
                .unwrap()
                .args(["--lang", "zh-CN", "explain", &file, "--pass", pass])
                .output()
                .unwrap();
            if !out.status.success() {
                // a forward-only scenario has no backward to explain
                continue;
            }
            let text = String::from_utf8(out.stdout).unwrap();
            for line in text.lines().filter(|l| cjk(l)) {
                assert!(!line.contains("; "), "{file} {pass}: {line}");
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} explanations");
}

#[test]
fn a_list_in_a_chinese_sentence_takes_chinese_commas() {
    // the keys a section allows, a built-in dataset's names, the floats a KV cache keeps: a list
    // in a Chinese sentence is separated with `，`, as its clauses are with `；` (the learner's
    // wrong cells once read `scores 6/12, att 8/12`)
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "title = \"x\"\n[shape]\nB = 1\nT = 3\nC = 4\nH = 2\nZ = 3\n").unwrap();
    let zh = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("attn-trace")
            .unwrap()
            .args(["--lang", "zh-CN"])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap() + &String::from_utf8(out.stderr).unwrap()
    };
    let key = zh(&["check", bad.to_str().unwrap()]);
    assert!(key.contains("应为以下之一：B，S，T，C，H，"), "{key}");
    let dataset = zh(&["train", "--dataset", "nosuch"]);
    assert!(dataset.contains("kernels，copy，reverse，sort"), "{dataset}");
    let io = zh(&["io", "scenarios/mha_walkthrough.toml"]);
    let cjk = |l: &str| l.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    let lists: Vec<&str> = io.lines().filter(|l| cjk(l) && l.contains('×')).collect();
    assert!(!lists.is_empty(), "{io}");
    for line in lists {
        assert!(!line.contains(", "), "{line}");
    }
}
