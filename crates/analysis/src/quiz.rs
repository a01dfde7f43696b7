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

use crate::formula::{self, Substituted};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Trace};
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

/// One access to predict, with how its kernel line computes the offset.
#[derive(Clone, Debug, PartialEq)]
pub struct Access {
    /// Its event number.
    pub n: usize,
    pub op: Op,
    pub buf: attn_trace_core::trace::Buf,
    pub offset: usize,
    pub value: f32,
    /// The offset expression as the kernel line writes it (`q_base + d`) and with the event's
    /// numbers (`10 + 1`); only when it gives the recorded offset.
    pub expr: Option<(String, String)>,
    /// The derived offsets the expression names (all of the event's without an expression),
    /// each formula substituted.
    pub derived: Vec<Substituted>,
}

impl Access {
    /// How the offset comes about: `q_base = ((bb*S + i)*H + hh)*D = ((0*3 + 2)*2 + 1)*2 = 10;
    /// q[q_base + d] = q[10 + 1] = q[11]`.
    pub fn working(&self) -> String {
        let mut parts: Vec<String> = self.derived.iter().map(ToString::to_string).collect();
        let (b, off) = (self.buf, self.offset);
        parts.push(match &self.expr {
            Some((e, _)) if formula::names(e).concat() == e.trim() => format!("{b}[{e}] = {b}[{off}]"),
            Some((e, nums)) => format!("{b}[{e}] = {b}[{nums}] = {b}[{off}]"),
            None => format!("{b}[{off}]"),
        });
        parts.join("; ")
    }

    /// `a read of q`, `a write of scores`.
    pub fn what(&self) -> String {
        match self.op {
            Op::Read => tr!("a read of {buf}", buf = self.buf),
            Op::Write => tr!("a write of {buf}", buf = self.buf),
        }
    }

    /// The kernel's expression, or the offset itself: what a missed question is counted under.
    pub fn key(&self) -> String {
        match &self.expr {
            Some((e, _)) => format!("{}[{e}]", self.buf),
            None => format!("{}[{}]", self.buf, self.offset),
        }
    }
}

/// The accesses a kernel line makes, in the order they run: `(op, offset expression)` for each
/// `.read(buf, data, OFFSET)`, `.write(buf, data, OFFSET, value)` and `.add(…)` (a read and a
/// write) call on it, left to right.
pub fn line_accesses(line: &str) -> Vec<(Op, String)> {
    let mut calls: Vec<(usize, &str)> = Vec::new();
    for method in ["read", "write", "add"] {
        let pat = format!(".{method}(");
        calls.extend(line.match_indices(&pat).map(|(at, _)| (at + pat.len(), method)));
    }
    calls.sort_unstable();
    let mut out = Vec::new();
    for (open, method) in calls {
        let Some(args) = arguments(&line[open..]) else { continue };
        let Some(expr) = args.get(2) else { continue };
        match method {
            "read" => out.push((Op::Read, expr.clone())),
            "write" => out.push((Op::Write, expr.clone())),
            _ => {
                out.push((Op::Read, expr.clone()));
                out.push((Op::Write, expr.clone()));
            }
        }
    }
    out
}

/// The comma-separated arguments of a call whose `(` has just been passed, up to its `)`.
fn arguments(rest: &str) -> Option<Vec<String>> {
    let (mut depth, mut args, mut cur) = (0usize, Vec::new(), String::new());
    for ch in rest.chars() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' if depth == 0 => {
                args.push(cur.trim().to_string());
                return Some(args);
            }
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                args.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    None
}

/// Events of one iteration scanned at most, to find an access's place on its line.
const SCAN_LIMIT: usize = 4096;

/// The offset expressions event `n`'s line may have used, the likeliest first: the call whose
/// place on the line matches the number of this iteration's earlier accesses from that line.
fn candidates(trace: &Trace, n: usize, source: KernelSource) -> Vec<String> {
    let Some(&e) = trace.events.get(n) else {
        return Vec::new();
    };
    let Some(text) = source(trace.file_of(n)) else {
        return Vec::new();
    };
    let Some(line) = (e.line as usize).checked_sub(1).and_then(|l| text.lines().nth(l)) else {
        return Vec::new();
    };
    let calls = line_accesses(line);
    let start = trace
        .frame(e.frame)
        .map_or(n, |f| f.start as usize)
        .max(n.saturating_sub(SCAN_LIMIT));
    let before = (start..n)
        .filter(|&k| trace.events[k].frame == e.frame && trace.events[k].line == e.line)
        .count();
    let mut out = Vec::new();
    if !calls.is_empty() {
        let (op, expr) = &calls[before % calls.len()];
        if *op == e.op {
            out.push(expr.clone());
        }
    }
    for (op, x) in calls {
        if op == e.op && !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// Event `n` as a question: its access, and the working that gives its offset. `shape` is the
/// shape the variant's kernel runs with (`engine::kernel_shape`); `source` gives its kernel's code.
pub fn access(trace: &Trace, shape: Shape, n: usize, source: KernelSource) -> Option<Access> {
    let e = *trace.events.get(n)?;
    let view = trace.view(n);
    let mut symbols: Vec<(&str, usize)> = formula::sizes(shape, view.phase);
    symbols.extend(view.consts.iter().copied());
    symbols.extend(view.vars.iter().copied());
    symbols.extend(view.derived.iter().map(|d| (d.name, d.value)));
    // flash's tile sizes (`ii * bc + jj`), as its score tile is laid out
    if let Some(dims) = trace.buffer(Buf::STile).map(|b| b.layout().dims.clone()) {
        symbols.extend(dims.first().map(|d| ("br", d.size)));
        symbols.extend(dims.get(1).map(|d| ("bc", d.size)));
    }
    let expr = candidates(trace, n, source).into_iter().find_map(|text| {
        let (numbers, value) = formula::evaluate(&text, &symbols)?;
        (value == e.offset as usize).then_some((text, numbers))
    });
    let lines = formula::derived_lines(&view, shape);
    let derived = match &expr {
        Some((text, _)) => {
            let used = formula::names(text);
            lines.into_iter().filter(|s| used.contains(&s.name)).collect()
        }
        None => lines,
    };
    Some(Access {
        n,
        op: e.op,
        buf: e.buf,
        offset: e.offset as usize,
        value: e.value,
        expr,
        derived,
    })
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
                let bufs = bufs.join(", ");
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

/// How an answer was taken.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Right,
    /// Wrong: why, with the working. `missed` is the access that was got wrong.
    Wrong {
        text: String,
        missed: String,
    },
    /// Not an answer yet (nothing typed, a value missing): what to type.
    Incomplete(String),
}

/// Whether `typed` is close enough to `value`: within 0.01 plus 1% (the panels show two decimals).
pub fn value_matches(typed: f32, value: f32) -> bool {
    typed == value || (typed - value).abs() <= 0.01 + 0.01 * value.abs()
}

/// Offsets typed as numbers or ranges, `a..=b` (`a..b` excludes `b`), separated by spaces or
/// commas: each token as the range it names, nothing expanded yet (`0..=18446744073709551615` is
/// two numbers, not a list to allocate).
pub fn offset_ranges(input: &str) -> Result<Vec<std::ops::RangeInclusive<u64>>, String> {
    let mut out = Vec::new();
    for tok in input.split([' ', ',']).filter(|t| !t.is_empty()) {
        let bad = || {
            tr!(
                "{tok} is not an offset: type whole numbers (or a range like 10..=13)",
                tok = format!("{tok:?}")
            )
        };
        let num = |t: &str| t.parse::<u64>().map_err(|_| bad());
        let range = if let Some((a, b)) = tok.split_once("..=") {
            let (a, b) = (num(a)?, num(b)?);
            a..=b.max(a)
        } else if let Some((a, b)) = tok.split_once("..") {
            let (a, b) = (num(a)?, num(b)?);
            // an empty `a..a` names no offset
            match b.checked_sub(1) {
                Some(last) if last >= a => a..=last,
                _ => continue,
            }
        } else {
            let n = num(tok)?;
            n..=n
        };
        out.push(range);
    }
    Ok(out)
}

/// How many offsets the ranges name (up to `u64::MAX` each, so counted in `u128`).
pub fn offsets_named(ranges: &[std::ops::RangeInclusive<u64>]) -> u128 {
    ranges.iter().map(|r| (*r.end() - *r.start()) as u128 + 1).sum()
}

/// The offsets the ranges name, in order, at most `max` of them: never more than the question
/// can use, whatever was typed.
pub fn offsets(ranges: &[std::ops::RangeInclusive<u64>], max: usize) -> Vec<u64> {
    ranges.iter().flat_map(std::clone::Clone::clone).take(max).collect()
}

/// Checks `input` against question `q` at `level`. `math` is the phase's equation, named when a
/// written value is wrong; `after` is the access following the asked one, which a wrong answer
/// is often the offset of. A wrong offset is explained without the expected number
/// (`wrong_offset`); `trace` gives the buffers' layouts for it.
pub fn check(
    q: &Question,
    level: QuizLevel,
    input: &str,
    math: &str,
    after: Option<&Access>,
    trace: &Trace,
) -> Verdict {
    let input = input.trim();
    if input.is_empty() {
        return Verdict::Incomplete(tr!("type the offset, then Enter (v reveals it)").into());
    }
    match q {
        Question::One(a) => {
            let mut toks = input.split([' ', ',']).filter(|t| !t.is_empty());
            let (off, val) = (toks.next().unwrap_or(""), toks.next());
            let Ok(off) = off.parse::<usize>() else {
                return Verdict::Incomplete(tr!(
                    "{off} is not an offset: type a whole number, e.g. 10",
                    off = format!("{off:?}")
                ));
            };
            let val = match val.map(str::parse::<f32>) {
                Some(Ok(v)) => Some(v),
                Some(Err(_)) => {
                    return Verdict::Incomplete(
                        tr!("the value after the offset is not a number (e.g. -0.31, -1e9)").into(),
                    );
                }
                None => None,
            };
            if off != a.offset {
                let hint = match after {
                    Some(b) if b.offset == off && b.buf == a.buf => {
                        tr!(" (that is the access after it, {key})", key = b.key())
                    }
                    Some(b) if b.offset == off => {
                        tr!(
                            " (that is {buf}[{off}], the access after it)",
                            buf = b.buf,
                            off = b.offset
                        )
                    }
                    _ => String::new(),
                };
                return Verdict::Wrong {
                    text: tr!("not quite: {why}{hint}", why = wrong_offset(a, off as u64, trace), hint),
                    missed: a.key(),
                };
            }
            let needs_value = level == QuizLevel::Values && a.op == Op::Write;
            match val {
                None if needs_value => Verdict::Incomplete(tr!(
                    "{buf}[{off}] is right; now its value too: {off} VALUE, e.g. {off} {example}",
                    buf = a.buf,
                    off,
                    example = if a.value < 0.0 { "-0.5" } else { "0.5" }
                )),
                Some(v) if a.op == Op::Write && !value_matches(v, a.value) => Verdict::Wrong {
                    text: tr!(
                        "not quite: {buf}[{off}] is right, but the value is not {v}: {math}",
                        buf = a.buf,
                        off,
                        v,
                        math = attn_trace_i18n::text_of(math)
                    ),
                    missed: tr!("{key} (value)", key = a.key()),
                },
                _ => Verdict::Right,
            }
        }
        Question::Iteration { name, reads, .. } => {
            let ranges = match offset_ranges(input) {
                Ok(r) => r,
                Err(e) => return Verdict::Incomplete(e),
            };
            // the iteration's reads, and one more to tell a longer answer: all that is expanded
            let typed = offsets(&ranges, reads.len() + 1);
            let named = offsets_named(&ranges);
            for (k, a) in reads.iter().enumerate() {
                match typed.get(k) {
                    Some(&t) if t == a.offset as u64 => {}
                    Some(&t) => {
                        return Verdict::Wrong {
                            text: tr!(
                                "not quite: read {k} of {n} of iteration {name}: {why}",
                                k = k + 1,
                                n = reads.len(),
                                name,
                                why = wrong_offset(a, t, trace)
                            ),
                            missed: a.key(),
                        };
                    }
                    None => {
                        return Verdict::Wrong {
                            text: tr!(
                                "not quite: iteration {name} makes {n} reads, you typed {typed} offsets",
                                name,
                                n = reads.len(),
                                typed = named
                            ),
                            missed: tr!("iteration {name}", name),
                        };
                    }
                }
            }
            if named > reads.len() as u128 {
                return Verdict::Wrong {
                    text: tr!(
                        "not quite: the first {n} are right, but iteration {name} makes only {n} reads",
                        n = reads.len(),
                        name
                    ),
                    missed: tr!("iteration {name}", name),
                };
            }
            Verdict::Right
        }
    }
}

/// Why `typed` is not the offset of access `a`, without the offset itself: the kernel's
/// formula, then the typed number placed in the buffer's layout (the cell it names, by
/// coordinate), then the coordinates where the asked access differs. "q[q_base + d] with
/// q_base = ((bb*S + i)*H + hh)*D: you typed 8 = q[b=0, i=2, h=0, d=0]; this read has h=1".
pub(crate) fn wrong_offset(a: &Access, typed: u64, trace: &Trace) -> String {
    let mut formula = match &a.expr {
        Some((e, _)) => format!("{}[{e}]", a.buf),
        None => String::new(),
    };
    let used: Vec<String> = a
        .derived
        .iter()
        .map(|s| format!("{} = {}", s.name, s.formula))
        .collect();
    if !formula.is_empty() && !used.is_empty() {
        formula = tr!("{formula} with {derived}", formula, derived = used.join(", "));
    }
    let Some(layout) = trace.buffer(a.buf).map(attn_trace_core::trace::BufferInfo::layout) else {
        return tr!("{formula}: you typed {typed}", formula, typed);
    };
    let len: usize = layout.dims.iter().map(|d| d.size).product();
    let place = if typed >= len as u64 {
        tr!(
            "you typed {typed}, past the end of {buf}, whose {len} elements are 0..{last}",
            typed,
            buf = a.buf,
            len,
            last = len.saturating_sub(1)
        )
    } else {
        let names = layout.names();
        let (mine, theirs) = (layout.index(typed as usize), layout.index(a.offset));
        let coords: Vec<String> = names.iter().zip(&mine).map(|(n, x)| format!("{n}={x}")).collect();
        let differ: Vec<String> = names
            .iter()
            .zip(mine.iter().zip(&theirs))
            .filter(|(_, (m, t))| m != t)
            .map(|(n, (_, t))| format!("{n}={t}"))
            .collect();
        let this = match a.op {
            Op::Read => tr!("this read has {coords}", coords = differ.join(", ")),
            Op::Write => tr!("this write has {coords}", coords = differ.join(", ")),
        };
        tr!(
            "you typed {typed} = {buf}[{coords}]; {this}",
            typed,
            buf = a.buf,
            coords = coords.join(", "),
            this
        )
    };
    if formula.is_empty() {
        place
    } else {
        tr!("{formula}: {place}", formula, place)
    }
}
