//! The `--quiz-report` file: how the quiz and a lesson's questions went, for a teacher's
//! scripts. Above both the quiz's scores and the lesson's answers, which it reads.

use crate::tui::lesson::{Answer, LessonRun};
use crate::tui::quiz::Quiz;
use crate::tui::traced_scenario::TracedScenario;

/// The `--quiz-report` file: per phase of each kernel, how the quiz went; and with a lesson, how
/// each stop's question went. JSON, for a teacher's scripts:
/// `{"scenario": …, "phases": [{"variant", "pass", "phase", "right", "retried", "revealed",
/// "skipped", "missed": {…}}], "lesson": {"title", "right", "asked", "stops": [{"at", "answer",
/// "tries"}]}}`.
pub(crate) fn report(traced: &TracedScenario, quiz: Option<&Quiz>, lesson: Option<&LessonRun>) -> String {
    let phases: Vec<serde_json::Value> = quiz
        .map(|q| {
            q.scores
                .iter()
                .filter_map(|(&(variant, span), score)| {
                    let &(_, phase) = traced.trace(variant)?.phases.get(span)?;
                    Some(serde_json::json!({
                        "variant": variant.name(),
                        "pass": phase.pass().name(),
                        "phase": phase.name(),
                        "right": score.right,
                        "retried": score.retried,
                        "revealed": score.revealed,
                        "skipped": score.skipped,
                        "missed": score.missed,
                    }))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = serde_json::json!({
        "scenario": traced.source,
        "phases": phases,
    });
    if let Some(run) = lesson {
        let (right, asked) = run.score();
        let stops: Vec<serde_json::Value> = run
            .lesson
            .stops
            .iter()
            .zip(run.answers.iter().zip(&run.tries))
            .map(|(stop, (answer, tries))| {
                let answer = match (stop.ask.is_some(), answer) {
                    (false, _) => "no question",
                    (true, Answer::Open) => "open",
                    (true, Answer::Right { tries: 0 }) => "right",
                    (true, Answer::Right { .. }) => "right after a retry",
                    (true, Answer::Revealed) => "revealed",
                };
                serde_json::json!({"at": stop.at, "answer": answer, "tries": tries})
            })
            .collect();
        out["lesson"] = serde_json::json!({
            "title": run.lesson.title,
            "file": run.lesson.source,
            "right": right,
            "asked": asked,
            "stops": stops,
        });
    }
    let mut text = serde_json::to_string_pretty(&out).unwrap_or_default();
    text.push('\n');
    text
}
