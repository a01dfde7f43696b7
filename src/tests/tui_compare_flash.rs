//! Compare on a scenario that traces MHA and flash: the same `P[i,j]` stored by MHA and never
//! stored by flash, each number on screen found again here in the two logs (searched event by
//! event, not through the screen's own lookup), and each side's global traffic equal to the
//! closed-form counts.

use crate::tests::support::tui::{draw, key};
use crate::tui::app::{App, Screen};
use crate::tui::{Theme, TracedScenario};
use attn_trace_analysis::explain::num;
use attn_trace_analysis::traffic::closed_form;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::{Buf, Op, Pass, Phase, Trace};
use crossterm::event::KeyCode;

/// The screen's text with the panel borders and line breaks taken out, so that a sentence the
/// notes wrapped reads whole again.
fn joined(screen: &str) -> String {
    screen
        .lines()
        .map(|l| l.trim_matches(|c| c == '"' || c == '│' || c == ' ').to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The writes of `buf` in `phase` made while the loop variables were `vars`, in order.
fn writes_with(trace: &Trace, buf: Buf, phase: Phase, vars: &[(&str, usize)]) -> Vec<usize> {
    (0..trace.len())
        .filter(|&n| {
            let e = trace.events[n];
            e.buf == buf && e.op == Op::Write && trace.phase_at(n) == phase && {
                let v = trace.view(n).vars;
                vars.iter().all(|&(name, x)| v.contains(&(name, x)))
            }
        })
        .collect()
}

fn flash_app(w: u16, h: u16) -> App {
    let s = Scenario::shipped("flash").expect("shipped");
    let mut a = App::with_menu(TracedScenario::from_scenario(&s), Theme::MONO, w, h);
    key(&mut a, KeyCode::Char('3'));
    assert!(matches!(a.screen, Screen::Compare(_)), "entry 3 opens Compare");
    a
}

#[test]
fn the_menu_names_the_pair_compare_puts_side_by_side() {
    let s = Scenario::shipped("flash").expect("shipped");
    let a = App::with_menu(TracedScenario::from_scenario(&s), Theme::MONO, 120, 40);
    assert!(draw(&a, 120, 40).contains("3 Compare MHA and flash"));
    let a = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
    assert!(draw(&a, 120, 40).contains("3 Compare baseline and MHA"));
}

#[test]
fn forward_shows_mhas_stored_p_beside_flashs_tile_values_all_from_the_logs() {
    let a = flash_app(120, 40);
    let text = draw(&a, 120, 40);
    let flat = joined(&text);
    assert!(
        text.contains("Compare MHA and flash · softmax · P[i,j]: stored by MHA, never by flash"),
        "{text}"
    );
    let traced = &a.traced;
    let (mha, flash) = (
        traced.trace(Variant::Mha).unwrap(),
        traced.trace(Variant::Flash).unwrap(),
    );
    // the focus: b=0 h=1 i=3 j=2; tiles of 2×2, so query tile i0=2 (ii=1) and key tile j0=2 (jj=0)
    let tile = [("bb", 0), ("hh", 1), ("i0", 2), ("j0", 2), ("ii", 1), ("jj", 0)];
    let w = writes_with(flash, Buf::STile, Phase::Flash, &tile);
    assert_eq!(w.len(), 2, "the score, then e^(S − m) over it");
    let (s, p_tilde) = (flash.events[w[0]].value, flash.events[w[1]].value);
    assert!(
        flat.contains("s_tile[ii*bc + jj] = s_tile[1*2 + 0] = s_tile[2]"),
        "{flat}"
    );
    assert!(flat.contains(&format!("S = q·k/√D = {} (#{})", num(s), w[0])), "{flat}");
    // m after this key tile: the write of m[1] that follows
    let m = (w[1]..flash.len())
        .find(|&n| flash.events[n].buf == Buf::RowMax && flash.events[n].op == Op::Write)
        .unwrap();
    let m_val = flash.events[m].value;
    let par = |x: f32| if x < 0.0 { format!("({})", num(x)) } else { num(x) };
    assert!(
        flat.contains(&format!(
            "s_tile[2] = e^(S − m) = e^({} − {}) = {} (#{})",
            num(s),
            par(m_val),
            num(p_tilde),
            w[1]
        )),
        "{flat}"
    );
    assert_eq!(
        p_tilde,
        attn_trace_core::tensor::simd::exp(s - m_val),
        "the log's e^(S − m)"
    );
    // lse of row 3 of head 1: [B,H,S] = [1,2,5], offset (0*2 + 1)*5 + 3 = 8
    let lse_w = flash.index.writes(Buf::Lse, 8);
    assert_eq!(lse_w.len(), 1, "lse is written once");
    let lse = flash.events[lse_w[0] as usize].value;
    let p = attn_trace_core::tensor::simd::exp(s - lse);
    assert!(
        flat.contains(&format!(
            "P = e^(S − lse) = e^({} − {}) = {}: written nowhere",
            num(s),
            par(lse),
            num(p)
        )),
        "{flat}"
    );
    // backward recomputes the same P into the same cell
    let back = writes_with(flash, Buf::STile, Phase::FlashBack, &tile);
    assert_eq!(back.len(), 1);
    assert!(
        flat.contains(&format!(
            "backward recomputes it: s_tile[2] = {} (#{})",
            num(flash.events[back[0]].value),
            back[0]
        )),
        "{flat}"
    );
    // MHA stores it: probs [1,2,5,5], off = ((0*2 + 1)*5 + 3)*5 + 2 = 42, written last in softmax
    let stored = *mha.index.writes(Buf::Probs, 42).last().unwrap() as usize;
    let q = mha.events[stored].value;
    assert!(
        flat.contains(&format!(
            "mha: stores P[0,1,3,2] = {} in probs[42] (#{stored}), off = ((bb*H + hh)*S + i)*T + j = ((0*2 + 1)*5 + 3)*5 + 2",
            num(q)
        )),
        "{flat}"
    );
    assert!((p - q).abs() < 1e-6, "flash's P {p} and MHA's {q}");
    let verdict = if p.to_bits() == q.to_bits() {
        "the same bits".to_string()
    } else {
        format!("they differ by {:.1e}", (p - q).abs())
    };
    assert!(
        flat.contains(&format!("flash's P = {}, mha's = {}: {verdict}", num(p), num(q))),
        "{flat}"
    );
    // the tile's cells on flash's side: each pair's e^(S − m), from its own write
    for (i, j) in [(2, 2), (2, 3), (3, 2), (3, 3)] {
        let vars = [("bb", 0), ("hh", 1), ("i0", 2), ("j0", 2), ("ii", i - 2), ("jj", j - 2)];
        let w = writes_with(flash, Buf::STile, Phase::Flash, &vars);
        let cell = attn_trace_analysis::format::num(flash.events[w[1]].value);
        let row = text.lines().find(|l| l.contains(&format!("││i{i} "))).unwrap();
        let right = row.split("││").nth(1).unwrap();
        assert!(right.contains(&format!(" {cell} ")), "i{i} j{j}: {cell} in {right}");
    }
    // the tiles above the diagonal are skipped: row 0's key tiles 2..=3 and 4 show –
    let row0 = text.lines().find(|l| l.contains("││i0 ")).unwrap();
    assert_eq!(row0.split("││").nth(1).unwrap().matches('–').count(), 3, "{row0}");
    // the global traffic of each side equals the closed forms
    let plan = traced.inputs.as_ref().unwrap().plan();
    let side = |v: Variant| {
        let t = closed_form(&plan, v, Pass::Forward);
        let g = t.totals()[0];
        assert_eq!(g.level, attn_trace_core::tensor::Level::Global);
        format!("{} {} reads, {} writes", v.name(), g.reads, g.writes)
    };
    let line = format!("global memory, forward: {} (", side(Variant::Mha));
    assert!(flat.contains(&line), "{line} in {flat}");
    assert!(
        flat.contains(&format!("· {} (att 20, lse 10)", side(Variant::Flash))),
        "{flat}"
    );
    assert!(flat.contains("(scores 50, probs 100, att 20)"), "{flat}");
}

#[test]
fn backward_shows_ds_recomputed_by_flash_beside_mhas_stored_ds() {
    let mut a = flash_app(120, 40);
    key(&mut a, KeyCode::Char(']'));
    let text = draw(&a, 120, 40);
    let flat = joined(&text);
    assert!(
        text.contains("dS[i,j]: stored by MHA, recomputed on chip by flash"),
        "{text}"
    );
    let traced = &a.traced;
    let (mha, flash) = (
        traced.trace(Variant::Mha).unwrap(),
        traced.trace(Variant::Flash).unwrap(),
    );
    let tile = [("bb", 0), ("hh", 1), ("i0", 2), ("j0", 2), ("ii", 1), ("jj", 0)];
    let p = writes_with(flash, Buf::STile, Phase::FlashBack, &tile)[0];
    let ds = writes_with(flash, Buf::DSTile, Phase::FlashBack, &tile)[0];
    let delta = (0..ds)
        .rev()
        .find(|&n| flash.events[n].buf == Buf::Delta && flash.events[n].op == Op::Read)
        .unwrap();
    let (pv, dv, dsv) = (flash.events[p].value, flash.events[delta].value, flash.events[ds].value);
    assert!(
        flat.contains(&format!("P = e^(S − lse) = {} (s_tile[2], #{p})", num(pv))),
        "{flat}"
    );
    assert!(
        flat.contains(&format!("D_i = rowsum(dO ∘ O) = {} (delta, read at #{delta})", num(dv))),
        "{flat}"
    );
    // dP = dS/P + D_i, up to rounding: the screen's dP is the sum of the products it read
    let shown_dp: f32 = flat
        .split("dP = Σ_d dO_tile[1,d]·v_tile[0,d] = ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    assert!((shown_dp - (dsv / pv + dv)).abs() < 1e-3, "dP {shown_dp}");
    assert!(flat.contains(&format!("= {} (#{ds});", num(dsv))), "{flat}");
    let stored = *mha.index.writes(Buf::DScores, 42).last().unwrap() as usize;
    let m = mha.events[stored].value;
    assert!(
        flat.contains(&format!(
            "mha: stores dS[0,1,3,2] = {} in d_scores[42] (#{stored})",
            num(m)
        )),
        "{flat}"
    );
    assert!((m - dsv).abs() < 1e-6);
    let plan = traced.inputs.as_ref().unwrap().plan();
    let g = closed_form(&plan, Variant::Flash, Pass::Backward).totals()[0];
    assert!(
        flat.contains(&format!(
            "flash {} reads, {} writes (d_q 56, d_k 20, d_v 20, delta 10)",
            g.reads, g.writes
        )),
        "{flat}"
    );
}

#[test]
fn a_pair_in_a_skipped_tile_has_no_flash_event_and_enter_traces_the_pair() {
    let mut a = flash_app(120, 40);
    // from i=3 j=2 to i=0 j=4: key tile 4 of query tile 0 lies above the diagonal
    for k in [KeyCode::Up, KeyCode::Up, KeyCode::Up, KeyCode::Right, KeyCode::Right] {
        key(&mut a, k);
    }
    let flat = joined(&draw(&a, 120, 40));
    assert!(
        flat.contains("the mask hides every pair of this tile: flash skips it"),
        "{flat}"
    );
    assert!(flat.contains("flash's P = 0, mha's = 0: the same bits"), "{flat}");
    // back to i=3 j=2: Enter opens flash's tracer at the write of e^(S − m) into s_tile[2]
    for k in [
        KeyCode::Down,
        KeyCode::Down,
        KeyCode::Down,
        KeyCode::Left,
        KeyCode::Left,
    ] {
        key(&mut a, k);
    }
    key(&mut a, KeyCode::Enter);
    let t = a.tracer().expect("Enter opens the tracer");
    assert_eq!(t.variant, Variant::Flash);
    let trace = a.traced.trace(Variant::Flash).unwrap();
    let tile = [("bb", 0), ("hh", 1), ("i0", 2), ("j0", 2), ("ii", 1), ("jj", 0)];
    assert_eq!(t.cursor, writes_with(trace, Buf::STile, Phase::Flash, &tile)[1]);
}

#[test]
fn at_80x24_the_notes_scroll_and_say_which_lines_they_show() {
    let mut a = flash_app(80, 24);
    let text = draw(&a, 80, 24);
    assert!(text.contains("PgDn/PgUp: lines 1-"), "{text}");
    // the sides keep a header and the rows of both heads' tiles in view
    assert!(text.contains("││i3 "), "{text}");
    let first = text.lines().find(|l| l.contains("│flash: the pair is")).is_some();
    assert!(first, "{text}");
    key(&mut a, KeyCode::PageDown);
    let text = draw(&a, 80, 24);
    assert!(text.contains("PgDn/PgUp: lines 6-"), "{text}");
    assert!(!text.contains("│flash: the pair is"), "{text}");
    key(&mut a, KeyCode::PageUp);
    assert!(draw(&a, 80, 24).contains("PgDn/PgUp: lines 1-"));
}

/// Presses `inc` (which moves the element one row or column on) or `dec` (one back) until
/// `*pos`, the row or column as the test tracks it, reaches `to`.
fn move_to(a: &mut App, pos: &mut usize, to: usize, inc: KeyCode, dec: KeyCode) {
    while *pos < to {
        key(a, inc);
        *pos += 1;
    }
    while *pos > to {
        key(a, dec);
        *pos -= 1;
    }
}

#[test]
fn every_element_of_both_stages_shows_the_logs_numbers() {
    let mut a = flash_app(120, 40);
    // the traces outlive the keys pressed below: the app keeps its traced scenario in an Arc
    let traced = std::sync::Arc::clone(&a.traced);
    let (mha, flash) = (
        traced.trace(Variant::Mha).unwrap(),
        traced.trace(Variant::Flash).unwrap(),
    );
    // move the element to (h, i, j) from wherever it is: h cycles with 'h', i and j with arrows
    let Screen::Compare(c) = &a.screen else {
        panic!("compare")
    };
    let (mut h, mut i, mut j) = (c.element.h, c.element.i, c.element.j);
    let mut checked = 0;
    for stage in 0..2 {
        for hh in 0..2 {
            while h != hh {
                key(&mut a, KeyCode::Char('h'));
                h = (h + 1) % 2;
            }
            for ii in 0..5 {
                for jj in 0..5 {
                    move_to(&mut a, &mut i, ii, KeyCode::Down, KeyCode::Up);
                    move_to(&mut a, &mut j, jj, KeyCode::Right, KeyCode::Left);
                    let flat = joined(&draw(&a, 120, 40));
                    let at = format!("stage {stage} h{hh} i{ii} j{jj}");
                    let off = (hh * 5 + ii) * 5 + jj;
                    // the pair's cell in flash's 2×2 tiles, as its loop variables name it
                    let vars = [
                        ("bb", 0),
                        ("hh", hh),
                        ("i0", ii - ii % 2),
                        ("j0", jj - jj % 2),
                        ("ii", ii % 2),
                        ("jj", jj % 2),
                    ];
                    let (buf, name, flash_value) = if stage == 0 {
                        // flash's P: e^(S − lse) from the score written into s_tile and the row's lse
                        let s = writes_with(flash, Buf::STile, Phase::Flash, &vars);
                        let p = s.first().map_or(0.0, |&n| {
                            let lse = flash.events[flash.index.writes(Buf::Lse, hh * 5 + ii)[0] as usize].value;
                            attn_trace_core::tensor::simd::exp(flash.events[n].value - lse)
                        });
                        (Buf::Probs, "P", p)
                    } else {
                        let ds = writes_with(flash, Buf::DSTile, Phase::FlashBack, &vars);
                        (Buf::DScores, "dS", ds.first().map_or(0.0, |&n| flash.events[n].value))
                    };
                    let stored = *mha.index.writes(buf, off).last().unwrap() as usize;
                    let m = mha.events[stored].value;
                    assert!(
                        flat.contains(&format!(
                            "mha: stores {name}[0,{hh},{ii},{jj}] = {} in {buf}[{off}] (#{stored})",
                            num(m)
                        )),
                        "{at}: {flat}"
                    );
                    assert!((m - flash_value).abs() < 1e-6, "{at}: mha {m}, flash {flash_value}");
                    assert!(
                        flat.contains(&format!("flash's {name} = {}, mha's = {}:", num(flash_value), num(m))),
                        "{at}: {flat}"
                    );
                    // a pair of a tile the mask hides: no event of flash, the value 0
                    if jj / 2 > ii / 2 {
                        assert!(
                            flat.contains(&format!("flash skips it, no read and no write; {name} = 0")),
                            "{at}: {flat}"
                        );
                    }
                    checked += 1;
                }
            }
        }
        key(&mut a, KeyCode::Char(']'));
    }
    assert_eq!(checked, 100);
}
