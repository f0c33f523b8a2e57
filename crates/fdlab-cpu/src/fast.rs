//! The fast executor (placeholder: delegates to the reference until written).

use fdlab_core::{Boundary, FieldView, FieldViewMut, Result, Scalar, Stencil};

/// How many threads the fast executor uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Par {
    /// One thread.
    Seq,
    /// Rayon's global pool (all cores).
    #[default]
    Rayon,
}

/// Same contract as [`crate::reference::apply`].
pub fn apply<T: Scalar>(
    stencils: &[Stencil],
    boundary: Boundary,
    input: FieldView<'_, T>,
    outputs: &mut [FieldViewMut<'_, T>],
    _par: Par,
) -> Result<()> {
    crate::reference::apply(stencils, boundary, input, outputs)
}
