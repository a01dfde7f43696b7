//! The Rust learner's recorder: a [`Recorder`] that writes the trace format `grade` reads.
//!
//! A kernel written against [`Recorder`] (as every kernel of `crates/core/src/kernels/` is) records each
//! `rec.read`, `rec.write` and `rec.add` with the line of the call; this recorder writes them
//! as JSON Lines under the header of the inputs file the kernel ran on, with the loop variables
//! of the enclosing `rec.enter` calls and the phase of the last `rec.phase`. See
//! `examples/my_attention.rs` for a whole kernel.

use super::inputs::InputsFile;
use super::trace_header;
use attn_trace_core::trace::{Buf, Op, Phase, Recorder};
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

/// Writes every access it is told of to `W` as one JSON line.
pub struct JsonlRecorder<W: Write> {
    out: BufWriter<W>,
    /// The kernel's source file, as a JSON string.
    file: String,
    phase: Option<Phase>,
    /// The open loop iterations: names and values.
    open: Vec<(&'static [&'static str], Vec<usize>)>,
    line: String,
    /// The first write error; reported by [`JsonlRecorder::finish`].
    error: Option<io::Error>,
}

impl JsonlRecorder<std::fs::File> {
    /// Creates `path` and writes the header. `source` names the kernel's file in every access
    /// (pass `file!()`).
    pub fn create(path: &std::path::Path, inputs: &InputsFile, source: &str) -> io::Result<Self> {
        JsonlRecorder::new(std::fs::File::create(path)?, inputs, source)
    }
}

impl<W: Write> JsonlRecorder<W> {
    /// Writes the header line, copied from the inputs file's.
    pub fn new(out: W, inputs: &InputsFile, source: &str) -> io::Result<Self> {
        let mut out = BufWriter::new(out);
        let header = trace_header(
            Some(&inputs.scenario),
            inputs.variant,
            inputs.pass,
            inputs.input,
            &inputs.dims,
        );
        writeln!(out, "{header}")?;
        Ok(JsonlRecorder {
            out,
            file: json_string(source),
            phase: None,
            open: Vec::new(),
            line: String::new(),
            error: None,
        })
    }

    /// Flushes the trace; the first error any write met, if one did.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.into_inner().map_err(io::IntoInnerError::into_error)
    }
}

impl<W: Write> Recorder for JsonlRecorder<W> {
    const ENABLED: bool = true;

    fn log(&mut self, op: Op, buf: Buf, offset: usize, value: f32, line: u32) {
        if self.error.is_some() {
            return;
        }
        let l = &mut self.line;
        l.clear();
        let value = if value.is_nan() {
            "\"nan\"".to_string()
        } else if value.is_infinite() {
            if value > 0.0 { "\"inf\"" } else { "\"-inf\"" }.to_string()
        } else {
            format!("{value:?}")
        };
        let _ = write!(
            l,
            "{{\"op\":\"{}\",\"buffer\":\"{}\",\"offset\":{offset},\"value\":{value},\"file\":{},\"line\":{line}",
            op.name(),
            buf.name(),
            self.file
        );
        if let Some(p) = self.phase {
            let _ = write!(l, ",\"phase\":\"{}\"", p.name());
        }
        if !self.open.is_empty() {
            l.push_str(",\"vars\":{");
            for (k, (names, vals)) in self.open.iter().enumerate() {
                if k > 0 {
                    l.push(',');
                }
                let _ = write!(l, "\"{}\":{}", names[0], vals[0]);
            }
            l.push('}');
        }
        l.push_str("}\n");
        if let Err(e) = self.out.write_all(l.as_bytes()) {
            self.error = Some(e);
        }
    }

    fn phase(&mut self, phase: Phase) {
        self.phase = Some(phase);
    }

    fn enter<const N: usize>(&mut self, names: &'static [&'static str; N], vals: [usize; N]) {
        self.open.push((names, vals.to_vec()));
    }

    fn exit(&mut self) {
        self.open.pop();
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}
