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
