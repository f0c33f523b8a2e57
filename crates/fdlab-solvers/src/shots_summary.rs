//! `summary.json` of a run with shots: the start-up paid once, and per shot where its outputs
//! are, whether it is complete and what it took (from the shot's own `summary.json`).

use crate::atomic;
use crate::case::Case;
use crate::error::{Error, Result};
use crate::run_shots::{shot_dir, SHOTS};
use crate::setup::Prepared;
use crate::startup::Startup;
use crate::summary::{RunRecord, SampleTimes, Summary};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One shot in a shot run's `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShotEntry {
    /// The shot's number, from 0 (its order in the case).
    pub shot: usize,
    /// Its directory, relative to the run's: `shots/NNNN`.
    pub dir: String,
    /// The rank of the process that runs it (`shot mod ranks`).
    pub rank: usize,
    /// Whether its run is complete.
    pub complete: bool,
    /// Steps it has taken, all its segments together.
    pub steps: u64,
    /// Seconds of stepping and field files, all its segments together.
    pub wall_s: f64,
    /// Seconds from the shot's start (the stepper's reset) to its first step, in its last
    /// segment.
    pub reset_s: f64,
    /// Cell updates per second over its segments.
    pub cell_updates_per_s: f64,
    /// Its receivers' traces (`seismogram.npy` in its directory), when it has receivers.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub seismogram: Option<SampleTimes>,
}

impl ShotEntry {
    /// Shot `i` of the run in `dir`, run by `rank`, from its `summary.json` (a shot not run
    /// yet: not complete, no steps).
    pub fn read(dir: &Path, i: usize, rank: usize) -> ShotEntry {
        let record = std::fs::read(shot_dir(dir, i).join("summary.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<RunRecord>(&b).ok());
        let reset_s = record
            .as_ref()
            .and_then(|r| r.segments.last())
            .and_then(|g| g.startup)
            .map_or(0.0, |u| u.first_step_s);
        ShotEntry {
            shot: i,
            dir: format!("{SHOTS}/{i:04}"),
            rank,
            complete: record.as_ref().is_some_and(|r| r.complete),
            steps: record.as_ref().map_or(0, |r| r.steps),
            wall_s: record.as_ref().map_or(0.0, |r| r.wall_s),
            reset_s,
            cell_updates_per_s: record.as_ref().map_or(0.0, |r| r.cell_updates_per_s),
            seismogram: record.and_then(|r| r.seismogram),
        }
    }
}

/// One start (or resume) of a shot run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShotsSegment {
    /// Shots this start ran (on rank 0), finished or stopped.
    pub shots_run: usize,
    /// Seconds from the first shot's start to the last one's end (rank 0).
    pub wall_s: f64,
    /// Where the time before the first step went: the case, the coefficients, the stepper
    /// and its kernels, paid once for all shots (rank 0).
    pub startup: Startup,
    /// How it ended: `"end"`, or the signal's name.
    pub ended: String,
}

/// `summary.json` of a shot run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShotsRecord {
    /// fdlab version.
    pub fdlab: String,
    /// The case file.
    pub case: std::path::PathBuf,
    /// `wave`.
    pub physics: String,
    /// `f32` or `f64`.
    pub precision: String,
    /// Grid points per axis.
    pub shape: Vec<usize>,
    /// The time step.
    pub dt: f64,
    /// Steps of each shot.
    pub steps_planned: u64,
    /// Shots in the case.
    pub shots: usize,
    /// Shots complete.
    pub shots_complete: usize,
    /// Whether every shot is complete.
    pub complete: bool,
    /// Processes the last start ran on (shot `i` on rank `i mod ranks`).
    pub ranks: usize,
    /// The last start's backend.
    pub backend: String,
    /// The last start's schedule.
    pub schedule: String,
    /// Every start, first to last.
    pub segments: Vec<ShotsSegment>,
    /// Every shot, in order.
    pub shot_list: Vec<ShotEntry>,
}

impl ShotsRecord {
    /// The record of the shot run in `s.out_dir` after this start (`s`, on `ranks`
    /// processes, `shots_run` of them on rank 0), with `entries` read from the shots'
    /// directories; earlier starts are read from the `summary.json` there.
    pub fn new(
        case: &Case,
        prepared: &Prepared,
        ranks: usize,
        entries: Vec<ShotEntry>,
        s: &Summary,
        shots_run: usize,
    ) -> ShotsRecord {
        let mut segments: Vec<ShotsSegment> = std::fs::read(s.out_dir.join("summary.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<ShotsRecord>(&b).ok())
            .map(|r| r.segments)
            .unwrap_or_default();
        segments.push(ShotsSegment {
            shots_run,
            wall_s: s.wall_s,
            startup: s.startup,
            ended: match (s.interrupted, s.signal) {
                (true, Some(sig)) => crate::signals::name(sig),
                (true, None) => "interrupted".into(),
                _ => "end".into(),
            },
        });
        let done = entries.iter().filter(|e| e.complete).count();
        ShotsRecord {
            fdlab: env!("CARGO_PKG_VERSION").into(),
            case: case.path.clone(),
            physics: format!("{:?}", case.spec.physics).to_lowercase(),
            precision: format!("{:?}", case.spec.precision).to_lowercase(),
            shape: case.spec.grid.shape.clone(),
            dt: prepared.plan.dt,
            steps_planned: prepared.plan.steps,
            shots: entries.len(),
            shots_complete: done,
            complete: done == entries.len(),
            ranks,
            backend: s.backend.clone(),
            schedule: s.schedule.clone(),
            segments,
            shot_list: entries,
        }
    }

    /// Write it as `dir/summary.json` (atomically).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let mut text = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::Invalid(format!("summary.json: {e}")))?;
        text.push(b'\n');
        atomic::write(&dir.join("summary.json"), &text)
    }
}
