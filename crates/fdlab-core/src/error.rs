//! The one error type of `fdlab-core`.

/// Everything that can go wrong when describing a grid, a field or a stencil.
///
/// Each message says what was wrong and what to do about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A grid size is zero, too large, or the grid has the wrong number of axes.
    #[error("invalid grid size: {detail}")]
    Size {
        /// What was wrong and what to do.
        detail: String,
    },
    /// A grid spacing is not a finite positive number.
    #[error("invalid spacing {value} on axis {axis}: the spacing must be finite and > 0")]
    Spacing {
        /// Axis name (`x`, `y` or `z`).
        axis: char,
        /// The rejected value.
        value: f64,
    },
    /// Two shapes that must agree do not.
    #[error("shape mismatch: expected {expected:?}, got {got:?}; give fields of the grid's shape")]
    Shape {
        /// The shape required.
        expected: Vec<usize>,
        /// The shape given.
        got: Vec<usize>,
    },
    /// A derivative or accuracy order that fdlab cannot build.
    #[error("invalid order: {detail}")]
    Order {
        /// What was wrong and what to do.
        detail: String,
    },
    /// The stencil does not fit in the grid along some axis.
    #[error(
        "stencil of radius {radius} along {axis} is too wide for {n} points with a {boundary} \
         boundary (needs at least {needed}); use a larger grid or a lower accuracy order"
    )]
    StencilTooWide {
        /// Axis name.
        axis: char,
        /// Stencil radius along that axis.
        radius: usize,
        /// Grid points along that axis.
        n: usize,
        /// Points needed.
        needed: usize,
        /// Boundary name.
        boundary: &'static str,
    },
    /// A stencil that is malformed (no taps, non-finite weights, axes the grid lacks).
    #[error("invalid stencil: {detail}")]
    Stencil {
        /// What was wrong and what to do.
        detail: String,
    },
    /// A name (suite, backend, boundary, precision, strategy) that fdlab does not know.
    #[error("unknown {kind} '{name}'; valid {kind}s: {}", valid.join(", "))]
    Unknown {
        /// What kind of name it was.
        kind: &'static str,
        /// The name given.
        name: String,
        /// The names fdlab knows.
        valid: Vec<String>,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
