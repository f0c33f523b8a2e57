//! Texture objects and TMA tensor maps over device buffers.

use super::{Device, TensorMap, Texture};
use crate::device::CudaScalar;
use crate::error::{Error, Result};
use cudarc::driver::{sys, CudaSlice};

impl Device {
    /// A texture object reading `buf` as a 1-D linear texture (`f64` as two 32-bit words).
    pub fn texture<T: CudaScalar>(&self, buf: &CudaSlice<T>) -> Result<Texture> {
        let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(buf, &self.inner.stream);
        texture_at::<T>(ptr, buf.len(), self.info.max_texture_linear)
    }

    /// The TMA tensor map over `buf`, a grid of `shape` points, with the box `tile` (points
    /// along x, y, z) that a kernel with [`crate::codegen::CudaSource::tensor_boxes`] copies
    /// per request.
    pub fn tensor_map<T: CudaScalar>(
        &self,
        buf: &CudaSlice<T>,
        shape: [usize; 3],
        tile: [u32; 3],
    ) -> Result<TensorMap> {
        let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(buf, &self.inner.stream);
        tensor_map_at::<T>(ptr, shape, tile)
    }
}

/// The TMA tensor map over a grid of `shape` points of `T` at device address `ptr`, with the
/// box `tile`.
pub(crate) fn tensor_map_at<T: CudaScalar>(
    ptr: u64,
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

/// A 1-D linear texture over `len` elements of `T` at device address `ptr`.
pub(crate) fn texture_at<T: CudaScalar>(ptr: u64, len: usize, max_linear: i32) -> Result<Texture> {
    if len as u64 > max_linear as u64 {
        return Err(Error::ResourceLimit {
            what: "1-D linear texture width (elements)".into(),
            requested: len as u64,
            max: max_linear as u64,
        });
    }
    let (format, channels) = match T::PRECISION {
        fdlab_core::Precision::F32 => (sys::CUarray_format::CU_AD_FORMAT_FLOAT, 1),
        fdlab_core::Precision::F64 => (sys::CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32, 2),
    };
    // SAFETY: plain-old-data descriptors, zeroed then filled; the texture reads the buffer at
    // `ptr`, which the caller keeps alive while the texture is used.
    unsafe {
        let mut res: sys::CUDA_RESOURCE_DESC = std::mem::zeroed();
        res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_LINEAR;
        res.res.linear = sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_3 {
            devPtr: ptr,
            format,
            numChannels: channels,
            sizeInBytes: len * std::mem::size_of::<T>(),
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
