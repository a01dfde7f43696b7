//! A centred box drawn over the screen: messages, errors, the help overlay.

use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

/// A rectangle of at most `w`×`h` centred in `area` (smaller when the area is).
pub(crate) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Draws `lines` in a bordered box titled `title`, sized to the text where the screen allows.
pub(crate) fn render(frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line>, border: Style, theme: Theme) {
    let widest = lines
        .iter()
        .map(Line::width)
        .max()
        .unwrap_or(0)
        .max(crate::tui::widgets::cols(title) + 4);
    let w = (widest as u16)
        .saturating_add(4)
        .min(area.width.saturating_sub(2).max(1));
    // wrapped lines take more rows when the box is narrower than the text
    let inner_w = w.saturating_sub(2).max(1) as usize;
    let rows: usize = lines
        .iter()
        .map(|l| {
            let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            super::wrap(&text, inner_w).len().max(1)
        })
        .sum();
    let h = (rows as u16).saturating_add(2);
    let rect = centered(area, w, h);
    frame.render_widget(Clear, rect);
    let block = Block::bordered()
        .title(format!(" {title} "))
        .title_style(theme.title())
        .border_style(border);
    frame.render_widget(Paragraph::new(lines).block(block).wrap(Wrap { trim: false }), rect);
}
