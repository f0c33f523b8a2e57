//! Variable-density acoustics with a convolutional PML and point sources: the description a
//! case runs.
//!
//! The PML stretches each derivative, `∂̃ = ∂/s`, `s = 1 + σ/(α + iω)`; in time, `(1/s) f =
//! f + ψ` with the recursive convolution `ψⁿ = B ψⁿ⁻¹ + A fⁿ` (`B = e^{−(σ+α)Δt}`, `A =
//! σ/(σ+α) (B − 1)`). Per axis `a` both derivatives of `∂_a(b ∂_a p)` are stretched:
//!
//! - `ψ_a = B½ ψ_a + A½ D⁺p` on half points (where the flux lives),
//! - `F_a = b̄_a (D⁺p + ψ_a)`, the stretched flux,
//! - `ζ_a = B ζ_a + A D⁻F_a` on integer points,
//! - `p⁺ = 2p − p⁻ + Δt² K Σ_a (D⁻F_a + ζ_a)`.
//!
//! `A`, `B` on integer and half points are coefficient fields the caller fills (zero and one
//! outside the layers); the memory variables are updated only in the layer slabs. Point
//! sources add a parameter to `p⁺` at one point each, after the update.

use super::acoustic_vd::AcousticVd;
use crate::boundary::Boundary;
use crate::grid::{Axis, Grid, Region};
use crate::step::{Expr, FieldDecl, Stagger, StepDescription, StepError, StepRegion, Update};

/// What the case asks of [`acoustic_vd_layers`].
#[derive(Debug, Clone, PartialEq)]
pub struct AcousticVdSpec {
    /// Accuracy of the staggered first derivatives (2 to 16, even).
    pub accuracy: usize,
    /// Reads outside the grid (the layers sit inside the grid; outside is this boundary).
    pub boundary: Boundary,
    /// Layer cells at each face, or `None` for no absorbing layer.
    pub layer: Option<usize>,
    /// One point per source; source `i` adds parameter [`AcousticVd::source`]`(i)` there.
    pub sources: Vec<[usize; 3]>,
}

impl AcousticVd {
    /// The CPML memory variable of the flux along `axis` (half points along it).
    pub fn psi(axis: Axis) -> String {
        format!("psi_{}", axis.name())
    }

    /// The CPML memory variable of the flux's divergence along `axis`.
    pub fn zeta(axis: Axis) -> String {
        format!("zeta_{}", axis.name())
    }

    /// The PML coefficient `A` (`half`: on half points) along `axis`.
    pub fn a(axis: Axis, half: bool) -> String {
        format!("a{}_{}", if half { "h" } else { "i" }, axis.name())
    }

    /// The PML coefficient `B` (`half`: on half points) along `axis`.
    pub fn b(axis: Axis, half: bool) -> String {
        format!("b{}_{}", if half { "h" } else { "i" }, axis.name())
    }

    /// The parameter source `i` adds to the new pressure at its point.
    pub fn source(i: usize) -> String {
        format!("s{i}")
    }
}

/// The two slabs of `layer` points (plus one, so that the half points of the layer's inner
/// edge are covered) at the low and high faces along `axis`; they never overlap (an update
/// applied twice to a point would advance its memory twice).
fn slabs(grid: &Grid, axis: Axis, layer: usize) -> [Region; 2] {
    let all = Region::all(grid);
    let a = axis.index();
    let n = all.hi[a];
    let mut lo = all;
    lo.hi[a] = (layer + 1).min(n);
    let mut hi = all;
    hi.lo[a] = n.saturating_sub(layer + 1).max(lo.hi[a]);
    [lo, hi]
}

/// The variable-density acoustic step of `spec` on `grid` (see the module's documentation).
///
/// ```
/// use fdlab_core::step::physics::{acoustic_vd_layers, AcousticVdSpec};
/// use fdlab_core::{Boundary, Grid};
/// let g = Grid::unit(&[48, 40]).unwrap();
/// let spec = AcousticVdSpec {
///     accuracy: 4,
///     boundary: Boundary::Dirichlet,
///     layer: Some(10),
///     sources: vec![[24, 20, 0]],
/// };
/// acoustic_vd_layers(&g, &spec).unwrap().validate_on(&g).unwrap();
/// ```
pub fn acoustic_vd_layers(
    grid: &Grid,
    spec: &AcousticVdSpec,
) -> Result<StepDescription, StepError> {
    let (p, b) = (AcousticVd::P, AcousticVd::B);
    let mut fields = vec![
        FieldDecl::state(p, 2),
        FieldDecl::coefficient(b),
        FieldDecl::coefficient(AcousticVd::K),
    ];
    let mut updates = vec![];
    let mut div: Option<Expr> = None;
    for &axis in &Axis::ALL[..grid.dim()] {
        let bbar = Expr::field(b).interpolate(grid, axis, Stagger::Forward, 2)?;
        let grad = Expr::field(p).d1(grid, axis, Stagger::Forward, spec.accuracy)?;
        let term = match spec.layer {
            None => (bbar * grad).d1(grid, axis, Stagger::Backward, spec.accuracy)?,
            Some(layer) => {
                let (psi, zeta) = (AcousticVd::psi(axis), AcousticVd::zeta(axis));
                let (ah, bh) = (AcousticVd::a(axis, true), AcousticVd::b(axis, true));
                let (ai, bi) = (AcousticVd::a(axis, false), AcousticVd::b(axis, false));
                fields.extend([
                    FieldDecl::auxiliary(&psi).half_on(axis),
                    FieldDecl::auxiliary(&zeta),
                    FieldDecl::coefficient(&ah).half_on(axis),
                    FieldDecl::coefficient(&bh).half_on(axis),
                    FieldDecl::coefficient(&ai),
                    FieldDecl::coefficient(&bi),
                ]);
                let flux = bbar * (grad.clone() + Expr::field(&psi));
                let div_a = flux.d1(grid, axis, Stagger::Backward, spec.accuracy)?;
                let psi_next = Expr::field(&bh) * Expr::field(&psi) + Expr::field(&ah) * grad;
                let zeta_next =
                    Expr::field(&bi) * Expr::field(&zeta) + Expr::field(&ai) * div_a.clone();
                for region in slabs(grid, axis, layer) {
                    updates
                        .push(Update::new(&psi, 0, psi_next.clone()).on(StepRegion::Box(region)));
                }
                // ζ reads ψ at neighbouring points: every ψ update comes first.
                for region in slabs(grid, axis, layer) {
                    let z = Update::new(&zeta, 0, zeta_next.clone()).on(StepRegion::Box(region));
                    updates.push(z);
                }
                div_a + Expr::field(&zeta)
            }
        };
        div = Some(match div.take() {
            None => term,
            Some(d) => d + term,
        });
    }
    let div = div.unwrap_or(Expr::Const(0.0));
    let dt = Expr::param(AcousticVd::DT);
    let next = Expr::Const(2.0) * Expr::field(p) - Expr::at(p, -1, [0; 3])
        + dt.clone() * dt * Expr::field(AcousticVd::K) * div;
    updates.push(Update::new(p, 1, next));
    let mut params = vec![AcousticVd::DT.to_string()];
    let shape = grid.shape();
    for (i, &at) in spec.sources.iter().enumerate() {
        if let Some(a) = (0..3).find(|&a| at[a] >= shape[a]) {
            return Err(StepError::Model(crate::error::Error::Size {
                detail: format!(
                    "source {i} at {at:?} lies outside the grid along {} ({} points); \
                     give a point inside it",
                    crate::grid::AXIS_NAMES[a],
                    shape[a]
                ),
            }));
        }
        let s = AcousticVd::source(i);
        let point = Region {
            lo: at,
            hi: at.map(|c| c + 1),
        };
        let add = Expr::at(p, 1, [0; 3]) + Expr::param(&s);
        updates.push(Update::new(p, 1, add).on(StepRegion::Box(point)));
        params.push(s);
    }
    let d = StepDescription {
        dim: grid.dim(),
        boundary: spec.boundary,
        fields,
        params,
        updates,
    };
    d.validate_on(grid)?;
    Ok(d)
}
