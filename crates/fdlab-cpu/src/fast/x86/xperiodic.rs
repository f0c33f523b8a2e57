//! Derivatives along x over whole periodic rows (AVX-512F): one vector per output line.

use crate::fast::plan::{PStencil, Plan, XPlan};
use crate::fast::x86::lanes512::Lanes512;
use crate::fast::x86::xrow::single_row;
use fdlab_core::{Boundary, Scalar};
use std::any::TypeId;
use std::arch::x86_64::*;

/// `Σ_d w[d + 4]·get(d)` for `-R <= d <= R` in [`xlong512`], written out (each `get` with a
/// literal offset, so that every shift index and weight is a constant). With `PAIRS` (the
/// weights antisymmetric, no centre tap) as `Σ_{d>0} w[d + 4]·(get(d) − get(−d))`: fewer
/// operations, and no large partial sums of one sign that cancel at the end. Otherwise in two
/// sums by the parity of `d`; `$center`: whether the centre weight is not zero.
macro_rules! long_taps {
    ($get:ident, $wv:ident, $center:ident) => {{
        if PAIRS {
            let mut even = U::zmul($wv[5], U::zsub($get!(1), $get!(-1)));
            if R >= 3 {
                even = U::zfmadd($wv[7], U::zsub($get!(3), $get!(-3)), even);
            }
            if R >= 2 {
                let mut odd = U::zmul($wv[6], U::zsub($get!(2), $get!(-2)));
                if R >= 4 {
                    odd = U::zfmadd($wv[8], U::zsub($get!(4), $get!(-4)), odd);
                }
                even = U::zadd(even, odd);
            }
            even
        } else {
            let mut even = U::zmul($wv[3], $get!(-1));
            let mut odd = U::zmul($wv[5], $get!(1));
            if $center {
                odd = U::zfmadd($wv[4], $get!(0), odd);
            }
            if R >= 2 {
                odd = U::zfmadd($wv[2], $get!(-2), odd);
                even = U::zfmadd($wv[6], $get!(2), even);
            }
            if R >= 3 {
                even = U::zfmadd($wv[1], $get!(-3), even);
                odd = U::zfmadd($wv[7], $get!(3), odd);
            }
            if R >= 4 {
                odd = U::zfmadd($wv[0], $get!(-4), odd);
                even = U::zfmadd($wv[8], $get!(4), even);
            }
            U::zadd(even, odd)
        }
    }};
}

/// The vector `d` points (`-4 <= d <= 4`) after the start of `b`, given `a`, `b`, `c`
/// consecutive vectors and the shift indices `idx` of [`xlong512`].
macro_rules! shifted {
    ($u:ident, $a:ident, $b:ident, $c:ident, $idx:ident, 0) => {
        $b
    };
    ($u:ident, $a:ident, $b:ident, $c:ident, $idx:ident, -1) => {
        $u::zshift($a, $idx[3], $b)
    };
    ($u:ident, $a:ident, $b:ident, $c:ident, $idx:ident, -2) => {
        $u::zshift($a, $idx[2], $b)
    };
    ($u:ident, $a:ident, $b:ident, $c:ident, $idx:ident, -3) => {
        $u::zshift($a, $idx[1], $b)
    };
    ($u:ident, $a:ident, $b:ident, $c:ident, $idx:ident, -4) => {
        $u::zshift($a, $idx[0], $b)
    };
    ($u:ident, $a:ident, $b:ident, $c:ident, $idx:ident, 1) => {
        $u::zshift($b, $idx[5], $c)
    };
    ($u:ident, $a:ident, $b:ident, $c:ident, $idx:ident, 2) => {
        $u::zshift($b, $idx[6], $c)
    };
    ($u:ident, $a:ident, $b:ident, $c:ident, $idx:ident, 3) => {
        $u::zshift($b, $idx[7], $c)
    };
    ($u:ident, $a:ident, $b:ident, $c:ident, $idx:ident, 4) => {
        $u::zshift($b, $idx[8], $c)
    };
}

/// A derivative along x (taps on one row within ±4 points, as [`single_row`]) over `n`
/// whole rows (`rs == nx`: a run along y) with the periodic boundary, with AVX-512F:
/// every 64-byte line of the output is one vector, streamed with `plan.nt`, including the
/// line that holds the end of one row and the start of the next (its lanes whose taps wrap
/// around the row read `±nx` away through masked loads). False (nothing done) when it does
/// not apply (no AVX-512, another boundary or stencil, part rows, rows shorter than
/// `2·ZW + 2·reach` points, `T` neither `f32` nor `f64`).
///
/// Why (measured on a 2-vCPU Zen 4 VM): rows start 16 bytes into a cache line
/// (a `Vec` of 512 MiB starts 16 bytes into a page), and the AVX2 path wrote the line
/// holding a row's end and the next row's start in three parts with ordinary stores (the
/// interior's head, then the edge points of both rows), plus per-row edge code.
#[allow(clippy::too_many_arguments)]
pub(crate) fn xperiodic<T: Scalar>(
    plan: &Plan<T>,
    s: &PStencil<T>,
    xp: &XPlan,
    rows: &[&[T]],
    seg: &mut [T],
    n: usize,
    rs: usize,
) -> bool {
    if TypeId::of::<T>() == TypeId::of::<f32>() {
        xperiodic_as::<T, f32>(plan, s, xp, rows, seg, n, rs)
    } else if TypeId::of::<T>() == TypeId::of::<f64>() {
        xperiodic_as::<T, f64>(plan, s, xp, rows, seg, n, rs)
    } else {
        false
    }
}

/// [`xperiodic`] with `U`, the same type as `T`.
pub(crate) fn xperiodic_as<T: Scalar, U: Lanes512>(
    plan: &Plan<T>,
    s: &PStencil<T>,
    xp: &XPlan,
    rows: &[&[T]],
    seg: &mut [T],
    n: usize,
    rs: usize,
) -> bool {
    debug_assert_eq!(TypeId::of::<T>(), TypeId::of::<U>());
    let nx = plan.shape[0];
    let Some(reach) = single_row(plan, s) else {
        return false;
    };
    let size = std::mem::size_of::<U>();
    let fits = plan.avx512
        && plan.boundary == Boundary::Periodic
        && xp.i0 == 0
        && xp.i1 == nx
        && (n == 1 || rs == nx)
        && nx >= 2 * U::ZW + 2 * reach
        && (seg.as_ptr() as usize).is_multiple_of(size);
    if !fits {
        return false;
    }
    let total = n * nx;
    let mut w = [U::zero(); 9];
    for t in &s.taps {
        w[(t.off[0] + 4) as usize] = U::from_f64(t.w.as_f64());
    }
    // All taps read `rows[0]` (one row group): `span + nx = total` points from the first
    // row's x = 0; `seg` holds the same `total` points of the output. T and U are the same
    // type.
    let x = rows[0][..total].as_ptr().cast::<U>();
    let dst = seg[..total].as_mut_ptr().cast::<U>();
    // Into L2, `pair_prefetch` rows ahead, as the AVX-512 pair loop along y.
    let pf = if plan.pair_prefetch > 0 {
        x.wrapping_add(plan.pair_prefetch * nx)
    } else {
        std::ptr::null()
    };
    let k = XLong {
        dst,
        x,
        total,
        nx,
        w,
        pf,
    };
    // SAFETY: `plan.avx512`; `x` readable and `dst` writable for `total` points (slices
    // above), disjoint (input borrowed shared, output exclusively); `nx >= 2·ZW + 2·R`;
    // `dst` aligned to its element size. (`PAIRS`: every tap paired with the opposite
    // offset and weight, see `PStencil::pairs`.)
    unsafe {
        macro_rules! arms {
            ($(($r:literal, $nt:literal, $p:literal))*) => {
                match (reach, plan.nt, s.pairs.is_some()) {
                    $(($r, $nt, $p) => xlong512::<U, $r, $nt, $p>(&k),)*
                    _ => unreachable!("single_row gives a reach of 1 to 4"),
                }
            };
        }
        arms!((1, false, false)(2, false, false)(3, false, false)(
            4, false, false
        )(1, true, false)(2, true, false)(3, true, false)(
            4, true, false
        )(1, false, true)(2, false, true)(3, false, true)(
            4, false, true
        )(1, true, true)(2, true, true)(3, true, true)(
            4, true, true
        ))
    }
    true
}

/// One call of [`xlong512`]: `total / nx` periodic rows of `nx` points one after the other.
pub(crate) struct XLong<U> {
    pub(crate) dst: *mut U,
    pub(crate) x: *const U,
    pub(crate) total: usize,
    pub(crate) nx: usize,
    /// Weight of offset `o` at `o + 4`.
    pub(crate) w: [U; 9],
    /// Prefetch address for point 0 (null: no prefetch).
    pub(crate) pf: *const U,
}

/// For every point `f < total` (row `f / nx`, `i = f % nx`):
/// `dst[f] = Σ_{|d|<=R} w[d+4]·x[row·nx + (i + d) mod nx]`, one 512-bit vector per 64-byte
/// line of `dst` (the first and last lines of the span, if partial, by masked stores).
/// Lines whose points read only inside their own row (and at least a vector from the
/// span's ends): one load per line, the shifted vectors by two-source permutes
/// (`vpermt2ps`/`vpermt2pd`, index vectors built once: `valignd` takes the shift as an
/// immediate, and a `match` over it stayed as jump tables in the loop). Other lines: per tap
/// three masked loads (the lanes reading inside the row, and those wrapping to `+nx` and
/// `-nx`).
///
/// # Safety
/// The CPU has AVX-512F; `x` readable and `dst` writable at `0..total`, not overlapping;
/// `total` a multiple of `nx`; `nx >= 2·ZW + 2·R`; `dst` aligned to `size_of::<U>()`.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn xlong512<U: Lanes512, const R: usize, const NT: bool, const PAIRS: bool>(
    k: &XLong<U>,
) {
    // SAFETY (every access): body lines `i` satisfy `i >= L` and `i + 2·L <= total`, so the
    // loads at `i - L`, `i`, `i + L` are inside `x`, and the store at `i` inside `dst`;
    // edge lines load and store only lanes `g` with `0 <= g < total`, each tap's lanes at
    // `g + d` (inside `g`'s row: `0 <= i + d < nx`), `g + d + nx` (when `i + d < 0`) or
    // `g + d - nx` (when `i + d >= nx`), all in `g`'s row, so inside `0..total`; masked
    // loads and stores do not access masked-off lanes; streamed lines start on a 64-byte
    // boundary of `dst`; prefetch addresses are never dereferenced.
    let l = U::ZW as i64;
    let ri = R as i64;
    let size = std::mem::size_of::<U>();
    let (total, nx) = (k.total as i64, k.nx as i64);
    let (x, dst) = (k.x, k.dst);
    let wv: [U::Z; 9] = std::array::from_fn(|q| U::zsplat(k.w[q]));
    // Lane indices of the shifted vectors, offset `d` at `d + 4`: `d > 0` from the vectors
    // at 0 and `L`, `d < 0` from those at `-L` and 0.
    let idx: [__m512i; 9] = std::array::from_fn(|q| {
        let d = q as i64 - 4;
        U::zidx(if d >= 0 { d } else { l + d } as usize)
    });
    // Line starts: the points `f ≡ phase (mod L)` (`dst + f` on a 64-byte boundary).
    let mis = dst as usize % 64;
    let phase = if mis == 0 {
        0
    } else {
        ((64 - mis) / size) as i64
    };
    let up = |p: i64| phase - (phase - p).div_euclid(l) * l;
    let down = |p: i64| phase + (p - phase).div_euclid(l) * l;
    // The mask of lanes `lo..hi`, clamped to the vector.
    let span = |lo: i64, hi: i64| {
        let lo = lo.clamp(0, l);
        let hi = hi.clamp(lo, l);
        U::lanes(lo as usize, hi as usize)
    };
    let none = U::lanes(0, 0);
    let all = U::lanes(0, U::ZW);
    let center = k.w[4] != U::zero();
    let put = |f: i64, v: U::Z| {
        if NT {
            U::zstream(dst.offset(f as isize), v);
        } else {
            U::zstore(dst.offset(f as isize), v);
        }
    };
    let prefetch = |f: i64| {
        if !k.pf.is_null() {
            _mm_prefetch::<_MM_HINT_T1>(k.pf.wrapping_offset(f as isize).cast::<i8>());
        }
    };
    // A line holding a row's end or start, or a partial line at the span's ends.
    let edge = |f: i64| {
        prefetch(f);
        let valid = span(-f, total - f);
        // The row boundary nearest the line (the only one whose wrapping taps it can
        // hold: `nx >= 2·L + 2·R`).
        let b = (f + l / 2 + nx / 2).div_euclid(nx) * nx;
        let get = |d: i64| {
            // Lanes whose tap `d` wraps: to `+nx` (first points of a row, `d < 0`) or to
            // `-nx` (last points, `d > 0`).
            let (lo, hi) = if d < 0 {
                (span(b - f, b - d - f) & valid, none)
            } else if d > 0 {
                (none, span(b - d - f, b - f) & valid)
            } else {
                (none, none)
            };
            let p = x.wrapping_offset((f + d) as isize);
            let v = U::zload_mask(valid & !(lo | hi), p);
            let v = U::zload_merge(v, lo, p.wrapping_offset(nx as isize));
            U::zload_merge(v, hi, p.wrapping_offset(-nx as isize))
        };
        macro_rules! eget {
            ($d:literal) => {
                get($d)
            };
        }
        let v = long_taps!(eget, wv, center);
        if valid == all {
            put(f, v);
        } else {
            U::zstore_mask(dst.wrapping_offset(f as isize), valid, v);
        }
    };
    let mut f = up(0);
    if f > 0 {
        f -= l;
    }
    let rows = total / nx;
    for r in 0..rows {
        // Lines inside row `r` whose taps stay in it, at least a line from the span's ends.
        let lo = up((r * nx + ri).max(l));
        let hi = down((r * nx + nx - ri).min(total - l) - l);
        if lo > hi {
            continue;
        }
        while f < lo {
            edge(f);
            f += l;
        }
        let mut a = U::zload(x.offset((f - l) as isize));
        let mut b = U::zload(x.offset(f as isize));
        while f <= hi {
            prefetch(f);
            let c = U::zload(x.offset((f + l) as isize));
            macro_rules! sget {
                ($($d:tt)+) => {
                    shifted!(U, a, b, c, idx, $($d)+)
                };
            }
            put(f, long_taps!(sget, wv, center));
            a = b;
            b = c;
            f += l;
        }
    }
    while f < total {
        edge(f);
        f += l;
    }
}
