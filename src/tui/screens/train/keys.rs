//! What each key does on the "Train TinyGPT" screen: on the form, move between fields, edit
//! them and start the run; on a run, pause, save, stop, trace and start anew.

use super::form::{ATTENTIONS, Field, Form, MAX_FIELD};
use super::progress::{RunState, RunView, run_origin};
use super::worker::{Cmd, Training};
use super::{Outcome, Session, Traced, Train};
use attn_trace_i18n::tr;
use attn_trace_model::BUILTIN;
use crossterm::event::{KeyCode, KeyEvent};

impl Form {
    fn key(&mut self, key: KeyEvent) -> FormKey {
        let n = Field::ALL.len() + 1;
        let field = Field::ALL.get(self.focus).copied();
        match key.code {
            KeyCode::Esc => return FormKey::Back,
            KeyCode::Enter => return FormKey::Start,
            KeyCode::Up | KeyCode::BackTab => self.focus = (self.focus + n - 1) % n,
            KeyCode::Down | KeyCode::Tab => self.focus = (self.focus + 1) % n,
            KeyCode::Left | KeyCode::Right if field == Some(Field::Dataset) => {
                let names: Vec<&str> = BUILTIN.iter().map(|(name, _)| *name).collect();
                self.cycle(Field::Dataset, &names, key.code == KeyCode::Right);
            }
            KeyCode::Left | KeyCode::Right if field == Some(Field::Rope) => {
                self.cycle(
                    Field::Rope,
                    &attn_trace_model::spec::rope_names(),
                    key.code == KeyCode::Right,
                );
            }
            KeyCode::Left | KeyCode::Right if field == Some(Field::Attention) => {
                self.cycle(Field::Attention, &ATTENTIONS, key.code == KeyCode::Right);
            }
            KeyCode::Backspace => {
                if let Some(f) = field {
                    self.values[f as usize].pop();
                }
            }
            KeyCode::Delete => {
                if let Some(f) = field {
                    self.values[f as usize].clear();
                }
            }
            KeyCode::Char(c) => {
                if let Some(f) = field
                    && self.values[f as usize].len() < MAX_FIELD
                {
                    self.values[f as usize].push(c);
                }
            }
            _ => {}
        }
        FormKey::Stay
    }
}

enum FormKey {
    Stay,
    Back,
    Start,
}

impl Train {
    pub(crate) fn key(&mut self, key: KeyEvent) -> Outcome {
        self.message = None;
        let Some(session) = &mut self.session else {
            let outcome = self.form.key(key);
            self.form.checked = self.form.check();
            return match outcome {
                FormKey::Stay => Outcome::Stay,
                FormKey::Back => Outcome::Back,
                FormKey::Start => {
                    self.start();
                    Outcome::Stay
                }
            };
        };
        let p = &session.progress;
        let send = |cmd: Cmd| session.worker.as_ref().is_some_and(|w| w.send(cmd));
        let running = matches!(p.state, RunState::Running | RunState::Starting);
        match key.code {
            KeyCode::Char(' ') => {
                let cmd = match p.state {
                    RunState::Running => Some(Cmd::Pause),
                    RunState::Paused => Some(Cmd::Resume),
                    _ => None,
                };
                if let Some(cmd) = cmd {
                    send(cmd);
                }
            }
            KeyCode::Char('s') => {
                let path = p.spec.save.clone();
                if matches!(p.state, RunState::Failed(_) | RunState::Starting) || !send(Cmd::Save(path.clone())) {
                    self.message = Some(tr!("nothing to save yet").into());
                } else {
                    self.awaiting += 1;
                    self.message = Some(tr!("saving to {path} …", path = path.display()));
                }
            }
            KeyCode::Char('x') if running || p.state == RunState::Paused => {
                send(Cmd::Finish);
                self.message = Some(tr!("stopping after this step …").into());
            }
            KeyCode::Char('t') => {
                if let (RunState::Finished { .. }, Some(model)) = (&p.state, &p.model) {
                    return Outcome::Trace(Box::new(Traced {
                        model: (**model).clone(),
                        origin: run_origin(p, p.step),
                    }));
                }
                if matches!(p.state, RunState::Running | RunState::Paused) && send(Cmd::Snapshot) {
                    self.pending_trace = true;
                    self.awaiting += 1;
                    self.message = Some(tr!("taking a snapshot of the weights …").into());
                } else {
                    self.message = Some(tr!("no weights to trace yet").into());
                }
            }
            KeyCode::Char('l') => self.log_scale = !self.log_scale,
            KeyCode::Char('n') => {
                if p.is_done() {
                    // dropping the session joins its (idle) thread
                    self.session = None;
                    self.pending_trace = false;
                    self.awaiting = 0;
                } else {
                    self.message = Some(tr!("still training: x stops it first").into());
                }
            }
            KeyCode::Char('?') => return Outcome::Help,
            KeyCode::Char('q') | KeyCode::Esc => return Outcome::Back,
            _ => {}
        }
        Outcome::Stay
    }

    /// Starts the run the form describes, or points at what is wrong.
    fn start(&mut self) {
        let checked = self.form.check();
        match checked.spec {
            Some(spec) => {
                let worker = Training::spawn(spec.clone());
                self.session = Some(Session {
                    progress: RunView::new(spec),
                    worker: Some(worker),
                });
            }
            None => {
                let bad = checked
                    .errors
                    .iter()
                    .position(Option::is_some)
                    .unwrap_or(self.form.focus);
                self.form.focus = bad;
                self.message = Some(tr!("fix the fields marked ✗ first").into());
            }
        }
    }
}
