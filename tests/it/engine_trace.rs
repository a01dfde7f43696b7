//! The event log: closed-form counts, navigation, the cell index, and the offset formulas
//! checked against every value the kernels recorded.

use crate::support::inputs::from_x;
use crate::support::trace::{closed_form_counts, counted};
use attn_trace_analysis::formula::derived_lines;
use attn_trace_core::engine::{Passes, Run, kernel_shape, run};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Phase};
use std::collections::HashMap;

fn traced(sh: Shape, mask: Mask, variant: Variant) -> Run {
    run(&from_x(sh, mask, 5), variant, Passes::BOTH, true)
}

#[test]
fn mha_scores_phase_reads_2bhttd_and_writes_bhtt() {
    let sh = Shape::new(2, 5, 8, 4);
    let (b, h, t, d) = (2u64, 4u64, 5u64, 2u64);
    let r = traced(sh, Mask::Causal, Variant::Mha);
    let c = counted(r.trace.as_ref().unwrap());
    assert_eq!(c[&Phase::Scores], (2 * b * h * t * t * d, b * h * t * t));
    // softmax: per row 3T reads (max, exp, normalise) and 2T writes (exp, normalise)
    assert_eq!(c[&Phase::Softmax], (3 * b * h * t * t, 2 * b * h * t * t));
    // dQ and dK skip the masked pairs: T(T+1)/2 visible pairs per (b, h), 2 reads per channel each
    assert_eq!(
        c[&Phase::ScoresBack],
        (2 * 2 * b * h * (t * (t + 1) / 2) * d, 2 * b * t * h * d)
    );
}

#[test]
fn every_phase_matches_its_closed_form_count() {
    for variant in Variant::STANDARD {
        for mask in [Mask::Causal, Mask::None] {
            for sh in [Shape::new(1, 3, 4, 2), Shape::new(2, 5, 6, 3), Shape::new(3, 2, 4, 4)] {
                let inputs = from_x(sh, mask.clone(), 1);
                let r = run(&inputs, variant, Passes::BOTH, true);
                let got = counted(r.trace.as_ref().unwrap());
                let want = closed_form_counts(&inputs.plan(), variant, Passes::BOTH);
                assert_eq!(got, want, "{variant} {mask:?} {sh:?}");
                assert_eq!(r.events() as u64, want.values().map(|(r, w)| r + w).sum::<u64>());
            }
        }
    }
}

#[test]
fn backward_only_records_only_backward_phases() {
    let inputs = from_x(Shape::new(1, 3, 4, 2), Mask::Causal, 2);
    let r = run(
        &inputs,
        Variant::Mha,
        Passes {
            forward: false,
            backward: true,
        },
        true,
    );
    let t = r.trace.as_ref().unwrap();
    assert!(
        t.phases
            .iter()
            .all(|(_, p)| p.pass() == attn_trace_core::trace::Pass::Backward)
    );
    // the forward activations it starts from are its buffers' initial contents
    let both = run(&inputs, Variant::Mha, Passes::BOTH, false);
    assert_eq!(t.buffer(Buf::Probs).unwrap().initial, both.tensors[Buf::Probs]);
    assert_eq!(r.tensors, both.tensors);
}

#[test]
fn offset_formulas_reproduce_every_recorded_offset() {
    let mut checked = 0;
    for variant in Variant::STANDARD {
        for sh in [Shape::new(1, 3, 4, 2), Shape::new(2, 4, 6, 3)] {
            let r = traced(sh, Mask::Causal, variant);
            let t = r.trace.as_ref().unwrap();
            for n in 0..t.len() {
                let v = t.view(n);
                let lines = derived_lines(&v, kernel_shape(sh, variant));
                assert_eq!(
                    lines.len(),
                    v.derived.len(),
                    "a derived offset has no formula at #{n}: {v:?}"
                );
                for (line, d) in lines.iter().zip(&v.derived) {
                    assert_eq!(line.value, d.value, "#{n} {line} but the kernel recorded {}", d.value);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10_000, "only {checked} offsets checked");
}

#[test]
fn navigation_by_iteration_phase_and_cell() {
    let sh = Shape::new(1, 3, 4, 2);
    let r = traced(sh, Mask::Causal, Variant::Mha);
    let t = r.trace.as_ref().unwrap();
    // the read of q[10] for (h1, i2, j1), d = 0
    let w = *t.index.writes(Buf::Scores, 16).first().unwrap() as usize;
    let f = t.frame(t.events[w].frame).unwrap();
    let first = f.start as usize;
    assert_eq!((t.events[first].buf, t.events[first].offset), (Buf::Q, 10));
    // next iteration of the innermost loop (d): the read of q[11]
    let next = t.next_iteration(first, 0).unwrap();
    assert_eq!((t.events[next].buf, t.events[next].offset), (Buf::Q, 11));
    // d = 1 is the last: no further iteration, so the move stays put (the write after the loop
    // is no iteration of it); previous iteration goes back to d = 0, and none is before it
    assert_eq!(t.next_iteration(next, 0), None);
    assert_eq!(t.prev_iteration(next, 0), Some(first));
    assert_eq!(t.prev_iteration(first, 0), None);
    // next iteration of the enclosing loop (j): the first read for j = 2, q[10] against k[10]
    let j2 = t.next_iteration(first, 1).unwrap();
    assert_eq!(t.view(j2).vars.last(), Some(&("d", 0)));
    assert!(t.view(j2).vars.contains(&("j", 2)));
    assert_eq!(t.events[j2 + 1].offset, 10);
    assert_eq!(t.prev_iteration(j2, 1), Some(first));
    // the last score of the phase, (h1, i2, j2): neither j nor J leaves it for the softmax
    let last = *t.index.writes(Buf::Scores, 17).first().unwrap() as usize;
    let last_d = t.frame(t.events[last].frame).unwrap().start as usize + 2;
    assert_eq!(t.phase_at(last + 1), Phase::Softmax);
    for up in 0..=3 {
        assert_eq!(t.next_iteration(last_d, up), None, "up {up}");
    }
    assert_eq!(t.next_iteration(last, 0), None);

    // phases: the softmax phase starts right after the last score write
    let soft = t.next_phase(w).unwrap();
    assert_eq!(t.phase_at(soft), Phase::Softmax);
    assert_eq!(t.phase_at(soft - 1), Phase::Scores);
    assert_eq!(t.prev_phase(soft), t.prev_phase(w));
    assert_eq!(t.prev_phase(soft + 3), Some(soft));

    // the cell index: who reads scores[16] next is softmax's max pass, who last wrote it is w
    let reader = t.index.next_read_after(Buf::Scores, 16, w).unwrap();
    assert_eq!(t.phase_at(reader), Phase::Softmax);
    assert_eq!(t.index.last_write_before(Buf::Scores, 16, reader), Some(w));
    assert_eq!(t.index.last_write_before(Buf::Scores, 16, w), None);
    assert_eq!(t.index.last_write_at_or_before(Buf::Scores, 16, w), Some(w));
    // values through time: 0 before the write, the score after
    assert_eq!(t.value_at(Buf::Scores, 16, w - 1), 0.0);
    assert_eq!(t.value_at(Buf::Scores, 16, w), r.tensors[Buf::Scores][16]);
    // probs[16] is written twice (exp, then normalised): the value at the end is the final one
    assert_eq!(t.index.writes(Buf::Probs, 16).len(), 2);
    assert_eq!(t.value_at(Buf::Probs, 16, t.len() - 1), r.tensors[Buf::Probs][16]);
}

#[test]
fn log_stays_within_32_bytes_per_event() {
    let r = traced(Shape::new(2, 16, 16, 4), Mask::Causal, Variant::Mha);
    let t = r.trace.as_ref().unwrap();
    let per_event = t.log_bytes() as f64 / t.len() as f64;
    assert!(per_event <= 32.0, "{per_event:.1} bytes/event");
}

#[test]
fn every_loop_name_a_kernel_records_is_declared_once() {
    use attn_trace_core::kernels::names::RECORDED;
    // every list of names a kernel gives `rec.enter`, written in the call or bound to a
    // variable first (`&["m", "d0", "d1"]`): its literals must be declared names
    let mut seen = std::collections::BTreeSet::new();
    for dir in ["crates/core/src/kernels", "crates/core/src/engine", "crates/model/src"] {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("kernels/mod.rs") {
                continue;
            }
            // the code, not the comments that quote a call
            let text: String = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            for list in text.split("&[\"").skip(1) {
                let list = &list[..list.find(']').unwrap()];
                for name in list
                    .split(',')
                    .map(|n| n.trim().trim_matches('"'))
                    .filter(|n| !n.is_empty())
                {
                    assert!(
                        RECORDED.contains(&name),
                        "{}: `{name}` is recorded but not declared in kernels::names",
                        path.display()
                    );
                    seen.insert(name.to_string());
                }
            }
        }
    }
    // and every declared name is one a kernel records: the list holds no stale name
    for name in RECORDED {
        assert!(
            seen.contains(*name),
            "kernels::names declares `{name}`, which no kernel records"
        );
    }
    assert!(seen.len() >= 30, "the scan found the kernels' loops: {seen:?}");
}

/// Every loop site a kernel records (`rec.enter(&["j", …], …)`) reports the line of its own
/// `enter` call, so the code panel and the mistakes view draw the loop that really encloses an
/// access: two loops with the same names in one file (the `bb`/`hh` loops of every pass) are
/// two sites, each with its line. Checked for every loop of every shipped scenario's runs, the
/// gallery's mistaken runs included, against the kernel file's text.
#[test]
fn every_loop_reports_the_line_of_its_own_enter_call() {
    use attn_trace_core::scenario::Scenario;
    let root = crate::support::root();
    let mut files: Vec<_> = ["scenarios", "scenarios/mistakes"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut sites = std::collections::BTreeSet::new();
    let mut texts = HashMap::new();
    for path in &files {
        let s = Scenario::load(path).unwrap();
        let mut runs = Vec::new();
        for &v in &s.variants {
            runs.push(run(&s.inputs(), v, s.passes, true));
            if let Some(wrong) = s.mistaken_inputs() {
                runs.push(run(&wrong, v, s.passes, true));
            }
        }
        for r in &runs {
            let t = r.trace.as_ref().unwrap();
            for kind in &t.kinds {
                sites.insert((kind.file, kind.line, kind.names[0]));
            }
            // a loop's line is its own `enter` call: no other `enter` of the same loop variable
            // lies between it and what the loop directly holds (the softmax pass's `bb` loop,
            // reported at the scores pass's `bb` line, has the softmax's own `bb` call between)
            let mut held: Vec<(u32, u32)> = t.events.iter().map(|e| (e.frame, u32::from(e.line))).collect();
            held.extend(t.frames.iter().map(|f| (f.parent, t.kinds[f.kind as usize].line)));
            for (id, line) in held {
                let Some(f) = t.frames.get(id as usize) else { continue };
                let kind = &t.kinds[f.kind as usize];
                assert!(
                    !enter_between(&mut texts, kind.file, kind.names[0], kind.line, line),
                    "{}: line {line} is inside the `{}` loop reported at line {}, but another `{}` loop opens between",
                    kind.file,
                    kind.names[0],
                    kind.line,
                    kind.names[0]
                );
            }
        }
    }
    let mut checked = 0;
    for (file, line, var) in sites {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // the call may be split over a few lines by rustfmt: read from its line on
        let from = lines[line as usize - 1..].iter().take(4).copied().collect::<String>();
        let call: String = from.chars().filter(|c| !c.is_whitespace()).collect();
        // `enter(&["j", …], [j, …])`, or names passed in a variable: `enter(names, [j, …])`
        let at = call.find("enter(").map(|k| &call[k..]);
        let named = at.is_some_and(|c| c.starts_with(&format!("enter(&[\"{var}\"")));
        // names held in a variable (softmax's row, rope's pairs): only the nesting check above
        let valued = at.is_some_and(|c| !c.starts_with("enter(&["));
        assert!(
            named || valued,
            "{file}:{line} is reported as the `{var}` loop, but reads: {}",
            lines[line as usize - 1].trim()
        );
        checked += 1;
    }
    // the kernels have far more loop sites than distinct loop names
    assert!(checked > 150, "only {checked} loop sites seen");
}

/// Another `enter(&["var", …` call of `file` lies strictly between lines `outer` and `inner`.
fn enter_between(
    texts: &mut HashMap<&'static str, String>,
    file: &'static str,
    var: &str,
    outer: u32,
    inner: u32,
) -> bool {
    let root = crate::support::root();
    let text = texts
        .entry(file)
        .or_insert_with(|| std::fs::read_to_string(root.join(file)).unwrap());
    let call = format!("enter(&[\"{var}\"");
    let (from, to) = (outer as usize, (inner as usize).saturating_sub(1));
    from < to && text.lines().take(to).skip(from).any(|l| l.contains(&call))
}
