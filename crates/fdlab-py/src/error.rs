//! Rust errors as Python exceptions, with the same message.

use fdlab::CoreError as Error;
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::PyErr;

/// Maps a core error to the Python exception a caller expects: bad sizes, shapes, orders,
/// stencils and names are `ValueError`; anything else is `RuntimeError`.
pub fn to_py(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Size { .. }
        | Error::Spacing { .. }
        | Error::Shape { .. }
        | Error::Order { .. }
        | Error::StencilTooWide { .. }
        | Error::Stencil { .. }
        | Error::Unknown { .. } => PyValueError::new_err(msg),
        _ => PyRuntimeError::new_err(msg),
    }
}

/// A `TypeError` with `msg`.
pub fn type_error(msg: impl Into<String>) -> PyErr {
    PyTypeError::new_err(msg.into())
}

/// A `ValueError` with `msg`.
pub fn value_error(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

/// Maps a CUDA backend error the same way: out of device memory is `MemoryError`, a field of
/// the wrong precision `TypeError`, bad shapes, counts, strategies and limits `ValueError`,
/// arrays refused before launch (misaligned, overlapping, on another GPU) `ValueError` with the
/// check's own text, and no device, no NVRTC, driver and compile failures `RuntimeError`.
pub fn cuda_to_py(e: fdlab::CudaError) -> PyErr {
    use fdlab::CudaError as E;
    let msg = e.to_string();
    match e {
        E::Model(e) => to_py(e),
        // Caller-owned memory refused before launch: a bad argument, not a driver failure.
        E::Driver { call, detail } if call == fdlab::FOREIGN_CHECKS => {
            PyValueError::new_err(detail)
        }
        E::OutOfMemory { .. } => PyMemoryError::new_err(msg),
        E::Precision { .. } => PyTypeError::new_err(msg),
        E::ShapeMismatch { .. }
        | E::OutputCount { .. }
        | E::ResourceLimit { .. }
        | E::Misaligned { .. }
        | E::BadBox { .. }
        | E::Weight { .. }
        | E::Unsupported(_) => PyValueError::new_err(msg),
        _ => PyRuntimeError::new_err(msg),
    }
}

/// Maps an error of the `fdlab` front: model and CUDA errors as [`to_py`] and [`cuda_to_py`]
/// do, fields of the wrong shape or count and options the backend does not take
/// `ValueError`, anything else `RuntimeError`.
pub fn front_to_py(e: fdlab::Error) -> PyErr {
    use fdlab::Error as E;
    match e {
        E::Core(e) => to_py(e),
        E::Cuda(e) => cuda_to_py(e),
        e @ (E::Shape { .. } | E::OutputCount { .. } | E::GpuOnly { .. }) => {
            PyValueError::new_err(e.to_string())
        }
        e => PyRuntimeError::new_err(e.to_string()),
    }
}
