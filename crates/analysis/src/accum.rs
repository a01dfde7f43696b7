//! The one answer to "which sum is event `n` accumulating, from which reads, into which old
//! value, with which scale". `explain`, the dot strip, the equation panels (plain and flash) and
//! the display oracle all ask it here, so they cannot disagree.
//!
//! A sum of products in the log is one loop iteration (the *summing* iteration: the `j` of the
//! scores, the `d` of the weighted sum, the `o` of a linear layer, flash's `d` or `jj`) that ends
//! with a write made in that iteration itself. Each iteration nested in it reads the factors of
//! one product term (a paged cache's block table, read to find a factor, is not one). Reads made
//! in the summing iteration itself are what the sum starts from (a bias, flash's `acc_old`) or,
//! right before the write of the same cell, the old value of a `+=` (`rec.add` logs a read of
//! the old value, then the write).
//!
//! What the kernel then makes of the sum is a fact of the pass and its target, declared once in
//! `finish_of`: stored as is, scaled by `1/√D` (or `1/√C` in the baseline), or scaled and
//! added to the old value (`d_k[k_base + d] += s · scale`).

use crate::hand::{Calc, Digits, Expr, exp, inv_sqrt, v};
use attn_trace_core::kernels::{Variant, names};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::{Buf, MASKED, NO_FRAME, Op, Phase, Trace};

/// Iterations longer than this are not analysed as a sum (a huge reduction stays cheap).
const SCAN_LIMIT: usize = 50_000;

/// Events scanned ahead of the cursor for the write that ends a flash sum: its iterations are
/// short.
const FLASH_LOOKAHEAD: usize = 4096;

/// The buffers whose writes end a sum of products in flash's loops (the others are tile loads,
/// the online softmax's statistics and write-backs).
pub const FLASH_SUMS: [Buf; 7] = [
    Buf::STile,
    Buf::Acc,
    Buf::Delta,
    Buf::DVTile,
    Buf::DSTile,
    Buf::DQ,
    Buf::DKTile,
];

fn flash_phase(phase: Phase) -> bool {
    matches!(phase, Phase::Flash | Phase::FlashDelta | Phase::FlashBack)
}

/// One product term of a sum: the reads of one nested iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    /// The loop variables that tell the terms apart, as the kernel names them: `[("d", 1)]`,
    /// or `[("bb", 1), ("i", 0)]` when the sum runs over two loops.
    pub vars: Vec<(&'static str, usize)>,
    /// Its read events, one per factor, in order.
    pub reads: Vec<usize>,
}

/// What the kernel does with the finished sum `Σ` before (or as) it writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// `target = start + Σ` (the kernel's `s` starts from a bias, or from 0).
    Plain,
    /// `target = old + Σ`: a `+=` (`rec.add`) into the written cell.
    Add,
    /// `target = Σ × scale`.
    Scaled,
    /// `target = old + Σ × scale`: a scaled `+=`.
    AddScaled,
    /// `target = P × (Σ − D_i)`: flash's `dS`, whose product term is `dP`.
    FlashDs,
    /// `target = e^(Σ × scale − lse)`: flash backward's recomputed probability.
    FlashP,
    /// `target = e^(m_old − m_new) · acc_old + Σ`: flash's rescaled accumulator.
    Rescaled,
    /// `target = −Σ`: the sink logits' gradient, `d_sink[h] = −Σ_{b,i} P_sink · D`.
    Negated,
}

/// What the kernel of `phase` does with a sum it writes to `target`, as far as the pass decides
/// it: the one table of where the scale is applied. Whether the write adds into the old value
/// (`rec.add`, a read of the cell right before its write) the log says; see
/// [`Accumulation::at`].
pub(crate) fn finish_of(phase: Phase, target: Buf) -> Finish {
    match (phase, target) {
        (Phase::Scores | Phase::DecodeScores, Buf::Scores) => Finish::Scaled,
        (Phase::ScoresBack, Buf::DQ | Buf::DK) => Finish::Scaled,
        (Phase::Flash, Buf::STile) => Finish::Scaled,
        (Phase::Flash, Buf::Acc) => Finish::Rescaled,
        (Phase::FlashBack, Buf::STile) => Finish::FlashP,
        (Phase::FlashBack, Buf::DSTile) => Finish::FlashDs,
        (Phase::FlashBack, Buf::DQ) => Finish::Scaled,
        // dk_tile is read before its sum and written as a + s·scale
        (Phase::FlashBack, Buf::DKTile) => Finish::AddScaled,
        (Phase::SinkBack, Buf::DSink) => Finish::Negated,
        _ => Finish::Plain,
    }
}

/// The scale of the scores, `1/√width`: the head's channels `D`, or `C` in the baseline's
/// single head.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// `"D"` or `"C"`.
    pub symbol: &'static str,
    pub width: usize,
    /// `1/√width` as the kernels compute it.
    pub value: f32,
}

impl Scale {
    /// The scale of a traced run: [`Scale::of`] with the `DR` its kernel recorded.
    pub fn in_trace(trace: &Trace, variant: Variant, shape: Shape) -> Scale {
        Scale::of(variant, shape, trace.constant("DR").unwrap_or(0))
    }

    /// `rope_dim` is multi-head latent attention's `DR` (0 in the other variants), which its
    /// kernels record among the trace's constants ([`Scale::in_trace`]).
    pub fn of(variant: Variant, shape: Shape, rope_dim: usize) -> Scale {
        // the width the variant's dot product sums: a latent attention query head is
        // [q_nope | q_pe], D + DR wide
        let w = variant.desc().width;
        let width = w.value(shape, rope_dim);
        Scale {
            symbol: w.symbol(),
            width,
            value: 1.0 / (width as f32).sqrt(),
        }
    }

    /// The scale as a chain prints it, exactly: `1/√3` (a calculator's `1/√3`, not `0.5774`).
    pub fn written(&self) -> String {
        format!("1/√{}", self.width)
    }

    /// The scale as a chain computes it: [`Scale::written`]'s exact value.
    pub fn expr(&self) -> Expr {
        inv_sqrt(self.width)
    }
}

/// `Π_f` of term `k`'s factors as the kernel multiplied them: operands the factors.
pub fn product_calc(trace: &Trace, reads: &[usize]) -> Calc {
    let vals: Vec<f32> = reads.iter().map(|&r| trace.events[r].value).collect();
    let form = (0..vals.len())
        .map(v)
        .reduce(|a, b| a * b)
        .unwrap_or(crate::hand::lit(1.0));
    let result = vals.iter().product();
    Calc::new(vals, form, result)
}

/// A term's factors as the equation panels print them: their cells named (`q[8]·k[4]`), their
/// values (`1.0000 × 0.5000`, in `digits`: `Exact` or `Four`), and, once `finished` (every
/// factor read, and the product not an answer still asked for), the product with the digits
/// that make the chain hold by hand.
pub fn term_factors(
    trace: &Trace,
    reads: &[usize],
    finished: bool,
    digits: Digits,
) -> (String, String, Option<String>) {
    let names: Vec<String> = reads
        .iter()
        .map(|&k| format!("{}[{}]", trace.events[k].buf, trace.events[k].offset))
        .collect();
    if !finished {
        let plain = |x: f32| match digits {
            Digits::Exact => crate::format::exact(x),
            _ => crate::format::four(x),
        };
        let values: Vec<String> = reads.iter().map(|&k| plain(trace.events[k].value)).collect();
        return (names.join("·"), values.join(" × "), None);
    }
    let f = product_calc(trace, reads).fit(digits);
    (names.join("·"), f.vals.join(" × "), Some(f.result))
}

/// A sum of products the log is accumulating around one event.
#[derive(Clone, Debug, PartialEq)]
pub struct Accumulation {
    /// The summing iteration's frame id.
    pub frame: u32,
    pub terms: Vec<Term>,
    /// Reads of the summing iteration itself, in order: what the sum starts from (a bias,
    /// flash's `acc_old`, `dS`'s `P`) and the old value of a `+=`.
    pub inits: Vec<usize>,
    /// The event that writes the sum.
    pub write: usize,
    /// The event asked about.
    pub cursor: usize,
    /// What the kernel makes of the sum at the write.
    pub finish: Finish,
}

impl Accumulation {
    /// The buffers factor `f` of the terms reads, in the order the terms read them, each run of
    /// one buffer once: `[k_nope, k_pe]` for latent attention's scores, one buffer elsewhere.
    pub fn factor_bufs(&self, trace: &Trace, f: usize) -> Vec<Buf> {
        let mut bufs: Vec<Buf> = Vec::new();
        for k in self.terms.iter().filter_map(|t| t.reads.get(f)) {
            if bufs.last() != Some(&trace.events[*k].buf) {
                bufs.push(trace.events[*k].buf);
            }
        }
        bufs
    }

    /// The cell factor `f` of each term reads, as (buffer, offset), in the order of the terms.
    pub fn factor_reads(&self, trace: &Trace, f: usize) -> Vec<(Buf, usize)> {
        self.terms
            .iter()
            .filter_map(|t| t.reads.get(f))
            .map(|&k| (trace.events[k].buf, trace.events[k].offset as usize))
            .collect()
    }

    /// The sum event `n` takes part in, if any. Outside flash: the innermost of the (up to
    /// three) iterations around `n` whose last event is a write of its own. In flash's loops,
    /// whose iterations also load tiles: the first write at or after `n`, made in an iteration
    /// around `n`, to one of [`FLASH_SUMS`].
    pub fn at(trace: &Trace, n: usize) -> Option<Accumulation> {
        let phase = trace.phase_at(n);
        if !phase.sums() {
            return None;
        }
        let (frame, write) = if flash_phase(phase) {
            let w = (n..trace.len().min(n + FLASH_LOOKAHEAD)).find(|&k| trace.events[k].op == Op::Write)?;
            let e = trace.events[w];
            let f = trace.frame(e.frame)?;
            if !FLASH_SUMS.contains(&e.buf) || n < f.start as usize {
                return None;
            }
            (e.frame, w)
        } else {
            let mut id = trace.events.get(n)?.frame;
            let mut found = None;
            for _ in 0..3 {
                let Some(f) = trace.frame(id) else { break };
                let last = (f.end as usize)
                    .checked_sub(1)
                    .and_then(|k| trace.events.get(k).map(|e| (k, e)));
                if let Some((k, e)) = last
                    && f.end > f.start
                    && e.frame == id
                    && e.op == Op::Write
                {
                    found = Some((id, k));
                    break;
                }
                id = f.parent;
            }
            found?
        };
        // a sum's inner iterations only read: one that writes (a tile load's copy, an update
        // added straight into memory) makes the loop something other than a dot product
        let start = trace.frame(frame)?.start as usize;
        if (start..write).any(|k| trace.events[k].op == Op::Write) {
            return None;
        }
        Self::of_write(trace, frame, write, n)
    }

    /// The sum written by event `write` (the last write of the iteration `frame`), seen from
    /// event `cursor`.
    fn of_write(trace: &Trace, frame: u32, write: usize, cursor: usize) -> Option<Accumulation> {
        let f = trace.frame(frame)?;
        let start = f.start as usize;
        if write + 1 - start > SCAN_LIMIT {
            return None;
        }
        let mut terms: Vec<Term> = Vec::new();
        let mut inits = Vec::new();
        let mut term_frame = NO_FRAME;
        for k in start..write {
            let e = trace.events[k];
            // a paged cache's block table says where a factor is, it is not one
            if e.op != Op::Read || e.buf == Buf::BlockTable {
                continue;
            }
            if e.frame == frame {
                inits.push(k);
                continue;
            }
            match terms.last_mut() {
                Some(t) if term_frame == e.frame => t.reads.push(k),
                _ => {
                    term_frame = e.frame;
                    // the loop variables from just inside the summing iteration down to the read's
                    let mut vars = Vec::new();
                    let mut id = e.frame;
                    while id != frame {
                        let g = trace.frame(id)?;
                        vars.push((trace.kinds[g.kind as usize].names[0], g.vals[0] as usize));
                        id = g.parent;
                    }
                    vars.reverse();
                    terms.push(Term { vars, reads: vec![k] });
                }
            }
        }
        if terms.is_empty() {
            return None;
        }
        let target = trace.events[write];
        // `rec.add`: the written cell read right before the write, after every term
        let adds = write > start && inits.last() == Some(&(write - 1)) && {
            let old = trace.events[write - 1];
            (old.buf, old.offset) == (target.buf, target.offset)
        };
        let finish = match (finish_of(trace.phase_at(write), target.buf), adds) {
            (Finish::Plain, true) => Finish::Add,
            (Finish::Scaled, true) => Finish::AddScaled,
            (finish, _) => finish,
        };
        Some(Accumulation {
            frame,
            terms,
            inits,
            write,
            cursor,
            finish,
        })
    }

    /// The term the cursor reads, else the last one it has finished (none before the first).
    pub fn current(&self) -> Option<usize> {
        let n = self.cursor;
        self.terms
            .iter()
            .position(|t| t.reads.contains(&n))
            .or_else(|| self.terms.iter().rposition(|t| t.reads.last().is_some_and(|&r| r < n)))
    }

    /// Has the cursor read every factor of term `k`?
    pub fn finished(&self, k: usize) -> bool {
        self.terms[k].reads.last().is_some_and(|&r| r <= self.cursor)
    }

    /// Terms whose every factor the cursor has read.
    pub fn done(&self) -> usize {
        (0..self.terms.len()).filter(|&k| self.finished(k)).count()
    }

    /// The cursor is on a factor of a term whose next factor is still to come.
    pub fn waiting(&self) -> bool {
        self.current().is_some_and(|k| !self.finished(k))
    }

    /// The product of term `k`'s factors, as the kernel multiplied them (in f32, in order).
    pub fn product(&self, trace: &Trace, k: usize) -> f32 {
        self.terms[k].reads.iter().map(|&r| trace.events[r].value).product()
    }

    /// What the dot strip shows at term `k`: its factor `f` (the value that read got), or with
    /// `None` the term's product.
    pub fn shown(&self, trace: &Trace, k: usize, f: Option<usize>) -> Option<f32> {
        let term = self.terms.get(k)?;
        match f {
            Some(f) => term.reads.get(f).map(|&r| trace.events[r].value),
            None => Some(self.product(trace, k)),
        }
    }

    /// The cell factor `f` of term `k` reads (what a click on it selects).
    pub fn factor_cell(&self, trace: &Trace, k: usize, f: usize) -> Option<(Buf, usize)> {
        let e = trace.events[*self.terms.get(k)?.reads.get(f)?];
        Some((e.buf, e.offset as usize))
    }

    /// `Σ` of the products the cursor has finished, added in the kernel's order from 0: what the
    /// kernel's running `s` holds (before any start value, scale or old value).
    pub fn sigma(&self, trace: &Trace) -> f32 {
        self.sum_from(trace, 0.0)
    }

    /// `from` plus the finished products, added one by one in the kernel's order.
    fn sum_from(&self, trace: &Trace, from: f32) -> f32 {
        (0..self.terms.len())
            .filter(|&k| self.finished(k))
            .fold(from, |s, k| s + self.product(trace, k))
    }

    /// The read of the old value of a `+=`: the written cell read in the summing iteration.
    pub fn old(&self, trace: &Trace) -> Option<usize> {
        let w = trace.events[self.write];
        self.inits
            .iter()
            .copied()
            .find(|&k| trace.events[k].buf == w.buf && trace.events[k].offset == w.offset)
    }

    /// The read the sum starts from (a bias; flash's `acc_old`, `dv_tile_old`), once the cursor
    /// has read it: a read of the summing iteration before its first term, where the kernel's
    /// `s` starts from it.
    pub fn start(&self) -> Option<usize> {
        self.start_read().filter(|&k| k <= self.cursor)
    }

    /// The read the sum starts from, whether or not the cursor has reached it.
    pub fn start_read(&self) -> Option<usize> {
        if self.finish != Finish::Plain {
            return None;
        }
        let first = self.terms.first()?.reads.first().copied()?;
        self.inits.iter().copied().find(|&k| k < first)
    }

    /// The sum the cursor has seen so far, as the kernel holds it: the start value (if read)
    /// plus the finished products, in the kernel's order.
    pub fn running(&self, trace: &Trace) -> f32 {
        self.sum_from(trace, self.start().map_or(0.0, |k| trace.events[k].value))
    }

    /// The written value's arithmetic as the kernel does it, once every term is read: the
    /// chain `old + Σ × scale = new` (or `Σ × scale = new`, `start + Σ = new`; flash's
    /// `e^(m_old − m_new)·acc_old + Σ`, `e^(Σ × scale − lse)`, `P × (Σ − D_i)`) with the log's
    /// numbers. `None` before the write, and for a masked score (the sum is discarded; see
    /// [`Accumulation::masked`]).
    pub fn chain(&self, trace: &Trace, scale: Scale) -> Option<Chain> {
        if self.cursor < self.write || self.masked(trace) {
            return None;
        }
        self.will(trace, scale)
    }

    /// The chain the write will make, from the log's numbers (the write is in the log even
    /// when the cursor has not reached it); `None` for a masked score.
    pub fn will(&self, trace: &Trace, scale: Scale) -> Option<Chain> {
        if self.masked(trace) {
            return None;
        }
        let chain = Chain {
            old: None,
            start: None,
            sigma: (0..self.terms.len()).fold(0.0, |s, k| s + self.product(trace, k)),
            scale: None,
            negated: false,
            lse: None,
            ds: None,
            rescale: None,
            new: trace.events[self.write].value,
        };
        // flash's row reads its `lse` or `D_i` once, in the `ii` iteration around the sum
        let row_read = |buf: Buf| {
            let (_, f) = crate::scope::iteration(trace, self.write, names::II)?;
            crate::scope::read_in(trace, f, self.write, buf).map(|k| trace.events[k].value)
        };
        match self.finish {
            Finish::Plain => Some(Chain {
                start: self.start_read().map(|k| trace.events[k].value),
                ..chain
            }),
            Finish::Scaled => Some(Chain {
                scale: Some(scale),
                ..chain
            }),
            Finish::Add => Some(Chain {
                old: Some(trace.events[self.old(trace)?].value),
                ..chain
            }),
            Finish::AddScaled => Some(Chain {
                old: Some(trace.events[self.old(trace)?].value),
                scale: Some(scale),
                ..chain
            }),
            Finish::Negated => Some(Chain { negated: true, ..chain }),
            Finish::FlashP => Some(Chain {
                scale: Some(scale),
                lse: Some(row_read(Buf::Lse)?),
                ..chain
            }),
            Finish::FlashDs => Some(Chain {
                ds: Some((trace.events[*self.inits.last()?].value, row_read(Buf::Delta)?)),
                ..chain
            }),
            Finish::Rescaled => {
                let row = crate::online_softmax::RowUpdate::at(trace, self.write)?;
                Some(Chain {
                    old: Some(trace.events[*self.inits.first()?].value),
                    rescale: Some(row.maxima(trace)),
                    ..chain
                })
            }
        }
    }

    /// A score the mask hides: the kernel computed the dot product and wrote `−1e9` over it.
    pub fn masked(&self, trace: &Trace) -> bool {
        self.finish == Finish::Scaled && trace.events[self.write].value == MASKED
    }
}

/// The arithmetic of one accumulated write, with the log's numbers: `old + Σ × scale = new`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chain {
    /// The old value a `+=` adds to (flash's `acc_old`, which the rescale multiplies).
    pub old: Option<f32>,
    /// What the sum started from (a bias).
    pub start: Option<f32>,
    /// `Σ` of the products alone, added from 0.
    pub sigma: f32,
    pub scale: Option<Scale>,
    /// The sum is written negated (`d_sink = −Σ`).
    pub negated: bool,
    /// Flash backward's `P = e^(Σ × scale − lse)`: the row's `lse`.
    pub lse: Option<f32>,
    /// Flash's `dS = P × (Σ − D_i)`: `P` and the row's `D_i` (`Σ` is `dP`).
    pub ds: Option<(f32, f32)>,
    /// Flash's `acc_new = e^(m_old − m_new)·acc_old + Σ`: the row's `m_old` and `m_new`.
    pub rescale: Option<(f32, f32)>,
    /// The value written.
    pub new: f32,
}

impl Chain {
    /// The chain's arithmetic for a reader to redo, its operands in the order the chain is
    /// written: `[σ]` (`Σ × 1/√D`, `−Σ`, a plain `Σ`), `[start, σ]`, `[old, σ]` (a `+=`, scaled
    /// or not), `[σ, lse]` (`e^(Σ × 1/√D − lse)`), `[P, σ, D_i]` (`P × (Σ − D_i)`),
    /// `[m_old, m_new, acc_old, σ]` (`e^(m_old − m_new)·acc_old + Σ`).
    pub fn calc(&self) -> Calc {
        let scaled = |x: Expr| match self.scale {
            Some(sc) => x * inv_sqrt(sc.width),
            None => x,
        };
        let (vals, form) = if let Some((m_old, m_new)) = self.rescale {
            let old = self.old.unwrap_or(0.0);
            (vec![m_old, m_new, old, self.sigma], exp(v(0) - v(1)) * v(2) + v(3))
        } else if let Some((p, d_i)) = self.ds {
            (vec![p, self.sigma, d_i], v(0) * (v(1) - v(2)))
        } else if let Some(lse) = self.lse {
            (vec![self.sigma, lse], exp(scaled(v(0)) - v(1)))
        } else if self.negated {
            (vec![self.sigma], -v(0))
        } else if let Some(old) = self.old {
            (vec![old, self.sigma], v(0) + scaled(v(1)))
        } else if let Some(start) = self.start {
            (vec![start, self.sigma], v(0) + v(1))
        } else {
            (vec![self.sigma], scaled(v(0)))
        };
        Calc::new(vals, form, self.new)
    }
}
