//! The words a learner reads, in English or Simplified Chinese (简体中文).
//!
//! Every message is written once, in English, where it is used: `tr!("softmax over each score
//! row")`, or with named values `tr!("{n} of {m} events", n = done, m = total)`. The English text
//! is the key of the zh-CN catalog (`zh_cn.rs`), which holds the same message with the same
//! `{name}` placeholders, in the terms the zh-CN docs use. Numbers, offsets, formulas, buffer
//! names and code are never translated: they are filled in after the lookup, identical in both
//! languages.
//!
//! The language is chosen once, at start-up: `--lang zh-CN`, else the locale environment
//! (`LC_ALL`, then `LC_MESSAGES`, then `LANG`, as POSIX orders them), else English. The test
//! `tests/it/i18n.rs` reads every `tr!` in the sources and fails when the catalog lacks one,
//! holds one nobody uses, or disagrees with it about the placeholders.

mod zh_cn;

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::Display;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

/// A language of the interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lang {
    #[default]
    En,
    /// Simplified Chinese.
    ZhCn,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::ZhCn];

    /// The tag `--lang` takes and prints.
    pub const fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::ZhCn => "zh-CN",
        }
    }

    /// A language tag or locale name: `en`, `en_US.UTF-8`, `zh-CN`, `zh_CN.UTF-8`, `zh`,
    /// `zh-Hans`. `C` and `POSIX` are English. Traditional Chinese (`zh_TW`, `zh-Hant`) and
    /// anything else is `None`: there is no catalog for it.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        // the language and region, without the encoding (`.UTF-8`) or modifier (`@euro`)
        let base = tag
            .split(['.', '@'])
            .next()
            .unwrap_or("")
            .replace('_', "-")
            .to_ascii_lowercase();
        match base.as_str() {
            "c" | "posix" => Some(Lang::En),
            b if b == "en" || b.starts_with("en-") => Some(Lang::En),
            "zh" | "zh-cn" | "zh-sg" | "zh-hans" | "zh-hans-cn" => Some(Lang::ZhCn),
            _ => None,
        }
    }

    /// The language the locale environment asks for: the first of `LC_ALL`, `LC_MESSAGES` and
    /// `LANG` that is set and not empty decides; English when it names a language without a
    /// catalog, or when none is set.
    pub fn from_env() -> Lang {
        ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .filter_map(|k| std::env::var(k).ok())
            .find(|v| !v.is_empty())
            .and_then(|v| Lang::from_tag(&v))
            .unwrap_or_default()
    }
}

static LANG: AtomicU8 = AtomicU8::new(0);

thread_local! {
    /// A language for this thread alone (see [`with_lang`]).
    static THREAD_LANG: Cell<Option<Lang>> = const { Cell::new(None) };
}

/// Sets the language of everything drawn or printed from now on.
pub fn set(lang: Lang) {
    LANG.store(lang as u8, Ordering::Relaxed);
}

/// The language in use: this thread's, when [`with_lang`] set one, else the program's.
pub fn lang() -> Lang {
    if let Some(lang) = THREAD_LANG.with(Cell::get) {
        return lang;
    }
    match LANG.load(Ordering::Relaxed) {
        1 => Lang::ZhCn,
        _ => Lang::En,
    }
}

/// Runs `f` with `lang` as this thread's language, whatever the program's is: tests draw the
/// same screen in both languages side by side without racing each other.
pub fn with_lang<R>(lang: Lang, f: impl FnOnce() -> R) -> R {
    let before = THREAD_LANG.with(|l| l.replace(Some(lang)));
    let result = f();
    THREAD_LANG.with(|l| l.set(before));
    result
}

fn catalog() -> &'static HashMap<&'static str, &'static str> {
    static CATALOG: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    CATALOG.get_or_init(|| zh_cn::MESSAGES.iter().copied().collect())
}

/// The zh-CN catalog's messages, English key first (for the tests).
pub fn zh_cn_messages() -> &'static [(&'static str, &'static str)] {
    zh_cn::MESSAGES
}

/// The message `en` in `lang`: itself in English, the catalog's text in Chinese (or the English
/// text when the catalog lacks it, which the tests do not let happen for a `tr!` message).
pub fn text_in(lang: Lang, en: &'static str) -> &'static str {
    match lang {
        Lang::En => en,
        Lang::ZhCn => catalog().get(en).copied().unwrap_or(en),
    }
}

/// [`text`] for a text that is not `'static` (a formula line handed down by a caller): the
/// catalog's text when it holds `en`, else `en` itself.
pub fn text_of(en: &str) -> &str {
    match lang() {
        Lang::En => en,
        Lang::ZhCn => catalog().get(en).copied().unwrap_or(en),
    }
}

/// The message `en` in the language in use; what `tr!("…")` calls.
pub fn text(en: &'static str) -> &'static str {
    text_in(lang(), en)
}

/// `template` with every `{name}` replaced by the value given for `name`; a `{` that starts no
/// known placeholder is kept as it is.
pub fn fill(template: &str, args: &[(&str, &dyn Display)]) -> String {
    let mut out = String::with_capacity(template.len() + 16);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let arg = after
            .find('}')
            .and_then(|close| args.iter().find(|(k, _)| *k == &after[..close]).map(|a| (close, a.1)));
        match arg {
            Some((close, value)) => {
                out.push_str(&value.to_string());
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The placeholders of a message, `{name}`, in order.
pub fn placeholders(message: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = message;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_name(&after[..close]) => {
                names.push(&after[..close]);
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    names
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A learner-facing message in the language in use. `tr!("text")` is a `&'static str`;
/// `tr!("text {a} and {b}", a = x, b)` fills the named placeholders (`b` alone means `b = b`)
/// and is a `String`.
#[macro_export]
macro_rules! tr {
    ($en:literal) => {
        $crate::text($en)
    };
    ($en:literal, $($name:ident $(= $value:expr)?),+ $(,)?) => {
        $crate::fill(
            $crate::text($en),
            &[$((stringify!($name), &$crate::tr!(@value $name $(= $value)?) as &dyn ::std::fmt::Display)),+],
        )
    };
    (@value $name:ident = $value:expr) => {
        $value
    };
    (@value $name:ident) => {
        $name
    };
}

/// A message chosen here and translated where it is shown (with [`text`]), such as the kinds of
/// file `input::kind_of` names: `msg!("is a socket")` is the literal itself. The i18n test reads
/// it like a `tr!`, so the catalog must hold it.
#[macro_export]
macro_rules! msg {
    ($en:literal) => {
        $en
    };
}
