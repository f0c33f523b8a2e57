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
use fdlab_core::step::physics::Leapfrog;
use fdlab_core::step::{BinOp, Expr, Scale, Stagger, StencilUpdate, StepDescription, StepError};
use fdlab_core::{Axis, Boundary, Stencil};

/// The stencil of `B ψ + A ∂_axis p` (the `ψ` update of [`Leapfrog::psi`]), if `e` is one.
fn psi_stencil(e: &Expr, axis: Axis) -> Option<&Stencil> {
    let Expr::Bin(BinOp::Add, _, grad) = e else {
        return None;
    };
    let Expr::Bin(BinOp::Mul, _, diff) = &**grad else {
        return None;
    };
    let Expr::Diff(diff) = &**diff else {
        return None;
    };
    let of_p = matches!(&diff.expr, Expr::Field { name, level: 0, offset: [0, 0, 0] } if name == Leapfrog::P);
    (of_p && diff.axis == axis && diff.stagger == Stagger::Centred).then_some(&diff.stencil)
}

/// First-derivative weights per march-order axis, offsets `0..=r`.
pub type LayerWeights = [Vec<f64>; 3];

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
        Self::of_form(d, StencilUpdate::of(d)?, r)
    }

    /// As [`Lowered::of`] for a wave step with absorbing layers ([`acoustic_layers`]): its
    /// whole-grid update lowered as a wave step, and the layers' first-derivative weights per
    /// march-order axis (offsets `0..=r`, `w[0] = 0`; what the CPML kernels of
    /// [`super::cpml`] take), read from its `ψ` updates (`B ψ + A ∂p`). `None` without
    /// layers. Any other update on a box (a source, say) is refused: the solver kernels
    /// apply only these.
    ///
    /// [`acoustic_layers`]: fdlab_core::step::physics::acoustic_layers
    pub fn with_layers(
        d: &StepDescription,
        r: usize,
    ) -> Result<(Lowered, Option<LayerWeights>), StepError> {
        let (form, rest) = StencilUpdate::of_whole_grid(d)?;
        let lowered = Self::of_form(d, form, r)?;
        if rest.is_empty() {
            return Ok((lowered, None));
        }
        let layer_names: Vec<String> = Axis::ALL[..d.dim]
            .iter()
            .flat_map(|&a| [Leapfrog::psi(a), Leapfrog::zeta(a)])
            .collect();
        for u in &rest {
            let layer_term = u.target == Leapfrog::P && u.level == 1;
            if !layer_term && !layer_names.contains(&u.target) {
                return Err(refuse(&format!(
                    "an update of '{}' on a box is not an absorbing layer's",
                    u.target
                )));
            }
        }
        let mut w1: [Vec<f64>; 3] = std::array::from_fn(|_| vec![0.0; r + 1]);
        for &axis in &Axis::ALL[..d.dim] {
            let psi = Leapfrog::psi(axis);
            let stencil = rest
                .iter()
                .filter(|u| u.target == psi)
                .find_map(|u| psi_stencil(&u.expr, axis))
                .ok_or_else(|| {
                    refuse(&format!(
                        "no update of '{psi}' of the form B·ψ + A·∂p along {}",
                        axis.name()
                    ))
                })?;
            let a = axis.index();
            for t in stencil.taps() {
                let o = t.offset[a];
                if o.unsigned_abs() as usize > r || o == 0 {
                    return Err(refuse("a layer derivative reaches past the step's radius"));
                }
                if o > 0 {
                    w1[a][o as usize] = t.weight;
                }
            }
            let antisymmetric = stencil.taps().iter().all(|t| {
                let o = t.offset[a];
                o > 0 || w1[a][(-o) as usize] == -t.weight
            });
            if !antisymmetric || stencil.taps().len() != 2 * r {
                return Err(refuse(
                    "a layer derivative is not a centred first derivative",
                ));
            }
        }
        let w1 = if d.dim == 3 {
            w1
        } else {
            let [x, y, _] = w1;
            [x, vec![0.0; r + 1], y]
        };
        Ok((lowered, Some(w1)))
    }

    fn of_form(d: &StepDescription, form: StencilUpdate, r: usize) -> Result<Lowered, StepError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use fdlab_core::step::physics::{acoustic_layers, acoustic_vd_layers, heat, AcousticVdSpec};
    use fdlab_core::step::physics::{DtKappa, Layers};
    use fdlab_core::{central_weights, Grid};

    #[test]
    fn wave_layers_lower_with_their_first_derivative_weights() {
        let g = Grid::new(&[30, 28, 26], &[1.0, 0.5, 2.0]).unwrap();
        let layers = Layers {
            thickness: 5,
            reach: 4,
        };
        let d = acoustic_layers(&g, 8, Boundary::Dirichlet, Some(layers)).unwrap();
        let (l, w1) = Lowered::with_layers(&d, 4).unwrap();
        assert_eq!(l.family, Family::Wave);
        assert!(!l.periodic);
        let w = central_weights(1, 8).unwrap();
        for (a, h) in [1.0, 0.5, 2.0].into_iter().enumerate() {
            let want: Vec<f64> = w[4..].iter().map(|x| x / h).collect();
            assert_eq!(w1.as_ref().unwrap()[a], want);
        }
        // Without layers: no weights; one update alone is `Lowered::of`'s.
        let d = acoustic_layers(&g, 8, Boundary::Periodic, None).unwrap();
        assert_eq!(Lowered::with_layers(&d, 4).unwrap().1, None);
        assert_eq!(Lowered::of(&d, 4).unwrap().family, Family::Wave);
        let d = heat(&g, 2, Boundary::Periodic, DtKappa::Constant(0.5)).unwrap();
        let l = Lowered::of(&d, 1).unwrap();
        assert_eq!(
            l.family,
            Family::Heat {
                field_kappa: false,
                kc: 0.5
            }
        );
    }

    #[test]
    fn steps_the_kernels_do_not_apply_are_refused() {
        let g = Grid::unit(&[24, 20]).unwrap();
        // Variable density: staggered stencils of a product, sources on boxes.
        let spec = AcousticVdSpec {
            accuracy: 4,
            boundary: Boundary::Dirichlet,
            layer: None,
            sources: vec![[3, 4, 0]],
        };
        let d = acoustic_vd_layers(&g, &spec).unwrap();
        let e = Lowered::with_layers(&d, 2).unwrap_err().to_string();
        assert!(e.contains("not a stencil update"), "{e}");
        // Neumann halos are not among the kernels' edges.
        let d = acoustic_layers(&g, 4, Boundary::Neumann, None).unwrap();
        let e = Lowered::of(&d, 2).unwrap_err().to_string();
        assert!(e.contains("periodic or zero"), "{e}");
    }
}
