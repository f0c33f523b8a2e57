//! fdlab: finite-difference stencils on the CPU and on NVIDIA GPUs through one API.
//!
//! Pick a [`Backend`] (`auto`, `cpu`, `cuda`), build a [`Plan`] for a set of stencils, and
//! apply it to [`BackendField`]s of that backend. The same code runs on either backend:
//!
//! ```
//! use fdlab::{Axis, Backend, Boundary, Field, Grid, PlanOptions, Stencil};
//! // SAFETY: nothing else runs in this program yet.
//! unsafe { std::env::set_var("FDLAB_BACKEND", "cpu") };
//! let backend = Backend::from_env()?;
//! let grid = Grid::unit(&[32, 32, 32])?;
//! let dy = Stencil::derivative(&grid, Axis::Y, 1, 8)?;
//! let plan = backend.plan::<f64>(&[dy], Boundary::Periodic, &grid, PlanOptions::default())?;
//! let u = backend.upload(&Field::from_fn(&grid, |x| (2.0 * std::f64::consts::PI * x[1]).cos()))?;
//! let mut du = backend.zeros(&grid)?;
//! plan.apply(&u, &mut [&mut du])?;
//! let du = du.to_host()?;
//! assert!(du.at(3, 0, 5).abs() < 1e-8);
//! # Ok::<(), fdlab::Error>(())
//! ```
#![warn(missing_docs)]

mod backend;
mod error;
mod field;
mod plan;

pub use backend::{Backend, BackendKind, BACKEND_ENV};
pub use error::{Error, Result};
pub use fdlab_core::{Axis, Boundary, Field, Grid, Precision, Scalar, Stencil};
pub use fdlab_cuda::{Coefficients, Strategy};
pub use field::{BackendField, Real};
pub use plan::{Plan, PlanOptions};
