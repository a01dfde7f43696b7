//! The sgemm the linear layers multiply through: the library chosen once for the CPU, and
//! the products of whole matrices or of blocks of them read in place.

/// The sgemm libraries the linear layers can multiply through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sgemm {
    /// `matrixmultiply`: both operands packed into blocks sized for the caches, an 8×8 FMA
    /// kernel, or 16×16 with AVX-512 (in a build with the feature `avx512`).
    Matrixmultiply,
    /// `gemm-f32` (in a build with the feature `avx512`): its AVX-512 kernel, or its FMA kernel
    /// on a CPU without AVX-512.
    Gemm,
}

impl Sgemm {
    /// The library's crate name, as `ATTN_TRACE_SGEMM` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            Sgemm::Matrixmultiply => "matrixmultiply",
            Sgemm::Gemm => "gemm",
        }
    }
}

/// The sgemm of this process, chosen once: gemm-f32 on a CPU with AVX-512 in a build with the
/// feature `avx512` (the default), matrixmultiply otherwise. Over the products of TinyGPT's
/// configs on a Zen 5 EPYC, single-threaded, gemm-f32's AVX-512 kernel took 14–21% less time than
/// matrixmultiply's; on the AVX2-only Zen 3 matrixmultiply trained faster (docs/performance.md).
///
/// `ATTN_TRACE_SGEMM=matrixmultiply` or `=gemm` (the latter only in a build with `avx512`)
/// overrides the choice, so that one binary can compare the two. Unlike `ATTN_TRACE_SIMD`, the
/// cap of the loops in [`attn_trace_core::tensor::simd`], the choice does not depend on that cap: every
/// level of the loops then multiplies through the same sgemm, and so trains to the same bits.
pub fn sgemm() -> Sgemm {
    static CHOICE: std::sync::OnceLock<Sgemm> = std::sync::OnceLock::new();
    *CHOICE.get_or_init(|| {
        let built = cfg!(feature = "avx512");
        match std::env::var("ATTN_TRACE_SGEMM").as_deref() {
            Ok("matrixmultiply") => Sgemm::Matrixmultiply,
            Ok("gemm") if built => Sgemm::Gemm,
            _ if built && has_avx512() => Sgemm::Gemm,
            _ => Sgemm::Matrixmultiply,
        }
    })
}

/// Does the CPU have AVX-512 (the foundation, all gemm-f32's kernel asks for)?
fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Writes `C[m,n] = Σ_k A[m,k]·B[k,n]` with `A` read transposed when `a_t` (then stored
/// `[k, m]`) and `B` read transposed when `b_t` (stored `[n, k]`); `C` is `[m, n]`, through
/// [`sgemm`]'s library.
#[allow(clippy::too_many_arguments)]
pub fn matmul(m: usize, k: usize, n: usize, a: &[f32], a_t: bool, b: &[f32], b_t: bool, c: &mut [f32]) {
    let (lda, ldb) = (if a_t { m } else { k }, if b_t { k } else { n });
    matmul_ld(m, k, n, (a, lda, a_t), (b, ldb, b_t), (c, n), false);
}

/// [`matmul`] over blocks of larger row-major matrices: each operand comes with its row length
/// in the buffer (`ld`, at least the block's), so a block of columns is read or written in
/// place; `C` gets the product added to it when `accumulate`.
pub(super) fn matmul_ld(
    m: usize,
    k: usize,
    n: usize,
    (a, lda, a_t): (&[f32], usize, bool),
    (b, ldb, b_t): (&[f32], usize, bool),
    (c, ldc): (&mut [f32], usize),
    accumulate: bool,
) {
    // rows × columns of each operand as stored, and the room that takes in a buffer with rows
    // of `ld` values
    let room = |rows: usize, cols: usize, ld: usize| if rows == 0 { 0 } else { (rows - 1) * ld + cols };
    let (a_rows, a_cols) = if a_t { (k, m) } else { (m, k) };
    let (b_rows, b_cols) = if b_t { (n, k) } else { (k, n) };
    assert!(
        a_cols <= lda
            && b_cols <= ldb
            && n <= ldc
            && a.len() >= room(a_rows, a_cols, lda)
            && b.len() >= room(b_rows, b_cols, ldb)
            && c.len() >= room(m, n, ldc),
        "matmul operands too small"
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        // an empty sum: C is 0, or unchanged when accumulating (no library is asked about it)
        if !accumulate {
            c.chunks_mut(ldc).take(m).for_each(|row| row[..n].fill(0.0));
        }
        return;
    }
    // (row stride, column stride) of each operand as the product reads it: a transposed operand
    // is the stored one with its strides swapped, and the sgemm packs it as it goes
    let (rsa, csa) = if a_t { (1, lda as isize) } else { (lda as isize, 1) };
    let (rsb, csb) = if b_t { (1, ldb as isize) } else { (ldb as isize, 1) };
    #[cfg(feature = "avx512")]
    if sgemm() == Sgemm::Gemm {
        // gemm-f32's kernels write C a column of registers at a time (column-major), so it is
        // given the transposed problem, `Cᵀ[n,m] = Bᵀ·Aᵀ`, whose output columns are C's rows:
        // each operand is the stored one with its strides swapped, nothing is copied. Its
        // arguments: (m, n, k, dst, dst column stride, dst row stride, read dst, lhs, its
        // column and row strides, rhs, its column and row strides, α, β, three conjugations,
        // threads), and it writes `dst = α·dst + β·lhs·rhs`, reading dst only when told to.
        // SAFETY: the same operands and strides as matrixmultiply's call below, transposed:
        // the assert above keeps every (row, col) they reach inside its slice, and `c` is
        // borrowed mutably, so it does not alias `a` or `b`. `dst` is read only when
        // `accumulate`, and then it holds initialised values.
        #[allow(unsafe_code)]
        unsafe {
            gemm_f32::gemm::f32::get_gemm_fn()(
                n,
                m,
                k,
                c.as_mut_ptr(),
                ldc as isize,
                1,
                accumulate,
                b.as_ptr(),
                rsb,
                csb,
                a.as_ptr(),
                rsa,
                csa,
                1.0,
                1.0,
                false,
                false,
                false,
                gemm_common::Parallelism::None,
            );
        }
        return;
    }
    // SAFETY: the assert above keeps every (row, col) the strides reach inside its slice, and
    // `c` is borrowed mutably, so it does not alias `a` or `b`. With β = 0 the sgemm writes C
    // without reading it.
    #[allow(unsafe_code)]
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            rsa,
            csa,
            b.as_ptr(),
            rsb,
            csb,
            if accumulate { 1.0 } else { 0.0 },
            c.as_mut_ptr(),
            ldc as isize,
            1,
        );
    }
}
