//! How a forward pass computes its linear layers: all rows through sgemm, or row by row as the
//! reference loop does.

use crate::ops;

/// How the linear layers of a forward pass are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linear {
    /// All rows at once through sgemm ([`ops::linear_forward`]): training and evaluation.
    Gemm,
    /// One row at a time in the reference loop's order ([`ops::linear_rows`], the sums of
    /// `kernels/linear.rs`), so a row's numbers do not depend on the rows computed with it:
    /// sampling, where a token decoded alone from the KV cache must get exactly the numbers
    /// it gets in a pass over the whole window.
    Rows,
}

impl Linear {
    /// `y = x·W + b` over the `[B,T]` rows of `x`.
    pub fn forward(self, bt: [usize; 2], x: &[f32], w: &[f32], b: &[f32], y: &mut [f32]) {
        match self {
            Linear::Gemm => ops::linear_forward(bt, x, w, b, y),
            Linear::Rows => ops::linear_rows(x, w, b, y),
        }
    }

    /// `y = x·W + b` split into the column blocks `ys` (the attention's `q | k | v`, `k` and `v`
    /// `H_kv·D` wide): with sgemm, each block a product of its own written in place
    /// ([`ops::linear_forward_split`]; `y` is not used); row by row, `y` and then copies of its
    /// blocks.
    pub(crate) fn forward_split(
        self,
        bt: [usize; 2],
        x: &[f32],
        w: &[f32],
        b: &[f32],
        y: &mut [f32],
        ys: [&mut [f32]; 3],
    ) {
        match self {
            Linear::Gemm => ops::linear_forward_split(bt, x, w, b, ys),
            Linear::Rows => {
                ops::linear_rows(x, w, b, y);
                let rows = bt[0] * bt[1];
                let mut o = 0;
                for part in ys {
                    let n = part.len() / rows;
                    for (dst, src) in part.chunks_exact_mut(n).zip(y.chunks_exact(b.len())) {
                        dst.copy_from_slice(&src[o..o + n]);
                    }
                    o += n;
                }
            }
        }
    }

    /// `y = x·W + b`, then `g = gelu(y)` (`th`: the tanh GELU's backward reuses), over the
    /// `[B,T]` rows of `x`: with sgemm, in one pass that adds the bias as it takes GELU.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn forward_gelu(
        self,
        bt: [usize; 2],
        x: &[f32],
        w: &[f32],
        b: &[f32],
        y: &mut [f32],
        g: &mut [f32],
        th: &mut [f32],
    ) {
        match self {
            Linear::Gemm => ops::linear_gelu_forward(bt, x, w, b, y, g, th),
            Linear::Rows => {
                ops::linear_rows(x, w, b, y);
                ops::gelu_forward(y, g, th);
            }
        }
    }
}
