//! The one place the app changes: a message (a key, a click, a resize, a tick) applied to it,
//! the workers' reports taken in first, each key sent to the screen that has it.

use super::{App, Msg, Popup, Screen, first_screen, not_traced_title};
use crate::tui::job::{self, JobKind};
use crate::tui::lesson::LessonRun;
use crate::tui::screens::attn_map::{self};
use crate::tui::screens::checkpoint::{self};
use crate::tui::screens::compare::{self};
use crate::tui::screens::help::{self};
use crate::tui::screens::loading::{self};
use crate::tui::screens::menu::Item;
use crate::tui::screens::mine::{self};
use crate::tui::screens::mistakes::{self};
use crate::tui::screens::picker::{self, Choice};
use crate::tui::screens::prompt::{self};
use crate::tui::screens::tracer::{self, Tracer};
use crate::tui::screens::traffic::{self};
use crate::tui::screens::train::{self};
use attn_trace_i18n::{msg, tr};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use std::sync::Arc;

/// Applies one message to the app.
pub fn update(app: &mut App, msg: Msg) {
    // whatever happened, first take in what the workers reported
    if let Some(traced) = app.train.as_mut().and_then(|t| t.poll()) {
        app.popup = None;
        app.trace_model(*traced);
    }
    if let Screen::Loading(l) = &mut app.screen
        && let Some(done) = l.poll()
    {
        let lesson = l.lesson.clone();
        match done {
            Ok(traced) => {
                let traced = Arc::new(traced);
                app.traced = Arc::clone(&traced);
                if let Some(lesson) = lesson {
                    match crate::tui::lesson::resolve(&lesson, &traced) {
                        Ok(stops) => {
                            let run = LessonRun::new(lesson, stops);
                            app.screen = Screen::Tracer(Box::new(Tracer::at_lesson(Arc::clone(&traced), run)));
                        }
                        Err(e) => {
                            app.go_back();
                            app.message(tr!("Cannot open this lesson"), e.to_string(), true);
                        }
                    }
                } else {
                    app.screen = first_screen(&traced);
                    if let (Some(level), Screen::Tracer(t)) = (app.quiz, &mut app.screen) {
                        t.start_quiz(level);
                    }
                }
            }
            Err(why) => {
                app.go_back();
                // a panic's popup is queued (below); any other failure says why here
                if let Some(why) = why {
                    app.message(JobKind::Loading.failed_title(), why, true);
                }
            }
        }
    }
    // a gradient check finished on the tracer's worker
    if let Screen::Tracer(t) = &mut app.screen {
        t.tick();
    }
    // rows of the cache simulation finished on the traffic screen's worker
    if let Screen::Traffic(t) = &mut app.screen {
        t.tick();
    }
    // a worker thread that panicked: its message, in a popup, and the app goes on
    if let Some((worker, text)) = job::take_failure() {
        app.message(worker.failed_title(), text, true);
    }
    match msg {
        Msg::Resize(w, h) => app.area = Rect::new(0, 0, w, h),
        Msg::Key(key) => key_msg(app, key),
        Msg::Mouse(m) => mouse_msg(app, m),
        Msg::Tick => {}
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
    let area = app.area;
    if let Some(popup) = &mut app.popup {
        let closes = match popup {
            Popup::Help(h) => h.key(key, area),
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
        Screen::Tracer(t) => {
            t.width = app.area.width;
            // `e` on a trained model's layer exports it, as from the attention map
            if key.code == KeyCode::Char('e')
                && !t.typing()
                && let Some(Screen::AttnMap(map)) = app.back.last()
            {
                t.message = Some(map.export_message());
                return;
            }
            match t.key(key) {
                tracer::Outcome::Stay => {}
                tracer::Outcome::Back => app.go_back(),
                tracer::Outcome::Help => app.help_with_cells(msg!("tracer"), help::KEYS),
                tracer::Outcome::Note { title, text } => app.message(&title, text, false),
                tracer::Outcome::NotTraced(v) => {
                    let text = t.traced.not_traced(v);
                    app.message(not_traced_title(), text, true);
                }
                tracer::Outcome::Snapshot => app.snapshot(),
                tracer::Outcome::Copy(text) => app.clipboard = Some(text),
            }
            app.write_quiz_report();
        }
        Screen::Compare(c) => match c.key(key) {
            compare::Outcome::Stay => {}
            compare::Outcome::Back => app.go_back(),
            compare::Outcome::Help => app.help(msg!("Compare"), compare::KEYS),
            compare::Outcome::Trace(v, n) => {
                let mut t = Tracer::new(Arc::clone(&c.traced), Some(v));
                t.cursor = n.min(t.len().saturating_sub(1));
                app.push(Screen::Tracer(Box::new(t)));
            }
        },
        Screen::Open(o) => match o.key(key) {
            Some(Choice::Back) => app.go_back(),
            Some(Choice::Path(p)) => app.open_path(p),
            Some(Choice::Builtin(name)) => app.open_builtin(name),
            Some(Choice::Help) => app.help(msg!("Open scenario"), picker::KEYS),
            None => {}
        },
        Screen::Lessons(o) => match o.key(key) {
            Some(Choice::Back) => app.go_back(),
            Some(Choice::Path(p)) => app.open_lesson(&p),
            Some(Choice::Builtin(name)) => app.open_builtin_lesson(name),
            Some(Choice::Help) => app.help(msg!("Lessons"), picker::KEYS),
            None => {}
        },
        Screen::Train => {
            let tr = app.train.get_or_insert_with(Box::default);
            match tr.key(key) {
                train::Outcome::Stay => {}
                train::Outcome::Back => app.go_back(),
                train::Outcome::Help => app.help(msg!("Train TinyGPT"), train::KEYS),
                train::Outcome::Trace(traced) => app.trace_model(*traced),
            }
        }
        Screen::Checkpoint(c) => match c.key(key) {
            // its picker lists no built-in files
            None | Some(Choice::Builtin(_)) => {}
            Some(Choice::Back) => app.go_back(),
            Some(Choice::Help) => app.help(msg!("Open checkpoint"), picker::KEYS),
            Some(Choice::Path(p)) => match checkpoint::open(&p) {
                Ok(traced) => app.trace_model(traced),
                Err(e) => app.message(tr!("Cannot open this checkpoint"), e, true),
            },
        },
        Screen::Prompt(p) => match p.key(key) {
            prompt::Outcome::Stay => {}
            prompt::Outcome::Back => app.go_back(),
            prompt::Outcome::Map(map) => app.push(Screen::AttnMap(map)),
        },
        Screen::AttnMap(m) => match m.key(key) {
            attn_map::Outcome::Stay => {}
            attn_map::Outcome::Back => app.go_back(),
            attn_map::Outcome::Help => app.help(msg!("attention map"), attn_map::KEYS),
            attn_map::Outcome::Trace(t) => app.push(Screen::Tracer(t)),
        },
        Screen::Gallery(g) => match g.key(key) {
            Some(mistakes::Pick::Open(k)) => app.open_mistake(k),
            Some(mistakes::Pick::Back) => app.go_back(),
            Some(mistakes::Pick::Help) => app.help(msg!("mistakes gallery"), mistakes::GALLERY_KEYS),
            None => {}
        },
        Screen::Traffic(tr) => match tr.key(key) {
            traffic::Outcome::Stay => {}
            traffic::Outcome::Back => app.go_back(),
            traffic::Outcome::Help => app.help(msg!("memory traffic"), traffic::KEYS),
        },
        Screen::Loading(l) => {
            if l.key(key) == loading::Outcome::Cancel {
                app.go_back();
            }
        }
        Screen::PickTrace(p) => match p.key(key) {
            Some(Choice::Back) => app.go_back(),
            Some(Choice::Help) => app.help(msg!("Grade your own kernel"), picker::KEYS),
            Some(Choice::Path(path)) => match mine::open_picked(&path) {
                Ok(view) => app.push(Screen::Mine(Box::new(view))),
                Err(e) => app.message(tr!("Cannot open this trace"), e, true),
            },
            // its picker lists no built-in files
            None | Some(Choice::Builtin(_)) => {}
        },
        Screen::Mine(m) => match m.key(key) {
            mine::Outcome::Stay => {}
            mine::Outcome::Back => app.go_back(),
            mine::Outcome::Help => app.help(msg!("yours beside the reference"), mine::KEYS),
        },
        Screen::Mistakes(s) => match s.key(key) {
            mistakes::Outcome::Stay => {}
            mistakes::Outcome::Back => app.go_back(),
            mistakes::Outcome::Help => app.help_with_cells(msg!("side by side"), mistakes::KEYS),
            mistakes::Outcome::NotTraced(v) => {
                let text = s.traced.not_traced(v);
                app.message(not_traced_title(), text, true);
            }
            // the tracer's q comes back here
            mistakes::Outcome::Trace(v, n) => {
                let mut t = Tracer::new(Arc::clone(&s.traced), Some(v));
                t.cursor = n.min(t.len().saturating_sub(1));
                app.push(Screen::Tracer(Box::new(t)));
            }
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
                && let Some(k) = menu.item_at(area, &app.traced, m.row)
            {
                menu.selected = k;
                app.choose(Item::ALL[k]);
            }
        }
        Screen::AttnMap(map) => {
            if let attn_map::Outcome::Trace(t) = map.mouse(m, area) {
                app.push(Screen::Tracer(t));
            }
        }
        Screen::Gallery(g) => {
            if let Some(mistakes::Pick::Open(k)) = g.mouse(m, area) {
                app.open_mistake(k);
            }
        }
        Screen::Mistakes(s) => s.mouse(m),
        Screen::Mine(s) => s.mouse(m),
        Screen::Compare(_)
        | Screen::PickTrace(_)
        | Screen::Open(_)
        | Screen::Lessons(_)
        | Screen::Train
        | Screen::Checkpoint(_)
        | Screen::Prompt(_)
        | Screen::Loading(_)
        | Screen::Traffic(_) => {}
    }
}
