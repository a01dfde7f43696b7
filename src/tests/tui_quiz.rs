//! Quiz mode driven by keys, as the terminal drives it: every expected answer is read from the
//! log here (the events after the cursor), the working shown for a wrong one must give that same
//! offset, and the kernel expression behind the working is checked on every recorded event of
//! every shipped scenario, both variants, both passes and the mistakes kernel.

use crate::tests::support::tui::{chars, draw, goto, key, settle, tracer, tracer_at, tracer_screen};
use crate::tui::app::{App, Popup, Screen};
use crate::tui::lesson::{self, LessonRun};
use crate::tui::quiz::{self, Feedback, QuizLevel};
use crate::tui::widgets::{equation, variables};
use crate::tui::{Theme, TracedScenario};
use attn_trace_analysis::accum::{Accumulation, Scale};
use attn_trace_analysis::explain::num;
use attn_trace_analysis::format::{exact, fixed, four};
use attn_trace_core::engine::kernel_shape;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::scenario::lesson::{Ask, Lesson};
use attn_trace_core::trace::{Buf, Op, Trace};
use attn_trace_i18n::{self as i18n, Lang};
use crossterm::event::KeyCode;

fn answer(app: &mut App, s: &str) {
    chars(app, s);
    key(app, KeyCode::Enter);
}

fn trace(app: &App) -> &Trace {
    let t = tracer(app);
    t.traced.trace(t.variant).unwrap()
}

fn feedback(app: &App) -> Feedback {
    tracer(app).quiz.as_ref().unwrap().feedback.clone().expect("feedback")
}

/// The walkthrough in quiz mode at `level`, at its focus (the write of scores[16]).
fn quiz_app(level: QuizLevel) -> App {
    let mut a = App::new(TracedScenario::builtin(), Theme::MONO, 120, 40);
    key(&mut a, KeyCode::Char('Q'));
    while tracer(&a).quiz.as_ref().unwrap().level != level {
        key(&mut a, KeyCode::Char('l'));
    }
    a
}

#[test]
fn a_wrong_offset_shows_the_formula_with_the_numbers_and_a_right_one_steps() {
    let mut a = quiz_app(QuizLevel::Offsets);
    let n = tracer(&a).cursor;
    let next = trace(&a).events[n + 1];
    assert_eq!((next.buf.name(), next.offset), ("q", 10), "the log: q[10] comes next");
    answer(&mut a, "8");
    assert_eq!(tracer(&a).cursor, n, "a wrong answer does not step");
    let Feedback::Wrong(text) = feedback(&a) else {
        panic!("{:?}", feedback(&a))
    };
    // the formula, and the typed number placed in q's layout: never the answer
    assert!(
        text.contains("not quite: q[q_base + d] with q_base = ((bb*S + i)*H + hh)*D: you typed 8 = q[b=0, i=2, h=0, d=0]; this read has h=1"),
        "{text}"
    );
    assert!(!text.contains("10"), "the expected offset is not given away: {text}");
    // on screen, in the quiz panel and at 80×24 too; the answer stays typed, to be edited
    assert!(draw(&a, 120, 40).contains("not quite: q[q_base + d] with q_base"));
    assert!(draw(&a, 80, 24).contains("not quite: q[q_base + d]"));
    assert_eq!(tracer(&a).quiz.as_ref().unwrap().input, "8");
    key(&mut a, KeyCode::Backspace);
    answer(&mut a, "10");
    assert_eq!(tracer(&a).cursor, n + 1);
    assert!(matches!(feedback(&a), Feedback::Right(t) if t.starts_with("correct: ")));
    // then k[k_base + d] of j=2; typing the access after it is named as such
    let after = trace(&a).events[n + 3];
    assert_eq!((after.buf.name(), after.offset), ("q", 11));
    answer(&mut a, "11");
    let Feedback::Wrong(text) = feedback(&a) else { panic!() };
    assert!(
        text.contains("k[k_base + d] with k_base = ((bb*T + j)*H + hh)*D: you typed 11 = k[b=0, j=2, h=1, d=1]; this read has d=0 (that is q[11], the access after it)"),
        "{text}"
    );
    let score = tracer(&a)
        .quiz
        .as_ref()
        .unwrap()
        .scores
        .values()
        .next()
        .unwrap()
        .clone();
    assert_eq!((score.right, score.retried), (0, 1), "q[10] right after one wrong try");
    // v reveals and steps
    key(&mut a, KeyCode::Char('v'));
    assert_eq!(tracer(&a).cursor, n + 2);
    assert!(matches!(feedback(&a), Feedback::Revealed(t) if t.contains("k[10] (holding")));
}

#[test]
fn answers_come_from_the_log_forward_and_backward_in_both_variants() {
    let traced = std::sync::Arc::new(TracedScenario::builtin());
    for v in [Variant::Mha, Variant::Baseline] {
        for start in [
            "scores",
            "softmax",
            "out_proj",
            "out_proj_back",
            "weighted_sum_back",
            "softmax_back",
            "scores_back",
            "split_back",
            "qkv_proj_back",
        ] {
            let mut a = App::new(std::sync::Arc::clone(&traced), Theme::MONO, 120, 40);
            if tracer(&a).variant != v {
                key(&mut a, KeyCode::Tab);
            }
            goto(&mut a, start);
            key(&mut a, KeyCode::Char('Q'));
            for _ in 0..40 {
                let n = tracer(&a).cursor;
                let Some(e) = trace(&a).events.get(n + 1).copied() else {
                    break;
                };
                // wrong first: past the buffer's end, said without the offset the log has
                let wrong = e.offset + 1000;
                answer(&mut a, &wrong.to_string());
                let Feedback::Wrong(text) = feedback(&a) else {
                    panic!("{v} {start} #{n}")
                };
                assert!(
                    text.contains(&format!("you typed {wrong}, past the end of {}", e.buf)),
                    "{v} {start} #{}: {text}",
                    n + 1
                );
                assert!(!text.contains(&format!("[{}]", e.offset)), "{v} {start}: {text}");
                key(&mut a, KeyCode::Esc);
                answer(&mut a, &e.offset.to_string());
                assert_eq!(tracer(&a).cursor, n + 1, "{v} {start}: the right answer steps");
                a.popup = None;
            }
        }
    }
}

#[test]
fn values_are_asked_for_writes() {
    let mut a = quiz_app(QuizLevel::Values);
    // four reads, then the write of scores[17]
    for _ in 0..4 {
        let n = tracer(&a).cursor;
        let e = trace(&a).events[n + 1];
        assert_eq!(e.op, Op::Read);
        answer(&mut a, &e.offset.to_string());
        assert_eq!(tracer(&a).cursor, n + 1, "a read needs no value");
    }
    let n = tracer(&a).cursor;
    let w = trace(&a).events[n + 1];
    assert_eq!((w.op, w.buf.name(), w.offset), (Op::Write, "scores", 17));
    answer(&mut a, "17");
    assert!(matches!(feedback(&a), Feedback::Note(t) if t.contains("now its value too")));
    assert_eq!(tracer(&a).cursor, n);
    assert_eq!(tracer(&a).quiz.as_ref().unwrap().input, "17", "the offset stays typed");
    answer(&mut a, &format!(" {}", w.value + 0.5));
    let Feedback::Wrong(text) = feedback(&a) else {
        panic!("{:?}", feedback(&a))
    };
    assert!(text.contains("scores[17] is right, but the value is not"), "{text}");
    assert!(text.contains("S_h[i,j] = Q_h[i]·K_h[j] / √D + mask(i,j)"), "{text}");
    key(&mut a, KeyCode::Esc);
    answer(&mut a, &format!("17 {:.4}", w.value));
    assert_eq!(tracer(&a).cursor, n + 1);
    // at the first level a value is optional, and checked when given
    let mut a = quiz_app(QuizLevel::Offsets);
    for _ in 0..4 {
        key(&mut a, KeyCode::Char('v'));
    }
    answer(&mut a, "17 123");
    assert!(matches!(feedback(&a), Feedback::Wrong(_)));
    key(&mut a, KeyCode::Esc);
    answer(&mut a, "17");
    assert!(matches!(feedback(&a), Feedback::Right(_)));
}

#[test]
fn iterations_ask_for_every_read_of_the_next_loop_iteration() {
    let mut a = quiz_app(QuizLevel::Iterations);
    let n = tracer(&a).cursor;
    // from the log: the reads up to the next write (the score of j=2), and that write
    let events = &trace(&a).events;
    let w = (n + 1..events.len()).find(|&k| events[k].op == Op::Write).unwrap();
    let reads: Vec<String> = (n + 1..w).map(|k| events[k].offset.to_string()).collect();
    assert_eq!(reads, ["10", "10", "11", "11"], "q[10] k[10] q[11] k[11] for j=2");
    let screen = draw(&a, 120, 40);
    assert!(screen.contains("the 4 reads of iteration j=2 (q, k)"), "{screen}");
    answer(&mut a, "10 10 11 12");
    let Feedback::Wrong(text) = feedback(&a) else { panic!() };
    assert!(
        text.contains("read 4 of 4 of iteration j=2: k[k_base + d] with k_base = ((bb*T + j)*H + hh)*D: you typed 12, past the end of k, whose 12 elements are 0..11"),
        "{text}"
    );
    key(&mut a, KeyCode::Esc);
    answer(&mut a, "10 10 11");
    assert!(matches!(feedback(&a), Feedback::Wrong(t) if t.contains("makes 4 reads, you typed 3")));
    key(&mut a, KeyCode::Esc);
    answer(&mut a, &reads.join(" "));
    assert_eq!(tracer(&a).cursor, w, "a right answer lands on the iteration's write");
    // ranges: the next query's first score, i=0 of head 0 is done, so the softmax comes next
    let q = tracer(&a).question().unwrap();
    let quiz::Question::Iteration { reads, .. } = q else {
        panic!("{q:?}")
    };
    assert!(reads.iter().all(|r| r.op == Op::Read));
}

#[test]
fn the_phase_ends_with_a_summary() {
    let mut a = quiz_app(QuizLevel::Offsets);
    goto(&mut a, "softmax");
    key(&mut a, KeyCode::Char('p'));
    // the last event of the scores phase: answer the softmax's first read, wrongly once
    let softmax_start = tracer(&a).cursor + 1;
    for _ in 0..3 {
        key(&mut a, KeyCode::Char('p'));
    }
    let mut wrong_once = false;
    while tracer(&a).cursor + 1 < softmax_start {
        let n = tracer(&a).cursor;
        let e = trace(&a).events[n + 1];
        if !wrong_once {
            answer(&mut a, "99999");
            key(&mut a, KeyCode::Esc);
            wrong_once = true;
        }
        answer(&mut a, &e.offset.to_string());
        assert!(a.popup.is_none(), "no summary inside the phase");
    }
    // the step into the softmax ends the scores phase: its summary
    let n = tracer(&a).cursor;
    let first = trace(&a).events[n + 1].offset.to_string();
    answer(&mut a, &first);
    match &a.popup {
        Some(Popup::Message { title, text, error }) => {
            assert!(!error);
            assert_eq!(title, "Quiz · scores (forward) done");
            assert!(
                text.starts_with("2 of 3 right at the first try, 1 after another try"),
                "{text}"
            );
            assert!(text.contains("missed most: "), "{text}");
        }
        other => panic!("expected the summary, got {other:?}"),
    }
}

#[test]
fn the_log_hides_what_comes_next_and_the_status_keeps_the_score() {
    let mut a = quiz_app(QuizLevel::Offsets);
    let n = tracer(&a).cursor;
    let plain = {
        let b = App::new(TracedScenario::builtin(), Theme::MONO, 120, 40);
        draw(&b, 120, 40)
    };
    assert!(plain.contains(&format!("#{} read  q[10]", n + 1)));
    let screen = draw(&a, 120, 40);
    assert!(!screen.contains(&format!("#{} read", n + 1)), "{screen}");
    assert!(
        screen.contains(&format!("#{} ?  (quiz: predict it)", n + 1)),
        "{screen}"
    );
    assert!(screen.contains("quiz offsets · scores 0/0"), "{screen}");
    answer(&mut a, "10");
    assert!(draw(&a, 120, 40).contains("quiz offsets · scores 1/1"));
    insta::assert_snapshot!("quiz_120x40", draw(&a, 120, 40));
    insta::assert_snapshot!("quiz_80x24", {
        let mut b = quiz_app(QuizLevel::Offsets);
        answer(&mut b, "8");
        draw(&b, 80, 24)
    });
    // digits type the answer in quiz mode: 2 is not the code tab
    key(&mut a, KeyCode::Char('2'));
    assert_eq!(tracer(&a).quiz.as_ref().unwrap().input, "2");
    key(&mut a, KeyCode::Esc);
    assert_eq!(tracer(&a).quiz.as_ref().unwrap().input, "", "Esc clears the answer");
    key(&mut a, KeyCode::Char('Q'));
    assert!(tracer(&a).quiz.is_none(), "Q stops the quiz");
    assert!(draw(&a, 120, 40).contains(&format!("#{} read", n + 2)));
}

#[test]
fn the_kernel_expression_gives_every_recorded_offset() {
    // every event of every shipped scenario and mistake, every variant and both passes: the
    // offset expression the quiz shows evaluates to the offset the log recorded
    let mut scenarios: Vec<Scenario> = [
        "backward_simple",
        "cross_attention",
        "dropout",
        "separate_qkv",
        "batch_b2",
        "masked_element",
        "numeric_mha",
        "indexing_trace",
    ]
    .iter()
    .map(|n| Scenario::shipped(n).unwrap())
    .collect();
    for name in [
        "no_input_projection",
        "mask_by_multiply",
        "softmax_over_two_dims",
        "scale_by_seq_len",
    ] {
        scenarios.push(Scenario::mistake(name).unwrap());
    }
    let mut checked = 0;
    for s in &mut scenarios {
        s.variants = Variant::STANDARD.to_vec();
        let traced = TracedScenario::from_scenario(s);
        for run in traced.runs.iter().chain(&traced.mistaken) {
            let trace = run.trace.as_ref().unwrap();
            let shape = kernel_shape(traced.shape, run.variant);
            for n in 0..trace.len() {
                let acc = quiz::access(trace, shape, n).unwrap();
                let (expr, _) = acc.expr.as_ref().unwrap_or_else(|| {
                    panic!(
                        "{} {} #{n}: no kernel expression for {}[{}]",
                        s.title, run.variant, acc.buf, acc.offset
                    )
                });
                assert!(
                    acc.working().ends_with(&format!("{}[{}]", acc.buf, acc.offset)),
                    "{expr}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 20_000, "{checked} events");
}

#[test]
fn quiz_flag_opens_the_tracer_in_quiz_mode() {
    let s = Scenario::shipped("backward_simple").unwrap();
    let mut a = App::opening(s, None, Theme::MONO, 80, 24);
    a.quiz = Some(QuizLevel::Values);
    settle(&mut a);
    assert!(matches!(a.screen, Screen::Tracer(_)));
    assert_eq!(tracer(&a).quiz.as_ref().unwrap().level, QuizLevel::Values);
    // a bad level is refused before the terminal is taken
    assert_cmd::Command::cargo_bin("attn-trace")
        .unwrap()
        .args(["tui", "scenarios/mha_walkthrough.toml", "--quiz=hard"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("expected one of offsets, values, iterations"));
}

/// The ways a value is printed on screen with enough digits to be told apart from another (four
/// decimals, at least four significant digits, `explain`'s, and the extra digits a chain may
/// take): a form with fewer than three significant digits could be any nearby number.
///
/// An infinity is no computed value: it is the initial `m = −∞` the code panel spells too.
fn answer_forms(v: f32) -> Vec<String> {
    if !v.is_finite() {
        return Vec::new();
    }
    let mut forms = vec![four(v), exact(v), num(v)];
    forms.extend((4..=8).map(|d| fixed(v, d)));
    forms.retain(|f| f.trim_start_matches(['-', '0', '.']).len() >= 3);
    forms.sort();
    forms.dedup();
    forms
}

/// Is `text` on `screen` as a number of its own (not the start or end of a longer one)?
fn shows_number(screen: &str, text: &str) -> bool {
    screen.match_indices(text).any(|(at, _)| {
        let before = screen[..at].chars().next_back();
        let after = screen[at + text.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit() || c == '.');
        !part(before) && !part(after) && (before != Some('-') || text.starts_with('-'))
    })
}

/// What of the answer to the write `w` is on the screen, if anything: a form of its value that
/// no value the log already holds at `cursor` prints as (a copy writes the value it just read,
/// a rotation by a tiny angle writes a value that prints as the one it turned: those are on
/// screen as what they are, and give nothing away).
///
/// Nor a number one printed operation away from it: the sum of the products, which the write
/// then scales, adds to an old value or a bias, negates, or turns into flash's `P`, `dS` or
/// rescaled accumulator (`Σ × 1/√D = -0.4440 × 1/√2` is the answer -0.3139 but for a product).
fn given_away(screen: &str, traced: &TracedScenario, variant: Variant, cursor: usize, w: usize) -> Option<String> {
    let trace = traced.trace(variant)?;
    // the softmax backward's `D = Σ_k dP·P`, kept for the sink's gradient, is written after
    // pass b, whose every `dS = P (dP − Σ)` printed it: the row's Σ, not a new value
    if trace.events[w].buf == Buf::Delta {
        return None;
    }
    let start = trace.span_range(trace.phase_span(cursor)).start;
    let known: Vec<String> = (start..=cursor)
        .flat_map(|k| answer_forms(trace.events[k].value))
        .collect();
    let scale = Scale::in_trace(trace, variant, traced.shape);
    let sigma = Accumulation::at(trace, w)
        .filter(|acc| acc.write == w && !acc.terms.is_empty())
        .and_then(|acc| acc.will(trace, scale))
        .map(|chain| chain.sigma);
    let forms: Vec<String> = std::iter::once(trace.events[w].value)
        .chain(sigma)
        .flat_map(answer_forms)
        .filter(|f| !known.contains(f))
        .collect();
    let line = screen.lines().find(|l| forms.iter().any(|f| shows_number(l, f)))?;
    Some(format!("{forms:?} in {line:?}"))
}

/// Issue 53, item 5: while a value question is open (`--quiz=values`, a lesson's `ask =
/// "value"`), nothing on screen gives its answer away: the equation panel says what the write
/// will compute, without the result, the partial sum that is the answer is held back, and the
/// log does not show the write.
#[test]
fn an_open_value_question_never_shows_its_answer() {
    // the quiz at the values level, before every write of a spread of each shipped log (both
    // sizes)
    let dir = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios")).unwrap();
    let mut names: Vec<String> = dir
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in &names {
        let traced = std::sync::Arc::new(TracedScenario::from_scenario(&Scenario::shipped(name).unwrap()));
        for run in &traced.runs {
            let Some(trace) = &run.trace else { continue };
            let writes: Vec<usize> = (1..trace.len()).filter(|&n| trace.events[n].op == Op::Write).collect();
            // the equation and Variables panels, which say what the write will compute, before
            // a dense spread of the writes (every write of the small logs)
            for &w in writes.iter().step_by((writes.len() / 300).max(1)) {
                let mut st = tracer_at(&traced, run.variant, w - 1);
                st.start_quiz(QuizLevel::Values);
                let ctx = st.ctx(Theme::MONO).unwrap();
                let text: String = equation::lines(&ctx)
                    .iter()
                    .chain(&variables::lines(&ctx))
                    .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect::<String>() + "\n")
                    .collect();
                if let Some(what) = given_away(&text, &traced, run.variant, w - 1, w) {
                    panic!(
                        "{name} {} quiz at #{}: the answer of #{w} shows: {what}\n{text}",
                        run.variant,
                        w - 1
                    );
                }
            }
            // and the whole screen, before a spread of them
            let step = (writes.len() / 30).max(1);
            for (k, &w) in writes.iter().step_by(step).enumerate() {
                let mut st = tracer_at(&traced, run.variant, w - 1);
                st.start_quiz(QuizLevel::Values);
                let sizes: &[(u16, u16)] = if k % 4 == 0 {
                    &[(120, 40), (80, 24)]
                } else {
                    &[(120, 40)]
                };
                for &(cols, rows) in sizes {
                    let screen = tracer_screen(&st, cols, rows);
                    if let Some(what) = given_away(&screen, &traced, run.variant, w - 1, w) {
                        panic!(
                            "{name} {} quiz at #{}: the answer of #{w} is on screen: {what}\n{screen}",
                            run.variant,
                            w - 1
                        );
                    }
                }
            }
        }
    }
    // every shipped lesson's value questions, in both languages and sizes
    let lessons = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/lessons")).unwrap();
    let mut asked = 0;
    for path in lessons.map(|e| e.unwrap().path()) {
        let lesson = Lesson::load(&path).unwrap();
        let lang = if path.to_string_lossy().contains(".zh-CN.") {
            Lang::ZhCn
        } else {
            Lang::En
        };
        let traced = std::sync::Arc::new(TracedScenario::from_scenario(
            &Scenario::load(&lesson.scenario).unwrap(),
        ));
        let stops = lesson::resolve(&lesson, &traced).unwrap();
        i18n::with_lang(lang, || {
            for (w, h) in [(80, 24), (120, 40)] {
                let mut a = App::with_lesson(
                    std::sync::Arc::clone(&traced),
                    LessonRun::new(std::sync::Arc::new(lesson.clone()), stops.clone()),
                    Theme::MONO,
                    w,
                    h,
                );
                for (k, here) in stops.iter().enumerate() {
                    if matches!(lesson.stops[k].ask, Some(Ask::Value { .. })) {
                        asked += 1;
                        let target = here.target.unwrap();
                        let shown = crate::tests::support::tui::screen(&a, w, h);
                        if let Some(what) = given_away(&shown, &traced, here.variant, here.place.cursor, target) {
                            panic!("{path:?} stop {k} at {w}×{h}: the answer is on screen: {what}\n{shown}");
                        }
                    }
                    key(&mut a, KeyCode::Char('N'));
                }
            }
        });
    }
    assert!(asked >= 8, "{asked} lesson value questions checked");
}
