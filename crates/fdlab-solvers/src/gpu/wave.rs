//! The wave step on the GPU: one fused kernel for stencil and leapfrog update over the whole
//! grid. With a CPML, a kernel before it updates ψ on the layers' cells and one after it adds
//! the CPML terms (and updates ζ) on the cells within the layers' reach; those kernels touch
//! only that shell. When the case has sources or receivers, one small kernel adds the one and
//! samples the other.

use super::schedule::{ShellTile, WaveChoices, WaveSchedule};
use super::temporal::Request;
use super::wave_pass::{self, WaveShape};
use super::wave_points::Points;
use super::{
    cuda_type, driver, march_order, march_sizes, precision_of, tag, DeviceStepper, Gpu,
    StepExchange,
};
use crate::error::{Error, Result};
use crate::layout::{to_bytes, Layout};
use crate::physics::CpmlProfile;
use crate::stepper::{StatePart, Stepper};
use crate::wave::WaveSetup;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use fdlab_cuda::codegen::solver::cpml::{self, CpmlSpec, Shell, SHELL_BLOCK};
use fdlab_cuda::codegen::solver::ring::{self, Ring};
use fdlab_cuda::codegen::solver::wave_pass::WavePassSpec;
use fdlab_cuda::codegen::solver::{step, Launch, Lowered, StepSpec};
use fdlab_cuda::codegen::CudaSource;
use fdlab_cuda::{CudaScalar, Kernel};
use std::sync::Arc;

/// Per-axis CPML arrays on the device, in kernel order (x, middle, march).
struct CpmlBuffers<T> {
    psi: [CudaSlice<T>; 3],
    zeta: [CudaSlice<T>; 3],
    a: [CudaSlice<T>; 3],
    b: [CudaSlice<T>; 3],
    active: [CudaSlice<u8>; 3],
    psi_kernel: Arc<Kernel>,
    terms_kernel: Arc<Kernel>,
    /// The cells where some axis's ψ changes (its profile's `a` is not zero).
    psi_shell: Shell,
    /// The cells within some layer's reach (flagged active), which take the CPML terms.
    terms_shell: Shell,
}

/// GPU wave stepper: p and p⁻ on the device; each step writes p⁺ over p⁻ and swaps.
pub struct WaveGpu<T: CudaScalar> {
    gpu: Gpu,
    /// What building it cost, by part.
    build: crate::startup::BuildTimes,
    n: [usize; 3],
    dim: usize,
    layout: Layout,
    p: CudaSlice<T>,
    q: CudaSlice<T>,
    c2dt2: CudaSlice<T>,
    kernel: Arc<Kernel>,
    /// Whether the step kernel takes its planes from its arguments (a split run's slab).
    ranged: bool,
    launch: Launch,
    /// The schedule in use, every field set.
    schedule: WaveSchedule,
    /// Dynamic shared memory of the step kernel (its ring of planes), in bytes.
    shared: u32,
    cpml: Option<CpmlBuffers<T>>,
    points: Option<Points<T>>,
    /// The k-step pass, when temporal blocking is on.
    pass: Option<Pass<T>>,
    traces: Vec<Vec<f64>>,
    dt: f64,
    /// `1 / ΔV`, the point sources' scale.
    inv_dv: f64,
    step: u64,
    /// Whether the state it was built with is zero everywhere (see [`Stepper::rewind_to_rest`]).
    at_rest: bool,
}

/// A compiled k-step pass, its shape and the two fields it writes (the grid is read by
/// neighbouring tiles while a pass runs, so it cannot be written in place).
struct Pass<T> {
    kernel: Arc<Kernel>,
    shape: WaveShape,
    /// Dynamic shared memory per block, bytes.
    shared: u32,
    p2: CudaSlice<T>,
    q2: CudaSlice<T>,
}

impl<T: CudaScalar> WaveGpu<T> {
    /// Opens the first GPU, compiles the step kernels (and the k-step pass the schedule asks
    /// for, where it applies; the default runs single steps) and uploads the fields.
    pub fn new(s: &WaveSetup) -> Result<Self> {
        Self::with_schedule(s, None)
    }

    /// As [`WaveGpu::new`], with temporal blocking as `request` says (`Some(Request::Off)` or
    /// `None`: single steps). A case that blocking does not apply to (a CPML, sources or
    /// receivers) runs single steps.
    pub fn with_temporal(s: &WaveSetup, request: Option<Request>) -> Result<Self> {
        let schedule = WaveSchedule {
            pass: request,
            ..WaveSchedule::default()
        };
        Self::with_schedule(s, Some(&schedule))
    }

    /// As [`WaveGpu::new`], with the fields `schedule` sets in place of the defaults.
    pub fn with_schedule(s: &WaveSetup, schedule: Option<&WaveSchedule>) -> Result<Self> {
        Self::build(s, schedule.copied().unwrap_or_default(), 0, false, None)
    }

    /// The temporal-blocking shape in use, if any.
    pub fn temporal(&self) -> Option<WaveShape> {
        self.pass.as_ref().map(|p| p.shape)
    }

    /// As [`WaveGpu::new`] on device `ordinal`, for a split run: the step kernel takes the
    /// planes it computes from its arguments.
    pub fn on_device(s: &WaveSetup, ordinal: usize) -> Result<Self> {
        Self::on_device_with(s, ordinal, None)
    }

    /// As [`WaveGpu::on_device`], with a CPML's `profiles` (physical axes) in place of the
    /// ones `s` makes: a slab of a split grid takes the whole grid's, sliced to its planes.
    /// Its [`DeviceStepper::advance_with`] exchanges the march axis's ψ too, between the ψ
    /// update and the CPML terms, and needs an exchange that does not overlap.
    pub fn on_device_with(
        s: &WaveSetup,
        ordinal: usize,
        profiles: Option<[CpmlProfile; 3]>,
    ) -> Result<Self> {
        let single = WaveSchedule {
            pass: Some(Request::Off),
            ..WaveSchedule::default()
        };
        if let Some(p) = &profiles {
            let fits = (0..s.dim).all(|a| {
                let n = s.n[a];
                p[a].a.len() == n && p[a].b.len() == n && p[a].active.len() == n
            });
            if !fits {
                return Err(Error::Invalid(format!(
                    "CPML profiles of {:?} points do not fit a {:?} grid",
                    p.each_ref().map(|x| x.a.len()),
                    &s.n[..s.dim]
                )));
            }
        }
        Self::build(s, single, ordinal, true, profiles)
    }

    fn build(
        s: &WaveSetup,
        schedule: WaveSchedule,
        ordinal: usize,
        ranged: bool,
        profiles: Option<[CpmlProfile; 3]>,
    ) -> Result<Self> {
        schedule.validate()?;
        let gpu = Gpu::open_on(ordinal)?;
        let t = std::time::Instant::now();
        let co = s.stencil_coefficients()?;
        let c2: Vec<T> = s.c2dt2_in();
        let coefficients_s = t.elapsed().as_secs_f64();
        let r = s.order / 2;
        let c = choices::<T>(s, &schedule);
        let launch = c.launch.fit(s.dim, r, s.n, std::mem::size_of::<T>());
        let shared_limit = gpu.dev.info.max_shared_per_block.max(0) as usize;
        let src = sources::<T>(s, &c, ranged, shared_limit)?;
        let kernel = gpu.kernel(&src.step)?;
        let shared = src.step.shared_bytes;
        super::allow_shared(kernel.function(), shared).map_err(driver("cuFuncSetAttribute"))?;
        let to_t = |v: &[f64]| crate::par::map(v, T::from_f64);
        let cells: usize = s.n.iter().product();
        let zero = |v: &[f64]| v.iter().all(|&x| x == 0.0);
        let at_rest = zero(&s.initial) && s.previous.as_deref().is_none_or(zero);
        let p = gpu.upload(&to_t(&s.initial))?;
        let q = match &s.previous {
            Some(previous) => gpu.upload(&to_t(previous))?,
            None => gpu.duplicate(&p)?,
        };
        let c2dt2 = gpu.upload(&c2)?;
        drop(c2);
        let cpml = match (profiles.as_ref().or(co.cpml.as_ref()), &src.psi) {
            (Some(prof), Some((psi, terms))) => {
                let psi_kernel = gpu.kernel(psi)?;
                let terms_kernel = gpu.kernel(terms)?;
                let unused = CpmlProfile {
                    a: vec![0.0],
                    b: vec![1.0],
                    active: vec![false],
                };
                let prof = march_order(prof, s.dim, unused);
                // Axes that exist hold a full field of ψ and ζ; the 2-D middle axis one value.
                let len = |a: usize| if a == 1 && s.dim == 2 { 1 } else { cells };
                let fields = |g: &Gpu| -> Result<[CudaSlice<T>; 3]> {
                    Ok([g.zeros(len(0))?, g.zeros(len(1))?, g.zeros(len(2))?])
                };
                let each = |f: &dyn Fn(&CpmlProfile) -> Vec<T>| -> Result<[CudaSlice<T>; 3]> {
                    Ok([
                        gpu.upload(&f(&prof[0]))?,
                        gpu.upload(&f(&prof[1]))?,
                        gpu.upload(&f(&prof[2]))?,
                    ])
                };
                let flags = |p: &CpmlProfile| p.active.iter().map(|&x| x as u8).collect::<Vec<_>>();
                let (nx, no, nm) = march_sizes(s.n, s.dim);
                let sizes = [nx, no, nm].map(|v| v as usize);
                let changing = prof
                    .each_ref()
                    .map(|p| p.a.iter().map(|&a| a != 0.0).collect::<Vec<_>>());
                let tile = shell_tile(c.shell_tile, sizes);
                let psi_shell =
                    Shell::covering_in(sizes, changing.each_ref().map(|v| v.as_slice()), tile);
                let terms_shell =
                    Shell::covering_in(sizes, prof.each_ref().map(|p| p.active.as_slice()), tile);
                if !(psi_shell.fits() && terms_shell.fits()) {
                    return Err(Error::Invalid(format!(
                        "the CPML layers of this {:?} grid hold {} cells, more than the GPU \
                         wave stepper's 2^32: make the layers thinner or run on the CPU",
                        s.n, terms_shell.threads
                    )));
                }
                Some(CpmlBuffers {
                    psi: fields(&gpu)?,
                    zeta: fields(&gpu)?,
                    a: each(&|p| to_t(&p.a))?,
                    b: each(&|p| to_t(&p.b))?,
                    active: [
                        gpu.upload(&flags(&prof[0]))?,
                        gpu.upload(&flags(&prof[1]))?,
                        gpu.upload(&flags(&prof[2]))?,
                    ],
                    psi_kernel,
                    terms_kernel,
                    psi_shell,
                    terms_shell,
                })
            }
            _ => None,
        };
        let points = match &src.after {
            Some(after) => Some(Points::new(
                &gpu,
                gpu.kernel(after)?,
                s.n,
                s.dt,
                &s.shot_points(),
                co.inv_dv,
            )?),
            None => None,
        };
        let pass = match pass_source::<T>(s, &c)? {
            Some((src, shape)) => open_pass(&gpu, &src, shape, cells)?,
            None => None,
        };
        let ran = WaveChoices {
            launch,
            pass: pass
                .as_ref()
                .map_or(Request::Off, |p| Request::Shape(p.shape.t)),
            ..c
        };
        Ok(WaveGpu {
            build: gpu.build_times(coefficients_s),
            gpu,
            n: s.n,
            dim: s.dim,
            layout: Layout::new(s.n, s.dim, r),
            p,
            q,
            c2dt2,
            kernel,
            launch,
            shared,
            cpml,
            points,
            pass,
            schedule: WaveSchedule::of(&ran),
            traces: vec![vec![]; s.receivers.len()],
            dt: s.dt,
            inv_dv: co.inv_dv,
            ranged,
            step: 0,
            at_rest,
        })
    }

    /// Queue one step (`i` within the current call) on the stream: the step kernel on
    /// `ranges`, with `exchange` (if any) around it; the CPML and point kernels on the grid.
    fn queue_step<'e>(
        &mut self,
        i: usize,
        ranges: &super::StepRanges,
        mut exchange: Option<&mut (dyn StepExchange<T> + 'e)>,
    ) -> Result<()> {
        let (nx, no, nm) = march_sizes(self.n, self.dim);
        let stream = self.gpu.stream.clone();
        if let Some(c) = self.cpml.as_mut().filter(|c| c.psi_shell.threads > 0) {
            let sh = ShellArgs::of(&c.psi_shell);
            let mut b = stream.launch_builder(c.psi_kernel.function());
            b.arg(&self.p).arg(&nx).arg(&no).arg(&nm);
            for ((psi, pa), pb) in c.psi.iter_mut().zip(&c.a).zip(&c.b) {
                b.arg(psi).arg(pa).arg(pb);
            }
            sh.push(&mut b);
            // SAFETY: the arguments match the generated signature; ψ and p hold the grid's
            // values, the profiles one value per cell along their axis, and the shell's ends
            // lie inside the grid.
            unsafe { b.launch(sh.config) }.map_err(driver("cuLaunchKernel"))?;
        }
        // A slab's march-axis ψ is differentiated across its halo planes: the neighbours'
        // new values replace the halo planes' (every slab, so that the exchanges pair).
        if let (Some(c), Some(ex)) = (self.cpml.as_mut(), exchange.as_deref_mut()) {
            ex.start(&stream, &mut c.psi[2])?;
            ex.finish(&stream)?;
        }
        for e in &ranges.edges {
            self.queue_planes(e.clone(), i)?;
        }
        if let (true, Some(ex)) = (ranges.overlapped, exchange.as_deref_mut()) {
            ex.edges_queued(&stream)?;
        }
        self.queue_planes(ranges.interior.clone(), i)?;
        let t = tag(i);
        if let Some(c) = self.cpml.as_mut().filter(|c| c.terms_shell.threads > 0) {
            let sh = ShellArgs::of(&c.terms_shell);
            let mut b = stream.launch_builder(c.terms_kernel.function());
            b.arg(&self.p).arg(&mut self.q).arg(&self.c2dt2);
            b.arg(&nx).arg(&no).arg(&nm);
            b.arg(&mut self.gpu.bad).arg(&mut self.gpu.badval).arg(&t);
            let axes = c.psi.iter().zip(c.zeta.iter_mut()).zip(&c.a).zip(&c.b);
            for ((((psi, zeta), pa), pb), active) in axes.zip(&c.active) {
                b.arg(psi).arg(zeta).arg(pa).arg(pb).arg(active);
            }
            sh.push(&mut b);
            // SAFETY: as above; each thread reads and writes q and ζ at its own cell only.
            unsafe { b.launch(sh.config) }.map_err(driver("cuLaunchKernel"))?;
        }
        if let Some(pt) = self.points.as_mut() {
            // The step's own index times Δt, as the CPU stepper: a sum of the call's start
            // and the offset within it would round differently in runs cut into other calls
            // (a resumed run's), and f64 fields would then differ in their last bits.
            let time = (self.step + i as u64) as f64 * self.dt;
            pt.queue(&stream, &mut self.q, time, self.step + i as u64, i as i32)?;
        }
        if let Some(ex) = exchange {
            ex.start(&stream, &mut self.q)?;
            ex.finish(&stream)?;
        }
        std::mem::swap(&mut self.p, &mut self.q);
        Ok(())
    }

    /// Queue the step kernel (`i` within the current call) on the march-axis planes `planes`.
    fn queue_planes(&mut self, planes: std::ops::Range<usize>, i: usize) -> Result<()> {
        if planes.is_empty() {
            return Ok(());
        }
        let (mut cfg, sizes) = super::plane_launch(self.launch, self.n, self.dim, &planes);
        cfg.shared_mem_bytes = self.shared;
        let t = tag(i);
        let stream = self.gpu.stream.clone();
        let mut b = stream.launch_builder(self.kernel.function());
        b.arg(&self.p).arg(&mut self.q).arg(&self.c2dt2);
        for v in &sizes {
            b.arg(v);
        }
        b.arg(&mut self.gpu.bad).arg(&mut self.gpu.badval).arg(&t);
        // SAFETY: the arguments match the generated signature; the planes lie inside the
        // grid and q is read and written only at each thread's own points.
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(driver("cuLaunchKernel"))
    }

    /// The pressure one step back, at the grid points.
    pub fn previous(&self) -> Result<Vec<f64>> {
        self.gpu.download_f64(&self.q)
    }

    /// `passes` k-step passes, each tagged with its index in the non-finite flag. Returns the
    /// index of the pass that met a non-finite value, after which no pass wrote anything.
    fn passes(&mut self, passes: usize) -> Result<Option<usize>> {
        let Some(pass) = self.pass.as_mut() else {
            return Ok(None);
        };
        let (nx, no, nm) = march_sizes(self.n, self.dim);
        let g = pass
            .shape
            .grid(self.dim, nx as usize, no as usize, nm as usize);
        let cfg = LaunchConfig {
            grid_dim: (g[0], g[1], g[2]),
            block_dim: (pass.shape.t.threads(), 1, 1),
            shared_mem_bytes: pass.shared,
        };
        let stream = self.gpu.stream.clone();
        for i in 0..passes {
            let t = tag(i);
            let mut b = stream.launch_builder(pass.kernel.function());
            b.arg(&self.p).arg(&self.q).arg(&self.c2dt2);
            b.arg(&mut pass.p2).arg(&mut pass.q2);
            b.arg(&nx).arg(&no).arg(&nm);
            b.arg(&mut self.gpu.bad).arg(&mut self.gpu.badval).arg(&t);
            // SAFETY: the arguments match the generated signature; every field holds
            // nx·no·nm values, the kernel indexes only inside the grid (wrapped or guarded),
            // writes only p2 and q2, and its shared memory is the size it was generated for
            // (attribute set when opened).
            unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
            std::mem::swap(&mut self.p, &mut pass.p2);
            std::mem::swap(&mut self.q, &mut pass.q2);
        }
        self.gpu.flagged_call(passes)
    }
}

/// The choices for `s` in `T`: the fields `schedule` sets, the rest the defaults.
pub(super) fn choices<T: CudaScalar>(s: &WaveSetup, schedule: &WaveSchedule) -> WaveChoices {
    let bytes = std::mem::size_of::<T>();
    schedule.over(WaveChoices::choose(s.dim, s.order / 2, s.n, bytes))
}

/// The tile of the shell kernels' slabs on a grid of `sizes` (kernel order).
fn shell_tile(t: ShellTile, sizes: [usize; 3]) -> (u64, u64) {
    match t {
        ShellTile::Tile(x, o) => (x as u64, o as u64),
        ShellTile::Plane => (sizes[0] as u64, sizes[1] as u64),
    }
}

/// The k-step pass kernel of `s` in `T` and its shape, where temporal blocking applies (no
/// CPML, sources or receivers) and the choices' pass asks for it.
pub(super) fn pass_source<T: CudaScalar>(
    s: &WaveSetup,
    c: &WaveChoices,
) -> Result<Option<(CudaSource, WaveShape)>> {
    let blockable = !matches!(s.boundary, crate::wave::WaveBoundary::Cpml { .. })
        && s.sources.is_empty()
        && s.receivers.is_empty();
    if !blockable {
        return Ok(None);
    }
    let r = s.order / 2;
    let (lowered, _) = Lowered::with_layers(&s.description()?, r)?;
    let bytes = std::mem::size_of::<T>();
    let shape = wave_pass::plan(s.dim, r as u32, bytes, c.pass).map_err(Error::Invalid)?;
    let Some(shape) = shape else {
        return Ok(None);
    };
    // CUDA's limit on blocks along y and z: a grid beyond it runs single steps.
    let (nx, no, nm) = march_sizes(s.n, s.dim);
    let g = shape.grid(s.dim, nx as usize, no as usize, nm as usize);
    // The pass indexes a plane with 32-bit integers.
    if g[1] > 65535 || g[2] > 65535 || (nx as i64) * (no as i64) >= 1 << 31 {
        return Ok(None);
    }
    let spec = WavePassSpec {
        ty: cuda_type::<T>(),
        dim: s.dim,
        periodic: lowered.periodic,
        w2: lowered.w2,
        w0: lowered.w0,
        s: shape,
    };
    let body = fdlab_cuda::codegen::solver::wave_pass::wave_pass(&spec);
    let mut src = super::source(
        "wave_pass",
        &body,
        precision_of::<T>(),
        Launch::new(s.dim, r, s.n, bytes),
    );
    src.block = [shape.t.threads(), 1, 1];
    src.shared_bytes = shape.shared_bytes(s.dim, bytes);
    Ok(Some((src, shape)))
}

/// Compiles the pass, allows its shared memory, checks that a block fits an SM and allocates
/// the two fields it writes; `None` (single steps, with a note on stderr) where any of these
/// is refused.
fn open_pass<T: CudaScalar>(
    gpu: &Gpu,
    src: &CudaSource,
    shape: WaveShape,
    cells: usize,
) -> Result<Option<Pass<T>>> {
    let kernel = gpu.kernel(src)?;
    let shared = src.shared_bytes;
    let f = kernel.function();
    let t = shape.t;
    if let Err(e) = super::allow_shared(f, shared) {
        eprintln!(
            "note: temporal blocking {t} off: {shared} bytes of shared memory refused ({e:?})"
        );
        return Ok(None);
    }
    match f.occupancy_max_active_blocks_per_multiprocessor(t.threads(), shared as usize, None) {
        Ok(b) if b > 0 => {}
        r => {
            eprintln!("note: temporal blocking {t} off: no block fits an SM ({r:?})");
            return Ok(None);
        }
    }
    let (p2, q2) = match (gpu.zeros(cells), gpu.zeros(cells)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!(
                "note: temporal blocking {t} off: no device memory for its two more fields ({e})"
            );
            return Ok(None);
        }
    };
    Ok(Some(Pass {
        kernel,
        shape,
        shared,
        p2,
        q2,
    }))
}

/// The kernels of a wave stepper.
pub(super) struct WaveSources {
    /// The fused step.
    pub step: CudaSource,
    /// The CPML's ψ update and its terms after the step, with a CPML.
    pub psi: Option<(CudaSource, CudaSource)>,
    /// Sources and receivers, when the case has any.
    pub after: Option<CudaSource>,
}

/// The step kernel of `spec`: with a ring of planes in shared memory where the launch asks
/// for one and `shared_limit` bytes hold it, else the tiled or the register-queue step.
fn step_source(
    lowered: &Lowered,
    spec: &StepSpec,
    precision: fdlab_core::Precision,
    shared_limit: usize,
) -> CudaSource {
    let update = lowered.update();
    if let Some(ring) = Ring::of(spec, update, shared_limit) {
        let mut src = super::source(
            "wave_step",
            &ring::ring_step(spec, update, ring),
            precision,
            spec.launch,
        );
        src.shared_bytes = ring.bytes as u32;
        return src;
    }
    super::source(
        "wave_step",
        &lowered.step_body(spec),
        precision,
        spec.launch,
    )
}

/// Every kernel of `s` in `T`: the whole-grid set and the split run's step, for a GPU with
/// the shared memory of an H100.
pub(super) fn all_sources<T: CudaScalar>(s: &WaveSetup) -> Result<Vec<CudaSource>> {
    let limit = ring::H100_SHARED;
    let c = choices::<T>(s, &WaveSchedule::default());
    let mut out = sources::<T>(s, &c, false, limit)?.all();
    out.push(sources::<T>(s, &c, true, limit)?.step);
    if let Some((src, _)) = pass_source::<T>(s, &c)? {
        out.push(src);
    }
    Ok(out)
}

impl WaveSources {
    pub(super) fn all(self) -> Vec<CudaSource> {
        std::iter::once(self.step)
            .chain(self.psi.into_iter().flat_map(|(a, b)| [a, b]))
            .chain(self.after)
            .collect()
    }
}

/// A shell kernel's trailing arguments and its launch: one thread per cell of the shell.
struct ShellArgs {
    ends: [i32; 8],
    threads: u32,
    config: LaunchConfig,
}

impl ShellArgs {
    fn of(s: &Shell) -> Self {
        ShellArgs {
            ends: [
                s.lo[0], s.hi[0], s.lo[1], s.hi[1], s.lo[2], s.hi[2], s.tile[0], s.tile[1],
            ]
            .map(|v| v as i32),
            threads: s.threads as u32,
            config: LaunchConfig {
                grid_dim: (s.blocks(), 1, 1),
                block_dim: (SHELL_BLOCK, 1, 1),
                shared_mem_bytes: 0,
            },
        }
    }

    fn push<'a>(&'a self, b: &mut cudarc::driver::LaunchArgs<'a>) {
        for v in &self.ends {
            b.arg(v);
        }
        b.arg(&self.threads);
    }
}

/// The kernels of `s` in `T`; the step over the planes its arguments name when `ranged` (a
/// split run's slab), else over the whole grid; its ring of planes (if any) within
/// `shared_limit` bytes of shared memory.
pub(super) fn sources<T: CudaScalar>(
    s: &WaveSetup,
    c: &WaveChoices,
    ranged: bool,
    shared_limit: usize,
) -> Result<WaveSources> {
    let r = s.order / 2;
    let (lowered, layer_w1) = Lowered::with_layers(&s.description()?, r)?;
    let launch = c.launch.fit(s.dim, r, s.n, std::mem::size_of::<T>());
    let ty = cuda_type::<T>();
    let precision = precision_of::<T>();
    let spec = lowered.spec(ty, launch, ranged);
    let cpml = layer_w1.map(|w1| CpmlSpec {
        w1,
        min_blocks: c.shell_blocks,
    });
    let one_block = Launch::flat(256);
    let has_points = !(s.sources.is_empty() && s.receivers.is_empty());
    Ok(WaveSources {
        step: step_source(&lowered, &spec, precision, shared_limit),
        psi: cpml.as_ref().map(|c| {
            let l = Launch::flat(SHELL_BLOCK);
            let spec = StepSpec {
                launch: l,
                ..spec.clone()
            };
            (
                super::source("wave_psi", &cpml::psi(&spec, c), precision, l),
                super::source("wave_cpml", &cpml::cpml_terms(&spec, c), precision, l),
            )
        }),
        after: has_points
            .then(|| super::source("wave_after", &step::after_step(ty), precision, one_block)),
    })
}

impl<T: CudaScalar> WaveGpu<T> {
    /// `steps` steps, with `exchange` (if any) around each; then the receiver rows and the
    /// non-finite check.
    fn hooked_steps<'e>(
        &mut self,
        steps: usize,
        mut exchange: Option<&mut (dyn StepExchange<T> + 'e)>,
    ) -> Result<()> {
        let (_, _, nm) = march_sizes(self.n, self.dim);
        let ranges = super::step_ranges(nm as usize, exchange.as_deref());
        if let Some(pt) = self.points.as_mut() {
            let need = steps * pt.nr.max(1) as usize;
            if pt.rows.len() < need {
                pt.rows = self.gpu.zeros(need)?;
            }
        }
        for i in 0..steps {
            self.queue_step(i, &ranges, exchange.as_deref_mut())?;
        }
        let first = self.step;
        self.step += steps as u64;
        if let Some(pt) = &self.points
            && pt.nr > 0
        {
            let rows = self.gpu.download(&pt.rows)?;
            let nr = pt.nr as usize;
            for row in rows.chunks_exact(nr).take(steps) {
                for (tr, v) in self.traces.iter_mut().zip(row) {
                    tr.push(*v);
                }
            }
        }
        self.gpu.check_finite(first, self.n)
    }
}

impl<T: CudaScalar> DeviceStepper<T> for WaveGpu<T> {
    fn advance_with(&mut self, steps: usize, exchange: &mut dyn StepExchange<T>) -> Result<()> {
        if !self.ranged {
            return Err(Error::Invalid(
                "a wave stepper made for the whole grid cannot step a slab: open it with \
                 WaveGpu::on_device"
                    .into(),
            ));
        }
        if self.cpml.is_some() && exchange.overlaps() {
            return Err(Error::Invalid(
                "a wave slab with a CPML exchanges after the whole step: its CPML terms change \
                 the planes it sends after they are computed; give it an exchange that does \
                 not overlap"
                    .into(),
            ));
        }
        self.hooked_steps(steps, Some(exchange))
    }

    fn stream(&self) -> Arc<cudarc::driver::CudaStream> {
        self.gpu.stream.clone()
    }
}

impl<T: CudaScalar> Stepper for WaveGpu<T> {
    fn build_times(&self) -> crate::startup::BuildTimes {
        self.build
    }

    /// ⌊steps / k⌋ k-step passes, then single steps for the rest. When a pass meets a
    /// non-finite value, the passes after it wrote nothing: the state before it is still in
    /// one of the two pairs of fields, and the steps from there are replayed singly, so that
    /// the report names the exact step and cell.
    fn advance(&mut self, steps: usize) -> Result<()> {
        let k = self.steps_per_pass();
        let passes = if k > 1 { steps / k } else { 0 };
        if passes > 0 {
            let first = self.step;
            if let Some(bad) = self.passes(passes)? {
                if super::heat::replay_from_v(passes, bad)
                    && let Some(pass) = self.pass.as_mut()
                {
                    std::mem::swap(&mut self.p, &mut pass.p2);
                    std::mem::swap(&mut self.q, &mut pass.q2);
                }
                self.step = first + (bad * k) as u64;
                return self.hooked_steps(steps - bad * k, None);
            }
            self.step = first + (passes * k) as u64;
        }
        self.hooked_steps(steps - passes * k, None)
    }

    fn steps_per_pass(&self) -> usize {
        self.pass.as_ref().map_or(1, |p| p.shape.t.k as usize)
    }

    fn schedule(&self) -> String {
        self.schedule.to_string()
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn set_points(&mut self, points: &crate::wave::ShotPoints) -> Result<()> {
        let Some(old) = &self.points else {
            return Err(Error::Usage(
                "this GPU wave stepper was built without sources or receivers, so it has no                  kernel for them: build it from a setup with the first shot's points"
                    .into(),
            ));
        };
        if self.ranged {
            return Err(Error::Usage(
                "a slab of a split grid takes its sources from the whole grid's setup; shots                  run on whole grids"
                    .into(),
            ));
        }
        let kernel = old.kernel();
        self.points = Some(Points::new(
            &self.gpu,
            kernel,
            self.n,
            self.dt,
            points,
            self.inv_dv,
        )?);
        self.traces = vec![vec![]; points.receivers.len()];
        Ok(())
    }

    fn field(&self) -> Result<Vec<f64>> {
        self.gpu.download_f64(&self.p)
    }

    fn values(&self, range: std::ops::Range<usize>) -> Result<Vec<f64>> {
        self.gpu.download_range_f64(&self.p, range)
    }

    fn plane(&self, p: crate::stepper::PlaneSample) -> Result<Vec<f64>> {
        self.gpu.download_plane_f64(&self.p, p)
    }

    fn traces(&self) -> &[Vec<f64>] {
        &self.traces
    }

    fn save_state(&self) -> Result<Vec<StatePart>> {
        let l = &self.layout;
        let mut parts = vec![
            ("p".into(), super::padded_bytes(l, &self.field()?)),
            ("q".into(), super::padded_bytes(l, &self.previous()?)),
        ];
        if let Some(c) = &self.cpml {
            // The CPU layout: three values (x, y, z) per padded point.
            for (name, arrays) in [("psi", &c.psi), ("zeta", &c.zeta)] {
                let mut flat = vec![0.0f64; 3 * l.len()];
                for (a, phys) in self.axes() {
                    let v = self.gpu.download_f64(&arrays[a])?;
                    let padded: Vec<f64> = l.pad(&v);
                    for (i, x) in padded.iter().enumerate() {
                        flat[3 * i + phys] = *x;
                    }
                }
                parts.push((name.into(), to_bytes(&flat)));
            }
        }
        let tr: Vec<f64> = self.traces.iter().flatten().copied().collect();
        parts.push(("traces".into(), to_bytes(&tr)));
        Ok(parts)
    }

    fn rewind_to_rest(&mut self) -> Result<bool> {
        if !self.at_rest {
            return Ok(false);
        }
        let stream = self.gpu.stream.clone();
        let zeros = |a: &mut CudaSlice<T>| stream.memset_zeros(a).map_err(driver("cuMemsetD8"));
        zeros(&mut self.p)?;
        zeros(&mut self.q)?;
        if let Some(c) = self.cpml.as_mut() {
            for a in c.psi.iter_mut().chain(c.zeta.iter_mut()) {
                zeros(a)?;
            }
        }
        self.traces.iter_mut().for_each(Vec::clear);
        self.step = 0;
        Ok(true)
    }

    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> Result<()> {
        let l = self.layout;
        let p: Vec<T> = super::from_padded(&l, parts, "p")?;
        let q: Vec<T> = super::from_padded(&l, parts, "q")?;
        let stream = self.gpu.stream.clone();
        stream
            .memcpy_htod(&p, &mut self.p)
            .map_err(driver("cuMemcpyHtoD"))?;
        stream
            .memcpy_htod(&q, &mut self.q)
            .map_err(driver("cuMemcpyHtoD"))?;
        let axes = self.axes();
        if let Some(c) = self.cpml.as_mut() {
            for (name, arrays) in [("psi", &mut c.psi), ("zeta", &mut c.zeta)] {
                let flat: Vec<f64> = crate::stepper::state_part(parts, name, 3 * l.len())?;
                for &(a, phys) in &axes {
                    let padded: Vec<f64> = flat.iter().skip(phys).step_by(3).copied().collect();
                    let v: Vec<T> = l.unpad(&padded).into_iter().map(T::from_f64).collect();
                    stream
                        .memcpy_htod(&v, &mut arrays[a])
                        .map_err(driver("cuMemcpyHtoD"))?;
                }
            }
        }
        let nr = self.traces.len();
        let tr: Vec<f64> = crate::stepper::state_part(parts, "traces", nr * step as usize)?;
        self.traces = (0..nr)
            .map(|i| tr[i * step as usize..(i + 1) * step as usize].to_vec())
            .collect();
        self.step = step;
        Ok(())
    }

    fn cells(&self) -> usize {
        self.n.iter().product()
    }

    fn bytes_per_step(&self) -> usize {
        // p and p⁻ read, p⁺ written, c²Δt² read.
        4 * self.cells() * std::mem::size_of::<T>()
    }

    fn backend(&self) -> &'static str {
        "cuda"
    }
}

impl<T: CudaScalar> WaveGpu<T> {
    /// (kernel-order axis, physical axis) of the axes that exist.
    fn axes(&self) -> Vec<(usize, usize)> {
        if self.dim == 3 {
            vec![(0, 0), (1, 1), (2, 2)]
        } else {
            vec![(0, 0), (2, 1)]
        }
    }
}
