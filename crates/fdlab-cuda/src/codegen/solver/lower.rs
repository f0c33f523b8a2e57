//! Step descriptions onto the solver kernels: a description in the stencil-update form
//! ([`StencilUpdate`]) whose point terms and scale match a kernel family is lowered to that
//! family's spec; the schedule (launch, tiles, ring, passes) decides how the kernel is laid out.
//!
//! | family | point terms | scale | kernels |
//! | --- | --- | --- | --- |
//! | heat | `u` | a constant (a literal) or a coefficient field | register queue, tiled, multi-step pass (order 2, constant scale) |
//! | wave | `2p − p⁻` | a coefficient field | register queue, tiled, ring, multi-step pass |

use super::tiled::{self, Update};
use super::{step, Launch, StepSpec};
use fdlab_core::step::{Scale, StencilUpdate, StepDescription, StepError};
use fdlab_core::Boundary;

/// The kernel family a description lowers to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Family {
    /// `u⁺ = u + s Σ D u`: the scale per point from a field (`field_kappa`) or the literal `kc`.
    Heat {
        /// The scale is a coefficient field.
        field_kappa: bool,
        /// The constant scale (0 when it is a field).
        kc: f64,
    },
    /// `p⁺ = 2p − p⁻ + s Σ D p`, the scale a coefficient field.
    Wave,
}

/// A description lowered onto the solver kernels: the family and the stencil's weights.
#[derive(Debug, Clone, PartialEq)]
pub struct Lowered {
    /// The family.
    pub family: Family,
    /// Grid dimension (2 or 3).
    pub dim: usize,
    /// Stencil radius.
    pub r: usize,
    /// Periodic (wrap) or zero outside the grid.
    pub periodic: bool,
    /// Second-derivative weights per march-order axis (x, middle, march), offsets `0..=r`.
    pub w2: [Vec<f64>; 3],
    /// The sum of the centre weights.
    pub w0: f64,
}

fn refuse(detail: &str) -> StepError {
    StepError::Form {
        detail: detail.into(),
    }
}

impl Lowered {
    /// Lowers `d` (2-D or 3-D, periodic or zero outside, symmetric stencils of radius up
    /// to `r` along each axis) or says why it cannot be.
    pub fn of(d: &StepDescription, r: usize) -> Result<Lowered, StepError> {
        let form = StencilUpdate::of(d)?;
        if !(2..=3).contains(&d.dim) {
            return Err(refuse("the solver kernels step 2-D and 3-D grids"));
        }
        let periodic = match d.boundary {
            Boundary::Periodic => true,
            Boundary::Dirichlet => false,
            _ => return Err(refuse("the solver kernels read periodic or zero halos")),
        };
        let point = |l| form.point_weight(l);
        let heat_points = form.point.len() == 1 && point(0) == 1.0;
        let wave_points = form.point.len() == 2 && point(0) == 2.0 && point(-1) == -1.0;
        let family = match (&form.scale, heat_points, wave_points) {
            (Scale::Const(kc), true, _) => Family::Heat {
                field_kappa: false,
                kc: *kc,
            },
            (Scale::Field(_), true, _) => Family::Heat {
                field_kappa: true,
                kc: 0.0,
            },
            (Scale::Field(_), _, true) => Family::Wave,
            _ => {
                return Err(refuse(
                    "its point terms and scale match no kernel family (u + const·Σ, u + k·Σ, \
                     2p − p⁻ + k·Σ with k a coefficient field)",
                ))
            }
        };
        let (w, w0) = form.symmetric_weights(d.dim, r)?;
        let w2 = if d.dim == 3 {
            w
        } else {
            let [x, y, _] = w;
            [x, vec![0.0; r + 1], y]
        };
        Ok(Lowered {
            family,
            dim: d.dim,
            r,
            periodic,
            w2,
            w0,
        })
    }

    /// The step kernel's spec in `ty` (`"float"`, `"double"`) with `launch`, over the planes
    /// its arguments name when `ranged`.
    pub fn spec(&self, ty: &'static str, launch: Launch, ranged: bool) -> StepSpec {
        StepSpec {
            ty,
            r: self.r,
            three: self.dim == 3,
            periodic: self.periodic,
            w2: self.w2.clone(),
            w0: self.w0,
            launch,
            ranged,
        }
    }

    /// The update the tiled and ring kernels apply.
    pub fn update(&self) -> Update {
        match self.family {
            Family::Heat { field_kappa, kc } => Update::Heat { field_kappa, kc },
            Family::Wave => Update::Wave,
        }
    }

    /// The one-step kernel of `spec` (made by [`Lowered::spec`]): the shared-memory tiled
    /// kernel where the spec allows it, else the register queue.
    pub fn step_body(&self, spec: &StepSpec) -> String {
        match self.family {
            _ if tiled::usable(spec) => tiled::tiled(spec, self.update()),
            Family::Heat { field_kappa, kc } => step::heat(spec, field_kappa, kc),
            Family::Wave => step::wave(spec),
        }
    }
}
