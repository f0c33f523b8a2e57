//! The `solvers` suite: whole time steps of the heat and wave solvers, timed on the CPU and
//! set beside the copy bandwidth measured in the same run.
//!
//! A step's effective bandwidth counts the bytes a step must move at least: each field the
//! step updates read once and written once, each coefficient field read once
//! ([`fdlab_solvers::Stepper::bytes_per_step`]), over the median time of a step.

use crate::report::Timing;
use crate::runner::CpuRunner;
use fdlab_core::Precision;
use fdlab_solvers::gpu::schedule::Schedule;
use fdlab_solvers::{cpu_stepper, Case};
use std::path::PathBuf;
use std::time::Instant;

/// One timed solver step (defined with the other report rows).
pub use crate::report::SolverResult;

/// One case of the suite: a solver configuration at a size.
#[derive(Debug, Clone)]
pub struct SolverCase {
    /// Short name, e.g. `heat3d-2nd`.
    pub name: &'static str,
    /// What it runs.
    pub description: &'static str,
    /// How it is set up.
    pub setup: SolverSetup,
}

/// How a case of the suite is set up.
#[derive(Debug, Clone)]
pub enum SolverSetup {
    /// A case file's text (heat and wave).
    Toml(String),
    /// A Yee-grid FDTD box of `n`³ cells with PEC walls and a point source
    /// ([`fdlab_solvers::fdtd`]), with a CPML of `cpml` cells in front of every wall when
    /// given, and a Drude sphere beside the source when `drude`.
    Fdtd {
        /// Cells per axis.
        n: usize,
        /// CPML thickness in cells on every axis.
        cpml: Option<usize>,
        /// A dispersive (Drude) sphere of radius `n/5` beside the source.
        drude: bool,
    },
}

impl SolverCase {
    /// The case's physics as a schedule family names it: `heat`, `wave` or `fdtd`.
    pub fn physics(&self) -> &'static str {
        match &self.setup {
            SolverSetup::Fdtd { .. } => "fdtd",
            SolverSetup::Toml(text) if text.contains("physics = \"wave\"") => "wave",
            SolverSetup::Toml(text) if text.contains("physics = \"fdtd\"") => "fdtd",
            SolverSetup::Toml(_) => "heat",
        }
    }
}

/// The `[output]` section a case file needs; the suite only steps, it writes nothing.
const NO_OUTPUT: &str = "[output]\ndir = \"unused\"\nevery = 1000000\n";

/// The suite's cases on an `n`³ grid: the 3-D heat step (7-point Laplacian, periodic,
/// constant diffusivity), the 3-D wave step (8th order, two velocity layers, CPML) and the
/// 3-D FDTD step.
pub fn solver_cases(n: usize) -> Vec<SolverCase> {
    let half = n as f64 / 2.0;
    // A wide pulse: every value stays a normal number, as in a real run past its first steps.
    let width = n as f64 / 4.0;
    // The 20-cell layers of a 512-cell grid, in proportion at other sizes.
    let thick = (20 * n / 512).max(4);
    vec![
        SolverCase {
            name: "heat3d-2nd",
            description: "heat step, 7-point Laplacian, periodic, constant diffusivity",
            setup: SolverSetup::Toml(format!(
                "physics = \"heat\"\nboundary = \"periodic\"\n\
                 [grid]\nshape = [{n}, {n}, {n}]\nspacing = [1.0, 1.0, 1.0]\n\
                 [time]\ncfl = 0.5\nduration = 1.0\n[scheme]\norder = 2\n\
                 [initial.gaussian]\ncenter = [{half}, {half}, {half}]\nwidth = {width}\n\
                 amplitude = 1.0\n\
                 [material]\ndiffusivity = {{ constant = 1.0 }}\n{NO_OUTPUT}"
            )),
        },
        SolverCase {
            name: "wave3d-8th",
            description: "wave step, 8th order, two velocity layers, CPML 10 cells",
            setup: SolverSetup::Toml(wave_case([n, n, n], Some(10), 0)),
        },
        SolverCase {
            name: "wave3d-8th-periodic",
            description: "wave step, 8th order, two velocity layers, periodic (no CPML)",
            setup: SolverSetup::Toml(wave_case([n, n, n], None, 0)),
        },
        SolverCase {
            name: "wave3d-8th-cpml20",
            description: "wave step, 8th order, two velocity layers, CPML 20 cells at 512³ \
                          (n/25.6, at least 4)",
            setup: SolverSetup::Toml(wave_case([n, n, n], Some(thick), 0)),
        },
        SolverCase {
            name: "wave3d-8th-seismic",
            description: "wave step, n×n×n/2, 8th order, two velocity layers, CPML 20 cells at \
                          512 (n/25.6, at least 4), a source and 101 receivers",
            setup: SolverSetup::Toml(wave_case([n, n, n / 2], Some(thick), 101)),
        },
        SolverCase {
            name: "wave3d-8th-seismic-periodic",
            description: "the seismic case's periodic twin (no CPML), n×n×n/2, a source and 101 \
                          receivers",
            setup: SolverSetup::Toml(wave_case([n, n, n / 2], None, 101)),
        },
        SolverCase {
            name: "fdtd3d-yee",
            description: "FDTD step (E and H), Yee grid, PEC walls, vacuum, a point source",
            setup: SolverSetup::Fdtd {
                n,
                cpml: None,
                drude: false,
            },
        },
        SolverCase {
            name: "fdtd3d-yee-cpml",
            description: "FDTD step (E and H), Yee grid, CPML 10 cells on every side, vacuum",
            setup: SolverSetup::Fdtd {
                n,
                cpml: Some(10),
                drude: false,
            },
        },
        SolverCase {
            name: "fdtd3d-yee-drude",
            description: "FDTD step (E and H), Yee grid, PEC walls, a Drude sphere (3% of cells)",
            setup: SolverSetup::Fdtd {
                n,
                cpml: None,
                drude: true,
            },
        },
        SolverCase {
            name: "fdtd3d-yee-cpml-drude",
            description:
                "FDTD step (E and H), Yee grid, CPML 10 cells, a Drude sphere (3% of cells)",
            setup: SolverSetup::Fdtd {
                n,
                cpml: Some(10),
                drude: true,
            },
        },
        SolverCase {
            name: "fdtd3d-full",
            description: "FDTD step, CPML 12·n/384 cells, a Drude sphere, a TFSF plane wave, \
                          two DFT planes of 5 frequencies and a flux plane",
            setup: SolverSetup::Toml(fdtd_full_case(n)),
        },
    ]
}

/// The FDTD case a scattering study runs, on `n`³ unit cells (c = 1): CPML layers of
/// 12·n/384 cells (at least 5, what the grading needs), a Drude sphere (radius 0.15 n) at the centre inside a TFSF
/// box (0.15 n to 0.85 n, clear of the layers) whose plane wave runs along +x with E along z (20 cells per
/// wavelength at its centre frequency), two z-planes of running DFTs (one in the scattered
/// field, one in the total field) and a flux plane in x, five frequencies each.
fn fdtd_full_case(n: usize) -> String {
    let f = n as f64;
    let thick = (12 * n / 384).max(5);
    // The box's faces stay clear of the layers on small grids too.
    let lo = (0.15 * f).max(thick as f64 + 4.0);
    let (hi, mid) = (f - lo, 0.5 * f);
    let freqs = "[0.04, 0.045, 0.05, 0.055, 0.06]";
    let gap = (thick as f64 + lo) / 2.0;
    format!(
        "physics = \"fdtd\"\n\
         [grid]\nshape = [{n}, {n}, {n}]\nspacing = [1.0, 1.0, 1.0]\n\
         [time]\ncfl = 0.93\nduration = 1000.0\n\
         [fdtd]\nboundary = [{{ cpml = {{ thickness = {thick} }} }}, \
         {{ cpml = {{ thickness = {thick} }} }}, {{ cpml = {{ thickness = {thick} }} }}]\n\
         [[fdtd.materials]]\ncenter = [{mid}, {mid}, {mid}]\nradius = {r}\neps_r = 1.0\n\
         drude = {{ plasma_frequency = 1.2566, collision_frequency = 0.01 }}\n\
         [[fdtd.plane_waves]]\ndirection = \"+x\"\npolarization = \"ez\"\n\
         lo = [{lo}, {lo}, {lo}]\nhi = [{hi}, {hi}, {hi}]\nwaveform = \"modulated_gaussian\"\n\
         f0 = 0.05\nt0 = 60.0\ntau = 20.0\namplitude = 1.0\n\
         [[fdtd.monitors]]\naxis = \"z\"\nposition = {gap}\nfrequencies = {freqs}\n\
         [[fdtd.monitors]]\naxis = \"z\"\nposition = {inner}\nfrequencies = {freqs}\n\
         [[fdtd.flux]]\naxis = \"x\"\nposition = {gap}\nfrequencies = {freqs}\n{NO_OUTPUT}",
        r = 0.15 * f,
        inner = 0.75 * f,
    )
}

/// A wave case file on a grid of `shape` cells of unit spacing: 8th order, a velocity of 1
/// over 1.5 from half the depth, one source at the centre, a CPML of `cpml` cells (periodic
/// without) and `receivers` receivers in a line along x, a quarter of the depth down.
fn wave_case(shape: [usize; 3], cpml: Option<usize>, receivers: usize) -> String {
    let [nx, ny, nz] = shape;
    // Sources and receivers on grid points (the cells they always snapped to): the benchmark
    // measures the step with single-cell points, not interpolated ones.
    let mid = shape.map(|v| (v as f64 / 2.0).round());
    let mut text = format!(
        "physics = \"wave\"\n{}\
         [grid]\nshape = [{nx}, {ny}, {nz}]\nspacing = [1.0, 1.0, 1.0]\n\
         [time]\ncfl = 0.5\nduration = 1.0\n[scheme]\norder = 8\n\
         [material.velocity.layered]\ntops = [0.0, {}]\nvalues = [1.0, 1.5]\n\
         [[sources]]\nposition = [{}, {}, {}]\nfrequency = 0.05\n",
        if cpml.is_none() {
            "boundary = \"periodic\"\n"
        } else {
            ""
        },
        mid[2],
        mid[0],
        mid[1],
        mid[2]
    );
    for i in 0..receivers {
        let x = ((i as f64 + 0.5) * (nx - 1) as f64 / receivers as f64).round();
        text += &format!(
            "[[receivers]]\nposition = [{x:.1}, {}, {}]\n",
            mid[1],
            (nz as f64 / 4.0).round()
        );
    }
    if let Some(t) = cpml {
        text += &format!("[boundary.cpml]\nthickness = {t}\n");
    }
    text + NO_OUTPUT
}

/// Runs `case` in `precision` for `reps` timed steps (after one untimed step) on the CPU,
/// pairing each timed step with a copy on `runner`'s buffers just before it.
pub fn run_cpu(
    runner: &CpuRunner,
    case: &SolverCase,
    precision: Precision,
    reps: usize,
) -> Result<SolverResult, fdlab_solvers::Error> {
    let (times, copies, shape, cells, bytes) = match &case.setup {
        SolverSetup::Toml(text) => {
            let parsed = Case::parse(text, PathBuf::from(format!("<{}>", case.name)))?;
            let prepared = fdlab_solvers::setup::prepare(&parsed)?;
            let mut stepper = cpu_stepper(&prepared, precision)?;
            let (times, copies) = timed(runner, reps, || stepper.advance(1))?;
            let shape = parsed.spec.grid.shape.clone();
            (
                times,
                copies,
                shape,
                stepper.cells(),
                stepper.bytes_per_step(),
            )
        }
        SolverSetup::Fdtd { n, cpml, drude } => {
            let s = fdtd_box(*n, *cpml, *drude)?;
            match precision {
                Precision::F32 => fdtd_steps::<f32>(runner, &s, reps)?,
                Precision::F64 => fdtd_steps::<f64>(runner, &s, reps)?,
            }
        }
    };
    let copy_gbps = Timing::of(&copies).median;
    Ok(result(
        case,
        precision,
        shape,
        ("cpu", cells, bytes),
        &times,
        copy_gbps,
    ))
}

/// Steps timed together on the GPU: the stepper synchronises once per call (its NaN check),
/// so a batch keeps that out of the step time (rounded up to whole passes where a stepper
/// fuses several steps per pass).
const GPU_BATCH: usize = 10;

/// Runs `case` in `precision` on the GPU for `reps` timed batches of `GPU_BATCH` (10) steps
/// (wall clock, after one untimed batch), beside the device's copy bandwidth over
/// `copy_bytes` measured just before. `None` when the GPU does not run the case.
pub fn run_gpu(
    device: &fdlab_cuda::Device,
    copy_bytes: usize,
    case: &SolverCase,
    precision: Precision,
    reps: usize,
    schedule: Option<&Schedule>,
) -> Result<Option<SolverResult>, fdlab_solvers::Error> {
    let (mut stepper, shape): (Box<dyn fdlab_solvers::Stepper>, Vec<usize>) = match &case.setup {
        SolverSetup::Toml(text) => {
            let parsed = Case::parse(text, PathBuf::from(format!("<{}>", case.name)))?;
            let prepared = fdlab_solvers::setup::prepare(&parsed)?;
            (
                fdlab_solvers::gpu_stepper_scheduled(&prepared.setup, precision, schedule)?,
                parsed.spec.grid.shape.clone(),
            )
        }
        SolverSetup::Fdtd { n, cpml, drude } => {
            use fdlab_solvers::gpu::FdtdGpu;
            let s = fdtd_box(*n, *cpml, *drude)?;
            let f = schedule.map(Schedule::fdtd).transpose()?;
            let stepper: Box<dyn fdlab_solvers::Stepper> = match precision {
                Precision::F32 => Box::new(FdtdGpu::<f32>::with_schedule(&s, f)?),
                Precision::F64 => Box::new(FdtdGpu::<f64>::with_schedule(&s, f)?),
            };
            (stepper, vec![*n; 3])
        }
    };
    let copies = device.copy_times(copy_bytes, 2, 5)?;
    let copy_gbps = 2.0 * copy_bytes as f64 / (Timing::of(&copies).median * 1e-3) / 1e9;
    // Whole passes where the stepper fuses steps (the heat step's temporal blocking).
    let k = stepper.steps_per_pass();
    let batch = GPU_BATCH.div_ceil(k) * k;
    stepper.advance(batch)?;
    let mut times = vec![];
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        stepper.advance(batch)?;
        times.push(t.elapsed().as_secs_f64() * 1e3 / batch as f64);
    }
    let what = (stepper.backend(), stepper.cells(), stepper.bytes_per_step());
    let mut r = result(case, precision, shape, what, &times, copy_gbps);
    r.steps_per_pass = (k > 1).then_some(k);
    r.schedule = Some(stepper.schedule());
    Ok(Some(r))
}

/// The row of a case from its step times (ms) and copy bandwidth; `what` is the backend's
/// name, the cells a step updates and the minimum bytes it moves.
pub(crate) fn result(
    case: &SolverCase,
    precision: Precision,
    shape: Vec<usize>,
    what: (&str, usize, usize),
    times: &[f64],
    copy_gbps: f64,
) -> SolverResult {
    let (backend, cells, bytes) = what;
    let time_ms = Timing::of(times);
    let gbps = bytes as f64 / (time_ms.median * 1e-3) / 1e9;
    SolverResult {
        suite: "solvers".into(),
        case: case.name.into(),
        description: case.description.into(),
        precision: match precision {
            Precision::F32 => "f32".into(),
            Precision::F64 => "f64".into(),
        },
        shape,
        backend: backend.into(),
        cell_updates_per_s: cells as f64 / (time_ms.median * 1e-3),
        time_ms,
        bytes_per_step: bytes,
        gbps,
        copy_gbps,
        pct_of_copy: 100.0 * gbps / copy_gbps,
        steps_per_pass: None,
        as_shipped: None,
        schedule: None,
    }
}

/// One untimed step, then `reps` timed steps, each after a copy on `runner`'s buffers:
/// (step times in ms, copy bandwidths).
fn timed<E>(
    runner: &CpuRunner,
    reps: usize,
    mut step: impl FnMut() -> Result<(), E>,
) -> Result<(Vec<f64>, Vec<f64>), E> {
    step()?;
    let (mut times, mut copies) = (vec![], vec![]);
    for _ in 0..reps.max(1) {
        copies.push(runner.copy_once_gbps());
        let t = Instant::now();
        step()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok((times, copies))
}

/// What [`timed`] measures, and the shape, cells and minimum bytes of a step.
type Steps = (Vec<f64>, Vec<f64>, Vec<usize>, usize, usize);

/// FDTD steps on an `n`³ PEC box: six field components read and written once and the two
/// per-cell update coefficients read once make the minimum bytes of a step.
/// The FDTD case as a setup for the GPU stepper: the same box, source and time step as
/// [`fdtd_steps`] runs on the CPU.
pub(crate) fn fdtd_box(
    n: usize,
    cpml: Option<usize>,
    drude: bool,
) -> Result<fdlab_solvers::fdtd::FdtdSetup, fdlab_solvers::Error> {
    use fdlab_solvers::fdtd::CellBox;
    use fdlab_solvers::fdtd::{drude_dt_limit, Component, Drude, FdtdSetup, Grid, PointSource};
    use fdlab_solvers::fdtd::{Shape, Waveform};
    let grid = Grid::new([n; 3], [1.0; 3], [boundary(cpml); 3])?;
    let wp = 2.0 * std::f64::consts::PI * 0.2;
    // A metal-like sphere (plasma frequency 4× the source's, a little damping) whose near
    // side is n/10 from the source; its far side reaches the x wall (into the CPML where the
    // box has one).
    let half = n as f64 / 2.0;
    let sphere = CellBox {
        shape: Shape::Sphere {
            center: [half + 0.3 * n as f64, half, half],
            radius: 0.2 * n as f64,
        },
        pec: false,
        eps_r: 1.0,
        sigma: 0.0,
        drude: Some(Drude {
            plasma_frequency: wp,
            collision_frequency: 0.01,
        }),
        lorentz: None,
        debye: None,
    };
    let dt = if drude {
        // The dispersive medium lowers the stable step a little.
        0.99 * drude_dt_limit(&grid, wp)
    } else {
        0.99 * grid.dt_limit()
    };
    Ok(FdtdSetup {
        dt,
        boxes: if drude { vec![sphere] } else { vec![] },
        sources: vec![PointSource {
            component: Component::Ez,
            cell: [n / 2; 3],
            waveform: Waveform::Ricker { f0: 0.05, t0: 30.0 },
            amplitude: 1.0,
        }],
        hard_sources: vec![],
        plane_waves: vec![],
        fluxes: vec![],
        probes: vec![],
        monitors: vec![],
        duration: 0.0,
        plot: Component::Ez,
        grid,
    })
}

/// PEC walls, behind a CPML of `cpml` cells when given.
fn boundary(cpml: Option<usize>) -> fdlab_solvers::fdtd::Boundary {
    use fdlab_solvers::fdtd::{Boundary, Cpml};
    cpml.map_or(Boundary::Pec, |t| Boundary::Cpml(Cpml::new(t)))
}

fn fdtd_steps<T: fdlab_core::Scalar>(
    runner: &CpuRunner,
    s: &fdlab_solvers::fdtd::FdtdSetup,
    reps: usize,
) -> Result<Steps, fdlab_solvers::Error> {
    use fdlab_solvers::Stepper;
    let stepper = fdlab_solvers::fdtd::FdtdCpu::<T>::new(s)?;
    let (cells, bytes) = (stepper.cells(), stepper.bytes_per_step());
    // The bare step: the stepper's scan for non-finite values after each call would cost
    // about as much as the step (a run scans once per call of up to 64 steps).
    let mut sim = stepper.into_sim();
    let (times, copies) = timed(runner, reps, || {
        sim.step();
        Ok::<(), fdlab_solvers::Error>(())
    })?;
    Ok((times, copies, s.grid.n.to_vec(), cells, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_parses_and_steps_at_a_small_size() {
        let runner = CpuRunner::new(16 << 20);
        for case in solver_cases(32) {
            for p in [Precision::F32, Precision::F64] {
                let r = run_cpu(&runner, &case, p, 2).unwrap_or_else(|e| panic!("{e}"));
                let depth = if case.name.contains("seismic") {
                    16
                } else {
                    32
                };
                assert_eq!(r.shape, [32, 32, depth]);
                assert!(r.gbps > 0.0 && r.pct_of_copy > 0.0, "{r:?}");
                assert_eq!(r.time_ms.runs, 2);
            }
        }
    }
}
