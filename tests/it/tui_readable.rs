//! A learner's first screens, readable at every size: nothing a learner needs is cut.

use attn_trace::kernels::Variant;
use attn_trace::tui::app::{self, App, Msg};
use attn_trace::tui::source;
use attn_trace::tui::{Theme, Walk};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn key(app: &mut App, c: KeyCode) {
    app::update(app, Msg::Key(KeyEvent::new(c, KeyModifiers::NONE)));
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| app::render(f, app)).unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_line_being_stepped_is_on_screen_whole() {
    // the product line of the scores pass is the longest line a learner steps through
    for (w, h) in [(120, 40), (80, 24)] {
        let mut a = App::new(Walk::builtin(), Theme::MONO, w, h);
        let t = a.tracer().unwrap();
        let trace = t.walk.trace(Variant::Mha).unwrap();
        let read = (t.cursor.saturating_sub(8)..t.cursor)
            .find(|&n| trace.events[n].buf == attn_trace::trace::Buf::K)
            .expect("a read of k before the score's write");
        let v = trace.view(read);
        let line = source::source(v.file)
            .unwrap()
            .lines()
            .nth(v.line as usize - 1)
            .unwrap()
            .trim()
            .to_string();
        assert!(line.contains("rec.read(Buf::K, k, k_base + d)"), "{line}");
        key(&mut a, KeyCode::Char('g'));
        for c in read.to_string().chars() {
            key(&mut a, KeyCode::Char(c));
        }
        key(&mut a, KeyCode::Enter);
        if w < 110 {
            key(&mut a, KeyCode::Char('2')); // the code tab
        }
        let text = screen(&a, w, h);
        // the rows of the code panel, wrapped rows joined back
        let code: String = text
            .lines()
            .map(|l| l.trim_matches('│').split("││").next().unwrap_or(""))
            .filter_map(|l| l.get(l.find(['▶', '↪']).map(|k| k + 3)?..))
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(code.contains(&line), "{w}×{h}: `{line}` is not whole in\n{text}");
    }
}
