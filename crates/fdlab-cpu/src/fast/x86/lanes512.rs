//! The 512-bit (AVX-512F) vector operations of `f32` and `f64`.

use crate::fast::x86::lanes::Lanes;
use std::arch::x86_64::*;

/// The 512-bit (AVX-512F) vector operations of one element type, for [`pair_kernel512`].
///
/// # Safety
/// Every method needs a CPU with AVX-512F; pointers must be valid for a whole vector
/// (`zstream`: 64-byte aligned; `zload_mask`, `zstore_mask`: for the lanes of the mask,
/// which are the only lanes the masked `vmovups`/`vmovupd` access).
pub(crate) trait Lanes512: Lanes {
    /// The vector type.
    type Z: Copy;
    /// A mask of lanes.
    type M: Copy
        + PartialEq
        + std::ops::BitAnd<Output = Self::M>
        + std::ops::BitOr<Output = Self::M>
        + std::ops::Not<Output = Self::M>;
    /// Elements per vector (one 64-byte cache line).
    const ZW: usize;
    /// The mask of lanes `lo..hi` (`lo <= hi <= ZW`).
    fn lanes(lo: usize, hi: usize) -> Self::M;
    unsafe fn zsplat(x: Self) -> Self::Z;
    unsafe fn zload(p: *const Self) -> Self::Z;
    /// Loads the lanes of `m` (the others are zero; only the lanes of `m` need be valid).
    unsafe fn zload_mask(m: Self::M, p: *const Self) -> Self::Z;
    /// `v` with the lanes of `m` loaded from `p` (only the lanes of `m` need be valid).
    unsafe fn zload_merge(v: Self::Z, m: Self::M, p: *const Self) -> Self::Z;
    /// The lane indices `k, k + 1, …, k + ZW - 1` (`k < ZW`) for [`Lanes512::zshift`].
    unsafe fn zidx(k: usize) -> __m512i;
    /// Lanes `k..ZW` of `lo` followed by lanes `0..k` of `hi`, given `idx = zidx(k)`: the
    /// vector `k` points after the start of `lo`, given `hi` right after `lo`.
    unsafe fn zshift(lo: Self::Z, idx: __m512i, hi: Self::Z) -> Self::Z;
    unsafe fn zmul(a: Self::Z, b: Self::Z) -> Self::Z;
    unsafe fn zadd(a: Self::Z, b: Self::Z) -> Self::Z;
    unsafe fn zsub(a: Self::Z, b: Self::Z) -> Self::Z;
    /// `a·b + c`.
    unsafe fn zfmadd(a: Self::Z, b: Self::Z, c: Self::Z) -> Self::Z;
    unsafe fn zstore(p: *mut Self, v: Self::Z);
    /// Stores the lanes of `m` only.
    unsafe fn zstore_mask(p: *mut Self, m: Self::M, v: Self::Z);
    /// Non-temporal store; `p` 64-byte aligned.
    unsafe fn zstream(p: *mut Self, v: Self::Z);
}

// SAFETY (both impls): each method is one intrinsic, which needs AVX-512F (the methods are
// compiled for it and the trait's contract makes callers check the CPU) and, for memory
// access, a pointer valid for the lanes accessed (the trait's contract; `zstream`: 64-byte
// aligned; a masked store touches only the lanes of its mask).
impl Lanes512 for f32 {
    type Z = __m512;
    type M = __mmask16;
    const ZW: usize = 16;
    #[inline]
    fn lanes(lo: usize, hi: usize) -> __mmask16 {
        ((1u32 << hi) - (1u32 << lo)) as __mmask16
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zsplat(x: f32) -> __m512 {
        _mm512_set1_ps(x)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zload(p: *const f32) -> __m512 {
        _mm512_loadu_ps(p)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zload_mask(m: __mmask16, p: *const f32) -> __m512 {
        _mm512_maskz_loadu_ps(m, p)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zload_merge(v: __m512, m: __mmask16, p: *const f32) -> __m512 {
        _mm512_mask_loadu_ps(v, m, p)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zidx(k: usize) -> __m512i {
        let iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
        _mm512_add_epi32(iota, _mm512_set1_epi32(k as i32))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zshift(lo: __m512, idx: __m512i, hi: __m512) -> __m512 {
        _mm512_permutex2var_ps(lo, idx, hi)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zmul(a: __m512, b: __m512) -> __m512 {
        _mm512_mul_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zadd(a: __m512, b: __m512) -> __m512 {
        _mm512_add_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zsub(a: __m512, b: __m512) -> __m512 {
        _mm512_sub_ps(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zfmadd(a: __m512, b: __m512, c: __m512) -> __m512 {
        _mm512_fmadd_ps(a, b, c)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zstore(p: *mut f32, v: __m512) {
        _mm512_storeu_ps(p, v)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zstore_mask(p: *mut f32, m: __mmask16, v: __m512) {
        _mm512_mask_storeu_ps(p, m, v)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zstream(p: *mut f32, v: __m512) {
        _mm512_stream_ps(p, v)
    }
}

impl Lanes512 for f64 {
    type Z = __m512d;
    type M = __mmask8;
    const ZW: usize = 8;
    #[inline]
    fn lanes(lo: usize, hi: usize) -> __mmask8 {
        ((1u32 << hi) - (1u32 << lo)) as __mmask8
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zsplat(x: f64) -> __m512d {
        _mm512_set1_pd(x)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zload(p: *const f64) -> __m512d {
        _mm512_loadu_pd(p)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zload_mask(m: __mmask8, p: *const f64) -> __m512d {
        _mm512_maskz_loadu_pd(m, p)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zload_merge(v: __m512d, m: __mmask8, p: *const f64) -> __m512d {
        _mm512_mask_loadu_pd(v, m, p)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zidx(k: usize) -> __m512i {
        let iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
        _mm512_add_epi64(iota, _mm512_set1_epi64(k as i64))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zshift(lo: __m512d, idx: __m512i, hi: __m512d) -> __m512d {
        _mm512_permutex2var_pd(lo, idx, hi)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zmul(a: __m512d, b: __m512d) -> __m512d {
        _mm512_mul_pd(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zadd(a: __m512d, b: __m512d) -> __m512d {
        _mm512_add_pd(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zsub(a: __m512d, b: __m512d) -> __m512d {
        _mm512_sub_pd(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zfmadd(a: __m512d, b: __m512d, c: __m512d) -> __m512d {
        _mm512_fmadd_pd(a, b, c)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zstore(p: *mut f64, v: __m512d) {
        _mm512_storeu_pd(p, v)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zstore_mask(p: *mut f64, m: __mmask8, v: __m512d) {
        _mm512_mask_storeu_pd(p, m, v)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn zstream(p: *mut f64, v: __m512d) {
        _mm512_stream_pd(p, v)
    }
}
