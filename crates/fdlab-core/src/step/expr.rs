//! Expressions of a step: field reads, constants, parameters, arithmetic and derivative
//! (stencil) applications, possibly on staggered (half-point) locations.

use super::StepError;
use crate::fornberg::fornberg_weights;
use crate::grid::{Axis, Grid};
use crate::stencil::Stencil;
use num_traits::ToPrimitive;

/// Where a staggered operator puts its result along its axis.
///
/// Index `i` of a half-point quantity stands for the position `i + ½`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stagger {
    /// Centred: reads and result on the same points.
    Centred,
    /// From integer points to half points `i + ½` (e.g. `D⁺`): taps at `-r+1 ..= r`.
    Forward,
    /// From half points to integer points `i` (e.g. `D⁻`): taps at `-r ..= r-1`.
    Backward,
}

/// A stencil applied to a sub-expression along one axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// The axis every tap lies on.
    pub axis: Axis,
    /// Centred or staggered, which decides where the result lies.
    pub stagger: Stagger,
    /// The weights (spacing included) and offsets.
    pub stencil: Stencil,
    /// What the stencil is applied to.
    pub expr: Expr,
}

/// Binary arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `a + b`.
    Add,
    /// `a − b`.
    Sub,
    /// `a × b`.
    Mul,
    /// `a ÷ b`.
    Div,
}

impl BinOp {
    /// The C/Rust operator symbol.
    pub fn symbol(self) -> char {
        match self {
            BinOp::Add => '+',
            BinOp::Sub => '-',
            BinOp::Mul => '*',
            BinOp::Div => '/',
        }
    }

    /// Applies the operator.
    #[inline]
    pub fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
        }
    }
}

/// A pointwise expression, evaluated at every point of an update's region.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A declared field at time `level` (0 = n, −1 = n−1, 1 = n+1 once written) and a
    /// constant offset from the point.
    Field {
        /// The field's name.
        name: String,
        /// Time level relative to the current one.
        level: i32,
        /// Offset `[di, dj, dk]`.
        offset: [i32; 3],
    },
    /// A constant.
    Const(f64),
    /// A named parameter, given when the step runs (e.g. the time step).
    Param(String),
    /// `a op b`.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `−a`.
    Neg(Box<Expr>),
    /// A stencil applied to a sub-expression.
    Diff(Box<Diff>),
}

impl Expr {
    /// Field `name` at the current level, at the point itself.
    pub fn field(name: &str) -> Expr {
        Expr::at(name, 0, [0; 3])
    }

    /// Field `name` at `level` and `offset`.
    pub fn at(name: &str, level: i32, offset: [i32; 3]) -> Expr {
        Expr::Field {
            name: name.into(),
            level,
            offset,
        }
    }

    /// A named parameter.
    pub fn param(name: &str) -> Expr {
        Expr::Param(name.into())
    }

    /// `self op other`.
    pub fn bin(self, op: BinOp, other: Expr) -> Expr {
        Expr::Bin(op, Box::new(self), Box::new(other))
    }

    /// A stencil applied to `self`.
    pub fn diff(self, axis: Axis, stagger: Stagger, stencil: Stencil) -> Expr {
        Expr::Diff(Box::new(Diff {
            axis,
            stagger,
            stencil,
            expr: self,
        }))
    }

    /// The first derivative along `axis` at `accuracy`, staggered by `stagger`
    /// (centred: [`Stencil::derivative`]; staggered: Fornberg weights on half points).
    pub fn d1(
        self,
        grid: &Grid,
        axis: Axis,
        stagger: Stagger,
        accuracy: usize,
    ) -> Result<Expr, StepError> {
        let s = match stagger {
            Stagger::Centred => Stencil::derivative(grid, axis, 1, accuracy)?,
            _ => staggered(grid, axis, stagger, 1, accuracy)?,
        };
        Ok(self.diff(axis, stagger, s))
    }

    /// The arithmetic average of two neighbours, onto half points (`Forward`: `(e_i +
    /// e_{i+1})/2` at `i + ½`) or back (`Backward`).
    pub fn average(self, grid: &Grid, axis: Axis, stagger: Stagger) -> Result<Expr, StepError> {
        self.interpolate(grid, axis, stagger, 2)
    }

    /// Interpolation onto half points (or back) of `accuracy` (2 is [`Expr::average`]; 4
    /// is `(−1, 9, 9, −1)/16`), for smooth coefficients.
    pub fn interpolate(
        self,
        grid: &Grid,
        axis: Axis,
        stagger: Stagger,
        accuracy: usize,
    ) -> Result<Expr, StepError> {
        let s = staggered(grid, axis, stagger, 0, accuracy)?;
        Ok(self.diff(axis, stagger, s))
    }

    /// Calls `f` on this expression and every sub-expression, parents first.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Bin(_, a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::Neg(a) => a.walk(f),
            Expr::Diff(d) => d.expr.walk(f),
            _ => {}
        }
    }

    /// Every field read `(name, level, total offset)`, with the offsets of the enclosing
    /// stencils' taps added, in evaluation order (repeats included).
    pub fn reads(&self) -> Vec<(String, i32, [i32; 3])> {
        let mut out = vec![];
        self.reads_at([0; 3], &mut out);
        out
    }

    fn reads_at(&self, at: [i32; 3], out: &mut Vec<(String, i32, [i32; 3])>) {
        match self {
            Expr::Field {
                name,
                level,
                offset,
            } => out.push((name.clone(), *level, add(at, *offset))),
            Expr::Bin(_, a, b) => {
                a.reads_at(at, out);
                b.reads_at(at, out);
            }
            Expr::Neg(a) => a.reads_at(at, out),
            Expr::Diff(d) => {
                for t in d.stencil.taps() {
                    d.expr.reads_at(add(at, t.offset), out);
                }
            }
            Expr::Const(_) | Expr::Param(_) => {}
        }
    }

    /// How far the reads reach below and above the point, per axis.
    pub fn reach(&self) -> ([usize; 3], [usize; 3]) {
        let (mut lo, mut hi) = ([0usize; 3], [0usize; 3]);
        for (_, _, o) in self.reads() {
            for a in 0..3 {
                lo[a] = lo[a].max((-o[a]).max(0) as usize);
                hi[a] = hi[a].max(o[a].max(0) as usize);
            }
        }
        (lo, hi)
    }
}

/// `a + b` component-wise.
pub(crate) fn add(a: [i32; 3], b: [i32; 3]) -> [i32; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

macro_rules! op {
    ($tr:ident, $f:ident, $op:expr) => {
        impl std::ops::$tr for Expr {
            type Output = Expr;
            fn $f(self, rhs: Expr) -> Expr {
                self.bin($op, rhs)
            }
        }
    };
}
op!(Add, add, BinOp::Add);
op!(Sub, sub, BinOp::Sub);
op!(Mul, mul, BinOp::Mul);
op!(Div, div, BinOp::Div);

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::Neg(Box::new(self))
    }
}

/// Staggered weights for derivative `order` (0: interpolation) at even `accuracy`, unit
/// spacing, on the `accuracy` nearest half-offset nodes. Nodes are computed on a doubled
/// integer lattice (positions `2k − 1` about 0) so Fornberg's exact arithmetic applies.
///
/// ```
/// let w = fdlab_core::step::staggered_weights(1, 4).unwrap();
/// assert_eq!(w, vec![1.0 / 24.0, -9.0 / 8.0, 9.0 / 8.0, -1.0 / 24.0]);
/// ```
pub fn staggered_weights(order: usize, accuracy: usize) -> Result<Vec<f64>, StepError> {
    if order > 2 || accuracy < 2 || accuracy % 2 == 1 || accuracy > 16 {
        return Err(StepError::Order { order, accuracy });
    }
    let r = (accuracy / 2) as i64;
    let nodes: Vec<i64> = (-r + 1..=r).map(|k| 2 * k - 1).collect();
    let scale = 2f64.powi(order as i32);
    Ok(fornberg_weights(order, 0, &nodes)
        .iter()
        .map(|w| w.to_f64().unwrap_or(f64::NAN) * scale)
        .collect())
}

/// The staggered stencil along `axis`: `Forward` taps at `-r+1 ..= r`, `Backward` at
/// `-r ..= r-1`, weights divided by `h^order`.
fn staggered(
    grid: &Grid,
    axis: Axis,
    stagger: Stagger,
    order: usize,
    accuracy: usize,
) -> Result<Stencil, StepError> {
    let a = axis.index();
    if a >= grid.dim() {
        return Err(StepError::Axis {
            axis: axis.name(),
            dim: grid.dim(),
        });
    }
    let w = staggered_weights(order, accuracy)?;
    let r = (accuracy / 2) as i32;
    let first = match stagger {
        Stagger::Forward => -r + 1,
        Stagger::Backward => -r,
        Stagger::Centred => return Err(StepError::Order { order, accuracy }),
    };
    let h = grid.spacing()[a].powi(order as i32);
    let taps: Vec<([i32; 3], f64)> = w
        .iter()
        .enumerate()
        .map(|(n, w)| {
            let mut o = [0; 3];
            o[a] = first + n as i32;
            (o, w / h)
        })
        .collect();
    Ok(Stencil::custom(&taps)?)
}
