//! CPU apply on NumPy arrays: checks, the GIL released around compute, plans, and native timing.

use std::time::Instant;

use fdlab::{Backend, Boundary, FieldView, FieldViewMut, Grid, PlanOptions, Real, Stencil};
use numpy::npyffi::npy_intp;
use numpy::prelude::*;
use numpy::{BorrowError, Element, PyArrayDyn, PyUntypedArray, PY_ARRAY_API};
use pyo3::prelude::*;

use crate::error::{front_to_py, to_py, type_error, value_error};
use crate::stencil::PyStencil;

/// Reads a boundary name: "periodic", "dirichlet" or "neumann".
pub(crate) fn parse_boundary(name: &str) -> PyResult<Boundary> {
    Boundary::ALL
        .into_iter()
        .find(|b| b.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            value_error(format!(
                "unknown boundary '{name}'; valid boundaries: periodic, dirichlet, neumann"
            ))
        })
}

/// The grid of a C-ordered NumPy shape `(…, ny, nx)`: x is the last NumPy axis.
pub(crate) fn grid_of(np_shape: &[usize]) -> PyResult<Grid> {
    if !(1..=3).contains(&np_shape.len()) {
        return Err(value_error(format!(
            "fdlab arrays have 1, 2 or 3 axes, got an array of shape {np_shape:?}"
        )));
    }
    let shape: Vec<usize> = np_shape.iter().rev().copied().collect();
    Grid::new(&shape, &vec![1.0; shape.len()]).map_err(to_py)
}

fn dtype_name(a: &Bound<'_, PyAny>) -> String {
    a.downcast::<PyUntypedArray>()
        .map(|a| a.dtype().to_string())
        .unwrap_or_else(|_| {
            a.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        })
}

/// Why an `out` array cannot be written, as the exception a caller expects.
fn borrow_error(what: &str, e: BorrowError) -> PyErr {
    match e {
        BorrowError::NotWriteable => {
            value_error(format!("{what} is read-only; pass a writeable array"))
        }
        _ => value_error(format!(
            "{what} shares memory with the input or another output; pass separate arrays"
        )),
    }
}

/// The output arrays of a run and the time of each call in seconds.
type Executed<'py, T> = (Vec<Bound<'py, PyArrayDyn<T>>>, Vec<f64>);

/// Applies `core` to `u` (checked to be `T`), writing `out` (allocated as zeros when `None`),
/// `calls` times (1 except when timing), and returns the output arrays and the time of each
/// call in seconds.
fn execute<'py, T: Real + Element>(
    py: Python<'py>,
    core: &[Stencil],
    boundary: Boundary,
    u: &Bound<'py, PyArrayDyn<T>>,
    out: Option<Vec<Bound<'py, PyAny>>>,
    calls: usize,
) -> PyResult<Executed<'py, T>> {
    let grid = grid_of(u.shape())?;
    if !u.is_c_contiguous() {
        return Err(type_error(
            "the input array is not C-contiguous; pass np.ascontiguousarray(u) or convert=True",
        ));
    }
    let outs: Vec<Bound<'py, PyArrayDyn<T>>> = match out {
        None => (0..core.len())
            .map(|_| zeros::<T>(py, u.shape()))
            .collect::<PyResult<_>>()?,
        Some(v) => {
            if v.len() != core.len() {
                return Err(value_error(format!(
                    "{} stencils but {} output arrays; give one output per stencil",
                    core.len(),
                    v.len()
                )));
            }
            v.into_iter()
                .map(|o| checked_out(o, u))
                .collect::<PyResult<_>>()?
        }
    };
    {
        let u_ro = u
            .try_readonly()
            .map_err(|_| value_error("the input array is being written elsewhere"))?;
        let mut rw = Vec::with_capacity(outs.len());
        for o in &outs {
            rw.push(o.try_readwrite().map_err(|e| borrow_error("out", e))?);
        }
        let u_slice = u_ro.as_slice().map_err(|e| type_error(e.to_string()))?;
        let mut slices: Vec<&mut [T]> = Vec::with_capacity(rw.len());
        for o in rw.iter_mut() {
            slices.push(o.as_slice_mut().map_err(|e| type_error(e.to_string()))?);
        }
        let times = py
            .allow_threads(|| -> fdlab::Result<Vec<f64>> {
                let plan =
                    Backend::cpu().plan::<T>(core, boundary, &grid, PlanOptions::default())?;
                let input = FieldView::new(&grid, u_slice)?;
                let mut views = slices
                    .into_iter()
                    .map(|s| FieldViewMut::new(&grid, s))
                    .collect::<Result<Vec<_>, _>>()?;
                (0..calls)
                    .map(|_| {
                        let t = Instant::now();
                        plan.apply_host(input, &mut views)?;
                        Ok(t.elapsed().as_secs_f64())
                    })
                    .collect()
            })
            .map_err(front_to_py)?;
        Ok((outs, times))
    }
}

/// A C-ordered array of zeros; `MemoryError` (not a panic) when NumPy cannot allocate it.
fn zeros<'py, T: Element>(py: Python<'py>, shape: &[usize]) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    let mut dims: Vec<npy_intp> = shape.iter().map(|&n| n as npy_intp).collect();
    // SAFETY: `dims` outlives the call and holds `dims.len()` sizes; PyArray_Zeros steals the
    // dtype reference that `into_dtype_ptr` hands over, and returns a new reference or NULL
    // with a Python error set, which `from_owned_ptr_or_err` turns into `Err`.
    unsafe {
        let ptr = PY_ARRAY_API.PyArray_Zeros(
            py,
            dims.len() as std::os::raw::c_int,
            dims.as_mut_ptr(),
            T::get_dtype(py).into_dtype_ptr(),
            0,
        );
        Ok(Bound::from_owned_ptr_or_err(py, ptr)?.downcast_into_unchecked())
    }
}

/// Checks one caller-given output: same dtype, shape and layout as `u`.
fn checked_out<'py, T: Element>(
    o: Bound<'py, PyAny>,
    u: &Bound<'py, PyArrayDyn<T>>,
) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    let a = o.downcast_into::<PyArrayDyn<T>>().map_err(|e| {
        let o = e.into_inner();
        type_error(format!(
            "out must be a numpy.ndarray of dtype {} like the input, got {}",
            dtype_name(u.as_any()),
            dtype_name(&o)
        ))
    })?;
    if a.shape() != u.shape() {
        return Err(value_error(format!(
            "out has shape {:?} but the input has shape {:?}; give outputs of the input's shape",
            a.shape(),
            u.shape()
        )));
    }
    if !a.is_c_contiguous() {
        return Err(type_error(
            "out is not C-contiguous; pass a C-contiguous array (e.g. np.empty_like(u))",
        ));
    }
    Ok(a)
}

/// Runs `core` on `u`, dispatching on its dtype; returns the outputs as Python objects.
fn dispatch<'py>(
    py: Python<'py>,
    core: &[Stencil],
    boundary: Boundary,
    u: &Bound<'py, PyAny>,
    out: Option<Vec<Bound<'py, PyAny>>>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    fn any<'py, T>(v: Vec<Bound<'py, PyArrayDyn<T>>>) -> Vec<Bound<'py, PyAny>> {
        v.into_iter().map(|a| a.into_any()).collect()
    }
    if let Ok(a) = u.downcast::<PyArrayDyn<f64>>() {
        Ok(any(execute(py, core, boundary, a, out, 1)?.0))
    } else if let Ok(a) = u.downcast::<PyArrayDyn<f32>>() {
        Ok(any(execute(py, core, boundary, a, out, 1)?.0))
    } else if u.downcast::<PyUntypedArray>().is_ok() {
        Err(type_error(format!(
            "fdlab computes on float32 or float64 arrays, got dtype {}; convert with \
             u.astype(np.float64) or pass convert=True",
            dtype_name(u)
        )))
    } else {
        Err(type_error(format!(
            "expected a numpy.ndarray of float32 or float64, got {}; pass np.asarray(u) or \
             convert=True",
            dtype_name(u)
        )))
    }
}

/// Core stencils of `stencils` for arrays of `dim` axes.
pub(crate) fn core_stencils(
    stencils: &[Bound<'_, PyStencil>],
    dim: usize,
) -> PyResult<Vec<Stencil>> {
    if stencils.is_empty() {
        return Err(value_error("no stencil given; pass at least one Stencil"));
    }
    stencils
        .iter()
        .map(|s| s.get().core(dim).cloned())
        .collect()
}

/// Applies `stencils` to the NumPy array `u` on the CPU and returns the list of outputs.
/// The Pythonic entry point is `fdlab.apply`, which chooses the backend.
#[pyfunction]
#[pyo3(signature = (stencils, u, out = None, boundary = "periodic"))]
pub fn apply_cpu<'py>(
    py: Python<'py>,
    stencils: Vec<Bound<'py, PyStencil>>,
    u: &Bound<'py, PyAny>,
    out: Option<Vec<Bound<'py, PyAny>>>,
    boundary: &str,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let boundary = parse_boundary(boundary)?;
    let dim = u
        .downcast::<PyUntypedArray>()
        .map(|a| a.ndim())
        .unwrap_or(1);
    let core = core_stencils(&stencils, dim.clamp(1, 3))?;
    dispatch(py, &core, boundary, u, out)
}

/// Stencils built and checked once for one shape, dtype and boundary; `apply` then skips the
/// per-call checks that do not depend on the data.
#[pyclass(name = "Plan", module = "fdlab", frozen)]
pub struct PyPlan {
    core: Vec<Stencil>,
    boundary: Boundary,
    shape: Vec<usize>,
    dtype: &'static str,
}

#[pymethods]
impl PyPlan {
    /// A plan for arrays of NumPy `shape` and `dtype` ("float32" or "float64").
    #[new]
    #[pyo3(signature = (stencils, shape, dtype = "float64", boundary = "periodic"))]
    fn new(
        stencils: Vec<Bound<'_, PyStencil>>,
        shape: Vec<usize>,
        dtype: &str,
        boundary: &str,
    ) -> PyResult<PyPlan> {
        let dtype = match dtype {
            "float64" | "f8" | "double" => "float64",
            "float32" | "f4" | "single" => "float32",
            _ => {
                return Err(type_error(format!(
                    "dtype must be \"float32\" or \"float64\", got \"{dtype}\""
                )))
            }
        };
        let boundary = parse_boundary(boundary)?;
        let grid = grid_of(&shape)?;
        let core = core_stencils(&stencils, shape.len())?;
        boundary.check(&grid, &core).map_err(to_py)?;
        Ok(PyPlan {
            core,
            boundary,
            shape,
            dtype,
        })
    }

    /// Applies the plan to `u` (of the plan's shape and dtype); returns the list of outputs.
    #[pyo3(signature = (u, out = None))]
    fn apply<'py>(
        &self,
        py: Python<'py>,
        u: &Bound<'py, PyAny>,
        out: Option<Vec<Bound<'py, PyAny>>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        if let Ok(a) = u.downcast::<PyUntypedArray>() {
            if a.shape() != self.shape.as_slice() {
                return Err(value_error(format!(
                    "the plan is for shape {:?}, got an array of shape {:?}",
                    self.shape,
                    a.shape()
                )));
            }
            let same = match self.dtype {
                "float64" => u.downcast::<PyArrayDyn<f64>>().is_ok(),
                _ => u.downcast::<PyArrayDyn<f32>>().is_ok(),
            };
            if !same {
                return Err(type_error(format!(
                    "the plan is for dtype {}, got {}",
                    self.dtype,
                    a.dtype()
                )));
            }
        }
        dispatch(py, &self.core, self.boundary, u, out)
    }

    /// The NumPy shape the plan is for.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.shape.clone()
    }

    /// The dtype name the plan is for.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype
    }

    /// The boundary name.
    #[getter]
    fn boundary(&self) -> &'static str {
        self.boundary.name()
    }

    fn __repr__(&self) -> String {
        format!(
            "Plan(<{} stencils>, shape={:?}, dtype=\"{}\", boundary=\"{}\")",
            self.core.len(),
            self.shape,
            self.dtype,
            self.boundary.name()
        )
    }
}

/// Times the Rust call that `fdlab.apply(stencils, u, out=out)` makes, on the same arrays
/// (same checks, same buffers), looping in Rust with the GIL released: returns `(median, min)`
/// seconds per call over `repeats` calls after one warm-up. `out` is one array per stencil.
#[pyfunction]
#[pyo3(signature = (stencils, u, out, boundary = "periodic", repeats = 200))]
pub fn _time_apply_native<'py>(
    py: Python<'py>,
    stencils: Vec<Bound<'py, PyStencil>>,
    u: &Bound<'py, PyAny>,
    out: Vec<Bound<'py, PyAny>>,
    boundary: &str,
    repeats: usize,
) -> PyResult<(f64, f64)> {
    let boundary = parse_boundary(boundary)?;
    let dim = u
        .downcast::<PyUntypedArray>()
        .map(|a| a.ndim())
        .unwrap_or(1);
    let core = core_stencils(&stencils, dim.clamp(1, 3))?;
    let calls = repeats.max(1) + 1;
    let mut times = if let Ok(a) = u.downcast::<PyArrayDyn<f64>>() {
        execute(py, &core, boundary, a, Some(out), calls)?.1
    } else if let Ok(a) = u.downcast::<PyArrayDyn<f32>>() {
        execute(py, &core, boundary, a, Some(out), calls)?.1
    } else {
        return Err(type_error("u must be a float32 or float64 numpy.ndarray"));
    };
    times.remove(0); // warm-up
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], times[0]))
}
