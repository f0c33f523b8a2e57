//! The options of `fdlab bench` and the checks every suite makes of them before any work.

use anyhow::{bail, Result};
use fdlab::BackendKind;
use fdlab_core::Precision;
use fdlab_solvers::gpu::schedule::Schedule;
use std::path::PathBuf;

/// `--coefficients`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum, Debug)]
pub enum CoefficientsArg {
    /// Weights as literals in the generated code.
    Immediate,
    /// Weights in `__constant__` memory, as NVIDIA published.
    Constant,
}

/// The options of `fdlab bench`.
pub struct BenchArgs {
    pub backend: BackendKind,
    pub suites: Vec<String>,
    pub size: Option<usize>,
    pub depth: Option<usize>,
    pub only: Vec<String>,
    pub precision: Option<String>,
    pub strategies: Vec<String>,
    pub coefficients: Option<CoefficientsArg>,
    pub reps: Option<usize>,
    pub json: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    /// `--schedule`: the GPU solver schedule (solvers, fdtd and temporal suites).
    pub schedule: Option<Schedule>,
}

/// Refuses `--schedule` for a suite whose cases are not single solver steppers.
pub(crate) fn refuse_schedule(a: &BenchArgs, suite: &str) -> Result<()> {
    if let Some(s) = &a.schedule {
        bail!(
            "--schedule {s} does not apply to --suite {suite}: give it with --suite solvers, \
             fdtd or temporal"
        );
    }
    Ok(())
}

/// Whether a case of `physics` takes `--schedule` (true without one).
pub(crate) fn schedule_fits(a: &BenchArgs, physics: &str) -> bool {
    a.schedule.as_ref().is_none_or(|s| s.family() == physics)
}

/// Refuses `--size n` before any work when the suite's host memory `need` (bytes) exceeds
/// what is available.
pub(crate) fn ensure_host_memory(suite: &str, n: usize, need: u64) -> Result<()> {
    if let Some(free) = fdlab_bench::runner::host_available()
        && need > free
    {
        bail!(
            "--size {n}: the {suite} suite needs about {:.1} GiB, {:.1} GiB available; \
                 give a smaller --size",
            need as f64 / 1073741824.0,
            free as f64 / 1073741824.0
        );
    }
    Ok(())
}

/// The precisions (`--precision`, default both) and timed runs (`--reps`, default 10) of the
/// whole-step suites.
pub(crate) fn precisions_and_reps(a: &BenchArgs) -> Result<(Vec<Precision>, usize)> {
    let precisions = match a.precision.as_deref() {
        None => vec![Precision::F32, Precision::F64],
        Some("f32") => vec![Precision::F32],
        Some("f64") => vec![Precision::F64],
        Some(p) => bail!("unknown precision '{p}'; valid: f32, f64"),
    };
    if a.reps == Some(0) {
        bail!("--reps 0: give at least 1 timed run");
    }
    Ok((precisions, a.reps.unwrap_or(10)))
}

/// The case names of `names` that `--case` keeps (all of them when none is given); a name
/// the suite does not have is an error listing those it has.
pub(crate) fn only_cases<'a>(names: &[&'a str], only: &[String]) -> Result<Vec<&'a str>> {
    if let Some(bad) = only.iter().find(|o| !names.contains(&o.as_str())) {
        bail!("--case {bad}: this suite's cases are {}", names.join(", "));
    }
    Ok(names
        .iter()
        .copied()
        .filter(|n| only.is_empty() || only.iter().any(|o| o == n))
        .collect())
}
