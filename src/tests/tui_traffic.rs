//! The memory-traffic screen: reached from the menu, its table and legend are the closed forms
//! of `traffic::sweep` (held to traced counts in `traffic.rs`), and its keys change D and the mask.

use crate::tests::support::tui::{key, screen_lines};
use crate::tui::app::{App, Screen};
use crate::tui::screens::traffic::{self, LENGTHS, TILES, compact};
use crate::tui::{Theme, TracedScenario};
use attn_trace_analysis::traffic::sweep;
use attn_trace_core::kernels::Mask;
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
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
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

// ---- the cache-misses view (`c`): the simulated sweep of `attn-trace cache --sweep` ----

mod misses {
    use crate::tests::support::cli::stdout_of;
    use crate::tests::support::tui::{key, screen_lines};
    use crate::tui::app::{self, App, Msg, Screen};
    use crate::tui::cache_sweep::{LevelsFrom, Simulation};
    use crate::tui::screens::traffic::{Traffic, View};
    use crate::tui::{Theme, TracedScenario};
    use attn_trace_analysis::cache::{self, CacheSweep, LevelSpec, SWEEP_TILES, Tiles, parse_levels};
    use attn_trace_core::kernels::Mask;
    use crossterm::event::KeyCode;
    use std::time::{Duration, Instant};

    const LEVELS: &str = "L1=32K/64/8,L2=512K/64/8";

    /// The traffic screen over the menu, its misses simulated for `lengths` through `levels`.
    fn app_with(lengths: &[usize], levels: &str) -> App {
        let levels = parse_levels(levels).unwrap();
        let sim = Simulation::new(levels, LevelsFrom::Given, lengths, &SWEEP_TILES);
        let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
        a.screen = Screen::Traffic(Box::new(Traffic::with_simulation(64, false, sim)));
        a
    }

    fn traffic(a: &App) -> &Traffic {
        match &a.screen {
            Screen::Traffic(t) => t,
            _ => panic!("the traffic screen is open"),
        }
    }

    /// Ticks the app, as the terminal loop does, until the simulation is done.
    fn finish(a: &mut App) {
        let start = Instant::now();
        while traffic(a).busy() {
            assert!(start.elapsed() < Duration::from_secs(120), "the simulation finishes");
            std::thread::sleep(Duration::from_millis(2));
            app::update(a, Msg::Tick);
        }
    }

    /// The table's rows on screen, `T` first, thousands separators dropped; rows of T not
    /// simulated yet keep their `…`.
    fn shown_rows(lines: &[String], lengths: &[usize]) -> Vec<Vec<String>> {
        lines
            .iter()
            .map(|l| l.trim_matches(|c| c == '│' || c == ' ').to_string())
            .filter(|l| {
                l.split_whitespace()
                    .next()
                    .is_some_and(|t| lengths.iter().any(|n| n.to_string() == t))
                    && !l.contains("T=")
            })
            .map(|l| l.split_whitespace().map(|c| c.replace(',', "")).collect())
            .collect()
    }

    /// The number the view shows for `cell` at `level` (the misses there, or the memory bytes
    /// past the last level), worked out here from the sweep's fields.
    fn expected(cell: &cache::MissCell, level: usize, levels: usize) -> u64 {
        if level < levels {
            cell.misses[level]
        } else {
            cell.memory_bytes
        }
    }

    /// Every number of the table equals `want`'s at the level shown, at 120×40 and 80×24.
    fn check_table(a: &App, want: &CacheSweep) {
        let st = traffic(a);
        let lengths: Vec<usize> = want.rows.iter().map(|r| r.t).collect();
        for (w, h) in [(120, 40), (80, 24)] {
            let lines = screen_lines(a, w, h);
            let rows = shown_rows(&lines, &lengths);
            assert_eq!(rows.len(), want.rows.len(), "{w}×{h}:\n{}", lines.join("\n"));
            for (shown, r) in rows.iter().zip(&want.rows) {
                let mut expect = vec![
                    r.t.to_string(),
                    expected(&r.naive, st.level, want.levels.len()).to_string(),
                ];
                expect.extend(
                    r.flash
                        .iter()
                        .map(|f| expected(f, st.level, want.levels.len()).to_string()),
                );
                assert_eq!(shown, &expect, "{w}×{h} T={} level {}", r.t, st.level);
            }
        }
    }

    /// What the header and the plot's title name at `level`.
    fn quantity(levels: &[LevelSpec], level: usize) -> String {
        levels
            .get(level)
            .map_or("bytes to and from memory".to_string(), |l| format!("{} misses", l.name))
    }

    /// `4·(br·D + 2·bc·D + br·bc + 2·br + br·D)` with `br = bc = b`: the working set of a tile.
    fn working_set(b: u64, d: u64) -> u64 {
        4 * (4 * b * d + b * b + 2 * b)
    }

    /// The notes under the table and the tile row, worked out from the tile sizes and the
    /// levels: per level, the tiles larger than it; per tile, the smallest level that holds it.
    fn check_fits(a: &App, levels: &[LevelSpec]) {
        let text = screen_lines(a, 120, 40).join("\n");
        let d = traffic(a).d as u64;
        let bytes: Vec<u64> = SWEEP_TILES.iter().map(|&b| working_set(b as u64, d)).collect();
        for (k, l) in levels.iter().enumerate() {
            let over: Vec<String> = SWEEP_TILES
                .iter()
                .zip(&bytes)
                .filter(|&(_, &b)| b > l.size)
                .map(|(t, _)| t.to_string())
                .collect();
            let size = cache::size_text(l.size);
            let note = if over.is_empty() {
                format!("every tile fits in {} ({size})", l.name)
            } else if k + 1 == levels.len() {
                format!(
                    "flash {}: the tile outgrows {} ({size}), tile-local accesses start to go to memory",
                    over.join(", "),
                    l.name
                )
            } else {
                format!(
                    "flash {}: the tile outgrows {} ({size}), tile-local accesses start to miss there",
                    over.join(", "),
                    l.name
                )
            };
            // the note may wrap: compare without line breaks
            let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(flat.contains(&note), "{note} missing:\n{text}");
        }
        let tile_row = screen_lines(a, 120, 40)
            .into_iter()
            .find(|l| l.trim_start_matches(['│', ' ']).starts_with("tile"))
            .unwrap_or_else(|| panic!("a tile row:\n{text}"));
        for &b in &bytes {
            let fits = levels.iter().find(|l| b <= l.size);
            let kib = b as f64 / 1024.0;
            let size = if kib >= 100.0 || kib.fract() == 0.0 {
                format!("{kib:.0} KiB")
            } else {
                format!("{kib:.1} KiB")
            };
            let cell = match fits {
                Some(l) => format!("{size} ≤ {}", l.name),
                None => format!("{size} > {}", levels.last().unwrap().name),
            };
            assert!(tile_row.contains(&cell), "{cell} missing from {tile_row}");
        }
        // the legend marks the tiles larger than the level shown (the last, for memory bytes)
        let st = traffic(a);
        let marked = levels.get(st.level).or(levels.last()).unwrap();
        for (t, &b) in SWEEP_TILES.iter().zip(&bytes) {
            let mark = format!("flash {t} > {}", marked.name);
            assert_eq!(text.contains(&mark), b > marked.size, "{mark}:\n{text}");
        }
    }

    /// `c` opens the misses, simulated on the worker while the screen says how far it got;
    /// the table is `cache::sweep`'s and the CLI's (`cache --sweep --json`) at every level `l`
    /// steps through, and the notes say which tiles outgrow which level.
    #[test]
    fn the_misses_view_shows_the_cli_sweep_at_each_level() {
        let lengths = [64, 128];
        let mut a = app_with(&lengths, LEVELS);
        let levels = parse_levels(LEVELS).unwrap();
        key(&mut a, KeyCode::Char('c'));
        assert_eq!(traffic(&a).view, View::Misses);
        // no tick yet: the worker's rows are not taken in, whatever it has done
        let text = screen_lines(&a, 120, 40).join("\n");
        assert!(text.contains("simulating… ") && text.contains(" of 10 runs"), "{text}");
        assert!(
            text.contains("L1 32 KiB 8-way, L2 512 KiB 8-way, 64-byte lines (as given)"),
            "{text}"
        );
        finish(&mut a);
        assert!(!screen_lines(&a, 120, 40).join("\n").contains("simulating"));

        let want = cache::sweep(&lengths, &SWEEP_TILES, 64, &Mask::None, &levels, Tiles::Include);
        // the CLI prints the same sweep
        let json = stdout_of(&["cache", "--sweep", "--max-t", "128", "--levels", LEVELS, "--json"]);
        let cli: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(cli, serde_json::to_value(&want).unwrap(), "the CLI's sweep");

        for level in 0..=levels.len() {
            assert_eq!(traffic(&a).level, level);
            let text = screen_lines(&a, 120, 40).join("\n");
            let what = quantity(&levels, level);
            assert!(
                text.contains(&format!("{what} per head, forward, D = 64, no mask")),
                "{what}:\n{text}"
            );
            check_table(&a, &want);
            check_fits(&a, &levels);
            key(&mut a, KeyCode::Char('l'));
        }
        // l went round: L1 again
        assert_eq!(traffic(&a).level, 0);
        key(&mut a, KeyCode::Char('?'));
        assert!(a.popup.is_some());
        key(&mut a, KeyCode::Esc);
        // c: back to the global traffic, whose table is the closed forms
        key(&mut a, KeyCode::Char('c'));
        assert!(screen_lines(&a, 120, 40).join("\n").contains("Traffic: naive vs flash"));
        super::check_numbers(&a, 64, Mask::None);
    }

    /// `d` and `m` simulate the new head size or mask (each `d` drops the job of the one before);
    /// one simulated before shows at once.
    #[test]
    fn head_size_and_mask_re_simulate_and_come_back_at_once() {
        let lengths = [64, 128];
        let mut a = app_with(&lengths, LEVELS);
        let levels = parse_levels(LEVELS).unwrap();
        let sweep = |d: usize, mask: &Mask| cache::sweep(&lengths, &SWEEP_TILES, d, mask, &levels, Tiles::Include);
        key(&mut a, KeyCode::Char('c'));
        // the memory bytes at D = 16 (64 → 128 → 16), then the causal mask
        key(&mut a, KeyCode::Char('l'));
        key(&mut a, KeyCode::Char('l'));
        key(&mut a, KeyCode::Char('d'));
        key(&mut a, KeyCode::Char('d'));
        assert!(traffic(&a).busy(), "D = 16 is simulated");
        finish(&mut a);
        let plain = sweep(16, &Mask::None);
        check_table(&a, &plain);
        check_fits(&a, &levels);
        key(&mut a, KeyCode::Char('m'));
        assert!(traffic(&a).busy(), "the causal mask is simulated");
        finish(&mut a);
        assert!(screen_lines(&a, 120, 40).join("\n").contains("D = 16, causal mask"));
        check_table(&a, &sweep(16, &Mask::Causal));
        // back to no mask: kept, no simulation
        key(&mut a, KeyCode::Char('m'));
        assert!(!traffic(&a).busy(), "D = 16 without a mask was kept");
        check_table(&a, &plain);
        // the traffic view and back: the same rows, at once
        key(&mut a, KeyCode::Char('c'));
        key(&mut a, KeyCode::Char('c'));
        assert!(!traffic(&a).busy());
        check_table(&a, &plain);
    }

    /// Small caches: every tile outgrows L1 and the two largest outgrow L2 too, which the notes,
    /// the tile row and the legend say.
    #[test]
    fn tiles_larger_than_each_level_are_named() {
        let small = "L1=16K/64/4,L2=64K/64/8";
        let mut a = app_with(&[64], small);
        let levels = parse_levels(small).unwrap();
        key(&mut a, KeyCode::Char('c'));
        finish(&mut a);
        let want = cache::sweep(&[64], &SWEEP_TILES, 64, &Mask::None, &levels, Tiles::Include);
        for _ in 0..=levels.len() {
            check_table(&a, &want);
            check_fits(&a, &levels);
            key(&mut a, KeyCode::Char('l'));
        }
        let text = screen_lines(&a, 120, 40).join("\n");
        assert!(
            text.contains("80.5 KiB > L2") && text.contains("17.1 KiB ≤ L2"),
            "{text}"
        );
    }

    /// From the menu: entry 9, then `c`, answers at once while this machine's caches are
    /// simulated for T = 64 … 512 (20 runs; `t` asks for 1024 too: 25); `q` leaves, dropping
    /// the worker. The header names the levels as the OS reports them.
    #[test]
    fn the_menu_opens_it_and_keys_answer_while_it_simulates() {
        let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
        key(&mut a, KeyCode::Char('9'));
        let start = Instant::now();
        key(&mut a, KeyCode::Char('c'));
        assert!(
            start.elapsed() < Duration::from_millis(200),
            "c does not wait for the simulation"
        );
        let text = screen_lines(&a, 120, 40).join("\n");
        assert!(text.contains(" of 20 runs"), "{text}");
        let (levels, from_os) = cache::default_levels();
        let from = if from_os {
            "this machine's, as the OS reports them"
        } else {
            "defaults: the OS reports none"
        };
        let l1 = &levels[0];
        assert!(
            text.contains(&format!("caches: L1 {} {}-way", cache::size_text(l1.size), l1.ways)) && text.contains(from),
            "{text}"
        );
        key(&mut a, KeyCode::Char('t'));
        let text = screen_lines(&a, 120, 40).join("\n");
        assert!(text.contains(" of 25 runs") && text.contains(" 1024 "), "{text}");
        assert!(traffic(&a).busy());
        key(&mut a, KeyCode::Char('q'));
        assert!(matches!(a.screen, Screen::Menu(_)));
        assert!(!a.wants_tick(), "no worker is polled any more");
    }

    /// The view in 简体中文.
    #[test]
    fn the_misses_view_in_chinese() {
        let mut a = app_with(&[64], LEVELS);
        key(&mut a, KeyCode::Char('c'));
        finish(&mut a);
        let text = attn_trace_i18n::with_lang(attn_trace_i18n::Lang::ZhCn, || screen_lines(&a, 120, 40).join("\n"));
        // a wide character fills two cells, the second blank: compare without spaces
        let bare: String = text.chars().filter(|c| *c != ' ').collect();
        for s in [
            "缓存未命中：朴素实现与flash",
            "每个头的L1未命中",
            "缓存：L132KiB8路",
            "每个分块都放得进L2",
        ] {
            assert!(bare.contains(s), "{s} missing:\n{text}");
        }
    }
}

/// At 80×24 the plot is too small for the chart's own legend box: the curves are named on its
/// bottom border instead, so a small terminal still says which is which. Traffic and misses alike.
#[test]
fn a_small_chart_names_its_curves_on_its_border() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
        key(&mut a, KeyCode::Char('9'));
        let lines = screen_lines(&a, w, h);
        let text = lines.join("\n");
        // the chart: from its title down to the table's box
        let top = lines.iter().position(|l| l.contains("log–log")).expect("the chart");
        let end = lines
            .iter()
            .position(|l| l.contains("the plotted numbers"))
            .expect("the table");
        let chart = lines[top..end].join("\n");
        for name in ["naive", "flash 16", "flash 128"] {
            assert!(chart.contains(name), "{w}×{h}: {name} not on the chart:\n{text}");
        }
    }
    // the misses view, simulated for two lengths only
    let levels = attn_trace_analysis::cache::parse_levels("L1=32K/64/8,L2=512K/64/8").unwrap();
    let sim = crate::tui::cache_sweep::Simulation::new(
        levels,
        crate::tui::cache_sweep::LevelsFrom::Given,
        &[64, 128],
        &attn_trace_analysis::cache::SWEEP_TILES,
    );
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    a.screen = Screen::Traffic(Box::new(traffic::Traffic::with_simulation(64, false, sim)));
    key(&mut a, KeyCode::Char('c'));
    let start = std::time::Instant::now();
    while matches!(&a.screen, Screen::Traffic(t) if t.busy()) {
        assert!(start.elapsed() < std::time::Duration::from_secs(120));
        std::thread::sleep(std::time::Duration::from_millis(2));
        crate::tui::app::update(&mut a, crate::tui::app::Msg::Tick);
    }
    let lines = screen_lines(&a, 80, 24);
    let top = lines.iter().position(|l| l.contains("log–log")).expect("the chart");
    let end = lines[top + 1..]
        .iter()
        .position(|l| l.starts_with('┌'))
        .map_or(lines.len(), |k| top + 1 + k);
    let chart = lines[top..end].join("\n");
    for name in ["naive", "flash 16"] {
        assert!(
            chart.contains(name),
            "80×24: {name} not on the misses chart:\n{}",
            lines.join("\n")
        );
    }
}
