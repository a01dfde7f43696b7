//! The code panel of a side: which source file and lines to show for the event at a place, with
//! the lines that make the mistake marked.

use attn_trace_analysis::mistakes::{MISTAKEN, Place, number, phases_of, removed_by};
use attn_trace_core::kernels::attention_mistakes::{Mistake, Mistakes};
use attn_trace_core::source;
use attn_trace_core::trace::{Phase, Trace};

/// The source file of `attention_mistakes.rs`, as the trace records it.
const MISTAKES_FILE: &str = "crates/core/src/kernels/attention_mistakes.rs";

/// 1-based lines of `attention_mistakes.rs` that show mistake `m`: its `MISTAKE n` comment (and
/// the comment lines continuing it), or for the passes the engine leaves out, the header line.
pub(crate) fn mistake_lines(m: Mistake) -> Vec<usize> {
    let Some(text) = source::source(MISTAKES_FILE) else {
        return Vec::new();
    };
    let tag = format!("MISTAKE {}", number(m));
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        if l.contains(&tag) {
            out.push(k + 1);
            // the comment goes on below without repeating the tag
            let more = lines[k + 1..]
                .iter()
                .take_while(|l| l.trim_start().starts_with("//") && !l.contains("MISTAKE"))
                .count();
            out.extend(k + 2..k + 2 + more);
        }
    }
    if out.is_empty() {
        let head = format!("//! {}. ", number(m));
        out.extend(lines.iter().position(|l| l.starts_with(&head)).map(|k| k + 1));
    }
    out
}

/// Of one mistake's marked lines in several runs of consecutive lines (mistake 7 is marked in two
/// loops, `d_v`'s and `d_k`'s), the run nearest above the line that ran: the one of its loop.
fn nearest_group(marks: Vec<usize>, current: Option<usize>) -> Vec<usize> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for l in marks {
        match groups.last_mut() {
            Some(g) if g.last().is_some_and(|&p| p + 1 == l) => g.push(l),
            _ => groups.push(vec![l]),
        }
    }
    if groups.len() < 2 {
        return groups.concat();
    }
    let Some(c) = current else {
        return groups.concat();
    };
    match groups.iter().rposition(|g| g[0] <= c) {
        Some(k) => groups.swap_remove(k),
        None => groups.concat(),
    }
}

/// What a code panel shows: a file, the line that ran (if one did), the loops around it, and the
/// lines to mark as the mistake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CodeView {
    pub file: &'static str,
    pub current: Option<usize>,
    pub loops: Vec<usize>,
    pub marks: Vec<usize>,
}

/// The code of one half at its place. The mistaken half shows `attention_mistakes.rs` whenever
/// the mistake's own code runs (also when it calls a shared helper, as mistake 6 calls the row
/// softmax), and its header line when it waits on a pass the mistake leaves out.
pub(crate) fn code_view(trace: &Trace, place: Place, side: usize, phase: Phase, mistakes: Mistakes) -> CodeView {
    if side == MISTAKEN
        && let Place::Waiting(_) = place
        && let Some(m) = removed_by(phase, mistakes)
    {
        return CodeView {
            file: MISTAKES_FILE,
            current: None,
            loops: Vec::new(),
            marks: mistake_lines(m),
        };
    }
    let n = place.event();
    let kinds = attn_trace_analysis::scope::loops(trace, n);
    let innermost = kinds.first().map_or("", |k| k.file);
    let line = trace.events.get(n).map_or(0, |e| e.line as usize);
    let in_mistakes = |file: &str| source::short(file) == source::short(MISTAKES_FILE);
    let own = side == MISTAKEN && !in_mistakes(innermost) && kinds.iter().any(|k| in_mistakes(k.file));
    let file = if own {
        kinds.iter().find(|k| in_mistakes(k.file)).map_or(innermost, |k| k.file)
    } else {
        innermost
    };
    let loops = kinds
        .iter()
        .filter(|k| k.file == file)
        .map(|k| k.line as usize)
        .collect();
    // a helper called from the mistake's loop: the loop line is where the mistaken file is
    let current = if own {
        kinds.iter().find(|k| k.file == file).map(|k| k.line as usize)
    } else {
        Some(line)
    };
    let marks = if side == MISTAKEN && in_mistakes(file) {
        mistakes
            .list()
            .into_iter()
            .filter(|&m| phases_of(m).contains(&phase))
            .flat_map(|m| nearest_group(mistake_lines(m), current))
            .collect()
    } else {
        Vec::new()
    };
    CodeView {
        file,
        current,
        loops,
        marks,
    }
}
