//! Checks on a [`StepDescription`] before any work: names, levels, dimensions, where each
//! sub-expression lies (integer or half points) and whether the reads fit the grid.

use super::expr::{Diff, Expr, Stagger};
use super::{Role, StepDescription};
use crate::boundary::Boundary;
use crate::grid::{Grid, AXIS_NAMES};

/// What is wrong with a step description.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StepError {
    /// A field name that is not declared.
    #[error("field '{name}' is not declared; declare it in `fields`")]
    UnknownField {
        /// The name used.
        name: String,
    },
    /// A parameter name that is not declared.
    #[error("parameter '{name}' is not declared; add it to `params`")]
    UnknownParam {
        /// The name used.
        name: String,
    },
    /// A name that is not a C identifier or is declared twice.
    #[error("name '{name}' {why}")]
    BadName {
        /// The name.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A read or write of a time level the field does not have at that point.
    #[error("field '{name}' has no level {level} here: {why}")]
    Level {
        /// The field.
        name: String,
        /// The level asked for.
        level: i32,
        /// What levels are allowed.
        why: String,
    },
    /// An offset or stencil along an axis the description does not have.
    #[error("axis {axis} used, but the step has {dim} dimension(s)")]
    Axis {
        /// Axis name.
        axis: char,
        /// The step's dimension.
        dim: usize,
    },
    /// A staggered operator applied to something on the wrong points, or operands on
    /// different points.
    #[error("staggering along {axis}: {detail}")]
    Stagger {
        /// Axis name.
        axis: char,
        /// What was wrong and what to do.
        detail: String,
    },
    /// An update that reads its own target at another point (the result would depend on
    /// the order in which points are computed).
    #[error("update of '{name}' reads it at offset {offset:?}; only offset 0 may be read")]
    SelfRead {
        /// The field.
        name: String,
        /// The offending offset.
        offset: [i32; 3],
    },
    /// A derivative or accuracy order the staggered weights do not cover.
    #[error("staggered derivative order {order} at accuracy {accuracy} is not supported; use order 0 to 2 and an even accuracy from 2 to 16")]
    Order {
        /// Derivative order.
        order: usize,
        /// Accuracy order.
        accuracy: usize,
    },
    /// The reads reach further than the grid allows.
    #[error("reads reach {reach} points along {axis} on a grid of {n}; use a larger grid or lower orders")]
    TooWide {
        /// Axis name.
        axis: char,
        /// How far the reads reach.
        reach: usize,
        /// Grid points along the axis.
        n: usize,
    },
    /// Parameter values that do not match the declared parameters.
    #[error("parameters: {detail}")]
    Params {
        /// What was wrong.
        detail: String,
    },
    /// A step that is not in the form a schedule lowers (see [`super::StencilUpdate`]).
    #[error("the step is not a stencil update (u⁺ = Σ a·u[level] + s·Σ centred stencils of u): {detail}; run it with the general step schedule")]
    Form {
        /// Which part is not in the form.
        detail: String,
    },
    /// A step that is not the Yee form the FDTD kernels are lowered from (see
    /// [`super::YeeForm`]).
    #[error("the step is not the Yee form the FDTD kernels take: {part}: {detail}")]
    NotYee {
        /// The part of the step that does not fit (an update, a field, the boundary).
        part: String,
        /// What differs from the form.
        detail: String,
    },
    /// An update that is not linear in the state and auxiliary fields, so it has no
    /// transpose (adjoint) of its own.
    #[error("update of '{name}' is not linear in the state and auxiliary fields: {detail}")]
    Nonlinear {
        /// The field the update writes.
        name: String,
        /// What is nonlinear and what to do.
        detail: String,
    },
    /// An error of the model (grid, stencil, field shapes).
    #[error(transparent)]
    Model(#[from] crate::error::Error),
}

/// Where a value lies along one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Location {
    /// Any (constants, parameters).
    Free,
    /// Integer points `i`.
    Node,
    /// Half points `i + ½`.
    Half,
}

fn ident(name: &str) -> bool {
    let mut c = name.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

pub(super) fn validate(d: &StepDescription) -> Result<(), StepError> {
    if !(1..=3).contains(&d.dim) {
        return Err(StepError::Axis {
            axis: AXIS_NAMES[2],
            dim: d.dim,
        });
    }
    let names = d
        .fields
        .iter()
        .map(|f| &f.name)
        .chain(d.params.iter())
        .collect::<Vec<_>>();
    for (n, name) in names.iter().enumerate() {
        if !ident(name) {
            return Err(StepError::BadName {
                name: name.to_string(),
                why: "is not an identifier (letters, digits, '_', not starting with a digit)",
            });
        }
        if names[..n].contains(name) {
            return Err(StepError::BadName {
                name: name.to_string(),
                why: "is declared twice",
            });
        }
    }
    for f in &d.fields {
        if f.role == (Role::State { levels: 0 }) {
            return Err(StepError::Level {
                name: f.name.clone(),
                level: 0,
                why: "a state field keeps at least one level".into(),
            });
        }
    }
    // Levels written so far: n+1 of a state field becomes readable after its update.
    let mut written: Vec<(String, i32)> = vec![];
    for u in &d.updates {
        let decl = d.field(&u.target).ok_or_else(|| StepError::UnknownField {
            name: u.target.clone(),
        })?;
        let want = match decl.role {
            Role::State { .. } => 1,
            Role::Auxiliary => 0,
            Role::Coefficient => {
                return Err(StepError::Level {
                    name: u.target.clone(),
                    level: u.level,
                    why: "coefficients are read only".into(),
                });
            }
        };
        if u.level != want {
            return Err(StepError::Level {
                name: u.target.clone(),
                level: u.level,
                why: format!("updates write level {want} of this field"),
            });
        }
        check_reads(d, &u.expr, &written)?;
        for (name, level, offset) in u.expr.reads() {
            if name == u.target && level == u.level && offset != [0; 3] {
                return Err(StepError::SelfRead { name, offset });
            }
        }
        let loc = location(d, &u.expr)?;
        for (a, l) in loc.iter().enumerate().take(d.dim) {
            let want = if decl.half[a] {
                Location::Half
            } else {
                Location::Node
            };
            if *l != want && *l != Location::Free {
                return Err(StepError::Stagger {
                    axis: AXIS_NAMES[a],
                    detail: format!(
                        "the update of '{}' lies on {l:?} points but the field is stored on \
                         {want:?} points; move it with a forward or backward operator",
                        u.target
                    ),
                });
            }
        }
        written.push((u.target.clone(), u.level));
    }
    Ok(())
}

fn check_reads(d: &StepDescription, e: &Expr, written: &[(String, i32)]) -> Result<(), StepError> {
    let mut err = None;
    e.walk(&mut |x| {
        if err.is_some() {
            return;
        }
        err = match x {
            Expr::Field {
                name,
                level,
                offset,
            } => read_ok(d, name, *level, *offset, written).err(),
            Expr::Param(p) if !d.params.contains(p) => {
                Some(StepError::UnknownParam { name: p.clone() })
            }
            Expr::Diff(df) => diff_ok(d.dim, df).err(),
            _ => None,
        };
    });
    err.map_or(Ok(()), Err)
}

fn read_ok(
    d: &StepDescription,
    name: &str,
    level: i32,
    offset: [i32; 3],
    written: &[(String, i32)],
) -> Result<(), StepError> {
    let decl = d
        .field(name)
        .ok_or_else(|| StepError::UnknownField { name: name.into() })?;
    if let Some(a) = (d.dim..3).find(|&a| offset[a] != 0) {
        return Err(StepError::Axis {
            axis: AXIS_NAMES[a],
            dim: d.dim,
        });
    }
    let ok = match decl.role {
        Role::State { levels } => {
            (1 - levels as i32..=0).contains(&level)
                || (level == 1 && written.iter().any(|(n, l)| n == name && *l == 1))
        }
        Role::Coefficient | Role::Auxiliary => level == 0,
    };
    if ok {
        Ok(())
    } else {
        Err(StepError::Level {
            name: name.into(),
            level,
            why: match decl.role {
                Role::State { levels } => format!(
                    "levels {} to 0 are kept, and 1 once an earlier update wrote it",
                    1 - levels as i32
                ),
                _ => "only level 0 exists".into(),
            },
        })
    }
}

fn diff_ok(dim: usize, df: &Diff) -> Result<(), StepError> {
    df.stencil.check_axes(&unit_grid(dim))?;
    let a = df.axis.index();
    if a >= dim {
        return Err(StepError::Axis {
            axis: df.axis.name(),
            dim,
        });
    }
    if df.stagger != Stagger::Centred {
        let (lo, hi) = (df.stencil.reach_below(), df.stencil.reach_above());
        let one_axis = (0..3).all(|b| b == a || (lo[b] == 0 && hi[b] == 0));
        // A forward stencil reaches one point further up than down; a backward one, down.
        let shape_ok = match df.stagger {
            Stagger::Forward => hi[a] == lo[a] + 1,
            _ => lo[a] == hi[a] + 1,
        };
        if !one_axis || !shape_ok {
            return Err(StepError::Stagger {
                axis: df.axis.name(),
                detail: format!(
                    "a {:?} operator needs taps on its axis only, one more above than below \
                     (forward) or below (backward); got {}",
                    df.stagger,
                    df.stencil.label()
                ),
            });
        }
    }
    Ok(())
}

fn unit_grid(dim: usize) -> Grid {
    // Only the dimension matters to `check_axes`.
    Grid::unit(&vec![1; dim]).unwrap_or_else(|_| unreachable!("dim is 1..=3, checked first"))
}

/// Where `e` lies along each axis; errors on operands at different points and on staggered
/// operators applied to values already on their target points.
pub(super) fn location(d: &StepDescription, e: &Expr) -> Result<[Location; 3], StepError> {
    let location = |e: &Expr| location(d, e);
    Ok(match e {
        Expr::Field { name, .. } => {
            let half = d.field(name).map_or([false; 3], |f| f.half);
            half.map(|h| if h { Location::Half } else { Location::Node })
        }
        Expr::Const(_) | Expr::Param(_) => [Location::Free; 3],
        Expr::Neg(a) => location(a)?,
        Expr::Bin(_, a, b) => {
            let (la, lb) = (location(a)?, location(b)?);
            let mut out = [Location::Free; 3];
            for ax in 0..3 {
                out[ax] = match (la[ax], lb[ax]) {
                    (Location::Free, l) | (l, Location::Free) => l,
                    (x, y) if x == y => x,
                    _ => {
                        return Err(StepError::Stagger {
                            axis: AXIS_NAMES[ax],
                            detail: "an operation mixes integer-point and half-point values; \
                                     average one of them onto the other's points"
                                .into(),
                        });
                    }
                };
            }
            out
        }
        Expr::Diff(df) => {
            let mut l = location(&df.expr)?;
            let a = df.axis.index();
            let (from, to) = match df.stagger {
                Stagger::Centred => return Ok(l),
                Stagger::Forward => (Location::Node, Location::Half),
                Stagger::Backward => (Location::Half, Location::Node),
            };
            match l[a] {
                x if x == from => l[a] = to,
                // A constant is on every point; the operator still moves it.
                Location::Free => l[a] = to,
                x => {
                    return Err(StepError::Stagger {
                        axis: df.axis.name(),
                        detail: format!(
                            "a {:?} operator reads {from:?} values but its operand lies on \
                             {x:?} points",
                            df.stagger
                        ),
                    });
                }
            }
            l
        }
    })
}

/// Checks that the reads of every update fit `grid` under the boundary.
pub(super) fn fits(d: &StepDescription, grid: &Grid) -> Result<(), StepError> {
    if grid.dim() != d.dim {
        return Err(StepError::Model(crate::error::Error::Size {
            detail: format!(
                "the step is {}-D and the grid {}-D; give a grid of the step's dimension",
                d.dim,
                grid.dim()
            ),
        }));
    }
    let shape = grid.shape();
    for u in &d.updates {
        let (lo, hi) = u.expr.reach();
        for a in 0..d.dim {
            let reach = lo[a].max(hi[a]);
            // One wrap or mirror must bring every read inside the grid.
            let limit = match d.boundary {
                Boundary::Dirichlet => usize::MAX,
                _ => shape[a].saturating_sub(1),
            };
            if reach > limit {
                return Err(StepError::TooWide {
                    axis: AXIS_NAMES[a],
                    reach,
                    n: shape[a],
                });
            }
        }
    }
    Ok(())
}
