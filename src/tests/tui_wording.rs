//! What the screens and the commands say, in words: the mask, the scale and the rotated pair
//! named as the kernel names them, Chinese wherever the text is Chinese, no doubled signs or
//! negative zeros, lines that fit at 80×24 and cuts that say so. Each test reads the screen (drawn
//! on a `TestBackend` at 80×24 and 120×40) or the command's output, in both languages where the
//! text differs; each was a defect a newcomer found.

use crate::tests::support::cli::cmd;

/// What `attn-trace ARGS` prints, in the language `lang`.
fn output_in(lang: &str, args: &[&str]) -> String {
    let out = cmd().arg("--lang").arg(lang).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn run_names_the_mask_in_words() {
    let en = output_in("en", &["run", "scenarios/mistakes/no_input_projection.toml"]);
    assert!(en.contains("(D=2), no mask, forward,"), "{en}");
    assert!(!en.contains("none mask"), "{en}");
    let zh = output_in("zh-CN", &["run", "scenarios/mistakes/no_input_projection.toml"]);
    assert!(zh.contains("(D=2)，无掩码，前向，"), "{zh}");
    let zh = output_in("zh-CN", &["run", "scenarios/mha_walkthrough.toml"]);
    assert!(zh.contains("因果掩码"), "{zh}");
}

use crate::tests::support::tui::{draw, key, screen, screen_lines, tracer_at, tracer_screen};
use crate::tui::app::{App, Screen};
use crate::tui::screens::attn_map::AttnMap;
use crate::tui::{Theme, TracedScenario};
use attn_trace_analysis::mistakes;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::{Buf, Op, Phase, Trace};
use attn_trace_i18n::{Lang, with_lang};
use attn_trace_model::gpt::Config;
use attn_trace_model::{Origin, TinyGpt};
use crossterm::event::KeyCode;
use std::sync::Arc;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

/// The app drawn on a `w`×`h` terminal, cell by cell (a wide character's second cell is empty).
fn cells(app: &App, w: u16, h: u16) -> Vec<Vec<String>> {
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    term.draw(|f| crate::tui::app::render(f, app)).unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| {
            let mut row: Vec<String> = Vec::new();
            for x in 0..w {
                let wide_before = row.last().is_some_and(|c| attn_trace_analysis::format::cols(c) == 2);
                let here = buf[(x, y)].symbol().to_string();
                // the cell a wide character covers holds nothing of its own
                row.push(if wide_before && here == " " {
                    String::new()
                } else {
                    here
                });
            }
            row
        })
        .collect()
}

/// The app drawn on a `w`×`h` terminal as text, a wide character taking its two cells.
fn text(app: &App, w: u16, h: u16) -> String {
    cells(app, w, h)
        .iter()
        .map(|r| r.concat())
        .collect::<Vec<_>>()
        .join("\n")
}

fn traced(name: &str) -> Arc<TracedScenario> {
    Arc::new(TracedScenario::from_scenario(
        &Scenario::shipped(name).expect("shipped"),
    ))
}

fn trace(w: &TracedScenario, v: Variant) -> &Trace {
    w.trace(v).expect("traced")
}

/// The tracer screen of `v` on `w` at event `n`, at `size`.
fn at(w: &Arc<TracedScenario>, v: Variant, n: usize, (x, y): (u16, u16)) -> String {
    tracer_screen(&tracer_at(w, v, n), x, y)
}

/// Events `0..len` sampled: every one of a short log, about 400 of a long one.
fn sample(len: usize) -> impl Iterator<Item = usize> {
    (0..len).step_by((len / 400).max(1))
}

#[test]
fn io_says_what_grouped_heads_save_in_both_languages() {
    let en = output_in("en", &["io", "scenarios/gqa.toml"]);
    // the traffic is MHA's, and the key/value memory is half of it
    assert!(
        en.contains("global reads + writes, forward: gqa 928 (1.00×), mha 928 (1.00×)"),
        "{en}"
    );
    assert!(
        en.contains("floats held in k and v (what a KV cache keeps): gqa 32 (1.00×), mha 64 (2.00×)"),
        "{en}"
    );
    assert!(en.contains("H_kv = 2 key/value heads serve H = 4 query heads"), "{en}");
    let zh = output_in("zh-CN", &["io", "scenarios/gqa.toml"]);
    for want in [
        "全局读 + 写，前向：gqa 928 (1.00×)",
        "k 和 v 存放的浮点数",
        "缓冲区",
        "合计",
        "因果掩码；只计注意力核心",
    ] {
        assert!(zh.contains(want), "{want}\n{zh}");
    }
    for english in ["global reads", "buffer", "total", "causal mask", "floats held"] {
        assert!(!zh.contains(english), "{english} in\n{zh}");
    }
    // the JSON carries the same number per run
    let json = output_in("en", &["io", "scenarios/gqa.toml", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let kv: Vec<(String, u64)> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["variant"].as_str().unwrap().to_string(),
                r["kv_floats"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        kv.contains(&("gqa".into(), 32)) && kv.contains(&("mha".into(), 64)),
        "{kv:?}"
    );
    // grouped heads alone still say what MHA of the same shape would keep
    let mqa = output_in("en", &["io", "scenarios/mqa.toml"]);
    assert!(mqa.contains("what a KV cache keeps): gqa "), "{mqa}");
    assert!(mqa.contains(", where MHA of the same shape holds "), "{mqa}");
    // a scenario without grouped heads says nothing about them, only what each design's cache
    // would keep per token
    let flash = output_in("en", &["io", "scenarios/flash.toml"]);
    assert!(!flash.contains("what a KV cache keeps"), "{flash}");
    assert!(flash.contains("KV cache per token and layer (f32):"), "{flash}");
    let zh = output_in("zh-CN", &["io", "scenarios/flash.toml"]);
    assert!(
        zh.contains("每个 token、每层的 KV 缓存（f32）：") && zh.contains("个浮点数，"),
        "{zh}"
    );
    let sweep = output_in("zh-CN", &["io", "--sweep"]);
    assert!(sweep.contains("每个头的全局读 + 写，前向，D = 64，无掩码"), "{sweep}");
    assert!(sweep.contains("朴素") && !sweep.contains("Global reads"), "{sweep}");
}

#[test]
fn the_traffic_screen_speaks_chinese() {
    with_lang(Lang::ZhCn, || {
        for (w, h) in SIZES {
            let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
            key(&mut app, KeyCode::Char('9'));
            assert!(matches!(app.screen, Screen::Traffic(_)));
            let s = text(&app, w, h);
            assert!(s.contains("流量：朴素实现与 flash"), "{s}");
            assert!(s.contains("无掩码"), "{s}");
            for english in ["Traffic:", "naive reads", "no mask", "global accesses"] {
                assert!(!s.contains(english), "{english} at {w}×{h}:\n{s}");
            }
            key(&mut app, KeyCode::Char('?'));
            let s = text(&app, w, h);
            assert!(s.contains("下一个头大小 D"), "{s}");
        }
    });
}

#[test]
fn the_tracer_and_its_help_speak_chinese() {
    with_lang(Lang::ZhCn, || {
        for (w, h) in SIZES {
            let mut app = App::new(TracedScenario::builtin(), Theme::MONO, w, h);
            let s = text(&app, w, h);
            assert!(s.contains("│ 前向 │"), "{s}");
            // the header and the status bar (the code panel quotes the kernel's English comments)
            let head = s.lines().next().unwrap();
            let status = s.lines().last().unwrap();
            assert!(
                !head.contains("forward") && !status.contains("forward"),
                "{head}\n{status}"
            );
            key(&mut app, KeyCode::Char('?'));
            let s = text(&app, w, h);
            assert!(s.contains("按键 · 追踪器"), "{s}");
        }
    });
    // the key label needs no words: the arrows themselves
    let mut app = App::new(TracedScenario::builtin(), Theme::MONO, 120, 40);
    key(&mut app, KeyCode::Char('?'));
    assert!(screen(&app, 120, 40).contains("s, Shift+←→↑↓"));
}

#[test]
fn the_mistakes_divergence_names_the_access_in_chinese() {
    let s = Scenario::mistake("mask_by_multiply").unwrap();
    let runs = s.runs(true);
    let (good, bad) = (runs[0].trace.as_ref().unwrap(), runs[1].trace.as_ref().unwrap());
    let en = mistakes::divergence(good, bad).unwrap().to_string();
    assert!(en.contains("correct write "), "{en}");
    let zh = with_lang(Lang::ZhCn, || mistakes::divergence(good, bad).unwrap().to_string());
    assert!(zh.contains("正确 写 "), "{zh}");
    assert!(!zh.contains("write") && !zh.contains("read "), "{zh}");
}

#[test]
fn the_train_form_hints_line_up_in_chinese() {
    with_lang(Lang::ZhCn, || {
        for (w, h) in SIZES {
            let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
            key(&mut app, KeyCode::Char('5'));
            let cells = cells(&app, w, h);
            let lines: Vec<String> = cells.iter().map(|r| r.concat()).collect();
            // the terminal column where each field's hint starts
            let col = |hint: &str| {
                let first = hint.chars().next().unwrap().to_string();
                cells
                    .iter()
                    .find_map(|row| (0..row.len()).find(|&x| row[x] == first && row[x..].concat().starts_with(hint)))
                    .unwrap_or_else(|| panic!("{hint}"))
            };
            let cols: Vec<usize> = ["L，transformer", "H_kv：", "C，每个", "T，上下文"]
                .iter()
                .map(|h| col(h))
                .collect();
            assert!(
                cols.windows(2).all(|c| c[0] == c[1]),
                "{w}×{h}: {cols:?}\n{}",
                lines.join("\n")
            );
        }
    });
}

/// Every sign a number carries is its own: `0.5 − (-0.16)`, never `0.5 − -0.16`; and no zero
/// is printed negative (`-0.00`).
fn signs_are_readable(screen: &str) -> Result<(), String> {
    for bad in ["− -", "+ -", "− −", "+ −"] {
        if let Some(k) = screen.find(bad) {
            return Err(format!("{bad:?} at {k}"));
        }
    }
    let b = screen.as_bytes();
    for (k, _) in screen.match_indices("-0.0") {
        let digits: String = screen[k + 1..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        if digits.chars().all(|c| c == '0' || c == '.') && !(k > 0 && (b[k - 1] as char).is_ascii_alphanumeric()) {
            return Err(format!("a negative zero -{digits} at {k}"));
        }
    }
    Ok(())
}

#[test]
fn no_double_signs_and_no_negative_zeros_on_screen() {
    for name in ["mha_walkthrough", "flash", "backward_simple", "masked_element", "gqa"] {
        let w = traced(name);
        for v in w.runs.iter().map(|r| r.variant) {
            let tr = trace(&w, v);
            for n in sample(tr.len()) {
                for size in SIZES {
                    let s = at(&w, v, n, size);
                    signs_are_readable(&s).unwrap_or_else(|e| panic!("{name} {v} #{n} {size:?}: {e}\n{s}"));
                }
            }
        }
    }
    // and in explain
    let out = output_in(
        "en",
        &[
            "explain",
            "scenarios/flash.toml",
            "--variant",
            "flash",
            "--at",
            "b=0,h=1,i=3,j=2",
        ],
    );
    signs_are_readable(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert!(out.contains("l = e^(0.2152 − 1.1036)·1.978 + rowsum = 2.3128"), "{out}");
}

#[test]
fn the_header_names_the_scale_the_kernel_uses() {
    let w = traced("mha_walkthrough");
    for (v, scale, other) in [(Variant::Baseline, "/√C", "/√D"), (Variant::Mha, "/√D", "/√C")] {
        let tr = trace(&w, v);
        let n = tr.phases.iter().find(|p| p.1 == Phase::Scores).unwrap().0 as usize;
        for size in SIZES {
            let s = at(&w, v, n, size);
            let head = s.lines().next().unwrap();
            assert!(s.contains(&format!("S = Q·Kᵀ{scale}")), "{v} {size:?}:\n{s}");
            assert!(
                !s.contains(&format!("S = Q·Kᵀ{other}")) && !s.contains("/√d"),
                "{v} {head}"
            );
        }
    }
}

#[test]
fn compares_header_names_each_kernels_scale() {
    // Compare's header stands over two kernels: one scale when they share it (MHA beside GQA,
    // both /√D), both when they differ (the baseline's /√C beside MHA's /√D); never the
    // lowercase d that reads like the channel loop's variable
    for (name, want) in [
        ("mha_walkthrough", "S = Q·Kᵀ/√C or /√D + causal mask"),
        ("gqa", "S = Q·Kᵀ/√D + causal mask"),
    ] {
        let mut a = App::with_menu(Arc::clone(&traced(name)), Theme::MONO, 120, 40);
        key(&mut a, KeyCode::Char('3'));
        assert!(matches!(a.screen, Screen::Compare(_)), "{name}: 3 opens Compare");
        let head = screen(&a, 120, 40).lines().next().unwrap().to_string();
        assert!(head.contains(want), "{name}: {head}");
        assert!(!head.contains("/√d"), "{name}: {head}");
    }
    let mut a = App::with_menu(traced("mha_walkthrough"), Theme::MONO, 120, 40);
    key(&mut a, KeyCode::Char('3'));
    // (a wide character's second column is a space of its own on the test backend)
    let head = with_lang(Lang::ZhCn, || screen(&a, 120, 40))
        .lines()
        .next()
        .unwrap()
        .replace(' ', "");
    assert!(head.contains("S=Q·Kᵀ/√C或/√D+因果掩码"), "{head}");
}

/// The rope write events of `v` on `w`: the event that writes the pair's first channel.
fn rope_writes(tr: &Trace) -> Vec<usize> {
    (0..tr.len())
        .filter(|&n| tr.phase_at(n) == Phase::Rope && tr.events[n].op == Op::Write)
        .collect()
}

#[test]
fn rope_names_the_pair_by_the_buffer_it_turns() {
    for (name, v) in [("rope", Variant::Mha), ("kv_cache_decode", Variant::Gqa)] {
        let w = traced(name);
        let tr = trace(&w, v);
        let writes = rope_writes(tr);
        assert!(!writes.is_empty());
        for &n in writes.iter().step_by(7) {
            // the two reads before the pair's writes are its old values
            let f = tr.frame(tr.events[n].frame).unwrap();
            let ev: Vec<_> = (f.start as usize..f.end as usize).map(|k| tr.events[k]).collect();
            let (b, o0, o1) = (ev[2].buf, ev[2].offset, ev[3].offset);
            for size in SIZES {
                let s = at(&w, v, n, size);
                assert!(!s.contains("x["), "{name} #{n}: the input's name for the pair\n{s}");
                let first = format!("{b}'[{}] = {b}[{o0}]·cos − {b}[{o1}]·sin", ev[4].offset);
                if size.1 == 40 {
                    assert!(s.contains(&first), "{name} #{n}: {first}\n{s}");
                }
                // the variables panel: no loop variable twice, no `lo = m = 0 = 0`
                let lines: Vec<&str> = s.lines().collect();
                // (at 80×24 the decode step's many offsets put the variables in a tab)
                let Some(k) = lines.iter().position(|l| l.contains("┌ Variables")) else {
                    continue;
                };
                let vars = lines[k + 1];
                let vars = vars.split("││").next().unwrap();
                let names: Vec<&str> = vars
                    .split(['│', ' '])
                    .filter(|t| t.len() > 2 && t.contains('=') && !t.starts_with('='))
                    .collect();
                let mut seen = names.clone();
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), names.len(), "{name} #{n}: {vars}");
                for l in s.lines().filter(|l| l.contains("lo = m = ")) {
                    let rest = l.split("lo = m = ").nth(1).unwrap();
                    let rest = rest.split('│').next().unwrap().trim();
                    assert!(rest.parse::<usize>().is_ok(), "{name} #{n}: lo = m = {rest}");
                }
            }
        }
    }
}

#[test]
fn the_4_key_shows_the_variables_at_80x24() {
    let mut app = App::new(traced("kv_cache_decode"), Theme::MONO, 80, 24);
    crate::tests::support::tui::goto(&mut app, "rope");
    let before = screen(&app, 80, 24);
    assert!(before.contains(" 4 Vars "), "the tab is listed:\n{before}");
    key(&mut app, KeyCode::Char('4'));
    let after = screen(&app, 80, 24);
    assert_ne!(before, after, "4 changes the screen");
    // every derived offset of the event, down to its last (`hi = m + D/2`)
    assert!(after.contains("hi = m + D/2"), "{after}");
    assert!(
        after.contains("lo = m = 0") && !after.contains("lo = m = 0 = 0"),
        "{after}"
    );
}

#[test]
fn the_gradient_check_keeps_its_last_line() {
    use crate::tui::app::{self, Msg};
    // flash adds dQ into global memory tile by tile: a write that is not yet the final value,
    // whose check ends on the line that says so
    let w = traced("flash");
    let tr = trace(&w, Variant::Flash);
    let first = tr
        .index
        .writes(Buf::DQ, 14)
        .iter()
        .map(|&n| n as usize)
        .find(|&n| tr.phase_at(n) == Phase::FlashBack)
        .unwrap();
    for (x, y) in [(120, 40), (120, 50)] {
        let mut a = App::new(Arc::clone(&w), Theme::MONO, x, y);
        crate::tests::support::tui::goto(&mut a, &first.to_string());
        if let Screen::Tracer(t) = &mut a.screen {
            assert_eq!(t.cursor, first);
            t.checks.wait(std::time::Duration::from_secs(60));
        }
        app::update(&mut a, Msg::Tick);
        let s = screen(&a, x, y);
        assert!(s.contains("so far; d_q[14] ends at"), "{x}×{y}:\n{s}");
        assert!(s.contains("when backward is done"), "{x}×{y}:\n{s}");
    }
}

#[test]
fn flash_at_80x24_keeps_the_steps_numbers() {
    let w = traced("flash");
    let tr = trace(&w, Variant::Flash);
    // every write of l (the online softmax's l_new): its line is on screen
    let writes: Vec<usize> = (0..tr.len())
        .filter(|&n| {
            tr.events[n].buf == Buf::RowSum
                && tr.events[n].op == Op::Write
                && attn_trace_analysis::online_softmax::RowUpdate::at(tr, n).is_some_and(|r| r.l_new() == n)
        })
        .collect();
    assert!(!writes.is_empty());
    for &n in &writes {
        for size in SIZES {
            let s = at(&w, Variant::Flash, n, size);
            assert!(s.contains("l_new = e^("), "#{n} {size:?}:\n{s}");
        }
    }
    // nothing the panels say is cut mid-word: the memory panel's note, the step's equation
    for n in sample(tr.len()) {
        for size in SIZES {
            let s = at(&w, Variant::Flash, n, size);
            for l in s.lines() {
                if l.contains("(a taller termin") {
                    assert!(l.contains("(a taller terminal shows them)"), "#{n} {size:?}: {l}");
                }
                // no line wrapped into a run of spaces
                assert!(!l.contains("│                l_new"), "#{n} {size:?}: {l}");
                // a grid title names its tile rows whole (`tile rows i 2..=3`, not `2..=`)
                if let Some(k) = l.find("tile rows ") {
                    let rest = &l[k..];
                    let range = rest.split_whitespace().nth(3).unwrap_or("");
                    assert!(
                        range
                            .split("..=")
                            .nth(1)
                            .is_some_and(|x| x.chars().next().is_some_and(|c| c.is_ascii_digit())),
                        "#{n} {size:?}: {l}"
                    );
                }
            }
        }
    }
}

#[test]
fn mistake_2_measures_flattening_on_rows_that_are_not_one_hot() {
    let s = Scenario::mistake("scale_by_seq_len").unwrap();
    let runs = s.runs(false);
    let (good, bad) = (&runs[0], &runs[1]);
    let report = mistakes::report(good, bad, &s.mask);
    let text: Vec<String> = report.symptoms.iter().map(|n| n.text.clone()).collect();
    let line = text.iter().find(|l| l.starts_with("mean max probability")).unwrap();
    // the correct rows are not saturated: their mean maximum is under 0.6
    let good_mean: f32 = line
        .split("correct ")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(good_mean < 0.6, "{line}");
    let visible_max = good.tensors[Buf::Scores]
        .iter()
        .copied()
        .filter(|&x| x > -1e8)
        .fold(0.0f32, f32::max);
    assert!(visible_max < 20.0, "scores up to {visible_max}");
}

#[test]
fn flash_toml_rescales_on_the_focused_head() {
    use attn_trace_analysis::online_softmax::RowUpdate;
    let w = traced("flash");
    let tr = trace(&w, Variant::Flash);
    // row i = 3 of head 1 (the focus): its second key tile raises the maximum
    let rows = RowUpdate::of_row(tr, 0, 1, 2, 1);
    let factors: Vec<f32> = rows
        .iter()
        .map(|r| {
            let (m_old, m_new) = r.maxima(tr);
            attn_trace_analysis::online_softmax::alpha(m_old, m_new)
        })
        .collect();
    assert!(factors.iter().any(|&a| a > 0.0 && a < 0.9), "{factors:?}");
    // and the tracer shows it at the accumulator's rescale
    let rescale = (0..tr.len()).find(|&n| {
        tr.events[n].buf == Buf::Acc
            && tr.events[n].op == Op::Write
            && at(&w, Variant::Flash, n, (120, 40)).contains("e^(0.2152 − 1.1036) = 0.4113")
    });
    assert!(rescale.is_some(), "the accumulator is rescaled by 0.4113 somewhere");
}

#[test]
fn compare_on_t7_flash_announces_what_it_hides_and_keeps_the_element() {
    let text = "title = \"T = 7 through MHA and flash\"\n\
                [shape]\nB = 1\nT = 7\nC = 4\nH = 2\n\
                [run]\nvariants = [\"mha\", \"flash\"]\nmask = \"causal\"\n\
                [flash]\nbr = 2\nbc = 2\n\
                [init]\nseed = 3\n\
                [focus]\nvariant = \"mha\"\nh = 1\ni = 6\nj = 5\n";
    let s = Scenario::parse(text, "t7.toml").unwrap();
    let w = Arc::new(TracedScenario::from_scenario(&s));
    for (x, y) in SIZES {
        let mut a = App::with_menu(Arc::clone(&w), Theme::MONO, x, y);
        key(&mut a, KeyCode::Char('3'));
        assert!(matches!(a.screen, Screen::Compare(_)));
        for _ in 0..4 {
            let s = screen(&a, x, y);
            // the element's row is on screen, in the grid of its head
            assert!(s.contains("i6"), "{x}×{y}:\n{s}");
            // columns left out are said
            if s.contains(" j0") && !s.contains(" j6") {
                assert!(
                    s.contains("shown:") && s.contains(" of 7"),
                    "{x}×{y}: hidden columns unannounced\n{s}"
                );
            }
            if !s.contains("│i0") {
                assert!(
                    s.contains("shown:") && s.contains(" of 7"),
                    "{x}×{y}: hidden rows unannounced\n{s}"
                );
            }
            key(&mut a, KeyCode::Char(']'));
        }
    }
}

fn tiny_model() -> Arc<TinyGpt> {
    let cfg = Config {
        seq_len: 16,
        d_model: 16,
        n_layers: 1,
        n_heads: 4,
        ..Config::default()
    };
    Arc::new(TinyGpt::new(cfg, 5).unwrap())
}

fn origin(dir: &std::path::Path, flash: bool) -> Origin {
    Origin {
        label: "map".into(),
        checkpoint: None,
        step: 0,
        dataset: None,
        dir: dir.to_path_buf(),
        stem: "map".into(),
        flash,
    }
}

#[test]
fn exporting_a_layer_twice_keeps_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let model = tiny_model();
    let mut map = AttnMap::new(Arc::clone(&model), origin(dir.path(), false), b"abc|cba", 0).unwrap();
    let first = map.export().unwrap();
    let before = std::fs::read_to_string(&first).unwrap();
    // another prompt, the same layer and step: a file of its own
    map = AttnMap::new(model, origin(dir.path(), false), b"xyz|zyx ab", 0).unwrap();
    let second = map.export().unwrap();
    assert_ne!(first, second);
    assert_eq!(
        std::fs::read_to_string(&first).unwrap(),
        before,
        "the first export is kept"
    );
    assert!(std::fs::read_to_string(&second).unwrap().contains("xyz|zyx ab"));
    assert_eq!(second.file_name().unwrap(), "map-step0-layer0-2.toml");
    let msg = map.export_message();
    assert!(msg.contains("map-step0-layer0-3.toml"), "{msg}");
}

#[test]
fn a_model_trained_with_flash_is_traced_with_flash_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut map = AttnMap::new(tiny_model(), origin(dir.path(), true), b"abc|cba", 0).unwrap();
    let w = map.traced().unwrap();
    assert!(w.trace(Variant::Flash).is_some(), "flash is traced");
    assert!(w.trace(Variant::Mha).is_some(), "MHA stores the map's probabilities");
    // Tab in its tracer goes from MHA to flash, not to a baseline that is not there
    let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, 120, 40);
    app.screen = Screen::AttnMap(Box::new(map));
    key(&mut app, KeyCode::Char('t'));
    assert_eq!(crate::tests::support::tui::tracer(&app).variant, Variant::Mha);
    key(&mut app, KeyCode::Tab);
    assert_eq!(crate::tests::support::tui::tracer(&app).variant, Variant::Flash);
    let s = draw(&app, 120, 40);
    assert!(s.contains("flash"), "{s}");
    // one trained without flash keeps MHA alone
    let mut plain = AttnMap::new(tiny_model(), origin(dir.path(), false), b"abc|cba", 0).unwrap();
    assert!(plain.traced().unwrap().trace(Variant::Flash).is_none());
}

#[test]
fn probabilities_are_heated_from_zero() {
    let text = "title = \"T = 16\"\n[shape]\nB = 1\nT = 16\nC = 4\nH = 1\n[run]\nvariants = [\"baseline\"]\n[init]\nseed = 4\n";
    let s = Scenario::parse(text, "t16.toml").unwrap();
    let w = Arc::new(TracedScenario::from_scenario(&s));
    let tr = trace(&w, Variant::Baseline);
    // the last probability written: the probs grid is a heat map there, all of it ≥ 0
    let n = (0..tr.len())
        .rev()
        .find(|&n| tr.events[n].buf == Buf::Probs && tr.events[n].op == Op::Write)
        .unwrap();
    for size in SIZES {
        let s = at(&w, Variant::Baseline, n, size);
        let legends: Vec<&str> = s.lines().filter(|l| l.contains("heat ")).collect();
        assert!(legends.iter().any(|l| l.contains("heat 0 ")), "{size:?}:\n{s}");
        assert!(!s.contains("heat −1.00") && !s.contains("heat −0.9"), "{size:?}:\n{s}");
    }
    // scores have both signs: their scale runs from −max
    let n = (0..tr.len())
        .rev()
        .find(|&n| tr.events[n].buf == Buf::Scores && tr.events[n].op == Op::Write)
        .unwrap();
    let s = at(&w, Variant::Baseline, n, (120, 40));
    assert!(s.contains("heat −"), "{s}");
}

#[test]
fn a_code_line_cut_at_the_panel_edge_ends_in_an_ellipsis() {
    let w = traced("rope");
    let tr = trace(&w, Variant::Mha);
    let n = rope_writes(tr)[0];
    for size in SIZES {
        let mut st = tracer_at(&w, Variant::Mha, n);
        st.tab = crate::tui::screens::tracer::Tab::Code;
        let s = tracer_screen(&st, size.0, size.1);
        let code: Vec<&str> = s
            .lines()
            .filter(|l| {
                l.strip_prefix("│ ")
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            })
            .collect();
        assert!(!code.is_empty(), "{size:?}:\n{s}");
        // at 120×40 the code panel is narrower than some lines in view
        if size.0 == 120 {
            assert!(code.iter().any(|l| l.contains('…')), "{size:?}:\n{s}");
        }
        let source: Vec<&str> = attn_trace_core::source::source(tr.view(n).file)
            .unwrap()
            .lines()
            .collect();
        for l in &code {
            let inner = l.trim_start_matches('│');
            let inner = &inner[..inner.find('│').unwrap_or(inner.len())];
            let Some(no) = inner.get(..4).and_then(|x| x.trim().parse::<usize>().ok()) else {
                continue;
            };
            if inner.contains('▶') {
                continue;
            }
            // the row shows its source line whole, or a start of it and `…`
            let shown = inner.chars().skip(6).collect::<String>();
            let shown = shown.trim();
            let line = source[no - 1].trim();
            match shown.strip_suffix('…') {
                Some(start) => assert!(
                    line.starts_with(start.trim()) && line.len() > start.trim().len(),
                    "{size:?}: {l}"
                ),
                None => assert_eq!(shown, line, "{size:?}: a line cut without `…`"),
            }
        }
    }
}

#[test]
fn ticks_leave_the_phase_names_readable() {
    // flash's m[1] is read and written in every key tile of its row: ticks all along `flash`
    let w = traced("flash");
    for (x, y) in SIZES {
        let mut a = App::new(Arc::clone(&w), Theme::MONO, x, y);
        crate::tests::support::tui::goto(&mut a, "m[1]");
        let s = screen_lines(&a, x, y);
        let strip = &s[y as usize - 2];
        assert!(strip.contains('|') || strip.contains("fl"), "{strip}");
        // the phase that holds every tick still names itself
        assert!(strip.contains("flash"), "{x}×{y}: {strip}");
    }
}

#[test]
fn the_train_forms_flash_and_kv_heads_error_is_whole() {
    for (lang, tail) in [
        (Lang::En, "it runs on the MHA layout"),
        (Lang::ZhCn, "它按 MHA 的布局运行"),
    ] {
        with_lang(lang, || {
            for (w, h) in SIZES {
                let mut app = App::with_menu(TracedScenario::builtin(), Theme::MONO, w, h);
                key(&mut app, KeyCode::Char('5'));
                for k in [KeyCode::Down, KeyCode::Down, KeyCode::Down, KeyCode::Down] {
                    key(&mut app, k);
                }
                key(&mut app, KeyCode::Char('2'));
                // rope, window, sinks, then attn
                for _ in 0..4 {
                    key(&mut app, KeyCode::Down);
                }
                key(&mut app, KeyCode::Right);
                let s = text(&app, w, h);
                assert!(s.contains("✗ flash"), "{w}×{h}:\n{s}");
                // the error's last words are on screen, wrapped under it (borders and spaces
                // left out, so the wrap does not matter)
                let dense: String = s.chars().filter(|c| !c.is_whitespace() && *c != '│').collect();
                let want: String = tail.chars().filter(|c| !c.is_whitespace()).collect();
                assert!(dense.contains(&want), "{w}×{h}: {tail}\n{s}");
            }
        });
    }
}
