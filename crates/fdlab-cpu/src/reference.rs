//! The reference executor: plain loops, one point at a time, every read through the boundary
//! map. Simple, slow and obviously right; everything else is compared with it.

use crate::check::check_apply;
use fdlab_core::{Boundary, FieldView, FieldViewMut, Result, Scalar, Stencil};

/// Applies each stencil to `input`, writing output `o` with stencil `o`, at every computed point
/// (see [`Boundary::check`]); other points are left untouched. Sums run in `f64` over the taps in
/// order, then round once.
pub fn apply<T: Scalar>(
    stencils: &[Stencil],
    boundary: Boundary,
    input: FieldView<'_, T>,
    outputs: &mut [FieldViewMut<'_, T>],
) -> Result<()> {
    let region = check_apply(stencils, boundary, &input, outputs)?;
    let grid = input.grid();
    let shape = grid.shape();
    let u = input.as_slice();
    for (stencil, out) in stencils.iter().zip(outputs.iter_mut()) {
        let out = out.as_mut_slice();
        for k in region.lo[2]..region.hi[2] {
            for j in region.lo[1]..region.hi[1] {
                for i in region.lo[0]..region.hi[0] {
                    let mut acc = 0.0f64;
                    for tap in stencil.taps() {
                        let p = [i, j, k];
                        let mut idx = [0usize; 3];
                        for a in 0..3 {
                            let q = p[a] as i64 + tap.offset[a] as i64;
                            idx[a] = boundary.map(q, shape[a]).expect(
                                "Boundary::check keeps every tap of a computed point inside",
                            );
                        }
                        acc += tap.weight * u[grid.index(idx[0], idx[1], idx[2])].as_f64();
                    }
                    out[grid.index(i, j, k)] = T::from_f64(acc);
                }
            }
        }
    }
    Ok(())
}
