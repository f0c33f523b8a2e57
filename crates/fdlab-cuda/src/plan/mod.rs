//! Plans: a stencil set, boundary, grid and precision compiled once for a device, then
//! launched on device fields as often as needed.

use crate::choose::{self, Choice, Request};
use crate::codegen::{module_source, CudaSource, InputKind};
use crate::device::{upload_constants, CudaScalar, Device, DeviceInner, TensorMap, Texture};
use crate::error::{driver, Error, Result};
use crate::field::DeviceField;
use crate::strategy::{Coefficients, Strategy};
use crate::stream::Stream;
use cudarc::driver::{sys, CudaFunction, CudaModule, CudaStream, DevicePtr};
use fdlab_core::{Boundary, Grid, Precision, Stencil};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

mod check;
mod foreign;
mod graph;
mod prepare;

#[cfg(test)]
pub(crate) use check::tests;
pub use check::{check_fields, check_weights, PlanMeta};
pub(crate) use check::{check_one, select, Arg};
pub use foreign::{check_foreign, ForeignField, FOREIGN_CHECKS};
pub use graph::GraphPlan;
pub use prepare::PlanSpec;

/// How to build a [`Plan`].
///
/// ```
/// use fdlab_cuda::{PlanOptions, Strategy};
/// let auto = PlanOptions::default();
/// assert!(auto.strategy.is_none());
/// let named = PlanOptions { strategy: Some("naive-32x4x1".parse().unwrap()), ..auto };
/// # let _ = named;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PlanOptions {
    /// Run exactly this strategy (an error if it cannot run the case).
    pub strategy: Option<Strategy>,
    /// The tuner's winner for this case on this device, tried before the built-in defaults;
    /// `None`: the device's tune cache's entry for the case, if any ([`Device::tune_cache`]).
    pub tuned: Option<Strategy>,
    /// How the weights reach the kernel.
    pub coefficients: Coefficients,
}

/// A texture and tensor maps made for one input buffer, reused while it is the input.
struct Bound {
    ptr: u64,
    len: usize,
    texture: Option<Arc<Texture>>,
    maps: Vec<TensorMap>,
}

/// The bindings of a plan's recent inputs, most recent last, and the textures of older ones,
/// which kernels still queued may read: they are destroyed only after the device has waited.
#[derive(Default)]
pub(crate) struct Bindings {
    live: Vec<Bound>,
    retired: Vec<Arc<Texture>>,
}

/// Retired textures kept before the device is waited for and they are destroyed.
const RETIRED_MAX: usize = 32;

/// Input buffers a plan keeps bindings for (textures are a driver object each).
const BOUND_MAX: usize = 4;

/// A stencil set, boundary, grid and precision compiled once for a device: strategy chosen,
/// kernel compiled (through the disk cache) and loaded, weights set, limits checked.
/// [`Plan::apply`] only checks its fields and queues the launch.
///
/// ```no_run
/// use fdlab_core::{Boundary, Field, Grid, Stencil};
/// use fdlab_cuda::{Device, DeviceField, PlanOptions};
/// let dev = Device::open(0)?;
/// let grid = Grid::unit(&[128, 128, 128])?;
/// let lap = Stencil::laplacian(&grid, 2)?;
/// let plan = dev.plan::<f64>(&[lap], Boundary::Periodic, &grid, PlanOptions::default())?;
/// println!("{} ({})", plan.strategy(), plan.choice());
/// let u = DeviceField::upload(&dev, &Field::random(&grid, 7))?;
/// let mut out = DeviceField::zeros(&dev, &grid)?;
/// plan.apply(&u, &mut [&mut out])?;
/// let lu = out.download()?;
/// # let _ = lu;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Plan<T: CudaScalar> {
    device: Weak<DeviceInner>,
    meta: PlanMeta,
    stream: Arc<CudaStream>,
    func: CudaFunction,
    _module: Arc<CudaModule>,
    source: CudaSource,
    strategy: Strategy,
    choice: Choice,
    grid: Grid,
    max_texture_linear: i32,
    grid_dim: (u32, u32, u32),
    block_dim: (u32, u32, u32),
    dims: [i32; 3],
    bound: Mutex<Bindings>,
    _t: PhantomData<fn() -> T>,
}

impl<T: CudaScalar> std::fmt::Debug for Plan<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("strategy", &self.strategy.to_string())
            .field("choice", &self.choice)
            .field("meta", &self.meta)
            .finish()
    }
}

impl Device {
    /// Builds a [`Plan`]: validates the case (boundary, weights in `T`), chooses the strategy
    /// (`opts.strategy`, else `opts.tuned` or the tune cache's entry for the case, else this
    /// device class's measured default, else a heuristic: [`Device::choose`]), generates and
    /// compiles the kernel, loads it and sets its weights.
    ///
    /// ```no_run
    /// use fdlab_core::{Axis, Boundary, Grid, Stencil};
    /// use fdlab_cuda::{Device, PlanOptions};
    /// let dev = Device::open(0)?;
    /// let g = Grid::unit(&[64, 64, 64])?;
    /// let grad = Stencil::gradient(&g, 8)?;
    /// let plan = dev.plan::<f32>(&grad, Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert_eq!(plan.outputs(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn plan<T: CudaScalar>(
        &self,
        stencils: &[Stencil],
        boundary: Boundary,
        grid: &Grid,
        opts: PlanOptions,
    ) -> Result<Plan<T>> {
        let (strategy, choice, source) =
            self.plan_source(stencils, boundary, grid, T::PRECISION, opts)?;
        let info = &self.info;
        let (module, func) = self.load(&source)?;
        let stream = self.inner.stream.clone();
        upload_constants::<T>(&module, &stream, &source)?;
        if source.shared_bytes > 48 * 1024 {
            func.set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                source.shared_bytes as i32,
            )
            .map_err(driver("cuFuncSetAttribute"))?;
        }
        let shape = grid.shape();
        let g = source.grid_dims(shape);
        Ok(Plan {
            device: Arc::downgrade(&self.inner),
            meta: PlanMeta {
                shape,
                precision: T::PRECISION,
                device: self.inner.id,
                outputs: source.outputs,
            },
            stream,
            func,
            _module: module,
            grid_dim: (g[0], g[1], g[2]),
            block_dim: (source.block[0], source.block[1], source.block[2]),
            dims: [shape[0] as i32, shape[1] as i32, shape[2] as i32],
            source,
            strategy,
            choice,
            grid: grid.clone(),
            max_texture_linear: info.max_texture_linear,
            bound: Mutex::new(Bindings::default()),
            _t: PhantomData,
        })
    }

    /// The strategy a plan of these arguments would run and who chose it (the user, the tune
    /// cache, the device class's default or the heuristic: [`choose::candidates`]), after the
    /// checks of [`Device::plan`], without compiling anything.
    ///
    /// ```no_run
    /// use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// use fdlab_cuda::{Device, PlanOptions};
    /// let dev = Device::open(0)?;
    /// let g = Grid::unit(&[512, 512, 512])?;
    /// let lap = [Stencil::laplacian(&g, 2)?];
    /// let (s, who) = dev.choose(&lap, Boundary::Dirichlet, &g, Precision::F32, PlanOptions::default())?;
    /// println!("{s} ({who})");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn choose(
        &self,
        stencils: &[Stencil],
        boundary: Boundary,
        grid: &Grid,
        precision: Precision,
        opts: PlanOptions,
    ) -> Result<(Strategy, Choice)> {
        let (s, c, _) = self.plan_source(stencils, boundary, grid, precision, opts)?;
        Ok((s, c))
    }

    /// The strategy a plan of these arguments runs, who chose it, and its kernel: the checks
    /// and the choice of [`Device::plan`], without compiling anything.
    pub(crate) fn plan_source(
        &self,
        stencils: &[Stencil],
        boundary: Boundary,
        grid: &Grid,
        precision: Precision,
        opts: PlanOptions,
    ) -> Result<(Strategy, Choice, CudaSource)> {
        boundary.check(grid, stencils)?;
        check_weights(stencils, precision)?;
        let info = &self.info;
        let req = Request {
            stencils,
            boundary,
            grid,
            precision,
            explicit: opts.strategy,
            tuned: opts.tuned,
            class: choose::device_class(&info.name),
            tma: info.compute_capability.0 >= 9,
            device: &info.name,
            cache: Some(&self.inner.tune),
        };
        select(&req, opts.coefficients, info)
    }

    /// Compiles (or takes from the caches) and loads a module of its own for `source`, so that
    /// its `__constant__` weights belong to one plan. A cached image the driver refuses is
    /// compiled again and replaced.
    fn load(&self, source: &CudaSource) -> Result<(Arc<CudaModule>, CudaFunction)> {
        let text = module_source(&[source]);
        let try_load = |fresh: bool| -> Result<(Arc<CudaModule>, CudaFunction)> {
            let image = self.module_image(&source.name, &text, fresh, true)?;
            let module = self
                .inner
                .ctx
                .load_module(image)
                .map_err(driver("cuModuleLoadData"))?;
            let func = module
                .load_function(&source.name)
                .map_err(driver("cuModuleGetFunction"))?;
            Ok((module, func))
        };
        try_load(false).or_else(|_| try_load(true))
    }
}

impl<T: CudaScalar> Plan<T> {
    /// Queues the kernel on the device's default stream: `outputs[n]` receives stencil `n`
    /// applied to `input`. Checks, before launching, that the device handle is alive and that
    /// every field is on it, of the plan's precision and shape. Does not wait for the kernel.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{Device, DeviceField, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// # let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// let u = DeviceField::<f32>::zeros(&dev, &g)?;
    /// let mut lu = DeviceField::zeros(&dev, &g)?;
    /// for _ in 0..10 {
    ///     plan.apply(&u, &mut [&mut lu])?;
    /// }
    /// dev.default_stream().synchronize()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn apply(&self, input: &DeviceField<T>, outputs: &mut [&mut DeviceField<T>]) -> Result<()> {
        self.launch_on(&self.stream, input, outputs)
    }

    /// [`Plan::apply`] on `stream` (which must belong to the plan's device handle). Work on
    /// other streams that touches the same fields must be ordered with [`crate::stream::Event`]s.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{Device, DeviceField, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// # let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// let s = dev.new_stream()?;
    /// let u = DeviceField::<f32>::zeros_on(&s, &g)?;
    /// let mut lu = DeviceField::zeros_on(&s, &g)?;
    /// plan.apply_on(&s, &u, &mut [&mut lu])?;
    /// s.synchronize()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn apply_on(
        &self,
        stream: &Stream,
        input: &DeviceField<T>,
        outputs: &mut [&mut DeviceField<T>],
    ) -> Result<()> {
        if stream.device_id != self.meta.device {
            return Err(Error::WrongDevice {
                what: "the stream".into(),
                expected: self.meta.device,
                got: stream.device_id,
            });
        }
        self.launch_on(&stream.raw, input, outputs)
    }

    fn launch_on(
        &self,
        stream: &Arc<CudaStream>,
        input: &DeviceField<T>,
        outputs: &mut [&mut DeviceField<T>],
    ) -> Result<()> {
        let _alive = self.device.upgrade().ok_or(Error::DeviceGone)?;
        self.check(input, outputs)?;
        // Room for the input, up to 16 outputs, nx, ny, nz and up to 8 tensor maps (the split
        // TMA slots take one map per piece of a plane).
        const MAX_OUTPUTS: usize = 16;
        const MAX_MAPS: usize = 8;
        const MAX_ARGS: usize = 1 + MAX_OUTPUTS + 3 + MAX_MAPS;
        if outputs.len() > MAX_OUTPUTS {
            return Err(Error::ResourceLimit {
                what: "kernel arguments (outputs)".into(),
                requested: outputs.len() as u64,
                max: MAX_OUTPUTS as u64,
            });
        }
        if self.source.tensor_boxes.len() > MAX_MAPS {
            return Err(Error::ResourceLimit {
                what: "kernel arguments (tensor maps)".into(),
                requested: self.source.tensor_boxes.len() as u64,
                max: MAX_MAPS as u64,
            });
        }
        let (in_ptr, _s) = input.buf.device_ptr(stream);
        let mut out_ptrs = [0u64; MAX_OUTPUTS];
        for (p, o) in out_ptrs.iter_mut().zip(outputs.iter()) {
            *p = o.buf.device_ptr(stream).0;
        }
        let needs_binding =
            self.source.input == InputKind::Texture || !self.source.tensor_boxes.is_empty();
        let bound = if needs_binding {
            Some(self.bind(in_ptr, input.len())?)
        } else {
            None
        };
        let (mut tex, mut maps) = (0u64, [None::<TensorMap>; MAX_MAPS]);
        if let Some(guard) = &bound {
            let b = guard.live.last().ok_or(Error::DeviceGone)?;
            tex = b.texture.as_ref().map_or(0, |t| t.handle);
            for (m, src) in maps.iter_mut().zip(&b.maps) {
                *m = Some(*src);
            }
        }
        let mut in_arg = in_ptr;
        let mut dims = self.dims;
        let mut args: [*mut c_void; MAX_ARGS] = [std::ptr::null_mut(); MAX_ARGS];
        let mut n = 0;
        let mut push = |p: *mut c_void| {
            args[n] = p;
            n += 1;
        };
        match self.source.input {
            InputKind::Pointer => push(&mut in_arg as *mut u64 as *mut c_void),
            InputKind::Texture => push(&mut tex as *mut u64 as *mut c_void),
        }
        for p in out_ptrs.iter_mut().take(outputs.len()) {
            push(p as *mut u64 as *mut c_void);
        }
        for d in dims.iter_mut() {
            push(d as *mut i32 as *mut c_void);
        }
        for m in maps.iter_mut().flatten() {
            push(m as *mut TensorMap as *mut c_void);
        }
        stream
            .context()
            .bind_to_thread()
            .map_err(driver("cuCtxSetCurrent"))?;
        // SAFETY: the arguments match the generated signature (input or its texture, the
        // outputs, nx, ny, nz, then the tensor maps over the input), each pointer in `args`
        // points to a live local of the parameter's type, the buffers hold nx·ny·nz elements
        // of T (checked above), and the kernel only indexes inside the grid.
        unsafe {
            cudarc::driver::result::launch_kernel(
                self.func.cu_function(),
                self.grid_dim,
                self.block_dim,
                self.source.shared_bytes,
                stream.cu_stream(),
                &mut args[..n],
            )
        }
        .map_err(driver("cuLaunchKernel"))?;
        drop(bound);
        Ok(())
    }

    /// The texture and tensor maps for the input at `ptr`, made once per buffer; the entry for
    /// `ptr` is last in the returned list.
    pub(crate) fn bind(&self, ptr: u64, len: usize) -> Result<MutexGuard<'_, Bindings>> {
        let mut b = self.bound.lock().map_err(|_| Error::Driver {
            call: "plan".into(),
            detail: "a thread panicked while binding an input".into(),
        })?;
        if let Some(i) = b.live.iter().position(|x| x.ptr == ptr && x.len == len) {
            let hit = b.live.remove(i);
            b.live.push(hit);
            return Ok(b);
        }
        let texture = match self.source.input {
            InputKind::Texture => Some(Arc::new(crate::device::texture_at::<T>(
                ptr,
                len,
                self.max_texture_linear,
            )?)),
            InputKind::Pointer => None,
        };
        let maps = self
            .source
            .tensor_boxes
            .iter()
            .map(|&tile| {
                crate::device::tensor_map_at::<T>(ptr, self.meta.shape, tile, Default::default())
            })
            .collect::<Result<Vec<_>>>()?;
        if b.live.len() >= BOUND_MAX {
            let old = b.live.remove(0);
            b.retired.extend(old.texture);
            if b.retired.len() > RETIRED_MAX {
                self.stream
                    .context()
                    .synchronize()
                    .map_err(driver("cuCtxSynchronize"))?;
                b.retired.clear();
            }
        }
        b.live.push(Bound {
            ptr,
            len,
            texture,
            maps,
        });
        Ok(b)
    }

    /// The texture bound to the input at `ptr`, if the kernel reads one (for graphs, which
    /// must keep it alive).
    pub(crate) fn bound_texture(b: &Bindings) -> Option<Arc<Texture>> {
        b.live.last().and_then(|x| x.texture.clone())
    }

    fn check(&self, input: &DeviceField<T>, outputs: &[&mut DeviceField<T>]) -> Result<()> {
        if outputs.len() != self.meta.outputs {
            return Err(Error::OutputCount {
                expected: self.meta.outputs,
                got: outputs.len(),
            });
        }
        check_one(&self.meta, Arg::Input, input.meta())?;
        for (n, o) in outputs.iter().enumerate() {
            check_one(&self.meta, Arg::Output(n), o.meta())?;
        }
        Ok(())
    }

    /// The strategy the plan runs.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// println!("{}", plan.strategy());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Who chose the strategy: the user, the tuner, the device default or the heuristic.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{Choice, Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let s = "naive-32x4x1".parse()?;
    /// let opts = PlanOptions { strategy: Some(s), ..Default::default() };
    /// let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, opts)?;
    /// assert_eq!(plan.choice(), Choice::Explicit);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn choice(&self) -> Choice {
        self.choice
    }

    /// The generated CUDA C translation unit (what NVRTC compiled).
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert!(plan.source().contains("__global__"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn source(&self) -> String {
        module_source(&[&self.source])
    }

    /// The generated kernel with its launch shape.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// println!("{} threads per block", plan.kernel_source().threads());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn kernel_source(&self) -> &CudaSource {
        &self.source
    }

    /// The grid the plan was built for.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert_eq!(plan.grid(), &g);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Output fields per apply (one per stencil).
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Precision, Stencil};
    /// # use fdlab_cuda::{Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert_eq!(plan.outputs(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn outputs(&self) -> usize {
        self.meta.outputs
    }

    /// What [`Plan::apply`] checks fields against.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Stencil, Precision};
    /// # use fdlab_cuda::{Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let plan = dev.plan::<f64>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert_eq!(plan.meta().precision, Precision::F64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn meta(&self) -> PlanMeta {
        self.meta
    }
}

impl<T: CudaScalar> Drop for Plan<T> {
    /// Waits for the device before the plan's module and textures go: kernels still queued
    /// may use them.
    fn drop(&mut self) {
        let _ = self.stream.context().synchronize();
    }
}
