//! Flat row-major tensors and the offset arithmetic the kernels use.
//!
//! Every buffer in attn-trace is a `Vec<f32>` in row-major order; a "reshape" such as MHA's
//! `[B,T,C] → [B,T,H,D]` is only a different shape laid over the same storage.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// The sizes of one attention problem: batch `B`, key/sequence length `T`, channels `C`,
/// heads `H`, and the query length `S` (equal to `T` in self-attention; cross-attention reads
/// `S` queries against `T` keys).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub b: usize,
    pub t: usize,
    pub c: usize,
    pub h: usize,
    pub s: usize,
}

/// `{"B", "T", "C", "H"}`, plus `"S"` for cross-attention.
impl Serialize for Shape {
    fn serialize<Z: Serializer>(&self, ser: Z) -> Result<Z::Ok, Z::Error> {
        let mut m = ser.serialize_map(None)?;
        m.serialize_entry("B", &self.b)?;
        if self.is_cross() {
            m.serialize_entry("S", &self.s)?;
        }
        m.serialize_entry("T", &self.t)?;
        m.serialize_entry("C", &self.c)?;
        m.serialize_entry("H", &self.h)?;
        m.end()
    }
}

impl Shape {
    /// Self-attention sizes: `S = T`.
    pub const fn new(b: usize, t: usize, c: usize, h: usize) -> Self {
        Shape { b, t, c, h, s: t }
    }

    /// Cross-attention sizes: `S` queries against `T` keys and values.
    pub const fn cross(b: usize, s: usize, t: usize, c: usize, h: usize) -> Self {
        Shape { b, t, c, h, s }
    }

    /// Queries and keys come from different sequences.
    pub const fn is_cross(&self) -> bool {
        self.s != self.t
    }

    /// Head size `D = C / H`.
    pub const fn d(&self) -> usize {
        self.c / self.h
    }

    /// The same sizes with a single head (what the baseline kernel sees).
    pub const fn single_head(self) -> Self {
        Shape { h: 1, ..self }
    }
}

/// A named flat buffer together with the shape it is read in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

impl Tensor {
    pub fn new(shape: Vec<usize>, data: Vec<f32>) -> Self {
        assert_eq!(numel(&shape), data.len(), "tensor data does not fit its shape");
        Tensor { shape, data }
    }

    pub fn zeros(shape: Vec<usize>) -> Self {
        let n = numel(&shape);
        Tensor::new(shape, vec![0.0; n])
    }
}

/// Number of elements of a shape.
pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Row-major strides: the last dimension is contiguous.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * shape[k + 1];
    }
    s
}

/// Flat offset of a logical index: `Σ index[k] * stride[k]`.
pub fn ravel(shape: &[usize], index: &[usize]) -> usize {
    strides(shape).iter().zip(index).map(|(s, i)| s * i).sum()
}

/// Logical index of a flat offset (the inverse of [`ravel`]).
pub fn unravel(shape: &[usize], mut offset: usize) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for k in (0..shape.len()).rev() {
        let n = shape[k].max(1);
        index[k] = offset % n;
        offset /= n;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ravel_and_unravel_match_the_docs_offsets() {
        // off(b,h,i,j) = ((b*H + h)*T + i)*T + j with B=1, H=2, T=3: head 1, i=2, j=1 → 16.
        assert_eq!(ravel(&[1, 2, 3, 3], &[0, 1, 2, 1]), 16);
        assert_eq!(unravel(&[1, 2, 3, 3], 16), vec![0, 1, 2, 1]);
        // q_base = ((b*T + i)*H + h)*D with T=3, H=2, D=2: i=2, h=1 → 10.
        assert_eq!(ravel(&[1, 3, 2, 2], &[0, 2, 1, 0]), 10);
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
    }

    #[test]
    fn shape_serialises_s_only_for_cross_attention() {
        let own = serde_json::to_string(&Shape::new(1, 3, 4, 2)).unwrap();
        assert_eq!(own, r#"{"B":1,"T":3,"C":4,"H":2}"#);
        let cross = serde_json::to_string(&Shape::cross(1, 2, 5, 4, 2)).unwrap();
        assert_eq!(cross, r#"{"B":1,"S":2,"T":5,"C":4,"H":2}"#);
    }

    #[test]
    fn head_size_divides_channels() {
        let sh = Shape::new(1, 3, 4, 2);
        assert_eq!(sh.d(), 2);
        assert_eq!(sh.single_head().d(), 4);
    }
}
