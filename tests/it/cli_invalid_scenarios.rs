//! Every fixture in tests/invalid_scenarios/ is rejected by `attn-trace check` with exit code 2
//! and one message naming the file, the position, the field and what was expected.

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::Path;

/// (fixture, "line:column" or "" when the whole file is at fault, field or "", message part)
const CASES: &[(&str, &str, &str, &str)] = &[
    ("not_toml.toml", "2:7", "", "not valid TOML: unclosed table"),
    // two syntax errors: the first in the file is the one reported (line 1, not the `[run` of line 6)
    (
        "unterminated_string.toml",
        "1:33",
        "",
        "not valid TOML: invalid basic string",
    ),
    ("not_utf8.toml", "1:13", "", "not UTF-8 text: byte 0xe9"),
    ("empty.toml", "", "", "empty file"),
    ("is_a_directory.toml", "", "", "is a directory"),
    (
        "missing_shape.toml",
        "",
        "[shape]",
        "missing: every scenario needs a [shape] table",
    ),
    (
        "missing_title.toml",
        "",
        "title",
        "missing: every scenario needs a title",
    ),
    (
        "missing_size.toml",
        "2:1",
        "[shape].T",
        "missing: [shape] needs B, T and C",
    ),
    (
        "unknown_top_key.toml",
        "2:1",
        "colour",
        "unknown key; expected one of: title, about, shape",
    ),
    (
        "unknown_shape_key.toml",
        "5:1",
        "[shape].c",
        "unknown key (did you mean C?)",
    ),
    (
        "unknown_run_key.toml",
        "8:1",
        "[run].varaints",
        "unknown key (did you mean variants?)",
    ),
    (
        "unknown_tensor.toml",
        "8:1",
        "[values].wq",
        "unknown key (did you mean w_q?)",
    ),
    ("duplicate_key.toml", "5:1", "[shape].T", "duplicate key"),
    (
        "string_size.toml",
        "4:5",
        "[shape].T",
        "expected a positive integer, found a string \"3\"",
    ),
    (
        "float_size.toml",
        "5:5",
        "[shape].C",
        "expected a positive integer, found a float 4.5",
    ),
    (
        "zero_size.toml",
        "3:5",
        "[shape].B",
        "expected a positive integer, found 0",
    ),
    (
        "negative_size.toml",
        "5:5",
        "[shape].C",
        "expected a positive integer, found -2",
    ),
    (
        "c_not_divisible.toml",
        "6:5",
        "[shape].H",
        "C = 4 is not divisible by H = 3",
    ),
    (
        "shape_not_table.toml",
        "2:9",
        "[shape]",
        "expected a table, found an integer 4",
    ),
    (
        "title_not_string.toml",
        "1:9",
        "title",
        "expected a string, found an integer 5",
    ),
    (
        "wrong_length.toml",
        "8:5",
        "[values].q",
        "expected shape [1,3,4] (12 numbers, flat or nested), found 3 numbers",
    ),
    (
        "wrong_nesting.toml",
        "8:9",
        "[values].b_qkv",
        "expected shape [12] (12 numbers, flat or nested), found nesting [3,4]",
    ),
    (
        "ragged.toml",
        "8:20",
        "[values].q[1]",
        "ragged nesting: expected 4 entries",
    ),
    (
        "non_number_element.toml",
        "8:16",
        "[values].b_proj[1]",
        "expected a number, found a string \"two\"",
    ),
    (
        "nan_value.toml",
        "8:16",
        "[values].b_proj[1]",
        "expected a finite number, found nan",
    ),
    (
        "inf_value.toml",
        "8:21",
        "[values].b_proj[2]",
        "expected a finite number, found -inf",
    ),
    (
        "unknown_variant.toml",
        "8:25",
        "[run].variants[1]",
        "unknown variant \"multihead\"; expected one of \"baseline\", \"mha\"",
    ),
    (
        "duplicate_variant.toml",
        "8:20",
        "[run].variants[1]",
        "variant \"mha\" is listed twice",
    ),
    (
        "empty_variants.toml",
        "8:12",
        "[run].variants",
        "expected at least one variant",
    ),
    (
        "unknown_pass.toml",
        "8:11",
        "[run].passes[0]",
        "unknown pass \"forwards\"; expected one of \"forward\", \"backward\"",
    ),
    (
        "unknown_mask.toml",
        "8:8",
        "[run].mask",
        "unknown mask \"triangular\"; expected one of \"causal\", \"none\"",
    ),
    (
        "unknown_dist.toml",
        "8:8",
        "[init].dist",
        "unknown dist \"gaussian\"; expected one of \"normal\"",
    ),
    (
        "param_mismatch.toml",
        "9:7",
        "[init].std",
        "dist = \"uniform\" takes no std",
    ),
    (
        "negative_seed.toml",
        "8:8",
        "[init].seed",
        "expected a non-negative integer, found -1",
    ),
    (
        "partial_qkv.toml",
        "8:5",
        "[values].q",
        "must be given together; missing v",
    ),
    (
        "x_with_qkv.toml",
        "8:5",
        "[values].x",
        "not used when q, k and v are given",
    ),
    (
        "half_projection.toml",
        "11:10",
        "[values].w_proj",
        "needs both w_proj and b_proj; missing b_proj",
    ),
    (
        "d_out_without_backward.toml",
        "10:9",
        "[values].d_out",
        "only the backward pass reads d_out",
    ),
    (
        "focus_outside.toml",
        "10:5",
        "[focus].i",
        "expected an index in 0..3 (T = 3), found 3",
    ),
    (
        "focus_head_on_baseline.toml",
        "9:5",
        "[focus].h",
        "expected 0 (the baseline has a single head), found 1",
    ),
    (
        "focus_variant_not_run.toml",
        "10:11",
        "[focus].variant",
        "variant \"mha\" is not among [run].variants",
    ),
    (
        "too_big.toml",
        "2:1",
        "[shape]",
        "the trace would record 12157987069952 events (about 452920.3 GiB",
    ),
    // issue 8: the standard form's options and the mistakes
    (
        "cross_fused.toml",
        "4:5",
        "[shape].S",
        "cross-attention projects x and memory with their own weights",
    ),
    (
        "memory_without_s.toml",
        "11:10",
        "[values].memory",
        "memory is the key/value input of cross-attention",
    ),
    (
        "separate_weight_with_fused.toml",
        "8:7",
        "[values].w_q",
        "belongs to qkv = \"separate\"",
    ),
    (
        "fused_weight_with_separate.toml",
        "11:9",
        "[values].w_qkv",
        "belongs to qkv = \"fused\"",
    ),
    (
        "mask_wrong_rows.toml",
        "8:8",
        "[run].mask",
        "expected an S×T = 3×3 matrix of 0 and 1",
    ),
    (
        "mask_not_binary.toml",
        "8:18",
        "[run].mask[1][0]",
        "expected 0 or 1, found an integer 2",
    ),
    (
        "mask_row_all_hidden.toml",
        "8:9",
        "[run].mask[0]",
        "query 0 may see no key",
    ),
    (
        "dropout_out_of_range.toml",
        "8:11",
        "[run].dropout",
        "expected a probability in [0, 1)",
    ),
    (
        "dropout_seed_alone.toml",
        "8:16",
        "[run].dropout_seed",
        "there is no dropout to seed",
    ),
    ("unknown_mode.toml", "8:8", "[run].mode", "unknown mode \"training\""),
    (
        "unknown_mistake.toml",
        "8:13",
        "[run].mistakes[0]",
        "unknown mistake \"scale_by_sequence\"",
    ),
    (
        "mistake_without_dropout.toml",
        "8:12",
        "[run].mistakes",
        "\"dropout_not_applied\" needs dropout to forget",
    ),
    (
        "mistake_needs_x.toml",
        "8:12",
        "[run].mistakes",
        "\"no_input_projection\" needs a run that starts at x",
    ),
    (
        "separate_with_core.toml",
        "8:7",
        "[run].qkv",
        "q, k and v are given, so nothing is projected",
    ),
    (
        "focus_query_outside_s.toml",
        "12:5",
        "[focus].i",
        "expected an index in 0..2 (S = 2), found 2",
    ),
    // issue 17: flash's [flash] table and what flash does not run
    (
        "flash_zero_tile.toml",
        "10:6",
        "[flash].br",
        "expected a positive integer, found 0",
    ),
    (
        "flash_float_tile.toml",
        "11:6",
        "[flash].bc",
        "expected a positive integer, found a float 1.5",
    ),
    (
        "flash_negative_tile.toml",
        "11:6",
        "[flash].bc",
        "expected a positive integer, found -3",
    ),
    (
        "flash_string_tile.toml",
        "10:6",
        "[flash].br",
        "expected a positive integer, found a string \"2\"",
    ),
    (
        "flash_unknown_key.toml",
        "10:1",
        "[flash].b_r",
        "unknown key (did you mean br?); expected one of: br, bc",
    ),
    (
        "flash_not_table.toml",
        "2:9",
        "[flash]",
        "expected a table, found an integer 2",
    ),
    (
        "flash_without_variant.toml",
        "9:1",
        "[flash]",
        "sets the tile sizes of the flash variant, which this scenario does not run",
    ),
    (
        "flash_with_dropout.toml",
        "9:11",
        "[run].dropout",
        "the flash variant has no dropout",
    ),
    (
        "flash_with_mistakes.toml",
        "9:12",
        "[run].mistakes",
        "the mistakes are made in the plain kernels and flash has none",
    ),
    (
        "flash_with_decode.toml",
        "9:10",
        "[run].decode",
        "flash computes whole sequences tile by tile and has no decoding loop",
    ),
    (
        "h_kv_not_dividing_h.toml",
        "7:8",
        "[shape].H_kv",
        "H = 4 is not divisible by H_kv = 3: each key/value head serves H/H_kv query heads",
    ),
    (
        "h_kv_without_gqa.toml",
        "7:8",
        "[shape].H_kv",
        "only the \"gqa\" variant reads fewer key/value heads than query heads",
    ),
    (
        "rope_spiral.toml",
        "8:8",
        "[run].rope",
        "unknown rope \"spiral\"; expected one of \"interleaved\", \"half\"",
    ),
    (
        "rope_base_alone.toml",
        "8:13",
        "[run].rope_base",
        "there is no rotation to set the base of",
    ),
    (
        "rope_base_too_small.toml",
        "9:13",
        "[run].rope_base",
        "expected a number above 1",
    ),
    (
        "rope_odd_head.toml",
        "9:8",
        "[run].rope",
        "the mha kernel's head has D = C/H = 3",
    ),
    (
        "rope_cross.toml",
        "10:8",
        "[run].rope",
        "cross-attention's queries and keys come from two",
    ),
    (
        "decode_with_backward.toml",
        "9:10",
        "[run].decode",
        "decode generates token by token, forward only: remove \"backward\" from [run].passes",
    ),
    (
        "decode_not_boolean.toml",
        "8:10",
        "[run].decode",
        "expected true or false, found a string \"yes\"",
    ),
    (
        "decode_unmasked.toml",
        "9:10",
        "[run].decode",
        "which is the causal mask: remove [run].mask",
    ),
    (
        "window_zero.toml",
        "8:10",
        "[run].window",
        "expected a positive integer, found 0",
    ),
    (
        "window_unmasked.toml",
        "9:10",
        "[run].window",
        "a sliding window narrows the causal mask: remove [run].mask",
    ),
    (
        "window_cross.toml",
        "10:10",
        "[run].window",
        "counts positions of one sequence: remove [shape].S",
    ),
    (
        "sinks_without_window.toml",
        "8:9",
        "[run].sinks",
        "sink tokens stay visible when a window would hide them: set [run].window too",
    ),
    (
        "sinks_beyond_t.toml",
        "9:9",
        "[run].sinks",
        "expected an integer from 0 to T = 3, found 4",
    ),
    (
        "window_paged_decode.toml",
        "8:10",
        "[run].decode",
        "a sliding window decodes through its own rolling cache of N + W rows: remove [paged] or [run].window",
    ),
    (
        "window_rope_decode.toml",
        "8:10",
        "[run].decode",
        "rotary positions are traced in a decode run's contiguous cache only",
    ),
    (
        "paged_entry_beyond_pool.toml",
        "12:14",
        "[paged].table",
        "expected a block id below num_blocks = 4, found 4",
    ),
    (
        "paged_table_too_short.toml",
        "12:10",
        "[paged].table",
        "row 0 is too short for T = 4: 4 positions in blocks of 2 need 2 block ids, it lists 1",
    ),
    (
        "paged_block_twice.toml",
        "12:14",
        "[paged].table",
        "block 1 is already row 0's block 0",
    ),
    (
        "paged_shared_block_other_tokens.toml",
        "12:9",
        "[paged].table",
        "rows 0 and 1 share block 2, but their tokens at positions 0..2 differ",
    ),
    (
        "paged_pool_too_small.toml",
        "11:14",
        "[paged].num_blocks",
        "the sequences need B·⌈T/BS⌉ = 2·2 = 4 blocks, but the pool has 3",
    ),
    (
        "paged_without_decode.toml",
        "7:1",
        "[paged]",
        "a paged cache is where a decode run keeps its keys and values: set [run].decode = true",
    ),
    (
        "split_kv_beyond_t.toml",
        "9:12",
        "[run].split_kv",
        "expected a number of parts from 1 to T = 3, found 4",
    ),
    (
        "split_kv_without_decode.toml",
        "8:12",
        "[run].split_kv",
        "split_kv splits a decode step's cache: set [run].decode = true",
    ),
    (
        "decode_from_qkv.toml",
        "8:10",
        "[run].decode",
        "decode projects each token with the fused w_qkv",
    ),
    (
        "gqa_with_mistakes.toml",
        "9:12",
        "[run].mistakes",
        "the classic mistakes are written into the baseline and MHA kernels",
    ),
    // mistake 7 is in grouped-query backward: it needs gqa alone, shared heads and a backward pass
    (
        "overwrite_kv_grad_mha.toml",
        "9:12",
        "[run].mistakes",
        "\"overwrite_kv_grad\" is a mistake of grouped-query attention's backward pass: set [run].variants = [\"gqa\"]",
    ),
    (
        "overwrite_kv_grad_no_groups.toml",
        "10:12",
        "[run].mistakes",
        "\"overwrite_kv_grad\" needs query heads that share a key/value head: set [shape].H_kv below H = 4",
    ),
    (
        "overwrite_kv_grad_forward.toml",
        "11:12",
        "[run].mistakes",
        "\"overwrite_kv_grad\" is in the gradients: add \"backward\" to [run].passes",
    ),
    // gpt-oss's sink logits: one per head, only with sink_logit, not in decode, mistakes or a
    // baseline of several heads
    (
        "sink_wrong_shape.toml",
        "11:8",
        "[values].sink",
        "expected shape [2] (2 numbers, flat or nested), found 3 numbers",
    ),
    (
        "sink_without_sink_logit.toml",
        "10:8",
        "[values].sink",
        "only a run with [run].sink_logit = true reads sink logits: set it, or remove sink",
    ),
    (
        "sink_logit_decode.toml",
        "10:14",
        "[run].sink_logit",
        "decode runs are traced without sink logits; leave out sink_logit or decode",
    ),
    (
        "sink_logit_mistakes.toml",
        "10:14",
        "[run].sink_logit",
        "the mistakes are written into kernels without sink logits; leave out sink_logit or [run].mistakes",
    ),
    (
        "sink_logit_baseline_heads.toml",
        "9:14",
        "[run].sink_logit",
        "the baseline has a single head and so a single sink logit, but H = 2: set [shape].H = 1 or remove \"baseline\" from [run].variants",
    ),
    (
        "sink_logit_not_boolean.toml",
        "8:14",
        "[run].sink_logit",
        "expected true or false, found an integer 1",
    ),
    // multi-head latent attention: its sizes, its company, what it is traced without
    (
        "mla_kv_rank_zero.toml",
        "7:11",
        "[shape].kv_rank",
        "expected a positive integer, found 0",
    ),
    (
        "mla_rope_dim_missing.toml",
        "7:11",
        "[shape].rope_dim",
        "missing: multi-head latent attention needs both kv_rank (R, the latent's channels) and rope_dim (DR, the rotary channels)",
    ),
    (
        "mla_without_kv_rank.toml",
        "8:12",
        "[run].variants",
        "\"mla\" projects keys and values up from a latent: give its sizes [shape].kv_rank and [shape].rope_dim",
    ),
    (
        "mla_beside_mha.toml",
        "7:11",
        "[shape].kv_rank",
        "kv_rank and rope_dim size multi-head latent attention, which runs on its own: set [run].variants = [\"mla\"]",
    ),
    (
        "mla_rope_dim_odd.toml",
        "8:12",
        "[shape].rope_dim",
        "rope turns the rotary channels of q_pe and k_pe in pairs, so rope_dim must be even; it is 3",
    ),
    (
        "mla_w_uk_wrong_shape.toml",
        "12:8",
        "[values].w_uk",
        "expected shape [2,4] (8 numbers, flat or nested), found 3 numbers",
    ),
    (
        "mla_weight_without_mla.toml",
        "10:9",
        "[values].w_dkv",
        "only the \"mla\" variant reads this weight: add \"mla\" to [run].variants with [shape].kv_rank and rope_dim, or remove it",
    ),
    (
        "gqa_k_wrong_width.toml",
        "11:5",
        "[values].k",
        "expected shape [1,3,4] (12 numbers, flat or nested), found 3 numbers",
    ),
];

fn dir() -> &'static Path {
    Path::new("tests/invalid_scenarios")
}

/// The one line `check` prints for a fixture: `error: FILE[:L:C][: FIELD]: MESSAGE`.
fn expected_prefix(file: &str, at: &str, field: &str) -> String {
    let mut s = format!("error: {}", dir().join(file).display());
    if !at.is_empty() {
        s.push(':');
        s.push_str(at);
    }
    if !field.is_empty() {
        s.push_str(": ");
        s.push_str(field);
    }
    s.push_str(": ");
    s
}

#[test]
fn every_fixture_fails_check_with_exit_code_2_and_a_precise_message() {
    for &(file, at, field, message) in CASES {
        let prefix = expected_prefix(file, at, field);
        Command::cargo_bin("attn-trace")
            .unwrap()
            .args(["check", &dir().join(file).display().to_string()])
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::starts_with(prefix.clone()).and(predicate::str::contains(message)))
            .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    }
}

#[test]
fn every_fixture_has_an_expectation_and_there_are_at_least_25() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in &names {
        assert!(
            CASES.iter().any(|c| c.0 == name),
            "{name} has no expected message in CASES"
        );
    }
    assert!(names.len() >= 25, "only {} fixtures", names.len());
    assert_eq!(names.len(), CASES.len());
}

#[test]
fn run_trace_and_explain_reject_bad_scenarios_the_same_way() {
    let bad = dir().join("negative_size.toml").display().to_string();
    for args in [
        vec!["run", &bad, "--json"],
        vec!["trace", &bad],
        vec!["explain", &bad, "--variant", "mha", "--at", "i=0,j=0"],
    ] {
        Command::cargo_bin("attn-trace")
            .unwrap()
            .args(&args)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(
                "[shape].C: expected a positive integer, found -2",
            ));
    }
}

#[test]
fn a_missing_file_is_named() {
    Command::cargo_bin("attn-trace")
        .unwrap()
        .args(["check", "tests/invalid_scenarios/no_such_file.toml"])
        .assert()
        .code(2)
        .stderr("error: tests/invalid_scenarios/no_such_file.toml: no such file\n");
}

#[test]
fn check_reports_every_file_and_fails_if_any_is_bad() {
    Command::cargo_bin("attn-trace")
        .unwrap()
        .args([
            "check",
            "scenarios/numeric_mha.toml",
            "tests/invalid_scenarios/zero_size.toml",
            "tests/invalid_scenarios/nan_value.toml",
        ])
        .assert()
        .code(2)
        .stdout(predicate::str::starts_with(
            "OK scenarios/numeric_mha.toml: Worked row, MHA head 1",
        ))
        .stderr(predicate::str::contains("zero_size.toml:3:5").and(predicate::str::contains("nan_value.toml:8:16")));
}
