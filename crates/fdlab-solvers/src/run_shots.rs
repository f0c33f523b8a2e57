//! Running a case with shots: one stepper for every shot (its coefficients, device memory and
//! kernels paid once), its state reset to the start between shots, each shot's outputs in
//! `RUN/shots/NNNN/` as a single-shot run would write them, and `RUN/summary.json` over all
//! of them. Shots are independent tasks: a job of several processes gives shot `i` to
//! rank `i mod ranks`, and a resumed run skips the shots already done.

use crate::case::{Case, Shot};
use crate::checkpoint;
use crate::error::{io_err, Error, Result};
use crate::run::{stepper_scheduled, Begin, Role};
use crate::run_dir::{self, CHECKPOINTS};
use crate::run_options::RunOptions;
use crate::setup::Prepared;
use crate::shots_summary::{ShotEntry, ShotsRecord};
use crate::signals;
use crate::startup::{BuildTimes, Marks};
use crate::stepper::Stepper;
use crate::summary::{RunRecord, Summary};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The folder of a shot run that holds one directory per shot.
pub const SHOTS: &str = "shots";

/// The directory of shot `i` in run directory `dir`: `dir/shots/NNNN`.
pub fn shot_dir(dir: &Path, i: usize) -> PathBuf {
    dir.join(SHOTS).join(format!("{i:04}"))
}

/// Where a shot run writes: `--resume RUN` continues `RUN` (which must hold a shot run),
/// else `--out`, else the case's `[output] dir`. Returns the directory and whether the run
/// resumes.
pub fn run_dir(case: &Case, opts: &RunOptions) -> Result<(PathBuf, bool)> {
    let Some(resume) = &opts.resume else {
        let dir = opts
            .out_dir
            .clone()
            .unwrap_or_else(|| case.resolve(&case.spec.output.dir));
        return Ok((dir, false));
    };
    if !resume.join(SHOTS).is_dir() {
        return Err(Error::Usage(format!(
            "--resume {}: no shot run there (no {SHOTS}/ folder); a case with shots resumes \
             from its run directory, e.g. --resume {}",
            resume.display(),
            case.resolve(&case.spec.output.dir).display()
        )));
    }
    if let Some(out) = &opts.out_dir
        && out.canonicalize().ok() != resume.canonicalize().ok()
    {
        return Err(Error::Usage(format!(
            "--resume {} continues the shot run there, but --out asks for {}; drop --out",
            resume.display(),
            out.display()
        )));
    }
    Ok((resume.clone(), true))
}

/// The options [`crate::run_dir::check`] takes for a shot run into `dir`, after refusing a
/// directory that holds an earlier run's outputs on a fresh run without `--overwrite`.
pub(crate) fn dir_options(case: &Case, opts: &RunOptions) -> Result<RunOptions> {
    if opts.stop_at.is_some() {
        return Err(Error::Usage(
            "--stop-at stops a single run at a step; a case with shots runs whole shots: stop \
             it with Ctrl-C, SIGTERM or SIGUSR1 (the shot under way writes a checkpoint) and \
             continue with --resume RUN"
                .into(),
        ));
    }
    let (dir, resume) = run_dir(case, opts)?;
    if !resume && !opts.overwrite {
        let earlier = run_dir::run_outputs(&dir);
        if !earlier.is_empty() {
            return Err(Error::Usage(format!(
                "{} holds the outputs of an earlier run; give --overwrite to replace them, \
                 --out DIR to write elsewhere, or --resume {} to finish its shots",
                dir.display(),
                dir.display()
            )));
        }
    }
    Ok(RunOptions {
        resume: None,
        out_dir: Some(dir),
        // Checked above: what is in the directory is this run's to continue or replace.
        overwrite: true,
        ..opts.clone()
    })
}

/// Where shot `i`'s directory stands.
enum ShotState {
    /// Its run is complete (its `summary.json` says so): skipped.
    Done,
    /// A checkpoint is there: the shot continues from it.
    Stopped(PathBuf),
    /// Nothing usable: the shot runs from its start (removing any partial outputs).
    Fresh,
}

fn shot_state(dir: &Path) -> ShotState {
    let done = std::fs::read(dir.join("summary.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<RunRecord>(&b).ok())
        .is_some_and(|r| r.complete);
    if done {
        return ShotState::Done;
    }
    let root = dir.join(CHECKPOINTS);
    match checkpoint::list(&root) {
        Ok(v) if !v.is_empty() => ShotState::Stopped(root),
        _ => ShotState::Fresh,
    }
}

/// Run every shot of `case` that falls to `role.rank` (shot `i` to rank `i mod ranks`),
/// one after another on one stepper; `barrier` returns when every rank of the job has
/// called it (nothing to wait for alone). Rank 0 writes `summary.json` over all shots once
/// all ranks are done. Returns the summary of this process's work: a stop signal ends it
/// after the shot under way has written a checkpoint.
pub fn run_shots(
    case: &Case,
    opts: &RunOptions,
    role: Role,
    barrier: &mut dyn FnMut() -> Result<()>,
) -> Result<Summary> {
    let started = Instant::now();
    let root = role.rank == 0;
    // Rank 0 checks the run directory (the others would see its shots/ folder appear).
    let prepared = if root {
        crate::run::validate(case, opts)?
    } else {
        crate::setup::prepare(case)?
    };
    if root {
        for w in &prepared.warnings {
            eprintln!("warning: {w}");
        }
    }
    let (dir, _) = run_dir(case, opts)?;
    let shots = case.shots()?;
    let schedule = opts.schedule.as_ref().or(case.spec.schedule.as_ref());
    let mut stepper = stepper_scheduled(&prepared, case.spec.precision, opts.backend, schedule)?;
    let built = Instant::now();
    let build = stepper.build_times();
    // Shots start at rest when the case has no initial field (a zeroing pass on the device
    // or the cores); otherwise from a saved copy of the state at step 0.
    let start_state = match stepper.rewind_to_rest()? {
        true => None,
        false => Some(stepper.save_state()?),
    };
    if root {
        // A fresh run with --overwrite clears the earlier run; a resumed one keeps its shots.
        let claim = RunOptions {
            overwrite: opts.overwrite && opts.resume.is_none(),
            resume: None,
            ..opts.clone()
        };
        if let Some(note) = run_dir::claim(&dir, &claim)? {
            eprintln!("note: {note}");
        }
        let shots_dir = dir.join(SHOTS);
        std::fs::create_dir_all(&shots_dir).map_err(io_err(&shots_dir))?;
    }
    // No rank writes into the run directory before rank 0 has claimed it.
    barrier()?;
    let mut farm = Farm {
        case,
        opts,
        prepared: &prepared,
        shots: &shots,
        dir: &dir,
        role,
        stepper: stepper.as_mut(),
        start_state: start_state.as_deref(),
        first_step: None,
        ran: vec![],
        stopped: None,
    };
    let t0 = Instant::now();
    farm.go()?;
    let wall_s = t0.elapsed().as_secs_f64();
    let startup = Marks {
        clock: opts.clock,
        run: started,
        prepared: prepared.ready,
        prepare_coefficients_s: prepared.coefficients_s,
        stepper: built,
        build,
        looping: t0,
        first_step: farm.first_step.unwrap_or(t0),
    }
    .startup();
    let (ran, stopped) = (farm.ran, farm.stopped);
    barrier()?;
    let steps: u64 = ran.iter().map(|s| s.steps).sum();
    let cells = stepper.cells();
    let last = ran.last();
    let summary = Summary {
        steps,
        final_step: last.map_or(0, |s| s.final_step),
        wall_s,
        cell_updates_per_s: steps as f64 * cells as f64 / wall_s.max(1e-9),
        gbps: steps as f64 * stepper.bytes_per_step() as f64 / wall_s.max(1e-9) / 1e9,
        interrupted: stopped.is_some(),
        signal: stopped,
        out_dir: dir.clone(),
        checkpoint: last.and_then(|s| s.checkpoint.clone()),
        backend: stepper.backend().to_string(),
        steps_per_pass: stepper.steps_per_pass(),
        setup_s: startup.first_step_s,
        outputs_s: ran.iter().map(|s| s.outputs_s).sum(),
        total_s: started.elapsed().as_secs_f64(),
        schedule: stepper.schedule(),
        startup,
    };
    if root {
        let entries = (0..shots.len())
            .map(|i| ShotEntry::read(&dir, i, i % role.ranks))
            .collect();
        ShotsRecord::new(case, &prepared, role.ranks, entries, &summary, ran.len()).write(&dir)?;
    }
    Ok(summary)
}

/// The shots of one process and the stepper that runs them.
struct Farm<'a> {
    case: &'a Case,
    opts: &'a RunOptions,
    prepared: &'a Prepared,
    shots: &'a [Shot],
    dir: &'a Path,
    role: Role,
    stepper: &'a mut dyn Stepper,
    /// The stepper's state at step 0, which every shot starts from.
    /// The state at step 0, or `None` when the stepper rewinds to rest by itself.
    start_state: Option<&'a [crate::stepper::StatePart]>,
    /// When the first shot's first step began.
    first_step: Option<Instant>,
    /// The summaries of the shots this process ran (skipped ones not included).
    ran: Vec<Summary>,
    /// The signal that stopped the run, if one did.
    stopped: Option<i32>,
}

impl Farm<'_> {
    fn go(&mut self) -> Result<()> {
        let n = self.shots.len();
        let alone = self.role.ranks == 1;
        let quiet = self.opts.quiet;
        // Under mpirun a rank's stdout is a terminal and its stderr a pipe.
        let say = |line: String| match (quiet, alone) {
            (true, _) => {}
            (false, true) => eprintln!("{line}"),
            (false, false) => println!("{line}"),
        };
        for i in (self.role.rank..n).step_by(self.role.ranks) {
            // A signal between two shots stops before the next one.
            if signals::stop_requested() {
                self.stopped = Some(match signals::which() {
                    0 => signals::REQUESTED,
                    s => s,
                });
                say(format!(
                    "stopped by {} before shot {i}",
                    signals::name(self.stopped.unwrap_or(0))
                ));
                return Ok(());
            }
            let sdir = shot_dir(self.dir, i);
            let resume = match shot_state(&sdir) {
                ShotState::Done => {
                    say(format!("shot {i} of {n}: done earlier, skipped"));
                    continue;
                }
                ShotState::Stopped(at) => Some(at),
                ShotState::Fresh => None,
            };
            std::fs::create_dir_all(&sdir).map_err(io_err(&sdir))?;
            let t = Instant::now();
            self.stepper.set_points(&self.prepared.shots[i])?;
            if resume.is_none() {
                match self.start_state {
                    Some(start) => self.stepper.restore_state(0, start)?,
                    None => {
                        self.stepper.rewind_to_rest()?;
                    }
                }
            }
            let shot_opts = RunOptions {
                out_dir: resume.is_none().then(|| sdir.clone()),
                resume: resume.clone(),
                overwrite: resume.is_none(),
                quiet: quiet || !alone,
                clock: None,
                ..self.opts.clone()
            };
            let begin = Begin {
                started: t,
                ready: t,
                coefficients_s: 0.0,
                built: Instant::now(),
                build: BuildTimes::default(),
            };
            let one = self.case.shot_case(&self.shots[i]);
            let s = crate::run::run_from(
                &one,
                &shot_opts,
                &self.prepared.plan,
                &mut *self.stepper,
                Role::ALONE,
                begin,
            )?;
            if self.first_step.is_none() {
                self.first_step =
                    Some(t + std::time::Duration::from_secs_f64(s.startup.first_step_s));
            }
            let stopped = s
                .interrupted
                .then(|| s.signal.unwrap_or(signals::REQUESTED));
            say(format!(
                "shot {i} of {n}{}: {} steps in {:.2} s{} -> {}",
                if alone {
                    String::new()
                } else {
                    format!(" (rank {})", self.role.rank)
                },
                s.steps,
                t.elapsed().as_secs_f64(),
                if resume.is_some() { ", resumed" } else { "" },
                sdir.display()
            ));
            self.ran.push(s);
            if stopped.is_some() {
                self.stopped = stopped;
                return Ok(());
            }
        }
        Ok(())
    }
}
