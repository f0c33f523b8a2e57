//! Material regions: boxes and spheres of dielectric, conductor, perfect conductor or a
//! dispersive medium, painted onto the grid in order (a later region replaces an earlier one in
//! the cells they share).

use super::dispersion::{lorentz_dt_limit, Debye, Lorentz};
use super::drude::{self, Drude};
use super::grid::Grid;
use super::Fdtd;
use crate::error::{Error, Result};
use fdlab_core::Scalar;

/// The cells a material fills.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Cells `lo ..= hi` (inclusive, per axis). A slab or a layer is a box that spans two axes.
    Box {
        /// First cell per axis.
        lo: [usize; 3],
        /// Last cell per axis.
        hi: [usize; 3],
    },
    /// Cells whose centres `(i + ½)·d` lie within `radius` of `center` (physical coordinates);
    /// the whole sphere must lie inside the grid.
    Sphere {
        /// Centre, physical coordinates.
        center: [f64; 3],
        /// Radius, > 0.
        radius: f64,
    },
}

impl Shape {
    /// The first and last cell per axis of the shape's bounding box (clipped to the grid).
    pub fn bounds(&self, grid: &Grid) -> ([usize; 3], [usize; 3]) {
        match *self {
            Shape::Box { lo, hi } => (lo, hi),
            Shape::Sphere { center, radius } => {
                let cell = |a: usize, x: f64| {
                    let i = (x / grid.spacing[a] - 0.5).round().max(0.0) as usize;
                    i.min(grid.n[a] - 1)
                };
                (
                    std::array::from_fn(|a| cell(a, center[a] - radius)),
                    std::array::from_fn(|a| cell(a, center[a] + radius)),
                )
            }
        }
    }

    /// The storage indices of the cells, or why there are none; `what` names the material.
    pub fn cells(&self, grid: &Grid, what: &str) -> Result<Vec<usize>> {
        match *self {
            Shape::Box { lo, hi } => {
                grid.check_cell(lo, &format!("{what} box corner"))?;
                grid.check_cell(hi, &format!("{what} box corner"))?;
                if (0..3).any(|a| lo[a] > hi[a]) {
                    return Err(Error::Invalid(format!(
                        "FDTD {what} box {lo:?}..={hi:?} is empty: give lo <= hi on every axis"
                    )));
                }
                let mut v = Vec::new();
                for k in lo[2]..=hi[2] {
                    for j in lo[1]..=hi[1] {
                        for i in lo[0]..=hi[0] {
                            v.push(grid.index([i, j, k]));
                        }
                    }
                }
                Ok(v)
            }
            Shape::Sphere { center, radius } => sphere_cells(grid, center, radius, what),
        }
    }
}

fn sphere_cells(grid: &Grid, center: [f64; 3], radius: f64, what: &str) -> Result<Vec<usize>> {
    if !(radius.is_finite() && radius > 0.0) || center.iter().any(|x| !x.is_finite()) {
        return Err(Error::Invalid(format!(
            "FDTD {what} sphere at {center:?} with radius {radius}: use a finite centre and a \
             positive finite radius"
        )));
    }
    let ext: [f64; 3] = std::array::from_fn(|a| grid.n[a] as f64 * grid.spacing[a]);
    let tol = 1e-9;
    if (0..3)
        .any(|a| center[a] - radius < -tol * ext[a] || center[a] + radius > ext[a] * (1.0 + tol))
    {
        return Err(Error::Invalid(format!(
            "FDTD {what} sphere at {center:?} with radius {radius} reaches outside the grid \
             0 ..= {ext:?}: move it or make it smaller"
        )));
    }
    // Only the sphere's bounding box of cells needs testing.
    let range = |a: usize| {
        let d = grid.spacing[a];
        let lo = ((center[a] - radius) / d - 0.5).ceil().max(0.0) as usize;
        let hi = ((center[a] + radius) / d - 0.5).floor().max(0.0) as usize;
        lo..=hi.min(grid.n[a] - 1)
    };
    let mut v = Vec::new();
    for k in range(2) {
        for j in range(1) {
            for i in range(0) {
                let r2: f64 = [i, j, k]
                    .iter()
                    .enumerate()
                    .map(|(a, &x)| ((x as f64 + 0.5) * grid.spacing[a] - center[a]).powi(2))
                    .sum();
                if r2 <= radius * radius {
                    v.push(grid.index([i, j, k]));
                }
            }
        }
    }
    if v.is_empty() {
        return Err(Error::Invalid(format!(
            "FDTD {what} sphere at {center:?} with radius {radius} holds no cell centre: make \
             it at least half a cell across"
        )));
    }
    Ok(v)
}

impl<T: Scalar> Fdtd<T> {
    /// Give the cells of `shape` permittivity `eps_r` and conductivity `sigma`, keeping the
    /// rest of the medium. Any Drude, Lorentz, Debye or PEC property of those cells is dropped.
    pub fn fill(&mut self, shape: &Shape, eps_r: f64, sigma: f64) -> Result<()> {
        let cells = shape.cells(&self.grid, "material")?;
        // The cells outside the shape were checked when they were set.
        if !(eps_r.is_finite() && eps_r >= 1.0) {
            return Err(Error::Invalid(format!(
                "FDTD relative permittivity {eps_r}: use finite values >= 1"
            )));
        }
        if !(sigma.is_finite() && sigma >= 0.0) {
            return Err(Error::Invalid(format!(
                "FDTD conductivity {sigma}: use finite values >= 0"
            )));
        }
        for &c in &cells {
            self.eps_r[c] = eps_r;
            self.sigma[c] = sigma;
        }
        self.clear_properties(&cells);
        self.coefficients();
        Ok(())
    }

    /// Make the cells of `shape` perfect conductors: the E components stored in them are held
    /// at zero (a staircase of their surface). Any dispersive term there is dropped.
    pub fn set_pec(&mut self, shape: &Shape) -> Result<()> {
        let cells = shape.cells(&self.grid, "PEC")?;
        let _ = self.clear_properties(&cells);
        for &c in &cells {
            self.pec[c] = true;
        }
        self.coefficients();
        Ok(())
    }

    /// Drop the dispersive and PEC properties of `cells`; whether a PEC flag was dropped
    /// (then `ca`, `cb` must be recomputed).
    fn clear_properties(&mut self, cells: &[usize]) -> bool {
        let mut was_pec = false;
        for &c in cells {
            was_pec |= std::mem::replace(&mut self.pec[c], false);
        }
        if !(self.drude.is_empty() && self.poles.is_empty()) {
            let mut mask = vec![false; self.grid.cells()];
            for &c in cells {
                mask[c] = true;
            }
            self.drude.clear(&mask);
            self.poles.clear(&mask);
        }
        was_pec
    }

    /// Give the cells `lo ..= hi` (inclusive, per axis) permittivity `eps_r` and conductivity
    /// `sigma`: [`Fdtd::fill`] with a [`Shape::Box`].
    pub fn fill_box(
        &mut self,
        lo: [usize; 3],
        hi: [usize; 3],
        eps_r: f64,
        sigma: f64,
    ) -> Result<()> {
        self.fill(&Shape::Box { lo, hi }, eps_r, sigma)
    }

    /// Make the cells of `shape` a Drude medium (see [`Drude`]) on top of the `ε_r` (= ε∞) and
    /// `σ` that [`Fdtd::fill`] gave them; call it after `fill` on the same shape. Refuses a
    /// `dt` above [`super::drude_dt_limit`], which the plasma frequency lowers below the
    /// Courant limit.
    pub fn set_drude_in(&mut self, shape: &Shape, d: Drude) -> Result<()> {
        let cells = shape.cells(&self.grid, "Drude")?;
        d.check()?;
        let limit = drude::dt_limit(&self.grid, d.plasma_frequency);
        if self.dt > limit {
            return Err(Error::Unstable {
                dt: self.dt,
                limit,
                why: format!(
                    "Yee Courant limit with a Drude plasma frequency {}: \
                     1/sqrt(1/dx² + 1/dy² + 1/dz² + ωp²/4); lower the time step (or cfl)",
                    d.plasma_frequency
                ),
            });
        }
        if self.clear_properties(&cells) {
            self.coefficients();
        }
        self.drude.add(&self.grid, &cells, d, self.dt);
        Ok(())
    }

    /// [`Fdtd::set_drude_in`] on the cells `lo ..= hi`.
    pub fn set_drude(&mut self, lo: [usize; 3], hi: [usize; 3], d: Drude) -> Result<()> {
        self.set_drude_in(&Shape::Box { lo, hi }, d)
    }

    /// Make the cells of `shape` a one-pole Lorentz medium (see [`Lorentz`]) on top of the
    /// `ε_r` (= ε∞) and `σ` that [`Fdtd::fill`] gave them, replacing any other dispersion
    /// there; call it after `fill` on the same shape. Refuses a `dt` above
    /// [`lorentz_dt_limit`], which the resonance lowers below the Courant limit.
    pub fn set_lorentz_in(&mut self, shape: &Shape, l: Lorentz) -> Result<()> {
        let cells = shape.cells(&self.grid, "Lorentz")?;
        l.check()?;
        let limit = lorentz_dt_limit(&self.grid, &l);
        if self.dt > limit {
            return Err(Error::Unstable {
                dt: self.dt,
                limit,
                why: format!(
                    "Yee Courant limit with a Lorentz resonance {} and delta_eps {}: \
                     1/sqrt(1/dx² + 1/dy² + 1/dz² + ω0²(1 + Δε)/4); lower the time step (or cfl)",
                    l.resonance_frequency, l.delta_eps
                ),
            });
        }
        if self.clear_properties(&cells) {
            self.coefficients();
        }
        self.poles.add_lorentz(&self.grid, &cells, l, self.dt);
        Ok(())
    }

    /// [`Fdtd::set_lorentz_in`] on the cells `lo ..= hi`.
    pub fn set_lorentz(&mut self, lo: [usize; 3], hi: [usize; 3], l: Lorentz) -> Result<()> {
        self.set_lorentz_in(&Shape::Box { lo, hi }, l)
    }

    /// Make the cells of `shape` a one-pole Debye medium (see [`Debye`]) on top of the `ε_r`
    /// (= ε∞) and `σ` that [`Fdtd::fill`] gave them, replacing any other dispersion there;
    /// call it after `fill` on the same shape. The Courant limit is unchanged.
    pub fn set_debye_in(&mut self, shape: &Shape, d: Debye) -> Result<()> {
        let cells = shape.cells(&self.grid, "Debye")?;
        d.check()?;
        if self.clear_properties(&cells) {
            self.coefficients();
        }
        self.poles.add_debye(&self.grid, &cells, d, self.dt);
        Ok(())
    }

    /// [`Fdtd::set_debye_in`] on the cells `lo ..= hi`.
    pub fn set_debye(&mut self, lo: [usize; 3], hi: [usize; 3], d: Debye) -> Result<()> {
        self.set_debye_in(&Shape::Box { lo, hi }, d)
    }
}
