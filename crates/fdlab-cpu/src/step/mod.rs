//! The reference executor of step descriptions: every update evaluated point by point from
//! its expression tree, in `f64`, rayon over rows. Simple, slow, correct: what the generated
//! kernels are compared with.
//!
//! [`AdjointStep`] transposes steps of linear descriptions and accumulates misfit gradients
//! with respect to their coefficient fields and parameters; [`adjoint`] defines what is
//! transposed and the adjoint state.

use fdlab_core::step::{BinOp, Expr, Role, Slots, StepDescription, StepError, Update};
use fdlab_core::{Boundary, Field, Grid, Region, Scalar};
use rayon::prelude::*;

pub mod adjoint;
mod array;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_acoustic;
#[cfg(test)]
mod tests_adjoint;
#[cfg(test)]
mod tests_array;
#[cfg(test)]
mod tests_gradient;

pub use adjoint::{AdjointStep, Gradient, Reversed};

/// An expression with its fields and parameters looked up once.
enum Node<'a, T> {
    /// A field's values, the offset, and whether reads outside the grid take the nearest
    /// point inside it (a coefficient under a zero halo) instead of the boundary's answer.
    Read(&'a [T], [i32; 3], bool),
    Const(f64),
    Bin(BinOp, Box<Node<'a, T>>, Box<Node<'a, T>>),
    Neg(Box<Node<'a, T>>),
    Diff(Vec<([i32; 3], f64)>, Box<Node<'a, T>>),
}

fn resolve<'a, T: Scalar>(
    d: &StepDescription,
    e: &Expr,
    slots: &'a Slots<Field<T>>,
    params: &[f64],
) -> Result<Node<'a, T>, StepError> {
    Ok(match e {
        Expr::Field {
            name,
            level,
            offset,
        } => {
            let f = slots
                .get(name, *level)
                .ok_or_else(|| StepError::UnknownField { name: name.clone() })?;
            let nearest = d.boundary == Boundary::Dirichlet
                && d.field(name).is_some_and(|f| f.role == Role::Coefficient);
            Node::Read(f.as_slice(), *offset, nearest)
        }
        Expr::Const(c) => Node::Const(*c),
        Expr::Param(p) => {
            let i = d
                .params
                .iter()
                .position(|q| q == p)
                .ok_or_else(|| StepError::UnknownParam { name: p.clone() })?;
            Node::Const(params[i])
        }
        Expr::Bin(op, a, b) => Node::Bin(
            *op,
            Box::new(resolve(d, a, slots, params)?),
            Box::new(resolve(d, b, slots, params)?),
        ),
        Expr::Neg(a) => Node::Neg(Box::new(resolve(d, a, slots, params)?)),
        Expr::Diff(df) => Node::Diff(
            df.stencil
                .taps()
                .iter()
                .map(|t| (t.offset, t.weight))
                .collect(),
            Box::new(resolve(d, &df.expr, slots, params)?),
        ),
    })
}

/// Where a read at `i` along an axis of `n` points lands: the boundary's answer, or with
/// `nearest` the closest point inside the grid.
fn map(bc: Boundary, nearest: bool, i: i64, n: usize) -> Option<usize> {
    if nearest {
        Some(i.clamp(0, n as i64 - 1) as usize)
    } else {
        bc.map(i, n)
    }
}

/// Evaluates `n` at point `p` (possibly outside the grid, for reads inside stencils).
fn eval<T: Scalar>(n: &Node<'_, T>, p: [i64; 3], grid: &Grid, bc: Boundary) -> f64 {
    match n {
        Node::Read(data, o, nearest) => {
            let shape = grid.shape();
            let mut idx = [0usize; 3];
            for a in 0..3 {
                match map(bc, *nearest, p[a] + o[a] as i64, shape[a]) {
                    Some(i) => idx[a] = i,
                    None => return 0.0, // zero outside the grid
                }
            }
            data[grid.index(idx[0], idx[1], idx[2])].as_f64()
        }
        Node::Const(c) => *c,
        Node::Bin(op, a, b) => op.apply(eval(a, p, grid, bc), eval(b, p, grid, bc)),
        Node::Neg(a) => -eval(a, p, grid, bc),
        Node::Diff(taps, e) => taps.iter().fold(0.0, |acc, (o, w)| {
            let q = [p[0] + o[0] as i64, p[1] + o[1] as i64, p[2] + o[2] as i64];
            acc + w * eval(e, q, grid, bc)
        }),
    }
}

/// The value of `node` at every point of `region`, point by point (x fastest).
fn eval_points<T: Scalar>(
    node: &Node<'_, T>,
    region: Region,
    grid: &Grid,
    bc: Boundary,
) -> Vec<f64> {
    let rows: Vec<(usize, usize)> = (region.lo[2]..region.hi[2])
        .flat_map(|k| (region.lo[1]..region.hi[1]).map(move |j| (j, k)))
        .collect();
    rows.par_iter()
        .flat_map_iter(|&(j, k)| {
            (region.lo[0]..region.hi[0])
                .map(move |i| eval(node, [i as i64, j as i64, k as i64], grid, bc))
        })
        .collect()
}

/// Checks that every buffer is there and has `grid`'s shape.
fn check_buffers<T: Scalar>(grid: &Grid, slots: &Slots<Field<T>>) -> Result<(), StepError> {
    for (name, _, b) in slots.each() {
        let b = b.ok_or_else(|| StepError::UnknownField { name: name.into() })?;
        if b.grid().shape() != grid.shape() {
            return Err(StepError::Model(fdlab_core::Error::Shape {
                expected: grid.dims().to_vec(),
                got: b.grid().dims().to_vec(),
            }));
        }
    }
    Ok(())
}

/// Runs one step of `d` on `slots` (fields of `grid`): every update in order over its region,
/// then the state levels rotate (what was written as n+1 is level 0 afterwards). Points
/// outside an update's region keep their values.
///
/// ```
/// use fdlab_core::step::{physics::acoustic_vd, Slots};
/// use fdlab_core::{Boundary, Field, Grid};
/// let g = Grid::unit(&[16, 16]).unwrap();
/// let d = acoustic_vd(&g, 2, Boundary::Dirichlet).unwrap();
/// let mut s = Slots::new(&d, |name, _| Ok::<_, ()>(Field::<f64>::filled(&g, 1.0))).unwrap();
/// fdlab_cpu::step::run_step(&d, &g, &mut s, &[("dt", 1e-3)]).unwrap();
/// ```
pub fn run_step<T: Scalar>(
    d: &StepDescription,
    grid: &Grid,
    slots: &mut Slots<Field<T>>,
    params: &[(&str, f64)],
) -> Result<(), StepError> {
    run_step_with(d, grid, slots, params, false)
}

/// [`run_step`] evaluating point by point (`reference`: the tree of each point on its own, the
/// definition the fast path is tested against) or a box at a time (the fast path).
pub fn run_step_with<T: Scalar>(
    d: &StepDescription,
    grid: &Grid,
    slots: &mut Slots<Field<T>>,
    params: &[(&str, f64)],
    reference: bool,
) -> Result<(), StepError> {
    d.validate_on(grid)?;
    let values = d.param_values(params)?;
    check_buffers(grid, slots)?;
    for u in &d.updates {
        apply_update(d, grid, slots, &values, u, reference)?;
    }
    slots.rotate();
    Ok(())
}

/// Applies one update of `d` (parameter values `values` in declaration order) to `slots`.
fn apply_update<T: Scalar>(
    d: &StepDescription,
    grid: &Grid,
    slots: &mut Slots<Field<T>>,
    values: &[f64],
    u: &Update,
    reference: bool,
) -> Result<(), StepError> {
    let bc = d.boundary;
    let region = u.region.resolve(grid, u.expr.reach());
    let out: Vec<T> = {
        let node = resolve(d, &u.expr, slots, values)?;
        let values = if reference {
            eval_points(&node, region, grid, bc)
        } else {
            array::eval_region(&node, region, grid, bc)
        };
        values.into_iter().map(T::from_f64).collect()
    };
    let target = slots
        .get_mut(&u.target, u.level)
        .ok_or_else(|| StepError::UnknownField {
            name: u.target.clone(),
        })?;
    let data = target.as_mut_slice();
    let mut n = 0;
    for k in region.lo[2]..region.hi[2] {
        for j in region.lo[1]..region.hi[1] {
            for i in region.lo[0]..region.hi[0] {
                data[grid.index(i, j, k)] = out[n];
                n += 1;
            }
        }
    }
    Ok(())
}
