//! The properties of issue 54, in process.
//!
//! - The trace reader: whatever the bytes (a valid trace mutated, lines past the bound, numbers
//!   beyond any float, unknown keys, invalid UTF-8), it reads or refuses without a panic, and
//!   each refusal is one line of bounded length, free of control characters, naming its line.
//! - Every picker of the TUI (scenarios, lessons, checkpoints, traces): whatever the folder holds
//!   (FIFOs, devices, giants, folders and dangling links with the right extension, junk), listing
//!   it and opening each entry finish in bounded time, without a panic, each refusal one line.

use crate::tui::screens::{checkpoint, lessons, mine, open};
use attn_trace_analysis::learner::import::Reader;
use attn_trace_core::scenario::Scenario;
use attn_trace_core::scenario::lesson::Lesson;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Longest refusal the reader may give (its echoes of the trace are cut short).
const MAX_MESSAGE: usize = 600;

const HEADER: &str = "{\"format\":\"attn-trace-trace\",\"version\":1,\"scenario\":\"s.toml\",\"variant\":\"mha\",\"pass\":\"forward\",\"input\":0,\"dims\":{\"B\":1,\"T\":3,\"S\":3,\"C\":4,\"H\":2,\"D\":2,\"H_kv\":2,\"L\":1}}";
const ACCESS: &str = "{\"op\":\"read\",\"buffer\":\"q\",\"offset\":3,\"value\":0.25,\"file\":\"k.py\",\"line\":7}";

/// One edit of a line: a byte inserted, removed or replaced, a token swapped for a hostile one,
/// or the line made longer than any bound.
#[derive(Clone, Debug)]
enum Edit {
    Insert(usize, u8),
    Remove(usize),
    Token(usize, &'static str),
    Long(usize, u8),
}

const TOKENS: &[&str] = &[
    "1e400",
    "-1e999999999",
    "99999999999999999999999",
    "\"nan\"",
    "null",
    "[]",
    "{}",
    "\"\\u0000\"",
    "\"\\ud800\"",
    "\u{1b}[31m",
    "\"seed\":3,",
    "\"Q\":7,",
    ",\"x\":{\"y\":[1,2,{\"z\":3}]}",
    "\"",
    "\\",
    "\n",
];

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(k, b)| Edit::Insert(k, b)),
        3 => any::<usize>().prop_map(Edit::Remove),
        4 => (any::<usize>(), prop::sample::select(TOKENS)).prop_map(|(k, t)| Edit::Token(k, t)),
        1 => (prop_oneof![Just(70_000usize), Just(200_000), 10usize..5000], any::<u8>())
            .prop_map(|(n, b)| Edit::Long(n, b)),
    ]
}

fn apply(line: &str, e: &Edit) -> Vec<u8> {
    let mut b = line.as_bytes().to_vec();
    let at = |k: usize, len: usize| if len == 0 { 0 } else { k % (len + 1) };
    match e {
        Edit::Insert(k, x) => b.insert(at(*k, b.len()), *x),
        Edit::Remove(k) if !b.is_empty() => {
            let k = k % b.len();
            b.remove(k);
        }
        Edit::Remove(_) => {}
        Edit::Token(k, t) => {
            let k = at(*k, b.len());
            b.splice(k..k, t.bytes());
        }
        Edit::Long(n, x) => {
            // inside a string value, where a long name would be
            let k = b.iter().position(|&c| c == b':').map_or(0, |p| p + 2).min(b.len());
            let fill = if x.is_ascii_graphic() && *x != b'"' && *x != b'\\' {
                *x
            } else {
                b'a'
            };
            b.splice(k..k, std::iter::repeat_n(fill, *n));
        }
    }
    b
}

/// A trace: the header and a few accesses, each line edited or not.
fn trace() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::option::weighted(0.5, edit()),
        prop::collection::vec(prop::option::weighted(0.4, edit()), 0..6),
    )
        .prop_map(|(h, lines)| {
            let mut out = match h {
                Some(e) => apply(HEADER, &e),
                None => HEADER.as_bytes().to_vec(),
            };
            out.push(b'\n');
            for e in lines {
                match e {
                    Some(e) => out.extend(apply(ACCESS, &e)),
                    None => out.extend(ACCESS.bytes()),
                }
                out.push(b'\n');
            }
            out
        })
}

/// A refusal is one line, short, without control characters, and names the trace.
fn check_message(m: &str) -> Result<(), TestCaseError> {
    prop_assert!(m.len() <= MAX_MESSAGE, "{} bytes: {m:.200}", m.len());
    prop_assert!(!m.chars().any(char::is_control), "a control character in {m:?}");
    prop_assert!(m.starts_with("t.jsonl"), "{m}");
    Ok(())
}

proptest! {
    #![proptest_config(crate::tests::support::proptest_config(256))]

    #[test]
    fn the_trace_reader_reads_or_refuses_in_one_short_line(bytes in trace()) {
        match Reader::new(bytes.as_slice(), "t.jsonl") {
            Err(e) => check_message(&e.to_string())?,
            Ok(mut r) => {
                let mut n = 0;
                while let Some(a) = r.next_access() {
                    n += 1;
                    prop_assert!(n < 100, "more accesses than lines");
                    if let Err(e) = a {
                        check_message(&e.to_string())?;
                        break;
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the pickers

/// What may sit in a folder under a picker's extension.
#[derive(Clone, Copy, Debug)]
enum Thing {
    /// A few bytes of junk.
    Junk(u8),
    /// A valid file of its kind (a scenario, a lesson, a trace).
    Valid,
    /// Zeros, sparse, no newline: far larger than any file the tool reads.
    Giant,
    Fifo,
    Folder,
    /// A link to a character device.
    Device,
    Dangling,
    /// A link to itself.
    Loop,
}

fn thing() -> impl Strategy<Value = Thing> {
    prop_oneof![
        2 => any::<u8>().prop_map(Thing::Junk),
        2 => Just(Thing::Valid),
        1 => Just(Thing::Giant),
        2 => Just(Thing::Fifo),
        1 => Just(Thing::Folder),
        1 => Just(Thing::Device),
        1 => Just(Thing::Dangling),
        1 => Just(Thing::Loop),
    ]
}

const SCENARIO: &str = "title = \"small\"\n[shape]\nB = 1\nT = 3\nC = 4\nH = 2\n";

fn make(dir: &Path, name: &str, ext: &str, t: Thing) {
    let p = dir.join(format!("{name}.{ext}"));
    match t {
        Thing::Junk(b) => std::fs::write(&p, vec![b; usize::from(b) % 97]).unwrap(),
        Thing::Valid => {
            let text = match ext {
                "jsonl" => format!(
                    "{}\n{ACCESS}\n",
                    HEADER.replace(
                        "s.toml",
                        &dir.join("s.toml").display().to_string().replace('\\', "\\\\")
                    )
                ),
                "toml" if name.starts_with('l') => format!(
                    "title = \"L\"\nscenario = \"{}\"\n[[stop]]\nat = \"#1\"\nnote = \"n\"\n",
                    dir.join("s.toml").display()
                ),
                "toml" => SCENARIO.to_string(),
                _ => String::new(),
            };
            std::fs::write(&p, text).unwrap();
        }
        Thing::Giant => {
            std::fs::write(&p, b"{\"format\":\"attn-trace-trace\",\"version\":1,\"scenario\":\"").unwrap();
            std::fs::OpenOptions::new()
                .write(true)
                .open(&p)
                .unwrap()
                .set_len(256 << 20)
                .unwrap();
        }
        Thing::Fifo => {
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid C string; mkfifo only creates the node.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
        Thing::Folder => std::fs::create_dir(&p).unwrap(),
        Thing::Device => std::os::unix::fs::symlink("/dev/zero", &p).unwrap(),
        Thing::Dangling => std::os::unix::fs::symlink(dir.join("nowhere"), &p).unwrap(),
        Thing::Loop => std::os::unix::fs::symlink(&p, &p).unwrap(),
    }
}

/// Runs `work` on a thread of its own; fails when it takes longer than `limit` (a picker
/// waiting on a FIFO) or panics.
fn within(limit: Duration, work: impl FnOnce() + Send + 'static) -> Result<(), TestCaseError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).is_ok();
        let _ = tx.send(ok);
    });
    match rx.recv_timeout(limit) {
        Ok(true) => Ok(()),
        Ok(false) => Err(TestCaseError::fail("panicked")),
        Err(_) => Err(TestCaseError::fail(format!("still busy after {limit:?}: blocked?"))),
    }
}

/// One line, of bounded length.
fn one_line(what: &str, e: &str) {
    assert!(!e.contains('\n'), "{what}: {e}");
    assert!(e.len() < 2000, "{what}: {} bytes", e.len());
}

proptest! {
    #![proptest_config(crate::tests::support::proptest_config(24))]

    #[test]
    fn every_picker_lists_and_opens_whatever_the_folder_holds(things in prop::collection::vec(thing(), 1..6)) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        std::fs::write(d.join("s.toml"), SCENARIO).unwrap();
        for (k, &t) in things.iter().enumerate() {
            for ext in ["toml", "jsonl", "safetensors"] {
                make(&d, &format!("x{k}"), ext, t);
                if ext == "toml" {
                    make(&d, &format!("l{k}"), ext, t);
                }
            }
        }
        let d2 = d.clone();
        within(Duration::from_secs(20), move || {
            let d = d2;
            let scenarios = open::list(d.clone());
            for e in &scenarios.entries {
                if let Err(why) = &e.info {
                    one_line("scenario summary", why);
                }
                if let Err(why) = Scenario::load(&e.path) {
                    one_line("scenario", &why.to_string());
                }
            }
            let lessons = lessons::list(d.clone());
            for e in &lessons.entries {
                if let Err(why) = Lesson::load(&e.path) {
                    one_line("lesson", &why.to_string());
                }
            }
            let checkpoints = checkpoint::list(d.clone());
            for e in &checkpoints.entries {
                if let Err(why) = checkpoint::open(&e.path) {
                    one_line("checkpoint", &why);
                }
            }
            let traces = mine::list(d.clone());
            for e in &traces.entries {
                if let Err(why) = &e.info {
                    one_line("trace summary", why);
                }
                if let Err(why) = mine::open_picked(&e.path) {
                    one_line("trace", &why);
                }
            }
            // a typed path goes to the same functions; the folder itself, typed, is entered
            let _ = mine::open_picked(&PathBuf::from(&d));
        })?;
    }
}

#[test]
fn the_train_form_refuses_a_fifo_and_a_device_as_data_and_as_the_place_to_save_to() {
    use crate::tui::screens::train::{Field, Form};
    let dir = tempfile::tempdir().unwrap();
    make(dir.path(), "pipe", "txt", Thing::Fifo);
    for (field, path, needle) in [
        (Field::Dataset, dir.path().join("pipe.txt"), "FIFO"),
        (Field::Dataset, PathBuf::from("/dev/zero"), "character device"),
        (Field::Save, dir.path().join("pipe.txt"), "FIFO"),
    ] {
        let mut form = Form::default();
        form.set(field, &path.display().to_string());
        let checked = form.check();
        let e = checked.errors[field as usize].clone().unwrap_or_default();
        assert!(e.contains(needle), "{field:?} = {}: {e:?}", path.display());
        assert!(checked.spec.is_none());
    }
}
