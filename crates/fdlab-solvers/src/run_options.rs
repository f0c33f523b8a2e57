//! What a run takes beyond its case file: where it writes, checkpoints, stop step, backend
//! and GPU schedule.

use crate::gpu::schedule::Schedule;
use crate::startup::ProcessClock;
use fdlab_core::BackendKind;
use std::path::PathBuf;

/// Options of [`crate::run()`] beyond the case file.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Write a checkpoint every this many steps.
    pub checkpoint_every: Option<u64>,
    /// Continue from this checkpoint (or directory of checkpoints).
    pub resume: Option<PathBuf>,
    /// Output directory instead of the case's.
    pub out_dir: Option<PathBuf>,
    /// No progress bar.
    pub quiet: bool,
    /// Stop after this step (the run can be resumed later).
    pub stop_at: Option<u64>,
    /// Where to run.
    pub backend: BackendKind,
    /// Replace the outputs of an earlier run in the output directory (without it, a directory
    /// holding another run's files is refused).
    pub overwrite: bool,
    /// The GPU schedule in place of the case file's `schedule` and the device's defaults
    /// (`fdlab run --schedule NAME`); refused for a case of another physics.
    pub schedule: Option<Schedule>,
    /// When the process started and how long reading the case took: `summary.json`'s
    /// `startup` counts from there (without it, from the call to [`crate::run()`]).
    pub clock: Option<ProcessClock>,
}
