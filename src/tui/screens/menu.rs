//! The main menu.

use crate::tui::theme::Theme;
use crate::tui::traced_scenario::TracedScenario;
use crate::tui::widgets::pad;
use attn_trace_core::kernels::Variant;
use attn_trace_i18n::{msg, text, tr};
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};

/// The menu's keys, for its `?` overlay.
pub(crate) const KEYS: &[(&str, &str)] = &[
    ("↑ k  /  ↓ j Tab", msg!("highlight the previous / next entry")),
    ("Home / End", msg!("first / last entry")),
    ("Enter, Space", msg!("open the highlighted entry")),
    ("1-9", msg!("open entry 1 to 9 directly")),
    ("l  /  m", msg!("open the lessons / today's attention scenarios")),
    (
        "w",
        msg!("entries 1-3 on the built-in walkthrough again (after opening a scenario)"),
    ),
    ("click", msg!("open the entry under the pointer")),
    ("?", msg!("these keys")),
    ("q", msg!("quit")),
];

/// The menu's entries, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    Baseline,
    Mha,
    Compare,
    Open,
    Train,
    OpenCheckpoint,
    Mistakes,
    Mine,
    Traffic,
    /// The shipped lessons (`lessons/`), in the interface's language.
    Lessons,
    /// The scenarios of today's attention: grouped heads, RoPE, KV-cache decoding, flash.
    Modern,
    Help,
    Quit,
    /// Back to the built-in walkthrough (`w`); not a line of the list.
    Builtin,
}

impl Item {
    pub(crate) const ALL: [Item; 13] = [
        Item::Baseline,
        Item::Mha,
        Item::Compare,
        Item::Open,
        Item::Train,
        Item::OpenCheckpoint,
        Item::Mistakes,
        Item::Mine,
        Item::Traffic,
        Item::Lessons,
        Item::Modern,
        Item::Help,
        Item::Quit,
    ];

    /// The key that opens entry `k` from the menu: its number, `l` for Lessons, `m` for today's
    /// attention, `?` for Help, `q` for Quit.
    pub(crate) fn shortcut(self, k: usize) -> char {
        match self {
            Item::Lessons => 'l',
            Item::Modern => 'm',
            Item::Help => '?',
            Item::Quit => 'q',
            _ => char::from_digit((k + 1) as u32, 10).unwrap_or(' '),
        }
    }

    /// The entry's words; Compare names the two kernels it puts side by side on `traced`.
    pub(crate) fn label(self, traced: &TracedScenario) -> String {
        let text: &str = match self {
            Item::Compare => return super::compare::menu_label(traced),
            Item::Baseline => text(Variant::Baseline.desc().menu),
            Item::Mha => text(heads_variant(traced).desc().menu),
            Item::Open => tr!("Open scenario…"),
            Item::Train => tr!("Train TinyGPT"),
            Item::OpenCheckpoint => tr!("Open checkpoint…"),
            Item::Mistakes => tr!("Mistakes gallery"),
            Item::Mine => tr!("Grade your own kernel…"),
            Item::Traffic => tr!("Memory traffic: naive vs flash"),
            Item::Lessons => tr!("Lessons…"),
            Item::Modern => tr!("Today's attention: GQA, caches, MLA…"),
            Item::Help => tr!("Help"),
            Item::Quit => tr!("Quit"),
            Item::Builtin => tr!("Back to the built-in walkthrough"),
        };
        text.to_string()
    }

    fn about(self, traced: &TracedScenario) -> &'static str {
        match self {
            Item::Baseline => text(Variant::Baseline.desc().about),
            Item::Mha => text(heads_variant(traced).desc().about),
            Item::Compare => {
                tr!(
                    "The same input through two kernels, phase by phase: baseline and MHA (layouts, scales), MHA and GQA, or MHA and flash (P stored or never stored, and the traffic)."
                )
            }
            Item::Open => tr!("Pick a shipped scenario from scenarios/ or type the path of your own."),
            Item::Train => tr!("Train a tiny GPT, watch it learn, then trace its attention."),
            Item::OpenCheckpoint => {
                tr!("Trace the attention of a model saved by the train screen or attn-trace train --save.")
            }
            Item::Mistakes => {
                tr!(
                    "Seven classic attention mistakes, each traced beside the correct run: where they part, and what it does downstream."
                )
            }
            Item::Mine => tr!(
                "Open the trace your own kernel recorded (attn-trace inputs, a recorder from recorders/): graded, and stepped beside the reference."
            ),
            Item::Traffic => tr!(
                "How many global-memory reads and writes the plain kernel and FlashAttention make as T grows, per tile size; c there: their cache misses, simulated."
            ),
            Item::Lessons => tr!(
                "A teacher's path through a scenario: stops with a note and a question at each (the MHA walkthrough, backward, grouped heads, flash's online softmax)."
            ),
            Item::Modern => tr!(
                "The scenarios of the attention today's models run: grouped-query and multi-query heads, rotary positions, decoding from a KV cache (rolling, paged, split), sliding windows and sinks, multi-head latent attention, FlashAttention, cross-attention."
            ),
            Item::Help => tr!("The menu's keys. On every screen, ? lists that screen's keys."),
            Item::Quit => tr!("Leave attn-trace (q from the menu does the same)."),
            Item::Builtin => tr!("Entries 1-3 step through the built-in MHA walkthrough again."),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Menu {
    pub selected: usize,
}

impl Menu {
    /// Moves the highlight; returns the chosen entry on Enter, a digit or q.
    pub(crate) fn key(&mut self, key: KeyEvent) -> Option<Item> {
        let n = Item::ALL.len();
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.selected = (self.selected + n - 1) % n,
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => self.selected = (self.selected + 1) % n,
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = n - 1,
            KeyCode::Enter | KeyCode::Char(' ') => return Item::ALL.get(self.selected).copied(),
            KeyCode::Char('q') => return Some(Item::Quit),
            KeyCode::Char('?') => return Some(Item::Help),
            KeyCode::Char('w') => return Some(Item::Builtin),
            KeyCode::Char(c @ ('l' | 'm')) => {
                let item = if c == 'l' { Item::Lessons } else { Item::Modern };
                self.selected = Item::ALL.iter().position(|&i| i == item).unwrap_or(0);
                return Some(item);
            }
            KeyCode::Char(c @ '1'..='9') => {
                self.selected = c as usize - '1' as usize;
                return Item::ALL.get(self.selected).copied();
            }
            _ => {}
        }
        None
    }

    /// The entry under a click at row `y`, if any.
    pub(crate) fn item_at(&self, area: Rect, traced: &TracedScenario, y: u16) -> Option<usize> {
        let a = areas(area, self.selected, traced);
        let row = y.checked_sub(a.list.y + 1)? as usize;
        (y < a.list.bottom().saturating_sub(1))
            .then_some(a.first + row)
            .filter(|&k| k < Item::ALL.len())
    }
}

/// Lines `text` takes wrapped at `width`.
fn wrapped(text: &str, width: u16) -> u16 {
    crate::tui::widgets::wrap(text, width as usize).len().max(1) as u16
}

/// What entries 1-3 step through: `1-3: MHA walkthrough: B=1, T=3, C=4, H=2 (built in)`.
fn scenario_line(traced: &TracedScenario) -> (String, String) {
    let mut what = traced.title.clone();
    if !what.contains("B=") {
        what.push_str(&format!(" ({})", traced.shape_text()));
    }
    let tail = if traced.is_builtin() {
        tr!(" (built in)").to_string()
    } else {
        tr!(" · w: the built-in one").to_string()
    };
    (what, tail)
}

/// Where the menu's parts go, and the first entry the list shows (it scrolls on small screens).
struct Areas {
    head: Rect,
    scenario: Rect,
    list: Rect,
    about: Rect,
    first: usize,
}

/// The kernel entry 2 steps through: MHA when the scenario traces it, else the first kernel
/// with heads (GQA, flash or MLA) it does trace, so a scenario of today's attention opens from
/// the menu.
pub(crate) fn heads_variant(traced: &TracedScenario) -> Variant {
    if traced.run(Variant::Mha).is_some() {
        return Variant::Mha;
    }
    traced
        .variants()
        .into_iter()
        .find(|v| v.has_heads())
        .unwrap_or(Variant::Mha)
}

fn hint() -> &'static str {
    tr!("↑/↓ choose · Enter open · ? keys · q quit")
}

fn areas(area: Rect, selected: usize, traced: &TracedScenario) -> Areas {
    let n = Item::ALL.len() as u16;
    let tall = area.height >= 24;
    let head_h = if tall { 4 } else { 1 };
    let (what, tail) = scenario_line(traced);
    let scenario_h = wrapped(&format!("1-3: {what}{tail}"), area.width);
    let item = Item::ALL[selected.min(Item::ALL.len() - 1)];
    let about_h = wrapped(item.about(traced), area.width) + wrapped(hint(), area.width) + u16::from(tall);
    // the list as tall as its entries where the screen allows, at least three lines
    let list_h = (n + 2)
        .min(area.height.saturating_sub(head_h + scenario_h + about_h))
        .max(3);
    let [head, scenario, list, about] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Length(scenario_h),
        Constraint::Length(list_h),
        Constraint::Fill(1),
    ])
    .areas(area);
    let w = 46.min(list.width);
    let list = Rect {
        x: list.x + (list.width - w) / 2,
        width: w,
        ..list
    };
    let rows = list_h.saturating_sub(2).max(1) as usize;
    let first = selected
        .saturating_sub(rows - 1)
        .min(Item::ALL.len().saturating_sub(rows));
    Areas {
        head,
        scenario,
        list,
        about,
        first,
    }
}

/// A title and its subtitle, centred, a line below the top of `head`: the menu's heading, which
/// the mistakes gallery shares.
pub(crate) fn render_heading(frame: &mut Frame, head: Rect, title: &str, subtitle: &str, t: Theme) {
    let lines = vec![
        Line::from(Span::styled(title, t.title())).centered(),
        Line::from(Span::styled(subtitle, t.dim())).centered(),
    ];
    frame.render_widget(
        Paragraph::new(lines),
        Rect {
            y: head.y + 1,
            height: head.height.saturating_sub(1),
            ..head
        },
    );
}

pub(crate) fn render(frame: &mut Frame, area: Rect, st: &Menu, traced: &TracedScenario, theme: Theme) {
    let t = theme;
    let a = areas(area, st.selected, traced);
    if a.head.height > 1 {
        render_heading(
            frame,
            a.head,
            "attn-trace",
            tr!("step through transformer attention one memory access at a time"),
            t,
        );
    } else {
        frame.render_widget(Paragraph::new(Line::styled("attn-trace", t.title()).centered()), a.head);
    }
    // what entries 1-3 step through
    let (what, tail) = scenario_line(traced);
    let style = if traced.is_builtin() { t.dim() } else { t.key() };
    let scenario = Line::from(vec![
        Span::styled("1-3: ", t.dim()),
        Span::styled(what, t.title()),
        Span::styled(tail, style),
    ]);
    frame.render_widget(
        Paragraph::new(scenario.centered()).wrap(Wrap { trim: true }),
        a.scenario,
    );
    let rows = a.list.height.saturating_sub(2) as usize;
    let lines: Vec<Line> = Item::ALL
        .iter()
        .enumerate()
        .skip(a.first)
        .take(rows)
        .map(|(k, item)| {
            let text = format!(" {} {}", item.shortcut(k), pad(&item.label(traced), 40));
            Line::from(Span::styled(text, if k == st.selected { t.cursor() } else { t.base() }))
        })
        .collect();
    let mut block = Block::bordered().border_style(t.border(true));
    if a.first > 0 {
        block = block.title(tr!(" ↑ {n} more ", n = a.first));
    }
    let below = Item::ALL.len().saturating_sub(a.first + rows);
    if below > 0 {
        block = block.title_bottom(tr!(" ↓ {below} more ", below));
    }
    frame.render_widget(Paragraph::new(lines).block(block), a.list);
    let item = Item::ALL[st.selected.min(Item::ALL.len() - 1)];
    let help = vec![
        Line::from(Span::raw(item.about(traced))).centered(),
        Line::from(Span::styled(hint(), t.dim())).centered(),
    ];
    frame.render_widget(
        Paragraph::new(help).wrap(Wrap { trim: true }),
        Rect {
            y: a.about.y + u16::from(a.about.height > 4),
            height: a.about.height.saturating_sub(u16::from(a.about.height > 4)),
            ..a.about
        },
    );
}
