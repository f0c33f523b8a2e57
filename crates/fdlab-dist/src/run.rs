//! `fdlab run` on several processes: every rank prepares the case, steps its part, and rank 0
//! writes the outputs and shows the progress.

use crate::decomp::Decomposition;
use crate::error::{Error, Result};
use crate::gpu::GpuPlacement;
use crate::stepper::DistStepper;
use crate::transport::Transport;
use fdlab_core::Precision;
use fdlab_solvers::setup::{prepare, Setup};
use fdlab_solvers::{run_stepper, validate, Case, Role, RunOptions, Summary};

/// The decomposition of a prepared heat or wave setup over `ranks` processes (`dims` given, or
/// chosen when `None`); halos are as wide as the stencil's radius.
pub fn decompose(setup: &Setup, ranks: usize, dims: Option<[usize; 3]>) -> Result<Decomposition> {
    let (n, dim, order, periodic) = match setup {
        Setup::Heat(s) => (s.n, s.dim, s.order, s.periodic),
        Setup::Wave(s) if s.density.is_some() => return Err(Error::density_refused()),
        Setup::Wave(s) => (
            s.n,
            s.dim,
            s.order,
            s.boundary == fdlab_solvers::WaveBoundary::Periodic,
        ),
        _ => {
            return Err(Error::Unsupported(
                "FDTD cases (only heat and wave are decomposed)".into(),
            ))
        }
    };
    Decomposition::new(n, dim, ranks, dims, [periodic; 3], order / 2)
}

/// Run `case` as one rank of a job over `transport`: the grid split over the job's processes
/// (`dims` gives the process grid, or `None` chooses it). Every rank must call it with the same
/// case and options. Rank 0 writes the outputs (the field gathered) and shows the progress.
/// Checkpoints hold the whole grid's state, gathered on rank 0 and written by it as a
/// one-process run writes them; every rank reads the checkpoint it resumes from (on a file
/// system they share) and keeps its block, so a checkpoint resumes on any number of processes.
pub fn run(
    case: &Case,
    opts: &RunOptions,
    transport: Box<dyn Transport>,
    dims: Option<[usize; 3]>,
) -> Result<Summary> {
    run_on(case, opts, transport, dims, None)
}

/// As [`run()`], with each rank's part on the GPU `gpu` names (`None`: on the CPU). On GPUs
/// the grid is split along its last axis (the default process grid there), and checkpoints
/// are a one-GPU run's: written by a split run, they resume on any number of GPUs, one
/// included, and a one-GPU run's resume split.
pub fn run_on(
    case: &Case,
    opts: &RunOptions,
    transport: Box<dyn Transport>,
    dims: Option<[usize; 3]>,
    gpu: Option<GpuPlacement>,
) -> Result<Summary> {
    if case.has_shots() {
        return run_shots(case, opts, transport, dims);
    }
    let started = std::time::Instant::now();
    let (rank, ranks) = (transport.rank(), transport.size());
    // Only rank 0 writes, so only it checks the output directory.
    let prepared = if rank == 0 {
        validate(case, opts)?
    } else {
        prepare(case)?
    };
    let dims = match (gpu, dims) {
        (Some(_), None) => Some(last_axis_split(case.dim(), ranks)),
        _ => dims,
    };
    let d = decompose(&prepared.setup, ranks, dims)?;
    let stepper = match (case.spec.precision, gpu) {
        (Precision::F64, None) => DistStepper::new::<f64>(&prepared.setup, d, transport)?,
        (Precision::F32, None) => DistStepper::new::<f32>(&prepared.setup, d, transport)?,
        (Precision::F64, Some(g)) => DistStepper::on_gpu::<f64>(&prepared.setup, d, transport, g)?,
        (Precision::F32, Some(g)) => DistStepper::on_gpu::<f32>(&prepared.setup, d, transport, g)?,
    };
    let failure = stepper.failure_slot();
    let summary = run_stepper(
        case,
        opts,
        &prepared,
        Box::new(stepper),
        Role { rank, ranks },
        started,
    )?;
    // A gather that failed in the last output leaves its error here.
    if let Some(detail) = failure.lock().ok().and_then(|f| f.clone()) {
        return Err(Error::Transport { rank, detail });
    }
    Ok(summary)
}

/// The process grid that splits `ranks` along the last of `dim` axes (how GPU parts split).
pub fn last_axis_split(dim: usize, ranks: usize) -> [usize; 3] {
    let mut d = [1; 3];
    d[dim - 1] = ranks;
    d
}

/// A case with shots over the job's processes: shots are independent tasks, shot `i` run
/// whole by rank `i mod ranks` on a stepper of its own (no grid is split), each shot's
/// outputs written by the rank that runs it (into the run directory, on a file system the
/// ranks share); rank 0 writes `summary.json` once every rank is done. The outputs are those
/// of the one-process run.
fn run_shots(
    case: &Case,
    opts: &RunOptions,
    mut transport: Box<dyn Transport>,
    dims: Option<[usize; 3]>,
) -> Result<Summary> {
    if let Some(d) = dims {
        return Err(Error::Unsupported(format!(
            "--process-grid {}: a case with shots runs each shot whole on one process (the \
             shots are shared out, not the grid); drop --process-grid",
            d.map(|n| n.to_string()).join("x")
        )));
    }
    let role = Role {
        rank: transport.rank(),
        ranks: transport.size(),
    };
    let mut barrier = || {
        transport
            .barrier()
            .map_err(|e| fdlab_solvers::Error::Invalid(format!("waiting for the other ranks: {e}")))
    };
    Ok(fdlab_solvers::run_shots(case, opts, role, &mut barrier)?)
}
