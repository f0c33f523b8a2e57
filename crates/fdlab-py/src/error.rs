//! Rust errors as Python exceptions, with the same message.

use fdlab_core::Error;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
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
