//! Every style and colour of the TUI in one place.
//!
//! Two palettes: colour, and monochrome for `--no-color` / `NO_COLOR`, where bold, reverse and
//! underline alone still tell a cell being read from one being written from one already written.

use ratatui::style::{Color, Modifier, Style};

/// The palette the app draws with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    pub(crate) color: bool,
}

impl Theme {
    pub const COLOR: Theme = Theme { color: true };
    pub const MONO: Theme = Theme { color: false };

    fn pick(self, color: Style, mono: Style) -> Style {
        if self.color { color } else { mono }
    }

    #[allow(
        clippy::unused_self,
        reason = "every style is asked of the theme; this one is the same in both"
    )]
    pub(crate) fn base(self) -> Style {
        Style::default()
    }

    pub(crate) fn dim(self) -> Style {
        self.pick(
            Style::default().fg(Color::DarkGray),
            Style::default().add_modifier(Modifier::DIM),
        )
    }

    pub(crate) fn title(self) -> Style {
        self.pick(
            Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }

    /// Panel borders; the focused panel's is brighter.
    pub(crate) fn border(self, focused: bool) -> Style {
        match (self.color, focused) {
            (true, true) => Style::default().fg(Color::Cyan),
            (true, false) => Style::default().fg(Color::DarkGray),
            (false, true) => Style::default().add_modifier(Modifier::BOLD),
            (false, false) => Style::default(),
        }
    }

    /// The highlighted entry of a list, the current line of the log and of the code.
    pub(crate) fn cursor(self) -> Style {
        self.pick(
            Style::default()
                .bg(Color::Blue)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::REVERSED),
        )
    }

    /// The cell the current event reads.
    pub(crate) fn read(self) -> Style {
        self.pick(
            Style::default()
                .bg(Color::Green)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::REVERSED),
        )
    }

    /// The cell the current event writes.
    pub(crate) fn write(self) -> Style {
        self.pick(
            Style::default()
                .bg(Color::Red)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD | Modifier::UNDERLINED),
        )
    }

    /// Cells already written in the current phase.
    pub(crate) fn written(self) -> Style {
        self.pick(
            Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::UNDERLINED),
        )
    }

    /// Cells the current loop iteration touched before this event (the other operand).
    pub(crate) fn touched(self) -> Style {
        self.pick(
            Style::default().fg(Color::LightGreen),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }

    /// The selected cell (the target of `w`, `r` and `b`).
    pub(crate) fn selected(self) -> Style {
        self.pick(
            Style::default().bg(Color::Magenta).fg(Color::White),
            Style::default().add_modifier(Modifier::ITALIC | Modifier::UNDERLINED | Modifier::BOLD),
        )
    }

    /// Masked score cells (j > i under the causal mask).
    pub(crate) fn masked(self) -> Style {
        self.pick(
            Style::default().fg(Color::DarkGray).add_modifier(Modifier::CROSSED_OUT),
            Style::default().add_modifier(Modifier::DIM | Modifier::CROSSED_OUT),
        )
    }

    pub(crate) fn breakpoint(self) -> Style {
        self.pick(
            Style::default().fg(Color::LightRed).add_modifier(Modifier::BOLD),
            Style::default(),
        )
    }

    /// Phase span `k` of the timeline: forward phases in blues, backward ones in reds, each span
    /// a shade apart from the one before; in monochrome every other span reversed.
    pub(crate) fn phase_span(self, pass: attn_trace_core::trace::Pass, k: usize) -> Style {
        use attn_trace_core::trace::Pass;
        if !self.color {
            return if k % 2 == 1 {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
        }
        let bg = match (pass, k % 2) {
            (Pass::Forward, 0) => Color::Rgb(30, 60, 120),
            (Pass::Forward, _) => Color::Rgb(40, 95, 150),
            (Pass::Backward, 0) => Color::Rgb(120, 40, 40),
            (Pass::Backward, _) => Color::Rgb(150, 65, 45),
        };
        Style::default().bg(bg).fg(Color::White)
    }

    /// A timeline column with L1 misses under the cache model; `memory` when some of its lines
    /// came from memory.
    pub(crate) fn miss(self, memory: bool) -> Style {
        match (self.color, memory) {
            (true, true) => Style::default().fg(Color::LightRed).add_modifier(Modifier::BOLD),
            (true, false) => Style::default().fg(Color::LightYellow),
            (false, true) => Style::default().add_modifier(Modifier::BOLD),
            (false, false) => Style::default(),
        }
    }

    /// An access of the selected cell on the timeline.
    pub(crate) fn tick(self) -> Style {
        self.pick(
            Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }

    pub(crate) fn op_read(self) -> Style {
        self.pick(Style::default().fg(Color::Green), Style::default())
    }

    pub(crate) fn op_write(self) -> Style {
        self.pick(
            Style::default().fg(Color::Red),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }

    pub(crate) fn number(self) -> Style {
        self.pick(
            Style::default().fg(Color::Yellow),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }

    pub(crate) fn name(self) -> Style {
        self.pick(Style::default().fg(Color::Cyan), Style::default())
    }

    pub(crate) fn keyword(self) -> Style {
        self.pick(Style::default().fg(Color::Magenta), Style::default())
    }

    pub(crate) fn comment(self) -> Style {
        self.pick(
            Style::default().fg(Color::DarkGray),
            Style::default().add_modifier(Modifier::DIM),
        )
    }

    pub(crate) fn error(self) -> Style {
        self.pick(
            Style::default().fg(Color::LightRed).add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }

    pub(crate) fn status(self) -> Style {
        self.pick(
            Style::default().bg(Color::DarkGray).fg(Color::White),
            Style::default().add_modifier(Modifier::REVERSED),
        )
    }

    pub(crate) fn key(self) -> Style {
        self.pick(
            Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::default().add_modifier(Modifier::BOLD),
        )
    }

    /// A buffer of memory level `level`: global memory plain, a tiled kernel's on-chip
    /// working set (flash's tiles, m, l, acc) in its own colour (underlined in monochrome).
    pub(crate) fn level(self, level: attn_trace_core::tensor::Level) -> Style {
        match level {
            attn_trace_core::tensor::Level::Global => self.base(),
            attn_trace_core::tensor::Level::Tile => self.pick(
                Style::default().fg(Color::LightMagenta),
                Style::default().add_modifier(Modifier::UNDERLINED),
            ),
        }
    }

    /// A value as a heat colour, `t` in [0, 1] (0 most negative, 1 most positive). In colour a
    /// diverging scale, blue (negative) through white to red (positive); in monochrome the
    /// shade glyph carries the value instead.
    pub(crate) fn heat(self, t: f64) -> Style {
        if self.color {
            let c = colorous::RED_BLUE.eval_continuous(1.0 - t);
            Style::default().fg(Color::Rgb(c.r, c.g, c.b))
        } else {
            Style::default()
        }
    }

    /// Two characters drawing a heat cell: solid in colour, a shade by magnitude in monochrome.
    pub(crate) fn heat_glyph(self, t: f64) -> &'static str {
        if self.color {
            return "██";
        }
        // distance from the middle (zero) picks the shade: light for small, full for large
        match ((t - 0.5).abs() * 8.0) as u32 {
            0 => "  ",
            1 => "░░",
            2 => "▒▒",
            3 => "▓▓",
            _ => "██",
        }
    }
}
