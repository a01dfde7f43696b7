//! Attention code as its authors write it (issue 52): a kernel's own buffer names and layouts
//! placed over the reference's tensors by bindings (a TOML file, or `"bind"` in the trace's
//! header), cells nobody needs left ungraded, a model without biases over two layers with
//! per-step scratch rows, luck seen without random inputs, and hints in plain words.
//!
//! The kernels are ours, in the layouts of code elsewhere: `examples/learner/fused_qkv.c`
//! (q, k and v side by side in one buffer, as llm.c keeps them) and `decode_cache.c` (a C
//! inference engine's decode loop: per-layer caches, `[out, in]` weights, scratch rows).

use crate::support::cli::{cmd, grade_json as grade};
use crate::support::root;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

fn example(name: &str) -> PathBuf {
    root().join("examples/learner").join(name)
}

/// Compiles `examples/learner/NAME` with `define` (a `-D` flag, or none), every warning an
/// error; the executable.
fn compile(dir: &Path, name: &str, define: Option<&str>) -> PathBuf {
    let exe = dir.join(format!(
        "{}{}",
        name.split('.').next().unwrap(),
        define.map(|d| format!("_{d}")).unwrap_or_default()
    ));
    let mut c = Command::new("gcc");
    c.args(["-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I"])
        .arg(root().join("recorders"));
    if let Some(d) = define {
        c.arg(format!("-D{d}"));
    }
    let out = c.arg(example(name)).arg("-o").arg(&exe).arg("-lm").output().unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{name} {define:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// The line of `file` (1-based) that contains `text`, which must be there once.
fn line_of(file: &Path, text: &str) -> u64 {
    let source = std::fs::read_to_string(file).unwrap();
    let found: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(text))
        .map(|(n, _)| n + 1)
        .collect();
    assert_eq!(found.len(), 1, "{text:?} in {}: {found:?}", file.display());
    found[0] as u64
}

fn result<'a>(g: &'a Value, buffer: &str) -> &'a Value {
    g["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["buffer"] == buffer)
        .unwrap_or_else(|| panic!("no result for {buffer}: {g:#}"))
}

fn hints(g: &Value) -> Vec<String> {
    g["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap().to_string())
        .collect()
}

fn errors(g: &Value) -> Vec<(String, String, Option<u64>)> {
    g["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["error"] == true)
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["buffer"].as_str().unwrap().to_string(),
                f["at"]["line"].as_u64().filter(|&l| l > 0),
            )
        })
        .collect()
}

const PACKED: &str = "scenarios/learner/packed.toml";
const DECODE: &str = "scenarios/learner/decode_layers.toml";

fn packed_bind() -> String {
    example("fused_qkv.bind.toml").display().to_string()
}

fn decode_bind() -> String {
    example("decode_cache.bind.toml").display().to_string()
}

#[test]
fn a_kernel_in_its_own_names_and_layout_is_graded_right_through_its_bindings() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "fused_qkv.c", None);
    for pass in ["forward", "backward"] {
        let (code, answer) = grade(
            PACKED,
            &["--bind", &packed_bind(), "--pass", pass],
            &[exe.clone().into()],
        );
        assert_eq!(
            (code, answer["verdict"].as_str()),
            (0, Some("correct")),
            "{pass}: {answer:#}"
        );
        assert_eq!(answer["runs"].as_array().unwrap().len(), 4, "its input and three seeds");
        let g = &answer["runs"][0]["grade"];
        // B·H = 4 rows of T·(T−1)/2 = 6 hidden pairs: not graded, whether written or not
        let (buffers, graded): (&[&str], u64) = if pass == "forward" {
            (&["scores", "probs"], 40)
        } else {
            (&["d_probs", "d_scores"], 40)
        };
        for b in buffers {
            let r = result(g, b);
            assert_eq!(
                (r["cells"].as_u64(), r["unneeded"].as_u64(), r["wrong"].as_u64()),
                (Some(graded), Some(24), Some(0)),
                "{pass} {b}: {r}"
            );
        }
        if pass == "backward" {
            // the kernel never writes d_probs or d_scores where the mask hides the pair: those
            // cells are the reference's alone, and no result needs them
            for b in ["d_q", "d_k", "d_v"] {
                assert_eq!(result(g, b)["cells"].as_u64(), Some(64), "{b}");
            }
        }
    }
}

#[test]
fn each_mistake_in_the_packed_layout_is_wrong_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let source = example("fused_qkv.c");
    let score_line = line_of(&source, "AT_WRITE(logits, lrow + j, dot * s.scale)");
    let run = |define: &str, pass: &str| {
        let exe = compile(dir.path(), "fused_qkv.c", Some(define));
        let (code, answer) = grade(
            PACKED,
            &["--bind", &packed_bind(), "--pass", pass, "--seeds", "0"],
            &[exe.into()],
        );
        assert_eq!(
            (code, answer["verdict"].as_str()),
            (3, Some("wrong")),
            "{define}: {answer:#}"
        );
        answer["runs"][0]["grade"].clone()
    };

    // query i does not see key i: the diagonal scores are never written, said in plain words,
    // at the line that writes the others
    let g = run("MISTAKE_CAUSAL", "forward");
    let d = &g["divergence"];
    assert_eq!(d["cell"]["index"].as_str(), Some("b0 h0 i0 j0"), "{g:#}");
    assert!(d["cell"]["mine"].is_null());
    assert_eq!(d["mine_elsewhere"]["line"].as_u64(), Some(score_line), "{g:#}");
    assert!(
        hints(&g).contains(
            &"the scores you never write are those of a query with its own key (j = i): the loop over the keys stops one short"
                .to_string()
        ),
        "{g:#}"
    );

    // 1/√C: every score 0.7071× the reference's, said with the scale it is
    let g = run("MISTAKE_SCALE", "forward");
    assert_eq!(g["divergence"]["mine_at"]["line"].as_u64(), Some(score_line), "{g:#}");
    assert_eq!(
        hints(&g),
        ["your scores are 0.7071× the reference's: 1/√C where 1/√D is meant"],
        "{g:#}"
    );
    let ratio = result(&g, "scores")["ratio"]["factor"].as_f64().unwrap();
    assert!((ratio - 0.5f64.sqrt()).abs() < 1e-4, "{ratio}");

    // no zeroed gradients: right values by luck, each `+=` on memory nobody wrote an error at
    // its line
    let g = run("MISTAKE_NO_ZERO", "backward");
    let mut lines: Vec<u64> = errors(&g)
        .into_iter()
        .map(|(kind, buffer, line)| {
            assert_eq!((kind.as_str(), buffer.as_str()), ("uninitialised", "d_packed"));
            line.unwrap()
        })
        .collect();
    lines.sort_unstable();
    let mut want: Vec<u64> = [
        "AT_ADD(d_packed, vj + d,",
        "AT_ADD(d_packed, qi + d,",
        "AT_ADD(d_packed, kj + d,",
    ]
    .iter()
    .map(|t| line_of(&source, t))
    .collect();
    want.sort_unstable();
    assert_eq!(lines, want, "{g:#}");
    assert!(g["results"].as_array().unwrap().iter().all(|r| r["wrong"] == 0));

    // the key read at the query's channels: k is never read, and the first wrong score is
    // written at its line
    let g = run("MISTAKE_KEY", "forward");
    assert_eq!(errors(&g), [("never_read".to_string(), "k".to_string(), None)], "{g:#}");
    let never = g["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "never_read")
        .unwrap();
    assert!(never["cell"].is_null(), "the whole of k: {never}");
    assert_eq!(g["divergence"]["mine_at"]["line"].as_u64(), Some(score_line), "{g:#}");
    // and in the backward pass, d_q is added at the line that adds d_k's (its own key offset)
    let g = run("MISTAKE_KEY", "backward");
    assert_eq!(
        g["divergence"]["mine_at"]["line"].as_u64(),
        Some(line_of(&source, "AT_ADD(d_packed, kj + d,")),
        "{g:#}"
    );
}

#[test]
fn a_decode_loop_with_per_layer_caches_and_scratch_rows_is_right_on_every_seed() {
    // a model without biases, over two layers: right on its input and on the three random
    // ones, which keep the model without biases
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "decode_cache.c", None);
    let (code, answer) = grade(DECODE, &["--bind", &decode_bind()], &[exe.into()]);
    assert_eq!((code, answer["verdict"].as_str()), (0, Some("correct")), "{answer:#}");
    assert_eq!(answer["runs"].as_array().unwrap().len(), 4);
    let g = &answer["runs"][0]["grade"];
    // every cell of both layers: 2 layers × 5 steps × 8 channels of out
    assert_eq!(result(g, "out")["cells"].as_u64(), Some(80));
    assert_eq!(result(g, "k_cache")["cells"].as_u64(), Some(40));
    // the kernel computes its own rotation angles: the tables are not data it must read
    assert!(errors(g).is_empty(), "{g:#}");
}

#[test]
fn its_head_row_scale_and_layer_offset_mistakes_are_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let source = example("decode_cache.c");
    for define in ["MISTAKE_HEAD", "MISTAKE_ROW", "MISTAKE_SCALE", "MISTAKE_LAYER"] {
        let exe = compile(dir.path(), "decode_cache.c", Some(define));
        let (code, answer) = grade(DECODE, &["--bind", &decode_bind(), "--seeds", "0"], &[exe.into()]);
        assert_eq!(
            (code, answer["verdict"].as_str()),
            (3, Some("wrong")),
            "{define}: {answer:#}"
        );
        let g = &answer["runs"][0]["grade"];
        let d = &g["divergence"];
        match define {
            // head 1 reads key/value head 1: a cell the reference does not read for it
            "MISTAKE_HEAD" => {
                assert_eq!(d["cell"]["index"].as_str(), Some("l0 b0 i0 h1 d0"), "{g:#}");
                assert_eq!(d["cell"]["stray"]["expected"].as_str(), Some("kv_h = 0"), "{g:#}");
                assert_eq!(
                    d["cell"]["stray"]["read"]["cell"].as_str(),
                    Some("v_cache[l0 b0 j0 kv_h1 d0]")
                );
            }
            // rows as wide as a query's: past the caches, in no view of their bindings
            "MISTAKE_ROW" => {
                let unmapped: Vec<_> = errors(g).into_iter().filter(|e| e.0 == "unmapped").collect();
                assert!(
                    unmapped.iter().any(|e| e.1 == "key_cache") && unmapped.iter().any(|e| e.1 == "value_cache"),
                    "{g:#}"
                );
            }
            // the scores scaled by 1/√C: the probabilities of the second step on are wrong, at
            // the line that normalises them
            "MISTAKE_SCALE" => {
                assert_eq!(d["cell"]["buffer"].as_str(), Some("probs"), "{g:#}");
                assert_eq!(
                    d["mine_at"]["line"].as_u64(),
                    Some(line_of(
                        &source,
                        "AT_WRITE(s->att, row + j, AT_READ(s->att, row + j) / total)"
                    ))
                );
            }
            // layer 1 writes and reads layer 0's cache rows: the weights of layer 1 feed layer 0's
            // cells, and the cache reads never follow the layer
            "MISTAKE_LAYER" => {
                assert_eq!(d["cell"]["index"].as_str(), Some("l0 b0 j0 kv_h0 d0"), "{g:#}");
                assert_eq!(d["cell"]["stray"]["expected"].as_str(), Some("l = 0"), "{g:#}");
                assert!(
                    hints(g)
                        .contains(&"your v_cache reads are the same for every l of att (l = 0 each time)".to_string()),
                    "{g:#}"
                );
                let k = result(g, "k_cache");
                assert_eq!(k["missing"].as_u64(), Some(20), "layer 1's rows never written: {k}");
            }
            _ => unreachable!(),
        }
    }
}

#[test]
fn a_kernel_that_never_reads_k_is_wrong_without_random_inputs() {
    // its scores are q·q; the scenario's keys are its queries, so every value is right
    let command: Vec<OsString> = vec!["python3".into(), example("never_reads_k.py").into()];
    let (code, answer) = grade("scenarios/learner/k_equals_q.toml", &["--seeds", "0"], &command);
    assert_eq!((code, answer["verdict"].as_str()), (3, Some("wrong")), "{answer:#}");
    let g = &answer["runs"][0]["grade"];
    assert!(
        g["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["wrong"] == 0 && r["missing"] == 0),
        "every value right: {g:#}"
    );
    assert_eq!(errors(g), [("never_read".to_string(), "k".to_string(), None)]);
    // and each score of a query with another position's key read that position's query: the
    // reference reads query i's own for it
    let scores = result(g, "scores");
    assert_eq!(scores["misread"].as_u64(), Some(6), "{scores}");
    let stray = &g["divergence"]["cell"]["stray"];
    assert_eq!(g["divergence"]["cell"]["index"].as_str(), Some("b0 h0 i1 j0"));
    assert_eq!(stray["read"]["cell"].as_str(), Some("q[b0 i0 h0 d0]"), "{stray}");
    assert_eq!(stray["expected"].as_str(), Some("i = 1"));
    // the text says so in words
    let out = cmd()
        .arg("grade")
        .arg(root().join("scenarios/learner/k_equals_q.toml"))
        .args(["--seeds", "0", "--"])
        .args(&command)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("✗ never reads k: your results cannot depend on it\n"),
        "{text}"
    );
    assert!(text.contains("right only by luck"), "{text}");
}

/// The reference's forward trace of mha_walkthrough as lines, header first.
fn walkthrough(dir: &Path) -> Vec<String> {
    let out = dir.join("ref.jsonl");
    cmd()
        .arg("trace")
        .arg(root().join("scenarios/mha_walkthrough.toml"))
        .args(["--variant", "mha", "--pass", "forward", "-o"])
        .arg(&out)
        .assert()
        .success();
    std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bindings_in_the_header_place_a_buffer_in_another_layout() {
    // the reference's own trace with probs renamed `weights` and laid out [b, i, h, j] (ours is
    // [b, h, i, j]), the layout said in the header: graded right
    let dir = tempfile::tempdir().unwrap();
    let lines = walkthrough(dir.path());
    let (h, t) = (2usize, 3usize);
    let moved: Vec<String> = lines[1..]
        .iter()
        .map(|l| {
            let mut e: Value = serde_json::from_str(l).unwrap();
            if e["buffer"] == "probs" {
                let off = e["offset"].as_u64().unwrap() as usize;
                let (hh, i, j) = (off / (t * t), off / t % t, off % t);
                e["buffer"] = "weights".into();
                e["offset"] = ((i * h + hh) * t + j).into();
            }
            e.to_string()
        })
        .collect();
    let header = lines[0].strip_suffix('}').unwrap().to_string()
        + r#","bind":{"weights":[{"tensor":"probs","offset":0,"strides":{"b":18,"i":6,"h":3,"j":1}}]}}"#;
    let trace = dir.path().join("mine.jsonl");
    std::fs::write(&trace, [vec![header.clone()], moved.clone()].concat().join("\n") + "\n").unwrap();
    let out = cmd()
        .arg("grade")
        .arg(root().join("scenarios/mha_walkthrough.toml"))
        .arg(&trace)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // without the binding, `weights` is nobody's name: one line, exit 2
    let plain = dir.path().join("plain.jsonl");
    std::fs::write(&plain, [vec![lines[0].clone()], moved].concat().join("\n") + "\n").unwrap();
    let out = cmd()
        .arg("grade")
        .arg(root().join("scenarios/mha_walkthrough.toml"))
        .arg(&plain)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("\"buffer\": \"weights\" is neither one of ours nor bound"),
        "{err}"
    );
    // a header binding that does not fit names the trace's line, the field and the buffer
    let bad = header.replace(r#""h":3"#, r#""hh":3"#);
    std::fs::write(&trace, format!("{bad}\n")).unwrap();
    let out = cmd()
        .arg("grade")
        .arg(root().join("scenarios/mha_walkthrough.toml"))
        .arg(&trace)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "mine.jsonl:1: \"bind\": weights: probs has no dimension \"hh\"; its dimensions are l, b, h, i, j"
        ),
        "{err}"
    );
}

#[test]
fn a_binding_that_does_not_fit_is_one_line_naming_the_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    std::fs::write(&trace, walkthrough(dir.path()).join("\n") + "\n").unwrap();
    let cases = [
        (
            "preatt = \"scorez\"\n",
            "b.toml:1: preatt: no tensor \"scorez\" in the mha forward pass; its tensors are x, w_qkv",
        ),
        (
            "[inp]\nq = { strides = { b = 36, h = 2, d = 1 } }\n",
            "b.toml:1: inp: q: no stride for its dimension i (3 indices)",
        ),
        (
            "[inp]\nq = { offset = 0, strides = { b = 36, i = 12, h = 2, d = 1 } }\nk = { offset = 2, strides = { b = 36, j = 12, h = 2, d = 1 } }\n",
            "b.toml:1: inp: k[b0 j0 h0 d0] and q[b0 i0 h1 d0] are both at offset 2",
        ),
        (
            "[inp]\nq = { offset = \"3*X\", strides = { b = 36, i = 12, h = 2, d = 1 } }\n",
            "b.toml:1: inp: q: offset: unknown size \"X\"; the sizes are B, T, S, C, H, D, H_kv, L",
        ),
        (
            "[inp]\nq = { offset = 0, strides = { b = 36, i = 12, h = 2, d = 1 } }\natt = \"probs\"\n",
            "b.toml:3: [inp].att: expected a view { offset = …, strides = { … } }; a rename such as att = \"probs\" goes above the first [table]",
        ),
        (
            "[w]\nw_qkv = { strides = { o = 4, c = 1 }, slice = { o = [8, 20] } }\n",
            "b.toml:1: w: w_qkv: the slice o ∈ [8, 20) is not within its 12 indices",
        ),
        (
            "[inp]\nq = { offset = 0, strides = { b = 36, i = \"0 - 12\", h = 2, d = 1 } }\n",
            "b.toml:1: inp: q: stride of i is -12: offsets and strides are never negative",
        ),
        ("[inp\n", "b.toml:1: "),
    ];
    let bind = dir.path().join("b.toml");
    for (text, expected) in cases {
        std::fs::write(&bind, text).unwrap();
        let out = cmd()
            .arg("grade")
            .arg(root().join("scenarios/mha_walkthrough.toml"))
            .arg(&trace)
            .arg("--bind")
            .arg(&bind)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert_eq!(err.lines().count(), 1, "{text}: {err}");
        assert!(err.contains(expected), "{text}: {err}");
    }
    // a scratch row (a stride of 0) needs the trace to say which index it holds
    std::fs::write(&bind, "[row]\nscores = { strides = { h = 3, j = 1, i = 0 } }\n").unwrap();
    let lines = walkthrough(dir.path());
    let mut mine = vec![lines[0].clone()];
    mine.push(r#"{"op":"write","buffer":"row","offset":1,"value":0.5,"file":"k.c","line":7}"#.to_string());
    std::fs::write(&trace, mine.join("\n") + "\n").unwrap();
    let out = cmd()
        .arg("grade")
        .arg(root().join("scenarios/mha_walkthrough.toml"))
        .arg(&trace)
        .arg("--bind")
        .arg(&bind)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("t.jsonl:2: \"row\" is reused along i (a stride of 0 in its binding), but no \"at\" line has said which i it holds"),
        "{err}"
    );
    // with an "at" line it lands on that row: scores[b0 h0 i2 j1], which the reference writes
    mine.insert(1, r#"{"op":"at","index":{"i":2}}"#.to_string());
    std::fs::write(&trace, mine.join("\n") + "\n").unwrap();
    let out = cmd()
        .arg("grade")
        .arg(root().join("scenarios/mha_walkthrough.toml"))
        .arg(&trace)
        .arg("--bind")
        .arg(&bind)
        .arg("--json")
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let scores = result(&j["runs"][0]["grade"], "scores");
    assert_eq!(scores["first"]["index"].as_str(), Some("b0 h0 i0 j0"), "{scores}");
    assert_eq!(
        scores["missing"].as_u64(),
        Some(11),
        "one of the 12 graded scores written: {scores}"
    );
}

/// The merge of the bounded reader (issue 54) with free buffer names: a learner's buffer names
/// and the dimensions of its `at` lines are held like source files, each name at most 4,096
/// bytes and at most 1,024 buffers and 16 dimensions, the trace refused at the line crossing
/// the bound; and the strict header knows `bind` (a misspelt `bnid` is refused).
#[test]
fn buffer_names_and_at_dimensions_are_bounded_and_the_header_knows_bind() {
    use attn_trace_analysis::learner::import::Reader;
    let dims = "\"dims\":{\"B\":1,\"T\":3,\"S\":3,\"C\":4,\"H\":2,\"D\":2,\"H_kv\":2,\"L\":1}";
    let header = format!("{{\"format\":\"attn-trace-trace\",\"version\":1,{dims}}}");
    // every access read, or the first error as "line: message"
    let read = |lines: &[String]| -> Result<usize, String> {
        let text = lines.join("\n") + "\n";
        let mut r = Reader::new(text.as_bytes(), "t.jsonl").map_err(|e| format!("{}: {}", e.line, e.message))?;
        let mut n = 0;
        while let Some(a) = r.next_access() {
            a.map_err(|e| format!("{}: {}", e.line, e.message))?;
            n += 1;
        }
        Ok(n)
    };
    let access = |buffer: &str| {
        format!("{{\"op\":\"read\",\"buffer\":\"{buffer}\",\"offset\":0,\"value\":0.5,\"file\":\"a.c\",\"line\":1}}")
    };
    // 1,024 buffers are read; the 1,025th is refused at its line (the header is line 1)
    let mut lines = vec![header.clone()];
    lines.extend((0..1024).map(|k| access(&format!("buf{k}"))));
    assert_eq!(read(&lines), Ok(1024));
    lines.push(access("buf1024"));
    let e = read(&lines).unwrap_err();
    assert!(e.starts_with("1026: \"buffer\": one buffer more than the 1,024"), "{e}");
    // a name of 4,096 bytes is read, one of 4,097 refused (through both readers)
    for slow in [false, true] {
        let line = |name: &str| {
            if slow {
                format!(
                    "{{\"buffer\":\"{name}\",\"op\":\"read\",\"offset\":0,\"value\":0.5,\"file\":\"a.c\",\"line\":1}}"
                )
            } else {
                access(name)
            }
        };
        assert_eq!(read(&[header.clone(), line(&"n".repeat(4096))]), Ok(1));
        let e = read(&[header.clone(), line(&"n".repeat(4097))]).unwrap_err();
        assert!(e.starts_with("2: \"buffer\": longer than 4,096 bytes"), "{slow}: {e}");
    }
    // an `at` line's dimensions: 16 held, the 17th refused; so is a name past 4,096 bytes
    let at = |dims: &[String]| {
        let index: Vec<String> = dims.iter().map(|d| format!("\"{d}\":0")).collect();
        format!("{{\"op\":\"at\",\"index\":{{{}}}}}", index.join(","))
    };
    let sixteen: Vec<String> = (0..16).map(|k| format!("d{k}")).collect();
    assert_eq!(read(&[header.clone(), at(&sixteen), access("x")]), Ok(1));
    let e = read(&[header.clone(), at(&sixteen), at(&["d16".to_string()])]).unwrap_err();
    assert!(e.starts_with("3: \"index\": one dimension more than the 16"), "{e}");
    let e = read(&[header.clone(), at(&["i".repeat(4097)])]).unwrap_err();
    assert!(
        e.starts_with("2: \"index\": a dimension's name longer than 4,096 bytes"),
        "{e}"
    );
    // the header's `bind` is one of its fields; a misspelling is not
    let bound = format!("{{\"format\":\"attn-trace-trace\",\"version\":1,{dims},\"bind\":{{\"preatt\":\"scores\"}}}}");
    assert_eq!(read(&[bound, access("preatt")]), Ok(1));
    let misspelt =
        format!("{{\"format\":\"attn-trace-trace\",\"version\":1,{dims},\"bnid\":{{\"preatt\":\"scores\"}}}}");
    let e = read(&[misspelt]).unwrap_err();
    assert!(e.starts_with("1: \"bnid\": not a field of the header; its fields are format, version, scenario, variant, pass, input, dims, bind"), "{e}");
}

/// A cell whose value matches but whose reads do not (decode_cache.c's cache rows as wide as a
/// query's: step 3 of layer 0 reads its values where layer 1's lie) is not shown as
/// "= 0.128765, the reference has 0.128765": the line says the value agrees and the reads do not.
#[test]
fn a_cell_wrong_only_for_its_reads_says_so_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "decode_cache.c", Some("MISTAKE_ROW"));
    let out = cmd()
        .arg("grade")
        .arg(root().join(DECODE))
        .args(["--bind", &decode_bind(), "--seeds", "0", "--"])
        .arg(&exe)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("✗ att:"))
        .unwrap_or_else(|| panic!("no att line in\n{text}"));
    assert!(line.contains("as the reference's, but computed from"), "{line}");
    assert!(line.contains("value_cache[24]"), "{line}");
}
