//! Analytic test functions that are products of one function per axis, so that fields of a
//! billion points are filled and checked in parallel in seconds.

use fdlab_core::{ErrorStats, Field, Grid, Region, Scalar};
use rayon::prelude::*;
use std::f64::consts::PI;

/// `scale · f[0][i] · f[1][j] · f[2][k]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Separable {
    /// One factor per axis, sampled at the grid points.
    pub f: [Vec<f64>; 3],
    /// Constant factor.
    pub scale: f64,
}

/// A factor along one axis, sampled at `(i − shift)·h` for `i` in `0..n`.
pub fn sample(n: usize, h: f64, shift: f64, g: impl Fn(f64) -> f64) -> Vec<f64> {
    (0..n).map(|i| g((i as f64 - shift) * h)).collect()
}

impl Separable {
    /// Value at `(i, j, k)`.
    #[inline]
    pub fn at(&self, i: usize, j: usize, k: usize) -> f64 {
        self.scale * self.f[0][i] * self.f[1][j] * self.f[2][k]
    }

    /// The function sampled on `grid`, filled plane by plane in parallel.
    pub fn field<T: Scalar>(&self, grid: &Grid) -> Field<T> {
        let [nx, ny, _] = grid.shape();
        let mut data = vec![T::zero(); grid.len()];
        data.par_chunks_mut(nx * ny)
            .enumerate()
            .for_each(|(k, plane)| {
                for j in 0..ny {
                    for i in 0..nx {
                        plane[i + nx * j] = T::from_f64(self.at(i, j, k));
                    }
                }
            });
        Field::from_vec(grid, data).expect("length matches the grid")
    }

    /// RMS and MAX of `got − self` over `region`, in parallel.
    pub fn errors<T: Scalar>(&self, grid: &Grid, region: Region, got: &[T]) -> ErrorStats {
        let [nx, ny, _] = grid.shape();
        let (sum, max, count) = (region.lo[2]..region.hi[2])
            .into_par_iter()
            .map(|k| {
                let (mut s, mut m, mut c) = (0.0f64, 0.0f64, 0usize);
                for j in region.lo[1]..region.hi[1] {
                    for i in region.lo[0]..region.hi[0] {
                        let e = (got[i + nx * (j + ny * k)].as_f64() - self.at(i, j, k)).abs();
                        s += e * e;
                        m = if e.is_nan() || m.is_nan() {
                            f64::NAN
                        } else {
                            m.max(e)
                        };
                        c += 1;
                    }
                }
                (s, m, c)
            })
            .reduce(
                || (0.0, 0.0, 0),
                |a, b| {
                    let m = if a.1.is_nan() || b.1.is_nan() {
                        f64::NAN
                    } else {
                        a.1.max(b.1)
                    };
                    (a.0 + b.0, m, a.2 + b.2)
                },
            );
        ErrorStats {
            rms: (sum / count.max(1) as f64).sqrt(),
            max,
            count,
        }
    }
}

/// The factor 1 along every point of an axis.
pub fn ones(n: usize) -> Vec<f64> {
    vec![1.0; n]
}

/// `cos(2π x_a)` on axis `a` (and 1 elsewhere) with its first derivative `−2π sin(2π x_a)`.
/// `shift` is 1 for NVIDIA's grid, whose first point is at `−h`.
pub fn cosine_along(grid: &Grid, a: usize, shift: f64) -> (Separable, Separable) {
    let shape = grid.shape();
    let h = grid.spacing()[a];
    let mut f: [Vec<f64>; 3] = [ones(shape[0]), ones(shape[1]), ones(shape[2])];
    let mut d = f.clone();
    f[a] = sample(shape[a], h, shift, |x| (2.0 * PI * x).cos());
    d[a] = sample(shape[a], h, shift, |x| (2.0 * PI * x).sin());
    (
        Separable { f, scale: 1.0 },
        Separable {
            f: d,
            scale: -2.0 * PI,
        },
    )
}

/// `Π sin(κ x_a)` over the grid's axes with its Laplacian `−dim·κ² Π sin(κ x_a)`.
pub fn sine_product(grid: &Grid, kappa: f64) -> (Separable, Separable) {
    let shape = grid.shape();
    let h = grid.spacing();
    let mut f: [Vec<f64>; 3] = [ones(shape[0]), ones(shape[1]), ones(shape[2])];
    for a in 0..grid.dim() {
        f[a] = sample(shape[a], h[a], 0.0, |x| (kappa * x).sin());
    }
    (
        Separable {
            f: f.clone(),
            scale: 1.0,
        },
        Separable {
            f,
            scale: -(grid.dim() as f64) * kappa * kappa,
        },
    )
}

/// `Π sin(2π x_a)` and its gradient, one [`Separable`] per axis.
pub fn sine_gradient(grid: &Grid) -> (Separable, Vec<Separable>) {
    let (f, _) = sine_product(grid, 2.0 * PI);
    let shape = grid.shape();
    let h = grid.spacing();
    let grads = (0..grid.dim())
        .map(|a| {
            let mut g = f.clone();
            g.f[a] = sample(shape[a], h[a], 0.0, |x| (2.0 * PI * x).cos());
            g.scale = 2.0 * PI;
            g
        })
        .collect();
    (f, grads)
}
