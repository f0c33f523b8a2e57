//! The conformance cases every backend and strategy runs: one test body, shared.
//!
//! A case is a grid, one or more stencils applied to one input (several: a fused gradient) and a
//! boundary. [`check_case`] draws a random input, poisons the outputs with NaN, runs the
//! reference and the implementation under test, and compares every point.

use crate::boundary::Boundary;
use crate::field::{Field, FieldView, FieldViewMut};
use crate::grid::{Axis, Grid};
use crate::metrics::{compare, max_abs, Mismatch};
use crate::scalar::Scalar;
use crate::stencil::Stencil;

/// One conformance case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Human-readable label: shape, stencil, boundary.
    pub label: String,
    /// The grid.
    pub grid: Grid,
    /// Stencils applied to the one input, one output each.
    pub stencils: Vec<Stencil>,
    /// The boundary.
    pub boundary: Boundary,
}

/// Odd shapes per dimension (the 67×45×33 and 9×7×8, and 2-D/1-D equivalents), and
/// shapes whose x size is a multiple of 4 for kernels that load vectors along x.
pub fn shapes() -> Vec<Vec<usize>> {
    vec![
        vec![67],
        vec![9],
        vec![1031],
        vec![36],
        vec![67, 45],
        vec![9, 7],
        vec![36, 9],
        vec![67, 45, 33],
        vec![9, 7, 8],
        // x a multiple of 4: vector-load kernels take their fast path here.
        vec![36, 9, 10],
    ]
}

/// Every stencil the conformance suite applies on `grid`, each as the list of stencils of one
/// operator (a gradient has one per axis).
pub fn operators(grid: &Grid) -> Vec<Vec<Stencil>> {
    let mut ops = vec![];
    for a in 0..grid.dim() {
        let axis = Axis::ALL[a];
        for (m, p) in [(1, 2), (1, 8), (2, 4), (3, 2), (4, 2)] {
            if let Ok(s) = Stencil::derivative(grid, axis, m, p) {
                ops.push(vec![s]);
            }
        }
    }
    for p in [2, 8] {
        if let Ok(s) = Stencil::laplacian(grid, p) {
            ops.push(vec![s]);
        }
    }
    if grid.dim() > 1
        && let Ok(g) = Stencil::gradient(grid, 8)
    {
        ops.push(g);
    }
    // An asymmetric custom stencil touching every axis of the grid.
    let mut taps = vec![([0, 0, 0], 0.5), ([-2, 0, 0], -1.25), ([1, 0, 0], 2.0)];
    if grid.dim() > 1 {
        taps.push(([1, -1, 0], 0.75));
    }
    if grid.dim() > 2 {
        taps.push(([0, 0, 2], -0.375));
    }
    if let Ok(s) = Stencil::custom(&taps) {
        ops.push(vec![s]);
    }
    ops
}

/// All cases: shapes × operators × boundaries, skipping combinations that do not fit (those are
/// the bad-input tests' business).
pub fn cases() -> Vec<Case> {
    let mut out = vec![];
    for shape in shapes() {
        // Unequal spacing per axis catches a spacing applied to the wrong axis.
        let h: Vec<f64> = (0..shape.len()).map(|a| 0.1 + 0.05 * a as f64).collect();
        let grid = Grid::new(&shape, &h).expect("conformance shapes are valid");
        for stencils in operators(&grid) {
            for boundary in Boundary::ALL {
                if boundary.check(&grid, &stencils).is_err() {
                    continue;
                }
                let names: Vec<String> = stencils.iter().map(|s| s.label()).collect();
                out.push(Case {
                    label: format!("{:?} {} {}", shape, names.join("+"), boundary.name()),
                    grid: grid.clone(),
                    stencils: stencils.clone(),
                    boundary,
                });
            }
        }
    }
    out
}

/// An implementation of "apply these stencils to this input": the reference or one under test.
pub type ApplyFn<'a, T> =
    dyn FnMut(&Case, FieldView<'_, T>, &mut [FieldViewMut<'_, T>]) -> Result<(), String> + 'a;

/// Runs one case: random input from `seed`; outputs poisoned with NaN where the stencils
/// compute and with distinct random values elsewhere (what a kernel must leave untouched, so
/// that writing back a wrong old value there is caught, not hidden by NaN = NaN); every point
/// compared.
pub fn check_case<T: Scalar>(
    case: &Case,
    seed: u64,
    reference: &mut ApplyFn<'_, T>,
    under_test: &mut ApplyFn<'_, T>,
) -> Result<(), String> {
    let region = case
        .boundary
        .check(&case.grid, &case.stencils)
        .map_err(|e| e.to_string())?;
    let input = Field::<T>::random(&case.grid, seed);
    let n = case.stencils.len();
    let poisoned = |o: usize| {
        let mut f = Field::<T>::random(&case.grid, seed ^ (0x9e37_79b9_7f4a_7c15 + o as u64));
        let [nx, ny, nz] = case.grid.shape();
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    if region.contains(i, j, k) {
                        f.as_mut_slice()[case.grid.index(i, j, k)] = T::nan();
                    }
                }
            }
        }
        f
    };
    let mut want: Vec<Field<T>> = (0..n).map(poisoned).collect();
    let mut got: Vec<Field<T>> = (0..n).map(poisoned).collect();
    {
        let mut views: Vec<_> = want.iter_mut().map(|f| f.view_mut()).collect();
        reference(case, input.view(), &mut views)?;
    }
    {
        let mut views: Vec<_> = got.iter_mut().map(|f| f.view_mut()).collect();
        under_test(case, input.view(), &mut views)?;
    }
    let amp = max_abs(input.as_slice());
    for (o, s) in case.stencils.iter().enumerate() {
        compare(
            &case.grid,
            region,
            got[o].as_slice(),
            want[o].as_slice(),
            s.abs_sum() * amp,
        )
        .map_err(|m: Mismatch| format!("output {o} ({}): {m}", s.label()))?;
    }
    Ok(())
}
