//! The README's screenshots in `assets/` are what the app draws now: a change to a screen that
//! forgets `cargo run --release --example screenshots` fails here.

use attn_trace::tui::pictures;
use std::path::Path;

#[test]
fn committed_screenshots_match_the_app() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let shots = pictures::screenshots().expect("the app renders");
    let names: Vec<&str> = shots.iter().map(|(name, _)| *name).collect();
    for required in [
        "menu.svg",
        "tracer.svg",
        "tracer.zh-CN.svg",
        "quiz.svg",
        "gradcheck.svg",
        "compare.svg",
        "compare_flash.svg",
        "help.svg",
    ] {
        assert!(names.contains(&required), "no {required} among {names:?}");
    }
    for (name, picture) in &shots {
        let committed = std::fs::read_to_string(assets.join(name)).unwrap_or_default();
        assert!(
            committed == *picture,
            "assets/{name} is not what the app draws now: run `cargo run --example screenshots` and commit it"
        );
    }
    // the tracer picture is the walkthrough element, with the offsets the docs quote
    let tracer = &shots.iter().find(|(n, _)| *n == "tracer.svg").expect("tracer shot").1;
    // (runs of one colour are separate <text> elements: the variable, the formula, the value)
    let text_runs: Vec<&str> = tracer
        .lines()
        .filter_map(|l| l.strip_suffix("</text>")?.rsplit_once('>').map(|(_, t)| t))
        .collect();
    let joined = text_runs.concat();
    assert!(
        joined.contains("q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*2 + 1)*2 = 10"),
        "{joined}"
    );
    assert!(joined.contains("k_base = ((bb*T + j)*H + hh)*D = ((0*3 + 1)*2 + 1)*2 = 6"));
    assert!(joined.contains("off = ((bb*H + hh)*S + i)*T + j = ((0*2 + 1)*3 + 2)*3 + 1 = 16"));

    // the README's picture in 简体中文: the same element and formulas, the words in Chinese
    let zh = &shots
        .iter()
        .find(|(n, _)| *n == "tracer.zh-CN.svg")
        .expect("zh-CN tracer shot")
        .1;
    let zh_runs: String = zh
        .lines()
        .filter_map(|l| l.strip_suffix("</text>")?.rsplit_once('>').map(|(_, t)| t))
        .collect();
    assert!(zh_runs.contains("q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*2 + 1)*2 = 10"));
    for words in ["内存", "代码", "事件日志", "分数 S = Q·Kᵀ/√D + 因果掩码", "部分和"] {
        assert!(zh_runs.contains(words), "{words} not in the zh-CN picture: {zh_runs}");
    }
}
