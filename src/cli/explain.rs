//! `attn-trace explain SCENARIO --variant V --at b=0,h=1,i=2,j=1`: the whiteboard walkthrough
//! of one attention score, with every number taken from the trace.

use super::{CliError, Style, escape_controls, paint, pass_arg, quiet_pipe, variant_arg};
use attn_trace_analysis::Element;
use attn_trace_analysis::explain::{explain, gradient_check};
use attn_trace_analysis::mistakes;
use attn_trace_core::engine;
use attn_trace_core::kernels::Variant;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use std::io::Write;
use std::path::PathBuf;

/// Explain one element of the scores: offsets, products, scale, mask, softmax, weighted sum.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Without --variant and --at the scenario's [focus] is used.

Examples:
  attn-trace explain scenarios/mha_walkthrough.toml --variant mha --at b=0,h=1,i=2,j=1
  attn-trace explain scenarios/mha_walkthrough.toml --variant baseline --at b=0,i=2,j=1
  attn-trace explain scenarios/masked_element.toml --variant baseline --at i=1,j=3 --pass backward")]
pub(crate) struct Args {
    /// Scenario file (.toml).
    #[arg(value_name = "SCENARIO")]
    pub scenario: PathBuf,
    /// Which kernel: baseline or mha (default: the scenario's [focus] variant).
    #[arg(long, value_parser = variant_arg())]
    pub variant: Option<Variant>,
    /// The element as b=…,h=…,i=…,j=… (b and h default to 0; i and j are required).
    #[arg(long, value_name = "b=0,h=1,i=2,j=1", value_parser = parse_at)]
    pub at: Option<Element>,
    /// forward (the score, its softmax row and weighted sum) or backward (its gradient).
    #[arg(long, value_parser = pass_arg())]
    pub pass: Option<Pass>,
}

/// `b=0,h=1,i=2,j=1` → an element; b and h may be left out.
pub(crate) fn parse_at(s: &str) -> Result<Element, String> {
    Element::parse(s)
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let scenario = super::load(&args.scenario)?;
    let file = args.scenario.display();
    let focus = scenario.focus;
    let variant = match args.variant.or(focus.and_then(|f| f.variant)) {
        Some(v) => v,
        None if scenario.variants.len() == 1 => scenario.variants[0],
        None => {
            return Err(CliError::Input(format!(
                "{file}: say which variant to explain with --variant baseline or --variant mha"
            )));
        }
    };
    if !scenario.variants.contains(&variant) {
        return Err(CliError::Input(format!(
            "{file}: --variant {variant}: the scenario does not run it; add it to [run].variants"
        )));
    }
    let at = match (args.at, focus) {
        (Some(at), _) => at,
        (None, Some(f)) => Element {
            b: f.b,
            h: f.h,
            i: f.i,
            j: f.j,
        }
        .in_heads_of(variant),
        (None, None) => {
            return Err(CliError::Input(format!(
                "{file}: no [focus] in the scenario; say which element with --at b=0,h=1,i=2,j=1"
            )));
        }
    };
    let pass = args
        .pass
        .or(focus.and_then(|f| f.pass))
        .unwrap_or(if scenario.passes.forward {
            Pass::Forward
        } else {
            Pass::Backward
        });
    let run = scenario.run(variant, true);
    let mut walkthrough =
        explain(&run, scenario.mask.clone(), at, pass).map_err(|e| CliError::Input(format!("{file}: --at: {e}")))?;
    // backward: the element's gradients against finite differences of the loss (untraced runs;
    // flash's dS of the pair against its score perturbed in an MHA run of the same inputs)
    if pass == Pass::Backward {
        let check =
            gradient_check(&run, &scenario.inputs(), at).map_err(|e| CliError::Input(format!("{file}: {e}")))?;
        walkthrough.sections.push(check);
    }

    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut text = String::new();
    text.push_str(&format!(
        "{}\n{}\n",
        paint(&escape_controls(&scenario.title), Style::Dim),
        paint(&walkthrough.heading, Style::Heading)
    ));
    for s in &walkthrough.sections {
        text.push_str(&format!("\n{}\n", paint(&s.title, Style::Heading)));
        for line in &s.lines {
            text.push_str(&format!("  {line}\n"));
        }
    }
    // a scenario with mistakes: where the mistaken run parts from this one, and what follows
    if let Some(inputs) = scenario.mistaken_inputs() {
        let bad = engine::run(&inputs, variant, scenario.passes, true);
        let report = mistakes::report(&run, &bad, &scenario.mask);
        let title = tr!("The mistaken run ({names})", names = report.mistakes.join(tr!(", ")));
        text.push_str(&format!("\n{}\n", paint(&title, Style::Heading)));
        match &report.divergence {
            Some(d) => text.push_str(&format!("  {d}\n")),
            None => text.push_str("  the two runs never diverge: every event is the same\n"),
        }
        for note in &report.symptoms {
            let line = if note.heading {
                paint(&note.text, Style::Dim)
            } else {
                format!("  {}", note.text)
            };
            text.push_str(&format!("  {line}\n"));
        }
    }
    quiet_pipe(out.write_all(text.as_bytes()))?;
    quiet_pipe(out.flush())
}
