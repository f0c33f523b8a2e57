//! Drude dispersive cells through an auxiliary differential equation (ADE).
//!
//! A Drude medium adds a polarization current `J` with `dJ/dt = −γJ + ε0·ωp²·E` to Ampère's law,
//! `ε∞ ∂E/∂t = ∇×H − σE − J`, so that `ε(ω) = ε∞ − ωp²/(ω² + iγω)` (with `e^{−iωt}`). `J` lives
//! at the half steps beside H and is advanced with the centred (trapezoidal) difference of
//! Taflove & Hagness's ADE chapter:
//!
//! `J^{n+½} = kJ·J^{n−½} + βJ·E^n`, `kJ = (1 − γΔt/2)/(1 + γΔt/2)`, `βJ = ωp²Δt/(1 + γΔt/2)`,
//!
//! and then enters the ordinary E update like an impressed current: `E^{n+1} −= cb·J^{n+½}`.
//! Only the dispersive cells store `J` (one list per E component), so the rest of the grid keeps
//! the fused update untouched.
//!
//! With `γ = 0` the scheme is the leapfrog of `ε∞ ∂²E/∂t² = −∇×∇×E − ωp²E`, stable for
//! `Δt ≤ 1/sqrt(1/dx² + 1/dy² + 1/dz² + ωp²/4)` (see [`dt_limit`]); damping only helps.

use super::grid::{Component, Fields, Grid};
use crate::error::{Error, Result};
use fdlab_core::Scalar;

/// The Drude parameters of a cell, normalized units (`c = ε0 = μ0 = 1`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drude {
    /// Plasma frequency `ωp` in radians per unit time (angular, not cycles).
    pub plasma_frequency: f64,
    /// Collision rate `γ` per unit time (0: lossless).
    pub collision_frequency: f64,
}

impl Drude {
    /// Refuse non-finite or negative parameters.
    pub fn check(&self) -> Result<()> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        if !ok(self.plasma_frequency) || !ok(self.collision_frequency) {
            return Err(Error::Invalid(format!(
                "Drude plasma_frequency {} and collision_frequency {}: use finite values >= 0",
                self.plasma_frequency, self.collision_frequency
            )));
        }
        Ok(())
    }

    /// `(kJ, βJ)` for step `dt`.
    fn coefficients(&self, dt: f64) -> (f64, f64) {
        let g = 0.5 * self.collision_frequency * dt;
        let wp = self.plasma_frequency;
        ((1.0 - g) / (1.0 + g), wp * wp * dt / (1.0 + g))
    }
}

/// The largest stable step of the Yee grid with Drude cells of plasma frequency `wp`.
pub fn dt_limit(grid: &Grid, wp: f64) -> f64 {
    let s: f64 = grid.spacing.iter().map(|d| 1.0 / (d * d)).sum();
    1.0 / (s + 0.25 * wp * wp).sqrt()
}

/// The dispersive cells of one E component: storage indices, coefficients and `J`.
#[derive(Debug, Clone, Default)]
struct Branch {
    cells: Vec<usize>,
    k: Vec<f64>,
    b: Vec<f64>,
    j: Vec<f64>,
}

/// One E component's Drude cells as slices: storage cells, `kJ`, `βJ`, `J`.
pub(crate) type BranchView<'a> = (&'a [usize], &'a [f64], &'a [f64], &'a [f64]);

/// Every dispersive cell, one [`Branch`] per E component (`J` kept in f64).
#[derive(Debug, Clone, Default)]
pub(crate) struct Cells {
    branches: [Branch; 3],
}

const E: [Component; 3] = [Component::Ex, Component::Ey, Component::Ez];

impl Cells {
    /// Set `mask[c]` for every dispersive storage cell `c`.
    pub(crate) fn mark(&self, mask: &mut [bool]) {
        for b in self.branches.iter() {
            for &c in &b.cells {
                mask[c] = true;
            }
        }
    }

    /// Whether no cell is dispersive.
    pub(crate) fn is_empty(&self) -> bool {
        self.branches.iter().all(|b| b.cells.is_empty())
    }

    /// Drop the Drude term of every cell marked in `region` (a later material replaces it).
    pub(crate) fn clear(&mut self, region: &[bool]) {
        for br in &mut self.branches {
            let keep: Vec<bool> = br.cells.iter().map(|&c| !region[c]).collect();
            let mut it = keep.iter();
            br.cells.retain(|_| *it.next().unwrap_or(&true));
            for v in [&mut br.k, &mut br.b, &mut br.j] {
                let mut it = keep.iter();
                v.retain(|_| *it.next().unwrap_or(&true));
            }
        }
    }

    /// Make the storage cells `cells` dispersive with `d` (after [`Cells::clear`] on them).
    /// Tangential E on a PEC wall stays zero, so those components get no `J`.
    pub(crate) fn add(&mut self, grid: &Grid, cells: &[usize], d: Drude, dt: f64) {
        let (k, b) = d.coefficients(dt);
        for (br, comp) in self.branches.iter_mut().zip(E) {
            for &c in cells {
                if grid.on_pec_wall(comp, grid.cell_of_index(c)) {
                    continue;
                }
                br.cells.push(c);
                br.k.push(k);
                br.b.push(b);
                br.j.push(0.0);
            }
        }
    }

    /// `J^{n+½} = kJ·J^{n−½} + βJ·E^n`: call with E still at step n.
    pub(crate) fn advance_j<T: Scalar>(&mut self, f: &Fields<T>) {
        for (br, comp) in self.branches.iter_mut().zip(E) {
            let e = f.get(comp);
            for (((j, &c), &k), &b) in br.j.iter_mut().zip(&br.cells).zip(&br.k).zip(&br.b) {
                *j = k * *j + b * e[c].as_f64();
            }
        }
    }

    /// `E^{n+1} −= cb·J^{n+½}`, after the ordinary E update.
    pub(crate) fn apply<T: Scalar>(&self, f: &mut Fields<T>, cb: &[T]) {
        for (br, comp) in self.branches.iter().zip(E) {
            let e = f.get_mut(comp);
            for (&j, &c) in br.j.iter().zip(&br.cells) {
                e[c] = T::from_f64(e[c].as_f64() - cb[c].as_f64() * j);
            }
        }
    }

    /// Per E component (x, y, z): the dispersive storage cells and their `kJ`, `βJ` and `J`
    /// (what a GPU stepper uploads).
    pub(crate) fn branches(&self) -> [BranchView<'_>; 3] {
        std::array::from_fn(|a| {
            let b = &self.branches[a];
            (&b.cells[..], &b.k[..], &b.b[..], &b.j[..])
        })
    }

    /// `½ Σ |J|²/ωp² · ΔV`: the carriers' kinetic energy (cells with `ωp = 0` carry none).
    pub(crate) fn energy(&self, grid: &Grid, dt: f64) -> f64 {
        let mut s = 0.0;
        for br in &self.branches {
            for ((&j, &k), &b) in br.j.iter().zip(&br.k).zip(&br.b) {
                // βJ = ωp²Δt/(1 + γΔt/2) and 1 + kJ = 2/(1 + γΔt/2), so ωp² = 2βJ/(Δt(1 + kJ)).
                let wp2 = 2.0 * b / (dt * (1.0 + k));
                if wp2 > 0.0 {
                    s += j * j / wp2;
                }
            }
        }
        0.5 * s * grid.cell_volume()
    }

    /// Every `J` value, component by component, for a checkpoint.
    pub(crate) fn state(&self) -> Vec<f64> {
        self.branches
            .iter()
            .flat_map(|b| b.j.iter().copied())
            .collect()
    }

    /// Number of stored `J` values.
    pub(crate) fn len(&self) -> usize {
        self.branches.iter().map(|b| b.j.len()).sum()
    }

    /// Put back [`Cells::state`]; `false` if the length does not fit.
    pub(crate) fn set_state(&mut self, v: &[f64]) -> bool {
        if v.len() != self.len() {
            return false;
        }
        let mut rest = v;
        for br in &mut self.branches {
            let n = br.j.len();
            br.j.copy_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
        true
    }

    /// Zero every `J`.
    pub(crate) fn zero(&mut self) {
        for br in &mut self.branches {
            br.j.fill(0.0);
        }
    }
}
