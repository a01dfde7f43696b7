//! The attention map of a trained model on a prompt: for each layer and head, the T×T matrix of
//! attention probabilities as a heat grid with the prompt's bytes on both axes, so patterns
//! (previous byte, copy, induction) show at a glance. Selecting a cell opens the tracer on that
//! layer at the event that wrote the probability — the final write of `probs[off]`, the
//! normalisation — and `e` exports the layer's attention as a scenario file.

mod render;

pub(crate) use render::render;
use render::{grid_areas, inner};

use super::tracer::Tracer;
use super::train::worker::printable;
use crate::tui::traced_scenario::TracedScenario;
use crate::tui::widgets::heatgrid::{self};
use attn_trace_core::engine::{self, Passes};
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::{Focus, Scenario};
use attn_trace_core::trace::{Buf, Pass};
use attn_trace_i18n::{msg, tr};
use attn_trace_model::Origin;
use attn_trace_model::{AttentionCapture, TinyGpt};
use crossterm::event::{KeyCode, KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use std::path::PathBuf;
use std::sync::Arc;

/// Most events one traced layer may record (about 40 bytes each, the size of trace the TUI
/// bench measures): a longer prompt is refused with the length that fits, so opening the
/// tracer stays quick and its memory under half a gigabyte.
pub(crate) const MAX_TRACE_EVENTS: u64 = 10_000_000;

#[derive(Debug)]
pub(crate) struct AttnMap {
    pub model: Arc<TinyGpt>,
    pub origin: Origin,
    pub prompt: Vec<u8>,
    /// Every layer's attention inputs on the prompt.
    pub captures: Vec<AttentionCapture>,
    /// Every layer's probabilities `[heads, T, T]` (B = 1).
    pub probs: Vec<Vec<f32>>,
    pub layer: usize,
    pub head: usize,
    /// The selected cell: query `i`, key `j`.
    pub i: usize,
    pub j: usize,
    /// One line of feedback (export path, errors).
    pub message: Option<String>,
    /// The last layer traced, kept so that going back and forth does not trace it again.
    traced: Option<(usize, Arc<TracedScenario>)>,
    /// The layer of the tracer opened from here, for `e` in the tracer.
    pub traced_layer: Option<usize>,
}

/// What the app should do after a key or click.
#[derive(Debug)]
pub(crate) enum Outcome {
    Stay,
    Back,
    Help,
    Trace(Box<Tracer>),
}

/// The keys of this screen, for its `?` popup.
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("← → ↑ ↓", msg!("select a cell: query i (row), key j (column)")),
    ("Tab / Shift+Tab", msg!("next / previous head")),
    ("] / [", msg!("next / previous layer")),
    (
        "Enter, click",
        msg!("open the tracer at the event that wrote this probability"),
    ),
    ("t", msg!("open the tracer on this layer from its first event")),
    ("e", msg!("export this layer on this prompt as a scenario TOML")),
    ("Esc / q", msg!("back to the prompt")),
];

impl AttnMap {
    /// Runs `prompt` through the model and captures every layer's attention; opens on `layer`,
    /// at the last query and the key it attends to most.
    pub(crate) fn new(model: Arc<TinyGpt>, origin: Origin, prompt: &[u8], layer: usize) -> Result<AttnMap, String> {
        let cfg = model.config;
        if prompt.is_empty() {
            return Err(tr!("the prompt is empty: type at least one byte").into());
        }
        if prompt.len() > cfg.seq_len {
            return Err(tr!(
                "the prompt has {n} bytes but the model reads at most {max} (its seq_len): shorten it",
                n = prompt.len(),
                max = cfg.seq_len
            ));
        }
        let captures = (0..cfg.n_layers)
            .map(|l| model.layer_attention_inputs(prompt, l).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        // the trace budget: the same for every layer, so check it once
        let events = engine::estimate_events(&captures[0].inputs.plan(), captures[0].variant, Passes::BOTH);
        if events.exceeds(MAX_TRACE_EVENTS) {
            let fits = (1..prompt.len())
                .rev()
                .find(|&t| {
                    let plan = engine::Plan {
                        shape: cfg.shape(1, t),
                        ..captures[0].inputs.plan()
                    };
                    !engine::estimate_events(&plan, captures[0].variant, Passes::BOTH).exceeds(MAX_TRACE_EVENTS)
                })
                .unwrap_or(1);
            return Err(tr!(
                "tracing this prompt would record {events} events, over the TUI's {max}: \
                 with C = {c} prompts up to {fits} bytes fit",
                events,
                max = MAX_TRACE_EVENTS,
                c = cfg.d_model,
                fits
            ));
        }
        let probs: Vec<Vec<f32>> = captures
            .iter()
            .map(|cap| engine::run(&cap.inputs, cap.variant, Passes::FORWARD, false).tensors[Buf::Probs].to_vec())
            .collect();
        let mut map = AttnMap {
            model,
            origin,
            prompt: prompt.to_vec(),
            captures,
            probs,
            layer: layer.min(cfg.n_layers - 1),
            head: 0,
            i: prompt.len() - 1,
            j: 0,
            message: None,
            traced: None,
            traced_layer: None,
        };
        map.j = map.strongest_key(map.i);
        Ok(map)
    }

    pub(crate) fn t(&self) -> usize {
        self.prompt.len()
    }

    /// Heads the layer's kernel has: 1 for the baseline, H for MHA.
    pub(crate) fn heads(&self) -> usize {
        self.variant().heads(self.model.config.n_heads)
    }

    pub(crate) fn variant(&self) -> Variant {
        self.captures[self.layer].variant
    }

    /// Flat offset of `(head, i, j)` in the probabilities `[B=1, heads, T, T]` (the baseline's
    /// `[B, T, T]` is the same with one head).
    pub(crate) fn offset(&self, h: usize, i: usize, j: usize) -> usize {
        let t = self.t();
        (h * t + i) * t + j
    }

    /// The probability in the selected layer and head.
    pub(crate) fn prob(&self, h: usize, i: usize, j: usize) -> f32 {
        self.probs[self.layer].get(self.offset(h, i, j)).copied().unwrap_or(0.0)
    }

    fn strongest_key(&self, i: usize) -> usize {
        (0..=i.min(self.t() - 1))
            .max_by(|&a, &b| self.prob(self.head, i, a).total_cmp(&self.prob(self.head, i, b)))
            .unwrap_or(0)
    }

    /// The traced scenario of the selected layer: built from the scenario [`Self::scenario`] exports,
    /// so the tracer shows exactly what `attn-trace run` computes on the exported file.
    pub(crate) fn traced(&mut self) -> Result<Arc<TracedScenario>, String> {
        if let Some((l, w)) = &self.traced
            && *l == self.layer
        {
            return Ok(Arc::clone(w));
        }
        let scenario = self.scenario(None)?;
        let traced = Arc::new(TracedScenario::from_scenario(&scenario));
        self.traced = Some((self.layer, Arc::clone(&traced)));
        Ok(traced)
    }

    /// Where `e` writes the selected layer.
    pub(crate) fn export_path(&self) -> PathBuf {
        self.origin.dir.join(format!(
            "{}-step{}-layer{}.toml",
            self.origin.stem, self.origin.step, self.layer
        ))
    }

    fn prompt_text(&self) -> String {
        printable(&self.prompt).escape_debug().to_string()
    }

    /// The selected layer on the prompt as a scenario: explicit `x` (the layer's LayerNorm
    /// output), `w_qkv, b_qkv, w_proj, b_proj` and `d_out`; shape B=1, T = prompt length.
    pub(crate) fn scenario(&self, focus: Option<Focus>) -> Result<Scenario, String> {
        let cap = &self.captures[self.layer];
        let cfg = self.model.config;
        let title = tr!(
            "TinyGPT layer {layer} on \"{prompt}\"",
            layer = self.layer,
            prompt = self.prompt_text()
        );
        let about = format!(
            "The attention of layer {} of {} of a trained TinyGPT ({}, d_model {}, {} heads) on the prompt \"{}\" \
             ({} bytes). x is the layer's LayerNorm output; d_out is the gradient of the prompt's next-byte loss at \
             the block's output.",
            self.layer,
            cfg.n_layers,
            self.origin.label,
            cfg.d_model,
            cfg.n_heads,
            self.prompt_text(),
            self.t()
        );
        let source = self.export_path().display().to_string();
        let mut scenario = Scenario::from_inputs(&source, &title, Some(&about), &cap.inputs, cap.variant, focus)
            .map_err(|e| e.to_string())?;
        // a model trained with flash is traced with flash too, beside the MHA that stores the
        // probabilities the map shows (Tab goes from one to the other)
        if self.origin.flash && cap.variant == Variant::Mha {
            scenario.variants.push(Variant::Flash);
            scenario = Scenario::parse(&scenario.to_toml(), &source).map_err(|e| e.to_string())?;
        }
        Ok(scenario)
    }

    /// `e`: writes the selected layer as a scenario TOML, atomically, and returns its path.
    pub(crate) fn export(&self) -> Result<PathBuf, String> {
        let focus = Focus {
            variant: Some(self.variant()),
            pass: Some(Pass::Forward),
            b: 0,
            h: if self.variant().has_heads() { self.head } else { 0 },
            i: self.i,
            j: self.j,
        };
        let scenario = self.scenario(Some(focus))?;
        // never over the file of an earlier export (another prompt, cell or run): the first
        // free name of `…-layer0.toml`, `…-layer0-2.toml`, `…-layer0-3.toml`, …
        let path = free_path(self.export_path());
        super::train::make_dir_for(&path).map_err(|e| format!("{}: {e}", self.origin.dir.display()))?;
        let cfg = self.model.config;
        let mut text = String::new();
        text.push_str("# Exported by attn-trace from a trained TinyGPT (the TUI's attention map, key e).\n");
        match &self.origin.checkpoint {
            Some(path) => text.push_str(&format!("# checkpoint: {}\n", path.display())),
            None => text.push_str(&format!("# checkpoint: none ({})\n", self.origin.label)),
        }
        text.push_str(&format!("# step: {}\n", self.origin.step));
        text.push_str(&format!(
            "# layer: {} of {} (d_model {}, n_heads {}, {} kernel)\n",
            self.layer,
            cfg.n_layers,
            cfg.d_model,
            cfg.n_heads,
            self.variant()
        ));
        text.push_str(&format!("# prompt: \"{}\" ({} bytes)\n", self.prompt_text(), self.t()));
        text.push_str("# Reopen it with: attn-trace tui FILE   ·   run it with: attn-trace run FILE\n\n");
        text.push_str(&scenario.to_toml());
        attn_trace_core::files::atomic::write(&path, text.as_bytes())
            .map_err(|e| tr!("cannot write {path}: {e}", path = path.display(), e))?;
        Ok(path)
    }

    /// The tracer on the selected layer, at the final write of the selected probability.
    pub(crate) fn trace_cell(&mut self) -> Result<Box<Tracer>, String> {
        let traced = self.traced()?;
        let variant = self.variant();
        let h = if variant.has_heads() { self.head } else { 0 };
        let off = self.offset(h, self.i, self.j);
        let mut tracer = Tracer::new(Arc::clone(&traced), Some(variant));
        let trace = traced.trace(variant).ok_or(tr!("the layer recorded no trace"))?;
        let last = trace.index.writes(Buf::Probs, off).last().copied();
        let n = last.ok_or_else(|| tr!("nothing wrote probs[{off}]", off))? as usize;
        tracer.cursor = n;
        tracer.pinned = Some((Buf::Probs, off));
        tracer.message = Some(tr!(
            "event {n}: the final write of probs[{off}] (layer {layer}, head {h}, i={i}, j={j})",
            n,
            off,
            layer = self.layer,
            h,
            i = self.i,
            j = self.j
        ));
        self.traced_layer = Some(self.layer);
        Ok(Box::new(tracer))
    }

    /// The tracer on the selected layer from its first event.
    pub(crate) fn trace_layer(&mut self) -> Result<Box<Tracer>, String> {
        let traced = self.traced()?;
        let mut tracer = Tracer::new(traced, Some(self.variant()));
        tracer.cursor = 0;
        self.traced_layer = Some(self.layer);
        Ok(Box::new(tracer))
    }

    fn open(&mut self, tracer: Result<Box<Tracer>, String>) -> Outcome {
        match tracer {
            Ok(t) => Outcome::Trace(t),
            Err(e) => {
                self.message = Some(e);
                Outcome::Stay
            }
        }
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        let t = self.t();
        let (heads, layers) = (self.heads(), self.captures.len());
        match key.code {
            KeyCode::Left => self.j = self.j.saturating_sub(1),
            KeyCode::Right => self.j = (self.j + 1).min(t - 1),
            KeyCode::Up => self.i = self.i.saturating_sub(1),
            KeyCode::Down => self.i = (self.i + 1).min(t - 1),
            KeyCode::Tab => self.head = (self.head + 1) % heads,
            KeyCode::BackTab => self.head = (self.head + heads - 1) % heads,
            KeyCode::Char(']') => self.layer = (self.layer + 1) % layers,
            KeyCode::Char('[') => self.layer = (self.layer + layers - 1) % layers,
            KeyCode::Enter => {
                let tracer = self.trace_cell();
                return self.open(tracer);
            }
            KeyCode::Char('t') => {
                let tracer = self.trace_layer();
                return self.open(tracer);
            }
            KeyCode::Char('e') => self.message = Some(self.export_message()),
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Esc | KeyCode::Char('q') => return Outcome::Back,
            _ => {}
        }
        self.head = self.head.min(self.heads() - 1);
        Outcome::Stay
    }

    /// `e`'s one line: where the file went, or why it did not.
    pub(crate) fn export_message(&self) -> String {
        match self.export() {
            Ok(p) => tr!(
                "exported layer {layer} to {path} (attn-trace tui reopens it)",
                layer = self.layer,
                path = p.display()
            ),
            Err(e) => tr!("export failed: {e}", e),
        }
    }

    /// A click on a cell selects it and opens the tracer there.
    pub(crate) fn mouse(&mut self, m: MouseEvent, area: Rect) -> Outcome {
        if m.kind != MouseEventKind::Down(MouseButton::Left) {
            return Outcome::Stay;
        }
        for (l, h, rect) in grid_areas(area, self) {
            let plan = heatgrid::plan(inner(rect), self.t(), (self.i, self.j));
            if let Some((i, j)) = heatgrid::hit(&plan, m.column, m.row) {
                (self.layer, self.head, self.i, self.j) = (l, h, i, j);
                let tracer = self.trace_cell();
                return self.open(tracer);
            }
        }
        Outcome::Stay
    }

    fn selection_in(&self, l: usize, h: usize) -> Option<(usize, usize)> {
        (l == self.layer && h == self.head).then_some((self.i, self.j))
    }
}

/// `base` if no file is there, else the first of `STEM-2.EXT`, `STEM-3.EXT`, … that is free.
pub(crate) fn free_path(base: PathBuf) -> PathBuf {
    if !base.exists() {
        return base;
    }
    let stem = base
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = base.extension().map(|e| e.to_string_lossy().into_owned());
    (2u32..)
        .map(|k| {
            let name = match &ext {
                Some(e) => format!("{stem}-{k}.{e}"),
                None => format!("{stem}-{k}"),
            };
            base.with_file_name(name)
        })
        .find(|p| !p.exists())
        .unwrap_or(base)
}
