//! The lesson panel: which stop of how many, the teacher's note, the stop's question with what
//! has been typed, and how the answer went.

use crate::tui::lesson::{Answer, LessonRun};
use crate::tui::theme::Theme;
use crate::tui::traced_scenario::TracedScenario;
use attn_trace_i18n::tr;
use ratatui::text::{Line, Span};

/// The panel's lines for the tracer at `cursor` of `variant`, fitted into `rows` rows of `width`
/// columns: the question, the answer being typed and the feedback always whole, the note cut
/// with `…` when there is no room for all of it.
pub(crate) fn lines<'a>(
    run: &LessonRun,
    traced: &TracedScenario,
    variant: attn_trace_core::kernels::Variant,
    cursor: usize,
    t: Theme,
    width: u16,
    rows: u16,
) -> Vec<Line<'a>> {
    let (right, asked) = run.score();
    let here = run.at_stop(variant, cursor);
    let mut head = vec![Span::styled(
        tr!("Stop {k} of {n}", k = run.at + 1, n = run.stops.len()),
        t.title(),
    )];
    if asked > 0 {
        head.push(Span::styled(tr!(" · score {right}/{asked}", right, asked), t.dim()));
    }
    if !here && run.stop().ask.is_some() && run.answers[run.at] == Answer::Open {
        head.push(Span::styled(tr!(" · R returns to the stop"), t.key()));
    }
    head.push(Span::raw(" · "));
    let mut out = vec![];
    if let Some(q) = run.question(traced) {
        let mut line = vec![Span::styled(tr!("Question: "), t.title()), Span::raw(q)];
        match run.answers[run.at] {
            Answer::Open if run.asking(variant, cursor) => {
                line.push(Span::styled(format!(" › {}▏", run.input), t.key()));
            }
            Answer::Open => line.push(Span::styled(tr!(" (answer it at the stop)"), t.dim())),
            Answer::Right { .. } | Answer::Revealed => {}
        }
        out.push(Line::from(line));
    }
    out.extend(run.feedback.as_ref().map(|f| super::quiz::feedback_line(f, t)));
    // the note gets the rows the rest leaves, cut at a word with `…` when it needs more
    let left = rows.saturating_sub(super::wrapped_rows(&out, width)).max(1);
    let note = run.stop().note.clone();
    let fitted = |text: &str| {
        let mut spans = head.clone();
        spans.push(Span::raw(text.to_string()));
        Line::from(spans)
    };
    let mut line = fitted(&note);
    if super::wrapped_rows(std::slice::from_ref(&line), width) > left {
        let words: Vec<&str> = note.split(' ').collect();
        let mut n = words.len();
        while n > 1 {
            n -= 1;
            line = fitted(&format!("{}…", words[..n].join(" ")));
            if super::wrapped_rows(std::slice::from_ref(&line), width) <= left {
                break;
            }
        }
    }
    out.insert(0, line);
    out
}
