//! The general fused AVX2 loop: up to eight taps, two vectors per step.

use crate::fast::options::MAX_GROUP;
use crate::fast::plan::PfJump;
use crate::fast::x86::lanes::Lanes;
use std::arch::x86_64::*;

/// One call of [`kernel`]: `rows` rows `stride` elements apart, of `len` points each.
pub(crate) struct Kernel<U> {
    pub(crate) dst: *mut U,
    /// Partial sums to add (null: none).
    pub(crate) acc: *const U,
    pub(crate) src: [*const U; MAX_GROUP],
    pub(crate) w: [U; MAX_GROUP],
    pub(crate) len: usize,
    pub(crate) rows: usize,
    /// Row stride of `dst`, `acc` and `pf`.
    pub(crate) dstride: usize,
    /// Row stride of each `src`.
    pub(crate) sstride: [usize; MAX_GROUP],
    /// Prefetch address for row 0, point 0 (null: no prefetch).
    pub(crate) pf: *const U,
    /// Where the prefetch rows jump.
    pub(crate) jump: PfJump,
}

/// Calls [`kernel`] with `n` taps.
///
/// # Safety
/// As [`kernel`].
#[inline]
pub(crate) unsafe fn dispatch<U: Lanes>(n: usize, k: &Kernel<U>, stream: bool) {
    macro_rules! arms {
        ($($n:literal)*) => {
            match (n, k.acc.is_null(), stream) {
                $(
                    ($n, true, false) => kernel::<U, $n, false, false>(k),
                    ($n, false, false) => kernel::<U, $n, true, false>(k),
                    ($n, true, true) => kernel::<U, $n, false, true>(k),
                    ($n, false, true) => kernel::<U, $n, true, true>(k),
                )*
                _ => unreachable!("groups hold 1 to MAX_GROUP taps"),
            }
        };
    }
    arms!(1 2 3 4 5 6 7 8)
}

/// For each row `r < k.rows` (offset `o = r·k.dstride`) and `i < k.len`:
/// `dst[o+i] = (ACC ? acc[o+i] : 0) + Σ_{t<N} w[t]·src[t][r·k.sstride[t] + i]`, two vectors per step; with
/// `NT`, whole 64-byte lines of `dst` are written with streaming stores. With a non-null
/// `pf`, the line at `pf + o + i` is prefetched at each step, and a line before and two after
/// the row (addresses only: they are never dereferenced).
///
/// The ends of a row are covered by unaligned vectors that overlap each other but not the
/// aligned part (so a streamed line is never also written by an ordinary store), unless
/// `acc` is `dst` (then by single points).
///
/// # Safety
/// The CPU has AVX2 and FMA; for every row, `src[..N]` are valid for reading `len`
/// elements, `dst` for writing `len` elements, `acc` (when `ACC`) for reading `len`
/// elements; `dst` overlaps no `src[t]`, and overlaps `acc` only if equal to it, and then
/// not with `NT`.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn kernel<U: Lanes, const N: usize, const ACC: bool, const NT: bool>(
    k: &Kernel<U>,
) {
    // SAFETY (every pointer access below): by the contract above, for each row `r` the
    // indices `i < len` read through `src[t] + r·sstride[t]` and `acc + o`, and written
    // through `dst + o`, are in bounds; vectors are read or written at `q` with
    // `q + lanes <= len`; streamed vectors start on a 64-byte boundary of `dst` (the
    // aligned part begins at `a`); the prefetch addresses are only addresses
    // (`wrapping_add`, never dereferenced; a prefetch cannot fault).
    let mut wv = [U::splat(k.w[0]); N];
    for (v, &x) in wv.iter_mut().zip(&k.w).skip(1) {
        *v = U::splat(x);
    }
    let w = k.w;
    let first = if ACC { 0 } else { 1 };
    let lanes = U::W;
    let size = std::mem::size_of::<U>();
    let align = if NT { 64 } else { 32 };
    for r in 0..k.rows {
        let o = r * k.dstride;
        let dst = k.dst.add(o);
        let acc = if ACC { k.acc.add(o) } else { k.acc };
        let src: [*const U; N] = std::array::from_fn(|t| k.src[t].add(r * k.sstride[t]));
        let pf = k.jump.at(k.pf, r).wrapping_add(o);
        let len = k.len;
        let point = |i: usize| {
            let mut a = if ACC {
                *acc.add(i)
            } else {
                w[0] * *src[0].add(i)
            };
            for t in first..N {
                a = w[t].mul_add(*src[t].add(i), a);
            }
            a
        };
        let vector = |i: usize| {
            let mut v = if ACC {
                U::load(acc.add(i))
            } else {
                U::vmul(wv[0], U::load(src[0].add(i)))
            };
            for t in first..N {
                v = U::fmadd(wv[t], U::load(src[t].add(i)), v);
            }
            v
        };
        let in_place = ACC && std::ptr::eq(acc, dst);
        if in_place || len < 2 * lanes {
            let mut i = 0;
            while i + lanes <= len {
                U::store(dst.add(i), vector(i));
                i += lanes;
            }
            while i < len {
                *dst.add(i) = point(i);
                i += 1;
            }
            continue;
        }
        // Ordinary stores before the first aligned point and after the last whole step.
        let mis = dst as usize % align;
        let a = if mis == 0 {
            0
        } else {
            ((align - mis) / size).min(len)
        };
        let prefetch = |i: usize| {
            if !k.pf.is_null() {
                _mm_prefetch::<_MM_HINT_T1>(pf.wrapping_add(i).cast::<i8>());
            }
        };
        if a > 0 {
            prefetch(0);
        }
        let i = a + (len - a) / (2 * lanes) * (2 * lanes);
        let pfi = if k.pf.is_null() { std::ptr::null() } else { pf };
        kernel_steps::<U, N, ACC, NT>(dst, acc, &src, &wv, a, i, pfi);
        // The lead row's last points, and its reach past the row's end.
        prefetch(i);
        prefetch(i + 2 * lanes);
        for (lo, hi) in [(0, a), (i, len)] {
            if hi - lo >= lanes {
                let mut p = lo;
                while p < hi {
                    let q = p.min(hi - lanes);
                    U::store(dst.add(q), vector(q));
                    p += lanes;
                }
            } else {
                for p in lo..hi {
                    *dst.add(p) = point(p);
                }
            }
        }
    }
}
/// The aligned part `from..to` of one row of [`kernel`] (`to - from` a multiple of two
/// vectors; with `NT`, `dst + from` on a 64-byte boundary), prefetching `pf + i` at each
/// step unless `pf` is null. Not inlined, as [`pair_steps`].
///
/// # Safety
/// The CPU has AVX2 and FMA; `src[t]` (and `acc` when `ACC`) are readable and `dst`
/// writable at `from..to`; `dst` overlaps no `src[t]` and is not `acc` (in-place rows do
/// not come here).
#[inline(never)]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn kernel_steps<U: Lanes, const N: usize, const ACC: bool, const NT: bool>(
    dst: *mut U,
    acc: *const U,
    src: &[*const U; N],
    wv: &[U::V; N],
    from: usize,
    to: usize,
    pf: *const U,
) {
    // SAFETY (every access): vectors at `i`, `i + lanes` with `i + 2·lanes <= to`, inside
    // the ranges of the contract; streamed vectors at `from` + a multiple of 64 bytes;
    // prefetch addresses are never dereferenced.
    let (src, wv) = (*src, *wv);
    let lanes = U::W;
    let first = if ACC { 0 } else { 1 };
    let vector = |i: usize| {
        let mut v = if ACC {
            U::load(acc.add(i))
        } else {
            U::vmul(wv[0], U::load(src[0].add(i)))
        };
        for t in first..N {
            v = U::fmadd(wv[t], U::load(src[t].add(i)), v);
        }
        v
    };
    let step = |i: usize| {
        let (v0, v1) = (vector(i), vector(i + lanes));
        if NT {
            U::stream(dst.add(i), v0);
            U::stream(dst.add(i + lanes), v1);
        } else {
            U::store(dst.add(i), v0);
            U::store(dst.add(i + lanes), v1);
        }
    };
    let mut i = from;
    if pf.is_null() {
        while i < to {
            step(i);
            i += 2 * lanes;
        }
    } else {
        while i < to {
            _mm_prefetch::<_MM_HINT_T1>(pf.wrapping_add(i).cast::<i8>());
            step(i);
            i += 2 * lanes;
        }
    }
}
