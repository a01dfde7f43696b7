//! A learner's first screens, readable at every size: nothing a learner needs is cut.

use crate::tests::support::tui::{key, screen, settle, tracer_at, tracer_screen};
use crate::tui::app::{self, App, Msg};
use crate::tui::{Theme, TracedScenario};
use attn_trace_core::kernels::Variant;
use attn_trace_core::source;
use crossterm::event::KeyCode;

#[test]
fn the_line_being_stepped_is_on_screen_whole() {
    // the product line of the scores pass is the longest line a learner steps through
    for (w, h) in [(120, 40), (80, 24)] {
        let mut a = App::new(TracedScenario::builtin(), Theme::MONO, w, h);
        let t = a.tracer().unwrap();
        let trace = t.traced.trace(Variant::Mha).unwrap();
        let read = (t.cursor.saturating_sub(8)..t.cursor)
            .find(|&n| trace.events[n].buf == attn_trace_core::trace::Buf::K)
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

use crate::tui::screens::tracer::{self, Tracer};
use crate::tui::widgets::memory;
use attn_trace_analysis::format::exact;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::{Buf, Op, Phase};
use ratatui::widgets::Block;
use std::sync::Arc;

fn memory_plan(st: &Tracer, w: u16, h: u16) -> memory::MemoryPlan {
    let ctx = st.ctx(Theme::MONO).unwrap();
    let areas = tracer::areas(ratatui::layout::Rect::new(0, 0, w, h), st, &ctx);
    memory::plan(Block::bordered().inner(areas.memory.expect("the memory panel")), &ctx)
}

#[test]
fn a_dot_product_shows_both_operands_and_the_cell_it_writes() {
    let traced = Arc::new(TracedScenario::builtin());
    let trace = traced.trace(Variant::Mha).unwrap();
    // the read of k[7] for scores[16] (h1, i2, j1): q[10..=11] · k[6..=7]
    let n = (0..trace.len())
        .find(|&n| {
            let e = trace.events[n];
            (e.op, e.buf, e.offset) == (Op::Read, Buf::K, 7)
                && trace.phase_at(n) == Phase::Scores
                && trace.events[n + 1].offset == 16
        })
        .expect("scores[16]'s last read");
    let st = tracer_at(&traced, Variant::Mha, n);
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
    let text = tracer_screen(&tracer_at(&traced, Variant::Mha, ws), 80, 24);
    assert!(text.contains("probs[0..=2]"), "{text}");
    assert!(text.contains("v[0..=8 step 4]"), "{text}");
    assert!(text.contains("dot product → att[0] (b0 i0 h0 d0)"), "{text}");
}

/// Every row and every matrix of each buffer drawn is either on screen or named in its note.
fn nothing_vanishes(st: &Tracer, w: u16, h: u16) {
    let plan = memory_plan(st, w, h);
    let trace = st.traced.trace(st.variant).unwrap();
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
    let traced = Arc::new(TracedScenario::from_scenario(&s));
    let trace = traced.trace(Variant::Mha).unwrap();
    let mut saw_hidden_head = false;
    let mut saw_more_rows = false;
    for n in (0..trace.len()).step_by(37) {
        let st = tracer_at(&traced, Variant::Mha, n);
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
    let traced = Arc::new(TracedScenario::builtin());
    let trace = traced.trace(Variant::Mha).unwrap();
    for n in (0..trace.len()).step_by(7) {
        let st = tracer_at(&traced, Variant::Mha, n);
        for (w, h) in [(120, 40), (80, 24)] {
            nothing_vanishes(&st, w, h);
        }
    }
}

#[test]
fn with_h3_the_scores_say_which_heads_are_hidden() {
    let text = "title = \"three heads\"\n[shape]\nB = 1\nT = 6\nC = 6\nH = 3\n[run]\nvariants = [\"mha\"]\n";
    let s = Scenario::parse(text, "<test>").unwrap();
    let traced = Arc::new(TracedScenario::from_scenario(&s));
    let trace = traced.trace(Variant::Mha).unwrap();
    // the last probability written, in head 2
    let n = (0..trace.len())
        .rev()
        .find(|&n| trace.events[n].buf == Buf::Probs && trace.events[n].op == Op::Write)
        .unwrap();
    let text = tracer_screen(&tracer_at(&traced, Variant::Mha, n), 80, 24);
    assert!(text.contains("h2:"), "{text}");
    assert!(text.contains("h0, h1 hidden"), "{text}");
}

// ---- help, menu, refusals, the picker ----

use crate::tui::app::{Popup, Screen};
use crate::tui::screens::{compare, help, menu, mistakes, picker};

/// Opens `?` and scrolls the overlay to its end at `w`×`h`: every key of `keys` is seen on the
/// way, and the screen's own keys are what the overlay holds.
fn help_reaches_every_key(app: &mut App, keys: &[(&str, &str)], w: u16, h: u16) {
    app::update(app, Msg::Resize(w, h));
    key(app, KeyCode::Char('?'));
    match &app.popup {
        Some(Popup::Help(hp)) => assert_eq!(hp.keys, keys, "the overlay lists this screen's keys"),
        other => panic!("? opens the keys overlay, got {other:?}"),
    }
    let mut seen = String::new();
    // a line a press: enough presses for the tracer's list at 40×12 and then some
    for _ in 0..100 {
        seen.push_str(&screen(app, w, h));
        key(app, KeyCode::Char('j'));
    }
    let flat: String = seen.split_whitespace().collect::<Vec<_>>().join(" ");
    for (k, what) in keys.iter().chain(help::OVERLAY_KEYS) {
        assert!(
            flat.contains(k.split_whitespace().collect::<Vec<_>>().join(" ").as_str()),
            "{w}×{h}: `{k}` never shown"
        );
        let first_word = what.split_whitespace().next().unwrap_or("");
        assert!(flat.contains(first_word), "{w}×{h}: `{what}` never shown");
    }
    key(app, KeyCode::Esc);
    assert!(app.popup.is_none(), "Esc closes the overlay");
}

#[test]
fn help_lists_the_keys_of_the_screen_it_is_opened_from_and_scrolls() {
    for (w, h) in [(40, 12), (80, 24)] {
        let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
        help_reaches_every_key(&mut a, menu::KEYS, w, h);
        key(&mut a, KeyCode::Char('2'));
        help_reaches_every_key(&mut a, help::KEYS, w, h);
        key(&mut a, KeyCode::Char('q'));
        key(&mut a, KeyCode::Char('3'));
        help_reaches_every_key(&mut a, compare::KEYS, w, h);
        key(&mut a, KeyCode::Char('q'));
        key(&mut a, KeyCode::Char('4'));
        help_reaches_every_key(&mut a, picker::KEYS, w, h);
        key(&mut a, KeyCode::Esc);
        key(&mut a, KeyCode::Char('6'));
        help_reaches_every_key(&mut a, picker::KEYS, w, h);
        key(&mut a, KeyCode::Esc);
        key(&mut a, KeyCode::Char('7'));
        help_reaches_every_key(&mut a, mistakes::GALLERY_KEYS, w, h);
        key(&mut a, KeyCode::Enter);
        help_reaches_every_key(&mut a, mistakes::KEYS, w, h);
    }
    // the overlay is never taller than the screen, and says where in the list it is
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 40, 12);
    key(&mut a, KeyCode::Char('2'));
    key(&mut a, KeyCode::Char('?'));
    let text = screen(&a, 40, 12);
    assert!(text.contains("↓ 1-"), "{text}");
}

#[test]
fn the_menu_says_what_entries_1_to_3_open_and_w_goes_back_to_the_walkthrough() {
    let s = Scenario::shipped("indexing_trace").unwrap();
    let mut a = App::opening(s, None, Theme::MONO, 80, 24);
    settle(&mut a);
    key(&mut a, KeyCode::Char('q'));
    assert!(matches!(a.screen, Screen::Menu(_)));
    let text = screen(&a, 80, 24);
    assert!(text.contains("1-3: Indexing trace: B=1, T=3, C=2, baseline"), "{text}");
    assert!(text.contains("w: the built-in one"), "{text}");
    key(&mut a, KeyCode::Char('w'));
    let text = screen(&a, 80, 24);
    assert!(
        text.contains("1-3: MHA walkthrough: B=1, T=3, C=4, H=2 (built in)"),
        "{text}"
    );
    key(&mut a, KeyCode::Char('2'));
    let t = a.tracer().expect("entry 2 opens the tracer");
    assert!(t.traced.is_builtin() && t.variant == Variant::Mha);
    // at 40×12 the line is wrapped, not cut, and the menu scrolls to every entry
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 40, 12);
    let text = screen(&a, 40, 12);
    assert!(text.contains("(built in)"), "{text}");
    for k in 0..9 {
        let text = screen(&a, 40, 12);
        assert!(
            text.contains(&menu::Item::ALL[k].label(&a.traced)),
            "entry {} in view\n{text}",
            k + 1
        );
        key(&mut a, KeyCode::Down);
    }
}

#[test]
fn a_kernel_the_scenario_does_not_trace_is_refused_with_one_popup_everywhere() {
    let s = Scenario::shipped("indexing_trace").unwrap();
    let traced = Arc::new(TracedScenario::from_scenario(&s));
    let expect = traced.not_traced(Variant::Mha);
    assert!(
        expect.contains("does not trace the mha kernel: it runs only baseline"),
        "{expect}"
    );
    let popup = |a: &App| match &a.popup {
        Some(Popup::Message { title, text, error }) => (title.clone(), text.clone(), *error),
        other => panic!("a popup, got {other:?}"),
    };
    let want = ("Not traced".to_string(), expect.clone(), true);
    // menu entry 2, Compare (entry 3), and Tab in the tracer
    let mut a = App::new(Arc::clone(&traced), Theme::MONO, 80, 24);
    key(&mut a, KeyCode::Tab);
    assert_eq!(popup(&a), want, "Tab in the tracer");
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Char('q'));
    for entry in ['2', '3'] {
        key(&mut a, KeyCode::Char(entry));
        assert_eq!(popup(&a), want, "menu entry {entry}");
        assert!(matches!(a.screen, Screen::Menu(_)), "nothing opens behind it");
        let text = screen(&a, 80, 24);
        assert!(text.contains("Not traced"), "{text}");
        key(&mut a, KeyCode::Esc);
    }
}

#[test]
fn the_picker_shows_what_each_scenario_teaches_and_browses_folders() {
    let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios"));
    let open = crate::tui::screens::open::list(dir.clone());
    assert!(
        open.entries.len() >= 12,
        "the shipped scenarios: {}",
        open.entries.len()
    );
    for e in &open.entries {
        let (_, about) = e.info.as_ref().expect("shipped scenarios parse");
        let about = about
            .as_deref()
            .unwrap_or_else(|| panic!("{}: no about", e.path.display()));
        assert!(!about.starts_with("What this teaches"), "{about}");
        assert!(about.len() > 40, "{}: {about}", e.path.display());
    }
    let why = open
        .entries
        .iter()
        .find(|e| e.path.ends_with("why_sqrt_d.toml"))
        .unwrap();
    assert!(
        why.info
            .as_ref()
            .unwrap()
            .1
            .as_deref()
            .unwrap()
            .starts_with("why scores are divided by sqrt(D).")
    );
    // browse: the folders follow the files, learner/, mistakes/ and then the parent
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    a.scenarios_dir = dir.clone();
    key(&mut a, KeyCode::Char('4'));
    for _ in 0..open.entries.len() + 1 {
        key(&mut a, KeyCode::Down);
    }
    let text = screen(&a, 80, 24);
    assert!(
        text.contains("mistakes/") && text.contains("Enter opens the folder"),
        "{text}"
    );
    key(&mut a, KeyCode::Enter);
    let Screen::Open(o) = &a.screen else {
        panic!("still the picker")
    };
    assert!(o.dir.ends_with("scenarios/mistakes"), "{}", o.dir.display());
    assert_eq!(o.entries.len(), 7);
    let text = screen(&a, 80, 24);
    assert!(
        text.contains("Mistake 3: mask applied by multiplying the scores"),
        "{text}"
    );
    assert!(text.contains("../  (parent folder)"), "{text}");
    key(&mut a, KeyCode::Left);
    let Screen::Open(o) = &a.screen else {
        panic!("still the picker")
    };
    assert!(o.dir.ends_with("scenarios"), "← goes up: {}", o.dir.display());
    // typing a folder's path and Enter browses it too
    for c in dir.join("mistakes").display().to_string().chars() {
        key(&mut a, KeyCode::Char(c));
    }
    key(&mut a, KeyCode::Enter);
    let Screen::Open(o) = &a.screen else {
        panic!("still the picker")
    };
    assert!(o.dir.ends_with("mistakes") && o.input.is_empty());
    let _ = picker::KEYS;
}

// ---- header and status lines ----

/// The last `n` lines of a screen joined with single spaces.
fn tail_text(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len() - n..]
        .iter()
        .flat_map(|l| l.split_whitespace())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn at_80x24_the_header_and_the_status_line_are_never_cut() {
    let mut a = App::new(TracedScenario::builtin(), Theme::MONO, 80, 24);
    // the header says what the phase computes, whole
    let text = screen(&a, 80, 24);
    let head = text.lines().next().unwrap().trim_end();
    assert_eq!(
        head,
        " MHA walkthrough: B=1, T=3, C=4, H=2 · scores S = Q·Kᵀ/√D + causal mask"
    );
    // the keys hint is one that fits, ending in `? keys`
    let status = text.lines().last().unwrap().trim_end();
    assert!(status.ends_with("? keys"), "{status}");
    // a long message goes on a second line rather than be cut
    key(&mut a, KeyCode::Char('w'));
    let msg = a.tracer().unwrap().message.clone().unwrap();
    assert!(msg.len() > 50, "{msg}");
    let text = screen(&a, 80, 24);
    assert!(tail_text(&text, 2).contains(&msg), "{msg}\n{text}");
    // so does a goto's refusal
    key(&mut a, KeyCode::Char('g'));
    for c in "b=0 h=1 i=2 j=9".chars() {
        key(&mut a, KeyCode::Char(c));
    }
    let typing = screen(&a, 80, 24);
    assert!(
        typing.lines().last().unwrap().contains("goto: b=0 h=1 i=2 j=9▏"),
        "{typing}"
    );
    key(&mut a, KeyCode::Enter);
    let msg = a.tracer().unwrap().message.clone().unwrap();
    let text = screen(&a, 80, 24);
    assert!(tail_text(&text, 2).contains(&msg), "{msg}\n{text}");
    // and at 40×12 the header wraps instead of losing the title
    let a = App::new(TracedScenario::builtin(), Theme::MONO, 40, 12);
    let text = screen(&a, 40, 12);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("MHA walkthrough: B=1, T=3, C=4, H=2"),
        "{text}"
    );
}

#[test]
fn the_mistakes_view_says_where_the_runs_diverge_whole_at_80x24() {
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    key(&mut a, KeyCode::Char('7'));
    key(&mut a, KeyCode::Char('3')); // mask by multiply
    key(&mut a, KeyCode::Char('d'));
    let Screen::Mistakes(view) = &a.screen else {
        panic!("side by side")
    };
    let msg = view.message.clone().expect("d says where they diverge");
    assert!(msg.starts_with("diverge at #"), "{msg}");
    let text = screen(&a, 80, 24);
    assert!(tail_text(&text, 3).contains(&msg), "{msg}\n{text}");
    // the header keeps the mistake that runs here
    assert!(text.lines().next().unwrap().contains("here runs MISTAKE 3"), "{text}");
}

#[test]
fn the_train_forms_hints_are_whole_at_80x24() {
    use crate::tui::screens::train::Field;
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    key(&mut a, KeyCode::Char('5'));
    let text = screen(&a, 80, 24);
    let flat = text.replace('│', " ").split_whitespace().collect::<Vec<_>>().join(" ");
    for f in Field::ALL {
        let hint = f.hint().split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(&hint), "{f:?}: `{hint}` is cut\n{text}");
    }
    // and an error in place of a hint
    key(&mut a, KeyCode::Delete);
    for c in "no/such/file".chars() {
        key(&mut a, KeyCode::Char(c));
    }
    let text = screen(&a, 80, 24);
    let flat = text.replace('│', " ").split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(train) = a.train.as_ref() else {
        panic!("the form")
    };
    let err = train.form.checked.errors[Field::Dataset as usize]
        .clone()
        .expect("an error");
    assert!(flat.contains(&format!("✗ {err}")), "`{err}` is cut\n{text}");
}

// ---- a paged cache's block table, and cells not written yet ----

/// The tracer on `scenario`'s run of `v` at event `n`, drawn `w`×`h` (monochrome).
fn shipped_at(
    scenario: &str,
    v: Variant,
    n: impl Fn(&attn_trace_core::trace::Trace) -> usize,
    w: u16,
    h: u16,
) -> String {
    let traced = Arc::new(TracedScenario::from_scenario(&Scenario::shipped(scenario).unwrap()));
    let trace = traced.trace(v).unwrap();
    let st = tracer_at(&traced, v, n(trace));
    tracer_screen(&st, w, h)
}

/// The write of `buf[off]` (its first).
fn write_of(trace: &attn_trace_core::trace::Trace, buf: Buf, off: usize) -> usize {
    trace.index.writes(buf, off)[0] as usize
}

#[test]
fn a_paged_caches_block_table_is_on_screen_where_the_offset_uses_it_in_integers() {
    // paged_decode.toml: the score of sequence 1, head 1, step 5 and key 3 (scores[141]): its
    // key row is in block j_phys = block_table[4] = 0
    for (w, h) in [(120, 40), (80, 24)] {
        let text = shipped_at("paged_decode", Variant::Mha, |t| write_of(t, Buf::Scores, 141), w, h);
        assert!(text.contains("block_table [2,3]"), "{w}×{h}: no block table in\n{text}");
        assert!(!text.contains("no room for block_table"), "{w}×{h}:\n{text}");
        // the table's rows, block ids as integers
        assert!(text.contains("b1      5      0      3"), "{w}×{h}:\n{text}");
        assert!(!text.contains("5.00") && !text.contains("3.00"), "{w}×{h}:\n{text}");
        if w >= 110 {
            // the event log and the variables panel beside it
            assert!(text.contains("read  block_table[4] = 0  (b1 blk1)"), "{w}×{h}:\n{text}");
            assert!(text.contains("block_table[4] = 0"), "{text}");
        }
    }
}

#[test]
fn cells_not_written_yet_are_drawn_apart_from_zeros_with_a_legend_on_every_memory_panel() {
    // split_kv.toml (T=8, P=3 parts of L=3): at step 7's write of head 0's lse_part of part 0,
    // parts 1 and 2 of that row are still to come, and w_part has no row of step 7 yet
    let (t, parts, heads) = (8usize, 3usize, 2usize);
    let lse = |hh: usize, tt: usize, p: usize| (hh * t + tt) * parts + p;
    let _ = heads;
    for (w, h) in [(120, 40), (80, 24)] {
        let traced = Arc::new(TracedScenario::from_scenario(&Scenario::shipped("split_kv").unwrap()));
        let trace = traced.trace(Variant::Mha).unwrap();
        let n = write_of(trace, Buf::LsePart, lse(0, 7, 0));
        let st = tracer_at(&traced, Variant::Mha, n);
        let text = tracer_screen(&st, w, h);
        let row = text
            .lines()
            .find(|l| l.contains("│t7 ") || l.contains("│t7  "))
            .unwrap_or_else(|| panic!("{w}×{h}: no row t7 in\n{text}"));
        assert!(row.contains("--"), "{w}×{h}: {row}\n{text}");
        assert!(!row.contains("0.00"), "{w}×{h}: unwritten cells drawn as zeros: {row}");
        // the legend of the cell styles, on the panel's bottom border
        assert!(text.contains("-- unwritten"), "{w}×{h}: no legend in\n{text}");
        assert!(text.contains("masked"), "{w}×{h}:\n{text}");
    }
    // every memory panel: the walkthrough's too, at both sizes
    for (w, h) in [(120, 40), (80, 24)] {
        let a = App::new(TracedScenario::builtin(), Theme::MONO, w, h);
        let text = screen(&a, w, h);
        assert!(text.contains("-- unwritten"), "{w}×{h}: no legend in\n{text}");
    }
}

#[test]
fn the_help_of_the_tracer_says_what_each_cell_style_means() {
    let mut a = App::new(TracedScenario::builtin(), Theme::MONO, 120, 60);
    key(&mut a, KeyCode::Char('?'));
    key(&mut a, KeyCode::End);
    let text = screen(&a, 120, 60);
    for want in [
        "memory: a cell not written yet",
        "memory: a masked score",
        "memory: written in this phase",
        "memory: this access",
    ] {
        assert!(text.contains(want), "{want:?} not in\n{text}");
    }
}

/// An operand's offsets are elided with `…` only where it stands for two or more: the merge of
/// split_kv.toml reads o_part at 84, 88 and 92, which are listed whole ("o_part[84, 88, …, 92]"
/// elided nothing).
#[test]
fn a_short_list_of_offsets_is_never_elided() {
    let text = shipped_at("split_kv", Variant::Mha, |t| write_of(t, Buf::Att, 56), 120, 40);
    assert!(text.contains("o_part[84, 88, 92]"), "{text}");
    assert!(!text.contains(", …, 92]"), "{text}");
}

/// What the memory grid leaves out is said in the panel's language: in Chinese the note's
/// colon is full-width ("… 还有 5 行：i0..=2, i4..=5"), as everywhere else in the catalog.
#[test]
fn the_note_of_hidden_rows_has_a_chinese_colon() {
    use attn_trace_i18n::{self as i18n, Lang};
    i18n::with_lang(Lang::ZhCn, || {
        for (w, h) in [(80, 24), (120, 40)] {
            let text = shipped_at("paged_decode", Variant::Mha, |t| write_of(t, Buf::Scores, 57), w, h);
            // a wide character's second cell reads as a space here
            let flat = text.replace(' ', "");
            assert!(flat.contains("…还有5行：i0..=2,i4..=5"), "{w}×{h}:\n{text}");
            assert!(!flat.contains("行:"), "{w}×{h}:\n{text}");
        }
    });
}

/// A scenario's `about` is TOML text broken over lines: the picker's about box wraps it as the
/// prose it is, a line break read as a space ("v,\nscores" drew as "v,scores").
#[test]
fn the_pickers_about_box_keeps_the_spaces_between_lines() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
        key(&mut a, KeyCode::Char('4'));
        // the box's inside, its lines joined as the words they wrap
        let about = |a: &App| {
            let lines = crate::tests::support::tui::screen_lines(a, w, h);
            let top = lines.iter().position(|l| l.contains(" about")).expect("the about box");
            let inside: Vec<String> = lines[top + 1..]
                .iter()
                .take_while(|l| l.starts_with('│'))
                .map(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()).to_string())
                .collect();
            (inside.join(" "), lines)
        };
        // down the list to the walkthrough, whose about is three lines of TOML
        let mut moves = 0;
        while !about(&a).0.contains("Starts at the input x") {
            assert!(moves < 60, "{w}×{h}: no mha_walkthrough.toml in the picker");
            key(&mut a, KeyCode::Down);
            moves += 1;
        }
        let (prose, lines) = about(&a);
        for want in ["into q, k and v, scores, softmax", "of backward. Every value"] {
            assert!(
                prose.contains(want),
                "{w}×{h}: {want:?} not in {prose:?}\n{}",
                lines.join("\n")
            );
        }
    }
}
