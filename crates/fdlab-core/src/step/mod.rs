//! A time step as a description: fields, stencil applications and pointwise updates, lowered
//! by one CUDA emitter (fdlab-cuda) and run by a reference executor (fdlab-cpu).
//!
//! A [`StepDescription`] declares its fields ([`FieldDecl`]: state with time levels,
//! coefficients, auxiliaries) and a list of [`Update`]s applied in order, each writing one
//! field over a [`StepRegion`] from an [`Expr`]. Expressions read fields at constant offsets
//! and apply stencils ([`Diff`]), centred or staggered: a staggered quantity at index `i`
//! stands for position `i + ½`; [`StepDescription::validate`] checks that every operator gets
//! what it expects and that every update lands on integer points.
//!
//! ```
//! use fdlab_core::step::{Expr, FieldDecl, StepDescription, StepRegion, Update};
//! use fdlab_core::{Boundary, Grid, Stencil};
//! let g = Grid::unit(&[32]).unwrap();
//! let lap = Stencil::laplacian(&g, 2).unwrap();
//! let u = Expr::field("u");
//! let heat = StepDescription {
//!     dim: 1,
//!     boundary: Boundary::Periodic,
//!     fields: vec![FieldDecl::state("u", 1)],
//!     params: vec!["dt".into()],
//!     updates: vec![Update::new("u", 1, u.clone() + Expr::param("dt") * u.diff_lap(lap))],
//! };
//! heat.validate().unwrap();
//! ```

mod expr;
mod form;
mod linear;
pub mod physics;
pub mod revolve;
mod slots;
mod validate;
mod yee_form;

pub use expr::{staggered_weights, BinOp, Diff, Expr, Stagger};
pub use form::{Scale, StencilUpdate};
pub use linear::{Factor, FactorKind, FieldRead, LinearStep, LinearUpdate, Term};
pub use slots::Slots;
pub use validate::{Location, StepError};
pub use yee_form::YeeForm;

use crate::boundary::Boundary;
use crate::grid::{Axis, Grid, Region};
use crate::stencil::Stencil;

/// What a field is to the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Advanced in time: `levels` past levels are kept (n, n−1, …) and the step writes n+1.
    State {
        /// Levels read (1 for a one-step scheme, 2 for leapfrog).
        levels: usize,
    },
    /// Read only (material parameters).
    Coefficient,
    /// Written and read within a step at the current level (fluxes, memory variables).
    Auxiliary,
}

/// A field the step uses.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDecl {
    /// Its name (a C identifier: letters, digits, `_`).
    pub name: String,
    /// Its role.
    pub role: Role,
    /// Per axis, whether the field is stored on half points: index `i` holds the value at
    /// `i + ½` (a CPML memory variable of a flux, a face-centred coefficient). Reads of it
    /// lie on half points there and its updates must land there.
    pub half: [bool; 3],
}

impl FieldDecl {
    /// A state field with `levels` past levels.
    pub fn state(name: &str, levels: usize) -> FieldDecl {
        FieldDecl {
            name: name.into(),
            role: Role::State { levels },
            half: [false; 3],
        }
    }

    /// A read-only coefficient field.
    pub fn coefficient(name: &str) -> FieldDecl {
        FieldDecl {
            name: name.into(),
            role: Role::Coefficient,
            half: [false; 3],
        }
    }

    /// An auxiliary field.
    pub fn auxiliary(name: &str) -> FieldDecl {
        FieldDecl {
            name: name.into(),
            role: Role::Auxiliary,
            half: [false; 3],
        }
    }

    /// The same field stored on half points along `axis`.
    pub fn half_on(mut self, axis: Axis) -> FieldDecl {
        self.half[axis.index()] = true;
        self
    }
}

/// The points an update writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepRegion {
    /// Every point of the grid.
    All,
    /// The points whose reads all lie inside the grid (the expression's reach from each face).
    Interior,
    /// A box of points (clipped to the grid).
    Box(Region),
}

impl StepRegion {
    /// The box written on `grid` by an update of reach `(below, above)`.
    pub fn resolve(&self, grid: &Grid, reach: ([usize; 3], [usize; 3])) -> Region {
        let all = Region::all(grid);
        match *self {
            StepRegion::All => all,
            StepRegion::Interior => {
                let mut r = all;
                for a in 0..grid.dim() {
                    r.lo[a] = reach.0[a];
                    r.hi[a] = all.hi[a].saturating_sub(reach.1[a]).max(r.lo[a]);
                }
                r
            }
            StepRegion::Box(b) => {
                let mut r = all;
                for a in 0..3 {
                    r.hi[a] = b.hi[a].min(all.hi[a]);
                    r.lo[a] = b.lo[a].min(r.hi[a]);
                }
                r
            }
        }
    }
}

/// One assignment: `target` at `level` becomes `expr` on `region`.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    /// The field written.
    pub target: String,
    /// 1 (n+1) for a state field, 0 for an auxiliary one.
    pub level: i32,
    /// The value.
    pub expr: Expr,
    /// Where it is written.
    pub region: StepRegion,
}

impl Update {
    /// An update of every point.
    pub fn new(target: &str, level: i32, expr: Expr) -> Update {
        Update {
            target: target.into(),
            level,
            expr,
            region: StepRegion::All,
        }
    }

    /// The same update on `region`.
    pub fn on(mut self, region: StepRegion) -> Update {
        self.region = region;
        self
    }
}

/// One time step: fields, parameters and ordered updates.
///
/// Reads outside the grid follow `boundary`: [`Boundary::Periodic`] wraps,
/// [`Boundary::Neumann`] mirrors, [`Boundary::Dirichlet`] reads zero (a homogeneous Dirichlet
/// halo; unlike a stencil apply, every point of the update's region is computed) except for
/// coefficient fields, which take the nearest point inside the grid (a material continues
/// outward: a rigid wall keeps its face's buoyancy).
#[derive(Debug, Clone, PartialEq)]
pub struct StepDescription {
    /// Grid dimension (1 to 3).
    pub dim: usize,
    /// How reads outside the grid are answered.
    pub boundary: Boundary,
    /// The fields.
    pub fields: Vec<FieldDecl>,
    /// Parameter names, given values when the step runs.
    pub params: Vec<String>,
    /// Updates, applied in order; each sees the ones before.
    pub updates: Vec<Update>,
}

impl StepDescription {
    /// The declaration of field `name`.
    pub fn field(&self, name: &str) -> Option<&FieldDecl> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Checks the description (names, levels, dimensions, staggering, fit in `grid`) before
    /// any work; see [`StepError`].
    pub fn validate_on(&self, grid: &Grid) -> Result<(), StepError> {
        self.validate()?;
        validate::fits(self, grid)
    }

    /// The value of each declared parameter, in declaration order, from `(name, value)`
    /// pairs; errors on a missing, unknown or repeated name.
    pub fn param_values(&self, params: &[(&str, f64)]) -> Result<Vec<f64>, StepError> {
        if let Some((n, _)) = params
            .iter()
            .find(|(n, _)| !self.params.iter().any(|p| p == n))
        {
            return Err(StepError::UnknownParam {
                name: n.to_string(),
            });
        }
        self.params
            .iter()
            .map(|p| {
                let v: Vec<f64> = params
                    .iter()
                    .filter(|(n, _)| n == p)
                    .map(|&(_, v)| v)
                    .collect();
                match v[..] {
                    [x] => Ok(x),
                    _ => Err(StepError::Params {
                        detail: format!("'{p}' given {} times; give it once", v.len()),
                    }),
                }
            })
            .collect()
    }

    /// Checks the description without a grid.
    pub fn validate(&self) -> Result<(), StepError> {
        validate::validate(self)
    }
}

impl Expr {
    /// A whole-grid stencil (e.g. a Laplacian) applied to `self`, centred.
    pub fn diff_lap(self, stencil: Stencil) -> Expr {
        let axis = stencil.single_axis().unwrap_or(Axis::X);
        self.diff(axis, Stagger::Centred, stencil)
    }
}
