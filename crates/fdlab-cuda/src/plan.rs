//! Plans: a stencil set, boundary, grid and precision compiled once for a device, then
//! launched on device fields as often as needed.

use crate::choose::{self, Choice, Request};
use crate::codegen::{generate, module_source, CudaSource, InputKind, KernelSpec};
use crate::device::{check_source, upload_constants, DeviceInner, TensorMap, Texture};
use crate::error::driver;
use crate::field::FieldMeta;
use crate::stream::Stream;
use crate::{Coefficients, CudaScalar, Device, DeviceField, DeviceInfo, Error, Result, Strategy};
use cudarc::driver::{sys, CudaFunction, CudaModule, CudaStream, DevicePtr};
use fdlab_core::{Boundary, Grid, Precision, Stencil};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, Weak};

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
    /// The tuner's winner for this case on this device, tried before the built-in defaults.
    pub tuned: Option<Strategy>,
    /// How the weights reach the kernel.
    pub coefficients: Coefficients,
}

/// What a plan checks fields against, apart from the device so that it is tested without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanMeta {
    /// The grid's points along x, y, z.
    pub shape: [usize; 3],
    /// Element type.
    pub precision: Precision,
    /// Id of the device handle the plan was built with.
    pub device: u64,
    /// Output fields written per apply.
    pub outputs: usize,
}

/// Checks an apply's fields against the plan: count, device, precision, shape, in that order.
///
/// ```
/// use fdlab_core::Precision;
/// use fdlab_cuda::{check_fields, Error, FieldMeta, PlanMeta};
/// let plan = PlanMeta { shape: [8, 8, 8], precision: Precision::F32, device: 1, outputs: 1 };
/// let ok = FieldMeta { shape: [8, 8, 8], precision: Precision::F32, device: 1 };
/// assert!(check_fields(&plan, ok, &[ok]).is_ok());
/// let other = FieldMeta { device: 2, ..ok };
/// assert!(matches!(check_fields(&plan, other, &[ok]), Err(Error::WrongDevice { .. })));
/// ```
pub fn check_fields(plan: &PlanMeta, input: FieldMeta, outputs: &[FieldMeta]) -> Result<()> {
    if outputs.len() != plan.outputs {
        return Err(Error::OutputCount {
            expected: plan.outputs,
            got: outputs.len(),
        });
    }
    check_one(plan, Arg::Input, input)?;
    for (n, &m) in outputs.iter().enumerate() {
        check_one(plan, Arg::Output(n), m)?;
    }
    Ok(())
}

/// Which argument of an apply a check is about; named in text only when a check fails, so
/// that a passing check allocates nothing.
#[derive(Debug, Clone, Copy)]
enum Arg {
    Input,
    Output(usize),
}

impl std::fmt::Display for Arg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arg::Input => f.write_str("the input"),
            Arg::Output(n) => write!(f, "output {n}"),
        }
    }
}

fn check_one(plan: &PlanMeta, what: Arg, m: FieldMeta) -> Result<()> {
    if m.device != plan.device {
        return Err(Error::WrongDevice {
            what: what.to_string(),
            expected: plan.device,
            got: m.device,
        });
    }
    if m.precision != plan.precision {
        return Err(Error::Precision {
            what: what.to_string(),
            expected: plan.precision,
            got: m.precision,
        });
    }
    if m.shape != plan.shape {
        return Err(Error::ShapeMismatch {
            what: what.to_string(),
            expected: plan.shape,
            got: m.shape,
        });
    }
    Ok(())
}

/// Refuses weights that overflow to infinity or vanish to zero in `precision` (an `f64`
/// weight of 1e60 is infinite in `f32`; one of 1e-50 is zero).
///
/// ```
/// use fdlab_core::{Precision, Stencil};
/// use fdlab_cuda::check_weights;
/// let big = Stencil::custom(&[([0, 0, 0], 1e60)]).unwrap();
/// assert!(check_weights(std::slice::from_ref(&big), Precision::F64).is_ok());
/// assert!(check_weights(&[big], Precision::F32).is_err());
/// ```
pub fn check_weights(stencils: &[Stencil], precision: Precision) -> Result<()> {
    for s in stencils {
        for t in s.taps() {
            let w = t.weight;
            let (finite, zero) = match precision {
                Precision::F32 => ((w as f32).is_finite(), w as f32 == 0.0),
                Precision::F64 => (w.is_finite(), w == 0.0),
            };
            if !finite || (zero && w != 0.0) || !w.is_finite() {
                return Err(Error::Weight {
                    stencil: s.label(),
                    weight: w,
                    as_precision: if finite { "0" } else { "inf" }.into(),
                    precision,
                });
            }
        }
    }
    Ok(())
}

/// Generates the kernel of `strategy` for the case and checks it against the device's limits.
pub(crate) fn viable(
    strategy: Strategy,
    stencils: &[Stencil],
    boundary: Boundary,
    grid: &Grid,
    precision: Precision,
    coefficients: Coefficients,
    info: &DeviceInfo,
) -> Result<CudaSource> {
    let src = generate(&KernelSpec {
        stencils,
        boundary,
        precision,
        strategy,
        coefficients,
    })?;
    let shape = grid.shape();
    check_source(&src, shape, info)?;
    if !src.tensor_boxes.is_empty() && !(shape[0] * precision.size()).is_multiple_of(16) {
        return Err(Error::Misaligned {
            kernel: src.name.clone(),
            nx: shape[0],
            multiple: (16 / precision.size()) as u32,
        });
    }
    Ok(src)
}

/// The first candidate ([`choose::candidates`]) whose kernel generates and fits the device,
/// with its kernel; an explicit strategy that cannot run is an error, not replaced.
pub(crate) fn select(
    req: &Request<'_>,
    coefficients: Coefficients,
    info: &DeviceInfo,
) -> Result<(Strategy, Choice, CudaSource)> {
    let mut last = None;
    for (strategy, choice) in choose::candidates(req) {
        match viable(
            strategy,
            req.stencils,
            req.boundary,
            req.grid,
            req.precision,
            coefficients,
            info,
        ) {
            Ok(src) => return Ok((strategy, choice, src)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or(Error::Driver {
        call: "plan".into(),
        detail: "no strategy to try".into(),
    }))
}

/// A texture and tensor maps made for one input buffer, reused while it is the input.
struct Bound {
    ptr: u64,
    len: usize,
    texture: Option<Texture>,
    maps: Vec<TensorMap>,
}

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
    bound: Mutex<Vec<Bound>>,
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
    /// (`opts.strategy`, else `opts.tuned`, else this device class's measured default, else a
    /// heuristic), generates and compiles the kernel, loads it and sets its weights.
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
        boundary.check(grid, stencils)?;
        check_weights(stencils, T::PRECISION)?;
        let info = &self.info;
        let req = Request {
            stencils,
            boundary,
            grid,
            precision: T::PRECISION,
            explicit: opts.strategy,
            tuned: opts.tuned,
            class: choose::device_class(&info.name),
            tma: info.compute_capability.0 >= 9,
        };
        let (strategy, choice, source) = select(&req, opts.coefficients, info)?;
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
            bound: Mutex::new(Vec::new()),
            _t: PhantomData,
        })
    }

    /// Compiles (or takes from the caches) and loads a module of its own for `source`, so that
    /// its `__constant__` weights belong to one plan. A cached image the driver refuses is
    /// compiled again and replaced.
    fn load(&self, source: &CudaSource) -> Result<(Arc<CudaModule>, CudaFunction)> {
        let text = module_source(&[source]);
        let try_load = |fresh: bool| -> Result<(Arc<CudaModule>, CudaFunction)> {
            let image = self.module_image(&source.name, &text, fresh)?;
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
    /// # use fdlab_core::{Boundary, Grid, Stencil};
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
    /// other streams that touches the same fields must be ordered with [`crate::Event`]s.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Stencil};
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
        // Room for the input, up to 16 outputs, nx, ny, nz and 2 tensor maps.
        const MAX_ARGS: usize = 1 + 16 + 3 + 2;
        if outputs.len() > 16 || self.source.tensor_boxes.len() > 2 {
            return Err(Error::ResourceLimit {
                what: "kernel arguments (outputs)".into(),
                requested: outputs.len() as u64,
                max: 16,
            });
        }
        let (in_ptr, _s) = input.buf.device_ptr(stream);
        let mut out_ptrs = [0u64; 16];
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
        let (mut tex, mut maps) = (0u64, [None::<TensorMap>; 2]);
        if let Some(guard) = &bound {
            let b = guard.last().ok_or(Error::DeviceGone)?;
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
    fn bind(&self, ptr: u64, len: usize) -> Result<std::sync::MutexGuard<'_, Vec<Bound>>> {
        let mut bound = self.bound.lock().map_err(|_| Error::Driver {
            call: "plan".into(),
            detail: "a thread panicked while binding an input".into(),
        })?;
        if let Some(i) = bound.iter().position(|b| b.ptr == ptr && b.len == len) {
            let b = bound.remove(i);
            bound.push(b);
            return Ok(bound);
        }
        let texture = match self.source.input {
            InputKind::Texture => Some(crate::device::texture_at::<T>(
                ptr,
                len,
                self.max_texture_linear,
            )?),
            InputKind::Pointer => None,
        };
        let maps = self
            .source
            .tensor_boxes
            .iter()
            .map(|&tile| crate::device::tensor_map_at::<T>(ptr, self.meta.shape, tile))
            .collect::<Result<Vec<_>>>()?;
        if bound.len() >= BOUND_MAX {
            bound.remove(0);
        }
        bound.push(Bound {
            ptr,
            len,
            texture,
            maps,
        });
        Ok(bound)
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
    /// # use fdlab_core::{Boundary, Grid, Stencil};
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
    /// # use fdlab_core::{Boundary, Grid, Stencil};
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
    /// # use fdlab_core::{Boundary, Grid, Stencil};
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
    /// # use fdlab_core::{Boundary, Grid, Stencil};
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
    /// # use fdlab_core::{Boundary, Grid, Stencil};
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
    /// # use fdlab_core::{Boundary, Grid, Stencil};
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

    /// Captures `launches` applies on `input` and `outputs` into a CUDA graph, replayed with
    /// [`GraphPlan::launch`]: one driver call for all of them, which pays on small grids where
    /// launch overhead dominates. The graph keeps the fields borrowed, since it holds their
    /// addresses.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Stencil};
    /// # use fdlab_cuda::{Device, DeviceField, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// # let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// let u = DeviceField::<f32>::zeros(&dev, &g)?;
    /// let mut lu = DeviceField::zeros(&dev, &g)?;
    /// let mut outs = [&mut lu];
    /// let graph = plan.graph(&u, &mut outs, 100)?;
    /// graph.launch()?;
    /// dev.default_stream().synchronize()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn graph<'a>(
        &self,
        input: &'a DeviceField<T>,
        outputs: &'a mut [&mut DeviceField<T>],
        launches: usize,
    ) -> Result<GraphPlan<'a>> {
        let _alive = self.device.upgrade().ok_or(Error::DeviceGone)?;
        self.check(input, outputs)?;
        // Bind the input (texture, tensor maps) before capture: no driver objects made inside.
        if self.source.input == InputKind::Texture || !self.source.tensor_boxes.is_empty() {
            let (ptr, _s) = input.buf.device_ptr(&self.stream);
            drop(self.bind(ptr, input.len())?);
        }
        let stream = &self.stream;
        stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(driver("cuStreamBeginCapture"))?;
        let mut captured = Ok(());
        for _ in 0..launches.max(1) {
            captured = self.launch_on(stream, input, outputs);
            if captured.is_err() {
                break;
            }
        }
        let graph = stream
            .end_capture(sys::CUgraphInstantiate_flags(0))
            .map_err(driver("cuStreamEndCapture"))?;
        captured?;
        let graph = graph.ok_or_else(|| Error::Driver {
            call: "cuStreamEndCapture".into(),
            detail: "no graph captured".into(),
        })?;
        graph.upload().map_err(driver("cuGraphUpload"))?;
        Ok(GraphPlan {
            graph,
            device: self.device.clone(),
            launches: launches.max(1),
            _fields: PhantomData,
        })
    }
}

/// Applies of a [`Plan`] captured into a CUDA graph (see [`Plan::graph`]).
pub struct GraphPlan<'a> {
    graph: cudarc::driver::CudaGraph,
    device: Weak<DeviceInner>,
    launches: usize,
    _fields: PhantomData<&'a mut ()>,
}

impl std::fmt::Debug for GraphPlan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphPlan")
            .field("launches", &self.launches)
            .finish()
    }
}

impl GraphPlan<'_> {
    /// Queues every captured apply on the plan's stream, in one driver call.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Stencil};
    /// # use fdlab_cuda::{Device, DeviceField, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// # let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// # let u = DeviceField::<f32>::zeros(&dev, &g)?;
    /// # let mut lu = DeviceField::zeros(&dev, &g)?;
    /// # let mut outs = [&mut lu];
    /// let graph = plan.graph(&u, &mut outs, 10)?;
    /// for _ in 0..5 {
    ///     graph.launch()?;
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn launch(&self) -> Result<()> {
        let _alive = self.device.upgrade().ok_or(Error::DeviceGone)?;
        self.graph.launch().map_err(driver("cuGraphLaunch"))
    }

    /// Applies per [`GraphPlan::launch`].
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Stencil};
    /// # use fdlab_cuda::{Device, DeviceField, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// # let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// # let u = DeviceField::<f32>::zeros(&dev, &g)?;
    /// # let mut lu = DeviceField::zeros(&dev, &g)?;
    /// # let mut outs = [&mut lu];
    /// assert_eq!(plan.graph(&u, &mut outs, 10)?.launches(), 10);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn launches(&self) -> usize {
        self.launches
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An H100 as the driver describes it, for choices made without a GPU.
    pub(crate) fn h100() -> DeviceInfo {
        DeviceInfo {
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            total_memory: 80 << 30,
            l2_bytes: 50 << 20,
            max_threads_per_block: 1024,
            max_shared_per_block: 232448,
            max_texture_linear: 1 << 28,
            driver_version: 13000,
            memory_clock_khz: 2619000,
            bus_width_bits: 5120,
            sm_clock_khz: 1980000,
        }
    }

    fn request<'a>(st: &'a [Stencil], g: &'a Grid, b: Boundary, p: Precision) -> Request<'a> {
        Request {
            stencils: st,
            boundary: b,
            grid: g,
            precision: p,
            explicit: None,
            tuned: None,
            class: choose::device_class(&h100().name),
            tma: true,
        }
    }

    #[test]
    fn a_tuned_or_default_kernel_that_cannot_run_gives_way() {
        let info = h100();
        // nx = 514 is not a multiple of 4: a tuned kernel of 4-wide vectors cannot run it,
        // so the next candidate does.
        let g = Grid::unit(&[514, 512, 512]).unwrap();
        let st = [Stencil::laplacian(&g, 2).unwrap()];
        let mut req = request(&st, &g, Boundary::Dirichlet, Precision::F32);
        let wide: Strategy = "zmarch-32x4-v4-c64-u4-r1".parse().unwrap();
        req.tuned = Some(wide);
        let (s, choice, src) = select(&req, Coefficients::Immediate, &info).unwrap();
        assert_ne!(s, wide);
        assert_ne!(choice, Choice::Tuned);
        assert!(514usize.is_multiple_of(src.x_multiple as usize), "{s}");
        // The same strategy named explicitly is an error, not replaced.
        req.explicit = Some(wide);
        let e = select(&req, Coefficients::Immediate, &info).unwrap_err();
        assert!(matches!(e, Error::Misaligned { nx: 514, .. }), "{e}");
    }

    #[test]
    fn the_h100_gets_its_measured_winner() {
        let info = h100();
        let g = Grid::unit(&[512, 512, 512]).unwrap();
        let st = [Stencil::laplacian(&g, 8).unwrap()];
        let req = request(&st, &g, Boundary::Dirichlet, Precision::F64);
        let (s, choice, _) = select(&req, Coefficients::Immediate, &info).unwrap();
        assert_eq!(choice, Choice::DeviceDefault);
        assert_eq!(s.to_string(), "qmarch-32x16-r2-c256-v2-w2a");
        // An unknown device falls to the heuristic.
        let mut other = info.clone();
        other.name = "NVIDIA A100-SXM4-80GB".into();
        let req = Request {
            class: choose::device_class(&other.name),
            ..req
        };
        let (_, choice, _) = select(&req, Coefficients::Immediate, &other).unwrap();
        assert_eq!(choice, Choice::Heuristic);
    }

    #[test]
    fn over_limit_kernels_are_refused_before_launch() {
        let mut info = h100();
        info.max_threads_per_block = 64;
        let g = Grid::unit(&[64, 64, 64]).unwrap();
        let st = [Stencil::laplacian(&g, 2).unwrap()];
        let mut req = request(&st, &g, Boundary::Periodic, Precision::F32);
        req.explicit = Some("naive-32x4x1".parse().unwrap());
        let e = select(&req, Coefficients::Immediate, &info).unwrap_err();
        assert!(
            matches!(
                e,
                Error::ResourceLimit {
                    requested: 128,
                    max: 64,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn field_checks_name_the_argument_and_the_fix() {
        let plan = PlanMeta {
            shape: [8, 8, 8],
            precision: Precision::F32,
            device: 1,
            outputs: 2,
        };
        let ok = FieldMeta {
            shape: [8, 8, 8],
            precision: Precision::F32,
            device: 1,
        };
        assert!(check_fields(&plan, ok, &[ok, ok]).is_ok());
        let e = check_fields(&plan, ok, &[ok]).unwrap_err();
        assert!(matches!(
            e,
            Error::OutputCount {
                expected: 2,
                got: 1
            }
        ));
        let f64_out = FieldMeta {
            precision: Precision::F64,
            ..ok
        };
        let e = check_fields(&plan, ok, &[ok, f64_out]).unwrap_err();
        assert!(matches!(e, Error::Precision { .. }));
        assert!(e.to_string().contains("output 1"), "{e}");
        let moved = FieldMeta {
            shape: [8, 8, 9],
            ..ok
        };
        let e = check_fields(&plan, moved, &[ok, ok]).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { .. }));
        assert!(e.to_string().contains("the input"), "{e}");
        let foreign = FieldMeta { device: 7, ..ok };
        let e = check_fields(&plan, ok, &[foreign, ok]).unwrap_err();
        assert!(matches!(
            e,
            Error::WrongDevice {
                expected: 1,
                got: 7,
                ..
            }
        ));
        // Device before precision before shape: the most basic mistake is named first.
        let all_wrong = FieldMeta {
            shape: [1, 1, 1],
            precision: Precision::F64,
            device: 9,
        };
        let e = check_fields(&plan, all_wrong, &[ok, ok]).unwrap_err();
        assert!(matches!(e, Error::WrongDevice { .. }));
    }

    #[test]
    fn weights_out_of_range_for_the_precision_are_refused() {
        let tiny = Stencil::custom(&[([0, 0, 0], 1e-50)]).unwrap();
        let huge = Stencil::custom(&[([0, 0, 0], -1e40)]).unwrap();
        for s in [&tiny, &huge] {
            let one = std::slice::from_ref(s);
            assert!(check_weights(one, Precision::F64).is_ok());
            let e = check_weights(one, Precision::F32).unwrap_err();
            assert!(matches!(e, Error::Weight { .. }), "{e}");
        }
        let fine = Stencil::custom(&[([0, 0, 0], 1e-30), ([1, 0, 0], 3e38)]).unwrap();
        assert!(check_weights(&[fine], Precision::F32).is_ok());
    }
}
