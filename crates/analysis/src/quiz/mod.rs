//! Quiz mode's questions and their answers, read from the log: before each step the learner
//! predicts the next access, the flat offset it touches (and at the second level the value a
//! write stores), or at the third level every read of the next loop iteration. The working
//! shown for a wrong answer comes from the kernel's own line: the offset expression it passes to
//! `rec.read` / `rec.write` / `rec.add` (`q_base + d`), with the loop variables and the derived
//! offsets of that event substituted, and the derived offsets' formulas from `formula.rs`
//! (`q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*2 + 1)*2 = 10`). Every kernel calls the
//! recorder this way, so a new variant's kernel needs nothing here; an expression that does not
//! give the recorded offset is never shown (the working then lists the derived offsets only).
//!
//! The quiz's state (the typed answer, the scores) and its keys are the TUI's (`tui::quiz`).

mod answer;
mod working;

pub use answer::{Verdict, check, offset_ranges, offsets, offsets_named, value_matches};
pub use working::{Access, access, line_accesses};

use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Op, Trace};
use attn_trace_i18n::tr;

/// The source text of the kernel file a trace records (`Kind.file`), where the offset
/// expressions are read: the TUI passes the kernels it embeds (`attn_trace_core::source::source`).
pub type KernelSource = fn(&str) -> Option<&'static str>;

/// How much the learner predicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QuizLevel {
    /// The flat offset of the next access.
    #[default]
    Offsets,
    /// The offset, and for a write the value it stores.
    Values,
    /// Every read of the next loop iteration, in order.
    Iterations,
}

impl QuizLevel {
    pub const ALL: [QuizLevel; 3] = [QuizLevel::Offsets, QuizLevel::Values, QuizLevel::Iterations];

    pub const fn name(self) -> &'static str {
        match self {
            QuizLevel::Offsets => "offsets",
            QuizLevel::Values => "values",
            QuizLevel::Iterations => "iterations",
        }
    }

    pub fn from_name(name: &str) -> Option<QuizLevel> {
        QuizLevel::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The level after this one (wrapping around).
    #[must_use]
    pub fn next(self) -> QuizLevel {
        let k = QuizLevel::ALL.iter().position(|&l| l == self).unwrap_or(0);
        QuizLevel::ALL[(k + 1) % QuizLevel::ALL.len()]
    }

    /// What the learner types at this level.
    pub fn about(self) -> &'static str {
        match self {
            QuizLevel::Offsets => tr!("the flat offset of each next access"),
            QuizLevel::Values => tr!("the offset of each next access, and the value of each write"),
            QuizLevel::Iterations => tr!("the offsets of every read of the next loop iteration, in order"),
        }
    }
}

/// Most reads one iteration question asks for; a larger iteration is asked a level further in.
pub const MAX_READS: usize = 16;

/// What the learner is asked to predict next.
#[derive(Clone, Debug, PartialEq)]
pub enum Question {
    /// The next access.
    One(Access),
    /// Every read of the rest of one loop iteration (`j=2`), in order; `last` is the
    /// iteration's last event, where a right answer moves the cursor.
    Iteration {
        name: String,
        reads: Vec<Access>,
        last: usize,
    },
}

impl Question {
    /// The first event the question is about.
    pub fn first(&self) -> usize {
        match self {
            Question::One(a) => a.n,
            Question::Iteration { reads, .. } => reads.first().map_or(0, |a| a.n),
        }
    }

    /// Where the cursor goes once the question is answered.
    pub fn target(&self) -> usize {
        match self {
            Question::One(a) => a.n,
            Question::Iteration { last, .. } => *last,
        }
    }

    /// What it asks for, in words.
    pub fn ask(&self, level: QuizLevel) -> String {
        match self {
            Question::One(a) if level == QuizLevel::Values && a.op == Op::Write => {
                tr!("next: {what}: its offset and the value it writes?", what = a.what())
            }
            Question::One(a) => tr!("next: {what}: its flat offset?", what = a.what()),
            Question::Iteration { name, reads, .. } => {
                let mut bufs: Vec<String> = Vec::new();
                for r in reads {
                    let b = r.buf.to_string();
                    if !bufs.contains(&b) {
                        bufs.push(b);
                    }
                }
                let n = reads.len();
                let bufs = bufs.join(tr!(", "));
                if n == 1 {
                    tr!("next: the 1 read of iteration {name} ({bufs}): its offset?", name, bufs)
                } else {
                    tr!(
                        "next: the {n} reads of iteration {name} ({bufs}): their offsets in order?",
                        n,
                        name,
                        bufs
                    )
                }
            }
        }
    }

    /// The answer, with its working.
    pub fn reveal(&self) -> String {
        match self {
            Question::One(a) => match a.op {
                Op::Write => format!("{} ← {}", a.working(), crate::format::num_of(a.buf, a.value)),
                Op::Read => tr!(
                    "{working} (holding {value})",
                    working = a.working(),
                    value = crate::format::num_of(a.buf, a.value)
                ),
            },
            Question::Iteration { name, reads, .. } => {
                let cells: Vec<String> = reads.iter().map(|a| format!("{}[{}]", a.buf, a.offset)).collect();
                let offsets: Vec<String> = reads.iter().map(|a| a.offset.to_string()).collect();
                tr!(
                    "iteration {name} reads {cells}: type {offsets}",
                    name,
                    cells = cells.join(" "),
                    offsets = offsets.join(" ")
                )
            }
        }
    }
}

/// The question at `cursor`: the access after it, or at [`QuizLevel::Iterations`] the reads of the
/// rest of the loop iteration that access starts or continues. `None` at the end of the log.
pub fn question(
    trace: &Trace,
    shape: Shape,
    cursor: usize,
    level: QuizLevel,
    source: KernelSource,
) -> Option<Question> {
    let next = cursor + 1;
    let one = || access(trace, shape, next, source).map(Question::One);
    if level != QuizLevel::Iterations {
        return one();
    }
    let e = trace.events.get(next)?;
    let Some(own) = trace.frame(e.frame) else { return one() };
    // a product's iteration (`d`, `c`) holds reads only: ask for the loop around it (`j`)
    let own_writes = (own.start..own.end).any(|k| trace.events[k as usize].op == Op::Write);
    let outer = if own_writes { None } else { trace.frame(own.parent) };
    let mut picks = outer.into_iter().chain([own]);
    let pick = picks.find(|f| {
        let reads = (next..f.end as usize)
            .filter(|&k| trace.events[k].op == Op::Read)
            .take(MAX_READS + 1)
            .count();
        (1..=MAX_READS).contains(&reads)
    });
    let Some(f) = pick else { return one() };
    let reads: Vec<Access> = (next..f.end as usize)
        .filter(|&k| trace.events[k].op == Op::Read)
        .filter_map(|k| access(trace, shape, k, source))
        .collect();
    let kind = &trace.kinds[f.kind as usize];
    let name = format!("{}={}", kind.names[0], f.vals[0]);
    Some(Question::Iteration {
        name,
        reads,
        last: f.end as usize - 1,
    })
}
