//! One pass of the reference run, as a learner's kernel must reproduce it: which buffers the
//! pass reads before writing them (what the learner is given), which cells it writes and with
//! what final values (what the learner is graded on), which cells it accumulates into, which
//! cells no result depends on (at masked pairs), which given cells the results do depend on,
//! and how the cells each write reads lie relative to the cell written.
//!
//! All of it is read from the reference's own event log and the registry, so it holds for
//! every variant and option without a table per variant: a buffer is an input of the pass when
//! some cell of it is read before the pass writes it (the backward pass's `probs`, and the
//! zero-initialised gradients it adds into), a result when the pass writes it and never reads
//! it after its last write (`out`, `d_x`, …).
//!
//! A scenario of `[shape] L` layers is run once per layer, each on its own values
//! ([`Scenario::layer`]); every buffer then holds its layers one after another (a cell's offset
//! is `l·size + offset`), and the events are numbered across the layers in order.

mod summary;
mod ties;

use summary::summarise;
use ties::learn_ties;

use attn_trace_core::engine::{self, Passes, Registry, Run};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::scenario::{BYTES_PER_EVENT, Scenario, budget_bytes};
use attn_trace_core::tensor::{Role, Spec};
use attn_trace_core::trace::{Buf, Op, Pass, Trace};
use attn_trace_i18n::tr;
use std::collections::HashMap;

/// No event.
pub const NONE: u32 = u32::MAX;

/// What one pass does to one global buffer of the reference run, over every layer.
#[derive(Clone, Debug)]
pub struct Cells {
    pub buf: Buf,
    /// One layer's spec: its layout is the layout of each layer's cells.
    pub spec: Spec,
    /// The scenario's layers: the buffer holds `layers` copies of the layout, one after another.
    pub layers: usize,
    /// Contents when the pass starts.
    pub start: Vec<f32>,
    /// Contents when the pass ends.
    pub end: Vec<f32>,
    /// Some cell is read before the pass writes it: the learner is given this buffer.
    pub input: bool,
    /// Per cell, the pass's last write of it ([`NONE`] when the pass never writes it).
    pub last_write: Vec<u32>,
    /// Per cell, the pass reads it somewhere.
    pub read: Vec<bool>,
    /// Per cell, the pass writes it more than once with a read of it in between: an
    /// accumulation, whose earlier writes a learner must not lose.
    pub accumulated: Vec<bool>,
    /// Per cell, the pass writes it and loses a write before any read (a masked score written
    /// and then overwritten): such overwrites are the algorithm's, not a learner's mistake.
    pub overwritten: Vec<bool>,
    /// Per cell, no result depends on it: a cell of a score-like buffer (one value per query
    /// and key) at a pair the mask hides (`d_probs`, `d_scores`, `scores` there). Neither
    /// required nor graded.
    pub unneeded: Vec<bool>,
    /// Per cell of a given buffer, the results depend on the value it starts with: some needed
    /// write reads it, through the pass's buffers.
    pub needed: Vec<bool>,
    /// The pass writes the buffer and never reads it after its last write.
    pub result: bool,
}

impl Cells {
    pub fn len(&self) -> usize {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// Cells of one layer.
    pub fn per_layer(&self) -> usize {
        self.spec.layout.len()
    }

    /// The pass writes some cell of this buffer.
    pub fn written(&self) -> bool {
        self.last_write.iter().any(|&w| w != NONE)
    }

    /// `b0 h1 i2 j1` (`l1 b0 h1 i2 j1` with several layers): the logical index of cell `off`.
    pub fn label(&self, off: usize) -> String {
        let n = self.per_layer().max(1);
        let inner = self.spec.layout.label(off % n);
        if self.layers > 1 {
            format!("l{} {inner}", off / n)
        } else {
            inner
        }
    }

    /// The cell's coordinates: its layer, then its layout's, in the order of [`Cells::dims`].
    pub fn coords(&self, off: usize) -> Vec<usize> {
        let n = self.per_layer().max(1);
        let mut c = vec![off / n];
        c.extend(self.spec.layout.index(off % n));
        c
    }

    /// The buffer's dimensions: `l` (the layer), then its layout's.
    pub fn dims(&self) -> Vec<(&'static str, usize)> {
        let mut d = vec![("l", self.layers)];
        d.extend(self.spec.layout.dims.iter().map(|d| (d.name, d.size)));
        d
    }

    /// The data a kernel must read to get its results right: given inputs and weights, but
    /// not what the pass could compute from them (the forward's saved activations a backward
    /// pass is given) nor tables that follow from the scenario's options alone (rotations, a
    /// paged cache's block table), which a kernel may make itself.
    pub fn is_data(&self) -> bool {
        self.input
            && matches!(self.spec.role, Role::Input | Role::Parameter)
            && !matches!(self.buf, Buf::RopeCos | Buf::RopeSin | Buf::BlockTable)
    }
}

/// An event of the reference, in the numbering across layers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    pub op: Op,
    pub buf: Buf,
    /// The cell, layer-major.
    pub offset: usize,
    pub value: f32,
    pub line: u32,
    pub file: &'static str,
    pub layer: usize,
    /// Its number in its layer's log: what `explain`, the tracer's `g #n` and `--mine` take
    /// (they show layer 0).
    pub local: usize,
}

/// A coordinate of the cells a write reads that follows a coordinate of the cell written: for
/// the writes of `scores` the reads of `k` have `j` equal to the score's `j` (and `h` to its
/// `h`); GQA's reads of `k` have `kv_h = h / G`. Learned from the reference's own windows (the
/// reads since its previous write): only what holds at every write is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tie {
    /// The coordinate of the cell read (its index in [`Cells::dims`]) …
    pub read_dim: usize,
    /// … is `map[x]` where `x` is this coordinate of the cell written.
    pub write_dim: usize,
    pub map: Vec<Option<usize>>,
}

/// One pass of the reference run on one input.
#[derive(Debug)]
pub struct Reference {
    pub variant: Variant,
    pub pass: Pass,
    /// Which input: 0 the scenario's own values, `k > 0` [`Scenario::reseeded`]`(k)`.
    pub input: u64,
    /// Layers (`[shape] L`): the pass is run once per layer.
    pub layers: usize,
    /// Layer 0's run, traced for this pass only.
    pub run: Run,
    /// The other layers' runs.
    pub more: Vec<Run>,
    /// Where each layer's events start in the numbering across layers.
    starts: Vec<usize>,
    /// The scenario's mask, for the pairs it hides.
    pub mask: Mask,
    /// Per [`Buf`], the pass's use of each global buffer of the run.
    pub cells: Vec<Option<Cells>>,
    /// Per (buffer written, buffer read) pair, how the cells read follow the cell written.
    ties: HashMap<(Buf, Buf), Vec<Tie>>,
}

impl Reference {
    /// The reference `variant` on input `k` of `scenario`, tracing `pass` only (a backward
    /// pass's forward runs untraced, and its results are the trace's starting contents), once
    /// per layer.
    pub fn new(scenario: &Scenario, variant: Variant, pass: Pass, input: u64) -> Result<Reference, String> {
        let recorded = match pass {
            Pass::Forward => scenario.passes.forward,
            Pass::Backward => scenario.passes.backward,
        };
        if !recorded {
            return Err(tr!(
                "the scenario does not run the {pass} pass; add \"{pass}\" to [run].passes",
                pass = pass.name()
            ));
        }
        if !scenario.variants.contains(&variant) {
            return Err(tr!(
                "the scenario does not run the {variant} variant ([run].variants)",
                variant = variant.name()
            ));
        }
        let layers = scenario.layers.max(1);
        // every layer is held at once: the scenario's budget is for one
        let passes = match pass {
            Pass::Forward => Passes::FORWARD,
            Pass::Backward => Passes {
                forward: false,
                backward: true,
            },
        };
        let events = engine::estimate_events(&scenario.plan(), variant, passes) * layers as u64;
        let budget = budget_bytes() / BYTES_PER_EVENT;
        if events.exceeds(budget.min(u64::from(NONE) - 1)) {
            return Err(tr!(
                "the {layers} layers' traces would record {events} events, more than grading can hold; use fewer layers ([shape].L) or smaller sizes",
                layers,
                events
            ));
        }
        let input_scenario = scenario.reseeded(input);
        let mut runs = Vec::with_capacity(layers);
        for l in 0..layers {
            let run = engine::run_recording(&input_scenario.layer(l).inputs(), variant, pass);
            if run.trace.is_none() {
                return Err(tr!("the reference run recorded nothing").into());
            }
            runs.push(run);
        }
        let mut starts = Vec::with_capacity(layers);
        let mut total = 0;
        for run in &runs {
            starts.push(total);
            total += run.events();
        }
        let mut runs = runs.into_iter();
        let Some(run) = runs.next() else {
            return Err(tr!("the reference run recorded nothing").into());
        };
        let mut r = Reference {
            variant,
            pass,
            input,
            layers,
            run,
            more: runs.collect(),
            starts,
            mask: scenario.mask.clone(),
            cells: Vec::new(),
            ties: HashMap::new(),
        };
        r.cells = summarise(&r);
        r.ties = learn_ties(&r);
        Ok(r)
    }

    /// Layer 0's log.
    pub fn trace(&self) -> &Trace {
        #[allow(clippy::expect_used, reason = "Reference::new only keeps traced runs")]
        self.run.trace.as_ref().expect("a traced run")
    }

    /// Layer `l`'s run.
    pub fn layer_run(&self, l: usize) -> Option<&Run> {
        if l == 0 { Some(&self.run) } else { self.more.get(l - 1) }
    }

    fn layer_trace(&self, l: usize) -> Option<&Trace> {
        self.layer_run(l).and_then(|r| r.trace.as_ref())
    }

    pub fn registry(&self) -> &Registry {
        &self.run.registry
    }

    /// Events of every layer.
    pub fn events(&self) -> usize {
        self.starts.last().copied().unwrap_or(0) + self.layer_trace(self.layers - 1).map_or(0, Trace::len)
    }

    /// Event `n` of the numbering across layers.
    pub fn event(&self, n: usize) -> Option<Event> {
        let layer = self.starts.partition_point(|&s| s <= n).checked_sub(1)?;
        let t = self.layer_trace(layer)?;
        let local = n - self.starts[layer];
        let e = t.events.get(local)?;
        let per = self.get(e.buf).map_or(0, Cells::per_layer);
        Some(Event {
            op: e.op,
            buf: e.buf,
            offset: layer * per + e.offset as usize,
            value: e.value,
            line: u32::from(e.line),
            file: t.file_of(local),
            layer,
            local,
        })
    }

    /// Event `n`'s op, cell (layer-major) and value: [`Reference::event`] without its source.
    pub fn cell_event(&self, n: usize) -> Option<(Op, Buf, usize, f32)> {
        let layer = self.starts.partition_point(|&s| s <= n).checked_sub(1)?;
        let e = self.layer_trace(layer)?.events.get(n - self.starts[layer])?;
        let per = self.registry().get(e.buf).map_or(0, Spec::len);
        Some((e.op, e.buf, layer * per + e.offset as usize, e.value))
    }

    /// Every event in order, as (number across layers, the layer's event, its cell
    /// layer-major), without the source file ([`Reference::event`] has it).
    fn walk(&self) -> impl DoubleEndedIterator<Item = (usize, attn_trace_core::trace::Event, usize)> + '_ {
        let per: Vec<usize> = Buf::ALL
            .iter()
            .map(|&b| self.registry().get(b).map_or(0, Spec::len))
            .collect();
        (0..self.layers).flat_map(move |l| {
            let start = self.starts.get(l).copied().unwrap_or(0);
            let per = per.clone();
            self.layer_trace(l)
                .map_or(&[][..], |t| t.events.as_slice())
                .iter()
                .enumerate()
                .map(move |(k, e)| (start + k, *e, l * per[e.buf as usize] + e.offset as usize))
        })
    }

    pub fn get(&self, buf: Buf) -> Option<&Cells> {
        self.cells.get(buf as usize).and_then(Option::as_ref)
    }

    /// The global buffers of the run, in [`Buf`] order.
    pub fn iter(&self) -> impl Iterator<Item = &Cells> {
        self.cells.iter().flatten()
    }

    /// The buffers the learner is given, in [`Buf`] order.
    pub fn inputs(&self) -> impl Iterator<Item = &Cells> {
        self.iter().filter(|c| c.input)
    }

    /// The buffers the pass ends with: what a learner's kernel must write.
    pub fn results(&self) -> impl Iterator<Item = &Cells> {
        self.iter().filter(|c| c.result)
    }

    /// How the cells of `read` that the writes of `written` read follow the cell written.
    pub fn ties(&self, written: Buf, read: Buf) -> Option<&[Tie]> {
        self.ties.get(&(written, read)).map(Vec::as_slice)
    }

    /// The reads of the reference's writes of cell `off` of `buf` (the reads since each write's
    /// previous write), without the cell itself: event numbers, in order.
    pub fn reads_for(&self, buf: Buf, off: usize) -> Vec<usize> {
        let Some(c) = self.get(buf) else { return Vec::new() };
        let per = c.per_layer().max(1);
        let (layer, local) = (off / per, off % per);
        let (Some(t), Some(&start)) = (self.layer_trace(layer), self.starts.get(layer)) else {
            return Vec::new();
        };
        let Ok(local32) = u32::try_from(local) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &w in t.index.writes(buf, local) {
            let w = w as usize;
            let mut k = w;
            while k > 0 && t.events[k - 1].op == Op::Read {
                k -= 1;
                let e = t.events[k];
                if !(e.buf == buf && e.offset == local32) {
                    out.push(start + k);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Does the mask hide the pair of cell `off` of `buf` (a buffer of one value per query and
    /// key)? `Some(note)` says how, in plain words.
    pub fn hidden(&self, buf: Buf, off: usize) -> Option<String> {
        let c = self.get(buf)?;
        if !c.spec.layout.is_pairs() {
            return None;
        }
        let idx = c.spec.layout.index(off % c.per_layer().max(1));
        let (i, j) = (idx[idx.len() - 2], idx[idx.len() - 1]);
        if !self.mask.hides(i, j) {
            return None;
        }
        Some(match self.mask {
            Mask::Causal => tr!("hidden: j > i").to_string(),
            Mask::Window { .. } if j > i => tr!("hidden: j > i").to_string(),
            Mask::Window { w, .. } => tr!("hidden: key {j} has left query {i}'s window of {w}", j, i, w),
            _ => tr!("hidden by the mask").to_string(),
        })
    }

    /// Which of q, k and v a column of the fused projection (`qkv`, `d_qkv`, `w_qkv`, `b_qkv`
    /// and their gradients) belongs to, and its head and channel: `k h1 d0`.
    pub fn fused_column(&self, buf: Buf, off: usize) -> Option<String> {
        let c = self.get(buf)?;
        let col_dim = match buf {
            Buf::Qkv | Buf::DQkv => "c",
            Buf::WQkv | Buf::DWQkv | Buf::BQkv | Buf::DBQkv => "o",
            _ => return None,
        };
        let k = c.spec.layout.position(col_dim)?;
        let col = c.spec.layout.index(off % c.per_layer().max(1))[k];
        let sh = self.run.shape;
        let (cc, d) = (sh.c, sh.d().max(1));
        let kv = sh.h_kv * d;
        let (part, ch) = if col < cc {
            ("q", col)
        } else if col < cc + kv {
            ("k", col - cc)
        } else {
            ("v", col - cc - kv)
        };
        Some(format!("{part} h{} d{}", ch / d, ch % d))
    }

    /// A cell by its logical index: `q[b0 i2 h1 d0]`.
    pub fn cell_label(&self, buf: Buf, off: usize) -> String {
        let label = self.get(buf).map_or_else(|| off.to_string(), |c| c.label(off));
        format!("{}[{label}]", buf.name())
    }

    /// What a cell is besides its index, in plain words: the fused column (`k h1 d0`), the
    /// pair the mask hides (`hidden: j > i`).
    pub fn notes(&self, buf: Buf, off: usize) -> Option<String> {
        let notes: Vec<String> = [self.fused_column(buf, off), self.hidden(buf, off)]
            .into_iter()
            .flatten()
            .collect();
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// A cell as a report names it: `q[b0 i2 h1 d0]`, and its notes: `qkv[b0 i1 c5] (k h0 d1)`.
    pub fn describe(&self, buf: Buf, off: usize) -> String {
        match self.notes(buf, off) {
            Some(n) => format!("{} ({n})", self.cell_label(buf, off)),
            None => self.cell_label(buf, off),
        }
    }
}
