//! A traced run's log against the closed forms: event counts per phase and the derived lines.

use attn_trace_analysis::formula::derived_lines;
use attn_trace_core::engine::{Passes, Plan, phase_counts};
use attn_trace_core::kernels::Variant;
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Op, Phase, Trace};
use std::collections::BTreeMap;

/// (reads, writes) per phase, counted from the log.
pub(crate) fn counted(t: &Trace) -> BTreeMap<Phase, (u64, u64)> {
    let mut m = BTreeMap::new();
    for k in 0..t.phases.len() {
        let e = m.entry(t.phases[k].1).or_insert((0, 0));
        for n in t.span_range(k) {
            match t.events[n].op {
                Op::Read => e.0 += 1,
                Op::Write => e.1 += 1,
            }
        }
    }
    m
}

/// (reads, writes) per phase, from the closed forms of [`phase_counts`].
pub(crate) fn closed_form_counts(plan: &Plan, variant: Variant, passes: Passes) -> BTreeMap<Phase, (u64, u64)> {
    phase_counts(plan, variant, passes)
        .expect("the test's sizes fit the counts")
        .into_iter()
        .map(|p| (p.phase, (p.reads, p.writes)))
        .collect()
}

/// Every event's derived lines (read in the kernel's shape `ksh`) give the values the log
/// derived, one line for each.
pub(crate) fn assert_derived_lines_match(t: &Trace, ksh: Shape) {
    for n in 0..t.len() {
        let v = t.view(n);
        let (read, lines): (Vec<_>, Vec<_>) = derived_lines(&v, ksh).into_iter().partition(|s| s.read.is_some());
        assert_eq!(lines.len(), v.derived.len(), "#{n} {v:?}");
        for (line, d) in lines.iter().zip(&v.derived) {
            assert_eq!(line.value, d.value, "#{n}: {line}");
        }
        // a name read from a buffer (a block id) is what the log read at the offset it names
        for line in read {
            let (buf, off) = line.read.unwrap();
            assert!(
                (0..n).rev().any(|k| {
                    let e = t.events[k];
                    e.buf == buf && e.offset as usize == off && e.value as usize == line.value
                }),
                "#{n}: {line}: no read of {buf}[{off}] = {} before it",
                line.value
            );
        }
    }
}
