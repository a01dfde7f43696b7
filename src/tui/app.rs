//! The app's state and the one place it changes: `update(&mut App, Msg)`. Rendering is a pure
//! function of the state ([`render`]).

use super::screens::compare::{self, Compare};
use super::screens::help;
use super::screens::menu::{self, Item, Menu};
use super::screens::open::{self, Open, Pick};
use super::screens::tracer::{self, Tracer};
use super::theme::Theme;
use super::walk::Walk;
use super::widgets::popup;
use crate::kernels::Variant;
use crate::scenario::Scenario;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};
use std::path::PathBuf;
use std::sync::Arc;

/// Everything that can happen to the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    Key(KeyEvent),
    Mouse(MouseEvent),
    /// The terminal's new size (columns, rows).
    Resize(u16, u16),
}

/// The screens; each owns its state.
#[derive(Debug)]
pub enum Screen {
    Menu(Menu),
    Tracer(Box<Tracer>),
    Compare(Box<Compare>),
    Open(Open),
}

/// A box drawn over the screen until a key closes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Popup {
    Help,
    Message { title: String, text: String, error: bool },
}

#[derive(Debug)]
pub struct App {
    pub screen: Screen,
    pub popup: Option<Popup>,
    pub theme: Theme,
    /// The terminal's area, for mouse hit-testing.
    pub area: Rect,
    pub quit: bool,
    /// The walkthrough the menu's entries step through: the built-in one, or the last opened.
    pub walk: Arc<Walk>,
    pub scenarios_dir: PathBuf,
}

/// Below this size only a short note is drawn.
const MIN_W: u16 = 24;
const MIN_H: u16 = 6;

impl App {
    /// The app showing the tracer on `walk` at its focus.
    pub fn new(walk: impl Into<Arc<Walk>>, theme: Theme, width: u16, height: u16) -> App {
        let walk: Arc<Walk> = walk.into();
        App {
            screen: Screen::Tracer(Box::new(Tracer::new(Arc::clone(&walk), None))),
            popup: None,
            theme,
            area: Rect::new(0, 0, width, height),
            quit: false,
            walk,
            scenarios_dir: open::default_dir(),
        }
    }

    /// The app showing the main menu.
    pub fn with_menu(walk: impl Into<Arc<Walk>>, theme: Theme, width: u16, height: u16) -> App {
        App {
            screen: Screen::Menu(Menu::default()),
            ..App::new(walk, theme, width, height)
        }
    }

    /// The tracer, when it is the current screen.
    pub fn tracer(&self) -> Option<&Tracer> {
        match &self.screen {
            Screen::Tracer(t) => Some(t),
            _ => None,
        }
    }

    fn message(&mut self, title: &str, text: String, error: bool) {
        self.popup = Some(Popup::Message {
            title: title.to_string(),
            text,
            error,
        });
    }

    fn open_path(&mut self, path: PathBuf) {
        match Scenario::load(&path) {
            Ok(s) => {
                let walk = Arc::new(Walk::from_scenario(&s));
                self.walk = Arc::clone(&walk);
                self.screen = Screen::Tracer(Box::new(Tracer::new(walk, None)));
            }
            Err(e) => self.message("Cannot open this scenario", e.to_string(), true),
        }
    }

    fn choose(&mut self, item: Item) {
        let walk = Arc::clone(&self.walk);
        match item {
            Item::Baseline | Item::Mha => {
                let v = if item == Item::Baseline {
                    Variant::Baseline
                } else {
                    Variant::Mha
                };
                if walk.run(v).is_none() {
                    self.message(
                        "Not traced",
                        format!("{} does not trace the {v} kernel", walk.title),
                        true,
                    );
                    return;
                }
                self.screen = Screen::Tracer(Box::new(Tracer::new(walk, Some(v))));
            }
            Item::Compare => self.screen = Screen::Compare(Box::new(Compare::new(walk))),
            Item::Open => self.screen = Screen::Open(Open::new(self.scenarios_dir.clone())),
            Item::Train => self.message(
                "Train TinyGPT",
                "Training from the menu comes with the train screen. Until then train headlessly:\n\
                 attn-trace train --help"
                    .into(),
                false,
            ),
            Item::Help => self.popup = Some(Popup::Help),
            Item::Quit => self.quit = true,
        }
    }
}

/// Applies one message to the app.
pub fn update(app: &mut App, msg: Msg) {
    match msg {
        Msg::Resize(w, h) => app.area = Rect::new(0, 0, w, h),
        Msg::Key(key) => key_msg(app, key),
        Msg::Mouse(m) => mouse_msg(app, m),
    }
}

fn key_msg(app: &mut App, key: KeyEvent) {
    if key.kind == KeyEventKind::Release {
        return;
    }
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        app.quit = true;
        return;
    }
    if let Some(popup) = &app.popup {
        let closes = match popup {
            Popup::Help => matches!(key.code, KeyCode::Esc | KeyCode::Char('?' | 'q') | KeyCode::Enter),
            Popup::Message { .. } => true,
        };
        if closes {
            app.popup = None;
        }
        return;
    }
    match &mut app.screen {
        Screen::Menu(m) => {
            if let Some(item) = m.key(key) {
                app.choose(item);
            }
        }
        Screen::Tracer(t) => match t.key(key) {
            tracer::Outcome::Stay => {}
            tracer::Outcome::Back => app.screen = Screen::Menu(Menu::default()),
            tracer::Outcome::Help => app.popup = Some(Popup::Help),
        },
        Screen::Compare(c) => match c.key(key) {
            compare::Outcome::Stay => {}
            compare::Outcome::Back => app.screen = Screen::Menu(Menu { selected: 2 }),
            compare::Outcome::Help => app.popup = Some(Popup::Help),
            compare::Outcome::Trace(v, n) => {
                let mut t = Tracer::new(Arc::clone(&c.walk), Some(v));
                t.cursor = n.min(t.len().saturating_sub(1));
                app.screen = Screen::Tracer(Box::new(t));
            }
        },
        Screen::Open(o) => match o.key(key) {
            Some(Pick::Back) => app.screen = Screen::Menu(Menu { selected: 3 }),
            Some(Pick::Path(p)) => app.open_path(p),
            None => {}
        },
    }
}

fn mouse_msg(app: &mut App, m: MouseEvent) {
    if app.popup.is_some() {
        if matches!(m.kind, MouseEventKind::Down(_)) {
            app.popup = None;
        }
        return;
    }
    let (area, theme) = (app.area, app.theme);
    match &mut app.screen {
        Screen::Tracer(t) => t.mouse(m, area, theme),
        Screen::Menu(menu) => {
            if m.kind == MouseEventKind::Down(MouseButton::Left)
                && let Some(k) = menu.item_at(area, m.row)
            {
                menu.selected = k;
                app.choose(Item::ALL[k]);
            }
        }
        Screen::Compare(_) | Screen::Open(_) => {}
    }
}

/// Draws the whole app. Never mutates it.
pub fn render(frame: &mut Frame, app: &App) {
    let area = frame.area();
    let t = app.theme;
    if area.width < MIN_W || area.height < MIN_H {
        let note = Paragraph::new(Line::styled("attn-trace: enlarge the terminal (q quits)", t.dim()))
            .wrap(Wrap { trim: true });
        frame.render_widget(note, area);
        return;
    }
    match &app.screen {
        Screen::Menu(m) => menu::render(frame, area, m, t),
        Screen::Tracer(tr) => tracer::render(frame, area, tr, t),
        Screen::Compare(c) => compare::render(frame, area, c, t),
        Screen::Open(o) => open::render(frame, area, o, t),
    }
    match &app.popup {
        Some(Popup::Help) => help::render(frame, area, t),
        Some(Popup::Message { title, text, error }) => {
            let style = if *error { t.error() } else { t.title() };
            let mut lines: Vec<Line> = text.lines().map(|l| Line::raw(l.to_string())).collect();
            lines.push(Line::styled("any key closes", t.dim()));
            popup::render(frame, area, title, lines, style, t);
        }
        None => {}
    }
}
