//! Time-dependent solvers for fdlab: heat / diffusion and acoustic waves in 2-D and 3-D, run
//! from TOML case files, with PNG/GIF/NPY/VTI outputs and atomic checkpoints; and a 3-D
//! Maxwell FDTD solver on a Yee grid in [`fdtd`], also run from case files (`physics = "fdtd"`).
//!
//! The physics (coefficients, stability limits, CPML profiles, sources) lives in
//! [`physics`] as plain arrays; a backend implements [`Stepper`] over them. The CPU steppers
//! here use one fused, row-parallel loop per step.
//!
//! ```no_run
//! let case = fdlab_solvers::Case::load("examples/cases/heat-letters.toml")?;
//! let summary = fdlab_solvers::run(&case, &fdlab_solvers::RunOptions::default())?;
//! println!("{summary}");
//! # Ok::<(), fdlab_solvers::Error>(())
//! ```
#![warn(missing_docs)]
// Stencil loops index several arrays with one offset; iterators would hide that.
#![allow(clippy::needless_range_loop)]

// Its own file name: `atomic.rs` moved to fdlab-output, and its history with it.
#[path = "atomic_writes.rs"]
pub mod atomic;
mod bands;
pub mod case;
mod case_outputs;
pub mod checkpoint;
#[cfg(feature = "testing")]
pub mod conformance;
mod error;
pub mod fdtd;
#[cfg(feature = "testing")]
mod fdtd_check_cases;
mod fdtd_output;
pub mod gpu;
pub mod heat;
mod heat_row;
pub mod hicks;
pub mod layout;
mod par;
pub mod physics;
mod rows;
mod run;
pub mod run_dir;
mod run_options;
mod run_outputs;
pub mod run_shots;
pub mod setup;
pub mod shots_summary;
pub mod signals;
pub mod startup;
pub mod stepper;
pub mod summary;
#[cfg(feature = "testing")]
pub mod temporal_checks;
pub mod wave;
mod wave_row;
pub mod wave_vd;

/// The output writers ([`fdlab_output`]), at the path they had in this crate.
pub use fdlab_output as output;
pub(crate) use fdlab_output::{pictures, writer};

pub use case::Case;
pub use error::{Error, Result};
pub use fdlab_core::BackendKind;
pub use heat::{HeatCoefficients, HeatCpu, HeatSetup};
pub use run::{
    cpu_stepper, cpu_stepper_for, gpu_stepper, gpu_stepper_for, gpu_stepper_scheduled,
    request_stop, run, run_stepper, stepper, stepper_scheduled, validate, Role, RunOptions,
};
pub use run_shots::run_shots;
pub use startup::{BuildTimes, ProcessClock, Startup};
pub use stepper::{PlaneSample, Stepper};
pub use summary::Summary;
pub use wave::{PointSource, ShotPoints, WaveBoundary, WaveCoefficients, WaveCpu, WaveSetup};
