//! CPU executors for fdlab stencils.
//!
//! - [`mod@reference`]: plain loops, obviously right, slow.
//! - [`fast`]: rayon over blocks of planes, runs of rows, fused AVX2 loops (run-time detected)
//!   with streaming stores and software prefetch; see its module docs.
//! - [`copy`]: the CPU copy reference (a parallel copy with streaming stores) and its measure.
//!
//! Both take the same arguments and write the same points.
#![warn(missing_docs)]
// The SIMD helpers are `unsafe fn`s made of intrinsics, each called only where its CPU feature
// was detected: their bodies stay one unsafe context, as before edition 2024.
#![allow(unsafe_op_in_unsafe_fn)]

pub mod copy;
pub mod fast;
pub mod reference;

pub use fast::Par;

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
