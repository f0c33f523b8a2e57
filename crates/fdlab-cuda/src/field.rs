//! Fields that live on the device: allocated, filled from and copied back to host
//! [`Field`]s, and viewed by sub-box.

use crate::device::{CudaScalar, Device};
use crate::error::{driver, Error, Result};
use crate::stream::Stream;
use cudarc::driver::CudaSlice;
use fdlab_core::{Field, Grid, Precision, Region};

/// A field on the device: a buffer of `grid.len()` values of `T` (x fastest), the [`Grid`] it
/// samples, the device handle that made it and the stream its copies go to.
///
/// Copies to the device are queued on the field's stream; [`DeviceField::download`] waits for
/// the stream and returns the values. Nothing else synchronises.
///
/// ```no_run
/// use fdlab_core::{Field, Grid};
/// use fdlab_cuda::{Device, DeviceField};
/// let dev = Device::open(0)?;
/// let grid = Grid::unit(&[64, 64, 64])?;
/// let host = Field::<f32>::random(&grid, 1);
/// let d = DeviceField::upload(&dev, &host)?;
/// assert_eq!(d.download()?, host);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct DeviceField<T: CudaScalar> {
    pub(crate) buf: CudaSlice<T>,
    grid: Grid,
    device_id: u64,
}

impl<T: CudaScalar> std::fmt::Debug for DeviceField<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceField")
            .field("shape", &self.grid.shape())
            .field("precision", &T::PRECISION)
            .field("device", &self.device_id)
            .finish()
    }
}

/// The size, precision and owner of a field, without its data: what plans check before a
/// launch, apart from the device so that the checks are tested without a GPU.
///
/// ```
/// use fdlab_core::Precision;
/// let m = fdlab_cuda::FieldMeta { shape: [8, 8, 1], precision: Precision::F32, device: 1 };
/// assert_eq!(m.shape[2], 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldMeta {
    /// Points along x, y, z.
    pub shape: [usize; 3],
    /// Element type.
    pub precision: Precision,
    /// Id of the device handle that allocated it.
    pub device: u64,
}

impl<T: CudaScalar> DeviceField<T> {
    /// A field of zeros on `grid`, on the device's default stream. Fails with
    /// [`Error::OutOfMemory`] before allocating when it does not fit.
    ///
    /// ```no_run
    /// use fdlab_core::Grid;
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let z = DeviceField::<f64>::zeros(&dev, &Grid::unit(&[32, 32, 32])?)?;
    /// assert_eq!(z.len(), 32 * 32 * 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn zeros(dev: &Device, grid: &Grid) -> Result<Self> {
        Self::zeros_on(&dev.default_stream(), grid)
    }

    /// [`DeviceField::zeros`] on `stream`.
    ///
    /// ```no_run
    /// use fdlab_core::Grid;
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let s = dev.new_stream()?;
    /// let _z = DeviceField::<f32>::zeros_on(&s, &Grid::unit(&[16, 16])?)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn zeros_on(stream: &Stream, grid: &Grid) -> Result<Self> {
        ensure_free(stream, grid.len(), T::PRECISION)?;
        let buf = stream
            .raw
            .alloc_zeros(grid.len())
            .map_err(driver("cuMemAlloc"))?;
        Ok(DeviceField {
            buf,
            grid: grid.clone(),
            device_id: stream.device_id,
        })
    }

    /// A copy of `host` on the device's default stream. Returns once the host values are
    /// read (host memory is pageable, so the driver copies it before returning).
    ///
    /// ```no_run
    /// use fdlab_core::{Field, Grid};
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let host = Field::<f64>::zeros(&Grid::unit(&[8, 8, 8])?);
    /// let _d = DeviceField::upload(&dev, &host)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn upload(dev: &Device, host: &Field<T>) -> Result<Self> {
        Self::upload_on(&dev.default_stream(), host)
    }

    /// [`DeviceField::upload`] on `stream`.
    ///
    /// ```no_run
    /// use fdlab_core::{Field, Grid};
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let host = Field::<f32>::zeros(&Grid::unit(&[8, 8])?);
    /// let _d = DeviceField::upload_on(&dev.new_stream()?, &host)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn upload_on(stream: &Stream, host: &Field<T>) -> Result<Self> {
        ensure_free(stream, host.grid().len(), T::PRECISION)?;
        let buf = stream
            .raw
            .clone_htod(host.as_slice())
            .map_err(driver("cuMemcpyHtoD"))?;
        Ok(DeviceField {
            buf,
            grid: host.grid().clone(),
            device_id: stream.device_id,
        })
    }

    /// Overwrites the field with `host`, which must have the same shape.
    ///
    /// ```no_run
    /// use fdlab_core::{Field, Grid};
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let g = Grid::unit(&[8, 8, 8])?;
    /// let mut d = DeviceField::<f32>::zeros(&dev, &g)?;
    /// d.copy_from(&Field::filled(&g, 1.0))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn copy_from(&mut self, host: &Field<T>) -> Result<()> {
        same_shape("the host field", self.shape(), host.grid().shape())?;
        let stream = self.buf.stream().clone();
        stream
            .memcpy_htod(host.as_slice(), &mut self.buf)
            .map_err(driver("cuMemcpyHtoD"))
    }

    /// Queues a device-to-device copy of `src` (same shape, same device handle) into this
    /// field, on this field's stream; does not wait for it.
    ///
    /// ```no_run
    /// use fdlab_core::{Field, Grid};
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let g = Grid::unit(&[8, 8, 8])?;
    /// let a = DeviceField::upload(&dev, &Field::<f64>::random(&g, 3))?;
    /// let mut b = DeviceField::zeros(&dev, &g)?;
    /// b.copy_from_device(&a)?;
    /// assert_eq!(b.download()?, a.download()?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn copy_from_device(&mut self, src: &DeviceField<T>) -> Result<()> {
        if src.device_id != self.device_id {
            return Err(Error::WrongDevice {
                what: "the source field".into(),
                expected: self.device_id,
                got: src.device_id,
            });
        }
        same_shape("the source field", self.shape(), src.shape())?;
        let stream = self.buf.stream().clone();
        stream
            .memcpy_dtod(&src.buf, &mut self.buf)
            .map_err(driver("cuMemcpyDtoD"))
    }

    /// Queues a fill of every point with NaN (all bits set: a NaN in f32 and f64) on the
    /// field's stream: a device memset, no host transfer. Poisoned outputs show any point a
    /// kernel fails to write.
    ///
    /// ```no_run
    /// use fdlab_core::Grid;
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let mut d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8, 8])?)?;
    /// d.fill_nan()?;
    /// assert!(d.download()?.as_slice().iter().all(|v| v.is_nan()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fill_nan(&mut self) -> Result<()> {
        use cudarc::driver::DevicePtrMut;
        let stream = self.buf.stream().clone();
        let bytes = self.buf.len() * std::mem::size_of::<T>();
        let (ptr, _sync) = self.buf.device_ptr_mut(&stream);
        // SAFETY: `ptr` addresses this field's `bytes` bytes, which stay allocated while the
        // memset is queued: `_sync` orders it on the field's stream before any later use.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, 0xFF, bytes, stream.cu_stream()) }
            .map_err(driver("cuMemsetD8Async"))
    }

    /// Waits for the field's stream and returns its values as a host field.
    ///
    /// ```no_run
    /// use fdlab_core::Grid;
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let d = DeviceField::<f64>::zeros(&dev, &Grid::unit(&[4, 4, 4])?)?;
    /// assert!(d.download()?.as_slice().iter().all(|&v| v == 0.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn download(&self) -> Result<Field<T>> {
        let mut host = Field::zeros(&self.grid);
        self.download_into(&mut host)?;
        Ok(host)
    }

    /// [`DeviceField::download`] into an existing host field of the same shape.
    ///
    /// ```no_run
    /// use fdlab_core::{Field, Grid};
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let g = Grid::unit(&[4, 4, 4])?;
    /// let d = DeviceField::<f32>::zeros(&dev, &g)?;
    /// let mut host = Field::nan(&g);
    /// d.download_into(&mut host)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn download_into(&self, host: &mut Field<T>) -> Result<()> {
        same_shape("the host field", self.shape(), host.grid().shape())?;
        let stream = self.buf.stream();
        stream
            .memcpy_dtoh(&self.buf, host.as_mut_slice())
            .map_err(driver("cuMemcpyDtoH"))?;
        stream.synchronize().map_err(driver("cuStreamSynchronize"))
    }

    /// A read-only view of the box `region` (for copies to the host).
    ///
    /// ```no_run
    /// use fdlab_core::{Grid, Region};
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[16, 16, 16])?)?;
    /// let plane = d.view(Region { lo: [0, 0, 8], hi: [16, 16, 9] })?.download()?;
    /// assert_eq!(plane.grid().shape(), [16, 16, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn view(&self, region: Region) -> Result<DeviceFieldView<'_, T>> {
        check_box(self.shape(), region)?;
        Ok(DeviceFieldView {
            field: self,
            region,
        })
    }

    /// A writable view of the box `region` (for copies from the host).
    ///
    /// ```no_run
    /// use fdlab_core::{Field, Grid, Region};
    /// use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let mut d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[16, 16, 16])?)?;
    /// let edge = Field::filled(&Grid::unit(&[16, 16, 1])?, 1.0);
    /// d.view_mut(Region { lo: [0, 0, 0], hi: [16, 16, 1] })?.upload(&edge)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn view_mut(&mut self, region: Region) -> Result<DeviceFieldViewMut<'_, T>> {
        check_box(self.shape(), region)?;
        Ok(DeviceFieldViewMut {
            field: self,
            region,
        })
    }

    /// The grid the field samples.
    ///
    /// ```no_run
    /// # use fdlab_core::Grid; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// let d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8, 4])?)?;
    /// assert_eq!(d.grid().dims(), &[8, 4]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Points along x, y, z.
    ///
    /// ```no_run
    /// # use fdlab_core::Grid; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// let d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8, 4])?)?;
    /// assert_eq!(d.shape(), [8, 4, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shape(&self) -> [usize; 3] {
        self.grid.shape()
    }

    /// Number of points.
    ///
    /// ```no_run
    /// # use fdlab_core::Grid; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// let d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8, 4])?)?;
    /// assert_eq!(d.len(), 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.grid.len()
    }

    /// Always `false`: grids have at least one point.
    ///
    /// ```no_run
    /// # use fdlab_core::Grid; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// assert!(!DeviceField::<f32>::zeros(&dev, &Grid::unit(&[1])?)?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.grid.is_empty()
    }

    /// Id of the device handle that allocated the field.
    ///
    /// ```no_run
    /// # use fdlab_core::Grid; use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8])?)?;
    /// assert_eq!(d.device_id(), dev.id());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn device_id(&self) -> u64 {
        self.device_id
    }

    /// The stream the field's copies go to.
    ///
    /// ```no_run
    /// # use fdlab_core::Grid; use fdlab_cuda::{Device, DeviceField};
    /// let dev = Device::open(0)?;
    /// let d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8])?)?;
    /// d.stream().synchronize()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stream(&self) -> Stream {
        Stream {
            raw: self.buf.stream().clone(),
            device_id: self.device_id,
        }
    }

    /// Shape, precision and owner, as plans check them.
    ///
    /// ```no_run
    /// # use fdlab_core::{Grid, Precision}; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// let d = DeviceField::<f64>::zeros(&dev, &Grid::unit(&[8])?)?;
    /// assert_eq!(d.meta().precision, Precision::F64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn meta(&self) -> FieldMeta {
        FieldMeta {
            shape: self.shape(),
            precision: T::PRECISION,
            device: self.device_id,
        }
    }

    /// The device buffer, for launches fdlab does not wrap (e.g. [`Device::launch`]).
    ///
    /// ```no_run
    /// # use fdlab_core::Grid; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// let d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8])?)?;
    /// assert_eq!(d.buffer().len(), 8);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn buffer(&self) -> &CudaSlice<T> {
        &self.buf
    }

    /// The device buffer, writable.
    ///
    /// ```no_run
    /// # use fdlab_core::Grid; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// let mut d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8])?)?;
    /// let _buf = d.buffer_mut();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn buffer_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.buf
    }
}

/// A sub-box of a [`DeviceField`], for copies to the host.
///
/// ```no_run
/// # use fdlab_core::{Grid, Region}; use fdlab_cuda::{Device, DeviceField};
/// # let dev = Device::open(0)?;
/// let d = DeviceField::<f64>::zeros(&dev, &Grid::unit(&[8, 8, 8])?)?;
/// let corner = d.view(Region { lo: [0, 0, 0], hi: [2, 2, 2] })?.download()?;
/// assert_eq!(corner.grid().len(), 8);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct DeviceFieldView<'a, T: CudaScalar> {
    field: &'a DeviceField<T>,
    region: Region,
}

/// A writable sub-box of a [`DeviceField`], for copies from the host.
///
/// ```no_run
/// # use fdlab_core::{Field, Grid, Region}; use fdlab_cuda::{Device, DeviceField};
/// # let dev = Device::open(0)?;
/// let mut d = DeviceField::<f64>::zeros(&dev, &Grid::unit(&[8, 8, 8])?)?;
/// let ones = Field::filled(&Grid::unit(&[2, 2, 2])?, 1.0);
/// d.view_mut(Region { lo: [0, 0, 0], hi: [2, 2, 2] })?.upload(&ones)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct DeviceFieldViewMut<'a, T: CudaScalar> {
    field: &'a mut DeviceField<T>,
    region: Region,
}

impl<T: CudaScalar> DeviceFieldView<'_, T> {
    /// The box.
    ///
    /// ```no_run
    /// # use fdlab_core::{Grid, Region}; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// let d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8, 8])?)?;
    /// let b = Region { lo: [1, 1, 0], hi: [7, 7, 1] };
    /// assert_eq!(d.view(b)?.region(), b);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn region(&self) -> Region {
        self.region
    }

    /// Waits for the field's stream and returns the box as a host field (spacing kept).
    ///
    /// ```no_run
    /// # use fdlab_core::{Grid, Region}; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// let d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8, 8])?)?;
    /// let inner = d.view(Region { lo: [1, 1, 0], hi: [7, 7, 1] })?.download()?;
    /// assert_eq!(inner.grid().dims(), &[6, 6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn download(&self) -> Result<Field<T>> {
        let f = self.field;
        let grid = sub_grid(&f.grid, self.region)?;
        let mut host = vec![T::zero(); grid.len()];
        let stream = f.buf.stream();
        let mut at = 0;
        for (offset, len) in runs(f.shape(), self.region) {
            stream
                .memcpy_dtoh(&f.buf.slice(offset..offset + len), &mut host[at..at + len])
                .map_err(driver("cuMemcpyDtoH"))?;
            at += len;
        }
        stream
            .synchronize()
            .map_err(driver("cuStreamSynchronize"))?;
        Ok(Field::from_vec(&grid, host)?)
    }
}

impl<T: CudaScalar> DeviceFieldViewMut<'_, T> {
    /// The box.
    ///
    /// ```no_run
    /// # use fdlab_core::{Grid, Region}; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// let mut d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8, 8])?)?;
    /// let b = Region { lo: [0, 0, 0], hi: [8, 1, 1] };
    /// assert_eq!(d.view_mut(b)?.region(), b);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn region(&self) -> Region {
        self.region
    }

    /// Copies `host`, whose shape is the box's, into the box.
    ///
    /// ```no_run
    /// # use fdlab_core::{Field, Grid, Region}; use fdlab_cuda::{Device, DeviceField};
    /// # let dev = Device::open(0)?;
    /// let mut d = DeviceField::<f32>::zeros(&dev, &Grid::unit(&[8, 8])?)?;
    /// let row = Field::filled(&Grid::unit(&[8, 1])?, 2.0);
    /// d.view_mut(Region { lo: [0, 3, 0], hi: [8, 4, 1] })?.upload(&row)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn upload(&mut self, host: &Field<T>) -> Result<()> {
        let r = self.region;
        let want = [r.hi[0] - r.lo[0], r.hi[1] - r.lo[1], r.hi[2] - r.lo[2]];
        same_shape("the host field", want, host.grid().shape())?;
        let shape = self.field.shape();
        let stream = self.field.buf.stream().clone();
        let src = host.as_slice();
        let mut at = 0;
        for (offset, len) in runs(shape, r) {
            let mut dst = self.field.buf.slice_mut(offset..offset + len);
            stream
                .memcpy_htod(&src[at..at + len], &mut dst)
                .map_err(driver("cuMemcpyHtoD"))?;
            at += len;
        }
        Ok(())
    }
}

/// Fails unless `got` is `expected`.
pub(crate) fn same_shape(what: &str, expected: [usize; 3], got: [usize; 3]) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            what: what.into(),
            expected,
            got,
        })
    }
}

/// Fails unless `region` is a non-empty box inside `shape`.
pub(crate) fn check_box(shape: [usize; 3], region: Region) -> Result<()> {
    let ok = (0..3).all(|a| region.lo[a] < region.hi[a] && region.hi[a] <= shape[a]);
    if ok {
        Ok(())
    } else {
        Err(Error::BadBox {
            lo: region.lo,
            hi: region.hi,
            shape,
        })
    }
}

/// The grid of a box of `grid`: the box's sizes on the grid's axes, the same spacing.
fn sub_grid(grid: &Grid, region: Region) -> Result<Grid> {
    let dims: Vec<usize> = (0..grid.dim())
        .map(|a| region.hi[a] - region.lo[a])
        .collect();
    Ok(Grid::new(&dims, &grid.spacing()[..grid.dim()])?)
}

/// The contiguous runs (start, length) of a box in a field of `shape`, x fastest, in the order
/// of the box's own x-fastest layout: whole planes merge when the box spans x and y, whole rows
/// when it spans x.
pub(crate) fn runs(shape: [usize; 3], region: Region) -> Vec<(usize, usize)> {
    let [nx, ny, _] = shape;
    let (lo, hi) = (region.lo, region.hi);
    let full_x = lo[0] == 0 && hi[0] == nx;
    let full_y = full_x && lo[1] == 0 && hi[1] == ny;
    let at = |j: usize, k: usize| lo[0] + nx * (j + ny * k);
    if full_y {
        return vec![(at(0, lo[2]), nx * ny * (hi[2] - lo[2]))];
    }
    let mut out = Vec::new();
    for k in lo[2]..hi[2] {
        if full_x {
            out.push((at(lo[1], k), nx * (hi[1] - lo[1])));
        } else {
            out.extend((lo[1]..hi[1]).map(|j| (at(j, k), hi[0] - lo[0])));
        }
    }
    out
}

/// Refuses an allocation of `len` elements that does not fit on the stream's device.
fn ensure_free(stream: &Stream, len: usize, p: Precision) -> Result<()> {
    let bytes = crate::memory::bytes_of(len, p.size())?;
    let (free, _) = stream
        .raw
        .context()
        .mem_get_info()
        .map_err(driver("cuMemGetInfo"))?;
    crate::memory::fits(bytes, free as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simple reference: every point of the box, one by one.
    fn points(shape: [usize; 3], r: Region) -> Vec<usize> {
        let mut out = vec![];
        for k in r.lo[2]..r.hi[2] {
            for j in r.lo[1]..r.hi[1] {
                for i in r.lo[0]..r.hi[0] {
                    out.push(i + shape[0] * (j + shape[1] * k));
                }
            }
        }
        out
    }

    #[test]
    fn runs_cover_the_box_in_order() {
        let shape = [7, 5, 4];
        let boxes = [
            Region {
                lo: [0, 0, 0],
                hi: [7, 5, 4],
            },
            Region {
                lo: [0, 0, 1],
                hi: [7, 5, 3],
            },
            Region {
                lo: [0, 1, 0],
                hi: [7, 4, 4],
            },
            Region {
                lo: [2, 1, 1],
                hi: [5, 5, 2],
            },
            Region {
                lo: [6, 4, 3],
                hi: [7, 5, 4],
            },
        ];
        for r in boxes {
            let flat: Vec<usize> = runs(shape, r)
                .into_iter()
                .flat_map(|(s, n)| s..s + n)
                .collect();
            assert_eq!(flat, points(shape, r), "box {r:?}");
        }
    }

    #[test]
    fn bad_boxes_and_shapes_are_typed_errors() {
        let shape = [8, 8, 1];
        assert!(check_box(
            shape,
            Region {
                lo: [0, 0, 0],
                hi: [8, 8, 1]
            }
        )
        .is_ok());
        for r in [
            Region {
                lo: [0, 0, 0],
                hi: [9, 8, 1],
            },
            Region {
                lo: [3, 0, 0],
                hi: [3, 8, 1],
            },
            Region {
                lo: [0, 0, 0],
                hi: [8, 8, 2],
            },
        ] {
            assert!(
                matches!(check_box(shape, r), Err(Error::BadBox { .. })),
                "{r:?}"
            );
        }
        let e = same_shape("input", [4, 4, 4], [4, 4, 5]).unwrap_err();
        assert!(matches!(
            e,
            Error::ShapeMismatch {
                expected: [4, 4, 4],
                got: [4, 4, 5],
                ..
            }
        ));
        assert!(e.to_string().contains("input"));
    }
}
