//! A typed answer checked against the log: an offset, a value, or the offsets of an
//! iteration's reads; and the working shown for a wrong offset.

use super::{Access, Question, QuizLevel};

use attn_trace_core::trace::{Op, Trace};
use attn_trace_i18n::tr;

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
        formula = tr!("{formula} with {derived}", formula, derived = used.join(tr!(", ")));
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
            Op::Read => tr!("this read has {coords}", coords = differ.join(tr!(", "))),
            Op::Write => tr!("this write has {coords}", coords = differ.join(tr!(", "))),
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
