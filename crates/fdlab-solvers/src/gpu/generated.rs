//! The generated source of a prepared case, as the API (as Devito's `op.ccode`): every kernel
//! a GPU stepper would compile for a schedule and a device class, with how it is launched,
//! generated without a GPU.

use super::schedule::{FdtdSchedule, HeatSchedule, Schedule, WaveSchedule};
use super::{fdtd_sources, heat, march_sizes, wave};
use crate::error::Result;
use crate::setup::Setup;
use crate::wave::WaveSetup;
use fdlab_core::Precision;
use fdlab_cuda::codegen::solver::{ring, Launch};
use fdlab_cuda::codegen::CudaSource;
use fdlab_cuda::CudaScalar;

/// One generated kernel: its name, its CUDA source and how it is launched.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedKernel {
    /// The kernel's name (a stem and a hash of its code).
    pub name: String,
    /// The CUDA C source.
    pub source: String,
    /// Its launch: block, grid map, dynamic shared bytes and the stepper's shape, one line
    /// each.
    pub launch: String,
}

/// Every kernel the GPU stepper of `setup` in `precision` compiles with `schedule` (`None`:
/// the defaults) on a device of `class` (`None`, `"h100"` or `"h200"`, as fdlab-cuda's
/// `device_class` names it), in the order the stepper builds them: the whole-grid kernels,
/// the split run's step and the multi-step pass where it applies. A schedule of another
/// physics is refused.
///
/// ```
/// # let text = "physics = \"heat\"\nboundary = \"periodic\"\n[grid]\nshape = [16, 16]\n\
/// # spacing = [1.0, 1.0]\n[time]\ncfl = 0.5\nduration = 1.0\n[scheme]\norder = 2\n\
/// # [initial.gaussian]\ncenter = [8.0, 8.0]\nwidth = 2.0\namplitude = 1.0\n\
/// # [material]\ndiffusivity = { constant = 1.0 }\n[output]\ndir = \"out\"\nevery = 100\n";
/// use fdlab_solvers::gpu::generated::generated_sources;
/// use fdlab_core::Precision;
/// let case = fdlab_solvers::Case::parse(text, "<doc>".into())?;
/// let setup = fdlab_solvers::setup::prepare(&case)?.setup;
/// let schedule = "heat:pass=off".parse()?;
/// let kernels = generated_sources(&setup, Precision::F32, Some(&schedule), Some("h200"))?;
/// assert!(kernels[0].source.contains(&kernels[0].name));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn generated_sources(
    setup: &Setup,
    precision: Precision,
    schedule: Option<&Schedule>,
    class: Option<&str>,
) -> Result<Vec<GeneratedKernel>> {
    match precision {
        Precision::F32 => of::<f32>(setup, schedule, class),
        Precision::F64 => of::<f64>(setup, schedule, class),
    }
}

fn of<T: CudaScalar>(
    setup: &Setup,
    schedule: Option<&Schedule>,
    class: Option<&str>,
) -> Result<Vec<GeneratedKernel>> {
    let bytes = std::mem::size_of::<T>();
    let mut out = vec![];
    if let Setup::Wave(
        s @ WaveSetup {
            density: Some(_), ..
        },
    ) = setup
    {
        let shape = "one launch per update over its region";
        return Ok(crate::wave_vd::kernel_sources(s, T::PRECISION)?
            .into_iter()
            .map(|src| kernel(src, shape))
            .collect());
    }
    match setup {
        Setup::Heat(s) => {
            let sched = schedule.map(Schedule::heat).transpose()?;
            let c = heat::choices::<T>(s, class, sched.unwrap_or(&HeatSchedule::default()))?;
            let l = c.launch.fit(s.dim, s.order / 2, s.n, bytes);
            let shape = format!("launch {l:?} grid {:?}", whole_grid(l, s.n, s.dim));
            for ranged in [false, true] {
                out.push(kernel(heat::sources::<T>(s, &c, ranged)?, &shape));
            }
            if let Some((src, t)) = heat::pass_source::<T>(s, &c)? {
                let (nx, no, nm) = march_sizes(s.n, s.dim);
                let g = t.grid(s.dim, nx as usize, no as usize, nm as usize);
                out.push(kernel(src, &format!("pass {t:?} grid {g:?}")));
            }
        }
        Setup::Wave(s) => {
            let sched = schedule.map(Schedule::wave).transpose()?;
            let c = wave::choices::<T>(s, sched.unwrap_or(&WaveSchedule::default()));
            let l = c.launch.fit(s.dim, s.order / 2, s.n, bytes);
            let shape = format!("launch {l:?} grid {:?}", whole_grid(l, s.n, s.dim));
            let limit = ring::H100_SHARED;
            for src in wave::sources::<T>(s, &c, false, limit)?.all() {
                out.push(kernel(src, &shape));
            }
            out.push(kernel(wave::sources::<T>(s, &c, true, limit)?.step, &shape));
            if let Some((src, w)) = wave::pass_source::<T>(s, &c)? {
                let (nx, no, nm) = march_sizes(s.n, s.dim);
                let g = w.grid(s.dim, nx as usize, no as usize, nm as usize);
                out.push(kernel(src, &format!("pass {w:?} grid {g:?}")));
            }
        }
        Setup::Fdtd(s) => {
            let sched = schedule.map(Schedule::fdtd).transpose()?;
            let c = fdtd_sources::choices::<T>(s, class, sched.unwrap_or(&FdtdSchedule::default()));
            for indexed in [true, false] {
                for pass in [true, false] {
                    let all = fdtd_sources::sources::<T>(s, &c, indexed, pass)?;
                    let shape = format!(
                        "indexed {indexed} pass {pass} fused {:?} pass tile {:?} half {:?}",
                        all.fused_launch,
                        all.pass_launch,
                        c.half_tile.launch()
                    );
                    for src in all.all() {
                        out.push(kernel(src, &shape));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The launch grid of a one-step kernel over the whole grid.
fn whole_grid(l: Launch, n: [usize; 3], dim: usize) -> [u32; 3] {
    let (nx, no, nm) = march_sizes(n, dim);
    l.grid(nx as usize, no as usize, nm as usize)
}

fn kernel(src: CudaSource, shape: &str) -> GeneratedKernel {
    let launch = format!(
        "block {:?}\ngrid map {:?}\nshared bytes {}\nx multiple {}\nsingle pass {}\n\
         precision {:?}\n{shape}\n",
        src.block, src.grid_map, src.shared_bytes, src.x_multiple, src.single_pass, src.precision
    );
    GeneratedKernel {
        name: src.name,
        source: src.body,
        launch,
    }
}
