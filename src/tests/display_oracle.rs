//! The display oracle: what the tracer draws is the log's truth.
//!
//! The tracer is drawn headlessly at 120×40 on every event (a dense sample of about 700 on a
//! large log, one in each stretch at a golden-ratio offset, so that no loop's period hides a
//! position), and at 80×24 on a quarter of them, for every variant of:
//!
//! - every shipped scenario (`scenarios/*.toml`);
//! - generated whole-sequence runs, forward and backward: B = 1..2, T = 1..4, H = 1..4, D = 1..2,
//!   self- or cross-attention (S ≠ T), causal, no or an explicit mask, dropout, grouped-query
//!   heads beside MHA (H_kv = 1, multi-query, or the largest proper divisor of H), rotary
//!   positions (both pair layouts);
//! - generated decode runs (`decode = true`, the KV-cache kernels, forward only): gqa over
//!   H_kv = 1 or the largest proper divisor of H = 2..4, beside mha and the baseline, with and
//!   without rotary positions;
//! - generated flash runs beside mha (or gqa), forward and backward, with ragged tiles (`br`,
//!   `bc` that do not divide S and T), self- or cross-attention, any mask, rotary positions.
//!
//! Each frame is checked against the event log alone, with this file's own table of the docs'
//! layouts:
//!
//! - every partial sum in the equation panel is the sum of the terms the log has completed at
//!   that event (a term whose second factor is still to come is not in it), and says so;
//! - every arithmetic chain the equation panel, the variables panel and the dot strip print
//!   (`old + (Σ × 1/√2) = new`, `q_base = ((0*3 + 2)*2 + 1)*2 = 10`) holds by hand: recomputed
//!   on a calculator from its printed operands, it gives its printed result to the last digit
//!   (`chains.rs`); and so does every chain of `explain` (a spread of elements of every run,
//!   both passes) and of Compare's notes (a spread of elements, every phase compared);
//! - every memory-grid cell sits under the row, column, head and batch labels whose layout
//!   offset is the cell's offset, and shows the value the cell holds at that event;
//! - the flat row's offsets are the offsets of the cells under them;
//! - the highlighted cells are the current event's, and only those;
//! - every index label on screen (`k[6] … (b0 j1 h1 d0)`) is the docs' layout of that offset,
//!   and in the attention passes each coordinate is the kernel's loop variable of that name;
//! - in flash's loops (docs/flash.md): every sum of products the log is accumulating (score
//!   tile, the accumulator rescaled by `e^(m_old − m_new)`, `D_i`, dV, dS's `dP`, dQ, dK) as
//!   above; in the online softmax, `m_new` is the maximum of `m_old` and the scores read, and
//!   `l_new` the value the kernel writes; `att = acc / l` and `lse = m + ln l` with the log's
//!   numbers; tile-local buffers laid out by their own rows `ii`, `jj`, and `i = i0 + ii`,
//!   `j = j0 + jj` in the global buffers' labels.

use crate::tui::screens::compare::{self, Compare};
use crate::tui::screens::tracer::{self, Tracer};
use crate::tui::widgets::{dot, equation, memory, num, variables};
use crate::tui::{Theme, TracedScenario};
use attn_trace_analysis::Element;
use attn_trace_analysis::explain;
use attn_trace_analysis::format::{exact_decimals, fixed};
use attn_trace_analysis::formula;
use attn_trace_core::engine::kernel_shape;
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::scenario::Scenario;
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, Op, Pass, Phase, Stage, Trace};
use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::{Buffer, Cell};
use ratatui::style::Color;
use ratatui::widgets::Block;
use std::sync::Arc;

/// The docs' layout of a buffer: `(dimension name, size)`, outermost first. Queries are walked
/// by `i`, keys and values by `j`; MHA reads `[B,L,C]` rows as `[B,L,H,D]`, GQA its keys and
/// values (and a decode run's caches) as `[B,T,H_kv,D]`.
fn layout(
    buf: &str,
    variant: Variant,
    sh: Shape,
    (br, bc): (usize, usize),
    cache: &CacheOf,
) -> Vec<(&'static str, usize)> {
    let Shape { b, s, t, c, h, .. } = sh;
    // flash's row statistics and its tiles, sized `br` query rows by `bc` key columns
    let d_head = c / h;
    match buf {
        "lse" => return vec![("b", b), ("h", h), ("i", s)],
        "q_tile" | "acc" | "do_tile" => return vec![("ii", br), ("d", d_head)],
        "k_tile" | "v_tile" | "dk_tile" | "dv_tile" => return vec![("jj", bc), ("d", d_head)],
        "s_tile" | "ds_tile" => return vec![("ii", br), ("jj", bc)],
        "m" | "l" => return vec![("ii", br)],
        _ => {}
    }
    let mha = variant != Variant::Baseline;
    let gqa = variant == Variant::Gqa;
    let (h, d) = if mha { (h, c / h) } else { (1, c) };
    // key/value channels: H_kv·D in GQA, C otherwise
    let kv = if gqa { sh.h_kv * d } else { c };
    let rows = |r: &'static str, n: usize| {
        if mha {
            vec![("b", b), (r, n), ("h", h), ("d", d)]
        } else {
            vec![("b", b), (r, n), ("c", c)]
        }
    };
    let kv_rows = |r: &'static str, n: usize| {
        if gqa {
            vec![("b", b), (r, n), ("kv_h", sh.h_kv), ("d", d)]
        } else {
            rows(r, n)
        }
    };
    let pairs = if mha {
        vec![("b", b), ("h", h), ("i", s), ("j", t)]
    } else {
        vec![("b", b), ("i", s), ("j", t)]
    };
    // a decode run's cache: a row per position, the sinks' rows and the window's slots, or a
    // pool of blocks of BS rows
    let head = if gqa {
        vec![("kv_h", sh.h_kv), ("d", d)]
    } else if mha {
        vec![("h", h), ("d", d)]
    } else {
        vec![("c", c)]
    };
    // a split step's parts, per head when the kernel has heads
    let parts = if mha {
        vec![("b", b), ("h", h), ("t", t), ("p", cache.parts)]
    } else {
        vec![("b", b), ("t", t), ("p", cache.parts)]
    };
    let name = buf.strip_prefix("d_").unwrap_or(buf);
    // multi-head latent attention: heads of D + DR query channels, a latent of R channels per
    // token (and, decoding, its cache row [c_kv | k_pe] and the per-head latent rows)
    if let Some((r, dr)) = cache.latent {
        match name {
            "q" => return vec![("b", b), ("i", s), ("h", h), ("d", d + dr)],
            "w_q" => return vec![("c", c), ("o", h * (d + dr))],
            "w_dkv" => return vec![("c", c), ("o", r)],
            "w_kr" => return vec![("c", c), ("o", dr)],
            "w_uk" | "w_uv" => return vec![("c", r), ("o", c)],
            "c_kv" => return vec![("b", b), ("j", t), ("r", r)],
            "k_pe" => return vec![("b", b), ("j", t), ("e", dr)],
            "k_nope" => return rows("j", t),
            "kv_cache" => return vec![("b", b), ("j", t), ("r", r + dr)],
            "q_lat" | "o_lat" => return vec![("b", b), ("i", s), ("h", h), ("r", r)],
            // rope turns only the DR rotary channels, in DR/2 pairs
            "rope_cos" | "rope_sin" => return vec![("t", t), ("m", dr / 2)],
            _ => {}
        }
    }
    match name {
        "k_cache" | "v_cache" => match (cache.pool, cache.slots) {
            (Some((nb, bs, _)), _) => [vec![("phys", nb), ("r", bs)], head].concat(),
            (None, Some(rows)) => kv_rows("slot", rows),
            (None, None) => kv_rows("j", t),
        },
        "block_table" => vec![("b", b), ("blk", cache.pool.map_or(0, |p| p.2))],
        "p_part" => pairs,
        "lse_part" | "w_part" => parts,
        "o_part" => [parts, vec![if mha { ("d", d) } else { ("c", c) }]].concat(),
        "q" | "att" => rows("i", s),
        "k" | "v" => kv_rows("j", t),
        "scores" | "probs" | "drop_mask" | "probs_drop" => pairs,
        // one number per softmax row: the sink's share and D_i (the baseline has no head)
        "p_sink" | "delta" if mha => vec![("b", b), ("h", h), ("i", s)],
        "p_sink" | "delta" => vec![("b", b), ("i", s)],
        // gpt-oss's sink logit, one per head
        "sink" => vec![("h", h)],
        "x" | "out" => vec![("b", b), ("i", s), ("c", c)],
        "memory" => vec![("b", b), ("j", t), ("c", c)],
        "qkv" => vec![("b", b), ("i", t), ("c", c + 2 * kv)],
        "w_qkv" => vec![("c", c), ("o", c + 2 * kv)],
        "b_qkv" => vec![("o", c + 2 * kv)],
        "w_q" | "w_proj" => vec![("c", c), ("o", c)],
        "w_k" | "w_v" => vec![("c", c), ("o", kv)],
        "b_q" | "b_proj" => vec![("o", c)],
        "b_k" | "b_v" => vec![("o", kv)],
        // the rotation tables: one angle per position t and channel pair m of a head
        "rope_cos" | "rope_sin" => vec![("t", t), ("m", d / 2)],
        other => panic!("the oracle has no layout for {other}"),
    }
}

/// Offset of the element with these named coordinates (missing ones are 0).
fn offset(dims: &[(&str, usize)], coords: &[(String, usize)]) -> Option<usize> {
    let mut off = 0;
    for &(name, size) in dims {
        let v = coords.iter().find(|(n, _)| n == name).map_or(0, |&(_, v)| v);
        if v >= size {
            return None;
        }
        off = off * size + v;
    }
    // every coordinate given must be a dimension of the layout (or 0)
    coords
        .iter()
        .all(|(n, v)| *v == 0 || dims.iter().any(|(d, _)| d == n))
        .then_some(off)
}

/// `b0 j1 h1 d0` for an offset.
fn label(dims: &[(&str, usize)], mut off: usize) -> String {
    let mut parts = Vec::new();
    for &(name, size) in dims.iter().rev() {
        parts.push(format!("{name}{}", off % size));
        off /= size;
    }
    parts.reverse();
    parts.join(" ")
}

/// `j12` → `[("j", 12)]`, `h1d0` → `[("h", 1), ("d", 0)]`; `None` for anything else.
fn coords(text: &str) -> Option<Vec<(String, usize)>> {
    let mut out = Vec::new();
    let mut rest = text.trim().trim_end_matches(':');
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        rest = rest.trim_start();
        let name_len = rest.find(|c: char| !(c.is_ascii_lowercase() || c == '_'))?;
        let digits = rest[name_len..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len() - name_len);
        if name_len == 0 || digits == 0 {
            return None;
        }
        let value = rest[name_len..name_len + digits].parse().ok()?;
        out.push((rest[..name_len].to_string(), value));
        rest = &rest[name_len + digits..];
    }
    Some(out)
}

fn text_at(buf: &Buffer, x: u16, y: u16, w: u16) -> String {
    assert!(x + w <= buf.area.right(), "{w} columns from x = {x} leave the screen");
    let start = buf.index_of(x, y);
    buf.content[start..start + w as usize]
        .iter()
        .map(Cell::symbol)
        .collect()
}

fn screen_lines(buf: &Buffer) -> Vec<String> {
    let a = buf.area;
    (a.y..a.bottom()).map(|y| text_at(buf, a.x, y, a.width)).collect()
}

/// What the log says the accumulation around event `n` is: its constant part and terms done by
/// `n`, how many terms it has in all, and whether the term holding `n` still waits for a factor.
struct Truth {
    done: usize,
    total: usize,
    sum: f64,
    incomplete_current: bool,
}

/// From the log alone: the write that ends the accumulation is the first write at or after
/// `n`; its loop iteration holds the reads that feed it. Each nested iteration's reads are one
/// product. A read made directly in that iteration before the first product is what the sum
/// starts from (a bias); one after the products is the old value of a `+=`, which the write
/// adds the sum to, and is not part of the running sum.
fn truth(trace: &Trace, n: usize) -> Option<Truth> {
    let w = (n..trace.len()).find(|&k| trace.events[k].op == Op::Write)?;
    let frame_id = trace.events[w].frame;
    let f = trace.frame(frame_id)?;
    let mut sum = 0.0f64;
    let mut terms: Vec<(u32, f64, usize, bool)> = Vec::new(); // (frame, product, last event, any read > n)
    for k in f.start as usize..=w {
        let e = trace.events[k];
        // a paged cache's block table tells where a factor is; it is not one
        if e.op != Op::Read || e.buf == Buf::BlockTable {
            continue;
        }
        if e.frame == frame_id {
            if k <= n && terms.is_empty() {
                sum += f64::from(e.value);
            }
            continue;
        }
        match terms.last_mut() {
            Some(t) if t.0 == e.frame => {
                t.1 *= f64::from(e.value);
                t.2 = k;
            }
            _ => terms.push((e.frame, f64::from(e.value), k, false)),
        }
    }
    let done: Vec<_> = terms.iter().filter(|t| t.2 <= n).collect();
    sum += done.iter().map(|t| t.1).sum::<f64>();
    let e = trace.events[n];
    let incomplete_current = e.op == Op::Read && e.frame != frame_id && terms.iter().any(|t| t.0 == e.frame && t.2 > n);
    Some(Truth {
        done: done.len(),
        total: terms.len(),
        sum,
        incomplete_current,
    })
}

/// Flash's phases: one loop nest each, with its own steps (docs/flash.md).
fn flash_phase(p: Phase) -> bool {
    matches!(p, Phase::Flash | Phase::FlashDelta | Phase::FlashBack)
}

/// The flash buffers whose writes end a sum of products.
const FLASH_SUMS: [&str; 7] = ["s_tile", "acc", "delta", "dv_tile", "ds_tile", "d_q", "dk_tile"];

/// The online-softmax row around event `n`: the iteration whose first event reads `m`.
fn flash_row(trace: &Trace, n: usize) -> Option<(usize, usize)> {
    let mut id = trace.events[n].frame;
    while let Some(f) = trace.frame(id) {
        let first = trace.events.get(f.start as usize);
        if trace.kinds[f.kind as usize].names == ["ii"]
            && first.is_some_and(|e| e.buf == Buf::RowMax && e.op == Op::Read)
        {
            return Some((f.start as usize, f.end as usize));
        }
        id = f.parent;
    }
    None
}

/// A number as the equation panel writes it: four decimals, `−∞`, `-1e9`.
fn four(v: f32) -> String {
    if v == 0.0 {
        "0.0000".to_string()
    } else if v == f32::NEG_INFINITY {
        "−∞".to_string()
    } else if v.is_finite() && v.abs() < 999.5 {
        format!("{v:.4}")
    } else {
        num(v)
    }
}

/// The number after the last `= ` of the first line starting with `prefix`.
fn shown_value(lines: &[String], prefix: &str) -> Option<f64> {
    let line = lines.iter().find(|l| l.starts_with(prefix))?;
    match line.rsplit("= ").next()?.trim() {
        "−∞" => Some(f64::NEG_INFINITY),
        v => v.parse().ok(),
    }
}

/// Flash's sums, online softmax and write-back, from the log alone.
fn check_flash_equation(trace: &Trace, n: usize, lines: &[String]) -> Result<(), String> {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-4 * b.abs().max(1.0);
    let ev = trace.events[n];
    // a sum: the first write at or after n ends it, in an iteration enclosing n, to one of
    // FLASH_SUMS, with products read in the iterations nested in it
    let w = (n..trace.len()).find(|&k| trace.events[k].op == Op::Write);
    let sum = w.and_then(|w| {
        let f = trace.frame(trace.events[w].frame)?;
        let target = trace.events[w].buf.name();
        (FLASH_SUMS.contains(&target) && n >= f.start as usize).then_some((w, f, target))
    });
    if let Some((w, f, target)) = sum {
        let id = trace.events[w].frame;
        let mut consts = Vec::new();
        let mut terms: Vec<(u32, f64, usize)> = Vec::new();
        for k in f.start as usize..=w {
            let e = trace.events[k];
            if e.op != Op::Read {
                continue;
            }
            if e.frame == id {
                if k <= n {
                    consts.push(f64::from(e.value));
                }
                continue;
            }
            match terms.last_mut() {
                Some(t) if t.0 == e.frame => {
                    t.1 *= f64::from(e.value);
                    t.2 = k;
                }
                _ => terms.push((e.frame, f64::from(e.value), k)),
            }
        }
        if !terms.is_empty() {
            let done: Vec<_> = terms.iter().filter(|t| t.2 <= n).collect();
            let mut want = done.iter().map(|t| t.1).sum::<f64>();
            let first_const = consts.first().copied().unwrap_or(0.0);
            match target {
                // the accumulator is rescaled by e^(m_old − m_new) of its row
                "acc" => {
                    let (start, end) = flash_row(trace, n).ok_or("an accumulator update outside a softmax row")?;
                    let m_old = f64::from(trace.events[start].value);
                    let m_new = (start..end)
                        .map(|k| trace.events[k])
                        .find(|e| e.buf == Buf::RowMax && e.op == Op::Write)
                        .map(|e| f64::from(e.value))
                        .ok_or("no m_new written before the accumulator")?;
                    want += (m_old - m_new).exp() * first_const;
                }
                "dv_tile" => want += first_const,
                _ => {}
            }
            let (m, total, x) = shown_partial_sum(lines).ok_or("no partial sum shown")?;
            if (m, total) != (done.len(), terms.len()) {
                return Err(format!(
                    "shows {m} of {total} terms, the log has {} of {}",
                    done.len(),
                    terms.len()
                ));
            }
            if !close(x, want) {
                return Err(format!("partial sum shown {x}, the log's {want:.6}"));
            }
            let waiting = ev.op == Op::Read && ev.frame != id && terms.iter().any(|t| t.0 == ev.frame && t.2 > n);
            if lines.iter().any(|l| l.contains("next factor follows")) != waiting {
                return Err(format!(
                    "'(next factor follows)' shown wrongly (the term waits: {waiting})"
                ));
            }
            return Ok(());
        }
    }
    // the online softmax of a row: m_old, the row's nc scores, then nc (read, write) pairs, l_old
    if let Some((start, end)) = flash_row(trace, n) {
        let first_write = (start..end)
            .find(|&k| trace.events[k].op == Op::Write)
            .ok_or("a row without writes")?;
        let nc = first_write - start - 2;
        let p = n - start;
        let m_old = trace.events[start].value;
        let seen: Vec<f32> = (1..=nc.min(p)).map(|k| trace.events[start + k].value).collect();
        let m_so_far = seen.iter().copied().fold(m_old, f32::max);
        let m_line = shown_value(lines, "m_new = max(m_old, rowmax(S_tile))").ok_or("no m_new line")?;
        if four(m_so_far) != four(m_line as f32) {
            return Err(format!("m_new shown {m_line}, the log's maximum so far {m_so_far}"));
        }
        if p >= 3 * nc + 2 {
            let l_write = trace.events[start + 3 * nc + 2];
            let l_line = shown_value(lines, "l_new = ").ok_or("no l_new line")?;
            if l_write.buf != Buf::RowSum || !close(l_line, f64::from(l_write.value)) {
                return Err(format!("l_new shown {l_line}, the log writes {}", l_write.value));
            }
        }
        return Ok(());
    }
    // the output tile: att = acc / l, lse = m + ln l
    if ev.op == Op::Write && matches!(ev.buf, Buf::Att | Buf::Lse) && trace.phase_at(n) == Phase::Flash {
        let before = trace.events[n - 1];
        let prefix = if ev.buf == Buf::Att { "att[" } else { "lse[" };
        let line = lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .ok_or("no write-back line")?;
        // `att[6] = acc / l = A / L = R`, `lse[1] = m + ln l = M + ln L = R`: the operand
        // read just before and the value written, each to its printed digits
        let numbers: Vec<&str> = line
            .rsplit(" = ")
            .take(2)
            .flat_map(|piece| piece.split([' ', '/', '+']))
            .filter(|t| t.parse::<f64>().is_ok())
            .collect();
        let (Some(result), Some(first)) = (numbers.first(), numbers.get(1)) else {
            return Err(format!("{line:?} has no numbers"));
        };
        if !shows(result, ev.value) || !shows(first, before.value) {
            return Err(format!("{line:?} does not show {} and {}", before.value, ev.value));
        }
    }
    Ok(())
}

/// Does the printed number `text` stand for `value` (round to it at its last digit)?
fn shows(text: &str, value: f32) -> bool {
    let Ok(x) = text.parse::<f64>() else {
        return false;
    };
    let decimals = text.split_once('.').map_or(0, |(_, f)| f.len() as i32);
    (x - f64::from(value)).abs() <= 0.5 * 10f64.powi(-decimals) * (1.0 + 1e-9)
}

/// The kernel's loop variable (or derived offset) a buffer dimension must equal in `phase`, or
/// `None` when that dimension is not walked by a variable of its own there. A decode step's
/// query row is its step `t`, and its channels are a head's `d` (the baseline's one head has
/// `D = C`); a rotation walks positions by `t`, channels by pairs and the heads of `k` by
/// `kv_h` (the query heads by `hh`).
fn loop_name(phase: Phase, buf: Buf, dim: &str) -> Option<&str> {
    let decode = matches!(
        phase,
        Phase::DecodeScores
            | Phase::DecodeSoftmax
            | Phase::DecodeSum
            | Phase::DecodePartSoftmax
            | Phase::DecodePartSum
            | Phase::DecodeMergeWeights
            | Phase::DecodeMerge
            | Phase::DecodeAbsorb
            | Phase::DecodeLatentSum
            | Phase::DecodeUp
    );
    let rope = matches!(phase, Phase::Rope | Phase::RopeBack);
    let keys = matches!(buf, Buf::K | Buf::DK | Buf::KCache);
    Some(match dim {
        // an up-projection's row is a latent channel and its column o = h·D + d a head's
        // channel: the absorbed decode reads them as r and (h, d), which w_off's formula checks
        "c" | "o" if matches!(buf, Buf::WUk | Buf::WUv) => return None,
        "b" => "bb",
        "h" if rope && keys => "kv_h",
        "h" => "hh",
        "i" if decode || rope => "t",
        "j" if rope => "t",
        // the baseline decodes with the one kernel, as one head of D = C channels
        "c" if decode => "d",
        // a rotation's channels are its pair's (d0, d1), not a loop of their own: a head's,
        // or latent attention's rotary channel e of k_pe and column r of its cache row
        "d" | "c" | "e" | "r" if rope => return None,
        d => d,
    })
}

/// Phases of the attention kernels themselves, where every buffer index is a loop variable.
fn attention_core(p: Phase) -> bool {
    matches!(p.stage(), Stage::Core | Stage::Rope | Stage::Decode)
}

/// The equation panel's `partial sum … (m of N terms) = X`, as `(m, N, X)`.
fn shown_partial_sum(lines: &[String]) -> Option<(usize, usize, f64)> {
    let line = lines.iter().find(|l| l.starts_with("partial sum"))?;
    let open = line.rfind('(')?;
    let inner = &line[open + 1..line.rfind(')')?];
    let mut words = inner.split_whitespace();
    let m = words.next()?.parse().ok()?;
    let n = words.nth(1)?.parse().ok()?;
    let x = line.rsplit("= ").next()?.trim().parse().ok()?;
    Some((m, n, x))
}

struct Checker<'a> {
    traced: &'a Arc<TracedScenario>,
    variant: Variant,
    /// Flash's tile sizes as the run uses them (never more rows than queries, nor columns
    /// than keys).
    tiles: (usize, usize),
    /// A decode run's cache, as the scenario keeps it.
    cache: CacheOf,
    name: &'a str,
}

/// How a decode run keeps its cache, read from the walk's inputs (not from the registry): a
/// pool of `(NB, BS, MB)`, the `N + W` rows of a rolling window, and the parts of a split step.
#[derive(Default)]
struct CacheOf {
    pool: Option<(usize, usize, usize)>,
    slots: Option<usize>,
    parts: usize,
    /// `(W, N)` of a rolling window cache.
    window: Option<(usize, usize)>,
    /// A paged cache's block table, `[B, MB]`.
    table: Vec<usize>,
    /// Multi-head latent attention's `(R, DR)`.
    latent: Option<(usize, usize)>,
}

impl CacheOf {
    fn of(traced: &TracedScenario) -> CacheOf {
        let latent = traced
            .inputs
            .as_ref()
            .and_then(|i| i.plan().latent())
            .map(|l| (l.r, l.dr));
        let Some(inputs) = traced.inputs.as_ref().filter(|i| i.decode) else {
            return CacheOf {
                latent,
                ..CacheOf::default()
            };
        };
        let t = inputs.shape.t;
        CacheOf {
            pool: inputs
                .cache
                .paged
                .as_ref()
                .map(|p| (p.num_blocks, p.block_size, t.div_ceil(p.block_size))),
            slots: match inputs.mask {
                Mask::Window { w, sinks } => Some(sinks + w),
                _ => None,
            },
            parts: inputs.cache.split.unwrap_or(0),
            window: match inputs.mask {
                Mask::Window { w, sinks } => Some((w, sinks)),
                _ => None,
            },
            table: inputs.cache.paged.as_ref().map(|p| p.table.clone()).unwrap_or_default(),
            latent,
        }
    }

    /// The coordinate `dim` of the cache row that holds key `j` of sequence `bb`: a sink's own
    /// row or slot `N + j % W`, a pool's block `table[bb][j / BS]` and row `j % BS` in it.
    fn row_of(&self, dim: &str, bb: usize, j: usize) -> Option<usize> {
        match (dim, self.window, self.pool) {
            ("slot", Some((w, sinks)), _) => Some(if j < sinks { j } else { sinks + j % w }),
            ("phys", _, Some((_, bs, mb))) => self.table.get(bb * mb + j / bs).copied(),
            ("r", _, Some((_, bs, _))) => Some(j % bs),
            // the block table's entry for key j
            ("blk", _, Some((_, bs, _))) => Some(j / bs),
            _ => None,
        }
    }
}

impl Checker<'_> {
    fn dims(&self, buf: &str) -> Vec<(&'static str, usize)> {
        layout(buf, self.variant, self.traced.shape, self.tiles, &self.cache)
    }

    /// Draws the tracer at event `n` on `term`'s screen and checks what it shows. The terminal
    /// is reused from event to event, its buffer cleared before each frame; the frame is read
    /// from that buffer as drawn, not sent on to the backend (`Terminal::draw`'s diff against
    /// the previous frame and its copy into the test backend took a seventh of the oracle's
    /// time, and change nothing on screen).
    fn check(&self, n: usize, term: &mut Terminal<TestBackend>) -> Result<(), String> {
        let mut st = Tracer::new(Arc::clone(self.traced), Some(self.variant));
        st.cursor = n;
        let theme = Theme::COLOR;
        term.current_buffer_mut().reset();
        let mut frame = term.get_frame();
        let area = frame.area();
        tracer::render(&mut frame, area, &st, theme);
        let screen: &Buffer = term.current_buffer_mut();
        let (w, h) = (screen.area.width, screen.area.height);
        let ctx = st.ctx(theme).ok_or("no context")?;
        let trace = ctx.trace;
        let ev = trace.events[n];
        let phase = trace.phase_at(n);
        let at = || format!("{} {} event #{n} ({phase}) at {w}×{h}", self.name, self.variant);

        // every arithmetic chain the equation panel prints holds to its printed digits
        let equation_lines: Vec<String> = equation::lines(&ctx)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        crate::tests::support::chains::check_lines(&equation_lines)
            .map_err(|e| format!("{}: {e}\n{equation_lines:#?}", at()))?;
        // and so does every offset formula of the variables panel, and the dot strip's title
        let variable_lines: Vec<String> = variables::lines(&ctx)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        crate::tests::support::chains::check_lines(&variable_lines)
            .map_err(|e| format!("{}: {e}\n{variable_lines:#?}", at()))?;
        // the offsets are spelt as the code panel's kernel line spells them: every name in a
        // formula is a loop variable or an offset the log records at this event, a size of
        // the run, or one of the kernel's constants (`b`, `h` for `bb`, `hh` is not)
        let view = trace.view(n);
        let known: Vec<&str> = view
            .vars
            .iter()
            .map(|v| v.0)
            .chain(view.derived.iter().map(|d| d.name))
            .chain(view.consts.iter().map(|c| c.0))
            .chain(["B", "S", "T", "C", "H", "D", "H_kv", "IC", "OC"])
            .collect();
        for line in &variable_lines {
            let mut parts = line.trim().split(" = ");
            let (Some(name), Some(text)) = (parts.next(), parts.next()) else {
                continue;
            };
            if !view.derived.iter().any(|d| d.name == name) {
                continue;
            }
            if let Some(id) = formula::names(text).into_iter().find(|id| !known.contains(id)) {
                return Err(format!("{}: `{id}` in `{line}` is no name of the kernel's", at()));
            }
        }
        if let Some(strip) = dot::plan(ratatui::layout::Rect::new(0, 0, w, h), &ctx) {
            let title: String = strip.title.iter().map(|p| p.2.as_str()).collect();
            crate::tests::support::chains::check_line(&title).map_err(|e| format!("{}: dot strip: {e}", at()))?;
        }

        // the equation panel's running sum
        if flash_phase(phase) {
            let lines: Vec<String> = equation::lines(&ctx)
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect();
            check_flash_equation(trace, n, &lines).map_err(|e| format!("{}: {e}\n{lines:#?}", at()))?;
        } else if phase.sums() && ev.buf != Buf::BlockTable {
            let lines: Vec<String> = equation::lines(&ctx)
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect();
            let truth = truth(trace, n).ok_or_else(|| format!("{}: no write ends this sum", at()))?;
            // a write with no product before it (d_v = 0 before the heads add theirs) is no sum
            let (m, total, x) = if truth.total == 0 {
                (0, 0, 0.0)
            } else {
                shown_partial_sum(&lines).ok_or_else(|| format!("{}: no partial sum shown in {lines:?}", at()))?
            };
            if (m, total) != (truth.done, truth.total) {
                return Err(format!(
                    "{}: shows {m} of {total} terms, the log has {} of {} done\n{lines:#?}",
                    at(),
                    truth.done,
                    truth.total
                ));
            }
            if (x - truth.sum).abs() > 1e-4 * truth.sum.abs().max(1.0) {
                return Err(format!(
                    "{}: partial sum shown {x}, the log's {:.6}\n{lines:#?}",
                    at(),
                    truth.sum
                ));
            }
            let noted = lines.iter().any(|l| l.contains("next factor follows"));
            if noted != truth.incomplete_current {
                return Err(format!(
                    "{}: '(next factor follows)' shown: {noted}, the term waits for a factor: {}\n{lines:#?}",
                    at(),
                    truth.incomplete_current
                ));
            }
        }

        // a rotation: the pair's two values turned, as the log wrote them
        if matches!(phase, Phase::Rope | Phase::RopeBack) {
            let lines: Vec<String> = equation::lines(&ctx)
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect();
            let f = trace.frame(ev.frame).ok_or_else(|| format!("{}: no frame", at()))?;
            for k in f.start as usize..f.end as usize {
                let e = trace.events[k];
                let shown = lines.iter().find(|l| {
                    l.starts_with(&format!("{b}'[{}] = {b}[", e.offset, b = e.buf))
                        || l.starts_with(&format!("{b}'[{}] = −{b}[", e.offset, b = e.buf))
                });
                match (e.op, shown) {
                    (Op::Write, Some(line)) => {
                        let result = line.rsplit("= ").next().unwrap_or("");
                        let expect = if k <= n {
                            format!("{:.4}", e.value)
                        } else {
                            String::new()
                        };
                        let ok = if k <= n {
                            result.parse::<f32>().is_ok_and(|x| (x - e.value).abs() < 1e-4)
                        } else {
                            !line.contains(" = ") || line.matches(" = ").count() == 1
                        };
                        if !ok {
                            return Err(format!("{}: shows {line:?}, the log wrote {expect}", at()));
                        }
                    }
                    (Op::Write, None) => {
                        return Err(format!("{}: no line for {}[{}] in {lines:#?}", at(), e.buf, e.offset));
                    }
                    _ => {}
                }
            }
            let angle = lines
                .iter()
                .any(|l| l.starts_with("pair m=") && l.contains("angle t·θ_m"));
            if !angle {
                return Err(format!("{}: no pair and angle in {lines:#?}", at()));
            }
        }

        // every index label on screen, and the kernel's loop names in the attention passes
        let view = trace.view(n);
        let vars = view.vars.clone();
        for line in screen_lines(screen) {
            for (k, _) in line.match_indices('[') {
                let name_start = line[..k]
                    .char_indices()
                    .rev()
                    .find(|&(_, c)| !(c.is_ascii_lowercase() || c == '_'))
                    .map_or(0, |(p, c)| p + c.len_utf8());
                let name = &line[name_start..k];
                let Some(close) = line[k..].find(']') else { continue };
                let Ok(off) = line[k + 1..k + close].parse::<usize>() else {
                    continue;
                };
                if Buf::from_name(name).and_then(|b| trace.buffer(b)).is_none() {
                    continue;
                }
                // the label in the parentheses that follow (after an optional `= value`)
                let rest = &line[k + close + 1..];
                let Some(p) = rest.find('(') else { continue };
                let between = rest[..p].trim();
                // nothing, or `= value`: one number, so a label further along the line (another
                // panel's) is not taken for this one's
                let value_only = between
                    .strip_prefix('=')
                    .is_some_and(|v| v.split_whitespace().count() == 1);
                if !(between.is_empty() || value_only) {
                    continue;
                }
                let Some(q) = rest[p..].find(')') else { continue };
                let shown = &rest[p + 1..p + q];
                if coords(shown).is_none() {
                    continue;
                }
                let want = label(&self.dims(name), off);
                if shown != want {
                    return Err(format!(
                        "{}: {name}[{off}] is labelled ({shown}), the layout says ({want})\n{line}",
                        at()
                    ));
                }
                if attention_core(phase) && name == ev.buf.name() && off == ev.offset as usize {
                    for (dim, value) in coords(shown).unwrap_or_default() {
                        // a decode cache's row of key j: its window slot, or its block and the
                        // row in it, worked out here from the scenario (not from the registry)
                        let key = vars.iter().rev().find(|(v, _)| *v == "j").map(|&(_, v)| v);
                        let bb = vars.iter().find(|(v, _)| *v == "bb").map_or(0, |&(_, v)| v);
                        if let (Some(j), Some(want)) = (key, self.cache.row_of(&dim, bb, key.unwrap_or(0))) {
                            if want != value {
                                return Err(format!(
                                    "{}: {name}[{off}] ({shown}): {dim}{value}, but key j={j} is kept at {dim}{want}",
                                    at()
                                ));
                            }
                            continue;
                        }
                        let Some(var) = loop_name(phase, ev.buf, &dim) else {
                            continue;
                        };
                        // a loop variable, or an offset derived from one (GQA's kv_h); flash walks
                        // rows inside tiles: i = i0 + ii, j = j0 + jj
                        let scope = |name: &str| {
                            vars.iter()
                                .rev()
                                .find(|(v, _)| *v == name)
                                .map(|&(_, v)| v)
                                .or_else(|| view.derived.iter().rev().find(|d| d.name == name).map(|d| d.value))
                        };
                        let tiled = |outer: &str, inner: &str| scope(outer).zip(scope(inner)).map(|(a, b)| a + b);
                        let in_scope = match var {
                            "i" => scope("i").or_else(|| tiled("i0", "ii")),
                            "j" => scope("j").or_else(|| tiled("j0", "jj")),
                            v => scope(v),
                        };
                        if in_scope != Some(value) {
                            return Err(format!(
                                "{}: {name}[{off}] ({shown}): {dim}{value} is not the kernel's loop variable {var} (in scope: {vars:?})",
                                at()
                            ));
                        }
                    }
                }
            }
        }

        // the memory grid
        let areas = tracer::areas(screen.area, &st, &ctx);
        let Some(mem) = areas.memory else { return Ok(()) };
        let inner = Block::bordered().inner(mem);
        let plan = memory::plan(inner, &ctx);
        self.check_dot(screen, &plan, trace, n, inner.height)
            .map_err(|e| format!("{}: {e}", at()))?;
        let placed = &plan.grids;
        let hot = |x: u16, y: u16| {
            let c = &screen[(x, y)];
            c.bg == theme.read().bg.unwrap_or(Color::Reset) && ev.op == Op::Read
                || c.bg == theme.write().bg.unwrap_or(Color::Reset) && ev.op == Op::Write
        };
        let mut highlighted = 0;
        for p in placed {
            let name = p.buf.name();
            let dims = self.dims(name);
            let title = p.labels.first().map(|l| l.2.clone()).unwrap_or_default();
            // the fixed outer dimension: `batch b`, or a paged pool's `block phys p`
            let (outer, split) = if title.contains("block phys ") {
                ("phys", "block phys ")
            } else {
                ("b", "batch ")
            };
            let batch = title
                .split(split)
                .nth(1)
                .and_then(|b| b.trim().parse::<usize>().ok())
                .unwrap_or(0);
            let data_y = p.labels.iter().find(|l| l.2 == "data").map(|l| l.1);
            // does the log write this buffer at all (else its values are given, not results)?
            let some_written = (0..trace.buffer(p.buf).map_or(0, attn_trace_core::trace::BufferInfo::len))
                .any(|o| !trace.index.writes(p.buf, o).is_empty());
            for s in &p.cells {
                let cell_text = text_at(screen, s.x, s.y, s.w);
                let value = trace.value_at(p.buf, s.off, n);
                let is_current = (p.buf, s.off) == (ev.buf, ev.offset as usize);
                // a cell the log writes, but not yet, shows `--` (the current one its number); a
                // block id its integer
                let writes = trace.index.writes(p.buf, s.off);
                let unwritten = some_written && writes.first().is_none_or(|&w| w as usize > n);
                let want = if unwritten && !is_current {
                    "--".to_string()
                } else if p.buf == Buf::BlockTable {
                    format!("{}", value as i64)
                } else {
                    num(value)
                };
                if !p.heat && cell_text.trim() != want {
                    return Err(format!(
                        "{}: {name}[{}] shows {:?}, holds {}",
                        at(),
                        s.off,
                        cell_text.trim(),
                        want
                    ));
                }
                if hot(s.x, s.y) != is_current {
                    return Err(format!(
                        "{}: {name}[{}] highlighted: {}, current event {}[{}]",
                        at(),
                        s.off,
                        hot(s.x, s.y),
                        ev.buf,
                        ev.offset
                    ));
                }
                highlighted += usize::from(is_current);
                // the label right-aligned above the cell (starting over it in heat mode): a
                // column name, or a flat offset
                let above = p
                    .labels
                    .iter()
                    .filter(|l| !l.3 && !l.2.ends_with(':') && l.1 < s.y)
                    .filter(|l| {
                        if p.heat {
                            l.0 == s.x
                        } else {
                            l.0 + l.2.chars().count() as u16 == s.x + s.w
                        }
                    })
                    .max_by_key(|l| l.1);
                if Some(s.y) == data_y {
                    if let Some(l) = above.filter(|l| l.1 + 1 == s.y)
                        && l.2 != s.off.to_string()
                    {
                        return Err(format!("{}: {name}: offset label {:?} over data[{}]", at(), l.2, s.off));
                    }
                    continue;
                }
                let row = p
                    .labels
                    .iter()
                    .filter(|l| l.1 == s.y && l.0 <= s.x && coords(&l.2).is_some())
                    .max_by_key(|l| l.0);
                let panel = p
                    .labels
                    .iter()
                    .filter(|l| l.2.ends_with(':') && l.0 <= s.x)
                    .max_by_key(|l| l.0);
                let mut c = vec![(outer.to_string(), batch)];
                for l in [panel, row, above].into_iter().flatten() {
                    // a label closer to the cell wins: a block table's rows are the batch `b`
                    for (name, v) in coords(&l.2).unwrap_or_default() {
                        c.retain(|(n, _)| *n != name);
                        c.push((name, v));
                    }
                }
                let (Some(_), Some(col)) = (row, above) else {
                    // heat columns are labelled where a whole label fits, not every one
                    if !(p.heat && row.is_some()) && (dims.len() > 1 || row.is_some()) {
                        return Err(format!("{}: {name}[{}] has no row or column label", at(), s.off));
                    }
                    continue;
                };
                if coords(&col.2).is_none() {
                    return Err(format!("{}: {name}: column label {:?} names no dimension", at(), col.2));
                }
                let want = offset(&dims, &c);
                if want != Some(s.off) {
                    return Err(format!(
                        "{}: {name}: the cell under {c:?} is offset {}, the layout says {want:?}",
                        at(),
                        s.off
                    ));
                }
                let pairs = dims.len() >= 2 && dims[dims.len() - 2].0 == "i" && dims[dims.len() - 1].0 == "j";
                let get = |n: &str| c.iter().find(|(x, _)| x == n).map_or(0, |&(_, v)| v);
                let hidden = pairs && self.traced.mask.hides(get("i"), get("j"));
                if s.masked != hidden {
                    return Err(format!(
                        "{}: {name}[{}] masked: {}, the mask says {hidden}",
                        at(),
                        s.off,
                        s.masked
                    ));
                }
            }
        }
        if placed.iter().any(|p| p.buf == ev.buf) && highlighted == 0 {
            return Err(format!(
                "{}: the current cell {}[{}] is not highlighted",
                at(),
                ev.buf,
                ev.offset
            ));
        }
        Ok(())
    }
}

impl Checker<'_> {
    /// The dot product strip against the log: its terms are the nested iterations of the loop
    /// that ends with the write (found here from the log alone), each factor shows the value its
    /// read returned, each product is drawn once the term is finished and is the product of its
    /// reads, each column's header is the term's loop variable, each operand's offsets are the
    /// ones its reads used, and the title names the cell written.
    fn check_dot(
        &self,
        screen: &Buffer,
        plan: &memory::MemoryPlan,
        trace: &Trace,
        n: usize,
        height: u16,
    ) -> Result<(), String> {
        let phase = trace.phase_at(n);
        let terms = log_terms(trace, n);
        let Some(d) = &plan.dot else {
            if phase.sums() && terms.as_ref().is_some_and(|(t, _)| !t.is_empty()) && height >= 6 {
                return Err("a dot product is stepped but the memory panel does not show it".into());
            }
            return Ok(());
        };
        let (terms, write) = terms.ok_or("a dot product is drawn where the log has none")?;
        if terms.is_empty() {
            return Err("a dot product of no terms is drawn".into());
        }
        let w = trace.events[write];
        let title = format!(
            "{}[{}] ({})",
            w.buf,
            w.offset,
            label(&self.dims(w.buf.name()), w.offset as usize)
        );
        // the pieces as drawn, one space apart: on a narrow panel they flow onto more lines
        let line: String = d
            .title
            .iter()
            .map(|(x, y, text, _)| text_at(screen, *x, *y, text.chars().count() as u16))
            .collect::<Vec<_>>()
            .join(" ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if !line.starts_with(&format!("dot product → {title}")) {
            return Err(format!("the dot product's title does not name {title}: {line}"));
        }
        // the strip writes all its numbers with one number of decimals, the most any needs
        let dec = terms
            .iter()
            .flat_map(|t| {
                t.iter()
                    .map(|&k| trace.events[k].value)
                    .chain([t.iter().map(|&k| trace.events[k].value).product::<f32>()])
            })
            .chain([w.value])
            .map(exact_decimals)
            .max()
            .unwrap_or(4);
        if d.decimals != dec {
            return Err(format!(
                "the dot product's numbers have {} decimals, its values need {dec}",
                d.decimals
            ));
        }
        let written = format!("{title} = {}", fixed(w.value, dec));
        if line.contains(&written) != (n == write) {
            return Err(format!(
                "`{written}` shown: {}, the cursor at the write: {}",
                n != write,
                n == write
            ));
        }
        let mut drawn_products = 0;
        for s in &d.spots {
            let term = terms
                .get(s.term)
                .ok_or_else(|| format!("term {} is not in the log", s.term))?;
            let shown = text_at(screen, s.x, s.y, s.w);
            let want = match s.factor {
                Some(f) => {
                    let k = *term.get(f).ok_or("a factor the term does not have")?;
                    fixed(trace.events[k].value, dec)
                }
                None => {
                    drawn_products += 1;
                    if term.last().is_some_and(|&k| k > n) {
                        return Err(format!("term {} has a product drawn before its last read", s.term));
                    }
                    fixed(term.iter().map(|&k| trace.events[k].value).product::<f32>(), dec)
                }
            };
            if shown.trim() != want {
                return Err(format!(
                    "dot product term {} shows {:?}, the log says {want}",
                    s.term,
                    shown.trim()
                ));
            }
        }
        let shown_terms: Vec<usize> = d.heads.iter().map(|h| h.3).collect();
        let finished = shown_terms
            .iter()
            .filter(|&&k| terms[k].len() >= 2 && terms[k].last().is_some_and(|&r| r <= n))
            .count();
        if finished != drawn_products {
            return Err(format!(
                "{finished} finished terms in view, {drawn_products} products drawn"
            ));
        }
        // a header is the term's loop value, named (`d2`) when the terms run over loops of
        // different names (latent attention's r, then d): never two columns alike
        let loop_of = |k: usize| trace.view(terms[k][0]).vars.last().copied().unwrap_or(("", 0));
        let mixed = (1..terms.len()).any(|k| loop_of(k).0 != loop_of(0).0);
        for &(x, y, w, k) in &d.heads {
            let (name, value) = loop_of(k);
            let want = if mixed {
                format!("{name}{value}")
            } else {
                value.to_string()
            };
            let shown = text_at(screen, x, y, w);
            if shown.split_whitespace().last() != Some(want.as_str()) {
                return Err(format!(
                    "term {k}'s header shows {shown:?}, its loop variable is {want}"
                ));
            }
        }
        // each operand's label: its buffer and the offsets its reads used
        for (f, (x, y, text)) in d.labels.iter().skip(1).enumerate().take(terms[0].len()) {
            let shown = text_at(screen, *x, *y, text.chars().count() as u16);
            let offs: Vec<usize> = terms
                .iter()
                .filter_map(|t| t.get(f))
                .map(|&k| trace.events[k].offset as usize)
                .collect();
            let buf = trace.events[terms[0][f]].buf;
            // a factor read from several buffers (latent attention's k_nope then k_pe) is named
            // by them in the order the terms read them
            let mut bufs: Vec<Buf> = Vec::new();
            for k in terms.iter().filter_map(|t| t.get(f)) {
                if bufs.last() != Some(&trace.events[*k].buf) {
                    bufs.push(trace.events[*k].buf);
                }
            }
            if bufs.len() > 1 {
                let names: Vec<&str> = bufs.iter().map(|b| b.name()).collect();
                if shown != names.join("|") && !shown.starts_with(&format!("{}[", names[0])) {
                    return Err(format!("operand {f} is labelled {shown:?}, not {}", names.join("|")));
                }
                continue;
            }
            let inside = shown
                .strip_prefix(&format!("{buf}["))
                .and_then(|r| r.strip_suffix(']'))
                .ok_or_else(|| format!("operand {f} is labelled {shown:?}, not {buf}[…]"))?;
            if !covers(inside, &offs) {
                return Err(format!("operand {buf} is labelled [{inside}], its reads used {offs:?}"));
            }
        }
        Ok(())
    }
}

/// Does `text` (`10..=11`, `2..=10 step 4`, `3, 5, 6`, `3, 5, …, 14`) name exactly `offs`, in
/// order (an elided list only its ends)?
fn covers(text: &str, offs: &[usize]) -> bool {
    let parse = |t: &str| t.trim().parse::<usize>().ok();
    if let Some((a, rest)) = text.split_once("..=") {
        let (b, step) = rest.split_once(" step ").unwrap_or((rest, "1"));
        let (Some(a), Some(b), Some(step)) = (parse(a), parse(b), parse(step)) else {
            return false;
        };
        return (a..=b).step_by(step).eq(offs.iter().copied());
    }
    let parts: Vec<&str> = text.split(", ").collect();
    if text == "…" {
        return true;
    }
    if parts.contains(&"…") {
        let ends = (parse(parts[0]), parts.last().and_then(|p| parse(p)));
        return ends == (offs.first().copied(), offs.last().copied());
    }
    parts.iter().map(|p| parse(p)).eq(offs.iter().map(|&o| Some(o)))
}

/// From the log alone, the terms of the sum event `n` is part of (each term's read events) and
/// the write that ends it: the write is the first write at or after `n` in the innermost loop
/// iteration holding `n` that ends with its own write (in flash's loops, a write of one of
/// [`FLASH_SUMS`] in an iteration holding `n`); its nested iterations' reads are terms.
fn log_terms(trace: &Trace, n: usize) -> Option<(Vec<Vec<usize>>, usize)> {
    let phase = trace.phase_at(n);
    if !phase.sums() {
        return None;
    }
    let w = (n..trace.len()).find(|&k| trace.events[k].op == Op::Write)?;
    let frame_id = trace.events[w].frame;
    let f = trace.frame(frame_id)?;
    if (f.start as usize) > n {
        return None;
    }
    if flash_phase(phase) {
        // flash's iterations go on after their sum (`D_i`'s row then zeroes its `dQ` row), and
        // write what is no sum (the row's `l`, mid-iteration)
        if !FLASH_SUMS.contains(&trace.events[w].buf.name()) {
            return None;
        }
    } else if f.end as usize != w + 1 {
        // the write ends its iteration
        return None;
    }
    // the inner iterations of a sum only read: a loop whose iterations write (a tile load
    // copying q into q_tile) is not a dot product, whatever write ends it
    if (f.start as usize..w).any(|k| trace.events[k].op == Op::Write && trace.events[k].frame != frame_id) {
        return None;
    }
    let mut terms: Vec<(u32, Vec<usize>)> = Vec::new();
    for k in f.start as usize..w {
        let e = trace.events[k];
        if e.op != Op::Read || e.frame == frame_id || e.buf == Buf::BlockTable {
            continue;
        }
        match terms.last_mut() {
            Some(t) if t.0 == e.frame => t.1.push(k),
            _ => terms.push((e.frame, vec![k])),
        }
    }
    Some((terms.into_iter().map(|t| t.1).collect(), w))
}

/// Events to draw: all of a small log, a dense spread over a large one.
fn sample(len: usize) -> Vec<usize> {
    if len <= 700 {
        return (0..len).collect();
    }
    // one event in each stretch of `stride`, at a golden-ratio offset into it: a fixed stride
    // would meet a loop whose iterations are as long (flash's 7-event rows of `D_i`) at the same
    // position every time, and never draw the others
    let stride = len / 700;
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    (0..len / stride)
        .map(|k| k * stride + ((k as f64 * phi).fract() * stride as f64) as usize)
        .collect()
}

/// Up to `most` of `all`, spread evenly over it (all of a short list).
fn spread<T: Copy>(all: &[T], most: usize) -> Vec<T> {
    if all.len() <= most {
        return all.to_vec();
    }
    (0..most).map(|k| all[k * all.len() / most]).collect()
}

/// Every score element of `run`'s kernel shape, `(b, h, i, j)` in order.
fn elements(run: &attn_trace_core::engine::Run) -> Vec<Element> {
    let ksh = kernel_shape(run.shape, run.variant);
    let mut out = Vec::new();
    for b in 0..ksh.b {
        for h in 0..ksh.h {
            for i in 0..ksh.s {
                for j in 0..ksh.t {
                    out.push(Element { b, h, i, j });
                }
            }
        }
    }
    out
}

/// `explain` of a spread of elements of every run, both passes, holds by hand: every chain it
/// prints, recomputed from its printed operands, gives its printed result to the last digit.
fn check_explain(name: &str, traced: &TracedScenario) {
    for run in &traced.runs {
        if run.trace.is_none() {
            continue;
        }
        for e in spread(&elements(run), 24) {
            for pass in [Pass::Forward, Pass::Backward] {
                // an element the run has no walkthrough of (not generated yet, a pass not run)
                let Ok(w) = explain::explain(run, traced.mask.clone(), e, pass) else {
                    continue;
                };
                let text = w.to_string();
                let lines: Vec<&str> = text.lines().collect();
                if let Err(err) = crate::tests::support::chains::check_lines(&lines) {
                    panic!(
                        "{name} {} explain --at b={},h={},i={},j={} --pass {}: {err}\n{text}",
                        run.variant,
                        e.b,
                        e.h,
                        e.i,
                        e.j,
                        pass.name()
                    );
                }
            }
        }
    }
}

/// Compare's notes, for a spread of elements and every phase it compares, hold by hand.
fn check_compare(name: &str, traced: &Arc<TracedScenario>) {
    let mut st = Compare::new(Arc::clone(traced));
    let phases = st.phases();
    let Some(run) = traced.run(st.pair().0) else {
        return;
    };
    if phases.is_empty() {
        return;
    }
    for e in spread(&elements(run), 12) {
        st.set_element(e);
        for &(phase, buf) in &phases {
            let lines: Vec<String> = compare::notes(&st, phase, buf)
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect();
            if let Err(err) = crate::tests::support::chains::check_lines(&lines) {
                panic!("{name} Compare {phase} at {e:?}: {err}\n{lines:#?}");
            }
        }
    }
}

fn check_walk(name: &str, traced: TracedScenario) {
    let traced = Arc::new(traced);
    check_explain(name, &traced);
    check_compare(name, &traced);
    for run in &traced.runs {
        let Some(trace) = &run.trace else { continue };
        let tiles = traced.inputs.as_ref().map_or((1, 1), |i| {
            let t = i.tiles.sizes();
            (t.br, t.bc)
        });
        let checker = Checker {
            traced: &traced,
            variant: run.variant,
            tiles,
            cache: CacheOf::of(&traced),
            name,
        };
        let events = sample(trace.len());
        let mut wide = Terminal::new(TestBackend::new(120, 40)).unwrap();
        let mut small = Terminal::new(TestBackend::new(80, 24)).unwrap();
        for (k, &n) in events.iter().enumerate() {
            // both sizes on a quarter of the events, the wide one on the rest
            let mut terms = vec![&mut wide];
            if k % 4 == 0 {
                terms.push(&mut small);
            }
            for term in terms {
                if let Err(e) = checker.check(n, term) {
                    panic!("{e}");
                }
            }
        }
    }
}

#[test]
fn every_shipped_scenario_shows_the_logs_numbers() {
    let names = [
        "mha_walkthrough",
        "indexing_trace",
        "numeric_baseline",
        "numeric_mha",
        "masked_element",
        "batch_b2",
        "heads_h4",
        "why_sqrt_d",
        "backward_simple",
        "separate_qkv",
        "cross_attention",
        "dropout",
        "gqa",
        "mqa",
        "rope",
        "kv_cache_decode",
        "flash",
        "sliding_window",
        "sinks",
        "window_decode",
        "paged_decode",
        "split_kv",
        "sink_logit",
        "mla",
        "mla_decode",
    ];
    // every scenario file the repository ships is in the list
    let mut files: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".toml").map(String::from))
        .collect();
    files.sort();
    let mut listed: Vec<String> = names.iter().map(ToString::to_string).collect();
    listed.sort();
    assert_eq!(listed, files, "the oracle checks every file in scenarios/");
    for name in names {
        let s = Scenario::shipped(name).unwrap_or_else(|| panic!("{name} is shipped"));
        check_walk(name, TracedScenario::from_scenario(&s));
    }
}

/// How a generated scenario runs its kernels.
#[derive(Clone, Copy, Debug)]
enum Runs {
    /// Whole sequences, forward and backward: mha beside baseline (or gqa).
    Plain,
    /// Token by token from a key/value cache, forward only (`[run].decode`).
    Decode,
    /// Flash beside mha (or gqa), forward and backward, with tiles of `br` query rows and `bc`
    /// key columns.
    Flash { br: usize, bc: usize },
}

/// A small scenario's choices: self- or cross-attention, any mask (0 causal, 1 none, 2 explicit,
/// 3 a sliding window with or without a sink), maybe dropout.
struct Gen<'a> {
    b: usize,
    s: usize,
    t: usize,
    h: usize,
    d: usize,
    mask: u8,
    keep: &'a [bool],
    dropout: bool,
    seed: u64,
    /// `H_kv` for the gqa variant (run beside mha), or 0 for none.
    h_kv: usize,
    /// Rotary positions: 0 none, 1 interleaved, 2 half.
    rope: u8,
    runs: Runs,
}

/// The scenario file of `g`: both passes, or the forward pass of a decode run.
fn scenario_text(g: &Gen) -> String {
    let Gen {
        b,
        s,
        t,
        h,
        d,
        mask,
        keep,
        dropout,
        seed,
        h_kv,
        rope,
        runs,
    } = *g;
    let c = h * d;
    let cross = s != t;
    let decode = matches!(runs, Runs::Decode);
    assert!(!(decode && cross), "a decode run generates one sequence");
    let mut text = format!("title = \"oracle\"\n[shape]\nB = {b}\nT = {t}\nC = {c}\nH = {h}\n");
    if cross {
        text.push_str(&format!("S = {s}\n"));
    }
    if h_kv > 0 {
        text.push_str(&format!("H_kv = {h_kv}\n"));
    }
    text.push_str("[run]\n");
    match (runs, h_kv > 0) {
        (Runs::Flash { .. }, true) => text.push_str("variants = [\"gqa\", \"flash\"]\n"),
        (Runs::Flash { .. }, false) => text.push_str("variants = [\"mha\", \"flash\"]\n"),
        // decoding with each kernel: grouped heads (multi-query among them) beside the others
        (Runs::Decode, true) => text.push_str("variants = [\"gqa\", \"mha\", \"baseline\"]\n"),
        (_, true) => text.push_str("variants = [\"gqa\", \"mha\"]\n"),
        (_, false) => {}
    }
    if decode {
        text.push_str("decode = true\n");
    }
    // rotary positions turn pairs of one sequence's channels
    if !cross && d.is_multiple_of(2) && rope > 0 {
        let pairs = if rope == 1 { "interleaved" } else { "half" };
        text.push_str(&format!("rope = \"{pairs}\"\n"));
    }
    if cross {
        text.push_str("qkv = \"separate\"\n");
    }
    match mask {
        // decoding attends over the positions generated so far: the causal mask, implied
        _ if decode => {}
        0 if !cross => text.push_str("mask = \"causal\"\n"),
        1 => text.push_str("mask = \"none\"\n"),
        // a sliding window of 1..=t keys, with a sink when keep starts with true
        3 if !cross => {
            let (w, sinks) = (keep.len() % t + 1, usize::from(keep[0]));
            text.push_str(&format!("window = {w}\nsinks = {sinks}\n"));
        }
        _ => {
            let rows: Vec<String> = (0..s)
                .map(|i| {
                    // every query sees at least one key (the scenario format requires it)
                    let row: Vec<&str> = (0..t)
                        .map(|j| {
                            if j == i % t || keep[(i * t + j) % keep.len()] {
                                "1"
                            } else {
                                "0"
                            }
                        })
                        .collect();
                    format!("[{}]", row.join(", "))
                })
                .collect();
            text.push_str(&format!("mask = [{}]\n", rows.join(", ")));
        }
    }
    // dropout acts in the plain kernels' training runs only
    if dropout && matches!(runs, Runs::Plain) {
        text.push_str("dropout = 0.25\ndropout_seed = 3\n");
    }
    if let Runs::Flash { br, bc } = runs {
        text.push_str(&format!("[flash]\nbr = {br}\nbc = {bc}\n"));
    }
    text.push_str(&format!("[init]\nseed = {seed}\ndist = \"normal\"\nstd = 0.7\n"));
    text
}

/// Grouped heads by `pick`: none (0), multi-query `H_kv = 1` (1), or `H_kv` the largest proper
/// divisor of `H` (2; 1 when `H` is prime).
fn kv_heads(h: usize, pick: usize) -> usize {
    match pick {
        0 => 0,
        1 => 1,
        _ => (1..h).rev().find(|k| h.is_multiple_of(*k)).unwrap_or(1),
    }
}

/// A tile size for a sequence of `n` that leaves a smaller last tile (`n mod size ≠ 0`), the
/// `pick`-th of those there are; `n` itself (one tile) when none does (`n ≤ 2`).
fn ragged(n: usize, pick: usize) -> usize {
    let sizes: Vec<usize> = (2..n).filter(|&size| !n.is_multiple_of(size)).collect();
    if sizes.is_empty() { n } else { sizes[pick % sizes.len()] }
}

/// A decode or training run on the caches and softmax of today's serving stacks, `kind`: 0 a
/// paged pool whose blocks a seed deals, 1 the cache split into parts and merged, 2 a rolling
/// window cache with sinks, 3 a learned sink logit per head in training, beside flash.
#[allow(clippy::too_many_arguments)]
fn cache_text(
    kind: u8,
    b: usize,
    t: usize,
    h: usize,
    d: usize,
    h_kv: usize,
    (bs, extra): (usize, usize),
    w: usize,
    sinks: usize,
    seed: u64,
) -> String {
    let mut text = format!(
        "title = \"oracle\"\n[shape]\nB = {b}\nT = {t}\nC = {c}\nH = {h}\n",
        c = h * d
    );
    if h_kv > 0 {
        text.push_str(&format!("H_kv = {h_kv}\n"));
    }
    let grouped = if h_kv > 0 { "\"gqa\", " } else { "" };
    match kind {
        0 => text.push_str(&format!(
            "[run]\nvariants = [{grouped}\"mha\"]\ndecode = true\n[paged]\nblock_size = {bs}\nnum_blocks = {nb}\nseed = {seed}\n",
            nb = b * t.div_ceil(bs) + extra
        )),
        1 => text.push_str(&format!(
            "[run]\nvariants = [{grouped}\"mha\"]\ndecode = true\nsplit_kv = {parts}\n",
            parts = (extra + 2).min(t)
        )),
        2 => text.push_str(&format!(
            "[run]\nvariants = [{grouped}\"mha\"]\ndecode = true\nwindow = {w}\nsinks = {sinks}\n",
            w = w.min(t),
            sinks = sinks.min(t)
        )),
        _ => text.push_str(&format!(
            "[run]\nvariants = [{grouped}\"mha\", \"flash\"]\npasses = [\"forward\", \"backward\"]\nwindow = {w}\nsink_logit = true\n[flash]\nbr = {br}\nbc = {bc}\n",
            w = w.min(t),
            br = ragged(t, bs),
            bc = ragged(t, extra)
        )),
    }
    text + &format!("[init]\nseed = {seed}\ndist = \"normal\"\nstd = 0.7\n")
}

/// The oracle's proptest settings: `cases` generated scenarios a run, or `PROPTEST_CASES` of
/// them for a longer soak (`PROPTEST_CASES=500 cargo test --release --lib display_oracle`).
/// Each case is a whole scenario traced and walked, so the default is small; a failure prints
/// its scenario, which goes below as a test of its own.
fn oracle_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..crate::tests::support::proptest_config(cases)
    }
}

#[test]
fn a_softmax_row_whose_p_is_all_but_one_prints_the_digits_its_difference_needs() {
    // CI's flash run, seed 234: with a causal mask and H_kv = 1, row i = 2 of b = 1 puts
    // 0.999999762 on its own key; its dP and Σ_k dP·P agree in 7 digits, and `P × (dP − Σ)`
    // printed them as 0.15155521 − 0.151555151, which a calculator makes 5.9e-8, not 5.96e-8
    let runs = Runs::Flash {
        br: ragged(5, 2),
        bc: ragged(5, 2),
    };
    let h_kv = kv_heads(3, 1);
    check_generated(&Gen {
        b: 2,
        s: 5,
        t: 5,
        h: 3,
        d: 1,
        mask: 0,
        keep: &[false],
        dropout: false,
        seed: 234,
        h_kv,
        rope: 2,
        runs,
    });
}

#[test]
fn a_sum_of_products_that_cancel_keeps_the_digits_f32_left_true() {
    // a soak's MLA decode, seed 31: head 2's absorbed query q_lat[11] is two products of 0.07
    // that cancel to -2.2575e-6, three digits of which f32's rounding made
    let text = latent_text(1, 4, 3, 2, (1, 1), 0, true, 0) + "[init]\nseed = 31\n";
    let sc = Scenario::parse(&text, "<oracle>").unwrap_or_else(|e| panic!("{e}\n{text}"));
    check_walk(&text, TracedScenario::from_scenario(&sc));
}

fn check_generated(g: &Gen) {
    let text = scenario_text(g);
    let sc = Scenario::parse(&text, "<oracle>").unwrap_or_else(|e| panic!("{e}\n{text}"));
    check_walk(&text, TracedScenario::from_scenario(&sc));
}

proptest! {
    #![proptest_config(oracle_config(10))]

    #[test]
    fn generated_scenarios_show_the_logs_numbers(
        b in 1usize..=2,
        t in 1usize..=4,
        s_extra in 0usize..=2,
        cross in any::<bool>(),
        h in 1usize..=4,
        d in 1usize..=2,
        mask in 0u8..=3,
        keep in proptest::collection::vec(any::<bool>(), 1..7),
        dropout in any::<bool>(),
        seed in 0u64..1000,
        (kv_pick, rope) in (0usize..3, 0u8..3),
    ) {
        let s = if cross { (t + s_extra) % 4 + 1 } else { t };
        let h_kv = kv_heads(h, kv_pick);
        check_generated(&Gen { b, s, t, h, d, mask, keep: &keep, dropout, seed, h_kv, rope, runs: Runs::Plain });
    }
}

proptest! {
    #![proptest_config(oracle_config(4))]

    /// Decoding from a key/value cache with gqa over `H_kv = 1` (multi-query) or the largest
    /// proper divisor of `H` key/value heads, beside mha and the baseline, with and without
    /// rotary positions.
    #[test]
    fn generated_decode_runs_show_the_logs_numbers(
        b in 1usize..=2,
        t in 1usize..=5,
        h in 2usize..=4,
        d in 1usize..=2,
        seed in 0u64..1000,
        (kv_pick, rope) in (1usize..3, 0u8..3),
    ) {
        let h_kv = kv_heads(h, kv_pick);
        let runs = Runs::Decode;
        check_generated(&Gen { b, s: t, t, h, d, mask: 0, keep: &[true], dropout: false, seed, h_kv, rope, runs });
    }

    /// Flash beside mha (or gqa) with ragged tiles, forward and backward: self- or
    /// cross-attention, any mask, rotary positions.
    #[test]
    fn generated_flash_runs_show_the_logs_numbers(
        b in 1usize..=2,
        t in 3usize..=5,
        s_extra in 0usize..=2,
        cross in any::<bool>(),
        h in 1usize..=3,
        d in 1usize..=2,
        mask in 0u8..=3,
        keep in proptest::collection::vec(any::<bool>(), 1..7),
        seed in 0u64..1000,
        (kv_pick, rope) in (0usize..3, 0u8..3),
        (br_pick, bc_pick) in (0usize..3, 0usize..3),
    ) {
        let s = if cross { (t + s_extra) % 3 + 3 } else { t };
        let h_kv = kv_heads(h, kv_pick);
        let runs = Runs::Flash { br: ragged(s, br_pick), bc: ragged(t, bc_pick) };
        check_generated(&Gen { b, s, t, h, d, mask, keep: &keep, dropout: false, seed, h_kv, rope, runs });
    }
}

#[test]
fn the_oracle_tables_agree_with_the_docs_worked_offsets() {
    // q_base = 10 (MHA, T=3, H=2, D=2: i=2, h=1), k_base = 6 (j=1, h=1), scores[16] = (h1, i2, j1)
    let sh = Shape::new(1, 3, 4, 2);
    assert_eq!(
        label(&layout("q", Variant::Mha, sh, (1, 1), &CacheOf::default()), 10),
        "b0 i2 h1 d0"
    );
    assert_eq!(
        label(&layout("k", Variant::Mha, sh, (1, 1), &CacheOf::default()), 6),
        "b0 j1 h1 d0"
    );
    assert_eq!(
        label(&layout("scores", Variant::Mha, sh, (1, 1), &CacheOf::default()), 16),
        "b0 h1 i2 j1"
    );
    assert_eq!(
        label(&layout("scores", Variant::Baseline, sh, (1, 1), &CacheOf::default()), 7),
        "b0 i2 j1"
    );
    // GQA, H = 4 over H_kv = 2, D = 2: k_base = ((0*3 + 1)*2 + 1)*2 = 6
    let g = Shape::new(1, 3, 8, 4).with_kv_heads(2);
    assert_eq!(
        label(&layout("k", Variant::Gqa, g, (1, 1), &CacheOf::default()), 6),
        "b0 j1 kv_h1 d0"
    );
    assert_eq!(
        label(&layout("k", Variant::Mha, g, (1, 1), &CacheOf::default()), 6),
        "b0 j0 h3 d0"
    );
    let c = |v: &[(&str, usize)]| v.iter().map(|&(n, x)| (n.to_string(), x)).collect::<Vec<_>>();
    assert_eq!(
        offset(
            &layout("scores", Variant::Mha, sh, (1, 1), &CacheOf::default()),
            &c(&[("h", 1), ("i", 2), ("j", 1)])
        ),
        Some(16)
    );
    assert_eq!(coords("h1d0"), Some(c(&[("h", 1), ("d", 0)])));
    assert_eq!(coords("j12"), Some(c(&[("j", 12)])));
    assert_eq!(coords("kv_h1 d0"), Some(c(&[("kv_h", 1), ("d", 0)])));
    assert_eq!(coords("45"), None);
    let mask = Mask::Causal;
    assert!(mask.hides(0, 1));
}

/// The buffers flash's current step touches, from the log alone: the step is the iteration
/// just inside the innermost tile loop (`i0` or `j0`) holding event `n` (a tile load, the score
/// tile, the online softmax row, a gradient tile, the output tile), and its buffers are every
/// buffer its events read or write. `None` outside flash's tile loops.
fn flash_step_buffers(trace: &Trace, n: usize) -> Option<Vec<Buf>> {
    let mut chain = Vec::new();
    let mut id = trace.events[n].frame;
    while let Some(f) = trace.frame(id) {
        chain.push(f);
        id = f.parent;
    }
    let tile = chain
        .iter()
        .position(|f| matches!(trace.kinds[f.kind as usize].names.first(), Some(&"i0" | &"j0")))?;
    let step = chain.get(tile.checked_sub(1)?)?;
    let mut bufs: Vec<Buf> = Vec::new();
    for e in &trace.events[step.start as usize..step.end as usize] {
        if !bufs.contains(&e.buf) {
            bufs.push(e.buf);
        }
    }
    Some(bufs)
}

/// At 120×40, on every event of the shipped flash scenario's flash run (forward and backward),
/// the memory panel draws a grid for every buffer the current step reads or writes: the tile
/// being computed, its operands, the row statistics, and in a tile load the global buffer the
/// tile is loaded from. At 80×24 the current event's buffer is drawn whenever the panel has
/// room for a grid beside the dot product.
#[test]
fn flash_panel_shows_every_buffer_of_the_current_step() {
    let s = Scenario::shipped("flash").expect("flash is shipped");
    let traced = Arc::new(TracedScenario::from_scenario(&s));
    let run = traced
        .runs
        .iter()
        .find(|r| r.variant == Variant::Flash)
        .expect("the scenario runs flash");
    let trace = run.trace.as_ref().expect("traced");
    let mut steps = 0;
    for n in 0..trace.len() {
        let mut st = Tracer::new(Arc::clone(&traced), Some(Variant::Flash));
        st.cursor = n;
        let theme = Theme::COLOR;
        for (w, h) in [(120, 40), (80, 24)] {
            let area = ratatui::layout::Rect::new(0, 0, w, h);
            let ctx = st.ctx(theme).expect("a context");
            let Some(mem) = tracer::areas(area, &st, &ctx).memory else {
                assert!(w < 120, "the memory panel is on screen at 120×40");
                continue;
            };
            let plan = memory::plan(Block::bordered().inner(mem), &ctx);
            let shown: Vec<Buf> = plan.grids.iter().map(|p| p.buf).collect();
            let ev = trace.events[n];
            let Some(step) = flash_step_buffers(trace, n) else {
                continue;
            };
            let want = if w == 120 {
                steps += 1;
                step
            } else if plan.grids.is_empty() {
                // the dot product fills the panel: it shows the current event's cell
                continue;
            } else {
                vec![ev.buf]
            };
            let missing: Vec<&str> = want.iter().filter(|b| !shown.contains(b)).map(|b| b.name()).collect();
            assert!(
                missing.is_empty(),
                "flash event #{n} ({:?} {}[{}], {}) at {w}×{h}: the panel leaves out {missing:?}; it shows {:?}, unshown {:?}",
                ev.op,
                ev.buf,
                ev.offset,
                trace.phase_at(n),
                shown.iter().map(|b| b.name()).collect::<Vec<_>>(),
                plan.unshown.iter().map(|b| b.name()).collect::<Vec<_>>()
            );
        }
    }
    // every event of flash's forward and backward loop nests is in a step
    let tiled = (0..trace.len())
        .filter(|&n| matches!(trace.phase_at(n), Phase::Flash | Phase::FlashBack))
        .count();
    assert_eq!(steps, tiled, "every event of the flash phases is in a tile loop's step");
    assert!(tiled > 2000, "{tiled} events in the flash phases");
}

/// A multi-head latent attention scenario: its training form (both passes, any of the causal
/// mask, none or a window) or its absorbed decode, with the rotary part turned or not.
#[allow(clippy::too_many_arguments)]
fn latent_text(
    b: usize,
    t: usize,
    h: usize,
    d: usize,
    (r, dr): (usize, usize),
    rope: u8,
    decode: bool,
    mask: u8,
) -> String {
    let mut text = format!(
        "title = \"oracle\"\n[shape]\nB = {b}\nT = {t}\nC = {}\nH = {h}\nkv_rank = {r}\nrope_dim = {dr}\n[run]\nvariants = [\"mla\"]\n",
        h * d
    );
    if decode {
        text.push_str("decode = true\n");
    } else {
        text.push_str(match mask {
            0 => "mask = \"causal\"\n",
            1 => "mask = \"none\"\n",
            _ => "window = 2\nsinks = 1\n",
        });
    }
    // rope turns the DR rotary channels in pairs
    if rope > 0 && dr.is_multiple_of(2) {
        let pairs = if rope == 1 { "interleaved" } else { "half" };
        text.push_str(&format!("rope = \"{pairs}\"\n"));
    }
    text
}

proptest! {
    #![proptest_config(oracle_config(4))]

    /// Decoding from a paged, split or rolling-window cache, and sink logits in training beside
    /// flash, with grouped heads or not: every number on screen is the log's, and every chain
    /// holds by hand.
    #[test]
    fn generated_cache_runs_show_the_logs_numbers(
        kind in 0u8..4,
        b in 1usize..=2,
        t in 2usize..=6,
        h in 1usize..=3,
        d in 1usize..=2,
        kv_pick in 0usize..3,
        blocks in (1usize..=3, 0usize..=3),
        (w, sinks) in (1usize..=4, 0usize..=1),
        seed in 0u64..1000,
    ) {
        let text = cache_text(kind, b, t, h, d, kv_heads(h, kv_pick), blocks, w, sinks, seed);
        let sc = Scenario::parse(&text, "<oracle>").unwrap_or_else(|e| panic!("{e}\n{text}"));
        check_walk(&text, TracedScenario::from_scenario(&sc));
    }

    /// Multi-head latent attention, trained or decoded, with and without rotary positions:
    /// every buffer index on screen is the kernel's loop variable, every number the log's.
    #[test]
    fn generated_latent_runs_show_the_logs_numbers(
        b in 1usize..=2,
        t in 1usize..=4,
        h in 1usize..=3,
        d in 1usize..=2,
        latent in (1usize..=3, 1usize..=4),
        rope in 0u8..3,
        decode in any::<bool>(),
        mask in 0u8..3,
        seed in 0u64..1000,
    ) {
        let text = latent_text(b, t, h, d, latent, rope, decode, mask) + &format!("[init]\nseed = {seed}\n");
        let sc = Scenario::parse(&text, "<oracle>").unwrap_or_else(|e| panic!("{e}\n{text}"));
        check_walk(&text, TracedScenario::from_scenario(&sc));
    }
}
