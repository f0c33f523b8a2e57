//! The `fdlab gradient` command as a library call: everything checked before any work
//! ([`prepare`]), then the sweep and its files ([`run`]).

use crate::error::{Error, Result};
use crate::model::Model;
use crate::sweep::{gradient, plan_memory, MemoryPlan, Progress};
use fdlab_output::{read_npy, write_npy, write_vti, Dtype};
use fdlab_solvers::case::Physics;
use fdlab_solvers::setup::Setup;
use fdlab_solvers::Case;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The files a gradient run writes in its directory (and the only ones it replaces).
pub const OUTPUT_FILES: [&str; 6] = [
    "misfit.json",
    "gradient.npy",
    "image.npy",
    "source_gradient.npy",
    "residual.npy",
    "gradient.vti",
];

/// What `fdlab gradient` is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct GradientOptions {
    /// The case file of the model (a wave case).
    pub case: PathBuf,
    /// The folder holding the observed `seismogram.npy` (written by `fdlab run`).
    pub observed: PathBuf,
    /// Where to write; `None`: the case's `[output] dir` joined with `gradient`.
    pub out: Option<PathBuf>,
    /// Checkpoint slots; `None`: every state stored when that fits `memory_gb`, else the
    /// most that fit.
    pub checkpoints: Option<usize>,
    /// Memory budget of the sweep in GB (10⁹ bytes).
    pub memory_gb: f64,
    /// Replace the files of an earlier gradient run in the output directory.
    pub overwrite: bool,
}

/// A validated gradient run: the model, the observed data, the memory plan and the output
/// directory (created, holding no other run's gradient files unless overwriting).
#[derive(Debug, Clone)]
pub struct Job {
    /// The forward model.
    pub model: Model,
    /// The observed traces, receivers × steps.
    pub observed: Vec<Vec<f64>>,
    /// Checkpoints and memory.
    pub memory: MemoryPlan,
    /// The memory budget in bytes.
    pub budget_bytes: u64,
    /// Where the files go.
    pub out_dir: PathBuf,
    /// The case's warnings (what runs but probably not as meant).
    pub warnings: Vec<String>,
}

/// What [`run`] measured and wrote.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Report {
    /// `J = ½ Σ_n Σ_r (d_{n,r} − d^obs_{n,r})²`.
    pub misfit: f64,
    /// Time steps.
    pub steps: usize,
    /// Receivers.
    pub receivers: usize,
    /// Sources.
    pub sources: usize,
    /// Whether the model has a variable density.
    pub variable_density: bool,
    /// Checkpoint slots used.
    pub checkpoints: usize,
    /// Forward steps the reverse sweep recomputed.
    pub forward_steps_recomputed: u64,
    /// `forward_steps_recomputed / steps`.
    pub recompute_factor: f64,
    /// Estimated bytes held by the sweep (checkpoints included).
    pub memory_bytes: u64,
    /// The memory budget in bytes.
    pub memory_budget_bytes: u64,
    /// Bytes of one checkpoint.
    pub checkpoint_bytes: u64,
    /// Largest `|∂J/∂c|`.
    pub max_abs_gradient: f64,
    /// Seconds of the forward run.
    pub forward_seconds: f64,
    /// Seconds of the reverse sweep.
    pub adjoint_seconds: f64,
    /// Seconds of the whole run, writing included.
    pub seconds: f64,
    /// The output directory.
    pub out_dir: PathBuf,
}

/// The observed traces of `dir`'s `seismogram.npy`, checked to be `receivers × steps`.
fn read_observed(dir: &Path, receivers: usize, steps: usize) -> Result<Vec<Vec<f64>>> {
    let path = if dir.is_file() {
        dir.to_path_buf()
    } else {
        dir.join("seismogram.npy")
    };
    if !path.is_file() {
        return Err(Error::ObservedMissing { path });
    }
    let (shape, values) = read_npy(&path)?;
    if shape != [receivers, steps] {
        return Err(Error::ObservedShape {
            path,
            found: shape,
            receivers,
            steps,
        });
    }
    if let Some(index) = values.iter().position(|v| !v.is_finite()) {
        let value = values[index];
        return Err(Error::ObservedNonFinite { path, index, value });
    }
    Ok(values.chunks(steps).map(<[f64]>::to_vec).collect())
}

/// Loads and checks everything before any work: the case (a wave case with receivers), the
/// observed data's shape, the memory plan and the output directory.
pub fn prepare(opts: &GradientOptions) -> Result<Job> {
    if !(opts.memory_gb.is_finite() && opts.memory_gb > 0.0) {
        return Err(Error::Usage(format!(
            "--memory {} is not a positive number of GB; give e.g. --memory 4",
            opts.memory_gb
        )));
    }
    let case = Case::load(&opts.case)?;
    if case.spec.physics != Physics::Wave {
        return Err(Error::NotWave {
            path: opts.case.clone(),
            physics: format!("{:?}", case.spec.physics).to_lowercase(),
        });
    }
    if case.has_shots() {
        return Err(Error::Usage(format!(
            "{}: fdlab gradient takes one shot, and this case lists {} ([[shots]] or              [geometry]); run it for each shot with a case of its own ([[sources]] and              [[receivers]] of that shot, --observed RUN/shots/NNNN) and sum the misfits and              gradients",
            opts.case.display(),
            case.shots().map_or(0, |s| s.len())
        )));
    }
    let prepared = fdlab_solvers::setup::prepare(&case)?;
    let Setup::Wave(setup) = &prepared.setup else {
        return Err(Error::NotWave {
            path: opts.case.clone(),
            physics: "a non-wave setup".into(),
        });
    };
    if setup.receivers.is_empty() {
        return Err(Error::NoReceivers);
    }
    let steps = usize::try_from(prepared.plan.steps)
        .map_err(|_| Error::Usage("too many steps for this machine".into()))?;
    if steps == 0 {
        return Err(Error::Usage(format!(
            "{} runs no step ([time] duration shorter than dt): give a longer duration",
            opts.case.display()
        )));
    }
    let observed = read_observed(&opts.observed, setup.receivers.len(), steps)?;
    let model = Model::new(setup, steps)?;
    let budget_bytes = (opts.memory_gb * 1e9) as u64;
    let memory = plan_memory(&model, opts.checkpoints, budget_bytes)?;
    let out_dir = opts
        .out
        .clone()
        .unwrap_or_else(|| case.resolve(&case.spec.output.dir).join("gradient"));
    if !opts.overwrite {
        let found: Vec<&str> = OUTPUT_FILES
            .iter()
            .copied()
            .filter(|f| out_dir.join(f).exists())
            .collect();
        if !found.is_empty() {
            return Err(Error::OutputExists {
                dir: out_dir,
                files: found.join(", "),
            });
        }
    }
    std::fs::create_dir_all(&out_dir).map_err(|source| Error::Io {
        path: out_dir.clone(),
        source,
    })?;
    Ok(Job {
        model,
        observed,
        memory,
        budget_bytes,
        out_dir,
        warnings: prepared.warnings,
    })
}

/// Runs the sweep of `job` and writes its files (each atomically: a temporary name, then a
/// rename). `progress` is told after each forward and adjoint step.
pub fn run(job: &Job, progress: &mut dyn FnMut(Progress)) -> Result<Report> {
    let t = Instant::now();
    let model = &job.model;
    let s = gradient(model, &job.observed, job.memory.checkpoints, progress)?;
    let setup = model.setup();
    let dir = &job.out_dir;
    let dim = setup.dim;
    // As `fdlab run`'s field files: the grid's shape slowest axis first, x fastest.
    let mut shape: Vec<usize> = setup.n[..dim].to_vec();
    shape.reverse();
    write_npy(&dir.join("gradient.npy"), &shape, &s.velocity_gradient)?;
    write_npy(&dir.join("image.npy"), &shape, &s.image)?;
    let steps = model.steps();
    let flat = |v: &[Vec<f64>]| v.iter().flatten().copied().collect::<Vec<f64>>();
    write_npy(
        &dir.join("source_gradient.npy"),
        &[s.source_gradient.len(), steps],
        &flat(&s.source_gradient),
    )?;
    write_npy(
        &dir.join("residual.npy"),
        &[s.residual.len(), steps],
        &flat(&s.residual),
    )?;
    let mut h = [1.0; 3];
    h[..dim].copy_from_slice(&setup.spacing[..dim]);
    write_vti(
        &dir.join("gradient.vti"),
        setup.n,
        h,
        "velocity_gradient",
        &s.velocity_gradient,
        Dtype::F64,
    )?;
    let max_abs_gradient = s
        .velocity_gradient
        .iter()
        .fold(0.0f64, |m, g| m.max(g.abs()));
    let mut report = Report {
        misfit: s.misfit,
        steps,
        receivers: model.receivers().len(),
        sources: setup.sources.len(),
        variable_density: model.density().is_some(),
        checkpoints: s.checkpoints,
        forward_steps_recomputed: u64::try_from(s.forward_steps).unwrap_or(u64::MAX),
        recompute_factor: s.recompute_factor,
        memory_bytes: job.memory.total_bytes,
        memory_budget_bytes: job.budget_bytes,
        checkpoint_bytes: job.memory.checkpoint_bytes,
        max_abs_gradient,
        forward_seconds: s.forward_seconds,
        adjoint_seconds: s.adjoint_seconds,
        seconds: 0.0,
        out_dir: dir.clone(),
    };
    report.seconds = t.elapsed().as_secs_f64();
    let text = serde_json::to_string_pretty(&report)
        .map_err(|e| Error::Usage(format!("misfit.json: {e}")))?;
    fdlab_output::atomic::write(&dir.join("misfit.json"), text.as_bytes())?;
    Ok(report)
}
