//! `fdlab gradient`: the misfit of a wave case against observed data, its velocity and
//! source gradients and its image, through exact discrete adjoints on the CPU
//! (`fdlab_gradient`; the user guide is docs/gradients.md).

use crate::common::{backend_parser, progress_bar};
use fdlab::BackendKind;
use fdlab_gradient::{GradientOptions, Progress};
use std::path::PathBuf;

/// The arguments of `fdlab gradient`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  fdlab run observed.toml --out out/observed
  fdlab gradient model.toml --observed out/observed --out out/gradient
  fdlab gradient model.toml --observed out/observed --checkpoints 20 --overwrite")]
pub struct GradientArgs {
    /// The case file (TOML) of the model: a wave case whose receivers, time step and duration
    /// are those of the observed data.
    #[arg(value_name = "CASE")]
    pub case: PathBuf,
    /// The folder holding the observed seismogram.npy (receivers × steps), as `fdlab run`
    /// of the observed model writes it (or the .npy file itself).
    #[arg(long, value_name = "DIR")]
    pub observed: PathBuf,
    /// Write the outputs here instead of the case's [output] dir joined with `gradient`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Checkpoint slots of the reverse sweep (at least 1; fewer slots, more forward steps
    /// recomputed). Default: every state stored when that fits --memory, else the most that fit.
    #[arg(long, value_name = "N")]
    pub checkpoints: Option<usize>,
    /// Memory budget of the sweep in GB (10^9 bytes): checkpoints, working and adjoint fields
    /// and gradients together.
    #[arg(long, value_name = "GB", default_value_t = 4.0)]
    pub memory: f64,
    /// Replace the files of an earlier gradient run in the output directory; without it a
    /// directory holding any of them is refused before any work.
    #[arg(long)]
    pub overwrite: bool,
    /// Where to run: only the CPU for now (the GPU adjoint is not available yet).
    #[arg(long, value_parser = backend_parser(), default_value_t = BackendKind::Cpu, value_name = "BACKEND")]
    pub backend: BackendKind,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `fdlab gradient`; returns the process exit status: 0 when done, 2 when the inputs do
/// not fit together (a typed error's message on stderr says what to do), 1 for other failures.
pub fn gradient(a: &GradientArgs) -> i32 {
    if a.backend == BackendKind::Cuda {
        eprintln!(
            "error: fdlab gradient runs on the CPU only: the GPU adjoint is not available \
             yet; drop --backend cuda (or give --backend cpu)"
        );
        return 2;
    }
    let opts = GradientOptions {
        case: a.case.clone(),
        observed: a.observed.clone(),
        out: a.out.clone(),
        checkpoints: a.checkpoints,
        memory_gb: a.memory,
        overwrite: a.overwrite,
    };
    let job = match fdlab_gradient::prepare(&opts) {
        Ok(j) => j,
        Err(e) => return fail(&e),
    };
    for w in &job.warnings {
        eprintln!("warning: {w}");
    }
    let steps = job.model.steps() as u64;
    let pb = if a.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        progress_bar(2 * steps)
    };
    pb.set_message("forward");
    let mut tick = |p: Progress| match p {
        Progress::Forward { done, .. } => pb.set_position(done as u64),
        Progress::Adjoint { done, .. } => {
            if done == 1 {
                pb.set_message("adjoint");
            }
            pb.set_position(steps + done as u64)
        }
    };
    let r = fdlab_gradient::run(&job, &mut tick);
    pb.finish_and_clear();
    match r {
        Ok(r) => {
            println!(
                "misfit {:.6e} over {} steps and {} receivers; {} checkpoints, {} forward \
                 steps recomputed ({:.2} per step), {:.1} s; wrote {}",
                r.misfit,
                r.steps,
                r.receivers,
                r.checkpoints,
                r.forward_steps_recomputed,
                r.recompute_factor,
                r.seconds,
                r.out_dir.display()
            );
            0
        }
        Err(e) => fail(&e),
    }
}

fn fail(e: &fdlab_gradient::Error) -> i32 {
    eprintln!("error: {e}");
    e.exit_code()
}
