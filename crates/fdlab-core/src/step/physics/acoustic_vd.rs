//! Variable-density acoustics, `p_tt = ρc² ∇·(ρ⁻¹ ∇p)`, leapfrog in time, staggered in space.
//!
//! Per axis `a`: the buoyancy `b = 1/ρ` is averaged to half points (`b_{i+½} = (b_i +
//! b_{i+1})/2`, the arithmetic average of `b`), the flux `F = b_{i+½} · D⁺p` lies on half
//! points, and `D⁻F` brings it back; the update is
//! `p^{n+1} = 2pⁿ − p^{n−1} + dt² · K · Σ_a D⁻_a(b̄_a · D⁺_a p)` with `K = ρc²`.
//! With constant ρ and accuracy 2 this is exactly the 3-point Laplacian per axis.

use crate::boundary::Boundary;
use crate::grid::{Axis, Grid};
use crate::step::{Expr, FieldDecl, Stagger, StepDescription, StepError, Update};

/// Names of the fields and the parameter of [`acoustic_vd`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcousticVd;

impl AcousticVd {
    /// The pressure (state, two levels).
    pub const P: &'static str = "p";
    /// The buoyancy `b = 1/ρ` (coefficient).
    pub const B: &'static str = "b";
    /// The bulk modulus `K = ρc²` (coefficient).
    pub const K: &'static str = "k";
    /// The time step (parameter).
    pub const DT: &'static str = "dt";
}

/// The variable-density acoustic step on `grid` with staggered first derivatives of
/// `accuracy` (2, 4, 8, … up to 16) and reads outside the grid answered by `boundary`.
///
/// ```
/// use fdlab_core::{Boundary, Grid};
/// let g = Grid::unit(&[32, 32]).unwrap();
/// let d = fdlab_core::step::physics::acoustic_vd(&g, 4, Boundary::Dirichlet).unwrap();
/// d.validate_on(&g).unwrap();
/// ```
pub fn acoustic_vd(
    grid: &Grid,
    accuracy: usize,
    boundary: Boundary,
) -> Result<StepDescription, StepError> {
    acoustic_vd_with(grid, accuracy, 2, boundary)
}

/// As [`acoustic_vd`], with `b` interpolated to half points at `average_accuracy` instead of
/// averaged (2): for smooth media, where the two-point average would limit the scheme to
/// second order. Across a jump in ρ it overshoots (it can make `b` negative); keep 2 there.
pub fn acoustic_vd_with(
    grid: &Grid,
    accuracy: usize,
    average_accuracy: usize,
    boundary: Boundary,
) -> Result<StepDescription, StepError> {
    let (p, b) = (AcousticVd::P, AcousticVd::B);
    let mut div: Option<Expr> = None;
    for &axis in &Axis::ALL[..grid.dim()] {
        let bbar = Expr::field(b).interpolate(grid, axis, Stagger::Forward, average_accuracy)?;
        let flux = bbar * Expr::field(p).d1(grid, axis, Stagger::Forward, accuracy)?;
        let term = flux.d1(grid, axis, Stagger::Backward, accuracy)?;
        div = Some(match div {
            None => term,
            Some(d) => d + term,
        });
    }
    let div = div.unwrap_or(Expr::Const(0.0));
    let dt = Expr::param(AcousticVd::DT);
    let next = Expr::Const(2.0) * Expr::field(p) - Expr::at(p, -1, [0; 3])
        + dt.clone() * dt * Expr::field(AcousticVd::K) * div;
    Ok(StepDescription {
        dim: grid.dim(),
        boundary,
        fields: vec![
            FieldDecl::state(p, 2),
            FieldDecl::coefficient(b),
            FieldDecl::coefficient(AcousticVd::K),
        ],
        params: vec![AcousticVd::DT.into()],
        updates: vec![Update::new(p, 1, next)],
    })
}
