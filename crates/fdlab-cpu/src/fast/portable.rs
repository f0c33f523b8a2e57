//! Portable row loops (no intrinsics): the compiler vectorises them for the build target.

use crate::fast::plan::PTap;
use fdlab_core::Scalar;

/// `dst[i] (+)= Σ_t w_t · rows[t][start + i + ox_t]` for up to [`MAX_GROUP`] taps: portable
/// loops the compiler vectorises for the build target.
pub(crate) fn group<T: Scalar>(
    dst: &mut [T],
    rows: &[&[T]],
    taps: &[PTap<T>],
    start: usize,
    acc: bool,
) {
    macro_rules! dispatch {
        ($($n:literal)*) => {
            match (taps.len(), acc) {
                $(
                    ($n, false) => portable::<T, $n, false>(dst, rows, taps, start),
                    ($n, true) => portable::<T, $n, true>(dst, rows, taps, start),
                )*
                _ => unreachable!("groups hold 1 to MAX_GROUP taps"),
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8);
}

#[inline(always)]
pub(crate) fn portable<T: Scalar, const N: usize, const ACC: bool>(
    dst: &mut [T],
    rows: &[&[T]],
    taps: &[PTap<T>],
    start: usize,
) {
    let len = dst.len();
    let src: [&[T]; N] = std::array::from_fn(|t| {
        let s = (start as i64 + taps[t].off[0]) as usize;
        &rows[t][s..s + len]
    });
    let w: [T; N] = std::array::from_fn(|t| taps[t].w);
    body::<T, N, ACC>(dst, &src, &w);
}

/// `dst[i] (+)= Σ_t w[t] · src[t][i]`, every `src[t]` as long as `dst`. Not inlined, so that
/// `dst` keeps its no-alias guarantee and the loop vectorises without run-time checks.
#[inline(never)]
pub(crate) fn body<T: Scalar, const N: usize, const ACC: bool>(
    dst: &mut [T],
    src: &[&[T]; N],
    w: &[T; N],
) {
    let len = dst.len();
    // Slicing to `len` lets the compiler drop the bounds checks in the loop.
    let src: [&[T]; N] = std::array::from_fn(|t| &src[t][..len]);
    for i in 0..len {
        let (mut a, first) = if ACC {
            (dst[i], 0)
        } else {
            (w[0] * src[0][i], 1)
        };
        for t in first..N {
            a = a + w[t] * src[t][i];
        }
        dst[i] = a;
    }
}
