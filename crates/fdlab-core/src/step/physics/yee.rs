//! Maxwell's equations on the Yee grid (normalised units, `ε0 = μ0 = 1`), leapfrog in time:
//!
//! - Drude currents (where the step has them) from `Eⁿ`: `J_c = kJ_c J_c + βJ_c E_c`;
//! - `H⁺ = H − (Δt/Δ) curl E`, each component the two-point differences of the other field
//!   (`D⁺`, integer to half points), then per CPML axis `a` and curl term `s·∂_a F`:
//!   `ψ = b ψ + c ∂_a F` and `H⁺ += −s Δt ((1/κ − 1) ∂_a F + ψ)` on the layer slabs;
//! - `E⁺ = Ca E + Cb (1/Δ) curl H⁺` (`D⁻`, half to integer points), tangential `E⁺` held at
//!   zero on plane 0 of each walled axis, the CPML terms as for H with weight `s Cb`
//!   (off those planes), then `E⁺ −= Cb J`.
//!
//! Field `E_c` lies on half points along `c`, `H_c` on half points along the two other axes,
//! as Yee's edges and faces. The description's boundary is periodic: a PEC wall at the high
//! end of an axis reads tangential E on plane `n`, which wraps onto plane 0, where the wall at
//! the low end holds it at zero. `Ca`, `Cb`, `kJ`, `βJ` and the CPML profiles `(1/κ − 1, b,
//! c)` are coefficient fields per component the caller fills (`Ca = 1`, `Cb = Δt/ε` in
//! vacuum; a profile is a function of the index along its axis only, zero outside the
//! layers); the memory variables `ψ` and the currents `J` are auxiliary fields.
//!
//! [`crate::step::YeeForm`] recognises the description and gives back its weights, walls,
//! layers and whether it has Drude currents: what the FDTD kernels are generated from.

use crate::grid::{Axis, Grid};
use crate::step::{StepDescription, StepError, YeeForm};

/// The E components' field names.
pub const E: [&str; 3] = ["ex", "ey", "ez"];
/// The H components' field names.
pub const H: [&str; 3] = ["hx", "hy", "hz"];

/// Which half step a CPML memory variable belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The E update's (derivatives of H).
    E,
    /// The H update's (derivatives of E).
    H,
}

impl Side {
    fn letter(self) -> char {
        match self {
            Side::E => 'e',
            Side::H => 'h',
        }
    }
}

/// What [`yee`] describes, besides the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Yee {
    /// Time step.
    pub dt: f64,
    /// Per axis: PEC walls at both ends (else the axis wraps around).
    pub walls: [bool; 3],
    /// Per axis: the CPML's thickness in cells at each end (walled axes only).
    pub cpml: [Option<usize>; 3],
    /// Whether the step advances Drude currents.
    pub drude: bool,
}

impl Yee {
    /// `Ca` of component `c` (coefficient, on the component's points).
    pub fn ca(c: usize) -> String {
        format!("ca_{}", E[c])
    }

    /// `Cb` of component `c`.
    pub fn cb(c: usize) -> String {
        format!("cb_{}", E[c])
    }

    /// The Drude current along component `c` (auxiliary).
    pub fn current(c: usize) -> String {
        format!("j_{}", E[c])
    }

    /// `kJ` of component `c` (coefficient, zero outside Drude cells).
    pub fn kj(c: usize) -> String {
        format!("kj_{}", E[c])
    }

    /// `βJ` of component `c` (coefficient, zero outside Drude cells).
    pub fn bj(c: usize) -> String {
        format!("bj_{}", E[c])
    }

    fn layer(prefix: &str, side: Side, axis: usize, term: usize) -> String {
        format!(
            "{prefix}_{}_{}{term}",
            side.letter(),
            Axis::ALL[axis].name()
        )
    }

    /// The memory variable of curl term `term` (see [`terms`]) along `axis` (auxiliary).
    pub fn psi(side: Side, axis: usize, term: usize) -> String {
        Self::layer("psi", side, axis, term)
    }

    /// `1/κ − 1` of that term's profile (coefficient).
    pub fn kappa(side: Side, axis: usize, term: usize) -> String {
        Self::layer("kap", side, axis, term)
    }

    /// `b` of that term's profile (coefficient).
    pub fn decay(side: Side, axis: usize, term: usize) -> String {
        Self::layer("bp", side, axis, term)
    }

    /// `c` of that term's profile (coefficient).
    pub fn gain(side: Side, axis: usize, term: usize) -> String {
        Self::layer("cp", side, axis, term)
    }
}

/// The curl terms with a derivative along `a`: `(target, source, sign)` as component
/// indices. Component `a + 1` of a curl holds `−∂_a F_{a+2}`, component `a + 2` `+∂_a F_{a+1}`.
pub fn terms(a: usize) -> [(usize, usize, f64); 2] {
    let (b, c) = ((a + 1) % 3, (a + 2) % 3);
    [(b, c, -1.0), (c, b, 1.0)]
}

fn refuse(part: &str, detail: String) -> StepError {
    StepError::NotYee {
        part: part.into(),
        detail,
    }
}

/// The Yee step on `grid` (3-D) for `spec` (see the module's documentation). Its weights are
/// `Δt/Δ` and `1/Δ` per axis, computed as the CPU FDTD stepper computes them.
///
/// ```
/// use fdlab_core::step::physics::{yee, Yee};
/// use fdlab_core::Grid;
/// let g = Grid::new(&[11, 9, 13], &[0.1, 0.1, 0.1]).unwrap();
/// let spec = Yee { dt: 0.05, walls: [false, true, true], cpml: [None, None, Some(3)], drude: true };
/// let d = yee(&g, &spec).unwrap();
/// d.validate_on(&g).unwrap();
/// ```
pub fn yee(grid: &Grid, spec: &Yee) -> Result<StepDescription, StepError> {
    if grid.dim() != 3 {
        return Err(refuse(
            "the grid",
            format!("{}-D; the Yee step is 3-D", grid.dim()),
        ));
    }
    if !(spec.dt.is_finite() && spec.dt > 0.0) {
        return Err(refuse(
            "the time step",
            format!("{}; give a positive time step", spec.dt),
        ));
    }
    let n = grid.shape();
    for (a, t) in spec.cpml.iter().enumerate() {
        let Some(t) = *t else { continue };
        let axis = Axis::ALL[a].name();
        if !spec.walls[a] {
            return Err(refuse(
                "the CPML",
                format!("on the periodic axis {axis}; a CPML lies in front of walls"),
            ));
        }
        if t == 0 || 2 * t > n[a] {
            return Err(refuse(
                "the CPML",
                format!(
                    "{t} cells along {axis} of {}; give 1 to half the axis's cells",
                    n[a]
                ),
            ));
        }
    }
    let h = grid.spacing();
    let form = YeeForm {
        walls: spec.walls,
        rate: h.map(|d| spec.dt / d),
        inv: h.map(|d| 1.0 / d),
        dt: if spec.cpml.iter().any(Option::is_some) {
            spec.dt
        } else {
            0.0
        },
        cpml: spec.cpml,
        drude: spec.drude,
    };
    form.description(n)
}
