//! Tracing a trained model, step one: type a prompt and pick a layer. Enter runs the prompt
//! through the model, captures every layer's attention and opens the attention map
//! ([`super::attn_map`]), from which the tracer opens on the chosen layer.

use super::attn_map::AttnMap;
use super::train::worker::printable;
use crate::tui::theme::Theme;
use attn_trace_i18n::tr;
use attn_trace_model::{Dataset, TinyGpt};
pub(crate) use attn_trace_model::{Origin, Source};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use std::io::Read;
use std::sync::Arc;

#[derive(Debug)]
pub(crate) struct Prompt {
    pub model: Arc<TinyGpt>,
    pub origin: Origin,
    pub text: String,
    pub layer: usize,
    /// Why the last Enter did not open the map.
    pub error: Option<String>,
}

/// What the app should do after a key.
#[derive(Debug)]
pub(crate) enum Outcome {
    Stay,
    Back,
    Map(Box<AttnMap>),
}

/// Longest prompt typed, whatever the model's context.
const MAX_TEXT: usize = 4096;

impl Prompt {
    pub(crate) fn new(model: TinyGpt, origin: Origin) -> Prompt {
        let text = default_prompt(origin.dataset.as_ref(), model.config.seq_len);
        Prompt {
            model: Arc::new(model),
            origin,
            text,
            layer: 0,
            error: None,
        }
    }

    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        let layers = self.model.config.n_layers;
        match key.code {
            KeyCode::Esc => return Outcome::Back,
            KeyCode::Enter => match AttnMap::new(
                Arc::clone(&self.model),
                self.origin.clone(),
                self.text.as_bytes(),
                self.layer,
            ) {
                Ok(map) => {
                    self.error = None;
                    return Outcome::Map(Box::new(map));
                }
                Err(e) => self.error = Some(e),
            },
            KeyCode::Up => self.layer = (self.layer + layers - 1) % layers,
            KeyCode::Down | KeyCode::Tab => self.layer = (self.layer + 1) % layers,
            KeyCode::Backspace => {
                self.text.pop();
            }
            KeyCode::Delete => self.text.clear(),
            KeyCode::Char(c) if self.text.len() < MAX_TEXT => self.text.push(c),
            _ => {}
        }
        Outcome::Stay
    }
}

/// A line the model has seen the like of: a validation line of a synthetic task (`input|answer`),
/// else the start of its text, else a copy-task line.
pub(crate) fn default_prompt(source: Option<&Source>, seq: usize) -> String {
    let fallback = "hello|hello";
    let bytes: Vec<u8> = match source {
        Some(s @ Source::Builtin(_)) => s
            .load(seq)
            .ok()
            .map(|d: Dataset| first_line(&d.val, seq))
            .unwrap_or_default(),
        Some(Source::File(path)) => {
            let mut head = Vec::new();
            // a regular file only, opened without blocking
            let read = attn_trace_core::files::input::open_regular(path)
                .ok()
                .and_then(|(f, _)| f.take(4096).read_to_end(&mut head).ok());
            if read.is_some() {
                first_line(&head, seq)
            } else {
                Vec::new()
            }
        }
        None => Vec::new(),
    };
    let text = printable(&bytes).replace('\n', " ");
    if text.trim().is_empty() {
        fallback.chars().take(seq.max(1)).collect()
    } else {
        text
    }
}

/// The first line of `bytes` (at most `seq` bytes and 32), or its first 32 bytes.
fn first_line(bytes: &[u8], seq: usize) -> Vec<u8> {
    let cap = seq.min(32);
    let line = bytes.split(|&b| b == b'\n').find(|l| !l.is_empty()).unwrap_or(bytes);
    line[..line.len().min(cap)].to_vec()
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &Prompt, theme: Theme) {
    let t = theme;
    let cfg = &st.model.config;
    let [head, info, input, layer, err, _, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(3),
        Constraint::Length(3),
        Constraint::Length(3),
        Constraint::Length(3),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(tr!(" Trace the trained model "), t.title()),
            Span::styled(format!("· {}", st.origin.label), t.dim()),
        ])),
        head,
    );
    let kernel = if cfg.n_heads == 1 {
        tr!("baseline kernel")
    } else {
        tr!("MHA kernel")
    };
    frame.render_widget(
        Paragraph::new(vec![
            Line::from(tr!(
                " L={l} layers · C={c} · H={h} ({kernel}) · seq_len {t}",
                l = cfg.n_layers,
                c = cfg.d_model,
                h = cfg.n_heads,
                kernel,
                t = cfg.seq_len
            )),
            Line::styled(
                tr!(
                    " The prompt's bytes are the tokens: T = its length. The tracer replays the layer's attention with \
                     x = that layer's LayerNorm output, forward and backward (from the prompt's next-byte loss)."
                ),
                t.dim(),
            ),
        ])
        .wrap(Wrap { trim: false }),
        info,
    );
    let n = st.text.len();
    let count_style = if n == 0 || n > cfg.seq_len { t.error() } else { t.dim() };
    frame.render_widget(
        Paragraph::new(format!("{}▏", st.text)).block(
            Block::bordered()
                .title(Line::from(vec![
                    Span::raw(tr!(" prompt ")),
                    Span::styled(tr!("T = {n} of at most {max} ", n, max = cfg.seq_len), count_style),
                ]))
                .border_style(t.border(true)),
        ),
        input,
    );
    let mut spans = Vec::new();
    for l in 0..cfg.n_layers {
        let style = if l == st.layer { t.cursor() } else { t.base() };
        spans.push(Span::styled(format!(" {l} "), style));
        spans.push(Span::raw(" "));
    }
    frame.render_widget(
        Paragraph::new(Line::from(spans)).block(
            Block::bordered()
                .title(tr!(" layer (↑/↓) "))
                .border_style(t.border(false)),
        ),
        layer,
    );
    if let Some(e) = &st.error {
        frame.render_widget(
            Paragraph::new(Line::styled(format!(" {e}"), t.error())).wrap(Wrap { trim: false }),
            err,
        );
    }
    frame.render_widget(
        Paragraph::new(Line::styled(
            tr!(" type the prompt · Backspace · Delete clears · ↑/↓ layer · Enter attention map · Esc back"),
            t.status(),
        ))
        .style(t.status()),
        status,
    );
}
