//! The fdlab stencil model: grids, fields, stencils with Fornberg weights, boundaries, errors
//! and error metrics. Every backend builds on these types.
//!
//! ```
//! use fdlab_core::{Axis, Boundary, Grid, Stencil};
//! let grid = Grid::unit(&[64, 64, 64]).unwrap();
//! let dx = Stencil::derivative(&grid, Axis::X, 1, 8).unwrap();
//! let region = Boundary::Periodic.check(&grid, &[dx]).unwrap();
//! assert_eq!(region.len(), 64 * 64 * 64);
//! ```
#![warn(missing_docs)]

mod backend_kind;
mod boundary;
pub mod config;
pub mod conformance;
mod error;
mod field;
pub mod fornberg;
mod grid;
mod metrics;
mod scalar;
mod stencil;
pub mod step;

pub use backend_kind::{BackendKind, UnknownBackend};
pub use boundary::Boundary;
pub use error::{Error, Result};
pub use field::{Field, FieldView, FieldViewMut};
pub use fornberg::{central_weights, fornberg_weights};
pub use grid::{Axis, Grid, Region, AXIS_NAMES, MAX_POINTS};
pub use metrics::{compare, error_vs_fn, max_abs, ErrorStats, Mismatch};
pub use scalar::{Precision, Scalar};
pub use stencil::{Stencil, StencilKind, Tap};
