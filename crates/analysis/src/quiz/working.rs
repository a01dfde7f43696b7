//! The access to predict and its working: the offset expression read from the kernel's line,
//! with the event's loop variables and derived offsets substituted.

use super::KernelSource;

use crate::formula::{self, Substituted};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Trace};
use attn_trace_i18n::tr;

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
