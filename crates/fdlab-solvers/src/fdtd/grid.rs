//! The Yee grid: shape, spacing, boundaries, field components and their staggered positions.

use super::cpml_profile::Cpml;
use crate::error::{Error, Result};
use fdlab_core::Scalar;

/// What happens at both ends of one axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Boundary {
    /// Perfect electric conductor walls at `0` and `n·d`: tangential E is zero there.
    Pec,
    /// The field wraps around with period `n·d`.
    Periodic,
    /// An absorbing convolutional PML of `thickness` cells inside the grid at both ends, in
    /// front of PEC walls at `0` and `n·d` (see [`Cpml`]).
    Cpml(Cpml),
}

impl Boundary {
    /// Whether the axis ends in PEC walls (a CPML is backed by them).
    pub fn has_walls(self) -> bool {
        !matches!(self, Boundary::Periodic)
    }

    /// The CPML parameters, if this is one.
    pub fn cpml(self) -> Option<Cpml> {
        match self {
            Boundary::Cpml(p) => Some(p),
            _ => None,
        }
    }
}

/// One of the six field components.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Component {
    /// `E_x` at `(i+½, j, k)`; in case files `"ex"` … `"hz"`.
    #[default]
    Ex,
    /// `E_y` at `(i, j+½, k)`.
    Ey,
    /// `E_z` at `(i, j, k+½)`.
    Ez,
    /// `H_x` at `(i, j+½, k+½)`.
    Hx,
    /// `H_y` at `(i+½, j, k+½)`.
    Hy,
    /// `H_z` at `(i+½, j+½, k)`.
    Hz,
}

impl Component {
    /// Whether this is an electric component.
    pub fn is_electric(self) -> bool {
        matches!(self, Component::Ex | Component::Ey | Component::Ez)
    }

    /// The component's offset inside its cell, in cells: ½ along the staggered axes, 0 elsewhere.
    pub fn offset(self) -> [f64; 3] {
        match self {
            Component::Ex => [0.5, 0.0, 0.0],
            Component::Ey => [0.0, 0.5, 0.0],
            Component::Ez => [0.0, 0.0, 0.5],
            Component::Hx => [0.0, 0.5, 0.5],
            Component::Hy => [0.5, 0.0, 0.5],
            Component::Hz => [0.5, 0.5, 0.0],
        }
    }
}

/// Shape, cell sizes and boundaries of a 3-D Yee grid.
///
/// Units are normalized: `c = ε0 = μ0 = 1`, so lengths and times share one unit and the wave
/// impedance of vacuum is 1. Cell `(i, j, k)` spans `[i·dx, (i+1)·dx] × …`; every component is
/// stored once per cell at the position given by [`Component::offset`], so both boundary kinds
/// give a domain of length `n·d` along each axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Cells per axis `[nx, ny, nz]`.
    pub n: [usize; 3],
    /// Cell sizes `[dx, dy, dz]`.
    pub spacing: [f64; 3],
    /// Boundary per axis.
    pub boundary: [Boundary; 3],
}

impl Grid {
    /// A checked grid: every size at least 1, every spacing positive and finite, CPML
    /// parameters in range (see [`Cpml`]).
    pub fn new(n: [usize; 3], spacing: [f64; 3], boundary: [Boundary; 3]) -> Result<Self> {
        const AXES: [&str; 3] = ["x", "y", "z"];
        for a in 0..3 {
            if n[a] == 0 {
                return Err(Error::Invalid(format!(
                    "FDTD grid has no cells along {}: use at least 1",
                    AXES[a]
                )));
            }
            let d = spacing[a];
            if !(d.is_finite() && d > 0.0) {
                return Err(Error::Invalid(format!(
                    "FDTD cell size along {} is {d}: use a positive finite spacing",
                    AXES[a]
                )));
            }
            if let Some(p) = boundary[a].cpml() {
                p.check(a, n[a])?;
            }
        }
        n[0].checked_mul(n[1])
            .and_then(|p| p.checked_mul(n[2]))
            .ok_or_else(|| Error::Invalid(format!("FDTD grid {n:?} is too large to index")))?;
        Ok(Grid {
            n,
            spacing,
            boundary,
        })
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.n[0] * self.n[1] * self.n[2]
    }

    /// Volume of one cell.
    pub fn cell_volume(&self) -> f64 {
        self.spacing.iter().product()
    }

    /// Storage index of cell `[i, j, k]` (x fastest).
    pub fn index(&self, cell: [usize; 3]) -> usize {
        cell[0] + self.n[0] * (cell[1] + self.n[1] * cell[2])
    }

    /// Cell `[i, j, k]` of storage index `c` (the inverse of [`Grid::index`]).
    pub fn cell_of_index(&self, c: usize) -> [usize; 3] {
        let n = self.n;
        [c % n[0], (c / n[0]) % n[1], c / (n[0] * n[1])]
    }

    /// Refuse a cell outside the grid; `what` names it in the message.
    pub fn check_cell(&self, cell: [usize; 3], what: &str) -> Result<()> {
        if (0..3).any(|a| cell[a] >= self.n[a]) {
            return Err(Error::Invalid(format!(
                "{what} at cell {cell:?} is outside the FDTD grid of {:?} cells: \
                 use indices below the grid size",
                self.n
            )));
        }
        Ok(())
    }

    /// Whether `component` at `cell` is tangential E on a PEC wall, where it is held at zero.
    pub fn on_pec_wall(&self, component: Component, cell: [usize; 3]) -> bool {
        let wall = |a: usize| self.boundary[a].has_walls() && cell[a] == 0;
        match component {
            Component::Ex => wall(1) || wall(2),
            Component::Ey => wall(0) || wall(2),
            Component::Ez => wall(0) || wall(1),
            _ => false,
        }
    }

    /// The first axis along which `cell` lies in a CPML layer, if any.
    pub fn in_cpml(&self, cell: [usize; 3]) -> Option<usize> {
        (0..3).find(|&a| {
            self.boundary[a]
                .cpml()
                .is_some_and(|p| cell[a] < p.thickness || cell[a] + p.thickness >= self.n[a])
        })
    }

    /// Physical position of `component` stored at `cell`.
    pub fn position(&self, component: Component, cell: [usize; 3]) -> [f64; 3] {
        let o = component.offset();
        std::array::from_fn(|a| (cell[a] as f64 + o[a]) * self.spacing[a])
    }

    /// The Courant limit `1 / (c·sqrt(1/dx² + 1/dy² + 1/dz²))` with `c = 1`.
    pub fn dt_limit(&self) -> f64 {
        1.0 / self
            .spacing
            .iter()
            .map(|d| 1.0 / (d * d))
            .sum::<f64>()
            .sqrt()
    }

    /// Refuse a time step that is not positive and finite or exceeds [`Grid::dt_limit`].
    pub fn check_dt(&self, dt: f64) -> Result<()> {
        let limit = self.dt_limit();
        if !(dt.is_finite() && dt > 0.0) {
            return Err(Error::Invalid(format!(
                "FDTD time step is {dt}: use a positive dt <= {limit:e}"
            )));
        }
        if dt > limit {
            return Err(Error::Unstable {
                dt,
                limit,
                why: "FDTD Courant limit 1/(c·sqrt(1/dx² + 1/dy² + 1/dz²))".into(),
            });
        }
        Ok(())
    }
}

/// The six field components, structure-of-arrays, each `nx·ny·nz` long with x fastest.
///
/// E is stored at time `n·Δt` and H at `(n − ½)·Δt` after `n` steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Fields<T> {
    /// `E_x`.
    pub ex: Vec<T>,
    /// `E_y`.
    pub ey: Vec<T>,
    /// `E_z`.
    pub ez: Vec<T>,
    /// `H_x`.
    pub hx: Vec<T>,
    /// `H_y`.
    pub hy: Vec<T>,
    /// `H_z`.
    pub hz: Vec<T>,
}

impl<T: Scalar> Fields<T> {
    /// All components zero for `cells` cells.
    pub fn zeros(cells: usize) -> Self {
        // Six zeroed allocations rather than clones of one: the system hands out zero pages
        // lazily, so a stepper that never reads them on the host (the GPU's) never pays.
        let z = || vec![T::zero(); cells];
        Fields {
            ex: z(),
            ey: z(),
            ez: z(),
            hx: z(),
            hy: z(),
            hz: z(),
        }
    }

    /// One component's array.
    pub fn get(&self, c: Component) -> &[T] {
        match c {
            Component::Ex => &self.ex,
            Component::Ey => &self.ey,
            Component::Ez => &self.ez,
            Component::Hx => &self.hx,
            Component::Hy => &self.hy,
            Component::Hz => &self.hz,
        }
    }

    /// One component's array, mutable.
    pub fn get_mut(&mut self, c: Component) -> &mut [T] {
        match c {
            Component::Ex => &mut self.ex,
            Component::Ey => &mut self.ey,
            Component::Ez => &mut self.ez,
            Component::Hx => &mut self.hx,
            Component::Hy => &mut self.hy,
            Component::Hz => &mut self.hz,
        }
    }
}
