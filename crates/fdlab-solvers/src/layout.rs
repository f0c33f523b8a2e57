//! Padded field layout shared by the CPU steppers: a halo of the stencil radius on every used
//! axis, so that the fused loops read neighbours without bounds tests. Boundaries are halo
//! filling: periodic halos are copied from the far side, the others stay zero.

use fdlab_core::Scalar;
use rayon::prelude::*;

/// Sizes, halo and strides of a padded 2-D or 3-D field; point `(i, j, k)` of the grid lives
/// at `(i + r) + px·((j + r) + py·(k + rz))`, with `rz = r` in 3-D and 0 in 2-D.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Grid sizes `[nx, ny, nz]` (nz = 1 in 2-D).
    pub n: [usize; 3],
    /// Number of axes (2 or 3).
    pub dim: usize,
    /// Halo width (the stencil radius).
    pub r: usize,
    /// Padded sizes.
    pub p: [usize; 3],
}

impl Layout {
    /// The layout of a grid of `n` points with `dim` axes and halo `r`.
    pub fn new(n: [usize; 3], dim: usize, r: usize) -> Layout {
        let mut p = [1; 3];
        for a in 0..3 {
            p[a] = if a < dim { n[a] + 2 * r } else { 1 };
        }
        Layout { n, dim, r, p }
    }

    /// Halo along axis `a` (0 on unused axes).
    pub fn halo(&self, a: usize) -> usize {
        if a < self.dim {
            self.r
        } else {
            0
        }
    }

    /// Padded length.
    pub fn len(&self) -> usize {
        self.p[0] * self.p[1] * self.p[2]
    }

    /// Always false.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Number of grid points.
    pub fn cells(&self) -> usize {
        self.n[0] * self.n[1] * self.n[2]
    }

    /// Stride of axis `a` in the padded array.
    pub fn stride(&self, a: usize) -> usize {
        match a {
            0 => 1,
            1 => self.p[0],
            _ => self.p[0] * self.p[1],
        }
    }

    /// Padded index of grid point `(i, j, k)`.
    #[inline]
    pub fn idx(&self, i: usize, j: usize, k: usize) -> usize {
        (i + self.r) + self.p[0] * ((j + self.halo(1)) + self.p[1] * (k + self.halo(2)))
    }

    /// Grid point of padded row `row` (an index over `p[1]·p[2]` rows), or `None` for a halo row.
    #[inline]
    pub fn row_point(&self, row: usize) -> Option<(usize, usize)> {
        let (jp, kp) = (row % self.p[1], row / self.p[1]);
        let (hj, hk) = (self.halo(1), self.halo(2));
        if jp < hj || jp >= hj + self.n[1] || kp < hk || kp >= hk + self.n[2] {
            None
        } else {
            Some((jp - hj, kp - hk))
        }
    }

    /// Grid point of a padded index.
    pub fn point(&self, idx: usize) -> [usize; 3] {
        let i = idx % self.p[0];
        let j = (idx / self.p[0]) % self.p[1];
        let k = idx / (self.p[0] * self.p[1]);
        [
            i.saturating_sub(self.r),
            j.saturating_sub(self.halo(1)),
            k.saturating_sub(self.halo(2)),
        ]
    }

    /// Copy an unpadded array (x fastest) into a new padded one with zero halos.
    pub fn pad<T: Scalar>(&self, data: &[f64]) -> Vec<T> {
        let mut out = vec![T::zero(); self.len()];
        let (r, nx) = (self.r, self.n[0]);
        // Padded rows in parallel (a large grid's pages are first touched here too).
        out.par_chunks_mut(self.p[0])
            .with_min_len(16)
            .enumerate()
            .for_each(|(row, dst)| {
                if let Some((j, k)) = self.row_point(row) {
                    let src = &data[nx * (j + self.n[1] * k)..][..nx];
                    for (d, &s) in dst[r..r + nx].iter_mut().zip(src) {
                        *d = T::from_f64(s);
                    }
                }
            });
        out
    }

    /// The grid points of a padded array, as f64, x fastest.
    pub fn unpad<T: Scalar>(&self, data: &[T]) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.cells());
        for k in 0..self.n[2] {
            for j in 0..self.n[1] {
                let src = self.idx(0, j, k);
                out.extend(data[src..src + self.n[0]].iter().map(|v| v.as_f64()));
            }
        }
        out
    }

    /// A copy of a padded array (`data`, one `V` per point) with every halo point set to
    /// `zero`: what a checkpoint stores. Halos carry no state of their own (they are refilled
    /// from the interior, or are a boundary's zeros), so a state saved this way is the same
    /// whichever way it was stepped, and a split run writes it from its blocks alone.
    pub fn zero_halos<V: Copy>(&self, data: &[V], zero: V) -> Vec<V> {
        let mut out = vec![zero; data.len()];
        for k in 0..self.n[2] {
            for j in 0..self.n[1] {
                let at = self.idx(0, j, k);
                out[at..at + self.n[0]].copy_from_slice(&data[at..at + self.n[0]]);
            }
        }
        out
    }

    /// Fill the halos periodically (axis by axis, so edges and corners are right too).
    pub fn fill_periodic<T: Copy>(&self, u: &mut [T]) {
        let r = self.r;
        for a in 0..self.dim {
            let s = self.stride(a);
            let n = self.n[a];
            let (o1, o2) = match a {
                0 => (1, 2),
                1 => (0, 2),
                _ => (0, 1),
            };
            for y in 0..self.p[o2] {
                for x in 0..self.p[o1] {
                    let base = x * self.stride(o1) + y * self.stride(o2);
                    for h in 0..r {
                        u[base + h * s] = u[base + (h + n) * s];
                        u[base + (r + n + h) * s] = u[base + (r + h) * s];
                    }
                }
            }
        }
    }
}

/// Fills the halos of a padded field before each step, in place of the stepper's own boundary:
/// what a domain decomposition plugs in so that a subdomain's halos come from its neighbours.
///
/// A stepper with one calls it on the field its stencil reads, once before every step; the
/// setup's own boundary (periodic images or zeros) is then not applied.
pub trait HaloFill<T>: Send {
    /// Fill every halo point of `u` (laid out as `layout`) that the stencil may read.
    fn fill(&mut self, layout: &Layout, u: &mut [T]) -> crate::error::Result<()>;
}

/// Serialize a padded array as little-endian f64 (exact for f32 and f64).
pub fn to_bytes<T: Scalar>(data: &[T]) -> Vec<u8> {
    data.iter().flat_map(|v| v.as_f64().to_le_bytes()).collect()
}

/// Read back what [`to_bytes`] wrote; `None` when the length does not match.
pub fn from_bytes<T: Scalar>(bytes: &[u8], len: usize) -> Option<Vec<T>> {
    if bytes.len() != len * 8 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                T::from_f64(f64::from_le_bytes(b))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pad_unpad_round_trip_and_periodic_halo() {
        let l = Layout::new([5, 4, 3], 3, 2);
        let data: Vec<f64> = (0..60).map(|v| v as f64).collect();
        let mut u: Vec<f64> = l.pad(&data);
        assert_eq!(l.unpad(&u), data);
        l.fill_periodic(&mut u);
        // Neighbour -1 of (0, 1, 2) along x is (4, 1, 2); along z of (1, 1, 0) is (1, 1, 2).
        assert_eq!(u[l.idx(0, 1, 2) - 1], data[4 + 5 * (1 + 4 * 2)]);
        assert_eq!(u[l.idx(1, 1, 0) - l.stride(2)], data[1 + 5 * (1 + 4 * 2)]);
        // A corner: (-1, -1, -1) is (4, 3, 2).
        let c = l.idx(0, 0, 0) - 1 - l.stride(1) - l.stride(2);
        assert_eq!(u[c], data[4 + 5 * (3 + 4 * 2)]);
        assert_eq!(l.point(l.idx(3, 2, 1)), [3, 2, 1]);
    }
}
