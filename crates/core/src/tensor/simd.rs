//! Helpers for the loops that run untraced and hot (training, untraced attention): compiling a
//! function for the CPU it runs on, and an exponential the compiler can vectorise.

use std::sync::OnceLock;

/// The instruction sets `with_simd!` compiles for, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SimdLevel {
    /// x86-64's baseline (SSE2, 4 floats per instruction), or any other architecture.
    Baseline,
    /// AVX2 and FMA, 8 floats per instruction.
    Avx2,
    /// AVX-512 (F, VL, BW, DQ) and FMA, 16 floats per instruction.
    Avx512,
}

/// The widest [`SimdLevel`] this CPU supports, found once. The environment variable
/// `ATTN_TRACE_SIMD=baseline` or `=avx2` caps it, so the narrower copies can be run (and tested)
/// on a wider CPU; every level gives the same bits. Any other value, or none, leaves no cap.
pub fn level() -> SimdLevel {
    static LEVEL: OnceLock<SimdLevel> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        let cap = match std::env::var("ATTN_TRACE_SIMD").as_deref() {
            Ok("baseline") => SimdLevel::Baseline,
            Ok("avx2") => SimdLevel::Avx2,
            _ => SimdLevel::Avx512,
        };
        detected().min(cap)
    })
}

#[cfg(target_arch = "x86_64")]
fn detected() -> SimdLevel {
    use std::arch::is_x86_feature_detected as has;
    if !(has!("avx2") && has!("fma")) {
        SimdLevel::Baseline
    } else if has!("avx512f") && has!("avx512vl") && has!("avx512bw") && has!("avx512dq") {
        SimdLevel::Avx512
    } else {
        SimdLevel::Avx2
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detected() -> SimdLevel {
    SimdLevel::Baseline
}

/// Defines each `fn name(args) => imp;` as `fn name(args)` calling `imp(args)`, with `imp`
/// compiled once per [`SimdLevel`] and the copy for [`level()`] picked at run time. No build flag is
/// needed and the binary still runs on every x86-64 CPU. All copies perform the same IEEE
/// operations (the compiler never fuses a multiply and an add on its own; a `mul_add` written
/// out is one FMA instruction in the wide copies and the C library's exact `fmaf` in the
/// baseline one), so they return the same bits. `imp` should be `#[inline(always)]` so its
/// loops are compiled into each copy. Exported for TinyGPT's layers (`attn-trace-model`), which
/// compile their loops the same way.
///
/// `fn name(args) => imp::<LANES>;` (the word `LANES` as written) calls `imp::<16>` in the
/// AVX-512 copy, `imp::<8>` in the AVX2 one and `imp::<4>` in the baseline one: the copy's f32
/// lanes per vector register, for loops whose best shape depends on it (a tile as wide as two
/// registers, say). Each copy must still give the same bits.
#[macro_export]
#[doc(hidden)]
macro_rules! __with_simd {
    ($($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $imp:ident::<LANES>;)*) => {$(
        $crate::__with_simd!(@copies $(#[$attr])* $vis fn $name($($arg: $ty),*) $(-> $ret)?;
            $imp::<16>, $imp::<8>, $imp::<4>);
    )*};
    ($($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $imp:path;)*) => {$(
        $crate::__with_simd!(@copies $(#[$attr])* $vis fn $name($($arg: $ty),*) $(-> $ret)?;
            $imp, $imp, $imp);
    )*};
    // one function: the callee of each copy, AVX-512's, AVX2's, then the baseline's
    (@copies $(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;
        $wide:expr, $avx2:expr, $base:expr) => {
        $(#[$attr])*
        #[allow(clippy::too_many_arguments)]
        #[allow(unsafe_code)] // the calls of the copies compiled for AVX2 and AVX-512
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
                fn avx512($($arg: $ty),*) $(-> $ret)? {
                    $wide($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                fn avx2($($arg: $ty),*) $(-> $ret)? {
                    $avx2($($arg),*)
                }
                match $crate::tensor::simd::level() {
                    // SAFETY: `level()` only returns a level the CPU was seen to support.
                    $crate::tensor::simd::SimdLevel::Avx512 => return unsafe { avx512($($arg),*) },
                    // SAFETY: as above.
                    $crate::tensor::simd::SimdLevel::Avx2 => return unsafe { avx2($($arg),*) },
                    $crate::tensor::simd::SimdLevel::Baseline => {}
                }
            }
            $base($($arg),*)
        }
    };
}
#[doc(inline)]
pub use __with_simd as with_simd;

/// `e^x` from plain arithmetic, so a loop over it vectorises (the C library's `expf` is a call
/// per element). `x = n·ln 2 + r` with `|r| ≤ ln 2 / 2`, `e^r` from its Taylor series to `r⁷`
/// (truncation error below 10⁻⁸ relative), `2ⁿ` built from its exponent bits. Within 1 ulp of
/// `f32::exp` for `−87 ≤ x ≤ 88` (a test checks every 0.00037 of that range); below −87 it
/// returns 0 (instead of a subnormal), above 88 +∞ (e⁸⁸ ≈ 1.65·10³⁸ is already near f32's
/// largest value); NaN stays NaN.
///
/// Its multiply-adds are fused (`mul_add`, one rounding each): exact by definition, so every
/// [`SimdLevel`] and the traced kernels get the same bits; `with_simd!`'s copies compile them to
/// FMA instructions, elsewhere they are the C library's `fmaf`. The polynomial is summed in
/// pairs (Estrin's scheme) rather than one term after another (Horner's): in a loop, each
/// element's chain of dependent steps is what limits how many the CPU works on at once.
///
/// The attention softmax (traced and untraced alike, so both give the same bits), GELU's tanh
/// and the loss's softmax all use it.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_145_75; // ln 2 to 17 bits: n·LN2_HI is exact for |n| < 2⁷
    const LN2_LO: f32 = 1.428_606_8e-6; // ln 2 − LN2_HI
    // adding 1.5·2²³ rounds to the nearest integer n and leaves n in the low mantissa bits
    const SHIFT: f32 = 12_582_912.0;
    let xc = x.clamp(-87.0, 88.0);
    let t = xc.mul_add(std::f32::consts::LOG2_E, SHIFT);
    let n = t - SHIFT;
    let r = n.mul_add(-LN2_LO, n.mul_add(-LN2_HI, xc));
    // Estrin's scheme, so the chain is four steps deep: pairs of terms, then pairs of pairs;
    // the leading 1 is added last, so the sum of the small terms is rounded only once against it
    let r2 = r * r;
    let p23 = (1.0f32 / 6.0).mul_add(r, 1.0 / 2.0);
    let p45 = (1.0f32 / 120.0).mul_add(r, 1.0 / 24.0);
    let p67 = (1.0f32 / 5040.0).mul_add(r, 1.0 / 720.0);
    let p13 = p23.mul_add(r2, r);
    let p47 = p67.mul_add(r2, p45);
    let p = p47.mul_add(r2 * r2, p13) + 1.0;
    // 2ⁿ for −126 ≤ n ≤ 127: the biased exponent n + 127 and a zero mantissa
    let two_n = f32::from_bits((t.to_bits().wrapping_sub(SHIFT.to_bits()).wrapping_add(127)) << 23);
    let y = p * two_n;
    if x < -87.0 {
        0.0
    } else if x > 88.0 {
        f32::INFINITY
    } else {
        y
    }
}
