//! The quiz panel: what to predict next, what has been typed, and how the last answer went
//! (`correct`, or `not quite` with the working from the kernel's line).

use crate::tui::quiz::{Feedback, Quiz};
use crate::tui::theme::Theme;
use attn_trace_analysis::quiz::Question;
use attn_trace_i18n::tr;
use ratatui::text::{Line, Span};

/// The panel's lines: the question with the answer being typed, then the feedback.
pub(crate) fn lines<'a>(quiz: &Quiz, question: Option<&Question>, t: Theme) -> Vec<Line<'a>> {
    let ask = match question {
        Some(q) => q.ask(quiz.level),
        None => tr!("the log ends here: nothing left to predict").to_string(),
    };
    let mut out = vec![Line::from(vec![
        Span::styled(tr!("Quiz · {level} · ", level = quiz.level.name()), t.title()),
        Span::raw(ask),
        Span::styled(format!(" › {}▏", quiz.input), t.key()),
    ])];
    out.extend(quiz.feedback.as_ref().map(|f| feedback_line(f, t)));
    out
}

/// How an answer went, coloured by its kind: the quiz's and a lesson's.
pub(crate) fn feedback_line<'a>(f: &Feedback, t: Theme) -> Line<'a> {
    match f {
        Feedback::Right(text) => Line::styled(text.clone(), t.op_read()),
        Feedback::Wrong(text) => Line::styled(text.clone(), t.error()),
        Feedback::Revealed(text) => Line::styled(text.clone(), t.number()),
        Feedback::Note(text) => Line::styled(text.clone(), t.dim()),
    }
}
