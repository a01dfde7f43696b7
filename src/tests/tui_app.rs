//! The app driven through `update` as the terminal drives it: navigation, goto, who-wrote /
//! who-reads, breakpoints, variant and pass switching, mouse selection, bad scenario files.

use crate::tests::support::tui::{chars, draw, goto, key, settle, tracer};
use crate::tui::app::{self, App, Msg, Popup, Screen};
use crate::tui::screens::tracer;
use crate::tui::widgets::memory;
use crate::tui::{Theme, TracedScenario};
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Buf, Op, Phase};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use std::io::Write;

/// (op, buffer, offset) of the current event.
fn here(app: &App) -> (Op, Buf, usize) {
    let t = tracer(app);
    let e = t.traced.trace(t.variant).unwrap().events[t.cursor];
    (e.op, e.buf, e.offset as usize)
}

fn phase(app: &App) -> Phase {
    let t = tracer(app);
    t.traced.trace(t.variant).unwrap().phase_at(t.cursor)
}

fn app() -> App {
    App::new(TracedScenario::builtin(), Theme::MONO, 120, 40)
}

#[test]
fn goto_accepts_events_elements_cells_and_phases() {
    let mut a = app();
    goto(&mut a, "17");
    assert_eq!(tracer(&a).cursor, 17);
    goto(&mut a, "b=0 h=1 i=2 j=1");
    assert_eq!(here(&a), (Op::Write, Buf::Scores, 16));
    goto(&mut a, "q[10]");
    assert_eq!(
        here(&a),
        (Op::Write, Buf::Q, 10),
        "q[10] is first accessed when the split writes it"
    );
    assert_eq!(tracer(&a).pinned, Some((Buf::Q, 10)));
    goto(&mut a, "scores[0,1,2,1]");
    assert_eq!(here(&a), (Op::Write, Buf::Scores, 16));
    goto(&mut a, "softmax");
    assert_eq!(phase(&a), Phase::Softmax);
    let before = tracer(&a).cursor;
    for bad in ["99999999", "b=0 h=5 i=0 j=0", "nope[3]", "q[999]", "hello"] {
        goto(&mut a, bad);
        assert_eq!(tracer(&a).cursor, before, "{bad} must not move the cursor");
        assert!(tracer(&a).message.is_some(), "{bad} explains itself");
    }
    // Esc abandons the prompt
    key(&mut a, KeyCode::Char('g'));
    chars(&mut a, "12");
    key(&mut a, KeyCode::Esc);
    assert_eq!(tracer(&a).cursor, before);
    assert!(tracer(&a).prompt.is_none());
}

#[test]
fn who_wrote_and_who_reads_follow_the_selected_cell() {
    let mut a = app();
    goto(&mut a, "b=0 h=1 i=2 j=1");
    let write = tracer(&a).cursor;
    // r: the next read of scores[16] is softmax's row maximum
    key(&mut a, KeyCode::Char('r'));
    assert_eq!(here(&a), (Op::Read, Buf::Scores, 16));
    assert_eq!(phase(&a), Phase::Softmax);
    // w: back to the write that produced it
    key(&mut a, KeyCode::Char('w'));
    assert_eq!(tracer(&a).cursor, write);
    // before it, nothing wrote the cell: the cursor stays and the message says so
    key(&mut a, KeyCode::Char('w'));
    assert_eq!(tracer(&a).cursor, write);
    assert!(tracer(&a).message.as_deref().unwrap().contains("initial value"));
}

#[test]
fn breakpoints_continue_forward_and_backward() {
    let mut a = app();
    goto(&mut a, "scores[16]");
    key(&mut a, KeyCode::Char('b'));
    assert!(tracer(&a).breakpoints.contains(&(Buf::Scores, 16)));
    key(&mut a, KeyCode::Home);
    key(&mut a, KeyCode::Char('c'));
    assert_eq!(here(&a), (Op::Write, Buf::Scores, 16));
    let first = tracer(&a).cursor;
    key(&mut a, KeyCode::Char('c'));
    assert_eq!(here(&a), (Op::Read, Buf::Scores, 16));
    key(&mut a, KeyCode::Char('C'));
    assert_eq!(tracer(&a).cursor, first);
    // toggling it off again leaves nothing to continue to
    key(&mut a, KeyCode::Char('b'));
    key(&mut a, KeyCode::Char('c'));
    assert_eq!(tracer(&a).cursor, first);
}

#[test]
fn stepping_iterations_and_phases() {
    let mut a = app();
    goto(&mut a, "b=0 h=1 i=2 j=1");
    let w = tracer(&a).cursor;
    // the score's dot product: q[10]·k[6] + q[11]·k[7], four reads before the write
    key(&mut a, KeyCode::Char('p'));
    assert_eq!(here(&a), (Op::Read, Buf::K, 7));
    key(&mut a, KeyCode::Char('k'));
    assert_eq!(here(&a), (Op::Read, Buf::Q, 11));
    key(&mut a, KeyCode::Char('k'));
    assert_eq!(here(&a), (Op::Read, Buf::Q, 10));
    assert_eq!(tracer(&a).cursor, w - 4);
    key(&mut a, KeyCode::Char('j'));
    assert_eq!(here(&a), (Op::Read, Buf::Q, 11));
    // J: the next key j of the same query
    key(&mut a, KeyCode::Char('J'));
    assert_eq!(tracer(&a).cursor, w + 1);
    assert_eq!(here(&a), (Op::Read, Buf::Q, 10));
    key(&mut a, KeyCode::Char(']'));
    assert_eq!(phase(&a), Phase::Softmax);
    key(&mut a, KeyCode::Char('['));
    assert_eq!(phase(&a), Phase::Scores);
    key(&mut a, KeyCode::End);
    let last = tracer(&a).cursor;
    key(&mut a, KeyCode::Char('n'));
    assert_eq!(tracer(&a).cursor, last, "n at the end stays");
    key(&mut a, KeyCode::Home);
    key(&mut a, KeyCode::Char('p'));
    assert_eq!(tracer(&a).cursor, 0, "p at the start stays");
}

#[test]
fn tab_finds_the_same_element_in_the_other_layout_and_f_switches_pass() {
    let mut a = app();
    goto(&mut a, "b=0 h=1 i=2 j=1");
    key(&mut a, KeyCode::Tab);
    assert_eq!(tracer(&a).variant, Variant::Baseline);
    assert_eq!(
        here(&a),
        (Op::Write, Buf::Scores, 7),
        "baseline keeps scores[0,2,1] at data[7]"
    );
    key(&mut a, KeyCode::Tab);
    assert_eq!(tracer(&a).variant, Variant::Mha);
    let fwd = tracer(&a).cursor;
    key(&mut a, KeyCode::Char('f'));
    let t = tracer(&a);
    assert_eq!(
        t.traced.trace(t.variant).unwrap().view(t.cursor).pass.name(),
        "backward"
    );
    key(&mut a, KeyCode::Char('f'));
    assert_eq!(tracer(&a).cursor, fwd, "f comes back to where forward was left");
    // in the backward pass an element goto lands on its score gradient
    key(&mut a, KeyCode::Char('f'));
    goto(&mut a, "b=0 h=1 i=2 j=1");
    assert_eq!(here(&a), (Op::Write, Buf::DScores, 16));
}

#[test]
fn clicking_a_memory_cell_selects_it_and_arrows_move_it() {
    let mut a = app();
    let area = Rect::new(0, 0, 120, 40);
    let (buf, off, x, y) = {
        let t = tracer(&a);
        let ctx = t.ctx(Theme::MONO).unwrap();
        let areas = tracer::areas(area, t, &ctx);
        let inner = ratatui::widgets::Block::bordered().inner(areas.memory.unwrap());
        let plan = memory::plan(inner, &ctx);
        let q = plan
            .grids
            .iter()
            .find(|p| p.buf == Buf::Q)
            .expect("q is drawn in the scores phase");
        let spot = q.cells.iter().find(|s| s.off == 5).expect("q[5] is drawn");
        (q.buf, spot.off, spot.x + 1, spot.y)
    };
    let click = MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    };
    app::update(&mut a, Msg::Mouse(click));
    assert_eq!(tracer(&a).pinned, Some((buf, off)));
    app::update(&mut a, Msg::Key(KeyEvent::new(KeyCode::Right, KeyModifiers::SHIFT)));
    assert_eq!(tracer(&a).pinned, Some((Buf::Q, 6)));
    app::update(&mut a, Msg::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::SHIFT)));
    assert_eq!(tracer(&a).pinned, Some((Buf::Q, 10)), "down one row of C = 4");
    // w now asks about q[10]: the split wrote it
    key(&mut a, KeyCode::Char('w'));
    assert_eq!(here(&a), (Op::Write, Buf::Q, 10));
    assert_eq!(phase(&a), Phase::Split);
    key(&mut a, KeyCode::Esc);
    assert_eq!(tracer(&a).pinned, None, "Esc clears the selection before leaving");
    key(&mut a, KeyCode::Esc);
    assert!(matches!(a.screen, Screen::Menu(_)));
}

#[test]
fn a_bad_scenario_file_shows_its_error_in_a_popup() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "title = \"bad\"\n[shape]\nB = 1\nT = 3\nC = -2\nH = 2").unwrap();
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    key(&mut a, KeyCode::Char('4'));
    assert!(matches!(a.screen, Screen::Open(_)));
    chars(&mut a, &path.display().to_string());
    key(&mut a, KeyCode::Enter);
    match &a.popup {
        Some(Popup::Message { text, error, .. }) => {
            assert!(*error);
            assert!(text.contains("bad.toml"), "{text}");
            assert!(text.contains("C"), "{text}");
        }
        other => panic!("expected an error popup, got {other:?}"),
    }
    assert!(matches!(a.screen, Screen::Open(_)), "the screen stays");
    key(&mut a, KeyCode::Char('x'));
    assert!(a.popup.is_none(), "any key closes the popup");
}

#[test]
fn the_menu_opens_every_screen_and_q_quits() {
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    key(&mut a, KeyCode::Enter);
    assert_eq!(tracer(&a).variant, Variant::Baseline);
    assert_eq!(
        here(&a),
        (Op::Write, Buf::Scores, 7),
        "the baseline opens on the focus element"
    );
    key(&mut a, KeyCode::Char('q'));
    key(&mut a, KeyCode::Char('5'));
    assert!(
        matches!(a.screen, Screen::Train),
        "5 opens the train screen (src/tests/tui_train.rs)"
    );
    key(&mut a, KeyCode::Esc);
    key(&mut a, KeyCode::Char('3'));
    assert!(matches!(a.screen, Screen::Compare(_)));
    key(&mut a, KeyCode::Enter);
    assert_eq!(
        here(&a),
        (Op::Write, Buf::Scores, 16),
        "Enter in compare traces the element"
    );
    // q goes back the way it came: tracer → compare → the menu, as it was left → quit
    key(&mut a, KeyCode::Char('q'));
    assert!(matches!(a.screen, Screen::Compare(_)), "q returns to compare");
    key(&mut a, KeyCode::Char('q'));
    assert!(
        matches!(a.screen, Screen::Menu(ref m) if m.selected == 2),
        "then to the menu on Compare"
    );
    assert!(!a.quit);
    key(&mut a, KeyCode::Char('q'));
    assert!(a.quit);
}

#[test]
fn open_lists_the_shipped_scenarios_and_opens_one_at_its_focus() {
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    a.scenarios_dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios"));
    key(&mut a, KeyCode::Char('4'));
    let Screen::Open(open) = &a.screen else {
        panic!("the open screen")
    };
    let k = open
        .entries
        .iter()
        .position(|e| e.path.ends_with("mha_walkthrough.toml"))
        .expect("the walkthrough is listed");
    let (title, about) = open.entries[k].info.as_ref().expect("it parses");
    assert_eq!(title, "MHA walkthrough: B=1, T=3, C=4, H=2");
    assert!(about.as_deref().is_some_and(|a| a.contains("Starts at the input x")));
    assert!(
        open.entries.iter().all(|e| e.info.is_ok()),
        "every shipped scenario is valid"
    );
    for _ in 0..k {
        key(&mut a, KeyCode::Down);
    }
    key(&mut a, KeyCode::Enter);
    settle(&mut a);
    assert_eq!(here(&a), (Op::Write, Buf::Scores, 16));
    assert!(tracer(&a).traced.source.ends_with("mha_walkthrough.toml"));
}

#[test]
fn todays_attention_lists_every_scenario_its_doc_names_in_its_order() {
    // the menu's m: the scenarios docs/modern_attention.md walks through, in the order it names
    // them (windows, sinks, paged and split caches, MLA among them), then flash and
    // cross-attention
    let root = env!("CARGO_MANIFEST_DIR");
    let doc = std::fs::read_to_string(format!("{root}/docs/modern_attention.md")).unwrap();
    let mut named: Vec<&str> = Vec::new();
    for part in doc.split("scenarios/").skip(1) {
        let Some(stem) = part.split(".toml").next() else {
            continue;
        };
        if stem.chars().all(|c| c.is_ascii_lowercase() || c == '_') && !named.contains(&stem) {
            named.push(stem);
        }
    }
    assert!(named.len() >= 12 && named.contains(&"mla_decode"), "{named:?}");
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 80, 24);
    a.scenarios_dir = std::path::PathBuf::from(format!("{root}/scenarios"));
    key(&mut a, KeyCode::Char('m'));
    let Screen::Open(open) = &a.screen else {
        panic!("the open screen")
    };
    let listed: Vec<String> = open
        .entries
        .iter()
        .filter(|e| e.path.extension().is_some_and(|x| x == "toml"))
        .map(|e| e.path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(listed[..named.len()], named[..], "{listed:?}");
    assert_eq!(listed[named.len()..], ["flash", "cross_attention"]);
    assert!(open.entries.iter().all(|e| e.info.is_ok()));
}

#[test]
fn opening_a_scenario_traces_on_a_worker_behind_a_progress_screen() {
    use attn_trace_core::scenario::Scenario;
    use std::time::{Duration, Instant};
    let s = Scenario::shipped("heads_h4").expect("shipped");
    let total: u64 = s.variants.iter().map(|&v| s.estimated_events(v).get().unwrap()).sum();
    let mut a = App::opening(s, Some(Variant::Baseline), Theme::MONO, 80, 24);
    let Screen::Loading(l) = &a.screen else {
        panic!("the app opens on the progress screen")
    };
    assert_eq!(l.total, total, "the closed-form count of every variant's events");
    assert!(a.wants_tick(), "ticks keep the progress moving");
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 24)).unwrap();
    term.draw(|f| app::render(f, &a)).unwrap();
    let text: String = term
        .backend()
        .buffer()
        .content()
        .iter()
        .map(ratatui::buffer::Cell::symbol)
        .collect();
    assert!(
        text.contains("tracing…") && text.contains(&format!("of {total} events")),
        "{text}"
    );
    let started = Instant::now();
    let progress = l.progress().clone();
    while matches!(a.screen, Screen::Loading(_)) {
        assert!(started.elapsed() < Duration::from_secs(60), "tracing finishes");
        std::thread::sleep(Duration::from_millis(5));
        app::update(&mut a, Msg::Tick);
    }
    assert_eq!(tracer(&a).variant, Variant::Baseline, "--variant is honoured");
    assert_eq!(
        tracer(&a).traced.title,
        a.traced.title,
        "the opened scenario becomes the menu's"
    );
    let recorded: u64 = a.traced.runs.iter().map(|r| r.events() as u64).sum();
    assert_eq!(recorded, total);
    // the counter moves in steps of 64k events per run, so it ends within one step per run
    let runs = a.traced.runs.len() as u64;
    assert!(
        progress.done() <= total
            && progress.done() + runs * attn_trace_core::trace::Logger::PROGRESS_STEP as u64 >= total
    );

    // Esc while tracing goes back to the menu
    let s = Scenario::shipped("heads_h4").expect("shipped");
    let mut a = App::opening(s, None, Theme::MONO, 80, 24);
    key(&mut a, KeyCode::Esc);
    assert!(matches!(a.screen, Screen::Menu(_)), "Esc cancels the opening");
}

#[test]
fn compare_names_offsets_as_the_kernels_do_and_writes_inclusive_ranges() {
    let mut a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
    key(&mut a, KeyCode::Char('3'));
    key(&mut a, KeyCode::Char(']'));
    key(&mut a, KeyCode::Char(']')); // weighted sum: att's rows start at ai / a_base
    let text = draw(&a, 120, 40);
    assert!(text.contains("weighted_sum"), "{text}");
    // element b=0 h=1 i=2: ai = (0*3 + 2)*4 = 8, a_base = ((0*3 + 2)*2 + 1)*2 = 10
    assert!(
        text.contains("baseline row i=2: data[8..=11] (ai = (bb*S + i)*C"),
        "{text}"
    );
    assert!(
        text.contains("mha head 1 of row i=2: data[10..=11] (a_base = ((bb*S + i)*H + hh)*D"),
        "{text}"
    );
    assert!(!text.contains("q_base"), "{text}");
}

#[test]
fn compare_shows_mha_beside_gqa_with_the_kv_head_each_query_head_reads() {
    use attn_trace_core::scenario::Scenario;
    let s = Scenario::shipped("gqa").expect("shipped");
    let mut a = App::with_menu(TracedScenario::from_scenario(&s), Theme::MONO, 120, 40);
    key(&mut a, KeyCode::Char('3'));
    assert!(matches!(a.screen, Screen::Compare(_)));
    let text = draw(&a, 120, 40);
    assert!(text.contains("Compare MHA and GQA"), "{text}");
    // the focus element: query head 3 of H=4 over H_kv=2 reads kv head 1, shared with head 2
    assert!(
        text.contains("gqa reads kv_h = h/(H/H_kv) = 3/(4/2) = 1, shared by heads 2..=3"),
        "{text}"
    );
    // key j=2: MHA's head 3 at ((0*4 + 2)*4 + 3)*2 = 22, GQA's kv head 1 at ((0*4 + 2)*2 + 1)*2 = 10
    assert!(text.contains("key j=2 in mha: k[22..=23]"), "{text}");
    assert!(
        text.contains("key j=2 in gqa: k[10..=11], k_base = ((bb*T + j)*H_kv + kv_h)*D = ((0*4 + 2)*2 + 1)*2"),
        "{text}"
    );
    // k is [1,4,8] = 32 values in MHA, [1,4,4] = 16 in GQA
    assert!(
        text.contains("k and v: mha 2 × 32 values, gqa 2 × 16 (H_kv/H = 2/4): 50% of MHA's"),
        "{text}"
    );
    assert!(text.contains("out: identical, bit for bit"), "{text}");
}

#[test]
fn tab_moves_through_the_scenarios_kernels_in_its_order_and_shift_tab_back() {
    use attn_trace_core::scenario::Scenario;
    let text = "title = \"t\"\n[shape]\nB = 1\nT = 3\nC = 8\nH = 4\nH_kv = 2\n[run]\nvariants = [\"gqa\", \"baseline\", \"mha\"]\n";
    let s = Scenario::parse(text, "t.toml").unwrap();
    let mut a = App::opening(s, Some(Variant::Gqa), Theme::MONO, 120, 40);
    settle(&mut a);
    assert_eq!(tracer(&a).variant, Variant::Gqa);
    let mut seen = Vec::new();
    for _ in 0..3 {
        key(&mut a, KeyCode::Tab);
        seen.push(tracer(&a).variant);
    }
    assert_eq!(seen, [Variant::Baseline, Variant::Mha, Variant::Gqa]);
    key(&mut a, KeyCode::BackTab);
    assert_eq!(tracer(&a).variant, Variant::Mha);
}

#[test]
fn menu_entry_two_steps_through_the_heads_a_scenario_traces() {
    // a scenario of today's attention that traces no MHA: entry 2 names and opens its own
    // kernel (MLA, GQA, flash) instead of refusing; with MHA traced it stays MHA
    use attn_trace_core::scenario::Scenario;
    for (name, label, variant) in [
        ("mla", "2 Step through multi-head latent attention", Variant::Mla),
        ("window_decode", "2 Step through grouped-query attention", Variant::Gqa),
        ("sliding_window", "2 Step through multi-head attention", Variant::Mha),
    ] {
        let s = Scenario::shipped(name).expect("shipped");
        let mut a = App::with_menu(TracedScenario::from_scenario(&s), Theme::MONO, 120, 40);
        let text = draw(&a, 120, 40);
        assert!(text.contains(label), "{name}:\n{text}");
        key(&mut a, KeyCode::Char('2'));
        settle(&mut a);
        assert!(matches!(a.screen, Screen::Tracer(_)), "{name}: the tracer opens");
        assert_eq!(tracer(&a).variant, variant, "{name}");
    }
}
