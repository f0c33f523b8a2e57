//! The parameters of a CPML on one axis, their checks, and the graded profile they define:
//! `σ`, `κ` and `α` at a depth into the layer, turned into the update's coefficients
//! (the layers themselves are in [`super::cpml`]).

use crate::error::{Error, Result};

const AXES: [&str; 3] = ["x", "y", "z"];

/// The parameters of a CPML on one axis ([`super::Boundary::Cpml`]); [`super::Grid::new`]
/// checks them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cpml {
    /// Layer cells at each end of the axis (at least 4 and at least `order + 2`, fewer than
    /// half the axis).
    pub thickness: usize,
    /// Polynomial grading order `m` of `σ` and `κ`, 1 to 6 (default 3).
    pub order: u32,
    /// `κ` at the wall, ≥ 1 (default 1: no coordinate stretching, which is all a wave
    /// arriving near normal incidence needs).
    pub kappa_max: f64,
    /// `α` at the interface, ≥ 0, in inverse time units (default 0.05). Keep it well below
    /// the lowest angular frequency of interest: components with `ω ≲ α` are absorbed less
    /// near the interface, so more of them comes back from the wall.
    pub alpha_max: f64,
}

impl Cpml {
    /// A layer of `thickness` cells with the default grading (order 3, `κ_max = 1`,
    /// `α_max = 0.05`).
    pub fn new(thickness: usize) -> Self {
        Cpml {
            thickness,
            order: 3,
            kappa_max: 1.0,
            alpha_max: 0.05,
        }
    }

    /// Refuse parameters out of range on an axis of `n` cells; `axis` names it.
    pub(crate) fn check(&self, axis: usize, n: usize) -> Result<()> {
        let name = AXES[axis];
        let t = self.thickness;
        if t < 4 || 2 * t >= n {
            return Err(Error::Invalid(format!(
                "FDTD CPML thickness along {name} is {t} cells: use at least 4 and fewer than \
                 half the axis ({n} cells, so at most {})",
                n.saturating_sub(1) / 2
            )));
        }
        if !(1..=6).contains(&self.order) {
            return Err(Error::Invalid(format!(
                "FDTD CPML grading order along {name} is {}: use 1 to 6 (3 is usual)",
                self.order
            )));
        }
        // On fewer cells a steep profile jumps from nearly 0 to σ_max within the last ones and
        // reflects from its own grading: at 60° incidence, 4 cells of order 6 return −23 dB,
        // while every order on order + 2 cells (and at least 4) stays below −34 dB
        // (docs/fdtd.md#cpml).
        if t < self.order as usize + 2 {
            return Err(Error::Invalid(format!(
                "FDTD CPML along {name} is thinner than its grading: {t} cells cannot grade σ \
                 and κ with order {}; use at least order + 2 = {} cells or a lower order",
                self.order,
                self.order + 2
            )));
        }
        if !(self.kappa_max.is_finite() && self.kappa_max >= 1.0) {
            return Err(Error::Invalid(format!(
                "FDTD CPML kappa_max along {name} is {}: use a finite value >= 1",
                self.kappa_max
            )));
        }
        if !(self.alpha_max.is_finite() && self.alpha_max >= 0.0) {
            return Err(Error::Invalid(format!(
                "FDTD CPML alpha_max along {name} is {}: use a finite value >= 0",
                self.alpha_max
            )));
        }
        Ok(())
    }

    /// `(1/κ − 1, b, c)` at depth `rho` (in cells, clipped to the layer) with cell size `d`.
    pub(super) fn coefficients(&self, rho: f64, d: f64, dt: f64) -> [f64; 3] {
        let n = self.thickness as f64;
        let x = (rho / n).clamp(0.0, 1.0);
        let m = self.order as i32;
        let sigma_max = 0.8 * (m as f64 + 1.0) / d;
        let sigma = sigma_max * x.powi(m);
        let kappa = 1.0 + (self.kappa_max - 1.0) * x.powi(m);
        let alpha = self.alpha_max * (1.0 - x);
        let b = (-(sigma / kappa + alpha) * dt).exp();
        let denom = kappa * (sigma + kappa * alpha);
        let c = if denom > 0.0 {
            sigma * (b - 1.0) / denom
        } else {
            0.0
        };
        [1.0 / kappa - 1.0, b, c]
    }
}
