//! `attn-trace inputs SCENARIO`: the tensors one pass of the reference reads, for a learner's
//! own kernel to start from.

use super::{CliError, Output, pass_arg, variant_arg};
use attn_trace_analysis::learner::{check, inputs, reference::Reference};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::tr;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Write the tensors a pass reads, for your own kernel (format: docs/your_kernel.md).
#[derive(clap::Args, Debug)]
#[command(after_help = "\
The file is plain text: a header (scenario, variant, pass, input), the sizes (`dim T 3`), the
numbers a kernel needs (`param scale 0.70710677`, `param causal 1`, flash's `param br 2`), then
every tensor the pass reads before writing it, flat in the kernels' layout:
  tensor q 12 4 1 3 2 2      name, count, rank, sizes (here [b=1 i=3 h=2 d=2])
  0.25 -0.5 …                the values, one line
Python reads it with recorders/attn_record.py (standard library only), C and C++ with
recorders/attn_record.h. Everything the pass writes is yours to compute; record your accesses
and run `attn-trace grade SCENARIO TRACE.jsonl`.

Examples:
  attn-trace inputs scenarios/mha_walkthrough.toml -o inputs.txt
  attn-trace inputs scenarios/gqa.toml --variant gqa --pass backward -o inputs.txt
  attn-trace inputs scenarios/mha_walkthrough.toml --input 2     (the second random input of grade --seeds)")]
pub(crate) struct Args {
    /// Scenario file (.toml).
    #[arg(value_name = "SCENARIO")]
    pub scenario: PathBuf,
    /// The reference kernel to match (default: the scenario's [focus] variant, else its first).
    #[arg(long, value_parser = variant_arg())]
    pub variant: Option<Variant>,
    /// The pass your kernel computes (default: forward when the scenario runs it).
    #[arg(long, value_parser = pass_arg())]
    pub pass: Option<Pass>,
    /// Which input: 0 the scenario's own values; K > 0 the K-th random input of `grade --seeds`.
    #[arg(long, value_name = "K", default_value_t = 0, value_parser = super::whole::<u64>, allow_negative_numbers = true)]
    pub input: u64,
    /// Write to FILE (atomically) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> Result<(), CliError> {
    let scenario = super::load(&args.scenario)?;
    let (variant, pass) = choose(&scenario, &args.scenario, args.variant, args.pass)?;
    let reference = Reference::new(&scenario, variant, pass, args.input)
        .map_err(|e| CliError::Input(format!("{}: {e}", args.scenario.display())))?;
    let mut output = Output::open(args.output.as_deref())?;
    if let Err(e) = inputs::write(
        output.writer(),
        &reference,
        &scenario,
        &args.scenario.display().to_string(),
    ) {
        return Err(output.write_error(e));
    }
    output.finish()?;
    if let Some(path) = &args.output {
        let _ = writeln!(
            std::io::stderr(),
            "{}",
            tr!(
                "wrote the inputs of the {variant} {pass} pass to {path}",
                variant = variant.name(),
                pass = pass.name(),
                path = path.display()
            )
        );
    }
    Ok(())
}

/// The variant and pass a learner's kernel is matched against: the flags, else the scenario's
/// `[focus]`, else its first variant and its first pass ([`check::choose`], which `grade` and
/// `tui --mine` use too).
pub(crate) fn choose(
    scenario: &Scenario,
    path: &Path,
    variant: Option<Variant>,
    pass: Option<Pass>,
) -> Result<(Variant, Pass), CliError> {
    check::choose(scenario, path, variant, pass).map_err(CliError::Input)
}
