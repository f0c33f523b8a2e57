//! The heat step on the GPU: one fused kernel per step, `v = u + Δt κ L u`; for order 2 and a
//! constant κ, `k` steps per pass over the grid ([`super::temporal`]) and single steps for the
//! rest.

use super::schedule::{HeatChoices, HeatSchedule};
use super::temporal::{self, Request, Temporal};
use super::{cuda_type, driver, march_sizes, precision_of, tag, DeviceStepper, Gpu, StepExchange};
use crate::error::{Error, Result};
use crate::heat::HeatSetup;
use crate::layout::Layout;
use crate::stepper::{StatePart, Stepper};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use fdlab_cuda::codegen::solver::temporal::{heat_pass, PassChoices, PassSpec};
use fdlab_cuda::codegen::solver::{Family, Launch, Lowered};
use fdlab_cuda::codegen::CudaSource;
use fdlab_cuda::{CudaScalar, Kernel};
use std::sync::Arc;

/// GPU heat stepper: the field and its next step on the device, swapped each step.
pub struct HeatGpu<T: CudaScalar> {
    gpu: Gpu,
    /// What building it cost, by part.
    build: crate::startup::BuildTimes,
    n: [usize; 3],
    dim: usize,
    layout: Layout,
    u: CudaSlice<T>,
    v: CudaSlice<T>,
    /// `Δt κ` per point, when it varies.
    kappa: Option<CudaSlice<T>>,
    kernel: Arc<Kernel>,
    launch: Launch,
    /// The schedule in use, every field set.
    schedule: HeatSchedule,
    /// The k-step pass, when temporal blocking is on.
    pass: Option<Pass>,
    /// Whether the step kernel takes its planes from its arguments (a split run's slab).
    ranged: bool,
    step: u64,
}

/// A compiled k-step pass and its shape.
struct Pass {
    kernel: Arc<Kernel>,
    shape: Temporal,
    /// Dynamic shared memory per block, bytes.
    shared: u32,
}

impl<T: CudaScalar> HeatGpu<T> {
    /// Opens the first GPU, compiles the step (and the k-step pass the device's default
    /// schedule picks, where it applies) and uploads the initial field.
    pub fn new(s: &HeatSetup) -> Result<Self> {
        Self::with_schedule(s, None)
    }

    /// As [`HeatGpu::new`], with temporal blocking as `request` says instead of the device's
    /// default (`Some(Request::Off)`: single steps only; `None`: as [`HeatGpu::new`]). A setup
    /// that blocking does not apply to (order above 2, κ varying in space) runs single steps.
    pub fn with_temporal(s: &HeatSetup, request: Option<Request>) -> Result<Self> {
        let schedule = HeatSchedule {
            pass: request,
            ..HeatSchedule::default()
        };
        Self::with_schedule(s, Some(&schedule))
    }

    /// As [`HeatGpu::new`], with the fields `schedule` sets in place of the device's defaults.
    pub fn with_schedule(s: &HeatSetup, schedule: Option<&HeatSchedule>) -> Result<Self> {
        Self::build(s, schedule.copied().unwrap_or_default(), 0, false)
    }

    /// As [`HeatGpu::new`] on device `ordinal`, one step per pass (for a decomposed run,
    /// whose halos are one step deep).
    pub fn on_device(s: &HeatSetup, ordinal: usize) -> Result<Self> {
        let single = HeatSchedule {
            pass: Some(Request::Off),
            ..HeatSchedule::default()
        };
        Self::build(s, single, ordinal, true)
    }

    fn build(s: &HeatSetup, schedule: HeatSchedule, ordinal: usize, ranged: bool) -> Result<Self> {
        schedule.validate()?;
        let gpu = Gpu::open_on(ordinal)?;
        let t = std::time::Instant::now();
        let co = s.coefficients()?;
        let coefficients_s = t.elapsed().as_secs_f64();
        let r = s.order / 2;
        let class = fdlab_cuda::choose::device_class(&gpu.dev.info.name);
        let c = choices::<T>(s, class, &schedule)?;
        let launch = c.launch.fit(s.dim, r, s.n, std::mem::size_of::<T>());
        let field_kappa = s.field_kappa();
        let kernel = gpu.kernel(&sources::<T>(s, &c, ranged)?)?;
        let cells = s.n.iter().product::<usize>();
        let to_t = |v: &[f64]| crate::par::map(v, T::from_f64);
        let kappa = if field_kappa {
            Some(gpu.upload(&to_t(&co.dt_kappa))?)
        } else {
            None
        };
        let u = gpu.upload(&to_t(&s.initial))?;
        let v = gpu.zeros(cells)?;
        let pass = match pass_source::<T>(s, &c)? {
            Some((src, shape)) => open_pass(&gpu, &src, shape)?,
            None => None,
        };
        let ran = HeatChoices {
            launch,
            pass: pass
                .as_ref()
                .map_or(Request::Off, |p| Request::Shape(p.shape)),
            ..c
        };
        Ok(HeatGpu {
            build: gpu.build_times(coefficients_s),
            gpu,
            n: s.n,
            dim: s.dim,
            layout: Layout::new(s.n, s.dim, r),
            u,
            v,
            kappa,
            kernel,
            launch,
            schedule: HeatSchedule::of(&ran),
            pass,
            ranged,
            step: 0,
        })
    }

    /// The temporal-blocking shape in use, if any.
    pub fn temporal(&self) -> Option<Temporal> {
        self.pass.as_ref().map(|p| p.shape)
    }

    /// `steps` single steps with the one-step kernel, then the non-finite check.
    fn single_steps(&mut self, steps: usize) -> Result<()> {
        self.hooked_steps(steps, None)
    }

    /// As [`Self::single_steps`], with `exchange` around every step.
    fn hooked_steps<'e>(
        &mut self,
        steps: usize,
        mut exchange: Option<&mut (dyn StepExchange<T> + 'e)>,
    ) -> Result<()> {
        if steps == 0 {
            return Ok(());
        }
        let (_, _, nm) = march_sizes(self.n, self.dim);
        let ranges = super::step_ranges(nm as usize, exchange.as_deref());
        let stream = self.gpu.stream.clone();
        for i in 0..steps {
            for e in &ranges.edges {
                self.queue_planes(e.clone(), i)?;
            }
            if let (true, Some(ex)) = (ranges.overlapped, exchange.as_deref_mut()) {
                ex.edges_queued(&stream)?;
            }
            self.queue_planes(ranges.interior.clone(), i)?;
            if let Some(ex) = exchange.as_deref_mut() {
                ex.start(&stream, &mut self.v)?;
                ex.finish(&stream)?;
            }
            std::mem::swap(&mut self.u, &mut self.v);
        }
        let first = self.step;
        self.step += steps as u64;
        self.gpu.check_finite(first, self.n)
    }

    /// Queue the step kernel (`i` within the current call) on the march-axis planes `planes`.
    fn queue_planes(&mut self, planes: std::ops::Range<usize>, i: usize) -> Result<()> {
        if planes.is_empty() {
            return Ok(());
        }
        let (cfg, sizes) = super::plane_launch(self.launch, self.n, self.dim, &planes);
        let t = tag(i);
        let stream = self.gpu.stream.clone();
        let mut b = stream.launch_builder(self.kernel.function());
        b.arg(&self.u).arg(&mut self.v);
        // A constant κ is a literal; the pointer is then never read.
        b.arg(self.kappa.as_ref().unwrap_or(&self.u));
        for v in &sizes {
            b.arg(v);
        }
        b.arg(&mut self.gpu.bad).arg(&mut self.gpu.badval).arg(&t);
        // SAFETY: the arguments match the generated signature; u, v and κ hold nx·no·nm
        // values, the planes lie inside the grid and the kernel indexes only inside it.
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(driver("cuLaunchKernel"))
    }

    /// `passes` k-step passes, each tagged with its index in the non-finite flag. Returns the
    /// index of the pass that met a non-finite value, after which no pass wrote anything.
    fn passes(&mut self, passes: usize) -> Result<Option<usize>> {
        let Some(pass) = &self.pass else {
            return Ok(None);
        };
        let (nx, no, nm) = march_sizes(self.n, self.dim);
        let g = pass
            .shape
            .grid(self.dim, nx as usize, no as usize, nm as usize);
        let cfg = LaunchConfig {
            grid_dim: (g[0], g[1], g[2]),
            block_dim: (pass.shape.threads(), 1, 1),
            shared_mem_bytes: pass.shared,
        };
        for i in 0..passes {
            let t = tag(i);
            let stream = self.gpu.stream.clone();
            let mut b = stream.launch_builder(pass.kernel.function());
            b.arg(&self.u).arg(&mut self.v);
            b.arg(&nx).arg(&no).arg(&nm);
            b.arg(&mut self.gpu.bad).arg(&mut self.gpu.badval).arg(&t);
            // SAFETY: the arguments match the generated signature; u and v hold nx·no·nm
            // values, the kernel indexes only inside the grid (wrapped or guarded) and its
            // shared memory is the size it was generated for (attribute set when opened).
            unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
            std::mem::swap(&mut self.u, &mut self.v);
        }
        self.gpu.flagged_call(passes)
    }
}

/// After `passes` passes (each swapping u and v) of which pass `bad` met a non-finite value:
/// whether the state before pass `bad` is now in v (else u). Pass p read the buffer that was
/// u after p swaps, and the passes after `bad` wrote nothing, so it is in u when an even
/// number of swaps separates it from now.
pub(super) fn replay_from_v(passes: usize, bad: usize) -> bool {
    (passes - bad) % 2 == 1
}

/// The choices for `s` in `T` on a device of `class`: the fields `schedule` sets, the rest
/// the class's defaults.
pub(super) fn choices<T: CudaScalar>(
    s: &HeatSetup,
    class: Option<&str>,
    schedule: &HeatSchedule,
) -> Result<HeatChoices> {
    let blockable = s.order == 2 && !s.field_kappa();
    let bytes = std::mem::size_of::<T>();
    let defaults = HeatChoices::choose(s.dim, s.order / 2, s.n, bytes, class, blockable);
    Ok(schedule.over(defaults))
}

/// The k-step pass kernel of `s` in `T` and its shape, where temporal blocking applies and
/// the choices' pass asks for it.
pub(super) fn pass_source<T: CudaScalar>(
    s: &HeatSetup,
    c: &HeatChoices,
) -> Result<Option<(CudaSource, Temporal)>> {
    let lowered = Lowered::of(&s.description()?, s.order / 2)?;
    let Family::Heat {
        field_kappa: false,
        kc,
    } = lowered.family
    else {
        return Ok(None);
    };
    if lowered.r != 1 {
        return Ok(None);
    }
    let bytes = std::mem::size_of::<T>();
    let shape = temporal::plan(s.dim, s.n, bytes, None, Some(c.pass)).map_err(Error::Invalid)?;
    let Some(shape) = shape else {
        return Ok(None);
    };
    // CUDA's limit on blocks along y and z: a grid beyond it (over 65535 tiles or chunks along
    // an axis) runs single steps.
    let (nx, no, nm) = march_sizes(s.n, s.dim);
    let g = shape.grid(s.dim, nx as usize, no as usize, nm as usize);
    if g[1] > 65535 || g[2] > 65535 {
        return Ok(None);
    }
    let w = &lowered.w2;
    let spec = PassSpec {
        ty: cuda_type::<T>(),
        dim: s.dim,
        periodic: lowered.periodic,
        w: [w[0][1], w[1][1], w[2][1]],
        w0: lowered.w0,
        kc,
        n: [nx as u32, no as u32, nm as u32],
        t: shape,
        choices: PassChoices {
            column: c.column,
            fixed: c.fixed,
            pairs: c.pairs,
            lean: c.lean,
            ahead: c.ahead,
            unroll: c.unroll,
        },
    };
    let body = heat_pass(&spec);
    let mut src = super::source(
        "heat_pass",
        &body,
        precision_of::<T>(),
        Launch::new(s.dim, 1, s.n, bytes),
    );
    src.block = [shape.threads(), 1, 1];
    src.shared_bytes = shape.shared_bytes(s.dim, bytes);
    Ok(Some((src, shape)))
}

/// Compiles the pass, allows its shared memory and checks that a block fits an SM; `None`
/// (single steps, with a note on stderr) on a device where it does not.
fn open_pass(gpu: &Gpu, src: &CudaSource, shape: Temporal) -> Result<Option<Pass>> {
    let kernel = gpu.kernel(src)?;
    let shared = src.shared_bytes;
    let f = kernel.function();
    if let Err(e) = super::allow_shared(f, shared) {
        eprintln!(
            "note: temporal blocking {shape} off: {shared} bytes of shared memory refused ({e:?})"
        );
        return Ok(None);
    }
    match f.occupancy_max_active_blocks_per_multiprocessor(shape.threads(), shared as usize, None) {
        Ok(b) if b > 0 => Ok(Some(Pass {
            kernel,
            shape,
            shared,
        })),
        r => {
            eprintln!("note: temporal blocking {shape} off: no block fits an SM ({r:?})");
            Ok(None)
        }
    }
}

/// The one-step kernels of `s` in `T` (the default shape, the H100's and the H200's, over the
/// whole grid and over a slab) and, where it applies, each class's default k-step pass.
pub(super) fn all_sources<T: CudaScalar>(s: &HeatSetup) -> Result<Vec<CudaSource>> {
    let mut out = vec![];
    let of = |class| choices::<T>(s, class, &HeatSchedule::default());
    for ranged in [false, true] {
        for class in super::DEVICE_CLASSES {
            out.push(sources::<T>(s, &of(class)?, ranged)?);
        }
    }
    for class in super::DEVICE_CLASSES {
        if let Some((src, _)) = pass_source::<T>(s, &of(class)?)?
            && !out.iter().any(|o| o.name == src.name)
        {
            out.push(src);
        }
    }
    Ok(out)
}

/// The step kernel of `s` in `T` with the choices `c`, over the planes its arguments name
/// when `ranged` (a split run's slab), else the whole grid.
pub(super) fn sources<T: CudaScalar>(
    s: &HeatSetup,
    c: &HeatChoices,
    ranged: bool,
) -> Result<CudaSource> {
    let r = s.order / 2;
    let lowered = Lowered::of(&s.description()?, r)?;
    let launch = c.launch.fit(s.dim, r, s.n, std::mem::size_of::<T>());
    let spec = lowered.spec(cuda_type::<T>(), launch, ranged);
    let body = lowered.step_body(&spec);
    Ok(super::source(
        "heat_step",
        &body,
        precision_of::<T>(),
        launch,
    ))
}

impl<T: CudaScalar> DeviceStepper<T> for HeatGpu<T> {
    fn advance_with(&mut self, steps: usize, exchange: &mut dyn StepExchange<T>) -> Result<()> {
        if !self.ranged {
            return Err(Error::Invalid(
                "a heat stepper made for the whole grid cannot step a slab: open it with \
                 HeatGpu::on_device"
                    .into(),
            ));
        }
        self.hooked_steps(steps, Some(exchange))
    }

    fn stream(&self) -> Arc<cudarc::driver::CudaStream> {
        self.gpu.stream.clone()
    }
}

impl<T: CudaScalar> Stepper for HeatGpu<T> {
    fn build_times(&self) -> crate::startup::BuildTimes {
        self.build
    }

    /// ⌊steps / k⌋ k-step passes, then single steps for the rest. When a pass meets a
    /// non-finite value, the passes after it wrote nothing: the state before it is still in
    /// one of the two buffers, and the steps from there are replayed singly, so that the
    /// report names the exact step and cell.
    fn advance(&mut self, steps: usize) -> Result<()> {
        let k = self.pass.as_ref().map_or(1, |p| p.shape.k as usize);
        let passes = if k > 1 { steps / k } else { 0 };
        if passes > 0 {
            let first = self.step;
            if let Some(bad) = self.passes(passes)? {
                if replay_from_v(passes, bad) {
                    std::mem::swap(&mut self.u, &mut self.v);
                }
                self.step = first + (bad * k) as u64;
                return self.single_steps(steps - bad * k);
            }
            self.step = first + (passes * k) as u64;
        }
        self.single_steps(steps - passes * k)
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn field(&self) -> Result<Vec<f64>> {
        self.gpu.download_f64(&self.u)
    }

    fn values(&self, range: std::ops::Range<usize>) -> Result<Vec<f64>> {
        self.gpu.download_range_f64(&self.u, range)
    }

    fn plane(&self, p: crate::stepper::PlaneSample) -> Result<Vec<f64>> {
        self.gpu.download_plane_f64(&self.u, p)
    }

    fn traces(&self) -> &[Vec<f64>] {
        &[]
    }

    fn save_state(&self) -> Result<Vec<StatePart>> {
        Ok(vec![(
            "u".into(),
            super::padded_bytes(&self.layout, &self.field()?),
        )])
    }

    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> Result<()> {
        let u: Vec<T> = super::from_padded(&self.layout, parts, "u")?;
        self.gpu
            .stream
            .memcpy_htod(&u, &mut self.u)
            .map_err(driver("cuMemcpyHtoD"))?;
        self.step = step;
        Ok(())
    }

    fn cells(&self) -> usize {
        self.n.iter().product()
    }

    fn bytes_per_step(&self) -> usize {
        let fields = if self.kappa.is_some() { 3 } else { 2 };
        fields * self.cells() * std::mem::size_of::<T>()
    }

    fn backend(&self) -> &'static str {
        "cuda"
    }

    fn steps_per_pass(&self) -> usize {
        self.pass.as_ref().map_or(1, |p| p.shape.k as usize)
    }

    fn schedule(&self) -> String {
        self.schedule.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::replay_from_v;

    #[test]
    fn the_state_before_the_bad_pass_is_found_in_the_right_buffer() {
        // One pass, bad: its input was u, now swapped into v.
        assert!(replay_from_v(1, 0));
        // Two passes, the first bad: swapped twice, back in u.
        assert!(!replay_from_v(2, 0));
        assert!(replay_from_v(2, 1));
        assert!(replay_from_v(3, 0) && !replay_from_v(3, 1) && replay_from_v(3, 2));
    }
}
