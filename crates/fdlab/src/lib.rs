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
mod foreign;
mod plan;

pub use backend::{Backend, BackendKind, BACKEND_ENV};
pub use error::{Error, Result};
/// The model's error, inside [`Error::Core`]: its variants, for callers that map them.
pub use fdlab_core::Error as CoreError;
pub use fdlab_core::{
    Axis, Boundary, Field, FieldView, FieldViewMut, Grid, Precision, Scalar, Stencil,
};
/// The CUDA backend's error, inside [`Error::Cuda`]: its variants, for callers that map them.
pub use fdlab_cuda::Error as CudaError;
/// Memory of other libraries given to [`Plan::apply_foreign`], and its checks.
pub use fdlab_cuda::{check_foreign, ForeignField, PlanMeta, FOREIGN_CHECKS};
pub use fdlab_cuda::{Coefficients, Strategy};
pub use field::{BackendField, Real};
pub use foreign::cuda_devices;
pub use plan::{Plan, PlanOptions};

/// The Rust snippets of the repository's README and `docs/` guides, compiled and run as this
/// crate's doc tests so that what users copy keeps building (a README snippet once called
/// `Backend::auto()?` on a function that returns no `Result`). Blocks in other languages are
/// tagged (```sh, ```toml, ```python: the Python ones run under pytest) and skipped here.
#[cfg(doctest)]
mod doc_snippets {
    #[doc = include_str!("../../../README.md")]
    struct Readme;
    #[doc = include_str!("../../../docs/architecture.md")]
    struct Architecture;
    #[doc = include_str!("../../../docs/configuration.md")]
    struct Configuration;
    #[doc = include_str!("../../../docs/conformance.md")]
    struct Conformance;
    #[doc = include_str!("../../../docs/decisions.md")]
    struct Decisions;
    #[doc = include_str!("../../../docs/distributed.md")]
    struct Distributed;
    #[doc = include_str!("../../../docs/fdtd.md")]
    struct Fdtd;
    #[doc = include_str!("../../../docs/fdtd-design.md")]
    struct FdtdDesign;
    #[doc = include_str!("../../../docs/gradients.md")]
    struct Gradients;
    #[doc = include_str!("../../../docs/measuring.md")]
    struct Measuring;
    #[doc = include_str!("../../../docs/performance.md")]
    struct Performance;
    #[doc = include_str!("../../../docs/running.md")]
    struct Running;
    #[doc = include_str!("../../../docs/schedules.md")]
    struct Schedules;
    #[doc = include_str!("../../../docs/solvers.md")]
    struct Solvers;
    #[doc = include_str!("../../../docs/solvers-design.md")]
    struct SolversDesign;
    #[doc = include_str!("../../../docs/step-descriptions.md")]
    struct StepDescriptions;
    #[doc = include_str!("../../../docs/strategies.md")]
    struct Strategies;
}
