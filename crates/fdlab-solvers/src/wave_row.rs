//! One row of the fused wave step, `p⁺ = 2p − p⁻ + c²Δt² (Δp + CPML terms)`, and one row of
//! the CPML's ψ update.
//!
//! The radius and the number of axes are compile-time constants (and an AVX2 build is picked
//! at run time). A row outside every CPML layer (all of them without a CPML) is one
//! vectorised pass. A row with layer cells is a few passes over slices, each of which
//! vectorises: the plain stencil sum for the whole row into a buffer, then per active axis
//! (x, y, z in turn) its ψ derivative and ζ update added on the cells in that axis's layer,
//! then the time update. Every point sums in one order: the centre, each axis's pairs, then
//! per active axis `+ ∂ψ + ζ`, without fused multiply-adds, so that the passes give the bits
//! of [`WaveRow::point`] (kept for orders above 8).

use crate::layout::Layout;
use crate::physics::CpmlProfile;
use crate::rows::{axis_weights, prefetch_leading, Neighbours};
use crate::stepper::flush;
use fdlab_core::Scalar;

/// The slices at offsets `−m` and `+m` of a row.
type Pair<'a, V> = (&'a [V], &'a [V]);

/// The CPML profiles in the field's precision, with the x runs the row passes go over.
pub(crate) struct CpmlRows<T> {
    /// Per axis, `a` at each cell.
    pub a: [Vec<T>; 3],
    /// Per axis, `b` at each cell.
    pub b: [Vec<T>; 3],
    /// Per axis, whether the cell has ζ terms.
    pub active: [Vec<bool>; 3],
    /// The runs `[lo, hi)` of x cells with ζ terms.
    pub x_active: Vec<(usize, usize)>,
    /// The runs `[lo, hi)` of x cells whose ψ is updated (`a ≠ 0`).
    pub x_psi: Vec<(usize, usize)>,
    /// Per axis, whether the cell's ψ is updated (`a ≠ 0` in f64, as the reference tests).
    pub has_psi: [Vec<bool>; 3],
}

/// The runs of consecutive indices where `on` holds.
fn runs(on: impl Iterator<Item = bool>) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, v) in on.enumerate() {
        match out.last_mut() {
            Some(last) if v && last.1 == i => last.1 = i + 1,
            _ if v => out.push((i, i + 1)),
            _ => {}
        }
    }
    out
}

impl<T: Scalar> CpmlRows<T> {
    /// The profiles' coefficients converted once (the same values a per-point conversion gives).
    pub(crate) fn new(prof: &[CpmlProfile; 3]) -> Self {
        let conv = |v: &[f64]| v.iter().map(|&x| T::from_f64(x)).collect::<Vec<T>>();
        CpmlRows {
            a: std::array::from_fn(|d| conv(&prof[d].a)),
            b: std::array::from_fn(|d| conv(&prof[d].b)),
            active: std::array::from_fn(|d| prof[d].active.clone()),
            x_active: runs(prof[0].active.iter().copied()),
            x_psi: runs(prof[0].a.iter().map(|&a| a != 0.0)),
            has_psi: std::array::from_fn(|d| prof[d].a.iter().map(|&a| a != 0.0).collect()),
        }
    }
}

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
    /// CPML coefficients.
    pub cpml: Option<&'a CpmlRows<T>>,
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
                    *o = self.point(c + i, [i, j, k], *o, zeta.get_mut(i), r, dim);
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
        let layer = self
            .cpml
            .filter(|cp| !cp.x_active.is_empty() || cp.active[1][j] || (THREE && cp.active[2][k]));
        let Some(cp) = layer else {
            return self.fast_r::<R, THREE>(c, out);
        };
        let n = out.len();
        let mut tot = vec![T::zero(); n];
        self.sums::<R, THREE>(c, &mut tot);
        for &(lo, hi) in &cp.x_active {
            let (ca, cb) = (&cp.a[0][lo..hi], &cp.b[0][lo..hi]);
            // SAFETY: i < hi − lo, the length of `ca` and `cb`.
            let coef = |i: usize| unsafe { (*ca.get_unchecked(i), *cb.get_unchecked(i)) };
            self.layer_terms::<R, 0>(c + lo, &mut tot[lo..hi], &mut zeta[lo..hi], coef);
        }
        if cp.active[1][j] {
            let coef = |_: usize| (cp.a[1][j], cp.b[1][j]);
            self.layer_terms::<R, 1>(c, &mut tot, zeta, coef);
        }
        if THREE && cp.active[2][k] {
            let coef = |_: usize| (cp.a[2][k], cp.b[2][k]);
            self.layer_terms::<R, 2>(c, &mut tot, zeta, coef);
        }
        let (centre, c2) = (&self.p[c..c + n], &self.c2dt2[c..c + n]);
        for (i, o) in out.iter_mut().enumerate() {
            *o = flush(centre[i] + centre[i] - *o + c2[i] * tot[i]);
        }
    }

    /// The row without CPML terms in one pass: [`Self::each_sum`]'s sums, written out.
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

    /// The stencil sums of the row at `c` into `tot`.
    #[inline(always)]
    fn sums<const R: usize, const THREE: bool>(&self, c: usize, tot: &mut [T]) {
        let n = tot.len();
        self.each_sum::<R, THREE>(c, n, |i, total| {
            // SAFETY: `each_sum` passes i < n, the length of `tot`.
            unsafe { *tot.get_unchecked_mut(i) = total };
        });
    }

    /// Calls `f(i, sum)` for the `n` points of the row at `c`, in order, with the stencil sum
    /// of every path: the centre, then the x, y and z pairs.
    #[inline(always)]
    fn each_sum<const R: usize, const THREE: bool>(
        &self,
        c: usize,
        n: usize,
        mut f: impl FnMut(usize, T),
    ) {
        let p = self.p;
        let Neighbours { x, y, z } = Neighbours::<T, R>::of::<THREE>(p, c, n, &self.l);
        let [wx, wy, wz] = axis_weights::<T, R>(self.w2);
        let centre = &p[c..c + n];
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
                f(i, total);
            }
        }
    }

    /// Adds axis `A`'s CPML terms to the sums `tot` of the points from padded index `c` on
    /// and updates their ζ (`tot` and `zeta` have one entry per point): `∂ψ`, the axis's `∂²p`
    /// recomputed in the stencil's order, `ζ = b ζ + a (∂²p + ∂ψ)`, `tot + ∂ψ + ζ`. `coef(i)`
    /// is `(a, b)` of point `i`.
    #[inline(always)]
    fn layer_terms<const R: usize, const A: usize>(
        &self,
        c: usize,
        tot: &mut [T],
        zeta: &mut [[T; 3]],
        coef: impl Fn(usize) -> (T, T),
    ) {
        let n = tot.len();
        let s = self.l.stride(A);
        let (p, psi) = (self.p, self.psi);
        let pairs: [(&[T], &[T]); R] = std::array::from_fn(|m| {
            let d = (m + 1) * s;
            (&p[c - d..c - d + n], &p[c + d..c + d + n])
        });
        let psis: [Pair<[T; 3]>; R] = std::array::from_fn(|m| {
            let d = (m + 1) * s;
            (&psi[c - d..c - d + n], &psi[c + d..c + d + n])
        });
        let w2: [T; R] = std::array::from_fn(|m| self.w2[A][m + 1]);
        let w1: [T; R] = std::array::from_fn(|m| self.w1[A][m + 1]);
        let w20 = self.w2[A][0];
        let centre = &p[c..c + n];
        let (tot, zeta) = (&mut tot[..n], &mut zeta[..n]);
        for i in 0..n {
            // SAFETY: every slice above has exactly n elements and i < n.
            unsafe {
                let mut acc = T::zero();
                for m in 0..R {
                    acc =
                        acc + w2[m] * (*pairs[m].0.get_unchecked(i) + *pairs[m].1.get_unchecked(i));
                }
                let mut dpsi = T::zero();
                for m in 0..R {
                    dpsi = dpsi
                        + w1[m] * (psis[m].1.get_unchecked(i)[A] - psis[m].0.get_unchecked(i)[A]);
                }
                // The centre weight of this axis belongs to ∂²p along it.
                let d2a = acc + w20 * *centre.get_unchecked(i);
                let (ca, cb) = coef(i);
                let z = zeta.get_unchecked_mut(i);
                let zn = flush(cb * z[A] + ca * (d2a + dpsi));
                z[A] = zn;
                let t = tot.get_unchecked_mut(i);
                *t = *t + dpsi + zn;
            }
        }
    }

    /// One point, in the order every path sums: the centre, each axis's pairs, then that
    /// axis's CPML terms where the point is in its layer. `r` and `dim` are the layout's.
    fn point(
        &self,
        c: usize,
        pos: [usize; 3],
        old: T,
        z: Option<&mut [T; 3]>,
        r: usize,
        dim: usize,
    ) -> T {
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
        if let (Some(cp), Some(z)) = (self.cpml, z) {
            for a in 0..dim {
                if !cp.active[a][pos[a]] {
                    continue;
                }
                let mut dpsi = T::zero();
                for m in 1..=r {
                    dpsi = dpsi
                        + self.w1[a][m] * (self.psi[c + m * s[a]][a] - self.psi[c - m * s[a]][a]);
                }
                // The centre weight of this axis belongs to ∂²p along it.
                let d2a = d2[a] + self.w2[a][0] * p[c];
                let zn = flush(cp.b[a][pos[a]] * z[a] + cp.a[a][pos[a]] * (d2a + dpsi));
                z[a] = zn;
                total = total + dpsi + zn;
            }
        }
        flush(p[c] + p[c] - old + self.c2dt2[c] * total)
    }

    /// ψ_a = b ψ_a + a ∂_a p on the layer cells of the padded row `out` of ψ whose first
    /// interior point is `c` (grid row `(j, k)`), axis by axis, in the order of the reference's
    /// sums.
    pub(crate) fn psi_row(&self, c: usize, j: usize, k: usize, out: &mut [[T; 3]]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was detected on this CPU.
            return unsafe { self.psi_row_avx2(c, j, k, out) };
        }
        self.psi_dispatch(c, j, k, out)
    }

    /// # Safety
    /// The CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn psi_row_avx2(&self, c: usize, j: usize, k: usize, out: &mut [[T; 3]]) {
        self.psi_dispatch(c, j, k, out)
    }

    #[inline(always)]
    fn psi_dispatch(&self, c: usize, j: usize, k: usize, out: &mut [[T; 3]]) {
        match self.l.r {
            1 => self.psi_r::<1>(c, j, k, out),
            2 => self.psi_r::<2>(c, j, k, out),
            3 => self.psi_r::<3>(c, j, k, out),
            4 => self.psi_r::<4>(c, j, k, out),
            _ => self.psi_r::<0>(c, j, k, out),
        }
    }

    /// `R` = 0 stands for the layout's radius at run time.
    #[inline(always)]
    fn psi_r<const R: usize>(&self, c: usize, j: usize, k: usize, out: &mut [[T; 3]]) {
        let Some(cp) = self.cpml else {
            return;
        };
        let r = self.l.r;
        for &(lo, hi) in &cp.x_psi {
            let (ca, cb) = (&cp.a[0][lo..hi], &cp.b[0][lo..hi]);
            let coef = |i: usize| (ca[i], cb[i]);
            self.psi_axis::<R, 0>(c + lo, &mut out[r + lo..r + hi], coef);
        }
        let n0 = self.l.n[0];
        if cp.has_psi[1][j] {
            self.psi_axis::<R, 1>(c, &mut out[r..r + n0], |_| (cp.a[1][j], cp.b[1][j]));
        }
        if self.l.dim == 3 && cp.has_psi[2][k] {
            self.psi_axis::<R, 2>(c, &mut out[r..r + n0], |_| (cp.a[2][k], cp.b[2][k]));
        }
    }

    #[inline(always)]
    fn psi_axis<const R: usize, const A: usize>(
        &self,
        c: usize,
        out: &mut [[T; 3]],
        coef: impl Fn(usize) -> (T, T),
    ) {
        let n = out.len();
        let (s, p) = (self.l.stride(A), self.p);
        if R == 0 {
            for (i, o) in out.iter_mut().enumerate() {
                let mut d = T::zero();
                for m in 1..=self.l.r {
                    d = d + self.w1[A][m] * (p[c + i + m * s] - p[c + i - m * s]);
                }
                let (ca, cb) = coef(i);
                o[A] = flush(cb * o[A] + ca * d);
            }
            return;
        }
        let pairs: [(&[T], &[T]); R] = std::array::from_fn(|m| {
            let d = (m + 1) * s;
            (&p[c - d..c - d + n], &p[c + d..c + d + n])
        });
        let w1: [T; R] = std::array::from_fn(|m| self.w1[A][m + 1]);
        for (i, o) in out.iter_mut().enumerate() {
            // SAFETY: every slice of `pairs` has exactly n elements and i < n.
            let d = unsafe {
                let mut d = T::zero();
                for m in 0..R {
                    d = d + w1[m] * (*pairs[m].1.get_unchecked(i) - *pairs[m].0.get_unchecked(i));
                }
                d
            };
            let (ca, cb) = coef(i);
            o[A] = flush(cb * o[A] + ca * d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn runs_of_true_values() {
        let on = [true, true, false, false, true, false, true, true, true];
        assert_eq!(runs(on.iter().copied()), vec![(0, 2), (4, 5), (6, 9)]);
        assert!(runs([false; 3].iter().copied()).is_empty());
    }
}
