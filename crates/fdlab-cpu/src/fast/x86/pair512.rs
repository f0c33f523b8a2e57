//! The AVX-512F loop for antisymmetric tap pairs, with masked row ends.

use crate::fast::x86::lanes512::Lanes512;
use crate::fast::x86::pair::PairKernel;
use std::arch::x86_64::*;

/// Σₚ w[p]·d(p) over the pairs of an antisymmetric stencil, in two sums (even and odd p):
/// shorter dependency chains.
///
/// # Safety
/// As [`Lanes512`]'s methods (a CPU with AVX-512F), and whatever `d` needs.
#[inline(always)]
pub(crate) unsafe fn pair_sum<U: Lanes512, const P: usize>(
    wv: &[U::Z; P],
    d: impl Fn(usize) -> U::Z,
) -> U::Z {
    let mut even = U::zmul(wv[0], d(0));
    if P == 1 {
        return even;
    }
    let mut odd = U::zmul(wv[1], d(1));
    for (p, &wp) in wv.iter().enumerate().skip(2) {
        if p % 2 == 0 {
            even = U::zfmadd(wp, d(p), even);
        } else {
            odd = U::zfmadd(wp, d(p), odd);
        }
    }
    U::zadd(even, odd)
}

/// Writes the outputs `0..len` of a row whose vectors `vector(i, mask)` computes: the
/// head `0..a` and tail `to..len` as one masked vector each, on the lines of `dst` that
/// hold them, and the whole lines `a..to` two vectors a step (streamed when `NT`), each
/// line prefetched into L2 from `pf` (unless null) as it is computed.
///
/// # Safety
/// A CPU with AVX-512F; `dst` writable at `0..len`, `dst + a` 64-byte aligned when `NT`,
/// `a <= ZW`, `a <= to <= len`, `to - a` a multiple of `ZW`; and whatever `vector` needs.
#[inline(always)]
pub(crate) unsafe fn stream_lines<U: Lanes512, const NT: bool>(
    dst: *mut U,
    pf: *const U,
    (a, to, len): (usize, usize, usize),
    vector: impl Fn(usize, Option<U::M>) -> U::Z,
) {
    // SAFETY: the head vector at `a - ZW` and the tail vector at `to` store only the lanes
    // of their masks (`0..a`, `to..len`), whole vectors lie inside `a..to`; prefetch
    // addresses are never dereferenced.
    let lanes = U::ZW;
    let put = |i: usize, v: U::Z| {
        if NT {
            U::zstream(dst.add(i), v);
        } else {
            U::zstore(dst.add(i), v);
        }
    };
    let prefetch = |i: usize| {
        if !pf.is_null() {
            _mm_prefetch::<_MM_HINT_T1>(pf.wrapping_add(i).cast::<i8>());
        }
    };
    if a > 0 {
        prefetch(0);
        let q = a.wrapping_sub(lanes);
        let m = U::lanes(lanes - a, lanes);
        U::zstore_mask(dst.wrapping_add(q), m, vector(q, Some(m)));
    }
    let mut i = a;
    while i + 2 * lanes <= to {
        prefetch(i);
        prefetch(i + lanes);
        let (v0, v1) = (vector(i, None), vector(i + lanes, None));
        put(i, v0);
        put(i + lanes, v1);
        i += 2 * lanes;
    }
    if i < to {
        prefetch(i);
        put(i, vector(i, None));
    }
    if to < len {
        prefetch(to);
        let m = U::lanes(0, len - to);
        U::zstore_mask(dst.add(to), m, vector(to, Some(m)));
    }
}

/// Calls [`pair_kernel512`] with `n` pairs.
///
/// # Safety
/// As [`pair_kernel512`].
#[inline]
pub(crate) unsafe fn dispatch_pairs512<U: Lanes512>(n: usize, k: &PairKernel<U>, stream: bool) {
    match (n, stream) {
        (1, false) => pair_kernel512::<U, 1, false>(k),
        (2, false) => pair_kernel512::<U, 2, false>(k),
        (3, false) => pair_kernel512::<U, 3, false>(k),
        (4, false) => pair_kernel512::<U, 4, false>(k),
        (1, true) => pair_kernel512::<U, 1, true>(k),
        (2, true) => pair_kernel512::<U, 2, true>(k),
        (3, true) => pair_kernel512::<U, 3, true>(k),
        (4, true) => pair_kernel512::<U, 4, true>(k),
        _ => unreachable!("a group of MAX_GROUP taps holds 1 to MAX_PAIRS pairs"),
    }
}

/// [`pair_kernel`] with 512-bit vectors (one cache line each): per row, the points before
/// the first 64-byte boundary of the output and after the last whole vector are one vector
/// each, stored through a lane mask (no point-by-point code); the rest is
/// [`pair_row512`].
///
/// Why (measured on a 2-vCPU Zen 4 VM): half the instructions per point of the
/// AVX2 loop, and rows whose start is not on a cache line (a `Vec` of 512 MiB starts 16
/// bytes into a page) no longer pay for a scalar tail and two overlapping vectors per row.
///
/// # Safety
/// The CPU has AVX-512F; `k.len >= 2·U::ZW`; for every row, `plus[..P]` and `minus[..P]`
/// are valid for reading `len` elements and `dst` for writing `len` elements; `dst`
/// overlaps no input.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn pair_kernel512<U: Lanes512, const P: usize, const NT: bool>(
    k: &PairKernel<U>,
) {
    // SAFETY (every pointer access below): row offsets `o` as in [`pair_kernel`]; the
    // calls of `pair_row512` meet its contract: `len >= 2·ZW > a`, `to` is `a` plus a
    // multiple of `ZW` and at most `len`, `dst + a` is on a 64-byte boundary.
    let wv: [U::Z; P] = std::array::from_fn(|p| U::zsplat(k.w[p]));
    let lanes = U::ZW;
    let size = std::mem::size_of::<U>();
    let len = k.len;
    debug_assert!(len >= 2 * lanes);
    for r in 0..k.rows {
        let o = r * k.stride;
        let dst = k.dst.add(o);
        let plus: [*const U; P] = std::array::from_fn(|p| k.plus[p].add(o));
        let minus: [*const U; P] = std::array::from_fn(|p| k.minus[p].add(o));
        let pf = if k.pf.is_null() {
            std::ptr::null()
        } else {
            k.jump.at(k.pf, r).wrapping_add(o)
        };
        let mis = dst as usize % 64;
        let a = if mis == 0 { 0 } else { (64 - mis) / size };
        let to = a + (len - a) / lanes * lanes;
        pair_row512::<U, P, NT>(dst, &plus, &minus, &wv, a, to, len, pf);
    }
}

/// One row of [`pair_kernel512`]: points `0..a` (fewer than a vector, before the first
/// 64-byte boundary of `dst`) and `to..len` (fewer than a vector) through masked stores
/// of the vectors at 0 and `len - ZW`; `a..to` in whole vectors (streamed with `NT`),
/// prefetching `pf + i` for each vector unless `pf` is null.
///
/// # Safety
/// The CPU has AVX-512F; `len >= ZW`, `a < ZW`, `a <= to <= len`, `to - a` a multiple of
/// `ZW`, `len - to < ZW`, `dst + a` 64-byte aligned; `plus[p]`, `minus[p]` readable and
/// `dst` writable at `0..len`; `dst` overlaps no input.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn pair_row512<U: Lanes512, const P: usize, const NT: bool>(
    dst: *mut U,
    plus: &[*const U; P],
    minus: &[*const U; P],
    wv: &[U::Z; P],
    a: usize,
    to: usize,
    len: usize,
    pf: *const U,
) {
    // SAFETY (every access): whole vectors at `i` with `i + ZW <= to <= len` (the body at
    // `a..to`), inside the ranges of the contract; the head vector at `a - ZW` and the tail
    // vector at `to` load and store only the lanes of their masks, points `0..a` and
    // `to..len` (a masked `vmovups`/`vmovupd` does not access its masked-off lanes);
    // streamed vectors at `a` + a multiple of 64 bytes; prefetch addresses are never
    // dereferenced.
    let (plus, minus, wv) = (*plus, *minus, *wv);
    // `m`: `Some(mask)` for the head and tail vectors, which start up to a vector before
    // the row (`i` wraps) and load only the lanes of the mask, all inside the row.
    let vector = |i: usize, m: Option<U::M>| {
        let ld = |p: *const U| match m {
            None => U::zload(p.add(i)),
            Some(m) => U::zload_mask(m, p.wrapping_add(i)),
        };
        let d = |p: usize| U::zsub(ld(plus[p]), ld(minus[p]));
        pair_sum::<U, P>(&wv, d)
    };
    // Head and tail: one masked vector each, on the 64-byte line of `dst` that holds them
    // (a masked store reaching into a line the loop streams made the whole loop ~3x slower
    // on Zen 4 when rows start 16 bytes into a line).
    stream_lines::<U, NT>(dst, pf, (a, to, len), vector);
}
