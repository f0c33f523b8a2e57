//! Heat and constant-density acoustics: one state field advanced by the sum over axes of
//! centred second derivatives, scaled by a coefficient.
//!
//! - heat: `uⁿ⁺¹ = uⁿ + Δtκ · Σ_a ∂²_a uⁿ` (explicit Euler);
//! - waves: `pⁿ⁺¹ = 2pⁿ − pⁿ⁻¹ + c²Δt² · Σ_a ∂²_a pⁿ` (leapfrog).
//!
//! Both are the stencil-update form ([`crate::step::StencilUpdate`]) the solvers' tiled,
//! register-queue and multi-step kernels are scheduled from.

use crate::boundary::Boundary;
use crate::grid::{Axis, Grid};
use crate::stencil::Stencil;
use crate::step::{Expr, FieldDecl, Stagger, StepDescription, StepError, Update};

/// Names of the fields of [`heat`] and [`acoustic`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leapfrog;

impl Leapfrog {
    /// The temperature of [`heat`] (state, one level).
    pub const U: &'static str = "u";
    /// `Δt κ` per point of [`heat`] when the diffusivity varies (coefficient).
    pub const DT_KAPPA: &'static str = "dt_kappa";
    /// The pressure of [`acoustic`] (state, two levels).
    pub const P: &'static str = "p";
    /// `c² Δt²` per point of [`acoustic`] (coefficient).
    pub const C2DT2: &'static str = "c2dt2";
}

/// `Δt κ` of [`heat`]: one value for the whole grid (a literal in the generated code) or the
/// coefficient field [`Leapfrog::DT_KAPPA`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DtKappa {
    /// The same value at every point.
    Constant(f64),
    /// One value per point.
    Field,
}

/// `Σ_a ∂²_a f` on `grid` at `accuracy`, one centred stencil per axis, axes in order.
fn laplacian_of(grid: &Grid, f: &str, accuracy: usize) -> Result<Expr, StepError> {
    let mut sum: Option<Expr> = None;
    for &axis in &Axis::ALL[..grid.dim()] {
        let d2 = Stencil::derivative(grid, axis, 2, accuracy)?;
        let term = Expr::field(f).diff(axis, Stagger::Centred, d2);
        sum = Some(match sum {
            None => term,
            Some(s) => s + term,
        });
    }
    Ok(sum.unwrap_or(Expr::Const(0.0)))
}

/// The heat step on `grid`: centred second derivatives of `accuracy` (2, 4, …) per axis,
/// reads outside the grid answered by `boundary` (periodic, or zero for Dirichlet).
///
/// ```
/// use fdlab_core::step::physics::{heat, DtKappa};
/// use fdlab_core::{Boundary, Grid};
/// let g = Grid::unit(&[32, 24]).unwrap();
/// let d = heat(&g, 4, Boundary::Periodic, DtKappa::Constant(1e-5)).unwrap();
/// d.validate_on(&g).unwrap();
/// ```
pub fn heat(
    grid: &Grid,
    accuracy: usize,
    boundary: Boundary,
    dt_kappa: DtKappa,
) -> Result<StepDescription, StepError> {
    let u = Leapfrog::U;
    let (scale, mut fields) = match dt_kappa {
        DtKappa::Constant(k) => (Expr::Const(k), vec![]),
        DtKappa::Field => (
            Expr::field(Leapfrog::DT_KAPPA),
            vec![FieldDecl::coefficient(Leapfrog::DT_KAPPA)],
        ),
    };
    fields.insert(0, FieldDecl::state(u, 1));
    let next = Expr::field(u) + scale * laplacian_of(grid, u, accuracy)?;
    Ok(StepDescription {
        dim: grid.dim(),
        boundary,
        fields,
        params: vec![],
        updates: vec![Update::new(u, 1, next)],
    })
}

/// The constant-density acoustic step on `grid` (leapfrog in time, centred second
/// derivatives of `accuracy` per axis), reads outside the grid answered by `boundary`
/// (periodic, or zero for a rigid wall).
///
/// ```
/// use fdlab_core::step::physics::acoustic;
/// use fdlab_core::{Boundary, Grid};
/// let g = Grid::unit(&[20, 18, 16]).unwrap();
/// let d = acoustic(&g, 8, Boundary::Dirichlet).unwrap();
/// d.validate_on(&g).unwrap();
/// ```
pub fn acoustic(
    grid: &Grid,
    accuracy: usize,
    boundary: Boundary,
) -> Result<StepDescription, StepError> {
    let p = Leapfrog::P;
    let next = Expr::Const(2.0) * Expr::field(p) - Expr::at(p, -1, [0; 3])
        + Expr::field(Leapfrog::C2DT2) * laplacian_of(grid, p, accuracy)?;
    Ok(StepDescription {
        dim: grid.dim(),
        boundary,
        fields: vec![
            FieldDecl::state(p, 2),
            FieldDecl::coefficient(Leapfrog::C2DT2),
        ],
        params: vec![],
        updates: vec![Update::new(p, 1, next)],
    })
}
