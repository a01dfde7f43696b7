//! The exports of `attn-trace trace`, byte for byte what the plain writer they replaced wrote
//! (lines pinned from it), and the fast float formatting against `{:?}`.

use crate::support::cli::stdout_of;
use crate::support::root;
use attn_trace::analysis::export::push_debug_f32;

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
        r#"{"seq":0,"variant":"baseline","pass":"forward","phase":"qkv_proj","op":"read","buffer":"b_qkv","level":"global","offset":0,"index":[0],"value":0.1665524,"vars":{"bb":0,"i":0,"o":0},"derived":{"xi":0,"yi":0},"file":"src/kernels/linear.rs","line":29}"#
    );
    let flash = lines(&["trace", &scenario("flash.toml"), "--variant", "flash"]);
    let tile = flash.iter().find(|l| l.contains(r#""buffer":"s_tile""#)).unwrap();
    assert_eq!(
        tile,
        r#"{"seq":756,"variant":"flash","pass":"forward","phase":"flash","op":"write","buffer":"s_tile","level":"tile","offset":0,"index":[0,0],"value":-0.70584434,"vars":{"bb":0,"hh":0,"i0":0,"j0":0,"ii":0,"jj":0},"derived":{},"file":"src/kernels/attention_flash.rs","line":181}"#
    );
    let decode = lines(&["trace", &scenario("kv_cache_decode.toml")]);
    assert_eq!(
        decode[199],
        r#"{"seq":198,"variant":"gqa","pass":"forward","phase":"decode_qkv","op":"read","buffer":"b_qkv","level":"global","offset":11,"index":[11],"value":0.0438793,"vars":{"bb":0,"t":0,"o":11},"derived":{"xi":0,"ci":0},"file":"src/kernels/decode.rs","line":77}"#
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
        "0,baseline,forward,qkv_proj,read,b_qkv,global,0,0,0.1665524,bb=0;i=0;o=0,xi=0;yi=0,src/kernels/linear.rs,29"
    );
    assert_eq!(
        mha[499],
        "498,baseline,forward,scores,read,k,global,5,0;1;1,0.20991491,bb=0;i=2;j=1;c=1,qi=8;kj=4;off=7,src/kernels/attention_1h.rs,38"
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
        &"756,flash,forward,flash,write,s_tile,tile,0,0;0,-0.70584434,bb=0;hh=0;i0=0;j0=0;ii=0;jj=0,,src/kernels/attention_flash.rs,181"
            .to_string()
    ));
    let masked = lines(&["trace", &scenario("masked_element.toml"), "--format", "csv"]);
    assert!(masked.contains(
        &"593,baseline,forward,scores,write,scores,global,1,0;0;1,-1000000000.0,bb=0;i=0;j=1,qi=0;kj=4;off=1,src/kernels/attention_1h.rs,45"
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
