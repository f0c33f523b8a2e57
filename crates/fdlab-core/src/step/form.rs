//! The stencil-update form: the one-update steps that the solvers' tuned kernels (register
//! queues, shared-memory tiles and rings, several steps a pass) are scheduled from.
//!
//! A description is in this form when it has one update, of a state field `u` over every
//! point, whose expression is a sum of
//! - point terms `a_l · u[l]` (the field's own levels at the point, `a_l` a constant), and
//! - one scaled stencil sum `s · Σ_k D_k u` (centred stencils applied to `u` at the current
//!   level; `s` a constant, a parameter or a coefficient field at the point).
//!
//! Heat (`u + Δtκ Σ ∂²u`) and the constant-density wave (`2p − p⁻ + c²Δt² Σ ∂²p`) are in it.
//! [`StencilUpdate::of`] recognises the form from the expression tree as written (it does
//! not expand products), so a constant scale stays a separate factor, as the kernels apply it.

use super::{Expr, Role, Stagger, StepDescription, StepError, StepRegion, Update};
use crate::grid::Axis;
use crate::stencil::Stencil;

/// What multiplies the stencil sum of a [`StencilUpdate`].
#[derive(Debug, Clone, PartialEq)]
pub enum Scale {
    /// A constant.
    Const(f64),
    /// A declared parameter.
    Param(String),
    /// A coefficient field at the point.
    Field(String),
}

/// A step in the stencil-update form (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct StencilUpdate {
    /// The state field written.
    pub field: String,
    /// Point terms: `(level, a_l)`, each level once, in the order first written.
    pub point: Vec<(i32, f64)>,
    /// The factor of the stencil sum.
    pub scale: Scale,
    /// The centred stencils of the sum, with their axes, in the order written.
    pub stencils: Vec<(Axis, Stencil)>,
}

fn not_form(detail: impl Into<String>) -> StepError {
    StepError::Form {
        detail: detail.into(),
    }
}

/// The summands of `e` with their signs (`+`, `−` and negation flattened).
fn summands<'e>(e: &'e Expr, sign: f64, out: &mut Vec<(f64, &'e Expr)>) {
    match e {
        Expr::Bin(super::BinOp::Add, a, b) => {
            summands(a, sign, out);
            summands(b, sign, out);
        }
        Expr::Bin(super::BinOp::Sub, a, b) => {
            summands(a, sign, out);
            summands(b, -sign, out);
        }
        Expr::Neg(a) => summands(a, -sign, out),
        _ => out.push((sign, e)),
    }
}

/// `Some(level)` when `e` reads `field` at the point.
fn own_read(e: &Expr, field: &str) -> Option<i32> {
    match e {
        Expr::Field {
            name,
            level,
            offset,
        } if name == field && *offset == [0; 3] => Some(*level),
        _ => None,
    }
}

impl StencilUpdate {
    /// Recognises the form in `d` (validated first); a typed error says which part of the
    /// step is not in it.
    pub fn of(d: &StepDescription) -> Result<StencilUpdate, StepError> {
        let (form, rest) = Self::of_whole_grid(d)?;
        if !rest.is_empty() {
            return Err(not_form(format!(
                "it has {} updates, the form has one",
                d.updates.len()
            )));
        }
        Ok(form)
    }

    /// The form of `d`'s one update over the whole grid, and `d`'s other updates (on boxes:
    /// absorbing layers, point sources), which the caller must lower by other means.
    pub fn of_whole_grid(d: &StepDescription) -> Result<(StencilUpdate, Vec<&Update>), StepError> {
        d.validate()?;
        let (whole, rest): (Vec<&Update>, Vec<&Update>) =
            d.updates.iter().partition(|u| u.region == StepRegion::All);
        let [update] = whole[..] else {
            return Err(not_form(format!(
                "it has {} updates over the whole grid, the form has one",
                whole.len()
            )));
        };
        Ok((Self::of_update(d, update)?, rest))
    }

    fn of_update(d: &StepDescription, update: &Update) -> Result<StencilUpdate, StepError> {
        let field = update.target.clone();
        if !matches!(d.field(&field).map(|f| f.role), Some(Role::State { .. })) {
            return Err(not_form(format!("'{field}' is not a state field")));
        }
        let mut terms = vec![];
        summands(&update.expr, 1.0, &mut terms);
        let mut form = StencilUpdate {
            field,
            point: vec![],
            scale: Scale::Const(0.0),
            stencils: vec![],
        };
        for (sign, e) in terms {
            form.add_term(d, sign, e)?;
        }
        if form.stencils.is_empty() {
            return Err(not_form("it applies no stencil"));
        }
        Ok(form)
    }

    fn add_point(&mut self, level: i32, a: f64) {
        match self.point.iter_mut().find(|(l, _)| *l == level) {
            Some((_, w)) => *w += a,
            None => self.point.push((level, a)),
        }
    }

    fn add_term(&mut self, d: &StepDescription, sign: f64, e: &Expr) -> Result<(), StepError> {
        if let Some(level) = own_read(e, &self.field) {
            self.add_point(level, sign);
            return Ok(());
        }
        let Expr::Bin(super::BinOp::Mul, s, rest) = e else {
            return Err(not_form(
                "a summand is neither a point term nor a scaled stencil sum",
            ));
        };
        if let (Expr::Const(a), Some(level)) = (&**s, own_read(rest, &self.field)) {
            self.add_point(level, sign * a);
            return Ok(());
        }
        if !self.stencils.is_empty() {
            return Err(not_form("it has more than one scaled stencil sum"));
        }
        if sign != 1.0 {
            return Err(not_form("the stencil sum is subtracted; add it instead"));
        }
        self.scale = match &**s {
            Expr::Const(c) => Scale::Const(*c),
            Expr::Param(p) => Scale::Param(p.clone()),
            Expr::Field {
                name,
                level: 0,
                offset: [0, 0, 0],
            } if d.field(name).map(|f| f.role) == Some(Role::Coefficient) => {
                Scale::Field(name.clone())
            }
            _ => {
                return Err(not_form(
                    "the stencil sum's factor is not a constant, a parameter or a coefficient \
                     field at the point",
                ))
            }
        };
        let mut parts = vec![];
        summands(rest, 1.0, &mut parts);
        for (sign, part) in parts {
            let Expr::Diff(diff) = part else {
                return Err(not_form(
                    "the scaled sum holds something other than stencils",
                ));
            };
            if sign != 1.0 || diff.stagger != Stagger::Centred {
                return Err(not_form("the stencils must be centred and added"));
            }
            if own_read(&diff.expr, &self.field) != Some(0) {
                return Err(not_form(format!(
                    "a stencil is applied to something other than '{}' at the current level",
                    self.field
                )));
            }
            self.stencils.push((diff.axis, diff.stencil.clone()));
        }
        Ok(())
    }

    /// `a_l` of level `level` (zero when the step does not read it).
    pub fn point_weight(&self, level: i32) -> f64 {
        self.point
            .iter()
            .find(|(l, _)| *l == level)
            .map_or(0.0, |(_, w)| *w)
    }

    /// The stencils as per-axis weights for offsets `0..=r` (x, y, z; zeros on axes beyond
    /// `dim`) and the sum of the centre weights over the axes in order, from zero: what the
    /// symmetric second-derivative kernels take. An error when a stencil reaches off its
    /// axis or beyond `r`, is not symmetric, or shares its axis with another.
    pub fn symmetric_weights(
        &self,
        dim: usize,
        r: usize,
    ) -> Result<([Vec<f64>; 3], f64), StepError> {
        let mut w: [Vec<f64>; 3] = std::array::from_fn(|_| vec![0.0; r + 1]);
        let mut seen = [false; 3];
        for (axis, stencil) in &self.stencils {
            let a = axis.index();
            if a >= dim || std::mem::replace(&mut seen[a], true) {
                return Err(not_form(format!(
                    "more than one stencil along {}, or one past the step's axes",
                    axis.name()
                )));
            }
            for t in stencil.taps() {
                let o = t.offset[a];
                let off_axis = (0..3).any(|b| b != a && t.offset[b] != 0);
                if off_axis || o.unsigned_abs() as usize > r {
                    return Err(not_form(format!(
                        "a stencil along {} has a tap at {:?}, outside the axis's radius {r}",
                        axis.name(),
                        t.offset
                    )));
                }
                if o >= 0 {
                    w[a][o as usize] = t.weight;
                }
            }
            for t in stencil.taps() {
                let o = t.offset[a];
                if o < 0 && w[a][(-o) as usize] != t.weight {
                    return Err(not_form(format!(
                        "the stencil along {} is not symmetric about its point",
                        axis.name()
                    )));
                }
            }
            let taps = |s: i32| {
                stencil
                    .taps()
                    .iter()
                    .filter(|t| t.offset[a] * s > 0)
                    .count()
            };
            if taps(1) != taps(-1) {
                return Err(not_form(format!(
                    "the stencil along {} is not symmetric about its point",
                    axis.name()
                )));
            }
        }
        let mut w0 = 0.0;
        for wa in w.iter().take(dim) {
            w0 += wa[0];
        }
        Ok((w, w0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::physics::{acoustic, heat, DtKappa, Leapfrog};
    use crate::step::{FieldDecl, Update};
    use crate::{central_weights, Boundary, Grid};

    #[test]
    fn heat_and_waves_are_stencil_updates_with_the_fornberg_weights() {
        let g = Grid::new(&[19, 14, 11], &[0.5, 0.25, 2.0]).unwrap();
        for accuracy in [2, 4, 8] {
            let r = accuracy / 2;
            let w = central_weights(2, accuracy).unwrap();
            let d = heat(&g, accuracy, Boundary::Dirichlet, DtKappa::Constant(0.1)).unwrap();
            let f = StencilUpdate::of(&d).unwrap();
            assert_eq!(f.point, vec![(0, 1.0)]);
            assert_eq!(f.scale, Scale::Const(0.1));
            let (ws, w0) = f.symmetric_weights(3, r).unwrap();
            let mut sum = 0.0;
            for (a, h) in [0.5f64, 0.25, 2.0].into_iter().enumerate() {
                let want: Vec<f64> = w[r..].iter().map(|x| x / (h * h)).collect();
                assert_eq!(ws[a], want, "axis {a}, accuracy {accuracy}");
                sum += want[0];
            }
            assert_eq!(w0, sum);
            let d = acoustic(&g, accuracy, Boundary::Periodic).unwrap();
            let f = StencilUpdate::of(&d).unwrap();
            assert_eq!(f.point_weight(0), 2.0);
            assert_eq!(f.point_weight(-1), -1.0);
            assert_eq!(f.scale, Scale::Field(Leapfrog::C2DT2.into()));
        }
        let d = heat(&g, 2, Boundary::Periodic, DtKappa::Field).unwrap();
        let f = StencilUpdate::of(&d).unwrap();
        assert_eq!(f.scale, Scale::Field(Leapfrog::DT_KAPPA.into()));
        // A radius too small for the stencils is refused.
        assert!(f.symmetric_weights(3, 0).is_err());
    }

    #[test]
    fn steps_out_of_the_form_are_refused_with_the_reason() {
        let g = Grid::unit(&[16, 16]).unwrap();
        let lap = |axis| {
            Expr::field("u").diff(
                axis,
                Stagger::Centred,
                Stencil::derivative(&g, axis, 2, 2).unwrap(),
            )
        };
        let step = |expr: Expr, fields: Vec<FieldDecl>| StepDescription {
            dim: 2,
            boundary: Boundary::Periodic,
            fields,
            params: vec!["dt".into()],
            updates: vec![Update::new("u", 1, expr)],
        };
        let u = || vec![FieldDecl::state("u", 1), FieldDecl::coefficient("k")];
        let ok = step(
            Expr::field("u") + Expr::param("dt") * (lap(Axis::X) + lap(Axis::Y)),
            u(),
        );
        assert_eq!(
            StencilUpdate::of(&ok).unwrap().scale,
            Scale::Param("dt".into())
        );
        let subtracted = step(Expr::field("u") - Expr::param("dt") * lap(Axis::X), u());
        let twice = step(
            Expr::field("u") + Expr::param("dt") * lap(Axis::X) + Expr::param("dt") * lap(Axis::Y),
            u(),
        );
        let product = step(
            Expr::field("u") + Expr::param("dt") * (Expr::field("k") * lap(Axis::X)),
            u(),
        );
        let of_other = step(
            Expr::field("u")
                + Expr::param("dt")
                    * Expr::field("k").diff(
                        Axis::X,
                        Stagger::Centred,
                        Stencil::derivative(&g, Axis::X, 2, 2).unwrap(),
                    ),
            u(),
        );
        let first = step(
            Expr::field("u")
                + Expr::param("dt")
                    * Expr::field("u")
                        .d1(&g, Axis::X, Stagger::Centred, 2)
                        .unwrap(),
            u(),
        );
        for (d, why) in [
            (subtracted, "subtracted"),
            (twice, "more than one"),
            (product, "other than stencils"),
            (of_other, "something other than"),
        ] {
            let e = StencilUpdate::of(&d).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
        // A first derivative is in the form but not symmetric.
        let f = StencilUpdate::of(&first).unwrap();
        let e = f.symmetric_weights(2, 1).unwrap_err().to_string();
        assert!(e.contains("not symmetric"), "{e}");
    }
}
