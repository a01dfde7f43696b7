//! The TUI drawn headlessly (TestBackend) at 80×24 and 120×40: menu, tracer, compare, help.

use crate::tests::support::tui::{draw, key};
use crate::tui::app::{App, Screen};
use crate::tui::{Theme, TracedScenario};
use crossterm::event::KeyCode;

fn tracer_at_focus(w: u16, h: u16) -> App {
    App::new(TracedScenario::builtin(), Theme::MONO, w, h)
}

#[test]
fn tracer_at_the_walkthrough_element_shows_the_docs_offsets() {
    for (w, h) in [(80, 24), (120, 40)] {
        let app = tracer_at_focus(w, h);
        let t = app.tracer().unwrap();
        let e = t.traced.trace(t.variant).unwrap().events[t.cursor];
        assert_eq!((e.buf.name(), e.offset), ("scores", 16));
        let screen = draw(&app, w, h);
        assert!(
            screen.contains("q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*2 + 1)*2 = 10"),
            "{screen}"
        );
        assert!(
            screen.contains("k_base = ((bb*T + j)*H + hh)*D = ((0*3 + 1)*2 + 1)*2 = 6"),
            "{screen}"
        );
        assert!(
            screen.contains("off = ((bb*H + hh)*S + i)*T + j = ((0*2 + 1)*3 + 2)*3 + 1 = 16"),
            "{screen}"
        );
        insta::assert_snapshot!(format!("tracer_{w}x{h}"), screen);
    }
}

#[test]
fn menu_snapshots() {
    for (w, h) in [(80, 24), (120, 40)] {
        let app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
        insta::assert_snapshot!(format!("menu_{w}x{h}"), draw(&app, w, h));
    }
}

#[test]
fn compare_snapshots() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
        key(&mut app, KeyCode::Char('3'));
        assert!(matches!(app.screen, Screen::Compare(_)));
        let screen = draw(&app, w, h);
        assert!(screen.contains("at data[7]"), "{screen}");
        assert!(screen.contains("at data[16]"), "{screen}");
        insta::assert_snapshot!(format!("compare_{w}x{h}"), screen);
    }
}

#[test]
fn help_snapshots() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = tracer_at_focus(w, h);
        key(&mut app, KeyCode::Char('?'));
        insta::assert_snapshot!(format!("help_{w}x{h}"), draw(&app, w, h));
    }
}

/// Every line of a drawn screen is exactly `w` columns: a CJK character (two columns) that did
/// not fit would push the line past the edge or leave it short.
fn assert_lines_fill(screen: &str, w: u16) {
    for line in screen.lines() {
        // the test backend notes the second columns of wide characters after the line
        let line = line.split("\" Hidden by multi-width symbols").next().unwrap_or(line);
        let inner = line.trim_start_matches('"').trim_end_matches('"');
        assert_eq!(
            attn_trace_analysis::format::cols(inner),
            w as usize,
            "a line of {w} columns is not:\n{line}\n{screen}"
        );
    }
}

/// The tracer in 简体中文 (`--lang zh-CN`): the panels' titles, the narration and the status in
/// Chinese, every offset and formula as in English, nothing cut mid-character.
#[test]
fn tracer_in_chinese_snapshots() {
    use attn_trace_i18n::{Lang, with_lang};
    with_lang(Lang::ZhCn, || {
        for (w, h) in [(80, 24), (120, 40)] {
            let app = tracer_at_focus(w, h);
            let screen = draw(&app, w, h);
            for same in [
                "q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*2 + 1)*2 = 10",
                "k_base = ((bb*T + j)*H + hh)*D = ((0*3 + 1)*2 + 1)*2 = 6",
                "off = ((bb*H + hh)*S + i)*T + j = ((0*2 + 1)*3 + 2)*3 + 1 = 16",
                "scores[16]",
            ] {
                assert!(screen.contains(same), "{same}\n{screen}");
            }
            for zh in ["内存", "写", "因果掩码", "按键"] {
                assert!(screen.contains(zh), "{zh}\n{screen}");
            }
            assert_lines_fill(&screen, w);
            insta::assert_snapshot!(format!("tracer_zh_CN_{w}x{h}"), screen);

            let mut app = tracer_at_focus(w, h);
            key(&mut app, KeyCode::Char('?'));
            let screen = draw(&app, w, h);
            assert!(screen.contains("按键 · 追踪器"), "{screen}");
            assert_lines_fill(&screen, w);
            insta::assert_snapshot!(format!("help_zh_CN_{w}x{h}"), screen);

            let app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
            let screen = draw(&app, w, h);
            assert!(screen.contains("单步执行多头注意力"), "{screen}");
            assert_lines_fill(&screen, w);
            insta::assert_snapshot!(format!("menu_zh_CN_{w}x{h}"), screen);

            let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
            key(&mut app, KeyCode::Char('3'));
            let screen = draw(&app, w, h);
            assert!(screen.contains("data[16]"), "{screen}");
            assert_lines_fill(&screen, w);
            insta::assert_snapshot!(format!("compare_zh_CN_{w}x{h}"), screen);
        }
    });
}
