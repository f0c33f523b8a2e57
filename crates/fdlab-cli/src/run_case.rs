//! `fdlab run`: one case in this process, or split over the GPUs of this host (`--gpus N`);
//! under an MPI launcher (feature `mpi`) `main` hands the run to `dist` instead.

use crate::run_args::RunArgs;
use anyhow::Result;
use fdlab_solvers::setup::Prepared;
use fdlab_solvers::{BackendKind, Case, Error, ProcessClock, RunOptions};
use std::path::Path;
use std::time::Instant;

/// Runs `fdlab run` and returns the process exit status: 0 for a run that reached its end
/// (or its `--stop-at` step), 128 + the signal's number for one stopped by a signal.
/// `process_start` is when the process started, which `summary.json`'s startup times count
/// from.
pub fn run_case(a: &RunArgs, process_start: Instant) -> Result<i32> {
    if let Some(gpus) = a.gpus {
        return run_on_gpus(a, gpus, process_start);
    }
    if a.split_options_given() {
        return Err(Error::Usage(
            "--exchange and --no-overlap apply to split runs: add --gpus N, or start the run \
             under mpirun"
                .into(),
        )
        .into());
    }
    if a.process_grid.is_some() {
        return Err(Error::Usage(format!(
            "--process-grid splits a run over several parts, and this one has a single part: \
             add --gpus N to split it over the GPUs of this host, or start it under \
             `mpirun -np N`{}",
            if cfg!(feature = "mpi") {
                ""
            } else {
                " with an fdlab built with the mpi feature \
                 (cargo install --path crates/fdlab-cli --features mpi)"
            }
        ))
        .into());
    }
    run_here(a, process_start)
}

/// The case file `a` names, and the run options with the process's clock set.
fn load(a: &RunArgs, process_start: Instant) -> Result<(Case, RunOptions)> {
    let t = Instant::now();
    let case = Case::load(&a.case)?;
    let opts = RunOptions {
        clock: Some(ProcessClock {
            start: process_start,
            case_load_s: t.elapsed().as_secs_f64(),
        }),
        ..a.options()
    };
    Ok((case, opts))
}

/// One case stepped by this process alone (no split): validated only with `--check`.
pub fn run_here(a: &RunArgs, process_start: Instant) -> Result<i32> {
    let (case, opts) = load(a, process_start)?;
    if a.check {
        let p = fdlab_solvers::validate(&case, &opts)?;
        report_check(&check_line(&a.case, &case, &p), &p);
        return Ok(0);
    }
    let s = fdlab_solvers::run(&case, &opts)?;
    println!("{s}");
    if case.has_shots() {
        println!("{}", shots_line(&s.out_dir));
    }
    if let Some(c) = &s.checkpoint {
        println!("last checkpoint: {}", c.display());
    }
    Ok(s.exit_code())
}

/// What `fdlab run --check` prints for a valid case (the split runs add their process grid).
pub fn check_line(path: &Path, case: &Case, p: &Prepared) -> String {
    format!(
        "{}: ok ({:?}, {:?} grid, dt = {:e} (limit {:e}), {} steps{})",
        path.display(),
        case.spec.physics,
        case.spec.grid.shape,
        p.plan.dt,
        p.plan.limit,
        p.plan.steps,
        match p.shots.len() {
            0 => String::new(),
            n => format!(" per shot, {n} shots"),
        }
    )
}

/// The line after a shot run's summary: how many of its shots are complete, from the
/// run's `summary.json`.
pub fn shots_line(dir: &Path) -> String {
    let record = std::fs::read(dir.join("summary.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<fdlab_solvers::shots_summary::ShotsRecord>(&b).ok());
    match record {
        Some(r) => format!(
            "{} of {} shots complete; each shot's outputs in {}/shots/NNNN",
            r.shots_complete,
            r.shots,
            dir.display()
        ),
        None => format!("shot outputs in {}/shots/NNNN", dir.display()),
    }
}

/// Prints the validation line on stdout, then each of the case's warnings on stderr (what
/// runs but probably not as meant), as a run prints them before its first step.
pub fn report_check(line: &str, p: &Prepared) {
    println!("{line}");
    for w in &p.warnings {
        eprintln!("warning: {w}");
    }
}

/// `fdlab run CASE.toml --gpus N`: the grid split along its last axis (or as
/// `--process-grid` says) over N parts, one thread each, part q on GPU q mod (GPUs present):
/// NCCL between distinct GPUs when built with the `nccl` feature, host memory otherwise.
fn run_on_gpus(a: &RunArgs, gpus: usize, process_start: Instant) -> Result<i32> {
    if a.backend == BackendKind::Cpu {
        return Err(Error::Usage(
            "--gpus runs on GPUs: drop --backend cpu (CPU ranks run under mpirun)".into(),
        )
        .into());
    }
    let (case, opts) = load(a, process_start)?;
    if case.has_shots() {
        return Err(Error::Usage(
            "--gpus splits one grid over the GPUs; a case with shots runs each shot whole on \
             one stepper: drop --gpus (under mpirun, the shots are shared out over the ranks)"
                .into(),
        )
        .into());
    }
    let dims = a
        .process_grid
        .or(Some(fdlab_dist::last_axis_split(case.dim(), gpus)));
    if a.check {
        let p = fdlab_solvers::validate(&case, &opts)?;
        fdlab_dist::slab::supported(&p.setup)?;
        let d = fdlab_dist::decompose(&p.setup, gpus, dims)?;
        fdlab_dist::slab::Slab::new(&d, 0, case.dim(), 0)?;
        let line = format!(
            "{}; {gpus} GPU parts, process grid {:?}",
            check_line(&a.case, &case, &p),
            &d.dims()[..case.dim()]
        );
        report_check(&line, &p);
        return Ok(0);
    }
    let s = match fdlab_dist::threads::run_on_gpus_with(&case, &opts, gpus, dims, a.dist_options())
    {
        Ok(s) => s,
        Err(e) => {
            // A part stuck on a failed peer's device-side exchange never returns: end them all.
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    println!("{s} ({gpus} GPU parts)");
    Ok(s.exit_code())
}
