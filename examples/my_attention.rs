//! A learner's own multi-head attention forward, in Rust, recorded and graded.
//!
//! ```sh
//! attn-trace inputs scenarios/numeric_mha.toml -o inputs.txt
//! cargo run --release --example my_attention -- inputs.txt trace.jsonl
//! attn-trace grade scenarios/numeric_mha.toml trace.jsonl
//! # or all at once, on the scenario's input and three random ones:
//! attn-trace grade scenarios/numeric_mha.toml -- target/release/examples/my_attention
//! ```
//!
//! The kernel is written against the crate's [`Recorder`] trait, as every kernel of
//! `crates/core/src/kernels/` is: `rec.read(buf, data, off)` returns `data[off]` and records the access
//! with this file's line, `rec.write` and `rec.add` likewise. [`JsonlRecorder`] writes what it
//! records in the trace format `grade` reads. Which scenario, variant and pass the trace is
//! for comes from the inputs file's header.
//!
//! The loops are not ours on purpose: the weighted sum runs with the key `j` outside the
//! channel `d` and accumulates into `att` with `+=`, where the reference sums in a register.
//! The grade only asks for the same final values and no access errors.
#![allow(non_snake_case)]

use attn_trace_analysis::learner::inputs::InputsFile;
use attn_trace_analysis::learner::jsonl::JsonlRecorder;
use attn_trace_analysis::learner::{ENV_INPUTS, ENV_OUT};
use attn_trace_core::trace::{Buf, MASKED, Phase, Recorder};
use std::path::PathBuf;
use std::process::ExitCode;

/// The inputs and trace paths: the arguments, else what `grade --` puts in the environment.
fn paths() -> Option<(PathBuf, PathBuf)> {
    let mut args = std::env::args_os().skip(1);
    let inputs = args.next().or_else(|| std::env::var_os(ENV_INPUTS))?;
    let trace = args.next().or_else(|| std::env::var_os(ENV_OUT))?;
    Some((inputs.into(), trace.into()))
}

fn main() -> ExitCode {
    let Some((inputs_path, trace_path)) = paths() else {
        eprintln!("usage: my_attention INPUTS TRACE (or set {ENV_INPUTS} and {ENV_OUT})");
        return ExitCode::from(2);
    };
    let inputs = match std::fs::read_to_string(&inputs_path)
        .map_err(|e| e.to_string())
        .and_then(|text| InputsFile::parse(&text))
    {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{}: {e}", inputs_path.display());
            return ExitCode::from(2);
        }
    };
    let mut rec = match JsonlRecorder::create(&trace_path, &inputs, file!()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {e}", trace_path.display());
            return ExitCode::from(2);
        }
    };
    if let Err(e) = forward(&mut rec, &inputs) {
        eprintln!("{e}");
        return ExitCode::from(2);
    }
    match rec.finish() {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e}", trace_path.display());
            ExitCode::from(1)
        }
    }
}

/// scores, softmax and the weighted sum of every head, from the given q, k and v.
fn forward<R: Recorder>(rec: &mut R, inputs: &InputsFile) -> Result<(), String> {
    let dim = |n: &str| inputs.dim(n).ok_or(format!("the inputs file has no dim {n}"));
    let (B, T, S, H, D) = (dim("B")?, dim("T")?, dim("S")?, dim("H")?, dim("D")?);
    let tensor = |n: &str| {
        inputs.tensor(n).map(<[f32]>::to_vec).ok_or(format!(
            "the inputs file has no tensor {n}: this example starts at q, k and v"
        ))
    };
    let (q, k, v) = (tensor("q")?, tensor("k")?, tensor("v")?);
    let causal = inputs.param("causal") == Some(1.0);
    let scale = 1.0 / (D as f32).sqrt();
    let mut scores = vec![0.0f32; B * H * S * T];
    let mut probs = vec![0.0f32; B * H * S * T];
    let mut att = vec![0.0f32; B * S * H * D];

    // scores[b,h,i,j] = q_h,i · k_h,j / √D, hidden pairs set to −1e9 as the reference does
    rec.phase(Phase::Scores);
    for bb in 0..B {
        for hh in 0..H {
            for i in 0..S {
                let q_base = ((bb * S + i) * H + hh) * D;
                for j in 0..T {
                    let k_base = ((bb * T + j) * H + hh) * D;
                    let off = ((bb * H + hh) * S + i) * T + j;
                    if causal && j > i {
                        rec.write(Buf::Scores, &mut scores, off, MASKED);
                        continue;
                    }
                    let mut s = 0.0;
                    for d in 0..D {
                        s += rec.read(Buf::Q, &q, q_base + d) * rec.read(Buf::K, &k, k_base + d);
                    }
                    rec.write(Buf::Scores, &mut scores, off, s * scale);
                }
            }
        }
    }

    // softmax along each row j, shifted by the row's maximum so exp never overflows
    rec.phase(Phase::Softmax);
    for row in (0..B * H * S).map(|r| r * T) {
        let mut m = f32::NEG_INFINITY;
        for j in 0..T {
            m = m.max(rec.read(Buf::Scores, &scores, row + j));
        }
        let mut sum = 0.0;
        for j in 0..T {
            let e = (rec.read(Buf::Scores, &scores, row + j) - m).exp();
            rec.write(Buf::Probs, &mut probs, row + j, e);
            sum += e;
        }
        for j in 0..T {
            let p = rec.read(Buf::Probs, &probs, row + j);
            rec.write(Buf::Probs, &mut probs, row + j, p / sum);
        }
    }

    // att[b,i,h,:] = Σ_j P[b,h,i,j] · v_h,j, with j outside d and att accumulated in memory
    rec.phase(Phase::WeightedSum);
    for bb in 0..B {
        for hh in 0..H {
            for i in 0..S {
                let a_base = ((bb * S + i) * H + hh) * D;
                for d in 0..D {
                    rec.write(Buf::Att, &mut att, a_base + d, 0.0);
                }
                for j in 0..T {
                    let p = rec.read(Buf::Probs, &probs, ((bb * H + hh) * S + i) * T + j);
                    let v_base = ((bb * T + j) * H + hh) * D;
                    for d in 0..D {
                        let x = rec.read(Buf::V, &v, v_base + d);
                        rec.add(Buf::Att, &mut att, a_base + d, p * x);
                    }
                }
            }
        }
    }
    Ok(())
}
