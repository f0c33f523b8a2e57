//! One row of the fused wave step, `p⁺ = 2p − p⁻ + c²Δt² (Δp + CPML terms)`.
//!
//! The radius and the number of axes are compile-time constants (and an AVX2 build is picked
//! at run time). Points outside every CPML layer (all of them without a CPML) go through a
//! single vectorised pass; points in a layer go point by point, also updating their ζ memory
//! variables. Both sum in the same order, so a point gets the same bits either way.

use crate::layout::Layout;
use crate::physics::CpmlProfile;
use crate::rows::{axis_weights, prefetch_leading, Neighbours};
use crate::stepper::flush;
use fdlab_core::Scalar;

/// What a row of the wave step reads.
pub(crate) struct WaveRow<'a, T> {
    /// The padded layout.
    pub l: Layout,
    /// Pressure now.
    pub p: &'a [T],
    /// CPML ψ per point (empty without a CPML).
    pub psi: &'a [[T; 3]],
    /// Per axis, second-derivative weights for offsets 0..=r.
    pub w2: &'a [Vec<T>; 3],
    /// Sum of the centre weights.
    pub w0: T,
    /// Per axis, first-derivative weights (CPML terms).
    pub w1: &'a [Vec<T>; 3],
    /// `c² Δt²` per padded point.
    pub c2dt2: &'a [T],
    /// CPML profiles.
    pub cpml: Option<&'a [CpmlProfile; 3]>,
    /// The interior x range `[lo, hi)` outside the CPML's x layers (all of x without one).
    pub x_inner: (usize, usize),
}

impl<T: Scalar> WaveRow<'_, T> {
    /// Updates the row whose first interior point is `c`: `out` holds p⁻ on entry and p⁺ on
    /// exit, `zeta` the row's ζ (empty without a CPML).
    pub(crate) fn run(&self, c: usize, out: &mut [T], zeta: &mut [[T; 3]]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was detected on this CPU.
            return unsafe { self.run_avx2(c, out, zeta) };
        }
        self.dispatch(c, out, zeta)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&self, c: usize, out: &mut [T], zeta: &mut [[T; 3]]) {
        self.dispatch(c, out, zeta)
    }

    /// The radius and the number of axes as compile-time constants where they are common.
    #[inline(always)]
    fn dispatch(&self, c: usize, out: &mut [T], zeta: &mut [[T; 3]]) {
        match (self.l.r, self.l.dim == 3) {
            (1, true) => self.row::<1, true>(c, out, zeta),
            (2, true) => self.row::<2, true>(c, out, zeta),
            (3, true) => self.row::<3, true>(c, out, zeta),
            (4, true) => self.row::<4, true>(c, out, zeta),
            (1, false) => self.row::<1, false>(c, out, zeta),
            (2, false) => self.row::<2, false>(c, out, zeta),
            (3, false) => self.row::<3, false>(c, out, zeta),
            (4, false) => self.row::<4, false>(c, out, zeta),
            // Orders above 8 are refused before a stepper is built; kept correct anyway.
            _ => {
                let (j, k) = self.row_point(c);
                let (r, dim) = (self.l.r, self.l.dim);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = self.point(c + i, [i, j, k], *o, &mut zeta[i], r, dim);
                }
            }
        }
    }

    /// The row's (j, k) from the padded index of its first interior point.
    fn row_point(&self, c: usize) -> (usize, usize) {
        let (px, py) = (self.l.p[0], self.l.p[1]);
        (
            (c / px) % py - self.l.halo(1),
            c / (px * py) - self.l.halo(2),
        )
    }

    #[inline(always)]
    fn row<const R: usize, const THREE: bool>(&self, c: usize, out: &mut [T], zeta: &mut [[T; 3]]) {
        let (j, k) = self.row_point(c);
        let (lo, hi) = match self.cpml {
            Some(prof) if prof[1].active[j] || prof[2].active[k] => (0, 0),
            _ => self.x_inner,
        };
        let dim = if THREE { 3 } else { 2 };
        for i in (0..lo).chain(hi..out.len()) {
            out[i] = self.point(c + i, [i, j, k], out[i], &mut zeta[i], R, dim);
        }
        if lo < hi {
            self.fast_r::<R, THREE>(c + lo, &mut out[lo..hi]);
        }
    }

    /// One point, in the order every path sums: the centre, each axis's pairs, then that
    /// axis's CPML terms where the point is in its layer. `r` and `dim` are the layout's
    /// (passed so that inlining with constants unrolls the loops).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn point(&self, c: usize, pos: [usize; 3], old: T, z: &mut [T; 3], r: usize, dim: usize) -> T {
        let p = self.p;
        let s = [1, self.l.stride(1), self.l.stride(2)];
        let mut total = self.w0 * p[c];
        let mut d2 = [T::zero(); 3];
        for a in 0..dim {
            let mut acc = T::zero();
            for m in 1..=r {
                acc = acc + self.w2[a][m] * (p[c - m * s[a]] + p[c + m * s[a]]);
            }
            d2[a] = acc;
            total = total + acc;
        }
        if let Some(prof) = self.cpml {
            for a in 0..dim {
                let pr = &prof[a];
                if !pr.active[pos[a]] {
                    continue;
                }
                let mut dpsi = T::zero();
                for m in 1..=r {
                    dpsi = dpsi
                        + self.w1[a][m] * (self.psi[c + m * s[a]][a] - self.psi[c - m * s[a]][a]);
                }
                // The centre weight of this axis belongs to ∂²p along it.
                let d2a = d2[a] + self.w2[a][0] * p[c];
                let zn = flush(
                    T::from_f64(pr.b[pos[a]]) * z[a] + T::from_f64(pr.a[pos[a]]) * (d2a + dpsi),
                );
                z[a] = zn;
                total = total + dpsi + zn;
            }
        }
        flush(p[c] + p[c] - old + self.c2dt2[c] * total)
    }

    #[inline(always)]
    fn fast_r<const R: usize, const THREE: bool>(&self, c: usize, out: &mut [T]) {
        let n = out.len();
        let p = self.p;
        let Neighbours { x, y, z } = Neighbours::<T, R>::of::<THREE>(p, c, n, &self.l);
        let [wx, wy, wz] = axis_weights::<T, R>(self.w2);
        let centre = &p[c..c + n];
        let c2 = &self.c2dt2[c..c + n];
        prefetch_leading::<T, R, THREE>(p, c, n, &self.l);
        for i in 0..n {
            // SAFETY: every slice above has exactly n elements and i < n.
            unsafe {
                let pc = *centre.get_unchecked(i);
                let mut total = self.w0 * pc;
                let mut acc = T::zero();
                for m in 0..R {
                    acc = acc + wx[m] * (*x[m].0.get_unchecked(i) + *x[m].1.get_unchecked(i));
                }
                total = total + acc;
                let mut acc = T::zero();
                for m in 0..R {
                    acc = acc + wy[m] * (*y[m].0.get_unchecked(i) + *y[m].1.get_unchecked(i));
                }
                total = total + acc;
                if THREE {
                    let mut acc = T::zero();
                    for m in 0..R {
                        acc = acc + wz[m] * (*z[m].0.get_unchecked(i) + *z[m].1.get_unchecked(i));
                    }
                    total = total + acc;
                }
                let o = out.get_unchecked_mut(i);
                *o = flush(pc + pc - *o + *c2.get_unchecked(i) * total);
            }
        }
    }
}
