//! The FDTD step on the GPU: E and H on the device (structure of arrays, the CPU's layout),
//! two whole steps in one pass where nothing acts between them (see [`fdlab_cuda::codegen::solver::fdtd::pass`] and
//! `two_steps`), else the whole step in one pass with the CPML terms inside it (see
//! [`fused`]; with a CPML, blocks clear of its layers run a copy of the kernel
//! without them), then, when the case has sources or probes, one single-thread kernel that
//! applies the one and samples the other. At the end of each call one scan looks for non-finite values, as the CPU stepper
//! does. The one pass needs a second set of fields (old and new, swapped after each step);
//! when that does not fit, or with the schedule's `fused=off`, each half step is a kernel of its
//! own ([`fdlab_cuda::codegen::solver::fdtd`]) and the fields are updated in place.
//!
//! Media come in as the CPU simulation's per-cell coefficients `ca`, `cb` (dielectric, lossy
//! and PEC cells alike) and its CPML profiles, so both steppers apply the same numbers. The
//! one pass reads them as a one-byte medium index per cell into a table of the distinct
//! pairs where the case has at most 256 ([`super::fdtd_media`]).
//! Drude, Lorentz and Debye media add small kernels over their cells (their currents or
//! polarizations before the step, their terms after the E update) to a single step; the
//! two-step pass advances Drude currents itself. DFT and flux monitors
//! accumulate on the device after each step ([`super::fdtd_monitors`]); plane waves correct
//! the fields after each half step ([`super::fdtd_tfsf`]), so a case with them runs the two
//! half-step kernels.

use super::fdtd_dispersive::{drude_config, DrudeCells, PoleBranch, PoleCells};
use super::fdtd_media::media_index;
use super::fdtd_monitors::DeviceMonitors;
use super::fdtd_points::comp;
use super::fdtd_points::Points;
use super::fdtd_sources::{sources, FdtdSources};
use super::fdtd_tfsf::DeviceWaves;
use super::schedule::{FdtdChoices, FdtdSchedule};
use super::{driver, launch_config, tag, Gpu};
use crate::error::Result;
use crate::fdtd::{Boundary, Component, FdtdCpu, FdtdSetup};
use crate::layout::to_bytes;
use crate::stepper::{StatePart, Stepper};
use blocks::Blocks;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use fdlab_cuda::codegen::solver::fdtd::fused;
use fdlab_cuda::codegen::solver::Launch;
use fdlab_cuda::{CudaScalar, Kernel};
use std::sync::Arc;

mod blocks;
mod two_steps;

/// The six components on the device.
struct DeviceFields<T> {
    ex: CudaSlice<T>,
    ey: CudaSlice<T>,
    ez: CudaSlice<T>,
    hx: CudaSlice<T>,
    hy: CudaSlice<T>,
    hz: CudaSlice<T>,
}

impl<T: CudaScalar> DeviceFields<T> {
    /// Six components of `cells` zeros each.
    fn zeros(gpu: &Gpu, cells: usize) -> Result<Self> {
        Ok(DeviceFields {
            ex: gpu.zeros(cells)?,
            ey: gpu.zeros(cells)?,
            ez: gpu.zeros(cells)?,
            hx: gpu.zeros(cells)?,
            hy: gpu.zeros(cells)?,
            hz: gpu.zeros(cells)?,
        })
    }
}

impl<T> DeviceFields<T> {
    fn all(&self) -> [&CudaSlice<T>; 6] {
        [&self.ex, &self.ey, &self.ez, &self.hx, &self.hy, &self.hz]
    }

    fn all_mut(&mut self) -> [&mut CudaSlice<T>; 6] {
        [
            &mut self.ex,
            &mut self.ey,
            &mut self.ez,
            &mut self.hx,
            &mut self.hy,
            &mut self.hz,
        ]
    }
}

/// The one-pass step (see [`fused`]): its kernel and the arrays the new E, H and H-side
/// ψ go to (swapped with the current ones after each step).
struct Fused<T> {
    kernel: Arc<Kernel>,
    /// How its blocks cover the grid.
    blocks: Blocks,
    next: DeviceFields<T>,
    /// Per CPML axis, in the order of [`FdtdGpu::cpml`].
    next_psi_h: Vec<[CudaSlice<T>; 2]>,
    /// Two steps a pass, where the case allows it.
    pass: Option<two_steps::Pass<T>>,
}

/// One CPML axis on the device: ψ slabs (two terms for E, two for H) and the profiles.
struct CpmlAxis<T> {
    psi_e: [CudaSlice<T>; 2],
    psi_h: [CudaSlice<T>; 2],
    coef_e: CudaSlice<T>,
    coef_h: CudaSlice<T>,
}

/// The medium index and its table on the device.
struct DeviceMedia<T> {
    medium: CudaSlice<u8>,
    table: CudaSlice<T>,
    count: i32,
}

/// GPU FDTD stepper with the semantics of [`FdtdCpu`].
pub struct FdtdGpu<T: CudaScalar> {
    gpu: Gpu,
    /// What building it cost, by part (the coefficients are the CPU simulation's, counted
    /// with the stepper).
    build: crate::startup::BuildTimes,
    n: [usize; 3],
    plot: Component,
    f: DeviceFields<T>,
    ca: CudaSlice<T>,
    cb: CudaSlice<T>,
    /// The coefficients as a medium index per cell, for the one pass (see
    /// [`super::fdtd_media`]); `None` when the case holds too many media or with the
    /// schedule's `media=off`.
    media: Option<DeviceMedia<T>>,
    h_kernel: Arc<Kernel>,
    e_kernel: Arc<Kernel>,
    scan_kernel: Arc<Kernel>,
    launch: Launch,
    /// The schedule in use, every field set.
    schedule: FdtdSchedule,
    /// The one-pass step, unless the schedule says `fused=off` or its second set of arrays did
    /// not fit.
    fused: Option<Fused<T>>,
    cpml: Vec<CpmlAxis<T>>,
    drude: Option<DrudeCells>,
    poles: Option<PoleCells>,
    points: Option<Points>,
    /// Running DFT monitors (flux planes among them).
    monitors: Option<DeviceMonitors>,
    /// Plane waves.
    waves: Option<DeviceWaves>,
    traces: Vec<Vec<f64>>,
    dt: f64,
    step: u64,
}

impl<T: CudaScalar> FdtdGpu<T> {
    /// Checks the case (features, then the CPU simulation's own checks), opens the first
    /// GPU, compiles the kernels and uploads the coefficients.
    pub fn new(s: &FdtdSetup) -> Result<Self> {
        Self::build(s, FdtdSchedule::default(), true)
    }

    /// As [`FdtdGpu::new`], with the fields `schedule` sets in place of the device's defaults.
    pub fn with_schedule(s: &FdtdSetup, schedule: Option<&FdtdSchedule>) -> Result<Self> {
        Self::build(s, schedule.copied().unwrap_or_default(), true)
    }

    /// As [`FdtdGpu::new`], one step a pass (the single steps two-step passes must equal).
    pub fn single_steps(s: &FdtdSetup) -> Result<Self> {
        Self::build(s, FdtdSchedule::default(), false)
    }

    fn build(s: &FdtdSetup, schedule: FdtdSchedule, pass: bool) -> Result<Self> {
        schedule.validate()?;
        // The CPU simulation validates sources, probes and boxes and computes the per-cell
        // coefficients and CPML profiles; the GPU takes them as they are.
        let t = std::time::Instant::now();
        let (cpu, gpu) = Gpu::open_beside(|| {
            let cpu = FdtdCpu::<T>::new(s)?;
            Ok((cpu, t.elapsed().as_secs_f64()))
        })?;
        let (cpu, coefficients_s) = cpu;
        let sim = cpu.sim();
        let class = fdlab_cuda::choose::device_class(&gpu.dev.info.name);
        // Plane waves correct H between the half steps, which the one pass does not stop at.
        // Only the one pass reads the medium index: none for a case that runs the half steps.
        let c = super::fdtd_sources::choices::<T>(s, class, &schedule);
        let one_pass = c.fused && s.plane_waves.is_empty();
        let index = if one_pass && c.media {
            let (ca, cb) = sim.e_coefficients();
            media_index(ca, cb)
        } else {
            None
        };
        let src = sources::<T>(s, &c, index.is_some(), pass)?;
        let h_kernel = gpu.kernel(&src.h)?;
        let e_kernel = gpu.kernel(&src.e)?;
        let scan_kernel = gpu.kernel(&src.scan)?;
        let g = sim.grid();
        let cells = g.cells();
        let (ca, cb) = sim.e_coefficients();
        let (ca, cb) = (gpu.upload(ca)?, gpu.upload(cb)?);
        let media = match index {
            Some(m) => Some(DeviceMedia {
                medium: gpu.upload(&m.medium)?,
                table: gpu.upload(&m.table)?,
                count: m.count as i32,
            }),
            None => None,
        };
        let f = DeviceFields::zeros(&gpu, cells)?;
        let mut cpml = Vec::new();
        for p in sim.cpml_profiles() {
            let slab = cells / g.n[p.axis] * 2 * p.thickness;
            let flat = |c: &[[T; 3]]| c.iter().flatten().copied().collect::<Vec<T>>();
            cpml.push(CpmlAxis {
                psi_e: [gpu.zeros(slab)?, gpu.zeros(slab)?],
                psi_h: [gpu.zeros(slab)?, gpu.zeros(slab)?],
                coef_e: gpu.upload(&flat(&p.coef_e))?,
                coef_h: gpu.upload(&flat(&p.coef_h))?,
            });
        }
        let drude = match &src.drude {
            Some((advance, apply)) => Some(DrudeCells::new(
                &gpu,
                (gpu.kernel(advance)?, gpu.kernel(apply)?),
                sim.drude_cells(),
                g.n,
            )?),
            None => None,
        };
        let poles = match &src.poles {
            Some((advance, apply)) => {
                let mut branches = Vec::new();
                for v in sim.pole_cells().views() {
                    let or_one = |v: Vec<f64>| if v.is_empty() { vec![0.0] } else { v };
                    let idx: Vec<i64> = v.cells.iter().map(|&c| c as i64).collect();
                    branches.push(PoleBranch {
                        lorentz: v.lorentz as i32,
                        cells: gpu.upload(if idx.is_empty() { &[0] } else { &idx[..] })?,
                        c: gpu.upload(&or_one(v.c.iter().flatten().copied().collect()))?,
                        p: gpu.upload(&or_one(v.p.to_vec()))?,
                        q: gpu.upload(&or_one(v.q.to_vec()))?,
                        n: v.cells.len() as i32,
                    });
                }
                Some(PoleCells {
                    advance: gpu.kernel(advance)?,
                    apply: gpu.kernel(apply)?,
                    branches,
                })
            }
            None => None,
        };
        let monitors = match &src.dft {
            Some(k) => DeviceMonitors::new(&gpu, gpu.kernel(k)?, sim.monitors())?,
            None => None,
        };
        let waves = match &src.tfsf {
            Some(k) => DeviceWaves::new(&gpu, gpu.kernel(k)?, sim.plane_waves(), s.dt)?,
            None => None,
        };
        let points = match &src.after {
            Some(after) => Some(Points::new(&gpu, after, s, g)?),
            None => None,
        };
        let fused = if one_pass {
            Fused::new(
                &gpu,
                &src,
                g.n,
                s.grid.boundary,
                &cpml,
                src.after.is_some(),
                drude.as_ref(),
            )?
        } else {
            None
        };
        Ok(FdtdGpu {
            build: gpu.build_times(coefficients_s),
            gpu,
            n: g.n,
            plot: s.plot,
            f,
            ca,
            cb,
            media,
            h_kernel,
            e_kernel,
            scan_kernel,
            launch: c.half_tile.launch(),
            schedule: FdtdSchedule::of(&FdtdChoices {
                pass: c.pass && pass,
                ..c
            }),
            fused,
            cpml,
            drude,
            poles,
            points,
            monitors,
            waves,
            traces: vec![Vec::new(); s.probes.len()],
            dt: s.dt,
            step: 0,
        })
    }

    /// Queue one step (`i` within the current call): H, E, then sources and probes.
    fn queue_step(&mut self, i: usize, cfg: LaunchConfig) -> Result<()> {
        let [nx, ny, nz] = self.n.map(|v| v as i32);
        let stream = self.gpu.stream.clone();
        let f = &mut self.f;
        if let Some(d) = &mut self.drude {
            let kb = &d.kb;
            let es = [&f.ex, &f.ey, &f.ez];
            for (e, br) in es.into_iter().zip(d.branches.iter_mut()) {
                if br.n == 0 {
                    continue;
                }
                let mut b = stream.launch_builder(d.advance.function());
                b.arg(e)
                    .arg(&br.cells)
                    .arg(&br.slot)
                    .arg(&br.medium)
                    .arg(kb);
                b.arg(&mut br.j).arg(&br.n);
                // SAFETY: the arguments match the generated signature; `cells` holds `n`
                // indices inside the grid, `slot` `n` indices into J's box, `medium` `n`
                // indices into `kb`'s pairs.
                unsafe { b.launch(drude_config(br.n)) }.map_err(driver("cuLaunchKernel"))?;
            }
        }
        if let Some(d) = &mut self.poles {
            let es = [&f.ex, &f.ey, &f.ez];
            for (i, br) in d.branches.iter_mut().enumerate() {
                if br.n == 0 {
                    continue;
                }
                let mut b = stream.launch_builder(d.advance.function());
                b.arg(es[i % 3]).arg(&br.cells).arg(&br.c);
                b.arg(&mut br.p).arg(&mut br.q).arg(&br.n).arg(&br.lorentz);
                // SAFETY: the arguments match the generated signature; `cells` holds `n`
                // indices inside the grid, `c` three values per cell, P and q `n` each.
                unsafe { b.launch(drude_config(br.n)) }.map_err(driver("cuLaunchKernel"))?;
            }
        }
        if let Some(fu) = self.fused.as_mut() {
            let dims = [nx, ny, nz];
            let (bounds, cfg) = fu.blocks.main(self.n);
            let coef = coefficients(&self.media, &self.ca, &self.cb);
            let lanes = fu.blocks.fork(&stream)?;
            let mut b = stream.launch_builder(fu.kernel.function());
            fused_args(&mut b, &mut fu.next, f, coef, &dims, &bounds);
            for (c, next) in self.cpml.iter_mut().zip(fu.next_psi_h.iter_mut()) {
                let [o0, o1] = &c.psi_h;
                let [n0, n1] = next;
                b.arg(o0).arg(o1).arg(n0).arg(n1).arg(&c.coef_h);
                let [p0, p1] = &mut c.psi_e;
                b.arg(p0).arg(p1).arg(&c.coef_e);
            }
            // SAFETY: the arguments match the generated signature (CPML axes in the order
            // the kernel was generated with); every array holds the grid's cells or an
            // axis's slab and profile; the old and new arrays are distinct, each thread
            // writes only the cells it owns, and E-side ψ only at its own cells.
            unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
            if let Some((core, bounds, cfg)) = fu.blocks.core(self.n) {
                let mut b = lanes[0].launch_builder(core.function());
                fused_args(&mut b, &mut fu.next, f, coef, &dims, &bounds);
                // SAFETY: as above; these blocks hold no CPML cell, and the first launch
                // skipped them.
                unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
                fu.blocks.join(&stream)?;
            }
            std::mem::swap(f, &mut fu.next);
            for (c, next) in self.cpml.iter_mut().zip(fu.next_psi_h.iter_mut()) {
                std::mem::swap(&mut c.psi_h, next);
            }
        } else {
            let mut b = stream.launch_builder(self.h_kernel.function());
            b.arg(&mut f.hx).arg(&mut f.hy).arg(&mut f.hz);
            b.arg(&f.ex).arg(&f.ey).arg(&f.ez);
            b.arg(&nx).arg(&ny).arg(&nz);
            for c in self.cpml.iter_mut() {
                let [p0, p1] = &mut c.psi_h;
                b.arg(p0).arg(p1).arg(&c.coef_h);
            }
            // SAFETY: the arguments match the generated signature (CPML axes in the order the
            // kernel was generated with); every array holds the grid's cells or an axis's slab
            // and profile, and each thread writes only its own cells.
            unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
            if let Some(w) = &self.waves {
                w.queue(&self.gpu, f.all_mut(), &self.cb, i, false)?;
            }
            let mut b = stream.launch_builder(self.e_kernel.function());
            b.arg(&mut f.ex).arg(&mut f.ey).arg(&mut f.ez);
            b.arg(&f.hx).arg(&f.hy).arg(&f.hz);
            b.arg(&self.ca).arg(&self.cb);
            b.arg(&nx).arg(&ny).arg(&nz);
            for c in self.cpml.iter_mut() {
                let [p0, p1] = &mut c.psi_e;
                b.arg(p0).arg(p1).arg(&c.coef_e);
            }
            // SAFETY: as above.
            unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
            if let Some(w) = &self.waves {
                w.queue(&self.gpu, f.all_mut(), &self.cb, i, true)?;
            }
        }
        if let Some(d) = &self.drude {
            let es = [&mut f.ex, &mut f.ey, &mut f.ez];
            for (e, br) in es.into_iter().zip(d.branches.iter()) {
                if br.n == 0 {
                    continue;
                }
                let mut b = stream.launch_builder(d.apply.function());
                b.arg(e).arg(&self.cb).arg(&br.cells).arg(&br.slot);
                b.arg(&br.j).arg(&br.n);
                // SAFETY: as for the currents' update.
                unsafe { b.launch(drude_config(br.n)) }.map_err(driver("cuLaunchKernel"))?;
            }
        }
        if let Some(d) = self.poles.as_mut() {
            let dt = self.dt;
            let es = [&mut f.ex, &mut f.ey, &mut f.ez];
            for (i, br) in d.branches.iter_mut().enumerate() {
                if br.n == 0 {
                    continue;
                }
                let mut b = stream.launch_builder(d.apply.function());
                b.arg(&mut *es[i % 3])
                    .arg(&self.cb)
                    .arg(&br.cells)
                    .arg(&br.c);
                b.arg(&mut br.p)
                    .arg(&br.q)
                    .arg(&br.n)
                    .arg(&br.lorentz)
                    .arg(&dt);
                // SAFETY: as for their advance.
                unsafe { b.launch(drude_config(br.n)) }.map_err(driver("cuLaunchKernel"))?;
            }
        }
        self.queue_points(i)
    }

    /// The one-thread kernel after step `i` of the call: sources, then probes.
    fn queue_points(&mut self, i: usize) -> Result<()> {
        let f = &mut self.f;
        let stream = self.gpu.stream.clone();
        if let Some(pt) = self.points.as_mut() {
            let row = i as i32;
            let kernel = pt.kernel.clone();
            let mut b = stream.launch_builder(kernel.function());
            b.arg(&mut f.ex).arg(&mut f.ey).arg(&mut f.ez);
            b.arg(&mut f.hx).arg(&mut f.hy).arg(&mut f.hz);
            b.arg(&self.cb);
            pt.args(&mut b, &row);
            let one = LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (32, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: the arguments match the generated signature; the cells are inside the
            // grid (checked by the CPU simulation) and the value and row buffers hold a row
            // per step of this call.
            unsafe { b.launch(one) }.map_err(driver("cuLaunchKernel"))?;
        }
        Ok(())
    }

    /// The component the outputs show.
    fn plotted(&self) -> &CudaSlice<T> {
        self.f.all()[comp(self.plot) as usize]
    }

    /// Flags the first non-finite cell of the fields after a call of `steps` steps.
    fn queue_scan(&mut self, steps: usize) -> Result<()> {
        let cells = self.cells() as i64;
        let t = tag(steps - 1);
        let blocks = (cells as u64).div_ceil(256).clamp(1, 4096) as u32;
        let stream = self.gpu.stream.clone();
        let mut b = stream.launch_builder(self.scan_kernel.function());
        for a in self.f.all() {
            b.arg(a);
        }
        b.arg(&cells)
            .arg(&mut self.gpu.bad)
            .arg(&mut self.gpu.badval)
            .arg(&t);
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match the generated signature; the loop stays below `cells`.
        unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
        Ok(())
    }
}

/// How the one pass reads E's coefficients.
#[derive(Clone, Copy)]
enum Coefficients<'a, T> {
    /// Two values per cell.
    PerCell(&'a CudaSlice<T>, &'a CudaSlice<T>),
    /// A medium index per cell and the media's table.
    Indexed(&'a DeviceMedia<T>),
}

/// The index where there is one, else the per-cell arrays.
fn coefficients<'a, T>(
    media: &'a Option<DeviceMedia<T>>,
    ca: &'a CudaSlice<T>,
    cb: &'a CudaSlice<T>,
) -> Coefficients<'a, T> {
    match media {
        Some(m) => Coefficients::Indexed(m),
        None => Coefficients::PerCell(ca, cb),
    }
}

/// The arguments both fused kernels start with: new fields, old fields, coefficients, sizes,
/// the box of cells to step and the box of blocks to skip.
fn fused_args<'a, T: CudaScalar>(
    b: &mut cudarc::driver::LaunchArgs<'a>,
    n: &'a mut DeviceFields<T>,
    f: &'a DeviceFields<T>,
    coefficients: Coefficients<'a, T>,
    dims: &'a [i32; 3],
    bounds: &'a [i32; 12],
) {
    b.arg(&mut n.ex).arg(&mut n.ey).arg(&mut n.ez);
    b.arg(&mut n.hx).arg(&mut n.hy).arg(&mut n.hz);
    b.arg(&f.ex).arg(&f.ey).arg(&f.ez);
    b.arg(&f.hx).arg(&f.hy).arg(&f.hz);
    match coefficients {
        Coefficients::PerCell(ca, cb) => b.arg(ca).arg(cb),
        Coefficients::Indexed(m) => b.arg(&m.medium).arg(&m.table).arg(&m.count),
    };
    for v in dims.iter().chain(bounds) {
        b.arg(v);
    }
}

impl<T: CudaScalar> Fused<T> {
    /// The kernel and the second set of arrays; `None` when those do not fit in the GPU's
    /// free memory (the step then runs as two half-step kernels, which need no second set).
    fn new(
        gpu: &Gpu,
        src: &FdtdSources,
        n: [usize; 3],
        boundary: [Boundary; 3],
        cpml: &[CpmlAxis<T>],
        points: bool,
        drude: Option<&DrudeCells>,
    ) -> Result<Option<Self>> {
        let thickness = boundary.map(|b| b.cpml().map(|p| p.thickness));
        let cells = n.iter().product();
        let slabs: usize = cpml.iter().map(|c| 2 * c.psi_h[0].len()).sum();
        let need = (6 * cells + slabs) * std::mem::size_of::<T>();
        // With room for the driver and the small per-call buffers.
        if gpu.dev.ensure_free(need as u64 + (256 << 20)).is_err() {
            return Ok(None);
        }
        let kernel = gpu.kernel(&src.fused)?;
        let blocks = Blocks::lay_out(
            gpu,
            src.fused_launch,
            1,
            fused::ONE_STEP,
            n,
            thickness,
            src.fused_core.as_ref(),
            &src.choices,
        )?;
        let next = DeviceFields::zeros(gpu, cells)?;
        let next_psi_h = blocks::second_copies(gpu, cpml.iter().map(|c| c.psi_h[0].len()))?;
        Ok(Some(Fused {
            kernel,
            blocks,
            next,
            next_psi_h,
            pass: two_steps::Pass::new(gpu, src, n, boundary, cpml, points, drude)?,
        }))
    }
}

const NAMES: [&str; 6] = ["ex", "ey", "ez", "hx", "hy", "hz"];

impl<T: CudaScalar> Stepper for FdtdGpu<T> {
    fn build_times(&self) -> crate::startup::BuildTimes {
        self.build
    }

    fn advance(&mut self, steps: usize) -> Result<()> {
        if steps == 0 {
            return Ok(());
        }
        let [nx, ny, nz] = self.n;
        let cfg = launch_config(self.launch, self.launch.grid(nx, ny, nz));
        if let Some(pt) = self.points.as_mut() {
            pt.prepare(&self.gpu, self.step, steps, self.dt)?;
        }
        if let Some(m) = self.monitors.as_mut() {
            m.prepare(&self.gpu, self.step, steps, self.dt)?;
        }
        if let Some(w) = self.waves.as_mut() {
            w.prepare(&self.gpu, self.step, steps, self.dt)?;
        }
        let mut i = 0;
        while i < steps {
            // Monitors rule a pass out (`fdtd_choices::single_steps_because`).
            if i + 1 < steps && self.has_pass() {
                self.queue_pass(i)?;
                i += 2;
                continue;
            }
            self.queue_step(i, cfg)?;
            if let Some(m) = self.monitors.as_mut() {
                m.queue(&self.gpu, self.f.all(), i)?;
            }
            i += 1;
        }
        self.queue_scan(steps)?;
        let first = self.step;
        self.step += steps as u64;
        // The scan's tag is the call's last step, the step the CPU reports; like the CPU,
        // a call that ends with a non-finite value keeps no probe samples.
        self.gpu.check_finite(first, self.n)?;
        if let Some(pt) = &self.points
            && pt.np > 0
        {
            let rows = self.gpu.download(&pt.rows)?;
            for row in rows.chunks_exact(pt.np as usize).take(steps) {
                for (tr, v) in self.traces.iter_mut().zip(row) {
                    tr.push(*v);
                }
            }
        }
        Ok(())
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn field(&self) -> Result<Vec<f64>> {
        self.gpu.download_f64(self.plotted())
    }

    fn values(&self, range: std::ops::Range<usize>) -> Result<Vec<f64>> {
        self.gpu.download_range_f64(self.plotted(), range)
    }

    fn plane(&self, p: crate::stepper::PlaneSample) -> Result<Vec<f64>> {
        self.gpu.download_plane_f64(self.plotted(), p)
    }

    fn traces(&self) -> &[Vec<f64>] {
        &self.traces
    }

    fn spectra(&self) -> Result<Vec<crate::fdtd::DftMonitor>> {
        self.monitors
            .as_ref()
            .map_or(Ok(vec![]), |m| m.spectra(&self.gpu))
    }

    /// The CPU stepper's parts, so that either stepper resumes the other's checkpoints.
    fn save_state(&self) -> Result<Vec<StatePart>> {
        let mut parts = Vec::new();
        for (name, a) in NAMES.iter().zip(self.f.all()) {
            parts.push((name.to_string(), to_bytes(&self.gpu.download(a)?)));
        }
        let tr: Vec<f64> = self.traces.iter().flatten().copied().collect();
        parts.push(("probes".into(), to_bytes(&tr)));
        if !self.cpml.is_empty() {
            let mut psi: Vec<T> = Vec::new();
            for c in &self.cpml {
                for p in c.psi_e.iter().chain(&c.psi_h) {
                    psi.extend(self.gpu.download(p)?);
                }
            }
            parts.push(("cpml".into(), to_bytes(&psi)));
        }
        if let Some(d) = &self.drude {
            parts.push(("drude".into(), to_bytes(&d.state(&self.gpu)?)));
        }
        if let Some(d) = &self.poles {
            let mut pq: Vec<f64> = Vec::new();
            for br in &d.branches {
                let n = br.n as usize;
                pq.extend(self.gpu.download(&br.p)?.into_iter().take(n));
                pq.extend(self.gpu.download(&br.q)?.into_iter().take(n));
            }
            parts.push(("dispersion".into(), to_bytes(&pq)));
        }
        if let Some(w) = &self.waves {
            parts.push(("plane_waves".into(), to_bytes(&w.state())));
        }
        if let Some(m) = &self.monitors {
            parts.push(("dft".into(), to_bytes(&m.state(&self.gpu)?)));
        }
        Ok(parts)
    }

    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> Result<()> {
        use crate::stepper::state_part as get;
        let cells = self.cells();
        let stream = self.gpu.stream.clone();
        let mut fields = Vec::new();
        for name in NAMES {
            fields.push(get::<T>(parts, name, cells)?);
        }
        let (np, ns) = (self.traces.len(), step as usize);
        let tr: Vec<f64> = get(parts, "probes", np * ns)?;
        let total: usize = self.cpml.iter().map(|c| 4 * c.psi_e[0].len()).sum();
        let psi: Vec<T> = if total > 0 {
            get(parts, "cpml", total)?
        } else {
            Vec::new()
        };
        let drude_j: Vec<f64> = match &self.drude {
            Some(d) => get(parts, "drude", d.state_len())?,
            None => Vec::new(),
        };
        let poles_len: usize = self
            .poles
            .iter()
            .flat_map(|d| d.branches.iter().map(|b| 2 * b.n as usize))
            .sum();
        let poles_pq: Vec<f64> = if self.poles.is_some() {
            get(parts, "dispersion", poles_len)?
        } else {
            Vec::new()
        };
        let lines: Vec<f64> = match &self.waves {
            Some(w) => get(parts, "plane_waves", w.state_len())?,
            None => Vec::new(),
        };
        let dft: Vec<f64> = match &self.monitors {
            Some(m) => get(parts, "dft", m.state_len())?,
            None => Vec::new(),
        };
        // Everything read and checked: now overwrite the device state.
        for (dst, v) in self.f.all_mut().into_iter().zip(&fields) {
            stream.memcpy_htod(v, dst).map_err(driver("cuMemcpyHtoD"))?;
        }
        let mut at = 0;
        for c in self.cpml.iter_mut() {
            for p in c.psi_e.iter_mut().chain(c.psi_h.iter_mut()) {
                let len = p.len();
                stream
                    .memcpy_htod(&psi[at..at + len], p)
                    .map_err(driver("cuMemcpyHtoD"))?;
                at += len;
            }
        }
        if let Some(d) = self.drude.as_mut() {
            d.restore(&self.gpu, &drude_j)?;
        }
        if let Some(d) = self.poles.as_mut() {
            let mut at = 0;
            for br in d.branches.iter_mut() {
                let n = br.n as usize;
                if n > 0 {
                    stream
                        .memcpy_htod(&poles_pq[at..at + n], &mut br.p)
                        .map_err(driver("cuMemcpyHtoD"))?;
                    stream
                        .memcpy_htod(&poles_pq[at + n..at + 2 * n], &mut br.q)
                        .map_err(driver("cuMemcpyHtoD"))?;
                }
                at += 2 * n;
            }
        }
        if let Some(m) = self.monitors.as_mut() {
            m.restore(&self.gpu, &dft)?;
        }
        if let Some(w) = self.waves.as_mut() {
            w.restore(&lines);
        }
        self.traces = (0..np).map(|i| tr[i * ns..(i + 1) * ns].to_vec()).collect();
        self.step = step;
        Ok(())
    }

    fn cells(&self) -> usize {
        self.n.iter().product()
    }

    fn bytes_per_step(&self) -> usize {
        // Six components read and written, the two E coefficients read.
        14 * self.cells() * std::mem::size_of::<T>()
    }

    fn steps_per_pass(&self) -> usize {
        if self.has_pass() {
            2
        } else {
            1
        }
    }

    fn backend(&self) -> &'static str {
        "cuda"
    }

    fn schedule(&self) -> String {
        self.schedule.to_string()
    }
}
