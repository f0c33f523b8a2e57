//! What a run did: [`Summary`] for the caller, and `summary.json` in the run directory, which
//! covers the whole run — a resumed run adds its segment to those before it.

use crate::atomic;
use crate::case::Case;
use crate::error::{Error, Result};
use crate::startup::Startup;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Steps taken in this run.
    pub steps: u64,
    /// Step reached.
    pub final_step: u64,
    /// Wall time of the stepping and outputs, seconds.
    pub wall_s: f64,
    /// Grid-point updates per second.
    pub cell_updates_per_s: f64,
    /// Effective bandwidth, GB/s (each field read once, each output written once per step).
    pub gbps: f64,
    /// Stopped by a signal (Ctrl-C, SIGTERM, SIGUSR1) or [`crate::request_stop`]; a
    /// checkpoint was written.
    pub interrupted: bool,
    /// The signal that stopped it ([`crate::signals::REQUESTED`] for a stop request), when
    /// `interrupted`.
    pub signal: Option<i32>,
    /// Where the outputs are.
    pub out_dir: PathBuf,
    /// The last checkpoint written, if any.
    pub checkpoint: Option<PathBuf>,
    /// The backend used.
    pub backend: String,
    /// Time steps fused per pass over the grid (temporal blocking; 1 when each step is one
    /// pass).
    pub steps_per_pass: usize,
    /// Seconds from the start of the run to step 1: validation, device, compiling, the
    /// initial field.
    pub setup_s: f64,
    /// Seconds writing what comes after the last step: the pictures (frames, `final.png`,
    /// the GIF), seismograms, probe and monitor files.
    pub outputs_s: f64,
    /// Seconds from the start of the run to its end, everything included.
    pub total_s: f64,
    /// The schedule that ran the steps ([`crate::Stepper::schedule`]): on a GPU the name of
    /// the schedule with every field set, which `fdlab run --schedule` (or the case's
    /// `schedule` key) takes back to run the same kernels.
    pub schedule: String,
    /// Where the time before the first step went.
    pub startup: Startup,
}

impl Summary {
    /// The process exit status for this outcome: 0 when the run reached its end or its
    /// `--stop-at` step, else 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM, as
    /// shells report a process ended by that signal), 130 for a stop request.
    pub fn exit_code(&self) -> i32 {
        match (self.interrupted, self.signal) {
            (false, _) => 0,
            (true, Some(s)) if s > 0 => 128 + s,
            (true, _) => 130,
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} steps (to step {}) in {:.2} s on {}{}: {:.3e} cell updates/s, {:.2} GB/s effective{}; outputs in {}",
            self.steps,
            self.final_step,
            self.wall_s,
            self.backend,
            if self.steps_per_pass > 1 {
                format!(" ({} steps per pass)", self.steps_per_pass)
            } else {
                String::new()
            },
            self.cell_updates_per_s,
            self.gbps,
            match (self.interrupted, self.signal) {
                (true, Some(s)) => format!(", interrupted by {} (checkpoint written)", crate::signals::name(s)),
                (true, None) => ", interrupted (checkpoint written)".into(),
                _ => String::new(),
            },
            self.out_dir.display()
        )?;
        write!(
            f,
            "\n{:.2} s in all: setup {:.2} s, steps and field files {:.2} s, final outputs {:.2} s",
            self.total_s, self.setup_s, self.wall_s, self.outputs_s
        )?;
        let u = &self.startup;
        write!(
            f,
            "\n{:.2} s to the first step: case {:.2} s, coefficients {:.2} s, stepper {:.2} s, \
             kernels {:.2} s, device {:.2} s, run directory {:.2} s, step-0 outputs {:.2} s",
            u.first_step_s,
            u.case_s,
            u.coefficients_s,
            u.stepper_s,
            u.kernels_s,
            u.device_s,
            u.run_dir_s,
            u.initial_outputs_s
        )
    }
}

/// One stretch of a run between a start (or resume) and an end (or stop), as `summary.json`
/// lists them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// The step it started from (0, or the checkpoint's step).
    pub from_step: u64,
    /// The step it reached.
    pub to_step: u64,
    /// Backend that ran it.
    pub backend: String,
    /// The schedule that ran its steps (as [`Summary::schedule`]).
    pub schedule: String,
    /// Time steps fused per pass over the grid.
    pub steps_per_pass: usize,
    /// Seconds of stepping and field files.
    pub wall_s: f64,
    /// Seconds before the first step.
    pub setup_s: f64,
    /// Seconds writing the final outputs.
    pub outputs_s: f64,
    /// Seconds in all.
    pub total_s: f64,
    /// Cell updates per second while stepping.
    pub cell_updates_per_s: f64,
    /// Effective bandwidth while stepping, GB/s.
    pub gbps: f64,
    /// How it ended: `"end"`, `"stop-at"`, or the signal's name.
    pub ended: String,
    /// Where the time before its first step went (absent in the records of older versions).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub startup: Option<Startup>,
}

/// When each seismogram sample was recorded: sample `s` is the field at time `t0 + s·dt`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleTimes {
    /// The file holding the samples.
    pub file: String,
    /// `[receivers, samples]`.
    pub shape: [usize; 2],
    /// Time of sample 0 (one step after the start: each sample is taken after a step).
    pub t0: f64,
    /// Time between samples.
    pub dt: f64,
}

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// fdlab version.
    pub fdlab: String,
    /// The case file.
    pub case: PathBuf,
    /// `heat`, `wave` or `fdtd`.
    pub physics: String,
    /// `f32` or `f64`.
    pub precision: String,
    /// Grid points per axis.
    pub shape: Vec<usize>,
    /// The time step.
    pub dt: f64,
    /// Steps the case asks for.
    pub steps_planned: u64,
    /// Step reached.
    pub final_step: u64,
    /// Simulated time reached.
    pub time: f64,
    /// Whether the run reached the case's end.
    pub complete: bool,
    /// Steps taken, all segments together (the final step, from step 0).
    pub steps: u64,
    /// Seconds of stepping, all segments together.
    pub wall_s: f64,
    /// Cell updates per second over all segments.
    pub cell_updates_per_s: f64,
    /// The last segment's backend.
    pub backend: String,
    /// The last segment's schedule.
    pub schedule: String,
    /// The last segment's steps per pass.
    pub steps_per_pass: usize,
    /// Whether the last segment was stopped by a signal or request (checkpoint written).
    pub interrupted: bool,
    /// Every segment, first to last.
    pub segments: Vec<Segment>,
    /// The seismogram's sample times, when receivers recorded one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seismogram: Option<SampleTimes>,
}

impl RunRecord {
    /// The record of a run whose latest segment `s` ends at `s.final_step`, after the
    /// segments of `earlier` (those that ended at or before this segment's start).
    pub fn new(
        case: &Case,
        dt: f64,
        steps_planned: u64,
        cells: usize,
        earlier: Vec<Segment>,
        s: &Summary,
        seismogram: Option<SampleTimes>,
    ) -> RunRecord {
        let from = s.final_step - s.steps;
        let mut segments: Vec<Segment> =
            earlier.into_iter().filter(|g| g.to_step <= from).collect();
        segments.push(Segment {
            from_step: from,
            to_step: s.final_step,
            backend: s.backend.clone(),
            schedule: s.schedule.clone(),
            steps_per_pass: s.steps_per_pass,
            wall_s: s.wall_s,
            setup_s: s.setup_s,
            outputs_s: s.outputs_s,
            total_s: s.total_s,
            cell_updates_per_s: s.cell_updates_per_s,
            gbps: s.gbps,
            ended: match (s.interrupted, s.signal) {
                (true, Some(sig)) => crate::signals::name(sig),
                (true, None) => "interrupted".into(),
                (false, _) if s.final_step < steps_planned => "stop-at".into(),
                _ => "end".into(),
            },
            startup: Some(s.startup),
        });
        let wall_s: f64 = segments.iter().map(|g| g.wall_s).sum();
        let steps: u64 = segments.iter().map(|g| g.to_step - g.from_step).sum();
        RunRecord {
            fdlab: env!("CARGO_PKG_VERSION").into(),
            case: case.path.clone(),
            physics: format!("{:?}", case.spec.physics).to_lowercase(),
            precision: format!("{:?}", case.spec.precision).to_lowercase(),
            shape: case.spec.grid.shape.clone(),
            dt,
            steps_planned,
            final_step: s.final_step,
            time: s.final_step as f64 * dt,
            complete: s.final_step >= steps_planned,
            steps,
            wall_s,
            cell_updates_per_s: steps as f64 * cells as f64 / wall_s.max(1e-9),
            backend: s.backend.clone(),
            schedule: s.schedule.clone(),
            steps_per_pass: s.steps_per_pass,
            interrupted: s.interrupted,
            segments,
            seismogram,
        }
    }

    /// The segments of the `summary.json` in `dir`, if one is there and readable (a resumed
    /// run continues them); none otherwise.
    pub fn earlier_segments(dir: &Path) -> Vec<Segment> {
        std::fs::read(dir.join("summary.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<RunRecord>(&b).ok())
            .map(|r| r.segments)
            .unwrap_or_default()
    }

    /// Write it as `dir/summary.json` (atomically).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join("summary.json");
        let mut text = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::Invalid(format!("summary.json: {e}")))?;
        text.push(b'\n');
        atomic::write(&path, &text)
    }
}
