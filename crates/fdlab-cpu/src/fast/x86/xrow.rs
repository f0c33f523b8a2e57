//! Derivatives along x (AVX2): one load per vector, shifted vectors from shuffles.

use crate::fast::options::MAX_GROUP;
use crate::fast::plan::{PStencil, PfJump, Plan};
use crate::fast::x86::lanes::Lanes;
use std::arch::x86_64::*;

/// The reach (1 to 4) of a stencil whose taps all read one row within ±4 points (a
/// derivative along x), when the shuffle loop applies (AVX2, default fused groups).
pub(crate) fn single_row<T>(plan: &Plan<T>, s: &PStencil<T>) -> Option<usize> {
    let reach = s.below_x.max(s.above_x);
    (plan.group == MAX_GROUP && s.xrows.len() == 1 && (1..=4).contains(&reach)).then_some(reach)
}

/// One call of [`xkernel`]: `rows` rows `stride` apart of `len` points, all taps on the row
/// `x` (pointing at the row's point for output 0), weights `w[o + 4]` for offset `o`.
pub(crate) struct XKernel<U> {
    pub(crate) dst: *mut U,
    pub(crate) x: *const U,
    /// Points of the row readable before `x` and from `x` on.
    pub(crate) before: usize,
    pub(crate) after: usize,
    pub(crate) w: [U; 9],
    pub(crate) len: usize,
    pub(crate) rows: usize,
    pub(crate) stride: usize,
    /// Prefetch address for row 0, point 0 (null: no prefetch).
    pub(crate) pf: *const U,
    /// Where the prefetch rows jump.
    pub(crate) jump: PfJump,
}

/// Calls [`xkernel`] with reach `r`.
///
/// # Safety
/// As [`xkernel`].
#[inline]
pub(crate) unsafe fn dispatch_x<U: Lanes>(r: usize, k: &XKernel<U>, stream: bool) {
    match (r, stream) {
        (1, false) => xkernel::<U, 1, false>(k),
        (2, false) => xkernel::<U, 2, false>(k),
        (3, false) => xkernel::<U, 3, false>(k),
        (4, false) => xkernel::<U, 4, false>(k),
        (1, true) => xkernel::<U, 1, true>(k),
        (2, true) => xkernel::<U, 2, true>(k),
        (3, true) => xkernel::<U, 3, true>(k),
        (4, true) => xkernel::<U, 4, true>(k),
        _ => unreachable!("single_row gives a reach of 1 to 4"),
    }
}

/// `Σ_d wv[d + 4]·get(d)` over the taps `d` of an [`xkernel`] stencil, `-R <= d <= R`
/// (`ri = R`), unrolled (`R` is a constant), into a new vector named `$v`.
macro_rules! x_taps {
    ($v:ident, $get:expr, $wv:ident, $ri:ident) => {{
        let get = $get;
        let mut $v = U::vmul($wv[4 - R], get(-$ri));
        x_taps!(@ $v, get, $wv, $ri, -3 -2 -1 0 1 2 3 4);
        $v
    }};
    (@ $v:ident, $get:ident, $wv:ident, $ri:ident, $($d:literal)*) => {
        $(
            if $d > -$ri && $d <= $ri {
                $v = U::fmadd($wv[($d + 4) as usize], $get($d), $v);
            }
        )*
    };
}

/// For each row `r < k.rows` (offset `o = r·k.stride`) and `i < k.len`:
/// `dst[o+i] = Σ_{|d|<=R} w[d+4]·x[o+i+d]`. Where the row allows (a vector before and two
/// after each step), two vectors per step come from two aligned-stride loads and shuffles
/// of the vectors before and after; elsewhere every offset is loaded (unaligned). Streams
/// and prefetches as [`kernel`].
///
/// # Safety
/// The CPU has AVX2 and FMA; for every row, `x - before .. x + after` is readable, with
/// `before >= R` and `len + R <= after`; `dst` is writable for `len` elements and overlaps
/// no input.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn xkernel<U: Lanes, const R: usize, const NT: bool>(k: &XKernel<U>) {
    // SAFETY (every pointer access below): per row, loads at `x + q + d` with `|d| <= R`
    // and `q + lanes <= len` (inside `-before .. after` by the contract), and in the
    // shuffle loop at `x + i - lanes .. x + i + 3·lanes` with `i >= lo` (so
    // `i - lanes >= -before`) and `fits(i)`; stores and streams as in [`kernel`];
    // prefetch addresses are never dereferenced.
    let lanes = U::W;
    let ri = R as i64;
    let wv: [U::V; 9] = std::array::from_fn(|q| U::splat(k.w[q]));
    let size = std::mem::size_of::<U>();
    let align = if NT { 64 } else { 32 };
    let len = k.len;
    // A shuffle step at `i` reads `x[i - lanes .. i + 3·lanes]`.
    let lo = lanes.saturating_sub(k.before);
    let fits = |i: usize| i + 3 * lanes <= k.after;
    for r in 0..k.rows {
        let o = r * k.stride;
        let dst = k.dst.add(o);
        let x = k.x.add(o);
        let pf = k.jump.at(k.pf, r).wrapping_add(o);
        // Into L1 here, unlike the other loops: with L2 (`prefetcht1`) d/dx measured 0-6
        // points lower in 4 of 6 alternated windows on a 2-vCPU Zen 4 VM, within that
        // machine's noise; no gain was seen, so it stays in L1.
        let prefetch = |i: usize| {
            if !k.pf.is_null() {
                _mm_prefetch::<_MM_HINT_T0>(pf.wrapping_add(i).cast::<i8>());
            }
        };
        let point = |i: usize| {
            let mut a = k.w[4 - R] * *x.add(i).sub(R);
            for d in 1 - ri..=ri {
                a = k.w[(d + 4) as usize].mul_add(*x.offset(i as isize + d as isize), a);
            }
            a
        };
        let vector = |i: usize| {
            x_taps!(
                v,
                |d: i64| U::load(x.offset(i as isize + d as isize)),
                wv,
                ri
            )
        };
        // `a0, b0, c0` consecutive vectors from `i - lanes`: the output vector at `i`.
        let shuffled = |a0: U::V, b0: U::V, c0: U::V| {
            let (m, p) = (U::mid(a0, b0), U::mid(b0, c0));
            let half = (lanes / 2) as i64;
            let at = |d: i64| {
                if d == 0 {
                    b0
                } else if d == half {
                    p
                } else if d == -half {
                    m
                } else if d == lanes as i64 {
                    c0
                } else if d == -(lanes as i64) {
                    a0
                } else {
                    U::shift(a0, b0, c0, m, p, d)
                }
            };
            x_taps!(v, at, wv, ri)
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
        let mis = dst as usize % align;
        let mut a = if mis == 0 {
            0
        } else {
            ((align - mis) / size).min(len)
        };
        // Whole aligned steps only where the shuffle loop's reads stay in the row.
        while a < lo {
            a += align / size;
        }
        let a = a.min(len);
        if a > 0 {
            prefetch(0);
        }
        let mut i = a;
        if i + 2 * lanes <= len && fits(i) {
            let mut va = U::load(x.add(i).sub(lanes));
            let mut vb = U::load(x.add(i));
            while i + 2 * lanes <= len && fits(i) {
                prefetch(i);
                let vc = U::load(x.add(i + lanes));
                let vd = U::load(x.add(i + 2 * lanes));
                let (v0, v1) = (shuffled(va, vb, vc), shuffled(vb, vc, vd));
                if NT {
                    U::stream(dst.add(i), v0);
                    U::stream(dst.add(i + lanes), v1);
                } else {
                    U::store(dst.add(i), v0);
                    U::store(dst.add(i + lanes), v1);
                }
                va = vc;
                vb = vd;
                i += 2 * lanes;
            }
        }
        // Aligned steps the shuffles cannot reach, with loads.
        while i + 2 * lanes <= len {
            prefetch(i);
            let (v0, v1) = (vector(i), vector(i + lanes));
            if NT {
                U::stream(dst.add(i), v0);
                U::stream(dst.add(i + lanes), v1);
            } else {
                U::store(dst.add(i), v0);
                U::store(dst.add(i + lanes), v1);
            }
            i += 2 * lanes;
        }
        prefetch(i);
        prefetch(i + 2 * lanes);
        for (l, h) in [(0, a), (i, len)] {
            if h - l >= lanes {
                let mut p = l;
                while p < h {
                    let q = p.min(h - lanes);
                    U::store(dst.add(q), vector(q));
                    p += lanes;
                }
            } else {
                for p in l..h {
                    *dst.add(p) = point(p);
                }
            }
        }
    }
}
