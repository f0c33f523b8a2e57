//! fdlab's benchmark: the published GPU finite-difference experiments as suites of cases, run
//! on the CPU or a CUDA GPU next to the copy bandwidth measured in the same run, with JSON
//! output and a roofline plot.
#![warn(missing_docs)]

pub mod analytic;
pub mod check;
pub mod plot;
pub mod report;
pub mod runner;
pub mod solvers;
#[cfg(test)]
mod source_dump;
pub mod suites;
pub mod temporal;
pub mod tune;

pub use report::{BenchResult, Meta, Report, Timing};
pub use runner::{BenchError, CpuRunner, CudaRunner, RunOptions};
pub use suites::{
    cases, check_suite, select, Case, SuiteOptions, Target, FDTD_SUITE, SCALING_SUITE,
    SOLVER_SUITE, SUITES, TEMPORAL_SUITE,
};
