//! `attn-trace io`: the documented JSON, its counts against formulas worked out by hand from
//! the kernels' loops, the text tables, `--sweep`, and bad arguments.

use crate::support::cli::{cmd, stdout_of};
use predicates::prelude::*;
use serde_json::Value;
use std::io::Write as _;

/// One head (H = 1, D = C = 4), T = 7 queries and keys, no mask, q, k, v given: flash tiles of
/// br = 3 rows and bc = 2 columns (neither divides 7).
fn one_head_scenario() -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    let ones = |n: usize| format!("[{}]", vec!["0.5"; n].join(", "));
    write!(
        f,
        "title = \"io\"\n[shape]\nB = 1\nT = 7\nC = 4\n[run]\nvariants = [\"mha\", \"flash\"]\nmask = \"none\"\n\
         [flash]\nbr = 3\nbc = 2\n[values]\nq = {q}\nk = {q}\nv = {q}\nd_out = {q}\n",
        q = ones(28)
    )
    .unwrap();
    f
}

/// `(reads, writes)` of `name` in the run of `variant` and `pass`.
fn rw(doc: &Value, variant: &str, pass: &str, name: &str) -> (u64, u64) {
    let run = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variant"] == variant && r["pass"] == pass)
        .unwrap_or_else(|| panic!("no {variant} {pass} run"));
    let b = run["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("{variant} {pass}: no {name}"));
    (b["reads"].as_u64().unwrap(), b["writes"].as_u64().unwrap())
}

#[test]
fn io_json_counts_match_the_formulas_of_the_loops() {
    let f = one_head_scenario();
    let path = f.path().display().to_string();
    let doc: Value = serde_json::from_str(&stdout_of(&["io", &path, "--json"])).unwrap();
    // 3 query tiles by 4 key tiles, every one visited without a mask
    assert_eq!(
        doc["tiles"],
        serde_json::json!({"br": 3, "bc": 2, "pairs": 12, "visited": 12})
    );
    assert_eq!(doc["mask"], serde_json::json!({"name": "none"}));
    let (t, d) = (7u64, 4u64);
    // query tiles of 3, 3, 1 rows; key tiles of 2, 2, 2, 1 columns; no mask: every pair visited
    let (q_tiles, k_tiles) = ([3u64, 3, 1], [2u64, 2, 2, 1]);
    let n = q_tiles.len() as u64;
    let pairs = t * t;

    // flash forward: q once, k and v once per query tile, att and lse once; all global
    assert_eq!(rw(&doc, "flash", "forward", "q"), (t * d, 0));
    assert_eq!(rw(&doc, "flash", "forward", "k"), (n * t * d, 0));
    assert_eq!(rw(&doc, "flash", "forward", "v"), (n * t * d, 0));
    assert_eq!(rw(&doc, "flash", "forward", "att"), (0, t * d));
    assert_eq!(rw(&doc, "flash", "forward", "lse"), (0, t));
    // on chip: each score written twice (S, then P in place), read twice and once per channel
    assert_eq!(
        rw(&doc, "flash", "forward", "s_tile"),
        (2 * pairs + pairs * d, 2 * pairs)
    );
    // m and l: started once per row, read and written once per row and key tile, read at the end
    let rows_x_tiles = t * k_tiles.len() as u64;
    assert_eq!(rw(&doc, "flash", "forward", "m"), (rows_x_tiles + t, rows_x_tiles + t));
    let _ = q_tiles;

    // flash backward: k and v once per key tile load, q and d_att once per visited tile, dQ added
    // to in global memory once per key tile (after being set to 0)
    let kt = k_tiles.len() as u64;
    assert_eq!(rw(&doc, "flash", "backward", "k"), (t * d, 0));
    assert_eq!(rw(&doc, "flash", "backward", "q"), (kt * t * d, 0));
    assert_eq!(rw(&doc, "flash", "backward", "d_q"), (kt * t * d, t * d + kt * t * d));
    assert_eq!(rw(&doc, "flash", "backward", "d_att"), (t * d + kt * t * d, 0));
    assert_eq!(rw(&doc, "flash", "backward", "lse"), (kt * t, 0));
    assert_eq!(rw(&doc, "flash", "backward", "delta"), (kt * t, t));
    assert_eq!(rw(&doc, "flash", "backward", "d_k"), (0, t * d));

    // naive MHA: scores and probs are global
    assert_eq!(rw(&doc, "mha", "forward", "scores"), (2 * pairs, pairs));
    assert_eq!(rw(&doc, "mha", "forward", "probs"), (pairs + pairs * d, 2 * pairs));
    assert_eq!(rw(&doc, "mha", "forward", "q"), (pairs * d, 0));

    // levels and totals
    for run in doc["runs"].as_array().unwrap() {
        let mut sums = std::collections::BTreeMap::<String, (u64, u64)>::new();
        for b in run["buffers"].as_array().unwrap() {
            let level = b["level"].as_str().unwrap().to_string();
            let tile = b["name"].as_str().unwrap().ends_with("_tile")
                || ["m", "l", "acc"].contains(&b["name"].as_str().unwrap());
            assert_eq!(level, if tile { "tile" } else { "global" }, "{b}");
            let e = sums.entry(level).or_default();
            e.0 += b["reads"].as_u64().unwrap();
            e.1 += b["writes"].as_u64().unwrap();
        }
        let totals: std::collections::BTreeMap<String, (u64, u64)> = run["totals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let l = t["level"].as_str().unwrap().to_string();
                (l, (t["reads"].as_u64().unwrap(), t["writes"].as_u64().unwrap()))
            })
            .collect();
        assert_eq!(sums, totals, "{}", run["variant"]);
    }
    // the forward pass of flash writes nothing to global memory but att and lse
    let global_writes = |v: &str| {
        doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["variant"] == v && r["pass"] == "forward")
            .unwrap()["totals"][0]["writes"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(global_writes("flash"), t * d + t);
    assert_eq!(global_writes("mha"), pairs + 2 * pairs + t * d);
}

/// A decode run counts each step's attention over the cache: step t reads the query and the
/// cached keys of rows 0..=t per head and channel, and so on, over Σ (t + 1) = T(T+1)/2 rows.
#[test]
fn io_counts_a_decode_run_step_by_step() {
    // kv_cache_decode.toml: B=1, T=5, C=8, H=4 over H_kv=2 (D=2), gqa only
    let doc: Value = serde_json::from_str(&stdout_of(&["io", "scenarios/kv_cache_decode.toml", "--json"])).unwrap();
    let (t, h, d) = (5u64, 4u64, 2u64);
    let rows = t * (t + 1) / 2; // 15
    let (pairs, pairs_d) = (h * rows, h * rows * d); // 60 scores, 120 products
    assert_eq!(rw(&doc, "gqa", "forward", "q"), (pairs_d, 0));
    assert_eq!(rw(&doc, "gqa", "forward", "k_cache"), (pairs_d, 0));
    // the max, then the exponentials: two reads per score; exp written, then normalised
    assert_eq!(rw(&doc, "gqa", "forward", "scores"), (2 * pairs, pairs));
    assert_eq!(rw(&doc, "gqa", "forward", "probs"), (pairs + pairs_d, 2 * pairs));
    assert_eq!(rw(&doc, "gqa", "forward", "v_cache"), (pairs_d, 0));
    assert_eq!(rw(&doc, "gqa", "forward", "att"), (0, t * h * d));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1);
    // the cache: T rows of H_kv·D keys and values
    assert_eq!(doc["runs"][0]["kv_floats"], 2 * 5 * 2 * 2);
    // per token and layer: MHA 2·4·2, GQA 2·2·2, MQA 2·2, MLA 8 + 1
    let kv: Vec<(String, u64)> = doc["kv_cache_per_token"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["design"].as_str().unwrap().to_string(), r["floats"].as_u64().unwrap()))
        .collect();
    let want = [("MHA", 16), ("GQA", 8), ("MQA", 4), ("MLA", 9)].map(|(n, f)| (n.to_string(), f));
    assert_eq!(kv, want);
    let out = stdout_of(&["io", "scenarios/kv_cache_decode.toml"]);
    for line in [
        "T(T+1)/2 = 5·6/2 = 15 cached rows over the 5 steps",
        "  k_cache    global           120            0",
        "  MHA  2·H·D    = 2·4·2 = 16 floats, 64 bytes",
        "  GQA  2·H_kv·D = 2·2·2 =  8 floats, 32 bytes",
        "  MQA  2·D      = 2·2   =  4 floats, 16 bytes",
        "  MLA  R + DR   = 8 + 1 =  9 floats, 36 bytes",
        "R = 4·D = 8, DR = D/2 = 1",
    ] {
        assert!(out.contains(line), "{line:?} not in\n{out}");
    }
    // every printed product and sum holds: 5·6/2 = 15, 2·4·2 = 16, …, 8 + 1 = 9
    let lines: Vec<&str> = out.lines().collect();
    let checked = crate::support::chains::check_lines(&lines).unwrap();
    assert!(checked >= 5, "{checked} equalities checked in\n{out}");
}

#[test]
fn io_counts_a_paged_decode_with_its_block_table_reads_in_their_column() {
    // paged_decode.toml: B=2, T=6, H=2, D=2, so 2·21 = 42 (sequence, step, key) rows in all.
    // Each key a score reads costs one table read per head (2·42 = 84), each key a weighted
    // sum reads one per head and channel (2·2·42 = 168): 252 reads of block_table
    let out = stdout_of(&["io", "scenarios/paged_decode.toml"]);
    for line in [
        "  block_table global           252            0",
        "  k_cache     global           168            0",
        "  v_cache     global           168            0",
        "  total       global         1,176          300",
    ] {
        assert!(out.contains(line), "{line:?} not in\n{out}");
    }
}

/// The JSON names the mask (a window with its width and sinks) and flash's tile pairs per head,
/// all of them and those it visits: T=8 in tiles of 2 is 4 × 4 pairs; W=3 with one sink leaves
/// 1 + 2 + 3 + 3 of them, the causal mask of flash.toml (T=5) 1 + 2 + 3 of 3 × 3.
#[test]
fn io_json_names_the_mask_and_the_tile_pairs_flash_visits() {
    let doc: Value = serde_json::from_str(&stdout_of(&["io", "scenarios/sinks.toml", "--json"])).unwrap();
    assert_eq!(
        doc["mask"],
        serde_json::json!({"name": "window", "window": 3, "sinks": 1})
    );
    assert_eq!(
        doc["tiles"],
        serde_json::json!({"br": 2, "bc": 2, "pairs": 16, "visited": 9})
    );
    let text = stdout_of(&["io", "scenarios/sinks.toml"]);
    assert!(
        text.contains(
            "flash visits 9 of its 16 tile pairs per head: the sliding window W=3, sinks=1 hides the other 7"
        ),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&stdout_of(&["io", "scenarios/flash.toml", "--json"])).unwrap();
    assert_eq!(doc["mask"], serde_json::json!({"name": "causal"}));
    assert_eq!(
        doc["tiles"],
        serde_json::json!({"br": 2, "bc": 2, "pairs": 9, "visited": 6})
    );
}

#[test]
fn io_tables_compare_the_variants_global_traffic() {
    let out = stdout_of(&["io", "scenarios/flash.toml"]);
    assert!(
        out.contains("flash · forward") && out.contains("mha · backward"),
        "{out}"
    );
    assert!(out.contains("  s_tile     tile "), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("global reads + writes, forward:"))
        .unwrap();
    assert!(
        line.contains("mha ") && line.contains("flash ") && line.contains("(1.00×)"),
        "{line}"
    );
    // the same numbers as the JSON
    let doc: Value = serde_json::from_str(&stdout_of(&["io", "scenarios/flash.toml", "--json"])).unwrap();
    let flash_fwd = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variant"] == "flash" && r["pass"] == "forward")
        .unwrap();
    let g = &flash_fwd["totals"][0];
    let total = g["reads"].as_u64().unwrap() + g["writes"].as_u64().unwrap();
    assert!(line.contains(&format!("flash {total} ")), "{line} vs {total}");
}

#[test]
fn io_sweep_rows_follow_the_closed_forms() {
    let doc: Value = serde_json::from_str(&stdout_of(&["io", "--sweep", "--head-dim", "16", "--json"])).unwrap();
    assert_eq!(doc["D"], 16);
    let tiles: Vec<u64> = doc["tiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(tiles, [16, 32, 64, 128]);
    let d = 16u64;
    for row in doc["rows"].as_array().unwrap() {
        let t = row["T"].as_u64().unwrap();
        // naive, no mask, per head: q, k, v per product (3·T²·D), probs per product (T²·D),
        // scores and softmax (6·T²), att (T·D)
        assert_eq!(
            row["naive"].as_u64().unwrap(),
            4 * t * t * d + 6 * t * t + t * d,
            "T={t}"
        );
        assert_eq!(row["naive_scores_probs"].as_u64().unwrap(), t * t * d + 6 * t * t);
        for (k, f) in row["flash"].as_array().unwrap().iter().enumerate() {
            let br = tiles[k].min(t);
            let n = t.div_ceil(br);
            assert_eq!(
                f.as_u64().unwrap(),
                t * d + 2 * n * t * d + t * d + t,
                "T={t} tile {br}"
            );
        }
    }
    let text = stdout_of(&["io", "--sweep"]);
    assert!(text.contains("D = 64, no mask") && text.contains("flash 128"), "{text}");
    assert!(text.lines().any(|l| l.trim_start().starts_with("4096 ")), "{text}");
}

#[test]
fn io_rejects_bad_arguments_with_one_line_and_exit_2() {
    for (args, needle) in [
        (vec!["io"], "SCENARIO"),
        (vec!["io", "--sweep", "--head-dim", "0"], "--head-dim 0"),
        (vec!["io", "--sweep", "--mask", "diagonal"], "--mask diagonal"),
        (vec!["io", "scenarios/flash.toml", "--sweep"], "--sweep"),
        (vec!["io", "scenarios/flash.toml", "--head-dim", "8"], "--head-dim"),
        (vec!["io", "tests/invalid_scenarios/flash_zero_tile.toml"], "[flash].br"),
    ] {
        cmd()
            .args(&args)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(needle).and(predicate::function(|s: &str| s.lines().count() == 1)));
    }
}

#[test]
fn a_latent_scenario_prices_its_cache_with_its_own_r_and_dr() {
    // mla_decode.toml: R = 3, DR = 2, so 5 floats a token for both heads where MHA keeps 8;
    // each step reads its t + 1 cached rows of R + DR in the scores and R in the latent sum
    let out = stdout_of(&["io", "scenarios/mla_decode.toml"]);
    for line in [
        "  MHA  2·H·D  = 2·2·2 = 8 floats, 32 bytes",
        "  MLA  R + DR = 3 + 2 = 5 floats, 20 bytes",
        "MLA with this scenario's R = 3, DR = 2",
        // 10 (step, row) pairs per head, 2 heads: (3 + 2)·20 in the scores + 3·20 in the sum
        "  kv_cache   global           160            0",
    ] {
        assert!(out.contains(line), "{line:?} not in\n{out}");
    }
    let lines: Vec<&str> = out.lines().collect();
    assert!(crate::support::chains::check_lines(&lines).unwrap() >= 3, "{out}");
}

/// A decode scenario written to a temporary file: `B = 1`, `C = 8`, `H = 2`, `T = t`, a window of
/// `w` keys with `sinks` sinks when `w > 0`.
fn decode_scenario(t: usize, w: usize, sinks: usize) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".toml").tempfile().unwrap();
    let window = if w > 0 {
        format!("window = {w}\nsinks = {sinks}\n")
    } else {
        String::new()
    };
    write!(
        f,
        "title = \"decode\"\n[shape]\nB = 1\nT = {t}\nC = 8\nH = 2\n[run]\nvariants = [\"mha\"]\ndecode = true\n{window}\
         [init]\nseed = 5\ndist = \"normal\"\nstd = 0.5\n"
    )
    .unwrap();
    f
}

/// `io`'s sentence on a decode run says how many cached rows each query head reads; the log says
/// how many scores each head writes, one per cached row it reads. The two agree for every kind of
/// decode (a contiguous cache, grouped heads with rope, paged, split-KV, the latent cache) and
/// every mask a decode takes (causal; windows narrow, with sinks, one key wide, and wide enough
/// never to slide), in both languages, and every equality the sentence prints holds.
#[test]
fn io_says_how_many_cached_rows_each_decode_reads_as_the_log_counts_them() {
    let made: Vec<(String, tempfile::NamedTempFile)> =
        [(7, 2, 0), (8, 3, 1), (9, 2, 3), (4, 1, 0), (5, 3, 2), (6, 0, 0)]
            .into_iter()
            .map(|(t, w, sinks)| (format!("T={t} W={w} N={sinks}"), decode_scenario(t, w, sinks)))
            .collect();
    let mut paths: Vec<String> = made.iter().map(|(_, f)| f.path().display().to_string()).collect();
    for shipped in [
        "kv_cache_decode",
        "paged_decode",
        "split_kv",
        "mla_decode",
        "window_decode",
    ] {
        paths.push(format!("scenarios/{shipped}.toml"));
    }
    let number_before = |text: &str, words: &str| -> u64 {
        let at = text.rfind(words).unwrap_or_else(|| panic!("{words:?} not in\n{text}"));
        let digits: String = text[..at]
            .trim_end()
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.chars().rev().collect::<String>().parse().unwrap()
    };
    for path in &paths {
        let doc: Value = serde_json::from_str(&stdout_of(&["io", path, "--json"])).unwrap();
        let heads = doc["shape"]["B"].as_u64().unwrap() * doc["shape"]["H"].as_u64().unwrap();
        let variant = doc["runs"][0]["variant"].as_str().unwrap().to_string();
        let (_, score_writes) = rw(&doc, &variant, "forward", "scores");
        let per_head = score_writes / heads;
        assert_eq!(per_head * heads, score_writes, "{path}");

        let en = stdout_of(&["--lang", "en", "io", path]);
        let line = en.lines().find(|l| l.starts_with("decoding token by token")).unwrap();
        assert_eq!(number_before(line, " cached rows over the"), per_head, "{path}: {line}");
        let checked = crate::support::chains::check_line(line).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(checked >= 1, "{path}: nothing checked in {line}");

        let zh = stdout_of(&["--lang", "zh-CN", "io", path]);
        let line = zh.lines().find(|l| l.starts_with("逐个 token 解码")).unwrap();
        assert_eq!(number_before(line, " 个缓存行"), per_head, "{path}: {line}");
        crate::support::chains::check_line(line).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    // the shipped window: 1 + 2 + 3 + 4 rows while the window fills with its sink, then 4 a step
    let out = stdout_of(&["--lang", "en", "io", "scenarios/window_decode.toml"]);
    assert!(
        out.contains("1 + 2 + … + 4 = 4·5/2 = 10 rows in the first W+N = 4 steps and 4 in each of the other 4: 10 + 4·4 = 26 cached rows over the 8 steps"),
        "{out}"
    );
}
