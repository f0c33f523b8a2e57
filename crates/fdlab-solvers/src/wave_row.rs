//! One row of the fused wave step, `p⁺ = 2p − p⁻ + c²Δt² (Δp + CPML terms)`.
//!
//! Points outside every CPML layer (all of them without a CPML) go through a single
//! vectorised pass with the radius and the number of axes as compile-time constants (and an
//! AVX2 build picked at run time); points in a layer go through [`WaveRow::point`], which also
//! updates their ζ memory variables. Both sum in the same order, so a point gets the same bits
//! either way.

use crate::layout::Layout;
use crate::physics::CpmlProfile;
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
        let l = self.l;
        let (px, py) = (l.p[0], l.p[1]);
        let j = (c / px) % py - l.halo(1);
        let k = c / (px * py) - l.halo(2);
        let (lo, hi) = match self.cpml {
            Some(prof) if prof[1].active[j] || prof[2].active[k] => (0, 0),
            _ => self.x_inner,
        };
        for i in (0..lo).chain(hi..out.len()) {
            out[i] = self.point(c + i, [i, j, k], out[i], &mut zeta[i]);
        }
        if lo < hi {
            self.fast(c + lo, &mut out[lo..hi]);
        }
    }

    /// One point, in the order every path sums: the centre, each axis's pairs, then that
    /// axis's CPML terms where the point is in its layer.
    fn point(&self, c: usize, pos: [usize; 3], old: T, z: &mut [T; 3]) -> T {
        let (l, p) = (self.l, self.p);
        let s = [1, l.stride(1), l.stride(2)];
        let mut total = self.w0 * p[c];
        let mut d2 = [T::zero(); 3];
        for a in 0..l.dim {
            let mut acc = T::zero();
            for m in 1..=l.r {
                acc = acc + self.w2[a][m] * (p[c - m * s[a]] + p[c + m * s[a]]);
            }
            d2[a] = acc;
            total = total + acc;
        }
        if let Some(prof) = self.cpml {
            for a in 0..l.dim {
                let pr = &prof[a];
                if !pr.active[pos[a]] {
                    continue;
                }
                let mut dpsi = T::zero();
                for m in 1..=l.r {
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

    /// Points `c..c + out.len()`, none in a CPML layer.
    fn fast(&self, c: usize, out: &mut [T]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was detected on this CPU.
            return unsafe { self.fast_avx2(c, out) };
        }
        self.fast_dispatch(c, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn fast_avx2(&self, c: usize, out: &mut [T]) {
        self.fast_dispatch(c, out)
    }

    #[inline(always)]
    fn fast_dispatch(&self, c: usize, out: &mut [T]) {
        match (self.l.r, self.l.dim == 3) {
            (1, true) => self.fast_r::<1, true>(c, out),
            (2, true) => self.fast_r::<2, true>(c, out),
            (3, true) => self.fast_r::<3, true>(c, out),
            (4, true) => self.fast_r::<4, true>(c, out),
            (1, false) => self.fast_r::<1, false>(c, out),
            (2, false) => self.fast_r::<2, false>(c, out),
            (3, false) => self.fast_r::<3, false>(c, out),
            (4, false) => self.fast_r::<4, false>(c, out),
            _ => self.fast_any(c, out),
        }
    }

    /// Any radius (the wave's orders stop at 8, so this is only a safety net).
    fn fast_any(&self, c: usize, out: &mut [T]) {
        let (l, p) = (self.l, self.p);
        for (i, o) in out.iter_mut().enumerate() {
            let q = c + i;
            let mut total = self.w0 * p[q];
            for a in 0..l.dim {
                let s = l.stride(a);
                let mut acc = T::zero();
                for m in 1..=l.r {
                    acc = acc + self.w2[a][m] * (p[q - m * s] + p[q + m * s]);
                }
                total = total + acc;
            }
            *o = flush(p[q] + p[q] - *o + self.c2dt2[q] * total);
        }
    }

    #[inline(always)]
    fn fast_r<const R: usize, const THREE: bool>(&self, c: usize, out: &mut [T]) {
        let n = out.len();
        let p = self.p;
        let (s1, s2) = (self.l.stride(1), self.l.stride(2));
        let pair = |s: usize| (&p[c - s..c - s + n], &p[c + s..c + s + n]);
        let x: [(&[T], &[T]); R] = std::array::from_fn(|m| pair(m + 1));
        let y: [(&[T], &[T]); R] = std::array::from_fn(|m| pair((m + 1) * s1));
        let z: [(&[T], &[T]); R] =
            std::array::from_fn(|m| if THREE { pair((m + 1) * s2) } else { x[m] });
        let wx: [T; R] = std::array::from_fn(|m| self.w2[0][m + 1]);
        let wy: [T; R] = std::array::from_fn(|m| self.w2[1][m + 1]);
        let wz: [T; R] = std::array::from_fn(|m| self.w2[2][m + 1]);
        let centre = &p[c..c + n];
        let c2 = &self.c2dt2[c..c + n];
        #[cfg(target_arch = "x86_64")]
        {
            // The leading plane (3-D) or row (2-D) comes from memory: ask for it 8 rows
            // ahead, as the heat step does.
            let lead = if THREE { R * s2 + 8 * s1 } else { (R + 8) * s1 };
            let end = (c + lead + n).min(p.len());
            let mut q = c + lead;
            while q < end {
                // SAFETY: the address of an element of `p`; a prefetch reads nothing.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        p.as_ptr().add(q).cast(),
                    )
                };
                q += 64 / std::mem::size_of::<T>();
            }
        }
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
