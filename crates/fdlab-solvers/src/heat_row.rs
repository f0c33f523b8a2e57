//! One row of the fused heat step, `u⁺ = u + Δt κ L u`, in a single pass written straight
//! into the output field: the radius and the number of axes are compile-time constants, so
//! the neighbour rows are fixed sets of slices and the loop over the row vectorises; on x86
//! the same code is also compiled for AVX2 and AVX-512F and picked at run time. Sums run in
//! the reference's order (centre, then per offset the x, y and z pairs) and without fused
//! multiply-adds, so every path gives the same bits.
//!
//! Why straight into the output with streaming stores: computing a band into a scratch
//! buffer and then streaming it out made the computation and the stores take turns (the
//! core waited on the stores of one band before computing the next); storing each block of
//! one cache line as it is computed lets the stores drain while the next are computed.
//! Measured in docs/performance.md ("Solver steps").

use crate::layout::Layout;
use crate::rows::{axis_weights, prefetch_leading, prefetch_row, stream_block, Isa, Neighbours};
use crate::stepper::flush;
use fdlab_core::Scalar;

/// What the row needs besides the field.
pub(crate) struct HeatRow<'a, T> {
    /// The padded layout.
    pub l: Layout,
    /// Per axis, weights for offsets 0..=r.
    pub w: &'a [Vec<T>; 3],
    /// The sum of the centre weights.
    pub w0: T,
    /// `Δt κ` per padded point, or empty for the constant `cc`.
    pub coef: &'a [T],
    /// `Δt κ` when constant.
    pub cc: T,
}

impl<T: Scalar> HeatRow<'_, T> {
    /// The stores this CPU runs the rows with.
    pub(crate) fn isa() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Plain
    }

    /// Writes the padded row `prow` whose first interior point is `c`: its `n[0]` interior
    /// values (whole 64-byte lines with streaming stores unless `isa` is [`Isa::Plain`]), and
    /// its x halos (periodic images when `periodic`, else zeros). Returns the row's first
    /// non-finite value (index within the interior, value), if any. The caller fences the
    /// streaming stores before the field is read by another thread.
    pub(crate) fn run(
        &self,
        isa: Isa,
        u: &[T],
        c: usize,
        prow: &mut [T],
        periodic: bool,
    ) -> Option<(usize, f64)> {
        let (r, n0) = (self.l.r, self.l.n[0]);
        assert_eq!(prow.len(), n0 + 2 * r, "a padded row");
        assert!(c >= r && c + n0 + r <= u.len(), "a padded row of u");
        let bad = match isa {
            Isa::Plain => self.dispatch::<{ Isa::PLAIN }>(u, c, prow, periodic),
            // SAFETY: `isa` names an instruction set detected on this CPU (see `isa`).
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { self.run_avx2(u, c, prow, periodic) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { self.run_avx512(u, c, prow, periodic) },
        };
        if !bad {
            return None;
        }
        // Rare: read the row back (this thread sees its own streaming stores).
        let out = &prow[r..r + n0];
        out.iter()
            .position(|v| !v.is_finite())
            .map(|i| (i, out[i].as_f64()))
    }

    /// # Safety
    /// The CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&self, u: &[T], c: usize, prow: &mut [T], periodic: bool) -> bool {
        self.dispatch::<{ Isa::AVX2 }>(u, c, prow, periodic)
    }

    /// # Safety
    /// The CPU has AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn run_avx512(&self, u: &[T], c: usize, prow: &mut [T], periodic: bool) -> bool {
        self.dispatch::<{ Isa::AVX512 }>(u, c, prow, periodic)
    }

    #[inline(always)]
    fn dispatch<const ISA: u8>(&self, u: &[T], c: usize, prow: &mut [T], periodic: bool) -> bool {
        match (self.l.r, self.l.dim == 3) {
            (1, true) => self.row::<1, true, ISA>(u, c, prow, periodic),
            (2, true) => self.row::<2, true, ISA>(u, c, prow, periodic),
            (3, true) => self.row::<3, true, ISA>(u, c, prow, periodic),
            (4, true) => self.row::<4, true, ISA>(u, c, prow, periodic),
            (1, false) => self.row::<1, false, ISA>(u, c, prow, periodic),
            (2, false) => self.row::<2, false, ISA>(u, c, prow, periodic),
            (3, false) => self.row::<3, false, ISA>(u, c, prow, periodic),
            (4, false) => self.row::<4, false, ISA>(u, c, prow, periodic),
            _ => self.row_any(u, c, prow, periodic),
        }
    }

    #[inline(always)]
    fn row<const R: usize, const THREE: bool, const ISA: u8>(
        &self,
        u: &[T],
        c: usize,
        prow: &mut [T],
        periodic: bool,
    ) -> bool {
        let n0 = self.l.n[0];
        let Neighbours { x, y, z } = Neighbours::<T, R>::of::<THREE>(u, c, n0, &self.l);
        let [wx, wy, wz] = axis_weights::<T, R>(self.w);
        let centre = &u[c..c + n0];
        // SAFETY: every slice above has exactly n0 elements, and the callers pass i < n0.
        let lap = |i: usize| unsafe {
            let mut lap = self.w0 * *centre.get_unchecked(i);
            for m in 0..R {
                lap = lap
                    + wx[m] * (*x[m].0.get_unchecked(i) + *x[m].1.get_unchecked(i))
                    + wy[m] * (*y[m].0.get_unchecked(i) + *y[m].1.get_unchecked(i));
                if THREE {
                    lap = lap + wz[m] * (*z[m].0.get_unchecked(i) + *z[m].1.get_unchecked(i));
                }
            }
            lap
        };
        // Rows go up columns of bands (see `crate::bands::sweep`): in 3-D the row this one
        // needs next from memory is one plane beyond its leading neighbour.
        if THREE {
            prefetch_row(u, c + (R + 1) * self.l.stride(2), n0);
        } else {
            prefetch_leading::<T, R, THREE>(u, c, n0, &self.l);
        }
        // One instance per kind of κ rather than a choice per point, which compiled to scalar
        // loads of κ.
        if self.coef.is_empty() {
            let cc = self.cc;
            // SAFETY: i < n0, the length of `centre`.
            let value = |i: usize| flush(unsafe { *centre.get_unchecked(i) } + cc * lap(i));
            write_any::<T, R, ISA>(prow, n0, periodic, value)
        } else {
            let k = &self.coef[c..c + n0];
            // SAFETY: i < n0, the length of `centre` and `k`.
            let value = |i: usize| unsafe {
                flush(*centre.get_unchecked(i) + *k.get_unchecked(i) * lap(i))
            };
            write_any::<T, R, ISA>(prow, n0, periodic, value)
        }
    }

    /// Any radius (orders above 8): the same sums, neighbour by neighbour, ordinary stores.
    fn row_any(&self, u: &[T], c: usize, prow: &mut [T], periodic: bool) -> bool {
        let l = self.l;
        let value = |i: usize| {
            let p = c + i;
            let mut lap = self.w0 * u[p];
            for m in 1..=l.r {
                for a in 0..l.dim {
                    let s = m * l.stride(a);
                    lap = lap + self.w[a][m] * (u[p - s] + u[p + s]);
                }
            }
            let k = if self.coef.is_empty() {
                self.cc
            } else {
                self.coef[p]
            };
            flush(u[p] + k * lap)
        };
        let (r, n0) = (l.r, l.n[0]);
        let mut bad = false;
        for (i, o) in prow[r..r + n0].iter_mut().enumerate() {
            *o = value(i);
            bad |= !o.is_finite();
        }
        for h in 0..r {
            let (left, right) = if periodic {
                (prow[n0 + h], prow[r + h])
            } else {
                (T::zero(), T::zero())
            };
            prow[h] = left;
            prow[r + n0 + h] = right;
        }
        bad
    }
}

/// [`write_row`] with blocks of one 64-byte line of `T` (16-value blocks of f64, two lines,
/// ran the 256³ step at half the speed of one-line blocks).
#[inline(always)]
fn write_any<T: Scalar, const R: usize, const ISA: u8>(
    prow: &mut [T],
    n0: usize,
    periodic: bool,
    value: impl Fn(usize) -> T,
) -> bool {
    if std::mem::size_of::<T>() == 8 {
        write_row::<T, R, ISA, 8>(prow, n0, periodic, value)
    } else {
        write_row::<T, R, ISA, 16>(prow, n0, periodic, value)
    }
}

/// Writes the padded row `prow` (halo `R` each side, `n0` interior values `value(i)`) and
/// its x halos (periodic images of the far end, else zeros). The interior goes in blocks of
/// `B` values (one 64-byte line): its whole lines with [`stream_block`], and the points before and
/// after them from one more block at each end of the row, stored normally (a point-by-point
/// loop there cost more than the blocks). True when a written value is not finite.
#[inline(always)]
fn write_row<T: Scalar, const R: usize, const ISA: u8, const B: usize>(
    prow: &mut [T],
    n0: usize,
    periodic: bool,
    value: impl Fn(usize) -> T,
) -> bool {
    debug_assert_eq!(prow.len(), n0 + 2 * R);
    let size = std::mem::size_of::<T>();
    let isa = Isa::from_u8(ISA);
    let addr = prow[R..].as_ptr() as usize;
    if isa == Isa::Plain || n0 < B || !(size == 4 || size == 8) || !addr.is_multiple_of(size) {
        let mut bad = false;
        for i in 0..n0 {
            let v = value(i);
            bad |= !v.is_finite();
            prow[R + i] = v;
        }
        for h in 0..R {
            let (left, right) = if periodic {
                (prow[h + n0], prow[R + h])
            } else {
                (T::zero(), T::zero())
            };
            prow[h] = left;
            prow[R + n0 + h] = right;
        }
        return bad;
    }
    // Points before the first 64-byte boundary: fewer than a block.
    let head = (64 - addr % 64) % 64 / size;
    let blocks = (n0 - head) / B;
    let body_end = head + blocks * B;
    // `v·0` is ±0 for a finite value and NaN otherwise; NaN survives the sums. Lane-wise
    // sums vectorise with the block, where a boolean test per value did not.
    let mut nan = [T::zero(); B];
    let (mut first, mut last) = ([T::zero(); B], [T::zero(); B]);
    let out = &mut prow[R..R + n0];
    let base = out.as_mut_ptr();
    // One loop over the first block (at 0), the streamed ones, and the last (ending at n0,
    // covering what the body left as n0 ≥ B): one call site of `value`, so that it is
    // inlined and compiled for this instruction set.
    let count = blocks + 2;
    for b in 0..count {
        let i0 = if b == 0 {
            0
        } else if b == count - 1 {
            n0 - B
        } else {
            head + (b - 1) * B
        };
        let mut v = [T::zero(); B];
        for q in 0..B {
            v[q] = value(i0 + q);
            nan[q] = nan[q] + v[q] * T::zero();
        }
        if b == 0 {
            first = v;
        } else if b == count - 1 {
            last = v;
        } else {
            // SAFETY: i0 + B <= body_end <= n0, the length of `out`; `base + i0` lies a
            // whole number of blocks (64 or 128 bytes) past the 64-byte boundary at
            // `base + head`; T is 4 or 8 bytes; `isa` was detected by the caller, who fences.
            unsafe { stream_block(isa, base.add(i0), &v) };
        }
    }
    out[..head].copy_from_slice(&first[..head]);
    out[body_end..].copy_from_slice(&last[body_end + B - n0..]);
    for h in 0..R {
        // R ≤ 4 < B: the images are in the first and last blocks.
        let (left, right) = if periodic {
            (last[B - R + h], first[h])
        } else {
            (T::zero(), T::zero())
        };
        prow[h] = left;
        prow[R + n0 + h] = right;
    }
    nan.iter().any(|s| *s != T::zero())
}
