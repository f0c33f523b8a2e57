//! The options of `fdlab run`, in one clap struct: what each means is its help text, and every
//! value is checked here, before the case file is read.

use crate::common::backend_parser;
use fdlab_solvers::{BackendKind, RunOptions};
use std::path::PathBuf;

/// The arguments of `fdlab run`.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "\
Examples:
  fdlab run examples/cases/heat-letters.toml --check
  fdlab run examples/cases/wave-layered.toml --checkpoint-every 500
  fdlab run examples/cases/wave-layered.toml --resume examples/cases/out/wave-layered/checkpoints
  fdlab run examples/cases/heat-3d-layered.toml --gpus 2
  mpirun -np 4 fdlab run CASE.toml --process-grid 2x2   (a build with the mpi feature)")]
pub struct RunArgs {
    /// The case file (TOML): physics, grid, time, materials, sources, outputs. Commented
    /// examples of every feature are in examples/cases/.
    #[arg(value_name = "CASE")]
    pub case: PathBuf,
    /// Only validate the case (and the options against it) without running a step: prints
    /// the time step, its stability limit and the step count, then any warnings on stderr.
    #[arg(long)]
    pub check: bool,
    /// Write a checkpoint every N steps (N >= 1) into the output directory's checkpoints/;
    /// the two newest are kept. With or without it, Ctrl-C, SIGTERM and SIGUSR1 write a
    /// checkpoint and stop (exit status 128 + the signal's number: 130 for Ctrl-C), so that
    /// the run can continue with --resume.
    #[arg(long, value_name = "N", value_parser = parse_checkpoint_every)]
    pub checkpoint_every: Option<u64>,
    /// Continue a run from a checkpoint: OUT/checkpoints/step-N, or OUT/checkpoints for the
    /// newest. The run goes on writing in OUT; a checkpoint of another case, precision or
    /// backend is refused. A case with shots resumes from its run directory OUT: finished
    /// shots are skipped, a stopped one continues from its checkpoint.
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Write the outputs here instead of the case's [output] dir.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Stop after this step, writing a checkpoint, so that the run can be resumed later.
    #[arg(long, value_name = "STEP")]
    pub stop_at: Option<u64>,
    /// Where to step the case. Unlike `bench` and `check`, `run` does not read
    /// FDLAB_BACKEND: a case runs where its command line says, so that a job script means the
    /// same in any environment.
    #[arg(long, value_parser = backend_parser(), default_value_t = BackendKind::Auto, value_name = "BACKEND")]
    pub backend: BackendKind,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Replace the files of an earlier run in the output directory; without it a directory
    /// that holds another run's outputs is refused before any step.
    #[arg(long)]
    pub overwrite: bool,
    /// Split the grid over a process grid of A x B (x C) parts along x, y (and z): the MPI
    /// ranks of `mpirun -np N fdlab run` (a build with the mpi feature), or the parts of
    /// --gpus. Chosen from the rank count when absent.
    #[arg(long, value_name = "AxB[xC]", value_parser = parse_process_grid)]
    pub process_grid: Option<[usize; 3]>,
    /// Split the grid over N parts on the GPUs of this host, one thread each (part q on GPU
    /// q mod the GPUs present); halos go through NCCL between distinct GPUs in a build with
    /// the nccl feature, through host memory otherwise. Heat cases, and wave cases without a CPML.
    #[arg(long, value_name = "N", value_parser = parse_gpus)]
    pub gpus: Option<usize>,
    /// The GPU schedule in place of the case file's `schedule` and the device's defaults,
    /// e.g. heat:pass=off or fdtd:fused-tile=32x8x16 (docs/schedules.md lists the fields); the
    /// name summary.json records takes the same run back.
    #[arg(long, value_name = "NAME")]
    pub schedule: Option<fdlab_solvers::gpu::schedule::Schedule>,
    /// How a split run's parts trade halos: `auto` (NCCL between distinct GPUs where the
    /// build has it, else host memory) or `staged` (always through host memory).
    #[arg(long, value_enum, default_value = "auto")]
    pub exchange: ExchangeArg,
    /// Step each part's interior only after its halos arrived, instead of while they travel
    /// (for measuring what the overlap hides). Split runs only.
    #[arg(long)]
    pub no_overlap: bool,
}

/// `--exchange`: the halo path of a split run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExchangeArg {
    /// NCCL between distinct GPUs where the build has it, else host memory.
    Auto,
    /// Always through host memory.
    Staged,
}

impl RunArgs {
    /// The split-run options these arguments give.
    pub fn dist_options(&self) -> fdlab_dist::DistOptions {
        fdlab_dist::DistOptions {
            staged: self.exchange == ExchangeArg::Staged,
            overlap: !self.no_overlap,
        }
    }

    /// Whether `--exchange` or `--no-overlap` was given (they apply to split runs only).
    pub fn split_options_given(&self) -> bool {
        self.exchange != ExchangeArg::Auto || self.no_overlap
    }
}

impl RunArgs {
    /// The options of [`fdlab_solvers::run`] these arguments give.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            checkpoint_every: self.checkpoint_every,
            resume: self.resume.clone(),
            out_dir: self.out.clone(),
            quiet: self.quiet,
            stop_at: self.stop_at,
            backend: self.backend,
            overwrite: self.overwrite,
            schedule: self.schedule.clone(),
            clock: None,
        }
    }
}

/// `--checkpoint-every N`: a checkpoint every 0 steps cannot mean anything, so it is refused
/// rather than read as "never".
fn parse_checkpoint_every(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| "give the number of steps between checkpoints, 1 or more".into())
}

/// `--gpus N`, N >= 1.
fn parse_gpus(s: &str) -> Result<usize, String> {
    s.parse::<usize>()
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| "give a positive count, e.g. 2".into())
}

/// `--process-grid AxB[xC]`: one to three positive counts; the axes not given get 1.
pub fn parse_process_grid(s: &str) -> Result<[usize; 3], String> {
    let parts: Vec<usize> = s
        .split('x')
        .map(|p| p.parse::<usize>().ok().filter(|&n| n > 0))
        .collect::<Option<_>>()
        .filter(|p: &Vec<usize>| (1..=3).contains(&p.len()))
        .ok_or_else(|| "give 1 to 3 positive counts joined by x, e.g. 2x2".to_string())?;
    let mut d = [1; 3];
    d[..parts.len()].copy_from_slice(&parts);
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_grids_fill_the_missing_axes_with_one() {
        assert_eq!(parse_process_grid("2"), Ok([2, 1, 1]));
        assert_eq!(parse_process_grid("2x3"), Ok([2, 3, 1]));
        assert_eq!(parse_process_grid("2x3x4"), Ok([2, 3, 4]));
        for bad in ["", "0x2", "2x", "1x1x1x1", "two"] {
            assert!(parse_process_grid(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn zero_is_refused_for_counts() {
        assert!(parse_checkpoint_every("0").is_err());
        assert_eq!(parse_checkpoint_every("5"), Ok(5));
        assert!(parse_gpus("0").is_err());
        assert!(parse_gpus("-1").is_err());
    }
}
