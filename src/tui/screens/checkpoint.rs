//! "Open checkpoint…": the `*.safetensors` files of a directory and a path prompt. A file that
//! loads opens the trained-model tracer ([`super::prompt`]); one that does not shows its
//! one-line error in a popup.

use super::picker::{FilePicker, file_name};
use super::train::worker::Source;
use super::train::{Traced, dir_of};
use crate::tui::theme::Theme;
use crate::tui::widgets::pad;
use attn_trace_i18n::{msg, tr};
use attn_trace_model::Origin;
use attn_trace_model::{BUILTIN, checkpoint};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use std::path::{Path, PathBuf};

/// The folder's `*.safetensors` files with their sizes in bytes.
pub(crate) type OpenCheckpoint = FilePicker<u64>;

/// Lists `dir`'s checkpoints.
pub(crate) fn list(dir: PathBuf) -> OpenCheckpoint {
    FilePicker::new(dir, "safetensors", |path| {
        std::fs::metadata(path).map_or(0, |m| m.len())
    })
}

/// Loads a checkpoint written by `attn-trace train --save` (or the train screen's `s`): its
/// weights and where they came from, or the one-line reason it cannot be used.
pub(crate) fn open(path: &Path) -> Result<Traced, String> {
    match checkpoint::load(path) {
        Ok(loaded) => {
            let dataset = loaded.state.as_ref().and_then(|s| {
                let name = s.dataset.as_str();
                if BUILTIN.iter().any(|(n, _)| *n == name) {
                    Some(Source::Builtin(name.to_string()))
                } else {
                    Some(PathBuf::from(name)).filter(|p| p.is_file()).map(Source::File)
                }
            });
            let stem = path
                .file_stem()
                .map_or_else(|| "tinygpt".to_string(), |s| s.to_string_lossy().into_owned());
            let origin = Origin {
                label: format!("{} (step {})", path.display(), loaded.step),
                checkpoint: Some(path.to_path_buf()),
                step: loaded.step,
                dataset,
                dir: dir_of(path),
                stem,
                // a checkpoint does not say which kernel trained it
                flash: false,
            };
            Ok(Traced {
                model: loaded.model,
                origin,
            })
        }
        Err(e) => Err(e.to_string()),
    }
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &OpenCheckpoint, theme: Theme) {
    let t = theme;
    let [head, list, input, hint] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(area);
    st.render_frame(frame, [head, input, hint], msg!("checkpoint"), t);
    let mut lines: Vec<Line> = st
        .visible(list.height)
        .map(|k| {
            let style = if k == st.selected { t.cursor() } else { t.base() };
            if let Some(folder) = st.folder_line(k) {
                return Line::from(Span::styled(format!(" {} ", pad(&folder, 40)), style));
            }
            let e = &st.entries[k];
            Line::from(vec![
                Span::styled(format!(" {:<40} ", file_name(&e.path)), style),
                Span::styled(tr!("{n} bytes", n = e.info), t.dim()),
            ])
        })
        .collect();
    if st.entries.is_empty() {
        lines.insert(
            0,
            Line::styled(
                tr!("no *.safetensors files here: train one (menu → Train TinyGPT, s saves) or type a path below"),
                t.dim(),
            ),
        );
    }
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(tr!(" checkpoints "))),
        list,
    );
}
