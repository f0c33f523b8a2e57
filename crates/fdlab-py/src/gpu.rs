//! GPU apply on arrays of other libraries (CuPy, PyTorch CUDA tensors, Numba) read through
//! `__cuda_array_interface__`: no copy, the kernel queued on the caller's stream, the output
//! written in place into the caller's (or a freshly allocated) array.
//!
//! Every check that needs no GPU (dtype, layout, read-only outputs, shapes, overlaps) runs
//! before the driver is touched. One CUDA [`Backend`] per ordinal and one compiled plan per
//! (stencils, boundary, shape, dtype, device) are cached for the life of the process, so a
//! repeated apply costs a dict read, a few checks and a launch.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use fdlab::{
    check_foreign, Backend, Boundary, ForeignField, Grid, Plan, PlanMeta, PlanOptions, Precision,
    Stencil,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::apply::{core_stencils, grid_of, parse_boundary};
use crate::error::{cuda_to_py, front_to_py, type_error, value_error};
use crate::stencil::PyStencil;

/// A GPU array as its `__cuda_array_interface__` describes it.
struct GpuArray {
    ptr: u64,
    np_shape: Vec<usize>,
    precision: Precision,
    readonly: bool,
    /// What keeps the memory described alive during the call, beyond the array (a DLPack
    /// capsule).
    keep: Option<PyObject>,
}

impl GpuArray {
    /// The foreign field over the array, x fastest.
    fn field(&self, grid: &Grid) -> ForeignField {
        ForeignField {
            ptr: self.ptr,
            shape: grid.shape(),
            precision: self.precision,
        }
    }
}

fn dtype_of(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "float32",
        Precision::F64 => "float64",
    }
}

/// Reads `__cuda_array_interface__` (versions 2 and 3) of `o`; `what` names it in errors.
/// With `dlpack_stream`, an array without it is read through DLPack (inputs only: DLPack does
/// not say whether an array may be written), its producer ordering its work before that stream.
fn describe(o: &Bound<'_, PyAny>, what: &str, dlpack_stream: Option<u64>) -> PyResult<GpuArray> {
    if is_torch_tensor(o)? {
        return describe_torch(o, what);
    }
    let cai = match o.getattr("__cuda_array_interface__") {
        Ok(c) => c,
        Err(e)
            if dlpack_stream.is_some()
                && e.is_instance_of::<pyo3::exceptions::PyAttributeError>(o.py())
                && o.hasattr("__dlpack__")? =>
        {
            let d = crate::dlpack::read(o, what, dlpack_stream.unwrap_or(0))?;
            if let Some(st) = &d.strides {
                let bytes: Vec<i64> = st.iter().map(|s| s * d.precision.size() as i64).collect();
                check_c_contiguous(what, &d.np_shape, &bytes, d.precision.size())?;
            }
            return Ok(GpuArray {
                ptr: d.ptr,
                np_shape: d.np_shape,
                precision: d.precision,
                readonly: true,
                keep: Some(d.capsule),
            });
        }
        Err(e) => {
            let why = if e.is_instance_of::<pyo3::exceptions::PyAttributeError>(o.py()) {
                String::new()
            } else {
                format!(" ({e})")
            };
            return Err(type_error(format!(
                "{what} must be a GPU array exposing __cuda_array_interface__ (CuPy, PyTorch \
                 CUDA tensor, Numba), got {}{why}; a tensor that requires grad needs .detach(), \
                 a DLPack-only output cupy.from_dlpack(a)",
                o.get_type().name()?
            )));
        }
    };
    let cai = cai
        .downcast::<PyDict>()
        .map_err(|_| type_error(format!("{what}'s __cuda_array_interface__ is not a dict")))?;
    let item = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        cai.get_item(k)?.ok_or_else(|| {
            type_error(format!(
                "{what}'s __cuda_array_interface__ has no '{k}' entry"
            ))
        })
    };
    let typestr: String = item("typestr")?.extract()?;
    let precision = match typestr.as_str() {
        "<f4" | "=f4" => Precision::F32,
        "<f8" | "=f8" => Precision::F64,
        _ => {
            return Err(type_error(format!(
                "fdlab computes on float32 or float64 arrays, {what} has typestr '{typestr}'; \
                 convert it (e.g. u.astype(cupy.float64) or u.double())"
            )))
        }
    };
    let np_shape: Vec<usize> = item("shape")?.extract().map_err(|_| {
        type_error(format!(
            "{what}'s shape is not a tuple of non-negative ints"
        ))
    })?;
    let (ptr, readonly): (u64, bool) = item("data")?.extract().map_err(|_| {
        type_error(format!(
            "{what}'s 'data' is not a (pointer, read-only) pair"
        ))
    })?;
    if let Some(m) = cai.get_item("mask")?
        && !m.is_none()
    {
        return Err(type_error(format!(
            "{what} is a masked array; fdlab needs plain arrays"
        )));
    }
    if let Some(s) = cai.get_item("strides")?
        && !s.is_none()
    {
        let strides: Vec<i64> = s
            .extract()
            .map_err(|_| type_error(format!("{what}'s strides are not a tuple of ints")))?;
        check_c_contiguous(what, &np_shape, &strides, precision.size())?;
    }
    Ok(GpuArray {
        ptr,
        np_shape,
        precision,
        readonly,
        keep: None,
    })
}

/// Whether `o` is a PyTorch tensor (its type comes from the `torch` package).
fn is_torch_tensor(o: &Bound<'_, PyAny>) -> PyResult<bool> {
    let module = o.get_type().module()?;
    let module = module.to_cow()?;
    Ok(module == "torch" || module.starts_with("torch."))
}

/// Reads a PyTorch tensor through its own C-implemented accessors. PyTorch builds
/// `__cuda_array_interface__` in Python, which costs several microseconds per array per call;
/// these reads give the same facts (and the same refusals) for a fraction of that.
fn describe_torch(o: &Bound<'_, PyAny>, what: &str) -> PyResult<GpuArray> {
    let py = o.py();
    if !o.getattr(pyo3::intern!(py, "is_cuda"))?.is_truthy()? {
        return Err(type_error(format!(
            "{what} must be a GPU array exposing __cuda_array_interface__ (CuPy, PyTorch CUDA \
             tensor, Numba), got a PyTorch CPU tensor; move it with .cuda()"
        )));
    }
    if o.getattr(pyo3::intern!(py, "requires_grad"))?.is_truthy()? {
        return Err(type_error(format!(
            "{what} is a PyTorch tensor that requires grad; pass .detach()"
        )));
    }
    let dtype = o.getattr(pyo3::intern!(py, "dtype"))?.str()?;
    let precision = match &*dtype.to_cow()? {
        "torch.float32" => Precision::F32,
        "torch.float64" => Precision::F64,
        other => {
            return Err(type_error(format!(
                "fdlab computes on float32 or float64 arrays, {what} has dtype {other}; \
                 convert it (e.g. u.double())"
            )))
        }
    };
    let np_shape: Vec<usize> = o.getattr(pyo3::intern!(py, "shape"))?.extract()?;
    let strides: Vec<i64> = o
        .call_method0(pyo3::intern!(py, "stride"))?
        .extract::<Vec<i64>>()?
        .iter()
        .map(|s| s * precision.size() as i64)
        .collect();
    check_c_contiguous(what, &np_shape, &strides, precision.size())?;
    let ptr: u64 = o.call_method0(pyo3::intern!(py, "data_ptr"))?.extract()?;
    Ok(GpuArray {
        ptr,
        np_shape,
        precision,
        readonly: false,
        keep: None,
    })
}

/// Refuses strides other than C order (axes of one point may have any stride).
fn check_c_contiguous(what: &str, shape: &[usize], strides: &[i64], size: usize) -> PyResult<()> {
    let mut expect = size as i64;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n > 1 && s != expect {
            return Err(type_error(format!(
                "{what} is not C-contiguous (strides {strides:?} for shape {shape:?}); pass \
                 cupy.ascontiguousarray(u) or u.contiguous()"
            )));
        }
        expect *= n as i64;
    }
    if strides.len() != shape.len() {
        return Err(type_error(format!(
            "{what} has {} strides for {} axes",
            strides.len(),
            shape.len()
        )));
    }
    Ok(())
}

/// A compiled plan of either precision.
enum GpuPlan {
    F32(Plan<f32>),
    F64(Plan<f64>),
}

impl GpuPlan {
    /// # Safety
    /// As [`Plan::apply_foreign`].
    unsafe fn apply(
        &self,
        input: ForeignField,
        outputs: &[ForeignField],
        stream: u64,
    ) -> fdlab::Result<()> {
        // SAFETY: forwarded to the caller.
        unsafe {
            match self {
                GpuPlan::F32(p) => p.apply_foreign(input, outputs, Some(stream)),
                GpuPlan::F64(p) => p.apply_foreign(input, outputs, Some(stream)),
            }
        }
    }
}

/// What a plan is compiled for: stencil descriptions, boundary, shape, precision, device.
type PlanKey = (Vec<String>, Boundary, [usize; 3], Precision, usize);

fn devices() -> &'static Mutex<HashMap<usize, Backend>> {
    static D: OnceLock<Mutex<HashMap<usize, Backend>>> = OnceLock::new();
    D.get_or_init(Default::default)
}

fn plans() -> &'static Mutex<HashMap<PlanKey, Arc<GpuPlan>>> {
    static P: OnceLock<Mutex<HashMap<PlanKey, Arc<GpuPlan>>>> = OnceLock::new();
    P.get_or_init(Default::default)
}

fn poisoned<T>(_: T) -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("a thread panicked while holding fdlab's GPU cache")
}

/// The cached device `ordinal`, opened on first use (the GIL released: opening takes time).
fn device(py: Python<'_>, ordinal: usize) -> PyResult<Backend> {
    if let Some(d) = devices().lock().map_err(poisoned)?.get(&ordinal) {
        return Ok(d.clone());
    }
    let d = py
        .allow_threads(|| Backend::cuda(ordinal))
        .map_err(front_to_py)?;
    let mut map = devices().lock().map_err(poisoned)?;
    Ok(map.entry(ordinal).or_insert(d).clone())
}

/// The cached plan for `key`, compiled on first use with the GIL released.
fn plan(py: Python<'_>, key: PlanKey, core: &[Stencil], grid: &Grid) -> PyResult<Arc<GpuPlan>> {
    if let Some(p) = plans().lock().map_err(poisoned)?.get(&key) {
        return Ok(p.clone());
    }
    let dev = device(py, key.4)?;
    let (boundary, precision) = (key.1, key.3);
    let built = py
        .allow_threads(|| -> fdlab::Result<GpuPlan> {
            let opts = PlanOptions::default();
            Ok(match precision {
                Precision::F32 => GpuPlan::F32(dev.plan(core, boundary, grid, opts)?),
                Precision::F64 => GpuPlan::F64(dev.plan(core, boundary, grid, opts)?),
            })
        })
        .map_err(front_to_py)?;
    let mut map = plans().lock().map_err(poisoned)?;
    Ok(map.entry(key).or_insert_with(|| Arc::new(built)).clone())
}

/// Everything an apply needs once its arrays are checked: the plan and the fields.
struct Prepared<'py> {
    plan: Arc<GpuPlan>,
    input: ForeignField,
    outputs: Vec<ForeignField>,
    out_objects: Vec<Bound<'py, PyAny>>,
    _keep: Option<PyObject>,
}

/// Checks `u` and `out` (or allocates outputs with `alloc(u)`), then finds the plan. Every
/// check that needs no GPU runs before the driver is touched.
#[allow(clippy::too_many_arguments)]
fn prepare<'py>(
    py: Python<'py>,
    stencils: &[Bound<'py, PyStencil>],
    u: &Bound<'py, PyAny>,
    out: Option<Vec<Bound<'py, PyAny>>>,
    boundary: &str,
    ordinal: usize,
    stream: u64,
    alloc: Option<&Bound<'py, PyAny>>,
) -> PyResult<Prepared<'py>> {
    let boundary = parse_boundary(boundary)?;
    let a = describe(u, "the input", Some(stream))?;
    let grid = grid_of(&a.np_shape)?;
    let core = core_stencils(stencils, a.np_shape.len())?;
    boundary.check(&grid, &core).map_err(crate::error::to_py)?;
    let out_objects: Vec<Bound<'py, PyAny>> =
        match out {
            Some(v) => {
                if v.len() != core.len() {
                    return Err(value_error(format!(
                        "{} stencils but {} output arrays; give one output per stencil",
                        core.len(),
                        v.len()
                    )));
                }
                v
            }
            None => {
                let alloc =
                    alloc.ok_or_else(|| {
                        type_error(format!(
                    "fdlab allocates outputs for CuPy and PyTorch arrays only; pass out= for \
                     arrays of {}",
                    u.get_type().name().map(|n| n.to_string()).unwrap_or_default()
                ))
                    })?;
                (0..core.len())
                    .map(|_| alloc.call1((u,)))
                    .collect::<PyResult<_>>()?
            }
        };
    let mut outputs = Vec::with_capacity(out_objects.len());
    for (n, o) in out_objects.iter().enumerate() {
        let what = if out_objects.len() == 1 {
            "out".to_string()
        } else {
            format!("out[{n}]")
        };
        let b = describe(o, &what, None)?;
        if b.readonly {
            return Err(type_error(format!(
                "{what} is read-only; pass a writeable GPU array"
            )));
        }
        if b.precision != a.precision {
            return Err(type_error(format!(
                "{what} has dtype {} but the input has dtype {}; give outputs of the input's \
                 dtype",
                dtype_of(b.precision),
                dtype_of(a.precision)
            )));
        }
        if b.np_shape != a.np_shape {
            return Err(value_error(format!(
                "{what} has shape {:?} but the input has shape {:?}; give outputs of the \
                 input's shape",
                b.np_shape, a.np_shape
            )));
        }
        outputs.push(b.field(&grid));
    }
    let input = a.field(&grid);
    // Null pointers and overlaps, before any driver call; the plan checks its own alignment.
    let meta = PlanMeta {
        shape: grid.shape(),
        precision: a.precision,
        device: 0,
        outputs: core.len(),
    };
    check_foreign(&meta, a.precision.size(), input, &outputs).map_err(cuda_to_py)?;
    let key: PlanKey = (
        stencils.iter().map(|s| s.get().key().to_owned()).collect(),
        boundary,
        grid.shape(),
        a.precision,
        ordinal,
    );
    let plan = plan(py, key, &core, &grid)?;
    Ok(Prepared {
        plan,
        input,
        outputs,
        out_objects,
        _keep: a.keep,
    })
}

/// Applies `stencils` to the GPU array `u` with no copy: the kernel is queued on `stream` (a
/// raw `CUstream` handle; 0 is the legacy default stream) of GPU `device` and writes `out`
/// (or arrays made by `alloc(u)`, one per stencil) in place; returns the outputs. The
/// Pythonic entry point is `fdlab.apply`, which finds the caller's stream and device.
#[pyfunction]
#[pyo3(signature = (stencils, u, out = None, boundary = "periodic", stream = 0, device = 0, alloc = None))]
#[allow(clippy::too_many_arguments)]
pub fn apply_cuda<'py>(
    py: Python<'py>,
    stencils: Vec<Bound<'py, PyStencil>>,
    u: &Bound<'py, PyAny>,
    out: Option<Vec<Bound<'py, PyAny>>>,
    boundary: &str,
    stream: u64,
    device: usize,
    alloc: Option<Bound<'py, PyAny>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let p = prepare(
        py,
        &stencils,
        u,
        out,
        boundary,
        device,
        stream,
        alloc.as_ref(),
    )?;
    let (plan, input, outputs) = (&p.plan, p.input, &p.outputs);
    // SAFETY: `u` and the outputs are referenced by this call until it returns, and their
    // libraries free memory in the order of the stream the kernel is queued on (CuPy's and
    // PyTorch's caching allocators), so the memory outlives the kernel.
    py.allow_threads(|| unsafe { plan.apply(input, outputs, stream) })
        .map_err(front_to_py)?;
    Ok(p.out_objects)
}

/// Times the Rust call that `fdlab.apply(stencils, u, out=out)` makes on GPU arrays
/// (`Plan::apply_foreign`, host time of queuing the kernel on `stream`), in a loop in Rust with
/// the GIL released: returns `(median, min)` seconds per call over `repeats` calls after one
/// warm-up. The device is synchronized before returning.
#[pyfunction]
#[pyo3(signature = (stencils, u, out, boundary = "periodic", stream = 0, device = 0, repeats = 200))]
#[allow(clippy::too_many_arguments)]
pub fn _time_apply_cuda_native<'py>(
    py: Python<'py>,
    stencils: Vec<Bound<'py, PyStencil>>,
    u: &Bound<'py, PyAny>,
    out: Vec<Bound<'py, PyAny>>,
    boundary: &str,
    stream: u64,
    device: usize,
    repeats: usize,
) -> PyResult<(f64, f64)> {
    let p = prepare(py, &stencils, u, Some(out), boundary, device, stream, None)?;
    let dev = self::device(py, device)?;
    let (plan, input, outputs) = (&p.plan, p.input, &p.outputs);
    let mut times = py
        .allow_threads(|| -> fdlab::Result<Vec<f64>> {
            let mut t = Vec::with_capacity(repeats + 1);
            for _ in 0..repeats.max(1) + 1 {
                let t0 = Instant::now();
                // SAFETY: as in `apply_cuda`; the device is synchronized below.
                unsafe { plan.apply(input, outputs, stream)? };
                t.push(t0.elapsed().as_secs_f64());
            }
            dev.synchronize()?;
            Ok(t)
        })
        .map_err(front_to_py)?;
    times.remove(0); // warm-up
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], times[0]))
}

/// The GPU count, or why there is none, for `fdlab.info()`.
pub fn probe() -> Result<usize, String> {
    fdlab::cuda_devices().map_err(|e| e.to_string())
}

/// Strategy name of the cached plan for an apply, for tests and diagnostics: the same
/// arguments as `apply_cuda` without outputs.
#[pyfunction]
#[pyo3(signature = (stencils, u, boundary = "periodic", device = 0))]
pub fn _cuda_plan_info<'py>(
    py: Python<'py>,
    stencils: Vec<Bound<'py, PyStencil>>,
    u: &Bound<'py, PyAny>,
    boundary: &str,
    device: usize,
) -> PyResult<Bound<'py, PyTuple>> {
    let a = describe(u, "the input", Some(0))?;
    let grid = grid_of(&a.np_shape)?;
    let core = core_stencils(&stencils, a.np_shape.len())?;
    let boundary = parse_boundary(boundary)?;
    let key: PlanKey = (
        stencils.iter().map(|s| s.get().key().to_owned()).collect(),
        boundary,
        grid.shape(),
        a.precision,
        device,
    );
    let plan = plan(py, key, &core, &grid)?;
    let (strategy, align) = match &*plan {
        GpuPlan::F32(p) => (p.label(), p.foreign_alignment()),
        GpuPlan::F64(p) => (p.label(), p.foreign_alignment()),
    };
    PyTuple::new(
        py,
        [
            strategy.into_pyobject(py)?.into_any(),
            align.map_err(front_to_py)?.into_pyobject(py)?.into_any(),
        ],
    )
}
