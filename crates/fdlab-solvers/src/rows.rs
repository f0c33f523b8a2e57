//! What the fused row kernels of the CPU steppers share: the neighbour rows of a row as
//! fixed-size sets of slices, the weights as arrays, and the prefetch of the leading rows.

use crate::layout::Layout;

/// The rows at offsets `±1..=R` of a row of `n` points starting at padded index `c`, per axis
/// (`z` repeats `x` in 2-D and is not read there). Every slice has exactly `n` elements.
pub(crate) struct Neighbours<'a, T, const R: usize> {
    /// Along x: `(u[c − m ..], u[c + m ..])` for m = 1..=R.
    pub x: [(&'a [T], &'a [T]); R],
    /// Along y.
    pub y: [(&'a [T], &'a [T]); R],
    /// Along z.
    pub z: [(&'a [T], &'a [T]); R],
}

impl<'a, T, const R: usize> Neighbours<'a, T, R> {
    /// The neighbours of the row at `c` in `u`.
    #[inline(always)]
    pub(crate) fn of<const THREE: bool>(u: &'a [T], c: usize, n: usize, l: &Layout) -> Self {
        let (s1, s2) = (l.stride(1), l.stride(2));
        let pair = |s: usize| (&u[c - s..c - s + n], &u[c + s..c + s + n]);
        let x: [(&[T], &[T]); R] = std::array::from_fn(|m| pair(m + 1));
        Neighbours {
            x,
            y: std::array::from_fn(|m| pair((m + 1) * s1)),
            z: std::array::from_fn(|m| if THREE { pair((m + 1) * s2) } else { x[m] }),
        }
    }
}

/// Per axis, the weights of offsets 1..=R.
#[inline(always)]
pub(crate) fn axis_weights<T: Copy, const R: usize>(w: &[Vec<T>; 3]) -> [[T; R]; 3] {
    std::array::from_fn(|a| std::array::from_fn(|m| w[a][m + 1]))
}

/// Asks for the leading rows of the row at `c` (the last plane in 3-D, the last row in 2-D),
/// 8 rows ahead: they come from memory, where the hardware prefetcher alone left the loops
/// waiting on loads (a 256³ f32 heat step on 2 cores: 6.9 ms without, 3.5 ms with).
#[inline(always)]
pub(crate) fn prefetch_leading<T, const R: usize, const THREE: bool>(
    u: &[T],
    c: usize,
    n: usize,
    l: &Layout,
) {
    #[cfg(target_arch = "x86_64")]
    {
        let (s1, s2) = (l.stride(1), l.stride(2));
        let lead = if THREE { R * s2 + 8 * s1 } else { (R + 8) * s1 };
        let end = (c + lead + n).min(u.len());
        let mut p = c + lead;
        while p < end {
            // SAFETY: the address of an element of `u`; a prefetch reads nothing.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    u.as_ptr().add(p).cast(),
                )
            };
            p += 64 / std::mem::size_of::<T>();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (u, c, n, l);
}

/// Asks for the `n` values of `u` from index `p` (what is past the end of `u` is skipped).
#[inline(always)]
pub(crate) fn prefetch_row<T>(u: &[T], p: usize, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let end = (p + n).min(u.len());
        let mut p = p;
        while p < end {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: the address of an element of `u`; a prefetch reads nothing.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(u.as_ptr().add(p).cast()) };
            p += 64 / std::mem::size_of::<T>();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (u, p, n);
}

/// Which stores a row kernel compiled for: the instruction set of its streaming stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    /// Ordinary stores only (no x86-64, or a caller that wants no streaming).
    Plain,
    /// 256-bit streaming stores (AVX2).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// 512-bit streaming stores (AVX-512F).
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    /// [`Isa::Plain`] as a const generic argument.
    pub(crate) const PLAIN: u8 = 0;
    /// [`Isa::Avx2`] as a const generic argument.
    pub(crate) const AVX2: u8 = 1;
    /// [`Isa::Avx512`] as a const generic argument.
    pub(crate) const AVX512: u8 = 2;

    /// The instruction set of a const generic argument (kernels are compiled per instruction
    /// set, so that each branches on a constant).
    #[inline(always)]
    pub(crate) const fn from_u8(isa: u8) -> Isa {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::AVX2 => Isa::Avx2,
            #[cfg(target_arch = "x86_64")]
            Isa::AVX512 => Isa::Avx512,
            _ => Isa::Plain,
        }
    }
}

/// Writes `v` to `dst` with non-temporal stores (whole lines, not read first), or with
/// ordinary stores for [`Isa::Plain`].
///
/// # Safety
/// `dst` is writable for `B` values and 64-byte aligned; `v` is a whole number of 64-byte
/// lines (`B·size_of::<T>()`); the CPU has
/// the instruction set of `isa`; the caller fences ([`store_fence`]) before another thread
/// reads what was written.
#[inline(always)]
// The body is one unsafe context (intrinsics on `dst`), as before edition 2024.
#[allow(unsafe_op_in_unsafe_fn)]
pub(crate) unsafe fn stream_block<T: Copy, const B: usize>(isa: Isa, dst: *mut T, v: &[T; B]) {
    let bytes = std::mem::size_of::<[T; B]>();
    let (d, s) = (dst.cast::<u8>(), v.as_ptr().cast::<u8>());
    match isa {
        Isa::Plain => std::ptr::copy_nonoverlapping(v.as_ptr(), dst, B),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => {
            use std::arch::x86_64::{_mm256_loadu_si256, _mm256_stream_si256};
            for o in (0..bytes).step_by(32) {
                _mm256_stream_si256(d.add(o).cast(), _mm256_loadu_si256(s.add(o).cast()));
            }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => {
            use std::arch::x86_64::{_mm512_loadu_si512, _mm512_stream_si512};
            for o in (0..bytes).step_by(64) {
                _mm512_stream_si512(d.add(o).cast(), _mm512_loadu_si512(s.add(o).cast()));
            }
        }
    }
}

/// Orders this thread's streaming stores before anything it does next (the end of a rayon
/// task, which the join publishes to the caller).
pub(crate) fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline; `sfence` has no other precondition.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}
