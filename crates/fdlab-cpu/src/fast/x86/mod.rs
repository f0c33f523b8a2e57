//! Hand-written AVX2 + FMA loops for `f32` and `f64`, and AVX-512F loops for the pair
//! stencils and periodic rows along x, storing straight from registers (with streaming
//! stores when asked). This file holds the entry points the row code calls; the loops are in:
//!
//! - [`lanes`], [`lanes512`]: the 256- and 512-bit vector operations per element type;
//! - [`kernel`]: the general fused loop over up to eight taps;
//! - [`pair`], [`pair512`]: the loops for antisymmetric tap pairs (first derivatives);
//! - [`xrow`]: derivatives along x, built from shuffles of one load per vector;
//! - [`xperiodic`]: derivatives along x over whole periodic rows (AVX-512F);
//! - [`ring`]: the z march through a ring of copied plane pieces (AVX-512F).

mod kernel;
mod lanes;
mod lanes512;
mod pair;
mod pair512;
mod ring;
mod xperiodic;
mod xrow;

use crate::fast::buffers::Bufs;
use crate::fast::options::{MAX_GROUP, X_BLOCK};
use crate::fast::plan::{PStencil, PfJump, Plan, XPlan};
use crate::fast::x86::kernel::{dispatch, Kernel};
use crate::fast::x86::lanes::Lanes;
use crate::fast::x86::lanes512::Lanes512;
use crate::fast::x86::pair::MAX_PAIRS;
use crate::fast::x86::pair::{dispatch_pairs, PairKernel};
use crate::fast::x86::pair512::dispatch_pairs512;
use crate::fast::x86::xrow::{dispatch_x, single_row, XKernel};
use fdlab_core::Scalar;
use std::any::TypeId;

pub(crate) use ring::ring_march;
pub(crate) use xperiodic::xperiodic;

/// The x-interior `range` of `n` output rows (as in `row`) with the AVX2 loops; false
/// (nothing done) when `T` is neither `f32` nor `f64`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn interior<T: Scalar>(
    plan: &Plan<T>,
    s: &PStencil<T>,
    rows: &[&[T]],
    seg: &mut [T],
    i0: usize,
    range: std::ops::Range<usize>,
    n: usize,
    rs: usize,
    jump: PfJump,
    scratch: &mut [T],
) -> bool {
    if TypeId::of::<T>() == TypeId::of::<f32>() {
        interior_as::<T, f32>(plan, s, rows, seg, i0, range, n, rs, jump, scratch);
    } else if TypeId::of::<T>() == TypeId::of::<f64>() {
        interior_as::<T, f64>(plan, s, rows, seg, i0, range, n, rs, jump, scratch);
    } else {
        return false;
    }
    true
}

/// [`interior`] with `U`, the same type as `T`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn interior_as<T: Scalar, U: Lanes512>(
    plan: &Plan<T>,
    s: &PStencil<T>,
    rows: &[&[T]],
    seg: &mut [T],
    i0: usize,
    range: std::ops::Range<usize>,
    n: usize,
    rs: usize,
    jump: PfJump,
    scratch: &mut [T],
) {
    debug_assert_eq!(TypeId::of::<T>(), TypeId::of::<U>());
    let nx = plan.shape[0];
    let groups = s.taps.len().div_ceil(plan.group);
    let span = (n - 1) * rs;
    let mut b = range.start;
    let align_blocks = plan.avx512 && s.pairs.is_some();
    while b < range.end {
        let mut e = (b + X_BLOCK).min(range.end);
        if align_blocks && e < range.end {
            // End the block on a 64-byte line of the output.
            let mis = (seg.as_ptr() as usize + (e - i0) * std::mem::size_of::<T>()) % 64;
            if mis.is_multiple_of(std::mem::size_of::<T>()) {
                e -= mis / std::mem::size_of::<T>();
            }
        }
        let blk = Block::<T, U> {
            plan,
            s,
            rows,
            // Every pointer of a block comes from a slice that holds all `n` rows of the
            // block (`span + len` elements); casting from T to U (the same type) is the
            // identity.
            out: seg[b - i0..span + e - i0].as_mut_ptr().cast::<U>(),
            b,
            len: e - b,
            n,
            rs,
            span,
            jump,
        };
        let reach = single_row(plan, s).filter(|&r| b >= r && e + r <= nx);
        if let Some(reach) = reach {
            blk.shuffled(reach);
        } else if let (1, Some(pairs)) = (groups, &s.pairs) {
            blk.pairs(pairs);
        } else if groups == 1 {
            blk.taps();
        } else {
            blk.groups(scratch);
        }
        b = e;
    }
}

/// One block `b..b + len` of the x-interior of `n` rows `rs` apart, for [`interior_as`].
struct Block<'r, T, U> {
    plan: &'r Plan<T>,
    s: &'r PStencil<T>,
    rows: &'r [&'r [T]],
    /// The block's first output point (row 0).
    out: *mut U,
    b: usize,
    len: usize,
    n: usize,
    rs: usize,
    /// `(n - 1)·rs`.
    span: usize,
    jump: PfJump,
}

impl<T: Scalar, U: Lanes512> Block<'_, T, U> {
    /// Tap `t`'s first input point of the block (row 0).
    fn src(&self, t: usize) -> *const U {
        let st = (self.b as i64 + self.s.taps[t].off[0]) as usize;
        self.rows[t][st..st + self.span + self.len]
            .as_ptr()
            .cast::<U>()
    }

    /// Tap `t`'s weight.
    fn weight(&self, t: usize) -> U {
        U::from_f64(self.s.taps[t].w.as_f64())
    }

    /// The lead row `rows_ahead` rows later, from the leftmost point a tap reads (an address
    /// to prefetch, never dereferenced: it may lie outside the input); null for 0.
    fn pf_at(&self, rows_ahead: usize) -> *const U {
        if rows_ahead > 0 {
            let s = self.s;
            let ox = s.taps[s.lead].off[0] + s.below_x as i64;
            self.src(s.lead)
                .wrapping_sub(ox as usize)
                .wrapping_add(rows_ahead * self.rs)
        } else {
            std::ptr::null()
        }
    }

    /// All taps on one row within ±`reach` points: one load per vector, the shifted vectors
    /// by shuffles.
    fn shuffled(&self, reach: usize) {
        let (plan, b) = (self.plan, self.b);
        let nx = plan.shape[0];
        let mut w = [U::zero(); 9];
        for t in &self.s.taps {
            w[(t.off[0] + 4) as usize] = U::from_f64(t.w.as_f64());
        }
        let k = XKernel {
            dst: self.out,
            x: self.rows[0].as_ptr().cast::<U>().wrapping_add(b),
            before: b,
            after: nx - b,
            w,
            len: self.len,
            rows: self.n,
            stride: self.rs,
            pf: self.pf_at(plan.prefetch),
            jump: self.jump,
        };
        // SAFETY: `plan.avx2`; `rows[0]` (all taps read that row; `span + nx` points)
        // holds every row `r < n` at `r·rs` from `b - before = 0` to `b + after = nx`,
        // with `before = b >= reach` and `len + reach = e - b + reach <= after`;
        // `dst` covers the `len` points of each row; input and output are disjoint.
        unsafe { dispatch_x(reach, &k, plan.nt) };
    }

    /// Antisymmetric tap pairs in one group: the pair loops.
    fn pairs(&self, pairs: &[(usize, usize)]) {
        let plan = self.plan;
        let mut k = PairKernel {
            dst: self.out,
            plus: [std::ptr::null(); MAX_PAIRS],
            minus: [std::ptr::null(); MAX_PAIRS],
            w: [U::zero(); MAX_PAIRS],
            len: self.len,
            rows: self.n,
            stride: self.rs,
            pf: self.pf_at(plan.prefetch),
            jump: self.jump,
        };
        for (q, &(a, b)) in pairs.iter().enumerate() {
            k.plus[q] = self.src(a);
            k.minus[q] = self.src(b);
            k.w[q] = self.weight(a);
        }
        if plan.avx512 && self.len >= 2 * U::ZW {
            // Along y without a jump (whole rows as one long row), the AVX-512 loop
            // prefetches `pair_prefetch` rows ahead.
            if !plan.zmarch && self.jump.row == PfJump::NONE.row {
                k.pf = self.pf_at(plan.pair_prefetch);
            }
            // SAFETY: as below; `plan.avx512` means the CPU has AVX-512F, and the
            // length condition of `pair_kernel512` is checked here.
            unsafe { dispatch_pairs512(pairs.len(), &k, plan.nt) };
        } else {
            // SAFETY: as for the tap-by-tap kernel in `taps` (`pairs` holds each tap once,
            // so `plus` and `minus` are the same `src(t)` pointers); `pairs.len() <=
            // ntaps / 2 <= MAX_PAIRS` since the group holds every tap.
            unsafe { dispatch_pairs(pairs.len(), &k, plan.nt) };
        }
    }

    /// Every tap in one group: one fused pass.
    fn taps(&self) {
        let ntaps = self.s.taps.len();
        let mut p = [std::ptr::null::<U>(); MAX_GROUP];
        let mut w = [U::zero(); MAX_GROUP];
        for t in 0..ntaps {
            p[t] = self.src(t);
            w[t] = self.weight(t);
        }
        let k = Kernel {
            dst: self.out,
            acc: std::ptr::null(),
            src: p,
            w,
            len: self.len,
            rows: self.n,
            dstride: self.rs,
            sstride: [self.rs; MAX_GROUP],
            pf: self.pf_at(self.plan.prefetch),
            jump: self.jump,
        };
        // SAFETY: `plan.avx2` means `has_avx2_fma()`; the pointers come from slices
        // of `span + len` elements (input for `src`, the output rows for `dst`), so
        // the `len` points of every row `r < n` at `r·rs` lie inside them; output and
        // input are disjoint (one is borrowed shared, the other exclusively).
        unsafe { dispatch(ntaps, &k, self.plan.nt) };
    }

    /// More taps than one group: row by row, group by group, partial sums in `scratch`.
    fn groups(&self, scratch: &mut [T]) {
        let plan = self.plan;
        let nx = plan.shape[0];
        let ntaps = self.s.taps.len();
        let groups = ntaps.div_ceil(plan.group);
        let pf = self.pf_at(plan.prefetch);
        let tmp = scratch[..self.len].as_mut_ptr().cast::<U>();
        for r in 0..self.n {
            let o = r * self.rs;
            for g in 0..groups {
                let (t0, t1) = (g * plan.group, ((g + 1) * plan.group).min(ntaps));
                let last = g + 1 == groups;
                let mut p = [std::ptr::null::<U>(); MAX_GROUP];
                let mut w = [U::zero(); MAX_GROUP];
                for t in t0..t1 {
                    p[t - t0] = self.src(t).wrapping_add(o);
                    w[t - t0] = self.weight(t);
                }
                // Partial sums go to `tmp`; the last group adds them and writes `out`.
                let k = Kernel {
                    dst: if last { self.out.wrapping_add(o) } else { tmp },
                    acc: if g == 0 { std::ptr::null() } else { tmp },
                    src: p,
                    w,
                    len: self.len,
                    rows: 1,
                    dstride: nx,
                    sstride: [nx; MAX_GROUP],
                    pf: if g == 0 && !pf.is_null() {
                        self.jump.at(pf, r).wrapping_add(o)
                    } else {
                        std::ptr::null()
                    },
                    jump: PfJump::NONE,
                };
                // SAFETY: as in `taps`, for row `r` (offset `o < span + 1`, so `o + len`
                // stays inside the slices); `tmp` is `scratch[..len]`, disjoint from
                // input and output; `acc` equals `dst` only for middle groups, which
                // are not streamed.
                unsafe { dispatch(t1 - t0, &k, last && plan.nt) };
            }
        }
    }
}

/// The x-edge points of `n` output rows (as in `row`) with the vector loops: per side,
/// the taps reading outside the row read a small window of boundary-mapped copies. False
/// (nothing done) when the edges or the stencil's reach are too wide for one window, the
/// row is too short, or `T` is neither `f32` nor `f64`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn edges<T: Scalar>(
    plan: &Plan<T>,
    s: &PStencil<T>,
    xp: &XPlan,
    rows: &[&[T]],
    seg: &mut [T],
    n: usize,
    rs: usize,
    bufs: &mut Bufs<T>,
) -> bool {
    if TypeId::of::<T>() == TypeId::of::<f32>() {
        edges_as::<T, f32>(plan, s, xp, rows, seg, n, rs, bufs)
    } else if TypeId::of::<T>() == TypeId::of::<f64>() {
        edges_as::<T, f64>(plan, s, xp, rows, seg, n, rs, bufs)
    } else {
        false
    }
}

/// [`edges`] with `U`, the same type as `T`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn edges_as<T: Scalar, U: Lanes>(
    plan: &Plan<T>,
    s: &PStencil<T>,
    xp: &XPlan,
    rows: &[&[T]],
    seg: &mut [T],
    n: usize,
    rs: usize,
    bufs: &mut Bufs<T>,
) -> bool {
    let w = U::W;
    if xp.windows.is_empty() || xp.lanes != w {
        return false;
    }
    let nx = plan.shape[0];
    let i0 = xp.i0;
    let taps = &s.taps;
    let groups = taps.len().div_ceil(plan.group);
    // `n` rows of `w` outputs, then the windows: per tap row, `n` rows of its copies.
    let (outs, wins) = bufs.scratch.split_at_mut(n * w);
    let out_w = outs.as_mut_ptr().cast::<U>();
    // Per tap: offset of its first value in `wins`, and its row stride there.
    let src = &mut bufs.offs;
    for (start, idx) in &xp.windows {
        let start = *start;
        let mut at = 0;
        for (x, copies) in s.xrows.iter().zip(idx) {
            let len = copies.len;
            let win = &mut wins[at..at + n * len];
            for r in 0..n {
                let row = &rows[x.taps[0]][r * rs..r * rs + nx];
                copies.fill(&mut win[r * len..r * len + len], row);
            }
            for &t in &x.taps {
                // `from + w <= len`: the window spans the row's x offsets plus `w`.
                src[t] = (at + (taps[t].off[0] - x.lo) as usize, len);
            }
            at += n * len;
        }
        let base = wins[..at].as_ptr().cast::<U>();
        for g in 0..groups {
            let (t0, t1) = (g * plan.group, ((g + 1) * plan.group).min(taps.len()));
            let mut ptr = [std::ptr::null::<U>(); MAX_GROUP];
            let mut sstride = [0; MAX_GROUP];
            let mut wt = [U::zero(); MAX_GROUP];
            for t in t0..t1 {
                // In bounds: `src[t].0 < at`.
                ptr[t - t0] = base.wrapping_add(src[t].0);
                sstride[t - t0] = src[t].1;
                wt[t - t0] = U::from_f64(taps[t].w.as_f64());
            }
            let k = Kernel {
                dst: out_w,
                acc: if g == 0 { std::ptr::null() } else { out_w },
                src: ptr,
                w: wt,
                len: w,
                rows: n,
                dstride: w,
                sstride,
                pf: std::ptr::null(),
                jump: PfJump::NONE,
            };
            // SAFETY: `plan.avx2`; tap `t` reads `n` rows of `w` elements at stride `len`
            // inside its window (`n·len` elements of `wins[..at]`, from `from` with
            // `from + w <= len`); `dst` is `outs` (`n·w` elements), disjoint from `wins`;
            // `acc` is null or equals `dst` (then not streamed).
            unsafe { dispatch(t1 - t0, &k, false) };
        }
        // Keep the edge points of the window: those left of the interior, or right of it.
        for r in 0..n {
            let o = r * rs;
            for (q, &v) in outs[r * w..r * w + w].iter().enumerate() {
                let i = start + q;
                if i >= i0 && (i < xp.lo || (i >= xp.hi && i < xp.i1)) {
                    seg[o + i - i0] = v;
                }
            }
        }
    }
    true
}
