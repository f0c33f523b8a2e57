//! Python bindings for fdlab: the `fdlab._fdlab` extension module.
//!
//! The Pythonic layer lives in `python/fdlab/__init__.py`; this crate holds what must be fast
//! or typed: stencil descriptions ([`stencil::PyStencil`]), CPU apply on NumPy arrays with the
//! GIL released ([`apply`]), GPU apply on CuPy / PyTorch arrays with no copy ([`gpu`]),
//! plans, seismic modelling and its vector-Jacobian product ([`wave`]), and the error mapping
//! ([`error`]).
//!
//! Axis convention: fdlab fields are x-fastest, so a C-ordered NumPy array of shape
//! `(nz, ny, nx)` is a grid of shape `[nx, ny, nz]`; axis 0 / `"x"` is the LAST NumPy axis.
#![warn(missing_docs)]

pub mod apply;
mod dlpack;
pub mod error;
pub mod gpu;
pub mod stencil;
pub mod wave;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What this build of fdlab offers, as a dict (version, backends, CPU threads, features).
#[pyfunction]
fn info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("version", env!("CARGO_PKG_VERSION"))?;
    d.set_item("backends", vec!["cpu", "cuda"])?;
    d.set_item("cuda", true)?;
    match gpu::probe() {
        Ok(n) => {
            d.set_item("cuda_devices", n)?;
            d.set_item("cuda_unavailable", py.None())?;
        }
        Err(why) => {
            d.set_item("cuda_devices", 0)?;
            d.set_item("cuda_unavailable", why)?;
        }
    }
    d.set_item("cpu_threads", rayon::current_num_threads())?;
    d.set_item("dtypes", vec!["float32", "float64"])?;
    d.set_item("boundaries", vec!["periodic", "dirichlet", "neumann"])?;
    d.set_item("cpu_features", cpu_features())?;
    Ok(d)
}

/// SIMD instruction sets the CPU executor can use on this machine.
fn cpu_features() -> Vec<&'static str> {
    #[allow(unused_mut)]
    let mut f = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            f.push("avx2");
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            f.push("avx512f");
        }
    }
    f
}

/// The `fdlab._fdlab` module.
#[pymodule]
fn _fdlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<stencil::PyStencil>()?;
    m.add_class::<apply::PyPlan>()?;
    m.add_function(wrap_pyfunction!(apply::apply_cpu, m)?)?;
    m.add_function(wrap_pyfunction!(apply::_time_apply_native, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::apply_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::_time_apply_cuda_native, m)?)?;
    m.add_function(wrap_pyfunction!(gpu::_cuda_plan_info, m)?)?;
    m.add_function(wrap_pyfunction!(wave::wave_forward, m)?)?;
    m.add_function(wrap_pyfunction!(wave::wave_vjp, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    Ok(())
}
