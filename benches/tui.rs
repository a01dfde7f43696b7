//! Every key of the tracer, update + render of a 120×40 frame on a TestBackend, on a trace of
//! about 10 million events: MHA forward + backward from x for B=1, T=68, C=64, H=4
//! (10,021,888 events). `cargo bench --bench tui`. The budget is 16 ms per key.
//!
//! Each key is measured twice: in wall-clock time (the group `tui key`), and on Unix in the CPU
//! time of the measuring thread (`tui key, thread CPU time`), which other programs sharing the
//! machine hardly move: `cargo bench --bench tui -- "thread CPU"` compares two builds on a busy
//! machine.

// a benchmark or example stops on what it cannot do, like a test
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(unix)]
#[path = "common/cpu.rs"]
mod cpu;

use attn_trace::tui::{App, Msg, Theme, TracedScenario, render, update};
use attn_trace_core::scenario::Scenario;
use criterion::measurement::Measurement;
use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SCENARIO: &str = r#"
title = "TUI bench: about ten million events"
[shape]
B = 1
T = 68
C = 64
H = 4
[run]
variants = ["mha"]
passes = ["forward", "backward"]
[init]
seed = 7
[focus]
variant = "mha"
b = 0
h = 3
i = 60
j = 40
"#;

fn press(app: &mut App, c: KeyCode) {
    update(app, Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
}

fn type_goto(app: &mut App, text: &str) {
    press(app, KeyCode::Char('g'));
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
    press(app, KeyCode::Enter);
}

fn tui_wall(c: &mut Criterion) {
    tui(c, "tui key (update + render 120x40, 10M events)");
}

#[cfg(unix)]
fn tui_cpu(c: &mut Criterion<cpu::ThreadCpu>) {
    tui(c, "tui key, thread CPU time (update + render 120x40, 10M events)");
}

fn tui<M: Measurement>(c: &mut Criterion<M>, group: &str) {
    let scenario = Scenario::parse(SCENARIO, "<bench>").expect("the bench scenario is valid");
    let start = Instant::now();
    let traced = Arc::new(TracedScenario::from_scenario(&scenario));
    let events = traced
        .trace(attn_trace_core::kernels::Variant::Mha)
        .map_or(0, attn_trace_core::trace::Trace::len);
    eprintln!("traced {events} events in {:.2?}", start.elapsed());
    assert!(events > 10_000_000, "the bench needs a ten-million-event trace");

    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("a test backend");
    let mut app = App::new(Arc::clone(&traced), Theme::COLOR, 120, 40);
    let mid = events / 2;
    let mut g = c.benchmark_group(group);
    g.sample_size(30).measurement_time(Duration::from_secs(3));

    let mut key_bench = |name: &str, app: &mut App, setup: &dyn Fn(&mut App), key: &dyn Fn(&mut App)| {
        setup(app);
        g.bench_function(name, |b| {
            b.iter(|| {
                key(app);
                term.draw(|f| render(f, black_box(app))).expect("draw");
            });
        });
    };
    let at_focus = |a: &mut App| type_goto(a, "b=0 h=3 i=60 j=40");
    let at_mid = move |a: &mut App| type_goto(a, &mid.to_string());
    let wrap = |a: &mut App, c: KeyCode| {
        let before = a.event();
        press(a, c);
        if a.event() == before {
            press(a, KeyCode::Home);
        }
    };

    key_bench("render only", &mut app, &at_focus, &|_| {});
    key_bench("n (next event)", &mut app, &at_mid, &|a| wrap(a, KeyCode::Char('n')));
    key_bench("p (previous event)", &mut app, &at_mid, &|a| {
        press(a, KeyCode::Char('p'));
    });
    key_bench("j (next iteration)", &mut app, &at_mid, &|a| {
        wrap(a, KeyCode::Char('j'));
    });
    key_bench("J (next outer iteration)", &mut app, &at_mid, &|a| {
        wrap(a, KeyCode::Char('J'));
    });
    key_bench("] (next phase)", &mut app, &at_focus, &|a| wrap(a, KeyCode::Char(']')));
    key_bench("g element b=0 h=3 i=67 j=60", &mut app, &at_mid, &|a| {
        type_goto(a, "b=0 h=3 i=67 j=60");
    });
    key_bench("g cell w_qkv[8191]", &mut app, &at_mid, &|a| {
        type_goto(a, "w_qkv[8191]");
    });
    key_bench("g event 9000000", &mut app, &at_mid, &|a| type_goto(a, "9000000"));
    // w and r on a weight read by every row: long per-cell access lists
    let pin = |a: &mut App| {
        type_goto(a, "w_qkv[100]");
        type_goto(a, &mid.to_string());
    };
    key_bench(
        "w then r (two keys: who last wrote, who reads next)",
        &mut app,
        &pin,
        &|a| {
            press(a, KeyCode::Char('w'));
            press(a, KeyCode::Char('r'));
        },
    );
    key_bench("r (who reads next)", &mut app, &pin, &|a| wrap(a, KeyCode::Char('r')));
    let breakpoints = |a: &mut App| {
        for cell in [
            "scores[1000]",
            "probs[9000]",
            "att[4000]",
            "d_scores[17000]",
            "w_qkv[100]",
        ] {
            type_goto(a, cell);
            press(a, KeyCode::Char('b'));
        }
        press(a, KeyCode::Home);
    };
    key_bench("c (continue to breakpoint)", &mut app, &breakpoints, &|a| {
        wrap(a, KeyCode::Char('c'));
    });
    key_bench("C (back to breakpoint)", &mut app, &|a| press(a, KeyCode::End), &|a| {
        let before = a.event();
        press(a, KeyCode::Char('C'));
        if a.event() == before {
            press(a, KeyCode::End);
        }
    });
    key_bench("f (forward/backward)", &mut app, &at_mid, &|a| {
        press(a, KeyCode::Char('f'));
    });
    // the timeline: one column on, and the selected weight's next access (its next tick)
    key_bench("> (timeline: next column)", &mut app, &at_mid, &|a| {
        wrap(a, KeyCode::Char('>'));
    });
    key_bench("} (next access of the selected cell)", &mut app, &pin, &|a| {
        wrap(a, KeyCode::Char('}'));
    });
    g.finish();
}

criterion_group!(wall, tui_wall);
#[cfg(unix)]
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(cpu::ThreadCpu);
    targets = tui_cpu
}
#[cfg(unix)]
criterion_main!(wall, cpu);
#[cfg(not(unix))]
criterion_main!(wall);
