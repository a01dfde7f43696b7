//! The exports of `attn-trace trace`, byte for byte what the plain writer they replaced wrote
//! (lines pinned from it), and the fast float formatting against `{:?}`; the Parquet export
//! read back with the parquet crate's reader, row for row and field for field the JSON Lines.

use crate::support::cli::{cmd, stdout_of};
use crate::support::root;
use attn_trace_analysis::export::push_debug_f32;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row};
use predicates::prelude::*;
use std::path::Path;

fn lines(args: &[&str]) -> Vec<String> {
    stdout_of(args).lines().map(str::to_string).collect()
}

fn scenario(name: &str) -> String {
    root().join("scenarios").join(name).to_str().unwrap().to_string()
}

#[test]
fn jsonl_lines_are_pinned() {
    let mha = lines(&["trace", &scenario("mha_walkthrough.toml")]);
    assert_eq!(mha.len(), 4277);
    assert_eq!(
        mha[1],
        r#"{"seq":0,"variant":"baseline","pass":"forward","phase":"qkv_proj","op":"read","buffer":"b_qkv","level":"global","offset":0,"index":[0],"value":0.1665524,"vars":{"bb":0,"i":0,"o":0},"derived":{"xi":0,"yi":0},"file":"crates/core/src/kernels/linear.rs","line":31}"#
    );
    let flash = lines(&["trace", &scenario("flash.toml"), "--variant", "flash"]);
    let tile = flash.iter().find(|l| l.contains(r#""buffer":"s_tile""#)).unwrap();
    assert_eq!(
        tile,
        r#"{"seq":756,"variant":"flash","pass":"forward","phase":"flash","op":"write","buffer":"s_tile","level":"tile","offset":0,"index":[0,0],"value":-0.70584434,"vars":{"bb":0,"hh":0,"i0":0,"j0":0,"ii":0,"jj":0},"derived":{},"file":"crates/core/src/kernels/attention_flash.rs","line":189}"#
    );
    let decode = lines(&["trace", &scenario("kv_cache_decode.toml")]);
    assert_eq!(
        decode[199],
        r#"{"seq":198,"variant":"gqa","pass":"forward","phase":"decode_qkv","op":"read","buffer":"b_qkv","level":"global","offset":11,"index":[11],"value":0.0438793,"vars":{"bb":0,"t":0,"o":11},"derived":{"xi":0,"ci":0},"file":"crates/core/src/kernels/decode.rs","line":273}"#
    );
}

#[test]
fn csv_lines_are_pinned() {
    let mha = lines(&["trace", &scenario("mha_walkthrough.toml"), "--format", "csv"]);
    assert_eq!(
        mha[0],
        "seq,variant,pass,phase,op,buffer,level,offset,index,value,vars,derived,file,line"
    );
    assert_eq!(
        mha[1],
        "0,baseline,forward,qkv_proj,read,b_qkv,global,0,0,0.1665524,bb=0;i=0;o=0,xi=0;yi=0,crates/core/src/kernels/linear.rs,31"
    );
    assert_eq!(
        mha[499],
        "498,baseline,forward,scores,read,k,global,5,0;1;1,0.20991491,bb=0;i=2;j=1;c=1,qi=8;kj=4;off=7,crates/core/src/kernels/attention_1h.rs,42"
    );
    let flash = lines(&[
        "trace",
        &scenario("flash.toml"),
        "--variant",
        "flash",
        "--format",
        "csv",
    ]);
    assert!(flash.contains(
        &"756,flash,forward,flash,write,s_tile,tile,0,0;0,-0.70584434,bb=0;hh=0;i0=0;j0=0;ii=0;jj=0,,crates/core/src/kernels/attention_flash.rs,189"
            .to_string()
    ));
    let masked = lines(&["trace", &scenario("masked_element.toml"), "--format", "csv"]);
    assert!(masked.contains(
        &"593,baseline,forward,scores,write,scores,global,1,0;0;1,-1000000000.0,bb=0;i=0;j=1,qi=0;kj=4;off=1,crates/core/src/kernels/attention_1h.rs,49"
            .to_string()
    ));
}

/// `{:?}` rounds a tie between two shortest decimals away from zero, `ryu` to even:
/// -3.86328125 is -3.8632813 in the exports (as it always was), not -3.8632812.
#[test]
fn floats_are_written_as_debug_writes_them() {
    let check = |x: f32| {
        let mut out = Vec::new();
        push_debug_f32(&mut out, x);
        assert_eq!(String::from_utf8(out).unwrap(), format!("{x:?}"), "{:#x}", x.to_bits());
    };
    for x in [
        -3.863_281_3_f32,
        0.0,
        -0.0,
        1.0,
        1e-4,
        9.999e-5,
        1e13,
        9.99e12,
        1e16,
        -1e9,
        0.1,
        1.5e-7,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        16_777_216.0,
        0.333_333_34,
    ] {
        check(x);
    }
    // a spread of bit patterns over every exponent
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..400_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        check(f32::from_bits((state >> 32) as u32));
    }
}

/// The rows of a Parquet file, its loop columns (after the twelve fixed ones), its number of row
/// groups and its key-value metadata.
struct Parquet {
    rows: Vec<Row>,
    loops: Vec<String>,
    row_groups: usize,
    metadata: Vec<(String, String)>,
}

fn read_parquet(path: &Path) -> Parquet {
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let meta = reader.metadata();
    let row_groups = meta.num_row_groups();
    let metadata = meta
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .map(|k| (k.key.clone(), k.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let fields = meta.file_metadata().schema().get_fields();
    let names: Vec<String> = fields.iter().map(|f| f.name().to_string()).collect();
    assert_eq!(
        names[..12],
        [
            "seq", "variant", "pass", "phase", "op", "buffer", "level", "offset", "index", "value", "file", "line"
        ]
    );
    let rows = reader.get_row_iter(None).unwrap().map(Result::unwrap).collect();
    Parquet {
        rows,
        loops: names[12..].to_vec(),
        row_groups,
        metadata,
    }
}

/// `attn-trace trace ARGS --format parquet -o FILE`, read back.
fn trace_parquet(args: &[&str]) -> Parquet {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    cmd()
        .args(["trace"])
        .args(args)
        .args(["--format", "parquet", "-o", path.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    read_parquet(&path)
}

/// The value of a JSON Lines line as written, parsed straight to `f32` (through `f64` a decimal
/// could round twice).
fn json_value(line: &str) -> f32 {
    let rest = &line[line.find(r#""value":"#).unwrap() + 8..];
    let text = &rest[..rest.find(',').unwrap()];
    match text.trim_matches('"') {
        "nan" => f32::NAN,
        "inf" => f32::INFINITY,
        "-inf" => f32::NEG_INFINITY,
        t => t.parse().unwrap(),
    }
}

/// Every row of `parquet` has every field of the JSON Lines line of the same number (after the
/// header line): the fixed columns, the value bit for bit, and each loop column the event's loop
/// variable or derived offset of that name, null when it has none; and every loop column is
/// some event's.
fn assert_same_rows(jsonl: &[String], parquet: &Parquet) {
    assert!(jsonl[0].starts_with(r#"{"format":"attn-trace-trace""#));
    let events = &jsonl[1..];
    assert_eq!(parquet.rows.len(), events.len());
    let mut used = vec![false; parquet.loops.len()];
    for (line, row) in events.iter().zip(&parquet.rows) {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        let cols: Vec<&Field> = row.get_column_iter().map(|(_, f)| f).collect();
        assert_eq!(cols.len(), 12 + parquet.loops.len());
        let long = |k: &str| Field::Long(e[k].as_i64().unwrap());
        let string = |k: &str| Field::Str(e[k].as_str().unwrap().to_string());
        assert_eq!(*cols[0], long("seq"), "{line}");
        for (c, key) in [
            (1, "variant"),
            (2, "pass"),
            (3, "phase"),
            (4, "op"),
            (5, "buffer"),
            (6, "level"),
            (10, "file"),
        ] {
            assert_eq!(*cols[c], string(key), "{line}");
        }
        assert_eq!(*cols[7], long("offset"), "{line}");
        let Field::ListInternal(index) = cols[8] else {
            panic!("index is {:?}", cols[8])
        };
        let expected: Vec<Field> = e["index"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| Field::Long(x.as_i64().unwrap()))
            .collect();
        assert_eq!(index.elements(), expected.as_slice(), "{line}");
        let Field::Float(value) = cols[9] else {
            panic!("value is {:?}", cols[9])
        };
        assert_eq!(value.to_bits(), json_value(line).to_bits(), "{line}");
        assert_eq!(
            *cols[11],
            Field::Int(i32::try_from(e["line"].as_i64().unwrap()).unwrap()),
            "{line}"
        );
        let (vars, derived) = (e["vars"].as_object().unwrap(), e["derived"].as_object().unwrap());
        for name in vars.keys().chain(derived.keys()) {
            assert!(parquet.loops.contains(name), "{name} has no column: {line}");
        }
        for (k, name) in parquet.loops.iter().enumerate() {
            let expected = match vars.get(name).or(derived.get(name)) {
                Some(v) => {
                    used[k] = true;
                    Field::Long(v.as_i64().unwrap())
                }
                None => Field::Null,
            };
            assert_eq!(*cols[12 + k], expected, "{name}: {line}");
        }
    }
    let unused: Vec<&String> = parquet
        .loops
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(n, _)| n)
        .collect();
    assert!(unused.is_empty(), "loop columns no event has: {unused:?}");
}

#[test]
fn parquet_rows_are_the_json_lines_rows() {
    // two variants: the second one's loop names come from a run that keeps no log
    let mha = scenario("mha_walkthrough.toml");
    let jsonl = lines(&["trace", &mha]);
    let parquet = trace_parquet(&[&mha]);
    assert_eq!(parquet.rows.len(), 4276);
    assert_same_rows(&jsonl, &parquet);
    assert_eq!(parquet.row_groups, 2, "a row group per variant");
    let meta = |key: &str| {
        parquet
            .metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(meta("attn-trace"), jsonl[0]);
    assert_eq!(meta("attn-trace.vars"), "bb,i,o,c,j,d,hh");
    assert!(meta("attn-trace.derived").starts_with("xi,yi,w_off,qi"));
    assert_eq!(&parquet.loops[..6], ["bb", "hh", "i", "j", "d", "c"]);

    // tile buffers, and loops that reuse a name of an enclosing one (rope inside a decode step)
    for (file, variant) in [("flash.toml", "flash"), ("kv_cache_decode.toml", "gqa")] {
        let args = [scenario(file), "--variant".into(), variant.into()];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let jsonl = lines(&[&["trace"], &args[..]].concat());
        assert_same_rows(&jsonl, &trace_parquet(&args));
    }
}

#[test]
fn parquet_keeps_the_filters_rows_and_their_loop_columns_only() {
    let mha = scenario("mha_walkthrough.toml");
    let flash = scenario("flash.toml");
    for args in [
        vec![mha.as_str(), "--phase", "scores", "--buffer", "q"],
        vec![mha.as_str(), "--variant", "mha", "--pass", "backward"],
        vec![flash.as_str(), "--level", "tile"],
    ] {
        let jsonl = lines(&[&["trace"], &args[..]].concat());
        let parquet = trace_parquet(&args);
        assert!(parquet.rows.len() < 4000, "{args:?}: {} rows", parquet.rows.len());
        assert_same_rows(&jsonl, &parquet);
    }
    // the scores phase reads q in the loops over bb, hh, i, j and d, with three offsets
    let parquet = trace_parquet(&[&mha, "--variant", "mha", "--phase", "scores", "--buffer", "q"]);
    assert_eq!(parquet.loops, ["bb", "hh", "i", "j", "d", "off", "q_base", "k_base"]);
}

#[test]
fn parquet_row_groups_split_a_trace_anywhere() {
    use attn_trace_analysis::export::Filter;
    use attn_trace_analysis::parquet_export::{LoopNames, ParquetWriter};
    let path = root().join("scenarios/flash.toml");
    let s = attn_trace_core::scenario::Scenario::load(&path).unwrap();
    let variant = attn_trace_core::kernels::Variant::Flash;
    let run = attn_trace_core::engine::run_unindexed(&s.inputs(), variant, s.passes);
    let trace = run.trace.as_ref().unwrap();
    let filter = Filter::default();
    let mut names = LoopNames::default();
    names.add_trace(trace, &filter);
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.parquet");
    let mut writer = ParquetWriter::new(std::fs::File::create(&small).unwrap(), &names, vec![])
        .unwrap()
        .with_row_group(1000);
    let written = writer.write_trace(trace, variant, &filter, |_, _| {}).unwrap();
    writer.finish().unwrap();
    let small = read_parquet(&small);
    assert_eq!(written as usize, small.rows.len());
    assert_eq!(small.row_groups, small.rows.len().div_ceil(1000));
    let whole = trace_parquet(&[path.to_str().unwrap(), "--variant", "flash"]);
    assert_eq!(whole.row_groups, 1);
    // as text: a NaN is no Field equal to itself
    assert_eq!(
        format!("{:?}", small.rows),
        format!("{:?}", whole.rows),
        "the same rows in row groups of 1000"
    );
}

#[test]
fn parquet_needs_an_output_file() {
    let out = cmd()
        .args(["trace", &scenario("indexing_trace.toml"), "--format", "parquet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--format parquet writes a binary file: name it with -o FILE"),
        "{stderr}"
    );
}
