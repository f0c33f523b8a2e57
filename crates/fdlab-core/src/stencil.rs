//! Stencils: weighted sums of neighbours, with their weights already divided by the spacing.

use crate::error::{Error, Result};
use crate::fornberg::{central_radius, central_weights};
use crate::grid::{Axis, Grid, AXIS_NAMES};

/// One term of a stencil: `weight · u[i + offset]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tap {
    /// Offset `[di, dj, dk]` from the output point.
    pub offset: [i32; 3],
    /// Weight, spacing included.
    pub weight: f64,
}

/// What a stencil computes; strategies use it to pick a kernel shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StencilKind {
    /// `∂^order u / ∂axis^order`, central, of the given accuracy order.
    Derivative {
        /// Axis differentiated along.
        axis: Axis,
        /// Derivative order (1 to 4).
        order: usize,
        /// Accuracy order (even, 2 to 16).
        accuracy: usize,
    },
    /// The Laplacian over every axis of the grid, of the given accuracy order.
    Laplacian {
        /// Accuracy order (even, 2 to 16).
        accuracy: usize,
    },
    /// User-defined weights.
    Custom,
}

/// A linear stencil: `out[p] = Σ w · in[p + offset]`.
///
/// ```
/// use fdlab_core::{Axis, Grid, Stencil};
/// let g = Grid::unit(&[64, 64, 64]).unwrap();
/// let d = Stencil::derivative(&g, Axis::X, 1, 8).unwrap();
/// assert_eq!(d.taps().len(), 8); // the centre weight is zero and is dropped
/// assert_eq!(d.radius(), [4, 0, 0]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Stencil {
    kind: StencilKind,
    taps: Vec<Tap>,
}

/// Refuses weights that the spacing scaling made infinite or zero (a 4th derivative with
/// spacing 1e-100 divides by 1e-400, which is 0 in `f64`; a 2nd with 1e300 by infinity):
/// such a stencil would return inf, NaN or 0 everywhere without an error.
fn check_scaled(taps: &[Tap], spacing: &[f64], order: usize) -> Result<()> {
    match taps
        .iter()
        .find(|t| !t.weight.is_finite() || t.weight == 0.0)
    {
        None => Ok(()),
        Some(t) => Err(Error::Stencil {
            detail: format!(
                "weight {} at offset {:?}: spacing {spacing:?} to the power {order} is out of \
                 the range of f64; rescale the grid (e.g. to unit spacing) and scale the result",
                t.weight, t.offset
            ),
        }),
    }
}

impl Stencil {
    /// Central derivative of `order` along `axis` with `accuracy`, scaled by the grid spacing.
    pub fn derivative(grid: &Grid, axis: Axis, order: usize, accuracy: usize) -> Result<Stencil> {
        let a = axis.index();
        if a >= grid.dim() {
            return Err(Error::Stencil {
                detail: format!(
                    "a derivative along {} needs a grid with {} axes, this one has {}",
                    axis.name(),
                    a + 1,
                    grid.dim()
                ),
            });
        }
        let w = central_weights(order, accuracy)?;
        let r = central_radius(order, accuracy) as i32;
        let scale = grid.spacing()[a].powi(order as i32);
        let taps = (-r..=r)
            .zip(w)
            .filter(|(_, w)| *w != 0.0)
            .map(|(o, w)| {
                let mut offset = [0; 3];
                offset[a] = o;
                Tap {
                    offset,
                    weight: w / scale,
                }
            })
            .collect::<Vec<_>>();
        check_scaled(&taps, &grid.spacing()[a..=a], order)?;
        Ok(Stencil {
            kind: StencilKind::Derivative {
                axis,
                order,
                accuracy,
            },
            taps,
        })
    }

    /// The Laplacian `Σ_a ∂²u/∂a²` over every axis of `grid`, with `accuracy`; the centre
    /// weights of the axes are merged into one tap.
    pub fn laplacian(grid: &Grid, accuracy: usize) -> Result<Stencil> {
        let w = central_weights(2, accuracy)?;
        let r = central_radius(2, accuracy) as i32;
        let h = grid.spacing();
        let mut centre = 0.0;
        let mut taps = vec![];
        for a in 0..grid.dim() {
            let h2 = h[a] * h[a];
            for (o, w) in (-r..=r).zip(&w) {
                if o == 0 {
                    centre += w / h2;
                } else {
                    let mut offset = [0; 3];
                    offset[a] = o;
                    taps.push(Tap {
                        offset,
                        weight: w / h2,
                    });
                }
            }
        }
        taps.insert(
            0,
            Tap {
                offset: [0; 3],
                weight: centre,
            },
        );
        check_scaled(&taps, &h[..grid.dim()], 2)?;
        Ok(Stencil {
            kind: StencilKind::Laplacian { accuracy },
            taps,
        })
    }

    /// The first derivatives along every axis of `grid` (a gradient), one stencil per axis.
    pub fn gradient(grid: &Grid, accuracy: usize) -> Result<Vec<Stencil>> {
        (0..grid.dim())
            .map(|a| Stencil::derivative(grid, Axis::ALL[a], 1, accuracy))
            .collect()
    }

    /// User-defined weights, used as given (no spacing applied). Offsets must be distinct and
    /// weights finite and non-zero.
    pub fn custom(taps: &[([i32; 3], f64)]) -> Result<Stencil> {
        if taps.is_empty() {
            return Err(Error::Stencil {
                detail: "a custom stencil needs at least one (offset, weight) pair".into(),
            });
        }
        for (n, (o, w)) in taps.iter().enumerate() {
            if !w.is_finite() || *w == 0.0 {
                return Err(Error::Stencil {
                    detail: format!(
                        "weight {w} at offset {o:?} is not a finite non-zero number; give \
                         finite weights and leave out zero taps"
                    ),
                });
            }
            if o.iter().any(|c| c.unsigned_abs() > 64) {
                return Err(Error::Stencil {
                    detail: format!(
                        "offset {o:?} reaches more than 64 points; use smaller offsets"
                    ),
                });
            }
            if taps[..n].iter().any(|(p, _)| p == o) {
                return Err(Error::Stencil {
                    detail: format!("offset {o:?} appears twice; give each offset once"),
                });
            }
        }
        Ok(Stencil {
            kind: StencilKind::Custom,
            taps: taps
                .iter()
                .map(|&(offset, weight)| Tap { offset, weight })
                .collect(),
        })
    }

    /// What the stencil computes.
    pub fn kind(&self) -> StencilKind {
        self.kind
    }

    /// The terms, in the order every executor sums them.
    pub fn taps(&self) -> &[Tap] {
        &self.taps
    }

    /// How far the stencil reaches below the output point on each axis.
    pub fn reach_below(&self) -> [usize; 3] {
        let mut r = [0; 3];
        for t in &self.taps {
            for (a, ra) in r.iter_mut().enumerate() {
                *ra = (*ra).max((-t.offset[a]).max(0) as usize);
            }
        }
        r
    }

    /// How far the stencil reaches above the output point on each axis.
    pub fn reach_above(&self) -> [usize; 3] {
        let mut r = [0; 3];
        for t in &self.taps {
            for (a, ra) in r.iter_mut().enumerate() {
                *ra = (*ra).max(t.offset[a].max(0) as usize);
            }
        }
        r
    }

    /// The larger of the reaches below and above, per axis.
    pub fn radius(&self) -> [usize; 3] {
        let (b, a) = (self.reach_below(), self.reach_above());
        [b[0].max(a[0]), b[1].max(a[1]), b[2].max(a[2])]
    }

    /// `Σ |w|`: the gain bound used to scale comparison tolerances.
    pub fn abs_sum(&self) -> f64 {
        self.taps.iter().map(|t| t.weight.abs()).sum()
    }

    /// The single axis all taps lie on, if there is one (derivatives, 1-D custom stencils).
    pub fn single_axis(&self) -> Option<Axis> {
        let mut axis = None;
        for t in &self.taps {
            for (a, &o) in t.offset.iter().enumerate() {
                if o != 0 {
                    match axis {
                        None => axis = Some(a),
                        Some(b) if b != a => return None,
                        _ => {}
                    }
                }
            }
        }
        Some(Axis::ALL[axis.unwrap_or(0)])
    }

    /// A short label, e.g. `d1x/8`, `lap/2`, `custom(5)`.
    pub fn label(&self) -> String {
        match self.kind {
            StencilKind::Derivative {
                axis,
                order,
                accuracy,
            } => format!("d{order}{}/{accuracy}", axis.name()),
            StencilKind::Laplacian { accuracy } => format!("lap/{accuracy}"),
            StencilKind::Custom => format!("custom({})", self.taps.len()),
        }
    }

    /// Checks that the stencil's axes exist in `grid`.
    pub fn check_axes(&self, grid: &Grid) -> Result<()> {
        let r = self.radius();
        for (a, &ra) in r.iter().enumerate().skip(grid.dim()) {
            if ra > 0 {
                return Err(Error::Stencil {
                    detail: format!(
                        "the stencil reaches along {} but the grid has {} axes; use a {}-D grid",
                        AXIS_NAMES[a],
                        grid.dim(),
                        a + 1
                    ),
                });
            }
        }
        Ok(())
    }
}
