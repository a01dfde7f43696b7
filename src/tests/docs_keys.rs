//! docs/keys.md (and its 简体中文 twin) cannot go stale: every key the `?` overlay lists, and every
//! key and mouse action a screen's code handles, must be on the page, in the section that names
//! the file handling it.

use crate::tests::support::root;
use crate::tui::screens::help::{KEYS, OVERLAY_KEYS};
use std::fs;
use std::path::{Path, PathBuf};

const PAGES: [&str; 2] = ["docs/keys.md", "docs/keys.zh-CN.md"];

/// The single keys of an overlay entry: `"n →  /  p ←"` gives n, →, p, ←.
fn overlay_keys(keys: &str) -> Vec<String> {
    keys.split([' ', '/', ','])
        .filter(|k| !k.is_empty())
        .map(String::from)
        .collect()
}

/// How the page writes a named `KeyCode`.
fn spelled(name: &str) -> Option<&'static str> {
    Some(match name {
        "Left" => "←",
        "Right" => "→",
        "Up" => "↑",
        "Down" => "↓",
        "Enter" => "Enter",
        "Esc" => "Esc",
        "Tab" => "Tab",
        "BackTab" => "Shift+Tab",
        "Backspace" => "Backspace",
        "Home" => "Home",
        "End" => "End",
        "PageDown" => "PgDn",
        "PageUp" => "PgUp",
        "Delete" => "Delete",
        "Insert" => "Insert",
        _ => return None,
    })
}

/// The keys a source file matches on, as the page writes them: `KeyCode::Char('x')` gives x,
/// `Char('?' | 'q')` both, `Char(c @ '1'..='7')` 1-7, `Char(' ')` Space, a `Char('c')` on a line
/// testing CONTROL gives Ctrl+C; `Char(c)` (free text) gives nothing. Mouse: wheel and click.
fn handled_keys(src: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for line in src.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(at) = rest.find("KeyCode::") {
            rest = &rest[at + "KeyCode::".len()..];
            let name: String = rest.chars().take_while(char::is_ascii_alphanumeric).collect();
            if name != "Char" {
                if let Some(k) = spelled(&name) {
                    keys.push(k.to_string());
                }
                continue;
            }
            let inside = rest[4..]
                .strip_prefix('(')
                .and_then(|r| r.split_once(')'))
                .map(|(i, _)| i);
            let lits: Vec<char> = inside
                .unwrap_or("")
                .split('\'')
                .skip(1)
                .step_by(2)
                .filter_map(|l| l.chars().next())
                .collect();
            match lits.as_slice() {
                [a, b] if inside.is_some_and(|i| i.contains("..=")) => keys.push(format!("{a}-{b}")),
                _ => {
                    for c in lits {
                        keys.push(match c {
                            ' ' => "Space".to_string(),
                            c if line.contains("CONTROL") => format!("Ctrl+{}", c.to_ascii_uppercase()),
                            c => c.to_string(),
                        });
                    }
                }
            }
        }
        if line.contains("MouseEventKind::Scroll") {
            keys.push("wheel".into());
        }
        if line.contains("MouseEventKind::Down") {
            keys.push("click".into());
        }
    }
    keys.sort();
    keys.dedup();
    keys
}

/// The part of `page` under the `## ` heading that names `file`, up to the next `## ` heading.
fn section<'a>(page: &'a str, file: &str) -> Option<&'a str> {
    let tag = format!("`{file}`");
    let start = page
        .match_indices("\n## ")
        .map(|(i, _)| i + 1)
        .find(|&i| page[i..].lines().next().is_some_and(|h| h.contains(&tag)))?;
    let end = page[start + 3..].find("\n## ").map_or(page.len(), |e| start + 3 + e);
    Some(&page[start..end])
}

/// Is `key` on the page as `` `key` `` (a named key such as `Space` in any case), or, for the
/// mouse, at the start of a table row?
fn ticked(text: &str, key: &str) -> bool {
    let named = key.chars().count() > 1;
    let found = if named {
        text.to_lowercase().contains(&format!("`{}`", key.to_lowercase()))
    } else {
        text.contains(&format!("`{key}`"))
    };
    found || (key == "wheel" || key == "click") && text.contains(&format!("| {key}"))
}

/// The key column of a screen's own key list (`pub(crate) const KEYS: &[(&str, &str)] = &[…];`), which
/// it shows in a popup on `?`.
fn screen_key_list(src: &str) -> Vec<String> {
    let Some(start) = src.find("const KEYS: &[(&str, &str)] = &[") else {
        return Vec::new();
    };
    let body = &src[start..];
    let body = &body[..body.find("\n];").unwrap_or(body.len())];
    let mut keys = Vec::new();
    let mut rest = body;
    // each entry opens with `(` and the key string, on one line or the next; its description is
    // a `msg!("…")`, not a key
    while let Some(at) = rest.find('(') {
        let description = rest[..at].ends_with("msg!");
        rest = &rest[at + 1..];
        if description {
            continue;
        }
        let trimmed = rest.trim_start();
        if let Some(inner) = trimmed.strip_prefix('"')
            && let Some((k, _)) = inner.split_once('"')
        {
            keys.extend(overlay_keys(k));
        }
    }
    keys
}

/// Modules of `src/tui/screens/` that are parts of screens, not screens: `picker.rs` handles the
/// keys of both "Open" screens, so its keys belong in the section of each screen that uses it.
const SHARED: [&str; 1] = ["picker"];

/// The screens whose keys the page documents, each as `(name its section names, its sources)`:
/// the app, then every module `src/tui/screens/mod.rs` declares but the overlay itself and the
/// shared parts, as a file (`NAME.rs`, with each shared part it uses) or a folder (`NAME/`, all
/// its files).
fn screens() -> Vec<(String, Vec<PathBuf>)> {
    let mut out = vec![("src/tui/app.rs".to_string(), vec![root().join("src/tui/app.rs")])];
    let dir = root().join("src/tui/screens");
    let decl = fs::read_to_string(dir.join("mod.rs")).expect("src/tui/screens/mod.rs");
    let modules = decl
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("pub(crate) mod ")
                .or_else(|| l.strip_prefix("pub mod "))?
                .strip_suffix(';')
        })
        .filter(|&m| m != "help" && !SHARED.contains(&m));
    for module in modules {
        let file = dir.join(format!("{module}.rs"));
        if file.exists() {
            let src = fs::read_to_string(&file).expect("readable source");
            let mut files = vec![file];
            for part in SHARED.iter().filter(|p| src.contains(&format!("super::{p}::"))) {
                files.push(dir.join(format!("{part}.rs")));
            }
            // a screen split into parts (`tracer.rs` and `tracer/`): its keys live in the parts too
            if let Ok(parts) = fs::read_dir(dir.join(module)) {
                let mut parts: Vec<PathBuf> = parts
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "rs"))
                    .collect();
                parts.sort();
                files.extend(parts);
            }
            out.push((format!("src/tui/screens/{module}.rs"), files));
            continue;
        }
        let folder = dir.join(module);
        let mut files: Vec<PathBuf> = fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .collect();
        files.sort();
        out.push((format!("src/tui/screens/{module}/"), files));
    }
    out
}

fn read(page: &str) -> String {
    fs::read_to_string(root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"))
}

#[test]
fn every_key_of_the_help_overlay_is_documented() {
    for page in PAGES {
        let text = read(page);
        for (keys, what) in KEYS.iter().chain(OVERLAY_KEYS) {
            for key in overlay_keys(keys) {
                assert!(
                    ticked(&text, &key),
                    "{page}: the ? overlay has `{key}` ({what}) but the page does not"
                );
            }
        }
    }
}

#[test]
fn every_key_a_screen_handles_is_in_its_section() {
    for page in PAGES {
        let text = read(page);
        let screens = screens();
        let names: Vec<&str> = screens.iter().map(|(n, _)| n.as_str()).collect();
        for must in ["menu.rs", "tracer.rs", "compare.rs", "open.rs"] {
            assert!(
                names.iter().any(|n| n.ends_with(must)),
                "the screen list {names:?} lacks {must}"
            );
        }
        for (screen, files) in screens {
            let src: String = files
                .iter()
                .map(|f| fs::read_to_string(f).expect("readable source"))
                .collect();
            let body = section(&text, &screen)
                .unwrap_or_else(|| panic!("{page} has no `## …` heading naming `{screen}`: a section for its keys"));
            for key in handled_keys(&src) {
                assert!(
                    ticked(body, &key),
                    "{page}: {screen} handles `{key}`, its section does not say what it does"
                );
            }
        }
    }
}

#[test]
fn every_key_a_screens_overlay_lists_is_in_its_section() {
    // `?` on a screen lists that screen's `KEYS`: each of them is in the screen's section
    for page in PAGES {
        let text = read(page);
        let mut lists = 0;
        for (screen, files) in screens() {
            let body = section(&text, &screen).unwrap_or_else(|| panic!("{page}: no section for {screen}"));
            for file in files {
                let src = fs::read_to_string(&file).expect("readable source");
                // `any character` (typing) is a description, not a key to tick
                for key in screen_key_list(&src)
                    .into_iter()
                    .filter(|k| k != "any" && k != "character")
                {
                    lists += 1;
                    assert!(
                        ticked(body, &key) || key == "click" && body.contains("| click"),
                        "{page}: {} lists `{key}` in its ? overlay, the section of {screen} does not",
                        file.display()
                    );
                }
            }
        }
        assert!(lists > 40, "the screens' key lists were found ({lists} keys)");
    }
}

#[test]
fn the_key_scanner_reads_the_patterns_the_screens_use() {
    let src = "KeyCode::Up | KeyCode::Char('k') => {}\n\
               KeyCode::Char(c @ '1'..='7') => {}\n\
               KeyCode::Char('?' | 'q') | KeyCode::BackTab => {}\n\
               if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {}\n\
               KeyCode::Char(c) if text.len() < 64 => text.push(c),\n\
               KeyCode::Enter | KeyCode::Char(' ') => {}\n\
               MouseEventKind::ScrollDown => {}\n\
               // KeyCode::Char('z') in a comment\n";
    let keys = handled_keys(src);
    let want = [
        "1-7",
        "?",
        "Ctrl+C",
        "Enter",
        "Shift+Tab",
        "Space",
        "k",
        "q",
        "wheel",
        "↑",
    ];
    assert_eq!(keys, want.iter().map(ToString::to_string).collect::<Vec<_>>());
    assert_eq!(overlay_keys("n →  /  p ←"), ["n", "→", "p", "←"]);
    let list = "pub const KEYS: &[(&str, &str)] = &[\n    (\"space\", \"pause (or not)\"),\n    (\n        \"t\",\n        \"trace\",\n    ),\n    (\"Enter, click\", \"open\"),\n];\nfn after() { (\"z\", 1); }";
    assert_eq!(screen_key_list(list), ["space", "t", "Enter", "click"]);
    assert!(ticked("| `Space` | pause |", "space") && !ticked("| `T` |", "t"));
    let page = "# t\n\n## A (`a.rs`)\n| `x` | y |\n\n## B (`b.rs`)\n| click | z |\n";
    assert!(section(page, "a.rs").is_some_and(|s| ticked(s, "x") && !ticked(s, "click")));
    assert!(section(page, "b.rs").is_some_and(|s| ticked(s, "click") && !ticked(s, "x")));
    assert!(section(page, "c.rs").is_none());
    assert!(Path::new(&root().join(PAGES[0])).exists());
}
