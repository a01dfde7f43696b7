//! Random keys, mouse events and resizes fed to the app on every shipped scenario and the
//! built-in one: it never panics, and the tracer's cursor always stays inside the log.

use crate::tui::app::{self, App, Msg, Screen};
use crate::tui::{Theme, TracedScenario};
use attn_trace_core::scenario::Scenario;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::{Arc, LazyLock};

/// The built-in walkthrough and every `scenarios/*.toml`, traced once for all cases.
static WALKS: LazyLock<Vec<Arc<TracedScenario>>> = LazyLock::new(|| {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
    let mut paths: Vec<_> = [root.to_string(), format!("{root}/mistakes")]
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).expect("scenarios/ exists"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 5, "the shipped scenarios are found");
    let mut scenarios_traced = vec![Arc::new(TracedScenario::builtin())];
    for p in paths {
        let s = Scenario::load(&p).unwrap_or_else(|e| panic!("shipped scenario {e}"));
        scenarios_traced.push(Arc::new(TracedScenario::from_scenario(&s)));
    }
    scenarios_traced
});

const KEYS: &[KeyCode] = &[
    KeyCode::Char('n'),
    KeyCode::Char('p'),
    KeyCode::Char('j'),
    KeyCode::Char('k'),
    KeyCode::Char('J'),
    KeyCode::Char('K'),
    KeyCode::Char(']'),
    KeyCode::Char('['),
    KeyCode::Char('f'),
    KeyCode::Char('g'),
    KeyCode::Char('w'),
    KeyCode::Char('r'),
    KeyCode::Char('b'),
    KeyCode::Char('c'),
    KeyCode::Char('C'),
    KeyCode::Char('s'),
    KeyCode::Char('t'),
    KeyCode::Char('h'),
    KeyCode::Char('?'),
    KeyCode::Char('q'),
    KeyCode::Char('1'),
    KeyCode::Char('2'),
    KeyCode::Char('3'),
    KeyCode::Char('4'),
    KeyCode::Char('9'),
    // the mistakes gallery (menu entry 7) and the side-by-side view's divergence
    KeyCode::Char('7'),
    KeyCode::Char('d'),
    KeyCode::Char('='),
    KeyCode::Char('['),
    KeyCode::Char(' '),
    KeyCode::Tab,
    KeyCode::Esc,
    KeyCode::Enter,
    KeyCode::Backspace,
    KeyCode::Left,
    KeyCode::Right,
    KeyCode::Up,
    KeyCode::Down,
    KeyCode::Home,
    KeyCode::End,
    KeyCode::PageUp,
    KeyCode::PageDown,
];

#[derive(Clone, Debug)]
enum Act {
    Key(usize, bool),
    Click(u16, u16),
    Scroll(bool),
    Resize(u16, u16),
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        8 => (0..KEYS.len(), any::<bool>()).prop_map(|(k, s)| Act::Key(k, s)),
        2 => (0u16..200, 0u16..60).prop_map(|(x, y)| Act::Click(x, y)),
        1 => any::<bool>().prop_map(Act::Scroll),
        1 => prop_oneof![Just((10u16, 3u16)), Just((1, 1)), Just((80, 24)), (1u16..200, 1u16..60)]
            .prop_map(|(w, h)| Act::Resize(w, h)),
    ]
}

fn to_msg(a: &Act) -> Msg {
    match *a {
        Act::Key(k, shift) => {
            let mods = if shift { KeyModifiers::SHIFT } else { KeyModifiers::NONE };
            Msg::Key(KeyEvent::new(KeyCode::clone(&KEYS[k]), mods))
        }
        Act::Click(x, y) => Msg::Mouse(mouse(MouseEventKind::Down(MouseButton::Left), x, y)),
        Act::Scroll(down) => {
            let kind = if down {
                MouseEventKind::ScrollDown
            } else {
                MouseEventKind::ScrollUp
            };
            Msg::Mouse(mouse(kind, 5, 5))
        }
        Act::Resize(w, h) => Msg::Resize(w, h),
    }
}

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> MouseEvent {
    MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }
}

proptest! {
    #![proptest_config(crate::tests::support::proptest_config(48))]

    #[test]
    fn random_input_never_panics_and_the_cursor_stays_in_the_log(
        which in 0usize..64,
        start_in_menu in any::<bool>(),
        acts in prop::collection::vec(act(), 1..80),
    ) {
        let traced = Arc::clone(&WALKS[which % WALKS.len()]);
        let mut app = if start_in_menu {
            App::with_menu(traced, Theme::COLOR, 120, 40)
        } else {
            App::new(traced, Theme::MONO, 80, 24)
        };
        for a in &acts {
            app::update(&mut app, to_msg(a));
            if app.quit {
                break;
            }
            let (w, h) = (app.area.width.max(1), app.area.height.max(1));
            let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
            term.draw(|f| app::render(f, &app)).unwrap();
            if let Screen::Tracer(t) = &app.screen {
                let len = t.len();
                prop_assert!(len > 0, "every shipped scenario records events");
                prop_assert!(t.cursor < len, "cursor {} outside the log of {len} events", t.cursor);
            }
            if let Screen::Mistakes(s) = &app.screen {
                prop_assert!(s.t < s.timeline.len, "step {} outside the timeline of {}", s.t, s.timeline.len);
                let traces = s.traces().expect("both runs are traced");
                for (place, trace) in s.places().iter().zip(traces) {
                    prop_assert!(place.event() < trace.len(), "{place:?} outside the log of {}", trace.len());
                }
            }
        }
    }
}

#[test]
fn tiny_terminals_never_panic_on_any_screen() {
    let traced = Arc::clone(&WALKS[0]);
    let menu = [vec![], vec!['?'], vec!['q'], vec!['q', '3'], vec!['q', '4']];
    let gallery = [
        vec!['q', '7'],
        vec!['q', '7', '3'],
        vec!['q', '7', '4', 't'],
        vec!['q', '7', '2', 'd', '?'],
    ];
    for keys in menu.into_iter().chain(gallery) {
        let mut app = App::new(Arc::clone(&traced), Theme::COLOR, 80, 24);
        for c in keys {
            app::update(&mut app, Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
        }
        for (w, h) in [(10, 3), (1, 1), (24, 6), (30, 8), (40, 12), (79, 23), (300, 100)] {
            app::update(&mut app, Msg::Resize(w, h));
            let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
            term.draw(|f| app::render(f, &app)).unwrap();
        }
    }
}
