//! A step's updates as sums of terms linear in the state and auxiliary fields: what the
//! adjoint (transposed) step and the coefficient gradients are built from.
//!
//! Each update's expression is expanded into terms
//! `weight × Π(coefficient reads at offsets, parameters)^power × read`, where `read` is one
//! read of a state or auxiliary field at a level and offset, or nothing (an affine term such
//! as a source amplitude `+ s_i`). Stencils distribute their taps: each tap shifts every read
//! of its operand, coefficients included, so `D⁻(b̄ · D⁺p)` becomes terms
//! `w_t w_s ½ b(i+t+e) p(i+t+s)`. Terms equal in their factors and read are merged (weights
//! added); terms of weight exactly zero are dropped.
//!
//! Order: terms keep the order in which they first appear in a depth-first, left-to-right
//! walk of the expression (a stencil's taps in their order); factors are sorted (coefficients
//! by name and offset, then parameters by name). Evaluating the terms in that order gives the
//! update's value up to rounding (the tree evaluates in another order).

use super::{BinOp, Expr, Role, StepDescription, StepError, StepRegion};
use std::collections::HashMap;

/// What a [`Factor`] reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FactorKind {
    /// A coefficient field at an offset from the point.
    Coefficient {
        /// The field.
        name: String,
        /// Offset `[di, dj, dk]`, stencil taps included.
        offset: [i32; 3],
    },
    /// A parameter.
    Param(String),
}

/// A coefficient read or a parameter raised to a (non-zero) power; negative powers come from
/// divisions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Factor {
    /// What is read.
    pub kind: FactorKind,
    /// The power.
    pub power: i32,
}

/// A read of a state or auxiliary field: what a term is linear in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldRead {
    /// The field.
    pub name: String,
    /// Its time level (as in [`Expr::Field`]).
    pub level: i32,
    /// Offset `[di, dj, dk]`, stencil taps included.
    pub offset: [i32; 3],
}

/// `weight × Π factors × read` (or without a read: an affine term).
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// The constant weight (stencil weights, constants).
    pub weight: f64,
    /// Coefficient reads and parameters, sorted.
    pub factors: Vec<Factor>,
    /// The one state or auxiliary read, or `None` for an affine term.
    pub read: Option<FieldRead>,
}

impl Term {
    fn constant(weight: f64) -> Term {
        Term {
            weight,
            factors: vec![],
            read: None,
        }
    }

    fn shifted(&self, by: [i32; 3], weight: f64) -> Term {
        let shift = |o: [i32; 3]| super::expr::add(o, by);
        Term {
            weight: self.weight * weight,
            factors: self
                .factors
                .iter()
                .map(|f| Factor {
                    kind: match &f.kind {
                        FactorKind::Coefficient { name, offset } => FactorKind::Coefficient {
                            name: name.clone(),
                            offset: shift(*offset),
                        },
                        k => k.clone(),
                    },
                    power: f.power,
                })
                .collect(),
            read: self.read.as_ref().map(|r| FieldRead {
                name: r.name.clone(),
                level: r.level,
                offset: shift(r.offset),
            }),
        }
    }
}

/// One update as a sum of [`Term`]s.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearUpdate {
    /// The field written.
    pub target: String,
    /// The level written.
    pub level: i32,
    /// Where it is written.
    pub region: StepRegion,
    /// The reach of the original expression (what [`StepRegion::resolve`] takes), so that the
    /// update covers the same points as the expression it came from.
    pub reach: ([usize; 3], [usize; 3]),
    /// The terms, in order (see the module's documentation).
    pub terms: Vec<Term>,
}

/// Every update of a step description, linearised.
///
/// ```
/// use fdlab_core::step::physics::acoustic_vd;
/// use fdlab_core::step::LinearStep;
/// use fdlab_core::{Boundary, Grid};
/// let g = Grid::unit(&[16, 12]).unwrap();
/// let d = acoustic_vd(&g, 2, Boundary::Periodic).unwrap();
/// let lin = LinearStep::new(&d).unwrap();
/// // 2p − p⁻ and, per axis, 2 taps × 2 averaged b × 2 taps of p (merged where equal).
/// assert!(lin.updates[0].terms.len() > 2);
/// assert!(!lin.is_affine_in("dt"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LinearStep {
    /// The declared parameters, in order.
    pub params: Vec<String>,
    /// The updates, in the description's order.
    pub updates: Vec<LinearUpdate>,
}

impl LinearStep {
    /// Validates `d` and expands every update; errors with [`StepError::Nonlinear`] where an
    /// update multiplies two state/auxiliary reads or divides by one, or divides by a sum.
    pub fn new(d: &StepDescription) -> Result<LinearStep, StepError> {
        d.validate()?;
        let updates = d
            .updates
            .iter()
            .map(|u| {
                Ok(LinearUpdate {
                    target: u.target.clone(),
                    level: u.level,
                    region: u.region,
                    reach: u.expr.reach(),
                    terms: expand(d, &u.target, &u.expr)?,
                })
            })
            .collect::<Result<Vec<_>, StepError>>()?;
        Ok(LinearStep {
            params: d.params.clone(),
            updates,
        })
    }

    /// Whether parameter `name` appears only in affine terms (terms without a field read), so
    /// that the step is linear in it jointly with the fields (a source amplitude), rather than
    /// multiplying reads (a time step).
    pub fn is_affine_in(&self, name: &str) -> bool {
        !self.updates.iter().flat_map(|u| &u.terms).any(|t| {
            t.read.is_some()
                && t.factors
                    .iter()
                    .any(|f| matches!(&f.kind, FactorKind::Param(p) if p == name))
        })
    }
}

/// A polynomial: terms in order of first appearance, equal (factors, read) merged.
#[derive(Default)]
struct Poly {
    terms: Vec<Term>,
    index: HashMap<(Vec<Factor>, Option<FieldRead>), usize>,
}

impl Poly {
    fn push(&mut self, t: Term) {
        let key = (t.factors.clone(), t.read.clone());
        match self.index.get(&key) {
            Some(&n) => self.terms[n].weight += t.weight,
            None => {
                self.index.insert(key, self.terms.len());
                self.terms.push(t);
            }
        }
    }

    fn from_terms(terms: impl IntoIterator<Item = Term>) -> Poly {
        let mut p = Poly::default();
        terms.into_iter().for_each(|t| p.push(t));
        p
    }

    fn finish(self) -> Vec<Term> {
        self.terms.into_iter().filter(|t| t.weight != 0.0).collect()
    }
}

/// The product of two sorted factor lists, powers of equal factors added, zero powers dropped.
fn multiply(a: &[Factor], b: &[Factor]) -> Vec<Factor> {
    let mut out: Vec<Factor> = a.to_vec();
    for f in b {
        match out.iter_mut().find(|g| g.kind == f.kind) {
            Some(g) => g.power += f.power,
            None => out.push(f.clone()),
        }
    }
    out.retain(|f| f.power != 0);
    out.sort();
    out
}

fn nonlinear(target: &str, detail: String) -> StepError {
    StepError::Nonlinear {
        name: target.into(),
        detail,
    }
}

fn expand(d: &StepDescription, target: &str, e: &Expr) -> Result<Vec<Term>, StepError> {
    Ok(poly(d, target, e)?.finish())
}

fn poly(d: &StepDescription, target: &str, e: &Expr) -> Result<Poly, StepError> {
    Ok(match e {
        Expr::Field {
            name,
            level,
            offset,
        } => {
            let decl = d
                .field(name)
                .ok_or_else(|| StepError::UnknownField { name: name.clone() })?;
            Poly::from_terms([match decl.role {
                Role::Coefficient => Term {
                    weight: 1.0,
                    factors: vec![Factor {
                        kind: FactorKind::Coefficient {
                            name: name.clone(),
                            offset: *offset,
                        },
                        power: 1,
                    }],
                    read: None,
                },
                _ => Term {
                    weight: 1.0,
                    factors: vec![],
                    read: Some(FieldRead {
                        name: name.clone(),
                        level: *level,
                        offset: *offset,
                    }),
                },
            }])
        }
        Expr::Const(c) => Poly::from_terms([Term::constant(*c)]),
        Expr::Param(p) => Poly::from_terms([Term {
            weight: 1.0,
            factors: vec![Factor {
                kind: FactorKind::Param(p.clone()),
                power: 1,
            }],
            read: None,
        }]),
        Expr::Neg(a) => {
            let a = poly(d, target, a)?;
            Poly::from_terms(a.terms.into_iter().map(|t| Term {
                weight: -t.weight,
                ..t
            }))
        }
        Expr::Bin(op, a, b) => {
            let (a, b) = (poly(d, target, a)?, poly(d, target, b)?);
            match op {
                BinOp::Add => Poly::from_terms(a.terms.into_iter().chain(b.terms)),
                BinOp::Sub => {
                    Poly::from_terms(a.terms.into_iter().chain(b.terms.into_iter().map(|t| Term {
                        weight: -t.weight,
                        ..t
                    })))
                }
                BinOp::Mul => product(target, &a.terms, &b.terms)?,
                BinOp::Div => {
                    let inv = inverse(target, b.finish())?;
                    product(target, &a.terms, &[inv])?
                }
            }
        }
        Expr::Diff(df) => {
            let inner = poly(d, target, &df.expr)?;
            let mut out = Poly::default();
            for tap in df.stencil.taps() {
                for t in &inner.terms {
                    out.push(t.shifted(tap.offset, tap.weight));
                }
            }
            out
        }
    })
}

fn product(target: &str, a: &[Term], b: &[Term]) -> Result<Poly, StepError> {
    let mut out = Poly::default();
    for x in a {
        for y in b {
            let read = match (&x.read, &y.read) {
                (Some(r), Some(s)) => {
                    return Err(nonlinear(
                        target,
                        format!(
                            "it multiplies reads of '{}' and '{}'; make the update linear in \
                             the state and auxiliary fields (declare one of them a \
                             coefficient field)",
                            r.name, s.name
                        ),
                    ))
                }
                (r, s) => r.clone().or_else(|| s.clone()),
            };
            out.push(Term {
                weight: x.weight * y.weight,
                factors: multiply(&x.factors, &y.factors),
                read,
            });
        }
    }
    Ok(out)
}

/// `1 / t` for a single term without a field read.
fn inverse(target: &str, b: Vec<Term>) -> Result<Term, StepError> {
    if let Some(r) = b.iter().find_map(|t| t.read.as_ref()) {
        return Err(nonlinear(
            target,
            format!(
                "it divides by an expression that reads '{}'; divide only by constants, \
                 parameters and coefficient fields",
                r.name
            ),
        ));
    }
    match &b[..] {
        [] => Err(nonlinear(
            target,
            "it divides by zero; remove the division".into(),
        )),
        [t] => Ok(Term {
            weight: 1.0 / t.weight,
            factors: t
                .factors
                .iter()
                .map(|f| Factor {
                    kind: f.kind.clone(),
                    power: -f.power,
                })
                .collect(),
            read: None,
        }),
        _ => Err(nonlinear(
            target,
            format!(
                "it divides by a sum of {} terms of constants, parameters and coefficients; \
                 store the quotient in a coefficient field (or multiply by a parameter \
                 holding the reciprocal)",
                b.len()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::{FieldDecl, Update};
    use crate::{Boundary, Stencil};

    fn desc(e: Expr) -> StepDescription {
        StepDescription {
            dim: 1,
            boundary: Boundary::Periodic,
            fields: vec![
                FieldDecl::state("u", 1),
                FieldDecl::coefficient("c"),
                FieldDecl::auxiliary("q"),
            ],
            params: vec!["dt".into(), "s".into()],
            updates: vec![Update::new("u", 1, e)],
        }
    }

    fn u() -> Expr {
        Expr::field("u")
    }

    fn c() -> Expr {
        Expr::field("c")
    }

    #[test]
    fn a_stencil_of_a_product_shifts_the_coefficient_with_the_field() {
        let s = Stencil::custom(&[([-1, 0, 0], 2.0), ([1, 0, 0], 3.0)]).unwrap();
        let e = (c() * u()).diff_lap(s) * Expr::param("dt") + Expr::param("s");
        let lin = LinearStep::new(&desc(e)).unwrap();
        let t = &lin.updates[0].terms;
        assert_eq!(t.len(), 3);
        for (term, o, w) in [(&t[0], -1, 2.0), (&t[1], 1, 3.0)] {
            assert_eq!(term.weight, w);
            assert_eq!(term.read.as_ref().unwrap().offset, [o, 0, 0]);
            assert_eq!(
                term.factors[0].kind,
                FactorKind::Coefficient {
                    name: "c".into(),
                    offset: [o, 0, 0]
                }
            );
            assert_eq!(term.factors[1].kind, FactorKind::Param("dt".into()));
        }
        assert!(t[2].read.is_none());
        assert!(lin.is_affine_in("s") && !lin.is_affine_in("dt"));
    }

    #[test]
    fn equal_terms_merge_and_cancel() {
        let e = Expr::Const(2.0) * u() - u() / Expr::Const(2.0) - u() * Expr::Const(1.5);
        let lin = LinearStep::new(&desc(e)).unwrap();
        assert!(lin.updates[0].terms.is_empty());
        let e = u() / (c() * Expr::param("dt")) + u() * c();
        let t = &LinearStep::new(&desc(e)).unwrap().updates[0].terms;
        assert_eq!(t.len(), 2);
        assert_eq!(
            t[0].factors.iter().map(|f| f.power).collect::<Vec<_>>(),
            [-1, -1]
        );
        assert_eq!(t[1].factors.len(), 1);
    }

    #[test]
    fn nonlinear_updates_are_refused() {
        for e in [
            u() * u(),
            u() * Expr::field("q"),
            c() / u(),
            u() / (c() + Expr::param("dt")),
            u() / Expr::Const(0.0),
            (u() + c()) * (Expr::field("q") - c()),
        ] {
            let err = LinearStep::new(&desc(e.clone())).unwrap_err();
            assert!(
                matches!(&err, StepError::Nonlinear { name, .. } if name == "u"),
                "{e:?}: {err}"
            );
        }
        // Products of coefficients and parameters alone are fine.
        LinearStep::new(&desc(c() * c() / Expr::param("dt") * u())).unwrap();
    }
}
