//! The memory-traffic screen: reached from the menu, its table and legend are the closed forms
//! of `traffic::sweep` (held to traced counts in `traffic.rs`), and its keys change D and the mask.

use crate::support::tui::{key, screen_lines};
use attn_trace::analysis::traffic::sweep;
use attn_trace::kernels::Mask;
use attn_trace::tui::app::{App, Screen};
use attn_trace::tui::screens::traffic::{self, LENGTHS, TILES, compact};
use attn_trace::tui::{Theme, Walk};
use crossterm::event::KeyCode;

/// The rows of the numbers table on screen: `T` and its cells, split on whitespace.
fn shown_rows(lines: &[String]) -> Vec<Vec<String>> {
    lines
        .iter()
        .map(|l| l.trim_matches(|c| c == '│' || c == ' ').to_string())
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|t| LENGTHS.iter().any(|n| n.to_string() == t))
        })
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

fn check_numbers(app: &App, d: usize, mask: Mask) {
    let want = sweep(&LENGTHS, &TILES, d, mask);
    for (w, h) in [(120, 40), (80, 24)] {
        let rows = shown_rows(&screen_lines(app, w, h));
        assert_eq!(rows.len(), LENGTHS.len(), "{w}×{h}: {rows:?}");
        for (shown, r) in rows.iter().zip(&want.rows) {
            let mut expect = vec![r.t.to_string(), compact(r.naive), compact(r.naive_scores_probs)];
            expect.extend(r.flash.iter().map(|&f| compact(f)));
            assert_eq!(shown, &expect, "{w}×{h} T={}", r.t);
        }
    }
}

#[test]
fn the_traffic_screen_shows_the_sweep_and_its_keys_change_it() {
    let mut a = App::with_menu(Walk::builtin(), Theme::MONO, 120, 40);
    key(&mut a, KeyCode::Char('9'));
    assert!(
        matches!(a.screen, Screen::Traffic(_)),
        "menu entry 9 opens the traffic screen"
    );
    check_numbers(&a, 64, Mask::None);
    let text = screen_lines(&a, 120, 40).join("\n");
    for name in ["naive", "naive: S, P", "flash 16", "flash 128", "D = 64, no mask"] {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    key(&mut a, KeyCode::Char('d'));
    check_numbers(&a, 128, Mask::None);
    key(&mut a, KeyCode::Char('m'));
    check_numbers(&a, 128, Mask::Causal);
    assert!(screen_lines(&a, 120, 40).join("\n").contains("D = 128, causal mask"));
    key(&mut a, KeyCode::Char('d'));
    check_numbers(&a, 16, Mask::Causal);
    key(&mut a, KeyCode::Char('?'));
    assert!(a.popup.is_some());
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Char('q'));
    assert!(matches!(a.screen, Screen::Menu(_)));
}

#[test]
fn compact_counts_keep_three_digits() {
    assert_eq!(compact(9_999), "9999");
    assert_eq!(compact(41_024), "41.0k");
    assert_eq!(compact(1_077_248), "1.08M");
    assert_eq!(compact(274_792_448), "275M");
    assert_eq!(compact(4_395_892_736), "4.40G");
    // the series are the table's numbers, on log scales
    let st = traffic::Traffic::new(64, false);
    let series = st.series();
    assert_eq!(series.len(), 2 + TILES.len());
    let (x, y) = series[0].1[0];
    assert_eq!((x, y), (6.0, (st.sweep.rows[0].naive as f64).log10()));
}
