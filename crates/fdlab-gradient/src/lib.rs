//! Misfit gradients and images of fdlab wave cases through exact discrete adjoints (CPU).
//!
//! A wave case (constant density with or without a CPML, or variable density) is turned into
//! one step description with its point sources ([`Model`]); the forward run reproduces the
//! case's traces, and the reverse sweep of [`fdlab_cpu::step::AdjointStep`] on a Revolve
//! schedule gives the exact gradient of the least-squares misfit
//! `J = ½ Σ_n Σ_r (d_{n,r} − d^obs_{n,r})²` with respect to the velocity, to each source's
//! wavelet samples, and the zero-lag cross-correlation image ([`gradient`]). [`run`] is the
//! whole `fdlab gradient` command: validation before any work, the sweep, and the output
//! files written atomically. The user guide is `docs/gradients.md`.
//!
//! ```no_run
//! use fdlab_gradient::{prepare, run, GradientOptions};
//! let opts = GradientOptions {
//!     case: "model.toml".into(),
//!     observed: "out/observed".into(),
//!     out: None,
//!     checkpoints: None,
//!     memory_gb: 4.0,
//!     overwrite: false,
//! };
//! let job = prepare(&opts)?;
//! let report = run(&job, &mut |_| {})?;
//! println!("J = {:e}", report.misfit);
//! # Ok::<(), fdlab_gradient::Error>(())
//! ```
#![warn(missing_docs)]

mod error;
mod model;
mod outputs;
mod sweep;

pub use error::{Error, Result};
pub use model::{Model, IMAGE};
pub use outputs::{prepare, run, GradientOptions, Job, Report, OUTPUT_FILES};
pub use sweep::{gradient, misfit, plan_memory, vjp, MemoryPlan, Progress, Sweep, Vjp};
