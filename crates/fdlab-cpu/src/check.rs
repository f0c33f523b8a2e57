//! What every executor checks before it computes.

use fdlab_core::{Boundary, Error, FieldView, FieldViewMut, Region, Result, Scalar, Stencil};

/// Checks what every executor needs: one output per stencil, all fields on the input's grid, and
/// the stencils fit the grid under `boundary`. Returns the region of computed points.
pub fn check_apply<T: Scalar>(
    stencils: &[Stencil],
    boundary: Boundary,
    input: &FieldView<'_, T>,
    outputs: &[FieldViewMut<'_, T>],
) -> Result<Region> {
    if outputs.len() != stencils.len() {
        return Err(Error::Shape {
            expected: vec![stencils.len()],
            got: vec![outputs.len()],
        });
    }
    for out in outputs {
        if out.grid().dims() != input.grid().dims() {
            return Err(Error::Shape {
                expected: input.grid().dims().to_vec(),
                got: out.grid().dims().to_vec(),
            });
        }
    }
    boundary.check(input.grid(), stencils)
}
