//! The grade in words: the results per input, each finding, the accesses on both sides and
//! where the runs first part, as `grade` prints them.

use super::{Args, Outcome};
use attn_trace_analysis::format::thousands;
use attn_trace_analysis::grade::{ATOL, Divergence, Finding, Grade, Kind, RTOL, Touch};
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use std::fmt::Write as _;

/// A value with six significant digits.
fn v(x: f32) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if (-4..6).contains(&mag) {
        let decimals = usize::try_from(5 - mag).unwrap_or(0);
        format!("{x:.decimals$}")
    } else {
        format!("{x:.5e}")
    }
}

/// An access as its side made it: `q[10]=0.25`; the learner's with the reference cell when
/// their buffer or offset differ from ours (`inp[37]=0.25 (q[b0 i2 h1 d0])`), the cell's notes,
/// and ✗ before a read the reference does not make there.
fn touch(t: &Touch) -> String {
    let mut s = format!(
        "{}{}[{}]={}",
        if t.stray { "✗" } else { "" },
        t.buffer,
        t.offset,
        v(t.value)
    );
    let ours = format!("{}[", t.buffer);
    let notes: Vec<String> = t
        .cell
        .iter()
        .filter(|c| !c.starts_with(&ours) || t.buffer.is_empty())
        .cloned()
        .chain(t.note.clone())
        .collect();
    if !notes.is_empty() {
        let _ = write!(s, " ({})", notes.join("; "));
    }
    s
}

fn touches(list: &[Touch], more: usize) -> String {
    let mut s = list.iter().map(touch).collect::<Vec<_>>().join(" ");
    if more > 0 {
        let _ = write!(s, " {}", tr!("and {n} more", n = more));
    }
    if s.is_empty() {
        s = tr!("no read since the write before it").into();
    }
    s
}

/// The plain-text report: every input's verdict, then the full grade of input `shown`.
pub(super) fn describe(args: &Args, outcomes: &[Outcome], shown: usize, variant: Variant, pass: Pass) -> String {
    let mut s = String::new();
    let scenario = args.scenario.display();
    let source = args.trace.as_ref().map_or_else(
        || {
            args.command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        },
        |t| t.display().to_string(),
    );
    let _ = writeln!(
        s,
        "{}",
        tr!(
            "Grading {source} against the {variant} {pass} pass of {scenario}",
            source,
            variant = variant.name(),
            pass = pass.name(),
            scenario
        )
    );
    if args.trace.is_none() {
        for o in outcomes {
            let which = if o.input == 0 {
                tr!("input 0 (the scenario's own)").to_string()
            } else {
                tr!("input {k} (random)", k = o.input).to_string()
            };
            let verdict = match (&o.program, &o.grade) {
                (Some(why), _) => tr!("your program {why}", why).to_string(),
                (None, Some(g)) if g.correct() => tr!("right").into(),
                (None, _) => tr!("wrong").into(),
            };
            let _ = writeln!(s, "  {which}: {verdict}");
        }
    }
    let Some(o) = outcomes.get(shown) else { return s };
    if let Some(g) = &o.grade {
        if args.trace.is_none() {
            let _ = writeln!(s, "\n{}", tr!("Input {k} in detail:", k = o.input));
        }
        let _ = writeln!(s, "{}", tr!("{n} accesses recorded", n = thousands(g.events)));
        results(&mut s, g);
        accesses(&mut s, g);
        divergence(&mut s, g, args);
    }
    let verdict = if outcomes.iter().all(Outcome::correct) {
        tr!("Verdict: right. Results within tolerance and no access errors.").to_string()
    } else if outcomes.len() > 1 && outcomes.first().is_some_and(Outcome::correct) && o.program.is_none() {
        tr!(
            "Verdict: wrong. Right on the scenario's own input, wrong on random input {k}: right there only by luck.",
            k = o.input
        )
        .to_string()
    } else {
        tr!("Verdict: wrong.").to_string()
    };
    let _ = writeln!(s, "\n{verdict}");
    s
}

fn results(s: &mut String, g: &Grade) {
    let wrong = g.results.iter().filter(|r| r.wrong + r.missing + r.misread > 0).count();
    let _ = writeln!(
        s,
        "\n1. {}",
        if wrong == 0 {
            tr!(
                "Results: right (within {rtol}·|ref| + {atol}·max(1, max|ref|))",
                rtol = format!("{RTOL:e}"),
                atol = format!("{ATOL:e}")
            )
            .to_string()
        } else {
            tr!("Results: {wrong} of {n} buffers wrong", wrong, n = g.results.len()).to_string()
        }
    );
    for r in &g.results {
        let name = r.buffer.name();
        let line = match &r.first {
            None => tr!("✓ {name}: {n} cells right", name, n = r.cells).to_string(),
            Some(_) if r.missing == r.cells => {
                tr!("✗ {name}: never written ({n} cells expected)", name, n = r.cells).to_string()
            }
            Some(c) if r.wrong + r.missing == 0 => {
                let read = c.stray.as_ref().map(|st| touch(&st.read)).unwrap_or_default();
                tr!(
                    "✗ {name}: {bad} of {n} cells right only by luck, computed from cells the reference does not read for them; first {name}[{index}] from {read}",
                    name,
                    bad = r.misread,
                    n = r.cells,
                    index = c.index,
                    read
                )
                .to_string()
            }
            Some(c) => {
                let first = match c.mine {
                    // the value agrees: what is wrong is where it came from
                    Some(m) if c.right => tr!(
                        "first {name}[{index}] = {mine} as the reference's, but computed from {read}, which the reference does not read for it",
                        name,
                        index = c.index,
                        mine = v(m),
                        read = c.stray.as_ref().map(|st| touch(&st.read)).unwrap_or_default()
                    )
                    .to_string(),
                    Some(m) => tr!(
                        "first {name}[{index}] = {mine}, the reference has {reference}",
                        name,
                        index = c.index,
                        mine = v(m),
                        reference = v(c.reference)
                    )
                    .to_string(),
                    None => tr!(
                        "first {name}[{index}] never written, the reference has {reference}",
                        name,
                        index = c.index,
                        reference = v(c.reference)
                    )
                    .to_string(),
                };
                tr!(
                    "✗ {name}: {bad} of {n} cells wrong or missing; {first}",
                    name,
                    bad = r.wrong + r.missing + r.misread,
                    n = r.cells,
                    first
                )
                .to_string()
            }
        };
        let unneeded = if r.unneeded > 0 {
            tr!(
                " (not graded: {n} more at pairs the mask hides, which no result depends on)",
                n = r.unneeded
            )
            .to_string()
        } else {
            String::new()
        };
        let _ = writeln!(s, "   {line}{unneeded}");
    }
}

fn finding(f: &Finding) -> String {
    let name = f.buffer.as_str();
    let site = format!("{}:{}", f.at.file, f.at.line);
    // past the lines listed, one finding counts the others
    let at = if f.elsewhere {
        tr!("other lines (the first {site})", site).to_string()
    } else {
        site
    };
    let times = if f.count > 1 {
        tr!(" ({n} times)", n = thousands(f.count)).to_string()
    } else {
        String::new()
    };
    // the reference cell an offset of the learner's is, when their layout is not ours
    let cell = f.cell.as_ref().map(|c| format!(" ({c})")).unwrap_or_default();
    match f.kind {
        Kind::OutOfBounds => tr!(
            "✗ {op} of {name}[{offset}] outside the buffer ({size} cells) at {at}{times}",
            op = f.op,
            name,
            offset = f.offset,
            size = f.size.unwrap_or(0),
            at,
            times
        )
        .to_string(),
        Kind::Unmapped => tr!(
            "✗ {op} of {name}[{offset}] at {at}: no view of its binding is there ({name} holds {holds}){times}",
            op = f.op,
            name,
            offset = f.offset,
            holds = f.holds.as_deref().unwrap_or("?"),
            at,
            times
        )
        .to_string(),
        Kind::Uninitialised => tr!(
            "✗ read of {name}[{offset}]{cell} before anything wrote it (nobody gives {name}: it starts empty) at {at}{times}",
            name,
            offset = f.offset,
            cell,
            at,
            times
        )
        .to_string(),
        Kind::LostAccumulation => tr!(
            "✗ write of {name}[{offset}] at {at} lost: written again before any read, where the reference adds into the cell{times}",
            name,
            offset = f.offset,
            at,
            times
        )
        .to_string(),
        Kind::NeverRead => match &f.cell {
            None => tr!("✗ never reads {name}: your results cannot depend on it", name).to_string(),
            Some(first) => tr!(
                "✗ never reads {n} cells of {name} the results depend on (first {first}): your results cannot depend on them",
                n = thousands(f.count),
                name,
                first
            )
            .to_string(),
        },
        Kind::Overwritten => tr!(
            "· write of {name}[{offset}] at {at} overwritten before any read (harmless here: nothing accumulates){times}",
            name,
            offset = f.offset,
            at,
            times
        )
        .to_string(),
        Kind::Waste => tr!(
            "· {n} reads of {name} cells the reference never reads (waste, not an error), the first at {at}",
            n = thousands(f.count),
            name,
            at
        )
        .to_string(),
        Kind::MaskedWaste => tr!(
            "· {n} reads of {name} feed only masked scores, whose products the mask throws away (waste, not an error), the first at {at}",
            n = thousands(f.count),
            name,
            at
        )
        .to_string(),
        Kind::ExtraWrites => tr!(
            "· {n} writes of {name} cells the reference's pass does not write, the first at {at}",
            n = thousands(f.count),
            name,
            at
        )
        .to_string(),
    }
}

fn accesses(s: &mut String, g: &Grade) {
    let errors = g.errors();
    let _ = writeln!(
        s,
        "\n2. {}",
        if errors == 0 {
            tr!("Accesses: no errors").to_string()
        } else {
            tr!(
                "Accesses: {errors} {what}",
                errors,
                what = if errors == 1 { tr!("error") } else { tr!("errors") }
            )
            .to_string()
        }
    );
    for f in &g.findings {
        let _ = writeln!(s, "   {}", finding(f));
    }
    let _ = writeln!(s, "   {}", tr!("Global reads / writes per buffer:"));
    let flash = g.traffic.iter().any(|t| t.flash_reads.is_some());
    let mut head = format!("     {:<12} {:>16} {:>16}", "", tr!("yours"), tr!("reference"));
    if flash {
        let _ = write!(head, " {:>16}", tr!("flash"));
    }
    let _ = writeln!(s, "{}", head.trim_end());
    let pair = |r: u64, w: u64| format!("{} / {}", thousands(r), thousands(w));
    for t in &g.traffic {
        let mut line = format!(
            "     {:<12} {:>16} {:>16}",
            t.buffer.name(),
            pair(t.reads, t.writes),
            pair(t.reference_reads, t.reference_writes)
        );
        if flash {
            let cell = match (t.flash_reads, t.flash_writes) {
                (Some(r), Some(w)) => pair(r, w),
                // flash keeps no such buffer in global memory
                _ => "—".to_string(),
            };
            let _ = write!(line, " {cell:>16}");
        }
        let _ = writeln!(s, "{line}");
    }
}

fn divergence(s: &mut String, g: &Grade, args: &Args) {
    let Some(d) = &g.divergence else {
        let _ = writeln!(
            s,
            "\n3. {}",
            tr!("No divergence: every cell agrees with the reference.")
        );
        for h in &g.hints {
            let _ = writeln!(s, "   {}", tr!("Hint: {h}", h));
        }
        return;
    };
    let Divergence { cell, .. } = d;
    let name = cell.buffer.name();
    let event = if d.reference_layer > 0 {
        tr!("layer {l}'s event #{n}", l = d.reference_layer, n = d.reference_event).to_string()
    } else {
        tr!("event #{n}", n = d.reference_event).to_string()
    };
    let _ = writeln!(
        s,
        "\n3. {}",
        tr!(
            "First divergence: the reference's {event} ({file}:{line}) writes {name}[{index}] = {value}",
            event,
            file = d.reference_file,
            line = d.reference_line,
            name,
            index = cell.index,
            value = v(cell.reference)
        )
    );
    let _ = writeln!(
        s,
        "     {}",
        tr!("from {reads}", reads = touches(&d.reference_reads, d.reference_more))
    );
    match (&d.mine_at, cell.mine) {
        (Some(at), Some(m)) => {
            let wrote = d
                .mine_write
                .as_ref()
                .filter(|w| w.buffer != name || w.offset != cell.offset as i64)
                .map(|w| format!(" {}", tr!("as {name}[{offset}]", name = &w.buffer, offset = w.offset)))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "   {}",
                tr!(
                    "yours: {value}{wrote} at {file}:{line} (trace line {tl})",
                    value = v(m),
                    wrote,
                    file = at.file,
                    line = at.line,
                    tl = at.trace_line
                )
            );
            let _ = writeln!(
                s,
                "     {}",
                tr!("from {reads}", reads = touches(&d.mine_reads, d.mine_more))
            );
            if let Some(st) = cell.stray.as_ref().filter(|_| cell.right) {
                let _ = writeln!(
                    s,
                    "   {}",
                    tr!(
                        "Your value is right, but from {read}, a cell the reference does not read for {name}[{index}] ({expected}): right only by luck",
                        read = touch(&st.read),
                        name,
                        index = cell.index,
                        expected = st.expected
                    )
                );
            }
        }
        _ => {
            let _ = match &d.mine_elsewhere {
                Some(at) => writeln!(
                    s,
                    "   {}",
                    tr!(
                        "yours: never written (your other writes of {name} are at {file}:{line})",
                        name,
                        file = at.file,
                        line = at.line
                    )
                ),
                None => writeln!(s, "   {}", tr!("yours: never written")),
            };
        }
    }
    for h in &g.hints {
        let _ = writeln!(s, "   {}", tr!("Hint: {h}", h));
    }
    if let Some(m) = &g.mistake {
        let _ = writeln!(
            s,
            "   {}",
            tr!(
                "This is mistake {number} of the gallery, {name}: {symptom}",
                number = m.number,
                name = m.name,
                symptom = m.symptom
            )
        );
    }
    if let Some(trace) = &args.trace {
        let bind = args
            .bind
            .as_ref()
            .map(|b| format!(" --bind {}", b.display()))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "   {}",
            tr!(
                "Step through it: attn-trace tui {scenario} --mine {trace}{bind}",
                scenario = args.scenario.display(),
                trace = trace.display(),
                bind
            )
        );
    }
}
