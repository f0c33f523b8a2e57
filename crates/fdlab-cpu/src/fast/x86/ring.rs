//! The z march of one pair stencil over flat planes through a ring of copied pieces.

use crate::fast::plan::{map_index, PfJump, Plan};
use crate::fast::x86::lanes512::Lanes512;
use crate::fast::x86::pair::PairKernel;
use crate::fast::x86::pair::MAX_PAIRS;
use crate::fast::x86::pair512::{pair_sum, stream_lines};
use fdlab_core::Scalar;
use std::any::TypeId;

/// The z march of [`super::run_task`] in flat mode (`Plan::flat`) for one stencil, over
/// the piece `c0..c1` of planes `k0..k1`, through a ring of the input planes' pieces: the
/// pair loop reads the lead plane (largest z offset) from the input and copies it into the
/// ring, and every other tap from the ring, so that the tap rows no longer lie a multiple
/// of 4 KiB apart (all in the same L1 sets). False (nothing done) when the stencil or
/// piece does not fit (`T` not `f32`/`f64`, no AVX-512, taps off the z axis, a piece
/// shorter than two vectors, not one stencil).
///
/// Why (measured on a 2-vCPU Zen 4 VM): on `[512, 513, 512]` (planes 2 KiB
/// further apart mod 4 KiB) the z march ran ~20% faster per point than on 512³.
#[allow(clippy::too_many_arguments)]
pub(crate) fn ring_march<T: Scalar>(
    plan: &Plan<T>,
    u: &[T],
    out: &mut [T],
    out_start: usize,
    c0: usize,
    c1: usize,
    k0: usize,
    k1: usize,
    ring: &mut Vec<T>,
) -> bool {
    if TypeId::of::<T>() == TypeId::of::<f32>() {
        ring_march_as::<T, f32>(plan, u, out, out_start, c0, c1, k0, k1, ring)
    } else if TypeId::of::<T>() == TypeId::of::<f64>() {
        ring_march_as::<T, f64>(plan, u, out, out_start, c0, c1, k0, k1, ring)
    } else {
        false
    }
}

/// [`ring_march`] with `U`, the same type as `T`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn ring_march_as<T: Scalar, U: Lanes512>(
    plan: &Plan<T>,
    u: &[T],
    out: &mut [T],
    out_start: usize,
    c0: usize,
    c1: usize,
    k0: usize,
    k1: usize,
    ring: &mut Vec<T>,
) -> bool {
    debug_assert_eq!(TypeId::of::<T>(), TypeId::of::<U>());
    let [plane, _, nz] = plan.shape;
    let len = c1 - c0;
    let [s] = &plan.stencils[..] else {
        return false;
    };
    let Some(pairs) = &s.pairs else {
        return false;
    };
    let taps = &s.taps;
    let zonly = taps.iter().all(|t| t.off[0] == 0 && t.off[1] == 0);
    if !plan.avx512 || !plan.flat || !zonly || len < 2 * U::ZW || pairs.len() > MAX_PAIRS {
        return false;
    }
    let reach = taps
        .iter()
        .map(|t| t.off[2].unsigned_abs())
        .max()
        .unwrap_or(0) as i64;
    let slots = (2 * reach + 1) as usize;
    // Pairs as (z of the `+w` tap, z of the `-w` tap, w), the lead plane (`+reach`) on the
    // `+w` side of the last pair.
    let mut zp: Vec<(i64, i64, U)> = pairs
        .iter()
        .map(|&(a, b)| {
            let w = U::from_f64(taps[a].w.as_f64());
            let (za, zb) = (taps[a].off[2], taps[b].off[2]);
            if zb == reach {
                (zb, za, U::zero() - w)
            } else {
                (za, zb, w)
            }
        })
        .collect();
    let Some(lp) = zp.iter().position(|p| p.0 == reach) else {
        return false;
    };
    let last = zp.len() - 1;
    zp.swap(lp, last);
    // Ring rows of `len` points, `rstride` apart (a whole number of lines plus one, so that
    // the rows spread over the L1 sets), the first aligned like the output's piece in
    // plane `k0`.
    let size = std::mem::size_of::<U>();
    let per_line = 64 / size;
    let rstride = len.div_ceil(per_line) * per_line + per_line;
    ring.resize(slots * rstride + per_line, T::zero());
    let out_ptr = out.as_mut_ptr().cast::<U>();
    let want = (out_ptr as usize + (k0 * plane + c0 - out_start) * size) % 64;
    let have = ring.as_ptr() as usize % 64;
    let shift = ((want + 64 - have) % 64) / size;
    let base = shift;
    let slot = |k: i64| base + (k.rem_euclid(slots as i64) as usize) * rstride;
    let src = |k: i64| {
        let kk = map_index(plan.boundary, k, nz);
        &u[kk * plane + c0..kk * plane + c1]
    };
    let lead_at = |k: i64| src(k).as_ptr().cast::<U>();
    // Prime the ring with planes `k0 - reach .. k0 + reach - 1`.
    for k in k0 as i64 - reach..k0 as i64 + reach {
        let at = slot(k);
        ring[at..at + len].copy_from_slice(src(k));
    }
    // T and U are the same type.
    let ring_ptr = ring.as_mut_ptr().cast::<U>();
    let mut k = PairKernel {
        dst: std::ptr::null_mut(),
        plus: [std::ptr::null(); MAX_PAIRS],
        minus: [std::ptr::null(); MAX_PAIRS],
        w: [U::zero(); MAX_PAIRS],
        len,
        rows: 1,
        stride: 0,
        pf: std::ptr::null(),
        jump: PfJump::NONE,
    };
    for (q, p) in zp.iter().enumerate() {
        k.w[q] = p.2;
    }
    for kz in k0..k1 {
        let ki = kz as i64;
        let lead = lead_at(ki + reach);
        // Pieces of the output plane `kz` and of the ring rows; every pointer below stays
        // inside `out` or `ring` (`slot(·) + len <= ring.len()`).
        let o = kz * plane + c0 - out_start;
        k.dst = out[o..o + len].as_mut_ptr().cast::<U>();
        for (q, p) in zp.iter().enumerate() {
            k.plus[q] = ring_ptr.wrapping_add(slot(ki + p.0));
            k.minus[q] = ring_ptr.wrapping_add(slot(ki + p.1));
        }
        k.plus[last] = lead;
        k.pf = if plan.pair_prefetch > 0 {
            k.plus[last].wrapping_add(plan.pair_prefetch * plane)
        } else {
            std::ptr::null()
        };
        let copy = ring_ptr.wrapping_add(slot(ki + reach));
        // SAFETY: `plan.avx512`; `len >= 2·ZW`; `dst` is `len` points of `out`; `plus` /
        // `minus` are `len` points of the input (the lead) or of ring rows other than
        // `copy`'s (the ring has `2·reach + 1` rows and the taps span `-reach..reach`, the
        // lead `+reach` goes to `copy`); `copy` is `len` points of the ring; output, input
        // and ring do not overlap.
        unsafe { dispatch_ring512(zp.len(), &k, copy, plan.nt) };
    }
    true
}

/// Calls [`ring_kernel512`] with `n` pairs.
///
/// # Safety
/// As [`ring_kernel512`].
#[inline]
pub(crate) unsafe fn dispatch_ring512<U: Lanes512>(
    n: usize,
    k: &PairKernel<U>,
    copy: *mut U,
    stream: bool,
) {
    match (n, stream) {
        (1, false) => ring_kernel512::<U, 1, false>(k, copy),
        (2, false) => ring_kernel512::<U, 2, false>(k, copy),
        (3, false) => ring_kernel512::<U, 3, false>(k, copy),
        (4, false) => ring_kernel512::<U, 4, false>(k, copy),
        (1, true) => ring_kernel512::<U, 1, true>(k, copy),
        (2, true) => ring_kernel512::<U, 2, true>(k, copy),
        (3, true) => ring_kernel512::<U, 3, true>(k, copy),
        (4, true) => ring_kernel512::<U, 4, true>(k, copy),
        _ => unreachable!("a group of MAX_GROUP taps holds 1 to MAX_PAIRS pairs"),
    }
}

/// One row (`k.rows == 1`) of [`pair_kernel512`] that also copies the `+w` input of the
/// last pair (`plus[P - 1]`) to `copy`.
///
/// # Safety
/// As [`pair_kernel512`] for one row; `copy` is writable for `len` elements and overlaps
/// neither `dst` nor any input.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn ring_kernel512<U: Lanes512, const P: usize, const NT: bool>(
    k: &PairKernel<U>,
    copy: *mut U,
) {
    // SAFETY: the contract of `ring_row512` follows from ours as in `pair_kernel512`.
    let wv: [U::Z; P] = std::array::from_fn(|p| U::zsplat(k.w[p]));
    let lanes = U::ZW;
    let size = std::mem::size_of::<U>();
    let len = k.len;
    let mis = k.dst as usize % 64;
    let a = if mis == 0 { 0 } else { (64 - mis) / size };
    let to = a + (len - a) / lanes * lanes;
    let plus: [*const U; P] = std::array::from_fn(|p| k.plus[p]);
    let minus: [*const U; P] = std::array::from_fn(|p| k.minus[p]);
    ring_row512::<U, P, NT>(k.dst, copy, &plus, &minus, &wv, a, to, len, k.pf);
}

/// [`pair_row512`], also storing each vector read from `plus[P - 1]` at the same point of
/// `copy`.
///
/// # Safety
/// As [`pair_row512`]; `copy` writable at `0..len`, overlapping neither `dst` nor any
/// input.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn ring_row512<U: Lanes512, const P: usize, const NT: bool>(
    dst: *mut U,
    copy: *mut U,
    plus: &[*const U; P],
    minus: &[*const U; P],
    wv: &[U::Z; P],
    a: usize,
    to: usize,
    len: usize,
    pf: *const U,
) {
    // SAFETY (every access): as in `pair_row512`; the copy is stored at the points and
    // with the masks of the loads from `plus[P - 1]`, inside `copy`'s `0..len`.
    let (plus, minus, wv) = (*plus, *minus, *wv);
    let vector = |i: usize, m: Option<U::M>| {
        let ld = |p: *const U| match m {
            None => U::zload(p.add(i)),
            Some(m) => U::zload_mask(m, p.wrapping_add(i)),
        };
        let lead = ld(plus[P - 1]);
        match m {
            None => U::zstore(copy.add(i), lead),
            Some(m) => U::zstore_mask(copy.wrapping_add(i), m, lead),
        }
        let d = |p: usize| {
            let x = if p == P - 1 { lead } else { ld(plus[p]) };
            U::zsub(x, ld(minus[p]))
        };
        pair_sum::<U, P>(&wv, d)
    };
    stream_lines::<U, NT>(dst, pf, (a, to, len), vector);
}
