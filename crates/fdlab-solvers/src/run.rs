//! Running a case: output directory checks, the step loop, outputs, checkpoints and Ctrl-C.

use crate::case::{Case, Physics, PrecisionName};
use crate::checkpoint::{self, Header};
use crate::error::{io_err, Error, Result};
use crate::fdtd::FdtdCpu;
use crate::heat::HeatCpu;
use crate::run_outputs::Outputs;
use crate::setup::{prepare, Prepared, Setup};
use crate::stepper::Stepper;
use crate::wave::WaveCpu;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

static STOP: AtomicBool = AtomicBool::new(false);

/// Options of [`run`] beyond the case file.
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
    pub backend: BackendChoice,
    /// Replace the outputs of an earlier run in the output directory (without it, a directory
    /// holding another run's files is refused).
    pub overwrite: bool,
}

/// Where [`run`] steps a case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// The GPU when one is usable and the physics has a GPU stepper, else the CPU.
    #[default]
    Auto,
    /// The CPU, on all cores.
    Cpu,
    /// The first GPU; an error when there is none.
    Cuda,
}

impl std::str::FromStr for BackendChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(BackendChoice::Auto),
            "cpu" => Ok(BackendChoice::Cpu),
            "cuda" | "gpu" => Ok(BackendChoice::Cuda),
            _ => Err(Error::Invalid(format!(
                "--backend {s}: use auto, cpu or cuda"
            ))),
        }
    }
}

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
    /// Stopped by Ctrl-C (a checkpoint was written).
    pub interrupted: bool,
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
            if self.interrupted { ", interrupted (checkpoint written)" } else { "" },
            self.out_dir.display()
        )?;
        write!(
            f,
            "\n{:.2} s in all: setup {:.2} s, steps and field files {:.2} s, final outputs {:.2} s",
            self.total_s, self.setup_s, self.wall_s, self.outputs_s
        )
    }
}

/// Validate a case without running it: everything `run` checks before step 1.
pub fn validate(case: &Case, opts: &RunOptions) -> Result<Prepared> {
    let p = prepare(case)?;
    check_out_dir(case, &p, opts)?;
    Ok(p)
}

fn out_dir(case: &Case, opts: &RunOptions) -> PathBuf {
    opts.out_dir
        .clone()
        .unwrap_or_else(|| case.resolve(&case.spec.output.dir))
}

fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a properly sized output buffer.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    (rc == 0).then(|| st.f_bavail as u64 * st.f_frsize as u64)
}

/// Estimated bytes of all planned outputs and checkpoints.
fn planned_bytes(case: &Case, p: &Prepared, opts: &RunOptions) -> u64 {
    let cells: u64 = case.spec.grid.shape.iter().map(|&n| n as u64).product();
    let o = &case.spec.output;
    let outputs = p.plan.steps / o.every as u64 + 1;
    let per =
        (o.npy as u64) * 8 * cells + (o.vti as u64) * 16 * cells + (o.frames as u64) * 300_000;
    let fields = match case.spec.physics {
        Physics::Heat => 1,
        Physics::Wave => 8,
        Physics::Fdtd => 6,
    };
    let ckpt = if opts.checkpoint_every.is_some() {
        3 * fields * 8 * cells
    } else {
        0
    };
    outputs * per + ckpt + 2_000_000
}

fn check_out_dir(case: &Case, p: &Prepared, opts: &RunOptions) -> Result<()> {
    let dir = out_dir(case, opts);
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let probe = dir.join(".fdlab-write-test");
    std::fs::write(&probe, b"ok").map_err(io_err(&dir))?;
    let _ = std::fs::remove_file(&probe);
    let needed = planned_bytes(case, p, opts);
    if let Some(free) = free_bytes(&dir)
        && free < needed
    {
        return Err(Error::DiskSpace {
            path: dir,
            needed,
            free,
        });
    }
    Ok(())
}

/// The GPU stepper for a prepared case.
pub fn gpu_stepper(p: &Prepared, precision: PrecisionName) -> Result<Box<dyn Stepper>> {
    gpu_stepper_for(&p.setup, precision)
}

/// [`gpu_stepper`] for a setup.
pub fn gpu_stepper_for(setup: &Setup, precision: PrecisionName) -> Result<Box<dyn Stepper>> {
    use crate::gpu::{FdtdGpu, HeatGpu, WaveGpu};
    Ok(match (setup, precision) {
        (Setup::Heat(s), PrecisionName::F64) => Box::new(HeatGpu::<f64>::new(s)?),
        (Setup::Heat(s), PrecisionName::F32) => Box::new(HeatGpu::<f32>::new(s)?),
        (Setup::Wave(s), PrecisionName::F64) => Box::new(WaveGpu::<f64>::new(s)?),
        (Setup::Wave(s), PrecisionName::F32) => Box::new(WaveGpu::<f32>::new(s)?),
        (Setup::Fdtd(s), PrecisionName::F64) => Box::new(FdtdGpu::<f64>::new(s)?),
        (Setup::Fdtd(s), PrecisionName::F32) => Box::new(FdtdGpu::<f32>::new(s)?),
    })
}

/// The stepper `choice` asks for. `Auto` takes the GPU when one is usable, and says on stderr
/// why it falls back to the CPU when a GPU is present but fails.
pub fn stepper(
    p: &Prepared,
    precision: PrecisionName,
    choice: BackendChoice,
) -> Result<Box<dyn Stepper>> {
    match choice {
        BackendChoice::Cpu => cpu_stepper(p, precision),
        BackendChoice::Cuda => gpu_stepper(p, precision),
        BackendChoice::Auto => {
            if crate::gpu::available().is_err() {
                return cpu_stepper(p, precision);
            }
            gpu_stepper(p, precision).or_else(|e| {
                eprintln!("note: running on the CPU; the GPU stepper failed: {e}");
                cpu_stepper(p, precision)
            })
        }
    }
}

/// The CPU stepper for a prepared case.
pub fn cpu_stepper(p: &Prepared, precision: PrecisionName) -> Result<Box<dyn Stepper>> {
    cpu_stepper_for(&p.setup, precision)
}

/// [`cpu_stepper`] for a setup.
pub fn cpu_stepper_for(setup: &Setup, precision: PrecisionName) -> Result<Box<dyn Stepper>> {
    Ok(match (setup, precision) {
        (Setup::Heat(s), PrecisionName::F64) => Box::new(HeatCpu::<f64>::new(s)?),
        (Setup::Heat(s), PrecisionName::F32) => Box::new(HeatCpu::<f32>::new(s)?),
        (Setup::Wave(s), PrecisionName::F64) => Box::new(WaveCpu::<f64>::new(s)?),
        (Setup::Wave(s), PrecisionName::F32) => Box::new(WaveCpu::<f32>::new(s)?),
        (Setup::Fdtd(s), PrecisionName::F64) => Box::new(FdtdCpu::<f64>::new(s)?),
        (Setup::Fdtd(s), PrecisionName::F32) => Box::new(FdtdCpu::<f32>::new(s)?),
    })
}

fn install_ctrlc() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Another handler may exist in an embedding program; then Ctrl-C keeps its behaviour.
        let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
    });
}

/// Ask a running [`run`] to write a checkpoint and stop (what Ctrl-C does).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// Run a case to its end (or to Ctrl-C), writing its outputs; returns the summary.
pub fn run(case: &Case, opts: &RunOptions) -> Result<Summary> {
    let started = Instant::now();
    let prepared = validate(case, opts)?;
    let stepper = stepper(&prepared, case.spec.precision, opts.backend)?;
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
/// (validation, device, compiling, the initial field) from the steps.
///
/// Every process of a job runs the same loop, so that a stepper whose [`Stepper::field`] is
/// collective is asked for it at the same steps everywhere; only rank 0 writes outputs and shows
/// progress. In a job of several, Ctrl-C is left to the launcher (it ends every process) rather
/// than turned into a checkpoint, and checkpoints are the caller's to refuse.
pub fn run_stepper(
    case: &Case,
    opts: &RunOptions,
    prepared: &Prepared,
    mut stepper: Box<dyn Stepper>,
    role: Role,
    started: Instant,
) -> Result<Summary> {
    let setup_s = started.elapsed().as_secs_f64();
    let root = role.rank == 0;
    let dir = out_dir(case, opts);
    let header = Header {
        version: env!("CARGO_PKG_VERSION").to_string(),
        case_hash: case.hash(),
        precision: format!("{:?}", case.spec.precision).to_lowercase(),
        step: 0,
        time: 0.0,
        backend: stepper.backend().to_string(),
        parts: vec![],
    };
    if let Some(r) = &opts.resume {
        let (cdir, h, parts) = checkpoint::read(r)?;
        checkpoint::check(&cdir, &h, &header)?;
        stepper.restore_state(h.step, &parts)?;
    }
    STOP.store(false, Ordering::SeqCst);
    if role.ranks == 1 {
        install_ctrlc();
    }
    let mut out = Outputs::new(case, &dir, prepared.plan.dt, root);
    let quiet_opts = RunOptions {
        quiet: opts.quiet || !root,
        ..opts.clone()
    };
    let opts = &quiet_opts;
    let mut lp = Loop {
        stepper: stepper.as_mut(),
        header,
        dir: dir.clone(),
        plan: prepared.plan.steps,
        opts,
        checkpoint: None,
        // Under mpirun a rank's stderr is a pipe but its stdout a terminal: draw there.
        bar_on_stdout: role.ranks > 1,
    };
    let t0 = Instant::now();
    let start = lp.stepper.step();
    let interrupted = lp.go(&mut out)?;
    // The run's time includes the field files still being written.
    out.files.finish()?;
    let wall = t0.elapsed().as_secs_f64().max(1e-9);
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
        out_dir: dir,
        checkpoint: lp.checkpoint.clone(),
        backend: lp.stepper.backend().to_string(),
        steps_per_pass: lp.stepper.steps_per_pass(),
        setup_s,
        outputs_s,
        total_s: started.elapsed().as_secs_f64(),
    };
    let json = format!(
        "{{\"steps\": {}, \"final_step\": {}, \"wall_s\": {}, \"cell_updates_per_s\": {}, \"gbps\": {}, \"interrupted\": {}, \"backend\": \"{}\", \"steps_per_pass\": {}, \"setup_s\": {}, \"outputs_s\": {}, \"total_s\": {}}}\n",
        s.steps,
        s.final_step,
        s.wall_s,
        s.cell_updates_per_s,
        s.gbps,
        s.interrupted,
        s.backend,
        s.steps_per_pass,
        s.setup_s,
        s.outputs_s,
        s.total_s
    );
    if root {
        let sp = s.out_dir.join("summary.json");
        std::fs::write(&sp, json).map_err(io_err(&sp))?;
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
}

impl Loop<'_> {
    fn save(&mut self, dt: f64) -> Result<()> {
        let mut h = self.header.clone();
        h.step = self.stepper.step();
        h.time = h.step as f64 * dt;
        let path = checkpoint::write(
            &self.dir.join("checkpoints"),
            &h,
            &self.stepper.save_state()?,
            2,
        )?;
        self.checkpoint = Some(path);
        Ok(())
    }

    /// Step to the end; returns whether Ctrl-C stopped it.
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
            if STOP.load(Ordering::SeqCst) {
                self.save(out.dt)?;
                bar.abandon_with_message("interrupted: checkpoint written");
                return Ok(true);
            }
            let s = self.stepper.step();
            let mut target = (s / every + 1) * every;
            if let Some(c) = ck {
                target = target.min((s / c + 1) * c);
            }
            let target = target.min(end).min(s + 64);
            self.stepper.advance((target - s) as usize)?;
            if target.is_multiple_of(every) || target == self.plan {
                out.write(self.stepper)?;
            }
            if ck.is_some_and(|c| target.is_multiple_of(c)) {
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
