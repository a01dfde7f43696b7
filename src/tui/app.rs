//! The app's state and the one place it changes: `update(&mut App, Msg)`. Rendering is a pure
//! function of the state ([`render`]).

mod update;

pub use update::update;

use super::lesson::LessonRun;
use super::quiz::QuizLevel;
use super::screens::attn_map::{self, AttnMap};
use super::screens::checkpoint::{self, OpenCheckpoint};
use super::screens::compare::{self, Compare};
use super::screens::help::{self, Help};
use super::screens::lessons;
use super::screens::loading::{self, Loading};
use super::screens::menu::{self, Item, Menu};
use super::screens::mine::{self, Mine, PickTrace};
use super::screens::mistakes::{self, Gallery, SideBySide};
use super::screens::open::{self, Open};
use super::screens::prompt::{self, Prompt};
use super::screens::tracer::{self, Tracer};
use super::screens::traffic::{self, Traffic};
use super::screens::train::{self, Traced, Train};
use super::snapshot;
use super::theme::Theme;
use super::traced_scenario::TracedScenario;
use super::widgets::popup;
use attn_trace_core::kernels::Variant;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::trace::Pass;
use attn_trace_i18n::{msg, tr};
use crossterm::event::{KeyEvent, MouseEvent};
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
    /// Time passed: the training worker's reports are read (sent while it trains).
    Tick,
}

/// The screens; each owns its state.
#[derive(Debug)]
pub(crate) enum Screen {
    Menu(Menu),
    Tracer(Box<Tracer>),
    Compare(Box<Compare>),
    Open(Open),
    /// The train screen; its state is [`App::train`], which outlives the screen.
    Train,
    Checkpoint(OpenCheckpoint),
    Prompt(Box<Prompt>),
    AttnMap(Box<AttnMap>),
    /// The mistakes gallery.
    Gallery(Gallery),
    /// A correct and a mistaken run side by side.
    Mistakes(Box<SideBySide>),
    /// A scenario being traced on a worker thread.
    Loading(Box<Loading>),
    /// Global memory traffic of the plain kernel and of flash as T grows.
    Traffic(Box<Traffic>),
    /// "Grade your own kernel…": the `*.jsonl` traces of a folder.
    PickTrace(PickTrace),
    /// "Lessons…": the lesson files of a folder.
    Lessons(Open),
    /// A learner's own kernel beside the reference.
    Mine(Box<Mine>),
}

/// A box drawn over the screen until a key closes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Popup {
    /// The keys of the screen it was opened from.
    Help(Help),
    Message {
        title: String,
        text: String,
        error: bool,
    },
}

#[derive(Debug)]
pub struct App {
    pub(crate) screen: Screen,
    pub(crate) popup: Option<Popup>,
    pub(crate) theme: Theme,
    /// The terminal's area, for mouse hit-testing.
    pub(crate) area: Rect,
    pub(crate) quit: bool,
    /// The walkthrough the menu's entries step through: the built-in one, or the last opened.
    pub(crate) traced: Arc<TracedScenario>,
    pub(crate) scenarios_dir: PathBuf,
    /// The training run and its form: kept while other screens are shown, so a run goes on
    /// while its weights are traced.
    pub(crate) train: Option<Box<Train>>,
    /// Where "Open checkpoint…" lists files: the folder the train screen saves in
    /// (`checkpoints/`), or the current directory while it does not exist.
    pub(crate) checkpoints_dir: PathBuf,
    /// The screens to go back to, the latest last: `q`/`Esc` on a screen returns to the one
    /// it was opened from (compare → tracer, train → prompt → map → tracer, gallery → side by
    /// side), and below them all is the menu.
    pub(crate) back: Vec<Screen>,
    /// The menu's state while other screens are shown, so going back finds it as it was left.
    pub(crate) menu: Menu,
    /// `tui --quiz`: the tracer a scenario opens on starts in quiz mode at this level.
    pub(crate) quiz: Option<QuizLevel>,
    /// Text for the terminal's clipboard (OSC 52), taken by the terminal loop.
    pub(crate) clipboard: Option<String>,
    /// Where the tracer's `S` saves pictures ([`snapshot::DIR`]).
    pub(crate) snapshots_dir: PathBuf,
    /// `tui --quiz-report FILE`: where the quiz's and the lesson's scores are kept, rewritten
    /// (whole) after each answer; and the report last written there.
    pub(crate) quiz_report: Option<(PathBuf, String)>,
}

/// The title of the popup that refuses a kernel a scenario does not trace.
fn not_traced_title() -> &'static str {
    tr!("Not traced")
}

/// Below this size only a short note is drawn.
const MIN_W: u16 = 24;
const MIN_H: u16 = 6;

impl App {
    /// The app showing the tracer on `traced` at its focus.
    pub fn new(traced: impl Into<Arc<TracedScenario>>, theme: Theme, width: u16, height: u16) -> App {
        let traced: Arc<TracedScenario> = traced.into();
        App {
            screen: first_screen(&traced),
            popup: None,
            theme,
            area: Rect::new(0, 0, width, height),
            quit: false,
            traced,
            scenarios_dir: open::default_dir(),
            train: None,
            checkpoints_dir: PathBuf::from(train::CHECKPOINTS),
            back: Vec::new(),
            menu: Menu::default(),
            quiz: None,
            clipboard: None,
            snapshots_dir: PathBuf::from(snapshot::DIR),
            quiz_report: None,
        }
    }

    /// The tracer on `traced` at position `at` looked up in `pass` (`tui --at`, `--pass`), of
    /// `variant` (else the scenario's first variant). An unknown position is an error, for the command line.
    pub fn at(
        traced: Arc<TracedScenario>,
        variant: Option<Variant>,
        pass: Option<Pass>,
        at: Option<&str>,
        theme: Theme,
        width: u16,
        height: u16,
    ) -> Result<App, String> {
        let mut t = Tracer::new(Arc::clone(&traced), variant);
        if at.is_some() || pass.is_some() {
            t.go_to(pass, at.unwrap_or(""))?;
        }
        t.refresh();
        Ok(App {
            screen: Screen::Tracer(Box::new(t)),
            ..App::new(traced, theme, width, height)
        })
    }

    /// The tracer walking `lesson`, its stops found in `traced` first: a stop that cannot be
    /// found is an error, for the command line (`tui --lesson`).
    pub fn lesson(
        traced: Arc<TracedScenario>,
        lesson: attn_trace_core::scenario::lesson::Lesson,
        theme: Theme,
        width: u16,
        height: u16,
    ) -> Result<App, attn_trace_core::scenario::ScenarioError> {
        let stops = super::lesson::resolve(&lesson, &traced)?;
        let run = LessonRun::new(Arc::new(lesson), stops);
        Ok(App::with_lesson(traced, run, theme, width, height))
    }

    /// Quizzes at `level` in the tracer (`tui --quiz`): at once when the tracer is open, else
    /// once the scenario being opened is traced.
    #[must_use]
    pub fn with_quiz(mut self, level: Option<QuizLevel>) -> App {
        match (level, &mut self.screen) {
            (Some(level), Screen::Tracer(t)) => t.start_quiz(level),
            _ => self.quiz = level,
        }
        self
    }

    /// Keeps `path` up to date with the quiz's and lesson's scores as JSON (`tui --quiz-report`).
    #[must_use]
    pub fn with_quiz_report(mut self, path: Option<PathBuf>) -> App {
        self.quiz_report = path.map(|p| (p, String::new()));
        self
    }

    /// The app on a `width`×`height` terminal.
    #[must_use]
    pub fn sized(mut self, width: u16, height: u16) -> App {
        self.area = Rect::new(0, 0, width, height);
        self
    }

    /// The event the tracer is at, when the tracer is the current screen.
    pub fn event(&self) -> Option<usize> {
        match &self.screen {
            Screen::Tracer(t) => Some(t.cursor),
            _ => None,
        }
    }

    /// What `tui --snapshot OUT` writes: the screen drawn on a `width`×`height` terminal, as SVG
    /// or text by `out`'s extension (`.svg`, else text), once the tracer's gradient check
    /// (if one is under way) has come, as a person sees it a moment later.
    pub fn snapshot_for(&mut self, out: &std::path::Path, width: u16, height: u16) -> std::io::Result<String> {
        if let Screen::Tracer(t) = &mut self.screen {
            t.checks.wait(std::time::Duration::from_secs(60));
        }
        let buf = self.draw_offscreen(width, height)?;
        Ok(snapshot::render_for(out, &buf))
    }

    /// The tracer walking `lesson` (its stops found in `traced`), at its first stop.
    pub(crate) fn with_lesson(
        traced: Arc<TracedScenario>,
        lesson: LessonRun,
        theme: Theme,
        width: u16,
        height: u16,
    ) -> App {
        App {
            screen: Screen::Tracer(Box::new(Tracer::at_lesson(Arc::clone(&traced), lesson))),
            ..App::new(traced, theme, width, height)
        }
    }

    /// The app drawn on a `width`×`height` screen off-screen: what `S` and `tui --snapshot`
    /// save.
    pub(crate) fn draw_offscreen(&self, width: u16, height: u16) -> std::io::Result<ratatui::buffer::Buffer> {
        let mut term =
            ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).map_err(std::io::Error::other)?;
        term.draw(|f| render(f, self)).map_err(std::io::Error::other)?;
        Ok(term.backend().buffer().clone())
    }

    /// `S` in the tracer: the screen as it is drawn now, saved as SVG and text in
    /// [`snapshot::DIR`]; the status bar says where.
    fn snapshot(&mut self) {
        let Screen::Tracer(t) = &self.screen else { return };
        let name = snapshot::name(&t.traced, t.variant, t.cursor);
        let saved = self
            .draw_offscreen(self.area.width, self.area.height)
            .and_then(|buf| snapshot::save(&self.snapshots_dir, &name, &buf));
        let text = match saved {
            Ok(svg) => tr!(
                "saved {svg} and {txt}",
                svg = svg.display(),
                txt = svg.with_extension("txt").display()
            ),
            Err(e) => tr!("could not save the snapshot: {e}", e),
        };
        if let Screen::Tracer(t) = &mut self.screen {
            t.message = Some(text);
        }
    }

    /// Rewrites `--quiz-report` when the tracer's scores changed; a failure is said in the
    /// status bar.
    fn write_quiz_report(&mut self) {
        let (Some((path, last)), Screen::Tracer(t)) = (&mut self.quiz_report, &mut self.screen) else {
            return;
        };
        let report = crate::tui::report::report(&t.traced, t.quiz.as_ref(), t.lesson.as_ref());
        if report == *last {
            return;
        }
        match attn_trace_core::files::atomic::write(path, report.as_bytes()) {
            Ok(()) => *last = report,
            Err(e) => t.message = Some(tr!("could not write {path}: {e}", path = path.display(), e)),
        }
    }

    /// The app showing the main menu.
    pub(crate) fn with_menu(traced: impl Into<Arc<TracedScenario>>, theme: Theme, width: u16, height: u16) -> App {
        App {
            screen: Screen::Menu(Menu::default()),
            ..App::new(traced, theme, width, height)
        }
    }

    /// The tracer, when it is the current screen.
    #[cfg(test)]
    pub(crate) fn tracer(&self) -> Option<&Tracer> {
        match &self.screen {
            Screen::Tracer(t) => Some(t),
            _ => None,
        }
    }

    /// The app opening `scenario`: traced on a worker thread behind a progress screen, then
    /// shown like [`App::new`] (on `variant` when given).
    pub fn opening(scenario: Scenario, variant: Option<Variant>, theme: Theme, width: u16, height: u16) -> App {
        App {
            screen: Screen::Loading(Box::new(Loading::start(scenario, variant))),
            ..App::new(TracedScenario::builtin(), theme, width, height)
        }
    }

    /// The app showing a learner's own kernel beside the reference (`tui --mine`); `q` goes on
    /// to the tracer of `scenario`, traced meanwhile.
    pub fn with_mine(scenario: Scenario, view: Mine, theme: Theme, width: u16, height: u16) -> App {
        let mut app = App::opening(scenario, None, theme, width, height);
        let loading = std::mem::replace(&mut app.screen, Screen::Mine(Box::new(view)));
        app.back.push(loading);
        app
    }

    /// Does the app need [`Msg::Tick`]s? While a training worker runs, so its reports are read,
    /// while a scenario is traced, so its progress shows, while the tracer's gradient check is
    /// computed, so it shows when it is done, and while the cache misses of the memory traffic
    /// screen are simulated, so their rows show as they come.
    pub(crate) fn wants_tick(&self) -> bool {
        self.train.as_ref().is_some_and(|t| t.is_live())
            || matches!(self.screen, Screen::Loading(_))
            || matches!(&self.screen, Screen::Tracer(t) if t.checks.busy())
            || matches!(&self.screen, Screen::Traffic(t) if t.busy())
    }

    /// Back to the screen the current one was opened from, else to the menu.
    fn go_back(&mut self) {
        self.screen = self.back.pop().unwrap_or_else(|| Screen::Menu(self.menu.clone()));
    }

    /// Opens `next` over the current screen, which `q`/`Esc` on it returns to. The menu is
    /// not stacked: its state is kept in [`App::menu`].
    fn push(&mut self, next: Screen) {
        match std::mem::replace(&mut self.screen, next) {
            Screen::Menu(m) => self.menu = m,
            here => self.back.push(here),
        }
    }

    /// The prompt screen on trained weights.
    fn trace_model(&mut self, traced: Traced) {
        self.push(Screen::Prompt(Box::new(Prompt::new(traced.model, traced.origin))));
    }

    /// The `?` overlay with a screen's keys.
    fn help(&mut self, screen: &'static str, keys: &'static [(&'static str, &'static str)]) {
        self.popup = Some(Popup::Help(Help::new(screen, keys)));
    }

    /// The `?` overlay of a screen with a memory panel: its keys and the cells' styles.
    fn help_with_cells(&mut self, screen: &'static str, keys: &'static [(&'static str, &'static str)]) {
        self.popup = Some(Popup::Help(Help::with_cells(screen, keys)));
    }

    /// A screen needs a kernel the menu's scenario does not trace: one popup, the same
    /// everywhere ([`Walk::not_traced`]).
    fn refuse(&mut self, v: Variant) {
        let text = self.traced.not_traced(v);
        self.message(not_traced_title(), text, true);
    }

    fn message(&mut self, title: &str, text: String, error: bool) {
        self.popup = Some(Popup::Message {
            title: title.to_string(),
            text,
            error,
        });
    }

    /// A lesson from the menu's list: its scenario traced behind the progress screen, then the
    /// tracer at its first stop. A bad file or stop is a popup.
    fn open_lesson(&mut self, path: &std::path::Path) {
        let opened = attn_trace_core::scenario::lesson::Lesson::load(path).and_then(|lesson| {
            let s = Scenario::load(&lesson.scenario)?;
            Ok((lesson, s))
        });
        match opened {
            Ok((lesson, s)) => {
                let mut loading = Loading::start(s, None);
                loading.lesson = Some(Arc::new(lesson));
                self.push(Screen::Loading(Box::new(loading)));
            }
            Err(e) => self.message(tr!("Cannot open this lesson"), e.to_string(), true),
        }
    }

    /// A shipped scenario built into the binary, from the picker.
    fn open_builtin(&mut self, name: &str) {
        match Scenario::shipped(name) {
            Some(s) => self.screen = Screen::Loading(Box::new(Loading::start(s, None))),
            None => self.message(
                tr!("Cannot open this scenario"),
                tr!("{name} is not a shipped scenario", name).to_string(),
                true,
            ),
        }
    }

    /// A shipped lesson built into the binary, with the shipped scenario it follows.
    fn open_builtin_lesson(&mut self, name: &str) {
        match attn_trace_core::scenario::lesson::Lesson::shipped(name) {
            Some(Ok((lesson, s))) => {
                let mut loading = Loading::start(s, None);
                loading.lesson = Some(Arc::new(lesson));
                self.push(Screen::Loading(Box::new(loading)));
            }
            Some(Err(e)) => self.message(tr!("Cannot open this lesson"), e.to_string(), true),
            None => self.message(
                tr!("Cannot open this lesson"),
                tr!("{name} is not a shipped lesson", name).to_string(),
                true,
            ),
        }
    }

    fn open_path(&mut self, path: PathBuf) {
        match Scenario::load(&path) {
            Ok(s) => self.screen = Screen::Loading(Box::new(Loading::start(s, None))),
            Err(e) => self.message(tr!("Cannot open this scenario"), e.to_string(), true),
        }
    }

    fn choose(&mut self, item: Item) {
        let traced = Arc::clone(&self.traced);
        match item {
            Item::Baseline | Item::Mha => {
                let v = if item == Item::Baseline {
                    Variant::Baseline
                } else {
                    crate::tui::screens::menu::heads_variant(&traced)
                };
                if traced.run(v).is_none() {
                    self.refuse(v);
                    return;
                }
                self.push(Screen::Tracer(Box::new(Tracer::new(traced, Some(v)))));
            }
            Item::Compare => {
                // Compare puts two kernels side by side: baseline and MHA, or MHA and GQA
                let compare = Compare::new(traced);
                let (left, right) = compare.pair();
                match [left, right].into_iter().find(|&v| compare.traced.run(v).is_none()) {
                    Some(v) => self.refuse(v),
                    None => self.push(Screen::Compare(Box::new(compare))),
                }
            }
            Item::Builtin => {
                if !traced.is_builtin() {
                    self.traced = Arc::new(TracedScenario::builtin());
                }
            }
            Item::Open => self.push(Screen::Open(open::list(self.scenarios_dir.clone()))),
            Item::Train => {
                self.train.get_or_insert_with(Box::default);
                self.push(Screen::Train);
            }
            Item::OpenCheckpoint => {
                let dir = Some(self.checkpoints_dir.clone())
                    .filter(|d| d.is_dir())
                    .unwrap_or_else(|| PathBuf::from("."));
                self.push(Screen::Checkpoint(checkpoint::list(dir)));
            }
            Item::Mistakes => self.push(Screen::Gallery(Gallery::default())),
            Item::Mine => self.push(Screen::PickTrace(mine::list(PathBuf::from(".")))),
            Item::Traffic => self.push(Screen::Traffic(Box::default())),
            Item::Lessons => self.push(Screen::Lessons(lessons::list(lessons::default_dir()))),
            Item::Modern => self.push(Screen::Open(open::modern(self.scenarios_dir.clone()))),
            Item::Help => self.help(msg!("menu"), menu::KEYS),
            Item::Quit => self.quit = true,
        }
    }

    /// Opens gallery entry `k` side by side, over the gallery (which keeps `k` highlighted).
    fn open_mistake(&mut self, k: usize) {
        let Screen::Gallery(g) = &mut self.screen else { return };
        g.selected = k;
        let view = g
            .scenario(k)
            .and_then(|s| SideBySide::new(Arc::new(TracedScenario::from_scenario(&s))));
        match view {
            Some(v) => self.push(Screen::Mistakes(Box::new(v))),
            None => self.message(
                tr!("Cannot open this mistake"),
                tr!("entry {n} has no mistaken run", n = k + 1),
                true,
            ),
        }
    }
}

/// A scenario with mistakes opens side by side with its correct run; any other in the tracer.
fn first_screen(traced: &Arc<TracedScenario>) -> Screen {
    match SideBySide::new(Arc::clone(traced)) {
        Some(view) => Screen::Mistakes(Box::new(view)),
        None => Screen::Tracer(Box::new(Tracer::new(Arc::clone(traced), None))),
    }
}

/// Draws the whole app. Never mutates it.
pub fn render(frame: &mut Frame, app: &App) {
    let area = frame.area();
    let t = app.theme;
    if area.width < MIN_W || area.height < MIN_H {
        let note = Paragraph::new(Line::styled(tr!("attn-trace: enlarge the terminal (q quits)"), t.dim()))
            .wrap(Wrap { trim: true });
        frame.render_widget(note, area);
        return;
    }
    match &app.screen {
        Screen::Menu(m) => menu::render(frame, area, m, &app.traced, t),
        Screen::Tracer(tr) => tracer::render(frame, area, tr, t),
        Screen::Compare(c) => compare::render(frame, area, c, t),
        Screen::Open(o) => open::render(frame, area, o, t),
        Screen::Lessons(o) => open::render_as(frame, area, o, msg!("lesson"), tr!(" lessons "), t),
        Screen::Train => {
            if let Some(tr) = &app.train {
                train::render(frame, area, tr, t);
            }
        }
        Screen::Checkpoint(c) => checkpoint::render(frame, area, c, t),
        Screen::Prompt(p) => prompt::render(frame, area, p, t),
        Screen::AttnMap(m) => attn_map::render(frame, area, m, t),
        Screen::Gallery(g) => mistakes::render_gallery(frame, area, g, t),
        Screen::Mistakes(s) => mistakes::render(frame, area, s, t),
        Screen::Loading(l) => loading::render(frame, area, l, t),
        Screen::Traffic(tr) => traffic::render(frame, area, tr, t),
        Screen::PickTrace(p) => mine::render_picker(frame, area, p, t),
        Screen::Mine(m) => mine::render(frame, area, m, t),
    }
    match &app.popup {
        Some(Popup::Help(h)) => help::render(frame, area, h, t),
        Some(Popup::Message { title, text, error }) => {
            let style = if *error { t.error() } else { t.title() };
            let mut lines: Vec<Line> = text.lines().map(|l| Line::raw(l.to_string())).collect();
            lines.push(Line::styled(tr!("any key closes"), t.dim()));
            popup::render(frame, area, title, lines, style, t);
        }
        None => {}
    }
}
