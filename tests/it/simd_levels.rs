//! The hot loops (model ops, untraced attention passes, AdamW) are compiled once per instruction
//! set and the widest the CPU has is picked at run time (`attn_trace_core::tensor::simd`). Every copy must
//! give the same bits. This test runs itself again with `ATTN_TRACE_SIMD` capping the level and
//! compares a fingerprint of a few training steps made at each level, and of flash's untraced
//! passes.

use attn_trace_core::kernels::Mask;
use attn_trace_core::tensor::Shape;
use attn_trace_core::tensor::simd::{self, SimdLevel};
use attn_trace_core::untraced::dispatch;
use attn_trace_model::gpt::Attention;
use attn_trace_model::{Config, Dataset, TinyGpt, Trainer};
use std::process::Command;

use crate::support::inputs::core;

const CHILD: &str = "ATTN_TRACE_SIMD_CHILD";

/// FNV-1a over the bits of every value, so one flipped bit anywhere changes the result.
fn fnv(values: impl IntoIterator<Item = u32>, mut h: u64) -> u64 {
    for v in values {
        for byte in v.to_le_bytes() {
            h = (h ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

/// Three steps of training for one head (the baseline kernel) and for three heads (MHA), at
/// sizes that are not multiples of the vector widths: the losses and every parameter after.
fn fingerprint() -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325;
    for (seq_len, d_model, n_heads) in [(11, 20, 1), (13, 24, 3)] {
        let cfg = Config {
            seq_len,
            d_model,
            n_layers: 2,
            n_heads,
            ..Config::default()
        };
        let model = TinyGpt::new(cfg, 5).expect("valid config");
        let data = Dataset::builtin("copy", seq_len).expect("built-in dataset");
        let mut trainer = Trainer::new(model, data, 5, 3e-3, 9).expect("valid trainer");
        for _ in 0..3 {
            h = fnv([trainer.step().loss.to_bits()], h);
        }
        h = fnv(trainer.model.params.iter().map(|p| p.to_bits()), h);
    }
    flash(h)
}

/// Continues `h` with flash's untraced passes (training's tiles) under three masks, at a shape
/// within one tile and one of several tiles with ragged last ones: every output.
fn flash(mut h: u64) -> u64 {
    let Attention::Flash(tiles) = Attention::FLASH else {
        unreachable!("Attention::FLASH is flash")
    };
    for sh in [Shape::new(1, 37, 24, 3), Shape::new(2, 150, 64, 2)] {
        let tiles = tiles.fit(sh);
        let x = core(sh, 3.0, sh.t as u64);
        let (n, rows) = (sh.b * sh.t * sh.c, sh.b * sh.h * sh.t);
        for mask in [Mask::Causal, Mask::None, Mask::Window { w: 9, sinks: 2 }] {
            let (mut att, mut lse, mut delta) = (vec![0.0f32; n], vec![0.0f32; rows], vec![0.0f32; rows]);
            let (mut d_q, mut d_k, mut d_v) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
            let qkv = (&x.q[..], &x.k[..], &x.v[..]);
            dispatch::flash_forward_untraced(sh, tiles, &mask, qkv, &mut att, &mut lse);
            let grads = (&mut d_q[..], &mut d_k[..], &mut d_v[..]);
            dispatch::flash_backward_untraced(sh, tiles, &mask, qkv, (&att, &lse), &x.d_att, &mut delta, grads);
            for out in [&att, &lse, &delta, &d_q, &d_k, &d_v] {
                h = fnv(out.iter().map(|v| v.to_bits()), h);
            }
        }
    }
    h
}

/// Runs this test again with `ATTN_TRACE_SIMD=cap` and returns the level and fingerprint it saw.
fn child(cap: &str) -> (String, u64) {
    let exe = std::env::current_exe().expect("the test binary's path");
    // the harness names a test by its module path without the crate's name
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::every_instruction_set_gives_the_same_bits");
    let out = Command::new(exe)
        .args(["--exact", &name, "--nocapture"])
        .env(CHILD, "1")
        .env("ATTN_TRACE_SIMD", cap)
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child at {cap} failed:\n{stdout}");
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("fingerprint "))
        .unwrap_or_else(|| panic!("no fingerprint from the child at {cap}:\n{stdout}"));
    let (level, hash) = line.split_once(' ').expect("level and hash");
    (level.to_string(), hash.parse().expect("a number"))
}

#[test]
fn every_instruction_set_gives_the_same_bits() {
    if std::env::var_os(CHILD).is_some() {
        println!("fingerprint {:?} {}", simd::level(), fingerprint());
        return;
    }
    let here = fingerprint();
    let best = simd::level();
    for (cap, level) in [("baseline", SimdLevel::Baseline), ("avx2", SimdLevel::Avx2)] {
        let (seen, hash) = child(cap);
        assert_eq!(seen, format!("{:?}", level.min(best)), "the cap {cap} was not applied");
        assert_eq!(hash, here, "{seen} gives different bits than {best:?}");
    }
}
