//! Structured grids: 1 to 3 axes, x contiguous, per-axis spacing.

use crate::error::{Error, Result};

/// Largest number of points fdlab accepts in one grid (2^40, 8 TiB of `f64`): anything larger is
/// surely a typo.
pub const MAX_POINTS: usize = 1 << 40;

/// Axis names, in storage order.
pub const AXIS_NAMES: [char; 3] = ['x', 'y', 'z'];

/// A grid axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Axis {
    /// The contiguous axis.
    X = 0,
    /// Stride `nx`.
    Y = 1,
    /// Stride `nx·ny`.
    Z = 2,
}

impl Axis {
    /// All three axes.
    pub const ALL: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

    /// 0, 1 or 2.
    pub fn index(self) -> usize {
        self as usize
    }

    /// `'x'`, `'y'` or `'z'`.
    pub fn name(self) -> char {
        AXIS_NAMES[self.index()]
    }

    /// The axis with index 0, 1 or 2.
    pub fn from_index(i: usize) -> Option<Axis> {
        Axis::ALL.get(i).copied()
    }
}

impl std::str::FromStr for Axis {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "x" | "X" => Ok(Axis::X),
            "y" | "Y" => Ok(Axis::Y),
            "z" | "Z" => Ok(Axis::Z),
            _ => Err(Error::Unknown {
                kind: "axis",
                name: s.into(),
                valid: vec!["x".into(), "y".into(), "z".into()],
            }),
        }
    }
}

/// A structured grid of 1, 2 or 3 dimensions.
///
/// Point `(i, j, k)` is stored at `i + nx·(j + ny·k)`; unused axes have size 1. Coordinates are
/// `origin + index·spacing` with origin 0.
///
/// ```
/// let g = fdlab_core::Grid::new(&[64, 64, 64], &[1.0 / 64.0; 3]).unwrap();
/// assert_eq!(g.len(), 64 * 64 * 64);
/// assert_eq!(g.index(1, 2, 3), 1 + 64 * (2 + 64 * 3));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    dim: usize,
    shape: [usize; 3],
    spacing: [f64; 3],
}

impl Grid {
    /// A grid with `shape.len()` axes (1 to 3) and one spacing per axis.
    pub fn new(shape: &[usize], spacing: &[f64]) -> Result<Grid> {
        let dim = shape.len();
        if !(1..=3).contains(&dim) {
            return Err(Error::Size {
                detail: format!("a grid has 1, 2 or 3 axes, got {dim}; give nx, ny and nz"),
            });
        }
        if spacing.len() != dim {
            return Err(Error::Shape {
                expected: vec![dim],
                got: vec![spacing.len()],
            });
        }
        let mut full = [1usize; 3];
        let mut h = [1.0f64; 3];
        let mut total: usize = 1;
        for a in 0..dim {
            if shape[a] == 0 {
                return Err(Error::Size {
                    detail: format!(
                        "axis {} has 0 points; every axis needs at least 1",
                        AXIS_NAMES[a]
                    ),
                });
            }
            total = total.saturating_mul(shape[a]);
            if !(spacing[a].is_finite() && spacing[a] > 0.0) {
                return Err(Error::Spacing {
                    axis: AXIS_NAMES[a],
                    value: spacing[a],
                });
            }
            full[a] = shape[a];
            h[a] = spacing[a];
        }
        if total > MAX_POINTS {
            return Err(Error::Size {
                detail: format!(
                    "{shape:?} is more than {MAX_POINTS} points; choose a smaller grid"
                ),
            });
        }
        Ok(Grid {
            dim,
            shape: full,
            spacing: h,
        })
    }

    /// A grid on the unit interval/square/cube, periodic convention: spacing `1/n` per axis.
    pub fn unit(shape: &[usize]) -> Result<Grid> {
        let h: Vec<f64> = shape.iter().map(|&n| 1.0 / n.max(1) as f64).collect();
        Grid::new(shape, &h)
    }

    /// Number of axes (1, 2 or 3).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// `[nx, ny, nz]`, unused axes 1.
    pub fn shape(&self) -> [usize; 3] {
        self.shape
    }

    /// The sizes of the used axes only.
    pub fn dims(&self) -> &[usize] {
        &self.shape[..self.dim]
    }

    /// `[dx, dy, dz]`, unused axes 1.
    pub fn spacing(&self) -> [f64; 3] {
        self.spacing
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Always false: a grid has at least one point.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Linear index of point `(i, j, k)`.
    #[inline]
    pub fn index(&self, i: usize, j: usize, k: usize) -> usize {
        i + self.shape[0] * (j + self.shape[1] * k)
    }

    /// Coordinates of point `(i, j, k)`.
    pub fn coords(&self, i: usize, j: usize, k: usize) -> [f64; 3] {
        [
            i as f64 * self.spacing[0],
            j as f64 * self.spacing[1],
            k as f64 * self.spacing[2],
        ]
    }

    /// Same grid, other spacing.
    pub fn with_spacing(&self, spacing: &[f64]) -> Result<Grid> {
        Grid::new(self.dims(), spacing)
    }
}

/// A box of grid points `lo[a] <= idx[a] < hi[a]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Inclusive lower corner.
    pub lo: [usize; 3],
    /// Exclusive upper corner.
    pub hi: [usize; 3],
}

impl Region {
    /// The whole grid.
    pub fn all(grid: &Grid) -> Region {
        Region {
            lo: [0; 3],
            hi: grid.shape(),
        }
    }

    /// Whether `(i, j, k)` is inside.
    #[inline]
    pub fn contains(&self, i: usize, j: usize, k: usize) -> bool {
        let p = [i, j, k];
        (0..3).all(|a| self.lo[a] <= p[a] && p[a] < self.hi[a])
    }

    /// Number of points inside.
    pub fn len(&self) -> usize {
        (0..3)
            .map(|a| self.hi[a].saturating_sub(self.lo[a]))
            .product()
    }

    /// Whether no point is inside.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
