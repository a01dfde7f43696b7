//! What a trace must agree with before it is graded: the scenario it was recorded on, its sizes,
//! the flags asked for and the input a program was given. One function answers for `grade` and
//! for `tui --mine` (and the menu's "Grade your own kernel…"), so the three refuse the same
//! traces with the same line.

use super::import::Header;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use std::path::Path;

/// What the user asked for besides the trace: `--variant`, `--pass`, and for `grade -- COMMAND`
/// the input the program was given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Asked {
    pub variant: Option<Variant>,
    pub pass: Option<Pass>,
    pub input: Option<u64>,
}

/// The variant and pass a learner's kernel is matched against: the flags, else the scenario's
/// `[focus]`, else its first variant and its first pass. A variant or pass the scenario does
/// not run is one line naming the scenario (`path`).
pub fn choose(
    scenario: &Scenario,
    path: &Path,
    variant: Option<Variant>,
    pass: Option<Pass>,
) -> Result<(Variant, Pass), String> {
    let focus = scenario.focus;
    let variant = variant
        .or(focus.and_then(|f| f.variant).filter(|v| scenario.variants.contains(v)))
        .or(scenario.variants.first().copied())
        .unwrap_or(Variant::Mha);
    if !scenario.variants.contains(&variant) {
        return Err(tr!(
            "{file}: --variant {v}: the scenario does not run it ([run].variants = {variants})",
            file = path.display(),
            v = variant.name(),
            variants = format!(
                "[{}]",
                scenario
                    .variants
                    .iter()
                    .map(|v| format!("\"{}\"", v.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        ));
    }
    let runs = |p: Pass| match p {
        Pass::Forward => scenario.passes.forward,
        Pass::Backward => scenario.passes.backward,
    };
    let pass = match pass {
        // decode has no backward pass to add
        Some(Pass::Backward) if scenario.decode => {
            return Err(tr!(
                "{file}: --pass backward: decode generates token by token, forward only; there is no backward pass",
                file = path.display()
            ));
        }
        Some(p) if !runs(p) => {
            return Err(tr!(
                "{file}: the scenario does not record the {pass} pass; add \"{pass}\" to [run].passes",
                file = path.display(),
                pass = p.name()
            ));
        }
        Some(p) => p,
        None => focus
            .and_then(|f| f.pass)
            .filter(|&p| runs(p))
            .unwrap_or(if runs(Pass::Forward) {
                Pass::Forward
            } else {
                Pass::Backward
            }),
    };
    Ok((variant, pass))
}

/// Checks the header of the trace `trace` (as messages name it) against the scenario at
/// `scenario_path` and what was asked: the flags must agree with the variant and pass it was
/// recorded for, its scenario must have the same file name, its sizes must be the scenario's,
/// and a program's trace must be of the input it was given. Returns the run to grade against;
/// a disagreement is one line naming the header's field.
pub fn header(
    h: &Header,
    trace: &str,
    scenario: &Scenario,
    scenario_path: &Path,
    asked: Asked,
) -> Result<(Variant, Pass), String> {
    let at_header = |what: String| format!("{trace}:1: {what}");
    if let (Some(flag), Some(v)) = (asked.variant, h.variant)
        && flag != v
    {
        return Err(at_header(tr!(
            "\"variant\": the trace was recorded for {h}, not --variant {flag}",
            h = v.name(),
            flag = flag.name()
        )));
    }
    if let (Some(flag), Some(p)) = (asked.pass, h.pass)
        && flag != p
    {
        return Err(at_header(tr!(
            "\"pass\": the trace was recorded for the {h} pass, not --pass {flag}",
            h = p.name(),
            flag = flag.name()
        )));
    }
    if let Some(name) = &h.scenario {
        let stem = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
        if stem(Path::new(name)) != stem(scenario_path) {
            return Err(at_header(tr!(
                "\"scenario\": the trace was recorded on {name}, not on {file}",
                name = super::import::echo(name),
                file = scenario_path.display()
            )));
        }
    }
    let sizes = super::dims(scenario.shape, scenario.layers);
    for (name, value) in &h.dims {
        let Some(&(_, ours)) = sizes.iter().find(|(n, _)| n == name) else {
            continue;
        };
        if *value != ours as u64 {
            return Err(at_header(tr!(
                "\"dims\": the trace was recorded with {name} = {value}, the scenario has {name} = {ours}",
                name,
                value,
                ours
            )));
        }
    }
    if let Some(k) = asked.input
        && h.input != k
    {
        return Err(at_header(tr!(
            "\"input\": the program was given input {k} but its trace says input {found}",
            k,
            found = h.input
        )));
    }
    choose(
        scenario,
        scenario_path,
        asked.variant.or(h.variant),
        asked.pass.or(h.pass),
    )
}
