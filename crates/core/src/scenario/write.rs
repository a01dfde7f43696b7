//! Scenario → TOML text that parses back to an equal scenario.

use super::{Dist, Mode, Qkv, Scenario};
use crate::engine::registry::{GIVEN, given_shape};
use crate::kernels::Mask;
use crate::trace::Pass;
use std::fmt::Write;

/// A TOML basic string, escaped by the toml crate.
fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The shortest text that reads back as the same `f32` (always with a `.` or an exponent, so
/// TOML keeps it a float).
fn number(x: f32) -> String {
    format!("{x:?}")
}

fn list(xs: &[f32]) -> String {
    let items: Vec<String> = xs.iter().map(|&x| number(x)).collect();
    format!("[{}]", items.join(", "))
}

pub(super) fn to_toml(s: &Scenario) -> String {
    // `write!` into a String cannot fail
    let mut out = String::new();
    let _ = writeln!(out, "title = {}", quote(&s.title));
    if let Some(about) = &s.about {
        let _ = writeln!(out, "about = {}", quote(about));
    }
    let sh = s.shape;
    let _ = write!(out, "\n[shape]\nB = {}\n", sh.b);
    if s.cross {
        let _ = writeln!(out, "S = {}", sh.s);
    }
    let _ = write!(out, "T = {}\nC = {}\nH = {}\n", sh.t, sh.c, sh.h);
    if sh.shares_kv_heads() || s.variants.iter().any(|v| v.shares_kv_heads()) {
        let _ = writeln!(out, "H_kv = {}", sh.h_kv);
    }
    if let Some(l) = s.latent {
        let _ = write!(out, "kv_rank = {}\nrope_dim = {}\n", l.r, l.dr);
    }
    if s.layers > 1 {
        let _ = writeln!(out, "L = {}", s.layers);
    }

    let variants: Vec<String> = s.variants.iter().map(|v| quote(v.name())).collect();
    let mut passes = Vec::new();
    if s.passes.forward {
        passes.push(quote(Pass::Forward.name()));
    }
    if s.passes.backward {
        passes.push(quote(Pass::Backward.name()));
    }
    let mask = match &s.mask {
        Mask::Explicit { t, keep } => {
            let rows: Vec<String> = keep
                .chunks((*t).max(1))
                .map(|row| {
                    let bits: Vec<&str> = row.iter().map(|&k| if k { "1" } else { "0" }).collect();
                    format!("    [{}],", bits.join(", "))
                })
                .collect();
            format!("[\n{}\n]", rows.join("\n"))
        }
        // a window is written as the causal mask it narrows, then `window` and `sinks`
        Mask::Window { .. } => quote(Mask::Causal.name()),
        other => quote(other.name()),
    };
    let _ = write!(
        out,
        "\n[run]\nvariants = [{}]\npasses = [{}]\nmask = {mask}\n",
        variants.join(", "),
        passes.join(", "),
    );
    if let Mask::Window { w, sinks } = s.mask {
        let _ = writeln!(out, "window = {w}");
        if sinks > 0 {
            let _ = writeln!(out, "sinks = {sinks}");
        }
    }
    if s.sink_logit {
        out.push_str("sink_logit = true\n");
    }
    if !s.bias {
        out.push_str("bias = false\n");
    }
    if s.qkv == Qkv::Separate {
        let _ = writeln!(out, "qkv = {}", quote(s.qkv.name()));
    }
    if let Some(d) = s.dropout {
        let _ = writeln!(out, "dropout = {}\ndropout_seed = {}", number(d.p), d.seed);
    }
    if s.mode == Mode::Eval {
        let _ = writeln!(out, "mode = {}", quote(s.mode.name()));
    }
    if !s.mistakes.is_empty() {
        let names: Vec<String> = s.mistakes.list().iter().map(|m| quote(m.name())).collect();
        let _ = writeln!(out, "mistakes = [{}]", names.join(", "));
    }
    if let Some(r) = s.rope {
        let _ = writeln!(out, "rope = {}\nrope_base = {}", quote(r.pairs.name()), number(r.base));
    }
    if s.decode {
        out.push_str("decode = true\n");
    }
    if let Some(parts) = s.cache.split {
        let _ = writeln!(out, "split_kv = {parts}");
    }
    // a paged cache is written with its table, whether it was given or dealt from a seed
    if let Some(p) = &s.cache.paged {
        let _ = write!(
            out,
            "\n[paged]\nblock_size = {}\nnum_blocks = {}\ntable = [",
            p.block_size, p.num_blocks
        );
        let rows: Vec<String> = p
            .table
            .chunks(p.per_row(sh.t).max(1))
            .map(|row| {
                format!(
                    "[{}]",
                    row.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
                )
            })
            .collect();
        let _ = writeln!(out, "{}]", rows.join(", "));
    }

    if s.variants.iter().any(|v| v.desc().tiled) {
        let _ = write!(out, "\n[flash]\nbr = {}\nbc = {}\n", s.tiles.br, s.tiles.bc);
    }

    let _ = write!(out, "\n[init]\nseed = {}\n", s.init.seed);
    let _ = match s.init.dist {
        Dist::Normal { std } => writeln!(out, "dist = \"normal\"\nstd = {}", number(std)),
        Dist::Uniform { scale } => writeln!(out, "dist = \"uniform\"\nscale = {}", number(scale)),
        Dist::Zeros => writeln!(out, "dist = \"zeros\""),
        Dist::Ones => writeln!(out, "dist = \"ones\""),
        Dist::Arange { scale } => writeln!(out, "dist = \"arange\"\nscale = {}", number(scale)),
    };

    if !s.values.is_empty() {
        out.push_str("\n[values]\n");
        for buf in GIVEN {
            let Some(data) = s.values.get(&buf) else { continue };
            let (name, shape) = (buf.name(), given_shape(buf, sh, s.latent));
            let row = shape.last().copied().unwrap_or(1).max(1);
            if shape.len() < 2 || data.len() <= row {
                let _ = writeln!(out, "{name} = {}", list(data));
            } else {
                // one line per row of the last dimension: the nesting the parser calls "rows"
                let _ = writeln!(out, "{name} = [");
                for chunk in data.chunks(row) {
                    let _ = writeln!(out, "    {},", list(chunk));
                }
                out.push_str("]\n");
            }
        }
    }

    if let Some(f) = &s.focus {
        out.push_str("\n[focus]\n");
        if let Some(v) = f.variant {
            let _ = writeln!(out, "variant = {}", quote(v.name()));
        }
        if let Some(p) = f.pass {
            let _ = writeln!(out, "pass = {}", quote(p.name()));
        }
        let _ = writeln!(out, "b = {}\nh = {}\ni = {}\nj = {}", f.b, f.h, f.i, f.j);
    }
    out
}
