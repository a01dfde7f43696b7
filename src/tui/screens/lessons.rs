//! "Lessons…": the lesson files of `lessons/` in the interface's language (`NAME.zh-CN.toml` in
//! 简体中文, the others in English), each with its title and what it follows.

use super::open::{Open, Summary};
use super::picker::{Builtin, FilePicker};
use attn_trace_core::scenario::lesson::{self, Lesson};
use attn_trace_i18n::{self as i18n, Lang};
use std::path::{Path, PathBuf};

/// Where the picker opens: `./lessons` where there is one (in the repository), else the folder
/// the program runs in. The shipped lessons are built in, so they are offered wherever it runs.
pub(crate) fn default_dir() -> PathBuf {
    let here = PathBuf::from("lessons");
    if here.is_dir() { here } else { PathBuf::from(".") }
}

/// Is `path` a lesson in `lang`? `NAME.zh-CN.toml` is 简体中文; any other name is English.
pub(crate) fn in_language(path: &Path, lang: Lang) -> bool {
    let zh = path
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s.ends_with(".zh-CN"));
    zh == (lang == Lang::ZhCn)
}

/// Lists `dir`'s lessons in the interface's language, the shipped ones in the docs' order.
pub(crate) fn list(dir: PathBuf) -> Open {
    let mut st = FilePicker::new(dir, "toml", summary).with_builtin(Builtin {
        files: lesson::SHIPPED,
        describe: builtin_summary,
    });
    let lang = i18n::lang();
    st.entries.retain(|e| in_language(&e.path, lang));
    let order = ["mha_walkthrough", "backward", "gqa", "flash"];
    let zh: Vec<String> = order.iter().map(|n| format!("{n}.zh-CN")).collect();
    let names: Vec<&str> = if lang == Lang::ZhCn {
        zh.iter().map(String::as_str).collect()
    } else {
        order.to_vec()
    };
    super::open::put_first(&mut st, &names);
    st
}

/// A lesson file's title and about, or why it cannot be used.
fn summary(path: &Path) -> Summary {
    let l = Lesson::load(path).map_err(|e| e.to_string())?;
    Ok((l.title, l.about))
}

/// A built-in lesson's title and about, from its text.
fn builtin_summary(text: &str, stem: &str) -> Summary {
    let l = Lesson::parse(text, &format!("<built-in lessons/{stem}.toml>")).map_err(|e| e.to_string())?;
    Ok((l.title, l.about))
}
