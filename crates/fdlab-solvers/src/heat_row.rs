//! One row of the fused heat step, `u⁺ = u + Δt κ L u`, in a single pass: the radius and the
//! number of axes are compile-time constants, so the neighbour rows are fixed sets of slices
//! and the loop over the row vectorises; on x86 the same code is also compiled for AVX2 and
//! picked at run time. Sums run in the reference's order (centre, then per offset the x, y and
//! z pairs) and without fused multiply-adds, so every path gives the same bits.

use crate::layout::Layout;
use crate::rows::{axis_weights, prefetch_leading, Neighbours};
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
    /// Writes the row whose first interior point is `c` into `out` (`n[0]` values).
    pub(crate) fn run(&self, u: &[T], c: usize, out: &mut [T]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was detected on this CPU.
            return unsafe { self.run_avx2(u, c, out) };
        }
        self.dispatch(u, c, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&self, u: &[T], c: usize, out: &mut [T]) {
        self.dispatch(u, c, out)
    }

    #[inline(always)]
    fn dispatch(&self, u: &[T], c: usize, out: &mut [T]) {
        match (self.l.r, self.l.dim == 3) {
            (1, true) => self.row::<1, true>(u, c, out),
            (2, true) => self.row::<2, true>(u, c, out),
            (3, true) => self.row::<3, true>(u, c, out),
            (4, true) => self.row::<4, true>(u, c, out),
            (1, false) => self.row::<1, false>(u, c, out),
            (2, false) => self.row::<2, false>(u, c, out),
            (3, false) => self.row::<3, false>(u, c, out),
            (4, false) => self.row::<4, false>(u, c, out),
            _ => self.row_any(u, c, out),
        }
    }

    #[inline(always)]
    fn row<const R: usize, const THREE: bool>(&self, u: &[T], c: usize, out: &mut [T]) {
        let n0 = out.len();
        let Neighbours { x, y, z } = Neighbours::<T, R>::of::<THREE>(u, c, n0, &self.l);
        let [wx, wy, wz] = axis_weights::<T, R>(self.w);
        let centre = &u[c..c + n0];
        let coef = if self.coef.is_empty() {
            None
        } else {
            Some(&self.coef[c..c + n0])
        };
        // SAFETY (both loops): every slice above has exactly n0 elements and i < n0.
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
        prefetch_leading::<T, R, THREE>(u, c, n0, &self.l);
        // Two loops rather than a choice per point, which compiled to scalar loads of κ.
        match coef {
            Some(k) => {
                for i in 0..n0 {
                    unsafe {
                        *out.get_unchecked_mut(i) =
                            flush(*centre.get_unchecked(i) + *k.get_unchecked(i) * lap(i));
                    }
                }
            }
            None => {
                for i in 0..n0 {
                    unsafe {
                        *out.get_unchecked_mut(i) =
                            flush(*centre.get_unchecked(i) + self.cc * lap(i));
                    }
                }
            }
        }
    }

    /// Any radius (orders above 8): the same sums, neighbour by neighbour.
    fn row_any(&self, u: &[T], c: usize, out: &mut [T]) {
        let l = self.l;
        for (i, o) in out.iter_mut().enumerate() {
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
            *o = flush(u[p] + k * lap);
        }
    }
}
