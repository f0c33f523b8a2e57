//! The `solvers` suite: whole time steps of the heat and wave solvers, timed on the CPU and
//! set beside the copy bandwidth measured in the same run.
//!
//! A step's effective bandwidth counts the bytes a step must move at least: each field the
//! step updates read once and written once, each coefficient field read once
//! ([`fdlab_solvers::Stepper::bytes_per_step`]), over the median time of a step.

use crate::report::Timing;
use crate::runner::CpuRunner;
use fdlab_solvers::case::PrecisionName;
use fdlab_solvers::{cpu_stepper, Case};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;

/// One case of the suite: a solver configuration at a size.
#[derive(Debug, Clone)]
pub struct SolverCase {
    /// Short name, e.g. `heat3d-2nd`.
    pub name: &'static str,
    /// What it runs.
    pub description: &'static str,
    /// The case file's text.
    pub toml: String,
}

/// The `[output]` section a case file needs; the suite only steps, it writes nothing.
const NO_OUTPUT: &str = "[output]\ndir = \"unused\"\nevery = 1000000\n";

/// The suite's cases on an `n`³ grid: the 3-D heat step (7-point Laplacian, periodic,
/// constant diffusivity) and the 3-D wave step (8th order, two velocity layers, CPML).
pub fn solver_cases(n: usize) -> Vec<SolverCase> {
    let half = n as f64 / 2.0;
    // A wide pulse: every value stays a normal number, as in a real run past its first steps.
    let width = n as f64 / 4.0;
    vec![
        SolverCase {
            name: "heat3d-2nd",
            description: "heat step, 7-point Laplacian, periodic, constant diffusivity",
            toml: format!(
                "physics = \"heat\"\nboundary = \"periodic\"\n\
                 [grid]\nshape = [{n}, {n}, {n}]\nspacing = [1.0, 1.0, 1.0]\n\
                 [time]\ncfl = 0.5\nduration = 1.0\n[scheme]\norder = 2\n\
                 [initial.gaussian]\ncenter = [{half}, {half}, {half}]\nwidth = {width}\n\
                 amplitude = 1.0\n\
                 [material]\ndiffusivity = {{ constant = 1.0 }}\n{NO_OUTPUT}"
            ),
        },
        SolverCase {
            name: "wave3d-8th",
            description: "wave step, 8th order, two velocity layers, CPML 10 cells",
            toml: format!(
                "physics = \"wave\"\n\
                 [grid]\nshape = [{n}, {n}, {n}]\nspacing = [1.0, 1.0, 1.0]\n\
                 [time]\ncfl = 0.5\nduration = 1.0\n[scheme]\norder = 8\n\
                 [material.velocity.layered]\ntops = [0.0, {half}]\nvalues = [1.0, 1.5]\n\
                 [[sources]]\nposition = [{half}, {half}, {half}]\nfrequency = 0.05\n\
                 [boundary.cpml]\nthickness = 10\n{NO_OUTPUT}"
            ),
        },
    ]
}

/// One timed solver step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SolverResult {
    /// Always `"solvers"`.
    pub suite: String,
    /// Case name.
    pub case: String,
    /// What the case runs.
    pub description: String,
    /// `"f32"` or `"f64"`.
    pub precision: String,
    /// Grid points per axis.
    pub shape: Vec<usize>,
    /// `"cpu"`.
    pub backend: String,
    /// Time of one step, ms.
    pub time_ms: Timing,
    /// Grid points updated per second (median).
    pub cell_updates_per_s: f64,
    /// Minimum bytes a step moves.
    pub bytes_per_step: usize,
    /// Effective bandwidth: bytes per step over the median step time, GB/s.
    pub gbps: f64,
    /// Copy bandwidth this row is compared with, GB/s (the median of copies paired with the
    /// timed steps).
    pub copy_gbps: f64,
    /// `gbps` as % of `copy_gbps`.
    pub pct_of_copy: f64,
}

/// Runs `case` in `precision` for `reps` timed steps (after one untimed step) on the CPU,
/// pairing each timed step with a copy on `runner`'s buffers just before it.
pub fn run_cpu(
    runner: &CpuRunner,
    case: &SolverCase,
    precision: PrecisionName,
    reps: usize,
) -> Result<SolverResult, fdlab_solvers::Error> {
    let parsed = Case::parse(&case.toml, PathBuf::from(format!("<{}>", case.name)))?;
    let prepared = fdlab_solvers::setup::prepare(&parsed)?;
    let mut stepper = cpu_stepper(&prepared, precision)?;
    stepper.advance(1)?;
    let (mut times, mut copies) = (vec![], vec![]);
    for _ in 0..reps.max(1) {
        copies.push(runner.copy_once_gbps());
        let t = Instant::now();
        stepper.advance(1)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let time_ms = Timing::of(&times);
    let copy_gbps = Timing::of(&copies).median;
    let bytes = stepper.bytes_per_step();
    let gbps = bytes as f64 / (time_ms.median * 1e-3) / 1e9;
    Ok(SolverResult {
        suite: "solvers".into(),
        case: case.name.into(),
        description: case.description.into(),
        precision: match precision {
            PrecisionName::F32 => "f32".into(),
            PrecisionName::F64 => "f64".into(),
        },
        shape: parsed.spec.grid.shape.clone(),
        backend: stepper.backend().into(),
        cell_updates_per_s: stepper.cells() as f64 / (time_ms.median * 1e-3),
        time_ms,
        bytes_per_step: bytes,
        gbps,
        copy_gbps,
        pct_of_copy: 100.0 * gbps / copy_gbps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_parses_and_steps_at_a_small_size() {
        let runner = CpuRunner::new(16 << 20);
        for case in solver_cases(32) {
            for p in [PrecisionName::F32, PrecisionName::F64] {
                let r = run_cpu(&runner, &case, p, 2).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(r.shape, [32, 32, 32]);
                assert!(r.gbps > 0.0 && r.pct_of_copy > 0.0, "{r:?}");
                assert_eq!(r.time_ms.runs, 2);
            }
        }
    }
}
