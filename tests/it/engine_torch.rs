//! Grouped-query attention with rotary positions against PyTorch autograd in float64: every
//! tensor the engine reports, forward and backward, within 2e-4. The reference numbers were made
//! once by `tests/data/torch_gqa_rope.py` and are read from `tests/data/torch_gqa_rope.json`, so
//! these tests need no PyTorch.

use attn_trace_core::engine::{Inputs, Passes, Start, run};
use attn_trace_core::kernels::rope::{Pairs, Rope};
use attn_trace_core::kernels::{Mask, Variant};
use attn_trace_core::tensor::Shape;
use attn_trace_core::trace::Buf;
use serde_json::Value;

const REFERENCE: &str = include_str!("../data/torch_gqa_rope.json");

/// The script's `inp(n, k)`: values in [-1, 1] exactly as it makes them.
fn input(n: usize, k: usize) -> Vec<f32> {
    (0..n)
        .map(|i| (((i * 7919 + k * 104_729) % 2001) as f64 / 1000.0 - 1.0) as f32)
        .collect()
}

fn inputs(sh: Shape, rope: Option<Rope>) -> Inputs {
    let Shape { b, t, c, .. } = sh;
    let qkv = c + 2 * sh.kv_c();
    let start = Start::X {
        x: input(b * t * c, 1),
        w_qkv: input(c * qkv, 2),
        b_qkv: input(qkv, 3),
    };
    Inputs::new(sh, Mask::Causal, start, input(b * t * c, 6))
        .with_proj(input(c * c, 4), input(c, 5))
        .with_rope(rope)
}

#[test]
fn every_tensor_of_gqa_and_rope_agrees_with_pytorch_autograd() {
    let cases: Vec<Value> = serde_json::from_str(REFERENCE).unwrap();
    assert_eq!(cases.len(), 5);
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let dims: Vec<usize> = case["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap() as usize)
            .collect();
        let sh = Shape::new(dims[0], dims[1], dims[2], dims[3]).with_kv_heads(dims[4]);
        let rope = case["rope"].as_str().map(|p| Rope {
            pairs: Pairs::from_name(p).unwrap(),
            base: case["base"].as_f64().unwrap() as f32,
        });
        let inputs = inputs(sh, rope);
        // one head is the baseline kernel's case too
        let variants: &[Variant] = if sh.h == 1 {
            &[Variant::Gqa, Variant::Baseline]
        } else {
            &[Variant::Gqa]
        };
        let tensors = case["tensors"].as_object().unwrap();
        assert_eq!(tensors.len(), 19);
        for &variant in variants {
            for traced in [false, true] {
                let r = run(&inputs, variant, Passes::BOTH, traced);
                for (buf_name, want) in tensors {
                    let buf = Buf::from_name(buf_name).unwrap();
                    let got = r.tensors.get(buf);
                    let want: Vec<f64> = want.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
                    assert_eq!(got.len(), want.len(), "{name} {variant}: {buf_name}");
                    for (n, (&g, &w)) in got.iter().zip(&want).enumerate() {
                        let err = (f64::from(g) - w).abs() / w.abs().max(1.0);
                        assert!(
                            err <= 2e-4,
                            "{name} {variant} traced={traced}: {buf_name}[{n}] = {g}, PyTorch {w}"
                        );
                    }
                }
            }
        }
    }
}
