//! The timeline strip above the tracer's status bar: every column's phase, the cursor, the
//! selected cell's ticks and the breakpoint hits, recomputed here from the log by scanning it
//! (never through the cell index or the phase search the strip uses), and the keys and clicks
//! that move along it.

use crate::tests::support::tui::{draw, goto, key, tracer};
use crate::tui::app::{self, App, Msg};
use crate::tui::screens::tracer;
use crate::tui::widgets::CellRef;
use crate::tui::{Theme, TracedScenario};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::{Buf, Pass, Trace};
use crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;
use std::collections::BTreeSet;

/// What the log says column `x` of a `w`-wide strip shows, found by scanning every event.
#[derive(Debug, Default, Clone, PartialEq)]
struct Expected {
    /// The phase of the column's first event: the index of the last phase start at or before it.
    span: Option<usize>,
    /// The pass of that phase.
    pass: Option<Pass>,
    tick: bool,
    breakpoint: bool,
    cursor: bool,
}

fn expected(trace: &Trace, w: usize, cursor: usize, selected: CellRef, bps: &BTreeSet<CellRef>) -> Vec<Expected> {
    let len = trace.len();
    let mut cols = vec![Expected::default(); w];
    for (n, e) in trace.events.iter().enumerate() {
        let x = n * w / len;
        let cell = (e.buf, e.offset as usize);
        if cols[x].span.is_none() {
            let k = trace.phases.iter().rposition(|&(s, _)| s as usize <= n).unwrap();
            cols[x].span = Some(k);
            cols[x].pass = Some(trace.phases[k].1.pass());
        }
        cols[x].tick |= cell == selected;
        cols[x].breakpoint |= bps.contains(&cell);
        cols[x].cursor |= n == cursor;
    }
    // a column no event falls in (a log shorter than the strip) shows the event before it
    for x in 1..w {
        if cols[x].span.is_none() {
            cols[x] = Expected {
                span: cols[x - 1].span,
                pass: cols[x - 1].pass,
                ..Expected::default()
            };
        }
    }
    cols
}

/// The strip's row as drawn: one (symbol, modifiers, background) per column.
fn drawn(app: &App, w: u16, h: u16) -> Vec<(String, Modifier, Option<ratatui::style::Color>)> {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app::render(f, app)).unwrap();
    let buf = term.backend().buffer();
    // the strip is the row above the status bar
    (0..w)
        .map(|x| {
            let c = &buf[(x, h - 2)];
            (c.symbol().to_string(), c.modifier, Some(c.bg))
        })
        .collect()
}

fn check_strip(app: &App, w: u16, h: u16, theme: Theme) {
    let t = tracer(app);
    let trace = t.traced.trace(t.variant).unwrap();
    let selected = t.selected().unwrap();
    let want = expected(trace, w as usize, t.cursor, selected, &t.breakpoints);
    let cells = drawn(app, w, h);
    for (x, (want, (sym, modifier, bg))) in want.iter().zip(&cells).enumerate() {
        let what = format!("{w}x{h} column {x}: want {want:?}, drawn {sym:?}");
        if want.cursor {
            assert_eq!(sym, "▲", "{what}");
        } else if want.breakpoint {
            assert_eq!(sym, "●", "{what}");
        } else if want.tick {
            // on a phase's name the letter stays, underlined (issue 37: ticks hid the names)
            assert!(
                sym == "|"
                    || (sym.chars().all(|c| c.is_alphanumeric() || "_…".contains(c))
                        && modifier.contains(Modifier::UNDERLINED)),
                "{what}"
            );
        } else {
            assert!(!["▲", "●", "|"].contains(&sym.as_str()), "{what}");
        }
        if want.cursor {
            continue;
        }
        let span = want.span.unwrap();
        if theme.color {
            // forward spans are blue, backward ones red; neighbouring spans differ
            let Some(ratatui::style::Color::Rgb(r, _, b)) = bg else {
                panic!("{what}: no span colour")
            };
            match want.pass.unwrap() {
                Pass::Forward => assert!(b > r, "{what}: a forward span is blue"),
                Pass::Backward => assert!(r > b, "{what}: a backward span is red"),
            }
        } else {
            assert_eq!(modifier.contains(Modifier::REVERSED), span % 2 == 1, "{what}");
        }
    }
    // the spans come in the log's order: forward first, then backward
    let passes: Vec<Pass> = want.iter().map(|c| c.pass.unwrap()).collect();
    assert!(passes.windows(2).all(|p| p[0] <= p[1]), "{passes:?}");
}

#[test]
fn the_strip_is_the_log_in_every_column() {
    for theme in [Theme::MONO, Theme::COLOR] {
        for (w, h) in [(80, 24), (120, 40), (47, 20)] {
            let mut a = App::new(TracedScenario::builtin(), theme, w, h);
            check_strip(&a, w, h, theme);
            // a pinned cell read all over the log, and two breakpoints
            goto(&mut a, "w_qkv[5]");
            goto(&mut a, "scores[16]");
            key(&mut a, KeyCode::Char('b'));
            goto(&mut a, "d_x[3]");
            key(&mut a, KeyCode::Char('b'));
            goto(&mut a, "q[10]");
            check_strip(&a, w, h, theme);
            key(&mut a, KeyCode::Char('f'));
            check_strip(&a, w, h, theme);
            key(&mut a, KeyCode::Tab);
            check_strip(&a, w, h, theme);
        }
    }
}

#[test]
fn a_log_shorter_than_the_strip_and_a_large_one() {
    // forward only, a few hundred events on a 120-column strip is two columns an event, and a
    // cross-attention run with separate projections and dropout in both passes
    let text = "title = \"tiny\"\n[shape]\nB = 1\nT = 2\nC = 2\nH = 1\n[run]\nvariants = [\"baseline\"]\npasses = [\"forward\"]\n[values]\nq = [[1.0, 0.0], [0.0, 1.0]]\nk = [[1.0, 0.0], [0.0, 1.0]]\nv = [[1.0, 2.0], [3.0, 4.0]]\n";
    let tiny = Scenario::parse(text, "<tiny>").unwrap();
    let traced = TracedScenario::from_scenario(&tiny);
    let len = traced.trace(Variant::Baseline).unwrap().len();
    assert!(len < 120, "{len} events");
    let a = App::new(traced, Theme::MONO, 120, 40);
    check_strip(&a, 120, 40, Theme::MONO);
    for name in ["cross_attention", "dropout"] {
        let s = Scenario::shipped(name).unwrap();
        let mut a = App::new(TracedScenario::from_scenario(&s), Theme::COLOR, 120, 40);
        check_strip(&a, 120, 40, Theme::COLOR);
        key(&mut a, KeyCode::End);
        check_strip(&a, 120, 40, Theme::COLOR);
    }
}

#[test]
fn keys_and_clicks_move_along_the_strip() {
    let mut a = App::new(TracedScenario::builtin(), Theme::MONO, 120, 40);
    let len = tracer(&a).len();
    // > : the first event of the next column; < : of the previous one
    let here = tracer(&a).cursor;
    let x = here * 120 / len;
    key(&mut a, KeyCode::Char('>'));
    let n = tracer(&a).cursor;
    assert_eq!(n * 120 / len, x + 1);
    assert!(
        n == 0 || (n - 1) * 120 / len == x,
        "{n} is the first event of column {}",
        x + 1
    );
    key(&mut a, KeyCode::Char('<'));
    key(&mut a, KeyCode::Char('<'));
    let n = tracer(&a).cursor;
    assert_eq!(n * 120 / len, x - 1);
    key(&mut a, KeyCode::Home);
    key(&mut a, KeyCode::Char('<'));
    assert_eq!(tracer(&a).cursor, 0);
    assert!(tracer(&a).message.as_deref().unwrap().contains("first column"));
    // } and { : the selected cell's accesses, in order, as the log has them
    goto(&mut a, "k[6]");
    let trace = {
        let t = tracer(&a);
        t.traced.trace(t.variant).unwrap()
    };
    let accesses: Vec<usize> = trace
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| (e.buf, e.offset) == (Buf::K, 6))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(tracer(&a).cursor, accesses[0]);
    for &want in &accesses[1..] {
        key(&mut a, KeyCode::Char('}'));
        assert_eq!(tracer(&a).cursor, want);
    }
    key(&mut a, KeyCode::Char('}'));
    assert_eq!(tracer(&a).cursor, *accesses.last().unwrap());
    assert!(
        tracer(&a)
            .message
            .as_deref()
            .unwrap()
            .contains("no access of k[6] after")
    );
    key(&mut a, KeyCode::Char('{'));
    assert_eq!(tracer(&a).cursor, accesses[accesses.len() - 2]);
    // a click on a column with a tick lands on that access; elsewhere on the column's first event
    let last = *accesses.last().unwrap();
    let click = |a: &mut App, col: u16| {
        let area = ratatui::layout::Rect::new(0, 0, 120, 40);
        let t = tracer(a);
        let ctx = t.ctx(Theme::MONO).unwrap();
        let row = tracer::areas(area, t, &ctx).timeline.y;
        let m = MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: col,
            row,
            modifiers: KeyModifiers::NONE,
        };
        app::update(a, Msg::Mouse(m));
    };
    key(&mut a, KeyCode::Home);
    let col = last * 120 / len;
    let first_there = accesses.iter().copied().find(|&n| n * 120 / len == col).unwrap();
    click(&mut a, col as u16);
    assert_eq!(tracer(&a).cursor, first_there, "the tick's first access in that column");
    assert_eq!(tracer(&a).pinned, Some((Buf::K, 6)), "a click keeps the selected cell");
    click(&mut a, 119);
    let n = tracer(&a).cursor;
    assert_eq!(n * 120 / len, 119);
    assert_eq!((n - 1) * 120 / len, 118, "the first event of the last column");
}

#[test]
fn timeline_snapshot_with_a_selected_cell_and_breakpoints() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = App::new(TracedScenario::builtin(), Theme::MONO, w, h);
        goto(&mut a, "d_scores[16]");
        key(&mut a, KeyCode::Char('b'));
        goto(&mut a, "k[6]");
        let screen = draw(&a, w, h);
        let strip = screen.lines().nth(h as usize - 2).unwrap().to_string();
        insta::assert_snapshot!(format!("timeline_{w}x{h}"), strip);
    }
}
