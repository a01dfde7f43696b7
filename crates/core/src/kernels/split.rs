//! Slicing the fused projection `qkv [B,T,3C]` into `q, k, v [B,T,C]` (channel offsets 0, C, 2C),
//! and gathering their gradients back.

use crate::tensor::Shape;
use crate::trace::{Buf, Phase, Recorder};

/// `q[qi + c] = qkv[ri + c]`, `k[qi + c] = qkv[ri + C + c]`, `v[qi + c] = qkv[ri + 2C + c]`
/// with `qi = (bb*T + i)*C` and `ri = (bb*T + i)*3C`.
pub fn forward<R: Recorder>(rec: &mut R, sh: Shape, qkv: &[f32], q: &mut [f32], k: &mut [f32], v: &mut [f32]) {
    let Shape { b: B, t: T, c: C, .. } = sh;
    rec.phase(Phase::Split);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..T {
            let qi = (bb * T + i) * C;
            let ri = (bb * T + i) * 3 * C;
            rec.enter(&["i", "qi", "ri"], [i, qi, ri]);
            for c in 0..C {
                rec.enter(&["c"], [c]);
                let x = rec.read(Buf::Qkv, qkv, ri + c);
                rec.write(Buf::Q, q, qi + c, x);
                let x = rec.read(Buf::Qkv, qkv, ri + C + c);
                rec.write(Buf::K, k, qi + c, x);
                let x = rec.read(Buf::Qkv, qkv, ri + 2 * C + c);
                rec.write(Buf::V, v, qi + c, x);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// The reverse copy: `d_qkv[ri + c] = d_q[qi + c]`, `d_qkv[ri + C + c] = d_k[qi + c]`,
/// `d_qkv[ri + 2C + c] = d_v[qi + c]`.
pub fn backward<R: Recorder>(rec: &mut R, sh: Shape, d_q: &[f32], d_k: &[f32], d_v: &[f32], d_qkv: &mut [f32]) {
    let Shape { b: B, t: T, c: C, .. } = sh;
    rec.phase(Phase::SplitBack);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..T {
            let qi = (bb * T + i) * C;
            let ri = (bb * T + i) * 3 * C;
            rec.enter(&["i", "qi", "ri"], [i, qi, ri]);
            for c in 0..C {
                rec.enter(&["c"], [c]);
                let g = rec.read(Buf::DQ, d_q, qi + c);
                rec.write(Buf::DQkv, d_qkv, ri + c, g);
                let g = rec.read(Buf::DK, d_k, qi + c);
                rec.write(Buf::DQkv, d_qkv, ri + C + c, g);
                let g = rec.read(Buf::DV, d_v, qi + c);
                rec.write(Buf::DQkv, d_qkv, ri + 2 * C + c, g);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}
