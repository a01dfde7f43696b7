//! The inputs file: every tensor one pass of the reference reads before writing it, flat, in
//! the layout the kernels index it with, as plain text.
//!
//! One item per line, tokens separated by one space, `#` starting a comment line:
//!
//! ```text
//! attn-trace-inputs 1
//! scenario scenarios/mha_walkthrough.toml
//! variant mha
//! pass forward
//! input 0
//! dim B 1
//! param scale 0.70710677
//! # x: input [b=1 i=3 c=4]
//! tensor x 12 3 1 3 4
//! 0.24835708 -0.06913215 …
//! end
//! ```
//!
//! `tensor NAME COUNT RANK DIM…` is followed by one line of COUNT numbers, each written so that
//! C's `strtof` and Python's `float` read back the very f32 (the shortest decimal that
//! round-trips; `NaN`, `inf`, `-inf` for the non-finite). docs/your_kernel.md describes every
//! line; the recorders in `recorders/` read it.

use super::reference::Reference;
use super::{INPUTS_MAGIC, INPUTS_VERSION};
use crate::accum::Scale;
use attn_trace_core::kernels::rope::Pairs;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use std::fmt::Write as _;
use std::io::{self, Write};

/// Writes the inputs of `r`'s pass. `scenario_path` is how the learner named the scenario;
/// recorders copy it into their trace's header, and `grade` checks it.
pub fn write(w: &mut dyn Write, r: &Reference, scenario: &Scenario, scenario_path: &str) -> io::Result<()> {
    let sh = r.run.shape;
    let mut out = String::new();
    let _ = writeln!(out, "{INPUTS_MAGIC} {INPUTS_VERSION}");
    let _ = writeln!(
        out,
        "# The tensors the {variant} {pass} pass reads before writing them, flat and row-major in the\n\
         # layout the kernels index them with; every other buffer starts empty and is yours to write.\n\
         # Format: docs/your_kernel.md. Record your kernel's accesses, then: attn-trace grade {path} TRACE.jsonl",
        variant = r.variant.name(),
        pass = r.pass.name(),
        // a comment stays one line whatever the path holds
        path = scenario_path
            .chars()
            .map(|c| if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            })
            .collect::<String>(),
    );
    let _ = writeln!(out, "scenario {}", token(scenario_path));
    let _ = writeln!(out, "variant {}", r.variant.name());
    let _ = writeln!(out, "pass {}", r.pass.name());
    let _ = writeln!(out, "input {}", r.input);
    for (name, size) in super::dims(sh, r.layers) {
        let _ = writeln!(out, "dim {name} {size}");
    }
    for (name, value) in params(r, scenario) {
        let _ = writeln!(out, "param {name} {value}");
    }
    w.write_all(out.as_bytes())?;
    if let Mask::Explicit { keep, .. } = &scenario.mask {
        let _ = writeln!(
            w,
            "# mask: 1 where query i may see key j, 0 where it is hidden [i={} j={}]",
            sh.s, sh.t
        );
        writeln!(w, "tensor mask {} 2 {} {}", keep.len(), sh.s, sh.t)?;
        let row: Vec<&str> = keep.iter().map(|&k| if k { "1" } else { "0" }).collect();
        writeln!(w, "{}", row.join(" "))?;
    }
    for c in r.inputs() {
        // with several layers, the layer is the outermost dimension
        let dims: Vec<(&str, usize)> = c
            .dims()
            .into_iter()
            .filter(|&(n, _)| n != "l" || r.layers > 1)
            .collect();
        let named: Vec<String> = dims.iter().map(|(n, size)| format!("{n}={size}")).collect();
        writeln!(w, "# {}: {} [{}]", c.buf.name(), c.spec.role.name(), named.join(" "))?;
        let sizes: Vec<String> = dims.iter().map(|(_, size)| size.to_string()).collect();
        writeln!(
            w,
            "tensor {} {} {} {}",
            c.buf.name(),
            c.len(),
            dims.len(),
            sizes.join(" ")
        )?;
        let mut line = String::with_capacity(c.len() * 12);
        for (k, x) in c.start.iter().enumerate() {
            if k > 0 {
                line.push(' ');
            }
            let _ = write!(line, "{x:?}");
        }
        line.push('\n');
        w.write_all(line.as_bytes())?;
    }
    writeln!(w, "end")
}

/// The numbers a kernel needs besides tensors and sizes.
fn params(r: &Reference, scenario: &Scenario) -> Vec<(&'static str, String)> {
    let mut p = vec![
        ("causal", u8::from(scenario.mask.is_causal()).to_string()),
        ("scale", format!("{:?}", Scale::of(r.variant, r.run.shape, 0).value)),
    ];
    // query i sees keys i − window < j ≤ i, and the first `sinks` keys whatever the window
    if let Mask::Window { w, sinks } = scenario.mask {
        p.push(("window", w.to_string()));
        p.push(("sinks", sinks.to_string()));
    }
    if let Some(d) = r.run.dropout {
        p.push(("dropout", format!("{:?}", d.p)));
    }
    if r.variant.desc().tiled {
        let tiles = scenario.plan().tiles.sizes();
        p.push(("br", tiles.br.to_string()));
        p.push(("bc", tiles.bc.to_string()));
    }
    if let Some(rope) = r.run.rope {
        p.push(("rope_base", format!("{:?}", rope.base)));
        p.push(("rope_half", u8::from(rope.pairs == Pairs::Half).to_string()));
    }
    if r.run.decode {
        p.push(("decode", "1".into()));
    }
    p
}

/// A path as one token: each byte that would split it or the line (whitespace, a control
/// character) or be misread (`%` itself) written `%XX` in hexadecimal, as in a URL; the
/// recorders (and [`untoken`]) turn every `%XX` back into its byte.
pub fn token(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '%' || c.is_whitespace() || c.is_control() {
            let mut utf8 = [0u8; 4];
            for b in c.encode_utf8(&mut utf8).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A token of [`token`] read back: every `%XX` turned into its byte.
pub fn untoken(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut k = 0;
    while k < b.len() {
        let hex = (b[k] == b'%')
            .then(|| s.get(k + 1..k + 3))
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(byte) => {
                out.push(byte);
                k += 3;
            }
            None => {
                out.push(b[k]);
                k += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An inputs file read back: what a Rust learner's kernel starts from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InputsFile {
    pub scenario: String,
    pub variant: Option<Variant>,
    pub pass: Option<Pass>,
    pub input: u64,
    pub dims: Vec<(String, usize)>,
    pub params: Vec<(String, f64)>,
    /// Name, sizes of its layout, values.
    pub tensors: Vec<(String, Vec<usize>, Vec<f32>)>,
}

impl InputsFile {
    /// Reads an inputs file; a problem is one message naming its line.
    pub fn parse(text: &str) -> Result<InputsFile, String> {
        let mut f = InputsFile::default();
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty());
        let bad = |n: usize, what: String| format!("line {}: {what}", n + 1);
        match lines.next() {
            Some((_, l)) if l.split_whitespace().collect::<Vec<_>>() == [INPUTS_MAGIC, "1"] => {}
            Some((n, l)) => {
                return Err(bad(
                    n,
                    format!("expected \"{INPUTS_MAGIC} {INPUTS_VERSION}\", found \"{l}\""),
                ));
            }
            None => return Err("the file is empty".into()),
        }
        let mut ended = false;
        while let Some((n, l)) = lines.next() {
            let words: Vec<&str> = l.split_whitespace().collect();
            let number = |w: Option<&&str>| -> Result<f64, String> {
                w.and_then(|w| w.parse::<f64>().ok())
                    .ok_or_else(|| bad(n, format!("expected a number in \"{l}\"")))
            };
            let whole = |w: Option<&&str>| -> Result<usize, String> {
                w.and_then(|w| w.parse::<usize>().ok())
                    .ok_or_else(|| bad(n, format!("expected a whole number in \"{l}\"")))
            };
            match words.first().copied() {
                Some("scenario") => f.scenario = untoken(words.get(1).unwrap_or(&"")),
                Some("variant") => f.variant = words.get(1).and_then(|v| Variant::from_name(v)),
                Some("pass") => f.pass = words.get(1).and_then(|p| Pass::from_name(p)),
                Some("input") => f.input = whole(words.get(1))? as u64,
                Some("dim") => f
                    .dims
                    .push(((*words.get(1).unwrap_or(&"")).to_string(), whole(words.get(2))?)),
                Some("param") => f
                    .params
                    .push(((*words.get(1).unwrap_or(&"")).to_string(), number(words.get(2))?)),
                Some("tensor") => {
                    let name = (*words.get(1).unwrap_or(&"")).to_string();
                    let count = whole(words.get(2))?;
                    let rank = whole(words.get(3))?;
                    let sizes = (0..rank)
                        .map(|k| whole(words.get(4 + k)))
                        .collect::<Result<Vec<_>, _>>()?;
                    if sizes.iter().product::<usize>() != count {
                        return Err(bad(n, format!("tensor {name}: {count} values but sizes {sizes:?}")));
                    }
                    let (vn, values) = lines.next().unwrap_or((n + 1, ""));
                    let values = values
                        .split_whitespace()
                        .map(|x| {
                            x.parse::<f32>()
                                .map_err(|_| bad(vn, format!("\"{x}\" is not a number")))
                        })
                        .collect::<Result<Vec<f32>, String>>()?;
                    if values.len() != count {
                        return Err(bad(
                            vn,
                            format!("tensor {name}: expected {count} values, found {}", values.len()),
                        ));
                    }
                    f.tensors.push((name, sizes, values));
                }
                Some("end") => {
                    ended = true;
                    break;
                }
                _ => return Err(bad(n, format!("unknown line \"{l}\""))),
            }
        }
        if !ended {
            return Err("the file ends before its \"end\" line".into());
        }
        Ok(f)
    }

    pub fn dim(&self, name: &str) -> Option<usize> {
        self.dims.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }

    pub fn param(&self, name: &str) -> Option<f64> {
        self.params.iter().find(|(n, _)| n == name).map(|&(_, v)| v)
    }

    pub fn tensor(&self, name: &str) -> Option<&[f32]> {
        self.tensors
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, v)| v.as_slice())
    }
}
