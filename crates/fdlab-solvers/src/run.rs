//! Running a case: the step loop, its outputs and checkpoints, and clean stops on signals.

use crate::case::{Case, Physics};
use crate::checkpoint::{self, Header};
use crate::error::{Error, Result};
use crate::fdtd::FdtdCpu;
use crate::gpu::schedule::Schedule;
use crate::heat::HeatCpu;
use crate::run_dir::{self, CHECKPOINTS};
pub use crate::run_options::RunOptions;
use crate::run_outputs::Outputs;
use crate::setup::{prepare, Prepared, Setup};
use crate::signals;
use crate::startup::Marks;
use crate::stepper::Stepper;
use crate::summary::{RunRecord, SampleTimes, Summary};
use crate::wave::WaveCpu;
use crate::wave_vd::WaveVdCpu;
use fdlab_core::BackendKind;
use fdlab_core::Precision;
use std::path::PathBuf;
use std::time::Instant;

/// Validate a case without running it: everything `run` checks before step 1.
pub fn validate(case: &Case, opts: &RunOptions) -> Result<Prepared> {
    check_options(opts)?;
    if let Some(s) = &opts.schedule {
        let wanted = match case.spec.physics {
            Physics::Heat => s.heat().map(|_| ()),
            Physics::Wave => s.wave().map(|_| ()),
            Physics::Fdtd => s.fdtd().map(|_| ()),
        };
        wanted.map_err(|e| Error::Usage(format!("--schedule {s}: {e}")))?;
        if matches!(opts.backend, BackendKind::Cpu) {
            return Err(Error::Usage(format!(
                "--schedule {s} sets how the GPU steppers run, and this run is on the CPU \
                 (--backend cpu): drop --schedule, or use --backend cuda"
            )));
        }
    }
    let mut p = prepare(case)?;
    if case.has_shots() {
        run_dir::check(case, &p, &crate::run_shots::dir_options(case, opts)?)?;
    } else {
        run_dir::check(case, &p, opts)?;
    }
    p.ready = Instant::now();
    Ok(p)
}

/// Refuse options that cannot mean anything.
fn check_options(opts: &RunOptions) -> Result<()> {
    if opts.checkpoint_every == Some(0) {
        return Err(Error::Usage(
            "--checkpoint-every 0: give the number of steps between checkpoints (1 or more)".into(),
        ));
    }
    Ok(())
}

/// The GPU stepper for a prepared case.
pub fn gpu_stepper(p: &Prepared, precision: Precision) -> Result<Box<dyn Stepper>> {
    gpu_stepper_for(&p.setup, precision)
}

/// [`gpu_stepper`] for a setup.
pub fn gpu_stepper_for(setup: &Setup, precision: Precision) -> Result<Box<dyn Stepper>> {
    gpu_stepper_scheduled(setup, precision, None)
}

/// [`gpu_stepper_for`] with the fields `schedule` sets in place of the device's defaults; a
/// schedule of another physics is refused.
pub fn gpu_stepper_scheduled(
    setup: &Setup,
    precision: Precision,
    schedule: Option<&Schedule>,
) -> Result<Box<dyn Stepper>> {
    use crate::gpu::{FdtdGpu, HeatGpu, WaveGpu};
    use crate::wave_vd::WaveVdGpu;
    use Precision::{F32, F64};
    Ok(match (setup, precision) {
        (Setup::Heat(s), p) => {
            let h = schedule.map(Schedule::heat).transpose()?;
            match p {
                F64 => Box::new(HeatGpu::<f64>::with_schedule(s, h)?),
                F32 => Box::new(HeatGpu::<f32>::with_schedule(s, h)?),
            }
        }
        (Setup::Wave(s), p) if s.density.is_some() => {
            if let Some(sch) = schedule {
                return Err(Error::Usage(format!(
                    "schedule {sch}: the variable-density step (material.density) runs its \
                     description's kernels and takes no schedule; leave the schedule out"
                )));
            }
            match p {
                F64 => Box::new(WaveVdGpu::<f64>::new(s)?),
                F32 => Box::new(WaveVdGpu::<f32>::new(s)?),
            }
        }
        (Setup::Wave(s), p) => {
            let w = schedule.map(Schedule::wave).transpose()?;
            match p {
                F64 => Box::new(WaveGpu::<f64>::with_schedule(s, w)?),
                F32 => Box::new(WaveGpu::<f32>::with_schedule(s, w)?),
            }
        }
        (Setup::Fdtd(s), p) => {
            let f = schedule.map(Schedule::fdtd).transpose()?;
            match p {
                F64 => Box::new(FdtdGpu::<f64>::with_schedule(s, f)?),
                F32 => Box::new(FdtdGpu::<f32>::with_schedule(s, f)?),
            }
        }
    })
}

/// The stepper `choice` asks for. `Auto` takes the GPU when one is usable, and says on stderr
/// why it falls back to the CPU when a GPU is present but fails.
pub fn stepper(
    p: &Prepared,
    precision: Precision,
    choice: BackendKind,
) -> Result<Box<dyn Stepper>> {
    stepper_scheduled(p, precision, choice, None)
}

/// [`stepper`] with a GPU `schedule` in place of the device's defaults (a CPU stepper has
/// none to take).
pub fn stepper_scheduled(
    p: &Prepared,
    precision: Precision,
    choice: BackendKind,
    schedule: Option<&Schedule>,
) -> Result<Box<dyn Stepper>> {
    let gpu = || gpu_stepper_scheduled(&p.setup, precision, schedule);
    match choice {
        BackendKind::Cpu => cpu_stepper(p, precision),
        BackendKind::Cuda => gpu(),
        BackendKind::Auto => {
            if let Err(why) = crate::gpu::available() {
                if let Some(s) = schedule {
                    eprintln!("note: the schedule {s} is for a GPU, and none is usable ({why}): the CPU runs the case");
                }
                return cpu_stepper(p, precision);
            }
            gpu().or_else(|e| {
                eprintln!("note: running on the CPU; the GPU stepper failed: {e}");
                cpu_stepper(p, precision)
            })
        }
    }
}

/// The CPU stepper for a prepared case.
pub fn cpu_stepper(p: &Prepared, precision: Precision) -> Result<Box<dyn Stepper>> {
    cpu_stepper_for(&p.setup, precision)
}

/// [`cpu_stepper`] for a setup.
pub fn cpu_stepper_for(setup: &Setup, precision: Precision) -> Result<Box<dyn Stepper>> {
    Ok(match (setup, precision) {
        (Setup::Heat(s), Precision::F64) => Box::new(HeatCpu::<f64>::new(s)?),
        (Setup::Heat(s), Precision::F32) => Box::new(HeatCpu::<f32>::new(s)?),
        (Setup::Wave(s), Precision::F64) if s.density.is_some() => {
            Box::new(WaveVdCpu::<f64>::new(s)?)
        }
        (Setup::Wave(s), Precision::F32) if s.density.is_some() => {
            Box::new(WaveVdCpu::<f32>::new(s)?)
        }
        (Setup::Wave(s), Precision::F64) => Box::new(WaveCpu::<f64>::new(s)?),
        (Setup::Wave(s), Precision::F32) => Box::new(WaveCpu::<f32>::new(s)?),
        (Setup::Fdtd(s), Precision::F64) => Box::new(FdtdCpu::<f64>::new(s)?),
        (Setup::Fdtd(s), Precision::F32) => Box::new(FdtdCpu::<f32>::new(s)?),
    })
}

/// Ask a running [`run`] to write a checkpoint and stop (what Ctrl-C, SIGTERM and SIGUSR1
/// do).
pub fn request_stop() {
    signals::request();
}

/// Run a case to its end (or to its `stop_at` step, or to a stop signal), writing its outputs;
/// returns the summary. Validation warnings are printed on stderr. A case with shots runs
/// them one after another ([`crate::run_shots()`]).
pub fn run(case: &Case, opts: &RunOptions) -> Result<Summary> {
    if case.has_shots() {
        return crate::run_shots::run_shots(case, opts, Role::ALONE, &mut || Ok(()));
    }
    let started = Instant::now();
    let prepared = validate(case, opts)?;
    for w in &prepared.warnings {
        eprintln!("warning: {w}");
    }
    let schedule = opts.schedule.as_ref().or(case.spec.schedule.as_ref());
    let stepper = stepper_scheduled(&prepared, case.spec.precision, opts.backend, schedule)?;
    run_stepper(case, opts, &prepared, stepper, Role::ALONE, started)
}

/// Where a run's process stands in a job of several (a decomposed grid, one part per process).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Role {
    /// This process's number, 0 to `ranks − 1`; rank 0 writes the outputs and shows progress.
    pub rank: usize,
    /// Processes in the job.
    pub ranks: usize,
}

impl Role {
    /// A run on its own.
    pub const ALONE: Role = Role { rank: 0, ranks: 1 };
}

/// Run a case with a stepper built by the caller (e.g. one part of a decomposed grid);
/// `started` is when the caller began preparing the run, so that the summary tells the setup
/// (validation, device, compiling, the initial field) from the steps; the stepper is taken to
/// have been built between `prepared.ready` and this call (`summary.json`'s `startup`).
///
/// Every process of a job runs the same loop, so that a stepper whose [`Stepper::field`] is
/// collective is asked for it at the same steps everywhere; only rank 0 writes outputs and shows
/// progress. Checkpoints are collective: every process saves its state at the same steps
/// ([`Stepper::save_state`] of a split stepper gathers the whole state on rank 0), and rank 0
/// writes them; on resume every process reads the checkpoint and restores its part. Stop
/// signals are agreed on through [`Stepper::agree_stop`], so that every process stops at the
/// same step; a stepper that cannot save its state (see [`Stepper::saves_state`]) leaves
/// signals their default action and writes no checkpoint when it stops early.
pub fn run_stepper(
    case: &Case,
    opts: &RunOptions,
    prepared: &Prepared,
    mut stepper: Box<dyn Stepper>,
    role: Role,
    started: Instant,
) -> Result<Summary> {
    let begin = Begin {
        started,
        ready: prepared.ready,
        coefficients_s: prepared.coefficients_s,
        built: Instant::now(),
        build: stepper.build_times(),
    };
    run_from(case, opts, &prepared.plan, stepper.as_mut(), role, begin)
}

/// When a run's parts before its first step began and ended, for `summary.json`'s startup.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Begin {
    /// When the caller began preparing the run.
    pub started: Instant,
    /// When the case was prepared (validated, material fields built).
    pub ready: Instant,
    /// Seconds preparing spent on the material and initial fields.
    pub coefficients_s: f64,
    /// When the stepper was ready.
    pub built: Instant,
    /// What building the stepper cost, by part.
    pub build: crate::startup::BuildTimes,
}

/// [`run_stepper`] on a stepper the caller keeps (a run of several shots steps each with
/// the same one), from the state it is in: step 0, or the checkpoint `opts.resume` names.
pub(crate) fn run_from(
    case: &Case,
    opts: &RunOptions,
    plan: &crate::case::Plan,
    stepper: &mut dyn Stepper,
    role: Role,
    begin: Begin,
) -> Result<Summary> {
    let Begin {
        started,
        built,
        build,
        ..
    } = begin;
    let root = role.rank == 0;
    let dir = run_dir::out_dir(case, opts)?;
    let header = Header {
        version: env!("CARGO_PKG_VERSION").to_string(),
        case_hash: case.hash(),
        precision: format!("{:?}", case.spec.precision).to_lowercase(),
        step: 0,
        time: 0.0,
        backend: stepper.checkpoint_backend().to_string(),
        parts: vec![],
    };
    let mut resume_step = None;
    if let Some(r) = &opts.resume {
        let (cdir, h, parts) = checkpoint::read(r)?;
        checkpoint::check(&cdir, &h, &header)?;
        stepper.restore_state(h.step, &parts)?;
        resume_step = Some(h.step);
    }
    if root && let Some(note) = run_dir::claim(&dir, opts)? {
        eprintln!("note: {note}");
    }
    let earlier = if resume_step.is_some() {
        RunRecord::earlier_segments(&dir)
    } else {
        vec![]
    };
    signals::reset();
    let stops = stepper.saves_state();
    if stops {
        signals::install();
    }
    let setup_s = started.elapsed().as_secs_f64();
    let mut out = Outputs::new(case, &dir, plan.dt, root, resume_step)?;
    let quiet_opts = RunOptions {
        quiet: opts.quiet || !root,
        ..opts.clone()
    };
    let opts = &quiet_opts;
    let mut lp = Loop {
        stepper,
        header,
        dir: dir.clone(),
        plan: plan.steps,
        opts,
        checkpoint: None,
        root,
        stops,
        signal: 0,
        // Under mpirun a rank's stderr is a pipe but its stdout a terminal: draw there.
        bar_on_stdout: role.ranks > 1,
        first_step: None,
    };
    let t0 = Instant::now();
    let start = lp.stepper.step();
    let interrupted = lp.go(&mut out)?;
    // The run's time includes the field files still being written.
    out.files.finish()?;
    let wall = t0.elapsed().as_secs_f64().max(1e-9);
    let startup = Marks {
        clock: opts.clock,
        run: started,
        prepared: begin.ready,
        prepare_coefficients_s: begin.coefficients_s,
        stepper: built,
        build,
        looping: t0,
        first_step: lp.first_step.unwrap_or(t0),
    }
    .startup();
    let t1 = Instant::now();
    if root {
        out.finish(lp.stepper)?;
    }
    let outputs_s = t1.elapsed().as_secs_f64();
    let steps = lp.stepper.step() - start;
    let updates = steps as f64 * lp.stepper.cells() as f64;
    let s = Summary {
        steps,
        final_step: lp.stepper.step(),
        wall_s: wall,
        cell_updates_per_s: updates / wall,
        gbps: steps as f64 * lp.stepper.bytes_per_step() as f64 / wall / 1e9,
        interrupted,
        signal: interrupted.then_some(lp.signal),
        out_dir: dir.clone(),
        checkpoint: lp.checkpoint.clone(),
        backend: lp.stepper.backend().to_string(),
        steps_per_pass: lp.stepper.steps_per_pass(),
        setup_s,
        outputs_s,
        total_s: started.elapsed().as_secs_f64(),
        schedule: lp.stepper.schedule(),
        startup,
    };
    if root {
        let dt = plan.dt;
        let traces = lp.stepper.traces();
        let seismogram = (case.spec.physics == Physics::Wave
            && traces.first().is_some_and(|t| !t.is_empty()))
        .then(|| SampleTimes {
            file: "seismogram.npy".into(),
            shape: [traces.len(), traces[0].len()],
            t0: dt,
            dt,
        });
        let cells = lp.stepper.cells();
        RunRecord::new(case, dt, plan.steps, cells, earlier, &s, seismogram).write(&dir)?;
    }
    Ok(s)
}

struct Loop<'a> {
    stepper: &'a mut dyn Stepper,
    header: Header,
    dir: PathBuf,
    plan: u64,
    opts: &'a RunOptions,
    checkpoint: Option<PathBuf>,
    /// Draw the progress bar on stdout rather than stderr.
    bar_on_stdout: bool,
    /// Whether this process writes the checkpoints (rank 0 of a job).
    root: bool,
    /// Whether the stepper saves its state: signals and an early stop then write a checkpoint.
    stops: bool,
    /// The signal the job stopped for (see [`Stepper::agree_stop`]), 0 while running.
    signal: i32,
    /// When the first step of this run began.
    first_step: Option<Instant>,
}

impl Loop<'_> {
    fn save(&mut self, dt: f64) -> Result<()> {
        let mut h = self.header.clone();
        h.step = self.stepper.step();
        h.time = h.step as f64 * dt;
        // Collective in a job of several: every process gives its part, rank 0 writes.
        let parts = self.stepper.save_state()?;
        if self.root {
            let path = checkpoint::write(&self.dir.join(CHECKPOINTS), &h, &parts, 2)?;
            self.checkpoint = Some(path);
        }
        Ok(())
    }

    /// Step to the end (or the `stop_at` step); returns whether a signal stopped it. A stop
    /// before the case's end writes a checkpoint there, so the run can be resumed.
    fn go(&mut self, out: &mut Outputs) -> Result<bool> {
        let end = self.opts.stop_at.map_or(self.plan, |s| s.min(self.plan));
        let every = out.every;
        let ck = self.opts.checkpoint_every.filter(|&c| c > 0);
        let bar = progress(
            self.opts.quiet,
            end,
            self.stepper.cells(),
            self.bar_on_stdout,
        );
        bar.set_position(self.stepper.step());
        if self.stepper.step() == 0 {
            out.write(self.stepper)?;
        }
        while self.stepper.step() < end {
            if self.stops {
                let asked = if signals::stop_requested() {
                    match signals::which() {
                        0 => signals::REQUESTED,
                        s => s,
                    }
                } else {
                    0
                };
                self.signal = self.stepper.agree_stop(asked)?;
            }
            if self.signal != 0 {
                self.save(out.dt)?;
                bar.abandon_with_message(format!(
                    "stopped by {} at step {}: checkpoint written",
                    signals::name(self.signal),
                    self.stepper.step()
                ));
                return Ok(true);
            }
            let s = self.stepper.step();
            let mut target = (s / every + 1) * every;
            if let Some(c) = ck {
                target = target.min((s / c + 1) * c);
            }
            let target = target.min(end).min(s + 64);
            self.first_step.get_or_insert_with(Instant::now);
            self.stepper.advance((target - s) as usize)?;
            if target.is_multiple_of(every) || target == self.plan {
                out.write(self.stepper)?;
            }
            let stopping_early = target == end && end < self.plan;
            let checkpoint_here = ck.is_some_and(|c| target.is_multiple_of(c));
            if checkpoint_here || (stopping_early && self.stops) {
                self.save(out.dt)?;
            }
            bar.set_position(target);
        }
        bar.finish_and_clear();
        Ok(false)
    }
}

fn progress(quiet: bool, len: u64, cells: usize, on_stdout: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = if on_stdout {
        indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stdout())
    } else {
        indicatif::ProgressBar::new(len)
    };
    let cells = cells as f64;
    let style = indicatif::ProgressStyle::with_template(
        "{bar:40} {pos}/{len} steps, {per_sec}, {cups} cell updates/s, ETA {eta}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
    .with_key(
        "cups",
        move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.2e}", s.per_sec() * cells);
        },
    );
    bar.set_style(style);
    bar
}
