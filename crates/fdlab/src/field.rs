//! Fields of a backend: host memory on the CPU, device memory on a GPU.

use crate::error::{Error, Result};
use fdlab_core::{Field, Grid};
use fdlab_cuda::DeviceField;

/// The element types fields hold on every backend: `f32` and `f64`.
///
/// ```
/// fn zeros<T: fdlab::Real>(g: &fdlab::Grid) -> fdlab::Field<T> { fdlab::Field::zeros(g) }
/// let g = fdlab::Grid::unit(&[2, 2])?;
/// assert_eq!(zeros::<f32>(&g).as_slice().len(), 4);
/// # Ok::<(), fdlab::Error>(())
/// ```
pub trait Real: fdlab_core::Scalar + fdlab_cuda::CudaScalar {}

impl<T: fdlab_core::Scalar + fdlab_cuda::CudaScalar> Real for T {}

/// A field on a [`crate::backend::Backend`]: a host [`Field`] on the CPU, a [`DeviceField`] on a GPU.
/// Made by [`crate::backend::Backend::upload`] or [`crate::backend::Backend::zeros`].
///
/// ```
/// use fdlab::{Backend, Field, Grid};
/// let g = Grid::unit(&[8, 4, 2])?;
/// let f = Backend::cpu().upload(&Field::<f32>::random(&g, 3))?;
/// assert_eq!(f.shape(), [8, 4, 2]);
/// assert_eq!(f.backend_name(), "cpu");
/// # Ok::<(), fdlab::Error>(())
/// ```
#[derive(Debug)]
pub struct BackendField<T: Real> {
    pub(crate) repr: Repr<T>,
}

#[derive(Debug)]
pub(crate) enum Repr<T: Real> {
    Host(Field<T>),
    Device(DeviceField<T>),
}

/// The backend name of a field's storage.
fn backend_of<T: Real>(r: &Repr<T>) -> &'static str {
    match r {
        Repr::Host(_) => "cpu",
        Repr::Device(_) => "cuda",
    }
}

impl<T: Real> BackendField<T> {
    pub(crate) fn host(f: Field<T>) -> Self {
        BackendField {
            repr: Repr::Host(f),
        }
    }

    pub(crate) fn device(f: DeviceField<T>) -> Self {
        BackendField {
            repr: Repr::Device(f),
        }
    }

    /// A host copy of the field (waits for queued device work).
    ///
    /// ```
    /// use fdlab::{Backend, Field, Grid};
    /// let g = Grid::unit(&[4, 4, 1])?;
    /// let u = Field::<f64>::from_fn(&g, |x| x[0]);
    /// assert_eq!(Backend::cpu().upload(&u)?.to_host()?, u);
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn to_host(&self) -> Result<Field<T>> {
        match &self.repr {
            Repr::Host(f) => Ok(f.clone()),
            Repr::Device(d) => Ok(d.download()?),
        }
    }

    /// Copies the field into an existing host field of the same grid (waits for queued
    /// device work). Reusing one host buffer for many downloads spares the page faults of a
    /// fresh allocation each time.
    ///
    /// ```
    /// use fdlab::{Backend, Field, Grid};
    /// let g = Grid::unit(&[4, 4, 1])?;
    /// let u = Backend::cpu().upload(&Field::<f64>::filled(&g, 3.0))?;
    /// let mut host = Field::nan(&g);
    /// u.download_into(&mut host)?;
    /// assert_eq!(host.at(2, 1, 0), 3.0);
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn download_into(&self, host: &mut Field<T>) -> Result<()> {
        let shape = self.shape();
        if host.grid().shape() != shape {
            return Err(Error::Shape {
                what: "download target",
                expected: shape,
                got: host.grid().shape(),
            });
        }
        match &self.repr {
            Repr::Host(f) => {
                host.as_mut_slice().copy_from_slice(f.as_slice());
                Ok(())
            }
            Repr::Device(d) => Ok(d.download_into(host)?),
        }
    }

    /// Sets every point to NaN (on a GPU, a queued device memset): poisoned outputs show
    /// any point a kernel fails to write.
    ///
    /// ```
    /// use fdlab::{Backend, Grid};
    /// let mut f = Backend::cpu().zeros::<f64>(&Grid::unit(&[4, 4, 1])?)?;
    /// f.fill_nan()?;
    /// assert!(f.to_host()?.as_slice().iter().all(|v| v.is_nan()));
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn fill_nan(&mut self) -> Result<()> {
        match &mut self.repr {
            Repr::Host(f) => {
                f.as_mut_slice().fill(T::nan());
                Ok(())
            }
            Repr::Device(d) => Ok(d.fill_nan()?),
        }
    }

    /// Overwrites the field with `src`, a field of the same backend and grid; on a GPU the
    /// copy is queued on this field's stream (device to device, no host round trip).
    ///
    /// ```
    /// use fdlab::{Backend, Field, Grid};
    /// let cpu = Backend::cpu();
    /// let g = Grid::unit(&[4, 4, 1])?;
    /// let src = cpu.upload(&Field::<f32>::filled(&g, 5.0))?;
    /// let mut dst = cpu.zeros::<f32>(&g)?;
    /// dst.copy_from_field(&src)?;
    /// assert_eq!(dst.to_host()?.at(3, 3, 0), 5.0);
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn copy_from_field(&mut self, src: &BackendField<T>) -> Result<()> {
        let shape = self.shape();
        if src.shape() != shape {
            return Err(Error::Shape {
                what: "copy source",
                expected: shape,
                got: src.shape(),
            });
        }
        match (&mut self.repr, &src.repr) {
            (Repr::Host(d), Repr::Host(s)) => {
                d.as_mut_slice().copy_from_slice(s.as_slice());
                Ok(())
            }
            (Repr::Device(d), Repr::Device(s)) => Ok(d.copy_from_device(s)?),
            (dst, _) => Err(Error::WrongBackend {
                expected: backend_of(dst),
                got: src.backend_name(),
            }),
        }
    }

    /// Overwrites the field with `host` (same grid).
    ///
    /// ```
    /// use fdlab::{Backend, Field, Grid};
    /// let g = Grid::unit(&[4, 4, 1])?;
    /// let mut f = Backend::cpu().zeros::<f32>(&g)?;
    /// f.copy_from(&Field::filled(&g, 2.0))?;
    /// assert_eq!(f.to_host()?.at(1, 1, 0), 2.0);
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn copy_from(&mut self, host: &Field<T>) -> Result<()> {
        match &mut self.repr {
            Repr::Host(f) => {
                if f.grid().shape() != host.grid().shape() {
                    return Err(Error::Shape {
                        what: "copy source",
                        expected: f.grid().shape(),
                        got: host.grid().shape(),
                    });
                }
                f.as_mut_slice().copy_from_slice(host.as_slice());
                Ok(())
            }
            Repr::Device(d) => Ok(d.copy_from(host)?),
        }
    }

    /// The field's grid.
    ///
    /// ```
    /// use fdlab::{Backend, Grid};
    /// let g = Grid::unit(&[5, 3, 1])?;
    /// assert_eq!(Backend::cpu().zeros::<f64>(&g)?.grid(), &g);
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn grid(&self) -> &Grid {
        match &self.repr {
            Repr::Host(f) => f.grid(),
            Repr::Device(d) => d.grid(),
        }
    }

    /// Points along x, y, z.
    ///
    /// ```
    /// use fdlab::{Backend, Grid};
    /// let g = Grid::unit(&[5, 3])?;
    /// assert_eq!(Backend::cpu().zeros::<f64>(&g)?.shape(), [5, 3, 1]);
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn shape(&self) -> [usize; 3] {
        self.grid().shape()
    }

    /// `"cpu"` or `"cuda"`: where the data lives.
    ///
    /// ```
    /// use fdlab::{Backend, Grid};
    /// let g = Grid::unit(&[2, 2])?;
    /// assert_eq!(Backend::cpu().zeros::<f32>(&g)?.backend_name(), "cpu");
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn backend_name(&self) -> &'static str {
        backend_of(&self.repr)
    }

    /// The host field, on the CPU backend.
    ///
    /// ```
    /// use fdlab::{Backend, Grid};
    /// let g = Grid::unit(&[2, 2])?;
    /// assert!(Backend::cpu().zeros::<f32>(&g)?.as_host().is_some());
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn as_host(&self) -> Option<&Field<T>> {
        match &self.repr {
            Repr::Host(f) => Some(f),
            Repr::Device(_) => None,
        }
    }

    /// The device field, on the CUDA backend.
    ///
    /// ```
    /// use fdlab::{Backend, Grid};
    /// let g = Grid::unit(&[2, 2])?;
    /// assert!(Backend::cpu().zeros::<f32>(&g)?.as_device().is_none());
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn as_device(&self) -> Option<&DeviceField<T>> {
        match &self.repr {
            Repr::Host(_) => None,
            Repr::Device(d) => Some(d),
        }
    }
}
