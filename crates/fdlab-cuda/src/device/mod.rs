//! The device: discovery, module cache, buffers, launches and event timing, over cudarc.

use crate::codegen::{module_source, CudaSource, InputKind};
use crate::error::{driver, Error, Result};
use crate::kernel_cache::{KernelCache, Key};
use crate::nvrtc;
use crate::tune_cache::TuneCache;
use cudarc::driver::sys::{self, CUdevice_attribute as Attr};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, PushKernelArg,
    ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;
use fdlab_core::Scalar;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

mod resources;
mod timing;

pub use resources::L2Promotion;
pub(crate) use resources::{tensor_map_at, texture_at};

/// A scalar type that can live on the device.
pub trait CudaScalar: Scalar + DeviceRepr + ValidAsZeroBits + Unpin {}
impl CudaScalar for f32 {}
impl CudaScalar for f64 {}

/// A TMA tensor map (`CUtensorMap`), passed to a kernel by value.
#[derive(Debug, Clone, Copy)]
#[repr(transparent)]
pub struct TensorMap(pub(crate) sys::CUtensorMap);

// SAFETY: a CUtensorMap is 128 bytes of plain data that the kernel takes by value as a
// `__grid_constant__` parameter of the same size.
unsafe impl DeviceRepr for TensorMap {}

/// What fdlab reads off the device.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Multiprocessors.
    pub sm_count: i32,
    /// Device memory, bytes.
    pub total_memory: u64,
    /// L2 cache, bytes.
    pub l2_bytes: i32,
    /// Threads per block limit.
    pub max_threads_per_block: i32,
    /// Shared memory per block with opt-in, bytes.
    pub max_shared_per_block: i32,
    /// Largest 1-D texture over linear memory, elements.
    pub max_texture_linear: i32,
    /// Driver version, e.g. 13000.
    pub driver_version: i32,
    /// Peak memory clock, kHz.
    pub memory_clock_khz: i32,
    /// Memory bus width, bits.
    pub bus_width_bits: i32,
    /// SM clock, kHz.
    pub sm_clock_khz: i32,
}

impl DeviceInfo {
    /// NVRTC architecture name for this device, e.g. `sm_90`.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// println!("compiling for {}", dev.info.arch());
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn arch(&self) -> &'static str {
        match self.compute_capability {
            (9, 0) => "sm_90",
            (8, 9) => "sm_89",
            (8, 7) => "sm_87",
            (8, 6) => "sm_86",
            (8, 0) => "sm_80",
            (7, 5) => "sm_75",
            (10, 0) => "sm_100",
            (12, 0) => "sm_120",
            _ => "compute_75",
        }
    }
}

/// A compiled kernel and the source it came from.
#[derive(Debug)]
pub struct Kernel {
    pub(crate) func: CudaFunction,
    pub(crate) module: Arc<CudaModule>,
    /// The generated source and launch shape.
    pub source: CudaSource,
}

impl Kernel {
    /// The compiled function, for kernels whose parameters the caller defines (the solvers'
    /// fused steps): launch it with cudarc's launch builder on [`Device::stream`].
    pub fn function(&self) -> &CudaFunction {
        &self.func
    }
}

/// A texture object over a device buffer; destroyed on drop.
#[derive(Debug)]
pub struct Texture {
    pub(crate) handle: sys::CUtexObject,
}

impl Drop for Texture {
    fn drop(&mut self) {
        // SAFETY: the handle came from cuTexObjectCreate and is destroyed once.
        unsafe {
            let _ = sys::cuTexObjectDestroy(self.handle);
        }
    }
}

/// The input of a launch: a buffer, plus a texture over it for texture kernels.
pub struct Input<'a, T> {
    /// The buffer.
    pub buffer: &'a CudaSlice<T>,
    /// A texture over `buffer`, required by texture kernels.
    pub texture: Option<&'a Texture>,
}

/// What a [`Device`] handle shares with its clones; plans keep a weak reference to it.
pub(crate) struct DeviceInner {
    pub(crate) id: u64,
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    kernels: Mutex<HashMap<String, Arc<Kernel>>>,
    /// Compiled module images by cache key, so that plans of the same kernel compile once.
    pub(crate) images: Mutex<HashMap<u128, Arc<Vec<u8>>>>,
    pub(crate) disk: KernelCache,
    /// The tuner's winners that plans on this device consult ([`crate::choose::candidates`]).
    pub(crate) tune: Arc<TuneCache>,
}

/// An open device: a cheap, clonable handle (context, default stream, kernel caches).
///
/// Every [`Device::open`] gives a handle with a new [`Device::id`]; fields and plans remember
/// the id they were made with and refuse to mix with another handle's. Clones share the id.
///
/// ```no_run
/// let dev = fdlab_cuda::Device::open(0)?;
/// println!("{} ({})", dev.info.name, dev.info.arch());
/// let same = dev.clone();
/// assert_eq!(same.id(), dev.id());
/// # Ok::<(), fdlab_cuda::Error>(())
/// ```
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
    /// What the device is.
    pub info: Arc<DeviceInfo>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.inner.id)
            .field("name", &self.info.name)
            .finish()
    }
}

/// Handle ids, unique in the process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Why no GPU can be used, in one line, or `Ok` with the device count.
///
/// ```no_run
/// match fdlab_cuda::probe() {
///     Ok(n) => println!("{n} GPU(s)"),
///     Err(why) => println!("CPU only: {why}"),
/// }
/// ```
pub fn probe() -> Result<usize> {
    // SAFETY: only tries to dlopen libcuda by its usual names.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoDevice {
            reason: "libcuda (the NVIDIA driver) is not installed or not on the library path"
                .into(),
        });
    }
    let n = CudaContext::device_count().map_err(|e| Error::NoDevice {
        reason: format!("the driver found no usable device ({e:?})"),
    })?;
    if n < 1 {
        return Err(Error::NoDevice {
            reason: "the driver reports 0 devices".into(),
        });
    }
    if !nvrtc::available() {
        return Err(Error::NoNvrtc {
            reason: "a GPU is present but libnvrtc could not be loaded".into(),
        });
    }
    Ok(n as usize)
}

impl Device {
    /// Opens device `ordinal`, or says in one line why not.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// println!("{}", dev.info.name);
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn open(ordinal: usize) -> Result<Device> {
        let n = probe()?;
        if ordinal >= n {
            return Err(Error::NoDevice {
                reason: format!("device {ordinal} asked for, {n} present"),
            });
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| Error::NoDevice {
            reason: format!("could not create a context on device {ordinal} ({e:?})"),
        })?;
        // cudarc's per-buffer event tracking only adds launch overhead: work runs on the
        // default stream unless the caller asks for others.
        // SAFETY: with tracking off, work on several streams that touches the same buffers is
        // ordered by the caller with events (`Stream::wait`), as `Device::new_stream` says.
        unsafe { ctx.disable_event_tracking() };
        // A stream of our own: the legacy default stream cannot be captured into a graph.
        let stream = ctx.new_stream().map_err(driver("cuStreamCreate"))?;
        let a = |attr: Attr| ctx.attribute(attr).map_err(driver("cuDeviceGetAttribute"));
        let mut driver_version = 0;
        // SAFETY: writes one int.
        unsafe {
            sys::cuDriverGetVersion(&mut driver_version);
        }
        let info = DeviceInfo {
            ordinal,
            name: ctx.name().map_err(driver("cuDeviceGetName"))?,
            compute_capability: ctx
                .compute_capability()
                .map_err(driver("compute capability"))?,
            sm_count: a(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            total_memory: ctx.total_mem().map_err(driver("cuDeviceTotalMem"))? as u64,
            l2_bytes: a(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            max_threads_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_shared_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            max_texture_linear: a(Attr::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH)?,
            driver_version,
            memory_clock_khz: a(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?,
            bus_width_bits: a(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
            sm_clock_khz: a(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?,
        };
        Ok(Device {
            inner: Arc::new(DeviceInner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                ctx,
                stream,
                kernels: Mutex::new(HashMap::new()),
                images: Mutex::new(HashMap::new()),
                disk: KernelCache::from_env(),
                tune: Arc::new(TuneCache::load()),
            }),
            info: Arc::new(info),
        })
    }

    /// This handle's id: distinct for every [`Device::open`], shared by clones.
    ///
    /// ```no_run
    /// use fdlab_cuda::Device;
    /// let (a, b) = (Device::open(0)?, Device::open(0)?);
    /// assert_ne!(a.id(), b.id());
    /// assert_eq!(a.clone().id(), a.id());
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// The stream every launch of [`Device::launch`] and [`crate::plan::Plan::apply`] goes to.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// dev.stream().synchronize().expect("idle stream");
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.stream
    }

    /// The driver context.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// assert_eq!(dev.context().ordinal(), 0);
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.inner.ctx
    }

    /// Uses `cache` for compiled modules instead of the one [`KernelCache::from_env`] chose.
    /// A handle that has clones cannot change theirs: it becomes a new handle, with a new
    /// [`Device::id`], on the same device.
    ///
    /// ```no_run
    /// use fdlab_cuda::{kernel_cache::KernelCache, Device};
    /// let dev = Device::open(0)?.with_kernel_cache(KernelCache::off());
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn with_kernel_cache(self, cache: KernelCache) -> Device {
        let inner = match Arc::try_unwrap(self.inner) {
            Ok(mut inner) => {
                inner.disk = cache;
                inner
            }
            Err(shared) => DeviceInner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                ctx: shared.ctx.clone(),
                stream: shared.stream.clone(),
                kernels: Mutex::new(HashMap::new()),
                images: Mutex::new(HashMap::new()),
                disk: cache,
                tune: shared.tune.clone(),
            },
        };
        Device {
            inner: Arc::new(inner),
            info: self.info,
        }
    }

    /// Plans on this handle consult `cache` instead of the tune cache the configuration names
    /// (read at [`Device::open`]); `TuneCache::default()` leaves every choice to the defaults.
    /// A handle that has clones cannot change theirs: it becomes a new handle, with a new
    /// [`Device::id`], on the same device.
    ///
    /// ```no_run
    /// use fdlab_cuda::{tune_cache::TuneCache, Device};
    /// let path = std::path::Path::new("bench/results/h200/tune-cache.json");
    /// let dev = Device::open(0)?.with_tune_cache(TuneCache::read(path)?);
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn with_tune_cache(self, cache: TuneCache) -> Device {
        let inner = match Arc::try_unwrap(self.inner) {
            Ok(mut inner) => {
                inner.tune = Arc::new(cache);
                inner
            }
            Err(shared) => DeviceInner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                ctx: shared.ctx.clone(),
                stream: shared.stream.clone(),
                kernels: Mutex::new(HashMap::new()),
                images: Mutex::new(HashMap::new()),
                disk: shared.disk.clone(),
                tune: Arc::new(cache),
            },
        };
        Device {
            inner: Arc::new(inner),
            info: self.info,
        }
    }

    /// The tune cache plans on this handle consult.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// println!("{} tuned cases", dev.tune_cache().entries.len());
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn tune_cache(&self) -> &TuneCache {
        &self.inner.tune
    }

    /// The machine code (or PTX, for architectures without a name NVRTC targets) of a module,
    /// from memory, the disk cache, or NVRTC, in that order. `fresh` skips both caches (used
    /// when the driver refused a cached image); `remember` keeps the image in memory for the
    /// next plan of the same kernel (the named-kernel cache of [`Device::kernels`] needs not).
    pub(crate) fn module_image(
        &self,
        name: &str,
        src: &str,
        fresh: bool,
        remember: bool,
    ) -> Result<Ptx> {
        let arch = self.info.arch();
        if !arch.starts_with("sm_") {
            return nvrtc::compile(name, src, arch);
        }
        let key = Key::new(src, nvrtc::version()?, arch);
        if !fresh
            && let Some(img) = self
                .inner
                .images
                .lock()
                .expect("image cache lock")
                .get(&key.0)
        {
            return Ok(Ptx::from_binary(img.to_vec()));
        }
        let bytes = if fresh {
            let bytes = nvrtc::compile_cubin(name, src, arch)?;
            self.inner.disk.store(key, &bytes);
            bytes
        } else {
            self.inner
                .disk
                .get_or_compile(key, || nvrtc::compile_cubin(name, src, arch))?
                .0
        };
        if remember {
            self.inner
                .images
                .lock()
                .expect("image cache lock")
                .insert(key.0, Arc::new(bytes.clone()));
        }
        Ok(Ptx::from_binary(bytes))
    }

    /// Compiles (or takes from the cache) every kernel in `sources`: uncached ones are
    /// compiled to machine code in modules of up to 8 kernels, modules in parallel.
    pub fn kernels(&self, sources: &[CudaSource]) -> Result<Vec<Arc<Kernel>>> {
        let missing: Vec<&CudaSource> = {
            let cache = self.inner.kernels.lock().expect("kernel cache lock");
            let mut seen = std::collections::HashSet::new();
            sources
                .iter()
                .filter(|s| !cache.contains_key(&s.name) && seen.insert(s.name.clone()))
                .collect()
        };
        let chunks: Vec<Vec<&CudaSource>> = missing.chunks(8).map(|c| c.to_vec()).collect();
        let compiled: Vec<Result<(Vec<&CudaSource>, cudarc::nvrtc::Ptx)>> =
            std::thread::scope(|scope| {
                let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
                let mut results = Vec::new();
                for group in chunks.chunks(workers.max(1)) {
                    let handles: Vec<_> = group
                        .iter()
                        .map(|chunk| {
                            scope.spawn(move || {
                                for k in chunk {
                                    nvrtc::dump(&k.name, &k.source());
                                }
                                let name = if chunk.len() == 1 {
                                    chunk[0].name.clone()
                                } else {
                                    format!(
                                        "fdlab_module_{:016x}",
                                        crate::codegen::fnv1a(&chunk[0].name)
                                    )
                                };
                                // Machine code for real architectures (no driver JIT at load),
                                // through the disk cache; PTX for the generic fallback.
                                let src = module_source(chunk);
                                self.module_image(&name, &src, false, false)
                                    .map(|ptx| (chunk.clone(), ptx))
                            })
                        })
                        .collect();
                    for h in handles {
                        results.push(h.join().unwrap_or_else(|_| {
                            Err(Error::Driver {
                                call: "nvrtc".into(),
                                detail: "compiler thread panicked".into(),
                            })
                        }));
                    }
                }
                results
            });
        for r in compiled {
            let (chunk, ptx) = r?;
            let module = self
                .inner
                .ctx
                .load_module(ptx)
                .map_err(driver("cuModuleLoadData"))?;
            let mut cache = self.inner.kernels.lock().expect("kernel cache lock");
            for src in chunk {
                let func = module
                    .load_function(&src.name)
                    .map_err(driver("cuModuleGetFunction"))?;
                cache.insert(
                    src.name.clone(),
                    Arc::new(Kernel {
                        func,
                        module: module.clone(),
                        source: src.clone(),
                    }),
                );
            }
        }
        let cache = self.inner.kernels.lock().expect("kernel cache lock");
        Ok(sources.iter().map(|s| cache[&s.name].clone()).collect())
    }

    /// Compiles (or takes from the cache) one kernel.
    pub fn kernel(&self, source: &CudaSource) -> Result<Arc<Kernel>> {
        Ok(self.kernels(std::slice::from_ref(source))?.remove(0))
    }

    /// Free and total device memory, bytes.
    ///
    /// ```no_run
    /// let dev = fdlab_cuda::Device::open(0)?;
    /// let (free, total) = dev.memory()?;
    /// assert!(free <= total);
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn memory(&self) -> Result<(u64, u64)> {
        let (free, total) = self
            .inner
            .ctx
            .mem_get_info()
            .map_err(driver("cuMemGetInfo"))?;
        Ok((free as u64, total as u64))
    }

    /// Fails with [`Error::OutOfMemory`] ("needs X GiB, Y GiB free") unless `bytes` more fit
    /// on the device, keeping [`crate::memory::MARGIN`] for the driver.
    ///
    /// ```no_run
    /// use fdlab_cuda::{Device, Error};
    /// let dev = Device::open(0)?;
    /// let (free, _) = dev.memory()?;
    /// assert!(matches!(dev.ensure_free(free + 1), Err(Error::OutOfMemory { .. })));
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn ensure_free(&self, bytes: u64) -> Result<()> {
        let (free, _) = self.memory()?;
        crate::memory::fits(bytes, free)
    }

    /// A device buffer of `len` zeros.
    pub fn zeros<T: CudaScalar>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.ensure_free(crate::memory::bytes_of(len, std::mem::size_of::<T>())?)?;
        self.inner
            .stream
            .alloc_zeros(len)
            .map_err(driver("cuMemAlloc"))
    }

    /// Copies `data` to a new device buffer.
    pub fn upload<T: CudaScalar>(&self, data: &[T]) -> Result<CudaSlice<T>> {
        self.ensure_free(std::mem::size_of_val(data) as u64)?;
        self.inner
            .stream
            .clone_htod(data)
            .map_err(driver("cuMemcpyHtoD"))
    }

    /// Copies `src` into the existing buffer `dst`.
    pub fn upload_into<T: CudaScalar>(&self, src: &[T], dst: &mut CudaSlice<T>) -> Result<()> {
        self.inner
            .stream
            .memcpy_htod(src, dst)
            .map_err(driver("cuMemcpyHtoD"))
    }

    /// Copies a device buffer to the host (and waits for the copy: with event tracking off,
    /// cudarc does not).
    pub fn download<T: CudaScalar>(&self, buf: &CudaSlice<T>) -> Result<Vec<T>> {
        let v = self
            .inner
            .stream
            .clone_dtoh(buf)
            .map_err(driver("cuMemcpyDtoH"))?;
        self.synchronize()?;
        Ok(v)
    }

    /// Waits for all queued work; reports errors of earlier launches.
    pub fn synchronize(&self) -> Result<()> {
        self.inner
            .stream
            .synchronize()
            .map_err(driver("cuStreamSynchronize"))
    }

    /// A texture over `buf` when `source` reads its input through one, else `None`.
    pub fn texture_for<T: CudaScalar>(
        &self,
        source: &CudaSource,
        buf: &CudaSlice<T>,
    ) -> Result<Option<Texture>> {
        match source.input {
            InputKind::Texture => self.texture(buf).map(Some),
            InputKind::Pointer => Ok(None),
        }
    }

    /// Copies the `__constant__` weights of `source` into `kernel`'s module (no-op for literal
    /// weights). The weights come from the caller's source, not the cached kernel's: kernels
    /// that differ only in their weights have the same code, name and module.
    pub fn set_constants<T: CudaScalar>(&self, kernel: &Kernel, source: &CudaSource) -> Result<()> {
        upload_constants::<T>(&kernel.module, &self.inner.stream, source)
    }

    /// Refuses a launch beyond the device's limits before it is made.
    pub fn check_limits(&self, kernel: &Kernel, shape: [usize; 3]) -> Result<()> {
        check_source(&kernel.source, shape, &self.info)
    }

    /// Launches `kernel` on `input` and `outputs` for a grid of `shape` (asynchronous).
    pub fn launch<T: CudaScalar>(
        &self,
        kernel: &Kernel,
        input: &Input<'_, T>,
        outputs: &mut [CudaSlice<T>],
        shape: [usize; 3],
    ) -> Result<()> {
        let src = &kernel.source;
        self.check_limits(kernel, shape)?;
        let len: usize = shape.iter().product();
        if outputs.len() != src.outputs
            || input.buffer.len() != len
            || outputs.iter().any(|o| o.len() != len)
        {
            return Err(Error::Model(fdlab_core::Error::Shape {
                expected: vec![src.outputs, len],
                got: vec![outputs.len(), input.buffer.len()],
            }));
        }
        if src.shared_bytes > 48 * 1024 {
            // SAFETY: sets a documented attribute on a valid function handle.
            let r = unsafe {
                sys::cuFuncSetAttribute(
                    kernel.func.cu_function(),
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    src.shared_bytes as i32,
                )
            };
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(Error::Driver {
                    call: "cuFuncSetAttribute".into(),
                    detail: format!("{r:?}"),
                });
            }
        }
        let g = src.grid_dims(shape);
        let cfg = cudarc::driver::LaunchConfig {
            grid_dim: (g[0], g[1], g[2]),
            block_dim: (src.block[0], src.block[1], src.block[2]),
            shared_mem_bytes: src.shared_bytes,
        };
        let (nx, ny, nz) = (shape[0] as i32, shape[1] as i32, shape[2] as i32);
        let tex_handle: u64;
        let mut b = self.inner.stream.launch_builder(&kernel.func);
        match src.input {
            InputKind::Pointer => {
                b.arg(input.buffer);
            }
            InputKind::Texture => {
                let t = input.texture.ok_or_else(|| Error::Driver {
                    call: "launch".into(),
                    detail: format!("{} reads a texture and none was given", src.name),
                })?;
                tex_handle = t.handle;
                b.arg(&tex_handle);
            }
        }
        for o in outputs.iter_mut() {
            b.arg(o);
        }
        b.arg(&nx).arg(&ny).arg(&nz);
        let maps = src
            .tensor_boxes
            .iter()
            .map(|&tile| self.tensor_map(input.buffer, shape, tile))
            .collect::<Result<Vec<_>>>()?;
        for map in &maps {
            b.arg(map);
        }
        // SAFETY: the arguments match the generated signature (input, outputs, nx, ny, nz,
        // and the tensor map over the input where the kernel takes one),
        // buffers hold nx·ny·nz elements (checked above), and the kernel only indexes inside
        // the grid.
        unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
        Ok(())
    }
}

/// Refuses a kernel of `src` on a grid of `shape` beyond the limits in `info` (threads and
/// shared memory per block, the vector width dividing nx, 32-bit indexing), before launch.
pub(crate) fn check_source(src: &CudaSource, shape: [usize; 3], info: &DeviceInfo) -> Result<()> {
    let threads = src.threads() as u64;
    if threads > info.max_threads_per_block as u64 {
        return Err(Error::ResourceLimit {
            what: format!("threads per block for {}", src.name),
            requested: threads,
            max: info.max_threads_per_block as u64,
        });
    }
    if src.shared_bytes as u64 > info.max_shared_per_block as u64 {
        return Err(Error::ResourceLimit {
            what: format!("shared memory per block (bytes) for {}", src.name),
            requested: src.shared_bytes as u64,
            max: info.max_shared_per_block as u64,
        });
    }
    if let Some((d, blocks, max)) = src.uncovered(shape) {
        return Err(Error::ResourceLimit {
            what: format!(
                "blocks along launch axis {} for {} (one point per thread, no loop; a \
                 marching strategy such as zmarch takes this grid)",
                ["x", "y", "z"][d],
                src.name
            ),
            requested: blocks,
            max,
        });
    }
    if !shape[0].is_multiple_of(src.x_multiple as usize) {
        return Err(Error::Misaligned {
            kernel: src.name.clone(),
            nx: shape[0],
            multiple: src.x_multiple,
        });
    }
    for (a, &n) in shape.iter().enumerate() {
        if n as u64 > (i32::MAX as u64) / 2 {
            return Err(Error::ResourceLimit {
                what: format!("points along axis {}", fdlab_core::AXIS_NAMES[a]),
                requested: n as u64,
                max: (i32::MAX as u64) / 2,
            });
        }
    }
    Ok(())
}

/// Copies the `__constant__` weights of `source` into `module` (no-op for literal weights).
pub(crate) fn upload_constants<T: CudaScalar>(
    module: &Arc<CudaModule>,
    stream: &Arc<CudaStream>,
    source: &CudaSource,
) -> Result<()> {
    let Some(c) = &source.constants else {
        return Ok(());
    };
    let values: Vec<T> = c.values.iter().map(|&w| T::from_f64(w)).collect();
    let mut sym = module
        .get_global(&c.symbol, stream)
        .map_err(driver("cuModuleGetGlobal"))?;
    // SAFETY: the symbol was declared as an array of `values.len()` elements of T.
    let mut view =
        unsafe { sym.transmute_mut::<T>(values.len()) }.ok_or_else(|| Error::Driver {
            call: "cuModuleGetGlobal".into(),
            detail: format!(
                "symbol {} is smaller than {} weights",
                c.symbol,
                values.len()
            ),
        })?;
    stream
        .memcpy_htod(&values, &mut view)
        .map_err(driver("cuMemcpyHtoD"))
}
