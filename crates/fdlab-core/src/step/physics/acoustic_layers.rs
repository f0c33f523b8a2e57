//! Constant-density acoustics with a convolutional PML: the leapfrog step of
//! [`super::acoustic`] plus, per axis `a`, the memory variables of the stretched derivatives
//! (`∂̃ = ∂/s`, recursive convolutions `ψ = B ψ + A f`, `B`, `A` from the layer's damping):
//!
//! - `ψ_a = B_a ψ_a + A_a ∂_a p` on the layer cells (before the step; `∂_a`: the centred first
//!   derivative),
//! - `p⁺ = 2p − p⁻ + c²Δt² Σ_a ∂²_a p` on every point,
//! - `ζ_a = B_a ζ_a + A_a (∂²_a p + ∂_a ψ_a)` and `p⁺ += c²Δt² (∂_a ψ_a + ζ_a)` on the cells
//!   within the stencil's reach of the layers.
//!
//! `A_a`, `B_a` are coefficient fields the caller fills (zero and one outside the layers). The
//! regions are slabs at the two faces of each axis that never overlap, so no point advances its
//! memory twice in a step.

use super::leapfrog::Leapfrog;
use crate::boundary::Boundary;
use crate::grid::{Axis, Grid, Region};
use crate::stencil::Stencil;
use crate::step::{Expr, FieldDecl, Stagger, StepDescription, StepError, StepRegion, Update};

/// Where the absorbing layers of [`acoustic_layers`] lie along each axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layers {
    /// Layer cells at each face (where `A ≠ 0`).
    pub thickness: usize,
    /// The stencil's radius: the memory terms act up to this many cells past the layer.
    pub reach: usize,
}

impl Leapfrog {
    /// The memory variable of `∂_a p` along `axis`.
    pub fn psi(axis: Axis) -> String {
        format!("psi_{}", axis.name())
    }

    /// The memory variable of `∂²_a p + ∂_a ψ_a` along `axis`.
    pub fn zeta(axis: Axis) -> String {
        format!("zeta_{}", axis.name())
    }

    /// The layer coefficient `A` along `axis`.
    pub fn a(axis: Axis) -> String {
        format!("a_{}", axis.name())
    }

    /// The layer coefficient `B` along `axis`.
    pub fn b(axis: Axis) -> String {
        format!("b_{}", axis.name())
    }
}

/// The slabs of `depth` cells at the low and high faces of `axis`, the high one starting no
/// lower than the low one ends.
pub(crate) fn face_slabs(grid: &Grid, axis: Axis, depth: usize) -> [Region; 2] {
    let all = Region::all(grid);
    let a = axis.index();
    let n = all.hi[a];
    let mut lo = all;
    lo.hi[a] = depth.min(n);
    let mut hi = all;
    hi.lo[a] = n.saturating_sub(depth).max(lo.hi[a]);
    [lo, hi]
}

/// The constant-density acoustic step with absorbing `layers` on every face (see the
/// module's documentation); without layers, [`super::acoustic`].
///
/// ```
/// use fdlab_core::step::physics::{acoustic_layers, Layers};
/// use fdlab_core::{Boundary, Grid};
/// let g = Grid::unit(&[40, 36]).unwrap();
/// let layers = Layers { thickness: 8, reach: 2 };
/// let d = acoustic_layers(&g, 4, Boundary::Dirichlet, Some(layers)).unwrap();
/// d.validate_on(&g).unwrap();
/// ```
pub fn acoustic_layers(
    grid: &Grid,
    accuracy: usize,
    boundary: Boundary,
    layers: Option<Layers>,
) -> Result<StepDescription, StepError> {
    let mut d = super::acoustic(grid, accuracy, boundary)?;
    let Some(layers) = layers else {
        return Ok(d);
    };
    let (p, c2) = (Leapfrog::P, Leapfrog::C2DT2);
    let main = d.updates.pop().expect("the acoustic step has its update");
    let (mut before, mut after) = (vec![], vec![]);
    for &axis in &Axis::ALL[..grid.dim()] {
        let (psi, zeta, a, b) = (
            Leapfrog::psi(axis),
            Leapfrog::zeta(axis),
            Leapfrog::a(axis),
            Leapfrog::b(axis),
        );
        d.fields.extend([
            FieldDecl::auxiliary(&psi),
            FieldDecl::auxiliary(&zeta),
            FieldDecl::coefficient(&a),
            FieldDecl::coefficient(&b),
        ]);
        let d1 = Stencil::derivative(grid, axis, 1, accuracy)?;
        let d2 = Stencil::derivative(grid, axis, 2, accuracy)?;
        let dp = Expr::field(p).diff(axis, Stagger::Centred, d1.clone());
        let dpsi = Expr::field(&psi).diff(axis, Stagger::Centred, d1);
        let d2p = Expr::field(p).diff(axis, Stagger::Centred, d2);
        let psi_next = Expr::field(&b) * Expr::field(&psi) + Expr::field(&a) * dp;
        let zeta_next =
            Expr::field(&b) * Expr::field(&zeta) + Expr::field(&a) * (d2p + dpsi.clone());
        let term = Expr::at(p, 1, [0; 3]) + Expr::field(c2) * (dpsi + Expr::field(&zeta));
        for region in face_slabs(grid, axis, layers.thickness) {
            before.push(Update::new(&psi, 0, psi_next.clone()).on(StepRegion::Box(region)));
        }
        for region in face_slabs(grid, axis, layers.thickness + layers.reach) {
            after.push(Update::new(&zeta, 0, zeta_next.clone()).on(StepRegion::Box(region)));
            after.push(Update::new(p, 1, term.clone()).on(StepRegion::Box(region)));
        }
    }
    d.updates = before;
    d.updates.push(main);
    d.updates.extend(after);
    d.validate_on(grid)?;
    Ok(d)
}
