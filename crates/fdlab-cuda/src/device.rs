//! The device: discovery, module cache, buffers, launches and event timing, over cudarc.

use crate::codegen::{module_source, CudaSource, InputKind};
use crate::error::driver;
use crate::{nvrtc, Error, Result};
use cudarc::driver::sys::{self, CUdevice_attribute as Attr};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, PushKernelArg,
    ValidAsZeroBits,
};
use fdlab_core::Scalar;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A scalar type that can live on the device.
pub trait CudaScalar: Scalar + DeviceRepr + ValidAsZeroBits + Unpin {}
impl CudaScalar for f32 {}
impl CudaScalar for f64 {}

/// A TMA tensor map (`CUtensorMap`), passed to a kernel by value.
#[derive(Debug, Clone, Copy)]
#[repr(transparent)]
pub struct TensorMap(sys::CUtensorMap);

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
    func: CudaFunction,
    module: Arc<CudaModule>,
    /// The generated source and launch shape.
    pub source: CudaSource,
}

/// A texture object over a device buffer; destroyed on drop.
#[derive(Debug)]
pub struct Texture {
    handle: sys::CUtexObject,
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

/// An open device: context, one stream, compiled-kernel cache.
pub struct Device {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    kernels: Mutex<HashMap<String, Arc<Kernel>>>,
    /// What the device is.
    pub info: DeviceInfo,
}

/// Why no GPU can be used, in one line, or `Ok` with the device count.
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
        // One stream: cudarc's per-buffer event tracking only adds launch overhead.
        // SAFETY: fdlab uses one stream per context, so no cross-stream ordering is needed.
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
            ctx,
            stream,
            kernels: Mutex::new(HashMap::new()),
            info,
        })
    }

    /// The stream every launch goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Compiles (or takes from the cache) every kernel in `sources`: uncached ones are
    /// compiled to machine code in modules of up to 8 kernels, modules in parallel.
    pub fn kernels(&self, sources: &[CudaSource]) -> Result<Vec<Arc<Kernel>>> {
        let missing: Vec<&CudaSource> = {
            let cache = self.kernels.lock().expect("kernel cache lock");
            let mut seen = std::collections::HashSet::new();
            sources
                .iter()
                .filter(|s| !cache.contains_key(&s.name) && seen.insert(s.name.clone()))
                .collect()
        };
        let arch = self.info.arch();
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
                                // Machine code for real architectures (no driver JIT at load);
                                // PTX for the generic fallback.
                                let src = module_source(chunk);
                                let image = if arch.starts_with("sm_") {
                                    nvrtc::compile_cubin(&name, &src, arch)
                                        .map(cudarc::nvrtc::Ptx::from_binary)
                                } else {
                                    nvrtc::compile(&name, &src, arch)
                                };
                                image.map(|ptx| (chunk.clone(), ptx))
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
                .ctx
                .load_module(ptx)
                .map_err(driver("cuModuleLoadData"))?;
            let mut cache = self.kernels.lock().expect("kernel cache lock");
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
        let cache = self.kernels.lock().expect("kernel cache lock");
        Ok(sources.iter().map(|s| cache[&s.name].clone()).collect())
    }

    /// Compiles (or takes from the cache) one kernel.
    pub fn kernel(&self, source: &CudaSource) -> Result<Arc<Kernel>> {
        Ok(self.kernels(std::slice::from_ref(source))?.remove(0))
    }

    /// Free and total device memory, bytes.
    pub fn memory(&self) -> Result<(u64, u64)> {
        let (free, total) = self.ctx.mem_get_info().map_err(driver("cuMemGetInfo"))?;
        Ok((free as u64, total as u64))
    }

    /// Fails with [`Error::OutOfMemory`] unless `bytes` more fit on the device.
    pub fn ensure_free(&self, bytes: u64) -> Result<()> {
        let (free, _) = self.memory()?;
        // Keep a little for the context and the driver's own allocations.
        let margin = 64 << 20;
        if bytes + margin > free {
            return Err(Error::OutOfMemory {
                needed: bytes,
                free,
            });
        }
        Ok(())
    }

    /// A device buffer of `len` zeros.
    pub fn zeros<T: CudaScalar>(&self, len: usize) -> Result<CudaSlice<T>> {
        self.ensure_free((len * std::mem::size_of::<T>()) as u64)?;
        self.stream.alloc_zeros(len).map_err(driver("cuMemAlloc"))
    }

    /// Copies `data` to a new device buffer.
    pub fn upload<T: CudaScalar>(&self, data: &[T]) -> Result<CudaSlice<T>> {
        self.ensure_free(std::mem::size_of_val(data) as u64)?;
        self.stream.clone_htod(data).map_err(driver("cuMemcpyHtoD"))
    }

    /// Copies `src` into the existing buffer `dst`.
    pub fn upload_into<T: CudaScalar>(&self, src: &[T], dst: &mut CudaSlice<T>) -> Result<()> {
        self.stream
            .memcpy_htod(src, dst)
            .map_err(driver("cuMemcpyHtoD"))
    }

    /// Copies a device buffer to the host.
    pub fn download<T: CudaScalar>(&self, buf: &CudaSlice<T>) -> Result<Vec<T>> {
        self.stream.clone_dtoh(buf).map_err(driver("cuMemcpyDtoH"))
    }

    /// Waits for all queued work; reports errors of earlier launches.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(driver("cuStreamSynchronize"))
    }

    /// A texture object reading `buf` as a 1-D linear texture (`f64` as two 32-bit words).
    pub fn texture<T: CudaScalar>(&self, buf: &CudaSlice<T>) -> Result<Texture> {
        let len = buf.len() as u64;
        if len > self.info.max_texture_linear as u64 {
            return Err(Error::ResourceLimit {
                what: "1-D linear texture width (elements)".into(),
                requested: len,
                max: self.info.max_texture_linear as u64,
            });
        }
        let (format, channels) = match T::PRECISION {
            fdlab_core::Precision::F32 => (sys::CUarray_format::CU_AD_FORMAT_FLOAT, 1),
            fdlab_core::Precision::F64 => (sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32, 2),
        };
        let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(buf, &self.stream);
        // SAFETY: plain-old-data descriptors, zeroed then filled; the texture reads `buf`,
        // which the caller keeps alive while the texture is used (Input borrows both).
        unsafe {
            let mut res: sys::CUDA_RESOURCE_DESC = std::mem::zeroed();
            res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
            res.res.linear = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
                devPtr: ptr,
                format,
                numChannels: channels,
                sizeInBytes: buf.len() * std::mem::size_of::<T>(),
            };
            let mut tex: sys::CUDA_TEXTURE_DESC = std::mem::zeroed();
            tex.filterMode = sys::CUfilter_mode::CU_TR_FILTER_MODE_POINT;
            let mut handle: sys::CUtexObject = 0;
            let r = sys::cuTexObjectCreate(&mut handle, &res, &tex, std::ptr::null());
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(Error::Driver {
                    call: "cuTexObjectCreate".into(),
                    detail: format!("{r:?}"),
                });
            }
            Ok(Texture { handle })
        }
    }

    /// The TMA tensor map over `buf`, a grid of `shape` points, with the box `tile` (points
    /// along x, y, z) that a kernel with [`CudaSource::tensor_box`] copies per request.
    pub fn tensor_map<T: CudaScalar>(
        &self,
        buf: &CudaSlice<T>,
        shape: [usize; 3],
        tile: [u32; 3],
    ) -> Result<TensorMap> {
        let size = std::mem::size_of::<T>() as u64;
        let dims = shape.map(|n| n as u64);
        let strides = [dims[0] * size, dims[0] * dims[1] * size];
        if !strides[0].is_multiple_of(16) {
            return Err(Error::Driver {
                call: "cuTensorMapEncodeTiled".into(),
                detail: format!(
                    "a TMA tensor map needs rows of a multiple of 16 bytes; nx = {} has {} \
                     bytes: use a strategy without -t",
                    shape[0], strides[0]
                ),
            });
        }
        let dtype = match T::PRECISION {
            fdlab_core::Precision::F32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            fdlab_core::Precision::F64 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        };
        // How far the copy unit widens each L2 request: an experiment knob
        // (`FDLAB_TMA_L2_PROMOTION` = none, 64, 128 or 256; default 256).
        use sys::CUtensorMapL2promotion as Promo;
        let promotion = match std::env::var("FDLAB_TMA_L2_PROMOTION").as_deref() {
            Ok("none") => Promo::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            Ok("64") => Promo::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
            Ok("128") => Promo::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            _ => Promo::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        };
        let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(buf, &self.stream);
        let elem = [1u32; 3];
        // SAFETY: `map` is plain old data the call fills; the dimension, stride, box and element
        // stride arrays have the lengths rank 3 asks for; the map addresses `buf`, which the
        // caller keeps alive while the map is used (launch borrows both).
        unsafe {
            let mut map: sys::CUtensorMap = std::mem::zeroed();
            let r = sys::cuTensorMapEncodeTiled(
                &mut map,
                dtype,
                3,
                ptr as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                tile.as_ptr(),
                elem.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
                promotion,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            );
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(Error::Driver {
                    call: "cuTensorMapEncodeTiled".into(),
                    detail: format!("{r:?} (shape {shape:?}, box {tile:?})"),
                });
            }
            Ok(TensorMap(map))
        }
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
        let Some(c) = &source.constants else {
            return Ok(());
        };
        let values: Vec<T> = c.values.iter().map(|&w| T::from_f64(w)).collect();
        let mut sym = kernel
            .module
            .get_global(&c.symbol, &self.stream)
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
        self.stream
            .memcpy_htod(&values, &mut view)
            .map_err(driver("cuMemcpyHtoD"))
    }

    /// Refuses a launch beyond the device's limits before it is made.
    pub fn check_limits(&self, kernel: &Kernel, shape: [usize; 3]) -> Result<()> {
        let src = &kernel.source;
        let threads = src.threads() as u64;
        if threads > self.info.max_threads_per_block as u64 {
            return Err(Error::ResourceLimit {
                what: format!("threads per block for {}", src.name),
                requested: threads,
                max: self.info.max_threads_per_block as u64,
            });
        }
        if src.shared_bytes as u64 > self.info.max_shared_per_block as u64 {
            return Err(Error::ResourceLimit {
                what: format!("shared memory per block (bytes) for {}", src.name),
                requested: src.shared_bytes as u64,
                max: self.info.max_shared_per_block as u64,
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
        let mut b = self.stream.launch_builder(&kernel.func);
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

    /// Times `work` with CUDA events: `warmup` untimed calls, then `reps` timed ones, each
    /// bracketed by its own events. Returns milliseconds per call.
    pub fn time(
        &self,
        warmup: usize,
        reps: usize,
        mut work: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        for _ in 0..warmup {
            work()?;
        }
        self.synchronize()?;
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = self.ctx.new_event(flags).map_err(driver("cuEventCreate"))?;
            let stop = self.ctx.new_event(flags).map_err(driver("cuEventCreate"))?;
            start
                .record(&self.stream)
                .map_err(driver("cuEventRecord"))?;
            work()?;
            stop.record(&self.stream).map_err(driver("cuEventRecord"))?;
            stop.synchronize().map_err(driver("cuEventSynchronize"))?;
            times.push(
                start
                    .elapsed_ms(&stop)
                    .map_err(driver("cuEventElapsedTime"))? as f64,
            );
        }
        Ok(times)
    }

    /// Times the driver's device-to-device copy (`cuMemcpyDtoD`) of `bytes`: milliseconds per
    /// copy. Bandwidth is `2·bytes / t` (read + write).
    pub fn copy_times(&self, bytes: usize, warmup: usize, reps: usize) -> Result<Vec<f64>> {
        let n = bytes / 4;
        let src = self.zeros::<f32>(n)?;
        let mut dst = self.zeros::<f32>(n)?;
        self.time(warmup, reps, || {
            self.stream
                .memcpy_dtod(&src, &mut dst)
                .map_err(driver("cuMemcpyDtoD"))
        })
    }

    /// Times `replays` launches captured in one CUDA graph; returns ms per launch per replay.
    pub fn graph_times(
        &self,
        launches: usize,
        reps: usize,
        mut work: impl FnMut() -> Result<()>,
    ) -> Result<Vec<f64>> {
        self.synchronize()?;
        self.stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(driver("cuStreamBeginCapture"))?;
        let mut captured = Ok(());
        for _ in 0..launches {
            captured = work();
            if captured.is_err() {
                break;
            }
        }
        let graph = self
            .stream
            .end_capture(sys::CUgraphInstantiate_flags(0))
            .map_err(driver("cuStreamEndCapture"))?;
        captured?;
        let graph = graph.ok_or_else(|| Error::Driver {
            call: "cuStreamEndCapture".into(),
            detail: "no graph captured".into(),
        })?;
        let times = self.time(2, reps, || graph.launch().map_err(driver("cuGraphLaunch")))?;
        Ok(times.into_iter().map(|t| t / launches as f64).collect())
    }
}
