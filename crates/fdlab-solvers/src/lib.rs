//! Time-dependent solvers for fdlab: heat / diffusion and acoustic waves in 2-D and 3-D, run
//! from TOML case files, with PNG/GIF/NPY/VTI outputs and atomic checkpoints.
//!
//! The physics (coefficients, stability limits, CPML profiles, sources) lives in
//! [`physics`] as plain arrays; a backend implements [`Stepper`] over them. The CPU steppers
//! here use one fused, row-parallel loop per step.
#![warn(missing_docs)]

mod error;
pub mod heat;
pub mod layout;
pub mod physics;
pub mod stepper;
pub mod wave;

pub use error::{Error, Result};
pub use heat::{HeatCpu, HeatSetup};
pub use stepper::Stepper;
pub use wave::{PointSource, WaveBoundary, WaveCpu, WaveSetup};
