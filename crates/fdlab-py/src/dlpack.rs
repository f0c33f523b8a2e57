//! Inputs that speak only DLPack (`__dlpack__` / `__dlpack_device__` on a CUDA device, as JAX
//! arrays): the capsule's `DLManagedTensor` is read, never consumed, and kept alive for the
//! call. DLPack does not say whether an array may be written, so it is used for inputs only.

use std::ffi::{c_void, CStr};

use fdlab::Precision;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::type_error;

/// `DLDevice`.
#[repr(C)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

/// kDLCUDA and kDLCUDAManaged: memory a kernel may read.
const CUDA_DEVICES: [i32; 2] = [2, 13];
/// kDLFloat.
const FLOAT: u8 = 2;

/// An input read through DLPack: address (with the byte offset), NumPy shape, precision,
/// element strides if any, and the capsule that keeps the tensor alive.
pub(crate) struct DlInput {
    pub ptr: u64,
    pub np_shape: Vec<usize>,
    pub precision: Precision,
    pub strides: Option<Vec<i64>>,
    pub capsule: PyObject,
}

/// Reads `o.__dlpack__(stream=…)`: the producer orders its pending work before `stream` (a raw
/// CUDA stream handle; 0, ambiguous in DLPack, is passed as 1, the legacy default stream).
pub(crate) fn read(o: &Bound<'_, PyAny>, what: &str, stream: u64) -> PyResult<DlInput> {
    let py = o.py();
    let kwargs = PyDict::new(py);
    kwargs.set_item("stream", if stream == 0 { 1 } else { stream })?;
    let capsule = match o.call_method("__dlpack__", (), Some(&kwargs)) {
        Ok(c) => c,
        // Producers from before the stream argument.
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => {
            o.call_method0("__dlpack__")?
        }
        Err(e) => return Err(e),
    };
    const NAME: &CStr = c"dltensor";
    // SAFETY: the capsule is a live object; PyCapsule_GetPointer checks the name and returns
    // NULL with an exception set when it differs (a versioned or used capsule).
    let raw = unsafe { pyo3::ffi::PyCapsule_GetPointer(capsule.as_ptr(), NAME.as_ptr()) };
    if raw.is_null() {
        let _ = PyErr::take(py);
        return Err(type_error(format!(
            "{what}'s __dlpack__ did not return a 'dltensor' capsule; pass an array exposing \
             __cuda_array_interface__ (e.g. cupy.from_dlpack(a))"
        )));
    }
    // SAFETY: a "dltensor" capsule holds a DLManagedTensor, whose first member is the
    // DLTensor; it stays valid while the capsule lives (we hold it) and is not consumed.
    let t = unsafe { &*(raw as *const DlTensor) };
    if !CUDA_DEVICES.contains(&t.device.device_type) {
        return Err(type_error(format!(
            "{what} is a DLPack array on device type {}, not a CUDA GPU",
            t.device.device_type
        )));
    }
    let precision = match (t.dtype.code, t.dtype.bits, t.dtype.lanes) {
        (FLOAT, 32, 1) => Precision::F32,
        (FLOAT, 64, 1) => Precision::F64,
        (c, b, l) => {
            return Err(type_error(format!(
                "fdlab computes on float32 or float64 arrays, {what} has DLPack dtype \
                 (code {c}, {b} bits, {l} lanes); convert it first"
            )))
        }
    };
    let ndim = usize::try_from(t.ndim).unwrap_or(0);
    let read_axes = |p: *const i64| -> Vec<i64> {
        // SAFETY: DLPack promises `ndim` entries behind a non-null shape or strides pointer.
        unsafe { std::slice::from_raw_parts(p, ndim) }.to_vec()
    };
    if ndim > 0 && t.shape.is_null() {
        return Err(type_error(format!("{what}'s DLPack tensor has no shape")));
    }
    let shape = if ndim == 0 {
        Vec::new()
    } else {
        read_axes(t.shape)
    };
    let np_shape = shape
        .iter()
        .map(|&n| usize::try_from(n))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| type_error(format!("{what}'s DLPack shape {shape:?} is negative")))?;
    let strides = (!t.strides.is_null() && ndim > 0).then(|| read_axes(t.strides));
    Ok(DlInput {
        ptr: (t.data as u64).wrapping_add(t.byte_offset),
        np_shape,
        precision,
        strides,
        capsule: capsule.unbind(),
    })
}
