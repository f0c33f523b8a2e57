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
    /// per request; L2 requests widened as plans widen them ([`L2Promotion::default`]).
    pub fn tensor_map<T: CudaScalar>(
        &self,
        buf: &CudaSlice<T>,
        shape: [usize; 3],
        tile: [u32; 3],
    ) -> Result<TensorMap> {
        self.tensor_map_with(buf, shape, tile, L2Promotion::default())
    }

    /// As [`Device::tensor_map`], with the L2 promotion `promotion` (for measuring it).
    ///
    /// ```no_run
    /// use fdlab_cuda::{Device, L2Promotion};
    /// let dev = Device::open(0)?;
    /// let buf = dev.stream().alloc_zeros::<f32>(64 * 64 * 64).unwrap();
    /// let map = dev.tensor_map_with(&buf, [64, 64, 64], [32, 8, 1], L2Promotion::B128)?;
    /// # Ok::<(), fdlab_cuda::Error>(())
    /// ```
    pub fn tensor_map_with<T: CudaScalar>(
        &self,
        buf: &CudaSlice<T>,
        shape: [usize; 3],
        tile: [u32; 3],
        promotion: L2Promotion,
    ) -> Result<TensorMap> {
        let (ptr, _sync) = cudarc::driver::DevicePtr::device_ptr(buf, &self.inner.stream);
        tensor_map_at::<T>(ptr, shape, tile, promotion)
    }
}

/// How far the copy unit widens each L2 request of a TMA tensor copy. Plans use the default,
/// 256 bytes: the other widths measured within ±1 point of it (docs/performance.md).
///
/// ```
/// use fdlab_cuda::L2Promotion;
/// assert_eq!(L2Promotion::default(), L2Promotion::B256);
/// assert_eq!("none".parse::<L2Promotion>().unwrap(), L2Promotion::None);
/// assert_eq!(L2Promotion::B64.to_string(), "64");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum L2Promotion {
    /// Requests as they are.
    None,
    /// Widened to 64 bytes.
    B64,
    /// Widened to 128 bytes.
    B128,
    /// Widened to 256 bytes.
    #[default]
    B256,
}

impl L2Promotion {
    /// Every promotion, narrowest first.
    pub const ALL: [L2Promotion; 4] = [
        L2Promotion::None,
        L2Promotion::B64,
        L2Promotion::B128,
        L2Promotion::B256,
    ];

    fn driver(self) -> sys::CUtensorMapL2promotion {
        use sys::CUtensorMapL2promotion as Promo;
        match self {
            L2Promotion::None => Promo::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            L2Promotion::B64 => Promo::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
            L2Promotion::B128 => Promo::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            L2Promotion::B256 => Promo::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        }
    }
}

impl std::fmt::Display for L2Promotion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            L2Promotion::None => "none",
            L2Promotion::B64 => "64",
            L2Promotion::B128 => "128",
            L2Promotion::B256 => "256",
        })
    }
}

impl std::str::FromStr for L2Promotion {
    type Err = Error;
    fn from_str(s: &str) -> Result<L2Promotion> {
        L2Promotion::ALL
            .into_iter()
            .find(|p| p.to_string() == s)
            .ok_or_else(|| Error::BadName {
                what: "L2 promotion",
                given: s.into(),
                expected: "none, 64, 128 or 256",
            })
    }
}

/// The TMA tensor map over a grid of `shape` points of `T` at device address `ptr`, with the
/// box `tile` and the L2 promotion `promotion`.
pub(crate) fn tensor_map_at<T: CudaScalar>(
    ptr: u64,
    shape: [usize; 3],
    tile: [u32; 3],
    promotion: L2Promotion,
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
    let promotion = promotion.driver();
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
