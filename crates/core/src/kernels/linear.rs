//! Linear layer `y = x·W + b` over the rows of a `[B,T,IC]` input, `W` stored `[IC, OC]`.
//!
//! This loop version is the reference; TinyGPT's training path runs the same math through sgemm
//! (`model::ops`) and `tests/it/model_ops.rs` holds the two together (≤ 1e-5 relative).

use crate::trace::{Buf, Phase, Recorder};

/// Forward: `y[(bb*T + i)*OC + o] = b[o] + Σ_c x[(bb*T + i)*IC + c] · W[c*OC + o]`.
pub fn forward<R: Recorder>(
    rec: &mut R,
    phase: Phase,
    [B, T]: [usize; 2],
    (x_id, x): (Buf, &[f32]),
    (w_id, w): (Buf, &[f32]),
    bias: Option<(Buf, &[f32])>,
    (y_id, y): (Buf, &mut [f32]),
) {
    let (IC, OC) = (x.len() / (B * T), y.len() / (B * T));
    assert_eq!(w.len(), IC * OC);
    rec.phase(phase);
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..T {
            let xi = (bb * T + i) * IC;
            let yi = (bb * T + i) * OC;
            rec.enter(&["i", "xi", "yi"], [i, xi, yi]);
            for o in 0..OC {
                rec.enter(&["o"], [o]);
                // the sum starts at the bias, or at 0 for a layer without one (MLA's)
                let mut s = match bias {
                    Some((b_id, b)) => rec.read(b_id, b, o),
                    None => 0.0,
                };
                for c in 0..IC {
                    rec.enter(&["c", "w_off"], [c, c * OC + o]);
                    s += rec.read(x_id, x, xi + c) * rec.read(w_id, w, c * OC + o);
                    rec.exit();
                }
                rec.write(y_id, y, yi + o, s);
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }
}

/// Backward, from `dy` to `dx`, `dW` and `db` (each written once, not accumulated):
/// `dx[xi + c] = Σ_o dy[yi + o] · W[c*OC + o]`, `dW[c*OC + o] = Σ_{bb,i} x[xi + c] · dy[yi + o]`,
/// `db[o] = Σ_{bb,i} dy[yi + o]`.
#[allow(clippy::too_many_arguments)]
pub fn backward<R: Recorder>(
    rec: &mut R,
    phase: Phase,
    rows: [usize; 2],
    x: (Buf, &[f32]),
    w: (Buf, &[f32]),
    dy: (Buf, &[f32]),
    dx: (Buf, &mut [f32]),
    dw: (Buf, &mut [f32]),
    db: Option<(Buf, &mut [f32])>,
) {
    backward_into(rec, phase, rows, x, w, dy, dx, dw, db, false);
}

/// [`backward`], but adding `dx` to what the buffer holds (`+=`, recorded as a read and a
/// write): for an input that feeds several layers, such as `x` into the q, k and v projections.
#[allow(clippy::too_many_arguments)]
pub fn backward_into<R: Recorder>(
    rec: &mut R,
    phase: Phase,
    [B, T]: [usize; 2],
    (x_id, x): (Buf, &[f32]),
    (w_id, w): (Buf, &[f32]),
    (dy_id, dy): (Buf, &[f32]),
    (dx_id, dx): (Buf, &mut [f32]),
    (dw_id, dw): (Buf, &mut [f32]),
    db: Option<(Buf, &mut [f32])>,
    accumulate_dx: bool,
) {
    let (IC, OC) = (x.len() / (B * T), dy.len() / (B * T));
    rec.phase(phase);

    // dx = dy · Wᵀ
    for bb in 0..B {
        rec.enter(&["bb"], [bb]);
        for i in 0..T {
            let xi = (bb * T + i) * IC;
            let yi = (bb * T + i) * OC;
            rec.enter(&["i", "xi", "yi"], [i, xi, yi]);
            for c in 0..IC {
                rec.enter(&["c"], [c]);
                let mut s = 0.0;
                for o in 0..OC {
                    rec.enter(&["o", "w_off"], [o, c * OC + o]);
                    s += rec.read(dy_id, dy, yi + o) * rec.read(w_id, w, c * OC + o);
                    rec.exit();
                }
                if accumulate_dx {
                    rec.add(dx_id, dx, xi + c, s);
                } else {
                    rec.write(dx_id, dx, xi + c, s);
                }
                rec.exit();
            }
            rec.exit();
        }
        rec.exit();
    }

    // dW = xᵀ · dy, summed over every row (bb, i)
    for c in 0..IC {
        rec.enter(&["c"], [c]);
        for o in 0..OC {
            rec.enter(&["o", "w_off"], [o, c * OC + o]);
            let mut s = 0.0;
            for bb in 0..B {
                rec.enter(&["bb"], [bb]);
                for i in 0..T {
                    let xi = (bb * T + i) * IC;
                    let yi = (bb * T + i) * OC;
                    rec.enter(&["i", "xi", "yi"], [i, xi, yi]);
                    s += rec.read(x_id, x, xi + c) * rec.read(dy_id, dy, yi + o);
                    rec.exit();
                }
                rec.exit();
            }
            rec.write(dw_id, dw, c * OC + o, s);
            rec.exit();
        }
        rec.exit();
    }

    // db = Σ over rows of dy, when the layer has a bias
    let Some((db_id, db)) = db else {
        return;
    };
    for o in 0..OC {
        rec.enter(&["o"], [o]);
        let mut s = 0.0;
        for bb in 0..B {
            rec.enter(&["bb"], [bb]);
            for i in 0..T {
                let yi = (bb * T + i) * OC;
                rec.enter(&["i", "yi"], [i, yi]);
                s += rec.read(dy_id, dy, yi + o);
                rec.exit();
            }
            rec.exit();
        }
        rec.write(db_id, db, o, s);
        rec.exit();
    }
}
