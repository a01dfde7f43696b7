//! A learner's first screens, readable at every size: nothing a learner needs is cut.

use attn_trace::kernels::Variant;
use attn_trace::tui::app::{self, App, Msg};
use attn_trace::tui::source;
use attn_trace::tui::{Theme, Walk};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn key(app: &mut App, c: KeyCode) {
    app::update(app, Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app::render(f, app)).unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_line_being_stepped_is_on_screen_whole() {
    // the product line of the scores pass is the longest line a learner steps through
    for (w, h) in [(120, 40), (80, 24)] {
        let mut a = App::new(Walk::builtin(), Theme::MONO, w, h);
        let t = a.tracer().unwrap();
        let trace = t.walk.trace(Variant::Mha).unwrap();
        let read = (t.cursor.saturating_sub(8)..t.cursor)
            .find(|&n| trace.events[n].buf == attn_trace::trace::Buf::K)
            .expect("a read of k before the score's write");
        let v = trace.view(read);
        let line = source::source(v.file)
            .unwrap()
            .lines()
            .nth(v.line as usize - 1)
            .unwrap()
            .trim()
            .to_string();
        assert!(line.contains("rec.read(Buf::K, k, k_base + d)"), "{line}");
        key(&mut a, KeyCode::Char('g'));
        for c in read.to_string().chars() {
            key(&mut a, KeyCode::Char(c));
        }
        key(&mut a, KeyCode::Enter);
        if w < 110 {
            key(&mut a, KeyCode::Char('2')); // the code tab
        }
        let text = screen(&a, w, h);
        // the rows of the code panel, wrapped rows joined back
        let code: String = text
            .lines()
            .map(|l| l.trim_matches('│').split("││").next().unwrap_or(""))
            .filter_map(|l| l.get(l.find(['▶', '↪']).map(|k| k + 3)?..))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(code.contains(&line), "{w}×{h}: `{line}` is not whole in\n{text}");
    }
}

// ---- the memory panel ----

use attn_trace::format::exact;
use attn_trace::scenario::Scenario;
use attn_trace::trace::{Buf, Op, Phase};
use attn_trace::tui::screens::tracer::{self, Tracer};
use attn_trace::tui::widgets::memory;
use ratatui::widgets::Block;
use std::sync::Arc;

fn tracer_at(walk: &Arc<Walk>, v: Variant, n: usize) -> Tracer {
    let mut t = Tracer::new(Arc::clone(walk), Some(v));
    t.cursor = n;
    t
}

fn tracer_screen(st: &Tracer, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| tracer::render(f, f.area(), st, Theme::MONO)).unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn memory_plan(st: &Tracer, w: u16, h: u16) -> memory::Plan {
    let ctx = st.ctx(Theme::MONO).unwrap();
    let areas = tracer::areas(ratatui::layout::Rect::new(0, 0, w, h), st, &ctx);
    memory::plan(Block::bordered().inner(areas.memory.expect("the memory panel")), &ctx)
}

#[test]
fn a_dot_product_shows_both_operands_and_the_cell_it_writes() {
    let walk = Arc::new(Walk::builtin());
    let trace = walk.trace(Variant::Mha).unwrap();
    // the read of k[7] for scores[16] (h1, i2, j1): q[10..=11] · k[6..=7]
    let n = (0..trace.len())
        .find(|&n| {
            let e = trace.events[n];
            (e.op, e.buf, e.offset) == (Op::Read, Buf::K, 7)
                && trace.phase_at(n) == Phase::Scores
                && trace.events[n + 1].offset == 16
        })
        .expect("scores[16]'s last read");
    let st = tracer_at(&walk, Variant::Mha, n);
    let reads = |buf: Buf| -> Vec<String> {
        (n - 3..=n)
            .filter(|&k| trace.events[k].buf == buf)
            .map(|k| exact(trace.events[k].value))
            .collect()
    };
    for (w, h) in [(120, 40), (80, 24)] {
        let text = tracer_screen(&st, w, h);
        assert!(
            text.contains("dot product → scores[16] (b0 h1 i2 j1)"),
            "{w}×{h}\n{text}"
        );
        for (label, buf) in [("q[10..=11]", Buf::Q), ("k[6..=7]", Buf::K)] {
            let line = text
                .lines()
                .find(|l| l.contains(label))
                .unwrap_or_else(|| panic!("{w}×{h}: no {label} row\n{text}"));
            for v in reads(buf) {
                assert!(line.contains(&v), "{w}×{h}: {label} lacks {v}: {line}");
            }
        }
        // both products, to four significant digits
        let product = |k: usize| trace.events[k].value * trace.events[k + 1].value;
        let line = text.lines().find(|l| l.contains("q·k")).expect("the products");
        for k in [n - 3, n - 1] {
            assert!(line.contains(&exact(product(k))), "{w}×{h}: {line}");
        }
    }
    // the weighted sum: P's row and the v column, strided by C
    let ws = (0..trace.len())
        .find(|&n| trace.phase_at(n) == Phase::WeightedSum && trace.events[n].buf == Buf::V)
        .expect("a read of v");
    let text = tracer_screen(&tracer_at(&walk, Variant::Mha, ws), 80, 24);
    assert!(text.contains("probs[0..=2]"), "{text}");
    assert!(text.contains("v[0..=8 step 4]"), "{text}");
    assert!(text.contains("dot product → att[0] (b0 i0 h0 d0)"), "{text}");
}

/// Every row and every matrix of each buffer drawn is either on screen or named in its note.
fn nothing_vanishes(st: &Tracer, w: u16, h: u16) {
    let plan = memory_plan(st, w, h);
    let trace = st.walk.trace(st.variant).unwrap();
    for p in &plan.grids {
        let layout = trace.buffer(p.buf).unwrap().layout();
        let Some(r) = layout.row_dim() else { continue };
        let rname = layout.dims[r].name;
        let note = p.note.as_ref().map_or(String::new(), |n| n.2.clone());
        let data_y = p.labels.iter().find(|l| l.2 == "data").map(|l| l.1);
        for row in 0..layout.dims[r].size {
            let label = format!("{rname}{row}");
            let drawn = p.labels.iter().any(|l| l.2 == label && Some(l.1) != data_y);
            let named = note.split([' ', ',', ':']).any(|word| {
                word == label
                    || word
                        .strip_prefix(rname)
                        .and_then(|w| w.split_once("..="))
                        .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
                        .is_some_and(|(a, b)| (a..=b).contains(&row))
            });
            // or counted, where the panel is too narrow to name them
            let shown = (0..layout.dims[r].size)
                .filter(|k| {
                    p.labels
                        .iter()
                        .any(|l| l.2 == format!("{rname}{k}") && Some(l.1) != data_y)
                })
                .count();
            let n = layout.dims[r].size - shown;
            let counted = note.contains(&format!("… {n} more row"));
            assert!(
                drawn || named || counted,
                "{w}×{h} #{}: {}'s row {label} is neither drawn nor named: {note:?}",
                st.cursor,
                p.buf
            );
        }
        // one matrix per head of [B,H,T,T]: drawn (`h1:`) or named hidden
        if layout.dims.len() == 4 && layout.dims[1].name == "h" && r == 2 {
            for hh in 0..layout.dims[1].size {
                let drawn = p.labels.iter().any(|l| l.2 == format!("h{hh}:"));
                let named = note.contains(" hidden")
                    && note
                        .split(" hidden")
                        .next()
                        .unwrap_or("")
                        .split([' ', ','])
                        .any(|x| x == format!("h{hh}"));
                assert!(drawn || named, "{w}×{h}: {} head h{hh} vanished: {note:?}", p.buf);
            }
        }
    }
}

#[test]
fn rows_and_heads_that_do_not_fit_are_named() {
    // three heads of a T = 6 model: at 80×24 and 120×40 not every head nor row fits
    let text = "title = \"three heads\"\n[shape]\nB = 1\nT = 6\nC = 6\nH = 3\n[run]\nvariants = [\"mha\"]\n";
    let s = Scenario::parse(text, "<test>").unwrap();
    let walk = Arc::new(Walk::from_scenario(&s));
    let trace = walk.trace(Variant::Mha).unwrap();
    let mut saw_hidden_head = false;
    let mut saw_more_rows = false;
    for n in (0..trace.len()).step_by(37) {
        let st = tracer_at(&walk, Variant::Mha, n);
        for (w, h) in [(120, 40), (80, 24), (40, 12)] {
            nothing_vanishes(&st, w, h);
            let plan = memory_plan(&st, w, h);
            for p in &plan.grids {
                let note = p.note.as_ref().map_or("", |n| n.2.as_str());
                saw_hidden_head |= note.contains("h0, h1 hidden") || note.contains("hidden");
                saw_more_rows |= note.contains("more row");
            }
        }
    }
    assert!(saw_hidden_head && saw_more_rows, "the notes were exercised");
    // and the backward pass of the walkthrough, where d_probs once lost i0 silently
    let walk = Arc::new(Walk::builtin());
    let trace = walk.trace(Variant::Mha).unwrap();
    for n in (0..trace.len()).step_by(7) {
        let st = tracer_at(&walk, Variant::Mha, n);
        for (w, h) in [(120, 40), (80, 24)] {
            nothing_vanishes(&st, w, h);
        }
    }
}

#[test]
fn with_h3_the_scores_say_which_heads_are_hidden() {
    let text = "title = \"three heads\"\n[shape]\nB = 1\nT = 6\nC = 6\nH = 3\n[run]\nvariants = [\"mha\"]\n";
    let s = Scenario::parse(text, "<test>").unwrap();
    let walk = Arc::new(Walk::from_scenario(&s));
    let trace = walk.trace(Variant::Mha).unwrap();
    // the last probability written, in head 2
    let n = (0..trace.len())
        .rev()
        .find(|&n| trace.events[n].buf == Buf::Probs && trace.events[n].op == Op::Write)
        .unwrap();
    let text = tracer_screen(&tracer_at(&walk, Variant::Mha, n), 80, 24);
    assert!(text.contains("h2:"), "{text}");
    assert!(text.contains("h0, h1 hidden"), "{text}");
}
