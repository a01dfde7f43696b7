//! Tests of the TUI's helpers and widgets (`src/tui/`), one module per source file: what were the
//! `#[cfg(test)]` unit tests of those files, now through the library's public API.

/// `src/tui/job.rs`
mod job {
    use crate::tui::job::*;
    use std::process::Command;
    use std::time::{Duration, Instant};

    const CHILD: &str = "ATTN_TRACE_GUARD_CHILD";

    #[test]
    fn a_panic_in_a_guarded_worker_is_an_error_for_the_ui() {
        // The failures wait in one queue per process, which the app takes from on every update:
        // the tests that drive the app in this process would take this test's failure (and show
        // it in their popups). So it runs again in a process of its own.
        if std::env::var_os(CHILD).is_none() {
            // the harness names a test by its module path without the crate's name
            let module = module_path!().split_once("::").map_or("", |(_, m)| m);
            let name = format!("{module}::a_panic_in_a_guarded_worker_is_an_error_for_the_ui");
            let out = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", &name])
                .env(CHILD, "1")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("1 passed"),
                "{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
        assert_eq!(guard(JobKind::Training, || 7), Ok(7));
        #[allow(clippy::panic)]
        let e = std::thread::spawn(|| guard(JobKind::Loading, || -> u8 { panic!("the kernel fell over") }))
            .join()
            .unwrap()
            .unwrap_err();
        assert!(e.contains("loading") && e.contains("the kernel fell over"), "{e}");
        // queued for the popup
        let mut seen = false;
        while let Some((w, text)) = take_failure() {
            seen |= w == JobKind::Loading && text == e;
        }
        assert!(seen);
        // a job whose work panics: what it sent before arrives, then its failure, and the
        // popup is queued
        #[allow(clippy::panic)]
        let mut job = Job::spawn(JobKind::CacheSweep, Progress::default(), |ctx: &Ctx<u32>| {
            ctx.send(1);
            ctx.send(2);
            panic!("the simulation fell over");
        });
        let events = drain(&mut job);
        assert!(
            matches!(events[..], [Event::Msg(1), Event::Msg(2), Event::Failed(ref f)] if f.contains("the simulation fell over")),
            "{events:?}"
        );
        assert!(job.ended());
        let mut queued = false;
        while let Some((w, text)) = take_failure() {
            queued |= w == JobKind::CacheSweep && text.contains("the simulation fell over");
        }
        assert!(queued);
    }

    /// Everything the job sends until it ends.
    fn drain<M>(job: &mut Job<M>) -> Vec<Event<M>> {
        let (start, mut out) = (Instant::now(), Vec::new());
        while !job.ended() && start.elapsed() < Duration::from_secs(10) {
            match job.poll() {
                Some(e) => out.push(e),
                None => std::thread::sleep(Duration::from_millis(1)),
            }
        }
        out
    }

    #[test]
    fn a_job_counts_its_progress_and_stops_when_cancelled() {
        let progress = Progress::default();
        let mut job = Job::spawn(JobKind::Loading, progress.clone(), |ctx: &Ctx<u64>| {
            // counts until the UI cancels, then says how far it got
            while !ctx.cancelled() {
                ctx.progress.add(1);
                std::thread::yield_now();
            }
            ctx.send(ctx.progress.done());
        });
        let start = Instant::now();
        while progress.done() < 100 && start.elapsed() < Duration::from_secs(10) {
            std::thread::yield_now();
        }
        job.cancel();
        let events = drain(&mut job);
        assert!(matches!(events[..], [Event::Msg(n)] if n >= 100), "{events:?}");
        assert!(progress.cancelled());
    }

    #[test]
    fn dropping_a_joined_job_waits_for_its_thread() {
        let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = std::sync::Arc::clone(&finished);
        let job = Job::spawn(JobKind::Training, Progress::default(), move |ctx: &Ctx<()>| {
            while !ctx.cancelled() {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(20));
            seen.store(true, std::sync::atomic::Ordering::SeqCst);
        })
        .joined();
        drop(job);
        assert!(finished.load(std::sync::atomic::Ordering::SeqCst));
    }
}

/// `src/tui/source.rs`
mod source {
    use attn_trace_core::source::*;

    #[test]
    fn every_kernel_file_is_embedded_and_found_by_path() {
        let mha = source("crates/core/src/kernels/attention_mha.rs").unwrap();
        assert!(mha.contains("let q_base = ((bb * S + i) * H + hh) * D;"));
        assert!(
            source("crates/core/src/kernels/attention_mistakes.rs")
                .unwrap()
                .contains("MISTAKE 3")
        );
        assert!(
            source("crates/core/src/kernels/dropout.rs")
                .unwrap()
                .contains("keep_mask")
        );
        assert!(
            source("crates/core/src/kernels/attention_flash.rs")
                .unwrap()
                .contains("let alpha = exp(m_old - m_new);")
        );
        assert!(
            source("/abs/path/src/kernels/softmax.rs")
                .unwrap()
                .contains("row_forward")
        );
        assert!(
            source("crates/core/src/kernels/attention_gqa.rs")
                .unwrap()
                .contains("let k_base = ((bb * T + j) * H_kv + kv_h) * D;")
        );
        assert!(
            source("crates/core/src/kernels/rope.rs")
                .unwrap()
                .contains("x0 * c - x1 * s")
        );
        assert!(
            source("crates/core/src/kernels/decode.rs")
                .unwrap()
                .contains("Buf::KCache")
        );
        assert_eq!(source("crates/core/src/kernels/nope.rs"), None);
        // every lesson file is there, byte for byte: a new kernel the code panel cannot show
        // fails here, not in front of a learner
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/core/src/kernels");
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name == "mod.rs" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(
                source(&format!("crates/core/src/kernels/{name}")),
                Some(text.as_str()),
                "{name}"
            );
        }
        assert_eq!(short("crates/core/src/kernels/linear.rs"), "linear.rs");
    }
}

/// `src/tui/svg.rs`
mod svg {
    use crate::tui::svg::*;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::{Color, Style};

    /// The dark theme's ANSI red and blue, and its default foreground.
    const RED: &str = "#e06c75";
    const BLUE: &str = "#61afef";
    const DEFAULT_FG: &str = "#d8dee9";

    #[test]
    fn renders_runs_with_their_colours_and_escapes_text() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 10, 2));
        buf.set_string(0, 0, "a<b", Style::new().red().bold());
        buf.set_string(3, 0, "ok", Style::new().on_blue());
        buf.set_string(0, 1, "x", Style::new().reversed());
        let svg = render(&buf);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains(r#"font-weight="bold""#));
        assert!(svg.contains(&format!(r#"fill="{RED}""#)), "red text");
        assert!(svg.contains("a&lt;b"), "escaped");
        assert!(svg.contains(&format!(r#"fill="{BLUE}"/>"#)), "blue background rect");
        // reversed: the default foreground becomes a background rectangle
        assert!(svg.contains(&format!(r#"width="8.4" height="17" fill="{DEFAULT_FG}"/>"#)));
        assert_eq!(svg.matches("<text").count(), 3);
    }

    #[test]
    fn palette_matches_xterm() {
        // one letter in each colour: each its own run, drawn in that colour
        let colours = [
            ('a', Color::Indexed(16), "#000000"),
            ('b', Color::Indexed(231), "#ffffff"),
            ('c', Color::Indexed(196), "#ff0000"),
            ('d', Color::Indexed(232), "#080808"),
            ('e', Color::Rgb(1, 2, 255), "#0102ff"),
        ];
        let mut buf = Buffer::empty(Rect::new(0, 0, 5, 1));
        for (x, &(letter, colour, _)) in (0..).zip(&colours) {
            buf.set_string(x, 0, letter.to_string(), Style::new().fg(colour));
        }
        let svg = render(&buf);
        for (letter, _, hex) in colours {
            assert!(
                svg.contains(&format!(r#" fill="{hex}">{letter}</text>"#)),
                "{letter}: {svg}"
            );
        }
    }
}

/// `src/tui/theme.rs`
mod theme {
    use crate::tui::theme::*;
    use ratatui::style::Color;

    #[test]
    fn monochrome_still_tells_read_write_written_and_selected_apart() {
        let t = Theme::MONO;
        let styles = [t.read(), t.write(), t.written(), t.selected(), t.base()];
        for (a, x) in styles.iter().enumerate() {
            assert_eq!(x.fg, None, "no colour in monochrome");
            assert_eq!(x.bg, None, "no colour in monochrome");
            for y in &styles[a + 1..] {
                assert_ne!(x, y, "two cell states look the same");
            }
        }
    }

    #[test]
    fn heat_runs_from_blue_through_white_to_red() {
        let rgb = |t: f64| match Theme::COLOR.heat(t).fg {
            Some(Color::Rgb(r, g, b)) => (r, g, b),
            other => panic!("expected an RGB colour, got {other:?}"),
        };
        let (r, _, b) = rgb(1.0);
        assert!(r > b + 50, "positive values are red");
        let (r, _, b) = rgb(0.0);
        assert!(b > r + 50, "negative values are blue");
        let (r, g, b) = rgb(0.5);
        assert!(r > 220 && g > 220 && b > 220, "zero is near white");
        assert_eq!(Theme::MONO.heat_glyph(0.5), "  ");
        assert_eq!(Theme::MONO.heat_glyph(1.0), "██");
    }
}

/// `src/tui/traced_scenario.rs`
mod traced_scenario {
    use crate::tui::traced_scenario::*;
    use attn_trace_core::kernels::Variant;
    use attn_trace_core::trace::Buf;

    #[test]
    fn builtin_focus_lands_on_the_docs_score_write() {
        let w = TracedScenario::builtin();
        assert_eq!(w.first_variant(), Some(Variant::Mha));
        let e = Element { b: 0, h: 1, i: 2, j: 1 };
        assert_eq!(w.score_offset(Variant::Mha, e), Some(16));
        assert_eq!(w.score_offset(Variant::Baseline, e), Some(7));
        let n = w.start_cursor(Variant::Mha);
        let ev = w.trace(Variant::Mha).unwrap().events[n];
        assert_eq!((ev.buf, ev.offset), (Buf::Scores, 16));
        assert_eq!(w.score_offset(Variant::Mha, Element { b: 0, h: 2, i: 0, j: 0 }), None);
    }
}

/// `src/tui/widgets/bar.rs`
mod bar {
    use crate::tui::widgets::bar::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn the_longest_text_that_fits_is_chosen_and_a_message_is_never_cut() {
        assert_eq!(header(&s(&["a long title", "short"]), 8), ["short"]);
        assert_eq!(header(&s(&["a long title", "too long too"]), 8), ["too long", "too"]);
        let lefts = s(&[" #5/9 │ scores ", " #5 "]);
        assert_eq!(
            status(&lefts, &s(&[" n/p step · ? keys", " ? keys"]), false, 24),
            [(" #5/9 │ scores ".to_string(), " ? keys".to_string())]
        );
        assert_eq!(
            status(&lefts, &s(&[" a hint far too long"]), false, 10),
            [(" #5 ".to_string(), String::new())]
        );
        let lines = status(&lefts, &s(&[" event 12 last wrote q[3]"]), true, 20);
        assert_eq!(lines[0].0, " #5/9 │ scores ");
        let rest: String = lines[1..].iter().map(|l| l.1.clone()).collect();
        assert_eq!(rest, " event 12 last wrote q[3]");
    }
}

/// `src/tui/widgets/code.rs`
mod code {
    use crate::tui::widgets::code::*;

    #[test]
    fn a_long_line_wraps_at_spaces_and_keeps_every_character() {
        let line = "        s += rec.read(Buf::Q, q, q_base + d) * rec.read(Buf::K, k, k_base + d);";
        let rows = wrap(line, 40);
        assert!(rows.len() >= 2, "{rows:?}");
        assert!(rows.iter().all(|r| r.chars().count() <= 40), "{rows:?}");
        assert!(
            rows[1].starts_with("          "),
            "continuations are indented: {rows:?}"
        );
        let joined: String = rows.iter().map(|r| r.trim()).collect::<Vec<_>>().join(" ");
        assert_eq!(joined, line.trim());
        assert_eq!(wrap("short", 40), vec!["short".to_string()]);
    }
}

/// `src/tui/widgets/dot.rs`
mod dot {
    use crate::tui::widgets::dot::offsets_text;

    #[test]
    fn offsets_are_written_as_ranges_where_they_are_one() {
        assert_eq!(offsets_text(&[10, 11]), "10..=11");
        assert_eq!(offsets_text(&[2, 6, 10]), "2..=10 step 4");
        assert_eq!(offsets_text(&[7]), "7");
        assert_eq!(offsets_text(&[3, 5, 6]), "3, 5, 6");
        assert_eq!(offsets_text(&[3, 5, 6, 9, 14]), "3, 5, …, 14");
        assert_eq!(offsets_text(&[]), "");
    }
}

/// `src/tui/widgets/heatgrid.rs`
mod heatgrid {
    use crate::tui::Theme;
    use crate::tui::widgets::heatgrid::*;
    use ratatui::layout::Rect;

    #[test]
    fn clicks_map_back_to_the_cell_drawn_there() {
        let area = Rect::new(10, 5, 40, 20);
        let p = plan(area, 6, (5, 2));
        assert_eq!((p.cell_w, p.rows, p.cols), (2, 6, 6));
        // cell (i=3, j=4) is drawn at x = 12 + 4·2, y = 6 + 3
        assert_eq!(hit(&p, 20, 9), Some((3, 4)));
        assert_eq!(hit(&p, 21, 9), Some((3, 4)), "both columns of a cell");
        assert_eq!(hit(&p, 11, 9), None, "the label column");
        assert_eq!(hit(&p, 20, 5), None, "the label row");
    }

    #[test]
    fn a_grid_larger_than_its_area_scrolls_to_the_selection() {
        let area = Rect::new(0, 0, 20, 8);
        let p = plan(area, 30, (29, 12));
        assert_eq!(p.cell_w, 1, "one column per cell when two do not fit");
        assert_eq!((p.rows, p.cols), (7, 18));
        assert_eq!((p.first_i, p.first_j), (23, 0));
        assert_eq!(hit(&p, 2 + 12, 1 + 6), Some((29, 12)));
    }

    #[test]
    fn shades_grow_with_the_probability() {
        assert_eq!(cell(Theme::MONO, 0.0).1, "  ");
        assert_eq!(cell(Theme::MONO, 0.5).1, "▒▒");
        assert_eq!(cell(Theme::MONO, 1.0).1, "██");
        assert_eq!(label(b' '), '␣');
        assert_eq!(label(b'a'), 'a');
    }
}

/// `src/tui/widgets/mod.rs`
mod widgets {
    use crate::tui::widgets::*;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::text::Line;

    #[test]
    fn words_wrap_at_spaces_and_long_ones_are_cut() {
        let lines = [Line::raw("finite difference ∂L/∂q[10] = 0.5"), Line::raw("abcdefghij")];
        let rows = wrapped_rows(&lines, 12);
        let area = Rect::new(0, 0, 12, rows);
        let mut buf = Buffer::empty(area);
        draw_wrapped(&mut buf, area, &lines);
        let text: Vec<String> = (0..rows)
            .map(|y| {
                let row: String = (0..12).map(|x| buf.cell((x, y)).unwrap().symbol()).collect();
                row.trim_end().to_string()
            })
            .collect();
        assert_eq!(text, ["finite", "difference", "∂L/∂q[10] =", "0.5", "abcdefghij"]);
        assert_eq!(wrapped_rows(&[Line::raw("abcdefghijklmnop")], 5), 4);
        assert_eq!(wrapped_rows(&[Line::raw(""), Line::raw("x")], 5), 2);
    }
}

/// `src/tui/widgets/timeline.rs`
mod timeline {
    use crate::tui::widgets::timeline::*;

    #[test]
    fn every_event_is_in_exactly_one_column() {
        for (len, w) in [(1, 10), (7, 10), (10, 10), (11, 10), (1000, 7), (10_021_888, 120)] {
            let mut next = 0;
            for x in 0..w {
                let r = range(x, len, w);
                assert_eq!(r.start, next.min(len), "len {len} w {w} x {x}");
                for n in r.clone().take(3).chain(r.clone().rev().take(3)) {
                    assert_eq!(column_of(n, len, w), x, "len {len} w {w} n {n}");
                }
                next = r.end;
            }
            assert_eq!(next, len);
        }
    }
}
