//! The 256-bit (AVX2 + FMA) vector operations of `f32` and `f64`.

use fdlab_core::Scalar;
use std::arch::x86_64::*;

/// The 256-bit vector operations of one element type.
///
/// # Safety
/// Every method needs a CPU with AVX2 and FMA; pointers must be valid for a whole vector.
pub(crate) trait Lanes: Scalar {
    /// The vector type.
    type V: Copy;
    /// Elements per vector.
    const W: usize;
    unsafe fn splat(x: Self) -> Self::V;
    unsafe fn load(p: *const Self) -> Self::V;
    unsafe fn vmul(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn vadd(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn vsub(a: Self::V, b: Self::V) -> Self::V;
    /// `a·b + c`.
    unsafe fn fmadd(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    unsafe fn store(p: *mut Self, v: Self::V);
    /// Non-temporal store; `p` 32-byte aligned.
    unsafe fn stream(p: *mut Self, v: Self::V);
    /// The vector `W/2` points after the start of `a`, given `b` right after `a`.
    unsafe fn mid(a: Self::V, b: Self::V) -> Self::V;
    /// The vector `k` points (`-W < k < W`, `k != 0, ±W/2`) after the start of `b`, given
    /// `a`, `b`, `c` consecutive and `m = mid(a, b)`, `p = mid(b, c)`.
    unsafe fn shift(a: Self::V, b: Self::V, c: Self::V, m: Self::V, p: Self::V, k: i64) -> Self::V;
}

// SAFETY (both impls): each method is one intrinsic, which needs AVX2/FMA (the methods are
// compiled for them and the trait's contract makes callers check the CPU) and, for memory
// access, a pointer valid for one vector (the trait's contract; `stream`: 32-byte aligned).
impl Lanes for f32 {
    type V = __m256;
    const W: usize = 8;
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn splat(x: f32) -> __m256 {
        _mm256_set1_ps(x)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn load(p: *const f32) -> __m256 {
        _mm256_loadu_ps(p)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn vmul(a: __m256, b: __m256) -> __m256 {
        _mm256_mul_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn vadd(a: __m256, b: __m256) -> __m256 {
        _mm256_add_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn vsub(a: __m256, b: __m256) -> __m256 {
        _mm256_sub_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn fmadd(a: __m256, b: __m256, c: __m256) -> __m256 {
        _mm256_fmadd_ps(a, b, c)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn store(p: *mut f32, v: __m256) {
        _mm256_storeu_ps(p, v)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn stream(p: *mut f32, v: __m256) {
        _mm256_stream_ps(p, v)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn mid(a: __m256, b: __m256) -> __m256 {
        _mm256_permute2f128_ps(a, b, 0x21)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn shift(a: __m256, b: __m256, c: __m256, m: __m256, p: __m256, k: i64) -> __m256 {
        // Per 128-bit lane: the bytes of (hi, lo) shifted right by the constant.
        let al = |hi: __m256, lo: __m256, bytes: i32| {
            let (hi, lo) = (_mm256_castps_si256(hi), _mm256_castps_si256(lo));
            _mm256_castsi256_ps(match bytes {
                4 => _mm256_alignr_epi8::<4>(hi, lo),
                8 => _mm256_alignr_epi8::<8>(hi, lo),
                _ => _mm256_alignr_epi8::<12>(hi, lo),
            })
        };
        match k {
            1..=3 => al(p, b, 4 * k as i32),
            5..=7 => al(c, p, 4 * (k - 4) as i32),
            -3..=-1 => al(b, m, 16 + 4 * k as i32),
            _ => al(m, a, 16 + 4 * (k + 4) as i32),
        }
    }
}

impl Lanes for f64 {
    type V = __m256d;
    const W: usize = 4;
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn splat(x: f64) -> __m256d {
        _mm256_set1_pd(x)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn load(p: *const f64) -> __m256d {
        _mm256_loadu_pd(p)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn vmul(a: __m256d, b: __m256d) -> __m256d {
        _mm256_mul_pd(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn vadd(a: __m256d, b: __m256d) -> __m256d {
        _mm256_add_pd(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn vsub(a: __m256d, b: __m256d) -> __m256d {
        _mm256_sub_pd(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn fmadd(a: __m256d, b: __m256d, c: __m256d) -> __m256d {
        _mm256_fmadd_pd(a, b, c)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn store(p: *mut f64, v: __m256d) {
        _mm256_storeu_pd(p, v)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn stream(p: *mut f64, v: __m256d) {
        _mm256_stream_pd(p, v)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn mid(a: __m256d, b: __m256d) -> __m256d {
        _mm256_permute2f128_pd(a, b, 0x21)
    }
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn shift(a: __m256d, b: __m256d, c: __m256d, m: __m256d, p: __m256d, k: i64) -> __m256d {
        let al = |hi: __m256d, lo: __m256d| {
            let (hi, lo) = (_mm256_castpd_si256(hi), _mm256_castpd_si256(lo));
            _mm256_castsi256_pd(_mm256_alignr_epi8::<8>(hi, lo))
        };
        match k {
            1 => al(p, b),
            3 => al(c, p),
            -1 => al(b, m),
            _ => al(m, a),
        }
    }
}
