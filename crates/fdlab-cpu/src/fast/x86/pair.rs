//! The AVX2 loop for antisymmetric tap pairs (first derivatives along y or z).

use crate::fast::options::MAX_GROUP;
use crate::fast::plan::PfJump;
use crate::fast::x86::lanes::Lanes;
use std::arch::x86_64::*;

/// Most tap pairs one call of a pair loop takes: a group of [`MAX_GROUP`] taps.
pub(crate) const MAX_PAIRS: usize = MAX_GROUP / 2;

/// One call of [`pair_kernel`]: `rows` rows `stride` elements apart (output and every
/// input), of `len` points each.
pub(crate) struct PairKernel<U> {
    pub(crate) dst: *mut U,
    /// Per pair, the input read with weight `w` and the one read with `-w`.
    pub(crate) plus: [*const U; MAX_PAIRS],
    pub(crate) minus: [*const U; MAX_PAIRS],
    pub(crate) w: [U; MAX_PAIRS],
    pub(crate) len: usize,
    pub(crate) rows: usize,
    pub(crate) stride: usize,
    /// Prefetch address for row 0, point 0 (null: no prefetch).
    pub(crate) pf: *const U,
    /// Where the prefetch rows jump.
    pub(crate) jump: PfJump,
}

/// Calls [`pair_kernel`] with `n` pairs.
///
/// # Safety
/// As [`pair_kernel`].
#[inline]
pub(crate) unsafe fn dispatch_pairs<U: Lanes>(n: usize, k: &PairKernel<U>, stream: bool) {
    match (n, stream) {
        (1, false) => pair_kernel::<U, 1, false>(k),
        (2, false) => pair_kernel::<U, 2, false>(k),
        (3, false) => pair_kernel::<U, 3, false>(k),
        (4, false) => pair_kernel::<U, 4, false>(k),
        (1, true) => pair_kernel::<U, 1, true>(k),
        (2, true) => pair_kernel::<U, 2, true>(k),
        (3, true) => pair_kernel::<U, 3, true>(k),
        (4, true) => pair_kernel::<U, 4, true>(k),
        _ => unreachable!("a group of MAX_GROUP taps holds 1 to MAX_PAIRS pairs"),
    }
}

/// For each row `r < k.rows` (offset `o = r·k.stride`) and `i < k.len`:
/// `dst[o+i] = Σ_{p<P} w[p]·(plus[p][o+i] - minus[p][o+i])`, two vectors per step, stored,
/// streamed and prefetched as in [`kernel`].
///
/// Why not [`kernel`] (measured on a 2-vCPU Zen 4 VM): with eight taps
/// its eight weight vectors, two sums and the loads do not fit the 16 ymm registers, so
/// the loop reloads the weights from the stack (27 loads per 16 points instead of 16)
/// and each output vector is one chain of eight dependent multiply-adds. Here four
/// weights stay in registers, the differences go to the FP add pipes, and each vector is
/// two chains of two multiply(-add)s joined by one add.
///
/// # Safety
/// The CPU has AVX2 and FMA; for every row, `plus[..P]` and `minus[..P]` are valid for
/// reading `len` elements and `dst` for writing `len` elements; `dst` overlaps no input.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn pair_kernel<U: Lanes, const P: usize, const NT: bool>(k: &PairKernel<U>) {
    // SAFETY (every pointer access below): as in [`kernel`] — for each row the indices
    // `i < len` read through `plus[p] + o`, `minus[p] + o` and written through `dst + o`
    // are in bounds by the contract; vectors start at `q` with `q + lanes <= len`;
    // streamed vectors start on a 64-byte boundary of `dst`; prefetch addresses are
    // never dereferenced.
    let wv: [U::V; P] = std::array::from_fn(|p| U::splat(k.w[p]));
    let w = k.w;
    let lanes = U::W;
    let size = std::mem::size_of::<U>();
    let align = if NT { 64 } else { 32 };
    let len = k.len;
    for r in 0..k.rows {
        let o = r * k.stride;
        let dst = k.dst.add(o);
        let plus: [*const U; P] = std::array::from_fn(|p| k.plus[p].add(o));
        let minus: [*const U; P] = std::array::from_fn(|p| k.minus[p].add(o));
        let pf = k.jump.at(k.pf, r).wrapping_add(o);
        let point = |i: usize| {
            let mut a = w[0] * (*plus[0].add(i) - *minus[0].add(i));
            for ((&wp, &pp), &mp) in w.iter().zip(&plus).zip(&minus).skip(1) {
                a = wp.mul_add(*pp.add(i) - *mp.add(i), a);
            }
            a
        };
        let vector = |i: usize| {
            let d = |p: usize| U::vsub(U::load(plus[p].add(i)), U::load(minus[p].add(i)));
            // Even and odd pairs in two sums: shorter dependency chains.
            let mut even = U::vmul(wv[0], d(0));
            if P == 1 {
                return even;
            }
            let mut odd = U::vmul(wv[1], d(1));
            for (p, &wp) in wv.iter().enumerate().skip(2) {
                if p % 2 == 0 {
                    even = U::fmadd(wp, d(p), even);
                } else {
                    odd = U::fmadd(wp, d(p), odd);
                }
            }
            U::vadd(even, odd)
        };
        if len < 2 * lanes {
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
        pair_steps::<U, P, NT>(dst, &plus, &minus, &wv, a, i, pfi);
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

/// The aligned part `from..to` of one row of [`pair_kernel`] (`to - from` a multiple of two
/// vectors; with `NT`, `dst + from` on a 64-byte boundary), prefetching `pf + i` at each
/// step unless `pf` is null.
///
/// A function of its own (not inlined) so that the weights and row pointers stay in
/// registers: inlined into `pair_kernel`, whose edge code needs many registers too, the
/// compiler kept them on the stack and reloaded them at every step.
///
/// # Safety
/// The CPU has AVX2 and FMA; `plus[p]`, `minus[p]` are readable and `dst` writable at
/// `from..to`; `dst` overlaps no input.
#[inline(never)]
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn pair_steps<U: Lanes, const P: usize, const NT: bool>(
    dst: *mut U,
    plus: &[*const U; P],
    minus: &[*const U; P],
    wv: &[U::V; P],
    from: usize,
    to: usize,
    pf: *const U,
) {
    // SAFETY (every access): vectors at `i`, `i + lanes` with `i + 2·lanes <= to`, inside
    // the ranges of the contract; streamed vectors at `from` + a multiple of 64 bytes;
    // prefetch addresses are never dereferenced.
    let (plus, minus, wv) = (*plus, *minus, *wv);
    let lanes = U::W;
    let vector = |i: usize| {
        let d = |p: usize| U::vsub(U::load(plus[p].add(i)), U::load(minus[p].add(i)));
        // Even and odd pairs in two sums: shorter dependency chains.
        let mut even = U::vmul(wv[0], d(0));
        if P == 1 {
            return even;
        }
        let mut odd = U::vmul(wv[1], d(1));
        for (p, &wp) in wv.iter().enumerate().skip(2) {
            if p % 2 == 0 {
                even = U::fmadd(wp, d(p), even);
            } else {
                odd = U::fmadd(wp, d(p), odd);
            }
        }
        U::vadd(even, odd)
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
