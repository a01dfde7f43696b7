//! A place in a traced scenario's logs, written as text: what `g` takes in the tracer, what `tui --at`
//! and a lesson's `at` take, and the one-line command that reopens the tracer where it is. The
//! questions asked of one log (a pass's first event, the cell a text names) are
//! [`attn_trace_analysis::position`]'s.
//!
//! A position is an event number (`#516` or `516`), a score element (`b=0 h=1 i=2 j=1`, the
//! coordinates `explain --at` takes), a buffer cell (`d_k[10]`, `q[0,2,1,0]`) or a phase name
//! (`softmax`). An element, a cell or a phase is looked up in one pass: the pass asked for, else
//! the one the cursor is in. A cell is also the one the panels select (`pinned`).

use super::traced_scenario::{Element, TracedScenario};
use super::widgets::CellRef;
use attn_trace_analysis::position;
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::{Pass, Phase};
use attn_trace_i18n::tr;

/// Where a position is: the event and, for a cell, the cell to select.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub cursor: usize,
    pub pinned: Option<CellRef>,
}

/// The forms a position is written in, for errors.
pub(crate) fn forms() -> &'static str {
    tr!("an event number (#123), an element (b=0 h=1 i=2 j=1), a cell (scores[16]) or a phase")
}

/// Finds `text` in `variant`'s log of `traced`. `pass` is the pass to look in; without it, the
/// pass of event `here`. An empty `text` with a pass is that pass's first event.
pub(crate) fn resolve(
    traced: &TracedScenario,
    variant: Variant,
    pass: Option<Pass>,
    here: usize,
    text: &str,
) -> Result<Place, String> {
    let trace = traced.trace(variant).ok_or(tr!("this variant has no trace"))?;
    let len = trace.len();
    if len == 0 {
        return Err(tr!("this variant recorded no events").into());
    }
    let text = text.trim();
    let pass_start = match pass {
        Some(p) => Some(
            position::first_of_pass(trace, p).ok_or_else(|| tr!("this trace has no {pass} pass", pass = p.name()))?,
        ),
        None => None,
    };
    let in_pass = pass.unwrap_or_else(|| trace.view(here.min(len - 1)).pass);
    let at = |cursor: usize| Place { cursor, pinned: None };
    if text.is_empty() {
        return pass_start
            .map(at)
            .ok_or_else(|| tr!("expected {forms}", forms = forms()));
    }
    if let Ok(n) = text.trim_start_matches('#').parse::<usize>() {
        if n >= len {
            return Err(tr!(
                "event {n} is past the end: the log has {len} events (0..{last})",
                n,
                len,
                last = len - 1
            ));
        }
        if let Some(p) = pass
            && trace.view(n).pass != p
        {
            return Err(tr!(
                "event {n} is in the {there} pass, not the {asked} pass",
                n,
                there = trace.view(n).pass.name(),
                asked = p.name()
            ));
        }
        return Ok(at(n));
    }
    if let Some(phase) = Phase::from_name(text) {
        if let Some(p) = pass
            && phase.pass() != p
        {
            return Err(tr!(
                "phase {phase} is in the {there} pass, not the {asked} pass",
                phase,
                there = phase.pass().name(),
                asked = p.name()
            ));
        }
        let k = trace.phases.iter().position(|&(s, p)| p == phase && (s as usize) < len);
        let k = k.ok_or_else(|| tr!("phase {phase} is not in this trace", phase))?;
        return Ok(at(trace.phases[k].0 as usize));
    }
    if text.contains('=') {
        let e = Element::parse(text)?;
        let n = traced.element_event(variant, in_pass, e).ok_or_else(|| {
            let sh = traced.shape;
            tr!(
                "no score element b={b} h={h} i={i} j={j} in {variant}: B={nb}, H={nh}, T={nt}",
                b = e.b,
                h = e.h,
                i = e.i,
                j = e.j,
                variant,
                nb = sh.b,
                nh = traced.heads(variant),
                nt = sh.t
            )
        })?;
        return Ok(at(n));
    }
    if let Some((name, rest)) = text.split_once('[') {
        let (buf, off) = position::cell(trace, name.trim(), rest)?;
        // the cell's first access in the pass asked for, else anywhere in the log
        let n = match pass_start {
            Some(start) => start
                .checked_sub(1)
                .map_or_else(
                    || trace.index.first_access(buf, off),
                    |before| trace.index.next_access_after(buf, off, before),
                )
                .filter(|&n| trace.view(n).pass == in_pass)
                .ok_or_else(|| {
                    tr!(
                        "{name}[{off}] is never accessed in the {pass} pass",
                        name = buf,
                        off,
                        pass = in_pass.name()
                    )
                })?,
            None => trace
                .index
                .first_access(buf, off)
                .ok_or_else(|| tr!("{name}[{off}] is never accessed in this trace", name = buf, off))?,
        };
        return Ok(Place {
            cursor: n,
            pinned: Some((buf, off)),
        });
    }
    Err(tr!(
        "expected {forms}, found {text}",
        forms = forms(),
        text = format!("{text:?}")
    ))
}

/// The command that reopens the tracer at event `cursor` of `variant`:
/// `attn-trace tui scenarios/gqa.toml --variant gqa --at '#5337'` (no file for the built-in
/// walkthrough). With a selected cell other than the event's, `--at` names the event still:
/// the event is the position, exactly.
pub(crate) fn command(traced: &TracedScenario, variant: Variant, cursor: usize) -> String {
    let mut cmd = String::from("attn-trace tui");
    if !traced.is_builtin() {
        cmd.push(' ');
        cmd.push_str(&shell_word(&traced.source));
    }
    // the kernel always: a scenario's [focus] may change which one it opens on
    cmd.push_str(&format!(" --variant {}", variant.name()));
    cmd.push_str(&format!(" --at '#{cursor}'"));
    cmd
}

/// `s` as one word of a POSIX shell: as it is when it holds only safe characters, else quoted.
pub(crate) fn shell_word(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
