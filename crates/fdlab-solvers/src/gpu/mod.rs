//! GPU steppers: the heat, wave and FDTD steps as fused CUDA kernels (generated in
//! `kernels` and `fdtd_kernels`, compiled with NVRTC through `fdlab-cuda`), over the same
//! backend-neutral setups as the CPU steppers. Fields live on the device for the whole run; only outputs, checkpoints and
//! receiver traces come back.

mod fdtd;
mod fdtd_choices;
mod fdtd_dispersive;
mod fdtd_media;
mod fdtd_monitors;
mod fdtd_points;
mod fdtd_sources;
mod fdtd_tfsf;
mod frames;
pub mod generated;
mod heat;
pub mod schedule;
pub mod temporal;
mod wave;
pub mod wave_pass;
mod wave_points;

pub use fdtd::FdtdGpu;
pub use heat::HeatGpu;
pub use wave::WaveGpu;

/// The halo exchange of a decomposed run, around every step of a device stepper.
///
/// The stepper's grid is a slab whose first and last [`StepExchange::halo`] planes along the
/// march axis (z in 3-D, y in 2-D) are halos: a step computes only the planes between them,
/// and the exchange fills the halos of its output from the neighbouring slabs. When the
/// exchange [`overlaps`](StepExchange::overlaps), the step queues the
/// [`edge`](StepExchange::edge) planes next to each halo, calls
/// [`edges_queued`](StepExchange::edges_queued), queues the interior and then
/// [`start`](StepExchange::start)s the exchange, which waits only for the edges, so the planes
/// travel while the interior is computed; otherwise it queues everything, then starts the
/// exchange. Either way [`finish`](StepExchange::finish) ends the step.
pub trait StepExchange<T>: Send {
    /// Halo planes at the march axis's low and high end (received, never computed).
    fn halo(&self) -> [usize; 2];
    /// Planes next to each halo that the exchange sends.
    fn edge(&self) -> usize;
    /// Whether the exchange runs beside the interior's computation.
    fn overlaps(&self) -> bool;
    /// When overlapping: the sent planes are now queued on `stream` (the interior is not).
    fn edges_queued(&mut self, stream: &Arc<CudaStream>) -> Result<()>;
    /// Queue the exchange of the step's output `field`, once its sent planes are computed.
    fn start(&mut self, stream: &Arc<CudaStream>, field: &mut CudaSlice<T>) -> Result<()>;
    /// Make `stream` wait for the exchange, so that the next step reads the new halos.
    fn finish(&mut self, stream: &Arc<CudaStream>) -> Result<()>;
}

/// A GPU stepper that can run as one slab of a decomposed grid (one step per pass: a fused
/// multi-step pass would need halos as deep as its steps).
pub trait DeviceStepper<T>: crate::stepper::Stepper {
    /// As [`crate::stepper::Stepper::advance`], with `exchange` around every step.
    fn advance_with(&mut self, steps: usize, exchange: &mut dyn StepExchange<T>) -> Result<()>;
    /// The stream every step is queued on.
    fn stream(&self) -> Arc<CudaStream>;
}

/// The march-axis plane ranges one step computes on a grid of `nm` planes: all of them
/// without an exchange; with one, the edge planes next to each halo (queued before the
/// exchange starts, when it overlaps) and the interior.
fn step_ranges(nm: usize, exchange: Option<&dyn StepExchange<impl Sized>>) -> StepRanges {
    let Some(ex) = exchange else {
        return StepRanges {
            edges: vec![],
            interior: 0..nm,
            overlapped: false,
        };
    };
    let [h0, h1] = ex.halo();
    let (a, b) = (h0, nm - h1);
    if !ex.overlaps() {
        return StepRanges {
            edges: vec![],
            interior: a..b,
            overlapped: false,
        };
    }
    let e = ex.edge().min(b - a);
    let mut edges = vec![];
    let (mut ia, mut ib) = (a, b);
    if h0 > 0 {
        edges.push(a..a + e);
        ia = a + e;
    }
    if h1 > 0 {
        edges.push(b - e..b);
        ib = b - e;
    }
    StepRanges {
        edges,
        interior: ia..ib.max(ia),
        overlapped: true,
    }
}

/// The launch shape and the size arguments `(nx, no, nm, first, end)` of a step kernel that
/// computes march-axis `planes` of a grid of `n` points in `dim` dimensions.
fn plane_launch(
    l: Launch,
    n: [usize; 3],
    dim: usize,
    planes: &std::ops::Range<usize>,
) -> (LaunchConfig, [i32; 5]) {
    let (nx, no, nm) = march_sizes(n, dim);
    let cfg = launch_config(l, l.grid(nx as usize, no as usize, planes.len()));
    (cfg, [nx, no, nm, planes.start as i32, planes.end as i32])
}

/// What [`step_ranges`] returns.
struct StepRanges {
    edges: Vec<std::ops::Range<usize>>,
    interior: std::ops::Range<usize>,
    overlapped: bool,
}

/// GPUs present, or why none can be used (one line).
pub fn device_count() -> std::result::Result<usize, String> {
    fdlab_cuda::probe().map_err(|e| e.to_string())
}

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::stepper::PlaneSample;
use cudarc::driver::{
    CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use fdlab_core::Precision;
use fdlab_cuda::codegen::solver::Launch;
use fdlab_cuda::codegen::{fnv1a, CudaSource, InputKind};
use fdlab_cuda::{CudaScalar, Device, Kernel};
use std::sync::Arc;

/// A driver error as fdlab-cuda's error, naming the call.
fn driver(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> Error {
    move |e| {
        Error::Gpu(fdlab_cuda::Error::Driver {
            call: call.into(),
            detail: format!("{e:?}"),
        })
    }
}

/// The device, its stream and the non-finite flag every step kernel reports into.
struct Gpu {
    dev: Device,
    stream: Arc<CudaStream>,
    /// Smallest `step << 40 | cell` of a non-finite result, `u64::MAX` when none.
    bad: CudaSlice<u64>,
    /// The value found there.
    badval: CudaSlice<f64>,
    /// A picture's samples on the device and in page-locked host memory, kept between
    /// frames.
    samples: std::sync::Mutex<Option<SampleBuffers>>,
    /// Time spent compiling or loading kernels and on device memory, for
    /// [`crate::Stepper::build_times`].
    meter: crate::startup::BuildMeter,
}

/// See [`Gpu::download_plane_f64`].
type SampleBuffers = (
    CudaSlice<f64>,
    cudarc::driver::PinnedHostSlice<f64>,
    frames::FramePool,
);

/// Bits of the non-finite flag that hold the cell index; the step within a call is above.
const CELL_BITS: u32 = 40;

impl Gpu {
    /// Opens the first GPU on another thread while `host` runs on this one (opening a device
    /// costs a few tenths of a second, as long as a large case's host setup), and returns
    /// both. `host`'s error comes first, as when the two ran one after the other. The
    /// device time counted is only what `host` did not cover, so that the start-up parts
    /// still add up to the wall clock.
    fn open_beside<R: Send>(host: impl FnOnce() -> Result<R> + Send) -> Result<(R, Gpu)> {
        let start = std::time::Instant::now();
        let (host_result, host_s, opened) = std::thread::scope(|scope| {
            let opening = scope.spawn(|| Device::open(0));
            let host_result = host();
            let host_s = start.elapsed();
            (host_result, host_s, opening.join())
        });
        let r = host_result?;
        let dev = opened.map_err(|_| Error::Invalid("opening the GPU failed (panic)".into()))??;
        let gpu = Self::ready(dev)?;
        gpu.meter.add_device(start.elapsed().saturating_sub(host_s));
        Ok((r, gpu))
    }

    /// Device `ordinal` (0 for the first GPU).
    fn open_on(ordinal: usize) -> Result<Gpu> {
        let opened = std::time::Instant::now();
        let gpu = Self::ready(Device::open(ordinal)?)?;
        gpu.meter.add_device(opened.elapsed());
        Ok(gpu)
    }

    /// The stepper's view of an opened device: its stream and the non-finite flag's buffers
    /// (the device time is the caller's to count).
    fn ready(dev: Device) -> Result<Gpu> {
        let stream = dev.stream().clone();
        let bad = stream
            .clone_htod(&[u64::MAX])
            .map_err(driver("cuMemcpyHtoD"))?;
        let badval = stream.alloc_zeros(1).map_err(driver("cuMemAlloc"))?;
        Ok(Gpu {
            dev,
            stream,
            bad,
            badval,
            samples: std::sync::Mutex::new(None),
            meter: crate::startup::BuildMeter::default(),
        })
    }

    /// Compiles (or takes from the caches) a kernel.
    fn kernel(&self, src: &CudaSource) -> Result<Arc<Kernel>> {
        self.meter.kernels(|| Ok(self.dev.kernel(src)?))
    }

    /// A device copy of `data`, after checking that it fits.
    fn upload<T: DeviceRepr + Unpin>(&self, data: &[T]) -> Result<CudaSlice<T>> {
        self.meter.device(|| {
            self.dev.ensure_free(std::mem::size_of_val(data) as u64)?;
            self.stream.clone_htod(data).map_err(driver("cuMemcpyHtoD"))
        })
    }

    /// A second device array holding `src`'s values, after checking that it fits: a field
    /// that starts equal to another needs no second upload.
    fn duplicate<T: DeviceRepr>(&self, src: &CudaSlice<T>) -> Result<CudaSlice<T>> {
        self.meter.device(|| {
            self.dev
                .ensure_free((src.len() * std::mem::size_of::<T>()) as u64)?;
            self.stream.clone_dtod(src).map_err(driver("cuMemcpyDtoD"))
        })
    }

    /// `len` zeros on the device, after checking that they fit.
    fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.meter.device(|| {
            self.dev
                .ensure_free((len * std::mem::size_of::<T>()) as u64)?;
            self.stream.alloc_zeros(len).map_err(driver("cuMemAlloc"))
        })
    }

    /// What building a stepper on this GPU has cost so far, with `coefficients_s` as the
    /// stepper measured it.
    fn build_times(&self, coefficients_s: f64) -> crate::startup::BuildTimes {
        self.meter.times(coefficients_s)
    }

    fn download<T: DeviceRepr + Default + Clone>(&self, buf: &CudaSlice<T>) -> Result<Vec<T>> {
        let v = self
            .stream
            .clone_dtoh(buf)
            .map_err(driver("cuMemcpyDtoH"))?;
        self.copied()?;
        Ok(v)
    }

    /// Waits for the stream's copies to the host. fdlab turns off cudarc's event tracking, so
    /// cudarc neither records a pinned buffer's event nor waits after a copy: without this a
    /// read of a pinned buffer raced the copy into it (a picture's strided samples came back
    /// stale), and a copy into pageable memory rested on the driver returning late.
    fn copied(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(driver("cuStreamSynchronize"))
    }

    /// A device field's values as f64.
    fn download_f64<T: CudaScalar + Default>(&self, buf: &CudaSlice<T>) -> Result<Vec<f64>> {
        Ok(self.download(buf)?.iter().map(|v| v.as_f64()).collect())
    }

    /// The values of `buf` at `range` as f64: only that range crosses the bus.
    fn download_range_f64<T: CudaScalar + Default>(
        &self,
        buf: &CudaSlice<T>,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<f64>> {
        if range.start >= range.end || range.end > buf.len() {
            return Ok(vec![]);
        }
        let part = self
            .stream
            .clone_dtoh(&buf.slice(range))
            .map_err(driver("cuMemcpyDtoH"))?;
        self.copied()?;
        Ok(part.iter().map(|v| v.as_f64()).collect())
    }

    /// The samples `p` of `buf` as f64 ([`PlaneSample::take`]'s order): picked on the
    /// device when strided, so that only they cross the bus.
    fn download_plane_f64<T: CudaScalar + Default>(
        &self,
        buf: &CudaSlice<T>,
        p: PlaneSample,
    ) -> Result<Vec<f64>> {
        if p.stride == 1 || p.range().end > buf.len() {
            return self.download_range_f64(buf, p.range());
        }
        let (w, h) = (p.width(), p.height());
        let body = fdlab_cuda::codegen::solver::sample_plane(cuda_type::<T>());
        let launch = Launch::flat(128);
        let kernel = self.kernel(&source("sample", &body, precision_of::<T>(), launch))?;
        let mut buffers = self.samples.lock().map_err(|_| {
            Error::Invalid("a picture's sample buffers were poisoned by a panic".into())
        })?;
        if buffers.as_ref().is_none_or(|(d, _, _)| d.len() != w * h) {
            *buffers = None;
            self.dev.ensure_free((w * h * 8) as u64)?;
            let dev = self
                .stream
                .alloc_zeros::<f64>(w * h)
                .map_err(driver("cuMemAlloc"))?;
            // SAFETY: the pinned buffer is written only by the copy below before it is read.
            let host = unsafe { self.stream.context().alloc_pinned::<f64>(w * h) }
                .map_err(driver("cuMemAllocHost"))?;
            *buffers = Some((dev, host, frames::FramePool::new(w * h)));
        }
        let Some((out, host, pool)) = buffers.as_mut() else {
            unreachable!("allocated above")
        };
        let cfg = LaunchConfig {
            grid_dim: (w.div_ceil(128) as u32, h as u32, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        let (start, nx, stride) = (p.start as u64, p.nx as i64, p.stride as i64);
        let (wi, hi) = (w as i32, h as i32);
        let mut b = self.stream.launch_builder(kernel.function());
        b.arg(buf).arg(&mut *out).arg(&start).arg(&nx).arg(&stride);
        b.arg(&wi).arg(&hi);
        // SAFETY: the arguments match the kernel above; every index it reads lies in the
        // plane, which lies in `buf` (checked above), and it writes only `out`'s w·h values.
        unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
        // Into page-locked memory: a frame of a large grid crosses the bus several times
        // faster than into a pageable vector, and frames come every few steps.
        self.stream
            .memcpy_dtoh(&*out, host)
            .map_err(driver("cuMemcpyDtoH"))?;
        self.copied()?;
        let mut frame = pool.take();
        frame.copy_from_slice(host.as_slice().map_err(driver("cuEventSynchronize"))?);
        Ok(frame)
    }

    /// After `passes` k-step passes tagged with their index: the index of the pass whose
    /// output held a non-finite value (the flag is cleared), or `None`.
    fn flagged_call(&mut self, passes: usize) -> Result<Option<usize>> {
        let key = self.download(&self.bad)?[0];
        if key == u64::MAX {
            return Ok(None);
        }
        self.stream
            .memcpy_htod(&[u64::MAX], &mut self.bad)
            .map_err(driver("cuMemcpyHtoD"))?;
        Ok(Some(
            ((key >> CELL_BITS) as usize).min(passes.saturating_sub(1)),
        ))
    }

    /// The first non-finite result of the last `advance` call, as an error naming the step
    /// (`first` is the step before the call) and the cell of a grid of `n` points.
    fn check_finite(&mut self, first: u64, n: [usize; 3]) -> Result<()> {
        let key = self.download(&self.bad)?[0];
        if key == u64::MAX {
            return Ok(());
        }
        let value = self.download(&self.badval)?[0];
        self.stream
            .memcpy_htod(&[u64::MAX], &mut self.bad)
            .map_err(driver("cuMemcpyHtoD"))?;
        let c = (key & ((1u64 << CELL_BITS) - 1)) as usize;
        Err(Error::NonFinite {
            step: first + (key >> CELL_BITS) + 1,
            cell: [c % n[0], (c / n[0]) % n[1], c / (n[0] * n[1])],
            value,
        })
    }
}

/// The kernel in `body` (whose name is `@NAME@`) named by `stem` and a hash of the code.
fn source(stem: &str, body: &str, precision: Precision, l: Launch) -> CudaSource {
    let name = format!("fdlab_{stem}_{:016x}", fnv1a(body));
    CudaSource {
        name: name.clone(),
        body: body.replace("@NAME@", &name),
        block: [l.bx, l.by, 1],
        grid_map: [(0, l.bx), (1, l.by), (2, l.chunk)],
        shared_bytes: 0,
        input: InputKind::Pointer,
        outputs: 0,
        constants: None,
        precision,
        x_multiple: 1,
        single_pass: false,
        tensor_boxes: Vec::new(),
    }
}

/// Every kernel the GPU stepper of `setup` compiles, generated without a GPU (so that they
/// can be compiled with NVRTC anywhere).
pub fn kernel_sources(
    setup: &crate::setup::Setup,
    precision: fdlab_core::Precision,
) -> Result<Vec<CudaSource>> {
    use crate::setup::Setup;
    use fdlab_core::Precision::{F32, F64};
    Ok(match (setup, precision) {
        (Setup::Wave(s), p) if s.density.is_some() => crate::wave_vd::kernel_sources(s, p)?,
        (Setup::Heat(s), F32) => heat::all_sources::<f32>(s)?,
        (Setup::Heat(s), F64) => heat::all_sources::<f64>(s)?,
        (Setup::Wave(s), F32) => wave::all_sources::<f32>(s)?,
        (Setup::Wave(s), F64) => wave::all_sources::<f64>(s)?,
        (Setup::Fdtd(s), F32) => fdtd_sources::all_sources::<f32>(s)?,
        (Setup::Fdtd(s), F64) => fdtd_sources::all_sources::<f64>(s)?,
    })
}

/// The k-step heat pass of `setup` in `precision` for `request` and its shape (generated
/// without a GPU, to compile every variant with NVRTC anywhere); `None` where temporal
/// blocking does not apply (order above 2, κ varying) or the request turns it off.
pub fn heat_pass_source(
    setup: &crate::heat::HeatSetup,
    precision: fdlab_core::Precision,
    request: temporal::Request,
) -> Result<Option<(CudaSource, temporal::Temporal)>> {
    let schedule = schedule::HeatSchedule {
        pass: Some(request),
        ..Default::default()
    };
    match precision {
        fdlab_core::Precision::F32 => {
            heat::pass_source::<f32>(setup, &heat::choices::<f32>(setup, None, &schedule)?)
        }
        fdlab_core::Precision::F64 => {
            heat::pass_source::<f64>(setup, &heat::choices::<f64>(setup, None, &schedule)?)
        }
    }
}

/// The k-step wave pass of `setup` in `precision` for `request` (`None`: the default, single
/// steps) and its shape, generated without a GPU; `None` where temporal blocking does not
/// apply (a CPML, sources or receivers) or the request turns it off.
pub fn wave_pass_source(
    setup: &crate::wave::WaveSetup,
    precision: fdlab_core::Precision,
    request: Option<temporal::Request>,
) -> Result<Option<(CudaSource, wave_pass::WaveShape)>> {
    let schedule = schedule::WaveSchedule {
        pass: request,
        ..Default::default()
    };
    match precision {
        fdlab_core::Precision::F32 => {
            wave::pass_source::<f32>(setup, &wave::choices::<f32>(setup, &schedule))
        }
        fdlab_core::Precision::F64 => {
            wave::pass_source::<f64>(setup, &wave::choices::<f64>(setup, &schedule))
        }
    }
}

/// The device classes whose tuned shapes the steppers know (`None`: the default shapes), as
/// fdlab-cuda's `device_class` names them: to generate and check every variant on any device.
pub(crate) const DEVICE_CLASSES: [Option<&str>; 3] = [None, Some("h100"), Some("h200")];

pub(crate) use fdlab_cuda::codegen::solver::SMS;

/// The step-within-call tag of the non-finite flag.
fn tag(i: usize) -> u64 {
    (i as u64) << CELL_BITS
}

/// The grid in kernel order: `(nx, no, nm)` with the march along the last axis.
fn march_sizes(n: [usize; 3], dim: usize) -> (i32, i32, i32) {
    if dim == 3 {
        (n[0] as i32, n[1] as i32, n[2] as i32)
    } else {
        (n[0] as i32, 1, n[1] as i32)
    }
}

/// Per-axis arrays in kernel order (x, middle, march) from physical order.
fn march_order<V: Clone>(v: &[V; 3], dim: usize, unused: V) -> [V; 3] {
    if dim == 3 {
        v.clone()
    } else {
        [v[0].clone(), unused, v[1].clone()]
    }
}

fn launch_config(l: Launch, grid: [u32; 3]) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid[0], grid[1], grid[2]),
        block_dim: (l.bx, l.by, 1),
        shared_mem_bytes: 0,
    }
}

/// Lets `f` launch with `bytes` of dynamic shared memory: above the default 48 KiB a kernel
/// must opt in (up to the device's per-block limit).
fn allow_shared(
    f: &cudarc::driver::CudaFunction,
    bytes: u32,
) -> std::result::Result<(), cudarc::driver::DriverError> {
    if bytes <= 48 * 1024 {
        return Ok(());
    }
    let attr =
        cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    f.set_attribute(attr, bytes as i32)
}

/// `"float"` or `"double"`.
fn cuda_type<T: CudaScalar>() -> &'static str {
    if std::mem::size_of::<T>() == 4 {
        "float"
    } else {
        "double"
    }
}

fn precision_of<T: CudaScalar>() -> Precision {
    if std::mem::size_of::<T>() == 4 {
        Precision::F32
    } else {
        Precision::F64
    }
}

/// Unpadded grid values (x fastest) as the padded little-endian bytes of a checkpoint, the
/// same format as the CPU steppers'.
fn padded_bytes(l: &Layout, grid: &[f64]) -> Vec<u8> {
    crate::layout::to_bytes::<f64>(&l.pad::<f64>(grid))
}

/// What [`padded_bytes`] wrote, back as grid values in `T`.
fn from_padded<T: CudaScalar>(
    l: &Layout,
    parts: &[crate::stepper::StatePart],
    name: &str,
) -> Result<Vec<T>> {
    let padded: Vec<f64> = crate::stepper::state_part(parts, name, l.len())?;
    Ok(l.unpad(&padded).into_iter().map(T::from_f64).collect())
}

/// Whether the GPU FDTD stepper with the default schedule runs `s` two steps a pass (it runs
/// one where Lorentz or Debye media, monitors or plane waves act between the steps).
pub fn fdtd_runs_passes(s: &crate::fdtd::FdtdSetup) -> bool {
    let c = schedule::FdtdChoices::choose(8, false, None);
    fdtd_choices::single_steps_because(s, &c).is_none()
}

/// Whether a GPU can run the solvers here, or why not (one line).
pub fn available() -> std::result::Result<(), String> {
    fdlab_cuda::probe().map(|_| ()).map_err(|e| e.to_string())
}

/// The FDTD setup of one of the example cases (`examples/cases/NAME`), for tests.
#[cfg(test)]
pub(crate) fn fdtd_example(name: &str) -> crate::fdtd::FdtdSetup {
    let path = format!("{}/../../examples/cases/{name}", env!("CARGO_MANIFEST_DIR"));
    let case = crate::case::Case::load(&path).expect("example case");
    match crate::setup::prepare(&case).expect("valid case").setup {
        crate::setup::Setup::Fdtd(s) => s,
        _ => panic!("{name} is not an FDTD case"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exchange that only states its shape.
    struct Shape {
        halo: [usize; 2],
        edge: usize,
        overlaps: bool,
    }

    impl StepExchange<f32> for Shape {
        fn halo(&self) -> [usize; 2] {
            self.halo
        }
        fn edge(&self) -> usize {
            self.edge
        }
        fn overlaps(&self) -> bool {
            self.overlaps
        }
        fn edges_queued(&mut self, _: &Arc<CudaStream>) -> Result<()> {
            Ok(())
        }
        fn start(&mut self, _: &Arc<CudaStream>, _: &mut CudaSlice<f32>) -> Result<()> {
            Ok(())
        }
        fn finish(&mut self, _: &Arc<CudaStream>) -> Result<()> {
            Ok(())
        }
    }

    fn ranges(nm: usize, halo: [usize; 2], edge: usize, overlaps: bool) -> StepRanges {
        let ex = Shape {
            halo,
            edge,
            overlaps,
        };
        step_ranges(nm, Some(&ex as &dyn StepExchange<f32>))
    }

    /// Every plane between the halos is computed exactly once, halos never.
    fn covered(r: &StepRanges, nm: usize) -> Vec<usize> {
        let mut count = vec![0; nm];
        for p in r
            .edges
            .iter()
            .chain(std::iter::once(&r.interior))
            .flat_map(|r| r.clone())
        {
            count[p] += 1;
        }
        count
    }

    #[test]
    fn a_step_computes_the_planes_between_the_halos_once() {
        let none = step_ranges(10, None::<&dyn StepExchange<f32>>);
        assert_eq!((none.edges.len(), none.interior.clone()), (0, 0..10));
        let after = ranges(12, [2, 2], 2, false);
        assert!(after.edges.is_empty() && !after.overlapped);
        assert_eq!(after.interior, 2..10);
        let both = ranges(12, [2, 2], 2, true);
        assert_eq!(both.edges, vec![2..4, 8..10]);
        assert_eq!(both.interior, 4..8);
        assert_eq!(covered(&both, 12), [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
        // At the grid's edge there is no halo and no edge to send first.
        let bottom = ranges(9, [0, 1], 1, true);
        assert_eq!(bottom.edges, vec![7..8]);
        assert_eq!(bottom.interior, 0..7);
        assert_eq!(covered(&bottom, 9), [1, 1, 1, 1, 1, 1, 1, 1, 0]);
    }

    #[test]
    fn a_slab_thinner_than_two_edges_has_no_interior() {
        let thin = ranges(7, [2, 2], 2, true);
        assert!(thin.interior.is_empty());
        // The edges overlap on plane 2..3 and 4..5: computed twice, the same values.
        assert_eq!(thin.edges, vec![2..4, 3..5]);
    }
}
