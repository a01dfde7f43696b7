//! Flat row-major tensors and the offset arithmetic the kernels use.
//!
//! Every buffer in attn-trace is a `Vec<f32>` in row-major order; a "reshape" such as MHA's
//! `[B,T,C] → [B,T,H,D]` is only a different shape laid over the same storage.

pub mod simd;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// The sizes of one attention problem: batch `B`, key/sequence length `T`, channels `C`,
/// heads `H`, the query length `S` (equal to `T` in self-attention; cross-attention reads
/// `S` queries against `T` keys) and the number of key/value heads `H_kv` (equal to `H` except
/// in grouped-query attention, where query head `h` reads key/value head `h / (H/H_kv)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub b: usize,
    pub t: usize,
    pub c: usize,
    pub h: usize,
    pub s: usize,
    pub h_kv: usize,
}

/// `{"B", "T", "C", "H"}`, plus `"S"` for cross-attention and `"H_kv"` when it is not `H`.
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
        if self.shares_kv_heads() {
            m.serialize_entry("H_kv", &self.h_kv)?;
        }
        m.end()
    }
}

impl Shape {
    /// Self-attention sizes: `S = T`.
    pub const fn new(b: usize, t: usize, c: usize, h: usize) -> Self {
        Shape {
            b,
            t,
            c,
            h,
            s: t,
            h_kv: h,
        }
    }

    /// Cross-attention sizes: `S` queries against `T` keys and values.
    pub const fn cross(b: usize, s: usize, t: usize, c: usize, h: usize) -> Self {
        Shape { b, t, c, h, s, h_kv: h }
    }

    /// The same sizes with `h_kv` key/value heads (grouped-query attention; 1 is multi-query).
    #[must_use]
    pub const fn with_kv_heads(self, h_kv: usize) -> Self {
        Shape { h_kv, ..self }
    }

    /// Fewer key/value heads than query heads.
    pub const fn shares_kv_heads(&self) -> bool {
        self.h_kv != self.h
    }

    /// Query heads per key/value head, `H / H_kv` (llama2.c's `kv_mul`).
    pub const fn group(&self) -> usize {
        self.h / self.h_kv
    }

    /// Channels of one key or value row, `H_kv·D` (`C` unless grouped).
    pub const fn kv_c(&self) -> usize {
        self.h_kv * self.d()
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
    #[must_use]
    pub const fn single_head(self) -> Self {
        Shape { h: 1, h_kv: 1, ..self }
    }

    /// The same sizes with as many key/value heads as query heads (what MHA sees).
    #[must_use]
    pub const fn full_kv_heads(self) -> Self {
        Shape { h_kv: self.h, ..self }
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

/// The number of elements of `shape`, or `None` when it does not fit in a `usize`: for sizes
/// read from a file, before anything is allocated.
pub(crate) fn checked_numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
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

/// One dimension of a buffer's layout: its size and the loop variable that walks it in the
/// kernel (`i` for a query row, `j` for a key row, `h` for a head, `d` for a head channel …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim {
    pub name: &'static str,
    pub size: usize,
}

/// `Dim { name, size }`, short for the registry's tables.
pub const fn dim(name: &'static str, size: usize) -> Dim {
    Dim { name, size }
}

/// How a flat row-major buffer is indexed: its dimensions, outermost first, each named as the
/// kernel's loop names it. The flat offset of a logical index is `Σ index[k]·stride[k]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub dims: Vec<Dim>,
}

impl Layout {
    pub fn new(dims: Vec<Dim>) -> Self {
        Layout { dims }
    }

    /// The sizes alone, e.g. `[1, 2, 3, 3]`.
    pub fn sizes(&self) -> Vec<usize> {
        self.dims.iter().map(|d| d.size).collect()
    }

    /// The dimension names, e.g. `["b", "h", "i", "j"]`.
    pub fn names(&self) -> Vec<&'static str> {
        self.dims.iter().map(|d| d.name).collect()
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.dims.iter().map(|d| d.size).product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Position of the dimension called `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.dims.iter().position(|d| d.name == name)
    }

    /// Distance in the flat buffer between neighbours along dimension `k`.
    pub fn stride(&self, k: usize) -> usize {
        self.dims[k + 1..].iter().map(|d| d.size).product()
    }

    /// Flat offset of a logical index, or `None` when it has the wrong rank or is out of range.
    pub fn offset(&self, index: &[usize]) -> Option<usize> {
        if index.len() != self.dims.len() || index.iter().zip(&self.dims).any(|(i, d)| *i >= d.size) {
            return None;
        }
        Some(ravel(&self.sizes(), index))
    }

    /// Flat offset of the element with these named coordinates: a dimension not named is 0, a
    /// name the layout lacks must be 0 (the baseline's `[B,S,T]` scores are the case `h = 0` of
    /// MHA's `[B,H,S,T]`). `None` when a coordinate is out of range.
    pub fn offset_of(&self, coords: &[(&str, usize)]) -> Option<usize> {
        if coords.iter().any(|&(n, v)| v != 0 && self.position(n).is_none()) {
            return None;
        }
        let index: Vec<usize> = self
            .dims
            .iter()
            .map(|d| coords.iter().find(|(n, _)| *n == d.name).map_or(0, |&(_, v)| v))
            .collect();
        self.offset(&index)
    }

    /// Logical index of a flat offset.
    pub fn index(&self, offset: usize) -> Vec<usize> {
        unravel(&self.sizes(), offset)
    }

    /// The dimension a learner reads as the rows of the buffer's matrix: the first position
    /// (`i` for queries, `j` for keys, `ii`, `jj` within one of flash's tiles, `t` of the
    /// rotation tables, a decode cache's window `slot` or row `r` in a pool block, a block
    /// table's `blk`) or input channel (`c`). The dimensions after it are the columns (`j` of
    /// a score row, `h, d` of a per-head row, `o` of a weight, `m` of a table); the ones before it pick the matrix (batch `b`, head `h` of the
    /// scores). When nothing follows it (flash's `lse [b,h,i]`), the dimension before it gives
    /// the rows and it the columns. `None` for a vector such as a bias or a tile's `m [ii]`.
    pub fn row_dim(&self) -> Option<usize> {
        let r = self
            .dims
            .iter()
            .position(|d| matches!(d.name, "i" | "j" | "c" | "t" | "ii" | "jj" | "slot" | "r" | "blk"))?;
        if r + 1 < self.dims.len() {
            Some(r)
        } else {
            r.checked_sub(1)
        }
    }

    /// Does this layout hold one value per (query `i`, key `j`) pair, where a mask applies?
    pub fn is_pairs(&self) -> bool {
        let n = self.dims.len();
        n >= 2 && self.dims[n - 2].name == "i" && self.dims[n - 1].name == "j"
    }

    /// The coordinate called `name` of the element at `offset` (0 when the layout has no such
    /// dimension, as the baseline has no head).
    pub fn coord(&self, offset: usize, name: &str) -> usize {
        self.position(name).map_or(0, |k| self.index(offset)[k])
    }

    /// `b0 j1 h1 d0`: the logical index of `offset`, each coordinate with its dimension's name.
    pub fn label(&self, offset: usize) -> String {
        self.index(offset)
            .iter()
            .zip(&self.dims)
            .map(|(v, d)| format!("{}{v}", d.name))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `[B,H,S,T]`-style sizes as text: `[1,2,3,3]`.
    pub fn sizes_text(&self) -> String {
        let s: Vec<String> = self.dims.iter().map(|d| d.size.to_string()).collect();
        format!("[{}]", s.join(","))
    }
}

/// What a buffer is to the computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Given data: the input `x`, the key/value `memory`, the upstream gradient `d_out`, the
    /// dropout keep mask, or `q, k, v` when a scenario starts at the attention core.
    Input,
    /// A learned weight or bias.
    Parameter,
    /// Computed by the forward pass.
    Activation,
    /// Computed by the backward pass.
    Gradient,
}

impl Role {
    pub const fn name(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Parameter => "parameter",
            Role::Activation => "activation",
            Role::Gradient => "gradient",
        }
    }
}

/// Where a buffer lives: main memory, or the small working set a tiled kernel keeps on chip
/// (FlashAttention's SRAM). The plain kernels touch only global buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Global,
    Tile,
}

impl Level {
    pub const fn name(self) -> &'static str {
        match self {
            Level::Global => "global",
            Level::Tile => "tile",
        }
    }
}

/// Everything fixed about one buffer of one run: its role, level, the shape it is reported in
/// (`run --json`, exports) and the layout the kernel indexes it with (MHA reads `q [B,S,C]` as
/// `[B,S,H,D]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub role: Role,
    pub level: Level,
    pub shape: Vec<usize>,
    pub layout: Layout,
}

impl Spec {
    pub fn len(&self) -> usize {
        self.layout.len()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }
}
