//! "Open scenario…": the shipped scenarios with their title and about, and a path prompt.

use super::picker::{Builtin, FilePicker, file_name};
use crate::tui::theme::Theme;
use crate::tui::widgets::pad;
use attn_trace_core::scenario::Scenario;
use attn_trace_i18n::{msg, tr};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use std::path::{Path, PathBuf};

/// A scenario file's title and about, or why it cannot be used.
pub(crate) type Summary = Result<(String, Option<String>), String>;

/// The scenarios folder's `*.toml` files, each parsed for its title.
pub(crate) type Open = FilePicker<Summary>;

/// Where the picker opens: `./scenarios` where there is one (in the repository), else the
/// folder the program runs in. The shipped scenarios are built in, so they are offered wherever
/// it runs; never the folder it was built in.
pub(crate) fn default_dir() -> PathBuf {
    let here = PathBuf::from("scenarios");
    if here.is_dir() { here } else { PathBuf::from(".") }
}

/// Lists the shipped scenarios (built in) and `dir`'s, each with its title and what it teaches.
pub(crate) fn list(dir: PathBuf) -> Open {
    FilePicker::new(dir, "toml", summary).with_builtin(Builtin {
        files: attn_trace_core::scenario::SHIPPED,
        describe: builtin_summary,
    })
}

/// A built-in scenario's title and about, from its text.
fn builtin_summary(text: &str, stem: &str) -> Summary {
    let s = Scenario::parse(text, &format!("<built-in {stem}>")).map_err(|e| e.to_string())?;
    Ok((s.title, s.about.or_else(|| leading_comment(text))))
}

/// A scenario file's title and its `about`, else the first paragraph of the comment it opens
/// with (`# What this teaches: …`), or why it cannot be used.
fn summary(path: &Path) -> Summary {
    let s = Scenario::load(path).map_err(|e| e.to_string())?;
    let about = s.about.or_else(|| {
        let bytes = attn_trace_core::files::input::read(path, 1 << 20, "a scenario file").ok()?;
        leading_comment(&String::from_utf8_lossy(&bytes))
    });
    Ok((s.title, about))
}

/// The first paragraph of the comment a file opens with, without its `#` marks and without the
/// words `What this teaches:`; `None` when the file does not open with a comment.
pub(crate) fn leading_comment(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map_while(|l| l.trim_start().strip_prefix('#'))
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let joined = lines.join(" ");
    let joined = joined.strip_prefix("What this teaches:").unwrap_or(&joined).trim();
    (!joined.is_empty()).then(|| joined.to_string())
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &Open, theme: Theme) {
    render_as(frame, area, st, msg!("scenario"), tr!(" scenarios "), theme);
}

/// The files most interesting first: those named in `first`, in that order, then the others.
pub(crate) fn put_first(st: &mut Open, first: &[&str]) {
    let rank = |p: &Path| {
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        first.iter().position(|f| *f == stem).unwrap_or(first.len())
    };
    st.entries.sort_by_key(|e| rank(&e.path));
}

/// The scenarios of today's attention, in the order `docs/modern_attention.md` names them, then
/// flash and cross-attention.
pub(crate) const MODERN: [&str; 14] = [
    "gqa",
    "mqa",
    "rope",
    "kv_cache_decode",
    "sliding_window",
    "sinks",
    "window_decode",
    "paged_decode",
    "split_kv",
    "sink_logit",
    "mla",
    "mla_decode",
    "flash",
    "cross_attention",
];

/// The menu's "Today's attention" entry: `dir`'s files named in [`MODERN`] only, in its order.
pub(crate) fn modern(dir: PathBuf) -> Open {
    let mut st = list(dir);
    st.entries.retain(|e| {
        let stem = e.path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        MODERN.contains(&stem)
    });
    put_first(&mut st, &MODERN);
    st
}

/// A picker of titled TOML files (scenarios, lessons): `what` names one in the prompt,
/// `list_title` the list.
pub(crate) fn render_as(frame: &mut Frame, area: Rect, st: &Open, what: &'static str, list_title: &str, theme: Theme) {
    let t = theme;
    let about_text: Vec<Line> = match st.entries.get(st.selected).map(|e| &e.info) {
        Some(Ok((_, Some(about)))) => crate::tui::widgets::prose_lines(about),
        Some(Ok((_, None))) => vec![Line::styled(tr!("(no about, and no comment at its top)"), t.dim())],
        Some(Err(e)) => vec![Line::styled(e.clone(), t.error())],
        None => match st.selected_folder() {
            Some(dir) => vec![Line::styled(
                tr!("Enter opens the folder {dir}", dir = dir.display()),
                t.dim(),
            )],
            None => Vec::new(),
        },
    };
    // the about box as tall as its text (wrapped), the list at least five lines
    let inner_w = area.width.saturating_sub(2).max(1) as usize;
    let wrapped: usize = about_text.iter().map(|l| l.width().max(1).div_ceil(inner_w)).sum();
    let room = area.height.saturating_sub(1 + 3 + 1);
    let about_h = (wrapped as u16 + 2).min(room.saturating_sub(5)).max(3);
    let [head, list, about, input, hint] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(about_h),
        Constraint::Length(3),
        Constraint::Length(1),
    ])
    .areas(area);
    st.render_frame(frame, [head, input, hint], what, t);
    let lines: Vec<Line> = st
        .visible(list.height)
        .map(|k| {
            let style = if k == st.selected { t.cursor() } else { t.base() };
            if let Some(folder) = st.folder_line(k) {
                return Line::from(Span::styled(format!(" {} ", pad(&folder, 24)), style));
            }
            let e = &st.entries[k];
            let title = match &e.info {
                Ok((title, _)) => Span::raw(title.clone()),
                Err(_) => Span::styled(tr!("(invalid: see below)"), t.error()),
            };
            Line::from(vec![
                Span::styled(format!(" {:<24} ", file_name(&e.path)), style),
                title,
            ])
        })
        .collect();
    let mut body = lines;
    if st.entries.is_empty() {
        body.insert(
            0,
            Line::from(Span::styled(tr!("no *.toml files here: type a path below"), t.dim())),
        );
    }
    frame.render_widget(Paragraph::new(body).block(Block::bordered().title(list_title)), list);
    // a file built into the binary says so: it is not in the folder listed
    let builtin = st.entries.get(st.selected).is_some_and(|e| e.builtin.is_some());
    let about_title = if builtin {
        tr!(" about · built into attn-trace ")
    } else {
        tr!(" about ")
    };
    frame.render_widget(
        Paragraph::new(about_text)
            .wrap(Wrap { trim: false })
            .block(Block::bordered().title(about_title)),
        about,
    );
}
