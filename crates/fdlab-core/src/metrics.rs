//! Error metrics: RMS and MAX error against an analytic answer, and point-by-point comparison
//! of an implementation with the reference.

use crate::grid::{Grid, Region};
use crate::scalar::Scalar;

/// RMS and MAX absolute error over a region, as the published runs print them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ErrorStats {
    /// Root mean square of the errors.
    pub rms: f64,
    /// Largest absolute error (NaN if any value was NaN).
    pub max: f64,
    /// Points compared.
    pub count: usize,
}

/// RMS and MAX of `got - exact(x)` over `region` of `grid`.
pub fn error_vs_fn<T: Scalar>(
    grid: &Grid,
    region: Region,
    got: &[T],
    exact: impl Fn([f64; 3]) -> f64,
) -> ErrorStats {
    let mut sum = 0.0;
    let mut max = 0.0f64;
    let mut count = 0;
    for k in region.lo[2]..region.hi[2] {
        for j in region.lo[1]..region.hi[1] {
            for i in region.lo[0]..region.hi[0] {
                let e = (got[grid.index(i, j, k)].as_f64() - exact(grid.coords(i, j, k))).abs();
                sum += e * e;
                // NaN must not vanish through max().
                max = if e.is_nan() { f64::NAN } else { max.max(e) };
                count += 1;
            }
        }
    }
    ErrorStats {
        rms: (sum / count.max(1) as f64).sqrt(),
        max,
        count,
    }
}

/// The first point where an implementation and the reference disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Grid point `(i, j, k)`.
    pub at: [usize; 3],
    /// The implementation's value.
    pub got: f64,
    /// The reference value.
    pub want: f64,
    /// Allowed absolute difference (0 outside the computed region: there the output must be
    /// left untouched).
    pub tolerance: f64,
    /// How many points disagree in all.
    pub count: usize,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} point(s) differ; first at {:?}: got {:e}, want {:e} (tolerance {:e})",
            self.count, self.at, self.got, self.want, self.tolerance
        )
    }
}

/// Compares `got` with `want` at every point: inside `region` within `T::TOLERANCE · scale`,
/// outside it bit for bit (NaN equals NaN), because points outside are not to be written.
/// NaN inside the region always fails.
pub fn compare<T: Scalar>(
    grid: &Grid,
    region: Region,
    got: &[T],
    want: &[T],
    scale: f64,
) -> Result<(), Mismatch> {
    use rayon::prelude::*;
    let tol = T::TOLERANCE * scale.max(f64::MIN_POSITIVE);
    let [nx, ny, nz] = grid.shape();
    // Planes in parallel (a 512³ comparison is 134 M points); each plane keeps its first
    // mismatch and its count, and the lowest plane's first mismatch is the grid's first.
    let per_plane: Vec<(Option<Mismatch>, usize)> = (0..nz)
        .into_par_iter()
        .map(|k| {
            let mut first: Option<Mismatch> = None;
            let mut count = 0;
            for j in 0..ny {
                for i in 0..nx {
                    let p = grid.index(i, j, k);
                    let (g, w) = (got[p].as_f64(), want[p].as_f64());
                    let (ok, t) = if region.contains(i, j, k) {
                        ((g - w).abs() <= tol, tol)
                    } else {
                        (g == w || (g.is_nan() && w.is_nan()), 0.0)
                    };
                    if !ok {
                        count += 1;
                        first.get_or_insert(Mismatch {
                            at: [i, j, k],
                            got: g,
                            want: w,
                            tolerance: t,
                            count: 0,
                        });
                    }
                }
            }
            (first, count)
        })
        .collect();
    let count: usize = per_plane.iter().map(|(_, c)| c).sum();
    let first = per_plane.into_iter().find_map(|(f, _)| f);
    match first {
        None => Ok(()),
        Some(mut m) => {
            m.count = count;
            Err(m)
        }
    }
}

/// The largest absolute value in `data` (0 for empty data).
pub fn max_abs<T: Scalar>(data: &[T]) -> f64 {
    data.iter().fold(0.0, |m, v| m.max(v.as_f64().abs()))
}
