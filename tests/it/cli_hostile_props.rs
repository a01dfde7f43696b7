//! The property of issue 34: for any scenario, from tiny sizes to the largest and beyond, with
//! every variant, pass and option, and every `--variant` and `--pass` asked of `explain`, the
//! commands `check`, `run`, `io`, `trace` and `explain` give a result (exit 0) or refuse in one line (exit
//! 2, at most two lines on stderr), under a 2 GB address-space limit and a time limit: no panic,
//! no abort, no wait. Generated scenarios are mostly valid and small (so they run) with extreme
//! sizes mixed in (so the guards and their arithmetic are tried).

use assert_cmd::Command;
use proptest::prelude::*;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

/// The address space each command may use.
const AS_LIMIT: u64 = 2 << 30;
/// The longest any command may take (a trace within the budget runs in a few seconds).
const TIME_LIMIT: Duration = Duration::from_secs(30);

/// A size: mostly small, sometimes the largest (2²⁰), one above it, zero, or beyond `u64`.
fn size() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (1u64..=4).prop_map(|n| n.to_string()),
        2 => Just("8".to_string()),
        2 => Just("1048576".to_string()),
        1 => Just("1048577".to_string()),
        1 => Just("0".to_string()),
        1 => Just("4294967296".to_string()),
        1 => Just("18446744073709551616".to_string()),
    ]
}

/// A subset of `names`, in a shuffled order, as a TOML list (rarely empty).
fn list(names: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![1 => Just(0usize), 8 => 1..=names.len()]
        .prop_flat_map(move |k| proptest::sample::subsequence(names, k))
        .prop_shuffle()
        .prop_map(|v| {
            format!(
                "[{}]",
                v.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
            )
        })
}

const VARIANTS: &[&str] = &["baseline", "mha", "flash", "gqa"];
const PASSES: &[&str] = &["forward", "backward"];

/// The `[shape]` lines of a scenario whose sizes fit together (C = H·D, H_kv dividing H, S
/// with separate projections), one size at times replaced by an extreme one.
fn coherent_shape() -> impl Strategy<Value = (String, bool)> {
    (
        (
            1usize..=3,
            1usize..=5,
            prop::sample::select(&[1usize, 2, 4][..]),
            prop::sample::select(&[1usize, 2, 4][..]),
        ),
        prop::option::of(prop::sample::select(&[1usize, 2, 4][..])),
        prop::option::of(1usize..=5),
        any::<bool>(),
        prop::option::weighted(0.2, (0usize..6, size())),
    )
        .prop_map(|((b, t, h, d), h_kv, s, separate, extreme)| {
            let mut keys: Vec<(&str, String)> = vec![
                ("B", b.to_string()),
                ("T", t.to_string()),
                ("C", (h * d).to_string()),
                ("H", h.to_string()),
            ];
            if let Some(kv) = h_kv.filter(|kv| h % kv == 0) {
                keys.push(("H_kv", kv.to_string()));
            }
            if let Some(s) = s.filter(|_| separate) {
                keys.push(("S", s.to_string()));
            }
            if let Some((k, v)) = extreme {
                let k = k % keys.len();
                keys[k].1 = v;
            }
            (keys.iter().map(|(k, v)| format!("{k} = {v}\n")).collect(), separate)
        })
}

/// The `[shape]` lines of a scenario with any sizes, most of which do not fit together.
fn wild_shape() -> impl Strategy<Value = (String, bool)> {
    (
        size(),
        size(),
        size(),
        [
            prop::option::of(size()),
            prop::option::of(size()),
            prop::option::of(size()),
        ],
        any::<bool>(),
    )
        .prop_map(|(b, t, c, [h, s, h_kv], separate)| {
            let mut text = format!("B = {b}\nT = {t}\nC = {c}\n");
            for (key, v) in [("H", h), ("S", s), ("H_kv", h_kv)] {
                if let Some(v) = v {
                    text.push_str(&format!("{key} = {v}\n"));
                }
            }
            (text, separate)
        })
}

prop_compose! {
    /// A scenario file, and the `--variant` and `--pass` that `explain` is asked for.
    fn scenario()(
        (shape, separate) in prop_oneof![3 => coherent_shape(), 1 => wild_shape()],
        variants in prop_oneof![1 => Just(None), 6 => list(VARIANTS).prop_map(Some)],
        passes in prop_oneof![3 => Just(None), 1 => list(PASSES).prop_map(Some)],
        mask in prop_oneof![Just(""), Just("mask = \"none\"\n"), Just("mask = \"causal\"\n")],
        rope in prop_oneof![3 => Just(""), 1 => Just("rope = \"half\"\n"), 1 => Just("rope = \"interleaved\"\n")],
        decode in prop_oneof![6 => Just(""), 1 => Just("decode = true\n")],
        dropout in prop_oneof![5 => Just(""), 1 => Just("dropout = 0.25\n"), 1 => Just("dropout = 0.25\nmode = \"eval\"\n")],
        mistakes in prop_oneof![
            6 => Just(""),
            1 => Just("mistakes = [\"scale_by_seq_len\"]\n"),
            1 => Just("mistakes = [\"overwrite_kv_grad\"]\n"),
            1 => Just("mistakes = [\"mask_by_multiply\", \"no_output_projection\"]\n"),
        ],
        tiles in prop_oneof![2 => Just(None), 1 => (1usize..=6, 1usize..=6).prop_map(|(r, c)| Some((r.to_string(), c.to_string()))), 1 => (size(), size()).prop_map(Some)],
        focus in prop::option::weighted(0.3, (0usize..4, 0usize..4)),
        explain_variant in prop::option::weighted(0.85, prop::sample::select(VARIANTS)),
        explain_pass in prop::option::weighted(0.7, prop::sample::select(PASSES)),
        at in prop::option::weighted(0.6, (0usize..2, 0usize..4, 0usize..4)),
    ) -> (String, Vec<String>) {
        let mut run = String::new();
        if let Some(v) = &variants {
            run.push_str(&format!("variants = {v}\n"));
        }
        if let Some(p) = &passes {
            run.push_str(&format!("passes = {p}\n"));
        }
        if separate {
            run.push_str("qkv = \"separate\"\n");
        }
        for option in [mask, rope, decode, dropout, mistakes] {
            run.push_str(option);
        }
        // [flash] only belongs with the flash variant; elsewhere it is one more refusal
        let flash = tiles
            .filter(|_| variants.as_deref().is_none_or(|v| v.contains("flash")))
            .map_or(String::new(), |(br, bc)| format!("[flash]\nbr = {br}\nbc = {bc}\n"));
        let focus = focus.map_or(String::new(), |(i, j)| format!("[focus]\ni = {i}\nj = {j}\n"));
        let text = format!("title = \"generated\"\n[shape]\n{shape}[run]\n{run}{flash}{focus}");
        let mut explain = vec!["explain".to_string(), "s.toml".to_string()];
        if let Some(v) = explain_variant {
            explain.extend(["--variant".to_string(), v.to_string()]);
        }
        if let Some(p) = explain_pass {
            explain.extend(["--pass".to_string(), p.to_string()]);
        }
        if let Some((h, i, j)) = at {
            explain.extend(["--at".to_string(), format!("b=0,h={h},i={i},j={j}")]);
        }
        (text, explain)
    }
}

/// The binary in `dir`, its address space and time limited.
fn limited(dir: &Path, args: &[String]) -> Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("attn-trace"));
    c.current_dir(dir).env("NO_COLOR", "1").args(args);
    // SAFETY: setrlimit is async-signal-safe and touches nothing but the child's limits.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: AS_LIMIT,
                rlim_max: AS_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &raw const lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut c = Command::from_std(c);
    c.timeout(TIME_LIMIT);
    c
}

proptest! {
    // each case runs the binary five times: a few seconds in all
    #![proptest_config(crate::support::proptest_config(48))]

    #[test]
    fn every_scenario_gets_a_result_or_one_line((text, explain) in scenario()) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s.toml"), &text).unwrap();
        let commands: Vec<Vec<String>> = vec![
            vec!["check".into(), "s.toml".into()],
            vec!["run".into(), "s.toml".into()],
            vec!["io".into(), "s.toml".into()],
            vec!["trace".into(), "s.toml".into(), "--format".into(), "jsonl".into(), "-o".into(), "/dev/null".into()],
            explain,
        ];
        for args in &commands {
            let out = limited(dir.path(), args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let code = out.status.code();
            prop_assert!(
                code == Some(0) || code == Some(2),
                "{args:?} on\n{text}\nexit {:?}, stderr:\n{err}", out.status
            );
            prop_assert!(err.lines().count() <= 2, "{args:?} on\n{text}\nstderr:\n{err}");
            if code == Some(2) {
                prop_assert!(err.starts_with("error: "), "{args:?} on\n{text}\nstderr:\n{err}");
            }
        }
    }
}
