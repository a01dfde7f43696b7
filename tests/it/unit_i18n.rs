//! Tests of the translations' machinery (`crates/i18n/src/lib.rs`): choosing the language, filling
//! placeholders, `tr!`. What were its `#[cfg(test)]` unit tests. (i18n.rs checks the catalog.)

use attn_trace_i18n::tr;
use attn_trace_i18n::*;

#[test]
fn tags_and_locales_choose_the_language() {
    for (tag, lang) in [
        ("zh-CN", Some(Lang::ZhCn)),
        ("zh_CN.UTF-8", Some(Lang::ZhCn)),
        ("zh", Some(Lang::ZhCn)),
        ("zh-Hans", Some(Lang::ZhCn)),
        ("en", Some(Lang::En)),
        ("en_GB.UTF-8", Some(Lang::En)),
        ("C", Some(Lang::En)),
        ("POSIX", Some(Lang::En)),
        ("zh_TW.UTF-8", None),
        ("fr_FR.UTF-8", None),
        ("", None),
    ] {
        assert_eq!(Lang::from_tag(tag), lang, "{tag:?}");
    }
}

#[test]
fn fill_replaces_named_placeholders_only() {
    let n = 3;
    assert_eq!(fill("{n} of {m} events", &[("n", &n), ("m", &"10")]), "3 of 10 events");
    assert_eq!(fill("Σ_j {x} {unknown} {", &[("x", &1.5)]), "Σ_j 1.5 {unknown} {");
    assert_eq!(placeholders("{n} of {m} {not a name} {}"), ["n", "m"]);
}

#[test]
fn the_macro_fills_in_the_language_in_use() {
    let n = 4;
    assert_eq!(text_in(Lang::En, "no such file"), "no such file");
    assert_eq!(text_in(Lang::ZhCn, "no such file"), "文件不存在");
    assert_eq!(with_lang(Lang::En, || tr!("{n} bytes", n)), "4 bytes");
    assert_eq!(with_lang(Lang::ZhCn, || tr!("{n} bytes", n)), "4 字节");
    // a thread's language does not outlive the call
    assert_eq!(with_lang(Lang::ZhCn, lang), Lang::ZhCn);
    assert_eq!(lang(), Lang::En);
}
